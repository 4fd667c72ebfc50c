"""The rounding modes of the input roundings, apart from the format registry: tf32's ties
(away from zero, to even, truncation) on float32 bits, and one exact rational (a Python
number, ``Fraction`` or ``Decimal``) rounded correctly in a format's mode, the ends of the
formats without infinity included (FP8's overflow to NaN, FP6 and FP4 saturating, E8M0's
missing zero and sign). ``info`` is a :class:`fpexplore.formats.FormatInfo`;
:mod:`fpexplore.formats` calls these.
"""

from __future__ import annotations

import math
import numbers
from fractions import Fraction

import numpy as np

from . import checks
from .numerics import round_rational

# tf32 from float32 bits: ties away (cvt.rna), ties to even, or truncation
TF32_TIES = {"tf32": "away", "tf32-rne": "even", "tf32-truncate": "zero"}


def round_f32_bits(x32: np.ndarray, drop: int, mode: str) -> np.ndarray:
    """Round float32 values to ``24 - drop`` significand bits, NaN kept.

    ``mode``: "even" (nearest, ties to even), "away" (nearest, ties away from zero) or "zero"
    (truncation). The bit pattern is sign-magnitude, so adding to it rounds the magnitude; a
    carry out of the significand bumps the exponent, up to infinity. A float32 rounded to odd
    first (``odd_f64_to_f32``) rounds correctly this way from float64.
    """
    b = x32.view(np.uint32)
    mask = np.uint32((0xFFFFFFFF >> drop) << drop)
    if mode == "zero":
        r = b & mask
    elif mode == "away":
        r = (b + np.uint32(1 << (drop - 1))) & mask
    else:
        half = np.uint32((1 << (drop - 1)) - 1)
        r = (b + half + ((b >> np.uint32(drop)) & np.uint32(1))) & mask
    out = r.view(np.float32)
    return np.where(np.isnan(x32), x32, out)


def round_power_of_two(x64: np.ndarray, info) -> np.ndarray:
    """Round float64 values to E8M0 (``info``: powers of two 2**emin .. 2**emax, no zero, no
    sign) as float32: the nearest power of two by value, a tie 1.5 * 2**k to 2**(k+1);
    below 2**emin, 2**emin; from 1.5 * 2**emax on, zero, negative values, NaN and ±inf: NaN.
    Exact from the float64 (``frexp``), not through float32: ml_dtypes 0.6 rounds the float32
    subnormals in (2**-127, 2**-126) all up to 2**-126."""
    with np.errstate(invalid="ignore"):
        m, e = np.frexp(x64)  # x = m * 2**e, m in [0.5, 1)
        k = e.astype(np.int64) - 1 + (m >= 0.75)  # floor(log2 x), +1 from the tie 1.5 on
        ok = (x64 > 0) & np.isfinite(x64) & (k <= info.emax)
        out = np.ldexp(1.0, np.clip(k, info.emin, info.emax))
        return np.where(ok, out, np.nan).astype(np.float32)


def _round_rational_mode(num: int, den: int, info) -> float:
    """Round ``num/den`` exactly to ``info`` in its rounding mode (tf32 variants, FP8)."""
    mode = TF32_TIES.get(info.name, "even")
    v = round_rational(num, den, info.precision, info.emin, info.emax)
    if mode == "zero" and math.isinf(v):  # a finite value past the largest: toward zero
        return math.copysign(math.ldexp(2.0 - 2.0 ** (1 - info.precision), info.emax), -(num < 0))
    if mode != "even" and math.isfinite(v):
        # the neighbour on the other side of num/den, if num/den is not v itself
        diff = Fraction(num, den) - Fraction(v)
        if diff:
            step = math.ldexp(1.0, max(_floor_log2(num, den), info.emin) - info.precision + 1)
            other = v + step if diff > 0 else v - step
            lo, hi = sorted((v, other), key=abs)
            if mode == "zero":
                v = lo
            elif 2 * abs(diff) == step:  # a tie: away from zero
                v = hi
            if math.isinf(v) or abs(v) >= math.ldexp(1.0, info.emax + 1):
                v = math.copysign(math.inf, v)
    if v == 0 and not info.has_zero:  # E8M0: no zero, every positive value at least 2**emin
        return info.smallest_normal
    if info.finite_max is not None and abs(v) > info.finite_max:
        # no infinity: FP6 and FP4 saturate, the others' overflow is NaN (as in ml_dtypes)
        return math.copysign(info.finite_max, v) if info.saturates else math.nan
    return v


def _floor_log2(num: int, den: int) -> int:
    m = abs(num)
    e = m.bit_length() - den.bit_length()
    if Fraction(m, den) < Fraction(2) ** e:
        e -= 1
    return e


def _as_ratio(v) -> tuple[int, int] | float:
    """Exact (num, den) of a real number, or the float itself if it is NaN or infinite."""
    if isinstance(v, (bool, np.bool_)):
        raise TypeError("boolean values are not numbers to round")
    if isinstance(v, numbers.Integral):
        return int(v), 1
    if isinstance(v, numbers.Rational):
        return int(v.numerator), int(v.denominator)
    if isinstance(v, (numbers.Complex)) and not isinstance(v, numbers.Real):
        raise TypeError(f"complex value {checks.shown(v)} cannot be rounded to a real format")
    if hasattr(v, "as_integer_ratio"):
        try:
            return v.as_integer_ratio()
        except (OverflowError, ValueError):
            try:
                return float(v)  # inf or nan
            except ValueError:  # Decimal("sNaN"): a signalling NaN
                return math.nan
    raise TypeError(f"cannot round {type(v).__name__} value {checks.shown(v)} to a binary format")


def round_exact_scalar(v, info) -> float:
    r = _as_ratio(v)
    if isinstance(r, float):  # NaN or an infinity: as overflow where there is no infinity
        if math.isinf(r) and not info.has_infinity:
            return math.copysign(info.max, r) if info.saturates else math.nan
        return r
    num, den = r
    if not info.signed and num <= 0:  # E8M0: no sign, no zero: a zero or negative is NaN
        return math.nan
    if num == 0:
        # keep the sign of a signed zero (-0.0, Decimal("-0")), integers and rationals give +0
        signed = isinstance(v, (float, np.floating)) or type(v).__name__ == "Decimal"
        out = math.copysign(0.0, float(v)) if signed else 0.0
    elif not info.storage:
        out = _round_rational_mode(num, den, info)
    else:
        return round_rational(num, den, info.precision, info.emin, info.emax)
    if out == 0:  # a rounded zero has the value's sign; the FNUZ formats have no -0
        out = math.copysign(0.0, out if num == 0 else num) if info.has_negative_zero else 0.0
    return out


def shortest_by_search(v: float, info) -> str:
    """The shortest decimal that reads back as ``v`` in ``info``'s format (NumPy's style)."""
    if v == 0 or not math.isfinite(v):
        return str(v)
    from decimal import Decimal

    for digits in range(1, 18):
        text = f"{v:.{digits - 1}e}"
        num, den = Decimal(text).as_integer_ratio()
        if round_rational(num, den, info.precision, info.emin, info.emax) == v:
            break
    mantissa, exponent = text.split("e")
    if 1e-4 <= abs(v) and int(exponent) < min(digits, 16):  # NumPy: no invented zeros
        positional = format(Decimal(text), "f")
        return positional if "." in positional else positional + ".0"
    mantissa = mantissa.rstrip("0").rstrip(".") if "." in mantissa else mantissa
    return f"{mantissa}e{int(exponent):+03d}"
