"""Benchmark what a user of the explorer waits for (targets from the explorer issue):

* compare() + plot() rendered to PNG for sum, float32, n = 10^6, five variants [<= 300 ms];
* the app's update latency for the same view (a control change -> recompute -> redraw), and
  with five variant specs (accumulator, block size) [<= 250 ms]; for sum and dot of float16,
  FP8 (E4M3) and a format of fpx.format with float16's parameters;
* a sweep 10..10^6 over five orders [<= 3 s].

Warm timings (numba kernels compiled and cached, NumPy/matplotlib imported), median of 5.

    python benchmarks/bench_explorer.py
"""

from __future__ import annotations

import io
import os
import platform

import numpy as np
from timing import timeit  # benchmarks/timing.py (the script's folder is on sys.path)

import fpexplore as fpx

VARIANTS = ["sequential", "pairwise", "numpy", "tree", "kahan"]
SPECS = ["sequential", "sequential@float64", "pairwise", "tree(block=256)", "kahan"]


def compare_and_png():
    cmp = fpx.compare("sum", format="float32", n=10**6, variants=VARIANTS)
    fig = cmp.plot()
    fig.savefig(io.BytesIO(), format="png", dpi=90)


def main():
    print(f"numpy {np.__version__}, python {platform.python_version()}, {os.cpu_count()} cores")
    t = timeit(compare_and_png)
    print(f"compare + plot + PNG, sum float32 n=10^6, 5 variants: {t:.0f} ms")
    app = fpx.explorer(n=10**6, variants=VARIANTS)
    seeds = iter(range(1, 100))

    def change():  # a control change: new data, recompute, redraw
        app.seed.value = next(seeds)
        app.figure.savefig(io.BytesIO(), format="png", dpi=90)  # what the browser receives

    print(f"explorer update latency (seed change at n=10^6, redraw): {timeit(change):.0f} ms")
    app = fpx.explorer(n=10**6, variants=SPECS)  # five evaluation settings (variant specs)
    print(f"explorer update latency, five specs {SPECS}: {timeit(change):.0f} ms")
    fpx.format(precision=11, emax=15, name="bench_half")  # float16's parameters, held in float64
    for fmt in ("float16", "float8_e4m3", "bench_half"):  # data held in another type: their
        for op in ("sum", "dot"):  # additions (and products) rounded to them one by one
            app = fpx.explorer(op=op, format=fmt, n=10**6, variants=["sequential", "pairwise"])
            t = timeit(change)
            print(
                f"explorer update latency, {op} {fmt} n=10^6, sequential and pairwise: {t:.0f} ms"
            )
    sizes = [10, 100, 1000, 10**4, 10**5, 10**6]
    t = timeit(lambda: fpx.sweep("sum", sizes=sizes, variants=VARIANTS, progress=False), repeat=3)
    print(f"sweep 10..10^6 over 5 orders: {t / 1e3:.2f} s")


if __name__ == "__main__":
    main()
