"""fpx.format (issue 38): a format of one's own. Done when "a custom format with the
parameters of float16 behaves exactly as float16": rounding to fpx.format(11, 15) equals
NumPy's float16 bit for bit (and fpx.format(8, 127) ml_dtypes' bfloat16), in every mode equals
fpexplore's own float16; an exhaustive oracle (every value of a tiny format enumerated,
each mode's pick by exact rationals) with and without subnormals; neighbours and ulps; the
errors naming their argument."""

from __future__ import annotations

import math
from fractions import Fraction

import ml_dtypes
import numpy as np
import pytest

import fpexplore as fpx
from fpexplore.formats import round_f64
from fpexplore.userformat import user_names

MODES = ("nearest_even", "nearest_away", "toward_zero", "up", "down")


pytestmark = pytest.mark.usefixtures("clean_formats")  # (tests/conftest.py)


def _same(a, b) -> bool:
    """Bit for bit as float64 (NaN: any NaN)."""
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    nan = np.isnan(a) & np.isnan(b)
    return bool(np.all(nan | (a.view(np.uint64) == b.view(np.uint64))))


def _probe_values(p: int, emin: int, emax: int, seed: int = 0) -> np.ndarray:
    """float64 inputs for a format (p, emin, emax): random over the whole range and beyond,
    every boundary, ties (midpoints between neighbours) and their float64 neighbours,
    subnormals, overflow, NaN, ±0, ±inf."""
    rng = np.random.default_rng(seed)
    lo, hi = emin - p - 3, emax + 3
    with np.errstate(over="ignore"):  # (float64's own parameters: past its range is inf)
        rand = rng.uniform(1, 2, 20000) * np.exp2(rng.integers(lo, hi, 20000))
    tiny = math.ldexp(1.0, emin - p + 1)
    big = math.ldexp(2.0 - math.ldexp(1.0, 1 - p), emax)
    ends = [tiny, tiny / 2, tiny * 1.5, tiny * 2.5, math.ldexp(1.0, emin), big]
    ends += [big + math.ldexp(1.0, emax - p), math.ldexp(1.0, min(emax + 1, 1023)), 1.0, 3.0]
    ends += [math.ldexp(1.0, emin) - tiny, math.ldexp(1.0, emin) - tiny / 2]
    # ties: the format's values plus half their quantum, at every exponent
    ks = rng.integers(2 ** (p - 1), 2**p, 4000)
    es = rng.integers(emin - p + 1, emax - p + 2, 4000)
    grid = np.ldexp(ks.astype(np.float64), es)
    ties = grid + np.ldexp(1.0, np.maximum(es, emin - p + 1) - 1)
    sub_ties = (np.arange(min(2 ** (p - 1), 4096)) + 0.5) * tiny
    vals = np.concatenate([rand, ends, grid, ties, sub_ties])
    with np.errstate(over="ignore"):
        vals = np.concatenate([vals, np.nextafter(vals, 0), np.nextafter(vals, np.inf)])
    vals = np.concatenate([vals, -vals, [0.0, -0.0, np.inf, -np.inf, np.nan]])
    return vals


# ----------------------------------------------------------------------------- float16 twin


def test_float16_twin_rounds_as_numpy_float16_bit_for_bit():
    half = fpx.format(precision=11, emax=15, name="t_half")
    x = _probe_values(11, -14, 15)
    got = fpx.as_format(x, half)
    assert got.dtype == np.float64
    with np.errstate(over="ignore"):
        assert _same(got, x.astype(np.float16).astype(np.float64))
    assert _same(fpx.as_format(x, "t_half"), got)  # by name as by entry
    assert _same(round_f64(x, fpx.format_info("t_half")), got)


@pytest.mark.parametrize("mode", (*MODES, "stochastic"))
def test_float16_twin_every_mode_equals_float16(mode):
    fpx.format(11, 15, name="t_half")
    x = _probe_values(11, -14, 15, seed=1)
    seed = 7 if mode == "stochastic" else None
    got = fpx.as_format(x, "t_half", rounding=mode, seed=seed)
    want = fpx.as_format(x, "float16", rounding=mode, seed=seed).astype(np.float64)
    assert _same(got, want)


def test_float16_twin_from_every_float16_and_exact_inputs():
    fpx.format(11, 15, name="t_half")
    every = np.arange(2**16, dtype=np.uint16).view(np.float16)
    assert _same(fpx.as_format(every, "t_half"), every.astype(np.float64))
    x32 = np.random.default_rng(2).standard_normal(5000).astype(np.float32) * 1e3
    assert _same(fpx.as_format(x32, "t_half"), x32.astype(np.float16).astype(np.float64))
    # exact rationals and big integers: rounded once, from their exact value
    third = Fraction(1, 3)
    assert fpx.as_format(third, "t_half") == float(np.float16(1 / 3))
    assert fpx.as_format(2**70 + 1, "t_half") == np.inf
    assert fpx.as_format(65519, "t_half") == 65504.0
    assert fpx.as_format(65520, "t_half") == np.inf  # the tie goes to the even: overflow


def test_bfloat16_twin_rounds_as_ml_dtypes_bfloat16():
    bf = fpx.format(precision=8, emax=127, name="t_bf16")
    x = _probe_values(8, -126, 127, seed=3)
    with np.errstate(over="ignore", under="ignore"):
        x32 = x.astype(np.float32)  # ml_dtypes rounds float32 to bfloat16 correctly
    want = x32.astype(ml_dtypes.bfloat16).astype(np.float64)
    assert _same(fpx.as_format(x32, bf), want)
    # from float64 directly: fpexplore's own bfloat16 (no double rounding through float32)
    assert _same(fpx.as_format(x, bf), fpx.as_format(x, "bfloat16").astype(np.float64))


def test_ulp_and_neighbours_of_the_float16_twin():
    fpx.format(11, 15, name="t_half")
    every = np.arange(2**16, dtype=np.uint16).view(np.float16)
    every = every[np.isfinite(every)]
    x = every.astype(np.float64)
    assert _same(fpx.ulp(x, "t_half"), fpx.ulp(every).astype(np.float64))
    with np.errstate(over="ignore"):
        up, down = fpx.next_up(every), fpx.next_down(every)
    assert _same(fpx.next_up(x, "t_half"), up.astype(np.float64))
    assert _same(fpx.next_down(x, "t_half"), down.astype(np.float64))
    assert fpx.next_up(np.inf, "t_half") == np.inf
    assert fpx.next_down(np.inf, "t_half") == 65504.0
    assert fpx.next_up(-np.inf, "t_half") == -65504.0
    assert math.isnan(fpx.next_up(np.nan, "t_half"))


def test_the_entry_is_a_format_info_of_the_registry():
    half = fpx.format(11, 15)
    assert isinstance(half, fpx.FormatInfo)
    assert half.name == "custom_p11_emax15"
    assert fpx.format_info("custom_p11_emax15") is half
    assert (half.precision, half.emin, half.emax, half.max) == (11, -14, 15, 65504.0)
    assert (half.exponent_bits, half.subnormals, half.storage) == (5, True, False)
    assert half.smallest_subnormal == 2.0**-24
    assert fpx.format(11, 15) == half  # defined again alike: the same format
    ftz = fpx.format(11, 15, subnormals=False)
    assert ftz.name == "custom_p11_emax15_nosub"
    assert ftz.smallest_subnormal == ftz.smallest_normal == 2.0**-14
    wide = fpx.format(53, 1023, name="t_f64")
    x = _probe_values(53, -1022, 1023, seed=4)
    assert _same(fpx.as_format(x, wide), x)  # float64's parameters: every float64 kept


# ----------------------------------------------------------------------------- the oracle


def _values(p: int, emax: int, subnormals: bool) -> list[Fraction]:
    """Every nonnegative finite value of the format, from its definition."""
    emin = 1 - emax
    vals = {Fraction(0)}
    for e in range(emin, emax + 1):
        vals |= {Fraction(m) * Fraction(2) ** (e - p + 1) for m in range(2 ** (p - 1), 2**p)}
    if subnormals:
        vals |= {Fraction(m) * Fraction(2) ** (emin - p + 1) for m in range(1, 2 ** (p - 1))}
    return sorted(vals)


def _even(v: Fraction, p: int, emin: int) -> bool:
    """Whether v's integral significand is even (0 is)."""
    if v == 0:
        return True
    e = v.numerator.bit_length() - v.denominator.bit_length()
    e -= Fraction(2) ** e > v
    m = v / Fraction(2) ** (max(e, emin) - p + 1)
    return m.denominator == 1 and m.numerator % 2 == 0


def _oracle(x: Fraction, mode: str, p: int, emax: int, vals: list[Fraction], subn: bool):
    """The mode's pick for x != 0 by exact rationals: the neighbours lo <= |x| <= hi among
    the values (past the largest, the grid's next point 2**(emax + 1), which stands for
    the overflow), the tie of nearest-even to the even significand (without subnormals, the
    tie between 0 and 2**emin to 2**emin, CPFloat's choice); past the largest value the
    directed modes toward the range give ±max, the others ±inf."""
    a, neg = abs(x), x < 0
    top = Fraction(2) ** (emax + 1)
    grid = [*vals, top]
    lo = max(v for v in grid if v <= a)
    hi = min((v for v in grid if v >= a), default=top)  # beyond top: overflow as at top
    toward_zero_is_down = not neg  # the magnitude's lo is "down" for x > 0
    if lo == hi or a >= top:
        r = lo
    elif mode == "toward_zero":
        r = lo
    elif mode == "up":
        r = hi if not neg else lo
    elif mode == "down":
        r = lo if toward_zero_is_down else hi
    elif a - lo != hi - a:
        r = lo if a - lo < hi - a else hi
    elif mode == "nearest_away" or (not subn and lo == 0):
        r = hi
    else:
        r = lo if _even(lo, p, 1 - emax) else hi
    if r == top:
        toward = mode == "toward_zero" or (mode == "down" and not neg) or (mode == "up" and neg)
        r = vals[-1] if toward else math.inf
    out = math.inf if r == math.inf else float(r)
    return -out if neg else out


@pytest.mark.parametrize("subnormals", (True, False))
@pytest.mark.parametrize("mode", MODES)
def test_tiny_format_against_the_exhaustive_oracle(mode, subnormals):
    p, emax = 3, 3
    fmt = fpx.format(p, emax, subnormals=subnormals, name="t_tiny")
    vals = _values(p, emax, subnormals)
    # every value, every midpoint, points a third of the way, below the least, past the top
    pts = set(vals)
    grid = [*vals, Fraction(2) ** (emax + 1)]
    for a, b in zip(grid, grid[1:]):
        pts |= {(a + b) / 2, a + (b - a) / 3, b - (b - a) / 3}
    pts |= {vals[1] / 3, vals[1] / 2, Fraction(2) ** (emax + 2), Fraction(10) ** 6}
    xs = sorted(pts - {0})
    xs += [-v for v in xs]
    want = [_oracle(x, mode, p, emax, vals, subnormals) for x in xs]
    got = fpx.as_format(np.array([float(x) for x in xs]), fmt, rounding=mode)
    assert _same(got, want), [(x, g, w) for x, g, w in zip(xs, got, want) if g != w][:5]
    exact = fpx.as_format(np.array(xs, dtype=object), fmt, rounding=mode)  # the rational path
    assert _same(exact, want)
    zeros = fpx.as_format(np.array([0.0, -0.0]), fmt, rounding=mode)
    assert _same(zeros, [0.0, -0.0])


@pytest.mark.parametrize("subnormals", (True, False))
def test_tiny_format_stochastic_picks_a_neighbour_unbiased(subnormals):
    fmt = fpx.format(3, 3, subnormals=subnormals, name="t_tiny")
    vals = _values(3, 3, subnormals)
    for x in (Fraction(1, 3) * vals[1], Fraction(21, 10), Fraction(-13, 7)):
        lo = max(v for v in vals if v <= abs(x))
        hi = min(v for v in vals if v >= abs(x))
        n = 20000
        got = np.abs(fpx.as_format(np.full(n, float(x)), fmt, rounding="stochastic", seed=5))
        assert set(got.tolist()) <= {float(lo), float(hi)}
        p_up = float((abs(Fraction(float(x))) - lo) / (hi - lo))
        sigma = math.sqrt(p_up * (1 - p_up) / n)
        assert abs(np.mean(got == float(hi)) - p_up) < 5 * sigma + 1e-12


@pytest.mark.parametrize("subnormals", (True, False))
def test_tiny_format_neighbours_and_ulps_by_enumeration(subnormals):
    p, emax = 3, 3
    fmt = fpx.format(p, emax, subnormals=subnormals, name="t_tiny")
    pos = [float(v) for v in _values(p, emax, subnormals)]
    line = [-math.inf, *[-v for v in reversed(pos[1:])], 0.0, *pos[1:], math.inf]
    x = np.array(line[1:-1])
    want_up = [-0.0 if v == 0 else v for v in line[2:]]  # nextUp(-least) = -0
    assert _same(fpx.next_up(x, fmt), want_up)
    want_down = line[:-2]
    assert _same(fpx.next_down(x, fmt), want_down)
    # IEEE: nextUp(-least) is -0, nextDown(+least) is +0, ±0 step to the least of that sign
    least = pos[1]
    assert _same(fpx.next_up(-least, fmt), -0.0)
    assert _same(fpx.next_down(least, fmt), 0.0)
    assert _same(fpx.next_up(-0.0, fmt), least) and _same(fpx.next_down(0.0, fmt), -least)
    assert least == (0.0625 if subnormals else 0.25)
    # ulp: the quantum 2**(max(e, emin) - p + 1) of each value
    q = [float(2.0 ** (max(math.floor(math.log2(abs(v))), 1 - emax) - p + 1)) if v else 2.0**-4
         for v in x]  # fmt: skip
    assert _same(fpx.ulp(x, fmt), q)


# ----------------------------------------------------------------------------- refusals


@pytest.mark.parametrize(
    ("kwargs", "error", "words"),
    [
        ({"precision": 1, "emax": 15}, ValueError, "precision must be from 2 to 53"),
        ({"precision": 54, "emax": 15}, ValueError, "float64, which holds the values, has 53"),
        ({"precision": 11, "emax": 0}, ValueError, "emax must be from 1 to 1023"),
        ({"precision": 11, "emax": 1024}, ValueError, "emax must be from 1 to 1023"),
        ({"precision": 53, "emax": 1024}, ValueError, "emax"),
        ({"precision": 11.0, "emax": 15}, TypeError, "precision must be an integer"),
        ({"precision": 11, "emax": "15"}, TypeError, "emax must be an integer"),
        ({"precision": 11, "emax": 15, "subnormals": 1}, TypeError, "subnormals"),
        ({"precision": 11, "emax": 15, "name": "float16"}, ValueError, "built-in"),
        ({"precision": 11, "emax": 15, "name": "tf32"}, ValueError, "built-in"),
        ({"precision": 11, "emax": 15, "name": "my half"}, ValueError, "name 'my half'"),
        ({"precision": 11, "emax": 15, "name": "a@b"}, ValueError, "name 'a@b'"),
        ({"precision": 11, "emax": 15, "name": 16}, TypeError, "name must be a string"),
    ],
)
def test_bad_parameters_are_refused_by_name(kwargs, error, words):
    with pytest.raises(error, match=words.replace("+", r"\+")):
        fpx.format(**kwargs)


def test_the_largest_range_float64_holds_is_accepted():
    assert fpx.format(24, 1023, subnormals=False, name="t_wide").smallest_normal == 2.0**-1022
    assert fpx.format(53, 1023, name="t_f64").smallest_subnormal == 2.0**-1074


def test_a_name_defined_again_with_other_parameters_is_refused():
    fpx.format(11, 15, name="t_mine")
    with pytest.raises(ValueError, match="name 't_mine' already names a format"):
        fpx.format(11, 14, name="t_mine")


def test_neighbours_and_ulps_refuse_what_is_not_the_formats():
    fpx.format(11, 15, name="t_half")
    with pytest.raises(TypeError, match=r"next_up\(x, 't_half'\) needs x in float64"):
        fpx.next_up(np.float32(1.0), "t_half")
    with pytest.raises(ValueError, match="0.1 , which is not a value of t_half".replace(" ,", ",")):
        fpx.next_down(0.1, "t_half")
    with pytest.raises(ValueError, match="fmt takes only a format of fpx.format"):
        fpx.next_up(1.0, "float16")
    with pytest.raises(ValueError, match="past t_half's largest"):
        fpx.ulp(1e6, "t_half")
    with pytest.raises(TypeError, match="needs x stored as float64"):
        fpx.ulp(np.float32(1.0), "t_half")


# ----------------------------------------------------------------------------- accumulators

ROUNDED_ORDERS = ("sequential", "reverse", "pairwise", "blocked")


@pytest.mark.parametrize("order", ROUNDED_ORDERS)
@pytest.mark.parametrize("n", (1, 2, 7, 100, 1000, 4097))
@pytest.mark.parametrize("dtype", (np.float16, np.float32, np.float64))
def test_sums_in_the_float16_twin_equal_float16_accumulators(order, n, dtype):
    fpx.format(11, 15, name="t_half")
    rng = np.random.default_rng(n)
    x = (rng.standard_normal(n) * rng.choice([1e-6, 1.0, 300.0], n)).astype(dtype)
    got = fpx.sum(x, order, accumulate="t_half")
    want = fpx.sum(x, order, accumulate="float16")
    assert got.dtype == want.dtype == x.dtype and _same(got, want)


@pytest.mark.parametrize("order", ROUNDED_ORDERS)
@pytest.mark.parametrize("mode", ("toward_zero", "up", "stochastic"))
def test_sums_in_the_twins_equal_their_formats_in_every_mode(order, mode):
    fpx.format(11, 15, name="t_half")
    fpx.format(8, 127, name="t_bf16")
    x = np.random.default_rng(9).standard_normal(3000).astype(np.float32)
    kw = {"rounding": mode, **({"seed": 3} if mode == "stochastic" else {})}
    for twin, fmt in (("t_half", "float16"), ("t_bf16", "bfloat16")):
        assert _same(
            fpx.sum(x, order, accumulate=twin, **kw), fpx.sum(x, order, accumulate=fmt, **kw)
        )


def test_a_sum_in_a_wide_custom_format_rounds_each_addition_once():
    """precision 30: a float64 sum rounded again would round twice (53 < 2 * 30 + 2); the
    sequential sum against additions rounded one by one from exact rationals."""
    fmt = fpx.format(30, 200, name="t_p30")
    rng = np.random.default_rng(11)
    x = fpx.as_format(rng.standard_normal(400) * np.exp2(rng.integers(-40, 40, 400)), fmt)
    acc = Fraction(x[0])
    for v in x[1:]:
        acc = Fraction(float(fpx.as_format(acc + Fraction(v), fmt)))
    assert fpx.sum(x, "sequential", accumulate="t_p30") == float(acc)


@pytest.mark.parametrize("order", ROUNDED_ORDERS)
@pytest.mark.parametrize("dtype", (np.float16, np.float32, ml_dtypes.bfloat16))
def test_dots_in_the_float16_twin_equal_float16_accumulators(order, dtype):
    """A dot product accumulating in fpx.format(11, 15) is the one accumulating in float16:
    inputs rounded to it, each product rounded to it, then the order's additions."""
    fpx.format(11, 15, name="t_half")
    rng = np.random.default_rng(21)
    for n in (1, 2, 7, 100, 1000, 4097):
        x = (rng.standard_normal(n) * rng.choice([1e-6, 1.0, 300.0], n)).astype(dtype)
        y = rng.standard_normal(n).astype(dtype)
        x[::5] = -0.0
        got = fpx.dot(x, y, order, accumulate="t_half")
        want = fpx.dot(x, y, order, accumulate="float16")
        assert got.dtype == want.dtype == x.dtype and _same(got, want), (n, got, want)


@pytest.mark.parametrize("subnormals", (True, False))
def test_dots_in_a_tiny_format_against_products_and_additions_rounded_exactly(subnormals):
    """Sequential, reverse and blocked dot products in a tiny format (p = 4, emax = 3): each
    product and each addition rounded once from its exact value, by exact rationals."""
    fmt = fpx.format(4, 3, subnormals=subnormals, name="t_tiny4")
    vals = np.array([float(v) for v in _values(4, 3, subnormals)])
    rng = np.random.default_rng(17)

    def r(v):
        return float(fpx.as_format(v, fmt))

    def mul(a, b):  # (an exact zero keeps IEEE's sign, which a Fraction has not)
        a, b = float(a), float(b)
        return a * b if a * b == 0 else r(Fraction(a) * Fraction(b))

    def add(a, b):
        a, b = float(a), float(b)
        if a == b == 0 or not math.isfinite(a + b):
            return a + b
        return r(Fraction(a) + Fraction(b))

    def chain(xs, ys):
        acc = mul(xs[0], ys[0])
        for a, b in zip(xs[1:], ys[1:]):
            acc = add(acc, mul(a, b))
        return acc

    for n in (1, 2, 5, 16, 33):
        for _ in range(40):
            x = rng.choice(vals, n) * rng.choice([-1.0, 1.0], n)
            y = rng.choice(vals, n) * rng.choice([-1.0, 1.0], n)
            got = fpx.dot(x, y, "sequential", accumulate="t_tiny4")
            assert _same(got, chain(x, y)), (x, y)
            got = fpx.dot(x, y, "reverse", accumulate="t_tiny4")
            assert _same(got, chain(x[::-1], y[::-1])), (x, y)
            blocks = [chain(x[i : i + 4], y[i : i + 4]) for i in range(0, n, 4)]
            want = blocks[0]
            for v in blocks[1:]:
                want = add(want, v)
            assert _same(fpx.dot(x, y, "blocked", block=4, accumulate="t_tiny4"), want), (x, y)


def test_dots_refuse_what_a_custom_accumulator_does_not_emulate():
    fpx.format(11, 15, name="t_half")
    fpx.format(30, 15, name="t_p30")
    x = np.ones(8, dtype=np.float32)
    with pytest.raises(ValueError, match="fma=True with 't_half' accumulation"):
        fpx.dot(x, x, "sequential", fma=True, accumulate="t_half")
    with pytest.raises(ValueError, match=r"accumulate: 't_p30' \(precision 30.*<= 26"):
        fpx.dot(x, x, "sequential", accumulate="t_p30")
    with pytest.raises(ValueError, match="accumulates in the orders of fpx.sum, fpx.dot and fpx"):
        fpx.matmul(x.reshape(2, 4), x.reshape(4, 2), "kahan", accumulate="t_half")
    with pytest.raises(ValueError, match=r"'t_p30' \(precision 30.*a matmul product accumulat"):
        fpx.matmul(x.reshape(2, 4), x.reshape(4, 2), "sequential", accumulate="t_p30")
    with pytest.raises(
        ValueError, match="'sequential\\+fma@t_half': fma=True with 't_half' accumulation"
    ):
        fpx.parse_spec("sequential+fma@t_half", "dot")  # (as a spec is read)
    with pytest.raises(ValueError, match="'tree@t_half': accumulate: 't_half'"):
        fpx.parse_spec("tree@t_half", "sum")
    assert str(fpx.parse_spec("blocked(block=4)@t_half", "dot")) == "blocked(block=4)@t_half"


def test_compare_takes_the_accumulator_in_a_variant_spec():
    fpx.format(11, 15, name="MyHalf")  # (a name keeps its case in a spec)
    assert str(fpx.parse_spec("pairwise@MyHalf", "sum")) == "pairwise@MyHalf"
    c = fpx.compare(
        "sum", format="float32", n=500, backends=["emulated"],
        variants=["sequential@MyHalf", "sequential@float16", "blocked@MyHalf", "blocked@float16"],
    )  # fmt: skip
    values = dict(zip(c.table["variant"], c.table["value"]))
    assert values["sequential@MyHalf"] == values["sequential@float16"]
    assert values["blocked@MyHalf"] == values["blocked@float16"]


def test_accumulators_refused_where_the_orders_do_not_take_them():
    from fpexplore.orders.arith import ROUNDED
    from fpexplore.orders.registry import roundable

    assert ROUNDED == tuple(roundable("sum"))  # the message's list is the registry's
    fpx.format(11, 15, name="t_half")
    x = np.ones(8, dtype=np.float32)
    words = "accumulate: 't_half', a format of fpx.format, accumulates in the orders of fpx.sum"
    with pytest.raises(ValueError, match=words):
        fpx.sum(x, "tree", accumulate="t_half")
    with pytest.raises(ValueError, match=words):
        fpx.dot(x, x, "tree", accumulate="t_half")
    with pytest.raises(ValueError, match="unknown accumulator 'nope'"):
        fpx.parse_spec("sequential@nope", "sum")


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("subnormals", (True, False))
def test_sums_in_a_tiny_format_against_additions_rounded_exactly(mode, subnormals):
    """Every addition of sequential and pairwise rounded once from its exact value to a
    tiny format (p = 4, emax = 3: sums cross its subnormals, 2**emin / 2 ties and overflow),
    against as_format of exact rationals (itself against the exhaustive oracle above)."""
    fmt = fpx.format(4, 3, subnormals=subnormals, name="t_tiny4")
    vals = np.array([float(v) for v in _values(4, 3, subnormals)])
    rng = np.random.default_rng(13)

    def add(a, b):
        if not (math.isfinite(a) and math.isfinite(b)):
            return a + b  # an overflow before: IEEE's inf arithmetic
        return float(fpx.as_format(Fraction(a) + Fraction(b), fmt, rounding=mode))

    def pairwise(t):
        if len(t) == 1:
            return float(t[0])
        h = len(t) // 2
        return add(pairwise(t[:h]), pairwise(t[h:]))

    for n in (2, 3, 5, 16, 33):
        for _ in range(40):
            x = rng.choice(vals, n) * rng.choice([-1.0, 1.0], n)
            acc = float(x[0])
            for v in x[1:]:
                acc = add(acc, v)
            got = fpx.sum(x, "sequential", accumulate="t_tiny4", rounding=mode)
            assert _same(got, acc) or (got == acc == 0), (x, got, acc)
            got = fpx.sum(x, "pairwise", accumulate="t_tiny4", rounding=mode)
            want = pairwise(x)
            assert _same(got, want) or (got == want == 0), (x, got, want)


def test_bits_are_refused_for_a_format_without_an_ieee_layout():
    """from_bits reads IEEE's patterns of a format of fpx.format that has IEEE's layout (its
    values: tests/test_custom_data.py); emax 20 in 6 exponent bits has none."""
    fpx.format(11, 20, name="t_half")
    with pytest.raises(ValueError, match=r"from_bits: format 't_half' \(fpx.format\) has no IEEE"):
        fpx.from_bits(0x3C00, "t_half")


def test_the_formats_table_lists_the_formats_defined():
    pytest.importorskip("pandas")
    n = len(fpx.formats())
    fpx.format(5, 7, subnormals=False, name="t_listed")
    table = fpx.formats()
    assert len(table) == n + 1
    row = table.iloc[-1]
    assert (row["format"], row["precision"], row["emin"], row["emax"]) == ("t_listed", 5, -6, 7)
    assert (row["storage"], row["dtype"], row["overflow"]) == (False, "", "inf")


def test_an_unknown_format_lists_the_formats_of_fpx_format_too():
    fpx.format(5, 7, name="mine5")
    with pytest.raises(ValueError, match=r"valid formats: float16, .*float8_e8m0, mine5$"):
        fpx.format_info("mine6")


def test_the_bit_inspector_takes_apart_a_format_with_ieee_layout():
    """fpx.format(11, 15) has float16's layout (1 + 5 + 10 bits): its patterns (every 7th,
    and all subnormal, largest, infinite and NaN ones) read as float16's do (value, class,
    fields, neighbours, ulp), and typed values get float16's bits; the inspector offers it.
    A format whose emax does not fill its exponent field (emax=10: 5 bits, IEEE's would be
    15) is refused by name."""

    import ipywidgets as W

    from fpexplore import teaching

    fpx.format(11, 15, name="half_twin")
    edges = [*range(0, 0x400), *range(0x7BF0, 0x7E01), *range(0xFBF0, 0x10000)]
    for b in sorted({*range(0, 1 << 16, 7), *edges}):  # (subnormals, top, inf, NaN in full)
        mine, ref = teaching.bit_fields(b, "half_twin"), teaching.bit_fields(b, "float16")
        assert repr({**mine, "format": 0}) == repr({**ref, "format": 0}), hex(b)
    for typed in ("0.1", "-0", "65519", "65520", "2**-25", "-3e-8", "1e9", "nan"):
        assert teaching.bits_of(typed, "half_twin") == teaching.bits_of(typed, "float16")
    app = fpx.lessons.bit_inspector("0.1", "half_twin")
    assert "half_twin" in app.format.options and isinstance(app.format, W.Dropdown)
    assert app.hex_box.value == "0x2e66" and len(app.bit_buttons) == 16
    fpx.format(5, 10, name="short_top")
    with pytest.raises(ValueError, match="'short_top' .* has no IEEE bit layout.*emax=10"):
        teaching.bit_fields(0, "short_top")
    assert "short_top" not in teaching.bit_formats()


def test_an_unknown_accumulator_in_a_spec_lists_your_formats_too():
    """Pass 5 (issue 36): "sequential@nosuch" listed the four built-in accumulators only,
    leaving out the fpx.format names that a spec takes there."""
    with pytest.raises(ValueError, match=r"float32, float64, float8_e4m3, .*float4_e2m1'?$"):
        fpx.parse_spec("sequential@nosuch", "sum")
    fpx.format(precision=8, emax=15, name="p8-acc")
    with pytest.raises(ValueError, match=r"float4_e2m1 and yours \(fpx.format\): p8-acc$"):
        fpx.parse_spec("sequential@nosuch", "sum")


def test_a_snippet_naming_a_format_of_yours_defines_it_first(tmp_path):
    """Pass 19: compare's snippet of ``"pairwise@my_half"`` (or ``accumulate="my_half"``, or
    the format object) had no ``fpx.format`` line: in a fresh Python it failed, "unknown
    accumulator". It defines the format first and gives the same values, bit for bit."""
    import subprocess
    import sys

    half = fpx.format(precision=11, emax=15, name="my_half")
    for kw in (
        {"variants": ["pairwise@my_half"]},
        {"variants": ["sequential"], "accumulate": "my_half"},
        {"variants": ["pairwise"], "accumulate": half},
    ):
        c = fpx.compare("sum", n=100, backends="emulated", **kw)
        code = c.snippet() + "\nprint(repr(cmp.table.value.tolist()))\n"
        assert code.count("fpx.format(precision=11, emax=15, subnormals=True") == 1, code
        path = tmp_path / "snippet.py"
        path.write_text(code)
        out = subprocess.run(
            [sys.executable, "-I", str(path)], capture_output=True, text=True, cwd=tmp_path
        )
        assert out.returncode == 0, out.stderr
        assert out.stdout.strip().splitlines()[-1] == repr(c.table.value.tolist())


@pytest.mark.parametrize("name", ["float8_e4m3fn", "float6_e2m3fn", "half", "f2", "double"])
def test_a_name_numpy_reads_as_a_dtype_is_refused(name):
    """Pass 26: fpx.format(11, 15, name="float8_e4m3fn") was taken, and then the string meant
    a float16-like format while ml_dtypes.float8_e4m3fn meant E4M3 (sum gave 303.5 and 288)."""
    with pytest.raises(ValueError, match=rf"name '{name}' is NumPy's name of the dtype"):
        fpx.format(11, 15, name=name)
    assert name not in user_names()


def test_compare_says_a_format_of_yours_is_known_but_no_data_format():
    """Pass 26: compare(format=<a format of fpx.format>) said "unknown format 'my_half'"; the
    MX scale likewise. The message names the format and says what the op takes (sum takes
    it; dot where float64 holds its products exactly: the message says so)."""
    fpx.format(11, 15, name="t_p56")
    fpx.format(27, 15, name="t_p56_wide")
    with pytest.raises(ValueError, match=r"format 't_p56_wide': adam_step takes no t_p56_wide "):
        fpx.compare("adam_step", n=10, format="t_p56_wide")
    said = r"format 't_p56_wide': dot takes no t_p56_wide data \(dot takes the data of a format "
    with pytest.raises(ValueError, match=said + r".*precision <= 26 and emax <= 511\); dot takes"):
        fpx.compare("dot", n=10, format="t_p56_wide")
    assert fpx.compare("dot", n=10, format="t_p56").format == "t_p56"
    with pytest.raises(ValueError, match=r"format 'float8_e8m0': sum takes no float8_e8m0 data; "):
        fpx.compare("sum", n=10, format=ml_dtypes.float8_e8m0fnu)
    with pytest.raises(ValueError, match=r"format 't_p56_wide': linspace takes no t_p56_wide "):
        fpx.sweep("linspace", sizes=[4], format="t_p56_wide")  # (precision 27: past 25)
    with pytest.raises(ValueError, match=r"unknown format 'nope'; sum takes: float16"):
        fpx.compare("sum", n=10, format="nope")


def test_a_big_endian_dtype_is_its_format():
    """Pass 26: format_info(np.dtype(">f2")) was an "unknown format" (arrays of it read as
    float16 everywhere)."""
    for dt, name in ((">f2", "float16"), (">f4", "float32"), (">f8", "float64")):
        assert fpx.format_info(np.dtype(dt)).name == name
        x = np.array([0.1, 1e-7], dt)
        assert _same(fpx.as_format(x, np.dtype(dt)), fpx.as_format(x, name))
