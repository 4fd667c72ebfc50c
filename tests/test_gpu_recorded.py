"""What an NVIDIA H200 computed (tests/data/gpu/gpu_nvidia_h200.json.gz: ``python -m
fpexplore.record`` on 2026-11-26, CuPy 14.2, CUDA 13.0; the cupy.sum, cupy.dot, cupy.linspace
and cupy.matmul entries and the order kernels' results up to n = 100,003) against the
emulations, on this CPU. These measured results, not fpexplore's own code, are the oracle:
each test names which emulation reproduces which GPU result (docs/gpu.md, "Measured on an
H200"), and where none does, the test says so.
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

import numpy as np
import pytest

import fpexplore as fpx
from fpexplore.backends import replay
from fpexplore.ops.registry import OP_SPECS

DOC = replay.load(Path(__file__).parent / "data" / "gpu" / "gpu_nvidia_h200.json.gz")
ENTRIES = DOC["entries"]


def _inputs(e):
    return OP_SPECS[e["op"]].inputs(e["n"], e["format"], e["distribution"], e["seed"], {})


def _bits_equal(a, b):
    a, b = np.asarray(a), np.asarray(b)
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


def test_the_recording_is_an_h200s():
    assert DOC["device"]["device"] == "NVIDIA H200"
    assert DOC["device"]["compute_capability"] == "9.0"
    assert len(ENTRIES) == 236


_KERNEL = re.compile(r"kernel:([a-z-]+)(?:\(([^)]*)\))?(, fma)?$")
KERNELS = [e for e in ENTRIES if _KERNEL.match(e["variant"])]


@pytest.mark.parametrize("e", KERNELS, ids=lambda e: f"{e['op']}-{e['format']}-{e['n']}-"
                         f"{e['distribution']}-{e['variant']}")  # fmt: skip
def test_order_kernels_equal_their_emulated_orders(e):
    order, params, fma = _KERNEL.match(e["variant"]).groups()
    kw = {k: int(v) for k, v in (p.split("=") for p in params.split(", "))} if params else {}
    x = _inputs(e)
    if e["op"] == "sum":
        want = fpx.sum(x["x"], order, **kw)
    else:
        want = fpx.dot(x["a"], x["b"], order, fma=bool(fma), **kw)
    assert _bits_equal(replay.decode(e), want)


def test_atomic_runs_are_within_the_bound_of_the_exact_sum():
    for e in ENTRIES:
        if not e["variant"].endswith("atomic x20") or e["op"] != "sum":
            continue
        x = _inputs(e)["x"]
        runs = replay.decode(e)
        exact = float(fpx.exact_sum(x))
        bound = fpx.metrics.sum_bound(x, "sequential")
        assert all(abs(float(r) - exact) <= bound for r in runs)


def _cupy(op, label="cupy."):
    return [e for e in ENTRIES if e["op"] == op and e["variant"].startswith(label)]


def test_cupy_sum_is_the_cub_hypothesis_in_float32_and_float64():
    """CUB's per-type defaults (a tree ThreadReduce under 8 bytes, sequential for float64):
    every float32 and float64 cupy.sum; float64 with a tree ThreadReduce misses n = 10^6."""
    sums = _cupy("sum")
    assert len(sums) == 18  # float32, float64, float16; uniform and wide; three sizes
    for e in sums:
        if e["format"] == "float16":
            continue
        x = _inputs(e)["x"]
        assert _bits_equal(replay.decode(e), fpx.sum(x, "cub")), (e["format"], e["n"])
    (e,) = [e for e in sums if (e["format"], e["n"], e["distribution"]) == ("float64", 1000003,
                                                                            "wide")]  # fmt: skip
    assert not _bits_equal(replay.decode(e), fpx.sum(_inputs(e)["x"], "cub", thread_reduce="tree"))


def test_cupy_dot_is_the_cub_hypothesis():
    """cupy.dot of two vectors: each product rounded, then CUB's sum with its per-type
    defaults (fpexplore's `cub` dot: CuPy's ``(a * b).sum()``), every recorded result."""
    dots = _cupy("dot")
    assert len(dots) == 12  # float32, float64; uniform and wide; three sizes
    for e in dots:
        x = _inputs(e)
        assert _bits_equal(replay.decode(e), fpx.dot(x["a"], x["b"], "cub")), (e["format"], e["n"])


def test_cupy_sum_of_float16_is_not_settled():
    """float16: CUB's float16 sum gives five of the six results (NaN as NaN), CuPy's own
    kernel with a float32 accumulator the sixth (n = 100,003, wide), which CUB's does not:
    cannot tell (docs/gpu.md)."""
    for e in _cupy("sum"):
        if e["format"] != "float16":
            continue
        got = replay.decode(e)
        x = _inputs(e)["x"]
        cub, kernel = (np.float16(fpx.sum(x, o)) for o in ("cub", "cupy-kernel"))
        if (e["n"], e["distribution"]) == (100003, "wide"):
            assert _bits_equal(got, kernel) and not _bits_equal(got, cub)
        else:
            assert _bits_equal(got, cub) or (np.isnan(got) and np.isnan(cub)), e["n"]


def test_cupy_sum_of_float16_at_72_sizes_and_seeds_is_no_hypothesis_here():
    """72 more float16 cupy.sum results from the H200 (tests/data/gpu/cupy_sum_float16_h200.json:
    [distribution, n, seed, float16 bits, float32-accumulated sum]; CuPy's reduction
    accelerator was CUB): `cub` alone gives 26, every hypothesis 21, the float32-accumulating
    ones 5, and none gives 20 (n >= 20,000). Cannot tell, so nothing claims float16."""
    doc = json.loads((Path(__file__).parent / "data" / "gpu" / "cupy_sum_float16_h200.json")
                     .read_text())  # fmt: skip
    assert doc["reduction_accelerators"] == ["1"]  # cupy._core._accelerator: CUB
    tally = {"cub": 0, "all": 0, "float32": 0, "none": 0}
    for dist, n, seed, bits, _ in doc["rows"]:
        x = fpx.generate(dist, n, "float16", seed=seed)
        got = np.uint16(bits).view(np.float16)
        hits = set()
        for name, order, acc in (("cub", "cub", None), ("kernel", "cupy-kernel", None),
                                 ("cub32", "cub", "float32"),
                                 ("kernel32", "cupy-kernel", "float32")):  # fmt: skip
            v = np.float16(fpx.sum(x, order, **({"accumulate": acc} if acc else {})))
            if v.view(np.uint16) == got.view(np.uint16) or (np.isnan(v) and np.isnan(got)):
                hits.add(name)
        names = {frozenset(): "none", frozenset({"cub"}): "cub",
                 frozenset({"kernel", "cub32", "kernel32"}): "float32"}  # fmt: skip
        key = "all" if len(hits) == 4 else names.get(frozenset(hits), str(hits))
        tally[key] = tally.get(key, 0) + 1
        if key == "none":
            assert n >= 20000
    assert tally == {"cub": 26, "all": 21, "float32": 5, "none": 20}


@pytest.mark.parametrize("kind,variant", [("scalars", "cupy-scalar"), ("0-d arrays", "cupy-array")])
def test_cupy_linspace_is_the_hypothesis_of_its_argument_kind(kind, variant):
    cases = _cupy("linspace", f"cupy.linspace({kind})")
    assert len(cases) == 4  # float32 and float64, n = 50 and 2000
    for e in cases:
        x = _inputs(e)
        start, stop = x["start"], x["stop"]
        if kind == "0-d arrays":
            start, stop = np.asarray(start), np.asarray(stop)
        got = replay.decode(e)
        for v in (variant, "cupy"):  # "cupy" picks the path by the arguments' kind
            assert _bits_equal(got, fpx.linspace(start, stop, x["num"], variant=v)), (v, e)


def _matmul(fmt, n, label="cupy.matmul"):
    (e,) = [e for e in _cupy("matmul") if (e["format"], e["n"], e["variant"]) == (fmt, n, label)]
    x = _inputs(e)
    return x["A"], x["B"], replay.decode(e)


@pytest.mark.parametrize("fmt,n", [("float64", 64), ("float64", 256), ("float32", 64)])
def test_cupy_matmul_is_one_fma_chain_per_element(fmt, n):
    A, B, D = _matmul(fmt, n)
    assert _bits_equal(D, fpx.matmul(A, B, "sequential", fma=True))


def test_cupy_matmul_float32_256_is_no_order_tried_here():
    """cuBLAS's float32 kernel at 256 is neither one chain nor k split into 2 to 16 parts
    (at most 46% of the elements): cannot tell."""
    A, B, D = _matmul("float32", 256)
    for order, kw in (("sequential", {"fma": True}), ("sequential", {}), ("pairwise", {})):
        assert np.mean(fpx.matmul(A, B, order, **kw) == D) < 0.5


def _tensor_core(A, B, parts):
    """k cut into `parts` equal slices, each an H200 tensor-core chain on tf32-rne inputs
    from 0, the slices' results added in float32."""
    a = np.asarray(fpx.as_format(A, "tf32-rne"))
    b = np.asarray(fpx.as_format(B, "tf32-rne"))
    L = A.shape[1] // parts
    zero = np.zeros((A.shape[0], B.shape[1]), np.float32)
    acc = None
    for i in range(parts):
        ks = slice(i * L, (i + 1) * L)
        d = fpx.mma(a[:, ks], b[ks], zero, arch="h200", inputs="tf32")
        acc = d if acc is None else (acc.astype(np.float64) + d).astype(np.float32)
    return acc


@pytest.mark.parametrize("n,parts", [(64, 2), (256, 1)])
def test_cupy_matmul_tf32_is_the_h200_tensor_core_model(n, parts):
    """CUPY_TF32=1: inputs rounded to nearest tf32, the tensor-core chain; at 64 cuBLAS
    splits k in two halves added in float32."""
    A, B, D = _matmul("float32", n, "cupy.matmul tf32")
    assert _bits_equal(D, _tensor_core(A, B, parts))
    other = 2 if parts == 1 else 1
    assert np.mean(_tensor_core(A, B, other) == D) < 0.5


def test_an_h100_computed_what_the_h200_did():
    """The same recorder on an NVIDIA H100 80GB HBM3 (132 SMs, like the H200; CuPy 14.2, CUDA
    13): digests of its 344 results (tests/data/gpu/gpu_nvidia_h100_digests.json). Every result
    kept from the H200 is the H100's, bit for bit, except the twenty-run atomicAdd trees, whose
    order is the scheduler's: 15 of those 16 differ."""
    h100 = json.loads((Path(__file__).parent / "data" / "gpu" / "gpu_nvidia_h100_digests.json")
                      .read_text())  # fmt: skip
    assert h100["device"]["device"] == "NVIDIA H100 80GB HBM3"
    key = ("op", "format", "n", "distribution", "seed", "variant")
    digests = {tuple(e[k] for k in key): e["sha256"] for e in h100["entries"]}
    assert len(digests) == 344
    same, atomic = [], []
    for e in ENTRIES:
        r = np.asarray(replay.decode(e))
        d = hashlib.sha256(f"{r.dtype.str}{r.shape}".encode() + r.tobytes()).hexdigest()[:32]
        mine = digests[tuple(e[k] for k in key)]
        (atomic if e["variant"].endswith("atomic x20") else same).append(d == mine)
    assert len(same) == 220 and all(same)
    assert len(atomic) == 16 and sum(atomic) == 1  # one float64 sum of 1,000 came out alike
