"""Summation orders: ``fpx.sum(x, order, accumulate=..., **params)``.

Every order is defined exactly (fpexplore/orders/registry.py lists them; docs/orders.md and
docs/research/ give the definitions and sources). Arithmetic is round-to-nearest-even in
the *accumulator* format (default: x's format; NumPy's and CuPy's kernels accumulate float16 in
float32, and so do their orders here). Inputs narrower than the accumulator are widened
exactly; wider ones are rounded to it first. The result is rounded once to x's format at the
end, as ``np.sum`` does for float16.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ..exact import exact_sum
from ..formats import coerce
from .arith import accumulator, arith, check_accumulate, check_fma, finish, to_storage
from .registry import fusable, lookup

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

__all__ = ["sum"]


def sum(  # noqa: A001
    x: ArrayLike,
    order: str = "sequential",
    *,
    fma: bool = False,
    accumulate: str | None = None,
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
        kernel orders, as those libraries do).
    **params
        Order parameters, e.g. ``block=256`` for "tree"; unknown ones raise ValueError.

    Returns
    -------
    A NumPy scalar in x's format (the accumulator's result rounded once).
    """
    spec = lookup("sum", order)
    (x,), info = coerce(x, what="sum")
    check_fma(spec, fma, "sum", fusable("sum"))
    p = spec.validate(params)
    (x,) = spec.laid_out((x,), "sum")
    check_accumulate(spec, accumulate)
    if spec.name == "exact":
        return exact_sum(x)
    if spec.library is not None:
        return spec.run_library(x, None, p, accumulate)
    ar = arith(accumulator(accumulate, info, spec))
    X = to_storage(x, ar)
    return finish(spec.run(X, None, False, ar, p, info), info)
