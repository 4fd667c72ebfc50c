"""softmax and logsumexp of FP8, FP6 and FP4 arrays (ml_dtypes' OCP types), with such
accumulators, and of the formats of ``fpx.format``, against oracles written here: each
subtraction, sum and division of Fractions rounded through ml_dtypes' enumeration of the
format's values (test_small_data's ``rnd``), exp and log ml_dtypes' own ufuncs (the library
functions the formula variants call), the exact variants from mpmath at 300 bits; the float16
twin against float16 arithmetic written with NumPy's float16 type and float32's exp."""

from __future__ import annotations

import math
from fractions import Fraction

import ml_dtypes
import mpmath
import numpy as np
import pytest
from test_elementwise_held import GRIDS, every_value, round_grid
from test_small_data import OCP, TABLES, add, pairwise, rnd, sequential

import fpexplore as fpx
from fpexplore.ops import softmax as S

import oracle

pytestmark = pytest.mark.usefixtures("clean_formats")

ORDERS = {"sequential": sequential, "pairwise": pairwise}


def sub(a: float, b: float, name: str) -> float:
    if not (math.isfinite(a) and math.isfinite(b)):
        return a - b
    q = Fraction(a) - Fraction(b)
    return rnd(q, name) if q else 0.0  # (x - x = +0 to nearest)


def div(a: float, b: float, name: str) -> float:
    with np.errstate(all="ignore"):
        r = np.float64(a) / np.float64(b)
    if not math.isfinite(r) or r == 0:
        return float(r)
    return rnd(Fraction(a) / Fraction(b), name)


def lib(function: str, v: float, name: str) -> float:
    """ml_dtypes' own ufunc on the value (the formula variants' exp and log)."""
    with np.errstate(all="ignore"):
        return float(getattr(np, function)(np.array(v, OCP[name])))


def softmax_oracle(xs, variant: str, name: str, order: str) -> list[float]:
    if variant == "shifted":
        m = max(xs)
        xs = [sub(v, m if math.isfinite(m) else 0.0, name) for v in xs]
    e = [lib("exp", v, name) for v in xs]
    s = ORDERS[order](e, name)
    return [div(t, s, name) for t in e]


def logsumexp_oracle(xs, variant: str, name: str, order: str) -> float:
    m = max(xs) if variant == "shifted" else 0.0
    m = m if math.isfinite(m) else 0.0
    terms = [lib("exp", sub(v, m, name) if variant == "shifted" else v, name) for v in xs]
    r = lib("log", ORDERS[order](terms, name), name)
    return add(m, r, name) if variant == "shifted" else r


def exact_oracle(op: str, xs, round_to) -> list[float] | float:
    """Each exp(x_i) / sum_j exp(x_j), or log(sum_j exp(x_j)), from mpmath at 300 bits,
    rounded by ``round_to`` (1/k exactly where all are equal; one element: itself)."""
    if op == "softmax" and len(set(xs)) == 1:
        return [round_to(Fraction(1, len(xs)))] * len(xs)
    if op == "logsumexp" and len(xs) == 1:
        return xs[0]
    with mpmath.workprec(300):
        e = [mpmath.exp(mpmath.mpf(v)) for v in xs]
        s = mpmath.fsum(e)
        if op == "logsumexp":
            return round_to(oracle.mpf_fraction(mpmath.log(s)))
        return [round_to(oracle.mpf_fraction(t / s)) for t in e]


def same(got, want: float) -> bool:
    g = float(got)
    if math.isnan(g) or math.isnan(want):
        return math.isnan(g) and math.isnan(want)
    return g == want and math.copysign(1, g) == math.copysign(1, want)


def data(name: str, rng, n: int, top: float) -> np.ndarray:
    """n values of the format drawn from those with |v| <= top."""
    v = every_value(name)
    return rng.choice(v[np.abs(v.astype(np.float64)) <= top], n)


@pytest.mark.parametrize("name", list(OCP))
def test_formula_variants_round_each_step_to_the_format(name):
    """naive and shifted, sequential and pairwise, on FP8, FP6 and FP4 data of 1 to 40
    values, small and past exp's range (E4M3: NaN; FP6 and FP4 saturate)."""
    rng = np.random.default_rng(len(name))
    for n in (1, 2, 5, 40):
        for top in (2.0, 16.0):
            x = data(name, rng, n, top)
            xs = [float(v) for v in x]
            for variant in ("naive", "shifted"):
                for order in ORDERS:
                    got = fpx.softmax(x, variant=variant, order=order)
                    assert got.dtype == OCP[name] and got.shape == x.shape
                    want = softmax_oracle(xs, variant, name, order)
                    oracle.CHECKED["cases"] += n + 1
                    assert all(map(same, got, want)), (variant, order, xs, got, want)
                    got = fpx.logsumexp(x, variant=variant, order=order)
                    assert got.dtype == OCP[name]
                    assert same(got, logsumexp_oracle(xs, variant, name, order)), (variant, xs)


@pytest.mark.parametrize("slow", [False, True])
@pytest.mark.parametrize("name", list(OCP))
def test_exact_variants_round_the_real_values_once(name, slow, monkeypatch):
    """Also with the double-double tier's error bound made useless: every element through
    mpmath's Ziv loop, rounding by the format's grid."""
    if slow:
        monkeypatch.setattr(S, "DD_EXP_REL", 0.125)
    rng = np.random.default_rng(7)
    for n in (1, 3, 30):
        x = data(name, rng, n, 8.0)
        xs = [float(v) for v in x]
        got = fpx.softmax(x, variant="exact")
        want = exact_oracle("softmax", xs, lambda q: rnd(q, name))
        assert all(map(same, got, want)), (xs, got, want)
        want = exact_oracle("logsumexp", xs, lambda q: rnd(q, name))
        assert same(fpx.logsumexp(x, variant="exact"), want), xs
        oracle.CHECKED["cases"] += n + 1
    same_values = np.full(5, 1.5, OCP[name])  # 1/5 exactly, rounded once
    assert same(fpx.softmax(same_values, variant="exact")[0], rnd(Fraction(1, 5), name))


def test_an_fp8_accumulator_rounds_float32_data_to_it_first():
    """accumulate="float8_e4m3" on float32 data: x rounded to E4M3, every step in it, the
    result (E4M3's values) in float32."""
    x = np.float32([0.3, 1.7, -2.2, 0.05, 3.1])
    x8 = [rnd(Fraction(float(v)), "float8_e4m3") for v in x]
    for variant in ("naive", "shifted"):
        got = fpx.softmax(x, variant=variant, accumulate="float8_e4m3")
        assert got.dtype == np.float32
        assert all(map(same, got, softmax_oracle(x8, variant, "float8_e4m3", "sequential")))
        got = fpx.logsumexp(x, variant=variant, accumulate="float8_e4m3", order="pairwise")
        assert same(got, logsumexp_oracle(x8, variant, "float8_e4m3", "pairwise"))


def test_a_nan_fp6_and_fp4_cannot_hold_is_refused():
    x6 = np.array([7.5, 7.5, 7.0], ml_dtypes.float6_e2m3fn)  # exp(7.5) = 1808: E4M3's NaN
    with pytest.raises(ValueError, match="the result is NaN, which float6_e2m3 cannot hold"):
        fpx.softmax(x6, variant="naive", accumulate="float8_e4m3")
    top = float(TABLES["float6_e2m3"][-1][0])  # in FP6 itself exp saturates: 7.5 / 7.5
    assert [float(v) for v in fpx.softmax(x6, variant="naive")] == [1.0, 1.0, 1.0]
    lse = rnd(Fraction(math.log(top)), "float6_e2m3")  # the sum saturates too: log(7.5)
    assert lse == 2.0 and float(fpx.logsumexp(x6, variant="naive")) == lse


TWIN = "twin_half_sm"


def _f16_sum(e: np.ndarray) -> np.float16:
    acc = e[0]
    for t in e[1:]:
        acc = np.float16(acc + t)  # float16 + float16: correctly rounded
    return acc


def f16_oracle(op: str, x16: np.ndarray, variant: str):
    """float16 arithmetic with NumPy's float16 type; exp and log float32's rounded once (the
    "wide" elementwise variant: what a format of fpx.format computes them with)."""

    def exp(v):
        return np.exp(v.astype(np.float32)).astype(np.float16)

    with np.errstate(all="ignore"):
        m = x16.max() if variant == "shifted" else np.float16(0)
        d = x16 - m if variant == "shifted" else x16
        e = exp(d)
        s = _f16_sum(e)
        if op == "softmax":
            return e / s
        r = np.log(np.float32(s)).astype(np.float16)
        return np.float16(m + r) if variant == "shifted" else r


def test_the_float16_twin_computes_as_float16_arithmetic_does():
    """fpx.format(11, 15)'s naive and shifted are float16 arithmetic with float32's exp and
    log rounded once (its elementwise "wide"), bit for bit; exact is float16's exact."""
    fpx.format(11, 15, name=TWIN)
    rng = np.random.default_rng(16)
    for n in (1, 4, 100, 1000):
        for scale in (1.0, 20.0):
            x16 = (rng.standard_normal(n) * scale).astype(np.float16)
            x = x16.astype(np.float64)
            for variant in ("naive", "shifted"):
                got = S.softmax_held(x, TWIN, variant)
                want = f16_oracle("softmax", x16, variant).astype(np.float64)
                assert got.dtype == np.float64
                assert np.array_equal(got, want, equal_nan=True), (n, scale, variant)
                got = S.logsumexp_held(x, TWIN, variant)
                want = float(f16_oracle("logsumexp", x16, variant))
                assert same(got, want), (n, scale, variant)
            got = S.softmax_held(x, TWIN, "exact")
            assert np.array_equal(got, fpx.softmax(x16, variant="exact").astype(np.float64))
            want = float(fpx.logsumexp(x16, variant="exact"))
            assert same(S.logsumexp_held(x, TWIN, "exact"), want)


@pytest.mark.parametrize("slow", [False, True])
def test_a_wide_format_of_fpx_format_takes_exact_only(slow, monkeypatch):
    """Precision 50: naive and shifted are refused (float64 arithmetic rounds correctly up
    to precision 25), and compare does not draw it; exact is correct there, the float64
    band deciding little (its Ziv loop rounds by the format's grid), without subnormals."""
    if slow:  # (every element through mpmath's Ziv loop)
        monkeypatch.setattr(S, "DD_EXP_REL", 0.125)
    fmt = fpx.format(50, 60, subnormals=False).name
    GRIDS[fmt] = (50, -59, 60, False)
    with pytest.raises(ValueError, match=f"softmax: {fmt} has precision 50: .*'exact' takes"):
        S.softmax_held(np.array([1.0, 2.0]), fmt, "naive")
    with pytest.raises(ValueError, match="precision 50: logsumexp emulates"):
        fpx.parse_spec(f"shifted@{fmt}", "logsumexp")
    with pytest.raises(ValueError, match=f"format '{fmt}': softmax takes no {fmt} data"):
        fpx.compare("softmax", format=fmt, n=5)  # (as variance: none of its variants runs)
    rng = np.random.default_rng(50)
    for n in (2, 9):
        x = np.asarray(fpx.as_format(rng.uniform(-45, 3, n), fmt), dtype=np.float64)
        xs = x.tolist()
        got = S.softmax_held(x, fmt, "exact")
        want = exact_oracle("softmax", xs, lambda q: round_grid(q, fmt))
        assert all(map(same, got, want)), (xs, got, want)
        want = exact_oracle("logsumexp", xs, lambda q: round_grid(q, fmt))
        assert same(S.logsumexp_held(x, fmt, "exact"), want)


@pytest.mark.parametrize("op", ["softmax", "logsumexp"])
@pytest.mark.parametrize("fmt", ["float8_e5m2", "float6_e3m2", TWIN])
def test_compare_draws_the_format_and_its_rows_are_the_functions(op, fmt):
    fpx.format(11, 15, name=TWIN)
    cmp = fpx.compare(op, format=fmt, n=200, seed=6, variants=["naive", "shifted(order=pairwise)"])
    x = cmp.inputs["x"]
    assert x.dtype == (np.float64 if fmt == TWIN else OCP[fmt])
    held = getattr(S, f"{op}_held")
    for label, kw in (("naive", {}), ("shifted(order=pairwise)", {"order": "pairwise"})):
        variant = label.split("(")[0]
        if fmt == TWIN:
            want = held(x, fmt, variant, **kw)
        else:
            want = getattr(fpx, op)(x, variant=variant, **kw)
        assert np.asarray(cmp.results[(label, "emulated")]).tobytes() == np.asarray(want).tobytes()
    want = held(x, fmt, "exact") if fmt == TWIN else getattr(fpx, op)(x, variant="exact")
    assert np.asarray(cmp.reference).tobytes() == np.asarray(want).tobytes()


def test_review_findings_orders_and_nans_are_said_as_they_are():
    """An adversarial pass on this code: order='kahan' or 'exact' on FP8 data was blamed on
    `accumulate`, which nobody gave (variance's too); FP6's 0/0 after every exp underflowed
    was said to be "an accumulator went to NaN". logsumexp of nothing is -inf, which E5M2
    holds and E4M3 does not (its conversion of -inf is NaN, as fpx.as_format's)."""
    x = np.array([1, 2, 3], ml_dtypes.float8_e4m3fn)
    for call, op in (
        (lambda o: fpx.softmax(x, order=o), "softmax"),
        (lambda o: fpx.logsumexp(x, variant="naive", order=o), "logsumexp"),
        (lambda o: fpx.variance(x, variant="one-pass", order=o), "variance"),
    ):
        for order in ("kahan", "exact"):
            with pytest.raises(ValueError, match=f"{op}: order '{order}' does not round each"):
                call(order)
    with pytest.raises(ValueError, match="or 0/0 where everything underflowed to 0"):
        fpx.softmax(np.array([-3.75], ml_dtypes.float6_e2m3fn), variant="naive")
    assert rnd(Fraction(math.exp(-3.75)), "float6_e2m3") == 0.0  # (e / s = 0/0)
    for variant in ("naive", "exact"):
        assert float(fpx.logsumexp(np.array([], ml_dtypes.float8_e5m2), variant=variant)) == (
            -math.inf
        )
        assert math.isnan(fpx.logsumexp(np.array([], ml_dtypes.float8_e4m3fn), variant=variant))
