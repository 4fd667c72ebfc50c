"""mean (fpexplore/ops/mean.py, an op added as one module): every variant bit for bit against
independent oracles — the exact mean as a Fraction rounded by tests/oracle.py, the formula
variants as the slow order definitions of tests/slow_orders.py followed by an exact division,
the "numpy" variant against np.mean itself and a slow definition of NumPy's _mean — and the
op listed and run by the registry, compare() and the explorer."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings

import fpexplore as fpx
from fpexplore.ops import registry
from fpexplore.ops.mean import mean

import oracle
import slow_orders as so
from oracle import SPECS, round_fraction, same, to_format
from strategies import STORAGE, arrays, random_values

SLOW = {"sequential": so.sequential, "pairwise": so.pairwise, "kahan": so.kahan}


def check(got, want: float, fmt: str, *info):
    oracle.CHECKED["cases"] += 1
    assert np.asarray(got).dtype == SPECS[fmt][0], info
    assert same(got, to_format(want, fmt)), (*info, got, want)


def exact_mean(values: list[float], fmt: str) -> float:
    """The exact mean rounded once, IEEE special values spelled out."""
    if not values or any(math.isnan(v) for v in values):
        return math.nan
    infs = {v for v in values if math.isinf(v)}
    if infs:
        return math.nan if len(infs) == 2 else infs.pop()
    q = sum((Fraction(v) for v in values), Fraction(0)) / len(values)
    if q == 0:
        return -0.0 if all(math.copysign(1.0, v) < 0 for v in values) else 0.0
    return round_fraction(q, fmt)


def divided(s: float, n: int, fmt: str) -> float:
    """s / n rounded once to fmt (s a value of fmt, n >= 1)."""
    if s == 0 or not math.isfinite(s):
        return s
    return round_fraction(Fraction(s) / n, fmt)


def floats(x) -> list[float]:
    return np.asarray(x).astype(np.float64).tolist()


# ----------------------------------------------------------------------------- exact


@pytest.mark.parametrize("fmt", STORAGE)
def test_exact_is_the_correctly_rounded_exact_mean(fmt):
    rng = np.random.default_rng(11)
    for size in (1, 2, 3, 10, 100, 1000):
        for _ in range(10):
            x = random_values(rng, fmt, size)
            check(mean(x, variant="exact"), exact_mean(floats(x), fmt), fmt, size)


@pytest.mark.parametrize("fmt", STORAGE)
def test_exact_hypothesis(fmt):
    @settings(max_examples=200, deadline=None)
    @given(arrays(fmt, min_size=0, max_size=30))
    def run(x):
        check(mean(x, variant="exact"), exact_mean(floats(x), fmt), fmt, floats(x))

    run()


def test_exact_edge_cases():
    """The sum overflows but the mean does not; ties; signed zeros; subnormal means."""
    big = np.array([60000, 60000, 65504], dtype=np.float16)  # sum 185504 > float16's max
    check(mean(big, variant="exact"), exact_mean(floats(big), "float16"), "float16")
    assert float(mean(big, variant="exact")) == 61824.0  # 185504/3 = 61834.67, ulp 32
    assert np.isinf(mean(big, variant="sequential"))  # the float16 sum overflowed
    check(mean(np.array([-0.0, -0.0], np.float32), variant="exact"), -0.0, "float32")
    check(mean(np.array([-0.0, 0.0], np.float32), variant="exact"), 0.0, "float32")
    tiny = np.array([2.0**-149, 0.0, 0.0], np.float32)  # 2**-149 / 3 rounds to +0
    check(mean(tiny, variant="exact"), 0.0, "float32")
    two = np.array([2.0**-149, 2.0**-149, 2.0**-149, 0.0], np.float32)  # 3/4 ulp: 1 ulp
    check(mean(two, variant="exact"), 2.0**-149, "float32")
    tie = np.array([1.0, 2.0**-24], np.float32)  # 0.5 + 2**-25: a tie, to even
    check(mean(tie, variant="exact"), 0.5, "float32")
    check(mean(tie[::-1], variant="exact"), exact_mean(floats(tie), "float32"), "float32")
    for v in ("numpy", "sequential", "pairwise", "kahan", "exact"):
        assert np.isnan(mean(np.array([], np.float32), variant=v))
    check(mean(np.array([1.0, np.inf], np.float64), variant="exact"), math.inf, "float64")
    check(mean(np.array([-np.inf, np.inf], np.float64), variant="exact"), math.nan, "float64")


# ----------------------------------------------------------------------------- formulas


@pytest.mark.parametrize("fmt", STORAGE)
@pytest.mark.parametrize("variant", list(SLOW))
def test_formula_variants_are_the_order_then_one_division(fmt, variant):
    rng = np.random.default_rng(5)
    ar = so.Arith(fmt)
    for size in (1, 2, 5, 17, 64, 300):
        for _ in range(6):
            x = random_values(rng, fmt, size)
            s = SLOW[variant]([ar.conv(v) for v in x.tolist()], ar)
            want = divided(float(s), size, fmt)
            check(mean(x, variant=variant), want, fmt, variant, size)


# ----------------------------------------------------------------------------- numpy


@pytest.mark.parametrize("fmt", STORAGE)
def test_numpy_variant_is_np_mean(fmt):
    """Bit for bit against the installed np.mean, around the pairwise block (128) and the
    float16 cast buffer (8192)."""
    for dist in ("uniform", "normal", "wide", "ill-conditioned"):
        for n in (1, 7, 8, 9, 127, 128, 129, 1000, 8191, 8192, 8193, 20000):
            x = fpx.generate(dist, n, fmt, seed=n)
            got = mean(x, variant="numpy")
            with np.errstate(all="ignore"):
                want = np.mean(x)
            oracle.CHECKED["cases"] += 1
            assert type(got) is type(want) and same(got, want), (dist, n, got, want)


def test_numpy_variant_reads_x_as_np_mean_does_or_refuses_the_layout():
    """np.mean of a 2-D view with a negative stride is not the pairwise sum of its elements
    raveled (for x[::-1], 24 of 30 seeds differed from np.mean, silently): such a layout is
    refused, as by fpx.sum's order "numpy"; the layouts emulated (C, Fortran, 1-D views)
    equal np.mean."""
    x = np.random.default_rng(19).standard_normal((300, 70)).astype(np.float32)
    flat = x[::-1].ravel()  # the old reading: these values, pairwise as one 1-D array
    assert np.mean(x[::-1]) != np.float32(fpx.sum(flat, "numpy") / np.float64(flat.size))
    for view in (x[::-1], x[:, ::-1], np.asfortranarray(x)[::-1]):
        with pytest.raises(ValueError, match="mean: order 'numpy' is NumPy's reduction"):
            mean(view, variant="numpy")
        with pytest.raises(ValueError, match="variance: order 'numpy' is NumPy's reduction"):
            fpx.variance(view, variant="numpy")
    for view in (x, np.asfortranarray(x), x.ravel()[::-3]):
        assert same(mean(view, variant="numpy"), np.mean(view))
        assert same(fpx.variance(view, variant="numpy"), np.var(view))


@pytest.mark.parametrize("seed", [24, 35, 153])
def test_numpy_float16_mean_sums_a_buffered_float32_cast(seed):
    """float16: _mean sums with dtype=float32, the cast going through 8192-element buffers,
    each summed pairwise in turn; cancelling data where one pairwise pass over the whole
    float32 array gives another float16 mean (found by search over seeds)."""
    x = fpx.generate("ill-conditioned", 10_000, "float16", seed)
    with np.errstate(all="ignore"):
        want = np.mean(x)
        whole = np.float16(np.float64(fpx.sum(x.astype(np.float32), "numpy")) / x.size)
    oracle.CHECKED["cases"] += 1
    assert same(mean(x, variant="numpy"), want) and not same(whole, want)


@pytest.mark.parametrize("fmt", ["float16", "float32", "float64"])
def test_numpy_variant_matches_a_slow_definition_of_mean(fmt):
    """_mean written out: umr_sum (float16: the float32 cast summed in 8192-element chunks),
    then the float64 quotient by intp(n), converted to the format."""
    rng = np.random.default_rng(2)
    for n in (3, 100, 9000):
        x = random_values(rng, fmt, n)
        x = x[np.isfinite(x)]
        acc = "float32" if fmt == "float16" else fmt
        ar = so.Arith(acc)
        t = [ar.conv(v) for v in x.tolist()]
        s = so.numpy_sum(t, ar, acc, chunk=8192 if fmt == "float16" else None)
        with np.errstate(all="ignore"):
            want = float(SPECS[fmt][0].type(np.float64(s) / np.float64(x.size)))
        check(mean(x, variant="numpy"), want, fmt, n)


# ----------------------------------------------------------------------------- the op


def test_mean_is_listed_and_runs_in_compare():
    assert "mean" in fpx.ops() and "mean" in registry.op_modules()
    assert list(fpx.variants("mean")) == ["numpy", "sequential", "pairwise", "kahan", "exact"]
    assert fpx.variants("mean", details=True)["numpy"].kind == "library"
    spec = registry.get("mean")
    assert spec.call.__module__ == "fpexplore.ops.mean"  # the whole op is that module
    c = fpx.compare("mean", n=1000)
    rows = dict(zip(c.table["variant"], c.table["value_hex"]))
    assert list(rows) == ["np.mean", "numpy", "sequential", "pairwise", "kahan"]
    x = c.inputs["x"]
    assert np.array_equal(fpx.to_bits(x), fpx.to_bits(fpx.generate("uniform", 1000, "float32", 0)))
    with np.errstate(all="ignore"):
        assert rows["np.mean"] == fpx.hex_string(np.mean(x)) == rows["numpy"]
    for v in ("sequential", "pairwise", "kahan"):
        assert rows[v] == fpx.hex_string(mean(x, variant=v))
    check(c.reference, exact_mean(floats(x), "float32"), "float32")
    # the ulp errors against that reference
    for v, u in zip(c.table["variant"], c.table["ulp_error"]):
        got = c.results[(v, "numpy" if v == "np.mean" else "emulated")]
        assert abs(u) == abs(fpx.ulp_distance(got, c.reference))
    # variant specs: plain names parse; settings it does not take are refused
    assert str(fpx.parse_spec("kahan", "mean")) == "kahan"
    with pytest.raises(ValueError, match="valid variants: numpy, sequential"):
        fpx.compare("mean", n=10, variants=["tree"])
    with pytest.raises(ValueError, match="accumulat"):
        fpx.parse_spec("kahan@float64", "mean")


def test_mean_in_the_explorer():
    pytest.importorskip("ipywidgets")
    app = fpx.explorer(n=1000)
    assert "mean" in app.op.options
    app.op.value = "mean"
    assert app.comparison.op == "mean"
    assert set(app.variants.options) == set(fpx.variants("mean"))
