"""Benchmark the exact core: fma, exact_sum and exact_dot against NumPy in the same run.

    python benchmarks/bench_exact.py            # n = 10^6, float32 and float64
    python benchmarks/bench_exact.py --large    # and n = 10^7

Prints a Markdown table (median of repeats, wall-clock ms) with the ratios measured in this
one run; NumPy's BLAS (np.dot) runs on one thread (threadpoolctl). fma runs on one thread;
exact_sum and exact_dot cut large arrays into parts summed on ``fpx.exact.threads_for(n)``
threads (the CPUs this process may use; FPX_EXACT_THREADS=1: one thread). docs/performance.md quotes
its output. Targets (issue 28, 2 cores): fma <= 2.5x a*b+c, exact_sum <= 8x np.sum,
exact_dot <= 20x np.dot, float32 and float64, n = 10^6.
"""

from __future__ import annotations

import platform
import sys

import numpy as np
from threadpoolctl import threadpool_limits
from timing import timeit  # benchmarks/timing.py (the script's folder is on sys.path)

import fpexplore as fpx


def main() -> None:
    sizes = (10**6, 10**7) if "--large" in sys.argv[1:] else (10**6,)
    print(f"numpy {np.__version__}, python {platform.python_version()}, {platform.machine()}")
    print(f"exact_sum / exact_dot threads at n = 10^6: {fpx.exact.threads_for(10**6)}")
    print()
    print(
        "| n | format | a*b+c | fma | ratio | np.sum | exact_sum | ratio "
        "| np.dot | exact_dot | ratio |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    rng = np.random.default_rng(0)
    with threadpool_limits(1):
        for n in sizes:
            repeat = 15 if n == 10**6 else 5
            for dt in (np.float32, np.float64):
                a, b, c = (rng.standard_normal(n).astype(dt) for _ in range(3))
                t_plain = timeit(lambda a=a, b=b, c=c: a * b + c, repeat)
                t_fma = timeit(lambda a=a, b=b, c=c: fpx.fma(a, b, c), repeat)
                t_sum = timeit(lambda a=a: np.sum(a), repeat)
                t_xsum = timeit(lambda a=a: fpx.exact_sum(a), repeat)
                t_dot = timeit(lambda a=a, b=b: np.dot(a, b), repeat)
                t_xdot = timeit(lambda a=a, b=b: fpx.exact_dot(a, b), repeat)
                print(
                    f"| 10^{len(str(n)) - 1} | {np.dtype(dt).name} | {t_plain:.2f} | "
                    f"{t_fma:.2f} | {t_fma / t_plain:.1f}x | {t_sum:.2f} | {t_xsum:.2f} | "
                    f"{t_xsum / t_sum:.1f}x | {t_dot:.2f} | {t_xdot:.2f} | "
                    f"{t_xdot / t_dot:.1f}x |",
                    flush=True,
                )


if __name__ == "__main__":
    main()
