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


def test_kernel_source_uses_rounding_intrinsics_only():
    src = gpu.kernel_source("float32")
    assert "__fadd_rn" in src and "__fmaf_rn" in src and "__fmul_rn" in src
    body = src.replace("__fadd_rn(", "").replace("__fmul_rn(", "").replace("__fmaf_rn(", "")
    # no bare float + or * between values (only index arithmetic remains)
    for line in body.splitlines():
        if "acc =" in line or "s[tx] =" in line or "T u =" in line or "T v =" in line:
            assert " + " not in line.split("=", 1)[1] or "[" in line, line
    assert "__dadd_rn" in gpu.kernel_source("float64")
    with pytest.raises(ValueError, match="float32 and float64"):
        gpu.kernel_source("float16")
