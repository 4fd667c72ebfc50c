"""Record PyTorch's and JAX's CPU reductions and PyTorch's Adam for tests/test_framework_orders.py
and tests/test_adam_torch.py (which replay them without torch or jax).

Run with a Python that has numpy, ml_dtypes, torch and jax (not the project's dependencies):

    python tests/data/record_frameworks.py            # writes tests/data/torch_<v>.json.gz,
                                                      # jax_<v>.json.gz, adam_torch_<v>.npz

Inputs are seeded recipes (:func:`make_input`, :func:`fprev_pair`, :func:`placed_pair`),
rebuilt by the tests; each case stores a SHA-256 of its input bytes so a changed generator
is noticed. Results are stored as hex bits. torch runs in child processes, one per
``ATEN_CPU_CAPABILITY`` (unset, avx2, default), each at 1 and 2 threads.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import platform
import subprocess
import sys
from pathlib import Path

import ml_dtypes
import numpy as np

HERE = Path(__file__).resolve().parent
DTYPES = {
    "float16": np.dtype(np.float16),
    "bfloat16": np.dtype(ml_dtypes.bfloat16),
    "float32": np.dtype(np.float32),
    "float64": np.dtype(np.float64),
}
UINT = {"float16": np.uint16, "bfloat16": np.uint16, "float32": np.uint32, "float64": np.uint64}

SUM_SIZES = (
    list(range(1, 41))
    + [63, 64, 65, 127, 128, 129, 255, 256, 257, 1000, 4095, 8193]
    + [32767, 32768, 32769, 65537, 100003, 10**6]
)
SUM_KINDS = ("normal", "absorb", "special")
DOT_SIZES = list(range(1, 41)) + [63, 64, 65, 127, 128, 129, 1000, 8193, 100003]
FPREV_SIZES = (17, 40, 64, 100, 130, 300, 1000)
MKL_SIZES = list(range(1, 41)) + [63, 64, 65, 100, 1000, 4097, 8191, 8192, 8193, 100003]
MKL_OFFSETS = ((0, 0), (1, 1), (2, 2), (3, 3), (1, 0), (0, 3), (4, 0), (8, 12))
XLA_SIZES = list(range(1, 100)) + [127, 128, 129, 1000, 1023, 1024, 1025, 2049, 3000, 4095]
XLA_YNN_SIZES = [4096, 8193, 100003]
BIG = 17_000_000  # one torch.sum past 2**19 groups of 4 vectors: the cascade's level step grows
SPECIALS = (0.0, -0.0, np.inf, -np.inf, np.nan, 1e-40, 3e38)


def make_input(kind: str, n: int, seed: int, fmt: str) -> np.ndarray:
    """A seeded input of n elements in fmt (overflow to inf in narrow formats is intended)."""
    rng = np.random.default_rng([seed, n, len(kind)])
    if kind == "uniform":
        x = rng.uniform(0, 1, n)
    elif kind == "normal":
        x = rng.normal(0, 1, n)
    elif kind == "wide":
        x = rng.normal(0, 1, n) * 10.0 ** rng.uniform(-6, 6, n)
    elif kind == "absorb":  # order-revealing at half precision: cancelling +-2^15 among smalls
        x = rng.uniform(0, 1, n) * 0.01
        k = min(n // 2, max(1, n // 100))
        idx = rng.choice(n, 2 * k, replace=False)
        x[idx[:k]] = 2.0**15
        x[idx[k:]] = -(2.0**15)
    elif kind == "special":  # normal values, 10 % replaced by zeros, infinities, NaN, tiny, huge
        x = rng.normal(0, 1, n)
        idx = rng.random(n) < 0.1
        x[idx] = rng.choice(np.array(SPECIALS), int(idx.sum()))
    elif kind == "negzero":
        x = np.full(n, -0.0)
    else:
        raise ValueError(kind)
    with np.errstate(over="ignore"):
        return x.astype(DTYPES[fmt])


def fprev_pair(n: int, seed: int, fmt: str):
    """FPRev probe: a = ones with +2^15 and -2^15 at two seeded places, b = ones with 2^15
    there; the dot reveals where the two meet in the summation tree."""
    rng = np.random.default_rng([seed, n, 7])
    i, j = rng.choice(n, 2, replace=False)
    a = np.ones(n)
    b = np.ones(n)
    a[i], a[j] = 2.0**15, -(2.0**15)
    b[i] = b[j] = 2.0**15
    return a.astype(DTYPES[fmt]), b.astype(DTYPES[fmt])


def dot_pair(n: int, seed: int, fmt: str):
    return make_input("wide" if fmt == "float32" else "normal", n, seed, fmt), make_input(
        "normal", n, seed + 1, fmt
    )


def digest(*arrays) -> str:
    h = hashlib.sha256()
    for a in arrays:
        h.update(np.ascontiguousarray(a).tobytes())
    return h.hexdigest()[:16]


def bits_hex(value, fmt: str) -> str:
    return hex(int(np.asarray(value, DTYPES[fmt]).view(UINT[fmt])))


def placed(x: np.ndarray, offset: int) -> np.ndarray:
    """x copied to ``offset`` float32 elements past a 64-byte boundary."""
    buf = np.zeros(x.size + 64, x.dtype)
    b0 = (-(buf.ctypes.data // x.itemsize)) % 16
    v = buf[b0 + offset : b0 + offset + x.size]
    v[:] = x
    return v


def machine() -> dict:
    info = {"platform": platform.platform(), "python": platform.python_version()}
    try:
        text = Path("/proc/cpuinfo").read_text()
        info["cpu"] = next(
            ln.split(":", 1)[1].strip() for ln in text.splitlines() if ln.startswith("model name")
        )
        flags = next(ln for ln in text.splitlines() if ln.startswith("flags")).split()
        info["flags"] = [f for f in ("sse4_2", "avx", "avx2", "fma", "avx512f") if f in flags]
    except (OSError, StopIteration):
        pass
    info["cpu_count"] = os.cpu_count()
    info["numpy"] = np.__version__
    return info


# ----------------------------------------------------------------------------- torch (child)


def _torch_tensor(torch, x: np.ndarray):
    if x.dtype == DTYPES["bfloat16"]:
        return torch.from_numpy(x.view(np.int16)).view(torch.bfloat16)
    return torch.from_numpy(x)


def _torch_bits(torch, r, fmt: str) -> str:
    if fmt == "bfloat16":
        return hex(int(r.view(torch.int16).item()) & 0xFFFF)
    return bits_hex(r.numpy(), fmt)


def torch_child() -> dict:
    import torch

    out = {
        "capability_env": os.environ.get("ATEN_CPU_CAPABILITY", ""),
        "capability": torch.backends.cpu.get_cpu_capability(),
        "runs": {},
    }
    for threads in (1, 2):
        torch.set_num_threads(threads)
        cases = []
        for fmt in ("float32", "float64", "float16", "bfloat16"):
            for kind in SUM_KINDS + ("negzero",):
                for n in SUM_SIZES if kind != "negzero" else (5, 100, 40000):
                    x = make_input(kind, n, 1, fmt)
                    r = torch.sum(_torch_tensor(torch, x))
                    cases.append(["sum", fmt, kind, n, digest(x), _torch_bits(torch, r, fmt)])
        x = make_input("uniform", BIG, 1, "float32")
        r = torch.sum(torch.from_numpy(x))
        cases.append(
            ["sum", "float32", "uniform", BIG, digest(x), _torch_bits(torch, r, "float32")]
        )
        for fmt in ("float16", "bfloat16"):
            for n in DOT_SIZES:
                a, b = dot_pair(n, 2, fmt)
                r = torch.dot(_torch_tensor(torch, a), _torch_tensor(torch, b))
                cases.append(["dot", fmt, "normal", n, digest(a, b), _torch_bits(torch, r, fmt)])
            for n in FPREV_SIZES:
                for seed in range(10):
                    a, b = fprev_pair(n, seed, fmt)
                    r = torch.dot(_torch_tensor(torch, a), _torch_tensor(torch, b))
                    cases.append(
                        ["dot", fmt, f"fprev{seed}", n, digest(a, b), _torch_bits(torch, r, fmt)]
                    )
        for n in MKL_SIZES:
            a, b = dot_pair(n, 3, "float32")
            for oa, ob in MKL_OFFSETS:
                ta = torch.from_numpy(placed(a, oa))
                tb = torch.from_numpy(placed(b, ob))
                r = torch.dot(ta, tb)
                kind = f"offsets{oa},{ob}"
                cases.append(
                    ["dot", "float32", kind, n, digest(a, b), _torch_bits(torch, r, "float32")]
                )
        out["runs"][str(threads)] = cases
    return out


def record_torch() -> None:
    import torch

    runs = []
    for cap in ("", "avx2", "default"):
        env = dict(os.environ, ATEN_CPU_CAPABILITY=cap)
        if not cap:
            env.pop("ATEN_CPU_CAPABILITY")
        runs.append(_child("--torch-child", env))
    meta = machine()
    meta.update(
        torch=torch.__version__,
        torch_config=[ln.strip() for ln in torch.__config__.show().splitlines()[:8]],
        default_threads=torch.get_num_threads(),
    )
    _write(f"torch_{torch.__version__.split('+')[0]}", meta, runs)


def _write(name: str, meta: dict, runs: list) -> None:
    """tests/data/<name>.json.gz: the machine, the columns of a case and the captures."""
    columns = ["op", "format", "kind", "n", "input_sha256_16", "result_bits"]
    doc = {"meta": meta, "columns": columns, "captures": runs}
    path = HERE / f"{name}.json.gz"
    with gzip.open(path, "wt") as f:
        json.dump(doc, f, separators=(",", ":"))
    print("wrote", path)


def _child(flag: str, env: dict) -> dict:
    """This script in a fresh process (``flag``: which capture) with ``env``; its JSON."""
    res = subprocess.run(
        [sys.executable, __file__, flag], env=env, check=True, capture_output=True, text=True
    )
    return json.loads(res.stdout)


# ----------------------------------------------------------------------------- jax


def jax_child() -> dict:
    import jax.numpy as jnp

    cases = []
    sizes = XLA_SIZES + XLA_YNN_SIZES
    for kind in ("normal", "wide", "special"):
        for n in sizes:
            x = make_input(kind, n, 4, "float32")
            y = make_input("normal", n, 5, "float32")
            r = np.asarray(jnp.sum(jnp.asarray(x)))
            cases.append(["sum", "float32", kind, n, digest(x), bits_hex(r, "float32")])
            r = np.asarray(jnp.dot(jnp.asarray(x), jnp.asarray(y)))
            cases.append(["dot", "float32", kind, n, digest(x, y), bits_hex(r, "float32")])
    return {"xla_flags": os.environ.get("XLA_FLAGS", ""), "cases": cases}


def record_jax() -> None:
    import jax
    import jaxlib

    runs = []
    for flags in ("", "--xla_cpu_experimental_ynn_fusion_type="):
        env = dict(os.environ, XLA_FLAGS=flags, JAX_PLATFORMS="cpu")
        runs.append(_child("--jax-child", env))
    meta = machine()
    meta.update(jax=jax.__version__, jaxlib=jaxlib.__version__)
    _write(f"jax_{jax.__version__}", meta, runs)


# ----------------------------------------------------------------------------- Adam

ADAM_N = 10**4
ADAM_STEPS = 10
ADAM_HYPER = dict(lr=1e-3, beta1=0.9, beta2=0.999, eps=1e-8)


def adam_problem():
    """param0 ~ N(0, 1); gradients N(0, 1) * 10**U(-3, 1), float32 (seeded)."""
    rng = np.random.default_rng(2024)
    p0 = rng.normal(0, 1, ADAM_N).astype(np.float32)
    g = rng.normal(0, 1, (ADAM_STEPS, ADAM_N)) * 10.0 ** rng.uniform(-3, 1, (ADAM_STEPS, ADAM_N))
    return p0, g.astype(np.float32)


def record_adam() -> None:
    """torch.optim.Adam (CPU, float32, foreach False and True): per step the digests of
    param, exp_avg, exp_avg_sq, a few values, and where torch.sqrt(exp_avg_sq) differs from
    the correctly rounded sqrt (index and the signed ulp step), which lets a test rebuild
    torch's sqrt without torch."""
    import torch

    p0, grads = adam_problem()
    out = {}
    for foreach in (False, True):
        p = torch.tensor(p0.copy(), requires_grad=True)
        opt = torch.optim.Adam(
            [p], lr=ADAM_HYPER["lr"], betas=(0.9, 0.999), eps=1e-8, foreach=foreach
        )
        rows = []
        for s in range(ADAM_STEPS):
            p.grad = torch.from_numpy(grads[s].copy())
            opt.step()
            st = opt.state[p]
            rows.append(
                [
                    p.detach().numpy().copy(),
                    st["exp_avg"].numpy().copy(),
                    st["exp_avg_sq"].numpy().copy(),
                ]
            )
        out[foreach] = rows
    arrays = {}
    for tag, foreach in (("", False), ("foreach_", True)):
        rows = out[foreach]
        arrays[tag + "digests"] = np.array(
            [[digest(a) for a in row] for row in rows]
        )  # (steps, 3): param, m, v
        arrays[tag + "first8"] = np.stack([np.stack([a[:8] for a in row]) for row in rows])
    idx, step_of, delta = [], [], []
    for s, (_, _, v) in enumerate(out[False]):
        tv = torch.sqrt(torch.from_numpy(v)).numpy()
        ieee = np.sqrt(v)
        d = tv.view(np.int32).astype(np.int64) - ieee.view(np.int32).astype(np.int64)
        where = np.nonzero(d)[0]
        idx.append(where.astype(np.uint16))
        step_of.append(np.full(where.size, s, np.uint8))
        delta.append(d[where].astype(np.int8))
    arrays["sqrt_index"] = np.concatenate(idx)
    arrays["sqrt_step"] = np.concatenate(step_of)
    arrays["sqrt_delta_ulps"] = np.concatenate(delta)
    meta = machine()
    meta.update(
        torch=torch.__version__,
        capability=torch.backends.cpu.get_cpu_capability(),
        threads=torch.get_num_threads(),
        problem="adam_problem(): seed 2024, 10**4 params, 10 steps, lr 1e-3, betas (0.9, "
        "0.999), eps 1e-8, float32, CPU",
    )
    arrays["meta"] = np.array(json.dumps(meta))
    path = HERE / f"adam_torch_{torch.__version__.split('+')[0]}.npz"
    np.savez_compressed(path, **arrays)
    print("wrote", path)


if __name__ == "__main__":
    if "--torch-child" in sys.argv:
        json.dump(torch_child(), sys.stdout)
    elif "--jax-child" in sys.argv:
        json.dump(jax_child(), sys.stdout)
    else:
        which = sys.argv[1:] or ["torch", "jax", "adam"]
        if "adam" in which:
            record_adam()
        if "jax" in which:
            record_jax()
        if "torch" in which:
            record_torch()
