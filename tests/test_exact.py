"""fma, exact_sum and exact_dot against the independent Fraction oracle (tests/oracle.py)."""

from __future__ import annotations

import math
import os
import subprocess
import sys
import warnings
from fractions import Fraction

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import fpexplore as fpx
from fpexplore import exact

import oracle
from oracle import SPECS, same
from strategies import STORAGE, arrays, random_values, values


def check_fma(a: np.ndarray, b: np.ndarray, c: np.ndarray, fmt: str) -> None:
    got = np.atleast_1d(fpx.fma(a, b, c))
    assert got.dtype == SPECS[fmt][0]
    for i, (x, y, z) in enumerate(zip(a.tolist(), b.tolist(), c.tolist())):
        want = oracle.to_format(oracle.fma(float(x), float(y), float(z), fmt), fmt)
        oracle.CHECKED["cases"] += 1
        assert same(got[i], want), (fmt, float(x), float(y), float(z), got[i], want)


def as_fmt(xs, fmt):
    return np.asarray(xs, dtype=np.float64).astype(SPECS[fmt][0])


# ----------------------------------------------------------------------------- fma


@pytest.mark.parametrize("fmt", STORAGE)
@settings(max_examples=150)
@given(data=st.data())
def test_fma_hypothesis(fmt, data):
    n = data.draw(st.integers(1, 48))
    vals = values(fmt)
    a = as_fmt(data.draw(st.lists(vals, min_size=n, max_size=n)), fmt)
    b = as_fmt(data.draw(st.lists(vals, min_size=n, max_size=n)), fmt)
    c = as_fmt(data.draw(st.lists(vals, min_size=n, max_size=n)), fmt)
    check_fma(a, b, c, fmt)


@pytest.mark.parametrize("fmt", STORAGE)
def test_fma_random_sweep(fmt):
    """A seeded sweep of 12,000 triples per format, a third of them near-cancelling."""
    rng = np.random.default_rng(20261122)
    n = 12000
    a = random_values(rng, fmt, n)
    b = random_values(rng, fmt, n)
    c = random_values(rng, fmt, n)
    # make a third of them cancel: c = -RN(a*b) (+ a few ulps), so the result is the low part
    k = n // 3
    with np.errstate(all="ignore"):
        prod = (a[:k].astype(np.float64) * b[:k].astype(np.float64)).astype(SPECS[fmt][0])
        c[:k] = -prod
        c[: k // 2] = fpx.next_up(c[: k // 2])
    check_fma(a, b, c, fmt)


def double_rounding_cases(fmt: str):
    """a*b lands exactly on a midpoint between two p-bit values; a tiny c breaks the tie.

    a = 1 + 2^-k, b = 1 + 2^-(p-k): a*b = 1 + 2^-k + 2^-(p-k) + 2^-p, a midpoint at quantum
    2^(1-p). Rounding a*b + c first to a wider format loses c and rounds the tie to even;
    the correct single rounding goes the way c points. Scaled by powers of two and signs.
    """
    _, p, emin, emax = SPECS[fmt]
    rows = []
    for k in range(1, p):
        a = 1 + math.ldexp(1, -k)
        b = 1 + math.ldexp(1, -(p - k))
        for scale in (0, 3, -5, emax // 2 - 2, emin // 2 + 2):
            for sign in (1.0, -1.0):
                for tiny_exp in (-p - 1, -p - 30, -p - 80, emin - p + 1 + 2 * scale):
                    for csign in (1.0, -1.0):
                        c = csign * math.ldexp(1, tiny_exp + 2 * scale)
                        rows.append((sign * math.ldexp(a, scale), math.ldexp(b, scale), c))
    arr = np.array(rows)
    with np.errstate(over="ignore", under="ignore"):
        out = [arr[:, i].astype(SPECS[fmt][0]) for i in range(3)]
    # keep rows whose inputs are exactly representable (e.g. tiny c may underflow to 0)
    keep = np.ones(len(rows), bool)
    for i in range(3):
        keep &= out[i].astype(np.float64) == arr[:, i]
    return [o[keep] for o in out]


@pytest.mark.parametrize("fmt", STORAGE)
def test_fma_double_rounding_cases(fmt):
    a, b, c = double_rounding_cases(fmt)
    assert len(a) > 100
    check_fma(a, b, c, fmt)
    # sanity: the cases defeat naive rounding through the next wider IEEE format
    if fmt != "float64":
        wide = np.float32 if fmt in ("float16", "bfloat16") else np.float64
        with np.errstate(all="ignore"):
            naive = (a.astype(wide) * b.astype(wide) + c.astype(wide)).astype(SPECS[fmt][0])
        got = fpx.fma(a, b, c)
        assert np.any(naive != got)


def test_fma_documented_double_rounding_example():
    """docs/cases.md (exact FMA): a = b = 1 + 2^-12, c = 2^-60 in float32; naive is wrong."""
    a = np.float32(1 + 2**-12)
    c = np.float32(2**-60)
    assert fpx.fma(a, a, c) == np.float32(1 + 2**-11 + 2**-23)
    assert np.float32(np.float64(a) * np.float64(a) + np.float64(c)) == np.float32(1 + 2**-11)


def test_fma_float64_hard_ranges():
    """Products near over/underflow and results near underflow take the exact fallback."""
    big, tiny = 2.0**600, 2.0**-600
    cases = [
        (big, big, -math.ldexp(1, 1023)),  # product overflows float64, result overflows
        (2.0**512, 2.0**511, -(2.0**1023)),  # exact 0 from a product beyond the fast range
        (2.0**1000, 2.0**23, -(2.0**1023)),  # finite result although a*b > max
        (tiny, tiny, 5e-324),  # product far below the smallest subnormal
        (tiny, tiny, -5e-324),
        (2.0**-537, 2.0**-537, 0.0),  # product exactly a subnormal
        (1 + 2.0**-52, 1 - 2.0**-53, -1.0),  # low part only
        (3.0 * 2.0**-540, 2.0**-500, -(3.0 * 2.0**-1040)),
        (1e308, 10.0, -math.inf),
        (1e308, 10.0, math.nan),
        (math.inf, 0.0, 1.0),
        (-0.0, 1.0, -0.0),
        (-0.0, 1.0, 0.0),
        (0.0, -1.0, -0.0),
        (1.0, 1.0, -1.0),
        (5e-324, 0.5, 0.0),
        (5e-324, -0.5, -0.0),
    ]
    a, b, c = (np.array(col) for col in zip(*cases))
    check_fma(a, b, c, "float64")


@pytest.mark.parametrize("fmt", STORAGE)
def test_fma_broadcast_and_scalars(fmt):
    dt = SPECS[fmt][0]
    a = np.arange(6, dtype=np.float64).reshape(2, 3).astype(dt)
    out = fpx.fma(a, dt.type(2), 1.0)  # Python 1.0 adopts the array's format (exact)
    assert out.shape == (2, 3) and out.dtype == dt
    assert np.array_equal(out.astype(np.float64), a.astype(np.float64) * 2 + 1)
    s = fpx.fma(dt.type(1.5), dt.type(2), dt.type(0.25))
    assert np.ndim(s) == 0 and s.dtype == dt and float(s) == 3.25


# ----------------------------------------------------------------------------- exact_sum


def check_sum(x: np.ndarray, fmt: str) -> None:
    got = fpx.exact_sum(x)
    want = oracle.to_format(oracle.sum_([float(v) for v in x.tolist()], fmt), fmt)
    oracle.CHECKED["cases"] += 1
    assert np.asarray(got).dtype == SPECS[fmt][0]
    assert same(got, want), (fmt, x, got, want)


@pytest.mark.parametrize("fmt", STORAGE)
@settings(max_examples=250)
@given(data=st.data())
def test_exact_sum_hypothesis(fmt, data):
    x = data.draw(arrays(fmt, 0, 40))
    check_sum(x, fmt)
    # and the same values with their negations appended: exact cancellation to a tiny rest
    finite = x[np.isfinite(x.astype(np.float64))]
    check_sum(np.concatenate([finite, -finite[: len(finite) // 2]]), fmt)


@pytest.mark.parametrize("fmt", STORAGE)
def test_exact_sum_sweep(fmt):
    rng = np.random.default_rng(7)
    for n in (0, 1, 2, 3, 17, 100, 1000, 5000):
        for _ in range(10 if n < 1000 else 2):
            x = random_values(rng, fmt, n)
            x = x[np.isfinite(x.astype(np.float64))] if rng.random() < 0.7 else x
            check_sum(x, fmt)


@pytest.mark.parametrize("fmt", STORAGE)
def test_exact_sum_signed_zeros_and_specials(fmt):
    dt = SPECS[fmt][0]

    def arr(*v):
        return np.array(v, dtype=np.float64).astype(dt)

    assert same(fpx.exact_sum(arr()), dt.type(0.0))
    assert same(fpx.exact_sum(arr(-0.0)), dt.type(-0.0))
    assert same(fpx.exact_sum(arr(-0.0, -0.0)), dt.type(-0.0))
    assert same(fpx.exact_sum(arr(-0.0, 0.0)), dt.type(0.0))
    assert same(fpx.exact_sum(arr(1.0, -1.0)), dt.type(0.0))
    assert same(fpx.exact_sum(arr(math.inf, 1.0)), dt.type(math.inf))
    assert np.isnan(fpx.exact_sum(arr(math.inf, -math.inf)))
    assert np.isnan(fpx.exact_sum(arr(1.0, math.nan)))
    mx = float(oracle.max_finite(fmt))
    assert same(fpx.exact_sum(arr(mx, mx)), dt.type(math.inf))  # overflow
    assert same(fpx.exact_sum(arr(mx, mx, -mx)), dt.type(mx))  # no intermediate overflow


def test_exact_sum_classic_cancellation():
    x = np.array([1e100, 1.0, -1e100, 1e-100], dtype=np.float64)
    assert fpx.exact_sum(x) == 1.0 + 0.0  # 1 + 1e-100 rounds to 1
    x = np.array([2.0**-1074, 2.0**1023, -(2.0**1023), 2.0**-1074])
    assert fpx.exact_sum(x) == 2.0**-1073


def test_exact_sum_large_float32_against_oracle():
    rng = np.random.default_rng(3)
    x = (rng.standard_normal(20000) * np.exp2(rng.integers(-40, 40, 20000))).astype(np.float32)
    check_sum(x, "float32")


# ----------------------------------------------------------------------------- exact_dot


def check_dot(a: np.ndarray, b: np.ndarray, fmt: str) -> None:
    got = fpx.exact_dot(a, b)
    want = oracle.to_format(
        oracle.dot([float(v) for v in a.tolist()], [float(v) for v in b.tolist()], fmt), fmt
    )
    oracle.CHECKED["cases"] += 1
    assert np.asarray(got).dtype == SPECS[fmt][0]
    assert same(got, want), (fmt, a, b, got, want)


@pytest.mark.parametrize("fmt", STORAGE)
@settings(max_examples=250)
@given(data=st.data())
def test_exact_dot_hypothesis(fmt, data):
    n = data.draw(st.integers(0, 30))
    vals = values(fmt)
    a = as_fmt(data.draw(st.lists(vals, min_size=n, max_size=n)), fmt)
    b = as_fmt(data.draw(st.lists(vals, min_size=n, max_size=n)), fmt)
    check_dot(a, b, fmt)


@pytest.mark.parametrize("fmt", STORAGE)
def test_exact_dot_sweep(fmt):
    rng = np.random.default_rng(11)
    for n in (0, 1, 4, 33, 500, 3000):
        for _ in range(8 if n < 500 else 2):
            a = random_values(rng, fmt, n)
            b = random_values(rng, fmt, n)
            if rng.random() < 0.7:
                ok = np.isfinite(a.astype(np.float64)) & np.isfinite(b.astype(np.float64))
                a, b = a[ok], b[ok]
            check_dot(a, b, fmt)


def test_exact_dot_nvidia_example():
    """Whitehead & Fit-Florea (NVIDIA), ch. 3: the 4-element float32 dot product.

    The exact value of the float32 inputs is computed here with Fractions and must round to
    the fpexplore result; the paper's rounded methods differ from it by a few ulps.
    """
    a = np.array([1.907607, -0.7862027, 1.147311, 0.9604002], dtype=np.float32)
    b = np.array([-0.9355000, -0.6915108, 1.724470, -0.7097529], dtype=np.float32)
    check_dot(a, b, "float32")
    serial = np.float32(0)
    for x, y in zip(a, b):
        serial = np.float32(serial + np.float32(x * y))
    assert abs(float(serial) - 0.0559577) < 1e-7  # the thread's CPU value, printed to 6 digits
    assert fpx.ulp_distance(serial, fpx.exact_dot(a, b)) != 0


def test_exact_dot_float64_extreme_products():
    a = np.array([2.0**700, 2.0**-700, 1e-300, 3.0, 2.0**-1074])
    b = np.array([2.0**400, 2.0**-500, 1e-300, 1.0 / 3, 2.0**600])
    check_dot(a, b, "float64")
    check_dot(a, -b, "float64")
    # a huge product cancelled by its negation leaves the small ones
    a2 = np.array([2.0**700, 1.0, -(2.0**700)])
    b2 = np.array([2.0**400, 2.0**-60, 2.0**400])
    check_dot(a2, b2, "float64")
    assert fpx.exact_dot(a2, b2) == 2.0**-60


# ----------------------------------------------------------------------------- bad input


def test_errors():
    f32 = np.ones(3, np.float32)
    f64 = np.ones(3, np.float64)
    with pytest.raises(TypeError, match="mixed formats float32 and float64"):
        fpx.fma(f32, f64, f32)
    with pytest.raises(TypeError, match="as_format"):
        fpx.exact_dot(f32, f64)
    with pytest.raises(TypeError, match="integer"):
        fpx.exact_sum(np.arange(3))
    with pytest.raises(TypeError, match="not exactly representable in float32"):
        fpx.fma(f32, f32, 0.1)
    with pytest.raises(TypeError):
        fpx.exact_sum(np.array([1.0, 2.0], dtype=object))
    with pytest.raises(TypeError, match="boolean"):
        fpx.fma(True, 1.0, 1.0)
    with pytest.raises(ValueError, match="1-D"):
        fpx.exact_dot(np.ones((2, 2)), np.ones((2, 2)))
    with pytest.raises(ValueError, match="differ"):
        fpx.exact_dot(np.ones(2), np.ones(3))
    # Python floats alone are float64; lists adopt an array's format when exact
    assert fpx.exact_sum([0.1, 0.2]).dtype == np.float64
    assert fpx.exact_dot(f32, [1.0, 2.0, 0.5]) == np.float32(3.5)


# ----------------------------------------------------------------------------- the two paths
# The functions above run on the compiled kernels (fpexplore._exact_kernels); the pure NumPy
# paths stay as the fallback (FPX_EXACT_NUMPY=1, exact.NUMPY_ONLY) and are checked here.


@pytest.fixture
def numpy_only(monkeypatch):
    monkeypatch.setattr(exact, "NUMPY_ONLY", True)


@pytest.mark.parametrize("fmt", STORAGE)
def test_numpy_fallback_against_oracle(fmt, numpy_only):
    rng = np.random.default_rng(29)
    n = 3000
    a, b, c = (random_values(rng, fmt, n) for _ in range(3))
    with np.errstate(all="ignore"):
        c[: n // 3] = -(a[: n // 3].astype(np.float64) * b[: n // 3]).astype(SPECS[fmt][0])
    check_fma(a, b, c, fmt)
    for m in (0, 1, 5, 300, 2000):
        x = random_values(rng, fmt, m)
        y = random_values(rng, fmt, m)
        check_sum(x, fmt)
        check_dot(x, y, fmt)
        ok = np.isfinite(x.astype(np.float64)) & np.isfinite(y.astype(np.float64))
        check_sum(x[ok], fmt)
        check_dot(x[ok], y[ok], fmt)
    a, b, c = double_rounding_cases(fmt)
    check_fma(a, b, c, fmt)


def test_numpy_only_from_the_environment_loads_no_numba():
    code = (
        "import sys, numpy as np, fpexplore as fpx\n"
        "x = np.arange(5.0)\n"
        "r = (fpx.fma(x, x, x)[4], fpx.exact_sum(x), fpx.exact_dot(x, x))\n"
        "print(fpx.exact.NUMPY_ONLY, 'numba' in sys.modules, [float(v) for v in r])"
    )
    env = dict(os.environ, FPX_EXACT_NUMPY="1")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert out.stdout.split() == ["True", "False", "[20.0,", "10.0,", "30.0]"], out.stderr


# ----------------------------------------------------------------------------- the bins


def _binades(fmt: str, rng) -> np.ndarray:
    """One value per binade of the format, subnormal binades included, random significands and
    signs."""
    _, p, emin, emax = SPECS[fmt]
    vals = []
    for e in range(emin - p + 1, emax + 1):
        lo = max(e, emin)  # subnormal binades keep the fixed quantum of 2**(emin - p + 1)
        bits = p - 1 - (lo - e) if e < emin else p - 1
        m = (1 << bits) + int(rng.integers(0, 1 << bits)) if bits > 0 else 1
        vals.append(math.ldexp(m, e - bits) * (1 if rng.random() < 0.5 else -1))
    return as_fmt(vals, fmt)


@pytest.mark.parametrize("fmt", STORAGE)
def test_exact_sum_every_binade(fmt):
    rng = np.random.default_rng(31)
    for _ in range(3):
        x = _binades(fmt, rng)
        assert np.all(np.isfinite(x.astype(np.float64))) and x.size > 30
        check_sum(x, fmt)
        check_sum(rng.permutation(np.concatenate([x, -x[::3]])), fmt)
        check_dot(x, np.ones_like(x), fmt)
        check_dot(x, x[::-1].copy(), fmt)


@pytest.mark.parametrize("fmt", STORAGE)
def test_exact_sum_subnormals_only(fmt):
    _, p, emin, _ = SPECS[fmt]
    rng = np.random.default_rng(37)
    tiny = math.ldexp(1.0, emin - p + 1)
    for n in (1, 2, 7, 500, 4000):
        k = rng.integers(-(1 << (p - 1)) + 1, 1 << (p - 1), n)
        x = as_fmt(k * tiny, fmt)
        check_sum(x, fmt)
        check_sum(np.concatenate([x, -x]), fmt)  # exactly 0: +0.0


def test_huge_cancellation():
    mx = float(oracle.max_finite("float64"))
    tiny = 5e-324
    for x in (
        [1e308, 1.0, -1e308, 1e-300],
        [1e308, -1e308, tiny],
        [mx, mx, -mx, -mx, tiny, tiny],
        [mx, tiny, mx, -mx, 2**-1022, -mx, -tiny],
        [mx, mx, mx, -mx, -mx],  # finite after an intermediate overflow
        [mx] * 3 + [-mx] * 2 + [-(2.0**970)],  # mx - 2**970 is a tie between mx and its neighbour
    ):
        check_sum(np.array(x), "float64")
        check_sum(-np.array(x), "float64")
    for fmt in STORAGE:
        mxf = float(oracle.max_finite(fmt))
        _, p, emin, _ = SPECS[fmt]
        x = as_fmt([mxf, math.ldexp(1.0, emin - p + 1), -mxf, mxf], fmt)
        check_sum(x, fmt)
        check_dot(x, as_fmt([1.0, 1.0, 1.0, -1.0], fmt), fmt)


def test_exact_dot_float64_products_near_the_limits():
    """Products near and beyond both ends of float64's range (underflowing, subnormal,
    overflowing, exactly cancelling) against the oracle; both paths."""
    rng = np.random.default_rng(41)
    for trial in range(120):
        n = int(rng.integers(1, 40))
        lo, hi = (
            (-1140, -960) if trial % 3 == 0 else ((960, 1030) if trial % 3 == 1 else (-1140, 1030))
        )
        target = rng.integers(lo, hi, n)
        ea = rng.integers(-1074, 1023, n)
        eb = np.clip(target - ea, -1074, 1023)
        a = np.ldexp(rng.uniform(1, 2, n) * rng.choice([-1, 1], n), ea)
        b = np.ldexp(rng.uniform(1, 2, n), eb)
        if trial % 4 == 0:  # exact cancellation of the huge part
            a = np.concatenate([a, -a[: n // 2]])
            b = np.concatenate([b, b[: n // 2]])
        a[~np.isfinite(a)] = 1.0
        check_dot(a, b, "float64")
        exact.NUMPY_ONLY = True
        try:
            check_dot(a, b, "float64")
        finally:
            exact.NUMPY_ONLY = False


@pytest.mark.parametrize("fmt", STORAGE)
def test_bins_hold_a_full_chunk_of_one_exponent(fmt):
    """2**32 terms of one exponent (a whole kernel call, far beyond 2**29), their significands
    all ones: the state of the bins after them is built, not summed, then more terms go
    through the kernel and the total is compared with Fractions."""
    from fpexplore import _exact_kernels as K

    _, p, _, emax = SPECS[fmt]
    v = -float(oracle.max_finite(fmt)) / 4  # all significand bits set, one exponent
    count = exact._CHUNK
    x = as_fmt([v] * 1001, fmt)
    m = (1 << p) - 1  # v's significand (the bins hold magnitudes, the sign in the index)
    if fmt == "float64":
        hi, lo = (np.zeros((K.ROWS, 4096), np.int64) for _ in range(2))
        s = int((x[:1].view(np.uint64)[0] >> 52) & 0xFFF)  # sign and exponent
        hi[:, s] = (count // K.ROWS) * (m >> K.LOW_BITS)
        lo[:, s] = (count // K.ROWS) * (m & ((1 << K.LOW_BITS) - 1))
        assert K.sum_bins64(x.view(np.int64), hi, lo) == 0
        terms = exact.bin_terms(hi, K.F64_UNIT, K.LOW_BITS, 11)
        terms += exact.bin_terms(lo, K.F64_UNIT, 0, 11)
    else:
        view, fbits, ebits = exact._LAYOUT[fmt]
        bins = np.zeros((K.ROWS, 2 << ebits), np.int64)
        s = int((x[:1].view(view)[0].astype(np.int64) >> fbits) & ((2 << ebits) - 1))
        bins[:, s] = (count // K.ROWS) * m
        assert K.sum_bins(x.view(view), fbits, ebits, bins) == 0
        terms = exact.bin_terms(bins, emax + fbits, 0, ebits)
    N, k = exact._combine(terms)
    assert Fraction(N) * Fraction(2) ** k == (count + 1001) * Fraction(v)
    oracle.CHECKED["cases"] += 1


def test_dot_bins_hold_a_full_chunk():
    """float64 products: 2**32 TwoProduct pairs of one exponent each, built as the state of the
    bins, then more products through the kernel, against Fractions."""
    from fpexplore import _exact_kernels as K

    a = np.full(999, -(2 - 2.0**-52))
    b = np.full(999, 2 - 2.0**-52)
    p = a[0] * b[0]
    e = float(Fraction(a[0]) * Fraction(b[0]) - Fraction(p))  # exact: TwoProduct's error
    hi, lo = (np.zeros((K.ROWS, 4096), np.int64) for _ in range(2))
    whi, wlo = (np.zeros(K.WIDE_BINS, np.int64) for _ in range(2))
    for v in (p, e):
        bits = int(np.array([v]).view(np.uint64)[0])
        s = (bits >> 52) & 0xFFF
        m = (bits & ((1 << 52) - 1)) | (1 << 52)
        hi[:, s] += (exact._CHUNK // K.ROWS) * (m >> K.LOW_BITS)
        lo[:, s] += (exact._CHUNK // K.ROWS) * (m & ((1 << K.LOW_BITS) - 1))
    assert K.dot_bins64(a, b, hi, lo, whi, wlo) == 0
    terms = exact.bin_terms(hi, K.F64_UNIT, K.LOW_BITS, 11)
    terms += exact.bin_terms(lo, K.F64_UNIT, 0, 11)
    N, k = exact._combine(terms)
    assert Fraction(N) * Fraction(2) ** k == (exact._CHUNK + 999) * Fraction(a[0]) * Fraction(b[0])
    oracle.CHECKED["cases"] += 1


# ----------------------------------------------------------------------------- threaded parts


def _parted(fmt: str, n: int, seed: int):
    """n values whose large terms cancel across the parts' cuts (the first part holds +big,
    the last -big), so a part's own total is far from the whole's."""
    rng = np.random.default_rng(seed)
    big = float(oracle.max_finite(fmt)) / 8
    x = as_fmt(rng.standard_normal(n), fmt)
    x[1], x[-2] = as_fmt([big, -big], fmt)
    x[n // 3 - 1], x[n // 3] = as_fmt([big / 2, -big / 2], fmt)  # across the first cut
    return x


@pytest.mark.parametrize("fmt", STORAGE)
def test_threaded_parts_against_the_oracle(fmt, monkeypatch):
    """Sums and dot products split into 3 parts run on 3 threads (this one and two of the
    pool's): the parts' bins are combined exactly, so the result is the oracle's and the
    one-thread result, bit for bit; a NaN or an infinity in the last part only still decides
    the result."""
    n = 3 * exact.THREAD_MIN + 7
    x, y = _parted(fmt, n, 1), _parted(fmt, n, 2)[::-1].copy()
    runs = []
    pool = exact._pool()

    class Spy:
        def map(self, f, jobs):
            jobs = list(jobs)
            runs.append(len(jobs))
            return pool.map(f, jobs)

    monkeypatch.setattr(exact, "_pool", lambda: Spy())
    monkeypatch.setenv("FPX_EXACT_THREADS", "3")
    assert exact.threads_for(n) == 3
    check_sum(x, fmt)
    check_dot(x, y, fmt)
    threaded = (fpx.exact_sum(x), fpx.exact_dot(x, y))
    assert runs == [2] * 4  # the parts after the first; check_sum, check_dot, these two
    monkeypatch.setenv("FPX_EXACT_THREADS", "1")
    one = (fpx.exact_sum(x), fpx.exact_dot(x, y))
    assert runs == [2] * 4  # one thread: no pool
    assert all(same(a, b) for a, b in zip(threaded, one))
    monkeypatch.setenv("FPX_EXACT_THREADS", "3")
    x[-1] = np.inf
    assert fpx.exact_sum(x) == np.inf and np.isnan(fpx.exact_dot(x, np.zeros_like(x)))
    assert runs == [2] * 6


def test_exact_threads_setting(monkeypatch):
    """FPX_EXACT_THREADS: a whole number >= 1 (ValueError naming it otherwise); small n stay
    on one thread whatever it says."""
    monkeypatch.setenv("FPX_EXACT_THREADS", "4")
    assert exact.threads_for(exact.THREAD_MIN - 1) == 1
    assert exact.threads_for(2 * exact.THREAD_MIN) == 2
    assert exact.threads_for(100 * exact.THREAD_MIN) == 4
    for bad in ("0", "two", "-1", "1.5"):
        monkeypatch.setenv("FPX_EXACT_THREADS", bad)
        with pytest.raises(ValueError, match="FPX_EXACT_THREADS"):
            exact.threads_for(10**6)
    monkeypatch.delenv("FPX_EXACT_THREADS")
    assert 1 <= exact.threads_for(10**7) <= 8


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
def test_threaded_parts_in_a_forked_child(monkeypatch):
    """A child forked after the parts' threads started gets threads of its own (the pool a fork
    copies has none) and sums as its parent does."""
    import multiprocessing

    monkeypatch.setenv("FPX_EXACT_THREADS", "2")
    x = np.random.default_rng(3).standard_normal(4 * exact.THREAD_MIN)
    want = fpx.exact_sum(x)  # the parent's pool now runs
    with multiprocessing.get_context("fork").Pool(1) as pool:
        got = pool.apply_async(fpx.exact_sum, (x,)).get(timeout=60)
    assert same(got, want)


def test_threaded_parts_at_interpreter_exit():
    """At exit Python shuts its thread pools down before the atexit handlers run: a large sum
    called there runs its parts on the calling thread instead of failing."""
    code = (
        "import atexit, numpy as np, fpexplore as fpx\n"
        "x = np.random.default_rng(0).standard_normal(1 << 19)\n"
        "y = np.random.default_rng(1).standard_normal(1 << 19)\n"
        "want = (fpx.exact_sum(x), fpx.exact_dot(x, y))\n"
        "atexit.register(lambda: print((fpx.exact_sum(x), fpx.exact_dot(x, y)) == want))\n"
    )
    env = dict(os.environ, FPX_EXACT_THREADS="2")
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300
    )
    assert out.returncode == 0 and out.stdout.strip() == "True", out.stderr[-2000:]


def test_cpu_quota_of_the_control_group(tmp_path, monkeypatch):
    """cgroup v2 (cpu.max) and v1 (cfs quota and period) limits, rounded up; none where
    unlimited or unreadable; threads_for never exceeds it."""
    v2 = tmp_path / "v2"
    v2.mkdir()
    for text, want in (("150000 100000\n", 2), ("100000 100000\n", 1), ("max 100000\n", None)):
        (v2 / "cpu.max").write_text(text)
        assert exact.cpu_quota(str(v2)) == want, text
    v1 = tmp_path / "v1"
    (v1 / "cpu").mkdir(parents=True)
    (v1 / "cpu" / "cpu.cfs_period_us").write_text("100000\n")
    for quota, want in (("250000", 3), ("-1", None)):
        (v1 / "cpu" / "cpu.cfs_quota_us").write_text(quota + "\n")
        assert exact.cpu_quota(str(v1)) == want, quota
    assert exact.cpu_quota(str(tmp_path / "none")) is None
    monkeypatch.delenv("FPX_EXACT_THREADS", raising=False)
    monkeypatch.setattr(exact, "cpu_quota", lambda: 1)
    assert exact.threads_for(100 * exact.THREAD_MIN) == 1


@pytest.mark.parametrize("fmt", ["float16", "bfloat16", "float32", "float64"])
def test_fma_with_broadcast_scalars_warns_nothing(fmt):
    """fpx.fma(np.array([1.0]), 1.0, 1.0) let numba's FutureWarning about writing to a
    broadcast array reach the user; the values: 1*1 + 1 and x*2 + 0.5, exact."""
    dt = ml_dtypes.bfloat16 if fmt == "bfloat16" else np.dtype(fmt)
    x = np.array([1.0, 2.0, 3.0], dtype=dt)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        one = fpx.fma(x[:1], 1.0, 1.0)
        got = fpx.fma(x, 2.0, 0.5)
        col = fpx.fma(x, x[:, None], 1.0)
    assert np.asarray(one).astype(np.float64).tolist() == [2.0]
    assert np.asarray(got).astype(np.float64).tolist() == [2.5, 4.5, 6.5]
    want = [[a * b + 1 for a in (1, 2, 3)] for b in (1, 2, 3)]
    assert np.asarray(col).astype(np.float64).tolist() == want
