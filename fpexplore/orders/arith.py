"""The arithmetic model shared by every order: the accumulator format, how kernels compute
in it, the rounding of a result to the output format, and the FMA rule.

- An order computes in an *accumulator* format (default: the inputs' format; an order may
  default float16 data to float32, as NumPy's and CuPy's kernels do). Inputs narrower than
  the accumulator are widened exactly, wider ones rounded to it first.
- Kernels compute in a *compute type* (``Arith.z``): float32 and float64 natively; float16
  and bfloat16 in float64, rounded after each operation (``Arith.rp``; see
  fpexplore/orders/_kernels.py).
- The result is rounded once from the accumulator to the output format (``finish``).
- ``fma=True`` applies to products only, and only in orders where a product feeds an
  addition (``OrderSpec.fma``); elsewhere it raises rather than change nothing.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import checks
from ..formats import FORMATS, FormatInfo, as_format, format_info

__all__ = [
    "NATIVE",
    "Arith",
    "accumulator",
    "accumulator_format",
    "arith",
    "check_fma",
    "cub_config",
    "finish",
    "kernels",
    "out_rp",
    "to_storage",
]


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


def accumulator(accumulate, x_info: FormatInfo, spec) -> FormatInfo:
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


def check_fma(spec, fma: bool, op: str, fusable=()) -> bool:
    """``fma`` checked for ``op`` and the order ``spec``; ``fusable``: the names of the orders
    where it applies (for the error message)."""
    if not isinstance(fma, bool):
        raise ValueError(f"fma must be True or False, got {checks.shown(fma)}")
    if fma and op == "sum":
        raise ValueError("fma=True applies to products (dot, matmul); a sum has none")
    if fma and getattr(spec, "library", None) is not None:
        raise ValueError(
            f"fma=True is not a setting of order {spec.name!r}: it "
            + (
                getattr(spec, "fixed", "")
                or "is a library's own loop, whose kernel decides where it fuses (see its "
                "parameters, e.g. kernel=)"
            )
        )
    if fma and not spec.fma:
        raise ValueError(
            f"fma=True does not change order {spec.name!r}: no product feeds an accumulator "
            f"there (each is rounded first). Orders where it does: {', '.join(fusable)}"
        )
    return fma
