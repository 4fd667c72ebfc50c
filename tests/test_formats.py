"""fpexplore.formats against the oracle: rounding, bits, ulps, neighbours, ULP distance."""

from __future__ import annotations

import math
import warnings
from decimal import Decimal
from fractions import Fraction

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import fpexplore as fpx

import oracle
from oracle import SPECS, same
from strategies import STORAGE, random_values, values

ALL = STORAGE + ("tf32", "tf32-rne", "tf32-truncate", "bfloat16-truncate")
ALL += ("float8_e4m3", "float8_e5m2")


# ----------------------------------------------------------------------------- registry


def test_formats_tuple_and_info():
    assert fpx.FORMATS == ("float16", "bfloat16", "float32", "float64")
    # IEEE 754-2019 table 3.5 (binary16/32/64) and the bfloat16 / TF32 definitions
    expect = {
        "float16": (11, -14, 15, 2.0**-10, 2.0**-24, 2.0**-14, 65504.0),
        "bfloat16": (8, -126, 127, 2.0**-7, 2.0**-133, 2.0**-126, 3.3895313892515355e38),
        "float32": (24, -126, 127, 2.0**-23, 2.0**-149, 2.0**-126, 3.4028234663852886e38),
        "float64": (
            53,
            -1022,
            1023,
            2.0**-52,
            5e-324,
            2.2250738585072014e-308,
            1.7976931348623157e308,
        ),
        "tf32": (11, -126, 127, 2.0**-10, 2.0**-136, 2.0**-126, 3.4011621342146535e38),
    }
    for name, (p, emin, emax, eps, sub, norm, mx) in expect.items():
        info = fpx.format_info(name)
        assert (info.precision, info.emin, info.emax) == (p, emin, emax)
        assert (info.eps, info.smallest_subnormal, info.smallest_normal, info.max) == (
            eps,
            sub,
            norm,
            mx,
        )
        assert info.unit_roundoff == eps / 2
    # truncation's rounding error is up to a whole ulp (pass 16: bounds took half of one)
    for name in ("tf32-truncate", "bfloat16-truncate"):
        assert fpx.format_info(name).unit_roundoff == fpx.format_info(name).eps
    assert fpx.format_info(np.float32).name == "float32"
    assert fpx.format_info(ml_dtypes.bfloat16).name == "bfloat16"
    for name in fpx.FORMATS:  # the storage formats agree with NumPy / ml_dtypes finfo
        fi = ml_dtypes.finfo(SPECS[name][0])
        info = fpx.format_info(name)
        assert float(fi.max) == info.max and float(fi.eps) == info.eps
        assert float(fi.smallest_subnormal) == info.smallest_subnormal


def test_unknown_format_lists_valid_ones():
    with pytest.raises(ValueError, match="float16, bfloat16, float32, float64, tf32"):
        fpx.format_info("float8")
    with pytest.raises(ValueError, match="valid formats"):
        fpx.as_format(1.0, "half")
    with pytest.raises(ValueError, match="valid formats"):
        fpx.format_info(np.int32)


def test_a_value_is_no_format():
    """Issue 36: np.dtype reads a NumPy scalar or array as its dtype, so a value given as the
    format (arguments swapped: as_format(np.float16(0.5), np.float32(0.1))) ran in that
    value's format, and sum(x, accumulate=np.float64(16.0)) in float64, without a word."""
    for value in (np.float32(0.1), np.float64(16.0), np.zeros(2, np.float16)):
        with pytest.raises(TypeError, match="a format is a name or a dtype, got the value"):
            fpx.format_info(value)
    with pytest.raises(TypeError, match="got the value"):
        fpx.as_format(np.float16(0.5), np.float32(0.1))
    with pytest.raises(ValueError, match="accumulate"):
        fpx.sum(np.ones(4, np.float32), accumulate=np.float64(16.0))
    assert fpx.format_info(np.float16).name == fpx.format_info(np.dtype("float16")).name


def test_format_of():
    assert fpx.format_of(np.zeros(2, np.float16)) == "float16"
    assert fpx.format_of(np.zeros(2, ml_dtypes.bfloat16)) == "bfloat16"
    with pytest.raises(TypeError, match="integer"):
        fpx.format_of(np.arange(3))


# ----------------------------------------------------------------------------- as_format


def check_rounding(x64: np.ndarray, fmt: str) -> None:
    got = np.atleast_1d(fpx.as_format(x64, fmt))
    assert got.dtype == SPECS[fmt][0]
    for g, v in zip(got, x64.tolist()):
        want = v if not math.isfinite(v) else oracle.round_fraction(Fraction(v), fmt)
        if math.isinf(v) and fmt in oracle.MAX_FINITE:  # float8_e4m3: no infinity, NaN
            want = math.nan
        if v == 0:
            want = v
        oracle.CHECKED["cases"] += 1
        assert same(g, oracle.to_format(want, fmt)), (fmt, v, g, want)


def near_midpoints(rng, fmt: str, n: int) -> np.ndarray:
    """float64 values at, just above and just below midpoints of fmt, over its whole range."""
    _, p, emin, emax = SPECS[fmt]
    m = rng.integers(2 ** (p - 1), 2**p, size=n).astype(np.float64)
    e = rng.integers(emin - p - 3, emax + 1, size=n)
    mid = np.ldexp(m + 0.5, e - p + 1)  # exact in float64 for p <= 24 (p+1 bits)
    if p > 24:  # float64 midpoints are not float64 numbers: use values around them
        mid = np.ldexp(m, e - p + 1)
    nudge = rng.choice([-1, 0, 1], size=n)
    with np.errstate(over="ignore"):
        out = np.where(nudge == 0, mid, np.nextafter(mid, np.where(nudge > 0, np.inf, -np.inf)))
    return out * rng.choice([-1.0, 1.0], size=n)


@pytest.mark.parametrize("fmt", ALL)
def test_as_format_from_float64(fmt):
    rng = np.random.default_rng(5)
    x = np.concatenate(
        [
            near_midpoints(rng, fmt, 6000),
            random_values(rng, "float64", 3000).astype(np.float64),
            np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1e-320, -1e-320]),
            # the overflow threshold max + ulp(max)/2 rounds to inf; just below rounds to max
            np.array([float(oracle.max_finite(fmt)) * (1 + 2.0 ** -SPECS[fmt][1])]),
            np.nextafter(
                np.array([float(oracle.max_finite(fmt)) * (1 + 2.0 ** -SPECS[fmt][1])]), 0
            ),
        ]
    )
    check_rounding(x, fmt)


@pytest.mark.parametrize("src", STORAGE)
@pytest.mark.parametrize("fmt", ALL)
def test_as_format_between_formats(src, fmt):
    rng = np.random.default_rng(9)
    x = random_values(rng, src, 3000)
    got = np.atleast_1d(fpx.as_format(x, fmt))
    with np.errstate(invalid="ignore"):
        x64 = x.astype(np.float64)
    check_rounding(x64, fmt)
    assert np.array_equal(got, np.atleast_1d(fpx.as_format(x64, fmt)), equal_nan=True)


def test_as_format_double_rounding_traps():
    # via float32 these would round to the even neighbour; correctly they round up
    assert float(fpx.as_format(1 + 2**-8 + 2**-40, "bfloat16")) == 1 + 2**-7
    assert float(fpx.as_format(1 + 2**-11 + 2**-40, "tf32")) == 1 + 2**-10
    assert float(fpx.as_format(1 + 2**-11 + 2**-40, "float16")) == 1 + 2**-10


def test_as_format_exact_inputs():
    assert float(fpx.as_format(Fraction(1, 3), "float32")) == float(np.float32(1 / 3))
    assert float(fpx.as_format(2**1000 + 1, "float64")) == 2.0**1000
    assert float(fpx.as_format(Decimal("0.1"), "float64")) == 0.1
    big = np.array([2**53 + 1, -(2**62) - 1], dtype=np.int64)
    assert fpx.as_format(big, "float64").tolist() == [2.0**53, -(2.0**62)]
    assert fpx.as_format(np.array([2**53 + 1]), "float32")[0] == np.float32(2.0**53)
    # 2^24 + 1 is a tie in float32 -> even (2^24); 2^24 + 3 -> 2^24 + 4
    assert fpx.as_format([2**24 + 1, 2**24 + 3], "float32").tolist() == [2.0**24, 2.0**24 + 4]
    assert fpx.as_format(10**400, "float64") == np.inf
    assert np.signbit(fpx.as_format(-0.0, "bfloat16"))
    assert fpx.as_format(np.float32(3.0), "float32") == np.float32(3.0)
    with pytest.raises(TypeError, match="boolean"):
        fpx.as_format(True, "float32")
    with pytest.raises(TypeError):
        fpx.as_format(1 + 2j, "float64")


@settings(max_examples=300)
@given(q=st.fractions(max_denominator=10**30), fmt=st.sampled_from(ALL))
def test_as_format_fractions_hypothesis(q, fmt):
    got = fpx.as_format(q, fmt)
    oracle.CHECKED["cases"] += 1
    assert same(got, oracle.to_format(oracle.round_fraction(q, fmt), fmt))


# ----------------------------------------------------------------------------- bits


def test_bits_fields_and_strings():
    assert fpx.to_bits(np.float32(1.0)) == 0x3F800000
    assert fpx.bit_string(np.float32(-1.5)) == "1 01111111 10000000000000000000000"
    assert fpx.bit_string(np.float16(65504)) == "0 11110 1111111111"
    assert fpx.bit_string(ml_dtypes.bfloat16(1.0), sep="") == "0011111110000000"
    assert fpx.bit_string(np.float64(2.0)) == "0 10000000000 " + "0" * 52
    f = fpx.fields(np.array([-2.5, 5e-324, np.inf]))
    assert f.sign.tolist() == [1, 0, 0]
    assert f.exponent.tolist() == [1024, 0, 2047]
    assert f.significand.tolist() == [2**50, 1, 0]
    arr = np.array([[1.0, -0.0]], dtype=np.float32)
    assert fpx.bit_string(arr).shape == (1, 2)
    assert fpx.from_bits(fpx.to_bits(arr), "float32").tolist() == arr.tolist()
    with pytest.raises(ValueError, match="2\\*\\*16"):
        fpx.from_bits(70000, "float16")


def test_from_bits_errors_name_the_argument():
    bad_bits = [
        (70000, "float16", ValueError, "^from_bits: bits: 70000 is not a float16 bit pattern"),
        (-1, "float16", ValueError, "^from_bits: bits: -1 is not"),
        (np.array([1, 2**40]), "float32", ValueError, "^from_bits: bits: 1099511627776 is not"),
        (2**70, "float64", ValueError, "^from_bits: bits: 1180591620717411303424 is not"),
        ("abc", "float16", TypeError, "^from_bits: bits must be integers"),
        (1.5, "float32", TypeError, "^from_bits: bits must be integers"),
        (True, "float16", TypeError, "^from_bits: bits must be integers"),
        ([1, [2]], "float16", ValueError, "^from_bits: bits: "),
        (1, "tf32", ValueError, "^from_bits: fmt: tf32 is an input rounding"),
        (1, "float33", ValueError, "^from_bits: fmt: unknown format 'float33'"),
        (1, None, TypeError, "^from_bits: fmt: a format is needed"),
    ]
    for bits, fmt, err, match in bad_bits:
        with pytest.raises(err, match=match):
            fpx.from_bits(bits, fmt)
    # what is in range is taken as it is: Python ints up to 2**64 - 1, empty lists
    assert fpx.to_bits(fpx.from_bits(2**64 - 1, "float64")) == 2**64 - 1
    assert fpx.from_bits([], "float16").dtype == np.float16
    assert fpx.from_bits(np.array([0x3C00], np.int64), "float16").tolist() == [1.0]


@pytest.mark.parametrize("fmt", STORAGE)
def test_bits_roundtrip_random(fmt):
    rng = np.random.default_rng(1)
    x = random_values(rng, fmt, 2000)
    b = fpx.to_bits(x)
    back = fpx.from_bits(b, fmt)
    assert np.array_equal(back.view(b.dtype), b)
    s, e, m = fpx.fields(x)
    info = fpx.format_info(fmt)
    rebuilt = (s.astype(object) << (info.bits - 1)) | (e.astype(object) << info.fraction_bits) | m
    assert [int(v) for v in rebuilt] == [int(v) for v in b]


# ----------------------------------------------------------------------------- neighbours


def sorted_values(fmt: str) -> np.ndarray:
    """All values of a 16-bit format in increasing order, NaNs and -0.0 removed."""
    with np.errstate(invalid="ignore"):
        allv = np.arange(2**16, dtype=np.uint16).view(SPECS[fmt][0]).astype(np.float64)
    allv = allv[~np.isnan(allv)]
    allv = allv[~((allv == 0) & np.signbit(allv))]
    return np.sort(allv)


@pytest.mark.parametrize("fmt", ["float16", "bfloat16"])
def test_neighbours_ulps_distances_exhaustive_16bit(fmt):
    """Every 16-bit pattern: next_up/next_down/ulp_distance against the sorted value list."""
    dt = SPECS[fmt][0]
    order = sorted_values(fmt)
    index = {v: i for i, v in enumerate(order.tolist())}
    index[-0.0] = index[0.0]
    x = np.arange(2**16, dtype=np.uint16).view(dt)
    with np.errstate(invalid="ignore"):
        x64 = x.astype(np.float64)
        up = fpx.next_up(x).astype(np.float64)
        down = fpx.next_down(x).astype(np.float64)
    finite = ~np.isnan(x64)
    for v, u, d in zip(x64[finite].tolist(), up[finite].tolist(), down[finite].tolist()):
        i = index[v]
        assert u == (order[i + 1] if i + 1 < len(order) else math.inf)
        assert d == (order[i - 1] if i > 0 else -math.inf)
        if v == 0:  # nextUp(±0) is the smallest positive subnormal
            assert u == order[index[0.0] + 1]
    assert np.isnan(up[~finite]).all() and np.isnan(down[~finite]).all()
    # ulp_distance is the difference of positions in the sorted list (±0 at one position)
    rng = np.random.default_rng(0)
    a = rng.choice(x[finite], 5000)
    b = rng.choice(x[finite], 5000)
    got = fpx.ulp_distance(a, b)
    want = [index[float(q)] - index[float(p)] for p, q in zip(a, b)]
    oracle.CHECKED["cases"] += len(want)
    assert got.tolist() == want
    # ulp: the quantum, against the oracle
    got_ulp = fpx.ulp(x[finite]).astype(np.float64)
    want_ulp = [oracle.ulp(v, fmt) for v in x64[finite].tolist()]
    assert got_ulp.tolist() == want_ulp


@pytest.mark.parametrize("fmt", ["float32", "float64"])
def test_neighbours_wide_formats(fmt):
    rng = np.random.default_rng(2)
    x = random_values(rng, fmt, 5000)
    dt = SPECS[fmt][0].type
    with np.errstate(invalid="ignore", over="ignore"):
        want_up = np.nextafter(x, dt(np.inf))
        want_down = np.nextafter(x, dt(-np.inf))
    # IEEE nextUp(-0) = +min subnormal; nextafter(-0, +inf) gives the same value
    assert np.array_equal(fpx.next_up(x), want_up, equal_nan=True)
    assert np.array_equal(fpx.next_down(x), want_down, equal_nan=True)


@pytest.mark.parametrize("fmt", ["float32", "float64"])
def test_ulp_distance_wide_formats(fmt):
    rng = np.random.default_rng(4)
    a = random_values(rng, fmt, 4000)
    b = random_values(rng, fmt, 4000)
    b[:1000] = fpx.next_up(a[:1000])
    ok = ~np.isnan(a) & ~np.isnan(b)
    a, b = a[ok], b[ok]
    got = fpx.ulp_distance(a, b)
    big = 2**63 - 1
    for g, p, q in zip(got.tolist(), a.tolist(), b.tolist()):
        want = oracle.ordinal(q, fmt) - oracle.ordinal(p, fmt)
        oracle.CHECKED["cases"] += 1
        assert g == max(-big, min(big, want)), (p, q, g, want)
    x = random_values(rng, fmt, 3000)
    x = x[np.isfinite(x)]
    assert np.all(fpx.ulp_distance(x, fpx.next_up(x)) == 1)
    got_ulp = fpx.ulp(x).astype(np.float64)
    assert got_ulp.tolist() == [oracle.ulp(v, fmt) for v in x.tolist()]


def test_ulp_distance_rules():
    f32 = np.float32
    assert fpx.ulp_distance(f32(-0.0), f32(0.0)) == 0
    assert fpx.ulp_distance(f32(1.0), f32(1.0 + 2**-23)) == 1
    assert fpx.ulp_distance(f32(1.0 + 2**-23), f32(1.0)) == -1
    assert fpx.ulp_distance(f32(-1e-45), f32(1e-45)) == 2
    assert fpx.ulp_distance(f32(3.4028235e38), f32(np.inf)) == 1
    # the SO 21020356 matmul differences at ~100: 7.63e-06 is one float32 ulp there
    assert fpx.ulp_distance(f32(100.0), f32(100.0) + f32(7.62939453125e-06)) == 1
    with pytest.raises(ValueError, match="NaN"):
        fpx.ulp_distance(f32(np.nan), f32(1.0))
    got = fpx.ulp_distance(
        np.array([np.nan, np.nan, 1.0]), np.array([np.nan, 1.0, np.nan]), nan="sentinel"
    )
    assert got.tolist() == [0, fpx.ULP_NAN, fpx.ULP_NAN]
    assert fpx.ulp_distance(-1.7976931348623157e308, 1.7976931348623157e308) == 2**63 - 1
    with pytest.raises(TypeError, match="mixed formats"):
        fpx.ulp_distance(np.float32(1), np.float64(1))
    # the advice names the format that holds both (float16 to bfloat16 would round)
    with pytest.raises(TypeError, match=r"as_format\(x, 'float32'\) \(it holds both: exact\)"):
        fpx.ulp_distance(np.array([1], ml_dtypes.bfloat16), np.array([1], np.float16))
    with pytest.raises(ValueError, match="nan must be"):
        fpx.ulp_distance(1.0, 2.0, nan="ignore")


def test_ulp_distance_of_exactly_2_to_the_63_saturates():
    """Opposite signs whose ordinals differ by exactly 2**63 (2.0 to -2.0, 3.0 to -1.5): the
    int64 difference is -2**63 without overflowing, which is the NaN sentinel; it saturates
    at -(2**63 - 1) like every distance beyond, in both directions (oracle: Python ints)."""
    rng = np.random.default_rng(11)
    keys = rng.integers(2**62, 2**63 - 2**52, 500, dtype=np.int64)  # finite values >= 2.0
    x = keys.view(np.float64)
    y = (np.int64(2**62) - (keys - np.int64(2**62))).view(np.float64)  # ordinals sum to 2**63
    pairs = [(2.0, -2.0), (3.0, -1.5)] + list(zip(x.tolist(), (-y).tolist()))
    big = 2**63 - 1
    for p, q in pairs:
        want = oracle.ordinal(q, "float64") - oracle.ordinal(p, "float64")
        assert abs(want) == 2**63, (p, q)
        assert fpx.ulp_distance(p, q) == -big and fpx.ulp_distance(q, p) == big, (p, q)
    got = fpx.ulp_distance(x, -y, nan="sentinel")
    assert not np.any(got == fpx.ULP_NAN) and np.all(got == -big)
    d = fpx.diff(np.array([2.0, 3.0]), np.array([-2.0, 3.0]))
    assert d.summary["nan_mismatches"] == 0 and d.summary["saturated"] == 1
    assert "NaN" not in repr(d) and "1 element(s) 2**62 or more ulps apart" in repr(d)


@pytest.mark.parametrize(
    "call",
    [
        lambda L: fpx.exact_sum(L),
        lambda L: fpx.exact_dot(L, [1.0] * len(L)),
        lambda L: fpx.fma(L, 1.0, 0.0),
        lambda L: fpx.sum(L, "sequential"),
        lambda L: fpx.ulp_distance(L, [0.0] * len(L)),
        lambda L: fpx.diff(L, [0.0] * len(L)),
        lambda L: fpx.ulp(L),
        lambda L: fpx.next_up(L),
    ],
)
def test_python_ints_among_floats_are_never_rounded_on_the_way_in(call):
    """[2**53 + 1, 0.5]: NumPy makes it a float64 array, rounding 2**53 + 1 to 2**53, so
    exact_sum gave 2**53 where the exact sum 2**53 + 1.5 rounds to 2**53 + 2 (Fraction).
    Such a list is refused, naming the integer; ints that float64 holds are taken as they are
    (their sum checked against Fraction)."""
    with pytest.raises(TypeError, match="the integer 9007199254740993 in the list"):
        call([2**53 + 1, 0.5])
    with pytest.raises(TypeError, match="the integer -9007199254740995 in the list"):
        call([0.5, -(2**53 + 3)])
    held = [2**53, 0.5, 3, -(2**60), 2**60, 1.25]  # every int exactly a float64
    want = float(sum(Fraction(v) for v in held))  # correctly rounded: 2**53 + 4
    assert fpx.exact_sum(held) == want == 2.0**53 + 4
    # NumPy's integer scalars in a list were rounded through float64 the same way
    for big in (np.int64(2**53 + 1), np.uint64(2**64 - 1)):
        with pytest.raises(TypeError, match=f"the integer {int(big)} in the list"):
            call([big, 0.5])


def test_as_format_rounds_ints_among_floats_once():
    """as_format([2**60 + 2**36 + 1, 0.5], "float32") rounded the int to float64 (2**60) and
    then to float32: 2**60. Rounded once, it is 2**60 + 2**37 (Fraction, nearest-even at
    float32's 24 bits: 2**36 + 1 is past half an ulp of 2**37)."""
    big = 2**60 + 2**36 + 1
    want = np.float32(2**60 + 2**37)
    assert float(want) == 2**60 + 2**37  # the oracle's neighbour, exactly a float32
    for x in ([big, 0.5], [np.int64(big), 0.5], [np.uint64(big), 0.5], (0.5, big)):
        got = np.asarray(fpx.as_format(x, "float32"))
        assert got.dtype == np.float32 and float(got[x.index(0.5) ^ 1]) == float(want), x
        assert got[x.index(0.5)] == np.float32(0.5)
    with pytest.raises(ValueError, match="as_format: x: a nested list whose rows"):
        fpx.as_format([[1.0], [1.0, 2.0]], "float32")


def test_tf32_truncate_saturates_whatever_the_type():
    """tf32-truncate rounds toward zero: a finite value past the largest tf32 value
    ((2 - 2**-10) * 2**127) gives it, with its sign, as a Fraction, a float or a float32
    (a Fraction and 1e39 gave inf); infinities stay."""
    largest = (2 - 2.0**-10) * 2.0**127
    for v in (Fraction(340199290171201906221318119490500689920), 1e39, 2.0**200, 2.0**128):
        assert float(fpx.as_format(v, "tf32-truncate")) == largest, v
        assert float(fpx.as_format(-v, "tf32-truncate")) == -largest, v
    assert float(fpx.as_format(np.float32(3.4028235e38), "tf32-truncate")) == largest
    assert float(fpx.as_format(np.array([1e39]), "tf32-truncate")[0]) == largest
    assert fpx.as_format(math.inf, "tf32-truncate") == math.inf


def test_ulp_of_signalling_nans_is_nan_without_warnings():
    snan16 = np.array([0x7D01, 0xFD01, 0x3C00], np.uint16).view(np.float16)
    snan32 = np.array([0x7F800001], np.uint32).view(np.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = fpx.ulp(snan16)
        assert np.isnan(got[:2]).all() and got[2] == np.float16(2.0**-10)
        assert np.isnan(fpx.ulp(snan32[0])) and np.isnan(fpx.ulp(snan16[0]))
        snan_bf = np.array([0x7F81, 0x3F80], np.uint16).view(ml_dtypes.bfloat16)
        for x in (snan16, snan32, snan_bf):
            for fmt in ("float64", "float16"):
                got = np.asarray(fpx.as_format(x, fmt)).astype(np.float64)
                assert np.isnan(got[0]), (x.dtype, fmt)


def test_ulp_tf32():
    x = np.array([1.0, 3.0, 1e-38], dtype=np.float32)
    assert fpx.ulp(x, "tf32").tolist() == [2.0**-10, 2.0**-9, 2.0**-136]
    with pytest.raises(TypeError, match="stored as float32"):
        fpx.ulp(np.float64(1.0), "tf32")


@settings(max_examples=200)
@given(data=st.data(), fmt=st.sampled_from(STORAGE))
def test_next_up_ulp_consistency_hypothesis(data, fmt):
    v = data.draw(values(fmt))
    x = np.array([v]).astype(SPECS[fmt][0])
    if not np.isfinite(x.astype(np.float64)).all():
        return
    up = fpx.next_up(x)
    assert fpx.ulp_distance(x, up)[0] == 1
    assert same(fpx.next_down(up)[0], x[0]) or (x[0] == 0 and fpx.next_down(up)[0] == 0)


# ----------------------------------------------------------------------------- printing


def _digits(text: str) -> int:
    """Significant decimal digits of a finite, nonzero decimal string."""
    mantissa = text.lower().split("e")[0].lstrip("-").replace(".", "").lstrip("0")
    return len(mantissa.rstrip("0")) or 1


@pytest.mark.parametrize("fmt", STORAGE)
def test_shortest_repr_round_trips_and_is_shortest(fmt):
    """Every string reads back (exact decimal, correctly rounded by the Fraction oracle) as the
    same value in its own format, and no string with one digit fewer does."""
    rng = np.random.default_rng(7)
    x = random_values(rng, fmt, 1500)
    x = x[np.isfinite(x.astype(np.float64)) & (x != 0)]
    texts = fpx.shortest_repr(x)
    assert texts.shape == x.shape and len(x) > 1000
    for v, t in zip(x.astype(np.float64).tolist(), texts.tolist()):
        assert oracle.round_fraction(Fraction(Decimal(t)), fmt) == v, (v, t)
        d = _digits(t)
        if d > 1:
            shorter = f"{v:.{d - 2}e}"  # the nearest decimal with one digit fewer
            assert oracle.round_fraction(Fraction(Decimal(shorter)), fmt) != v, (v, t)


def test_shortest_repr_of_a_power_of_two_looks_above_the_nearest_decimal():
    """At a power of two the gap below is half the gap above: the shortest decimal can lie
    above v without being the nearest (bfloat16 2**-59 = 1.7347...e-18: 1.74e-18 reads back
    as it, and 1.735e-18 was shown). No decimal with a digit fewer, below or above, reads back
    (bfloat16's search tried only the nearest; float16 and float32 are NumPy's Dragon4)."""
    from decimal import ROUND_CEILING, ROUND_FLOOR, localcontext

    for fmt in ("bfloat16", "float16", "float32"):
        info = fpx.format_info(fmt)
        lo = info.emin - info.precision + 1
        for v in [s * 2.0**e for e in range(lo, info.emax + 1) for s in (1, -1)]:
            t = fpx.shortest_repr(fpx.as_format(v, fmt))
            assert oracle.round_fraction(Fraction(Decimal(t)), fmt) == v, (fmt, v, t)
            for rounding in (ROUND_FLOOR, ROUND_CEILING) if _digits(t) > 1 else ():
                with localcontext() as ctx:
                    ctx.prec, ctx.rounding = _digits(t) - 1, rounding
                    shorter = +Decimal(v)
                assert oracle.round_fraction(Fraction(shorter), fmt) != v, (fmt, v, t, shorter)


def test_shortest_repr_tells_neighbours_apart():
    # sum, float32, n = 1e5: pandas' six digits print 49957.4 for values 1 ulp apart
    for fmt in fpx.FORMATS:
        v = fpx.as_format(49957.4, fmt)
        up, down = fpx.next_up(v), fpx.next_down(v)
        shown = [fpx.shortest_repr(w) for w in (down, v, up)]
        assert len(set(shown)) == 3, (fmt, shown)
    assert fpx.shortest_repr(np.float32(49957.38671875)) == "49957.387"
    assert fpx.shortest_repr(fpx.next_up(np.float32(49957.38671875))) == "49957.39"
    # bfloat16 follows NumPy's spelling rules (float16 for comparison)
    assert fpx.shortest_repr(fpx.as_format(49957.4, "bfloat16")) == "5e+04"
    assert fpx.shortest_repr(np.float16(49957.4)) == "4.995e+04"
    assert fpx.shortest_repr(fpx.as_format(0.1, "bfloat16")) == "0.1"
    specials = np.array([-0.0, np.inf, -np.inf, np.nan], dtype=ml_dtypes.bfloat16)
    assert fpx.shortest_repr(specials).tolist() == ["-0.0", "inf", "-inf", "nan"]


def test_hex_string():
    assert fpx.hex_string(np.float32(0.1)) == "0x3dcccccd"
    assert fpx.hex_string(np.float16(-0.0)) == "0x8000"
    assert fpx.hex_string(fpx.as_format(1.0, "bfloat16")) == "0x3f80"
    assert fpx.hex_string(np.array([1.0, 2.0])).tolist() == [
        "0x3ff0000000000000",
        "0x4000000000000000",
    ]


# ----------------------------------------------------------------------------- tf32 and FP8


def test_tf32_rounds_ties_away_from_zero_as_cublas():
    # cuBLAS / CUTLASS convert float32 to tf32 with cvt.rna (ties away from zero): 1024.5 is a
    # tie between 1024 and 1025 (ulp 1 at 1024 with 11 bits) and goes to 1025, as the RTX 3090
    # in pytorch issue 53635 gives for [1024.5] @ [[1.0]] with TF32 on
    got = fpx.matmul(
        np.float32([[1024.5]]), np.float32([[1.0]]), "sequential", input_rounding="tf32"
    )
    assert got.tolist() == [[1025.0]]
    x = np.float32([1024.5, -1024.5, 1 + 2**-11, -(1 + 2**-11), 1 + 3 * 2**-11, 2049.0])
    assert fpx.as_format(x, "tf32").tolist() == [
        1025,
        -1025,
        1 + 2**-10,
        -(1 + 2**-10),
        1 + 2**-9,
        2050,
    ]
    assert fpx.as_format(x, "tf32-rne").tolist() == [1024, -1024, 1, -1, 1 + 2**-9, 2048]
    assert fpx.as_format(x, "tf32-truncate").tolist() == [1024, -1024, 1, -1, 1 + 2**-10, 2048]
    # only exact ties go away from zero
    assert float(fpx.as_format(1024.5 - 2**-20, "tf32")) == 1024.0
    assert float(fpx.as_format(Fraction(-2049, 2), "tf32")) == -1025.0
    assert float(fpx.as_format(Fraction(-2049, 2), "tf32-truncate")) == -1024.0
    assert (
        fpx.dot(
            np.float32([1024.5]), np.float32([1.0]), "sequential", input_rounding="tf32-truncate"
        )
        == 1024.0
    )


def test_float8_formats_as_ml_dtypes():
    e4m3 = fpx.format_info("float8_e4m3")
    assert (e4m3.precision, e4m3.emin, e4m3.max, e4m3.smallest_subnormal) == (4, -6, 448.0, 2.0**-9)
    e5m2 = fpx.format_info("float8_e5m2")
    assert (e5m2.precision, e5m2.emin, e5m2.max, e5m2.smallest_subnormal) == (
        3,
        -14,
        57344.0,
        2.0**-16,
    )
    assert "float8_e4m3" not in fpx.FORMATS
    # every value of the format, and every midpoint between neighbours, against ml_dtypes
    for name, dt in (
        ("float8_e4m3", ml_dtypes.float8_e4m3fn),
        ("float8_e5m2", ml_dtypes.float8_e5m2),
    ):
        vals = np.arange(256, dtype=np.uint8).view(dt).astype(np.float32)
        fin = np.unique(vals[np.isfinite(vals)])
        mids = (fin[1:] + fin[:-1]) / 2  # exact in float32
        x = np.concatenate([fin, mids, np.nextafter(mids, 0), np.nextafter(mids, np.inf)])
        got = fpx.as_format(x, name)
        assert got.dtype == np.float32
        want = x.astype(dt).astype(np.float32)  # ml_dtypes from float32: nearest-even
        assert np.array_equal(got, want, equal_nan=True)
        with np.errstate(over="ignore"):
            assert np.array_equal(fpx.as_format(x.astype(np.float64), name), want, equal_nan=True)
    # overflow: e4m3 has no infinity (ml_dtypes e4m3fn: NaN; CUDA's satfinite would give 448)
    x = np.array([448.0, 464.0, 464.5, 1e6, np.inf, -np.inf, -464.0])
    assert np.array_equal(
        fpx.as_format(x, "float8_e4m3"),
        np.float32([448, 448, np.nan, np.nan, np.nan, np.nan, -448]),
        equal_nan=True,
    )
    assert np.isnan(fpx.as_format(Fraction(465), "float8_e4m3"))
    assert fpx.as_format(np.array([57344.0, 61439.0, 61440.0]), "float8_e5m2").tolist() == [
        57344.0,
        57344.0,
        np.inf,
    ]


def test_a_decimal_keeps_the_sign_of_zero():
    """float(Decimal("-0")) is -0.0; as_format gave +0.0. Decimal("sNaN") is a NaN (it
    raised Python's "cannot convert signaling NaN to float")."""
    from decimal import Decimal

    for fmt in ("float16", "bfloat16", "float32", "float64"):
        got = fpx.as_format(Decimal("-0"), fmt)
        assert got == 0 and np.signbit(got), fmt
        assert not np.signbit(fpx.as_format(Decimal("0"), fmt))
        assert np.isnan(fpx.as_format(Decimal("sNaN"), fmt))


FP8_TYPES = (
    ml_dtypes.float8_e4m3fn,
    ml_dtypes.float8_e5m2,
    ml_dtypes.float8_e4m3fnuz,
    ml_dtypes.float8_e5m2fnuz,
)


@pytest.mark.parametrize("t", FP8_TYPES, ids=lambda t: t.__name__)
def test_fp8_arrays_bits_ulp_and_ulp_distance_against_their_ordered_values(t):
    """Every one of the 256 bit patterns of each FP8 type (as mma takes them): to_bits gives
    the pattern back, ulp_distance is the difference of ranks in the sorted list of the
    type's distinct values (±0 one value, ±inf one step beyond ±max, NaN the sentinel), ulp
    the gap from |x| to the next value up (from the largest: down)."""
    v = np.arange(256, dtype=np.uint8).view(t)
    floats = [float(x) for x in v.astype(np.float64)]  # ml_dtypes' own reading of the bits
    values = sorted({f for f in floats if not math.isnan(f)})  # (-0.0 == 0.0: one value)
    rank = {f: i for i, f in enumerate(values)}
    bits = fpx.to_bits(v)
    assert bits.dtype == np.uint8 and bits.tolist() == list(range(256))
    assert fpx.to_bits(v[3]) == 3
    want = [
        [
            (0 if math.isnan(fa) and math.isnan(fb) else fpx.ULP_NAN)
            if math.isnan(fa) or math.isnan(fb)
            else rank[fb] - rank[fa]
            for fb in floats
        ]
        for fa in floats
    ]
    assert fpx.ulp_distance(v[:, None], v[None, :], nan="sentinel").tolist() == want
    finite = [f for f in values if math.isfinite(f)]

    def gap(f: float) -> float:
        i = finite.index(abs(f))
        return finite[i + 1] - finite[i] if i + 1 < len(finite) else finite[i] - finite[i - 1]

    got = fpx.ulp(v)
    assert got.dtype == v.dtype
    for f, u in zip(floats, got.astype(np.float64).tolist()):
        expected = f if math.isnan(f) else math.inf if math.isinf(f) else gap(f)
        assert u == expected or (math.isnan(u) and math.isnan(expected)), (f, u)
    with pytest.raises(TypeError, match=f"^ulp_distance: a is {t.__name__} and b is float32"):
        fpx.ulp_distance(v, v.astype(np.float32))
    for f, x in zip(floats, v):  # next_up: the next value in the list (+inf stays)
        if math.isnan(f) or f == math.inf:
            continue
        if rank[f] + 1 == len(values):  # the largest, in a format without infinity
            with pytest.raises(ValueError, match="which has no greater value"):
                fpx.next_up(x)
            continue
        want = values[rank[f] + 1]
        got = float(fpx.next_up(x))
        neg_zero = any(g == 0 and math.copysign(1, g) < 0 for g in floats)  # FNUZ: none
        sign = math.copysign(1, f) if neg_zero else 1.0  # IEEE nextUp(-tiny) = -0
        assert got == want and (want != 0 or math.copysign(1, got) == sign)


@pytest.mark.parametrize("src", [ml_dtypes.float8_e4m3fn, ml_dtypes.float8_e5m2])
@pytest.mark.parametrize("fmt", ["float16", "bfloat16", "float8_e4m3", "float8_e5m2", "tf32"])
def test_as_format_takes_fp8_arrays_as_their_values(src, fmt):
    """Every FP8 bit pattern, as an ml_dtypes array, is rounded from its exact value (it said
    'cannot round values of dtype float8_e4m3fn'); the oracle rounds the Fraction."""
    x = np.arange(256, dtype=np.uint8).view(src)
    got = np.asarray(fpx.as_format(x, fmt), dtype=np.float64)
    for v, g in zip(x.astype(np.float64), got):
        if math.isnan(v):
            assert math.isnan(g)
        elif math.isinf(v):  # float8_e4m3 has no infinity: NaN, as ml_dtypes
            assert math.isnan(g) if fmt == "float8_e4m3" else g == v
        elif v == 0:
            assert g == 0 and math.copysign(1, g) == math.copysign(1, v)
        else:
            assert same(g, oracle.round_fraction(Fraction(v), fmt)), (v, g)


def test_ulp_with_another_format_says_how_to_convert():
    with pytest.raises(TypeError, match=r"fpx.as_format\(x, 'float32'\).*leave fmt out"):
        fpx.ulp(1.0, "float32")


@pytest.mark.parametrize(
    "fmt", ["tf32", "tf32-rne", "tf32-truncate", "bfloat16-truncate", "float8_e4m3", "float8_e5m2",
            "float8_e4m3fnuz", "float8_e5m2fnuz"],
)  # fmt: skip
def test_exact_rationals_that_round_to_zero_keep_the_sign_the_format_has(fmt):
    """A negative rational rounded to zero is -0.0, as its float is (truncation too: it kept
    +0); the FNUZ formats have no -0 (ml_dtypes' float8_*fnuz: +0). Decimal('-0') alike."""
    fnuz = fmt.endswith("fnuz")
    for q in (Fraction(-3, 2**138), Fraction(-1, 2**200), Fraction(-1, 2**21), Fraction(-1, 2**30)):
        got = float(fpx.as_format(q, fmt))
        as_float = float(fpx.as_format(float(q), fmt))
        assert same(got, as_float), (q, got, as_float)
        if got == 0:
            assert math.copysign(1, got) == (1 if fnuz else -1), (q, got)
    z = float(fpx.as_format(Decimal("-0"), fmt))
    assert z == 0 and math.copysign(1, z) == (1 if fnuz else -1)


def test_ulp_in_another_format_refuses_values_past_its_range():
    """ulp(x, "float8_e4m3") of 1000 (past e4m3's 448: NaN there) said 64, of inf (e4m3 has
    none) inf: refused. Within the range every value has the format's spacing there (oracle:
    2**(max(e, emin) - p + 1)), held by the format or not."""
    for x in (1000.0, np.inf, -449.0):
        with pytest.raises(ValueError, match=r"ulp\(x, 'float8_e4m3'\): .* past float8_e4m3's"):
            fpx.ulp(np.float32(x), "float8_e4m3")
    assert fpx.ulp(np.float32(448.0), "float8_e4m3") == 2.0 ** (8 - 3)
    assert fpx.ulp(np.float32(0.1), "float8_e4m3") == 2.0 ** (-4 - 3)
    assert fpx.ulp(np.float32(0.1), "tf32") == 2.0 ** (-4 - 10)
    got = fpx.ulp(np.float32([1.0, np.inf, np.nan]), "tf32")  # tf32 has infinities
    assert got[0] == 2.0**-10 and got[1] == np.inf and np.isnan(got[2])


def test_the_fp8_refusal_names_what_reads_fp8_arrays():
    x = np.array([1.0], ml_dtypes.float8_e4m3fn)
    read = r"as_format, mma, sum, dot, matmul, mean, variance, softmax, logsumexp, cdist, "
    read += r"linspace, adam_step, exp, log, sin, tanh, sqrt, pow, exact_sum, exact_dot, "
    with pytest.raises(TypeError, match=read + r"exact_matmul and compare; for the others"):
        fpx.diff(x, x)
    assert float(fpx.next_up(x)[0]) == 1.125  # stepped in E4M3, not in float32


def test_exact_infinities_and_huge_values_in_the_rounding_modes():
    """Decimal('Infinity') rounded to a format without infinity is NaN, as the float inf is
    (it gave inf); tf32-truncate saturates exact values past float64's range (it raised
    OverflowError), as it saturates 2**200."""
    for fmt in ("float8_e4m3", "float8_e4m3fnuz", "float8_e5m2fnuz"):
        for v in (Decimal("Infinity"), Decimal("-Infinity")):
            assert math.isnan(float(fpx.as_format(v, fmt)))
            assert math.isnan(float(fpx.as_format(float(v), fmt)))
        assert np.isnan(fpx.as_format(np.array([Decimal("-Infinity")], dtype=object), fmt)[0])
    assert float(fpx.as_format(Decimal("-Infinity"), "float8_e5m2")) == -math.inf
    top = float(fpx.as_format(2**200, "tf32-truncate"))
    assert top == (2 - 2.0**-10) * 2.0**127
    for v in (2**1030, Fraction(10**400), Decimal("1e400")):
        assert float(fpx.as_format(v, "tf32-truncate")) == top
    assert float(fpx.as_format(-(3**700), "tf32-truncate")) == -top


@pytest.mark.parametrize(
    "call",
    [
        lambda v: fpx.exact_sum(v),
        lambda v: fpx.sum(v, "sequential"),
        lambda v: fpx.exact_dot(v, [1.0] * len(v)),
        lambda v: fpx.dot(v, [1.0] * len(v), "sequential"),
    ],
)
def test_python_ints_float64_holds_are_taken_whatever_their_size(call):
    """Pass 14: [2**53], [2**62], [2**63] and [2**64] are float64 values exactly, yet an
    all-int list from 2**53 up was refused as "too large to be exact in float64", and one
    past int64 (2**64: NumPy keeps it as an object) as "object arrays are not supported".
    They are taken; an int float64 does not hold is refused naming it, and what is not
    numbers names what it got. The oracle: Fraction of the Python ints."""
    for ints in ([2**53], [2**62, 2**62], [-(2**63)], [2**64, 3 * 2**70]):
        assert float(call(ints)) == float(sum(Fraction(v) for v in ints)), ints
    for bad, shown in ((2**53 + 1, "9007199254740993"), (2**64 + 1, "18446744073709551617")):
        with pytest.raises(TypeError, match=f"the integer {shown} in the list is not exactly"):
            call([bad])
    with pytest.raises(TypeError, match="the integer of 1329 bits in the list is not exactly"):
        call([10**400])


def test_what_is_not_numbers_is_named():
    """None, a generator and Fractions read as NumPy object arrays: the message said "object
    arrays are not supported" of inputs that were none (pass 14)."""
    for x, shown in (
        (None, "got None"),
        ((v for v in [0.1]), "got <generator"),
        ([Fraction(1, 3)], r"got \[Fraction\(1, 3\)\]"),
    ):
        with pytest.raises(
            TypeError, match=f"exact_sum: expected floats, ints or an array of them, {shown}"
        ):
            fpx.exact_sum(x)
    assert float(fpx.as_format([Fraction(1, 3)], "float64")[0]) == 1 / 3  # (its rationals)


@pytest.mark.parametrize(
    "call, name",
    [
        (lambda x: fpx.as_format(x, "float16"), "as_format"),
        (fpx.to_bits, "to_bits"),
        (fpx.fields, "fields"),
        (fpx.bit_string, "bit_string"),
        (fpx.hex_string, "hex_string"),
        (fpx.shortest_repr, "shortest_repr"),
        (fpx.next_up, "next_up"),
        (fpx.next_down, "next_down"),
        (fpx.ulp, "ulp"),
    ],
)
def test_the_value_readers_name_themselves_and_x_for_what_is_no_float(call, name):
    """A dict, a boolean, text: the message named neither the function nor its argument
    ("dtype <U1 is not supported", "boolean values are not numbers to round"; pass 28)."""
    for bad in ({"a": 1}, True, "0.1", ["x"]):
        with pytest.raises(TypeError, match=rf"^{name}: x: "):
            call(bad)


def test_from_bits_says_what_is_wrong_with_a_list_in_its_words():
    """Pass 28: a ragged list gave NumPy's "setting an array element with a sequence ...
    inhomogeneous shape" after "from_bits: bits:"; booleans beside ints read as 1."""
    with pytest.raises(ValueError, match=r"^from_bits: bits: a nested list whose rows have diff"):
        fpx.from_bits([[1, 2], [3]], "float16")
    with pytest.raises(TypeError, match=r"^from_bits: bits: a list mixing booleans with numbers"):
        fpx.from_bits([True, 1], "float16")
    assert fpx.from_bits([0x3C00], "float16").tolist() == [1.0]


def test_a_masked_matrix_is_named():
    """Pass 34: matmul's masked refusal named neither A nor B (sum and dot's did)."""
    A = np.ma.array(np.ones((2, 2), np.float32), mask=[[0, 1], [0, 0]])
    with pytest.raises(TypeError, match=r"^matmul: A: masked arrays are not supported"):
        fpx.matmul(A, np.ones((2, 2), np.float32))
    with pytest.raises(TypeError, match=r"^dot: b: masked arrays are not supported"):
        fpx.dot(np.ones(2, np.float32), A[0])


def test_pandas_inputs_keep_their_format_and_their_labels():
    """Pass 35: compare(inputs=<float32 Series>, format='float64') summed in float64 without
    a word (a NumPy array is refused); a DataFrame of float32 and float64 columns became
    float64 (a 1-ulp float32 difference read 536,870,912 ulps); Series or DataFrames
    labelled in another order were paired by position ("0 of 2 equal")."""
    pd = pytest.importorskip("pandas")
    s = pd.Series(np.float32([0.5, 0.25, 0.125]))
    with pytest.raises(ValueError, match=r"format='float64' but the inputs are float32"):
        fpx.compare("sum", inputs=s, format="float64")
    a = pd.DataFrame({"x": np.float32([1, 2]), "y": [1.0, 1.0]})
    with pytest.raises(TypeError, match=r"fpx.diff: a: a pandas DataFrame whose columns are fl"):
        fpx.diff(a, a)
    p, q = pd.Series([1.0, 2.0], index=[0, 1]), pd.Series([2.0, 1.0], index=[1, 0])
    with pytest.raises(TypeError, match=r"fpx.diff: b's index differs from a's: fpexplore pair"):
        fpx.diff(p, q)
    with pytest.raises(TypeError, match=r"pow: y's index differs from x's"):
        fpx.pow(p, q)
    left, right = pd.DataFrame({"p": [1.0], "q": [2.0]}), pd.DataFrame({"q": [2.0], "p": [1.0]})
    with pytest.raises(TypeError, match=r"b's columns differ from a's"):
        fpx.diff(left, right)
    assert fpx.diff(p, q.sort_index()).summary["bitwise_equal"] == 2  # (aligned: equal)
