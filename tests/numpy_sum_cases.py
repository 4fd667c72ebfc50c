"""Deterministic inputs for the np.sum recordings (same values under every NumPy version).

The generator is SplitMix64 in plain uint64 arithmetic, so it does not depend on NumPy's
random streams. Used by tests/data/record_numpy_sum.py (run under old NumPy versions) and by
tests/test_orders.py.
"""

from __future__ import annotations

import numpy as np

SIZES = list(range(0, 301)) + [1000, 8191, 8192, 8193, 16385, 100003, 1000003]
KINDS = ("uniform", "wide", "cancel")
DTYPES = ("float16", "float32", "float64")
VIEWS = ("contiguous", "stride2", "reversed")


def _splitmix(n: int, seed: int) -> np.ndarray:
    i = np.arange(1, n + 1, dtype=np.uint64)
    with np.errstate(over="ignore"):
        z = np.uint64(seed) * np.uint64(0x9E3779B97F4A7C15) + i * np.uint64(0x9E3779B97F4A7C15)
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


def uniform01(n: int, seed: int) -> np.ndarray:
    return (_splitmix(n, seed) >> np.uint64(11)).astype(np.float64) * 2.0**-53


def make(n: int, kind: str, dtype: str, seed: int = 0) -> np.ndarray:
    """n values (before taking a view) of the given kind, cast to dtype."""
    u = uniform01(n, seed * 7 + 1)
    if kind == "uniform":
        x = u
    elif kind == "wide":  # signs and exponents spread over ~16 binades
        e = np.floor(uniform01(n, seed * 7 + 2) * 16) - 8
        x = (u - 0.5) * np.exp2(e)
    else:  # cancel: x and -x + small, shuffled by a second stream
        half = (n + 1) // 2
        v = (u[:half] - 0.5) * 100
        x = np.concatenate([v, -v + (uniform01(half, seed * 7 + 3) - 0.5) * 1e-3])[:n]
        x = x[np.argsort(uniform01(n, seed * 7 + 4), kind="stable")]
    return x.astype(dtype)


def view(x: np.ndarray, how: str) -> np.ndarray:
    return {"contiguous": x, "stride2": x[::2], "reversed": x[::-1]}[how]


def cases():
    """(n, kind, dtype, view) for the recordings; big sizes with the contiguous view only."""
    for n in SIZES:
        for kind in KINDS if n <= 1000 or n in (8193, 100003) else ("uniform",):
            for dtype in DTYPES:
                for how in VIEWS if n <= 100003 else ("contiguous",):
                    yield n, kind, dtype, how
