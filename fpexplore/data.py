"""Seeded input data: :func:`generate` draws ``n`` values of a format from a named
distribution, each correctly rounded to the format, the same on every machine."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from . import checks
from .formats import as_format, format_arg, format_info
from .userformat import twin

if TYPE_CHECKING:
    from collections.abc import Sequence

__all__ = ["DISTRIBUTIONS", "check_choice", "draw", "generate", "wide_span"]

DISTRIBUTIONS = {
    "uniform": "uniform on [0, 1), rounded to the format (narrow ones give 1 too: FP4 often)",
    "normal": "standard normal",
    "wide": "log-uniform magnitudes over many binades, random signs",
    "ill-conditioned": "values that cancel: the exact result is tiny next to the terms",
}


def check_choice(name: str, value, valid) -> None:
    """ValueError naming the valid choices when ``value`` is not one of them."""
    checks.choice(name, value, valid)


def generate(
    distribution: str,
    n: int,
    fmt: str = "float32",
    seed: int = 0,
    *,
    shape: Sequence[int] | None = None,
) -> np.ndarray:
    """``n`` values of format ``fmt`` drawn from ``distribution``, each correctly rounded to
    the format. Deterministic for a given seed.

    "wide" spans ~2/3 of the format's exponent range (float16: 2^-9..2^9, others 2^-40..2^40):
    a significand uniform in [1, 2) times 2^k for k uniform over the range, random signs
    (computed exactly, so NumPy's CPU-dispatched exp2 cannot make machines disagree);
    "ill-conditioned" pairs each value with its negation times (1 + 1e-3 * noise), shuffled.
    Rounded to a format of 8 bits of precision or fewer (bfloat16, FP8, FP6, FP4) most pairs
    cancel exactly (their noise is below half an ulp: bfloat16 86%, FP8 99%): the exact sum is
    that of the few others, and values below half the smallest subnormal are 0 (FP4:
    |x| < 0.25, one normal draw in five).

    Parameters
    ----------
    distribution : one of ``DISTRIBUTIONS``
    n : int
        How many values (>= 0).
    fmt : one of ``fpx.FORMATS``
    seed : int
        The data seed.
    shape : tuple of sizes, or one int, optional
        The array's shape; ``n`` must be the number of values it holds.

    Returns
    -------
    numpy.ndarray
        Of format ``fmt``, shape ``(n,)`` or ``shape``.

    Raises
    ------
    ValueError
        An unknown ``distribution`` or ``fmt``, a negative ``n``, a ``seed`` out of range,
        or a ``shape`` that does not hold ``n`` values.
    TypeError
        An ``n``, ``seed`` or ``shape`` that is not made of integers.
    MemoryError
        ``n`` values that do not fit in this machine's memory.

    Examples
    --------
    >>> fpx.generate("uniform", 4, "float16", seed=1)
    array([0.5117, 0.9507, 0.1442, 0.9487], dtype=float16)
    """
    check_choice("distribution", distribution, DISTRIBUTIONS)
    info = format_arg(fmt, "generate: fmt")
    if not (info.signed and info.has_zero):  # (pass 15: half NaN, every negative draw)
        raise ValueError(f"generate: {info.name} has no sign and no zero: a scale, not data")
    n = checks.integer("n", n, 0)
    seed = checks.seed(seed)
    shape = (n,) if shape is None else _shape(shape)
    size = int(np.prod(shape))
    if size != n:  # (n was ignored when a shape was given)
        raise ValueError(f"shape {shape} holds {size} values, not n={n}")
    try:
        x = draw(np.random.default_rng(seed), distribution, size, wide_span(info.name))
        return np.asarray(as_format(x, info.name)).reshape(shape)
    except MemoryError:  # NumPy's own message names no argument
        raise MemoryError(
            f"generate: n={n:,} values do not fit in this machine's memory (drawing them takes "
            f"{8 * n / 2**30:,.1f} GiB of float64 first)"
        ) from None


def _shape(shape) -> tuple:
    """``shape`` as a tuple of sizes, as NumPy takes it (one int: a vector), or an error
    naming it (it was "'int' object is not iterable", "shape (2, -3) holds -6 values")."""
    dims = (shape,) if isinstance(shape, (int, np.integer)) else shape
    if not hasattr(dims, "__iter__") or isinstance(dims, (str, bytes)):
        raise TypeError(f"shape must be a tuple of sizes, got {checks.shown(shape)}")
    return tuple(checks.integer("shape", d, 0) for d in dims)


def wide_span(fmt: str) -> int:
    """The binades each side of 1 that "wide" draws from: 9 for float16 (and a format of
    ``fpx.format`` with its parameters), 40 for the wider formats, two thirds of emax for FP8,
    FP6 and FP4 (at least 1)."""
    info = format_info(fmt)
    emax = info.emax
    return 9 if twin(info.name) == "float16" else 40 if emax > 100 else max(1, 2 * emax // 3)


def draw(rng, distribution, size, span):
    """``size`` float64 values of a distribution from ``rng``, before rounding to a format.

    Self-contained (NumPy as ``np`` only): :func:`fpexplore.reproducer` copies this source into
    its standalone scripts, so that they draw the very same inputs.
    """
    if distribution == "uniform":
        return rng.random(size)
    if distribution == "normal":
        return rng.standard_normal(size)
    if distribution == "wide":  # exact arithmetic only: the same values on every machine
        x = np.ldexp(1.0 + rng.random(size), rng.integers(-span, span, size))
        return x * rng.choice([-1.0, 1.0], size)
    half = (size + 1) // 2  # ill-conditioned: pairs that nearly cancel, shuffled
    v = rng.standard_normal(half)
    w = -v * (1 + 1e-3 * rng.standard_normal(half))
    x = np.concatenate([v, w])[:size]
    return x[rng.permutation(size)]
