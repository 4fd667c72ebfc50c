"""Summation orders: ``fpx.sum(x, order, accumulate=..., **params)``.

Every order is defined exactly (fpexplore/orders/_registry.py lists them; docs/orders.md and
docs/research/ give the definitions and sources). Arithmetic is round-to-nearest-even in
the *accumulator* format (default: x's format; NumPy's and CuPy's kernels accumulate float16 in
float32, and so do their orders here). Inputs narrower than the accumulator are widened
exactly; wider ones are rounded to it first. The result is rounded once to x's format at the
end, as ``np.sum`` does for float16.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..exact import exact_sum
from ..formats import FORMATS, FormatInfo, as_format, coerce, format_info
from ._registry import SUM_ORDERS, OrderSpec, lookup

__all__ = ["sum"]


@dataclass(frozen=True)
class Arith:
    """How kernels compute in an accumulator format (see _kernels' module docstring)."""

    info: FormatInfo
    z: np.floating  # +0.0 of the compute type
    rp: tuple  # (precision, emin, max) to round to after each operation; (0, 0, 0.0): none
    storage: np.dtype  # dtype inputs are passed in (exact for the accumulator's values)


def arith(acc: FormatInfo) -> Arith:
    if acc.name == "float32":
        return Arith(acc, np.float32(0), (0, 0, 0.0), np.dtype(np.float32))
    if acc.name == "float64":
        return Arith(acc, np.float64(0), (0, 0, 0.0), np.dtype(np.float64))
    return Arith(acc, np.float64(0), (acc.precision, acc.emin, acc.max), np.dtype(np.float32))


NATIVE = (0, 0, 0.0)


def out_rp(info: FormatInfo, ar: Arith) -> tuple:
    """Rounding parameters for 'round to the output format' inside a kernel."""
    if info.name == ar.info.name or info.precision >= 53:
        return NATIVE
    return (info.precision, info.emin, info.max)


def accumulator(accumulate, x_info: FormatInfo, spec: OrderSpec) -> FormatInfo:
    """The accumulator of an order: ``accumulate``, else the order's float16 default, else x's."""
    default = x_info
    if x_info.name == "float16" and spec.float16_accumulate:
        default = format_info(spec.float16_accumulate)
    return accumulator_format(accumulate, default)


def accumulator_format(accumulate, default: FormatInfo) -> FormatInfo:
    """``accumulate`` as a storage FormatInfo (``default`` when None); tf32 is refused."""
    if accumulate is None:
        return default
    acc = format_info(accumulate)
    if not acc.storage:
        raise ValueError(
            f"accumulate must be one of {', '.join(FORMATS)}; {acc.name!r} is an input rounding"
        )
    return acc


def to_storage(x: np.ndarray, ar: Arith) -> np.ndarray:
    """x's values in the accumulator format, as a contiguous array of the storage dtype."""
    if x.dtype != ar.info.dtype:
        x = np.asarray(as_format(x, ar.info.name))
    return np.ascontiguousarray(x, dtype=ar.storage)


def finish(value, out: FormatInfo):
    """A compute-type scalar rounded once to the output format, as a NumPy scalar."""
    return np.asarray(as_format(np.float64(value), out.name))[()]


def kernels():
    """The compiled kernels (numba is imported on first use only)."""
    from . import _kernels

    return _kernels


def reduce_1d(spec: OrderSpec, params: dict, X, Y, fused: bool, ar: Arith, out: FormatInfo):
    """Run one order over the terms X[i] (or the products X[i]*Y[i]) in the compute type."""
    k = kernels()
    has_y = Y is not None
    if not has_y:
        Y = X[:1] if X.size else np.zeros(1, X.dtype)
    z, rp, n = ar.z, ar.rp, X.shape[0]
    name = spec.name
    if name == "sequential":
        return k.sequential(X, Y, has_y, fused, z, rp, 0, n, 1)
    if name == "reverse":
        return k.sequential(X, Y, has_y, fused, z, rp, n - 1, -1, -1)
    if name == "pairwise":
        return k.pairwise(X, Y, has_y, z, rp, 0, n)
    if name in ("numpy", "numpy-chunked"):
        if out.name == "bfloat16":
            # NumPy has no bfloat16: np.sum runs ml_dtypes' add loop, sequentially onto +0.0
            return k.combine(X, z, rp, np.arange(n), False)
        chunk = max(n, 1) if name == "numpy" else params["chunk"]
        return k.numpy_sum(X, Y, has_y, z, rp, out_rp(out, ar), chunk)
    if name == "blocked":
        return k.blocked(X, Y, has_y, fused, z, rp, params["block"])
    if name in ("tree", "tree-strided"):
        parts = k.tree_partials(X, Y, has_y, fused, z, rp, params["block"], name == "tree-strided")
        if params["combine"] == "atomic":
            # atomicAdd lands in any order; on float32 it flushes subnormals (see k.combine)
            perm = k.permutation(parts.size, params["seed"])
            return k.combine(parts, z, rp, perm, ar.info.name == "float32")
        return k.combine(parts, z, rp, np.arange(parts.size), False)
    if name == "cupy-kernel":
        ftz = params["ftz"]
        ftz = (ar.info.name == "float32") if ftz is None else (ftz and ar.info.name == "float32")
        return k.cupy_kernel(X, Y, has_y, fused, z, rp, params["block_size"], ftz)
    if name == "cub":
        values = k.terms(X, Y, has_y, z, rp) if has_y else X
        c = cub_config(params, ar.info)
        return k.cub_sum(values, z, rp, *c, params["max_blocks"])
    if name == "shuffled":
        perm = k.permutation(n, params["seed"])
        Yp = Y[perm] if has_y else Y
        return k.sequential(X[perm], Yp, has_y, fused, z, rp, 0, n, 1)
    if name == "kahan":
        return k.kahan(X, Y, has_y, fused, z, rp)
    if name == "neumaier":
        return k.neumaier(X, Y, has_y, z, rp)
    raise AssertionError(name)  # pragma: no cover - the registry lists only the above


def cub_config(params: dict, acc: FormatInfo) -> tuple:
    """(threads, items, vector, aligned, tree) with CUB's per-type defaults (Policy600 with
    MemBoundScaling: 16 items for 4-byte types, 32 for 2-byte, 8 for 8-byte; ThreadReduce is a
    binary tree for types under 8 bytes in CCCL >= 2.8, sequential otherwise)."""
    items = params["items"]
    if items is None:
        items = {2: 32, 4: 16, 8: 8}[acc.bits // 8]
    vector = params["vector"]
    if items % vector:
        raise ValueError(f"items ({items}) must be a multiple of vector ({vector})")
    tree = params["thread_reduce"]
    if tree is None:
        tree = "tree" if acc.bits < 64 else "sequential"
    return params["threads"], items, vector, bool(params["aligned"]), tree == "tree"


def check_fma(spec: OrderSpec, fma: bool, op: str) -> bool:
    if not isinstance(fma, bool):
        raise ValueError(f"fma must be True or False, got {fma!r}")
    if fma and op == "sum":
        raise ValueError("fma=True applies to products (dot, matmul); a sum has none")
    if fma and not spec.fma:
        fused = [name for name, s in SUM_ORDERS.items() if s.fma]
        raise ValueError(
            f"fma=True does not change order {spec.name!r}: no product feeds an accumulator "
            f"there (each is rounded first). Orders where it does: {', '.join(fused)}"
        )
    return fma


def sum(x, order: str = "sequential", *, fma: bool = False, accumulate=None, **params):  # noqa: A001
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
    check_fma(spec, fma, "sum")
    p = spec.validate(params)
    x = np.ravel(x)
    if spec.name == "exact":
        return exact_sum(x)
    ar = arith(accumulator(accumulate, info, spec))
    X = to_storage(x, ar)
    return finish(reduce_1d(spec, p, X, None, False, ar, info), info)
