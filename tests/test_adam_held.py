"""adam_step of FP8 arrays (ml_dtypes' OCP types) and of the formats of ``fpx.format``:
div-then-mul against its formula written here in Fractions, each operation rounded through
ml_dtypes' enumeration of the format's values (test_small_data's ``rnd``), the exact variant
against the exact real step (Fractions, the square root by integer square roots, bracketed
until it rounds alike), and the float16 twin against float16's own steps."""

from __future__ import annotations

import math
from fractions import Fraction

import ml_dtypes
import numpy as np
import pytest
from test_small_data import OCP, rnd

import fpexplore as fpx
from fpexplore.ops import adam as A

import oracle

pytestmark = pytest.mark.usefixtures("clean_formats")

HYPER = dict(lr=0.125, beta1=0.5, beta2=0.75, eps=0.0625)  # (the formats see them all)
FP8 = ("float8_e4m3", "float8_e5m2")
BEYOND = {"float8_e4m3": math.nan, "float8_e5m2": math.inf}


def r(x, name: str) -> float:
    """A real (Fraction) or an IEEE special (float) rounded to the format."""
    if isinstance(x, float):
        return x if not math.isinf(x) else math.copysign(BEYOND[name], x)
    v = rnd(x, name) if x else 0.0
    return v


def op(f, a: float, b: float, name: str) -> float:
    """a f b of two values of the format, rounded once (IEEE where an operand is not finite
    or a division is by zero)."""
    if all(map(math.isfinite, (a, b))) and not (f == "div" and b == 0):
        fa, fb = Fraction(a), Fraction(b)
        exact = {"add": fa + fb, "sub": fa - fb, "mul": fa * fb, "div": fa / fb if b else 0}[f]
        return r(exact, name)
    with np.errstate(all="ignore"):
        x = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.divide}[f](
            np.float64(a), np.float64(b)
        )
    return r(float(x), name)


def sqrt_of(v: float, name: str) -> float:
    if not math.isfinite(v) or v <= 0:
        return math.sqrt(v) if v >= 0 or math.isnan(v) else math.nan
    q = Fraction(v)
    return r(Fraction(math.isqrt(q.numerator * 4**200 // q.denominator), 2**200), name)


def div_then_mul(p, g, m, v, step, name):
    """adam_step's docstring formula: lerp moments (|w| < 0.5 is False for beta1 = 0.5: the
    second form), weight decay 0."""
    lr, b1, b2, eps = (HYPER[k] for k in ("lr", "beta1", "beta2", "eps"))

    def c(x):
        return r(Fraction(x), name)

    w = c(1.0 - b1)
    diff = op("sub", g, m, name)
    if abs(w) < 0.5:
        m1 = op("add", m, op("mul", w, diff, name), name)
    else:
        m1 = op("sub", g, op("mul", diff, op("sub", 1.0, w, name), name), name)
    v1 = op(
        "add", op("mul", c(b2), v, name), op("mul", op("mul", c(1 - b2), g, name), g, name), name
    )
    m_hat = op("div", m1, c(1.0 - b1**step), name)
    v_hat = op("div", v1, c(1.0 - b2**step), name)
    den = op("add", sqrt_of(v_hat, name), c(eps), name)
    p1 = op("sub", p, op("mul", c(lr), op("div", m_hat, den, name), name), name)
    return p1, m1, v1


def exact_step(p, g, m, v, step, name):
    lr, b1, b2, eps = (Fraction(HYPER[k]) for k in ("lr", "beta1", "beta2", "eps"))
    m1 = b1 * Fraction(m) + (1 - b1) * Fraction(g)
    v1 = b2 * Fraction(v) + (1 - b2) * Fraction(g) ** 2
    vh = v1 / (1 - b2**step)
    s = 600  # sqrt(vh) in [lo, lo + 2**-s]: the parameter in a bracket 2**-500 wide
    lo = Fraction(math.isqrt(vh.numerator * 4**s // vh.denominator), 2**s)
    ends = [
        Fraction(p) - lr * (m1 / (1 - b1**step)) / (root + eps)
        for root in (lo, lo + Fraction(1, 2**s))
    ]
    p1 = [r(e, name) for e in ends]
    assert p1[0] == p1[1] or all(map(math.isnan, p1)), "the bracket decides"
    return p1[0], r(m1, name), r(v1, name)


def same(got, want: float) -> bool:
    g = float(got)
    return (math.isnan(g) and math.isnan(want)) or g == want


@pytest.mark.parametrize("name", FP8)
def test_div_then_mul_and_exact_round_as_written(name):
    rng = np.random.default_rng(len(name))
    t = OCP[name]
    x = rng.standard_normal((4, 300)) * np.array([[1], [0.5], [0.25], [0.05]])
    p, g, m, v = (np.asarray(fpx.as_format(a, name)).astype(t) for a in x)
    v = np.abs(v)
    for step in (1, 3):
        for variant, formula in (("div-then-mul", div_then_mul), ("exact", exact_step)):
            got = fpx.adam_step(p, g, m, v, step, variant=variant, **HYPER)
            assert all(a.dtype == t for a in got)
            for k in range(p.size):
                args = (float(p[k]), float(g[k]), float(m[k]), float(v[k]))
                want = formula(*args, step, name)
                oracle.CHECKED["cases"] += 3
                assert all(map(same, (a[k] for a in got), want)), (variant, step, args, want)


TWIN = "twin_half_adam"


def test_the_float16_twin_steps_as_float16():
    """Every variant, lerp and mul-add moments, weight decay, three steps of fpx's
    hyperparameters: fpx.format(11, 15) gives float16's parameters and moments bit for bit."""
    fpx.format(11, 15, name=TWIN)
    cmp = fpx.compare("adam_step", format="float16", n=500, seed=3)
    arrays = [cmp.inputs[k] for k in ("param", "grad", "m", "v")]
    hyper = dict(lr=1e-3, beta1=0.9, beta2=0.999, eps=1e-8)
    for variant in ("div-then-mul", "div-then-mul+fma", "mul-then-div", "torch", "exact"):
        for kw in ({}, {"moments": "mul-add", "weight_decay": 0.01}):
            if variant == "exact" and "moments" in kw:
                kw = {"weight_decay": 0.01}
            for step in (1, 2, 1000):
                want = fpx.adam_step(*arrays, step, variant=variant, **hyper, **kw)
                got = A.adam_held(*(a.astype(np.float64) for a in arrays), TWIN, step,
                                  variant=variant, **hyper, **kw)  # fmt: skip
                for w, o in zip(want, got):
                    assert o.dtype == np.float64
                    assert np.array_equal(o, w.astype(np.float64), equal_nan=True), variant


def test_what_adam_does_not_compute_in_is_refused():
    x6 = np.zeros(3, ml_dtypes.float6_e2m3fn)
    with pytest.raises(ValueError, match="the result is NaN, which float6_e2m3 cannot hold"):
        fpx.adam_step(x6, x6, x6, x6, 1, **HYPER)  # (0/0: eps rounds to 0 there)
    with pytest.raises(ValueError, match="format 'float6_e2m3': adam_step takes no float6_e2m3"):
        fpx.compare("adam_step", format="float6_e2m3", n=10)
    x8 = np.ones(3, ml_dtypes.float8_e5m2)
    with pytest.raises(ValueError, match="sqrt=<ufunc 'sqrt'> with float8_e5m2 data: its squ"):
        fpx.adam_step(x8, x8, x8, x8, 1, sqrt=np.sqrt, **HYPER)
    wide = fpx.format(30, 15, name="t_adam30").name
    with pytest.raises(ValueError, match="adam_step: t_adam30 .precision 30, emax 15. is not"):
        A.adam_held(np.ones(2), np.ones(2), np.ones(2), np.ones(2), wide, 1, **HYPER)


@pytest.mark.parametrize("fmt", ["float8_e5m2", TWIN])
def test_compare_draws_the_format_and_its_rows_are_steps(fmt):
    fpx.format(11, 15, name=TWIN)
    cmp = fpx.compare("adam_step", format=fmt, n=200, seed=4, **HYPER)
    arrays = [cmp.inputs[k] for k in ("param", "grad", "m", "v")]
    assert arrays[0].dtype == (np.float64 if fmt == TWIN else OCP[fmt])

    def run(variant):
        if fmt == TWIN:
            return A.adam_held(*arrays, fmt, 2, variant=variant, **HYPER)[0]
        return fpx.adam_step(*arrays, 2, variant=variant, **HYPER)[0]

    for variant in ("div-then-mul", "mul-then-div", "div-then-mul+fma", "torch"):
        assert cmp.results[(variant, "emulated")].tobytes() == run(variant).tobytes()
    assert np.asarray(cmp.reference).tobytes() == run("exact").tobytes()


def test_an_exact_step_that_is_rational_ends():
    """v' = 0 (v = 0, g = -0): the denominator is eps exactly and param' rational, past
    E4M3's range: the interval loop never decided it (both ends NaN, which same_bits never
    calls equal: the explorer hung on E4M3 adam_step). Such a step (sqrt(v'/bc2) rational)
    is now computed exactly, and two NaN ends decide NaN."""
    hyper = dict(lr=1e-3, beta1=0.9, beta2=0.999, eps=1e-8)
    p, g, m, v = 0.5625, -0.0, -0.03515625, 0.0
    for name in FP8:
        t = OCP[name]
        arrays = [np.array([x], t) for x in (p, g, m, v)]  # (E5M2: m rounds to 2 bits)
        got = fpx.adam_step(*arrays, 2, variant="exact", **hyper)
        lr, b1, eps = (Fraction(hyper[k]) for k in ("lr", "beta1", "eps"))
        m1 = b1 * Fraction(float(arrays[2][0]))
        want = Fraction(float(arrays[0][0])) - lr * (m1 / (1 - b1**2)) / eps  # (sqrt(0) + eps)
        assert same(got[0][0], r(want, name)) and same(got[1][0], r(m1, name)), name
        assert float(got[2][0]) == 0.0
