"""Elementwise math (fpexplore.ops.elementwise) against an independent high-precision oracle.

The oracle below does not share code with the package: special values are spelled out from
C11 Annex F.10 (F.9 in C99) case by case, real values come from mpmath's high-level functions
at 640 bits (tanh through expm1, sqrt through integer square roots, pow through exact
Fraction powers where y is a small integer or half-integer), and rounding is
tests/oracle.py's Fraction-based ``round_fraction``. A value within 2**-600 of a midpoint is
taken to be that midpoint (ties to even): only exact pow results get there.
"""

from __future__ import annotations

import math
import time
from fractions import Fraction

import mpmath
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import fpexplore as fpx
from fpexplore.ops import elementwise as ew
from fpexplore.ops import registry

import oracle
from oracle import SPECS, mpf_fraction, round_fraction, same, to_format
from strategies import STORAGE, random_values, values

UNARY = ("exp", "log", "sin", "tanh", "sqrt")
PREC = 640
NAN, INF = math.nan, math.inf


# ----------------------------------------------------------------------------- oracle


def round_mp(v: mpmath.mpf, fmt: str, sign: int = 1) -> float:
    """Round a (high-precision, nonzero) mpf to fmt; values within 2**-600 of a midpoint are
    that midpoint. Huge and tiny magnitudes are decided before any Fraction is built."""
    _, p, emin, emax = SPECS[fmt]
    if v == 0:
        return 0.0
    mag = int(mpmath.floor(mpmath.log(abs(v), 2)))
    if mag > emax + 2:
        return sign * math.copysign(INF, v)
    if mag < emin - p - 3:
        return sign * math.copysign(0.0, v)
    q = mpf_fraction(v)
    eps = abs(q) * Fraction(1, 2**600)
    a, b = round_fraction(q - eps, fmt), round_fraction(q + eps, fmt)
    if a != b:  # a midpoint (an exact result): ties to even
        a = round_fraction((Fraction(a) + Fraction(b)) / 2, fmt)
    return sign * a


def ref_unary(name: str, x: float, fmt: str) -> float:
    if math.isnan(x):
        return NAN
    if name == "exp":
        if x == INF:
            return INF
        if x == -INF:
            return 0.0
        if x == 0:
            return 1.0
    elif name == "log":
        if x < 0:
            return NAN  # includes -inf
        if x == 0:
            return -INF
        if x == INF:
            return INF
        if x == 1:
            return 0.0
    elif name == "sin":
        if math.isinf(x):
            return NAN
        if x == 0:
            return x
    elif name == "tanh":
        if math.isinf(x):
            return math.copysign(1.0, x)
        if x == 0:
            return x
    elif name == "sqrt":
        if x == 0:
            return x  # sqrt(-0) = -0
        if x < 0:
            return NAN
        if x == INF:
            return INF
        q = Fraction(x)
        s = 1400  # floor(sqrt(q) * 2**s) / 2**s: sqrt is never a midpoint, far from one
        r = math.isqrt(q.numerator * 4**s // q.denominator)
        return round_fraction(Fraction(r, 2**s), fmt)
    with mpmath.workprec(PREC):
        X = mpmath.mpf(x)
        if name == "exp":
            v = mpmath.exp(X)
        elif name == "log":
            v = mpmath.log(X)
        elif name == "sin":
            v = mpmath.sin(X)
        else:  # tanh x = expm1(2x) / (expm1(2x) + 2)
            e = mpmath.expm1(2 * X)
            v = e / (e + 2)
        return round_mp(v, fmt)


def ref_pow(x: float, y: float, fmt: str) -> float:
    """C11 F.10.4.4, then the real value."""
    if y == 0 or x == 1:
        return 1.0
    if math.isnan(x) or math.isnan(y):
        return NAN
    y_int = math.isfinite(y) and y == math.floor(y)
    y_odd = y_int and abs(y) < 2**53 and int(y) % 2 == 1
    if x == 0:
        if y < 0:
            return math.copysign(INF, x) if y_odd else INF
        return x if y_odd else 0.0
    if x == -1 and math.isinf(y):
        return 1.0
    if math.isinf(y):
        if abs(x) < 1:
            return INF if y < 0 else 0.0
        return 0.0 if y < 0 else INF
    if x == -INF:
        if y < 0:
            return -0.0 if y_odd else 0.0
        return -INF if y_odd else INF
    if x == INF:
        return 0.0 if y < 0 else INF
    if x < 0 and not y_int:
        return NAN
    sign = -1 if (x < 0 and y_odd) else 1
    ax = abs(x)
    fy = Fraction(y)
    if fy.denominator in (1, 2) and abs(fy.numerator) <= 64:
        z = Fraction(ax) ** fy.numerator
        if fy.denominator == 1:
            return sign * round_fraction(z, fmt) if z else sign * 0.0
        rn, rd = math.isqrt(z.numerator), math.isqrt(z.denominator)
        if rn * rn == z.numerator and rd * rd == z.denominator:
            return sign * round_fraction(Fraction(rn, rd), fmt)
    with mpmath.workprec(PREC):
        v = mpmath.power(mpmath.mpf(ax), mpmath.mpf(y))
        return round_mp(v, fmt, sign)


def check(name: str, x, y=None, fmt: str | None = None, got=None):
    """Compare ew.<name>(..., variant="exact") with the oracle element by element."""
    fmt = fmt or fpx.format_of(x)
    if got is None:
        got = (
            ew.pow(x, y, variant="exact")
            if name == "pow"
            else getattr(ew, name)(x, variant="exact")
        )
    got = np.atleast_1d(got)
    assert got.dtype == SPECS[fmt][0]
    xs = np.atleast_1d(x).astype(np.float64).tolist()
    ys = np.atleast_1d(y).astype(np.float64).tolist() if name == "pow" else [None] * len(xs)
    for i, (a, b) in enumerate(zip(xs, ys)):
        want = ref_pow(a, b, fmt) if name == "pow" else ref_unary(name, a, fmt)
        oracle.CHECKED["cases"] += 1
        assert same(got[i], to_format(want, fmt)), (name, fmt, a, b, got[i], want)


def domain_values(name: str, fmt: str, rng, n: int) -> np.ndarray:
    """Values where each function is interesting: around over/underflow, near 1, big, tiny."""
    _, p, emin, emax = SPECS[fmt]
    ln2 = math.log(2)
    if name == "exp":
        v = rng.uniform((emin - p - 2) * ln2, (emax + 1) * ln2 + 1, n)
    elif name in ("log", "sqrt"):
        v = np.exp2(rng.uniform(emin - p + 1, emax, n))
        v[: n // 4] = 1 + rng.uniform(-0.01, 0.01, n // 4)
    elif name == "sin":
        v = rng.uniform(-10, 10, n) * np.exp2(rng.integers(-30, min(emax, 200), n))
    else:
        v = rng.uniform(-12, 12, n)
        v[: n // 4] *= np.exp2(-rng.integers(5, 30, n // 4))
    with np.errstate(over="ignore"):
        return v.astype(SPECS[fmt][0])


# ----------------------------------------------------------------------------- exact


@pytest.mark.blas
@pytest.mark.parametrize("fmt", STORAGE)
@pytest.mark.parametrize("name", UNARY)
def test_exact_unary_against_oracle(name, fmt):
    rng = np.random.default_rng(hash((name, fmt)) % 2**32)
    x = np.concatenate([random_values(rng, fmt, 150), domain_values(name, fmt, rng, 150)])
    check(name, x)


@pytest.mark.blas
@pytest.mark.parametrize("fmt", STORAGE)
def test_exact_pow_against_oracle(fmt):
    rng = np.random.default_rng(7 + STORAGE.index(fmt))
    dt = SPECS[fmt][0]
    _, p, emin, emax = SPECS[fmt]
    n = 200
    x = random_values(rng, fmt, n)
    y = random_values(rng, fmt, n)
    # moderate bases and exponents, integer exponents, results near over/underflow
    bx = np.exp2(rng.uniform(-4, 4, n)) * rng.choice([1.0, -1.0], n)
    by = np.where(rng.random(n) < 0.5, rng.integers(-40, 40, n), rng.uniform(-30, 30, n))
    big = np.exp2(rng.uniform(2, 12, n))
    near = rng.uniform(emin - p - 2, emax + 2, n) / np.log2(big)
    with np.errstate(over="ignore"):
        xs = np.concatenate([x, bx.astype(dt), big.astype(dt)])
        ys = np.concatenate([y, by.astype(dt), near.astype(dt)])
    check("pow", xs, ys, fmt)


@pytest.mark.parametrize("fmt", STORAGE)
def test_exact_pow_special_grid(fmt):
    """Every pair from a grid of special values: C99 F.9.4.4 row by row."""
    specials = [0.0, -0.0, 1.0, -1.0, 2.0, -2.0, 0.5, -0.5, 3.0, -3.0, 1.5, -1.5, INF, -INF]
    specials += [NAN, 0.25, 4.0, 5.0, -5.0, 2.0 ** (SPECS[fmt][1] + 1)]
    pairs = [(a, b) for a in specials for b in specials]
    x = np.array([a for a, _ in pairs]).astype(SPECS[fmt][0])
    y = np.array([b for _, b in pairs]).astype(SPECS[fmt][0])
    check("pow", x, y, fmt)


def midpoint_cases(fmt: str):
    """Exact results that are midpoints of the format (Ziv's loop alone would never end):
    m**2 and m**3 with m odd and the power having p + 1 bits, (r*r)**1.5 = r**3, negative
    bases with odd exponents, and subnormal midpoints (m * 2**s)**e = m**e * 2**(emin - p)
    (an odd multiple of half the least subnormal; m = 1 is a tie between 0 and it)."""
    _, p, emin, emax = SPECS[fmt]
    rows = []
    for e in (2, 3):
        lo = math.ceil(2 ** (p / e))
        for m in range(lo | 1, lo + 40, 2):
            if (m**e).bit_length() == p + 1 and m.bit_length() <= p:
                for s in (0, -3, 2):
                    rows.append((math.ldexp(m, s), float(e)))
                    if e == 3:
                        rows.append((-math.ldexp(m, s), 3.0))
    lo = math.ceil(2 ** (p / 3))
    for r in range(lo | 1, lo + 60, 2):
        if (r**3).bit_length() == p + 1 and (r * r).bit_length() <= p:
            rows.append((float(r * r), 1.5))
    e = next(e for e in (2, 3, 5, 7) if (emin - p) % e == 0)
    for m in (1, 3, 5, 7):
        if m**e < 2**p:
            rows.append((math.ldexp(m, (emin - p) // e), float(e)))
    return rows


@pytest.mark.parametrize("fmt", STORAGE)
def test_exact_pow_midpoints(fmt):
    rows = midpoint_cases(fmt)
    assert len(rows) >= 3
    dt = SPECS[fmt][0]
    x = np.array([a for a, _ in rows]).astype(dt)
    y = np.array([b for _, b in rows]).astype(dt)
    assert (x.astype(float) == [a for a, _ in rows]).all()
    got = ew.pow(x, y, variant="exact")
    check("pow", x, y, fmt, got=got)
    # a tie goes to the even neighbour: the last significand bit is 0
    bits = fpx.fields(got).significand
    normal = np.abs(got.astype(float)) >= 2.0 ** SPECS[fmt][2]
    assert (bits[normal] % 2 == 0).all()


def test_pow_midpoint_example_float16():
    """63**2 = 3969 lies halfway between the float16 values 3968 and 3970: ties to even."""
    x = np.float16(63)
    assert ew.pow(x, np.float16(2), variant="exact") == np.float16(3968)
    assert fpx.fields(np.float16(3968)).significand % 2 == 0


@pytest.mark.parametrize("fmt", STORAGE)
@settings(max_examples=40)
@given(data=st.data())
def test_exact_hypothesis(fmt, data):
    name = data.draw(st.sampled_from(UNARY + ("pow",)))
    n = data.draw(st.integers(1, 6))
    xs = data.draw(st.lists(values(fmt), min_size=n, max_size=n))
    x = np.array(xs).astype(SPECS[fmt][0])
    if name == "pow":
        ys = data.draw(st.lists(values(fmt), min_size=n, max_size=n))
        check("pow", x, np.array(ys).astype(SPECS[fmt][0]), fmt)
    else:
        check(name, x)


@pytest.mark.parametrize("fmt", STORAGE)
def test_exact_slow_tier_only(fmt, monkeypatch):
    """With the fast tiers disabled every regular element goes through mpmath (Ziv)."""
    monkeypatch.setattr(ew, "_REL64", 1.0)  # the float64 interval always straddles
    monkeypatch.setattr(ew, "_EXTENDED", False)
    rng = np.random.default_rng(11)
    for name in ("exp", "log", "sin", "tanh"):
        check(
            name, np.concatenate([random_values(rng, fmt, 30), domain_values(name, fmt, rng, 30)])
        )
    check("pow", random_values(rng, fmt, 40), random_values(rng, fmt, 40), fmt)


@pytest.mark.parametrize("fmt", ["float16", "bfloat16"])
def test_sqrt_exhaustive_16bit(fmt):
    """Every 16-bit pattern: exact sqrt equals NumPy/ml_dtypes' sqrt (IEEE: correctly rounded,
    computed through float32, innocuous) and the oracle on every 64th pattern."""
    x = np.arange(2**16, dtype=np.uint16).view(SPECS[fmt][0])
    got = ew.sqrt(x, variant="exact")
    with np.errstate(invalid="ignore"):
        lib = np.sqrt(x)
    nan = np.isnan(got.astype(float))
    assert (nan == np.isnan(lib.astype(float))).all()
    assert (got.view(np.uint16)[~nan] == lib.view(np.uint16)[~nan]).all()
    check("sqrt", x[::64], got=got[::64])


def test_exact_is_monotone():
    """exp, log and tanh are increasing: so must be their correctly rounded values."""
    rng = np.random.default_rng(5)
    x = np.sort(rng.uniform(-100, 100, 20000).astype(np.float32))
    for f in (ew.exp, ew.tanh):
        r = f(x, variant="exact")
        assert (r[1:] >= r[:-1]).all()
    r = ew.log(np.sort(np.abs(x)), variant="exact")
    assert (r[1:] >= r[:-1]).all()


# ----------------------------------------------------------------------------- numpy, wide


@pytest.mark.blas
@pytest.mark.parametrize("fmt", STORAGE)
@pytest.mark.parametrize("name", UNARY + ("pow",))
def test_numpy_variant_is_numpy(name, fmt):
    rng = np.random.default_rng(3)
    x = random_values(rng, fmt, 600).reshape(20, 30)
    y = random_values(rng, fmt, 30)  # broadcasts against x for pow
    with np.errstate(all="ignore"):
        if name == "pow":
            got, want = ew.pow(x, y), np.power(x, y)
        else:
            got, want = getattr(ew, name)(x), getattr(np, name)(x)
    assert got.shape == want.shape == (20, 30) and got.dtype == want.dtype
    u = oracle.UINT[got.dtype.itemsize * 8]
    assert (got.view(u) == want.view(u)).all()
    # 0-d in, NumPy scalar out
    s = ew.pow(x[0, 0], y[0]) if name == "pow" else getattr(ew, name)(x[0, 0])
    assert isinstance(s, np.generic) and s.dtype == x.dtype


@pytest.mark.blas
@pytest.mark.parametrize("fmt", ["float16", "bfloat16", "float32"])
@pytest.mark.parametrize("name", UNARY + ("pow",))
def test_wide_variant_definition(name, fmt):
    """wide = NumPy's function in float32 (16-bit formats) or float64, rounded once."""
    rng = np.random.default_rng(9)
    x = random_values(rng, fmt, 300)
    y = random_values(rng, fmt, 300)
    wide = np.float64 if fmt == "float32" else np.float32
    with np.errstate(all="ignore"):
        if name == "pow":
            got = ew.pow(x, y, variant="wide")
            w = np.power(x.astype(wide), y.astype(wide))
        else:
            got = getattr(ew, name)(x, variant="wide")
            w = getattr(np, name)(x.astype(wide))
    for g, v in zip(got, w.astype(np.float64).tolist()):
        want = v if not math.isfinite(v) or v == 0 else round_fraction(Fraction(v), fmt)
        assert same(g, to_format(want, fmt)), (name, fmt, g, v)


@pytest.mark.blas
def test_wide_float64_uses_long_double():
    x = np.linspace(-700, 700, 1001)
    want = np.exp(x.astype(np.longdouble)).astype(np.float64)
    assert (ew.exp(x, variant="wide") == want).all()


# ----------------------------------------------------------------------------- ulp_error


def test_ulp_error_of_exact_is_zero():
    rng = np.random.default_rng(1)
    for fmt in STORAGE:
        x = random_values(rng, fmt, 500)
        for name in UNARY:
            assert (ew.ulp_error(name, x, variant="exact") == 0).all()
        assert (ew.ulp_error(ew.pow, x, x[::-1], variant="exact") == 0).all()


@pytest.mark.blas
def test_ulp_error_numpy_float32_is_small():
    """np.exp, np.log, np.sin, np.tanh in float32 are within a few ulps of the correctly
    rounded result (documented by NumPy: <= 4 ulp for its SIMD float32 code, which differs
    per CPU: measured on these inputs, 2 for exp and log, 1 for sin and tanh with AVX-512 or
    AVX2; without them, NumPy's baseline code, 1 for exp, log and sin, 2 for tanh). 'wide'
    (float64, rounded once) is within 1 ulp: double rounding of a result that is itself
    accurate to < 1 float64 ulp."""
    rng = np.random.default_rng(2)
    x = rng.uniform(-87, 88, 100_000).astype(np.float32)
    for name, arg in (("exp", x), ("log", np.abs(x)), ("sin", x), ("tanh", x)):
        err = ew.ulp_error(name, arg)
        assert np.abs(err).max() <= 4, name
        assert np.abs(ew.ulp_error(name, arg, variant="wide")).max() <= 1, name
    assert (ew.ulp_error("sqrt", np.abs(x)) == 0).all()  # IEEE: correctly rounded


@pytest.mark.blas
def test_ulp_error_sign_and_nan():
    x = np.array([1.0, np.nan, 2.0], dtype=np.float32)
    e = ew.ulp_error("exp", x)
    assert e.dtype == np.int64 and e[1] == 0  # both NaN
    got, ref = ew.exp(x), ew.exp(x, variant="exact")
    assert (e[[0, 2]] == fpx.ulp_distance(ref[[0, 2]], got[[0, 2]])).all()
    assert ew.ulp_error("exp", np.float32(1.0)).shape == ()


def test_exact_speed_float32():
    """n = 10**5 float32 well under a second (measured: about 5-10 ms per function)."""
    x = np.random.default_rng(0).uniform(-80, 80, 100_000).astype(np.float32)
    ew.exp(x[:10], variant="exact")  # mpmath import etc.
    for name in ("exp", "sin", "tanh"):
        t = time.perf_counter()
        getattr(ew, name)(x, variant="exact")
        assert time.perf_counter() - t < 1.0, name


# ----------------------------------------------------------------------------- errors, API


def test_unknown_variant_lists_valid_ones():
    with pytest.raises(ValueError, match="numpy, wide, exact"):
        ew.exp(np.float32(1), variant="fast")
    with pytest.raises(ValueError, match="valid functions"):
        ew.ulp_error("cos", np.float32(1))


def test_bad_inputs():
    with pytest.raises(TypeError, match="integer"):
        ew.exp(np.arange(3))
    with pytest.raises(TypeError, match="mixed formats"):
        ew.pow(np.float32(2), np.float64(2))
    with pytest.raises(TypeError, match="not exactly representable"):
        ew.pow(np.float32(2), 0.1)
    with pytest.raises(TypeError, match="two arguments"):
        ew.ulp_error("pow", np.float32(2))
    with pytest.raises(TypeError, match="one argument"):
        ew.ulp_error("exp", np.float32(2), np.float32(2))


def test_python_scalars_and_empty():
    assert ew.exp(1.0, variant="exact") == np.exp(1.0)  # float64, correctly rounded
    assert ew.pow(np.float32([2, 3]), 2.0).dtype == np.float32  # 2.0 adopts float32
    for fmt in STORAGE:
        e = np.zeros(0, SPECS[fmt][0])
        for v in ("numpy", "wide", "exact"):
            r = ew.sin(e, variant=v)
            assert r.shape == (0,) and r.dtype == e.dtype
        assert ew.ulp_error("pow", e, e).shape == (0,)


def test_registered_variants():
    for name in ew.FUNCTIONS:
        table = registry.variants(name, details=True)
        assert list(table) == ["numpy", "wide", "exact"]
        assert [v.kind for v in table.values()] == ["library", "formula", "exact"]
        assert name in registry.ops()


def test_mpmath_backend_is_the_one_this_run_asked_for():
    """`make test-gmpy2` (run by .ci/run) sets FPX_EXPECT_MPMATH_BACKEND=gmpy: the oracle tests
    must then really have run on gmpy2's integers, not quietly on mpmath's own."""
    import os

    want = os.environ.get("FPX_EXPECT_MPMATH_BACKEND")
    if not want:
        pytest.skip("FPX_EXPECT_MPMATH_BACKEND not set (make test-gmpy2 sets it)")
    assert mpmath.libmp.BACKEND == want
