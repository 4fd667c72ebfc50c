"""Metrics against exact Fraction arithmetic; error bounds hold for every order."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest

import fpexplore as fpx
from fpexplore import metrics
from fpexplore.orders.registry import orders_of


def test_ulp_and_bits_error():
    r = np.array([1.0, 1.0, np.nan, 1.0, np.nan, 0.0], np.float32)
    v = np.array([1.0 + 2**-23, 1.0 - 2**-24, np.nan, np.nan, 1.0, -0.0], np.float32)
    u = metrics.ulp_error(v, r)
    assert u.tolist() == [1, -1, 0, fpx.ULP_NAN, fpx.ULP_NAN, 0]
    b = metrics.bits_error(u)
    assert b[0] == 1.0 and b[2] == 0.0 and np.isinf(b[3])
    assert metrics.bits_error(7) == 3.0  # Herbie: log2(1 + 7)


def test_rel_error_is_exact():
    v = np.array([0.1, 1e-300, 0.0, np.inf, np.nan, 3.0])
    r = np.array([0.1 + 2**-56, 2e-300, 0.0, np.inf, np.nan, 0.0])
    got = metrics.rel_error(v, r)
    want0 = float(abs(Fraction(0.1) - Fraction(0.1 + 2**-56)) / Fraction(0.1 + 2**-56))
    assert got[0] == want0 and got[1] == 0.5 and got[2] == 0.0
    assert got[3] == 0.0 and got[4] == 0.0 and got[5] == math.inf


def test_rel_error_past_float64s_largest():
    """Issue 36: against a subnormal reference the exact relative error may pass float64's
    largest value: rel_error raised OverflowError (compare("sum") of [16, 2**-49, -16,
    -2**-49, 2**-1074] crashed); it is inf. And max_rel located the largest in float64,
    where 1.7e308 - (-1.7e308) overflows: it took that element (exactly 2) over one of 1e10."""
    assert metrics.rel_error(1.0, 5e-324) == math.inf
    s = metrics.summarize(np.array([1.7e308, 1.0]), np.array([-1.7e308, 1e-10]))
    want = float(abs(Fraction(1.0) - Fraction(1e-10)) / Fraction(1e-10))
    assert s["max_rel"] == want
    assert metrics.summarize(np.array([1.7e308]), np.array([-1.7e308]))["max_rel"] == 2.0
    x = np.array([16.0, 2.0**-49, -16.0, -(2.0**-49), 2.0**-1074])
    t = fpx.compare("sum", inputs=x, variants=["sequential", "tree"]).table.set_index("variant")
    assert t.loc["sequential", "rel_error"] == math.inf and t.loc["tree", "rel_error"] == 0.0


def test_summarize():
    r = np.array([1, 2, 3, 4], np.float32)
    v = r.copy()
    v[1] = fpx.next_up(v[1])
    v[3] = fpx.next_down(fpx.next_down(v[3]))
    s = metrics.summarize(v, r)
    assert s["n"] == 4 and s["exact_share"] == 0.5
    assert s["max_abs_ulp"] == 2 and s["mean_abs_ulp"] == 0.75 and s["ulp"] == -2
    assert s["max_bits"] == math.log2(3)
    assert s["max_rel"] == 2.0**-23  # two ulps of 2^-22 below 4, relative to 4
    one = metrics.summarize(np.float32(1.5), np.float32(1.5))
    assert one["ulp"] == 0 and one["exact_share"] == 1.0


def test_a_nan_against_a_number_is_the_largest_error_never_zero():
    """A result NaN where the reference is a number (or the reverse) has no relative error
    smaller than any other: max_rel is inf (it was 0.0, the NaN skipped), like max_abs_ulp;
    NaN against NaN is exact."""
    for v, r in ((np.float32("nan"), np.float32(1.5)), (np.float32(1.5), np.float32("nan"))):
        s = metrics.summarize(v, r)
        assert s["max_rel"] == math.inf and s["max_abs_ulp"] == math.inf
    s = metrics.summarize(np.array([1, np.nan], np.float32), np.array([1, 2], np.float32))
    assert s["max_rel"] == math.inf and s["exact_share"] == 0.5
    s = metrics.summarize(np.float32("nan"), np.float32("nan"))
    assert s["max_rel"] == 0.0 and s["exact_share"] == 1.0


def test_a_nan_result_in_the_table_and_the_one_line_answer():
    """float16 [6e4, 6e4, -6e4, -6e4, 1] x 3 summed pairwise gives inf + -inf = NaN; the
    exact sum is 3. The table says "nan" ulps and "inf" relative error for it (not the
    sentinel -9223372036854775808 and 0), and the one-line answer says it is NaN."""
    from fpexplore.app.render import verdict

    x = np.array([60000, 60000, -60000, -60000, 1] * 3, np.float16)
    cmp = fpx.compare("sum", inputs=x, variants=["pairwise", "sequential"])
    rows = cmp.formatted().set_index("variant")
    assert rows.loc["pairwise", "value"] == "nan"
    assert (rows.loc["pairwise", "ulp_error"], rows.loc["pairwise", "rel_error"]) == ("nan", "inf")
    assert rows.loc["sequential", "value"] == "inf"  # 6e4 + 6e4 overflows first
    assert "pairwise is NaN where the exact sum is not" in verdict(cmp)


# the orders defined in docs/orders.md (library loops have no accumulator setting or depth;
# the unlisted 'revealed' order is whatever tree it is given)
DEFINED = [
    o for o, s in orders_of("sum").items() if s.library is None and o != "exact" and s.listed
]


@pytest.mark.parametrize("order", DEFINED)
@pytest.mark.parametrize("fmt", ["float16", "float32"])
def test_sum_bounds_hold(order, fmt):
    """|computed - exact| <= bound for every order, on benign and cancelling data."""
    rng = np.random.default_rng(1)
    for n in (2, 17, 1000, 20000):
        for kind in ("uniform", "cancel", "wide"):
            x = rng.uniform(0, 1, n)
            if kind == "cancel":
                x = np.concatenate([x, -x[: n // 2] * (1 + 1e-3)])
            if kind == "wide":
                x = rng.standard_normal(n) * np.exp2(rng.uniform(-8, 8, n))
            x = (x * (16 / n)).astype(fmt)  # keep float16 sums finite
            got = fpx.sum(x, order, accumulate=fmt)
            exact = sum((Fraction(float(v)) for v in x), Fraction(0))
            err = abs(Fraction(float(got)) - exact)
            bound = metrics.sum_bound(x, order, fmt)
            if math.isfinite(bound):  # gamma_d is infinite once d*u >= 1 (vacuous)
                assert err <= Fraction(bound), (order, n, kind)


def test_probabilistic_bound_is_tighter_and_usually_holds():
    rng = np.random.default_rng(2)
    held = 0
    for _ in range(50):
        x = rng.uniform(0, 1, 10000).astype(np.float32)
        err = abs(float(fpx.sum(x, "sequential")) - float(fpx.exact_sum(x.astype(np.float64))))
        held += err <= metrics.sum_bound(x, "probabilistic", lam=3.0)
        assert metrics.sum_bound(x, "probabilistic") < metrics.sum_bound(x, "sequential")
    assert held >= 45


def test_dot_bound_and_gamma():
    assert metrics.gamma(1, "float32") == 2**-24 / (1 - 2**-24)
    assert metrics.gamma(2**30, "float16") == math.inf
    rng = np.random.default_rng(3)
    a, b = rng.standard_normal((2, 500)).astype(np.float32)
    err = abs(
        Fraction(float(fpx.dot(a, b)))
        - sum(Fraction(float(p)) * Fraction(float(q)) for p, q in zip(a, b))
    )
    assert err <= Fraction(metrics.dot_bound(a, b))
    with pytest.raises(ValueError, match="unknown order 'magic' for sum; valid orders: seq"):
        metrics.sum_bound(np.ones(4), "magic")
    with pytest.raises(ValueError, match="no depth for order 'kahan'"):
        metrics.sum_depth(4, "kahan")  # compensated: sum_bound has its own bound


def _key64(f: float) -> int:
    """float64 ordered key from the bits (Python ints: no overflow, no rounding)."""
    import struct

    b = struct.unpack("<q", struct.pack("<d", f))[0]
    return b if b >= 0 else -(b & 0x7FFFFFFFFFFFFFFF)


def test_largest_ulp_difference_beyond_2_53_is_exact():
    """float64 results far apart are more than 2**53 ulps apart: compare's max_abs_ulp,
    summarize, fpx.diff and the explorer's one-line answer gave the count rounded through
    float64 (4488560370910694400 for 4488560370910694567) (issue 36)."""
    from fpexplore.app.render import verdict

    want = _key64(1.0) - _key64(1e-300)  # 1 + 1e100 - 1e100 + 1e-300 summed in order
    assert want > 2**53 and want % 2**10  # not representable in float64
    s = metrics.summarize(np.array([1e-300, 2.0]), np.array([1.0, 2.0]))
    assert s["max_abs_ulp"] == want and s["ulp"] == -want
    d = fpx.diff(np.array([1.0, 2.0]), np.array([1e-300, 2.0]))
    assert d.summary["max_abs_ulp"] == want and f"{want:,} ulps" in repr(d)
    A = np.array([[1.0, 1e100, -1e100, 1e-300]])
    cmp = fpx.compare("matmul", inputs=(A, np.ones((4, 1))), variants=["sequential"])
    row = cmp.table.set_index("variant").loc["sequential"]
    assert row["max_abs_ulp"] == want
    assert f"{want:,} ulps" in verdict(cmp)
    assert cmp.formatted().set_index("variant").loc["sequential", "max_abs_ulp"] == str(want)


def test_saturated_ulp_distance_is_stated_as_a_lower_bound():
    """-1e308 against 1e308 is more than 2**63 - 1 float64 ulps apart (ulp_distance
    saturates): the one-line answer says "or more", never a count that is not the distance."""
    from fpexplore.app.render import ulps

    true = _key64(1e308) - _key64(-1e308)
    assert true > 2**63 - 1
    s = metrics.summarize(np.array([-1e308, 0.0]), np.array([1e308, 0.0]))
    assert s["max_abs_ulp"] == 2**63 - 1
    assert ulps(s["max_abs_ulp"]) == f"{2**63 - 1:,} or more ulps"
