"""The rounding modes, apart from the format registry: tf32's own (ties away, to even,
truncation) on float32 bits, and every mode of ``ROUNDING_MODES``
(nearest-even, nearest-away, toward-zero, up, down, stochastic) on a format's grid, for
float64 arrays and for one exact rational (a Python number, ``Fraction`` or ``Decimal``), the
ends of the formats without infinity included (FP8's overflow to NaN, FP6 and FP4 saturating,
E8M0's missing zero and sign). ``info`` is a :class:`fpexplore.formats.FormatInfo`;
:mod:`fpexplore.formats` calls these.
"""

from __future__ import annotations

import math
import numbers
from fractions import Fraction

import numpy as np

from . import checks
from .numerics import round_rational


def round_f32_bits(x32: np.ndarray, drop: int, mode: str) -> np.ndarray:
    """Round float32 values to ``24 - drop`` significand bits, NaN kept.

    ``mode``: "nearest_even", "nearest_away" (ties away from zero, tf32's cvt.rna) or
    "toward_zero" (truncation). The bit pattern is sign-magnitude, so adding to it rounds the
    magnitude; a carry out of the significand bumps the exponent, up to infinity. A float32
    rounded to odd first (``odd_f64_to_f32``) rounds correctly this way from float64.
    """
    b = x32.view(np.uint32)
    mask = np.uint32((0xFFFFFFFF >> drop) << drop)
    if mode == "toward_zero":
        r = b & mask
    elif mode == "nearest_away":
        r = (b + np.uint32(1 << (drop - 1))) & mask
    else:
        half = np.uint32((1 << (drop - 1)) - 1)
        r = (b + half + ((b >> np.uint32(drop)) & np.uint32(1))) & mask
    out = r.view(np.float32)
    return np.where(np.isnan(x32), x32, out)


def _choose(mode: str, lo, hi, t, draw):
    """The multiple of the quantum that ``mode`` picks between ``lo = floor(t)`` and ``hi =
    ceil(t)`` (``draw``: the stochastic draw fell below ``t - lo``), for NumPy arrays and
    Python numbers (exact Fractions) alike. Nearest compares ``t - lo`` with ``hi - t``: in
    float64 one of them is exact (``1 + t`` for ``-1 < t < 0`` is not: ``-(0.5 - 2**-55)``
    would read as a tie), and the rounded one stays on its side of 0.5."""
    positive = t > 0
    if mode == "up":
        return hi
    if mode == "down":
        return lo
    if mode == "toward_zero":
        return np.where(positive, lo, hi)
    if mode == "stochastic":  # up with probability t - lo: (x - lo) / gap
        return np.where(draw, hi, lo)
    tie = np.where(lo % 2 == 1, hi, lo) if mode == "nearest_even" else np.where(positive, hi, lo)
    below, above = t - lo, hi - t
    return np.where(below > above, hi, np.where(below < above, lo, tie))


def _ends(r, negative, big, info, mode: str):
    """The grid value ``r`` where the format holds it. Past the largest value (``big``):
    ``±max`` where the mode rounds toward the range (toward-zero, down for x > 0, up for
    x < 0) or the format saturates, else its overflow (``±inf``, or NaN without infinity).
    A zero takes x's sign (FNUZ: +0); E8M0, without zero, gives 2**emin instead."""
    negative = np.asarray(negative)
    sign = np.where(negative, -1.0, 1.0)
    toward = (mode == "toward_zero") | (mode == "down") & ~negative | (mode == "up") & negative
    over = np.inf if info.has_infinity else np.nan
    r = np.where(big, np.where(toward | info.saturates, sign * info.max, sign * over), r)
    if not info.has_zero:
        return np.where(r == 0, info.smallest_normal, r)
    return np.where(r == 0, sign * 0.0 if info.has_negative_zero else 0.0, r)


def round_f64_in(x64: np.ndarray, info, mode: str, rng=None) -> np.ndarray:
    """Round a float64 array to ``info`` in ``mode`` (one of ``ROUNDING_MODES``; a NumPy
    Generator ``rng`` for "stochastic"), as float64 holding the results: exact, on the grid
    of quantum 2**(max(e, emin) - p + 1) with the exponent unbounded above, then the ends
    (:func:`_ends`). ±inf as the format's overflow, NaN kept; E8M0: NaN for x <= 0."""
    with np.errstate(all="ignore"):
        x = np.where(np.isfinite(x64), x64, 0.0)
        _, e = np.frexp(x)  # |x| = m * 2**e, m in [0.5, 1)
        low = e.astype(np.int64) - 1 < info.emin
        q = np.ldexp(1.0, _quantum_exp(e.astype(np.int64) - 1, low, info))
        t = x / q  # exact: q is a power of two, |t| < 2**p
        even = mode == "nearest_even"  # (np.rint: IEEE's ties-to-even, exact, as _choose picks)
        r = np.rint(t) if even else np.floor(t)
        if _on_grid(x64, r, t, info, mode):
            return np.array(x64, dtype=np.float64)  # (on the grid: the input's bits, a copy)
        if not even or not info.subnormals:
            lo, hi = np.floor(t), np.ceil(t)
            draw = rng.random(x.shape) < t - lo if mode == "stochastic" else None
            r = r if even else _choose(mode, lo, hi, t, draw)
            r = np.where(_flush_tie(low, lo, hi, t, mode, info), np.where(t > 0, hi, lo), r)
        r = r * q
        out = _ends(r, np.signbit(x64), ~(np.abs(r) <= info.max), info, mode)
        out = np.where(np.isinf(x64), _infinity(info, x64), out)
        out = np.where(np.isnan(x64), np.nan, out)
        return out if info.signed else np.where(x64 > 0, out, np.nan)


def _on_grid(x64, r, t, info, mode: str) -> bool:
    """Whether rounding ``x64`` to ``info`` gives it back bit for bit (held data rounded again:
    compare's data of fpx.format's formats): every value a multiple of its quantum within the
    range, in a format whose zeros, infinities and NaN are IEEE's; no NaN (rounding makes a
    NaN the canonical one) and not a stochastic draw (which takes its draws regardless)."""
    ieee = info.signed and info.has_negative_zero and info.has_infinity and not info.saturates
    if mode == "stochastic" or not ieee or not np.array_equal(r, t):  # (r: t rounded)
        return False
    with np.errstate(invalid="ignore"):
        return not np.isnan(x64).any() and bool(
            np.all(np.abs(np.where(np.isinf(x64), 0, x64)) <= info.max)
        )


def _quantum_exp(e, low, info):
    """The exponent of the grid's quantum at ``2**e <= |x|`` (``low``: e < emin): 2**(max(e,
    emin) - p + 1); without subnormals 2**emin below 2**emin (the grid there is 0, 2**emin)."""
    q = np.maximum(e, info.emin) - info.precision + 1
    return q if info.subnormals else np.where(low, info.emin, q)


def _flush_tie(low, lo, hi, t, mode: str, info):
    """Where a format without subnormals takes the tie 2**emin / 2 away to 2**emin in mode
    nearest-even (CPFloat's CPFLOAT_SUBN_RND: ``|x| >= xmin/2`` gives ``xmin``)."""
    return (not info.subnormals) & (mode == "nearest_even") & low & (t - lo == hi - t)


def _infinity(info, x):
    """What ``±inf`` becomes: itself, ``±max`` in a saturating format, else NaN."""
    if info.has_infinity:
        return x
    return np.copysign(info.max, x) if info.saturates else np.nan * x


def _round_rational_in(num: int, den: int, info, mode: str, rng=None) -> float:
    """Round ``num/den`` (not zero) exactly to ``info`` in ``mode``: :func:`round_f64_in` on
    exact rationals (a stochastic draw of 53 bits, as there)."""
    e = _floor_log2(num, den)
    q = Fraction(2) ** int(_quantum_exp(e, e < info.emin, info))
    t = Fraction(num, den) / q
    lo, hi = math.floor(t), math.ceil(t)
    draw = mode == "stochastic" and Fraction(rng.random()) < t - lo
    r = int(_choose(mode, lo, hi, t, draw))
    away = hi if t > 0 else lo
    r = (away if _flush_tie(e < info.emin, lo, hi, t, mode, info) else r) * q
    big = abs(r) > info.max
    return float(_ends(0.0 if big else float(r), num < 0, big, info, mode))


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
    if type(v).__name__ == "Decimal" and v.is_finite() and abs(v.adjusted()) > 1000:
        # past every format's range either way (float64's is 10**-324 to 10**308): one ratio
        # there rounds as the Decimal does, without building 10**exponent (pass 20: a hang)
        sign = -1 if v.is_signed() else 1
        return (sign * 10**1001, 1) if v.adjusted() > 0 else (sign, 10**1001)
    if hasattr(v, "as_integer_ratio"):
        try:
            return v.as_integer_ratio()
        except (OverflowError, ValueError):
            try:
                return float(v)  # inf or nan
            except ValueError:  # Decimal("sNaN"): a signalling NaN
                return math.nan
    raise TypeError(f"cannot round {type(v).__name__} value {checks.shown(v)} to a binary format")


def round_exact_scalar(v, info, mode: str | None = None, rng=None) -> float:
    """One number (``Fraction``, ``Decimal``, an int of any size, a float) rounded exactly
    to ``info`` in ``mode`` (default: the format's own), as a Python float."""
    mode = mode or info.rounding
    r = _as_ratio(v)
    if isinstance(r, float):  # NaN or an infinity: as overflow where there is no infinity
        return float(_infinity(info, r)) if math.isinf(r) else r
    num, den = r
    if not info.signed and num <= 0:  # E8M0: no sign, no zero: a zero or negative is NaN
        return math.nan
    if num == 0:
        # keep the sign of a signed zero (-0.0, Decimal("-0")), integers and rationals give +0
        signed = isinstance(v, (float, np.floating)) or type(v).__name__ == "Decimal"
        out = math.copysign(0.0, float(v)) if signed else 0.0
        return out if info.has_negative_zero else 0.0
    if mode == "nearest_even" and info.has_infinity and info.subnormals:
        return round_rational(num, den, info.precision, info.emin, info.emax)
    return _round_rational_in(num, den, info, mode, rng)


def shortest_by_search(v: float, info) -> str:
    """The shortest decimal that reads back as ``v`` in ``info``'s format (NumPy's style)."""
    if v == 0 or not math.isfinite(v):
        return str(v)
    from decimal import Decimal

    bits = (info.precision, info.emin, info.emax)

    def back(d) -> float:  # (no subnormals: below 2**emin flushes, as as_format rounds)
        num, den = d.as_integer_ratio()
        if info.subnormals or num == 0:
            return round_rational(num, den, *bits)
        return _round_rational_in(num, den, info, "nearest_even")

    for digits in range(1, 18):
        near = Decimal(f"{v:.{digits - 1}e}")
        step = Decimal(f"1e{near.adjusted() - digits + 1}")
        # the nearest first; at a power of two (the gap below half the gap above) the one
        # above may read back where the nearest does not
        tried = (near, *sorted((near - step, near + step), key=lambda d: abs(d - Decimal(v))))
        hit = next((d for d in tried if back(d) == v), None)
        if hit is not None:
            text = f"{hit:.{digits - 1}e}"
            break
    mantissa, exponent = text.split("e")
    if 1e-4 <= abs(v) and int(exponent) < min(digits, 16):  # NumPy: no invented zeros
        positional = format(Decimal(text), "f")
        return positional if "." in positional else positional + ".0"
    mantissa = mantissa.rstrip("0").rstrip(".") if "." in mantissa else mantissa
    return f"{mantissa}e{int(exponent):+03d}"
