"""Benchmark the evaluation orders (issue targets in brackets), all measured in one run:

* time of every sum order at n = 10^6 float32 against np.cumsum (a sequential C loop) on the
  same array [<= 5x], dot with fma=True [<= 5x], exact and shuffled [<= 50 ms];
* peak extra memory of each order at n = 10^7 float32, from the kernel's high-water mark
  (/proc/self/clear_refs + VmHWM, so numba's own allocations count) [<= ~4x the input];
* numba's first-call compile time (a fresh cache) and the time to load the cached kernels.

    python benchmarks/bench_orders.py
"""

from __future__ import annotations

import os
import platform
import subprocess
import sys
import tempfile

import numpy as np
from timing import timeit  # benchmarks/timing.py (the script's folder is on sys.path)

import fpexplore as fpx

N = 10**6
BIG = 10**7


def _hwm_kib() -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    raise RuntimeError("no VmHWM")


def peak_extra_bytes(fn) -> float:
    """Peak resident memory above the current level while fn() runs (Linux only)."""
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")  # reset the high-water mark to the current RSS
    base = _hwm_kib()
    fn()
    return (_hwm_kib() - base) * 1024.0


def compile_times() -> str:
    code = (
        "import time, numpy as np, fpexplore as fpx\n"
        "x = np.ones(1000, np.float32); t = time.perf_counter()\n"
        "for o in fpx.orders('sum'): fpx.sum(x, o)\n"
        "fpx.dot(x, x, 'sequential', fma=True)\n"
        "fpx.matmul(x.reshape(10, 100), x.reshape(100, 10))\n"
        "print(time.perf_counter() - t)"
    )
    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, NUMBA_CACHE_DIR=cache)
        run = [sys.executable, "-c", code]
        cold = float(
            subprocess.run(run, env=env, capture_output=True, text=True, check=True).stdout
        )
        warm = float(
            subprocess.run(run, env=env, capture_output=True, text=True, check=True).stdout
        )
    return f"{cold:.1f} s compiling (first use, float32 kernels), {warm:.2f} s from the cache"


def main() -> None:
    print(
        f"numpy {np.__version__}, python {platform.python_version()}, {platform.machine()}, "
        f"{os.cpu_count()} cores"
    )
    print("numba:", compile_times())
    rng = np.random.default_rng(0)
    x = rng.standard_normal(N).astype(np.float32)
    y = rng.standard_normal(N).astype(np.float32)
    t_cumsum = timeit(lambda: np.cumsum(x))
    t_npsum = timeit(lambda: np.sum(x))
    print(f"\nn = 10^6 float32: np.cumsum {t_cumsum:.2f} ms, np.sum {t_npsum:.2f} ms\n")
    big = rng.standard_normal(BIG).astype(np.float32)
    print("| order | ms at 10^6 | / np.cumsum | peak extra memory at 10^7 (x input) |")
    print("|---|---|---|---|")
    for order in fpx.orders("sum"):
        t = timeit(lambda order=order: fpx.sum(x, order))
        mem = peak_extra_bytes(lambda order=order: fpx.sum(big, order)) / big.nbytes
        print(f"| {order} | {t:.2f} | {t / t_cumsum:.1f}x | {mem:.2f} |", flush=True)
    for order in ("sequential", "blocked", "kahan"):
        t = timeit(lambda order=order: fpx.dot(x, y, order, fma=True))
        mem = peak_extra_bytes(lambda order=order: fpx.dot(big, big, order, fma=True)) / big.nbytes
        print(f"| dot {order}, fma | {t:.2f} | {t / t_cumsum:.1f}x | {mem:.2f} |", flush=True)
    A = rng.uniform(0, 1, (400, 400)).astype(np.float32)
    B = rng.uniform(0, 1, (400, 400)).astype(np.float32)
    print(
        "\nmatmul 400x400 float32 (ms):",
        ", ".join(
            f"{o} {timeit(lambda o=o: fpx.matmul(A, B, o), repeat=3):.0f}"
            for o in ("sequential", "pairwise", "tree", "kahan", "exact")
        ),
        f"| np.matmul {timeit(lambda: A @ B):.1f}",
    )


if __name__ == "__main__":
    main()
