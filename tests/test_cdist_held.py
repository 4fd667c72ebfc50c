"""cdist of FP8, FP6 and FP4 arrays (ml_dtypes' OCP types) and of the formats of
``fpx.format``, against formulas written here in Fractions, every step rounded through
ml_dtypes' enumeration of the format's values (test_small_data's ``rnd``): the reductions
as fpx.matmul computes them on such data (each product and addition rounded to the format),
the square roots from integer square roots; the float16 twin against float16's rows."""

from __future__ import annotations

import math
from fractions import Fraction

import ml_dtypes
import numpy as np
import pytest
from test_elementwise_held import every_value
from test_small_data import OCP, pairwise, rnd, sequential

import fpexplore as fpx
from fpexplore.ops import cdist as C

import oracle

pytestmark = pytest.mark.usefixtures("clean_formats")

ORDERS = {"sequential": sequential, "pairwise": pairwise}


def r(q: Fraction, name: str) -> float:
    return rnd(q, name) if q else 0.0


def sqrt_r(v: float, name: str) -> float:
    """sqrt of a value >= 0 of the format, rounded once (never a midpoint: the square of a
    number with p + 1 bits ending in 1 has more than p bits)."""
    q = Fraction(v)
    s = 200
    root = Fraction(math.isqrt(q.numerator * 4**s // q.denominator), 2**s)
    return r(root, name) if v else v


def oracle_cdist(xs, ys, variant: str, name: str, order: str) -> list[list[float]]:
    total = ORDERS[order]
    out = []
    for a in xs:
        row = []
        for b in ys:
            if variant == "exact":
                d2 = sum(((Fraction(u) - Fraction(v)) ** 2 for u, v in zip(a, b)), Fraction(0))
                root = Fraction(math.isqrt(d2.numerator * 4**200 // d2.denominator), 2**200)
                row.append(r(root, name))
                continue
            if variant == "direct":
                terms = [
                    r(Fraction(r(Fraction(u) - Fraction(v), name)) ** 2, name) for u, v in zip(a, b)
                ]
                d2 = total(terms, name)
            else:
                xn = total([r(Fraction(u) ** 2, name) for u in a], name)
                yn = total([r(Fraction(v) ** 2, name) for v in b], name)
                xy = total([r(Fraction(u) * Fraction(v), name) for u, v in zip(a, b)], name)
                t = r(Fraction(xn) - Fraction(r(2 * Fraction(xy), name)), name)
                d2 = max(r(Fraction(t) + Fraction(yn), name), 0.0)  # clamp(min=0)
            row.append(sqrt_r(d2, name))
        out.append(row)
    return out


def same(got, want: float) -> bool:
    g = float(got)
    if math.isnan(g) or math.isnan(want):
        return math.isnan(g) and math.isnan(want)
    return g == want


@pytest.mark.parametrize("name", list(OCP))
def test_every_variant_rounds_each_step_to_the_format(name):
    rng = np.random.default_rng(len(name) + 1)
    v = every_value(name)
    pool = v[np.abs(v.astype(np.float64)) <= 4]
    for m, n, d in ((1, 1, 1), (3, 4, 2), (4, 3, 7)):
        x, y = rng.choice(pool, (m, d)), rng.choice(pool, (n, d))
        y[0] = x[0]  # (a zero distance; the expanded formula's cancellation)
        xs, ys = x.astype(np.float64).tolist(), y.astype(np.float64).tolist()
        for variant in ("expanded", "direct", "exact"):
            for order in ORDERS if variant != "exact" else (None,):
                kw = {"order": order} if order else {}
                got = fpx.cdist(x, y, variant=variant, **kw)
                assert got.dtype == OCP[name] and got.shape == (m, n)
                want = oracle_cdist(xs, ys, variant, name, order or "sequential")
                oracle.CHECKED["cases"] += m * n
                for gi, wi in zip(got.tolist(), want):
                    assert all(map(same, gi, wi)), (variant, order, xs, ys, got, want)


TWIN = "twin_half_cd"


def test_the_float16_twin_gives_float16s_distances():
    fpx.format(11, 15, name=TWIN)
    cmp16 = fpx.compare("cdist", format="float16", n=40, seed=8, variants=["exact"])
    x16, y16 = cmp16.inputs["x"], cmp16.inputs["y"]
    x, y = x16.astype(np.float64), y16.astype(np.float64)
    for variant, kw in (
        ("expanded", {}),
        ("expanded", {"order": "pairwise", "clamp": False}),
        ("direct", {"order": "blocked", "block": 4}),
        ("exact", {}),
    ):
        want = fpx.cdist(x16, y16, variant=variant, **kw).astype(np.float64)
        got = C.cdist_held(x, y, TWIN, variant, **kw)
        assert got.dtype == np.float64
        assert np.array_equal(got, want, equal_nan=True), (variant, kw)


def test_formats_past_its_float64_arithmetic_are_refused_and_accumulators_checked():
    wide = fpx.format(30, 15, name="t_cd30").name
    with pytest.raises(ValueError, match="cdist: t_cd30 .precision 30, emax 15. is not emulat"):
        C.cdist_held(np.ones((1, 2)), np.ones((1, 2)), wide, "exact")
    with pytest.raises(ValueError, match="format 't_cd30': cdist takes no t_cd30 data"):
        fpx.compare("cdist", format=wide, n=4)
    with pytest.raises(ValueError, match=r"\+fma with float8_e4m3 accumulation is not emul"):
        fpx.parse_spec("expanded+fma@float8_e4m3", "cdist")
    with pytest.raises(ValueError, match="order 'kahan' does not round each addition to float8"):
        fpx.parse_spec("direct(order=kahan)@float8_e4m3", "cdist")
    x8 = np.ones((2, 3), ml_dtypes.float8_e4m3fn)
    with pytest.raises(ValueError, match="order 'kahan' does not accumulate in float8_e4m3"):
        fpx.cdist(x8, x8, order="kahan")


def test_an_fp8_accumulator_on_float16_data_is_matmuls():
    """expanded@float8_e4m3 on float16 data: the norms and x @ y.T are fpx.matmul's with that
    accumulator (the inputs rounded to it), the rest in float16."""
    cmp = fpx.compare("cdist", format="float16", n=20, variants=["expanded@float8_e4m3"])
    x, y = cmp.inputs["x"], cmp.inputs["y"]
    want = fpx.cdist(x, y, accumulate="float8_e4m3")
    assert cmp.results[("expanded@float8_e4m3", "emulated")].tobytes() == want.tobytes()
    xy = fpx.matmul(x, np.ascontiguousarray(y.T), accumulate="float8_e4m3")
    assert np.all(np.asarray(fpx.as_format(xy.astype(np.float64), "float8_e4m3")) == xy)


@pytest.mark.parametrize("fmt", ["float8_e4m3", "float6_e2m3", TWIN])
def test_compare_draws_the_format_and_its_rows_are_cdists(fmt):
    fpx.format(11, 15, name=TWIN)
    cmp = fpx.compare("cdist", format=fmt, n=12, seed=2, d=5, closeness=0.5)
    x, y = cmp.inputs["x"], cmp.inputs["y"]
    assert x.dtype == (np.float64 if fmt == TWIN else OCP[fmt]) and x.shape == (12, 5)

    def run(variant):
        if fmt == TWIN:
            return C.cdist_held(x, y, fmt, variant)
        return fpx.cdist(x, y, variant=variant)

    for variant in ("expanded", "direct"):
        assert cmp.results[(variant, "emulated")].tobytes() == run(variant).tobytes()
    assert np.asarray(cmp.reference).tobytes() == run("exact").tobytes()
    if fmt != TWIN:
        with np.errstate(all="ignore"):
            lib = np.sqrt(((x[:, None, :] - y[None, :, :]) ** 2).sum(-1))
        assert cmp.results[("numpy broadcast", "numpy")].tobytes() == lib.tobytes()
