"""Numbers shown by notebooks 15 (GPU tree reduction with atomics) and 16 (tolerances)."""

from __future__ import annotations

import numpy as np

import fpexplore as fpx


def test_case_gpu_reduction_numbers():
    x = fpx.generate("normal", 10**6, "float32", seed=0)
    exact = fpx.exact_sum(x)
    assert float(exact) == 998.5706787109375
    assert fpx.ulp_distance(exact, np.sum(x)) == -2  # NumPy >= 2.3's pairwise sum
    assert fpx.ulp_distance(exact, fpx.sum(x, "tree", block=128)) == 3
    assert fpx.ulp_distance(exact, fpx.sum(x, "tree", combine="atomic", seed=1)) == 36
    runs = np.array([fpx.sum(x, "tree", combine="atomic", seed=s) for s in range(200)])
    values = np.unique(runs)
    ulps = [int(fpx.ulp_distance(exact, v)) for v in values]
    assert len(values) == 80 and min(ulps) == -70 and max(ulps) == 75
    bound = fpx.metrics.sum_bound(x, "sequential")  # any order's worst case
    assert all(abs(float(v) - float(exact)) <= bound for v in values)


def test_case_integers_in_float32():
    for n, error in ((4096, 0), (10**4, 0), (10**5, 26448), (10**6, -13395680)):
        a32 = fpx.as_format(np.arange(n, dtype=np.int64), "float32")
        assert float(fpx.sum(a32, "tree", block=128)) - n * (n - 1) // 2 == error
    n = 2 * 10**7
    a32 = fpx.as_format(np.arange(n, dtype=np.int64), "float32")
    assert int(np.sum(a32.astype(np.float64) != np.arange(n))) == 1611392  # odd ones > 2^24
    assert float(fpx.as_format(2**24 + 1, "float32")) == 2**24


def test_case_tolerances_numbers():
    rng = np.random.default_rng(0)
    a = rng.uniform(0, 1, (400, 400)).astype(np.float32)
    b = rng.uniform(0, 1, (400, 400)).astype(np.float32)
    cpu = a @ b
    gpu = fpx.matmul(a, b, "tree", block=32)
    assert np.allclose(gpu, cpu)
    t = fpx.suggest_tolerance(gpu, cpu)
    assert t.atol == 0 and 1e-6 < t.rtol < 5e-6 and t.coverage == 1.0
    assert np.all(np.abs(gpu.astype(float) - cpu) <= t.rtol * np.abs(cpu))
    tab = t.table.set_index("check")
    assert tab.loc["np.testing.assert_allclose", "rejected"] > 0.5
    assert tab.loc["torch.testing.assert_close", "rejected"] == 0.0
    desired = 1e-10 * rng.uniform(1, 2, 1000)
    assert np.allclose(desired * 1.5, desired)  # atol=1e-8 swallows a 50% error at 1e-10
    assert not np.allclose(1e6 * 1.5 * desired / 1e-10, 1e6 * desired / 1e-10)
