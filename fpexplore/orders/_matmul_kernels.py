"""Compiled (numba) kernels of the matrix product: ``matmul_columns``, fpx.matmul for float16
and bfloat16 accumulators, and ``dot2_bounds``, exact_matmul's interval bounds. Private: use
fpexplore.orders.

Both run a row of A against a tile of output columns at once (B comes as (k, n): row t of B
is contiguous across the columns), each step one loop over the tile's columns with no branch
on the data, so the compiler runs the columns on SIMD lanes; every element's operations are
those of the element alone, in the same order, so the bits are those of the element-by-element
kernels (fpexplore/orders/_kernels.py: ``matmul``, whose float32 and float64 orders fpx.matmul
still calls, and the 1-D orders of fpx.dot). The arithmetic model is _kernels' (its module
docstring): 16-bit values in float64, rounded to the format after every operation.
"""

from __future__ import annotations

import math

import numba as nb
import numpy as np

from .._numba import bits_float, cached_njit, float_bits, hw_fma
from ..numerics import odd_add64_scalar, two_sum
from ._kernels import STACK, halving_step


def _jit(func):
    return cached_njit(func, nogil=True)


# ----------------------------------------------------------------------------- matmul, 16-bit
#
# float16 and bfloat16 accumulators: each step of an order does for column j of the tile the
# operation the 1-D kernels do for that element alone (so every element keeps the bits of
# fpx.dot of its row and column). The rounding is _rn_lanes (round_to_precision's result, from
# the exponent bits and one addition, without its tests) and the fused multiply-add's round to
# odd _odd_add_lanes (the nudge of odd_add64_scalar on the bit pattern, without libm).

COLUMNS = 256  # output columns per tile
TREE_CELLS = 8192  # a tree order's buffer: block x columns float64 values (64 KiB)
_EXP_BITS = 0x7FF0000000000000
_SIGN_BIT = -0x8000000000000000
_HUGE = 2.0**960  # from here on c's exponent would overflow; beyond every 16-bit format


@nb.njit(inline="always")
def _rn_lanes(v, tiny, shift, vmax, ovf=math.inf):
    """``round_to_precision(v, p, emin, vmax)`` for a 16-bit format (p <= 11, emin >= -126,
    vmax < 2**960), given ``tiny = 2**emin`` and ``shift = ((53 - p) << 52) | (1 << 51)``, with
    no branch on v. The quantum at v is 2**q with q = max(e, emin) - p + 1, the exponent of
    max(|v|, 2**emin) less p - 1: c = 1.5 * 2**(q + 52) is that maximum's exponent bits plus
    ``shift``, and (|v| + c) - c rounds |v| to a multiple of 2**q, ties to even, as
    round_to_precision's addition does (and its libm path, which it takes for float64
    subnormals, to the same multiple). Beyond vmax, and from 2**960 on (where c would
    overflow), ``ovf``: inf, or NaN or vmax for the OCP FP8 E4M3, FP6 and FP4 formats (fpx.matmul
    of their data: p <= 4). NaN and infinities come back as they are, zeros with their sign."""
    a = abs(v)
    c = bits_float((float_bits(max(a, tiny)) & _EXP_BITS) + shift)
    r = (a + c) - c
    if r > vmax or a >= _HUGE:
        r = ovf
    r = bits_float(float_bits(r) | (float_bits(v) & _SIGN_BIT))
    return r if a < math.inf else v


@nb.njit(inline="always")
def _odd_add_lanes(a, b):
    """``odd_add64_scalar(a, b)`` (a + b rounded to odd in float64) with no branch on the data:
    TwoSum, then where the error is nonzero, the sum finite and its last bit even, the sum's
    bit pattern one step toward the exact value (+1, away from zero, where the sum and the
    error have one sign; else -1): nudge_to_odd_scalar's nextafter."""
    s, e = two_sum(a, b)
    sb = float_bits(s)
    step = np.int64(1) if (sb ^ float_bits(e)) >= 0 else np.int64(-1)
    nudged = bits_float(sb + step)
    return nudged if (e != 0.0 and abs(s) < math.inf and (sb & 1) == 0) else s


@nb.njit(inline="always")
def _prod_lanes(xt, B, t, j0, w, L, dst):
    """dst[:w] = x[t] * B[t, j0:j0 + w] rounded to the format (the terms of step t)."""
    tiny, shift, vmax, ovf = L
    row = B[t, j0 : j0 + w]
    for j in range(w):
        dst[j] = _rn_lanes(xt * np.float64(row[j]), tiny, shift, vmax, ovf)


@nb.njit
def _sequential_cols(A, i, B, j0, w, fused, L, lo, hi, step, acc):
    """acc[:w] = ``sequential`` over t in range(lo, hi, step) of A[i, t] * B[t, column]."""
    tiny, shift, vmax, ovf = L
    first = True
    for t in range(lo, hi, step):
        xt = np.float64(A[i, t])
        row = B[t, j0 : j0 + w]
        if first:
            _prod_lanes(xt, B, t, j0, w, L, acc)
            first = False
        elif fused:
            for j in range(w):
                acc[j] = _rn_lanes(
                    _odd_add_lanes(xt * np.float64(row[j]), acc[j]), tiny, shift, vmax, ovf
                )
        else:
            for j in range(w):
                p = _rn_lanes(xt * np.float64(row[j]), tiny, shift, vmax, ovf)
                acc[j] = _rn_lanes(acc[j] + p, tiny, shift, vmax, ovf)
    if first:
        acc[:w] = 0.0


@nb.njit
def _blocked_cols(A, i, B, j0, w, fused, L, lo, hi, block, acc, part):
    """acc[:w] = ``blocked`` over A[i, lo:hi] * B[lo:hi, column]."""
    tiny, shift, vmax, ovf = L
    first = True
    for b in range(lo, hi, block):
        _sequential_cols(A, i, B, j0, w, fused, L, b, min(b + block, hi), 1, part)
        if first:
            acc[:w] = part[:w]
            first = False
        else:
            for j in range(w):
                acc[j] = _rn_lanes(acc[j] + part[j], tiny, shift, vmax, ovf)
    if first:
        acc[:w] = 0.0


@nb.njit
def _kahan_cols(A, i, B, j0, w, fused, L, lo, hi, s, c):
    """s[:w] = ``kahan`` over A[i, lo:hi] * B[lo:hi, column] (c: the compensations)."""
    tiny, shift, vmax, ovf = L
    if hi <= lo:
        s[:w] = 0.0
        return
    _prod_lanes(np.float64(A[i, lo]), B, lo, j0, w, L, s)
    c[:w] = 0.0
    for t in range(lo + 1, hi):
        xt = np.float64(A[i, t])
        row = B[t, j0 : j0 + w]
        if fused:
            for j in range(w):
                yy = _rn_lanes(
                    _odd_add_lanes(xt * np.float64(row[j]), -c[j]), tiny, shift, vmax, ovf
                )
                u = _rn_lanes(s[j] + yy, tiny, shift, vmax, ovf)
                c[j] = _rn_lanes(
                    _rn_lanes(u - s[j], tiny, shift, vmax, ovf) - yy, tiny, shift, vmax, ovf
                )
                s[j] = u
        else:
            for j in range(w):
                p = _rn_lanes(xt * np.float64(row[j]), tiny, shift, vmax, ovf)
                yy = _rn_lanes(p - c[j], tiny, shift, vmax, ovf)
                u = _rn_lanes(s[j] + yy, tiny, shift, vmax, ovf)
                c[j] = _rn_lanes(
                    _rn_lanes(u - s[j], tiny, shift, vmax, ovf) - yy, tiny, shift, vmax, ovf
                )
                s[j] = u


@nb.njit
def _neumaier_cols(A, i, B, j0, w, L, lo, hi, s, c):
    """s[:w] = ``neumaier`` over A[i, lo:hi] * B[lo:hi, column] (c: the compensations); the
    branch on |s| >= |t| is a choice between two values computed in every column."""
    tiny, shift, vmax, ovf = L
    if hi <= lo:
        s[:w] = 0.0
        return
    _prod_lanes(np.float64(A[i, lo]), B, lo, j0, w, L, s)
    c[:w] = 0.0
    for t in range(lo + 1, hi):
        xt = np.float64(A[i, t])
        row = B[t, j0 : j0 + w]
        for j in range(w):
            tt = _rn_lanes(xt * np.float64(row[j]), tiny, shift, vmax, ovf)
            sj = s[j]
            u = _rn_lanes(sj + tt, tiny, shift, vmax, ovf)
            big = _rn_lanes(_rn_lanes(sj - u, tiny, shift, vmax, ovf) + tt, tiny, shift, vmax, ovf)
            small = _rn_lanes(
                _rn_lanes(tt - u, tiny, shift, vmax, ovf) + sj, tiny, shift, vmax, ovf
            )
            c[j] = _rn_lanes(c[j] + (big if abs(sj) >= abs(tt) else small), tiny, shift, vmax, ovf)
            s[j] = u
    for j in range(w):
        s[j] = _rn_lanes(s[j] + c[j], tiny, shift, vmax, ovf)


@nb.njit
def _pairwise_leaf_cols(A, i, B, j0, w, L, lo, n, dst, tmp):
    """dst[:w] = ``_pairwise_leaf`` of the n <= 4 terms from lo (tmp: a second row)."""
    tiny, shift, vmax, ovf = L
    _prod_lanes(np.float64(A[i, lo]), B, lo, j0, w, L, dst)
    if n == 2:
        _prod_lanes(np.float64(A[i, lo + 1]), B, lo + 1, j0, w, L, tmp)
        for j in range(w):
            dst[j] = _rn_lanes(dst[j] + tmp[j], tiny, shift, vmax, ovf)
    elif n == 3:
        x1 = np.float64(A[i, lo + 1])
        x2 = np.float64(A[i, lo + 2])
        r1 = B[lo + 1, j0 : j0 + w]
        r2 = B[lo + 2, j0 : j0 + w]
        for j in range(w):
            t1 = _rn_lanes(x1 * np.float64(r1[j]), tiny, shift, vmax, ovf)
            t2 = _rn_lanes(x2 * np.float64(r2[j]), tiny, shift, vmax, ovf)
            t12 = _rn_lanes(t1 + t2, tiny, shift, vmax, ovf)
            dst[j] = _rn_lanes(dst[j] + t12, tiny, shift, vmax, ovf)
    elif n == 4:
        x1 = np.float64(A[i, lo + 1])
        x2 = np.float64(A[i, lo + 2])
        x3 = np.float64(A[i, lo + 3])
        r1 = B[lo + 1, j0 : j0 + w]
        r2 = B[lo + 2, j0 : j0 + w]
        r3 = B[lo + 3, j0 : j0 + w]
        for j in range(w):
            t1 = _rn_lanes(x1 * np.float64(r1[j]), tiny, shift, vmax, ovf)
            t2 = _rn_lanes(x2 * np.float64(r2[j]), tiny, shift, vmax, ovf)
            t3 = _rn_lanes(x3 * np.float64(r3[j]), tiny, shift, vmax, ovf)
            t01 = _rn_lanes(dst[j] + t1, tiny, shift, vmax, ovf)
            t23 = _rn_lanes(t2 + t3, tiny, shift, vmax, ovf)
            dst[j] = _rn_lanes(t01 + t23, tiny, shift, vmax, ovf)


@nb.njit
def _pairwise_cols(A, i, B, j0, w, L, lo, hi, frames, vals, acc):
    """acc[:w] = ``pairwise`` over A[i, lo:hi] * B[lo:hi, column]: the same recursion tree
    (halving_step, leaves of <= 4 terms), a row of ``vals`` per value on its stack."""
    tiny, shift, vmax, ovf = L
    n = hi - lo
    if n <= 0:
        acc[:w] = 0.0
        return
    frames[0, 0] = lo
    frames[0, 1] = n
    frames[0, 2] = 0
    nf, nv = 1, 0
    while True:
        nf, a, m = halving_step(frames, nf, 4, 1)
        if m < 0:
            acc[:w] = vals[0, :w]
            return
        if m == 0:
            nv -= 1
            left = vals[nv - 1]
            right = vals[nv]
            for j in range(w):
                left[j] = _rn_lanes(left[j] + right[j], tiny, shift, vmax, ovf)
        else:
            _pairwise_leaf_cols(A, i, B, j0, w, L, a, m, vals[nv], vals[nv + 1])
            nv += 1


@nb.njit
def _tree_cols(A, i, B, j0, w, fused, L, lo, hi, block, strided, buf, acc):
    """acc[:w] = ``tree_partials`` over A[i, lo:hi] * B[lo:hi, column], the block results
    then added in order onto +0.0 (``combine``, as matmul's tree orders do). buf: (block, w)."""
    tiny, shift, vmax, ovf = L
    acc[:w] = 0.0
    for b in range(lo, hi, block):
        valid = min(block, hi - b)
        for r in range(block):
            if r < valid:
                _prod_lanes(np.float64(A[i, b + r]), B, b + r, j0, w, L, buf[r])
            else:
                buf[r, :w] = 0.0
        if strided:
            h = block // 2
            while h >= 1:
                for r in range(h):
                    dst = buf[r]
                    src = buf[r + h]
                    if fused and h == block // 2 and r < valid:
                        xt = np.float64(A[i, b + r])
                        row = B[b + r, j0 : j0 + w]
                        for j in range(w):
                            dst[j] = _rn_lanes(
                                _odd_add_lanes(xt * np.float64(row[j]), src[j]),
                                tiny,
                                shift,
                                vmax,
                                ovf,
                            )
                    else:
                        for j in range(w):
                            dst[j] = _rn_lanes(dst[j] + src[j], tiny, shift, vmax, ovf)
                h //= 2
        else:
            s = 1
            while s < block:
                for r in range(0, block, 2 * s):
                    dst = buf[r]
                    src = buf[r + s]
                    if fused and s == 1 and r < valid:
                        xt = np.float64(A[i, b + r])
                        row = B[b + r, j0 : j0 + w]
                        for j in range(w):
                            dst[j] = _rn_lanes(
                                _odd_add_lanes(xt * np.float64(row[j]), src[j]),
                                tiny,
                                shift,
                                vmax,
                                ovf,
                            )
                    else:
                        for j in range(w):
                            dst[j] = _rn_lanes(dst[j] + src[j], tiny, shift, vmax, ovf)
                s *= 2
        top = buf[0]
        for j in range(w):
            acc[j] = _rn_lanes(acc[j] + top[j], tiny, shift, vmax, ovf)


@nb.njit
def _order_cols(code, A, i, B, j0, w, fused, L, lo, hi, block, work, frames, vals, buf, acc):
    """acc[:w] = reduce_code(code, ...) over A[i, lo:hi] * B[lo:hi, column] for each column
    j0 .. j0 + w - 1 (work: a scratch row; frames, vals: pairwise's stacks; buf: a tree's
    block x columns)."""
    if code == 0:
        _sequential_cols(A, i, B, j0, w, fused, L, lo, hi, 1, acc)
    elif code == 1:
        _sequential_cols(A, i, B, j0, w, fused, L, hi - 1, lo - 1, -1, acc)
    elif code == 2:
        _pairwise_cols(A, i, B, j0, w, L, lo, hi, frames, vals, acc)
    elif code == 3:
        _blocked_cols(A, i, B, j0, w, fused, L, lo, hi, block, acc, work)
    elif code == 4 or code == 5:
        _tree_cols(A, i, B, j0, w, fused, L, lo, hi, block, code == 5, buf, acc)
    elif code == 6:
        _kahan_cols(A, i, B, j0, w, fused, L, lo, hi, acc, work)
    else:
        _neumaier_cols(A, i, B, j0, w, L, lo, hi, acc, work)


@_jit
def matmul_columns(A, B, code, fused, z, rp, block, split, ovf=math.inf):
    """``matmul`` for a 16-bit accumulator (z: float64 +0.0, rp its (p, emin, vmax)), bit for
    bit, with B as (k, n) instead of its transpose: each row of A against tiles of COLUMNS
    output columns (fewer for the tree orders: their buffer is block x columns), every step of
    the order a loop over the columns without a branch on the data (see above). Also the
    formats of ``fpx.matmul``'s held data and accumulators (FP8, FP6, FP4, fpx.format's) of
    precision <= 25 with subnormals, to nearest-even: rounding the float64 sum of two of
    their values is rounding the exact sum (53 >= 2p + 2: Figueroa, "When is double rounding
    innocuous?", 1995); ``ovf`` what a rounding past vmax gives (inf, NaN or vmax)."""
    m, k = A.shape
    n = B.shape[1]
    L = (math.ldexp(1.0, rp[1]), ((53 - rp[0]) << 52) | (1 << 51), rp[2], ovf)
    tiny, shift, vmax, ovf = L
    tree = code == 4 or code == 5
    width = max(1, min(COLUMNS, TREE_CELLS // block, n) if tree else min(COLUMNS, n))
    out = np.full((m, n), z)
    acc = np.empty(width)
    part = np.empty(width)
    work = np.empty(width)
    frames = np.empty((STACK, 3), dtype=np.int64)
    vals = np.empty((STACK, width) if code == 2 else (1, 1))
    buf = np.empty((block, width) if tree else (1, 1))
    parts = max(split, 1)
    for j0 in range(0, n, width):
        w = min(width, n - j0)
        for i in range(m):
            for s in range(parts):
                lo = s * k // parts
                hi = (s + 1) * k // parts
                if s == 0:
                    _order_cols(
                        code, A, i, B, j0, w, fused, L, lo, hi, block, work, frames, vals, buf, acc
                    )
                else:
                    _order_cols(
                        code, A, i, B, j0, w, fused, L, lo, hi, block, work, frames, vals, buf, part
                    )
                    for j in range(w):
                        acc[j] = _rn_lanes(acc[j] + part[j], tiny, shift, vmax, ovf)
            out[i, j0 : j0 + w] = acc[:w]
    return out


# ----------------------------------------------------------------------------- exact matmul


@nb.njit
def _dot2_finish(A, B, i, j, lane, S, C, AB, g, k, odd, lo_end, hi_end, zero):
    """dot2_bounds' result for element (i, j) from its column's sums (lane of S, C, AB)."""
    if not AB[lane] > 0.0:  # every product zero (or NaN, or underflowed): the zero flags
        all_zero = all_neg_zero = True
        for t in range(k):
            a = A[i, t]
            b = B[t, j]
            if a == 0.0 or b == 0.0:
                if math.copysign(1.0, a) == math.copysign(1.0, b):
                    all_neg_zero = False
            else:
                all_zero = False
                all_neg_zero = False
        if all_zero:
            zero[i, j] = 2 if (all_neg_zero and k > 0) else 1
    err = 8.0 * g * g * AB[lane] + 4.0 * k * 5e-324
    h, lo = two_sum(S[lane], C[lane])
    if odd:
        lo_end[i, j] = odd_add64_scalar(h, lo - err)
        hi_end[i, j] = odd_add64_scalar(h, lo + err)
    else:
        lo_end[i, j] = h + (lo - err)
        hi_end[i, j] = h + (lo + err)


@_jit
def dot2_bounds(A, B, odd):
    """Interval ends for each exact dot product A[i] . B[:, j] (float64 inputs, B as (k, n)),
    via Dot2.

    Products are split error-free with a hardware fma (TwoProduct) and accumulated with TwoSum
    into hi + lo (Ogita, Rump & Oishi, "Accurate sum and dot product", 2005). With
    err = 8 * gamma_k**2 * sum|p| + 4k * 2**-1074 (a generous bound on |hi + lo - exact|,
    including underflow of the product errors), the exact value lies in [lo_end, hi_end],
    each end being the exact hi + lo -/+ err rounded to nearest in float64, or (odd=True) to odd
    so that a further rounding to a narrower format is correct. Where both ends round to the
    same value in the target format, that value is the correctly rounded result.
    zero[i, j]: 1 if every product is exactly +/-0 with at least one +0 (result +0.0), 2 if all
    are -0 (result -0.0), else 0. Non-finite inputs give non-finite ends: the caller falls back.

    A row of A runs against COLUMNS columns at once, each step a loop over the columns without
    a branch (SIMD lanes); each element's operations are those of one element alone, in order.
    The zero flags are looked at only where sum|p| is not positive (a positive sum has a
    product of two nonzero factors).
    """
    m, k = A.shape
    n = B.shape[1]
    lo_end = np.empty((m, n))
    hi_end = np.empty((m, n))
    zero = np.zeros((m, n), dtype=np.int8)
    g = k * 2.0**-53 / (1.0 - k * 2.0**-53)
    S = np.empty(COLUMNS)
    C = np.empty(COLUMNS)
    AB = np.empty(COLUMNS)
    for j0 in range(0, n, COLUMNS):
        w = min(COLUMNS, n - j0)
        for i in range(m):
            S[:w] = 0.0
            C[:w] = 0.0
            AB[:w] = 0.0
            for t in range(k):
                a = A[i, t]
                row = B[t, j0 : j0 + w]
                for j in range(w):
                    b = row[j]
                    p = a * b
                    e = hw_fma(a, b, -p)
                    s, q = two_sum(S[j], p)
                    S[j] = s
                    C[j] = C[j] + (q + e)
                    AB[j] = AB[j] + abs(p)
            for j in range(w):
                _dot2_finish(A, B, i, j0 + j, j, S, C, AB, g, k, odd, lo_end, hi_end, zero)
    return lo_end, hi_end, zero
