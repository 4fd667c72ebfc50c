"""Benchmark the explorer's cold start: time to the first render in a fresh Python process.

"First render" = ``import fpexplore as fpx; app = fpx.explorer(op=..., format=..., n=...)``
(the constructor runs compare() with the op's default variants and draws) plus rendering the
figure to PNG, which is what ipympl sends to the browser (in a process without a front end its
canvas renders nothing by itself). Timed inside the child from before ``import fpexplore``.
The child then changes the seed and renders again: that second update is the view's own cost
(computing and drawing), so ``first - update`` is what starting up costs.

* cold: an empty temporary NUMBA_CACHE_DIR, so numba compiles every kernel the view needs
  (a fresh cache per measurement: what a first visitor pays). Ops that use no numba kernel
  are not measured cold (nothing to compile: cold = warm).
* warm: after ``python -m fpexplore.warmup`` filled the cache (target: first render <= 1.5 s
  on the 2-core development machine); median and best of --repeat runs.

n = 10^6 for sum, dot and variance (as in the cold-start issue), else the size the explorer
starts each op at (``default_n``: 100 for matmul and cdist, 1000 for adam_step, whose float64
exact reference costs ~0.3 ms per element, 10^5 for the others). The user's numba cache is
not touched: everything runs in temporary cache folders. Python's bytecode cache is on
(PYTHONPYCACHEPREFIX, a temporary folder, primed by the warm-up run), as after a
``pip install``, even where the environment sets PYTHONDONTWRITEBYTECODE.

    python benchmarks/bench_startup.py [--ops sum,matmul] [--formats float32] [--repeat 3]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile

import numba
import numpy as np

import fpexplore as fpx
from fpexplore.ops import registry

TARGET_S = 1.5
N = {"sum": 10**6, "dot": 10**6, "variance": 10**6}  # as in the cold-start issue


def size(op: str) -> int:
    """10^6 for sum, dot and variance, else the explorer's first size for the op."""
    return N.get(op, registry.get(op).default_n)


KERNEL_OPS = ("sum", "dot", "matmul", "cdist", "variance", "softmax", "logsumexp")
PYC = ""  # the bytecode cache folder of the children (set in main)

CHILD = r"""
import io, json, sys, time
t0 = time.perf_counter()
import fpexplore as fpx
t1 = time.perf_counter()
app = fpx.explorer(op=sys.argv[1], format=sys.argv[2], n=int(sys.argv[3]),
                   backends=("numpy", "emulated"))
t2 = time.perf_counter()
import ipywidgets as W
def render():  # ipympl: render as the browser's request would (the Image fallback already has)
    if not isinstance(app.canvas, W.Image):
        app.figure.savefig(io.BytesIO(), format="png", dpi=90)
render()
t3 = time.perf_counter()
ok = app.comparison is not None
app.seed.value = 1
render()
t4 = time.perf_counter()
from fpexplore.warmup import _counts, _dispatchers
print(json.dumps(dict(first=t3 - t0, imp=t1 - t0, explorer=t2 - t1, png=t3 - t2, update=t4 - t3,
                      ok=ok, message=app.message.value[:300],
                      compiled=_counts(_dispatchers())[0] if "numba" in sys.modules else 0)))
"""


def environ(cache: str) -> dict:
    env = dict(os.environ, NUMBA_CACHE_DIR=cache, PYTHONPYCACHEPREFIX=PYC)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def child(op: str, fmt: str, cache: str) -> dict:
    env = environ(cache)
    out = subprocess.run(
        [sys.executable, "-c", CHILD, op, fmt, str(size(op))],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    if out.returncode:
        raise RuntimeError(f"{op} {fmt}: {out.stderr[-2000:]}")
    r = json.loads(out.stdout.strip().splitlines()[-1])
    if not r["ok"]:
        raise RuntimeError(f"{op} {fmt}: the explorer shows an error: {r['message']}")
    return r


def machine() -> str:
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next(ln.split(":", 1)[1].strip() for ln in f if ln.startswith("model name"))
    except (OSError, StopIteration):
        pass
    return (
        f"{cpu}, {os.cpu_count()} cores; Python {platform.python_version()}, numpy "
        f"{np.__version__}, numba {numba.__version__}"
    )


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--ops", help="comma-separated (default: every op of the explorer)")
    p.add_argument("--formats", help="comma-separated (default: all)")
    p.add_argument("--repeat", type=int, default=3, help="warm runs per cell (default 3)")
    p.add_argument("--no-cold", action="store_true", help="skip the cold measurements")
    a = p.parse_args(argv)
    ops = a.ops.split(",") if a.ops else list(registry.ops())
    formats = a.formats.split(",") if a.formats else list(fpx.FORMATS)
    print(machine())
    print("seconds to the explorer's first render in a fresh process")
    cold: dict = {}
    warm: dict = {}
    best: dict = {}
    global PYC
    with tempfile.TemporaryDirectory(prefix="fpx-bench-startup-") as tmp:
        PYC = os.path.join(tmp, "pyc")
        cache = os.path.join(tmp, "warm")
        subprocess.run(  # also writes the bytecode of everything the explorer imports
            [sys.executable, "-m", "fpexplore.warmup", "--quiet", "--formats", ",".join(formats)],
            env=environ(cache),
            check=True,
        )
        child("exp", formats[0], cache)  # and of what the warm-up itself does not import
        for fmt in formats:
            for op in ops:
                runs = [child(op, fmt, cache) for _ in range(max(1, a.repeat))]
                if any(r["compiled"] for r in runs):
                    print(f"  WARNING: {op} {fmt} compiled kernels after the warm-up")
                warm[op, fmt] = statistics.median(r["first"] for r in runs)
                best[op, fmt] = min(runs, key=lambda r: r["first"])
                b = best[op, fmt]
                print(
                    f"  warm {op:<9} {fmt:<8} median {warm[op, fmt]:5.2f}  best {b['first']:5.2f}"
                    f" (import {b['imp']:.2f} + explorer {b['explorer']:.2f} + PNG "
                    f"{b['png']:.2f}; a second update {b['update']:.2f})"
                )
        if not a.no_cold:
            for fmt in formats:
                for op in (o for o in ops if o in KERNEL_OPS):
                    r = child(op, fmt, os.path.join(tmp, f"cold-{op}-{fmt}"))  # empty cache
                    cold[op, fmt] = r
                    print(f"  cold {op:<9} {fmt:<8} {r['first']:6.2f} ({r['compiled']} compiled)")
    print()
    print("first render, cold / warm (median) / warm best, and the second update (warm best run)")
    print("| op | n | " + " | ".join(formats) + " |")
    print("|---" * (2 + len(formats)) + "|")
    for op in ops:
        cells = []
        for f in formats:
            c = cold.get((op, f))
            c = f"{c['first']:.1f}" if c else "–"
            cells.append(
                f"{c} / {warm[op, f]:.2f} / {best[op, f]['first']:.2f} "
                f"({best[op, f]['update']:.2f})"
            )
        n = size(op)
        n = f"10^{len(str(n)) - 1}" if n >= 1000 else str(n)
        print(f"| {op} | {n} | " + " | ".join(cells) + " |")
    print()
    for f in formats:
        wop = max(ops, key=lambda o: warm[o, f])
        line = f"{f}: warm worst {warm[wop, f]:.2f} s ({wop})"
        startup = {o: best[o, f]["first"] - best[o, f]["update"] for o in ops}
        sop = max(startup, key=startup.get)
        line += f"; start-up share worst {startup[sop]:.2f} s ({sop})"
        kc = [o for o in ops if (o, f) in cold]
        if kc:
            cop = max(kc, key=lambda o: cold[o, f]["first"])
            line += f"; cold worst {cold[cop, f]['first']:.1f} s ({cop})"
        print(line)
    over = sorted((k for k in warm if warm[k] > TARGET_S), key=warm.get, reverse=True)
    print(
        f"target: first render <= {TARGET_S} s warm: "
        + ("met everywhere" if not over else "over for " + ", ".join(f"{o} {f}" for o, f in over))
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
