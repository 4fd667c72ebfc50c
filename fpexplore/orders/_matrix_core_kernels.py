"""Compiled (numba) kernel of the AMD matrix cores: ``amd_loop``, the chain of blocks of
matrix_core.amd_blocks for one output element after another. Private: use fpx.mma.

Each element runs its blocks in order, each block's result the next block's c, by the rules
of matrix_core's docstring: the special values of the block first (a NaN, 0 * inf,
infinities of both signs, the product limit), then the block's sum by the architecture's rule
(``KINDS``): ``exact`` (an exact expansion of the products and c, rounded once to binary32),
``pairwise`` (flushed float32 products in a tree of float32 additions, c last), ``late-c``
and ``odd-even`` (integer significands aligned and truncated, c joined after). Every
operation is that of the rule on one element, in integers or in IEEE arithmetic with one
rounding each, so the bits are the rule's.
"""

from __future__ import annotations

import math

import numba as nb
import numpy as np

from .._numba import cached_njit, float_bits
from ..numerics import (
    FLOAT32_MIN_NORMAL,
    fast_two_sum,
    flush_subnormals,
    nudge_to_odd_scalar,
    two_sum,
)

__all__ = ["KINDS", "amd_loop"]

#: the block sums, in the order of amd_loop's ``kind`` argument (gpu_models.Rules.sum_of)
KINDS = ("exact", "pairwise", "late-c", "odd-even")
_LIMIT = 2.0**128  # a product this large overflows the float32 output's exponent range
_EMPTY = -1024  # the exponent of a group without a nonzero product
_FRACTION = (1 << 52) - 1  # a float64's fraction bits
_HIDDEN = 1 << 52
_F32_ZERO = np.float32(0.0)


@nb.njit(inline="always")
def _ordinary(a, b, k0, k1, cv, limit):
    """Whether the block surely has no special value (one pass without branches: a NaN or an
    infinity among the products makes ``z`` NaN); False sends it to _special."""
    z = cv * 0.0
    big = 0.0
    for k in range(k0, k1):
        p = a[k] * b[k]
        z += p * 0.0
        big = max(big, abs(p))
    return z == 0.0 and not (limit and big >= _LIMIT)


@nb.njit(inline="always")
def _special(a, b, k0, k1, cv, limit):
    """(whether the block is special, its value): a NaN, 0 * inf or infinities of both signs
    give NaN, otherwise an infinity (a product of 2**128 or more where ``limit``) that one."""
    nan = math.isnan(cv)
    pos = cv == math.inf
    neg = cv == -math.inf
    for k in range(k0, k1):
        p = a[k] * b[k]
        if math.isnan(p):
            nan = True
        elif (abs(p) >= _LIMIT) if limit else math.isinf(p):
            if p > 0:
                pos = True
            else:
                neg = True
    if nan or (pos and neg):
        return True, math.nan
    if pos:
        return True, math.inf
    if neg:
        return True, -math.inf
    return False, 0.0


# ----------------------------------------------------------------------------- exact (CDNA1)


@nb.njit(inline="always")
def _grow(parts, n, x):
    """Add x to the expansion parts[:n] (non-overlapping, increasing magnitude; Shewchuk's
    grow-expansion as math.fsum runs it): returns the new length."""
    i = 0
    for q in range(n):
        y = parts[q]
        if abs(x) < abs(y):
            x, y = y, x
        hi, lo = fast_two_sum(x, y)
        if lo != 0.0:
            parts[i] = lo
            i += 1
        x = hi
    parts[i] = x
    return i + 1


@nb.njit(inline="always")
def _rounded(parts, n):
    """The sum of the expansion parts[:n] rounded to nearest-even float64 (math.fsum's end)."""
    hi = 0.0
    lo = 0.0
    if n > 0:
        n -= 1
        hi = parts[n]
        while n > 0:
            n -= 1
            hi, lo = fast_two_sum(hi, parts[n])
            if lo != 0.0:
                break
        if n > 0 and ((lo < 0.0 and parts[n - 1] < 0.0) or (lo > 0.0 and parts[n - 1] > 0.0)):
            y = lo * 2.0
            x = hi + y
            if y == x - hi:
                hi = x
    return hi


@nb.njit(inline="always")
def _exact(a, b, k0, k1, cv, parts):
    """CDNA1: c + the products, summed exactly, rounded once to nearest-even binary32 (+0 for
    an exact zero): where every float64 addition is exact their sum, else round to odd in
    float64 (the exact sum less its rounding gives the direction), then to binary32."""
    s = cv
    exact = True
    for k in range(k0, k1):
        s, e = two_sum(s, a[k] * b[k])
        exact = exact and e == 0.0
    if exact:
        return float(np.float32(s)) if s != 0.0 else 0.0
    n = 0
    for k in range(k0, k1):
        p = a[k] * b[k]
        if p != 0.0:
            n = _grow(parts, n, p)
    if cv != 0.0:
        n = _grow(parts, n, cv)
    s = _rounded(parts, n)
    if s == 0.0:
        return 0.0
    n = _grow(parts, n, -s)
    err = 0.0
    for q in range(n - 1, -1, -1):  # the largest nonzero part has the sign of the rest
        if parts[q] != 0.0:
            err = parts[q]
            break
    return float(np.float32(nudge_to_odd_scalar(s, err)))


# ----------------------------------------------------------------------------- pairwise (CDNA2)


@nb.njit(inline="always")
def _ftz(x):
    """A float32 with its subnormals flushed to a zero of its sign, as a float32."""
    return np.float32(flush_subnormals(x))


@nb.njit(inline="always")
def _pairwise(a, b, k0, k1, cv, lo, tree):
    """CDNA2: products of normal inputs rounded to float32, flushed below 2**-126 to +0, then
    (p0 + p1) + (p2 + p3) ... in float32 (each sum flushed), then c + that (c flushed)."""
    w = tree.shape[0]
    for q in range(w):
        p = _F32_ZERO
        k = k0 + q
        if k < k1 and abs(a[k]) >= lo and abs(b[k]) >= lo:
            p = np.float32(a[k] * b[k])
            if not abs(p) >= FLOAT32_MIN_NORMAL:
                p = _F32_ZERO
        tree[q] = p
    while w > 1:  # neighbours first
        w //= 2
        for q in range(w):
            tree[q] = _ftz(tree[2 * q] + tree[2 * q + 1])
    return float(_ftz(_ftz(np.float32(cv)) + tree[0]))


# ----------------------------------------------------------------------------- aligned (CDNA3)


@nb.njit(inline="always")
def _shift(m, s, floor):
    """m * 2**s for an int64 m (|m| < 2**62): exact for s >= 0, else rounded down (floor) or
    toward zero (a negative m first raised by 2**-s - 1: no branch on its sign)."""
    r = min(max(-s, 0), 62)
    if not floor:
        m += (m >> 63) & ((np.int64(1) << r) - 1)
    return m << min(max(s, 0), 62) if s >= 0 else m >> r


@nb.njit(inline="always")
def _group(am, ae, bm, be, k0, k1, step, bits):
    """The aligned sum of the products k0, k0 + step, ... below k1: (E, the sum of the
    products truncated to 2**(E - 24), in that unit); E = _EMPTY without a nonzero one."""
    big = _EMPTY
    for k in range(k0, k1, step):
        big = max(big, ae[k] + be[k] if am[k] * bm[k] != 0 else _EMPTY)
    s = 0
    if big != _EMPTY:
        for k in range(k0, k1, step):  # a zero product adds zero
            s += _shift(am[k] * bm[k], ae[k] + be[k] - big + 24 - bits, False)
    return big, s


@nb.njit(inline="always")
def _join(e1, s1, e2, s2, more, drop_below):
    """Two aligned sums at 2**(e1 - 24), 2**(e2 - 24): the one with the smaller exponent
    rounded down to the other's grid (the first, when smaller, gets ``more`` extra bits; the
    second far below the first, by more than ``drop_below`` binades, truncated); an empty
    group adds nothing. Returns (exponent, sum, unit exponent)."""
    first_small = e1 < e2 and e1 != _EMPTY
    big = max(e1, e2)
    if first_small:
        unit = e2 - 24 - more
        a = _shift(s1, more - (e2 - e1), True)
        b = _shift(s2, more, True)
    else:
        unit = big - 24
        a = s1
        if e2 < e1 - drop_below:
            b = _shift(s2, e2 - e1, False)
        else:
            b = _shift(s2, 0 if e1 == _EMPTY else e2 - e1, True)
    if e2 == _EMPTY:
        b = 0
    if e1 == _EMPTY:
        a = 0
    return big, a + b, unit


@nb.njit(inline="always")
def _aligned(am, ae, bm, be, k0, k1, cv, bits, odd_even):
    """CDNA3: the products aligned and truncated (FP8: the even and the odd k apart, joined
    rounding down), then c joined with 7 more bits; rounded to nearest-even binary32."""
    if odd_even:
        e0, s0 = _group(am, ae, bm, be, k0, k1, 2, bits)
        e1, s1 = _group(am, ae, bm, be, k0 + 1, k1, 2, bits)
        big, s, _ = _join(e0, s0, e1, s1, 0, 4096)
        drop = 25
    else:
        big, s = _group(am, ae, bm, be, k0, k1, 1, bits)
        drop = 4096  # never
    ce = -126
    cint = 0
    if cv != 0.0:
        ce = max(math.frexp(cv)[1] - 1, -126)
        cint = np.int64(math.ldexp(cv, 23 - ce)) << 1
    _, total, unit = _join(big, s, ce, cint, 7, drop)
    return float(np.float32(math.ldexp(float(total), unit)))


# ----------------------------------------------------------------------------- the chain


@nb.njit
def _significands(x, precision, emin):
    """matrix_core.significands of a C-contiguous array of values of the input format (normal
    float64 numbers): x = m * 2**(e - precision + 1), e = max(floor(log2|x|), emin), as int64
    arrays (0, 0 for zeros and non-finite x), read from the bits."""
    m = np.zeros(x.shape, np.int64)
    e = np.zeros(x.shape, np.int64)
    xf, mf, ef = x.reshape(-1), m.reshape(-1), e.reshape(-1)
    for q in range(xf.size):
        v = xf[q]
        if v != 0.0 and math.isfinite(v):
            b = float_bits(v)
            ex = ((b >> 52) & 0x7FF) - 1023
            ef[q] = max(ex, emin)
            mag = ((b & _FRACTION) | _HIDDEN) >> (53 - precision + ef[q] - ex)
            mf[q] = -mag if b < 0 else mag
    return m, e


@cached_njit
def amd_loop(a, bt, c, out, block, kind, limit, lo, precision, emin, bits):
    """out[t, i, j] = the chain of blocks of ``block`` over row a[t, i] and column bt[t, j]
    (B transposed: (n, N, K); both C-contiguous) from c[t, i, j], summed by ``KINDS[kind]``;
    ``limit`` the product limit, ``lo`` the input format's smallest normal (pairwise flushes
    below it), ``precision`` and ``emin`` the input format's, ``bits`` the products' fraction
    bits relative to 23 + neab (the aligned sums)."""
    if kind >= 2:  # the aligned sums' integer significands and exponents
        am, ae = _significands(a, precision, emin)
        bm, be = _significands(bt, precision, emin)
    else:
        am = ae = np.zeros((a.shape[0], a.shape[1], 0), np.int64)
        bm = be = np.zeros((bt.shape[0], bt.shape[1], 0), np.int64)
    parts = np.empty(block + 2)
    tree = np.empty(block, np.float32)
    for t in range(a.shape[0]):
        for i in range(a.shape[1]):
            ar, amr, aer = a[t, i], am[t, i], ae[t, i]
            for j in range(bt.shape[1]):
                br, bmr, ber = bt[t, j], bm[t, j], be[t, j]
                cv = c[t, i, j]
                for k0 in range(0, a.shape[2], block):
                    k1 = min(k0 + block, a.shape[2])
                    special = False
                    if not _ordinary(ar, br, k0, k1, cv, limit):
                        special, v = _special(ar, br, k0, k1, cv, limit)
                    if special:
                        cv = v
                    elif kind == 0:
                        cv = _exact(ar, br, k0, k1, cv, parts)
                    elif kind == 1:
                        cv = _pairwise(ar, br, k0, k1, cv, lo, tree)
                    else:
                        cv = _aligned(amr, aer, bmr, ber, k0, k1, cv, bits, kind == 3)
                out[t, i, j] = cv
    return out
