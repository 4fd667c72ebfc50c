"""Numbers shown by notebooks 15 (GPU tree reduction with atomics) and 16 (tolerances)."""

from __future__ import annotations

import numpy as np
import pytest

import fpexplore as fpx

import worst_case


@pytest.mark.blas
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


def _tolerance_case():
    rng = np.random.default_rng(0)
    a = rng.uniform(0, 1, (400, 400)).astype(np.float32)
    b = rng.uniform(0, 1, (400, 400)).astype(np.float32)
    return rng, a, b


def test_case_tolerances_numbers():
    """Notebook 16's story. Its CPU side is NumPy's ``a @ b``, whose order is the BLAS
    kernel's: OpenBLAS's x86-64 kernels alone give 27% to 70% rejected by
    assert_allclose's defaults on this product. So the numbers are asserted for the emulated
    order of a kernel that accumulates along k with FMA (bit for bit OpenBLAS's AVX-512 kernel
    on this product) and the same without FMA (its SSE kernel);
    test_case_tolerances_on_numpys_own_product checks what holds for NumPy's own."""
    rng, a, b = _tolerance_case()
    gpu = fpx.matmul(a, b, "tree", block=32)
    for fma, rtol, rejected in (
        (True, 2.4904923508807975e-06, 0.70185),
        (False, 2.5827768588662854e-06, 0.70265),
    ):
        cpu = fpx.matmul(a, b, "sequential", fma=fma)
        assert np.allclose(gpu, cpu)
        t = fpx.suggest_tolerance(gpu, cpu)
        assert (t.atol, t.rtol, t.coverage, t.max_ulp) == (0, rtol, 1.0, 17)
        assert np.all(np.abs(gpu.astype(float) - cpu) <= t.rtol * np.abs(cpu))
        tab = t.table.set_index("check")
        # rtol=1e-7 is about one ulp here (2**-17 is 6e-8 to 1e-7 of the entries): 2 ulps fail
        assert tab.loc["np.testing.assert_allclose", "rejected"] == rejected
        assert tab.loc["torch.testing.assert_close", "rejected"] == 0.0
    desired = 1e-10 * rng.uniform(1, 2, 1000)
    assert np.allclose(desired * 1.5, desired)  # atol=1e-8 swallows a 50% error at 1e-10
    assert not np.allclose(1e6 * 1.5 * desired / 1e-10, 1e6 * desired / 1e-10)


@pytest.mark.blas
def test_case_tolerances_on_numpys_own_product():
    """What notebook 16 shows for NumPy's own ``a @ b`` holds for every BLAS kernel and
    thread count: the product is within Higham's worst-case bound of the exact one, and the
    advice describes the data it was given."""
    _, a, b = _tolerance_case()
    cpu = a @ b
    gpu = fpx.matmul(a, b, "tree", block=32)
    exact = fpx.matmul(a, b, "exact")
    bound = worst_case.matmul_bound(a, b)  # any order, any FMA use, any threads
    assert np.all(worst_case.within_bound(cpu, exact, bound))
    # ... and the bound has teeth: a product of inputs rounded to tf32 breaks it
    tf32 = fpx.matmul(a, b, "sequential", fma=True, input_rounding="tf32")
    assert not np.all(worst_case.within_bound(tf32, exact, bound))
    t = fpx.suggest_tolerance(gpu, cpu)
    diff = np.abs(gpu.astype(np.float64) - cpu)
    assert t.coverage == 1.0 and t.atol == 0 and np.all(diff <= t.rtol * np.abs(cpu))
    assert t.rtol == 2 * float(np.max(diff / np.abs(cpu)))  # the largest, times the margin
    assert t.max_ulp == int(np.abs(fpx.ulp_distance(cpu, gpu)).max())
    tab = t.table.set_index("check")
    for check, rtol, atol in (
        ("np.testing.assert_allclose", 1e-7, 0),
        ("torch.testing.assert_close", 1.3e-6, 1e-5),
    ):
        assert tab.loc[check, "rejected"] == np.mean(diff > atol + rtol * np.abs(cpu)), check
