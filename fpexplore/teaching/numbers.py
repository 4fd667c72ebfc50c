"""Numbers as the lessons read and write them: :func:`parse_number` reads a typed number
exactly; a value as text to type back (:func:`text_of`, :func:`exact_text`); a parsed number
rounded to a format (:func:`rounded`), two values compared bit for bit (:func:`same`)."""

from __future__ import annotations

import math
import re
from decimal import Decimal
from fractions import Fraction

import numpy as np

from .. import checks
from ..formats import as_format

__all__ = ["exact_text", "parse_number", "rounded", "same", "text_of"]

_POWER = re.compile(
    r"^([+-]?)\s*(?:(\d+(?:\.\d*)?|\.\d+)\s*\*\s*)?2\s*(?:\*\*|\^)\s*\(?\s*([+-]?\d+)\s*\)?$"
)
_EXPONENT = re.compile(r"[eE]\s*([+-]?\d+)\s*$")
_HEX = re.compile(r"^([+-]?)0x([0-9a-f]*)(?:\.([0-9a-f]*))?p([+-]?\d+)$", re.IGNORECASE)
_NUMBER_HELP = "type e.g. 0.1, 1e-3, 3/4 or 2**-20"
MAX_EXPONENT = 20000  # of a typed 2**e or 1e..., far past every format's range


def parse_number(text) -> Fraction | float:
    """A typed number as an exact :class:`~fractions.Fraction` (``inf``, ``nan`` and a
    negative zero, ``-0`` or ``-0.0``, as floats: a Fraction has no sign of zero).

    Accepts decimals (``0.1``, ``-1e-3``), ratios (``3/4``), powers of two (``2**-20``,
    ``2^-20``, ``3*2**-24``), hexadecimal floats (``0x1.8p-3``), ints and floats. ValueError
    with a friendly message for anything else (an empty box, words).
    """
    v = _parse(text)
    if isinstance(v, Fraction) and v == 0 and _negative(text):
        return -0.0
    return v


def _negative(text) -> bool:
    """Whether a number that reads as zero was typed or given with a minus sign."""
    if isinstance(text, str):
        return text.strip().replace("\u2212", "-").startswith("-")
    if isinstance(text, Decimal):
        return text.is_signed()
    if isinstance(text, (float, np.generic)) and not isinstance(text, np.str_):
        return math.copysign(1.0, float(text)) < 0  # ml_dtypes' bfloat16, FP8 scalars too
    return False


def _parse(text) -> Fraction | float:
    if isinstance(text, (bool, np.bool_, np.complexfloating)):  # (pass 19: 3+5j read as 3)
        raise ValueError(f"{checks.shown(text)} is not a number: {_NUMBER_HELP}")
    if isinstance(text, (int, np.integer)):
        return Fraction(int(text))
    if isinstance(text, np.longdouble) and np.isfinite(text):
        return Fraction(*text.as_integer_ratio())  # exactly: float() would round it
    if isinstance(text, (float, np.floating, np.generic)) and not isinstance(text, np.str_):
        v = float(text)  # a NumPy scalar of any format (ml_dtypes' bfloat16 too)
        return Fraction(v) if math.isfinite(v) else v
    if isinstance(text, Decimal) and not text.is_finite():
        return math.nan if text.is_nan() else float(text)  # inf, -inf, nan (sNaN: nan)
    if isinstance(text, Decimal) and abs(text.adjusted()) > MAX_EXPONENT:  # (pass 20: a hang)
        raise ValueError("that exponent is too large")
    if isinstance(text, (Fraction, Decimal)):
        return Fraction(text)
    if not isinstance(text, str):
        raise ValueError(f"{checks.shown(text)} is not a number: {_NUMBER_HELP}")
    s = text.strip().replace("\u2212", "-").replace("_", "")
    if not s:
        raise ValueError(f"the box is empty: {_NUMBER_HELP}")
    if len(s) > 400:
        raise ValueError("that is too long to be a number")
    low = s.lower().lstrip("+")
    if low in ("inf", "-inf", "infinity", "-infinity", "nan", "-nan"):
        return float(low.replace("infinity", "inf"))
    m = _POWER.match(s)
    if m:
        sign, mult, exp = m.groups()
        if abs(int(exp)) > MAX_EXPONENT:
            raise ValueError("that exponent is too large")
        v = Fraction(mult or 1) * Fraction(2) ** int(exp)
        return -v if sign == "-" else v
    m = _HEX.match(s)
    if m and (m.group(2) or m.group(3)):  # exactly: float.fromhex would round to float64
        sign, whole, frac, exp = m.groups()
        if abs(int(exp)) > MAX_EXPONENT:
            raise ValueError("that exponent is too large")
        frac = frac or ""
        v = Fraction(int(whole + frac or "0", 16)) * Fraction(2) ** (int(exp) - 4 * len(frac))
        return -v if sign == "-" else v
    e = _EXPONENT.search(s)
    if e and abs(int(e.group(1))) > MAX_EXPONENT:  # Fraction would build 10**exponent
        raise ValueError("that exponent is too large")
    try:
        return Fraction(s.replace(" ", ""))
    except (ValueError, ZeroDivisionError):
        raise ValueError(f"{checks.shown(text, 40)} is not a number: {_NUMBER_HELP}") from None


def rounded(v, fmt: str):
    """A parsed number rounded to ``fmt`` (a NumPy scalar)."""
    if isinstance(v, float):
        return as_format(v, fmt)
    return as_format(np.array([v], dtype=object), fmt)[0]


def same(a, b) -> bool:
    fa, fb = float(a), float(b)
    if math.isnan(fa) or math.isnan(fb):
        return math.isnan(fa) and math.isnan(fb)
    return fa == fb and math.copysign(1, fa) == math.copysign(1, fb)


def text_of(v) -> str:
    """A value as text to type back: the shortest decimal that reads back exactly in float64
    (every value of the lessons' formats is a float64)."""
    f = float(v)
    if not math.isfinite(f):
        return str(f)
    if f == int(f) and abs(f) < 1e16:
        return str(int(f)) if f or math.copysign(1, f) > 0 else "-0.0"
    return repr(f)


def exact_text(v) -> str:
    """Every digit of a binary value (finite decimal), e.g. 0.000030517578125."""
    f = float(v)
    if not math.isfinite(f):
        return str(f)
    d = Decimal(f)
    text = format(d, "f")
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    if len(text) > 40:  # tiny or huge: a power-of-two form reads better
        num, den = Fraction(f).as_integer_ratio()
        if den & (den - 1) == 0 and num:
            return (
                f"{num}*2**-{den.bit_length() - 1}"
                if abs(num) != 1
                else (f"{'-' if num < 0 else ''}2**-{den.bit_length() - 1}")
            )
    return text
