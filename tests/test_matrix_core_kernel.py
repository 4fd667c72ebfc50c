"""The AMD matrix cores' compiled kernel (fpexplore/orders/_matrix_core_kernels.py) against
the NumPy path it replaced (tests/numpy_matrix_core.py), bit for bit, on every AMD
architecture and input format: K = 1, block - 1, block, block + 1, 2 * block + 3 and long
chains, rows crafted for carries, cancellation, subnormals, the product limit, overflow and
special values, with c's of every kind (zeros of both signs, subnormal, huge, inf, NaN, the
negated sum). The slow exact twin (tests/slow_tensor_core.py) checks the same kernel through
fpx.mma in tests/test_tensor_core.py."""

from __future__ import annotations

import numpy as np
import pytest
from numpy_matrix_core import amd_blocks as numpy_amd_blocks

import fpexplore as fpx
from fpexplore.formats import format_info
from fpexplore.orders import gpu_models, matrix_core

COMBOS = [(arch, fmt) for arch in ("mi100", "mi250", "mi300")
          for fmt in gpu_models.gpu(arch).rules.inputs]  # fmt: skip
MODES = ("any", "window", "tiny", "cancel", "special", "huge")


def _rounded(v, fmt):
    with np.errstate(all="ignore"):
        return np.asarray(fpx.as_format(v, fmt)).astype(np.float64)


def _row(rng, fmt, k, mode):
    """k values of ``fmt`` crafted by ``mode`` (a row of A or a column of B), float64."""
    info = format_info(fmt)
    if mode == "any":
        v = rng.standard_normal(k) * 2.0 ** rng.integers(info.emin, info.emax, k)
    elif mode == "tiny":
        v = rng.standard_normal(k) * info.smallest_normal * 2.0 ** rng.integers(-4, 2, k)
    elif mode == "huge":
        v = rng.standard_normal(k) * 2.0 ** rng.integers(info.emax - 3, info.emax, k)
    else:
        v = rng.standard_normal(k) * 2.0 ** (rng.integers(-6, 6) + rng.integers(0, 3, k))
    v = np.clip(np.nan_to_num(_rounded(v, fmt)), -info.max, info.max)
    if mode == "special":
        infs = [np.inf, -np.inf] if fmt in ("float16", "bfloat16", "tf32") else []  # not FNUZ
        kinds = [np.nan, 0.0, *infs]
        for _ in range(rng.integers(1, 3)):
            v[rng.integers(0, k)] = kinds[rng.integers(0, len(kinds))]
    return v


def _case(rng, fmt, k):
    """One element's (a, b, c): a row, a column and an addend, crafted together."""
    mode = MODES[rng.integers(0, len(MODES))]
    a, b = _row(rng, fmt, k, mode), _row(rng, fmt, k, mode)
    if mode == "cancel" and k > 1:
        a[1::2] = -a[0::2][: len(a[1::2])]
        b[1::2] = b[0::2][: len(b[1::2])]
    with np.errstate(all="ignore"):
        exact = float(np.dot(a, b))
        choices = [0.0, -0.0, 1.0, -3.0, 2.0**-130, 2.0**-149, 3.0e38, np.inf, -np.inf, np.nan,
                   a[0] * b[0], -exact, -a[0] * b[0] * 2.0**-30]  # fmt: skip
        c = float(np.float32(choices[rng.integers(0, len(choices))]))
    return a, b, c


def _compare(arch, fmt, A3, B3, C3) -> int:
    """Elements compared; asserts the kernel's float32 bits are the NumPy path's."""
    rules = gpu_models.gpu(arch).rules
    block, neab = rules.inputs[fmt]
    with np.errstate(all="ignore"):
        want = numpy_amd_blocks(A3, B3, C3, fmt, rules, block, neab).astype(np.float32)
        got = matrix_core.amd_blocks(A3, B3, C3, fmt, rules, block, neab).astype(np.float32)
    same = (got.view(np.uint32) == want.view(np.uint32)) | (np.isnan(got) & np.isnan(want))
    bad = np.argwhere(~same)
    assert bad.size == 0, (arch, fmt, A3.shape, B3.shape, bad[:5], got[~same][:5], want[~same][:5])
    return got.size


@pytest.mark.parametrize("arch,fmt", COMBOS)
def test_kernel_equals_the_numpy_path_on_short_chains(arch, fmt):
    """250 crafted elements for each K of the blocks' edges: 1250 per format, 11250 in all."""
    rng = np.random.default_rng(sum(map(ord, arch + fmt)))
    block = gpu_models.gpu(arch).rules.inputs[fmt][0]
    for k in sorted({1, max(block - 1, 1), block, block + 1, 2 * block + 3}):
        cases = [_case(rng, fmt, k) for _ in range(250)]
        A3 = np.array([[a] for a, _, _ in cases])  # (250, 1, k)
        B3 = np.array([b[:, None] for _, b, _ in cases])  # (250, k, 1)
        C3 = np.array([[[c]] for _, _, c in cases])
        assert _compare(arch, fmt, A3, B3, C3) == 250


@pytest.mark.parametrize("arch,fmt", COMBOS)
def test_kernel_equals_the_numpy_path_on_long_chains_and_matrices(arch, fmt):
    """Long K (chains of hundreds of blocks) on (2, 3, K) @ (2, K, 4) with every row and
    column crafted apart: rows, columns and batches in the kernel's layout."""
    rng = np.random.default_rng(sum(map(ord, fmt + arch)))
    k = 301 if arch == "mi100" else 1001  # the NumPy path's exact sum loops in Python
    A3 = np.array([[_row(rng, fmt, k, MODES[rng.integers(0, 5)]) for _ in range(3)]
                   for _ in range(2)])  # fmt: skip
    B3 = np.array([np.stack([_row(rng, fmt, k, MODES[rng.integers(0, 5)]) for _ in range(4)],
                            axis=1) for _ in range(2)])  # fmt: skip
    C3 = np.float32(rng.standard_normal((2, 3, 4)) * 2.0 ** rng.integers(-20, 20, (2, 3, 4)))
    assert _compare(arch, fmt, A3, B3, C3.astype(np.float64)) == 24


def test_long_dot_products_are_fast_once_compiled():
    """A dot product of 10**5 terms on each AMD architecture: milliseconds (the NumPy path
    took seconds), the same bits through fpx.mma as through amd_blocks."""
    import time

    rng = np.random.default_rng(5)
    x = rng.standard_normal((1, 10**5)).astype(np.float16)
    y = rng.standard_normal((10**5, 1)).astype(np.float16)
    for arch in ("mi100", "mi250", "mi300"):
        fpx.mma(x[:, :8], y[:8], 0.0, arch=arch)  # compiled or loaded from the cache
        t0 = time.perf_counter()
        d = fpx.mma(x, y, 0.0, arch=arch)
        assert time.perf_counter() - t0 < 1.0, arch  # ~10 ms; loose for a loaded machine
        assert np.isfinite(d).all() and d.dtype == np.float32


@pytest.mark.parametrize("fmt", ["float16", "bfloat16"])
def test_exact_sum_rounds_once_past_a_float64_tie(fmt):
    """CDNA1: 1 + 2**-24 + c with c = ±2**-100 is a binary32 midpoint to float64 (which
    drops c) but not exactly: rounded once it goes up for c > 0 and down for c < 0."""
    a = np.array([[[1.0, 2.0**-12]]])
    b = np.array([[[1.0], [2.0**-12]]])
    for c, want in ((2.0**-100, 1 + 2.0**-23), (-(2.0**-100), 1.0), (0.0, 1.0)):
        C3 = np.array([[[c]]])
        assert _compare("mi100", fmt, a, b, C3) == 1
        assert fpx.mma(a[0], b[0], np.float32(C3[0]), arch="mi100", inputs=fmt)[0, 0] == want
