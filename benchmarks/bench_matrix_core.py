"""Benchmark the AMD matrix cores (fpx.mma on mi100, mi250, mi300; the chain of blocks in
fpexplore/orders/_matrix_core_kernels.py), warm: a dot product of 10^5 terms (a 1x10^5 by
10^5x1 product, median of 7) and a 300x300x300 product (median of 3), per architecture and
input format [<= 20 ms and well under 1 s; the NumPy loop over the blocks it replaced took
about 10 s for the dot product, and fpx.explain of a dot product of 10^5, which tries every
architecture, took about a minute].

    python benchmarks/bench_matrix_core.py          # K = 10^5, n = 300
    python benchmarks/bench_matrix_core.py 10000 100
"""

from __future__ import annotations

import os
import platform
import sys

import numpy as np
from timing import timeit  # benchmarks/timing.py (the script's folder is on sys.path)

import fpexplore as fpx

CASES = [
    ("mi100", "float16", "exact"),
    ("mi100", "bfloat16", "exact"),
    ("mi250", "float16", "pairwise"),
    ("mi300", "float16", "late-c"),
    ("mi300", "float8_e4m3fnuz", "odd-even"),
]


def main() -> None:
    k = int(sys.argv[1]) if len(sys.argv) > 1 else 10**5
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 300
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    print(f"{platform.processor() or platform.machine()}, {cores} cores; warm, medians")
    print()
    print(f"| arch | inputs | sum | 1x{k} @ {k}x1 (ms) | {n}x{n}x{n} (ms) |")
    print("|---|---|---|---|---|")
    for arch, fmt, kind in CASES:
        dot, mat = _times(arch, fmt, k, n)
        print(f"| {arch} | {fmt} | {kind} | {dot:.1f} | {mat:.0f} |", flush=True)


def _times(arch: str, fmt: str, k: int, n: int) -> tuple[float, float]:
    """Milliseconds of fpx.mma: a dot product of k terms, an n x n x n product."""
    x = np.asarray(fpx.as_format(fpx.generate("normal", k, "float32", 1), fmt))
    y = np.asarray(fpx.as_format(fpx.generate("normal", k, "float32", 2), fmt))
    A = np.asarray(fpx.as_format(fpx.generate("normal", n * n, "float32", 3), fmt))
    B = np.asarray(fpx.as_format(fpx.generate("normal", n * n, "float32", 4), fmt))
    A, B = A.reshape(n, n), B.reshape(n, n)
    dot = timeit(lambda: fpx.mma(x[None], y[:, None], 0.0, arch=arch, inputs=fmt), repeat=7)
    mat = timeit(lambda: fpx.mma(A, B, 0.0, arch=arch, inputs=fmt), repeat=3)
    return dot, mat


if __name__ == "__main__":
    main()
