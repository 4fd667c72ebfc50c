"""Shared numerics: the exact building blocks the layers above use, one definition each.

Internal (not in the package's ``__all__``) and low level: imports NumPy and math, nothing
of fpexplore. Everything here is exact or says precisely where it is not.

* Exact rationals: ``round_rational`` / ``round_scaled_int`` round an exact rational (Python
  ints) to a format with round-to-nearest-even, gradual underflow and overflow to infinity
  (the slow, per-element path: fallbacks, final rounding of exact sums);
  ``float_to_scaled_int``.
* Error-free transformations: ``two_sum`` (Knuth), ``fast_two_sum`` (Dekker), ``split``
  (Veltkamp) and ``two_product`` (Dekker), with ``two_product_safe`` telling where
  ``two_product`` is exact.
* Rounding to a precision: ``round_to_precision`` (one float64 value, any precision and
  exponent range).
* Round to odd: ``nudge_to_odd``, ``odd_add64`` and ``odd_f64_to_f32`` on NumPy arrays,
  ``nudge_to_odd_scalar`` and ``odd_add64_scalar`` on float64 scalars. A value rounded to
  odd with at least p + 2 bits, then rounded to nearest-even with p bits, gives the correctly
  rounded p-bit result (Boldo & Melquiond, IEEE TC 2008). This is how the fast paths avoid
  double rounding.
* ``flush_subnormals``: float32 flush-to-zero, as CUDA's ``-ftz=true`` and float32
  ``atomicAdd`` do it.
* ``clamp_ulps``: ULP distances (``ulp_distance(..., nan="sentinel")``) as float64, with the
  NaN sentinel and saturated distances turned into infinity.
* Double-double arithmetic: ``dd_add``, ``dd_mul`` and ``dd_exp`` (exp to about 2**-96
  relative, for the exact softmax and logsumexp).
* Ziv's decision step: ``ziv_decide`` (with ``ZIV_SLACK``, the error allowed to an mpmath
  evaluation at working precision P) and ``same_bits``.

The functions in ``JITTABLE`` are plain arithmetic on scalars (most on arrays too), so the
same source runs in Python and inside numba kernels: :mod:`fpexplore._numba` registers them
with numba instead of keeping compiled copies, and keys the kernels' on-disk cache on this
file's contents (numba's own cache checks only the kernel's file).
"""

from __future__ import annotations

import math
from decimal import ROUND_CEILING, Decimal

import numpy as np

_F64 = np.dtype(np.float64)
_F32 = np.dtype(np.float32)

# ----------------------------------------------------------------------------- exact rationals


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


# ----------------------------------------------------------------------------- error-free


def two_sum(a, b):
    """Knuth's TwoSum: ``s = fl(a+b)`` and the exact error ``e = a + b - s`` (finite inputs;
    floats or arrays)."""
    s = a + b
    bb = s - a
    e = (a - (s - bb)) + (b - bb)
    return s, e


def fast_two_sum(a, b):
    """Dekker's FastTwoSum: ``s = fl(a+b)`` and ``e = a + b - s`` exactly, provided
    ``|a| >= |b|`` (or ``a == 0``), finite inputs; floats or arrays."""
    s = a + b
    return s, b - (s - a)


_SPLITTER = float(2**27 + 1)  # Veltkamp's constant for float64: 53 = 26 + 27 bits


def split(a):
    """Veltkamp's split of a float64: ``a == hi + lo`` exactly, ``hi`` with at most 26
    significant bits and ``lo`` with at most 27 (for normal ``|a| < 2**995``; floats or
    arrays)."""
    t = _SPLITTER * a
    hi = t - (t - a)
    return hi, a - hi


def two_product(a, b):
    """Dekker's TwoProduct with Veltkamp splitting: ``p = fl(a*b)`` and ``e`` with
    ``p + e == a*b`` exactly, where ``two_product_safe(a, b)`` (floats or arrays)."""
    p = a * b
    ah, al = split(a)
    bh, bl = split(b)
    e = ((ah * bh - p) + ah * bl + al * bh) + al * bl
    return p, e


def two_product_safe(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Where :func:`two_product` is exact for float64 arrays ``a``, ``b``: both normal and
    below 2**995 (the splits are exact and cannot overflow) and the product's exponent in
    range (neither the product overflows nor its error term falls below 2**-1074)."""
    _, ea = np.frexp(a)
    _, eb = np.frexp(b)
    absa, absb = np.abs(a), np.abs(b)
    return (
        (absa >= 2.0**-1022)
        & (absb >= 2.0**-1022)
        & (absa < 2.0**995)
        & (absb < 2.0**995)
        & (ea + eb >= -968)
        & (ea + eb <= 1020)
    )


# ----------------------------------------------------------------------------- precision


def f64_bits(v):
    """The bit pattern of a float64 as a (signed) int64 (in numba kernels: a bitcast, see
    fpexplore._numba: this NumPy version is not what they compile)."""
    return int(np.array(v, dtype=np.float64).view(np.int64))


def f64_from_bits(b):
    """The float64 with bit pattern ``b`` (an int64; in numba kernels: a bitcast)."""
    return float(np.array(b, dtype=np.int64).view(np.float64))


_MAG = 0x7FFFFFFFFFFFFFFF


def round_scaled(a, q):
    """``a`` rounded to nearest-even at a multiple of ``2**q`` by scaling (libm): the rare
    path of :func:`round_to_precision`, kept out of its hot path."""
    return math.ldexp(np.rint(math.ldexp(a, -q)), q)


def round_to_precision(v, p, emin, vmax):
    """One float64 ``v`` rounded to nearest-even at precision ``p`` (bits, the implicit one
    included), minimum exponent ``emin`` (gradual underflow below 2**emin) and largest finite
    value ``vmax`` (beyond it: ``±inf``); ``p == 0`` leaves ``v`` unchanged. NaN, infinities
    and zeros come back as they are. A float64 scalar (numba kernels call it too).

    The exponent comes from the bits and the rounding from one float64 addition of a constant
    (no libm frexp/ldexp/rint, no branch on the data): it runs inside every emulated float16
    and bfloat16 operation."""
    if p == 0 or v == 0.0 or not math.isfinite(v):
        return v
    if p == 24 and emin == -126:
        return np.float64(np.float32(v))  # the IEEE conversion rounds to nearest-even
    b = f64_bits(v)
    e = ((b & _MAG) >> 52) - 1023  # 2**e <= |v| < 2**(e + 1)
    q = max(e, emin) - p + 1  # exponent of the quantum (ulp) at v
    if p > 51 or e == -1023 or q < -1022 or q > 970:  # float64's extremes: libm, rarely
        r = round_scaled(abs(v), q)
    else:
        # |v| < 2**(q + p) <= 2**(q + 51), so |v| + C with C = 1.5 * 2**(q + 52) lies in
        # [2**(q + 52), 2**(q + 53)), where the ulp is 2**q: one rounding, to a multiple of
        # 2**q, ties to even (C / 2**q is even); subtracting C is exact. No data branch.
        c = f64_from_bits(((q + 1075) << 52) | (1 << 51))
        r = (abs(v) + c) - c
    if r > vmax:
        r = math.inf
    return -r if b < 0 else r


# ----------------------------------------------------------------------------- round to odd


def nudge_to_odd(s: np.ndarray, e: np.ndarray, uint: type) -> np.ndarray:
    """Given s = RN(x) and the sign of the error e = x - s, return RO(x) (round to odd).

    Where e != 0 and the last significand bit of s is even, step one ulp from s toward x.
    In sign-magnitude bit patterns one ulp further from zero is ``+1`` and one ulp toward zero
    is ``-1``, also across binades and from infinity down to the largest finite value.
    s must not be zero where e != 0 (true for RN of a nonzero inexact value). Arrays; ``uint``
    is the unsigned integer type of s's width.
    """
    bits = s.view(uint)
    fix = (e != 0) & ((bits & 1) == 0)
    if not fix.any():
        return s
    away = np.signbit(s) == np.signbit(e)
    step = np.where(away, 1, -1).astype(np.int64) * fix
    return (bits + step.astype(uint)).view(s.dtype)  # unsigned wrap-around gives bits - 1


def nudge_to_odd_scalar(s, e):
    """:func:`nudge_to_odd` for one float64: RO(x) from s = RN(x) and the sign of e = x - s
    (s finite and nonzero where e != 0; a non-finite s is returned as it is)."""
    if e != 0.0 and math.isfinite(s):
        _, ex = math.frexp(s)
        quantum = math.ldexp(1.0, max(ex - 53, -1074))  # ulp(s): s / quantum is an integer
        if np.int64(abs(s / quantum)) % 2 == 0:  # even last bit: step toward the exact value
            s = np.nextafter(s, math.copysign(math.inf, e))
    return s


def odd_add64_scalar(a, b):
    """:func:`odd_add64` for two finite float64 scalars: ``RO(a + b)``."""
    s, e = two_sum(a, b)
    return nudge_to_odd_scalar(s, e)


def odd_add64(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``RO(a + b)`` in float64 for finite arrays (the result may overflow to inf only if RN does).

    Non-finite results are left as RN gives them.
    """
    s, e = two_sum(a, b)
    e = np.where(np.isfinite(s), e, 0.0)
    return nudge_to_odd(s, e, np.uint64)


def odd_f64_to_f32(x: np.ndarray) -> np.ndarray:
    """Round float64 values to float32 with round-to-odd (NaN and ±inf kept)."""
    x = np.asarray(x, dtype=_F64)
    with np.errstate(over="ignore", invalid="ignore"):
        s = x.astype(_F32)
        back = s.astype(_F64)
        # exact error; where RN overflowed to ±inf it is ∓inf, pointing back toward zero
        e = np.where(np.isfinite(x), x - back, 0.0)
    return nudge_to_odd(s, e, np.uint32)


# ----------------------------------------------------------------------------- flush to zero

FLOAT32_MIN_NORMAL = 2.0**-126


def flush_subnormals(x):
    """float32 flush-to-zero (CUDA ``-ftz=true``, float32 ``atomicAdd``): subnormals become
    zeros of the same sign; normal numbers, zeros, infinities and NaN stay (a signaling NaN
    comes back quiet, as from any arithmetic). For float32 values only: a float32 scalar (also
    inside numba kernels) or array (a new one)."""
    return x * (abs(x) >= FLOAT32_MIN_NORMAL)  # x * 1 or x * 0 (a zero of x's sign)


# ----------------------------------------------------------------------------- ULP distances


def clamp_ulps(ulps, *, signed: bool = False, fill: float = math.inf) -> np.ndarray:
    """ULP distances from ``ulp_distance(..., nan="sentinel")`` as a float64 array: their
    magnitudes (``signed=True``: with their signs), where every distance of 2**62 or more
    becomes ``fill``: the NaN sentinel ``ULP_NAN`` and the distances saturated at
    ``±(2**63 - 1)``, which are no counts of ulps."""
    u = np.asarray(ulps, dtype=np.float64)
    if not signed:
        u = np.abs(u)
    return np.where(np.abs(u) >= 2**62, fill, u)


# ----------------------------------------------------------------------------- Ziv's step

#: Ziv's loops assume an mpmath evaluation at working precision P has a relative error below
#: 2**-(P - ZIV_SLACK).
ZIV_SLACK = 12


def same_bits(a: float, b: float) -> bool:
    """a and b are Python floats holding values of one format: equal including the sign."""
    return a == b and math.copysign(1.0, a) == math.copysign(1.0, b)


def ziv_decide(v, err_exp: int, precision: int, emin: int, emax: int):
    """One step of Ziv's loop: round both ends of ``v ± 2**err_exp`` (``v`` an mpmath mpf
    tuple ``(sign, man, exp, bc)``) to nearest-even in the format (precision, emin, emax);
    the common result as a Python float, or None if they differ (or the sign is not yet
    known)."""
    sign, man, e, bc = v
    if not man:
        return None
    low = e + bc - 1  # 2**low <= |v| < 2**(low + 1)
    if err_exp >= low - 1:
        return None  # interval too wide: |v| - 2**err_exp >= 2**(low - 1) > 0 below
    neg = -1.0 if sign else 1.0
    p = precision
    if low - 1 >= emax + 1:  # every point of the interval is >= 2**(emax+1): overflow
        return neg * math.inf
    if low + 2 <= emin - p:  # every point is < 2**(low+2) <= 2**(emin-p): rounds to zero
        return neg * 0.0
    k = min(e, err_exp)
    mid = man << (e - k)
    d = 1 << (err_exp - k)
    a = round_scaled_int(-(mid + d) if sign else mid - d, k, p, emin, emax)
    b = round_scaled_int(-(mid - d) if sign else mid + d, k, p, emin, emax)
    if same_bits(a, b):
        return a
    return None


#: The functions above that numba kernels call (registered with numba by
#: fpexplore.orders._kernels; each calls only NumPy, math and the others listed).
# ----------------------------------------------------------------------------- double-double exp

_DD_CONSTANTS: tuple = ()


def dd_constants() -> tuple:
    """ln 2 as C1 + C2 + C3 (C1, C2 with 40 bits, so k*C1 and k*C2 are exact for |k| < 2**13)
    and 1/i! (i = 0..24) as double-doubles, all from exact rationals (ln 2 from its series
    sum 1/(k 2**k), to within 2**-440)."""
    global _DD_CONSTANTS
    if not _DD_CONSTANTS:
        from fractions import Fraction

        # 460 terms, each floored at 2**-480: error < 460 * 2**-480 + 2**-460 < 2**-440
        ln2 = Fraction(sum((1 << (480 - k)) // k for k in range(1, 461)), 1 << 480)
        parts = []
        rest = ln2
        for bits in (40, 40, 53):
            c = round_rational(rest.numerator, rest.denominator, bits, -1022, 1023)
            parts.append(c)
            rest -= Fraction(c)
        inv = []
        for i in range(25):
            f = Fraction(1, math.factorial(i))
            hi = round_rational(f.numerator, f.denominator, 53, -1022, 1023)
            r = f - Fraction(hi)
            lo = round_rational(r.numerator, r.denominator, 53, -1022, 1023) if r else 0.0
            inv.append((hi, lo))
        _DD_CONSTANTS = (tuple(parts), tuple(inv))
    return _DD_CONSTANTS


def dd_add(ah, al, bh, bl):
    """(ah + al) + (bh + bl) as a double-double (hi, lo)."""
    s, e = two_sum(ah, bh)
    t, f = two_sum(al, bl)
    s, e = fast_two_sum(s, e + t)
    return fast_two_sum(s, e + f)


def dd_mul(ah, al, bh, bl):
    """(ah + al) * (bh + bl) as a double-double (hi, lo)."""
    p, e = two_product(ah, bh)
    return fast_two_sum(p, e + (ah * bl + al * bh))


def dd_exp(dh: np.ndarray, dl: np.ndarray):
    """exp(dh + dl) = (th + tl) * 2**k for -700 <= dh <= 0 (|dl| <= ulp(dh)).

    Cody-Waite reduction with a three-part ln 2 (dh - k*C1 is exact by Sterbenz, k*C1 and
    k*C2 are exact, the rest is double-double), then a degree-24 Taylor polynomial in
    double-double Horner form on |r| <= 0.3466 + 2**-40 (truncation < 2**-120). The relative
    error is below 2**-96 by the usual double-double bounds; callers assume
    :data:`DD_EXP_REL` (2**-90).
    """
    (c1, c2, c3), inv = dd_constants()
    k = np.rint(dh * (1.0 / math.log(2.0)))
    rh = dh - k * c1  # exact
    rh, rl = two_sum(rh, -(k * c2))  # k*c2 exact
    p3h, p3l = two_product(k, c3)
    rh, rl = dd_add(rh, rl, -p3h, -p3l)
    rh, rl = dd_add(rh, rl, dl, np.zeros_like(dl))
    ph = np.full(dh.shape, inv[24][0])
    pl = np.full(dh.shape, inv[24][1])
    for i in range(23, -1, -1):
        ph, pl = dd_mul(ph, pl, rh, rl)
        ph, pl = dd_add(ph, pl, inv[i][0], inv[i][1])
    return ph, pl, k.astype(np.int64)


DD_EXP_REL = 2.0**-90  # the relative error dd_exp's callers assume
DD_EXP_MIN = -700.0  # dd_exp is used for dh >= DD_EXP_MIN (2**k stays in the normal range)


JITTABLE = (
    round_scaled,
    two_sum,
    fast_two_sum,
    split,
    two_product,
    round_to_precision,
    nudge_to_odd_scalar,
    odd_add64_scalar,
    flush_subnormals,
)


def printed(x: float, digits: int = 3) -> float:
    """``x`` (>= 0) as the snippets print it: ``digits`` significant digits, never below it
    (``:.3g`` where that reads back >= ``x``: 1e-05, 0.5, 0; else rounded up: 0.000732421875
    prints as 0.000733, not 0.000732, a tolerance tighter than the one computed)."""
    text = f"{x:.{digits}g}"
    if x == 0 or not math.isfinite(x) or float(text) >= x:
        return float(text)
    exact = Decimal(x)
    step = Decimal(1).scaleb(exact.adjusted() - digits + 1)
    text = f"{float(exact.quantize(step, rounding=ROUND_CEILING)):.{digits}g}"
    return float(text) if float(text) >= x else x
