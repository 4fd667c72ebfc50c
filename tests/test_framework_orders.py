"""PyTorch's and XLA's CPU reductions (fpexplore/libraries/frameworks.py).

* fast == slow (tests/slow_framework_orders.py) on random and edge inputs: +-0,
  subnormals, infinities, NaN, every tail length;
* emulation == recordings of the real libraries, bit for bit (tests/data/torch_*.json.gz,
  jax_*.json.gz, written by tests/data/record_frameworks.py on an AMD EPYC Zen 4 with
  torch 2.14.1 and jax 0.10.2); nothing here depends on this host's SIMD or thread count;
* live comparisons only where torch or jax import (in subprocesses that set the thread count
  and ATen's capability explicitly).
"""

from __future__ import annotations

import gzip
import hashlib
import importlib.util
import json
import math
import os
import subprocess
import sys
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest
import slow_framework_orders as slow

from fpexplore.libraries import frameworks as fw

DATA = Path(__file__).parent / "data"
_spec = importlib.util.spec_from_file_location("record_frameworks", DATA / "record_frameworks.py")
rec = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(rec)

DT = rec.DTYPES


def bits(v, fmt):
    return hex(int(np.asarray(v, DT[fmt]).view(rec.UINT[fmt])))


def same(a, b, fmt):
    """Bit-equal, any NaN equal to any NaN."""
    x, y = np.asarray(a, DT[fmt]), np.asarray(b, DT[fmt])
    if np.isnan(x.astype(np.float64)) and np.isnan(y.astype(np.float64)):
        return True
    return bits(x, fmt) == bits(y, fmt)


def edge_input(n, seed, fmt):
    """Random values mixed with +-0, subnormals, +-inf, NaN and huge values (seeded)."""
    rng = np.random.default_rng([seed, n])
    info = np.finfo(np.float32) if fmt == "bfloat16" else np.finfo(DT[fmt])
    tiny = float(info.smallest_subnormal) if fmt != "bfloat16" else 2.0**-133
    pool = np.array([0.0, -0.0, tiny, -tiny, math.inf, -math.inf, math.nan, float(info.max)])
    x = rng.normal(0, 1, n) * 10.0 ** rng.integers(-3, 4, n)
    pick = rng.random(n) < rng.choice([0.0, 0.05, 0.3])
    x[pick] = rng.choice(pool, int(pick.sum()))
    with np.errstate(over="ignore"):
        return x.astype(DT[fmt])


# ----------------------------------------------------------------------------- fast == slow


@pytest.mark.parametrize("fmt", ["float32", "float64", "float16", "bfloat16"])
@pytest.mark.parametrize("lanes", [8, 16])
def test_torch_sum_matches_slow_every_tail(fmt, lanes):
    sizes = list(range(0, 4 * 2 * lanes + 3)) + [16 * 4 * lanes + 5, 1200]
    for n in sizes:
        for seed in range(2):
            x = edge_input(n, seed, fmt)
            got = fw.torch_sum(x, lanes=lanes)
            want = slow.torch_sum(list(x), fmt, lanes=lanes)
            assert same(got, want, fmt), (fmt, lanes, n, seed, got, want)


@pytest.mark.parametrize("fmt", ["float32", "float16", "bfloat16"])
def test_torch_sum_threads_matches_slow(fmt):
    # a small grain exercises the two-pass split on short inputs (the real grain is 32768)
    for n, threads, grain in [(50, 2, 16), (97, 3, 16), (40, 4, 40), (33, 2, 16), (200, 5, 7)]:
        for seed in range(2):
            x = edge_input(n, seed + 10, fmt)
            got = fw.torch_sum(x, threads=threads, grain=grain)
            want = slow.torch_sum(list(x), fmt, threads=threads, grain=grain)
            assert same(got, want, fmt), (fmt, n, threads, grain, seed)


def test_ceil_log2_is_atens():
    # utils::CeilLog2: 1 for x <= 2, else floor(log2(x - 1)) + 1
    for x in range(0, 3000):
        want = 1 if x <= 2 else math.floor(math.log2(x - 1)) + 1
        assert fw._ceil_log2(x) == want, x


@pytest.mark.parametrize("fmt", ["float16", "bfloat16"])
@pytest.mark.parametrize(("lanes", "how"), [(8, "tree"), (8, "sequential"), (16, "tree")])
def test_torch_dot_reduced_matches_slow(fmt, lanes, how):
    for n in list(range(0, 2 * 8 * lanes + 2 * lanes + 5)) + [300, 1000]:
        a, b = edge_input(n, 1, fmt), edge_input(n, 2, fmt)
        got = fw.torch_dot(a, b, lanes=lanes, lane_reduce=how)
        want = slow.torch_dot_reduced(list(a), list(b), fmt, lanes, how)
        assert same(got, want, fmt), (fmt, lanes, how, n)


@pytest.mark.parametrize("offsets", [(0, 0), (1, 1), (2, 2), (3, 3), (1, 0), (5, 4), (5, 9)])
def test_mkl_sdot_matches_slow(offsets):
    for n in list(range(0, 40)) + [63, 64, 65, 100]:
        a, b = edge_input(n, 3, "float32"), edge_input(n, 4, "float32")
        got = fw.mkl_sdot(a, b, offsets=offsets)
        want = slow.mkl_sdot(list(a), list(b), offsets=offsets)
        assert same(got, want, "float32"), (offsets, n)
    for n in (8192, 8193):
        a, b = edge_input(n, 5, "float32"), edge_input(n, 6, "float32")
        for threads in (1, 2):
            got = fw.mkl_sdot(a, b, threads=threads)
            want = slow.mkl_sdot(list(a), list(b), threads=threads)
            assert same(got, want, "float32"), (n, threads)


def test_xla_matches_slow():
    for n in list(range(0, 70)) + [95, 96, 97, 1023, 1024, 1025, 3000, 4095]:
        x, y = edge_input(n, 7, "float32"), edge_input(n, 8, "float32")
        assert same(fw.xla_sum(x), slow.xla_tree(list(x)), "float32"), n
        assert same(fw.xla_dot(x, y), slow.xla_dot(list(x), list(y)), "float32"), n
    x = rec.make_input("normal", 40000, 1, "float32")
    assert same(fw.xla_sum(x, ynn=False), slow.xla_tree(list(x)), "float32")


def test_signed_zeros_and_special_values():
    z = np.full(7, -0.0, np.float32)
    # every order starts from +0: a sum of -0.0 is +0.0 (torch, XLA), as recorded
    for fn in (fw.torch_sum, fw.xla_sum):
        assert bits(fn(z), "float32") == "0x0"
    assert np.isnan(fw.torch_sum(np.array([np.inf, -np.inf] * 20, np.float32)))
    # the two-pass split stores each thread's partial in float16: halves of +80000 and
    # -80000 overflow to +inf and -inf, whose sum is NaN; one thread sums to 0 in float32
    y = np.concatenate([np.full(40000, 2.0), np.full(40000, -2.0)]).astype(np.float16)
    assert np.isnan(fw.torch_sum(y, threads=2)) and fw.torch_sum(y, threads=1) == 0


def test_bad_arguments_and_refusals():
    x = np.ones(10, np.float32)
    with pytest.raises(ValueError, match="unknown lanes 4; valid: 8, 16"):
        fw.torch_sum(x, lanes=4)
    with pytest.raises(ValueError, match="threads must be >= 1"):
        fw.torch_sum(x, threads=0)
    with pytest.raises(ValueError, match="1-D"):
        fw.torch_sum(np.ones((2, 2), np.float32))
    with pytest.raises(TypeError, match="xla_sum takes float32"):
        fw.xla_sum(np.ones(3))
    with pytest.raises(TypeError, match="one format"):
        fw.torch_dot(x, x.astype(np.float16))
    with pytest.raises(ValueError, match="lane_reduce"):
        fw.torch_dot(x.astype(np.float16), x.astype(np.float16), lane_reduce="pairwise")
    with pytest.raises(NotImplementedError, match="YNNPACK"):
        fw.xla_sum(np.ones(4096, np.float32))
    with pytest.raises(NotImplementedError, match="YNNPACK"):
        fw.xla_dot(np.ones(4096, np.float32), np.ones(4096, np.float32))
    for offsets in ((0, 2), (0, 3), (3, 1)):
        with pytest.raises(NotImplementedError, match="not emulated"):
            fw.mkl_sdot(x, x, offsets=offsets)
    with pytest.raises(NotImplementedError, match="2-thread split"):
        fw.mkl_sdot(np.ones(9000, np.float32), np.ones(9000, np.float32), threads=2, offsets=(1, 0))
    assert fw.xla_sum(np.ones(4096, np.float32), ynn=False) == 4096
    for name, preset in fw.PRESETS.items():
        fn = getattr(fw, preset["function"])
        assert (
            fn(x, **preset["params"])
            if preset["function"].endswith("sum")
            else fn(x, x, **preset["params"])
        ), name


# ----------------------------------------------------------------------------- recordings


def load(prefix):
    paths = sorted(DATA.glob(f"{prefix}_*.json.gz"))
    assert paths, f"no {prefix} recording in {DATA}"
    with gzip.open(paths[-1], "rt") as f:
        return json.load(f)


def rebuild(op, fmt, kind, n):
    """The input of a recorded case, from its recipe (see record_frameworks.py)."""
    if op == "sum":
        if kind == "uniform":
            return (rec.make_input("uniform", n, 1, fmt),)
        return (rec.make_input(kind, n, 1, fmt),)
    if fmt == "float32" and kind.startswith("offsets"):
        return rec.dot_pair(n, 3, fmt)
    if kind.startswith("fprev"):
        return rec.fprev_pair(n, int(kind[5:]), fmt)
    return rec.dot_pair(n, 2, fmt)


def check_digest(arrays, want):
    h = hashlib.sha256()
    for a in arrays:
        h.update(np.ascontiguousarray(a).tobytes())
    assert h.hexdigest()[:16] == want, "the input recipe no longer gives the recorded input"


def test_torch_recordings_replayed_bit_for_bit():
    doc = load("torch")
    assert doc["meta"]["torch"].startswith("2.14.1")
    caps = {c["capability_env"]: c for c in doc["captures"]}
    # ATen's AVX-512 dispatch runs the AVX2 sum and dot kernels (REGISTER_DISPATCH)
    assert caps[""]["capability"] == "AVX512" and caps["default"]["capability"] == "DEFAULT"
    counts = {"match": 0, "not emulated": 0}
    for env, cap in caps.items():
        for threads, cases in cap["runs"].items():
            threads = int(threads)
            for op, fmt, kind, n, sha, want in cases:
                if n == rec.BIG:
                    continue  # test_torch_recording_level_step
                arrays = rebuild(op, fmt, kind, n)
                check_digest(arrays, sha)
                if op == "sum":
                    got = fw.torch_sum(arrays[0], threads=threads)
                elif fmt != "float32":
                    how = "sequential" if env == "default" else "tree"
                    got = fw.torch_dot(*arrays, lane_reduce=how)
                else:
                    oa, ob = (int(v) for v in kind[7:].split(","))
                    try:
                        got = fw.torch_dot(
                            rec.placed(arrays[0], oa), arrays[1], threads=threads, offsets=(oa, ob)
                        )
                    except NotImplementedError:
                        counts["not emulated"] += 1
                        continue
                assert same(got, np.array([int(want, 16)], rec.UINT[fmt]).view(DT[fmt])[0], fmt), (
                    env,
                    threads,
                    op,
                    fmt,
                    kind,
                    n,
                    want,
                    bits(got, fmt),
                )
                counts["match"] += 1
    # refused, in each of the 3 captures: float32 dots with offsets (0, 3) at 1 and 2
    # threads, and with offsets (1, 0) at 2 threads from n = 8192 on (the split)
    big = sum(1 for n in rec.MKL_SIZES if n >= 8192)
    refused = 3 * (2 * len(rec.MKL_SIZES) + big)
    total = sum(len(cases) - 1 for cap in caps.values() for cases in cap["runs"].values())
    assert counts == {"match": total - refused, "not emulated": refused}


def test_torch_float16_two_threads_nan_recorded():
    """The recorded fact: float16 absorb data, n = 100003: 1 thread finite, 2 threads NaN
    (the per-thread partials are float16 and overflow)."""
    doc = load("torch")
    cap = next(c for c in doc["captures"] if c["capability_env"] == "avx2")
    res = {
        int(t): next(r[-1] for r in rows if r[:4] == ["sum", "float16", "absorb", 100003])
        for t, rows in cap["runs"].items()
    }
    v1 = np.array([int(res[1], 16)], np.uint16).view(np.float16)[0]
    v2 = np.array([int(res[2], 16)], np.uint16).view(np.float16)[0]
    assert np.isfinite(v1) and np.isnan(v2)
    x = rec.make_input("absorb", 100003, 1, "float16")
    assert same(fw.torch_sum(x, threads=1), v1, "float16") and np.isnan(fw.torch_sum(x, threads=2))


def test_torch_recording_level_step():
    """17,000,000 float32: 531,250 groups of 4 vectors, the cascade's level step is 2**5."""
    doc = load("torch")
    x = rec.make_input("uniform", rec.BIG, 1, "float32")
    for cap in doc["captures"]:
        for threads, cases in cap["runs"].items():
            (case,) = [c for c in cases if c[3] == rec.BIG]
            check_digest([x], case[4])
            assert bits(fw.torch_sum(x, threads=int(threads)), "float32") == case[5]


def test_jax_recordings_replayed_bit_for_bit():
    doc = load("jax")
    assert doc["meta"]["jaxlib"] == "0.10.2"
    default, no_ynn = doc["captures"]
    assert default["xla_flags"] == "" and "ynn_fusion_type=" in no_ynn["xla_flags"]
    matched = ynn_differs = 0
    for cap, ynn in ((default, True), (no_ynn, False)):
        for op, fmt, kind, n, sha, want in cap["cases"]:
            x = rec.make_input(kind, n, 4, fmt)
            y = rec.make_input("normal", n, 5, fmt)
            check_digest([x] if op == "sum" else [x, y], sha)
            fn = fw.xla_sum if op == "sum" else fw.xla_dot
            args = (x,) if op == "sum" else (x, y)
            wantv = np.array([int(want, 16)], np.uint32).view(np.float32)[0]
            if ynn and n >= 4096:
                with pytest.raises(NotImplementedError):
                    fn(*args)
                ynn_differs += not same(fn(*args, ynn=False), wantv, fmt)
                continue
            assert same(fn(*args, ynn=ynn), wantv, fmt), (ynn, op, kind, n)
            matched += 1
    per = 3 * 2 * len(rec.XLA_SIZES)
    assert matched == 2 * per + 3 * 2 * len(rec.XLA_YNN_SIZES)
    # YNNPACK's order is not XLA's tree: 9 of its 18 recorded results differ from the tree
    assert ynn_differs == 9


# ----------------------------------------------------------------------------- live


def _can_import(name):
    return importlib.util.find_spec(name) is not None


LIVE_TORCH = """
import sys, json, numpy as np, torch
torch.set_num_threads(int(sys.argv[1]))
out = []
for seed, n in enumerate([5, 100, 1000, 40000]):
    x = np.random.default_rng(seed).normal(size=n).astype(np.float32)
    out.append(int(np.asarray(torch.sum(torch.from_numpy(x)).numpy()).view(np.uint32)))
print(json.dumps([torch.backends.cpu.get_cpu_capability(), out]))
"""


@pytest.mark.skipif(not _can_import("torch"), reason="torch is not installed")
@pytest.mark.parametrize("threads", [1, 2])
def test_live_torch_sum(threads):
    env = dict(os.environ, ATEN_CPU_CAPABILITY="avx2")
    res = subprocess.run(
        [sys.executable, "-c", LIVE_TORCH, str(threads)],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    cap, got = json.loads(res.stdout.strip().splitlines()[-1])
    if cap != "AVX2":
        pytest.skip(f"this CPU runs ATen capability {cap}")
    for seed, n in enumerate([5, 100, 1000, 40000]):
        x = np.random.default_rng(seed).normal(size=n).astype(np.float32)
        assert int(np.asarray(fw.torch_sum(x, threads=threads)).view(np.uint32)) == got[seed]


LIVE_JAX = """
import json, numpy as np, jax.numpy as jnp
out = []
for seed, n in enumerate([7, 33, 1000, 4095]):
    x = np.random.default_rng(seed).normal(size=n).astype(np.float32)
    out.append(int(np.asarray(jnp.sum(jnp.asarray(x))).view(np.uint32)))
print(json.dumps(out))
"""


@pytest.mark.skipif(not _can_import("jax"), reason="jax is not installed")
def test_live_jax_sum():
    env = dict(os.environ, JAX_PLATFORMS="cpu", XLA_FLAGS="")
    res = subprocess.run(
        [sys.executable, "-c", LIVE_JAX], env=env, capture_output=True, text=True, check=True
    )
    got = json.loads(res.stdout.strip().splitlines()[-1])
    for seed, n in enumerate([7, 33, 1000, 4095]):
        x = np.random.default_rng(seed).normal(size=n).astype(np.float32)
        assert int(np.asarray(fw.xla_sum(x)).view(np.uint32)) == got[seed]


def test_ml_dtypes_bfloat16_is_the_recorded_format():
    assert DT["bfloat16"] == np.dtype(ml_dtypes.bfloat16)
