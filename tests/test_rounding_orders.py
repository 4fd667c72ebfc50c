"""fpx.sum(x, order, rounding=..., seed=...) against a slow oracle written from the
definitions: each addition is the exact sum of its two operands (``fractions.Fraction``,
IEEE 754-2019 6.1/6.3 for infinities, NaN and the sign of an exact zero) rounded to the
working format in the mode (the two neighbours of the exact value on the format's grid, the
mode's pick between them, past the largest value ±max toward the range, else ±inf;
stochastic: up iff the addition's draw is below (v - lo) / (hi - lo), the k-th draw of
``np.random.default_rng(seed).random(n - 1)`` for the order's k-th addition). The orders are
written here again (sequential, reverse, pairwise, blocked), never calling fpexplore's
arithmetic. Also: stochastic rounding is unbiased, the default is today's nearest-even path
bit for bit, and the known result that stochastic rounding does not stagnate."""

from __future__ import annotations

import math
from fractions import Fraction

import ml_dtypes
import numpy as np
import pytest

import fpexplore as fpx
from fpexplore.orders.registry import lookup
from fpexplore.orders.summation import run_rounded

# name: (precision with the implicit bit, emin, emax, NumPy type)
FORMATS = {
    "float16": (11, -14, 15, np.float16),
    "bfloat16": (8, -126, 127, ml_dtypes.bfloat16),
    "float32": (24, -126, 127, np.float32),
    "float64": (53, -1022, 1023, np.float64),
}
MODES = ("nearest_even", "nearest_away", "toward_zero", "up", "down", "stochastic")
ORDERS = ("sequential", "reverse", "pairwise", "blocked")


# ----------------------------------------------------------------------------- the oracle


def largest(fmt: str) -> Fraction:
    p, _, emax, _ = FORMATS[fmt]
    return (2 - Fraction(2) ** (1 - p)) * Fraction(2) ** emax


def round_exact(v: Fraction, fmt: str, mode: str, u: float) -> float:
    """The nonzero exact ``v`` rounded to ``fmt`` in ``mode`` (``u``: the stochastic draw)."""
    p, emin, _, _ = FORMATS[fmt]
    a = abs(v)
    e = a.numerator.bit_length() - a.denominator.bit_length()
    e -= Fraction(2) ** e > a  # 2**e <= |v| < 2**(e + 1)
    q = Fraction(2) ** (max(e, emin) - p + 1)  # the grid's spacing there (unbounded above)
    lo = math.floor(v / q) * q
    hi = lo + q
    if lo == v:
        r = v
    elif mode in ("nearest_even", "nearest_away"):
        d = v - lo
        if d != q / 2:
            r = lo if d < q / 2 else hi
        elif mode == "nearest_even":
            r = lo if (lo / q) % 2 == 0 else hi
        else:
            r = hi if v > 0 else lo
    elif mode == "toward_zero":
        r = lo if v > 0 else hi
    elif mode == "up":
        r = hi
    elif mode == "down":
        r = lo
    else:
        r = hi if Fraction(u) < (v - lo) / q else lo
    if abs(r) > largest(fmt):
        toward = mode == "toward_zero" or (mode == "up" and v < 0) or (mode == "down" and v > 0)
        return (-1 if v < 0 else 1) * (float(largest(fmt)) if toward else math.inf)
    return float(r)


def add(a: float, b: float, fmt: str, mode: str, u: float) -> float:
    """IEEE addition of two values of ``fmt`` in ``mode``, from the exact sum."""
    if math.isnan(a) or math.isnan(b):
        return math.nan
    if math.isinf(a) or math.isinf(b):
        if math.isinf(a) and math.isinf(b) and a != b:
            return math.nan
        return a if math.isinf(a) else b
    v = Fraction(a) + Fraction(b)
    if v == 0:  # x + x keeps x's sign; opposite signs: +0, -0 rounding down
        if a == 0 and b == 0 and math.copysign(1, a) == math.copysign(1, b):
            return a
        return -0.0 if mode == "down" else 0.0
    return round_exact(v, fmt, mode, u)


def oracle_sum(t: list[float], order: str, fmt: str, mode: str, u, block: int = 8) -> float:
    k = [0]

    def plus(a, b):
        r = add(a, b, fmt, mode, float(u[k[0]]) if mode == "stochastic" else 0.0)
        k[0] += 1
        return r

    def sequential(t):
        acc = t[0] if t else 0.0
        for v in t[1:]:
            acc = plus(acc, v)
        return acc

    def pairwise(t):
        if len(t) <= 1:
            return t[0] if t else 0.0
        h = len(t) // 2
        left = pairwise(t[:h])
        return plus(left, pairwise(t[h:]))

    if order == "sequential":
        return sequential(t)
    if order == "reverse":
        return sequential(t[::-1])
    if order == "pairwise":
        return pairwise(t)
    sums = [sequential(t[lo : lo + block]) for lo in range(0, len(t), block)]
    return sequential(sums)


def draws(n: int, seed: int) -> np.ndarray:
    return np.random.default_rng(seed).random(max(n - 1, 0))


def same_bits(got, want: float, fmt: str) -> bool:
    T = FORMATS[fmt][3]
    w = np.array(want, dtype=np.float64).astype(T)
    g = np.asarray(got)
    assert g.dtype == np.dtype(T)
    if np.isnan(w):
        return bool(np.isnan(g))
    return g.tobytes() == w.tobytes()


# ----------------------------------------------------------------------------- inputs


def special_values(fmt: str) -> list[float]:
    p, emin, emax, _ = FORMATS[fmt]
    big, tiny, normal = float(largest(fmt)), 2.0 ** (emin - p + 1), 2.0**emin
    out = [0.0, -0.0, big, -big, tiny, -tiny, normal, -normal, 1.0, -1.0, 3 * tiny]
    out += [2.0**-p, 3 * 2.0**-p, 1 + 2.0 ** (1 - p), 2.0**emax, big / 2]  # ties with 1
    out += [math.inf, -math.inf, math.nan, normal - tiny, 2.0 ** (emax - p)]
    return out


def values(fmt: str, n: int, rng) -> np.ndarray:
    """A mix: random bit patterns (every kind of value), values of one binade (ties and
    exact sums), near-cancelling pairs, boundary values, wide exponent ranges."""
    p, emin, emax, T = FORMATS[fmt]
    kind = rng.integers(5)
    if kind == 0 and fmt in ("float16", "bfloat16"):
        x = rng.integers(0, 1 << 16, n, dtype=np.uint16).view(T)
        with np.errstate(invalid="ignore"):
            return x[np.isfinite(x.astype(np.float64))] if rng.random() < 0.7 else x
    if kind == 1:  # small integers times one power of two: many ties
        scale = 2.0 ** int(rng.integers(emin - p, emax - 3 * p))
        w = rng.integers(-(2 ** (p + 1)), 2 ** (p + 1), n) * scale
    elif kind == 2:  # wide exponents, random signs (absorption, subnormals, overflow)
        e = rng.integers(emin - p, emax + 1, n)
        w = np.ldexp(rng.random(n) + 1, e) * rng.choice([-1, 1], n)
    elif kind == 3:
        w = rng.choice(special_values(fmt), n)
    else:  # positive, of one size: the accumulator grows past the terms
        w = rng.random(n) * 2.0 ** int(rng.integers(-3, 4))
    with np.errstate(all="ignore"):
        return np.asarray(fpx.as_format(w, fmt))


# ----------------------------------------------------------------------------- the tests


@pytest.mark.parametrize("fmt", list(FORMATS))
def test_one_addition_is_the_exact_sum_rounded_in_each_mode(fmt):
    """Every pair of special values (zeros, subnormals, ties, the largest, inf, NaN), and
    random pairs: x[0] + x[1] in each mode equals the oracle's, bit for bit; with
    stochastic rounding for several seeds (only the two neighbours of the exact sum)."""
    T = FORMATS[fmt][3]
    sv = special_values(fmt)
    rng = np.random.default_rng(1)
    pairs = [(a, b) for a in sv for b in sv]
    while len(pairs) < len(sv) ** 2 + 150:
        v = values(fmt, 8, rng)
        if v.size >= 2:
            pairs.append((float(v[0]), float(v[1])))
    for a, b in pairs:
        x = np.array([a, b], dtype=np.float64).astype(T)
        for mode in MODES:
            for seed in (0, 1, 2) if mode == "stochastic" else (None,):
                kw = {"seed": seed} if seed is not None else {}
                with np.errstate(all="ignore"):
                    got = fpx.sum(x, "sequential", rounding=mode, **kw)
                want = add(float(x[0]), float(x[1]), fmt, mode, float(draws(2, seed or 0)[0]))
                assert same_bits(got, want, fmt), (fmt, mode, seed, a, b, got, want)


def test_stochastic_draws_at_the_exact_threshold():
    """The comparison with the draw is exact: 1 + 2**-13 in float16 is 1/4 of the way to
    the next value; a draw of exactly 1/4 rounds down, one just below it up (and the mirror
    for -1 - 2**-13, whose distance from the lower neighbour is 3/4)."""
    from fpexplore.orders import _rounded_kernels as rk

    p, emin, emax = 11, -14, 65504.0
    for a, frac in ((1.0, 0.25), (-1.0, 0.75)):
        b = math.copysign(2.0**-12, a)  # a quarter of 1's spacing 2**-10
        lo_hi = sorted((a, a + math.copysign(2.0**-10, a)))
        for u, up in ((frac, False), (frac - 2.0**-53, True), (0.0, True), (1 - 2.0**-53, False)):
            r = rk.add_in_mode(a, b, p, emin, emax, rk.STOCHASTIC, u)
            assert r == (lo_hi[1] if up else lo_hi[0]), (a, u, r)
    # float64: the exact sum 1 + 2**-80 is not a float64; the draw decides from it exactly
    assert rk.add_in_mode(1.0, 2.0**-80, 53, -1022, 1.7976931348623157e308, rk.UP, 0.0) > 1
    assert rk.add_in_mode(1.0, -(2.0**-80), 53, -1022, 1.7976931348623157e308, rk.DOWN, 0.0) < 1


@pytest.mark.parametrize("order", ORDERS)
@pytest.mark.parametrize("fmt", list(FORMATS))
def test_orders_equal_the_oracle_in_every_mode(order, fmt):
    """Random, boundary, tie, subnormal, overflow and NaN inputs: each order in each mode
    equals the slow oracle bit for bit (stochastic: the same draws, one per addition)."""
    rng = np.random.default_rng(hash((order, fmt)) % 2**32)
    block = 8
    for trial in range(12):
        n = int(rng.integers(0, 70)) if trial else 1
        x = values(fmt, max(n, 1), rng)[:n]
        t = [float(v) for v in x]
        kw = {"block": block} if order == "blocked" else {}
        for mode in MODES:
            seed = int(rng.integers(1000)) if mode == "stochastic" else None
            extra = {"seed": seed} if seed is not None else {}
            with np.errstate(all="ignore"):
                got = fpx.sum(x, order, rounding=mode, **kw, **extra)
            want = oracle_sum(t, order, fmt, mode, draws(len(t), seed or 0), block)
            assert same_bits(got, want, fmt), (order, fmt, mode, trial, got, want)


@pytest.mark.parametrize("order", ORDERS)
@pytest.mark.parametrize("fmt", list(FORMATS))
def test_the_mode_kernels_in_nearest_even_equal_todays_kernels(order, fmt):
    """The default takes the order's own kernel (untouched); the mode kernels run in
    nearest-even give the same bits, another check of both."""
    spec = lookup("sum", order)
    from fpexplore.orders.arith import accumulator, arith, to_storage

    rng = np.random.default_rng(7)
    for _ in range(10):
        x = values(fmt, int(rng.integers(1, 3000)), rng)
        info = fpx.format_info(fmt)
        ar = arith(accumulator(None, info, spec))
        p = spec.validate({"block": 16} if order == "blocked" else {})
        with np.errstate(all="ignore"):
            mine = run_rounded(spec, to_storage(x, ar), ar, p, "nearest_even", None)
            today = fpx.sum(x, order, **({"block": 16} if order == "blocked" else {}))
            explicit = fpx.sum(x, order, rounding="nearest_even", **p)
        assert same_bits(today, mine, fmt) and same_bits(explicit, mine, fmt)


def test_stochastic_rounding_is_unbiased():
    """One addition: only the two neighbours appear, the mean of 4000 seeds is the exact
    sum within 4 standard errors. A whole sequential sum: the mean over seeds is the exact
    sum within 4 standard errors (each addition's error has mean zero)."""
    x = np.array([1.0, 2.0**-13 + 2.0**-15], dtype=np.float16)  # 5/32 of a spacing above 1
    out = np.array([float(fpx.sum(x, rounding="stochastic", seed=s)) for s in range(4000)])
    assert set(out) == {1.0, 1.0 + 2.0**-10}
    exact = 1.0 + 2.0**-13 + 2.0**-15
    assert abs(out.mean() - exact) < 4 * out.std() / math.sqrt(out.size)
    assert abs(np.mean(out > 1) - 5 / 32) < 4 * math.sqrt(5 / 32 * 27 / 32 / out.size)

    t = fpx.as_format(np.random.default_rng(3).random(500), "bfloat16")
    exact = math.fsum(np.asarray(t, np.float64))
    for order in ("sequential", "pairwise"):
        s = np.array([float(fpx.sum(t, order, rounding="stochastic", seed=k)) for k in range(400)])
        assert abs(s.mean() - exact) < 4 * s.std() / math.sqrt(s.size), order
        assert abs(float(fpx.sum(t, order)) - exact) > 0  # nearest-even is off here


def _relative_errors(fmt: str, n: int, seeds: int) -> tuple[float, float]:
    x = fpx.as_format(np.random.default_rng(1).random(n), fmt)
    exact = math.fsum(np.asarray(x, np.float64))
    nearest = abs(float(fpx.sum(x, "sequential")) - exact) / exact
    sr = [
        abs(float(fpx.sum(x, "sequential", rounding="stochastic", seed=s)) - exact) / exact
        for s in range(seeds)
    ]
    return nearest, float(np.median(sr))


def test_stochastic_rounding_does_not_stagnate():
    """The known result (docs/orders.md, "Rounding modes"): a float16 sequential sum of
    uniform [0, 1) values stagnates in nearest-even (at 2048, where the spacing 2 makes
    every term less than half of it) and its error grows like n, while stochastic rounding
    keeps the expected sum and stays within its probabilistic sqrt(n) u bound: at n = 10**4,
    its error is more than 10x smaller; at n = 10**3, before stagnation, both are small."""
    u = 2.0**-11
    near3, sr3 = _relative_errors("float16", 1000, 9)
    near4, sr4 = _relative_errors("float16", 10_000, 9)
    assert near4 > 10 * sr4 and near4 > 0.5  # more than half the sum lost
    assert sr4 < math.sqrt(10_000) * u and sr3 < math.sqrt(1000) * u
    assert near4 / near3 > 10  # nearest-even: faster than n from 10**3 to 10**4
    assert sr4 / sr3 < 10


def test_refusals_name_rounding():
    x = np.ones(4, np.float16)
    with pytest.raises(ValueError, match="rounding='up' is not a setting of order 'kahan'"):
        fpx.sum(x, "kahan", rounding="up")
    with pytest.raises(ValueError, match="rounding='stochastic' needs seed="):
        fpx.sum(x, "pairwise", rounding="stochastic")
    with pytest.raises(ValueError, match="seed= is for rounding='stochastic' only"):
        fpx.sum(x, "sequential", rounding="up", seed=1)
    with pytest.raises(ValueError, match="unknown rounding 'upward'"):
        fpx.sum(x, rounding="upward")
    with pytest.raises(TypeError, match="rounding must be a string"):
        fpx.sum(x, rounding=None)
    with pytest.raises(TypeError, match="has no parameter seed"):
        fpx.sum(x, "kahan", seed=1)  # as before: kahan has no seed
    assert fpx.sum(x, "kahan", rounding="nearest_even") == 4
    assert fpx.sum(x, "shuffled", seed=3) == 4  # its own seed, unchanged
    with pytest.raises(TypeError, match="has no parameter rounding"):
        fpx.dot(x, x, rounding="up")


def test_variant_specs_compare_and_sweep_take_the_rounding():
    from fpexplore.spec import parse_spec

    s = parse_spec("sequential( seed=3 , rounding=stochastic)", "sum")
    assert str(s) == "sequential(rounding=stochastic, seed=3)"
    assert parse_spec(str(s), "sum") == s
    assert str(parse_spec("blocked(block=16, rounding=toward_zero)", "sum")) == (
        "blocked(block=16, rounding=toward_zero)"
    )
    for bad, why in (
        ("kahan(rounding=up)", "takes no rounding="),
        ("sequential(rounding=stochastic)", "needs seed="),
        ("sequential(seed=3)", "seed= is for rounding='stochastic' only"),
        ("pairwise(rounding=upward)", "unknown rounding 'upward'"),
        ("sequential(rounding=up)+fma", "fma"),
    ):
        with pytest.raises(ValueError, match=why):
            parse_spec(bad, "sum")
    with pytest.raises(ValueError, match="takes no rounding="):
        parse_spec("sequential(rounding=up)", "dot")

    variants = ["sequential", "sequential(rounding=stochastic, seed=3)", "pairwise(rounding=up)"]
    c = fpx.compare("sum", format="float16", n=3000, variants=variants, backends="emulated")
    table = c.table.set_index("variant")
    x = fpx.generate("uniform", 3000, "float16", 0)
    for v in variants:
        kw = parse_spec(v, "sum").kwargs()
        want = fpx.sum(x, parse_spec(v, "sum").name, **kw)
        assert table.loc[v, "value"] == want, v
    sw = fpx.sweep(
        "sum",
        format="float16",
        sizes=(100, 3000),
        variants=variants[:2],
        seeds=1,
        backends="emulated",
        progress=False,
    )
    assert set(sw.table["variant"]) == set(variants[:2])


def test_the_warm_up_knows_the_rounded_kernels():
    from fpexplore.orders.registry import kernel_needs

    info = fpx.format_info("float16")
    assert kernel_needs("sum", "pairwise", info, None, {"rounding": "stochastic", "seed": 0}) == [
        ("pairwise_rounded", np.dtype(np.float32), None)
    ]
    assert kernel_needs("sum", "pairwise", info) == kernel_needs(
        "sum", "pairwise", info, None, {"rounding": "nearest_even"}
    )
