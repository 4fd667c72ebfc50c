"""Benchmark the emulated matmul orders at n = 1000 (the explorer's largest matmul), per format:
the time of each of compare's default variants, of the exact reference, and of a whole
``compare`` with one variant and with its default variants [bfloat16 <= 15 s for a compare
with one variant on 2 cores, issue "Never silently wrong, round two", item 14].

    python benchmarks/bench_matmul.py           # float32, bfloat16, float16, FP8 E4M3 and
                                                # fpx.format(11, 15) data at n = 1000
    python benchmarks/bench_matmul.py 300       # another size

float16 and bfloat16 accumulators round every operation in float64 from the bits
(orders/_kernels.py): a row of A runs against tiles of 256 output columns, each step of the
order one branch-free loop over the columns (SIMD lanes), every element's operations those of
the element alone; float32 runs sequential and Kahan four output columns in step. The exact
reference (exact_matmul: Dot2 interval bounds) runs a row against tiles of columns too. Large
products run blocks of rows in threads (orders/products.py): the numbers depend on the core
count, the bits do not. A compare of float16 includes NumPy's own float16 np.matmul (no BLAS
for float16: seconds at n = 1000); NumPy's bfloat16 np.matmul returns float32, so a bfloat16
compare computes the exact reference twice (bfloat16 and float32).
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
    print(f"{platform.processor() or platform.machine()}, {cores} cores, n = {n}, median of 3 (s)")
    print()
    print(
        "| format | sequential | pairwise | tree | kahan | exact | compare (sequential) "
        "| compare (defaults) |"
    )
    print("|---|---|---|---|---|---|---|---|")
    fpx.format(11, 15, name="my_half")  # float16's parameters, data held in float64
    for fmt in ("float32", "bfloat16", "float16", "float8_e4m3", "my_half"):
        cmp = fpx.compare("matmul", format=fmt, n=n, variants=["exact"])  # (the data drawn)
        A, B = cmp.inputs["A"], cmp.inputs["B"]  # (FP8: ml_dtypes arrays)
        cells = []
        for order in ("sequential", "pairwise", "tree", "kahan", "exact"):
            if fmt == "my_half" or not _takes(A, B, order):
                cells.append("—")  # (fpx.matmul reads a format from the dtype: compare only)
                continue
            ms = timeit(lambda o=order, A=A, B=B: fpx.matmul(A, B, o), repeat=3)
            cells.append(f"{ms / 1e3:.2f}")
        one = timeit(
            lambda f=fmt: fpx.compare("matmul", format=f, n=n, variants=["sequential"]), repeat=3
        )
        total = timeit(lambda f=fmt: fpx.compare("matmul", format=f, n=n), repeat=3)
        print(f"| {fmt} | {' | '.join(cells)} | {one / 1e3:.2f} | {total / 1e3:.2f} |", flush=True)


def _takes(A, B, order: str) -> bool:
    """Whether the order multiplies data of A's format (FP8: the rounded orders and exact)."""
    try:
        fpx.matmul(A[:2, :2], B[:2, :2], order)
    except ValueError:
        return False
    return True


if __name__ == "__main__":
    main()
