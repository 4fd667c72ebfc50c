"""Record GPU results for the replay backend:  python -m fpexplore.record [--out DIR] [--quick]

Writes into the user's folder (``backends.replay.user_folder()``, which the replay backend
reads beside the recordings fpexplore ships), never into the installed package unless
``--out`` names it.

Runs a fixed, seeded suite on the GPU: the recordings each op's spec names (fpexplore/ops,
``OpSpec.recordings``) — CuPy's own functions (cupy.sum, cupy.dot, cupy.matmul with TF32 off
and, in a subprocess with CUPY_TF32=1, on; cupy.linspace; the elementwise ufuncs) and, where
a recording asks for them, fpexplore's own order kernels (sequential, blocked, tree,
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

from .backends import cupy as gpu
from .backends.replay import FORMAT, encode, user_folder
from .ops.registry import OP_SPECS

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
KERNEL_FORMATS = ("float32", "float64")  # backends/cupy.kernel_source
SEQUENTIAL_MAX_N = 100_003  # one GPU thread: the single-thread kernels stop here


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


def recordings(in_subprocess: bool = False):
    """(op, index, Recording) for every recording the op specs name (fpexplore/ops): those
    with their own environment (``in_subprocess``) or the others, in the registry's order."""
    for op, spec in OP_SPECS.items():
        for k, rec in enumerate(spec.recordings):
            if bool(rec.env) == in_subprocess:
                yield op, k, rec


def _run(op: str, rec, quick: bool = False):
    """Yield the entries of one recording (runs on the GPU)."""
    spec = OP_SPECS[op]
    for fmt in rec.formats:
        for dist in rec.distributions:
            for n in rec.sizes_for(quick):
                inp = spec.inputs(n, fmt, dist, 0, {})
                for label, args_of in rec.calls:
                    yield _entry(op, fmt, n, dist, 0, label, gpu.library(op, *args_of(inp)))
                if rec.kernels and fmt in KERNEL_FORMATS:
                    args = rec.calls[0][1](inp)
                    yield from _kernel_entries(op, fmt, n, dist, args[0], args[1:2] or (None,))


def _kernel_entries(op, fmt, n, dist, x, second):
    """fpexplore's own order kernels on x (with a second array y: dot products)."""
    (y,) = second
    for order, p in KERNELS:
        if order in ("sequential", "kahan") and n > SEQUENTIAL_MAX_N:
            continue
        fused = y is not None and order in ("sequential", "blocked", "kahan")
        for fma in (False, True) if fused else (False,):
            r = gpu.kernel_sum(x, order, y=y, fma=fma, **p)
            yield _entry(op, fmt, n, dist, 0, _label(order, p, fma), r, p)
    # atomics: the block results, and 20 runs of the combined sum
    _, parts = gpu.kernel_sum(x, "tree", y=y, block=128, combine="atomic", return_partials=True)
    yield _entry(op, fmt, n, dist, 0, "kernel:tree(block=128) partials", parts)
    runs = np.array(
        [gpu.kernel_sum(x, "tree", y=y, block=128, combine="atomic") for _ in range(20)]
    )
    yield _entry(op, fmt, n, dist, 0, "kernel:tree(block=128), atomic x20", runs)


def suite(quick: bool = False):
    """Yield recording entries (runs on the GPU): every recording of the op specs that needs
    no environment of its own."""
    for op, _, rec in recordings():
        yield from _run(op, rec, quick)


def _subprocess_entries(quick: bool = False):
    """The recordings with their own environment (cupy.matmul with CUPY_TF32=1: CuPy reads it
    once), each in a fresh process."""
    out = []
    for op, k, rec in recordings(in_subprocess=True):
        code = (
            "import json, sys; from fpexplore import record\n"
            f"rec = record.OP_SPECS[{op!r}].recordings[{k}]\n"
            f"json.dump(list(record._run({op!r}, rec, {quick!r})), sys.stdout)"
        )
        env = dict(os.environ, **rec.env)
        res = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
        if res.returncode != 0:
            what = ", ".join(label for label, _ in rec.calls)
            print(f"{what} recording failed:", res.stderr[-2000:], file=sys.stderr)
            continue
        out += json.loads(res.stdout)
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m fpexplore.record", description=__doc__)
    ap.add_argument(
        "--out",
        default=None,
        help="folder for gpu_<device>.json.gz (default: the user folder the replay backend "
        f"reads, {user_folder()}; the package's own data folder only when named)",
    )
    ap.add_argument("--quick", action="store_true", help="smaller sizes (a test run)")
    args = ap.parse_args(argv)
    ok, why = gpu.status()
    if not ok:
        print(f"cannot record: {why}", file=sys.stderr)
        return 2
    info = gpu.device_info()
    entries = list(suite(args.quick)) + _subprocess_entries(args.quick)
    doc = {
        "format": FORMAT,
        "device": info,
        "created": datetime.datetime.now(datetime.timezone.utc).isoformat(),
        "numpy": np.__version__,
        "entries": entries,
    }
    out = Path(args.out) if args.out is not None else user_folder()
    out.mkdir(parents=True, exist_ok=True)
    name = re.sub(r"[^A-Za-z0-9]+", "_", info["device"]).strip("_").lower()
    path = out / f"gpu_{name}.json.gz"
    with gzip.open(path, "wt") as f:
        json.dump(doc, f)
    print(f"{path}: {len(entries)} results from {info['device']}")
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
