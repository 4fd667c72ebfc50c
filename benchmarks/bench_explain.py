"""Benchmark fpx.explain (issue 25 targets in brackets), warm, median of 5:

* a 300x300 float32 matmul, sequential against its +tf32 twin [<= 3 s];
* a 300x300 float32 matmul, A100 tensor cores (tf32) against a blocked CPU order [<= 3 s];
* a sum of 10^5 float32 values, sequential against pairwise [<= 1 s];
* a dot product of 10^5 float32 values, sequential against sequential+fma.

    python benchmarks/bench_explain.py
"""

from __future__ import annotations

import numpy as np
from timing import timeit  # benchmarks/timing.py (the script's folder is on sys.path)

import fpexplore as fpx


def main() -> None:
    A = fpx.generate("normal", 90_000, "float32", 1).reshape(300, 300)
    B = fpx.generate("normal", 90_000, "float32", 2).reshape(300, 300)
    x = fpx.generate("uniform", 100_000, "float32", 3)
    y = fpx.generate("normal", 100_000, "float32", 4)
    tc = fpx.mma(
        fpx.as_format(A, "tf32"),
        fpx.as_format(B, "tf32"),
        np.zeros((300, 300), np.float32),
        arch="a100",
        inputs="tf32",
    )
    cases = {
        "matmul 300x300 float32, sequential vs +tf32 [<= 3 s]": (
            "matmul",
            (A, B),
            {
                "plain": fpx.matmul(A, B, "sequential"),
                "tf32": fpx.matmul(A, B, "sequential", input_rounding="tf32"),
            },
        ),
        "matmul 300x300 float32, A100 tensor cores vs blocked [<= 3 s]": (
            "matmul",
            (A, B),
            {"gpu": tc, "cpu": fpx.matmul(A, B, "blocked", block=64)},
        ),
        "sum 10^5 float32, sequential vs pairwise [<= 1 s]": (
            "sum",
            x,
            {"cpu": fpx.sum(x, "sequential"), "gpu": fpx.sum(x, "pairwise")},
        ),
        "dot 10^5 float32, sequential vs +fma": (
            "dot",
            (x, y),
            {"plain": fpx.dot(x, y, "sequential"), "fma": fpx.dot(x, y, "sequential", fma=True)},
        ),
    }
    for name, (op, inputs, results) in cases.items():
        ms = timeit(lambda op=op, i=inputs, r=results: fpx.explain(op, i, r), repeat=5)
        cause = fpx.explain(op, inputs, results).causes.iloc[0]["factor"]
        print(f"{name}: {ms / 1e3:.2f} s (cause: {cause})")


if __name__ == "__main__":
    main()
