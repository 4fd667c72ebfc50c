"""Shared timing helper for the benchmarks: median wall-clock milliseconds after a warm-up."""

from __future__ import annotations

import statistics
import time


def timeit(fn, repeat: int = 7) -> float:
    fn()  # warm-up (numba compilation, caches)
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times) * 1e3
