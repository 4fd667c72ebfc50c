"""The OCP formats held in float32 (FP8 e4m3 / e5m2, FP6 e2m3 / e3m2, FP4 e2m1) as the
accumulator of sum's and dot's sequential, reverse, pairwise and blocked orders (issue 38):
every addition (and every product of a dot) rounded once from its exact value, checked here
against additions of exact rationals (``Fraction``) each rounded by ``fpx.as_format`` (itself
checked against an exhaustive oracle of each format's values in tests/test_small_formats.py
and tests/test_rounding_modes.py). Each format's own end is kept: e4m3 overflows to NaN,
e5m2 to inf, FP6 and FP4 saturate at ±max (docs/api.md)."""

from __future__ import annotations

import math
from fractions import Fraction

import ml_dtypes
import numpy as np
import pytest

import fpexplore as fpx

OCP = {
    "float8_e4m3": ml_dtypes.float8_e4m3fn,
    "float8_e5m2": ml_dtypes.float8_e5m2,
    "float6_e2m3": ml_dtypes.float6_e2m3fn,
    "float6_e3m2": ml_dtypes.float6_e3m2fn,
    "float4_e2m1": ml_dtypes.float4_e2m1fn,
}
MODES = ("nearest_even", "nearest_away", "toward_zero", "up", "down")


def values(name: str) -> np.ndarray:
    """Every finite value of the format, through ml_dtypes (bit patterns decoded)."""
    t = OCP[name]
    width = ml_dtypes.finfo(t).bits
    v = np.arange(1 << width, dtype=np.uint8).view(t).astype(np.float64)
    return np.unique(v[np.isfinite(v)])


def r(v, name, mode="nearest_even") -> float:
    return float(fpx.as_format(v, name, rounding=mode))


def add(a, b, name, mode) -> float:
    a, b = float(a), float(b)
    if not (math.isfinite(a) and math.isfinite(b)):
        return a + b  # (NaN after e4m3's overflow stays NaN)
    return r(Fraction(a) + Fraction(b), name, mode)


def sequential(t, name, mode):
    acc = float(t[0])
    for v in t[1:]:
        acc = add(acc, v, name, mode)
    return acc


def pairwise(t, name, mode):
    if len(t) == 1:
        return float(t[0])
    h = len(t) // 2
    return add(pairwise(t[:h], name, mode), pairwise(t[h:], name, mode), name, mode)


def blocked(t, name, mode, block=4):
    parts = [sequential(t[i : i + block], name, mode) for i in range(0, len(t), block)]
    return sequential(parts, name, mode)


def same(got, want) -> bool:
    got, want = float(got), float(want)
    if math.isnan(want):
        return math.isnan(got)
    return got == want  # (the sign of an exact zero: tests/test_custom_format.py)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("name", OCP)
def test_sums_accumulating_in_the_format_against_exact_additions(name, mode):
    vals = values(name)
    rng = np.random.default_rng(len(name) + MODES.index(mode))
    for n in (1, 2, 3, 5, 16, 33):
        for _ in range(25):
            x = rng.choice(vals, n).astype(np.float32)  # float32 data holding its values
            for order, oracle in (("sequential", sequential), ("pairwise", pairwise)):
                got = fpx.sum(x, order, accumulate=name, rounding=mode)
                assert same(got, oracle(x, name, mode)), (order, x, got)
            got = fpx.sum(x, "reverse", accumulate=name, rounding=mode)
            assert same(got, sequential(x[::-1], name, mode)), ("reverse", x, got)
            got = fpx.sum(x, "blocked", block=4, accumulate=name, rounding=mode)
            assert same(got, blocked(x, name, mode)), ("blocked", x, got)


@pytest.mark.parametrize("name", OCP)
def test_float32_data_is_rounded_to_the_accumulator_first(name):
    """Inputs wider than the accumulator are rounded to it (nearest-even) before the
    additions; the result is float32 (the data's format)."""
    rng = np.random.default_rng(5)
    x = (rng.standard_normal(40) * 3).astype(np.float32)
    got = fpx.sum(x, "sequential", accumulate=name)
    want = sequential([r(float(v), name) for v in x], name, "nearest_even")
    assert got.dtype == np.float32 and same(got, want)


@pytest.mark.parametrize("name", OCP)
def test_dots_accumulating_in_the_format_round_each_product_and_addition(name):
    vals = values(name)
    rng = np.random.default_rng(7)
    for n in (1, 2, 7, 20):
        for _ in range(25):
            x = rng.choice(vals, n).astype(np.float32)
            y = rng.choice(vals, n).astype(np.float32)
            products = [
                a * b if a * b == 0 else r(Fraction(float(a)) * Fraction(float(b)), name)
                for a, b in zip(x.tolist(), y.tolist())
            ]
            got = fpx.dot(x, y, "sequential", accumulate=name)
            assert same(got, sequential(products, name, "nearest_even")), (x, y, got)
            got = fpx.dot(x, y, "pairwise", accumulate=name)
            assert same(got, pairwise(products, name, "nearest_even")), (x, y, got)


@pytest.mark.parametrize("name", OCP)
def test_matmuls_of_float32_data_round_inputs_products_and_additions_to_the_format(name):
    """fpx.matmul(float32, accumulate=<FP8, FP6, FP4>) (issue 38: refused before): the
    inputs rounded to the format first, then each element as the oracle's dot in the order
    named (sequential, reverse, pairwise, blocked), past the format's largest value too
    (E4M3 NaN, E5M2 inf, FP6/FP4 saturate); a float32 matrix."""
    rng = np.random.default_rng(11)
    top = float(values(name)[-1])
    A = (rng.standard_normal((4, 13)) * top / 3).astype(np.float32)
    B = (rng.standard_normal((13, 3)) * 2).astype(np.float32)
    Ar = [[r(float(v), name) for v in row] for row in A]
    Br = [[r(float(v), name) for v in row] for row in B.T]
    oracles = {"sequential": sequential, "pairwise": pairwise, "blocked": blocked}
    oracles["reverse"] = lambda t, name, mode: sequential(t[::-1], name, mode)
    for order, oracle in oracles.items():
        kw = {"block": 4} if order == "blocked" else {}
        got = fpx.matmul(A, B, order, accumulate=name, **kw)
        assert got.dtype == np.float32
        for i in range(4):
            for j in range(3):
                products = [
                    a * b if a * b == 0 else r(Fraction(a) * Fraction(b), name)
                    for a, b in zip(Ar[i], Br[j])
                ]
                want = oracle(products, name, "nearest_even")
                assert same(got[i, j], want), (order, i, j, got[i, j], want)


def test_each_format_keeps_its_own_end():
    x = np.array([300.0, 200.0, -100.0], np.float32)
    # e4m3: 288 + 192 = 480 is past 448 (464 would tie down to it): NaN, as ml_dtypes
    assert np.isnan(fpx.sum(x, "sequential", accumulate="float8_e4m3"))
    assert fpx.sum(x, "sequential", accumulate="float8_e5m2") == 384.0  # 288 + 192 - 96
    assert fpx.sum(x, "sequential", accumulate="float6_e2m3") == 0.0  # 7.5 + 7.5 -> 7.5, - 7.5
    big = np.full(4, 6.0, np.float32)
    assert fpx.sum(big, "sequential", accumulate="float4_e2m1") == 6.0  # saturates
    assert fpx.sum(big, "sequential", accumulate="float4_e2m1", rounding="toward_zero") == 6.0
    assert np.isnan(fpx.sum(np.full(4, 448.0, np.float32), "pairwise", accumulate="float8_e4m3"))
    # (the orders' own kernels since E4M3 runs there: past 448 is NaN, never back to finite)
    for t, want in (([448.0, 16.0, -448.0], 0.0), ([448.0, 32.0, -448.0], math.nan)):
        for order in ("sequential", "blocked"):  # (left to right; pairwise: 448 + (32 - 448))
            got = fpx.sum(np.float32(t), order, accumulate="float8_e4m3")
            assert same(got, want), (t, order, got)
    assert fpx.sum(np.full(3, 448.0, np.float32), "sequential", accumulate="float8_e4m3",
                   rounding="toward_zero") == 448.0  # fmt: skip


def test_what_is_not_emulated_is_refused_by_name():
    x = np.ones(8, np.float32)
    with pytest.raises(ValueError, match="accumulate: 'float8_e4m3', a format held in float32"):
        fpx.sum(x, "tree", accumulate="float8_e4m3")
    with pytest.raises(ValueError, match="fma=True with 'float8_e5m2' accumulation"):
        fpx.dot(x, x, "sequential", fma=True, accumulate="float8_e5m2")
    with pytest.raises(ValueError, match="float8_e4m3fnuz.*no negative zero"):
        fpx.sum(x, "sequential", accumulate="float8_e4m3fnuz")
    with pytest.raises(ValueError, match="float8_e8m0.*no zero"):
        fpx.sum(x, "sequential", accumulate="float8_e8m0")
    assert str(fpx.parse_spec("pairwise@float6_e3m2", "sum")) == "pairwise@float6_e3m2"
    with pytest.raises(ValueError, match="'tree@float4_e2m1': accumulate: 'float4_e2m1'"):
        fpx.parse_spec("tree@float4_e2m1", "dot")


@pytest.mark.parametrize("name", OCP)
def test_the_ml_dtypes_type_names_the_same_accumulator(name):
    """Pass 7: ``accumulate=ml_dtypes.float8_e4m3fn`` (the type NumPy users hold FP8 in, or
    its dtype) was refused as an unknown format; it is the format of that name, the same
    sums. A name the package does not use lists the accumulators that it does."""
    x = (np.random.default_rng(9).standard_normal(30) * 2).astype(np.float32)
    want = sequential([r(float(v), name) for v in x], name, "nearest_even")
    for acc in (OCP[name], np.dtype(OCP[name])):
        assert same(fpx.sum(x, "sequential", accumulate=acc), want)
        assert same(fpx.dot(x, np.ones_like(x), "sequential", accumulate=acc), want)
    with pytest.raises(ValueError, match=r"unknown format 'float8_e4m3fn'.* float8_e4m3, .*"):
        fpx.sum(x, "sequential", accumulate="float8_e4m3fn")


def test_a_spec_and_the_call_refuse_fnuz_and_e8m0_accumulators_alike():
    """Pass 8: "sequential@float8_e8m0" was an "unknown accumulator" while accumulate=
    said why (no zero); tf32's refusal listed four accumulators of the nine."""
    for acc, why in (("float8_e8m0", "no zero"),):
        with pytest.raises(ValueError, match=rf"'{acc}' \({why}\) is not emulated"):
            fpx.parse_spec(f"sequential@{acc}", "sum")
        with pytest.raises(ValueError, match=rf"'{acc}' \({why}\) is not emulated"):
            fpx.sum(np.ones(3, np.float32), "sequential", accumulate=acc)
    with pytest.raises(ValueError, match=r"float4_e2m1 or fpx.format's; 'tf32' is an input"):
        fpx.sum(np.ones(3, np.float32), "sequential", accumulate="tf32")
