"""Bit patterns of the lessons' formats taken apart: :func:`bit_fields` (value, sign,
exponent, significand, class, neighbours, ulp, hex, the bit string) and :func:`bits_of` (the
pattern of a value); :func:`ordered` counts the patterns in value order."""

from __future__ import annotations

import math
from decimal import Decimal
from fractions import Fraction

from .. import checks
from ..formats import as_format, format_info
from .numbers import parse_number, rounded

__all__ = ["BIT_FORMATS", "bit_fields", "bits_of", "ordered"]

#: the formats :func:`bit_fields` and :func:`bits_of` take apart
BIT_FORMATS = ("float16", "bfloat16", "tf32", "float32", "float64", "float8_e4m3", "float8_e5m2")


def _layout(fmt: str) -> tuple[int, int, int, int, bool]:
    """(total bits, exponent bits, fraction bits, bias, IEEE specials) of ``fmt``."""
    checks.choice("format", fmt, BIT_FORMATS)
    info = format_info(fmt)
    fbits = info.precision - 1
    ebits = {"tf32": 8, "float8_e4m3": 4, "float8_e5m2": 5}.get(fmt, info.exponent_bits)
    return 1 + ebits + fbits, ebits, fbits, 1 - info.emin, fmt != "float8_e4m3"


def _decode(bits: int, fmt: str) -> float:
    total, ebits, fbits, bias, ieee = _layout(fmt)
    s, E, F = bits >> (total - 1), (bits >> fbits) & ((1 << ebits) - 1), bits & ((1 << fbits) - 1)
    top = (1 << ebits) - 1
    sign = -1.0 if s else 1.0
    if E == top and (ieee or F == (1 << fbits) - 1):
        return sign * math.inf if ieee and F == 0 else math.nan
    if E == 0:
        return sign * math.ldexp(F, 1 - bias - fbits)
    return sign * math.ldexp((1 << fbits) + F, E - bias - fbits)


def bits_of(value, fmt: str) -> int:
    """The bit pattern (an int) of ``value`` rounded to ``fmt`` with ``fpx.as_format``; typed
    text is read exactly (:func:`parse_number`)."""
    total, ebits, fbits, bias, ieee = _layout(fmt)
    if isinstance(value, (str, Fraction, Decimal, int)) and not isinstance(value, bool):
        v = float(rounded(parse_number(value), fmt))
    else:
        v = float(as_format(value, fmt))
    s = 1 if math.copysign(1.0, v) < 0 else 0
    top = (1 << ebits) - 1
    if math.isnan(v):
        return (
            (s << (total - 1))
            | (top << fbits)
            | ((1 << fbits) - 1 if not ieee else 1 << (fbits - 1))
        )
    a = abs(v)
    if math.isinf(a):
        return (s << (total - 1)) | (top << fbits)
    if a == 0:
        return s << (total - 1)
    e = math.frexp(a)[1] - 1
    if e < 1 - bias:
        E, F = 0, int(a / math.ldexp(1.0, 1 - bias - fbits))
    else:
        E, F = e + bias, int(math.ldexp(a, fbits - e)) - (1 << fbits)
    return (s << (total - 1)) | (E << fbits) | F


def ordered(bits: int, fmt: str) -> int:
    """Bit patterns as integers that count the values in order (both zeros at 0)."""
    sign = 1 << (_layout(fmt)[0] - 1)
    return -(bits & ~sign) if bits & sign else bits


def _neighbour(bits: int, fmt: str, up: bool) -> float | None:
    total = _layout(fmt)[0]
    v = _decode(bits, fmt)
    if math.isnan(v) or (math.isinf(v) and (v > 0) == up):
        return None
    sign = 1 << (total - 1)
    if v == 0:
        nb = 1 if up else sign | 1
    elif (v > 0) == up:
        nb = bits + 1
    else:
        nb = bits - 1
    out = _decode(nb, fmt)
    return None if math.isnan(out) else out


def bit_fields(bits, fmt: str) -> dict:
    """A bit pattern of ``fmt`` taken apart: value, sign, exponent, significand, class,
    neighbours, ulp, hex and the bit string (sign, exponent and fraction separated by spaces).

    ``bits`` is an int in [0, 2**width); tf32 is 19 bits (1 + 8 + 10), the FP8 formats 8.
    """
    total, ebits, fbits, bias, ieee = _layout(fmt)
    b = checks.integer("bits", bits, 0, (1 << total) - 1)
    v = _decode(b, fmt)
    s, E, F = b >> (total - 1), (b >> fbits) & ((1 << ebits) - 1), b & ((1 << fbits) - 1)
    if math.isnan(v):
        kind = "NaN"
    elif math.isinf(v):
        kind = "infinity"
    elif v == 0:
        kind = "zero"
    else:
        kind = "subnormal" if E == 0 else "normal"
    e = (1 - bias) if E == 0 else E - bias
    significand = (F / (1 << fbits)) + (0 if E == 0 else 1)
    if math.isfinite(v):
        q = max(math.frexp(abs(v))[1] - 1 if v else 1 - bias, 1 - bias) - fbits
        gap = math.ldexp(1.0, q)
    else:
        gap = math.nan
    string = format(b, f"0{total}b")
    return {
        "format": fmt,
        "bits": b,
        "width": total,
        "hex": f"0x{b:0{(total + 3) // 4}x}",
        "bit_string": f"{string[0]} {string[1 : 1 + ebits]} {string[1 + ebits :]}",
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
