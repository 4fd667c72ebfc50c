"""Data held in another type than their format's own: FP8, FP6 and FP4 arrays of ml_dtypes'
OCP types (``float8_e4m3fn``, ``float8_e5m2``, ``float6_e2m3fn``, ``float6_e3m2fn``,
``float4_e2m1fn``) read as their values in float32 or float64, and the values of a format of
``fpx.format`` in float64 (compare's sum and dot: the format named beside them); results
rounded back to their format (sum, dot, exact_sum, exact_dot, compare)."""

from __future__ import annotations

import numpy as np

from ._registry import INFO as _INFO
from ._registry import SMALL_DTYPES
from .formats import SMALL_BY_DTYPE, as_array, as_format, format_info, small_array
from .userformat import user_names

__all__ = [
    "HELD_FORMATS",
    "as_held",
    "carried",
    "has_nan",
    "held",
    "held_data_formats",
    "is_held_data",
    "result_format",
]

#: the OCP FP8, FP6 and FP4 formats: the small types with a -0 (not AMD's FNUZ FP8, nor E8M0,
#: which has no zero), the data and accumulators the rounded orders add in
HELD_FORMATS = tuple(n for n in SMALL_DTYPES if _INFO[n].has_negative_zero)


def held_data_formats() -> tuple[str, ...]:
    """The data formats held in another type that sum and dot accumulate in: the OCP FP8,
    FP6 and FP4 formats (ml_dtypes' arrays), then those of ``fpx.format`` (float64 arrays, the
    format named beside them), in the order of definition."""
    return HELD_FORMATS + user_names()


def is_held_data(fmt) -> bool:
    """Whether ``fmt`` (a format name) is one of :func:`held_data_formats`."""
    return isinstance(fmt, str) and (
        fmt in HELD_FORMATS or (fmt in _INFO and _INFO[fmt].user_defined)
    )


def result_format(out, data_format: str) -> str:
    """The format a result ``out`` of data of ``data_format`` is measured in: that format
    where it is one of ``fpx.format``'s and ``out`` is float64 (its sums and dots are rounded
    to it: every result of such data is one of its values); else the format of out's dtype."""
    dt = np.asarray(out).dtype
    if dt == np.float64 and _INFO[data_format].user_defined:
        return data_format
    return format_info(dt).name


def held(xs, what: str, names: tuple = (), fmt: str | None = None) -> tuple[list, str] | None:
    """Arrays of one OCP FP8, FP6 or FP4 format in ml_dtypes' types (the formats sum and dot
    accumulate in, :data:`HELD_FORMATS`), Python numbers and lists
    beside them adopting it where they are its values: their values in float32 (exact) and
    the format's name; None where no array is of such a format (or, with ``fmt`` one of
    them, named with Python numbers and lists only: theirs). TypeError for another
    format beside it (``names``: the arguments, for the message)."""
    small = [small_array(x, f"{what}: {names[i]}" if names else what) for i, x in enumerate(xs)]
    found = {SMALL_BY_DTYPE[s.dtype] for s in small if s is not None}
    typed = any(hasattr(x, "dtype") for x in xs)  # (NumPy's, pandas')
    if not found and fmt in HELD_FORMATS and not typed:  # (compare's format=: pass 34)
        found = {fmt}
    if not found:
        return None
    if len(found) > 1:
        raise TypeError(f"{what}: mixed formats {' and '.join(sorted(found))}; {_CONVERT}")
    name = found.pop()
    if name not in HELD_FORMATS:  # AMD's FNUZ FP8, E8M0: refused as before
        return None
    out = []
    for i, (x, s) in enumerate(zip(xs, small)):
        arg = f"{what}: {names[i]}" if names else what
        if s is not None:
            out.append(s.astype(np.float32))
            continue
        if isinstance(x, (np.ndarray, np.generic)):
            kind = np.asarray(x).dtype.name
            raise TypeError(f"{arg} is {kind} beside {name} data: mixed formats; {_CONVERT}")
        v = np.asarray(as_array(x, arg), dtype=np.float64)
        if np.isnan(v).any() and not has_nan(name):
            raise TypeError(f"{arg}: NaN is not a value of {name} (it has no NaN)")
        r = np.asarray(as_format(v, name), dtype=np.float64)
        if not np.array_equal(r, v, equal_nan=True):
            bad = float(v[r != v].reshape(-1)[0]) if v.ndim else float(v)
            raise TypeError(f"{arg}: the Python value {bad!r} is not exactly one of {name}'s")
        out.append(v.astype(np.float32))
    return out, name


_CONVERT = "convert explicitly first, e.g. x.astype(np.float32) (exact for FP8, FP6 and FP4)"


def carried(values: np.ndarray, accumulate) -> np.ndarray:
    """FP8, FP6 or FP4 values (float32) in the type an order adds them in: float64 where the
    accumulator is float64's or wider than float32 (fpx.format's), so that its result is
    rounded once, to the data's format, not first to float32."""
    try:
        wide = accumulate is not None and format_info(accumulate).dtype == np.float64
    except (TypeError, ValueError):  # (an unknown accumulator: refused where it is read)
        wide = False
    return values.astype(np.float64) if wide else values


def has_nan(name: str) -> bool:
    """FP8 has NaN; FP6 and FP4 have none (they saturate: their overflow is "max")."""
    return _INFO[name].overflow != "max"


def as_held(value, name: str) -> np.generic:
    """A result in format ``name``'s ml_dtypes type (float64 for a format of ``fpx.format``):
    rounded to it (nearest-even, the format's own overflow) where it is not one of its
    values. A NaN (an E4M3 accumulator past 448) is a ValueError for FP6 and FP4, which have
    none (ml_dtypes would make it -0)."""
    out = np.asarray(as_format(value, name))
    if _INFO[name].user_defined:
        return out.astype(np.float64)[()]
    if not has_nan(name) and np.isnan(out.astype(np.float64)).any():
        raise ValueError(
            f"the result is NaN, which {name} cannot hold (it has no NaN): a step went to "
            "NaN (an E4M3 accumulator past 448, inf - inf in one with infinities, or 0/0 where "
            "everything underflowed to 0, as exp(-3.75) in FP6); give a wider accumulator, "
            "e.g. accumulate='float32'"
        )
    return out.astype(SMALL_DTYPES[name])[()]
