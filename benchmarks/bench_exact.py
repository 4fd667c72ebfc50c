"""Benchmark the exact core: exact_sum, exact_dot and fma against NumPy in the same run.

    python benchmarks/bench_exact.py            # n = 10^6 and 10^7, float32 and float64

Prints a Markdown table (median of repeats, wall-clock ms). The README quotes its output.
Targets (2-core machine): exact_sum of 10^6 float32 <= 25 ms; fma <= 10x plain a*b+c (float32).
"""

from __future__ import annotations

import platform

import numpy as np
from timing import timeit  # benchmarks/timing.py (the script's folder is on sys.path)

import fpexplore as fpx


def main() -> None:
    print(f"numpy {np.__version__}, python {platform.python_version()}, {platform.machine()}")
    print()
    print(
        "| n | format | np.sum | exact_sum | ratio | np.dot | exact_dot | ratio "
        "| a*b+c | fma | ratio |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    rng = np.random.default_rng(0)
    for n in (10**6, 10**7):
        repeat = 7 if n == 10**6 else 3
        for dt in (np.float32, np.float64):
            a = rng.standard_normal(n).astype(dt)
            b = rng.standard_normal(n).astype(dt)
            c = rng.standard_normal(n).astype(dt)
            t_sum = timeit(lambda a=a, b=b, c=c: np.sum(a), repeat)
            t_xsum = timeit(lambda a=a, b=b, c=c: fpx.exact_sum(a), repeat)
            t_dot = timeit(lambda a=a, b=b, c=c: np.dot(a, b), repeat)
            t_xdot = timeit(lambda a=a, b=b, c=c: fpx.exact_dot(a, b), repeat)
            t_plain = timeit(lambda a=a, b=b, c=c: a * b + c, repeat)
            t_fma = timeit(lambda a=a, b=b, c=c: fpx.fma(a, b, c), repeat)
            print(
                f"| 10^{len(str(n)) - 1} | {np.dtype(dt).name} | {t_sum:.2f} | {t_xsum:.1f} | "
                f"{t_xsum / t_sum:.0f}x | {t_dot:.2f} | {t_xdot:.1f} | {t_xdot / t_dot:.0f}x | "
                f"{t_plain:.2f} | {t_fma:.1f} | {t_fma / t_plain:.1f}x |",
                flush=True,
            )


if __name__ == "__main__":
    main()
