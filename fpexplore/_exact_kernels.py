"""numba kernels of :mod:`fpexplore.exact`. Private; imports numba, so fpexplore.exact loads it
on the first call that needs a kernel.

* ``fma_rn``: ``llvm.fma`` elementwise (float32, float64): one rounding, IEEE specials.
* ``fma_odd``: float16/bfloat16 values held in float32: the product is exact in float64 and
  the sum is rounded to odd in float64 (53 >= p + 2 bits); the caller rounds once to the
  format (Boldo & Melquiond 2008).
* ``sum_bins``, ``sum_bins64``, ``dot_bins32``, ``dot_bins64``: exact sums in integer bins, one
  bin per sign and binary exponent (a small superaccumulator in the sense of Neal 2015, "Fast
  exact summation using small and large superaccumulators"). A finite value with sign bit S,
  biased exponent field E and significand m (the implicit bit included) is exactly
  ``(-1)**S * m * 2**(max(E, 1) - bias - fraction_bits)``: it adds m to the int64 bin of
  (S, E), whose index is the value's bits above the fraction. Formats of at most 24 bits add
  m (< 2**24) whole: 2**39 terms fit in a bin. float64 values add ``m >> 26`` (< 2**27) to a
  high bin and ``m & (2**26 - 1)`` to a low bin: 2**36 terms fit (callers pass at most 2**32
  per call). Each bin array has ``ROWS`` rows and consecutive terms go to different rows, so
  that terms of one exponent do not wait on each other's memory update. The caller combines
  the few nonzero bins exactly and rounds once.

Values with the exponent field all ones (NaN, infinities) are counted, and their bins are
ignored: a kernel returns that count and the caller applies IEEE rules. Products:
``dot_bins32`` multiplies float32 values (or narrower, widened exactly) in float64, exactly;
``dot_bins64`` splits float64 products with an fma (TwoProduct: ``p = a*b``,
``e = fma(a, b, -p)``), exact where both significands' quanta multiply to at least 2**-1074
and p is finite; other products (tiny, huge or overflowing) are brought into range with
frexp, split the same way, and go to the wide bins ``whi``/``wlo`` indexed by the exponent
of their unit plus ``WIDE_OFFSET``.
"""

from __future__ import annotations

import math

import numpy as np

from ._numba import cached_njit, float_bits, hw_fma
from .numerics import odd_add64_scalar

ROWS = 4  # interleaved copies of every bin array
WIDE_OFFSET = 2400  # wide bin index = exponent of the unit + WIDE_OFFSET
WIDE_BINS = 4480  # units from 2**-2400 up (products down to 2**-2148, up to 2**2048)
LOW_BITS = 26  # float64 significands: m >> 26 to the high bin, m & (2**26 - 1) to the low
F64_UNIT = 1075  # a float64 with exponent field E has unit 2**(max(E, 1) - F64_UNIT)


def _jit(func):
    return cached_njit(func, nogil=True)


def _inline(func):
    """A helper compiled into each caller (numba inlines it before LLVM sees the loop)."""
    return cached_njit(func, nogil=True, inline="always")


@_jit
def fma_rn(a, b, c, out):
    """out[i] = fma(a[i], b[i], c[i]) rounded once in the arrays' type (float32 or float64)."""
    for i in range(out.shape[0]):
        out[i] = hw_fma(a[i], b[i], c[i])


@_jit
def fma_odd(a, b, c, out):
    """out[i] = RO64(a[i]*b[i] + c[i]) for float32 arrays of values with at most 24 bits and
    products exact in float64 (float16, bfloat16 values)."""
    for i in range(out.shape[0]):
        p = np.float64(a[i]) * np.float64(b[i])
        out[i] = odd_add64_scalar(p, np.float64(c[i]))


@_inline
def _put(v, fbits, ebits, bins, r):
    """Add the value with bit pattern v (int64; fbits fraction, ebits exponent bits) to
    ``bins[r, sign and exponent field]``; True if it is NaN or infinite (its bin is unused)."""
    emask = (np.int64(1) << ebits) - 1
    s = (v >> fbits) & ((emask << 1) | 1)  # the sign bit above the exponent field
    e = s & emask
    bins[r, s] += (v & ((np.int64(1) << fbits) - 1)) | (np.int64(e != 0) << fbits)
    return e == emask


@_jit
def sum_bins(w, fbits, ebits, bins):
    """Add the values whose bit patterns are ``w`` (int16, int32) to ``bins[i % ROWS, s] +=
    m``, s the sign and exponent bits; ``fbits`` fraction, ``ebits`` exponent bits. Returns how
    many values are NaN or infinite (not summed)."""
    special = 0
    n = w.shape[0]
    n4 = n - n % 4
    for i in range(0, n4, 4):  # the rows as constants
        special += _put(np.int64(w[i]), fbits, ebits, bins, 0)
        special += _put(np.int64(w[i + 1]), fbits, ebits, bins, 1)
        special += _put(np.int64(w[i + 2]), fbits, ebits, bins, 2)
        special += _put(np.int64(w[i + 3]), fbits, ebits, bins, 3)
    for i in range(n4, n):
        special += _put(np.int64(w[i]), fbits, ebits, bins, 0)
    return special


@_inline
def _add64(v, hi, lo, r):
    """Add the float64 with bit pattern v (int64) to row r of the high and low bins, at its
    sign and exponent bits; True if it is NaN or infinite (its bins are unused)."""
    s = (v >> 52) & 0xFFF
    e = s & 0x7FF
    m = (v & 0xFFFFFFFFFFFFF) | (np.int64(e != 0) << 52)
    hi[r, s] += m >> LOW_BITS
    lo[r, s] += m & ((1 << LOW_BITS) - 1)
    return e == 0x7FF


@_jit
def sum_bins64(w, hi, lo):
    """Add float64 values (bit patterns ``w``, int64) to the high and low bins; returns how
    many are NaN or infinite."""
    special = 0
    n = w.shape[0]
    n4 = n - n % 4
    for i in range(0, n4, 4):
        special += _add64(w[i], hi, lo, 0)
        special += _add64(w[i + 1], hi, lo, 1)
        special += _add64(w[i + 2], hi, lo, 2)
        special += _add64(w[i + 3], hi, lo, 3)
    for i in range(n4, n):
        special += _add64(w[i], hi, lo, 0)
    return special


@_jit
def dot_bins32(a, b, hi, lo):
    """Add the exact float64 products of float32 arrays a, b to the high and low bins; returns
    how many products are NaN or infinite (an input NaN or infinite)."""
    special = 0
    n = a.shape[0]
    n2 = n - n % 2
    for i in range(0, n2, 2):
        p = np.float64(a[i]) * np.float64(b[i])
        q = np.float64(a[i + 1]) * np.float64(b[i + 1])
        special += _add64(float_bits(p), hi, lo, 0)
        special += _add64(float_bits(q), hi, lo, 1)
    for i in range(n2, n):
        special += _add64(float_bits(np.float64(a[i]) * np.float64(b[i])), hi, lo, 0)
    return special


@_inline
def _add_wide(x, shift, whi, wlo):
    """Add the normal float64 ``x * 2**shift`` to the wide bins."""
    m, e = math.frexp(x)  # x = m * 2**e, 0.5 <= |m| < 1
    k = np.int64(m * 9007199254740992.0)  # m * 2**53: an integer (x has 53 bits)
    u = e - 53 + shift + WIDE_OFFSET
    whi[u] += k >> LOW_BITS
    wlo[u] += k & ((1 << LOW_BITS) - 1)


@_jit
def dot_bins64(a, b, hi, lo, whi, wlo):
    """Add the exact products of float64 arrays a, b: TwoProduct with an fma into the high
    and low bins where it is exact, the other finite products rescaled into the wide bins.
    Returns how many pairs hold a NaN or an infinity (their products are not summed)."""
    special = 0
    for i in range(a.shape[0]):
        x = a[i]
        y = b[i]
        ex = (float_bits(x) >> 52) & 0x7FF
        ey = (float_bits(y) >> 52) & 0x7FF
        p = x * y
        # x*y is a multiple of 2**(max(ex,1) + max(ey,1) - 2150): with that >= 2**-1074 and
        # p finite, the error x*y - p is a float64 (and the fma gives it exactly)
        if max(ex, 1) + max(ey, 1) >= 1076 and (float_bits(p) >> 52) & 0x7FF != 0x7FF:
            r = i & 1
            _add64(float_bits(p), hi, lo, r)
            _add64(float_bits(hw_fma(x, y, -p)), hi, lo, r + 2)
        elif ex == 0x7FF or ey == 0x7FF:
            special += 1
        elif x != 0.0 and y != 0.0:
            mx, sx = math.frexp(x)
            my, sy = math.frexp(y)
            q = mx * my  # 0.25 <= |q| < 1: the split below is exact
            _add_wide(q, sx + sy, whi, wlo)
            e = hw_fma(mx, my, -q)
            if e != 0.0:
                _add_wide(e, sx + sy, whi, wlo)
    return special
