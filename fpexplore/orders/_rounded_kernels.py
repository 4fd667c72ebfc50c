"""Compiled (numba) loops for the orders' additions in a rounding mode other than
nearest-even (``fpx.sum(..., rounding=...)``), and in any mode in a format of ``fpx.format``.
Private: use fpexplore.orders.

Each addition ``a + b`` of two values of the working format (the accumulator's: float16,
bfloat16, float32, float64 or fpx.format's, held in float64) is rounded once, from its exact
value, to the format ``rp = (p, emin, vmax, flush, ovf)`` (``flush``: no subnormals; ``ovf``:
what a nearest or away-from-range rounding past ``vmax`` gives: inf, NaN, or vmax where the
format saturates) in ``mode``
(an index into ``ROUNDING_MODES``: nearest_even, nearest_away, toward_zero, up, down,
stochastic). The exact sum is kept as
``s + e`` (TwoSum: ``s`` = the float64 sum, ``e`` its error, exact), so the direction is
right wherever the float64 sum alone would have rounded (bfloat16, float32 and float64
values far apart). The stochastic draw of addition ``k`` is ``draws[k]`` (a uniform in
[0, 1) of 53 bits): the sum rounds up (toward +inf) iff ``draws[k] < (v - lo) / (hi - lo)``
between its neighbours ``lo < v < hi``, as :func:`fpexplore.as_format` rounds. Every
addition consumes its draw, in the order's addition order, whatever the mode.

The orders' nearest-even paths are not here: they stay in _kernels.py, untouched.
"""

from __future__ import annotations

import math

import numba as nb
import numpy as np

from .._numba import cached_njit
from ..numerics import two_sum
from ._kernels import halving_step

NEAREST_EVEN, NEAREST_AWAY, TOWARD_ZERO, UP, DOWN, STOCHASTIC = range(6)
_TINY = 2.0**-960  # below this quantum the stochastic comparison is scaled up (exactly)


def _jit(func):
    return cached_njit(func, nogil=True)


@nb.njit
def _pick(s, e, p, emin, vmax, mode, u, flush, ovf):
    """The exact value ``v = s + e`` (``s`` = float64 RN(v), finite and nonzero; ``e`` the
    exact error) rounded to the format (p, emin, vmax) in ``mode``, ``u`` the draw; ``flush``:
    the format has no subnormals (below 2**emin its grid is 0, 2**emin; fpx.format's
    subnormals=False, whose nearest tie 2**emin / 2 goes to 2**emin, as CPFloat's)."""
    neg = s < 0.0
    big = abs(s)  # |v| = big + err, exactly
    err = -e if neg else e
    m, ex = math.frexp(big)  # big = m * 2**ex, m in [0.5, 1)
    q = math.ldexp(1.0, max(ex - 1, emin) - p + 1)  # the format's spacing at |v|
    if flush and ex - 1 < emin:
        q = math.ldexp(1.0, emin)
    lo = math.floor(big / q) * q  # exact: big / q < 2**p
    w = big - lo  # exact; |v| - lo = w + err
    if w == 0.0 and err < 0.0:  # |v| just below lo: one step down (half one below 2**k)
        if m == 0.5 and ex - 1 > emin:
            q *= 0.5
        elif flush and m == 0.5 and ex - 1 == emin:  # just below 2**emin: from 0 to it
            q = lo
        lo -= q
        w = q
    if w == 0.0 and err == 0.0:
        r = lo  # on the grid
    else:  # 0 < w + err < q: between lo and lo + q
        ws, es, qs = w, err, q
        if q < _TINY:  # (float64 only) keep u * q above the subnormals: all exact
            ws, es, qs = w * 2.0**128, err * 2.0**128, q * 2.0**128
        if mode == NEAREST_EVEN or mode == NEAREST_AWAY:
            c = (ws - 0.5 * qs) + es  # its sign is exact: ws - qs/2 is exact
            half = 0.5 * (lo / q)  # lo / q: an integer below 2**53; odd: the tie goes up
            tie_up = mode == NEAREST_AWAY or half != math.floor(half) or (flush and lo == 0.0)
            up = c > 0.0 or (c == 0.0 and tie_up)
        elif mode == TOWARD_ZERO:
            up = False
        elif mode == UP:
            up = not neg
        elif mode == DOWN:
            up = neg
        elif not neg:  # stochastic, v > 0: up iff u < (|v| - lo) / q
            up = u * qs - ws < es
        else:  # v < 0: toward +inf (the magnitude down) iff u < (lo + q - |v|) / q
            up = (1.0 - u) * qs - ws <= es
        r = lo + q if up else lo
    if r > vmax:  # toward the range: the largest value; else the overflow
        toward = mode == TOWARD_ZERO or (mode == UP and neg) or (mode == DOWN and not neg)
        r = vmax if toward else ovf
    return -r if neg else r


@nb.njit
def add_in_mode(a, b, p, emin, vmax, mode, u, flush=False, ovf=math.inf):
    """``a + b`` (float64 values of the format ``(p, emin, vmax)``) rounded once in ``mode``;
    ``u`` the stochastic draw; ``flush``: no subnormals (see :func:`_pick`). NaN and
    infinities as IEEE (``inf - inf`` is NaN); an exact zero is +0 (-0 in mode down), the
    sum of two zeros of one sign that zero."""
    if not (math.isfinite(a) and math.isfinite(b)):
        return a + b
    s, e = two_sum(a, b)
    if s == 0.0:  # exactly zero (float64 has gradual underflow)
        if math.copysign(1.0, a) == math.copysign(1.0, b):
            return a  # two zeros of one sign: x + x keeps it
        return -0.0 if mode == DOWN else 0.0
    if math.isinf(s):  # float64 overflowed: v / 2 exactly (both |a|, |b| >= 2**970)
        s, e = two_sum(a * 0.5, b * 0.5)
        return 2.0 * _pick(s, e, p, emin - 1, vmax * 0.5, mode, u, flush, ovf * 0.5)
    return _pick(s, e, p, emin, vmax, mode, u, flush, ovf)


@nb.njit
def _add(a, b, rp, mode, draws, k):
    u = draws[k] if mode == STOCHASTIC else 0.0
    return add_in_mode(a, b, rp[0], rp[1], rp[2], mode, u, rp[3], rp[4])


@_jit
def sequential_rounded(x, rp, mode, draws, k, lo, hi, step):
    """acc = t[first]; acc = acc + t[i] for the rest of range(lo, hi, step), addition j
    drawing ``draws[k + j]``."""
    acc = 0.0
    first = True
    for i in range(lo, hi, step):
        if first:
            acc = np.float64(x[i])
            first = False
        else:
            acc = _add(acc, np.float64(x[i]), rp, mode, draws, k)
            k += 1
    return acc


@_jit
def blocked_rounded(x, rp, mode, draws, block):
    """Sequential within blocks of ``block`` terms, then over the block sums; the blocks'
    additions draw first (block by block), then the block sums'."""
    n = x.shape[0]
    nblocks = (n + block - 1) // block
    acc = 0.0
    k = n - nblocks  # the first draw of the block sums' additions
    for b in range(nblocks):
        lo = b * block
        s = sequential_rounded(x, rp, mode, draws, lo - b, lo, min(lo + block, n), 1)
        if b == 0:
            acc = s
        else:
            acc = _add(acc, s, rp, mode, draws, k)
            k += 1
    return acc


@_jit
def pairwise_rounded(x, rp, mode, draws):
    """Textbook recursive halving, S(t) = S(first n//2) + S(rest), S([a]) = a; additions
    draw in evaluation order: the left half's, the right half's, then theirs."""
    n = x.shape[0]
    if n == 0:
        return 0.0
    frames = np.empty((192, 3), dtype=np.int64)  # as _kernels' STACK
    vals = np.zeros(192)
    frames[0, 0] = 0
    frames[0, 1] = n
    frames[0, 2] = 0
    nf, nv, k = 1, 0, 0
    while True:
        nf, a, m = halving_step(frames, nf, 1, 1)  # leaves of one term
        if m < 0:
            return vals[0]
        if m == 0:
            nv -= 1
            vals[nv - 1] = _add(vals[nv - 1], vals[nv], rp, mode, draws, k)
            k += 1
        else:
            vals[nv] = np.float64(x[a])
            nv += 1


@nb.njit
def round_in_mode(v, p, emin, vmax, mode, u, flush=False, ovf=math.inf):
    """``v`` (an exact float64 value: a product of two of the format's values) rounded once
    to the format (p, emin, vmax) in ``mode``, as :func:`add_in_mode` rounds a sum; zeros,
    infinities and NaN as they are."""
    if v == 0.0 or not math.isfinite(v):
        return v
    return _pick(v, 0.0, p, emin, vmax, mode, u, flush, ovf)


@nb.njit
def _order_rounded(code, t, rp, draws, lo, hi, block):
    """Order ``code`` (an OrderSpec's ``matmul_code``: 0 sequential, 1 reverse, 2 pairwise,
    3 blocked) over ``t[lo:hi]``, each addition rounded to nearest-even."""
    if code == 0:
        return sequential_rounded(t, rp, NEAREST_EVEN, draws, 0, lo, hi, 1)
    if code == 1:
        return sequential_rounded(t, rp, NEAREST_EVEN, draws, 0, hi - 1, lo - 1, -1)
    if code == 2:
        return pairwise_rounded(t[lo:hi], rp, NEAREST_EVEN, draws)
    return blocked_rounded(t[lo:hi], rp, NEAREST_EVEN, draws, block)


@_jit
def matmul_rounded(A, Bt, code, rp, block, split):
    """out[i, j] = order ``code`` over k of A[i, k] * Bt[j, k] (float64 values whose products
    are exact), each product and each addition rounded once to the format ``rp`` (as
    :func:`fpexplore.orders.summation.run_rounded` gives it), nearest-even: the dot product
    of the rounded orders, element by element; with split > 1 the k range is cut into
    ``split`` contiguous slices whose results are added in slice order (split-K), as
    _kernels.matmul cuts it."""
    m, k = A.shape
    n = Bt.shape[0]
    out = np.empty((m, n))
    t = np.empty(k)
    draws = np.zeros(0)
    for i in range(m):
        for j in range(n):
            for s in range(k):
                v = A[i, s] * Bt[j, s]
                t[s] = round_in_mode(v, rp[0], rp[1], rp[2], NEAREST_EVEN, 0.0, rp[3], rp[4])
            acc = 0.0
            for s in range(max(split, 1)):
                lo = s * k // max(split, 1)
                hi = (s + 1) * k // max(split, 1)
                part = _order_rounded(code, t, rp, draws, lo, hi, block)
                acc = part if s == 0 else _add(acc, part, rp, NEAREST_EVEN, draws, 0)
            out[i, j] = acc
    return out
