"""The OCP Microscaling formats (FP6 e2m3 / e3m2, FP4 e2m1, the E8M0 scale) against an
exhaustive oracle written here from each format's definition: every bit pattern decoded by
``Fraction`` (sign, exponent, mantissa, bias), the values sorted, and rounding to the nearest
of them decided by exact comparison (ties to the even encoding). What happens past the ends is
fpexplore's documented decision (docs/api.md, fpexplore/formats.py): FP6 and FP4 saturate to
±max (±inf too) and keep NaN in their float32 holding; E8M0 gives NaN for zero, negative
values, NaN, ±inf and from 1.5 * 2**127 on, 2**-127 below it, ties upward."""

from __future__ import annotations

import bisect
import math
from decimal import Decimal
from fractions import Fraction

import ml_dtypes
import numpy as np
import pytest

import fpexplore as fpx

# name: (ml_dtypes type, exponent bits, mantissa bits, bias, signed) -- OCP MX v1.0 tables
DEFINITIONS = {
    "float6_e2m3": (ml_dtypes.float6_e2m3fn, 2, 3, 1, True),
    "float6_e3m2": (ml_dtypes.float6_e3m2fn, 3, 2, 3, True),
    "float4_e2m1": (ml_dtypes.float4_e2m1fn, 2, 1, 1, True),
    "float8_e8m0": (ml_dtypes.float8_e8m0fnu, 8, 0, 127, False),
}
NAMES = tuple(DEFINITIONS)
E8M0 = "float8_e8m0"


def width(name: str) -> int:
    _, e, m, _, signed = DEFINITIONS[name]
    return int(signed) + e + m


def decode(name: str, b: int) -> Fraction | None:
    """The value of bit pattern ``b`` (None: NaN), from the definition. FP6 and FP4: every
    exponent code is a number (no infinity, no NaN), code 0 subnormal; E8M0: 2**(b - 127),
    0xFF NaN."""
    _, e_bits, m_bits, bias, signed = DEFINITIONS[name]
    if not signed:
        return None if b == 0xFF else Fraction(2) ** (b - bias)
    s = b >> (e_bits + m_bits)
    e = (b >> m_bits) & ((1 << e_bits) - 1)
    m = b & ((1 << m_bits) - 1)
    if e == 0:
        v = Fraction(m, 1 << m_bits) * Fraction(2) ** (1 - bias)
    else:
        v = (1 + Fraction(m, 1 << m_bits)) * Fraction(2) ** (e - bias)
    return -v if s else v


def table(name: str) -> tuple[list[Fraction], dict[Fraction, int]]:
    """The distinct values, sorted, and the encoding of each (+0 for zero)."""
    enc: dict[Fraction, int] = {}
    for b in range(1 << width(name)):
        v = decode(name, b)
        if v is not None and v not in enc:  # +0 (pattern 0) comes before -0
            enc[v] = b
    return sorted(enc), enc


TABLES = {name: table(name) for name in NAMES}


def expected(name: str, x) -> float:
    """The oracle: ``x`` (a Fraction or int, or a float: NaN, ±inf and signed zeros kept)
    rounded to ``name`` as a float (NaN for no value), -0.0 where a negative value rounds
    to zero."""
    values, enc = TABLES[name]
    top = values[-1]
    if isinstance(x, float):
        if math.isnan(x) or (name == E8M0 and not math.isfinite(x)):
            return math.nan
        if math.isinf(x):
            return float(top) if x > 0 else -float(top)  # saturation
        if x == 0:
            return math.nan if name == E8M0 else x  # a zero keeps its sign
        x = Fraction(x)
    if name == E8M0:
        if x <= 0 or x >= Fraction(3, 2) * top:  # no zero, no sign; the tie above 2**127 up
            return math.nan
    elif abs(x) > top:
        return float(top) if x > 0 else -float(top)
    i = bisect.bisect_left(values, x)
    if i < len(values) and values[i] == x:
        r = values[i]
    elif i == 0:
        r = values[0]
    elif i == len(values):
        r = values[-1]
    else:
        lo, hi = values[i - 1], values[i]
        if x - lo != hi - x:
            r = lo if x - lo < hi - x else hi
        elif name == E8M0:
            r = hi  # the tie 1.5 * 2**k: 2**(k+1), significand 2 (even) against 1
        else:
            r = lo if enc[lo] % 2 == 0 else hi  # the even encoding (mantissa LSB 0)
    if r == 0 and x < 0:
        return -0.0
    return float(r)


def same(got: float, want: float) -> bool:
    if math.isnan(want):
        return math.isnan(got)
    return got == want and math.copysign(1, got) == math.copysign(1, want)


def inputs(name: str, rng: np.random.Generator) -> list[Fraction | float]:
    """Every value and its negative, every midpoint (a tie) and its nearest neighbours at
    1 part in 2**40, the boundaries past the ends, NaN and ±inf, random Fractions over and past
    the range."""
    values, _ = TABLES[name]
    out: list[Fraction | float] = [math.nan, math.inf, -math.inf]
    top, tiny = values[-1], min(v for v in values if v > 0)
    for v in values:
        out += [v, -v]
    for lo, hi in zip(values, values[1:]):
        mid = (lo + hi) / 2
        d = abs(mid) / 2**40 if mid else Fraction(1, 2**200)
        out += [mid, mid + d, mid - d]
    span = top - values[-2]  # the gap below the largest
    for v in (top + span / 2, top + span, 2 * top, Fraction(3, 2) * top, 10**40,
              tiny / 2, tiny / 4, tiny * Fraction(3, 4), Fraction(1, 2**300)):  # fmt: skip
        out += [v, -v]
    lo_e, hi_e = math.floor(math.log2(tiny)) - 3, math.ceil(math.log2(top)) + 3
    for _ in range(2000):
        m = Fraction(int(rng.integers(1, 2**40)), 2**40)
        v = (1 + m) * Fraction(2) ** int(rng.integers(lo_e, hi_e))
        out.append(-v if rng.random() < 0.5 else v)
    return out


def check(name: str, xs: list, got) -> None:
    got = np.asarray(got, dtype=np.float64).tolist()
    bad = [(x, g, expected(name, x)) for x, g in zip(xs, got) if not same(g, expected(name, x))]
    assert not bad, f"{name}: {len(bad)} wrong, e.g. (x, got, want) {bad[:5]}"


# ----------------------------------------------------------------------------- the oracle itself


def test_the_definitions_are_ml_dtypes_types_and_the_known_values():
    """The decoded values are the spec's (OCP MX v1.0 section 5.3): FP4 0, 0.5, 1, 1.5, 2,
    3, 4, 6; FP6 e2m3 up to 7.5 by eighths; e3m2 up to 28; E8M0 2**-127 .. 2**127, and each
    bit pattern means the same to ml_dtypes."""
    assert [v for v in TABLES["float4_e2m1"][0] if v >= 0] == [
        Fraction(x) for x in ("0", "0.5", "1", "1.5", "2", "3", "4", "6")
    ]
    assert max(TABLES["float6_e2m3"][0]) == Fraction(15, 2)
    assert min(v for v in TABLES["float6_e2m3"][0] if v > 0) == Fraction(1, 8)
    assert max(TABLES["float6_e3m2"][0]) == 28
    assert min(v for v in TABLES["float6_e3m2"][0] if v > 0) == Fraction(1, 16)
    e8m0 = TABLES[E8M0][0]
    assert len(e8m0) == 255 and e8m0[0] == Fraction(1, 2**127) and e8m0[-1] == 2**127
    for name, (t, *_) in DEFINITIONS.items():
        v = np.arange(1 << width(name), dtype=np.uint8).view(t).astype(np.float64).tolist()
        for b, f in enumerate(v):
            d = decode(name, b)
            assert (math.isnan(f) and d is None) or Fraction(f) == d, (name, b, f, d)


def test_format_info_and_the_formats_table():
    """FormatInfo (precision with the implicit bit, emin, emax, max) and fpx.formats() say
    the definitions' facts, and how each format meets its ends."""
    want = {  # precision, emin, emax, max, smallest positive, overflow
        "float6_e2m3": (4, 0, 2, 7.5, 0.125, "max"),
        "float6_e3m2": (3, -2, 4, 28.0, 0.0625, "max"),
        "float4_e2m1": (2, 0, 2, 6.0, 0.5, "max"),
        E8M0: (1, -127, 127, 2.0**127, 2.0**-127, "nan"),
    }
    table_ = fpx.formats().set_index("format")
    for name, (p, emin, emax, mx, tiny, overflow) in want.items():
        info = fpx.format_info(name)
        assert (info.precision, info.emin, info.emax, info.max) == (p, emin, emax, mx)
        assert info.smallest_subnormal == tiny == float(min(v for v in TABLES[name][0] if v > 0))
        assert not info.has_infinity and info.overflow == overflow
        assert info.has_negative_zero == (name != E8M0)
        row = table_.loc[name]
        assert row["dtype"] == np.dtype(DEFINITIONS[name][0]).name
        assert (row["max"], row["infinity"], row["overflow"]) == (mx, False, overflow)
    assert set(NAMES) <= set(fpx.ROUNDINGS) and not set(NAMES) & set(fpx.FORMATS)


# ----------------------------------------------------------------------------- rounding


@pytest.mark.parametrize("name", NAMES)
def test_rounding_equals_the_exhaustive_oracle(name):
    """Fractions (object arrays and scalars), float64 and float32 arrays, Decimals and ints:
    each rounded once, as the oracle says, on every value, tie, near-tie, boundary, overflow,
    NaN, inf and random input."""
    xs = inputs(name, np.random.default_rng(38))
    exact = [x for x in xs if isinstance(x, Fraction) or isinstance(x, int)]
    exact = [Fraction(x) for x in exact]
    check(name, exact, fpx.as_format(np.array(exact, dtype=object), name))
    for x in exact[:: max(1, len(exact) // 200)]:  # scalars too
        assert same(float(fpx.as_format(x, name)), expected(name, x)), x
    for dtype in (np.float64, np.float32):
        with np.errstate(over="ignore", under="ignore"):
            arr = np.array([float(x) for x in xs], dtype=dtype)
        got = fpx.as_format(arr, name)
        assert got.dtype == np.float32
        check(name, arr.tolist(), got)
    for d in ("0.1", "-0.3", "5", "1e40", "-1e-40", "Infinity", "-Infinity", "NaN"):
        x = Decimal(d)
        want = expected(name, Fraction(x) if x.is_finite() else float(x))
        assert same(float(fpx.as_format(x, name)), want), (name, d)
    for n in (0, 1, -3, 5, 7, 29, 2**130, -(3**90)):
        assert same(float(fpx.as_format(n, name)), expected(name, Fraction(n))), (name, n)
    big = np.array([2**70 + 1, -(2**65)], dtype=object)  # ints float64 would round
    check(name, [Fraction(int(v)) for v in big], fpx.as_format(big, name))


@pytest.mark.parametrize("name", NAMES)
def test_signed_zeros_and_the_zero_e8m0_lacks(name):
    got = fpx.as_format(np.array([0.0, -0.0, -1e-30]), name)
    if name == E8M0:  # no zero, no sign
        assert np.isnan(got).all()
        assert np.isnan(float(fpx.as_format(Fraction(0), name)))
        assert np.isnan(float(fpx.as_format(Decimal("-0"), name)))
        assert float(fpx.as_format(1e-300, name)) == 2.0**-127
    else:
        assert np.signbit(got).tolist() == [False, True, True] and (got == 0).all()
        assert math.copysign(1, float(fpx.as_format(Fraction(-1, 10**9), name))) == -1


@pytest.mark.parametrize("src", NAMES + ("float8_e4m3", "float8_e5m2"))
@pytest.mark.parametrize("name", NAMES)
def test_ml_dtypes_arrays_are_rounded_from_their_values(src, name):
    """Every bit pattern of an ml_dtypes array (FP8, FP6, FP4, E8M0) rounded to each new
    format as its exact value is."""
    fp8 = {"float8_e4m3": ml_dtypes.float8_e4m3fn, "float8_e5m2": ml_dtypes.float8_e5m2}
    t = DEFINITIONS[src][0] if src in DEFINITIONS else fp8[src]
    n = 1 << (width(src) if src in DEFINITIONS else 8)
    x = np.arange(n, dtype=np.uint8).view(t)
    check(name, x.astype(np.float64).tolist(), fpx.as_format(x, name))


# ----------------------------------------------------------------------------- bits, ulps


@pytest.mark.parametrize("name", NAMES)
def test_bits_round_trip_for_every_pattern(name):
    """to_bits gives every pattern back; the pattern's value rounded to the format is itself,
    and cast to the ml_dtypes type has the same pattern again (NaN 0xFF for E8M0)."""
    t = DEFINITIONS[name][0]
    n = 1 << width(name)
    x = np.arange(n, dtype=np.uint8).view(t)
    bits = fpx.to_bits(x)
    assert bits.dtype == np.uint8 and bits.tolist() == list(range(n))
    assert fpx.to_bits(x[n - 1]) == n - 1
    back = fpx.as_format(x.astype(np.float32), name)
    assert fpx.to_bits(back.astype(t)).tolist() == list(range(n))
    again = fpx.from_bits(np.arange(n), name)  # the inverse of to_bits
    assert again.dtype == t and fpx.to_bits(again).tolist() == list(range(n))
    with pytest.raises(ValueError, match=rf"from_bits: bits: {n} is not a {name} bit pattern"):
        fpx.from_bits([0, n], name)


@pytest.mark.parametrize("name", NAMES)
def test_ulp_and_neighbours_against_the_enumerated_values(name):
    """ulp of every pattern (an ml_dtypes array, and its value in float32 with fmt=name) is
    the gap to the next value up in the enumerated list (at the largest value, the gap of its
    binade: 2**(e - p + 1)); ulp_distance is the difference of ranks in the list (±0 one
    value, NaN the sentinel), so neighbours are 1 apart."""
    t, _, m_bits, _, _ = DEFINITIONS[name]
    values, _ = TABLES[name]
    rank = {v: i for i, v in enumerate(values)}
    n = 1 << width(name)
    x = np.arange(n, dtype=np.uint8).view(t)
    decoded = [decode(name, b) for b in range(n)]

    def gap(v: Fraction) -> Fraction:
        a = abs(v)
        i = values.index(a)
        if i + 1 < len(values):
            return values[i + 1] - a
        return Fraction(2) ** (math.floor(math.log2(a)) - m_bits)  # the largest: its binade

    want = [math.nan if d is None else float(gap(d)) for d in decoded]
    for got in (fpx.ulp(x), fpx.ulp(x.astype(np.float32), name)):
        got = np.asarray(got, dtype=np.float64).tolist()
        assert all(same(g, w) for g, w in zip(got, want)), (name, got, want)
    assert fpx.ulp(x).dtype == x.dtype
    dist = fpx.ulp_distance(x[:, None], x[None, :], nan="sentinel")
    for a, da in enumerate(decoded):
        for b, db in enumerate(decoded):
            if da is None or db is None:
                w = 0 if da is None and db is None else fpx.ULP_NAN
            else:
                w = rank[db] - rank[da]
            assert dist[a, b] == w, (name, a, b)
    top = float(values[-1])
    with pytest.raises(ValueError, match=rf"ulp\(x, '{name}'\): .* past {name}'s largest"):
        fpx.ulp(np.float32(top * 1.5), name)
    if name == E8M0:  # no zero, no sign: not values of the format
        for v in (0.0, -1.0):
            with pytest.raises(ValueError, match=r"zero or a negative value, which float8_e8m0"):
                fpx.ulp(np.float32([1.0, v]), name)


@pytest.mark.parametrize("name", NAMES)
def test_next_up_and_next_down_step_through_the_enumerated_values(name):
    """Every pattern: next_up is the least enumerated value above it, next_down the greatest
    below (toward zero from the smallest values: -0 from below, +0 from above; ±0 step to the
    smallest value of each sign); where there is none (the largest value; E8M0's least) the
    format has no infinity to give, so it is refused naming x."""
    t = DEFINITIONS[name][0]
    values, _ = TABLES[name]
    for b in range(1 << width(name)):
        d = decode(name, b)
        x = np.array(b, np.uint8).view(t)
        for f, nxt in ((fpx.next_up, [v for v in values if v > (d or 0)]),
                       (fpx.next_down, [v for v in values if v < (d or 0)][::-1])):  # fmt: skip
            if d is None:  # NaN stays
                assert np.isnan(np.float32(f(x)))
                continue
            if not nxt:
                with pytest.raises(ValueError, match=r"x holds .* no (greater|smaller) value in"):
                    f(x)
                continue
            got = f(x)
            assert got.dtype == t
            want = float(nxt[0])
            if want == 0:  # the sign of the zero: IEEE nextUp(-tiny) = -0, nextDown(tiny) = +0
                want = math.copysign(0.0, float(d))
            assert same(float(got), want), (name, b, float(got), want)
    assert fpx.format_info(name).bias == DEFINITIONS[name][3]


def test_fp8_next_up_down_and_bias():
    """FP8: E5M2 steps as IEEE (the pattern plus one: the largest value to inf); E4M3 has no
    infinity (448 has no next), FNUZ no -0; the biases of the OCP and FNUZ tables."""
    e5m2 = np.arange(0, 0x7B, dtype=np.uint8).view(ml_dtypes.float8_e5m2)  # +0 .. below max
    assert (fpx.to_bits(fpx.next_up(e5m2)) == np.arange(1, 0x7C)).all()
    assert np.isinf(np.float32(fpx.next_up(np.array(57344.0, ml_dtypes.float8_e5m2))))
    with pytest.raises(ValueError, match=r"x holds 448.0, which has no greater value"):
        fpx.next_up(np.array([1.0, 448.0], ml_dtypes.float8_e4m3fn))
    tiny = np.array(-(2.0**-10), ml_dtypes.float8_e4m3fnuz)
    assert fpx.to_bits(fpx.next_up(tiny)) == 0  # +0: FNUZ has no -0
    assert fpx.to_bits(fpx.next_up(np.array(-(2.0**-9), ml_dtypes.float8_e4m3fn))) == 0x80
    biases = {"float8_e4m3": 7, "float8_e5m2": 15, "float8_e4m3fnuz": 8, "float8_e5m2fnuz": 16,
              "float16": 15, "bfloat16": 127, "float32": 127, "float64": 1023}  # fmt: skip
    assert {f: fpx.format_info(f).bias for f in biases} == biases


@pytest.mark.parametrize("name", NAMES)
def test_what_is_not_read_is_refused_with_the_way_out(name):
    x = np.zeros(2, DEFINITIONS[name][0])
    with pytest.raises(TypeError, match=r"ulp_distance: a is .* give both in one ml_dtypes"):
        fpx.ulp_distance(x, x.astype(np.float32))
