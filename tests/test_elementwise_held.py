"""exp, log, sin, tanh, sqrt and pow of FP8, FP6 and FP4 arrays (ml_dtypes' OCP types) and of
the formats of ``fpx.format``, against the high-precision oracle of test_ops_elementwise
(mpmath at 640 bits, exact square roots and rational powers, C99 special values) rounded by
rules written here: the OCP formats through ml_dtypes' enumeration of their bit patterns
(test_small_data's ``rnd``: E4M3 past its largest value NaN, E5M2 inf, FP6 and FP4 their largest
value), a format of fpx.format by Fraction arithmetic on its grid (without subnormals: below
``2**emin / 2`` zero, from it on ``2**emin``, its docstring's rule)."""

from __future__ import annotations

import math
from fractions import Fraction

import ml_dtypes
import numpy as np
import pytest
import test_ops_elementwise as E
from test_small_data import OCP, TABLES, rnd

import fpexplore as fpx
from fpexplore.ops import elementwise as ew

import oracle
from oracle import SPECS

pytestmark = pytest.mark.usefixtures("clean_formats")

UNARY = ("exp", "log", "sin", "tanh", "sqrt")
# (precision, emin, emax) of the OCP formats past FP8 (OCP MX v1.0, table 1), for the oracle's
# early decision of huge and tiny magnitudes (SPECS has FP8's)
MX = {"float6_e2m3": (4, 0, 2), "float6_e3m2": (3, -2, 4), "float4_e2m1": (2, 0, 2)}
GRIDS: dict[str, tuple[int, int, int, bool]] = {}  # fpx.format's: (p, emin, emax, subnormals)


def round_grid(q: Fraction, name: str) -> float:
    """q to nearest-even on a format of fpx.format's grid; inf past it."""
    p, emin, emax, subnormals = GRIDS[name]
    a = abs(q)
    if not subnormals and 0 < a < Fraction(2) ** emin:
        v = 0.0 if a < Fraction(2) ** (emin - 1) else 2.0**emin
        return math.copysign(v, q)
    e = emin
    while a >= Fraction(2) ** (e + 1):
        e += 1
    quantum = Fraction(2) ** (e - p + 1)
    n, rest = divmod(a / quantum, 1)
    if rest > Fraction(1, 2) or (rest == Fraction(1, 2) and n % 2 == 1):
        n += 1
    r = n * quantum
    if r >= Fraction(2) ** (emax + 1):
        return math.copysign(math.inf, q)
    return math.copysign(float(r), q) if q else 0.0


def round_any(q: Fraction, fmt: str) -> float:
    """q in fmt; past E4M3's largest value inf (``expected`` makes it NaN: the oracle compares
    the two ends of an interval, and NaN equals nothing)."""
    if fmt in GRIDS:
        return round_grid(q, fmt)
    r = rnd(q, fmt)
    return math.copysign(math.inf, q) if math.isnan(r) else r


@pytest.fixture
def held_oracle(monkeypatch):
    """test_ops_elementwise's oracle rounding to the held formats."""
    monkeypatch.setattr(E, "round_fraction", round_any)
    for name, (p, emin, emax) in MX.items():
        monkeypatch.setitem(SPECS, name, (np.dtype(np.float32), p, emin, emax))


def expected(want: float, fmt: str) -> float:
    """The oracle's real result in fmt: ±inf as the format's overflow (E4M3 NaN, FP6 and FP4
    their largest value, as fpx.as_format converts)."""
    if math.isinf(want) and fmt in TABLES:
        top = float(TABLES[fmt][-1][0])
        return {"float8_e4m3": math.nan, "float8_e5m2": want}.get(fmt, math.copysign(top, want))
    return want


def same_value(got, want: float) -> bool:
    g = float(got)
    if math.isnan(want) or math.isnan(g):
        return math.isnan(want) and math.isnan(g)
    return g == want and math.copysign(1, g) == math.copysign(1, want)


def check_held(name: str, fmt: str, got, xs, ys=None):
    xs = np.asarray(xs, np.float64).reshape(-1)
    ys = np.asarray(ys, np.float64).reshape(-1) if ys is not None else [None] * xs.size
    got = np.asarray(got).reshape(-1)
    assert got.dtype == (np.float64 if fmt in GRIDS else OCP.get(fmt))
    for g, a, b in zip(got, xs, ys):
        want = E.ref_pow(a, b, fmt) if name == "pow" else E.ref_unary(name, a, fmt)
        oracle.CHECKED["cases"] += 1
        assert same_value(g, expected(want, fmt)), (name, fmt, a, b, g, want)


def every_value(fmt: str, nan: bool = False) -> np.ndarray:
    """Every bit pattern of an OCP format (its NaNs only if asked)."""
    t = OCP[fmt]
    x = np.arange(1 << ml_dtypes.finfo(t).bits, dtype=np.uint8).view(t)
    return x if nan else x[~np.isnan(x.astype(np.float64))]


def no_nan_result(name: str, x: np.ndarray) -> np.ndarray:
    """The inputs whose real result is not NaN (FP6 and FP4 have none: refused, tested below)."""
    v = x.astype(np.float64)
    return x[v >= 0] if name in ("log", "sqrt") else x


@pytest.mark.parametrize("fmt", list(OCP))
@pytest.mark.parametrize("name", UNARY)
def test_exact_of_every_value_of_the_ocp_formats(name, fmt, held_oracle):
    x = every_value(fmt, nan=True)
    if fmt not in ("float8_e4m3", "float8_e5m2"):
        x = no_nan_result(name, x)
    check_held(name, fmt, fpx.__dict__[name](x, variant="exact"), x.astype(np.float64))


@pytest.mark.parametrize("fmt", list(OCP))
def test_exact_pow_of_ocp_pairs(fmt, held_oracle):
    """Every pair of FP6 and FP4 values (exact results: 1.5**2 = 2.25, 4**0.5, 0.25**1.5 ...),
    3,000 random pairs of FP8 values."""
    x = every_value(fmt)
    v = x.astype(np.float64)
    if x.size <= 64:
        a, b = (m.reshape(-1) for m in np.meshgrid(x, x))
    else:
        rng = np.random.default_rng(5)
        a, b = rng.choice(x, 3000), rng.choice(x[np.abs(v) <= 8], 3000)
    if fmt not in ("float8_e4m3", "float8_e5m2"):
        ok = (a.astype(np.float64) > 0) | (np.floor(b.astype(np.float64)) == b.astype(np.float64))
        ok &= ~((a.astype(np.float64) == 0) & (b.astype(np.float64) < 0))  # pole: fine, kept
        a, b = a[ok], b[ok]
    check_held("pow", fmt, fpx.pow(a, b, variant="exact"), a, b)


@pytest.mark.parametrize("fmt", list(OCP))
@pytest.mark.parametrize("name", UNARY)
def test_wide_rounds_numpys_float32_function_once_and_numpy_is_ml_dtypes(name, fmt):
    """wide: NumPy's float32 function (float32 holds every value of these formats with more
    precision) rounded once, here by the enumeration; numpy: ml_dtypes' own ufunc."""
    x = no_nan_result(name, every_value(fmt))
    with np.errstate(all="ignore"):
        f32 = getattr(np, name)(x.astype(np.float32)).astype(np.float64)
    got = fpx.__dict__[name](x, variant="wide")
    assert got.dtype == OCP[fmt]
    for g, w in zip(got.astype(np.float64), f32):
        want = expected(rnd(Fraction(w), fmt) if math.isfinite(w) and w else w, fmt)
        assert same_value(g, want), (name, fmt, g, w)
    with np.errstate(all="ignore"):
        lib = getattr(np, name)(x)
    assert lib.dtype == OCP[fmt]
    assert fpx.__dict__[name](x, variant="numpy").tobytes() == lib.tobytes()


def test_a_nan_result_in_fp6_or_fp4_is_refused_and_e4m3_overflows_to_nan():
    """FP6 and FP4 have no NaN (ml_dtypes' own log makes log(-1) 0 there); their overflow and
    log(0)'s -inf saturate (OCP MX v1.0, 5.3.3); E4M3's overflow is its NaN."""
    x4 = np.array([-1.0, 2.0], ml_dtypes.float4_e2m1fn)
    for variant in ("exact", "wide"):
        with pytest.raises(ValueError, match=r"log\(-1.0\) is NaN, which float4_e2m1 cannot h"):
            fpx.log(x4, variant=variant)
    assert float(fpx.log(x4, variant="numpy")[0]) == 0.0  # the library's own answer
    assert float(fpx.log(np.float64(0).astype(ml_dtypes.float4_e2m1fn), variant="exact")) == -6
    assert float(fpx.exp(np.array(6.0, ml_dtypes.float6_e3m2fn), variant="exact")) == 28.0
    assert math.isnan(fpx.exp(np.array(6.5, ml_dtypes.float8_e4m3fn), variant="exact"))
    assert float(fpx.exp(np.array(6.0, ml_dtypes.float8_e4m3fn), variant="exact")) == 416.0


TWIN = "twin_half_ew"


def test_the_float16_twin_computes_as_float16():
    """fpx.format(11, 15) against float16 on all 65,536 patterns: exact and wide bit for bit
    (float32 is the wider format of both), pow on 20,000 pairs; numpy is refused (no NumPy
    function computes in a format of fpx.format) and names the variants that do."""
    fpx.format(11, 15, name=TWIN)
    x16 = np.arange(1 << 16, dtype=np.uint16).view(np.float16)
    x = x16.astype(np.float64)
    for name in UNARY:
        for variant in ("wide", "exact"):
            want = fpx.__dict__[name](x16, variant=variant).astype(np.float64)
            got = ew.apply_held(name, (x,), TWIN, variant)
            assert got.dtype == np.float64
            assert np.array_equal(got, want, equal_nan=True), (name, variant)
            assert (np.signbit(got) == np.signbit(want))[~np.isnan(want)].all(), (name, variant)
    rng = np.random.default_rng(2)
    finite = x16[np.isfinite(x16)]
    a, b = rng.choice(finite, 20_000), rng.choice(finite[np.abs(finite) < 8], 20_000)
    for variant in ("wide", "exact"):
        want = fpx.pow(a, b, variant=variant).astype(np.float64)
        got = ew.apply_held("pow", (a.astype(np.float64), b.astype(np.float64)), TWIN, variant)
        assert np.array_equal(got, want, equal_nan=True), variant
    with pytest.raises(ValueError, match=f"variant 'numpy' does not compute in {TWIN}.*wide, ex"):
        ew.apply_held("exp", (x,), TWIN, "numpy")


def grid_values(name: str, fmt: str, rng, n: int) -> np.ndarray:
    """Values of the format where each function is interesting (near over- and underflow,
    around 1, random), rounded to it."""
    p, emin, emax, _ = GRIDS[fmt]
    ln2 = math.log(2)
    if name == "exp":  # (and where e**x is within 2**-p of 2**(emin - 1): 0 or 2**emin)
        half = (emin - 1) * ln2 * (1 + np.arange(-3, 4) * 2.0 ** -min(p, 52))
        v = np.concatenate(
            [rng.uniform(emin - p - 2, emin + 2, n) * ln2, rng.uniform(emax - 2, emax + 1, n) * ln2]
            + [half]
        )
    elif name in ("log", "sqrt"):
        v = np.concatenate([2.0 ** rng.uniform(emin - p, emax, n), 1 + rng.uniform(-1e-3, 1e-3, n)])
    else:
        v = rng.uniform(-8, 8, 2 * n)
    return np.asarray(fpx.as_format(v, fmt), dtype=np.float64)


@pytest.mark.parametrize("subnormals", [True, False])
@pytest.mark.parametrize("p,emax", [(50, 100), (30, 20), (3, 3)])
def test_exact_in_formats_of_fpx_format_against_rationals(
    p, emax, subnormals, held_oracle, monkeypatch
):
    """Precision 50 and 30 decide almost nothing in the float64 tier (2**-39): every element
    goes through mpmath and the format's own rounding; precision 30 takes sqrt from mpmath
    too (float64's sqrt rounded again is not innocuous past 25 bits). Without subnormals,
    results below 2**emin round to 0 or 2**emin."""
    fmt = fpx.format(p, emax, subnormals=subnormals).name
    GRIDS[fmt] = (p, 1 - emax, emax, subnormals)
    monkeypatch.setitem(SPECS, fmt, (np.dtype(np.float64), p, 1 - emax, emax))
    rng = np.random.default_rng(p + emax)
    for name in UNARY:
        x = grid_values(name, fmt, rng, 25)
        check_held(name, fmt, ew.apply_held(name, (x,), fmt, "exact"), x)
    a = np.asarray(fpx.as_format(rng.uniform(0.25, 4, 40), fmt), dtype=np.float64)
    b = np.asarray(fpx.as_format(rng.choice([2, 0.5, 1.5, -1, -3, 2.25, 0.3], 40), fmt))
    check_held("pow", fmt, ew.apply_held("pow", (a, b.astype(np.float64)), fmt, "exact"), a, b)


@pytest.mark.parametrize("fmt", ["float8_e4m3", "float4_e2m1", TWIN])
@pytest.mark.parametrize("name", ["exp", "pow"])
def test_compare_draws_the_held_format_and_its_rows_are_the_functions(name, fmt):
    """compare(format=...) draws ml_dtypes' type (float64 for fpx.format's); each row is the
    function's variant on them, the reference its exact variant, NumPy's row np.exp's (none
    for a format NumPy lacks, nor a numpy variant)."""
    fpx.format(11, 15, name=TWIN)
    cmp = fpx.compare(name, format=fmt, n=300, variants=["wide", "exact"], seed=3)
    assert cmp.inputs["x"].dtype == (np.float64 if fmt == TWIN else OCP[fmt])
    args = (cmp.inputs["x"], cmp.inputs["y"]) if name == "pow" else (cmp.inputs["x"],)

    def run(variant):
        if fmt == TWIN:
            return ew.apply_held(name, args, fmt, variant)
        return fpx.__dict__[name](*args, variant=variant)

    for variant in ("wide", "exact"):
        assert cmp.results[(variant, "emulated")].tobytes() == run(variant).tobytes()
    assert np.asarray(cmp.reference).tobytes() == run("exact").tobytes()
    lib = f"np.{'power' if name == 'pow' else name}"
    if fmt == TWIN:
        assert [k for k in cmp.results if k[1] != "emulated"] == []
        with pytest.raises(ValueError, match="numpy"):
            fpx.compare(name, format=fmt, n=30, variants=["numpy"])
    else:
        with np.errstate(all="ignore"):
            want = getattr(np, lib[3:])(*args)
        assert cmp.results[(lib, "numpy")].tobytes() == want.tobytes()


@pytest.mark.parametrize("subnormals", [True, False])
def test_with_the_fast_tier_off_every_value_goes_through_the_formats_own_rounding(
    subnormals, held_oracle, monkeypatch
):
    """Every element through mpmath and the exact powers (0.3125**2 = 25/256 lies below
    2**(emin - 1) = 1/8: 0 without subnormals, though a subnormal rounding first gives the
    tie 1/8 and then 2**emin), over all pairs of a 3-bit format's values, and FP4's."""
    monkeypatch.setattr(ew, "_REL64", 1.0)  # the float64 interval always straddles
    fmt = fpx.format(3, 3, subnormals=subnormals).name
    GRIDS[fmt] = (3, -2, 3, subnormals)
    monkeypatch.setitem(SPECS, fmt, (np.dtype(np.float64), 3, -2, 3))
    grid = sorted({float(v) for v in fpx.as_format(np.linspace(-16, 16, 2001), fmt)})
    x = np.array(grid)
    a, b = (m.reshape(-1) for m in np.meshgrid(x[x > 0], x[np.abs(x) <= 4]))
    check_held("pow", fmt, ew.apply_held("pow", (a, b), fmt, "exact"), a, b)
    for name in UNARY:
        v = x[x >= 0] if name in ("log", "sqrt") else x
        check_held(name, fmt, ew.apply_held(name, (v,), fmt, "exact"), v)
    x4 = every_value("float4_e2m1")
    a4, b4 = (m.reshape(-1) for m in np.meshgrid(x4[x4.astype(float) > 0], x4))
    check_held("pow", "float4_e2m1", fpx.pow(a4, b4, variant="exact"), a4, b4)
    for name in ("exp", "sin", "tanh"):
        check_held(name, "float4_e2m1", fpx.__dict__[name](x4, variant="exact"), x4)
