"""Summation orders: ``fpx.sum(x, order, accumulate=..., **params)``.

Every order is defined exactly (fpexplore/orders/registry.py lists them; docs/orders.md and
docs/research/ give the definitions and sources). Arithmetic is round-to-nearest-even in
the *accumulator* format (default: x's format; NumPy's and CuPy's kernels accumulate float16
in float32, and so do their orders here); ``rounding=`` rounds the additions of sequential,
reverse, pairwise and blocked in another mode (stochastic rounding among them). Inputs
narrower than the accumulator are widened exactly; wider ones are rounded to it first. The
result is rounded once to x's format at the end, as ``np.sum`` does for float16.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ..exact import exact_sum, exact_sum_to
from ..formats import ROUNDING_MODES, coerce
from ..held import as_held, carried, held
from .arith import (
    accumulator,
    arith,
    check_accumulate,
    check_fma,
    check_rounding,
    finish,
    held_accumulate,
    in_float64_kernels,
    past_max,
    rounded_accumulator,
    to_storage,
)
from .registry import fusable, lookup, roundable

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

__all__ = ["rounding_params", "run_rounded", "sum", "sum_held"]


def sum(  # noqa: A001
    x: ArrayLike,
    order: str = "sequential",
    *,
    fma: bool = False,
    accumulate: str | None = None,
    rounding: str = "nearest_even",
    **params,
) -> np.generic:
    """Sum all elements of ``x`` (flattened in C order) in the given evaluation ``order``.

    Parameters
    ----------
    x : array of one of ``fpx.FORMATS``
    order : str
        One of ``fpx.orders("sum")``; each is defined bit for bit (see the registry).
        ``"numpy"`` equals ``np.sum`` of NumPy >= 2.3 for contiguous (or 1-D strided) input,
        ``"numpy-chunked"`` equals NumPy < 2.3. ``"cupy-kernel"`` and ``"cub"`` follow CuPy's
        and CUB's source and are hypotheses until checked on a GPU.
    fma : bool
        Must be False: a sum has no products (the parameter exists for symmetry with dot).
    accumulate : format name, optional
        Accumulator format (default: x's; float32 for float16 data in the NumPy and CuPy
        kernel orders, as those libraries do). A format of :func:`fpexplore.format`, or an
        OCP FP8, FP6 or FP4 format, in sequential, reverse, pairwise and blocked: each
        addition rounded once from its exact value to it, in ``rounding``, with the format's
        own overflow (inf, NaN, or saturation at ±max).
    rounding : str
        The rounding of every addition, in the accumulator's format: ``"nearest_even"`` (the
        default, IEEE's and every order's own), or for the orders of
        ``fpexplore.orders.registry.roundable()`` (sequential, reverse, pairwise, blocked)
        ``"nearest_away"``, ``"toward_zero"``, ``"up"``, ``"down"`` or ``"stochastic"``, as
        :func:`fpexplore.as_format` rounds (``ROUNDING_MODES``): each sum is rounded once
        from its exact value (``inf - inf`` is NaN; an exact zero is +0, -0 in mode down;
        ``-0 + -0`` is -0, as IEEE 754 has it). ``"stochastic"`` rounds up (toward +inf)
        with probability (v - lo) / (hi - lo) between the neighbours lo < v < hi and needs
        ``seed=`` (an integer): the draws are ``np.random.default_rng(seed).random(n - 1)``,
        one per addition, the k-th for the order's k-th addition (sequential and reverse: in
        their order; pairwise: in evaluation order, a half's additions before the sum of the
        two halves; blocked: each block's in turn, then those of the block sums), used
        whatever the operands (a NaN, an exact sum). Inputs wider than the accumulator are
        rounded to it, and the result to x's format, to nearest-even (conversions, not
        additions). Another mode on another order is a ValueError naming ``rounding``.
    **params
        Order parameters, e.g. ``block=256`` for "tree"; unknown ones raise ValueError.

    Returns
    -------
    numpy.generic
        A NumPy scalar in x's format (the accumulator's result rounded once).
    """
    spec = lookup("sum", order)
    if (h := held((x,), "sum")) is not None:  # FP8, FP6, FP4 data: in a float type, then back
        (wide,), name = h
        kw = dict(fma=fma, accumulate=accumulate, rounding=rounding, **params)
        return sum_held(wide, name, order, **kw)
    given = x
    (x,), info = coerce(x, what="sum")
    check_fma(spec, fma, "sum", fusable("sum"))
    mode, seed = check_rounding(spec, "sum", rounding, params, roundable("sum"))
    p = spec.validate(params)
    if chunk := spec.buffered(given, "sum"):  # (a byte-swapped array: NumPy's cast buffer)
        p = {**p, "chunk": chunk}
    (x,) = spec.laid_out((x,), "sum")
    check_accumulate(spec, accumulate)
    if spec.name == "exact":
        return exact_sum(x)
    if spec.library is not None:
        return spec.run_library(x, None, p, accumulate)
    rounded = rounded_accumulator(accumulate, spec, "sum")
    ar = arith(rounded or accumulator(accumulate, info, spec))
    X = to_storage(x, ar)
    if mode != "nearest_even" or (rounded is not None and not in_float64_kernels(rounded)):
        return finish(run_rounded(spec, X, ar, p, mode, seed), info)
    return finish(past_max(spec.run(X, None, False, ar, p, info), rounded), info)


def sum_held(
    wide: np.ndarray,
    name: str,
    order: str = "sequential",
    *,
    fma: bool = False,
    accumulate: str | None = None,
    rounding: str = "nearest_even",
    **params,
) -> np.generic:
    """:func:`sum` of the values ``wide`` of the held data format ``name`` (FP8, FP6 or FP4
    values in float32; a format of ``fpx.format``'s in float64): each addition rounded to
    ``name`` (or to ``accumulate=``) in the orders that round each addition, the result
    rounded once to ``name`` (``exact``: the exact sum, rounded once to it)."""
    spec = lookup("sum", order)
    acc = held_accumulate(spec, "sum", name, accumulate)
    kw = dict(fma=fma, accumulate=acc, rounding=rounding, **params)
    if spec.name == "exact":  # its keywords checked on no data, then once to the format
        sum(wide.reshape(-1)[:0], order, **kw)  # (0-d data too: pass 30)
        return exact_sum_to(wide, name)
    return as_held(sum(carried(wide, acc), order, **kw), name)  # (keywords checked there)


def run_rounded(spec, X, ar, p: dict, mode: str, seed: int | None) -> float:
    """Order ``spec`` (with ``run_rounded``) over the accumulator-format values ``X``, each
    addition rounded in ``mode`` (any of ``ROUNDING_MODES``, nearest-even too, which
    :func:`sum` leaves to the order's own kernel); "stochastic" draws from ``seed``."""
    draws = np.zeros(0)
    if mode == "stochastic":
        draws = np.random.default_rng(seed).random(max(X.shape[0] - 1, 0))
    return spec.run_rounded(X, rounding_params(ar.info), ROUNDING_MODES.index(mode), draws, p)


def rounding_params(info) -> tuple:
    """The format ``info`` as the rounded kernels take it: (precision, emin, largest value,
    no subnormals, what a rounding past the largest gives: inf, NaN or it)."""
    top = float(info.max)
    ovf = {"inf": np.inf, "nan": np.nan, "max": top}[info.overflow]
    return (info.precision, info.emin, top, not info.subnormals, ovf)
