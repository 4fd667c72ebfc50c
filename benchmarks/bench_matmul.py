"""Benchmark the emulated matmul orders at n = 1000 (the explorer's largest matmul), per format:
the time of each of compare's default variants [bfloat16 <= 15 s per variant on 2 cores].

    python benchmarks/bench_matmul.py           # float32, bfloat16, float16 at n = 1000
    python benchmarks/bench_matmul.py 300       # another size

16-bit formats round every operation in float64 (numerics.round_to_precision); the sequential
and Kahan orders run four output columns in step, and large products run blocks of rows in
threads (orders/products.py): the numbers depend on the core count, the bits do not.
"""

from __future__ import annotations

import os
import platform
import sys

from timing import timeit  # benchmarks/timing.py (the script's folder is on sys.path)

import fpexplore as fpx


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 1000
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    print(f"{platform.processor() or platform.machine()}, {cores} cores, n = {n}")
    print()
    print("| format | sequential | pairwise | tree | kahan | compare (all, s) |")
    print("|---|---|---|---|---|---|")
    for fmt in ("float32", "bfloat16", "float16"):
        A = fpx.generate("uniform", n * n, fmt, 0).reshape(n, n)
        B = fpx.generate("uniform", n * n, fmt, 1).reshape(n, n)
        cells = []
        for order in ("sequential", "pairwise", "tree", "kahan"):
            ms = timeit(lambda o=order, A=A, B=B: fpx.matmul(A, B, o), repeat=1)
            cells.append(f"{ms / 1e3:.1f} s")
        total = timeit(lambda f=fmt: fpx.compare("matmul", format=f, n=n), repeat=1)
        print(f"| {fmt} | {' | '.join(cells)} | {total / 1e3:.1f} |", flush=True)


if __name__ == "__main__":
    main()
