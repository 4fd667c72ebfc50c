"""``mean``: the arithmetic mean of all elements, as NumPy computes it and by the textbook
orders, against the correctly rounded exact mean.

This module is the whole op (ops/registry.py finds it by its ``OP_TABLE``): the function,
its variants, and its spec (inputs, NumPy's call, the reference, CuPy's counterpart).

Variants (x flattened in C order, n elements, F the format of x):

``numpy`` (library)
    Exactly what ``np.mean(x)`` computes (``_mean`` in ``numpy/_core/_methods.py``, NumPy
    >= 2.3 sums): ``s = umr_sum(x)`` in order ``"numpy"``, except float16, which ``_mean``
    sums with ``dtype=float32``: the input cast to float32 through 8192-element buffers
    (order ``"numpy-chunked"``); then ``ret.dtype.type(ret / rcount)`` with ``rcount`` an
    ``intp``: a float64 division (NEP 50) of the sum by n, converted to F (float16: from the
    float32 sum's quotient). On the layouts order ``"numpy"`` emulates (C- or
    Fortran-contiguous, 1-D views); another (a 2-D view with a negative stride) is refused.
``sequential``, ``pairwise``, ``kahan`` (formula)
    ``s = fpx.sum(x, order)`` in F, then ``s / n`` rounded once to F.
``exact`` (exact)
    The exact mean ``sum(x) / n`` rounded once to F (no intermediate rounding; any NaN, or
    infinities of both signs, give NaN; infinities of one sign that infinity; an exact zero
    is -0.0 only when every element is -0.0).

Every variant gives NaN for an empty array (NumPy warns "Mean of empty slice"; here nothing
is warned). Results are NumPy scalars of F.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import TYPE_CHECKING

import numpy as np

from .._registry import SMALL_DTYPES
from ..data import generate
from ..exact import ExactAccumulator, exact_sum, exact_sum_to
from ..formats import FormatInfo, as_format, coerce, format_info
from ..held import as_held, has_nan, held, is_held_data
from ..numerics import round_rational
from ..orders import sum as fsum
from ..orders.registry import lookup
from ..orders.summation import sum_held
from .opspec import OpSpec, OpTable, Reduction
from .variant import EXACT, FORMULA, LIBRARY, Variant

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

__all__ = ["HELD_VARIANTS", "OP_TABLE", "mean", "mean_held"]

_VARIANTS = (
    Variant(
        "numpy", "np.mean (numpy/_core/_methods.py _mean): np.sum, then a float64 / n", LIBRARY
    ),
    Variant("sequential", "sequential sum in the input's format, then / n rounded once", FORMULA),
    Variant("pairwise", "pairwise sum in the input's format, then / n rounded once", FORMULA),
    Variant("kahan", "Kahan-compensated sum in the input's format, then / n", FORMULA),
    Variant("exact", "the exact mean, correctly rounded", EXACT),
)
_BLOCK = 1 << 20  # elements fed to the exact accumulator at a time


def mean(x: ArrayLike, *, variant: str = "numpy") -> np.generic:
    """The mean of all elements of ``x`` as ``variant`` computes it.

    Parameters
    ----------
    x : array_like
        Any shape, one of ``fpx.FORMATS``, or an OCP FP8, FP6 or FP4 array of ml_dtypes'
        type (variants sequential, pairwise and exact: :func:`mean_held`).
    variant : one of ``fpx.variants("mean")``
        See the module docstring.

    Returns
    -------
    numpy.generic
        A NumPy scalar of x's format (NaN for an empty array).

    Raises
    ------
    ValueError
        An unknown ``variant`` (the message lists the valid ones).

    Examples
    --------
    >>> fpx.mean(np.array([1, 2, 4], dtype=np.float32), variant="sequential")
    np.float32(2.3333333)
    """
    OP_TABLE.lookup("mean", variant)
    if (h := held((x,), "mean")) is not None:  # FP8, FP6, FP4 data: in their format
        (wide,), name = h
        return mean_held(wide, name, variant)
    given = x
    (x,), info = coerce(x, what="mean")
    if variant == "numpy":  # np.sum's reading of x: a layout it reads otherwise is refused
        np_sum = lookup("sum", "numpy")
        chunked = bool(np_sum.buffered(given, "mean"))  # (big-endian: buffered)
        return _numpy_mean(np_sum.laid_out((x,), "mean")[0], info, chunked)
    x = np.ravel(x)
    if x.size == 0:
        return info.dtype.type(np.nan)
    if variant == "exact":
        return _exact_mean(x, info)
    return _divide(fsum(x, variant), x.size, info)


HELD_VARIANTS = ("sequential", "pairwise", "exact")  # those that take held data


def mean_held(wide: np.ndarray, name: str, variant: str = "sequential") -> np.generic:
    """:func:`mean` of the values ``wide`` of the held data format ``name`` (FP8, FP6 or FP4
    values in float32; a format of ``fpx.format``'s in float64): the sum in ``name`` (each
    addition rounded to it: :func:`fpexplore.orders.summation.sum_held`), then ``/ n``
    rounded once to it; ``exact``: the exact mean rounded once. A value of its ml_dtypes type
    (float64 for fpx.format's)."""
    OP_TABLE.lookup("mean", variant)
    if variant not in HELD_VARIANTS:
        raise ValueError(
            f"mean: variant {variant!r} does not take {name} data (NumPy's and Kahan's sums do "
            f"not add in it); the variants that do: {', '.join(HELD_VARIANTS)}"
        )
    x = np.ravel(wide)
    if x.size == 0:  # NaN, as NumPy's mean of no values
        if has_nan(name):
            return as_held(np.nan, name)
        raise ValueError(f"mean of no {name} values: NaN, which {name} cannot hold (no NaN)")
    if variant == "exact":
        return as_held(_exact_held(x, name), name)
    f = float(sum_held(x, name, variant))
    if f == 0 or not math.isfinite(f):
        return as_held(f, name)  # ±0, ±inf and NaN divided by a positive count
    return as_held(as_format(Fraction(f) / x.size, name), name)


def _exact_held(x: np.ndarray, name: str):
    """The exact mean of float32 or float64 values ``x`` rounded once to ``name``."""
    if not np.isfinite(x).all():
        return exact_sum_to(x, name)  # NaN or ±inf by IEEE rules (±inf / n is ±inf)
    acc = ExactAccumulator()
    for lo in range(0, x.size, _BLOCK):
        block = np.ascontiguousarray(x[lo : lo + _BLOCK])
        acc.add64(block) if x.dtype == np.float64 else acc.add32(block)
    N, K = acc.total()  # the exact sum N * 2**K
    if N == 0:
        return exact_sum_to(x, name)  # an exact zero: -0.0 only when every element is -0.0
    return as_format(Fraction(N) * Fraction(2) ** K / x.size, name)


def _numpy_mean(x: np.ndarray, info: FormatInfo, chunked: bool):
    n = x.size
    if info.name == "float16":  # _mean: dtype=float32 for float16 input (a buffered cast)
        s = fsum(x.astype(np.float32), "numpy-chunked")
    else:  # (a byte-swapped array goes through the cast buffer too)
        s = fsum(x, "numpy-chunked" if chunked else "numpy")
    with np.errstate(all="ignore"):
        q = np.float64(s) / np.float64(n)  # ret / intp(rcount): the float64 loop
        return info.dtype.type(q)  # ret.dtype.type(...) (float16: arr.dtype.type(...))


def _divide(s, n: int, info: FormatInfo):
    """``s / n`` rounded once to the format (s one of its values, n >= 1 exact)."""
    f = float(s)
    if f == 0 or not math.isfinite(f):
        return info.dtype.type(f)  # ±0, ±inf and NaN divided by a positive count
    return np.asarray(as_format(Fraction(f) / n, info.name))[()]


def _exact_mean(x: np.ndarray, info: FormatInfo):
    if not np.isfinite(x).all():
        return exact_sum(x)  # NaN or ±inf by IEEE rules (±inf / n is ±inf)
    acc = ExactAccumulator()
    for lo in range(0, x.size, _BLOCK):
        block = x[lo : lo + _BLOCK]
        if info.name == "float64":
            acc.add64(np.ascontiguousarray(block))
        else:  # float16, bfloat16 and float32 values are exact in float32
            acc.add32(block.astype(np.float32))
    N, K = acc.total()  # the exact sum N * 2**K
    if N == 0:
        return exact_sum(x)  # an exact zero: -0.0 only when every element is -0.0
    num, den = (N << K, x.size) if K >= 0 else (N, x.size << -K)
    value = round_rational(num, den, info.precision, info.emin, info.emax)
    return np.asarray(value).astype(info.dtype)[()]


# ----------------------------------------------------------------------------- the op


def _inputs(n, fmt, distribution, seed, params):
    x = generate(distribution, n, fmt, seed)  # (FP8, FP6, FP4: in ml_dtypes' type)
    return {"format": fmt, "x": x.astype(SMALL_DTYPES[fmt]) if fmt in SMALL_DTYPES else x}


def _call(inputs, variant: str):
    """mean of the inputs; of a format of fpx.format's where they name one (float64 values)."""
    fmt = inputs["format"]
    if format_info(fmt).user_defined:
        return mean_held(inputs["x"], fmt, variant)
    return mean(inputs["x"], variant=variant)


def _available(fmt: str) -> list[str]:
    """Every variant; of held data (FP8, FP6, FP4, fpx.format's) those that add in it."""
    return list(HELD_VARIANTS) if is_held_data(fmt) else [v.name for v in _VARIANTS]


def _numpy(inputs, params):
    with np.errstate(all="ignore"):
        return np.mean(inputs["x"])


def _kernels(name, kw, info):
    """The compiled kernels a variant calls (fpexplore.warmup announces a first compile)."""
    from ..formats import format_info
    from ..orders.registry import kernel_needs

    if name == "exact":
        return []
    if name == "numpy" and info.name == "float16":
        return kernel_needs("sum", "numpy-chunked", format_info("float32"))
    return kernel_needs("sum", name, info)


OP_TABLE = OpTable(
    OpSpec(
        "mean",
        "arithmetic mean of all elements, sum(x) / n",
        _VARIANTS,
        inputs=_inputs,
        call=lambda name, settings, inputs, params: _call(inputs, name),
        reference=lambda inputs, params, fmt: _call(inputs, "exact"),
        available=_available,
        numpy=_numpy,
        numpy_label="np.mean",
        cupy=lambda cp, x: cp.mean(x),
        kernels=_kernels,
        gpu_args=lambda inputs, params: (inputs["x"],),
        gpu_label="cupy.mean",
        default_variants=("numpy", "sequential", "pairwise", "kahan"),
        bytes_per_element=24.0,
        rank=30,
        reduction=Reduction("sum", divides=True),
    ),
)
