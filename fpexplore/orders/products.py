"""Product orders: ``fpx.dot`` and ``fpx.matmul`` over the summation orders.

Each output is the chosen summation order applied to the products ``a[i]*b[i]``. Products are
rounded to the accumulator format before they are added, except with ``fma=True`` in orders
that keep a running accumulator (sequential, reverse, blocked, shuffled, cupy-kernel, kahan):
there each product is fused into the addition that consumes it, ``acc = fma(a_i, b_i, acc)``
(Kahan: ``y = fma(a_i, b_i, -c)``). Two orders reproduce what a library computes literally:
``"numpy"`` is ``np.sum(a * b)`` and ``"cub"`` is CuPy's ``(a * b).sum()``, so their products
are rounded in the inputs' format.
"""

from __future__ import annotations

import math
import os
from typing import TYPE_CHECKING

import numpy as np

from ..exact import exact_dot, exact_dot_to
from ..formats import as_format, coerce, format_info
from ..held import as_held, carried, held
from ..numerics import flush_subnormals
from .arith import (
    accumulator,
    arith,
    check_accumulate,
    check_combine,
    check_fma,
    check_input_rounding,
    check_split_k,
    finish,
    held_accumulate,
    in_float64_kernels,
    kernels,
    matmul_by_columns,
    past_max,
    rounded_accumulator,
    rounded_kernels,
    rounds_in_float64,
    to_storage,
)
from .registry import fusable, lookup
from .summation import rounding_params, run_rounded

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

__all__ = ["dot", "dot_held", "exact_matmul_to", "matmul", "matmul_held", "matmul64"]


def _literal_products(a: np.ndarray, b: np.ndarray, ftz: bool) -> np.ndarray:
    """a * b elementwise in the inputs' format, as NumPy or a CuPy elementwise kernel does."""
    with np.errstate(all="ignore"):
        p = np.multiply(a, b)
    if ftz and p.dtype == np.float32:  # NVRTC -ftz=true: subnormal products become zeros
        p = flush_subnormals(p)
    return p


def check_rounding_changes(spec, input_rounding, info) -> None:
    """ValueError where rounding the inputs changes none of them: the rounding's format
    holds every value of the data's (tf32 of float16 data). A tensor-core order is exempt:
    there the rounding names the instruction's input format."""
    if input_rounding is None or spec.takes_rounding:
        return
    r = format_info(input_rounding)
    if r.precision >= info.precision and r.emin <= info.emin and r.emax >= info.emax:
        raise ValueError(
            f"input_rounding={input_rounding!r} changes nothing for {info.name} data: "
            f"{input_rounding} holds every {info.name} value"
        )


def round_inputs(input_rounding, info, *arrays) -> tuple:
    """The arrays with every value rounded to ``input_rounding`` ("tf32" or "bfloat16", as
    tensor cores read float32 inputs; or "tf32-rne", "tf32-truncate", "bfloat16-truncate",
    "float8_e4m3", "float8_e5m2", see :mod:`fpexplore.formats`) and kept in format ``info``;
    unchanged for None."""
    if check_input_rounding(input_rounding) is None:
        return arrays
    return tuple(np.asarray(as_format(as_format(x, input_rounding), info.name)) for x in arrays)


def dot(
    a: ArrayLike,
    b: ArrayLike,
    order: str = "sequential",
    *,
    fma: bool = False,
    accumulate: str | None = None,
    input_rounding: str | None = None,
    **params,
) -> np.generic:
    """Dot product of two 1-D arrays in the given evaluation ``order``.

    Parameters
    ----------
    a, b : 1-D arrays of equal length, of one format
    order : str
        One of ``fpx.orders("dot")``, as for :func:`fpexplore.sum`. ``"numpy"`` is
        ``np.sum(a * b)`` (not ``np.dot``, which calls a CPU-specific BLAS kernel); ``"cub"``
        is CuPy's default 1-D ``cupy.dot`` (products, then CUB's sum) and ``"cupy-kernel"``
        its no-CUB reduction kernel: hypotheses until run on a GPU. ``"tensor-core"`` is the
        1xK @ Kx1 product of :func:`fpexplore.matmul`'s tensor-core order (a float32 scalar).
    fma : bool
        Fuse each product into the accumulation where the order has an accumulator
        (ValueError elsewhere, since it would change nothing).
    accumulate : format name, optional
        Accumulator format, as for :func:`fpexplore.sum`.
    input_rounding : None, "tf32" or "bfloat16", optional
        Round every input value to this format first, as for :func:`fpexplore.matmul`.
    **params
        Order parameters, as for :func:`fpexplore.sum`.

    Returns
    -------
    numpy.generic
        A NumPy scalar in the inputs' format.
    """
    spec = lookup("dot", order)
    input_rounding = check_input_rounding(input_rounding)  # (its name, from a dtype too)
    if (h := held((a, b), "dot", ("a", "b"))) is not None:  # FP8, FP6, FP4: widened, then back
        (wa, wb), name = h
        kw = dict(fma=fma, accumulate=accumulate, input_rounding=input_rounding, **params)
        return dot_held(wa, wb, name, order, **kw)
    (a, b), info = coerce(a, b, what="dot", names=("a", "b"))
    if a.ndim != 1 or b.ndim != 1 or a.shape != b.shape:
        raise ValueError(f"dot takes two 1-D arrays of equal length, got {a.shape} and {b.shape}")
    a, b = spec.laid_out((a, b), "dot")
    check_rounding_changes(spec, input_rounding, info)
    a, b = round_inputs(input_rounding, info, a, b)
    fused = check_fma(spec, fma, "dot", fusable("dot"))
    p = spec.validate(params)
    check_accumulate(spec, accumulate)
    if spec.name == "exact":
        return exact_dot(a, b)
    if spec.library is not None:
        return spec.run_library(a, b, p, accumulate, input_rounding)
    acc = rounded_accumulator(accumulate, spec, "dot", fused)
    if acc is not None and not in_float64_kernels(acc):
        ar = arith(acc)
        X, Y = to_storage(a, ar), to_storage(b, ar)
        with np.errstate(invalid="ignore"):  # (inf * 0: NaN, the sum's own)
            terms = np.asarray(as_format(X * Y, acc), dtype=np.float64)  # (X * Y is exact)
        return finish(run_rounded(spec, terms, ar, p, "nearest_even", None), info)
    ar = arith(acc or accumulator(accumulate, info, spec))
    if spec.literal_products:
        terms = _literal_products(a, b, ftz=spec.literal_products == "ftz")
        return finish(spec.run(to_storage(terms, ar), None, False, ar, p, info), info)
    X, Y = to_storage(a, ar), to_storage(b, ar)
    return finish(past_max(spec.run(X, Y, fused, ar, p, info), acc), info)


def dot_held(
    wa: np.ndarray,
    wb: np.ndarray,
    name: str,
    order: str = "sequential",
    *,
    fma: bool = False,
    accumulate: str | None = None,
    input_rounding: str | None = None,
    **params,
) -> np.generic:
    """:func:`dot` of the values ``wa`` and ``wb`` of the held data format ``name`` (FP8, FP6
    or FP4 values in float32; a format of ``fpx.format``'s in float64), as
    :func:`fpexplore.orders.summation.sum_held` sums."""
    spec = lookup("dot", order)
    input_rounding = check_input_rounding(input_rounding)
    check_rounding_changes(spec, input_rounding, format_info(name))
    acc = held_accumulate(spec, "dot", name, accumulate)
    kw = dict(fma=fma, input_rounding=input_rounding, accumulate=acc, **params)
    out = dot(carried(wa, acc), carried(wb, acc), order, **kw)  # (the keywords checked there)
    if spec.name == "exact":  # the rounded inputs' exact dot, rounded once to the format
        carrier = format_info(wa.dtype)  # (float32 for FP8, FP6, FP4; float64 for fpx.format's)
        return exact_dot_to(*round_inputs(input_rounding, carrier, wa, wb), name)
    return as_held(out, name)


def matmul(
    A: ArrayLike,
    B: ArrayLike,
    order: str = "sequential",
    *,
    fma: bool = False,
    accumulate: str | None = None,
    input_rounding: str | None = None,
    split_k: int | None = None,
    **params,
) -> np.ndarray:
    """Matrix product ``A @ B`` with every output computed by the given order over k.

    Parameters
    ----------
    A, B : 2-D arrays (m, k) and (k, n) of one format
    order : one of ``fpx.orders("matmul")``
    fma, accumulate, **params : as for :func:`fpexplore.dot` (tree orders combine their block
        results sequentially here)
    input_rounding : None, "tf32" or "bfloat16" (or "tf32-rne", "tf32-truncate",
        "bfloat16-truncate", "float8_e4m3", "float8_e5m2")
        Round A and B to this format first (tensor-core inputs), keeping their storage format.
    split_k : int, optional
        Cut k into this many contiguous slices, reduce each with the order, and add the slice
        results in order (split-K GEMM).

    Returns
    -------
    numpy.ndarray
        An (m, n) array in the inputs' format. ``order="exact"`` is correctly rounded.
        ``order="tensor-core"`` (``arch=``) is :func:`fpexplore.mma` with C = 0: a float32
        array, the tensor-core input format being the arrays' (float16, bfloat16) or the
        input rounding's (float32 arrays need one, e.g. ``input_rounding="tf32"``).
    """
    spec = lookup("matmul", order)
    input_rounding = check_input_rounding(input_rounding)  # (its name, from a dtype too)
    if (h := held((A, B), "matmul", ("A", "B"))) is not None:  # FP8, FP6, FP4: widened, back
        (wA, wB), name = h
        kw = dict(fma=fma, accumulate=accumulate, input_rounding=input_rounding, **params)
        return matmul_held(wA, wB, name, order, split_k=split_k, **kw)
    (A, B), info = coerce(A, B, what="matmul", names=("A", "B"))
    if A.ndim != 2 or B.ndim != 2 or A.shape[1] != B.shape[0]:
        raise ValueError(f"matmul takes (m, k) and (k, n) arrays, got {A.shape} and {B.shape}")
    fused = check_fma(spec, fma, "matmul", fusable("matmul"))
    p = spec.validate(params)
    check_combine("matmul", p.get("combine", "sequential"))
    check_rounding_changes(spec, input_rounding, info)
    A, B = round_inputs(input_rounding, info, A, B)
    split_k = check_split_k("matmul", spec, split_k, A.shape[1])
    check_accumulate(spec, accumulate)
    if spec.name == "exact":
        return exact_matmul(A, B)
    if spec.library is not None:  # the tensor cores
        return spec.run_library(A, B, p, accumulate, input_rounding)
    if (acc := rounded_accumulator(accumulate, spec, "matmul", fused)) is not None:
        return np.asarray(as_format(_matmul_rounded(A, B, spec, acc, p, split_k), info.name))
    ar = arith(accumulator(accumulate, info, spec))
    X = to_storage(A, ar)
    if matmul_by_columns(spec, ar):  # a 16-bit accumulator: rows against tiles of columns
        kernel, Y = matmul_kernels().matmul_columns, to_storage(np.ascontiguousarray(B), ar)
    else:
        kernel, Y = kernels().matmul, to_storage(np.ascontiguousarray(B.T), ar)
        if spec.matmul_code is None:  # a revealed tree: its runner on each element
            out = np.empty((X.shape[0], Y.shape[0]), dtype=type(ar.z))
            for i in range(X.shape[0]):
                for j in range(Y.shape[0]):
                    out[i, j] = spec.run(X[i], Y[j], fused, ar, p, info)
            return np.asarray(as_format(out.astype(np.float64), info.name))
    block, splits = p.get("block", 1), split_k or 1
    out = _by_row_blocks(kernel, X, Y, spec.matmul_code, fused, ar.z, ar.rp, block, splits)
    return np.asarray(as_format(out.astype(np.float64), info.name))


def _matmul_rounded(A, B, spec, acc, p: dict, split_k) -> np.ndarray:
    """matmul in order ``spec`` with each product and addition rounded once to ``acc`` (a
    format of :func:`~fpexplore.orders.arith.rounded_only`; its products exact in float64),
    nearest-even: on SIMD lanes (matmul_columns) where rounding the float64 sum is rounding
    the exact one (precision <= 25, with subnormals), else element by element from TwoSum
    (matmul_rounded). The inputs are rounded to ``acc`` first; float64 values."""
    A, B = (to_storage(M, arith(acc)).astype(np.float64) for M in (A, B))
    X = np.ascontiguousarray(A)
    block, splits, rp = p.get("block", 1), split_k or 1, rounding_params(acc)
    if rounds_in_float64(acc):
        Y, ovf = np.ascontiguousarray(B, dtype=np.float64), rp[4]
        kernel = matmul_kernels().matmul_columns
        return _by_row_blocks(
            kernel, X, Y, spec.matmul_code, False, 0.0, rp[:3], block, splits, ovf
        )
    Y = np.ascontiguousarray(B.T, dtype=np.float64)
    kernel = rounded_kernels().matmul_rounded
    return _by_row_blocks(kernel, X, Y, spec.matmul_code, rp, block, splits)


def matmul_held(
    wA: np.ndarray,
    wB: np.ndarray,
    name: str,
    order: str = "sequential",
    *,
    split_k: int | None = None,
    accumulate: str | None = None,
    input_rounding: str | None = None,
    **kw,
) -> np.ndarray:
    """:func:`matmul` of the values ``wA`` and ``wB`` of the held data format ``name`` (FP8,
    FP6 or FP4 values in float32; a format of ``fpx.format``'s in float64), every element as
    :func:`dot_held` computes it: an array of ml_dtypes' type (float64 for fpx.format's)."""
    spec = lookup("matmul", order)
    input_rounding = check_input_rounding(input_rounding)
    check_rounding_changes(spec, input_rounding, format_info(name))
    acc = held_accumulate(spec, "matmul", name, accumulate)
    kw.update(split_k=split_k, accumulate=acc, input_rounding=input_rounding)
    if spec.name == "exact":  # its keywords checked on no data, then once to the format
        matmul(wA[:0], wB, order, **kw)
        carrier = format_info(wA.dtype)  # (float32 for FP8, FP6, FP4; float64 for fpx.format's)
        return exact_matmul_to(*round_inputs(input_rounding, carrier, wA, wB), name)
    return as_held(matmul(carried(wA, acc), carried(wB, acc), order, **kw), name)


def matmul_kernels():
    """The compiled matrix-product kernels (matmul_columns, dot2_bounds; numba is imported on
    first use only)."""
    from . import _matmul_kernels

    return _matmul_kernels


def _by_row_blocks(kernel, X, Y, *args):
    """``kernel(X, Y, *args)`` (a matmul kernel: X's rows against Y) on blocks of X's rows, one
    thread each where the product is large (the kernels release the GIL), the results (an
    array or a tuple of arrays, one row per row of X) stacked. Every element is computed by
    itself, as with one thread: the bits do not depend on the number of threads."""
    m = X.shape[0]
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # (not Linux)
        cores = os.cpu_count() or 1
    threads = min(cores, 8, m)
    if threads < 2 or m * Y.size < 1 << 22:  # m * n * k multiply-adds
        return kernel(X, Y, *args)
    from concurrent.futures import ThreadPoolExecutor

    cuts = np.linspace(0, m, threads + 1).astype(int)
    kernel(X[:1], Y, *args)  # compile (or load) once, before the threads
    with ThreadPoolExecutor(threads) as pool:
        parts = list(pool.map(lambda lo, hi: kernel(X[lo:hi], Y, *args), cuts[:-1], cuts[1:]))
    if isinstance(parts[0], tuple):
        return tuple(np.concatenate(p) for p in zip(*parts))
    return np.concatenate(parts)


def exact_matmul(A: ArrayLike, B: ArrayLike) -> np.ndarray:
    """Correctly rounded ``A @ B``: each element is the exact dot product rounded once.

    Fast path: Dot2 interval bounds per element (see _matmul_kernels.dot2_bounds); elements whose
    interval does not round to one value (near ties, exact zeros of cancelling products,
    non-finite values) are computed with :func:`fpexplore.exact_dot`.

    Parameters
    ----------
    A, B : array_like
        (m, k) and (k, n) arrays of one format of ``fpx.FORMATS``, or of one OCP FP8, FP6 or
        FP4 format in ml_dtypes' types (as :func:`fpexplore.exact_dot` takes them).

    Returns
    -------
    numpy.ndarray
        (m, n), in the inputs' format.

    Raises
    ------
    TypeError
        Mixed formats, or a Python value not exactly representable in the inputs' format.
    ValueError
        Shapes other than (m, k) and (k, n).
    """
    to = None
    if (h := held((A, B), "exact_matmul", ("A", "B"))) is not None:  # FP8, FP6, FP4: once
        (A, B), to = h
    return exact_matmul_to(A, B, to)


def exact_matmul_to(A, B, to: str | None = None) -> np.ndarray:
    """:func:`exact_matmul`, each exact value rounded once to the format ``to`` of ml_dtypes'
    small types or of ``fpx.format`` (its values given in float32 or float64: an array of
    the small type, or float64 values), or where None to the inputs'."""
    (A, B), info = coerce(A, B, what="exact_matmul", names=("A", "B"))
    if A.ndim != 2 or B.ndim != 2 or A.shape[1] != B.shape[0]:
        raise ValueError(
            f"exact_matmul takes (m, k) and (k, n) arrays A and B, got {A.shape} and {B.shape}"
        )
    m, n = A.shape[0], B.shape[1]
    A64 = np.ascontiguousarray(A, dtype=np.float64)
    B64 = np.ascontiguousarray(B, dtype=np.float64)
    wide = info.name == "float64"
    # float64 inputs: TwoProduct must not overflow or underflow for the bound to hold
    safe = bool(np.isfinite(A64).all() and np.isfinite(B64).all())
    if wide and safe:
        mags = np.abs(np.concatenate([A64.ravel(), B64.ravel()]))
        nz = mags[mags > 0]
        safe = nz.size == 0 or (nz.min() >= 2.0**-450 and nz.max() <= 2.0**450)
    out = np.empty((m, n), dtype=info.dtype if to is None else np.float64)
    if not safe:
        for i in range(m):
            for j in range(n):
                out[i, j] = exact_dot_to(A[i], B[:, j], to)
        return _exact_out(out, to)
    lo_end, hi_end, zero = _by_row_blocks(
        matmul_kernels().dot2_bounds, A64, B64, to is not None or not wide
    )
    target = to or info.name
    r_lo = np.asarray(as_format(lo_end, target), dtype=np.float64)
    r_hi = np.asarray(as_format(hi_end, target), dtype=np.float64)
    # bitwise agreement (so -0.0 and +0.0 differ: an interval around 0 is not decided)
    good = (
        (r_lo.view(np.uint64) == r_hi.view(np.uint64)) & np.isfinite(lo_end) & np.isfinite(hi_end)
    )
    out[...] = r_lo
    out[zero == 1] = 0.0
    out[zero == 2] = -0.0
    left = ~good & (zero == 0)
    if left.any():  # (ties: frequent where the products have few bits, as FP8's)
        known = _exactly_summed(A64, B64) & left
        out[known] = np.asarray(as_format(A64 @ B64, target), dtype=np.float64)[known]
        left &= ~known
    for i, j in zip(*np.nonzero(left)):
        out[i, j] = exact_dot_to(A[i], B[:, j], to)
    return _exact_out(out, to)


def _exactly_summed(A64, B64) -> np.ndarray:
    """Where float64 holds every partial sum of an element's products exactly, in any order
    (so ``A64 @ B64`` is the exact dot, however a BLAS adds): A's finite values are
    multiples of 2**a, B's of 2**b (their lowest bits), every product of 2**(a + b), and sums
    of those below 2**53 of it are exact. Checked with half that (the bound's own rounding)."""
    with np.errstate(all="ignore"):
        bound = np.abs(A64) @ np.abs(B64)
    return bound < math.ldexp(1.0, min(_lowest_bit(A64) + _lowest_bit(B64) + 52, 1023))


def _lowest_bit(x: np.ndarray) -> int:
    """The largest e such that every finite nonzero value of x is a multiple of 2**e (0 for
    none)."""
    v = np.abs(x[np.isfinite(x) & (x != 0)])
    if v.size == 0:
        return 0
    frac, e = np.frexp(v)  # v = frac * 2**e, frac * 2**53 an integer
    m = (frac * 2.0**53).astype(np.int64)
    _, low = np.frexp((m & -m).astype(np.float64))  # m's lowest set bit: 2**(low - 1)
    return int((e - 53 + low - 1).min())


def _exact_out(out: np.ndarray, to: str | None) -> np.ndarray:
    """exact_matmul_to's values in its result's type: as they are (the inputs' format), or
    where ``to`` is given in ``to``'s (ml_dtypes' small type; float64 for fpx.format's)."""
    return out if to is None else np.asarray(as_held(out, to))


def matmul64(A, B) -> np.ndarray:
    """``A @ B`` in float64, each element within about 2**-100 sum|products| of the exact value
    (Dot2: TwoProduct and TwoSum, the middle of exact_matmul's interval), the same on every
    machine: for measuring errors of narrower results, where a correctly rounded float64
    result is not needed."""
    (A, B), _ = coerce(A, B, what="matmul64")
    A64 = np.ascontiguousarray(A, dtype=np.float64)
    B64 = np.ascontiguousarray(B, dtype=np.float64)
    lo_end, hi_end, zero = _by_row_blocks(matmul_kernels().dot2_bounds, A64, B64, False)
    with np.errstate(all="ignore"):
        out = lo_end / 2 + hi_end / 2
        out[zero == 1], out[zero == 2] = 0.0, -0.0
        bad = ~np.isfinite(out) & (zero == 0)
        if bad.any():  # non-finite inputs: NumPy's float64 product says inf or NaN
            out[bad] = (A64 @ B64)[bad]
    return out
