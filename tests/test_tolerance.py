"""The tolerance advisor: its suggestion passes its own data at the stated coverage."""

from __future__ import annotations

import importlib.util
import re
import types

import numpy as np
import pytest

import fpexplore as fpx


def _pair(n=20000, seed=0):
    rng = np.random.default_rng(seed)
    desired = (rng.standard_normal(n) * np.exp2(rng.uniform(-20, 20, n))).astype(np.float32)
    noise = rng.integers(-5, 6, n)
    actual = desired.copy()
    for _ in range(5):  # move each element up to 5 ulps
        step = np.sign(noise) * (np.abs(noise) > _)
        actual = np.where(
            step > 0, fpx.next_up(actual), np.where(step < 0, fpx.next_down(actual), actual)
        )
    return actual, desired


def _passes(a, d, rtol, atol):
    return np.abs(a.astype(float) - d.astype(float)) <= atol + rtol * np.abs(d.astype(float))


@pytest.mark.blas
def test_suggestion_passes_at_full_coverage():
    a, d = _pair()
    t = fpx.suggest_tolerance(a, d)
    assert t.coverage == 1.0 and _passes(a, d, t.rtol, t.atol).all()
    assert t.max_ulp == 5 and t.atol == 0.0
    assert 5 * 2**-24 < t.rtol <= 2 * 5 * 2**-23  # 5 ulps relative, times the margin
    tab = t.table.set_index("check")
    assert tab.loc["np.testing.assert_allclose", "rejected"] > 0.5  # rtol=1e-7 < 1 ulp
    assert tab.loc["suggested", "rejected"] == 0.0
    # float32 data: compared in float64, as the coverage is measured (NumPy would use float32)
    assert t.snippets["numpy"].startswith(
        "np.testing.assert_allclose(np.asarray(actual, np.float64), "
        "np.asarray(desired, np.float64), rtol="
    )


@pytest.mark.blas
def test_coverage_and_zeros_need_atol():
    a, d = _pair(5000, seed=1)
    d = d.copy()
    d[:50] = 0.0  # exact zeros: only an absolute tolerance can pass them
    a = a.copy()
    a[:50] = np.float32(1e-9)
    t = fpx.suggest_tolerance(a, d)
    assert t.atol >= 1e-9 and _passes(a, d, t.rtol, t.atol).all()
    t90 = fpx.suggest_tolerance(a, d, coverage=0.9)
    assert t90.coverage >= 0.9 and t90.rtol <= t.rtol
    assert np.mean(_passes(a, d, t90.rtol, t90.atol)) == pytest.approx(t90.coverage)


def test_fixed_atol_explained_far_from_one():
    d = np.full(100, 1e-10, np.float64)
    a = d * 50  # wrong by a factor of 50
    t = fpx.suggest_tolerance(a, d)
    assert np.allclose(a, d)  # np.allclose's atol=1e-8 swallows it
    assert any("would accept wrong values" in line for line in t.explain().splitlines())
    assert t.table.set_index("check").loc["np.allclose", "rejected"] == 0.0


def test_torch_defaults_by_format_and_errors():
    a, d = _pair(1000)
    tab = fpx.suggest_tolerance(
        np.clip(a, -1e4, 1e4).astype(np.float16), np.clip(d, -1e4, 1e4).astype(np.float16)
    ).table
    row = tab.set_index("check").loc["torch.testing.assert_close"]
    assert (row["rtol"], row["atol"]) == (1e-3, 1e-5)
    with pytest.raises(ValueError, match="coverage"):
        fpx.suggest_tolerance(a, d, coverage=0)
    with pytest.raises(TypeError, match="mixed formats"):
        fpx.suggest_tolerance(a, d.astype(np.float64))


def _snippet_cases():
    """(name, actual, desired) pairs made with plain NumPy, nothing of fpexplore: float16,
    float32 and float64; 1 to 3000 elements; a sum in sequential order (np.cumsum) against
    the float64-accumulated sum rounded once, of normal and of positive terms; few-ulp
    relative perturbations over 12 binades; sums that cancel to near zero; exact zeros in
    ``desired`` against subnormals, one-ulp neighbours elsewhere; NaN and inf in both."""
    rng = np.random.default_rng(20240605)
    cases = []
    for dt in (np.float16, np.float32, np.float64):
        fi = np.finfo(dt)
        k = 8 if dt is np.float16 else 64
        for n in (1, 7, 300, 3000):
            tag = f"{dt.__name__} n={n}"
            for kind, x in (
                ("normal", rng.standard_normal((n, k))),
                ("positive", rng.uniform(0, 1, (n, k))),
            ):
                x = x.astype(dt)
                desired = x.sum(axis=1, dtype=np.float64).astype(dt)
                cases.append((f"cumsum {kind} {tag}", np.cumsum(x, 1, dtype=dt)[:, -1], desired))
            d = (rng.standard_normal(n) * np.exp2(rng.uniform(-6, 6, n))).astype(dt)
            a = (d.astype(np.float64) * (1 + rng.integers(-4, 5, n) * fi.eps / 2)).astype(dt)
            cases.append((f"ulps {tag}", a, d))
            x = rng.standard_normal((n, k)).astype(dt)
            x[:, -1] = -x[:, :-1].sum(axis=1, dtype=np.float64).astype(dt)
            desired = x.sum(axis=1, dtype=np.float64).astype(dt)
            cases.append((f"cancel {tag}", np.cumsum(x, 1, dtype=dt)[:, -1], desired))
            d = rng.uniform(-1, 1, n).astype(dt)
            a = np.nextafter(d, np.where(rng.random(n) < 0.5, -np.inf, np.inf).astype(dt))
            d[::3] = 0
            a[::3] = fi.smallest_subnormal * rng.integers(1, 4, a[::3].size).astype(dt)
            cases.append((f"zeros {tag}", a, d))
        d = rng.standard_normal(50).astype(dt)
        a = np.nextafter(d, np.asarray(np.inf, dt))
        d[[3, 9]] = a[[3, 9]] = np.nan
        d[5] = a[5] = np.inf
        cases.append((f"nan {dt.__name__}", a, d))
    return cases


_CUPY = types.SimpleNamespace(  # cupy.testing.assert_allclose is NumPy's, after asnumpy
    asarray=np.asarray,
    float64=np.float64,
    testing=types.SimpleNamespace(
        assert_allclose=lambda actual, desired, rtol=1e-7, atol=0: np.testing.assert_allclose(
            np.asarray(actual), np.asarray(desired), rtol=rtol, atol=atol
        )
    ),
)


def test_every_snippet_passes_its_own_data():
    """At coverage 1.0 every printed snippet passes the data it was computed from (its
    numbers rounded up, compared the way the coverage was measured), and the numbers it
    prints are never below the suggestion's own."""
    torch = importlib.import_module("torch") if importlib.util.find_spec("torch") else None
    cases = _snippet_cases()
    assert len(cases) >= 40
    failed, low, checked = [], [], 0
    runs = {"numpy": {}, "cupy": {"cupy": _CUPY}, "ulp": {}}
    if torch is not None:
        runs["torch"] = {"torch": torch}
    for name, actual, desired in cases:
        for margin in (1, None):
            t = fpx.suggest_tolerance(
                actual, desired, **({} if margin is None else {"margin": margin})
            )
            where = f"{name} margin={margin or 'default'}"
            if t.coverage != 1.0:  # asked for all: every element passes
                failed.append(f"{where}: coverage {t.coverage}")
            snippets = t.snippets
            for lib in ("numpy", "cupy", "torch"):
                rtol = float(re.search(r"rtol=([^,)]+)", snippets[lib]).group(1))
                atol = float(re.search(r"atol=([^,)]+)", snippets[lib]).group(1))
                if rtol < t.rtol or atol < t.atol:
                    low.append(f"{where}: {snippets[lib]} (rtol={t.rtol!r}, atol={t.atol!r})")
            bound = re.search(r"<= (\d+)$", snippets["ulp"])
            if np.isinf(t.max_ulp):  # no count of ulps bounds it: no check to print
                ok = snippets["ulp"].startswith("#")
            else:
                ok = bound is not None and int(bound.group(1)) >= t.max_ulp
            if not ok:
                low.append(f"{where}: {snippets['ulp']} (max_ulp={t.max_ulp!r})")
            for lib, extra in runs.items():
                env = {"np": np, "fpx": fpx, "actual": actual, "desired": desired, **extra}
                if lib == "torch":
                    env["actual"], env["desired"] = torch.tensor(actual), torch.tensor(desired)
                checked += 1
                try:
                    exec(snippets[lib], env)
                except Exception as e:  # a NameError (an "inf" printed) fails it as well
                    failed.append(f"{where}: {snippets[lib]} ({type(e).__name__})")
    assert not failed and not low, (
        f"{len(failed)} of {checked} snippets fail, {len(low)} printed numbers are below the "
        "suggestion's:\n" + "\n".join(failed + low)
    )


def test_numbers_print_rounded_up_and_compared_in_float64():
    """The two ways a snippet failed its own data: a number printed rounded to nearest (an
    atol of 0.000732421875 printed as 0.000732), and float16 data that NumPy compares in
    float16 (rtol and rtol * |desired| rounded to float16) while the coverage is float64's."""
    d = np.zeros(4, np.float16)
    a = np.array([0, 0, 0, 0.000732421875], np.float16)
    t = fpx.suggest_tolerance(a, d, margin=1)
    assert (t.rtol, t.atol, t.coverage) == (0.0, 0.000732421875, 1.0)
    assert "atol=0.000733)" in t.snippets["numpy"] and "atol=0.000733 " in t.explain()
    with pytest.raises(AssertionError):
        np.testing.assert_allclose(a, d, rtol=0, atol=0.000732)
    d = np.array([0.4705], np.float16)
    a = np.nextafter(d, np.float16(np.inf))  # one ulp: 0.4707
    t = fpx.suggest_tolerance(a, d, margin=1)
    assert t.coverage == 1.0 and "rtol=0.000519," in t.snippets["numpy"]
    with pytest.raises(AssertionError):  # in float16: 0.4705 * 0.000519 rounds below the ulp
        np.testing.assert_allclose(a, d, rtol=0.000519, atol=0)
    exec(t.snippets["numpy"], {"np": np, "actual": a, "desired": d})  # converts to float64
    # inf against a finite value passes no tolerance (NumPy's isclose): the coverage says so
    t = fpx.suggest_tolerance(np.array([1.0, np.inf]), np.array([1.0, 2.0]))
    assert t.coverage == 0.5 and t.atol == 0.0


def test_coverage_covers_that_share_and_no_more():
    """Nine of ten elements one ulp apart and one outlier: coverage=0.9 covers the nine (it
    covered all ten: rtol 98, while max_ulp said 1); margin NaN and coverage 'all' are
    refused by name."""
    d = np.linspace(1, 2, 10).astype(np.float32)
    a = np.nextafter(d, np.float32(3))
    a[9] = 100.0
    one_ulp = max(float(np.spacing(v)) / float(v) for v in d[:9])  # by hand, per element
    t = fpx.suggest_tolerance(a, d, coverage=0.9, margin=1)
    assert t.rtol == pytest.approx(one_ulp, rel=1e-6) and t.max_ulp == 1 and t.coverage == 0.9
    assert fpx.suggest_tolerance(a, d, margin=1).rtol == pytest.approx(49.0)  # (100 - 2) / 2
    with pytest.raises(ValueError, match="margin must be >= 1 and finite, got nan"):
        fpx.suggest_tolerance(a, d, margin=float("nan"))
    with pytest.raises(TypeError, match="coverage must be a number, got 'all'"):
        fpx.suggest_tolerance(a, d, coverage="all")


def test_only_nan_mismatches_give_nan_without_a_warning():
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        t = fpx.suggest_tolerance(np.array([np.nan]), np.array([1.0]))
    # no tolerance passes a NaN against 1: nothing covered, as far apart as can be (pass 18:
    # NaN here, and 0 beside an equal element, where no tolerance passed it)
    assert t.coverage == 0.0 and t.max_abs_diff == np.inf and t.rtol == 0.0 and t.atol == 0.0
    t = fpx.suggest_tolerance(np.array([np.nan, 1.0]), np.array([1.0, 1.0]))
    assert t.coverage == 0.5 and t.max_abs_diff == np.inf
    with pytest.raises(TypeError, match="^suggest_tolerance: actual: boolean input"):
        fpx.suggest_tolerance(True, 1.0)


def test_a_relative_difference_beyond_float64_is_inf_without_a_warning():
    """Pass 23: 1e300 against 1e-300 differ by 1e600 relative, beyond float64: inf, and
    NumPy's "overflow encountered in divide" leaked out of suggest_tolerance."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        t = fpx.suggest_tolerance(np.float64([1.0, 1e300]), np.float64([1.0, 1e-300]))
    assert t.max_rel_diff == np.inf and t.max_abs_diff == 1e300


def test_max_rel_diff_is_inf_where_a_result_overflowed():
    """A result that overflowed to inf against a finite one: the largest relative difference
    is inf, as the largest absolute one (it said 0.0)."""
    t = fpx.suggest_tolerance(np.float32([np.inf, 1.0]), np.float32([3e38, 1.0]))
    assert t.max_abs_diff == t.max_rel_diff == np.inf
    t = fpx.suggest_tolerance(np.float32([3e38, 1.0]), np.float32([np.inf, 1.0]))
    assert t.max_rel_diff == np.inf
    t = fpx.suggest_tolerance(np.float32([1.5, 1.0]), np.float32([1.0, 1.0]))
    assert t.max_rel_diff == 0.5


def test_an_overflow_gets_no_ulp_count():
    """inf against 3e38 is a finite count of ulps apart (inf follows the largest float32),
    but no tolerance passes it: max_ulp covers only what rtol/atol can (it printed a count
    that passes the overflow, beside a coverage of 50%)."""
    t = fpx.suggest_tolerance(np.float32([np.inf, 1]), np.float32([3e38, 1.0000001]))
    assert t.coverage == 0.5 and t.max_ulp == np.inf
    assert "no ULP bound" in t.snippets["ulp"] and "overflow" in t.snippets["ulp"]
    t = fpx.suggest_tolerance(np.float32([np.inf, 1]), np.float32([3e38, 1.0000001]), coverage=0.5)
    assert t.max_ulp == 1.0  # the covered element: 1 and the next float32 up


def test_max_ulp_covers_every_element_the_suggested_rtol_passes():
    """Pass 6 (issue 36): at coverage=0.95 the margin's rtol passed all 100 elements
    (coverage 1.0) while max_ulp was the 95th smallest distance, so the ulp snippet, offered
    as the alternative, failed its own data. The oracle: the distances by plain NumPy (one
    float32 step per np.nextafter) of the elements np.isclose passes in float64."""
    rng = np.random.default_rng(1)
    d = rng.standard_normal(100).astype(np.float32)
    a = d.copy()
    a[:10] *= np.float32(1.01)
    a[10:] = np.nextafter(a[10:], np.float32(np.inf))
    t = fpx.suggest_tolerance(a, d, coverage=0.95)
    passed = np.isclose(a.astype(np.float64), d.astype(np.float64), rtol=t.rtol, atol=t.atol)
    assert t.coverage == passed.mean() == 1.0
    steps = np.abs(a.view(np.int32).astype(np.int64) - d.view(np.int32).astype(np.int64))
    assert np.all(np.sign(a) == np.sign(d)) and t.max_ulp == steps[passed].max()
    exec(t.snippets["ulp"], {"np": np, "fpx": fpx, "actual": a, "desired": d})


def test_coverage_and_max_ulp_are_those_of_the_printed_tolerances():
    """Pass 7 (issue 36): the snippets print rtol rounded up to three digits (0.000101),
    which passed all four elements here, while coverage said 0.5 and max_ulp 839 (the ulp
    snippet failed on 840 and 841). The oracle: np.isclose with the printed numbers, and
    the float32 steps counted on the bit patterns."""
    d = np.ones(4, np.float32)
    a = np.float32(1) + np.array([1.0000e-4, 1.0005e-4, 1.0010e-4, 1.0020e-4], np.float32)
    t = fpx.suggest_tolerance(a, d, coverage=0.25, margin=1.0)
    assert "rtol=0.000101, atol=0" in t.snippets["numpy"]
    passed = np.isclose(a.astype(np.float64), d.astype(np.float64), rtol=0.000101, atol=0)
    assert t.coverage == passed.mean() == 1.0
    steps = a.view(np.int32).astype(np.int64) - d.view(np.int32).astype(np.int64)
    assert t.max_ulp == steps.max() == 841
    for name in ("numpy", "ulp"):
        exec(t.snippets[name], {"np": np, "fpx": fpx, "actual": a, "desired": d})


def test_an_uncovered_nan_fails_the_ulp_snippet_as_an_assertion():
    """Pass 7: at coverage < 1 the ulp snippet met a NaN against a number among the elements
    left uncovered, and raised ulp_distance's ValueError; it fails as an assertion, like the
    others."""
    d = np.linspace(1, 2, 20)
    a = d.copy()
    a[7] = np.nan
    t = fpx.suggest_tolerance(a, d, coverage=0.9)
    assert t.coverage < 1 and "sentinel" in t.snippets["ulp"]
    with pytest.raises(AssertionError):
        exec(t.snippets["ulp"], {"np": np, "fpx": fpx, "actual": a, "desired": d})


def test_actual_and_desired_of_two_shapes_are_refused():
    """Pass 8: a (2, 50) actual against a (50,) desired was measured broadcast, at coverage
    1.0, while np.testing.assert_allclose, which the snippet calls, refuses the two shapes:
    the snippet failed on its own data. The shapes must be one, as the checks need."""
    d = np.random.default_rng(0).standard_normal(50).astype(np.float32)
    a = np.stack([d, d])
    with pytest.raises(AssertionError, match="shape"):  # what the snippet would have met
        np.testing.assert_allclose(np.asarray(a, np.float64), np.asarray(d, np.float64))
    with pytest.raises(ValueError, match=r"actual has shape \(2, 50\) and desired \(50,\)"):
        fpx.suggest_tolerance(a, d)
    t = fpx.suggest_tolerance(a, np.broadcast_to(d, a.shape))  # as the message says
    exec(t.snippets["numpy"], {"np": np, "actual": a, "desired": np.broadcast_to(d, a.shape)})


def test_nan_against_a_number_is_the_largest_difference_not_left_out():
    """Pass 18: an element NaN in one array and 1 in the other was left out of the largest
    differences: "the largest difference is 0" beside a coverage of 0.5."""
    t = fpx.suggest_tolerance(np.array([np.nan, 1], np.float32), np.array([1, 1], np.float32))
    assert t.coverage == 0.5 and t.max_abs_diff == np.inf and t.max_rel_diff == np.inf
    assert "the largest difference is inf" in t.notes[0]
    both = fpx.suggest_tolerance(
        np.array([np.nan, 1], np.float32), np.array([np.nan, 1], np.float32)
    )
    assert both.max_abs_diff == 0 and both.coverage == 1.0 and both.both_nan == 1


def test_a_numpy_margin_is_the_number_it_equals():
    """Pass 19: margin=np.float16(2) computed rtol in float16 (0: the advice passed half the
    elements); margin=np.float32(3) failed inside Decimal."""
    a, d = np.array([1.0, 2.0]), np.array([1.0, 2.0000000000000004])
    for m in (np.float16(2), np.float32(2), np.int64(2)):
        t = fpx.suggest_tolerance(a, d, margin=m)
        want = fpx.suggest_tolerance(a, d, margin=2.0)
        assert (t.rtol, t.atol, t.coverage, type(t.rtol)) == (want.rtol, want.atol, 1.0, float)
    with pytest.raises(ValueError, match="margin must be a float64 number"):
        fpx.suggest_tolerance(a, d, margin=np.longdouble(2) + np.finfo(np.longdouble).eps * 2)


def test_a_tolerance_past_float64_is_printed_by_no_snippet():
    """Pass 19: rtol times the margin overflowed (or printed rounded up past 1.79e308):
    the snippets read ``rtol=inf``, a NameError in Python, and a tolerance passing
    anything. No finite printed tolerance passes such an element: it is not covered."""
    for actual, desired in (([1.79e308], [1.0]), ([1e308], [0.0]), ([1e308, 1.0], [0.0, 1.0])):
        t = fpx.suggest_tolerance(np.array(actual), np.array(desired))
        assert np.isfinite(t.rtol) and np.isfinite(t.atol)
        assert t.coverage == (len(actual) - 1) / len(actual)
        for code in t.snippets.values():
            assert "=inf" not in code and "inf)" not in code, code


def test_the_largest_relative_difference_takes_every_element():
    """Pass 19: the largest relative difference left out the tiny desired values the rtol is
    not fitted on: "the largest relative difference 0" for 2e-32 against 1e-32 (float32,
    both normal). Oracle: Fraction."""
    from fractions import Fraction

    for actual, desired, dtype in (
        ([2e-32], [1e-32], np.float32),
        ([1e-300, 1.0], [3e-300, 1.0], np.float64),
    ):
        a, d = np.array(actual, dtype), np.array(desired, dtype)
        want = max(
            abs(Fraction(float(x)) - Fraction(float(y))) / abs(Fraction(float(y)))
            for x, y in zip(a, d)
        )
        t = fpx.suggest_tolerance(a, d)
        assert t.max_rel_diff == pytest.approx(float(want), rel=1e-15)
    t = fpx.suggest_tolerance(np.array([1e-3, 2e-3]), np.array([0.0, 0.0]))
    assert t.max_rel_diff == np.inf


def test_coverage_is_the_share_as_written():
    """Pass 20 (issue 36): coverage=0.28 of 25 elements asked for 8 (0.28's binary value is above
    7/25): the share is the decimal the user wrote, 7 elements; rtol is the 7th smallest relative
    difference (margin 1), and the 8th (a wider one) fails."""
    d = np.full(25, 1.0)
    a = 1.0 + np.arange(1, 26) * 2.0**-40  # relative differences k * 2^-40, one each
    t = fpx.suggest_tolerance(a, d, coverage=0.28, margin=1)
    assert 7 * 2.0**-40 <= t.rtol < 8 * 2.0**-40 and t.atol == 0.0
    assert t.coverage == 7 / 25
    assert fpx.suggest_tolerance(a, d, coverage=0.32, margin=1).coverage == 8 / 25
