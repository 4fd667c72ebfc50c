"""fpx.as_format(x, fmt, rounding=...) against the modes' definitions (IEEE 754-2019 4.3 and
7.4, written here with ``fractions.Fraction``): each format's values from its parameters
(float16, bfloat16 and the ml_dtypes types also enumerated from every bit pattern), the two
neighbours of x, the mode's pick between them, and fpexplore's documented ends (past the
largest value: ±max toward the range or where the format saturates, else ±inf or NaN;
E8M0: 2**-127 below its range). Stochastic rounding: only the two neighbours appear, and the
mean of many draws is the exact value within statistical error."""

from __future__ import annotations

import bisect
import math
from fractions import Fraction

import ml_dtypes
import numpy as np
import pytest

import fpexplore as fpx

from oracle import ML_TYPES

# name: (precision with the implicit bit, emin, emax, largest value, ending) -- the formats'
# definitions; ending past the largest: "inf", "nan" or "max" (saturation)
FORMATS = {
    "float16": (11, -14, 15, None, "inf"),
    "bfloat16": (8, -126, 127, None, "inf"),
    "float32": (24, -126, 127, None, "inf"),
    "float64": (53, -1022, 1023, None, "inf"),
    "tf32-rne": (11, -126, 127, None, "inf"),
    "float8_e4m3": (4, -6, 8, Fraction(448), "nan"),
    "float8_e5m2": (3, -14, 15, None, "inf"),
    "float8_e4m3fnuz": (4, -7, 7, Fraction(240), "nan"),
    "float8_e5m2fnuz": (3, -15, 15, Fraction(57344), "nan"),
    "float6_e2m3": (4, 0, 2, Fraction(15, 2), "max"),
    "float6_e3m2": (3, -2, 4, Fraction(28), "max"),
    "float4_e2m1": (2, 0, 2, Fraction(6), "max"),
    "float8_e8m0": (1, -127, 127, Fraction(2) ** 127, "nan"),
}
E8M0 = "float8_e8m0"
FNUZ = ("float8_e4m3fnuz", "float8_e5m2fnuz")
MODES = ("nearest_even", "nearest_away", "toward_zero", "up", "down")
# every bit pattern of these types, read by NumPy / ml_dtypes: a second way to the values
TYPES = {"float16": np.float16, "bfloat16": ml_dtypes.bfloat16, **ML_TYPES}


def largest(name: str) -> Fraction:
    p, _, emax, top, _ = FORMATS[name]
    return top if top is not None else (2 - Fraction(2) ** (1 - p)) * Fraction(2) ** emax


def quantum(name: str, x: Fraction) -> Fraction:
    """The spacing of the format's values at |x| (exponent unbounded above)."""
    p, emin, _, _, _ = FORMATS[name]
    a = abs(Fraction(x))
    e = a.numerator.bit_length() - a.denominator.bit_length() if a else emin
    e -= Fraction(2) ** e > a  # now 2**e <= |x| < 2**(e + 1)
    return Fraction(2) ** (max(e, emin) - p + 1)


def enumerated(name: str) -> list[Fraction]:
    n = 2 ** (8 * np.dtype(TYPES[name]).itemsize)
    v = np.arange(n, dtype=np.uint16 if n > 256 else np.uint8).view(TYPES[name])
    with np.errstate(invalid="ignore"):  # the NaN patterns
        floats = v.astype(np.float64).tolist()
    return sorted({Fraction(f) for f in floats if math.isfinite(f)})


VALUES = {name: enumerated(name) for name in TYPES}


def neighbours(name: str, x: Fraction) -> tuple[Fraction, Fraction]:
    """lo <= x <= hi on the format's grid (the exponent unbounded above: beyond the largest
    value the next grid point stands for the overflow). From the enumerated values where
    there are any, checked against the grid definition."""
    q = quantum(name, x)
    lo, hi = math.floor(x / q) * q, math.ceil(x / q) * q
    vals = VALUES.get(name)
    if vals and abs(x) <= vals[-1] and not (name == E8M0 and x < vals[0]):
        i = bisect.bisect_left(vals, x)
        e_lo, e_hi = (vals[i], vals[i]) if vals[i] == x else (vals[i - 1], vals[i])
        assert (e_lo, e_hi) == (lo, hi), (name, x, e_lo, e_hi, lo, hi)
    return lo, hi


def overflow(name: str, negative: bool) -> float:
    ending = FORMATS[name][4]
    v = math.inf if ending == "inf" else float(largest(name)) if ending == "max" else math.nan
    return -v if negative else v


def expected(name: str, x: Fraction, mode: str) -> float:
    """``x`` rounded to ``name`` in ``mode`` by the definitions."""
    top = largest(name)
    if name == E8M0:
        if x <= 0:
            return math.nan
        if x < Fraction(2) ** -127:
            return 2.0**-127  # no zero: the smallest value, in every mode
    lo, hi = neighbours(name, x)
    q = hi - lo
    if lo == hi:  # on the grid (past the largest value too)
        r = x
    elif mode == "up":
        r = hi
    elif mode == "down":
        r = lo
    elif mode == "toward_zero":
        r = lo if x > 0 else hi
    elif x - lo != hi - x:
        r = lo if x - lo < hi - x else hi
    elif mode == "nearest_away":
        r = hi if x > 0 else lo
    else:
        r = lo if (lo / q) % 2 == 0 else hi  # the even multiple of the quantum
    if abs(r) > top:
        toward = mode == "toward_zero" or (mode == "down") == (x > 0)
        return (float(top) if x > 0 else -float(top)) if toward and mode not in MODES[:2] else (
            overflow(name, x < 0))  # fmt: skip
    if r == 0:
        return 0.0 if x > 0 or name in FNUZ else -0.0
    return float(r)


def same(got: float, want: float) -> bool:
    if math.isnan(want):
        return math.isnan(got)
    return got == want and math.copysign(1, got) == math.copysign(1, want)


def inputs(name: str, rng: np.random.Generator) -> list[Fraction]:
    """Values, ties and near-ties at the ends and across the range, past the largest value,
    below the least, and random ones."""
    p, emin, emax, _, _ = FORMATS[name]
    top, tiny = largest(name), Fraction(2) ** (emin - p + 1)
    out = []
    base = [top, tiny, Fraction(2) ** emin, Fraction(1), Fraction(3, 2), Fraction(1, 3)]
    for v in base:
        q = quantum(name, v)
        for d in (0, q / 2, q / 4, 3 * q / 4, q / 2**30, -q / 2, -q / 4, q + q / 2):
            out += [v + d, -(v + d)]
    out += [top * 2, top * 3, tiny / 2, tiny / 3, Fraction(1, 2**1100), Fraction(10) ** 400]
    for _ in range(300):
        e = int(rng.integers(emin - p - 2, emax + 3))
        v = (1 + Fraction(int(rng.integers(0, 2**60)), 2**60)) * Fraction(2) ** e
        out.append(-v if rng.random() < 0.5 else v)
    return [v for v in out if v != 0]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("name", FORMATS)
def test_every_mode_matches_its_definition(name, mode):
    """Exact rationals (object arrays: the exact path) and the same values as float64 where
    float64 holds them (the vector path), rounded in each mode, equal the definition."""
    xs = inputs(name, np.random.default_rng(len(name)))
    got = fpx.as_format(np.array(xs, dtype=object), name, rounding=mode)
    bad = [(x, g, expected(name, x, mode)) for x, g in zip(xs, got.tolist())
           if not same(g, expected(name, x, mode))]  # fmt: skip
    assert not bad, f"{len(bad)} wrong, e.g. (x, got, want) {bad[:3]}"
    exact = [x for x in xs if abs(x) < 2**1000 and Fraction(float(x)) == x]
    got64 = fpx.as_format(np.array([float(x) for x in exact]), name, rounding=mode)
    bad = [(x, g) for x, g in zip(exact, got64.tolist()) if not same(g, expected(name, x, mode))]
    assert not bad, f"float64 path: {len(bad)} wrong, e.g. {bad[:3]}"
    x = exact[len(exact) // 2]  # a scalar gives a scalar
    assert same(float(fpx.as_format(float(x), name, rounding=mode)), expected(name, x, mode))


@pytest.mark.parametrize("name", FORMATS)
def test_the_ends_in_every_mode(name):
    """NaN stays NaN (E8M0: NaN for zero and negatives too); ±inf is the format's overflow
    whatever the mode; signed zeros keep their sign where the format has -0."""
    x = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0])
    for mode in MODES:
        got = fpx.as_format(x, name, rounding=mode).astype(np.float64).tolist()
        assert math.isnan(got[0])
        if name == E8M0:
            assert all(math.isnan(g) for g in got)
            continue
        assert same(got[1], overflow(name, False)) and same(got[2], overflow(name, True))
        assert same(got[3], 0.0) and same(got[4], 0.0 if name in FNUZ else -0.0)


def test_tf32_and_tf32_truncate_keep_their_own_rounding():
    """'tf32' is nearest with ties away (cuBLAS), 'tf32-truncate' toward zero: rounding= may
    repeat it and nothing else (the tf32 grid in another mode is 'tf32-rne' with it)."""
    xs = inputs("tf32-rne", np.random.default_rng(3))
    arr = np.array(xs, dtype=object)
    cases = (("tf32", "nearest_away", "tf32-rne"), ("tf32-truncate", "toward_zero", "tf32-rne"))
    for fmt, mode, grid in (*cases, ("bfloat16-truncate", "toward_zero", "bfloat16")):
        want = [expected(grid, x, mode) for x in xs]
        for got in (fpx.as_format(arr, fmt), fpx.as_format(arr, fmt, rounding=mode)):
            assert all(same(g, w) for g, w in zip(got.tolist(), want)), fmt
        with pytest.raises(ValueError, match=rf"rounding='up' with fmt='{fmt}'.*'{grid}'"):
            fpx.as_format(1.0, fmt, rounding="up")


def test_other_rounding_names_and_seeds_are_refused_by_name():
    with pytest.raises(ValueError, match=r"unknown rounding 'nearest'; valid: nearest_even"):
        fpx.as_format(1.0, "float16", rounding="nearest")
    with pytest.raises(ValueError, match=r"unknown rounding 'RNE'"):
        fpx.as_format(1.0, "float4_e2m1", rounding="RNE")
    with pytest.raises(TypeError, match=r"rounding must be a string"):
        fpx.as_format(1.0, "float16", rounding=1)
    with pytest.raises(ValueError, match=r"rounding='stochastic' needs seed="):
        fpx.as_format(1.0, "float16", rounding="stochastic")
    with pytest.raises(ValueError, match=r"seed= is for rounding='stochastic' only"):
        fpx.as_format(1.0, "float16", rounding="up", seed=1)
    with pytest.raises(ValueError, match=r"seed"):
        fpx.as_format(1.0, "float16", rounding="stochastic", seed=-1)
    assert "stochastic" in fpx.ROUNDING_MODES and len(fpx.ROUNDING_MODES) == 6


# ----------------------------------------------------------------------------- stochastic

CASES = [  # format, x: between two neighbours, at several fractions of the gap
    ("float4_e2m1", Fraction(1, 3)),
    ("float4_e2m1", Fraction(-5, 2)),  # a tie: P = 1/2
    ("float4_e2m1", Fraction(41, 10)),
    ("float6_e3m2", Fraction(1, 10)),
    ("float8_e4m3", Fraction(1, 10)),
    ("float8_e5m2", Fraction(-1000, 7)),
    ("bfloat16", Fraction(1, 3)),
    ("float16", Fraction(10**6 + 1, 10**6)),  # very near the lower neighbour
    ("float32", Fraction(1, 10)),
    (E8M0, Fraction(3)),  # between 2 and 4: P(4) = 1/2
    (E8M0, Fraction(5)),  # P(8) = 1/4
    ("float6_e2m3", Fraction(29, 4)),  # 7.25 between 7 and 7.5
]


@pytest.mark.parametrize(("name", "x"), CASES, ids=lambda v: str(v))
def test_stochastic_rounding_is_unbiased_and_takes_only_the_two_neighbours(name, x):
    """Many draws: only lo and hi appear, hi with probability (x - lo) / (hi - lo) and the mean
    is x, both within 5 standard errors; the exact path (a Fraction) and the float64 path
    agree in law; the same seed gives the same draws, another seed others."""
    lo, hi = neighbours(name, x)
    # the exact path (one Fraction at a time: fewer draws), the float64 path
    for arr in (np.array([x] * 3000, dtype=object), np.full(30000, float(x))):
        xf = Fraction(float(arr[0])) if arr.dtype == np.float64 else x  # (still in (lo, hi))
        p = (xf - lo) / (hi - lo)
        sd = math.sqrt(float(p * (1 - p)) / arr.size)
        got = fpx.as_format(arr, name, rounding="stochastic", seed=7).astype(np.float64)
        assert set(got.tolist()) <= {float(lo), float(hi)}
        share = float(np.mean(got == float(hi)))
        assert abs(share - float(p)) <= 5 * sd + 2.0**-50, (share, p)
        mean = Fraction(float(np.mean(got)))
        assert abs(mean - xf) <= 5 * sd * (hi - lo) + abs(xf) * Fraction(1, 2**40)
        again = fpx.as_format(arr, name, rounding="stochastic", seed=7)
        other = fpx.as_format(arr, name, rounding="stochastic", seed=8)
        assert np.array_equal(again, got) and not np.array_equal(again, other)


def test_stochastic_rounding_of_values_of_the_format_is_exact():
    x = np.array([0.5, -6.0, 3.0, 0.0, -0.0], dtype=np.float64)
    got = fpx.as_format(x, "float4_e2m1", rounding="stochastic", seed=1)
    assert got.tolist() == x.tolist() and np.signbit(got).tolist() == np.signbit(x).tolist()
    s = fpx.as_format(Fraction(1, 3), "float4_e2m1", rounding="stochastic", seed=1)
    assert float(s) in (0.0, 0.5)


def test_the_modes_are_spelled_as_the_public_api_says():
    """docs/api.md (and the design's public API): rounding="nearest_even" | "nearest_away" |
    "toward_zero" | "up" | "down" | "stochastic". 0.1 lies between the float16 neighbours
    1638/16384 and 1639/16384 (0.1 * 16384 = 1638.4): nearest and toward zero give the lower,
    up the upper. The hyphenated spelling of an earlier version is refused, naming the one
    to write (nothing taken as something else)."""
    lo, hi = 1638 / 16384, 1639 / 16384
    want = {"nearest_even": lo, "nearest_away": lo, "toward_zero": lo, "up": hi, "down": lo}
    for mode, value in want.items():
        assert float(fpx.as_format(0.1, "float16", rounding=mode)) == value, mode
        assert float(fpx.sum(np.array([0.1, 0.0]), "sequential", rounding=mode)) == 0.1
    assert float(fpx.as_format(0.1, "float16", rounding="stochastic", seed=0)) in (lo, hi)
    for spelled in ("nearest-even", "nearest-away", "toward-zero"):
        right = spelled.replace("-", "_")
        with pytest.raises(ValueError, match=f"rounding '{spelled}' is written '{right}'"):
            fpx.as_format(0.1, "float16", rounding=spelled)
        with pytest.raises(ValueError, match=f"is written '{right}'"):
            fpx.sum(np.ones(3, np.float16), "sequential", rounding=spelled)
        with pytest.raises(ValueError, match=f"is written '{right}'"):
            fpx.parse_spec(f"sequential(rounding={spelled})", "sum")


@pytest.mark.parametrize("name", [n for n in FORMATS if n not in (E8M0, "float64")])
def test_a_negative_just_below_half_the_least_value_is_no_tie(name):
    """Issue 36: -(0.5 - 2**-54) * least, a float64, rounded to nearest is -0 (FNUZ: +0):
    the float64 path read 1 + t (t = x / least, inexact there) as 0.5, a tie, and gave
    -least in nearest_away (and, without subnormals, in nearest_even). Just above half
    is -least."""
    p, emin, _, _, _ = FORMATS[name]
    tiny = Fraction(2) ** (emin - p + 1)
    below, above = -tiny * (Fraction(1, 2) - Fraction(1, 2**54)), -tiny * Fraction(2**52 + 1, 2**53)
    for mode in MODES[:2]:
        for x in (below, above):
            want = expected(name, x, mode)
            got = fpx.as_format(np.array([float(x)]), name, rounding=mode).astype(float)[0]
            assert same(got, want), (mode, x, got, want)
    fmt = fpx.format(p, max(1 - emin, 1), subnormals=False, name="no_tie_check")
    try:
        x = -(0.5 - 2**-54) * 2.0**fmt.emin
        for mode in MODES[:2]:
            assert same(float(fpx.as_format(x, fmt.name, rounding=mode)), -0.0), mode
            assert float(fpx.as_format(-x * (1 + 2**-51), fmt.name, rounding=mode)) == 2.0**fmt.emin
    finally:
        fpx.userformat._forget("no_tie_check")
