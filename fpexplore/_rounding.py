"""Low-level correct rounding: exact rationals and round-to-odd float64 helpers.

Everything here is exact. Two families of tools:

* ``round_rational`` / ``round_scaled_int`` round an exact rational (Python ints) to a
  format with round-to-nearest-even, gradual underflow and overflow to infinity. They are
  the slow, per-element path (fallbacks, final rounding of exact sums).
* ``odd_add64`` / ``odd_f64_to_f32`` implement *round to odd* on NumPy arrays. A value
  rounded to odd with at least p + 2 bits, then rounded to nearest-even with p bits, gives
  the correctly rounded p-bit result (Boldo & Melquiond, IEEE TC 2008). This is how the fast
  paths avoid double rounding.
"""

from __future__ import annotations

import math

import numpy as np

_F64 = np.dtype(np.float64)
_F32 = np.dtype(np.float32)


def round_rational(num: int, den: int, precision: int, emin: int, emax: int) -> float:
    """Round ``num/den`` to nearest-even in a binary format; return it as a Python float.

    ``den`` must be positive. The result is exactly representable in the format, so casting
    the returned float64 to the format's dtype is exact. Overflow gives ``±inf``. A zero
    ``num`` gives ``+0.0`` (callers decide the sign of exact zeros).
    """
    if den <= 0:
        raise ValueError("den must be positive")
    if num == 0:
        return 0.0
    negative = num < 0
    m = -num if negative else num
    # e = floor(log2(m / den))
    e = m.bit_length() - den.bit_length()
    if e >= 0:
        if m < (den << e):
            e -= 1
    elif (m << -e) < den:
        e -= 1
    if e > emax:
        return -math.inf if negative else math.inf
    q = max(e, emin) - (precision - 1)  # exponent of the quantum (ulp)
    # scaled = m / den / 2^q; integer part and remainder
    if q >= 0:
        d = den << q
        n = m
    else:
        d = den
        n = m << -q
    k, r = divmod(n, d)
    twice = 2 * r
    if twice > d or (twice == d and (k & 1)):
        k += 1
    if k.bit_length() - 1 + q > emax:  # rounded up past the largest finite value
        return -math.inf if negative else math.inf
    value = math.ldexp(float(k), q)  # k <= 2^precision <= 2^53: exact
    return -value if negative else value


def round_scaled_int(n: int, k: int, precision: int, emin: int, emax: int) -> float:
    """Round the exact value ``n * 2**k`` (Python int ``n``) to nearest-even; see round_rational."""
    if k >= 0:
        return round_rational(n << k, 1, precision, emin, emax)
    return round_rational(n, 1 << -k, precision, emin, emax)


def float_to_scaled_int(value: float, k: int) -> int:
    """Return the integer ``value / 2**k``; ``value`` must be a finite multiple of ``2**k``."""
    num, den = float(value).as_integer_ratio()  # den is a power of two
    shift = den.bit_length() - 1  # value = num * 2^-shift
    s = -shift - k
    if s >= 0:
        return num << s
    if num & ((1 << -s) - 1):
        raise ValueError(f"{value!r} is not a multiple of 2**{k}")
    return num >> -s


def two_sum(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Knuth's TwoSum: ``s = fl(a+b)`` and the exact error ``e = a + b - s`` (finite inputs)."""
    s = a + b
    bb = s - a
    e = (a - (s - bb)) + (b - bb)
    return s, e


def _nudge_to_odd(s: np.ndarray, e: np.ndarray, uint: type) -> np.ndarray:
    """Given s = RN(x) and the sign of the error e = x - s, return RO(x) (round to odd).

    Where e != 0 and the last significand bit of s is even, step one ulp from s toward x.
    In sign-magnitude bit patterns one ulp further from zero is ``+1`` and one ulp toward zero
    is ``-1``, also across binades and from infinity down to the largest finite value.
    s must not be zero where e != 0 (true for RN of a nonzero inexact value).
    """
    bits = s.view(uint)
    fix = (e != 0) & ((bits & 1) == 0)
    if not fix.any():
        return s
    away = np.signbit(s) == np.signbit(e)
    step = np.where(away, 1, -1).astype(np.int64) * fix
    return (bits + step.astype(uint)).view(s.dtype)  # unsigned wrap-around gives bits - 1


def odd_add64(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``RO(a + b)`` in float64 for finite arrays (the result may overflow to inf only if RN does).

    Non-finite results are left as RN gives them.
    """
    s, e = two_sum(a, b)
    e = np.where(np.isfinite(s), e, 0.0)
    return _nudge_to_odd(s, e, np.uint64)


def odd_f64_to_f32(x: np.ndarray) -> np.ndarray:
    """Round float64 values to float32 with round-to-odd (NaN and ±inf kept)."""
    x = np.asarray(x, dtype=_F64)
    with np.errstate(over="ignore", invalid="ignore"):
        s = x.astype(_F32)
        back = s.astype(_F64)
        # exact error; where RN overflowed to ±inf it is ∓inf, pointing back toward zero
        e = np.where(np.isfinite(x), x - back, 0.0)
    return _nudge_to_odd(s, e, np.uint32)
