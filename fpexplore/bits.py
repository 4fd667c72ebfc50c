"""A value's bits: its bit pattern, fields, binary and hexadecimal strings, and the shortest
decimal that reads back as it, in the value's own format (the formats of
:mod:`fpexplore.formats`, and ml_dtypes' FP8, FP6, FP4 and E8M0 arrays for the patterns), or
with ``fmt=`` in a format of ``fpx.format`` (float64 values holding its values)."""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

import ml_dtypes
import numpy as np

from . import checks
from ._registry import FORMATS, SMALL_DTYPES, FormatInfo
from ._roundmodes import shortest_by_search
from .formats import (
    SMALL_BY_DTYPE,
    as_array,
    bit_patterns,
    float_array,
    format_arg,
    format_info,
    refuse_masked,
    scalar_out,
    small_array,
)
from .userformat import held_bits, held_values, ordered_keys, twin

if TYPE_CHECKING:
    from numpy.typing import ArrayLike, DTypeLike

__all__ = [
    "BitFields",
    "bit_string",
    "fields",
    "from_bits",
    "hex_string",
    "shortest_repr",
    "to_bits",
    "value_texts",
]


class BitFields(NamedTuple):
    """A value's fields as integers (from :func:`fields`).

    Attributes
    ----------
    sign : ndarray or int
        0 for positive, 1 for negative (the sign bit).
    exponent : ndarray or int
        The biased exponent field (0 for zeros and subnormals).
    significand : ndarray or int
        The explicit significand (fraction) field, without the implicit bit.
    """

    sign: np.ndarray
    exponent: np.ndarray
    significand: np.ndarray


def to_bits(x: ArrayLike, fmt: str | FormatInfo | None = None) -> np.ndarray | np.generic:
    """The bit patterns of ``x``.

    Parameters
    ----------
    x : array_like
        Values of a storage format (float16, bfloat16, float32, float64), or an array of
        ml_dtypes' FP8, FP6, FP4 or E8M0 types.
    fmt : str or FormatInfo, optional
        A format of :func:`fpexplore.format` with an IEEE layout (``ieee_layout``), for
        float64 ``x`` holding its values; None: x's own format.

    Returns
    -------
    ndarray or scalar
        Unsigned integers of the format's width (uint8 for ml_dtypes' small types; uint64
        for a format of ``fpx.format``).
    """
    if fmt is not None:
        return scalar_out(held_bits(x, fmt, "to_bits"))
    if (sm := small_array(x, "to_bits: x")) is not None:
        return scalar_out(np.array(sm, order="C", copy=True).view(np.uint8))
    arr, info = float_array(x, "to_bits: x")
    return scalar_out(bit_patterns(arr, info))


def from_bits(bits: ArrayLike, fmt: DTypeLike | FormatInfo) -> np.ndarray | np.generic:
    """Values of format ``fmt`` with the given bit patterns (the inverse of :func:`to_bits`).

    Parameters
    ----------
    bits : array_like of int
        Bit patterns, each in ``[0, 2**width)``; anything else is a ValueError naming it.
    fmt : str, dtype or FormatInfo
        A storage format, or FP8, FP6, FP4 or E8M0 (by name or ml_dtypes' dtype), or a
        format of :func:`fpexplore.format` with an IEEE layout (as :func:`to_bits` reads).

    Returns
    -------
    ndarray or scalar
        Of the format's dtype (ml_dtypes' type for FP8, FP6, FP4 and E8M0; float64 for a
        format of ``fpx.format``).
    """
    refuse_masked(bits, "from_bits")
    try:
        small = None if isinstance(fmt, (str, FormatInfo)) else SMALL_BY_DTYPE.get(np.dtype(fmt))
    except TypeError:
        small = None
    try:
        info = format_info(small or fmt)
    except (TypeError, ValueError) as e:
        raise type(e)(f"from_bits: fmt: {e}") from None
    small = SMALL_DTYPES.get(info.name)  # FP8, FP6, FP4, E8M0: ml_dtypes' type, one byte
    if not info.storage and small is None and not info.user_defined:
        kind = "an input rounding"
        raise ValueError(
            f"from_bits: fmt: {info.name} is {kind}, not a storage format; "
            f"valid formats: {', '.join((*FORMATS, *SMALL_DTYPES))}"
        )
    b = as_array(bits, "from_bits: bits")  # (a ragged list: said so, not NumPy's words)
    if not b.size and isinstance(bits, (list, tuple)):
        b = b.astype(info.uint)  # [] is float64 to NumPy
    ints = b.dtype.kind == "O" and all(
        isinstance(v, int) and not isinstance(v, bool) for v in b.reshape(-1).tolist()
    )  # Python ints beyond int64/uint64: NumPy keeps them as objects
    if not ints and b.dtype.kind not in "iu":
        raise TypeError(
            f"from_bits: bits must be integers (bit patterns), got {checks.shown(bits)} "
            f"of dtype {b.dtype}"
        )
    width = _layout(None, info)[0] if small is None else ml_dtypes.finfo(small).bits
    if b.size and (int(b.min()) < 0 or int(b.max()) >= 1 << width):
        bad = next(int(v) for v in b.reshape(-1).tolist() if not 0 <= int(v) < 1 << width)
        raise ValueError(
            f"from_bits: bits: {bad} is not a {info.name} bit pattern; they lie in [0, 2**{width})"
        )
    if small is not None:
        return scalar_out(b.astype(np.uint8).view(small))
    if info.user_defined:
        return scalar_out(held_values(b, info, "from_bits"))
    return scalar_out(b.astype(info.uint).view(info.dtype))


def fields(x: ArrayLike) -> BitFields:
    """Split ``x`` into its integer fields.

    Parameters
    ----------
    x : array_like
        Values of a storage format, or an array of ml_dtypes' FP8, FP6, FP4 or E8M0 types.

    Returns
    -------
    BitFields
        (sign, biased exponent, fraction), each of x's shape (E8M0, unsigned: sign 0).
    """
    arr, info = _values(x, None, "fields: x")
    b = np.asarray(to_bits(arr)).astype(np.uint64)
    width, sb, eb, fb = _layout(arr, info)
    sign = (b >> np.uint64(width - 1)).astype(np.int64) * sb  # (E8M0: no sign bit, 0)
    expo = ((b >> np.uint64(fb)) & np.uint64((1 << eb) - 1)).astype(np.int64)
    frac = (b & np.uint64((1 << fb) - 1)).astype(np.int64)
    return BitFields(scalar_out(sign), scalar_out(expo), scalar_out(frac))


def bit_string(
    x: ArrayLike, sep: str = " ", fmt: str | FormatInfo | None = None
) -> str | np.ndarray:
    """The bit pattern as ``"s eeeeeeee ffff..."``.

    Parameters
    ----------
    x : array_like
        Values of a storage format, or an array of ml_dtypes' FP8, FP6, FP4 or E8M0 types.
    sep : str
        Put between sign, exponent and fraction (no letters or digits).
    fmt : str or FormatInfo, optional
        As for :func:`to_bits`.

    Returns
    -------
    str or ndarray of str
        A str for a scalar, an object array of str otherwise.
    """
    if not isinstance(sep, str):
        raise TypeError(f"sep must be a string, got {checks.shown(sep)}")
    if any(c.isalnum() for c in sep):  # (pass 38: bit_string(x, "float16") read it as sep)
        raise ValueError(
            f"sep={sep!r} holds letters or digits: sep goes between the fields "
            f"(e.g. ' ' or '|'); a format goes as fmt= (bit_string(x, fmt={sep!r}))"
        )
    arr, info = _values(x, fmt, "bit_string: x")
    b = _patterns(arr, fmt, "bit_string")
    width, sb, eb, _ = _layout(arr, info)

    def one(v: int) -> str:
        s = format(v, f"0{width}b")
        return sep.join(p for p in (s[:sb], s[sb : sb + eb], s[sb + eb :]) if p)

    out = [one(v) for v in b]
    if arr.ndim == 0:
        return out[0]
    return np.array(out, dtype=object).reshape(arr.shape)


def value_texts(v, fmt: str) -> tuple[str, str | None]:
    """A scalar result's shortest decimal and hexadecimal pattern in format ``fmt`` (a table's
    ``value_repr`` and ``value_hex``): ``v``'s own format's, or where ``fmt`` is one of
    ``fpx.format``'s (v: float64 holding its value) in it, the pattern None where it has no
    IEEE layout."""
    info = format_info(fmt)
    if not info.user_defined:
        return shortest_repr(v), hex_string(v)
    return shortest_repr(v, info), hex_string(v, info) if info.ieee_layout else None


def _patterns(arr: np.ndarray, fmt, what: str) -> list:
    """The bit patterns of ``arr`` as a flat list of ints (``fmt``: as for :func:`to_bits`;
    ``what``: the function, for messages)."""
    bits = held_bits(arr, fmt, what) if fmt is not None else to_bits(arr)
    return np.asarray(bits).reshape(-1).tolist()


def _values(x, fmt, what: str) -> tuple[np.ndarray, FormatInfo]:
    """``x`` as an array and its format: a storage format's, or ml_dtypes' small types', or
    ``fmt``, a format of ``fpx.format`` (x: float64, checked where its bits are read)."""
    if fmt is not None:
        return np.asarray(x), format_arg(fmt, f"{what.split(':')[0]}: fmt")
    if (sm := small_array(x, what)) is not None:
        return sm, format_info(sm.dtype)
    return float_array(x, what)


def _layout(arr: np.ndarray, info: FormatInfo) -> tuple[int, int, int, int]:
    """(width, sign, exponent and fraction bits) of a value: the format's, ml_dtypes' own
    for its small types (FP4: 4 bits, 1 2 1; E8M0: 8 bits, 0 8 0)."""
    if info.user_defined:  # (fpx.format's: IEEE's fields, not float64's that holds them)
        return (
            1 + info.exponent_bits + info.fraction_bits,
            1,
            info.exponent_bits,
            info.fraction_bits,
        )
    if info.name not in SMALL_DTYPES:
        return info.bits, 1, info.exponent_bits, info.fraction_bits
    f = ml_dtypes.finfo(arr.dtype)
    return f.bits, f.bits - f.nexp - f.nmant, f.nexp, f.nmant


def hex_string(x: ArrayLike, fmt: str | FormatInfo | None = None) -> str | np.ndarray:
    """The bit pattern in hexadecimal, e.g. ``"0x3dcccccd"`` for float32 0.1.

    Parameters
    ----------
    x : array_like
        Values of a storage format, or an array of ml_dtypes' FP8, FP6, FP4 or E8M0 types
        (their own width: two digits, one for FP4).
    fmt : str or FormatInfo, optional
        As for :func:`to_bits`.

    Returns
    -------
    str or ndarray of str
        A str for a scalar, an object array of str otherwise.
    """
    arr, info = _values(x, fmt, "hex_string: x")
    digits = -(-_layout(arr, info)[0] // 4)
    out = [f"0x{v:0{digits}x}" for v in _patterns(arr, fmt, "hex_string")]
    return out[0] if arr.ndim == 0 else np.array(out, dtype=object).reshape(arr.shape)


def shortest_repr(x: ArrayLike, fmt: str | FormatInfo | None = None) -> str | np.ndarray:
    """The shortest decimal that reads back as the same value *in the value's own format*.

    Two different values of a format always get different strings (``49957.387`` and
    ``49957.39`` for neighbouring float32s, where pandas' default six digits print
    ``49957.4`` for both). float16, float32 and float64 are NumPy's own shortest printing
    (Dragon4, with NumPy's choice of positional or scientific notation); bfloat16, which
    NumPy cannot print, is searched digit by digit, each candidate checked by correct
    rounding of the exact decimal, and written positionally where its digits reach the
    decimal point and |x| >= 1e-4, scientifically otherwise. ``-0.0``, ``inf`` and ``nan``
    as NumPy spells them.

    Parameters
    ----------
    x : array_like
        Values of a storage format, or an array of ml_dtypes' FP8, FP6, FP4 or E8M0 types
        (searched as bfloat16 is).
    fmt : str or FormatInfo, optional
        A format of :func:`fpexplore.format`, for float64 ``x`` holding its values: printed
        as the built-in format with its parameters prints (``fpx.format(11, 15)``: as
        float16), else searched as bfloat16 is; None: x's own format.

    Returns
    -------
    str or ndarray of str
        A str for a scalar, an object array of str otherwise.
    """
    if fmt is not None:
        info = format_arg(fmt, "shortest_repr: fmt")
        ordered_keys(x, info, "shortest_repr", "x", "x")  # (x checked: float64, its values)
        arr = np.asarray(x)
        if (t := twin(info.name)) != info.name:
            return shortest_repr(arr.astype(format_info(t).dtype))
        out = [shortest_by_search(float(v), info) for v in arr.reshape(-1).tolist()]
        return out[0] if arr.ndim == 0 else np.array(out, dtype=object).reshape(arr.shape)
    arr, info = _values(x, None, "shortest_repr: x")
    flat = arr.reshape(-1)
    if info.name == "bfloat16" or info.name in SMALL_DTYPES:
        out = [shortest_by_search(float(v), info) for v in flat.tolist()]
    else:
        out = [str(v) for v in flat]
    return out[0] if arr.ndim == 0 else np.array(out, dtype=object).reshape(arr.shape)
