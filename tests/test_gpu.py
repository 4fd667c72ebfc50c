"""GPU verification (marked gpu; skipped cleanly without CuPy and a CUDA device).

fpexplore's own order kernels must equal the emulated orders bit for bit; cupy.sum is compared
with the `cub` and `cupy-kernel` emulations (the detective fits their parameters); the
recorder runs."""

from __future__ import annotations

import numpy as np
import pytest

import fpexplore as fpx
from fpexplore.backends import cupy as gpu
from fpexplore.ops.registry import OP_SPECS

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(not gpu.status()[0], reason=f"no GPU: {gpu.status()[1]}"),
]

ORDERS = [
    ("sequential", {}),
    ("blocked", {"block": 128}),
    ("blocked", {"block": 1000}),
    ("tree", {"block": 128}),
    ("tree", {"block": 1024}),
    ("tree-strided", {"block": 256}),
    ("kahan", {}),
]


@pytest.mark.parametrize("fmt", ["float32", "float64"])
@pytest.mark.parametrize("order,params", ORDERS, ids=str)
def test_kernels_equal_emulation(order, params, fmt):
    for n in (1, 127, 1000, 100_003):
        for dist in ("uniform", "wide", "ill-conditioned"):
            x = fpx.generate(dist, n, fmt, seed=n)
            y = fpx.generate("normal", n, fmt, seed=n + 1)
            assert gpu.kernel_sum(x, order, **params) == fpx.sum(x, order, **params)
            fusable = order in ("sequential", "blocked", "kahan")
            for fma in (False, True) if fusable else (False,):
                got = gpu.kernel_sum(x, order, y=y, fma=fma, **params)
                assert got == fpx.dot(x, y, order, fma=fma, **params), (order, n, dist, fma)


@pytest.mark.parametrize("order,params", ORDERS, ids=str)
def test_kernels_keep_float32_subnormals(order, params):
    """CuPy compiles with -ftz=true; the kernels' inline PTX must still keep subnormals."""
    x = np.arange(1, 3001, dtype=np.float32) * np.float32(2.0**-149)  # all subnormal
    x[::3] *= -1
    assert gpu.kernel_sum(x, order, **params) == fpx.sum(x, order, **params)


def test_atomic_add_flushes_float32_subnormal_block_results():
    """atomicAdd(float*) flushes subnormals whatever the flags; the emulation does too."""
    x = np.zeros(256, dtype=np.float32)
    x[::2] = np.float32(2.0**-140)
    got = gpu.kernel_sum(x, "tree", block=2, combine="atomic")
    assert got == 0.0 == fpx.sum(x, "tree", block=2, combine="atomic")
    assert gpu.kernel_sum(x, "tree", block=2) == fpx.sum(x, "tree", block=2) == 128 * 2.0**-140


def test_atomic_tree_partials_and_spread():
    x = fpx.generate("normal", 10**6, "float32", seed=0)
    _, parts = gpu.kernel_sum(x, "tree", block=128, combine="atomic", return_partials=True)
    from fpexplore.orders import _kernels

    want = _kernels.tree_partials(x, x[:1], False, False, np.float32(0), (0, 0, 0.0), 128, False)
    assert np.array_equal(parts, want)
    runs = {float(gpu.kernel_sum(x, "tree", block=128, combine="atomic")) for _ in range(50)}
    bound = fpx.metrics.sum_bound(x, "sequential")
    assert all(abs(r - float(fpx.exact_sum(x))) <= bound for r in runs)


def test_cupy_sum_against_cub_and_cupy_kernel_hypotheses():
    """Which emulation reproduces cupy.sum on this GPU? The answer goes in the README."""
    xs = [fpx.generate("wide", n, "float32", seed=n) for n in (4097, 100_003, 3_000_017)]
    observed = [gpu.library("sum", x) for x in xs]
    cands = [
        fpx.VariantSpec("cub", (("max_blocks", m), ("thread_reduce", t)))
        for m in (132 * 8 * 5, 132 * 6 * 5, 114 * 8 * 5, 108 * 8 * 5, 80 * 8 * 5)
        for t in ("tree", "sequential")
    ]
    cands += [fpx.VariantSpec("cupy-kernel", (("ftz", True),))]
    df = fpx.match_orders(xs, observed, "sum", cands, top=None)
    print(df[["variant", "exact", "exact_matches", "max_ulp"]].head(10).to_string())
    assert df["exact_matches"].max() >= 1


def test_recorder_quick(tmp_path):
    from fpexplore import record

    assert record.main(["--quick", "--out", str(tmp_path)]) == 0
    assert list(tmp_path.glob("gpu_*.json.gz"))


@pytest.mark.parametrize("op", sorted(fpx.ops()))
def test_compare_gives_a_measured_cupy_row_for_every_op(op):
    """A user's first GPU call: compare() with the cupy backend, for every op: a row measured
    with CuPy's own function, or a message saying the op has no CuPy row."""
    n = 100 if op in ("matmul", "cdist") else 1000
    cmp = fpx.compare(op, n=n, backends=("numpy", "emulated", "cupy"))
    rows = cmp.table[cmp.table["backend"] == "cupy"]
    print(op, rows[["variant", "device", "max_abs_ulp", "time_ms"]].to_string(), cmp.messages)
    if len(rows):
        assert list(rows["variant"]) == [OP_SPECS[op].gpu_label]
        assert list(rows["device"]) == [gpu.status()[1]]  # the GPU, not this machine's CPU
    else:
        assert any("no CuPy row" in m for m in cmp.messages), cmp.messages


def test_on_gpu_runs_cupys_functions_and_the_order_kernels():
    x = fpx.generate("normal", 10_000, "float32", seed=3)
    y = fpx.generate("normal", 10_000, "float32", seed=4)
    assert fpx.on_gpu("sum", x) == gpu.library("sum", x)
    assert fpx.on_gpu("dot", x, y, order="sequential", fma=True) == fpx.dot(
        x, y, "sequential", fma=True
    )
    got = fpx.on_gpu("linspace", np.float32(0), np.float32(1), 2000)
    assert got.dtype == np.float32 and got.shape == (2000,)
    assert np.array_equal(got, fpx.linspace(np.float32(0), np.float32(1), 2000, variant="cupy"))


def test_explain_on_a_measured_cupy_sum_is_never_confidently_wrong():
    """The debugging user's question on real numbers: np.sum against cupy.sum (both
    deterministic: the cause is the order). Explain may say it cannot tell, never that the
    cause is nondeterminism; with both functions given (fn=) it probes them."""
    x = fpx.generate("wide", 100_003, "float32", seed=5)
    gpu_sum = fpx.on_gpu("sum", x)
    e = fpx.explain("sum", x, {"cpu": np.sum(x), "gpu": gpu_sum})
    print(e)
    text = str(e).lower()
    assert "cause: nondeterminism (decided" not in text
    assert "cause: order (decided" in text or "cannot tell" in text
    e = fpx.explain("sum", x, {"cpu": np.sum(x), "gpu": gpu_sum},
                    fn={"cpu": np.sum, "gpu": lambda v: fpx.on_gpu("sum", v)})  # fmt: skip
    print(e)
    assert "cause: nondeterminism (decided" not in str(e).lower()
