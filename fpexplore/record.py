"""Record GPU results for the replay backend:  python -m fpexplore.record [--out DIR] [--quick]

Runs a fixed, seeded suite on the GPU — CuPy's own functions (cupy.sum, cupy.dot,
cupy.matmul with TF32 off and, in a subprocess with CUPY_TF32=1, on; cupy.linspace; the
elementwise ufuncs) and fpexplore's own order kernels (sequential, blocked, tree,
tree-strided, kahan; fma on/off for dot; tree block results with atomics) — on inputs made
exactly as :func:`fpexplore.compare` makes them, and writes ``gpu_<device>.json.gz`` (format
in :mod:`fpexplore.backends.replay`) with the device, compute capability, driver, CUDA and
CuPy versions. Needs CuPy and a GPU; says why and exits 2 otherwise.
"""

from __future__ import annotations

import argparse
import datetime
import gzip
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np

from . import _adapters
from .backends import cupy as gpu
from .backends.replay import DATA, FORMAT, encode

SUM_SIZES = (1000, 100_003, 1_000_003)
KERNELS = [
    ("sequential", {}),
    ("blocked", {"block": 128}),
    ("blocked", {"block": 1024}),
    ("tree", {"block": 128}),
    ("tree", {"block": 256}),
    ("tree", {"block": 1024}),
    ("tree-strided", {"block": 128}),
    ("tree-strided", {"block": 512}),
    ("kahan", {}),
]


def _label(order, params, fma=False, combine=None):
    p = ", ".join(f"{k}={v}" for k, v in params.items())
    s = f"kernel:{order}({p})" if p else f"kernel:{order}"
    if fma:
        s += ", fma"
    if combine:
        s += f", {combine}"
    return s


def _entry(op, fmt, n, dist, seed, variant, result, params=None):
    return {
        "op": op,
        "format": fmt,
        "n": n,
        "distribution": dist,
        "seed": seed,
        "variant": variant,
        "params": params or {},
        **encode(result),
    }


def suite(quick: bool = False):
    """Yield recording entries (runs on the GPU)."""
    sizes = SUM_SIZES[:2] if quick else SUM_SIZES
    for op in ("sum", "dot"):
        ad = _adapters.get(op)
        for fmt in ("float32", "float64") + (("float16",) if op == "sum" else ()):
            for dist in ("uniform", "wide"):
                for n in sizes:
                    inp = ad.inputs(n, fmt, dist, 0, {})
                    args = (inp["x"],) if op == "sum" else (inp["a"], inp["b"])
                    y = args[1] if op == "dot" else None
                    yield _entry(op, fmt, n, dist, 0, f"cupy.{op}", gpu.library(op, *args))
                    if fmt == "float16":
                        continue
                    for order, p in KERNELS:
                        if order in ("sequential", "kahan") and n > 100_003:
                            continue
                        for fma in (
                            (False, True)
                            if op == "dot" and order in ("sequential", "blocked", "kahan")
                            else (False,)
                        ):
                            r = gpu.kernel_sum(args[0], order, y=y, fma=fma, **p)
                            yield _entry(op, fmt, n, dist, 0, _label(order, p, fma), r, p)
                    # atomics: the block results, and 20 runs of the combined sum
                    _, parts = gpu.kernel_sum(
                        args[0], "tree", y=y, block=128, combine="atomic", return_partials=True
                    )
                    yield _entry(op, fmt, n, dist, 0, "kernel:tree(block=128) partials", parts)
                    runs = np.array(
                        [
                            gpu.kernel_sum(args[0], "tree", y=y, block=128, combine="atomic")
                            for _ in range(20)
                        ]
                    )
                    yield _entry(op, fmt, n, dist, 0, "kernel:tree(block=128), atomic x20", runs)
    mm = _adapters.get("matmul")
    for fmt in ("float32", "float64"):
        for n in (64, 256):
            inp = mm.inputs(n, fmt, "uniform", 0, {})
            yield _entry(
                "matmul",
                fmt,
                n,
                "uniform",
                0,
                "cupy.matmul",
                gpu.library("matmul", inp["A"], inp["B"]),
            )
    lin = _adapters.get("linspace")
    for fmt in ("float32", "float64"):
        for n in (50, 2000):
            inp = lin.inputs(n, fmt, "uniform", 0, {})
            yield _entry(
                "linspace",
                fmt,
                n,
                "uniform",
                0,
                "cupy.linspace(scalars)",
                gpu.library("linspace", inp["start"], inp["stop"], n),
            )
            yield _entry(
                "linspace",
                fmt,
                n,
                "uniform",
                0,
                "cupy.linspace(0-d arrays)",
                gpu.library("linspace", np.asarray(inp["start"]), np.asarray(inp["stop"]), n),
            )
    for f in ("exp", "log", "sin", "tanh", "sqrt", "pow"):
        ad = _adapters.get(f)
        for fmt in ("float32", "float64"):
            inp = ad.inputs(100_000, fmt, "uniform", 0, {})
            args = (inp["x"], inp["y"]) if f == "pow" else (inp["x"],)
            yield _entry(f, fmt, 100_000, "uniform", 0, f"cupy.{f}", gpu.library(f, *args))


def _tf32_entries():
    """cupy.matmul with CUPY_TF32=1, in a fresh process (CuPy reads it once)."""
    code = (
        "import json, sys; from fpexplore import record, _adapters; "
        "from fpexplore.backends import cupy as g; out = [];\n"
        "for n in (64, 256):\n"
        "    i = _adapters.get('matmul').inputs(n, 'float32', 'uniform', 0, {})\n"
        "    out.append(record._entry('matmul', 'float32', n, 'uniform', 0,"
        " 'cupy.matmul tf32', g.library('matmul', i['A'], i['B'])))\n"
        "json.dump(out, sys.stdout)"
    )
    env = dict(os.environ, CUPY_TF32="1")
    res = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    if res.returncode != 0:
        print("TF32 recording failed:", res.stderr[-2000:], file=sys.stderr)
        return []
    return json.loads(res.stdout)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m fpexplore.record", description=__doc__)
    ap.add_argument("--out", default=str(DATA), help="folder for gpu_<device>.json.gz")
    ap.add_argument("--quick", action="store_true", help="smaller sizes (a test run)")
    args = ap.parse_args(argv)
    ok, why = gpu.status()
    if not ok:
        print(f"cannot record: {why}", file=sys.stderr)
        return 2
    info = gpu.device_info()
    entries = list(suite(args.quick)) + _tf32_entries()
    doc = {
        "format": FORMAT,
        "device": info,
        "created": datetime.datetime.now(datetime.timezone.utc).isoformat(),
        "numpy": np.__version__,
        "entries": entries,
    }
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    name = re.sub(r"[^A-Za-z0-9]+", "_", info["device"]).strip("_").lower()
    path = out / f"gpu_{name}.json.gz"
    with gzip.open(path, "wt") as f:
        json.dump(doc, f)
    print(f"{path}: {len(entries)} results from {info['device']}")
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
