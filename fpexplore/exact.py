"""Correctly rounded references: ``fma``, ``exact_sum``, ``exact_dot``.

Each result is the exact real value of the operation on the given inputs, rounded once to
nearest-even in the inputs' format, with IEEE 754 behaviour for NaN, infinities, signed zeros,
subnormals and overflow. They are the fast twins of the slow rational oracles in the tests.

How they stay exact (compiled kernels, :mod:`fpexplore._exact_kernels`):

* ``fma``, float32/float64: LLVM's ``llvm.fma``, the CPU's fused multiply-add (or libm's
  correctly rounded ``fma``). float16/bfloat16: the product is exact in float64; the addition
  is rounded to odd in float64, then rounded once to the format. Round to odd at 53 >= p + 2
  bits followed by round to nearest is a single correct rounding (Boldo & Melquiond 2008).
* ``exact_sum`` / ``exact_dot``: every value adds its integer significand to an int64 bin of
  its sign and exponent (float64: its high and low halves to two bins), without any rounding;
  the few nonzero bins are combined as Python integers and rounded once. float64 products are
  split exactly with an fma (TwoProduct), products out of its range rescaled first. Large
  arrays are cut into parts summed on several threads (:func:`threads_for`), each into its
  own bins; the parts' bins are combined exactly, so the thread count never shows.

The pure NumPy paths stay as the fallback (``NUMPY_ONLY``, environment ``FPX_EXACT_NUMPY=1``):

* ``fma``, float16/bfloat16/float32: as above, vectorized (TwoSum + a one-ulp nudge).
  float64: Dekker's TwoProduct, TwoSum and a round-to-odd addition (same paper, algorithm
  "Emulated FMA"); elements outside its safe exponent range (huge or tiny products, results
  near underflow or overflow) fall back to exact rationals, one by one.
* ``exact_sum`` / ``exact_dot``: values are bucketed by binary exponent; inside a bucket all
  values are integer multiples of one quantum and short enough that float64 sums them without
  error (``np.bincount``); the few bucket totals are combined as Python integers and rounded
  once. float64 values are first split into high and low halves (26 + 27 bits); float64
  products are split exactly with TwoProduct.
"""

from __future__ import annotations

import os
import threading
from fractions import Fraction
from typing import TYPE_CHECKING

import numpy as np

from . import checks
from .formats import FormatInfo, coerce, format_info, round_f64, scalar_out
from .held import as_held, held
from .numerics import (
    float_to_scaled_int,
    odd_add64,
    round_rational,
    round_scaled_int,
    two_product,
    two_product_safe,
    two_sum,
)

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

__all__ = ["NUMPY_ONLY", "exact_dot", "exact_sum", "fma"]

_F64_INFO = format_info("float64")

#: True: the pure NumPy paths (no numba). From the environment variable ``FPX_EXACT_NUMPY``
#: ("1": NumPy only); tests switch it to check both paths.
NUMPY_ONLY = os.environ.get("FPX_EXACT_NUMPY", "0") not in ("", "0")


def _kernels():
    """The compiled kernels (imports numba on first use)."""
    from . import _exact_kernels

    return _exact_kernels


def _fma_rational(a: float, b: float, c: float, info: FormatInfo) -> float:
    q = Fraction(a) * Fraction(b) + Fraction(c)
    return round_rational(q.numerator, q.denominator, info.precision, info.emin, info.emax)


def fma(a: ArrayLike, b: ArrayLike, c: ArrayLike) -> np.ndarray | np.generic:
    """Fused multiply-add ``a*b + c`` with a single rounding, elementwise with broadcasting.

    Exact, including NaN/inf rules (``fma(inf, 0, c)`` is NaN, a finite product plus
    ``±inf`` is ``±inf`` even if the product would overflow), signed zeros and gradual
    underflow.

    Parameters
    ----------
    a, b, c : array_like
        One shared format of ``FORMATS``; Python scalars adopt it when exactly representable.

    Returns
    -------
    numpy.ndarray or numpy.generic
        The result in the inputs' format; 0-d inputs give a NumPy scalar.

    Raises
    ------
    TypeError
        Mixed formats, or a Python value not exactly representable in the inputs' format.
    ValueError
        Shapes that do not broadcast together.

    Examples
    --------
    >>> fpx.fma(np.float32(0.1), np.float32(10), np.float32(-1))
    np.float32(1.4901161e-08)
    """
    (a, b, c), info = coerce(a, b, c, what="fma", broadcast=True, names=("a", "b", "c"))
    with np.errstate(all="ignore"):
        if not NUMPY_ONLY:
            out = _fma_compiled(a, b, c, info)
        elif info.name != "float64":
            out = _fma_narrow(a, b, c, info)
        else:
            a, b, c = np.broadcast_arrays(a, b, c)
            out = np.empty(a.shape)
            flat = out.reshape(-1)  # a view: filling it fills out
            A, B, C = (v.reshape(-1) for v in (a, b, c))
            for i in range(0, A.size, _BLOCK):  # blocks keep the temporaries in cache
                j = i + _BLOCK
                flat[i:j] = _fma64(A[i:j], B[i:j], C[i:j])
    return scalar_out(out)


_BLOCK = 1 << 15  # elements per cache-sized block in the vectorized fast paths


def _fma_compiled(a: np.ndarray, b: np.ndarray, c: np.ndarray, info: FormatInfo) -> np.ndarray:
    """fma with the compiled kernels: llvm.fma for float32 and float64; float16 and bfloat16
    through an exact float64 product, a round-to-odd float64 addition and one rounding."""
    shape = np.broadcast_shapes(a.shape, b.shape, c.shape)
    k = _kernels()
    if info.name in ("float32", "float64"):
        A, B, C = (_flat(v, shape) for v in (a, b, c))
        out = np.empty(A.size, dtype=info.dtype)
        k.fma_rn(A, B, C, out)
        return out.reshape(shape)
    A, B, C = (_flat(v, shape, np.float32) for v in (a, b, c))
    odd = np.empty(A.size)
    k.fma_odd(A, B, C, odd)
    return round_f64(odd, info).reshape(shape)


def _flat(v: np.ndarray, shape: tuple, dtype=None) -> np.ndarray:
    """``v`` broadcast to ``shape``, as a flat C-contiguous array the kernels can take (a
    copy where it is broadcast: a broadcast view warns when numba reads its flags)."""
    if v.shape != shape:
        v = np.array(np.broadcast_to(v, shape), dtype=dtype, order="C")
    return np.ascontiguousarray(v, dtype=dtype).reshape(-1)


def _fma_narrow(a: np.ndarray, b: np.ndarray, c: np.ndarray, info: FormatInfo) -> np.ndarray:
    """fma for formats of at most 24 bits: the product is exact in float64 (and cannot overflow).

    ``s = RN64(a*b + c)`` is rounded once more to the format. That double rounding can only
    go wrong where ``s`` is exactly a midpoint between two neighbours in the format (every
    midpoint is a float64 number, so RN64 keeps all values on their side of it) or where the
    result is subnormal in the format (checked conservatively). Only those few elements are
    recomputed with a round-to-odd addition, which is exact.
    """
    a, b, c = np.broadcast_arrays(a, b, c)
    shape = a.shape
    a, b, c = (v.reshape(-1) for v in (a, b, c))
    out = np.empty(a.size, dtype=info.dtype)
    low = np.uint64((1 << (53 - info.precision)) - 1)  # bits of s below the format's precision
    half = np.uint64(1 << (52 - info.precision))
    # work block by block so that the float64 temporaries stay in cache
    s = np.empty(min(_BLOCK, a.size))
    work = np.empty_like(s)
    for i in range(0, a.size, _BLOCK):
        j = min(i + _BLOCK, a.size)
        n = j - i
        sv, wv = s[:n], work[:n]
        sv[...] = c[i:j]
        wv[...] = a[i:j]
        wv *= b[i:j].astype(np.float64)  # the exact product
        sv += wv  # RN64(a*b + c)
        out[i:j] = round_f64(sv, info)
        bits = wv.view(np.uint64)
        np.bitwise_and(sv.view(np.uint64), low, out=bits)
        suspect = bits == half
        np.abs(sv, out=wv)
        suspect |= wv < info.smallest_normal
        if suspect.any():
            idx = np.flatnonzero(suspect) + i
            aa, bb, cc = (v[idx].astype(np.float64) for v in (a, b, c))
            out[idx] = round_f64(odd_add64(aa * bb, cc), info)
    return out.reshape(shape)


def _fma64(A: np.ndarray, B: np.ndarray, C: np.ndarray) -> np.ndarray:
    finite = np.isfinite(A) & np.isfinite(B) & np.isfinite(C)
    # special values (and exactly zero products) follow plain IEEE arithmetic, except that a
    # finite product (even one that overflows float64) plus an infinite c is that infinity.
    naive = np.where(np.isinf(C) & np.isfinite(A) & np.isfinite(B), C, A * B + C)
    _, ec = np.frexp(C)
    fast = finite & two_product_safe(A, B) & (ec <= 1020)
    ph, pl = two_product(A, B)
    th, tl = two_sum(C, ph)
    v = odd_add64(pl, tl)
    r = th + v
    # results near underflow or overflow are left to the exact path
    ath = np.abs(th)
    fast &= (ath == 0) | ((ath >= 2.0**-968) & (ath < 2.0**1020))
    zero_product = finite & ((A == 0) | (B == 0))
    out = np.where(fast, r, naive)
    slow = finite & ~fast & ~zero_product
    if slow.any():
        idx = np.nonzero(slow)
        vals = [
            _fma_rational(x, y, z, _F64_INFO)
            for x, y, z in zip(A[idx].tolist(), B[idx].tolist(), C[idx].tolist())
        ]
        out[idx] = vals
    return out


# ----------------------------------------------------------------------------- exact sums


class ExactAccumulator:
    """Exact running sum of finite floats, fed block by block; ``total()`` gives ``(N, K)``
    meaning ``N * 2**K`` exactly.

    Values are bucketed by their biased exponent E. float32 values (``add32``) in bucket E are
    multiples of 2**(max(E,1) - 150) below 2**(E - 126), so 2**29 of them sum exactly in
    float64. float64 values (``add64``) are split into their top 26 significand bits (hi) and
    the rest (lo): hi parts are multiples of 2**(max(E,1) - 1048) below 2**(E - 1022), lo
    parts multiples of 2**(max(E,1) - 1075) below 2**(max(E,1) - 1048), so 2**26 of either
    sum exactly. float64 values of magnitude >= 2**960 are scaled by 2**-256 (exactly) into a
    second accumulator so that no bucket sum can overflow. ``np.bincount`` does the bucket
    sums; the few nonzero bucket totals are combined as Python integers.
    """

    _HI_MASK = np.uint64(~((1 << 27) - 1) & 0xFFFFFFFFFFFFFFFF)

    def __init__(self, shift: int = 0):
        self.shift = shift
        self.terms: list[tuple[int, int]] = []
        self.count32 = self.count64 = 0
        self.sums32 = np.zeros(256)
        self.hi = np.zeros(2048)
        self.lo = np.zeros(2048)
        self.big: ExactAccumulator | None = None

    def add32(self, x32: np.ndarray) -> None:
        if self.count32 + x32.size > 1 << 29:
            self._flush()
        self.count32 += x32.size
        e = ((x32.view(np.uint32) >> np.uint32(23)) & np.uint32(0xFF)).astype(np.intp)
        # (bincount is several times faster with intp keys and float64 weights given to it)
        self.sums32 += np.bincount(e, weights=x32.astype(np.float64), minlength=256)

    def add64(self, x64: np.ndarray) -> None:
        big = np.abs(x64) >= 2.0**960
        if big.any():
            if self.big is None:
                self.big = ExactAccumulator(self.shift + 256)
            self.big.add64(x64[big] * 2.0**-256)
            x64 = x64[~big]
        if self.count64 + x64.size > 1 << 26:
            self._flush()
        self.count64 += x64.size
        bits = x64.view(np.uint64)
        e = ((bits >> np.uint64(52)) & np.uint64(0x7FF)).astype(np.intp)
        hi = (bits & self._HI_MASK).view(np.float64)
        self.hi += np.bincount(e, weights=hi, minlength=2048)
        self.lo += np.bincount(e, weights=x64 - hi, minlength=2048)

    def _flush(self) -> None:
        for sums, offset in ((self.sums32, 150), (self.hi, 1048), (self.lo, 1075)):
            for E in np.flatnonzero(sums).tolist():
                k = max(E, 1) - offset
                self.terms.append((float_to_scaled_int(sums[E], k), k + self.shift))
            sums[:] = 0.0
        self.count32 = self.count64 = 0

    def total(self) -> tuple[int, int]:
        return _combine(self._all_terms())

    def _all_terms(self) -> list[tuple[int, int]]:
        self._flush()
        return self.terms + (self.big._all_terms() if self.big is not None else [])


def _blocks(n: int):
    """Slices of at most _BLOCK elements covering range(n)."""
    return (slice(i, min(i + _BLOCK, n)) for i in range(0, n, _BLOCK))


def _combine(terms: list[tuple[int, int]]) -> tuple[int, int]:
    """Sum ``n * 2**k`` terms exactly into one ``(N, K)``."""
    if not terms:
        return 0, 0
    K = min(k for _, k in terms)
    return sum(n << (k - K) for n, k in terms), K


def _specials(values: np.ndarray):
    """IEEE result of a sum containing NaN or infinities, or None if all are finite."""
    if np.isfinite(values).all():
        return None
    if np.isnan(values).any():
        return np.nan
    pos = np.isposinf(values).any()
    neg = np.isneginf(values).any()
    if pos and neg:
        return np.nan
    return np.inf if pos else -np.inf


def _finish(N: int, K: int, info: FormatInfo, all_negative_zero: bool, to: str | None = None):
    """N * 2**K rounded once to ``info``'s format, or to the held format ``to`` (its overflow
    its own), in its ml_dtypes type."""
    if N == 0:
        value = -0.0 if all_negative_zero else 0.0
    elif to is not None:
        value = Fraction(N) * Fraction(2) ** K
    else:
        value = round_scaled_int(N, K, info.precision, info.emin, info.emax)
    if to is not None:
        return as_held(value, to)
    return np.asarray(value, dtype=np.float64).astype(info.dtype)[()]


def _special(value, info: FormatInfo, to: str | None):
    """A NaN or infinite result in x's format (or the held format ``to``'s type)."""
    return as_held(value, to) if to else np.asarray(value).astype(info.dtype)[()]


def exact_sum(x: ArrayLike) -> np.generic:
    """Correctly rounded sum of all elements of ``x``, in x's format.

    Exact for any size and dynamic range (no intermediate rounding at all). IEEE rules: any
    NaN or ``+inf`` with ``-inf`` gives NaN; infinities of one sign give that infinity; an
    exact zero is ``-0.0`` only if every element is ``-0.0`` (and there is at least one),
    otherwise ``+0.0``; the empty sum is ``+0.0``. Overflow gives ``±inf``.

    Parameters
    ----------
    x : array_like
        Any shape, one of ``FORMATS``.

    Returns
    -------
    numpy.generic
        A scalar of x's format.

    Raises
    ------
    TypeError
        An input of no format of ``FORMATS``.

    Examples
    --------
    >>> fpx.exact_sum(np.array([1e8, 1.0, -1e8], dtype=np.float32))
    np.float32(1.0)
    """
    to = None
    if (h := held((x,), "exact_sum")) is not None:  # FP8, FP6, FP4: rounded once to theirs
        (x,), to = h
    return exact_sum_to(x, to)


def exact_sum_to(x, to: str | None = None) -> np.generic:
    """:func:`exact_sum`, the exact value rounded once to the format ``to`` of ml_dtypes'
    small types or of ``fpx.format`` (its values given in float32 or float64), or where None
    to x's."""
    (x,), info = coerce(x, what="exact_sum")
    x = np.ascontiguousarray(x).reshape(-1)
    total = None if NUMPY_ONLY else _sum_compiled(x, info)
    if total is None:  # NumPy only, or x holds NaN or infinities
        special = _specials(x)
        if special is not None:
            return _special(special, info, to)
        acc = ExactAccumulator()
        for blk in _blocks(x.size):
            if info.name == "float64":
                acc.add64(x[blk])
            else:  # float16 and bfloat16 values are exact in float32
                acc.add32(x[blk].astype(np.float32))
        total = acc.total()
    N, K = total
    all_neg_zero = N == 0 and x.size > 0 and bool(np.all(np.signbit(x) & (x == 0)))
    return _finish(N, K, info, all_neg_zero, to)


def exact_dot(a: ArrayLike, b: ArrayLike) -> np.generic:
    """Correctly rounded dot product ``sum(a[i] * b[i])`` of two 1-D arrays, in their format.

    The exact real value, rounded once: no product or partial sum is rounded. IEEE rules:
    NaN inputs, ``inf * 0`` or infinite products of both signs give NaN; otherwise an infinite
    product gives that infinity (finite products never overflow here: they are exact). An
    exact zero is ``-0.0`` only if every product is ``-0.0``; the empty dot is ``+0.0``.

    Parameters
    ----------
    a, b : array_like
        1-D, of one shape and one format of ``FORMATS``.

    Returns
    -------
    numpy.generic
        A scalar of the inputs' format.

    Raises
    ------
    TypeError
        Mixed formats, or a Python value not exactly representable in the inputs' format.
    ValueError
        Arrays that are not 1-D, or shapes that differ.
    """
    to = None
    if (h := held((a, b), "exact_dot", ("a", "b"))) is not None:  # FP8, FP6, FP4: once to theirs
        (a, b), to = h
    return exact_dot_to(a, b, to)


def exact_dot_to(a, b, to: str | None = None) -> np.generic:
    """:func:`exact_dot`, the exact value rounded once to the format ``to`` of ml_dtypes'
    small types or of ``fpx.format`` (its values given in float32 or float64), or where None
    to the inputs'."""
    (a, b), info = coerce(a, b, what="exact_dot", names=("a", "b"))
    if a.ndim != 1 or b.ndim != 1:
        raise ValueError(f"exact_dot takes 1-D arrays, got shapes {a.shape} and {b.shape}")
    if a.shape != b.shape:
        raise ValueError(f"exact_dot: shapes {a.shape} and {b.shape} differ")
    if not NUMPY_ONLY:
        total = _dot_compiled(a, b, info)
        if total is not None:
            N, K = total
            all_neg_zero = False
            if N == 0 and a.size:
                with np.errstate(all="ignore"):
                    zero = (a == 0) | (b == 0)
                all_neg_zero = bool(np.all(zero & (np.signbit(a) != np.signbit(b))))
            return _finish(N, K, info, all_neg_zero, to)
    A = a.astype(np.float64)
    B = b.astype(np.float64)
    with np.errstate(all="ignore"):
        finite = np.isfinite(A) & np.isfinite(B)
        if not finite.all():
            prods = np.where(finite, 0.0, A * B)  # inf*0 -> nan; inf*x -> ±inf
            special = _specials(prods)
            if special is not None:
                return _special(special, info, to)
        if info.name != "float64":
            # products of p <= 24 bit values are exact float64 numbers (no over/underflow)
            acc = ExactAccumulator()
            for blk in _blocks(A.size):
                acc.add64(A[blk] * B[blk])
            prod_neg_zero = ((A == 0) | (B == 0)) & (np.signbit(A) != np.signbit(B))
        else:
            acc, prod_neg_zero = accumulate_dot64(A, B)
    N, K = acc.total()
    all_neg_zero = N == 0 and A.size > 0 and bool(np.all(prod_neg_zero))
    return _finish(N, K, info, all_neg_zero, to)


# ----------------------------------------------------------------------------- compiled sums


def kernel_needs(what: str, info: FormatInfo) -> list:
    """The compiled kernels ``what`` ("fma", "exact_sum" or "exact_dot") calls for inputs of
    format ``info``: ``(kernel name, dtype of its first array argument, None)`` each, as
    fpexplore.warmup reads them (empty with ``NUMPY_ONLY``)."""
    if NUMPY_ONLY:
        return []
    wide = info.name in ("float32", "float64")
    if what == "fma":
        return [("fma_rn", info.dtype, None)] if wide else [("fma_odd", np.dtype(np.float32), None)]
    if what == "exact_sum":
        if info.name == "float64":
            return [("sum_bins64", np.dtype(np.int64), None)]
        return [("sum_bins", np.dtype(_LAYOUT[info.name][0]), None)]
    if what == "exact_dot":
        if info.name == "float64":
            return [("dot_bins64", np.dtype(np.float64), None)]
        return [("dot_bins32", np.dtype(np.float32), None)]
    raise ValueError(f"unknown function {checks.shown(what)}")


# signed integer view, fraction bits, exponent bits of the formats summed by sum_bins
_LAYOUT = {
    "float16": (np.int16, 10, 5),
    "bfloat16": (np.int16, 7, 8),
    "float32": (np.int32, 23, 8),
}
# terms per kernel call: every row of every bin array stays below 2**62 (float64 dots add
# two values of |m >> 26| < 2**27 per term, a quarter of the terms to each row)
_CHUNK = 1 << 32


def bin_terms(bins: np.ndarray, unit: int, shift: int = 0, ebits: int = 0) -> list:
    """The bins of ``fpexplore._exact_kernels`` as ``(n, k)`` terms meaning ``n * 2**k``: bin
    s (its rows added) holds integers of unit ``2**(max(E, 1) - unit + shift)``, E = s's low
    ``ebits`` bits (the exponent field) and the bit above them the sign; ``ebits=0``: E = s,
    the integers signed."""
    tot = bins.sum(axis=0) if bins.ndim == 2 else bins
    out = []
    for s in np.flatnonzero(tot).tolist():
        E, neg = (s & ((1 << ebits) - 1), s >> ebits) if ebits else (s, 0)
        n = int(tot[s])
        out.append((-n if neg else n, max(E, 1) - unit + shift))
    return out


def _bins(rows: int, width: int, count: int = 1) -> list:
    """``count`` zeroed (rows, width) int64 bin arrays cut from one allocation whose rows are
    8 entries longer than ``width``: every row starts 64 bytes further along modulo 4 KiB.
    Rows of exactly 4 KiB multiples (4096 float64 bins) start at the same offset modulo
    4096, where the CPU takes a load from one row as depending on a store to another (4K
    aliasing) and the interleaved rows meant to overlap wait on each other: 5x slower."""
    block = np.zeros((count * rows, width + 8), np.int64)
    return [block[i * rows : (i + 1) * rows] for i in range(count)]


def _sum_compiled(x: np.ndarray, info: FormatInfo):
    """``(N, K)`` of the exact sum of the 1-D contiguous x with the compiled kernels, or None
    where x holds NaN or infinities."""
    return _combine_parts([x], _sum_part, info)


def _sum_part(x: np.ndarray, info: FormatInfo):
    """(terms, special count) of the exact sum of one part of x."""
    k = _kernels()
    if info.name == "float64":
        hi, low = _bins(k.ROWS, 4096, 2)
        special = k.sum_bins64(x.view(np.int64), hi, low)
        terms = bin_terms(hi, k.F64_UNIT, k.LOW_BITS, 11) + bin_terms(low, k.F64_UNIT, 0, 11)
        return terms, special
    view, fbits, ebits = _LAYOUT[info.name]
    (bins,) = _bins(k.ROWS, 2 << ebits)
    special = k.sum_bins(x.view(view), fbits, ebits, bins)
    return bin_terms(bins, info.emax + fbits, 0, ebits), special


def _dot_compiled(a: np.ndarray, b: np.ndarray, info: FormatInfo):
    """``(N, K)`` of the exact dot product of 1-D a, b with the compiled kernels, or None where
    a product is NaN or infinite."""
    if info.name == "float64":
        a, b = np.ascontiguousarray(a), np.ascontiguousarray(b)
    else:  # float16 and bfloat16 values are exact in float32
        a, b = (np.ascontiguousarray(v, dtype=np.float32) for v in (a, b))
    return _combine_parts([a, b], _dot_part, info)


def _dot_part(a: np.ndarray, b: np.ndarray, info: FormatInfo):
    """(terms, special count) of the exact dot product of one part of a and b."""
    k = _kernels()
    hi, low = _bins(k.ROWS, 4096, 2)
    terms = []
    if info.name == "float64":
        whi, wlo = (row[0] for row in _bins(1, k.WIDE_BINS, 2))
        special = k.dot_bins64(a, b, hi, low, whi, wlo)
        # wide bin u holds integers of unit 2**(u - WIDE_OFFSET): "E = u" with unit OFFSET
        terms = bin_terms(whi, k.WIDE_OFFSET, k.LOW_BITS) + bin_terms(wlo, k.WIDE_OFFSET)
    else:
        special = k.dot_bins32(a, b, hi, low)
    terms += bin_terms(hi, k.F64_UNIT, k.LOW_BITS, 11) + bin_terms(low, k.F64_UNIT, 0, 11)
    return terms, special


#: elements per thread below which the compiled sums run on one thread (starting a thread
#: and combining its bins costs about as much as this many elements)
THREAD_MIN = 1 << 17


def threads_for(n: int) -> int:
    """How many threads the compiled exact sums of ``n`` elements use: the CPUs this process
    may run on (its affinity and its control group's CPU quota, :func:`cpu_quota`; at most
    8), fewer where a part would be under :data:`THREAD_MIN` elements;
    the environment variable ``FPX_EXACT_THREADS`` sets the most (1: one thread). The parts'
    bins are combined exactly, so the result never depends on it."""
    text = os.environ.get("FPX_EXACT_THREADS", "").strip()
    if text:
        if not text.isdigit() or int(text) < 1:
            raise ValueError(f"FPX_EXACT_THREADS must be a whole number >= 1, got {text!r}")
        most = int(text)
    else:
        cpus = os.sched_getaffinity(0) if hasattr(os, "sched_getaffinity") else None
        most = min(8, len(cpus) if cpus else (os.cpu_count() or 1), cpu_quota() or 8)
    return max(1, min(most, n // THREAD_MIN))


def cpu_quota(root: str = "/sys/fs/cgroup") -> int | None:
    """The CPUs this process's control group may use (its CFS quota over its period, rounded
    up), or None without a limit. A container (Binder, CI) often sees all the host's CPUs
    but may use one or two: more threads than that would only wait for each other. Reads
    cgroup v2's ``cpu.max`` or v1's ``cpu/cpu.cfs_quota_us`` and ``cpu.cfs_period_us``."""

    def read(*parts) -> str:
        with open(os.path.join(root, *parts), encoding="ascii") as f:
            return f.read().strip()

    try:
        quota, period = read("cpu.max").split()[:2]
    except (OSError, ValueError):
        try:
            quota, period = read("cpu", "cpu.cfs_quota_us"), read("cpu", "cpu.cfs_period_us")
        except OSError:
            return None
    try:
        q, p = int(quota), int(period)  # "max" (v2) or -1 (v1): no limit
    except ValueError:
        return None
    return -(-q // p) if q > 0 and p > 0 else None


_POOL: tuple = (None, None)  # (the process id that made it, the pool)
_POOL_LOCK = threading.Lock()


def _pool():
    """The threads of the parts, made on first use and again in a forked child (a fork copies
    the pool but not its threads)."""
    global _POOL
    with _POOL_LOCK:
        if _POOL[0] != os.getpid():
            from concurrent.futures import ThreadPoolExecutor

            pool = ThreadPoolExecutor(max_workers=8, thread_name_prefix="fpx-exact")
            _POOL = (os.getpid(), pool)
        return _POOL[1]


def _on_threads(run, jobs: list) -> list:
    """``run(job)`` of every job, the first on this thread and the others meanwhile on the
    pool's; all on this thread where no thread can start any more (at interpreter exit,
    where Python has shut its thread pools down)."""
    if len(jobs) == 1:
        return [run(jobs[0])]
    try:
        rest = _pool().map(run, jobs[1:])
    except RuntimeError:  # "cannot schedule new futures after (interpreter) shutdown"
        return [run(job) for job in jobs]
    return [run(jobs[0]), *rest]


def _combine_parts(arrays: list, part, info: FormatInfo):
    """``(N, K)`` of ``part(*pieces, info)`` over pieces of ``arrays`` (split alike): at most
    :data:`_CHUNK` elements each (the bins' headroom), one piece per thread (the kernels
    release the GIL); None where a piece holds NaN or infinities."""
    n = arrays[0].size
    pieces = max(threads_for(n), -(-n // _CHUNK))
    cuts = [n * i // pieces for i in range(pieces + 1)]
    jobs = [[v[lo:hi] for v in arrays] for lo, hi in zip(cuts, cuts[1:])]
    results = _on_threads(lambda vs: part(*vs, info), jobs)
    if any(special for _, special in results):
        return None
    return _combine([t for terms, _ in results for t in terms])


def accumulate_dot64(A: np.ndarray, B: np.ndarray):
    """The exact products ``A[i] * B[i]`` of finite float64 arrays in an
    :class:`ExactAccumulator` (TwoProduct where it is exact, rationals elsewhere), and where
    each product is ``-0.0``: ``(accumulator, prod_neg_zero)``."""
    zero = (A == 0) | (B == 0)
    safe = two_product_safe(A, B)
    acc = ExactAccumulator()
    for blk in _blocks(A.size):
        ok = safe[blk]
        ph, pl = two_product(np.where(ok, A[blk], 0.0), np.where(ok, B[blk], 0.0))
        acc.add64(ph)
        acc.add64(pl)
    slow = ~safe & ~zero
    if slow.any():
        # exact products outside the safe range: integers times 2**-2148
        for x, y in zip(A[slow].tolist(), B[slow].tolist()):
            q = Fraction(x) * Fraction(y)
            acc.terms.append((q.numerator * ((1 << 2148) // q.denominator), -2148))
    prod_neg_zero = zero & (np.signbit(A) != np.signbit(B))
    return acc, prod_neg_zero
