"""fpexplore's CUDA order kernels, executed on the CPU (tests/cuda_on_cpu.py), against the
emulated orders bit for bit.

The kernel source and the real launch code of ``fpexplore.backends.cupy.kernel_sum`` run
with one OS thread per CUDA thread, a barrier for ``__syncthreads()`` and IEEE arithmetic on
this CPU in place of the inline PTX. This checks the kernels' order logic — indexing, block
partitioning, padding, the tree levels, the fused branches, null pointers, the launch sizes —
not a GPU: tests/test_cuda_source.py checks the instructions, tests/test_gpu.py a real device.
"""

from __future__ import annotations

import dataclasses
import sys

import numpy as np
import pytest

import fpexplore as fpx
from fpexplore.backends import cupy as gpu

import cuda_on_cpu

ok, why = cuda_on_cpu.available()
pytestmark = pytest.mark.skipif(not ok, reason=why)

ORDERS = [
    ("sequential", {}),
    ("blocked", {"block": 7}),
    ("blocked", {"block": 128}),
    ("tree", {"block": 2}),
    ("tree", {"block": 64}),
    ("tree", {"block": 256}),
    ("tree-strided", {"block": 32}),
    ("tree-strided", {"block": 128}),
    ("kahan", {}),
]
FUSABLE = {"sequential", "blocked", "tree", "tree-strided", "kahan"}


@pytest.fixture(scope="module")
def on_cpu(tmp_path_factory):
    """kernel_sum with CuPy replaced by the CPU stand-in (the module's CuPy status and kernel
    cache are restored afterwards)."""
    fake = cuda_on_cpu.FakeCupy(tmp_path_factory.mktemp("cuda_cpu"))
    saved = (sys.modules.get("cupy"), gpu._STATUS, dict(gpu._MODULES))
    sys.modules["cupy"] = fake
    gpu._STATUS = (True, "CPU stand-in for CuPy (tests/cuda_on_cpu.py), not a GPU")
    gpu._MODULES.clear()
    yield gpu.kernel_sum
    mod, gpu._STATUS, modules = saved
    gpu._MODULES.clear()
    gpu._MODULES.update(modules)
    if mod is None:
        sys.modules.pop("cupy", None)
    else:
        sys.modules["cupy"] = mod


def inputs(fmt, n, kind, seed):
    if kind == "subnormal":  # float32/float64 subnormals and a few normals: nothing may flush
        tiny = fpx.format_info(fmt).smallest_subnormal
        rng = np.random.default_rng(seed)
        x = rng.integers(-(2**20), 2**20, n).astype(np.float64) * tiny
        x[::17] = rng.uniform(-1e-30, 1e-30, x[::17].size)
        return np.asarray(x, dtype=fmt)
    return fpx.generate(kind, n, fmt, seed=seed)


@pytest.mark.parametrize("fmt", ["float32", "float64"])
@pytest.mark.parametrize("order,params", ORDERS, ids=str)
def test_kernels_follow_their_orders(on_cpu, order, params, fmt):
    for n in (0, 1, 2, 5, 127, 128, 129, 1000):
        for kind in ("uniform", "ill-conditioned", "subnormal"):
            x = inputs(fmt, n, kind, seed=n)
            y = inputs(fmt, n, "normal", seed=n + 1)
            assert fpx.to_bits(on_cpu(x, order, **params)) == fpx.to_bits(
                fpx.sum(x, order, **params)
            ), (n, kind)
            for fma in (False, True) if order in FUSABLE else (False,):
                got = on_cpu(x, order, y=y, fma=fma, **params)
                want = fpx.dot(x, y, order, fma=fma, **params)
                assert fpx.to_bits(got) == fpx.to_bits(want), (n, kind, fma)


@pytest.mark.parametrize("fmt", ["float32", "float64"])
def test_tree_partials_and_atomic_combine(on_cpu, fmt):
    """The block results match the emulated tree; atomicAdd (here: in block order) combines
    them onto +0, flushing float32 subnormals as the hardware does."""
    x = inputs(fmt, 1000, "normal", seed=3)
    total, parts = on_cpu(x, "tree", block=64, combine="atomic", return_partials=True)
    assert parts.size == 16
    for b in range(parts.size):  # each block alone is a one-block tree
        seg = np.zeros(64, dtype=fmt)
        chunk = x[b * 64 : (b + 1) * 64]
        seg[: chunk.size] = chunk
        assert fpx.to_bits(parts[b]) == fpx.to_bits(fpx.sum(seg, "tree", block=64))
    acc = np.zeros((), dtype=fmt)
    for p in parts:
        acc = (acc + p).astype(fmt)
    assert fpx.to_bits(total) == fpx.to_bits(acc)
    # subnormal block results: flushed by float32 atomics only
    s = np.zeros(256, dtype=fmt)
    s[::2] = fpx.format_info(fmt).smallest_subnormal * 8
    flushed = on_cpu(s, "tree", block=2, combine="atomic")
    assert fpx.to_bits(flushed) == fpx.to_bits(fpx.sum(s, "tree", block=2, combine="atomic"))
    assert (flushed == 0) == (fmt == "float32")


def test_tree_pads_the_last_block_with_plus_zero(on_cpu):
    """Threads past the end load +0.0: a block of -0.0 sums to -0.0, the padded one to +0.0."""
    x = np.full(100, -0.0, dtype=np.float32)
    total, parts = on_cpu(x, "tree", block=32, return_partials=True)
    assert [bool(np.signbit(p)) for p in parts] == [True, True, True, False]
    assert not np.signbit(total)  # combined onto a zeroed result
    assert not np.signbit(fpx.sum(x, "tree", block=32))


def test_recorder_and_replay_round_trip(on_cpu, tmp_path, monkeypatch):
    """The recorder's quick suite runs (own kernels on the CPU stand-in, CuPy's library calls
    answered by NumPy), writes a file the replay backend serves, and compare() shows it as
    replay rows. A code-path check: the file lives in a temporary folder, never in
    fpexplore/data, and is no recording of a GPU."""
    from fpexplore import record
    from fpexplore.backends import replay
    from fpexplore.ops import registry

    for op in ("sum", "dot"):  # smaller sizes: the CPU runs a thread per lane
        spec = registry.get(op)
        (rec,) = spec.recordings
        small = dataclasses.replace(rec, sizes=(1000, 2003), quick_sizes=(1000, 2003))
        monkeypatch.setitem(registry.OP_SPECS, op, spec.replace(recordings=(small,)))
    assert record.main(["--quick", "--out", str(tmp_path)]) == 0
    (path,) = tmp_path.glob("gpu_*.json.gz")
    doc = replay.load(path)
    assert doc["device"]["device"].startswith("CPU stand-in")
    checked = 0
    for e in doc["entries"]:
        if not e["variant"].startswith("kernel:") or "atomic" in e["variant"]:
            continue
        if "partials" in e["variant"]:
            continue
        inp = registry.get(e["op"]).inputs(e["n"], e["format"], e["distribution"], e["seed"], {})
        order = e["variant"].removeprefix("kernel:").split("(")[0].split(",")[0]
        fma = e["variant"].endswith(", fma")
        if e["op"] == "sum":
            want = fpx.sum(inp["x"], order, **e["params"])
        else:
            want = fpx.dot(inp["a"], inp["b"], order, fma=fma, **e["params"])
        assert fpx.to_bits(replay.decode(e)) == fpx.to_bits(want), e["variant"]
        checked += 1
    assert checked > 50
    monkeypatch.setattr(replay, "DATA", tmp_path)
    cmp = fpx.compare("sum", format="float32", n=1000, backends=("emulated", "replay"), seed=0)
    rows = cmp.table[cmp.table["backend"] == "replay"]
    assert len(rows) >= 10 and all("CPU stand-in" in v for v in rows["variant"])
    # the device column names the recording's device, not this machine's CPU
    assert all("CPU stand-in" in d and d.endswith("(recorded)") for d in rows["device"])
