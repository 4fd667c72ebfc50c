"""Seeded input data: :func:`generate` draws ``n`` values of a format from a named
distribution, each correctly rounded to the format, the same on every machine."""

from __future__ import annotations

import numpy as np

from .formats import as_format, format_info

__all__ = ["DISTRIBUTIONS", "check_choice", "generate"]

DISTRIBUTIONS = {
    "uniform": "uniform on [0, 1)",
    "normal": "standard normal",
    "wide": "log-uniform magnitudes over many binades, random signs",
    "ill-conditioned": "values that cancel: the exact result is tiny next to the terms",
}


def check_choice(name: str, value, valid) -> None:
    """ValueError naming the valid choices when ``value`` is not one of them."""
    if value not in valid:
        raise ValueError(f"unknown {name} {value!r}; valid: {', '.join(valid)}")


def generate(distribution: str, n: int, fmt: str = "float32", seed: int = 0, *, shape=None):
    """``n`` values (or an array of ``shape``) of format ``fmt`` drawn from ``distribution``,
    each correctly rounded to the format. Deterministic for a given seed.

    "wide" spans ~2/3 of the format's exponent range (float16: 2^-9..2^9, others 2^-40..2^40):
    a significand uniform in [1, 2) times 2^k for k uniform over the range, random signs
    (computed exactly, so NumPy's CPU-dispatched exp2 cannot make machines disagree);
    "ill-conditioned" pairs each value with its negation times (1 + 1e-3 * noise), shuffled.
    """
    check_choice("distribution", distribution, DISTRIBUTIONS)
    info = format_info(fmt)
    shape = (n,) if shape is None else tuple(shape)
    size = int(np.prod(shape))
    rng = np.random.default_rng(seed)
    if distribution == "uniform":
        x = rng.random(size)
    elif distribution == "normal":
        x = rng.standard_normal(size)
    elif distribution == "wide":  # exact arithmetic only: the same values on every machine
        span = 9 if info.name == "float16" else 40
        x = np.ldexp(1.0 + rng.random(size), rng.integers(-span, span, size))
        x = x * rng.choice([-1.0, 1.0], size)
    else:
        half = (size + 1) // 2
        v = rng.standard_normal(half)
        w = -v * (1 + 1e-3 * rng.standard_normal(half))
        x = np.concatenate([v, w])[:size]
        x = x[rng.permutation(size)]
    return np.asarray(as_format(x, info.name)).reshape(shape)
