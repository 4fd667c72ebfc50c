"""Value generators for the property tests: hypothesis strategies and seeded NumPy sweeps.

Both cover every class of value: random bit patterns (so NaN, ±inf, ±0 and subnormals come up),
hand-picked edge values, and short-significand values that make ties and exact cancellations.
"""

from __future__ import annotations

import math

import numpy as np
from hypothesis import strategies as st

from oracle import SPECS, UINT, max_finite

STORAGE = ("float16", "bfloat16", "float32", "float64")


def bits_of(fmt: str) -> int:
    return SPECS[fmt][0].itemsize * 8


def from_bits(bits, fmt: str):
    return np.asarray(bits, dtype=UINT[bits_of(fmt)]).view(SPECS[fmt][0])


def edge_values(fmt: str) -> list[float]:
    _, p, emin, emax = SPECS[fmt]
    mx = float(max_finite(fmt))
    tiny = math.ldexp(1.0, emin - p + 1)
    vals = [
        0.0,
        -0.0,
        1.0,
        -1.0,
        math.inf,
        -math.inf,
        math.nan,
        mx,
        -mx,
        tiny,
        -tiny,
        math.ldexp(1.0, emin),
        -math.ldexp(1.0, emin),
        math.ldexp(1.0, emin) - tiny,
        1.0 + math.ldexp(1.0, 1 - p),
        1.0 - math.ldexp(1.0, -p),
        2.0,
        0.5,
        3.0,
        0.1,
        math.ldexp(1.0, emax),
        mx / 2,
        3 * tiny,
    ]
    return [float(np.float64(v).astype(SPECS[fmt][0])) if np.isfinite(v) else v for v in vals]


def values(fmt: str) -> st.SearchStrategy:
    """Hypothesis strategy for single values of a format (as Python floats)."""
    dtype, p, emin, emax = SPECS[fmt]
    n = bits_of(fmt)
    raw = st.integers(0, 2**n - 1).map(lambda b: float(from_bits([b], fmt)[0]))
    short = st.builds(
        lambda m, e, s: s * math.ldexp(m, e),
        st.integers(1, 2 ** min(p, 12)),
        st.integers(max(emin - p + 1, -60), min(emax - 12, 60)),
        st.sampled_from([1.0, -1.0]),
    ).map(lambda v: float(np.float64(v).astype(dtype)))
    return st.one_of(raw, short, st.sampled_from(edge_values(fmt)))


def arrays(fmt: str, min_size: int = 0, max_size: int = 40) -> st.SearchStrategy:
    return st.lists(values(fmt), min_size=min_size, max_size=max_size).map(
        lambda xs: np.array(xs, dtype=np.float64).astype(SPECS[fmt][0])
    )


def random_values(rng: np.random.Generator, fmt: str, size: int) -> np.ndarray:
    """A seeded mix: 1/3 raw bit patterns, 1/3 short significands near 1, 1/3 edge values and
    moderate random floats over many binades."""
    dtype, p, emin, emax = SPECS[fmt]
    n = bits_of(fmt)
    k = size // 3
    with np.errstate(invalid="ignore"):  # NaN bit patterns
        raw = (
            rng.integers(0, 2**n, size=k, dtype=np.uint64)
            .astype(UINT[n])
            .view(dtype)
            .astype(np.float64)
        )
    m = rng.integers(1, 2 ** min(p, 14), size=k).astype(np.float64)
    e = rng.integers(-20, 8, size=k)
    short = np.ldexp(m, e) * rng.choice([-1.0, 1.0], size=k)
    rest = size - 2 * k
    edges = np.array(edge_values(fmt))
    wide = np.exp2(rng.uniform(emin - p, emax, size=rest)) * rng.choice([-1.0, 1.0], size=rest)
    pick = rng.random(rest) < 0.2
    wide[pick] = rng.choice(edges, size=int(pick.sum()))
    out = np.concatenate([raw, short, wide])
    rng.shuffle(out)
    with np.errstate(over="ignore"):
        return out.astype(dtype)
