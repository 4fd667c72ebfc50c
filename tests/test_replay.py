"""The replay backend and the recorder without a GPU: the file format round-trips, compare()
shows recorded rows labelled "replay", and the recorder refuses cleanly without a GPU.

The recording used here is synthetic (made in the test from emulated results); no GPU
recording ships with fpexplore yet."""

from __future__ import annotations

import gzip
import json

import ml_dtypes
import numpy as np
import pytest

import fpexplore as fpx
from fpexplore import record
from fpexplore.backends import cupy as gpu
from fpexplore.backends import replay


def test_encode_decode_roundtrip():
    for v in (
        np.float32(1.5),
        np.arange(6, dtype=np.float64).reshape(2, 3) / 7,
        np.array([1.0, -0.0, np.nan], ml_dtypes.bfloat16),
        np.float16(65504),
    ):
        back = replay.decode(replay.encode(v))
        a, b = np.asarray(v), np.asarray(back)
        assert a.dtype == b.dtype and a.shape == b.shape
        assert a.tobytes() == b.tobytes()


@pytest.fixture
def synthetic(tmp_path, monkeypatch):
    x = fpx.generate("uniform", 1000, "float32", 0)
    entries = [
        record._entry(
            "sum",
            "float32",
            1000,
            "uniform",
            0,
            "kernel:tree(block=128)",
            fpx.sum(x, "tree", block=128),
            {"block": 128},
        ),
        record._entry(
            "sum",
            "float32",
            1000,
            "uniform",
            0,
            "kernel:tree(block=128) partials",
            np.zeros(8, np.float32),
        ),
    ]
    doc = {"format": replay.FORMAT, "device": {"device": "Synthetic GPU"}, "entries": entries}
    with gzip.open(tmp_path / "gpu_synthetic.json.gz", "wt") as f:
        json.dump(doc, f)
    monkeypatch.setattr(replay, "DATA", tmp_path)
    return x


def test_compare_with_replay_rows(synthetic):
    ok, why = replay.status()
    assert ok and "Synthetic GPU" in why
    cmp = fpx.compare("sum", n=1000, variants=["tree"], backends=("emulated", "replay"))
    rows = cmp.table[cmp.table["backend"] == "replay"]
    assert list(rows["variant"]) == ["kernel:tree(block=128) [Synthetic GPU]"]  # no partials
    emulated = cmp.table[cmp.table["backend"] == "emulated"].iloc[0]
    assert rows.iloc[0]["value"] == emulated["value"]
    other = fpx.compare("sum", n=999, variants=["tree"], backends=("emulated", "replay"))
    assert any("no GPU recording" in m for m in other.messages)


def test_recorder_and_gpu_backend_refuse_without_gpu(capsys):
    if gpu.status()[0]:
        pytest.skip("a GPU is present")
    assert record.main(["--quick"]) == 2
    assert "cannot record" in capsys.readouterr().err
    with pytest.raises(RuntimeError, match="cupy backend is unavailable"):
        gpu.kernel_sum(np.ones(4, np.float32), "tree")
    cmp = fpx.compare("sum", n=100, backends=("numpy", "cupy"))
    assert any("cupy backend unavailable" in m for m in cmp.messages)


def test_kernel_source_is_inline_ptx_without_ftz():
    """(tests/test_cuda_source.py compiles it with NVRTC and reads the PTX.)"""
    src = gpu.kernel_source("float32")
    for op in ("add.rn.f32", "sub.rn.f32", "mul.rn.f32", "fma.rn.f32"):
        assert f'asm("{op} ' in src
    assert "__fadd_rn" not in src and ".ftz" not in src  # CuPy's -ftz=true would flush those
    assert 'asm("add.rn.f64 ' in gpu.kernel_source("float64")
    with pytest.raises(ValueError, match="float32 and float64"):
        gpu.kernel_source("float16")


def test_an_unavailable_gpu_says_instead_of_what_only_where_it_is_so():
    """Without the emulated backend there are no emulated GPU orders to show "instead"
    (adversarial pass 11: compare(backends=("cupy",)) said so and showed nothing)."""
    if fpx.has_gpu():
        pytest.skip("a GPU is present")
    alone = fpx.compare("sum", n=100, backends=("cupy",))
    assert alone.results == {}
    assert alone.messages[0].endswith("; add the emulated backend to see the GPU orders emulated")
    both = fpx.compare("sum", n=100, backends=("cupy", "emulated"))
    assert both.messages[0].endswith("; showing the emulated GPU orders instead") and both.results


def test_on_gpu_checks_names_then_says_why_there_is_no_gpu():
    assert fpx.has_gpu() == fpx.backends()["cupy"].startswith("available")
    x = np.ones(8, np.float32)
    with pytest.raises(ValueError, match="valid ops: sum, dot, matmul, linspace"):
        fpx.on_gpu("cumsum", x)
    with pytest.raises(ValueError, match="valid orders: sequential, blocked, tree"):
        fpx.on_gpu("sum", x, order="numpy")
    with pytest.raises(TypeError, match="the GPU kernels take: block, combine, fma"):
        fpx.on_gpu("sum", x, order="tree", seed=3)
    with pytest.raises(TypeError, match="order 'sequential' has no parameter block"):
        fpx.on_gpu("sum", x, order="sequential", block=4)
    with pytest.raises(ValueError, match="a sum has none"):
        fpx.on_gpu("sum", x, order="kahan", fma=True)
    with pytest.raises(ValueError, match="takes 2 array"):
        fpx.on_gpu("dot", x, order="sequential")
    # what the kernels cannot read is refused before any GPU is asked (a float64 y beside a
    # float32 x would be read through float32 pointers)
    with pytest.raises(ValueError, match="argument 1 is float16; the GPU kernels take float32"):
        fpx.on_gpu("sum", x.astype(np.float16), order="sequential")
    with pytest.raises(ValueError, match="argument 2 is list"):
        fpx.on_gpu("dot", x, [1.0] * 8, order="sequential")
    with pytest.raises(
        ValueError, match=r"one format and one length, got float32\[8\] and float64"
    ):
        fpx.on_gpu("dot", x, x.astype(np.float64), order="tree")
    with pytest.raises(ValueError, match=r"float32\[8\] and float32\[7\]"):
        fpx.on_gpu("dot", x, x[:7], order="tree")
    # CuPy has no FP8 arrays (on the H200: "ValueError: Unsupported dtype float8_e4m3fn")
    fp8 = np.ones(8, ml_dtypes.float8_e4m3fn)
    with pytest.raises(
        ValueError, match="argument 1 is float8_e4m3fn data: CuPy has no float8_e4m3"
    ):
        fpx.on_gpu("sum", fp8)
    with pytest.raises(ValueError, match="argument 2 is float4_e2m1fn data"):
        fpx.on_gpu("dot", x, np.ones(8, ml_dtypes.float4_e2m1fn))
    if fpx.has_gpu():
        pytest.skip("a GPU is present")
    with pytest.raises(RuntimeError, match="no GPU to run sum on: CuPy"):
        fpx.on_gpu("sum", x)
