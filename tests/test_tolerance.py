"""The tolerance advisor: its suggestion passes its own data at the stated coverage."""

from __future__ import annotations

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
    assert "np.testing.assert_allclose(actual, desired, rtol=" in t.snippets["numpy"]


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
