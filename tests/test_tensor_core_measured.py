"""Tensor-core outputs measured on an NVIDIA H200 (tests/data/tensor_cores/h200_*.npz) and an
NVIDIA H100 80GB HBM3 (h100hbm3_*.npz), made by tests/data/tensor_cores/measure.py on
2026-11-26 (CuPy 14.2, CUDA 13.0, driver 580.159), against fpx.mma. These rows were never used
to build the model: the H200 is held out, and the H100 rows are new inputs (random, wide-range,
cancelling, special) beside the published ones.

What they settle, on both GPUs alike (docs/tensor_cores.md, "Measured on an H200 and an H100"):
- mma.sync with float16, bfloat16 and tf32 inputs, and FP8 with a float16 output, is the H100
  model bit for bit, one instruction and chains (random, wide-range, cancelling, special rows
  and the published H100 inputs);
- mma.sync with FP8 inputs and a float32 output is NOT the H100's 13-bit block of 32: the
  H200 unpacks FP8 to float16 (SASS: F2FP.F16.E4M3.UNPACK_B, two HMMA.16816.F32) and runs
  two float16 blocks, c added last (``arch="h100-mma"``);
- cuBLASLt's FP8 GEMM (torch._scaled_mm, wgmma) is the 13-bit block of 32 (``arch="h200"``):
  chained over all of K with fast accumulation, and chained over k-tiles of 128 whose results
  are added in float32 without it;
- cupy.matmul of float16 (cuBLAS) is the chained H200 model rounded to float16 at 64 and 256,
  and is not at 32 x 4096 x 32 (its order there is not one tried here);
- the published H100 FP8 rows with a float32 output are what cuBLASLt's FP8 GEMM gives for
  them on an H100 (torch._scaled_mm, both accumulation modes), every row: they came from the
  wgmma path, not from mma.sync.
"""

from __future__ import annotations

from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

import fpexplore as fpx

DATA = Path(__file__).parent / "data" / "tensor_cores"
KINDS = ["pub", "random", "wide", "cancel", "special", "pub-c0"]  # measure.KINDS
INPUTS = {"fp16": "float16", "bf16": "bfloat16", "tf32": "tf32", "e4m3": "float8_e4m3",
          "e5m2": "float8_e5m2"}  # fmt: skip
DTYPES = {"fp16": np.float16, "bf16": ml_dtypes.bfloat16, "e4m3": ml_dtypes.float8_e4m3fn,
          "e5m2": ml_dtypes.float8_e5m2}  # fmt: skip


# each measured GPU: its files' prefix and how its device string begins
GPUS = {"h200": "NVIDIA H200; compute capability 9.0",
        "h100hbm3": "NVIDIA H100 80GB HBM3; compute capability 9.0"}  # fmt: skip


def _groups():
    for f in sorted(p for gpu in GPUS for p in DATA.glob(f"{gpu}_*.npz")):
        z = np.load(f)
        for key in sorted(k[: -len("_kind")] for k in z.files if k.endswith("_kind")):
            yield f.name, key


GROUPS = list(_groups())


def _values(bits, fmt):
    return bits.view(np.float32) if fmt == "tf32" else bits.view(DTYPES[fmt]).astype(np.float32)


def _same(x, y):
    """Bit for bit; NaN matches NaN (the GPU's NaN is 0x7fffffff, the model's its own)."""
    x, y = np.asarray(x, np.float32), np.asarray(y, np.float32)
    return (x.view(np.uint32) == y.view(np.uint32)) | (np.isnan(x) & np.isnan(y))


def _model(z, key, arch):
    fmt, out, _ = key.split("_")
    a, b = _values(z[f"{key}_a"], fmt), _values(z[f"{key}_b"], fmt)
    c = z[f"{key}_c"].view(np.float32)
    output = {"fp32": "float32", "fp16": "float16"}[out]
    if out == "fp16":
        c = c.astype(np.float16)
    d = fpx.mma(a[:, None, :], b[:, :, None], c[:, None, None], arch=arch, inputs=INPUTS[fmt],
                output=output)  # fmt: skip
    return d.reshape(-1).astype(np.float32)


def test_the_measured_rows_are_all_there():
    assert len(GROUPS) == 13 * len(GPUS)
    for gpu, device in GPUS.items():
        assert str(np.load(DATA / f"{gpu}_fp16.npz")["device"]).startswith(device)
    for name, key in GROUPS:
        kinds = set(np.load(DATA / name)[f"{key}_kind"].tolist())
        assert {1, 2, 3, 4} <= kinds, (key, kinds)  # random, wide, cancelling, special


@pytest.mark.parametrize("name,key", GROUPS, ids=[k for _, k in GROUPS])
def test_mma_sync_rows_bit_for_bit(name, key):
    z = np.load(DATA / name)
    d = z[f"{key}_d"].view(np.float32)
    ok = _same(d, _model(z, key, "h100-mma"))
    assert ok.all(), (key, int((~ok).sum()), np.flatnonzero(~ok)[:5])
    if not (key.startswith("e") and "_fp32_" in key):  # the H100/H200 model too
        assert _same(d, _model(z, key, "h200")).all()


@pytest.mark.parametrize("gpu", GPUS)
@pytest.mark.parametrize("key", ["e4m3_fp32_k32", "e5m2_fp32_k32", "e4m3_fp32_k128"])
def test_fp8_float32_mma_sync_is_not_the_13_bit_block(key, gpu):
    z = np.load(DATA / f"{gpu}_fp8.npz")
    d = z[f"{key}_d"].view(np.float32)
    ok = _same(d, _model(z, key, "h200"))
    assert ok.mean() < 0.4, ok.mean()
    kind = z[f"{key}_kind"]
    # the published H100 inputs with c = 0, as the published rows ran: mma.sync (on the H100
    # too) gives other bits than the published H100 outputs in most rows
    if 5 in kind.tolist():
        pub = np.load(DATA / "published" / f"h100_{key[:4]}.npz")["d_fp32"].view(np.float32)
        sel = kind == 5
        assert _same(d[sel], pub[: sel.sum()]).mean() < 0.7


def _product(gpu, name, key):
    """A product's inputs (seeded in measure.py, kept once, in the H200's file) and the GPU's d."""
    inputs = np.load(DATA / f"h200_{name}.npz")
    return inputs[f"{key}_a"], inputs[f"{key}_b"], np.load(DATA / f"{gpu}_{name}.npz")[f"{key}_d"]


def _scaled(gpu, key):
    a, b, d = _product(gpu, "fp8", key)
    e4m3 = ml_dtypes.float8_e4m3fn
    return a.view(e4m3).astype(np.float32), b.view(e4m3).astype(np.float32), d


SCALED = ["16x32x16", "64x256x64", "32x4096x32"]


@pytest.mark.parametrize("gpu", GPUS)
@pytest.mark.parametrize("shape", SCALED)
def test_cublaslt_fp8_gemm_fast_accumulation_is_the_13_bit_chain(shape, gpu):
    a, b, d = _scaled(gpu, f"scaled_{shape}_1")
    zero = np.zeros(d.shape, np.float32)
    assert _same(d, fpx.mma(a, b, zero, arch="h200", inputs="float8_e4m3")).all()
    assert _same(d, fpx.mma(a, b, zero, arch="h100-mma", inputs="float8_e4m3")).mean() < 0.5


@pytest.mark.parametrize("gpu", GPUS)
@pytest.mark.parametrize("shape", SCALED)
def test_cublaslt_fp8_gemm_without_fast_accumulation_adds_tiles_of_128_in_float32(shape, gpu):
    a, b, d = _scaled(gpu, f"scaled_{shape}_0")
    acc = np.zeros(d.shape, np.float32)
    for k0 in range(0, a.shape[1], 128):
        part = fpx.mma(a[:, k0 : k0 + 128], b[k0 : k0 + 128], np.zeros(d.shape, np.float32),
                       arch="h200", inputs="float8_e4m3")  # fmt: skip
        acc = (acc.astype(np.float64) + part).astype(np.float32)  # one float32 rounding
    assert _same(d, acc).all()
    if a.shape[1] > 128:  # and not the chain over all of K
        chain = fpx.mma(a, b, np.zeros(d.shape, np.float32), arch="h200", inputs="float8_e4m3")
        assert _same(d, chain).mean() < 0.5


@pytest.mark.parametrize("gpu", GPUS)
@pytest.mark.parametrize("shape,matches", [("64x64x64", True), ("256x256x256", True),
                                           ("32x4096x32", False)])  # fmt: skip
def test_cupy_matmul_float16_is_the_chained_model_at_small_k(shape, matches, gpu):
    a, b, d = _product(gpu, "fp16", f"cublas_{shape}")
    chain = fpx.mma(a, b, np.zeros(d.shape, np.float32), arch="h200", inputs="float16")
    ok = _same(d.astype(np.float32), chain.astype(np.float16).astype(np.float32))
    assert ok.all() == matches, ok.mean()


@pytest.mark.parametrize("fast", [0, 1])
@pytest.mark.parametrize("fmt", ["e4m3"])  # cuBLASLt refuses E5M2 x E5M2 ("not supported")
def test_the_published_fp8_rows_are_cublaslt_fp8_gemm_on_an_h100(fmt, fast):
    """The published H100 E4M3 rows (float32 out, c = 0) through torch._scaled_mm on our H100
    (measure.py's published_scaled_mm): every output is the published one, in both accumulation
    modes (one block of K = 32), while mma.sync gives other bits in most rows (test above)."""
    pub = np.load(DATA / "published" / f"h100_{fmt}.npz")
    d = np.load(DATA / "h100hbm3_fp8.npz")[f"pubscaled_{fmt}_{fast}_d"]
    assert len(d) == 5000
    assert _same(d, pub["d_fp32"].view(np.float32)).all()
