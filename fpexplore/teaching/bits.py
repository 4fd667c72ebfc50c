"""Bit patterns of the lessons' formats taken apart: :func:`bit_fields` (value, sign,
exponent, significand, class, neighbours, ulp, hex, the bit string) and :func:`bits_of` (the
pattern of a value); :func:`ordered` counts the patterns in value order."""

from __future__ import annotations

import math
from decimal import Decimal
from fractions import Fraction
from typing import NamedTuple

import ml_dtypes
import numpy as np

from .. import checks
from .._registry import SMALL_DTYPES
from ..formats import as_format, format_info
from ..userformat import refuse_no_layout
from .numbers import parse_number, rounded

__all__ = ["BIT_FORMATS", "bit_fields", "bit_formats", "bits_of", "ordered"]

#: the formats :func:`bit_fields` and :func:`bits_of` take apart: the storage formats, tf32,
#: and every format ml_dtypes holds (FP8, the MX elements FP6 and FP4, the E8M0 scale)
BIT_FORMATS = (
    "float16",
    "bfloat16",
    "tf32",
    "float32",
    "float64",
    *SMALL_DTYPES,
)


def bit_formats() -> tuple[str, ...]:
    """:data:`BIT_FORMATS` and the formats of ``fpx.format`` that have IEEE 754's layout
    (subnormals, and emax filling the exponent field: 2**(w-1) - 1, as float16's 15)."""
    from ..userformat import user_names

    return (*BIT_FORMATS, *(n for n in user_names() if format_info(n).ieee_layout))


class _Layout(NamedTuple):
    """A format's encoding: widths, bias and how its top exponent field reads. ``specials``:
    "ieee" (all-ones exponent: infinity or NaN), "finite" (all-ones exponent and fraction:
    NaN, OCP e4m3), "fnuz" (the negative zero's pattern is the NaN), "none" (every pattern a
    number: FP6, FP4), "e8m0" (unsigned, exponent only, all ones NaN, no zero)."""

    total: int
    ebits: int
    fbits: int
    bias: int
    signed: bool
    specials: str


def _layout(fmt: str) -> _Layout:
    if isinstance(fmt, str) and fmt not in BIT_FORMATS and format_info(fmt).user_defined:
        # (its values exist; IEEE's patterns would not all be them)
        refuse_no_layout(format_info(fmt), "the bit inspector")
    checks.choice("format", fmt, bit_formats())
    info = format_info(fmt)
    if fmt in SMALL_DTYPES:
        f = ml_dtypes.finfo(SMALL_DTYPES[fmt])
        total, ebits = f.bits, f.nexp
    else:  # the IEEE formats, and tf32: 1 + 8 + 10 bits
        ebits = info.exponent_bits
        total = 1 + ebits + info.precision - 1
    if not info.signed:
        specials = "e8m0"
    elif info.has_infinity:
        specials = "ieee"
    elif not info.has_negative_zero:
        specials = "fnuz"
    elif info.saturates:
        specials = "none"
    else:
        specials = "finite"
    bias = -info.emin if specials == "e8m0" else 1 - info.emin
    return _Layout(total, ebits, info.precision - 1, bias, info.signed, specials)


def _fields(bits: int, lay: _Layout) -> tuple[int, int, int]:
    """(sign, exponent field, fraction field) of a pattern."""
    s = bits >> (lay.total - 1) if lay.signed else 0
    e = (bits >> lay.fbits) & ((1 << lay.ebits) - 1)
    return s, e, bits & ((1 << lay.fbits) - 1)


def _decode(bits: int, fmt: str) -> float:
    lay = _layout(fmt)
    s, E, F = _fields(bits, lay)
    top, full = (1 << lay.ebits) - 1, (1 << lay.fbits) - 1
    sign = -1.0 if s else 1.0
    if lay.specials == "e8m0":
        return math.nan if E == top else math.ldexp(1.0, E - lay.bias)
    if lay.specials == "fnuz" and s and E == 0 and F == 0:
        return math.nan
    if E == top and (lay.specials == "ieee" or (lay.specials == "finite" and F == full)):
        return sign * math.inf if lay.specials == "ieee" and F == 0 else math.nan
    if E == 0:
        return sign * math.ldexp(F, 1 - lay.bias - lay.fbits)
    return sign * math.ldexp((1 << lay.fbits) + F, E - lay.bias - lay.fbits)


def bits_of(value, fmt: str) -> int:
    """The bit pattern (an int) of ``value`` rounded to ``fmt`` with ``fpx.as_format``; typed
    text is read exactly (:func:`parse_number`). ValueError for NaN in a format with no NaN
    (FP6, FP4: every pattern is a number)."""
    lay = _layout(fmt)
    if isinstance(value, (str, Fraction, Decimal, int)) and not isinstance(value, bool):
        v = float(rounded(parse_number(value), fmt))
    elif np.ndim(value) != 0:
        raise TypeError(f"value must be one number (or its text), got {checks.shown(value)}")
    else:
        v = float(as_format(value, fmt))
    negative = lay.signed and math.copysign(1.0, v) < 0
    sign = (1 << (lay.total - 1)) if negative else 0
    top, full = (1 << lay.ebits) - 1, (1 << lay.fbits) - 1
    if math.isnan(v):
        if lay.specials == "none":
            raise ValueError(f"{fmt} has no NaN: every one of its bit patterns is a number")
        if lay.specials == "e8m0":
            return top
        if lay.specials == "fnuz":
            return 1 << (lay.total - 1)
        return (
            sign | (top << lay.fbits) | (full if lay.specials == "finite" else 1 << (lay.fbits - 1))
        )
    a = abs(v)
    if math.isinf(a):
        return sign | (top << lay.fbits)
    if a == 0:
        return 0 if lay.specials == "fnuz" else sign
    e = math.frexp(a)[1] - 1
    if lay.specials == "e8m0":
        return e + lay.bias
    if e < 1 - lay.bias:
        E, F = 0, int(a / math.ldexp(1.0, 1 - lay.bias - lay.fbits))
    else:
        E, F = e + lay.bias, int(math.ldexp(a, lay.fbits - e)) - (1 << lay.fbits)
    return sign | (E << lay.fbits) | F


def ordered(bits: int, fmt: str) -> int:
    """Bit patterns as integers that count the values in order (both zeros at 0)."""
    lay = _layout(fmt)
    if not lay.signed:
        return bits
    sign = 1 << (lay.total - 1)
    return -(bits & ~sign) if bits & sign else bits


def _neighbour(bits: int, fmt: str, up: bool) -> float | None:
    lay = _layout(fmt)
    v = _decode(bits, fmt)
    if math.isnan(v) or (math.isinf(v) and (v > 0) == up):
        return None
    if not lay.signed:  # E8M0: the patterns count the values (0xFF is NaN)
        nb = bits + 1 if up else bits - 1
        if nb < 0:
            return None
        out = _decode(nb, fmt)
        return None if math.isnan(out) else out
    sign = 1 << (lay.total - 1)
    if v == 0:
        nb = 1 if up else sign | 1
    elif (v > 0) == up:
        if bits & ~sign == sign - 1:  # the largest pattern: no pattern beyond it
            return None
        nb = bits + 1
    else:
        nb = bits - 1
    if lay.specials == "fnuz" and nb == sign:  # toward zero from the least negative value
        return 0.0
    out = _decode(nb, fmt)
    return None if math.isnan(out) else out


def bit_fields(bits, fmt: str) -> dict:
    """A bit pattern of ``fmt`` taken apart: value, sign, exponent, significand, class,
    neighbours, ulp, hex and the bit string (sign, exponent and fraction separated by spaces).

    ``bits`` is an int in [0, 2**width); tf32 is 19 bits (1 + 8 + 10), the FP8 formats 8, FP6
    6, FP4 4, E8M0 8 (an exponent alone: no sign, no fraction).
    """
    lay = _layout(fmt)
    total, ebits, fbits, bias = lay.total, lay.ebits, lay.fbits, lay.bias
    b = checks.integer("bits", bits, 0, (1 << total) - 1)
    v = _decode(b, fmt)
    s, E, F = _fields(b, lay)
    e8m0 = lay.specials == "e8m0"
    if math.isnan(v):
        kind = "NaN"
    elif math.isinf(v):
        kind = "infinity"
    elif v == 0:
        kind = "zero"
    else:
        kind = "subnormal" if E == 0 and not e8m0 else "normal"
    e = E - bias if e8m0 or E else 1 - bias
    significand = (F / (1 << fbits)) + (0 if E == 0 and not e8m0 else 1)
    if math.isfinite(v):
        least = -bias if e8m0 else 1 - bias  # (E8M0's exponent 0 is 2^-127: pass 25)
        q = max(math.frexp(abs(v))[1] - 1 if v else least, least) - fbits
        gap = math.ldexp(1.0, q)
    else:
        gap = math.nan
    string = format(b, f"0{total}b")
    head = 1 if lay.signed else 0
    parts = [string[:head], string[head : head + ebits], string[head + ebits :]]
    return {
        "format": fmt,
        "bits": b,
        "width": total,
        "hex": f"0x{b:0{(total + 3) // 4}x}",
        "bit_string": " ".join(p for p in parts if p),
        "value": v,
        "class": kind,
        "sign": s,
        "exponent_field": E,
        "exponent": e,
        "fraction_field": F,
        "significand": significand,
        "exponent_bits": ebits,
        "fraction_bits": fbits,
        "next_up": _neighbour(b, fmt, True),
        "next_down": _neighbour(b, fmt, False),
        "ulp": gap,
    }
