"""The NumPy path of fpexplore.orders.matrix_core.amd_blocks as it was before the numba kernel
(fpexplore/orders/_matrix_core_kernels.py), kept as a second reference: it loops over the
blocks of K with NumPy over every element at once (fast for many short products, slow for long
K). tests/test_matrix_core_kernel.py checks the kernel against it bit for bit. The rules are
those of matrix_core's docstring.
"""

from __future__ import annotations

import math

import numpy as np

from fpexplore.formats import format_info
from fpexplore.numerics import flush_subnormals, nudge_to_odd_scalar

__all__ = ["amd_blocks"]

_F32_TINY = float(np.finfo(np.float32).tiny)
_LIMIT = 2.0**128  # a product this large overflows the float32 output's exponent range
_EMPTY = -1024  # the exponent of a group without a nonzero product


def significands(x64: np.ndarray, precision: int, emin: int) -> tuple[np.ndarray, np.ndarray]:
    """x = m * 2**(e - precision + 1) with e = max(floor(log2|x|), emin): (m, e) as int64
    (signed m; 0, 0 for zeros and non-finite values)."""
    ok = np.isfinite(x64) & (x64 != 0)
    safe = np.where(ok, x64, 1.0)
    _, e = np.frexp(safe)
    e = np.maximum(e.astype(np.int64) - 1, emin)
    m = np.where(ok, np.ldexp(safe, (precision - 1 - e).astype(np.int32)), 0.0)
    return m.astype(np.int64), np.where(ok, e, 0)


def _shift(m: np.ndarray, s: np.ndarray, floor: bool) -> np.ndarray:
    """m * 2**s for int64 m: exact for s >= 0, else rounded down (floor) or toward zero."""
    left = np.left_shift(m, np.clip(s, 0, 62))
    r = np.clip(-s, 0, 63)
    if floor:
        right = np.right_shift(m, r)  # arithmetic shift: floor
    else:
        right = np.sign(m) * np.right_shift(np.abs(m), r)
    return np.where(s >= 0, left, right)


def _group(m, e, bits, axis_mask):
    """The aligned sum of one group of products (int64 m with ``bits`` fraction bits
    from e): (E, sum at 2**(E - 24)) per element; E = _EMPTY where the group has none."""
    nz = (m != 0) & axis_mask
    E = np.max(np.where(nz, e, _EMPTY), axis=-1)
    sh = e - E[..., None] + 24 - bits
    s = np.sum(np.where(nz, _shift(m, sh, floor=False), 0), axis=-1)
    return E, s


def _join(e1, s1, e2, s2, more=0, drop_below=None):
    """Two aligned sums at 2**(e1 - 24), 2**(e2 - 24): the one with the smaller exponent
    rounded down to the other's grid (the first, when it is smaller, gets ``more`` extra
    bits); an empty group (_EMPTY) adds nothing. Returns (exponent, sum, unit exponent)."""
    first_small = (e1 < e2) & (e1 != _EMPTY)
    E = np.maximum(e1, e2)
    unit = np.where(first_small, e2 - 24 - more, E - 24)
    a = np.where(first_small, _shift(s1, more - (e2 - e1), floor=True), s1)
    b2 = _shift(s2, np.where(first_small, more, np.where(e1 == _EMPTY, 0, e2 - e1)), floor=True)
    if drop_below is not None:  # the second (c) far below the first: truncated, not floored
        far = ~first_small & (e2 < e1 - drop_below)
        b2 = np.where(far, _shift(s2, -(e1 - e2), floor=False), b2)
    b = np.where(e2 == _EMPTY, 0, b2)
    a = np.where(e1 == _EMPTY, 0, a)
    return E, a + b, unit


def _c_parts(c32: np.ndarray, bits: int) -> tuple[np.ndarray, np.ndarray]:
    """c as (ec, signed integer at 2**(ec - bits)), ec = max(floor(log2|c|), -126), -126
    for c = 0."""
    m, e = significands(c32.astype(np.float64), 24, -126)
    e = np.where(m == 0, -126, e)
    return e, _shift(m, np.full(m.shape, bits - 23), floor=False)


def _aligned(P, a4, b4, c, fmt, neab, odd_even):
    """CDNA3: the late-c and odd-even sums of the blocks, as float64 values (rounded)."""
    info = format_info(fmt)
    p, emin = info.precision, info.emin
    am, ae = significands(a4, p, emin)
    bm, be = significands(b4, p, emin)
    m, e = am * bm, ae + be
    bits = 2 * (p - 1) - neab + 1  # product fraction bits relative to 23 + neab
    ce, cint = _c_parts(c, 24)
    everything = np.ones(m.shape, bool)
    if odd_even:
        k = np.arange(m.shape[-1])
        e0, s0 = _group(m, e, bits, k % 2 == 0)
        e1, s1 = _group(m, e, bits, k % 2 == 1)
        E, s, unit = _join(e0, s0, e1, s1)
        E, total, unit = _join(E, s, ce, cint, more=7, drop_below=25)
    else:
        E, s = _group(m, e, bits, everything)
        E, total, unit = _join(E, s, ce, cint, more=7)
    return np.ldexp(total.astype(np.float64), unit.astype(np.int32))


def _pairwise(P, a4, b4, c, fmt):
    """CDNA2: flushed products in a pairwise float32 tree, then c."""
    lo = format_info(fmt).smallest_normal
    keep = (np.abs(a4) >= lo) & (np.abs(b4) >= lo)
    with np.errstate(over="ignore", invalid="ignore"):
        p = np.where(keep, P, 0.0).astype(np.float32)
    p = np.where(np.abs(p) >= _F32_TINY, p, np.float32(0))
    while p.shape[-1] > 1:  # (p0 + p1) + (p2 + p3): neighbours first
        with np.errstate(over="ignore", invalid="ignore"):
            p = flush_subnormals(p[..., 0::2] + p[..., 1::2])
    with np.errstate(over="ignore", invalid="ignore"):
        d = flush_subnormals(flush_subnormals(c.astype(np.float32)) + p[..., 0])
    return d.astype(np.float64)


def _exact(P, c):
    """CDNA1: c + sum(P) exactly, rounded once to nearest-even binary32 (+0 for 0)."""
    out = np.empty(c.shape)
    flat_p = P.reshape(-1, P.shape[-1])
    for i, cv in enumerate(c.reshape(-1)):
        terms = [float(v) for v in flat_p[i] if v != 0]
        if cv != 0:
            terms.append(float(cv))
        if not all(math.isfinite(t) for t in terms):
            out.flat[i] = math.nan  # (a special block: replaced by the caller)
            continue
        s = math.fsum(terms)
        err = math.fsum([*terms, -s])
        with np.errstate(over="ignore"):
            out.flat[i] = float(np.float32(nudge_to_odd_scalar(s, err))) if s else 0.0
    return out


def _special(P, c, limit: bool):
    """(mask, value) of the blocks whose result is NaN or an infinity."""
    over = np.abs(P) >= _LIMIT if limit else np.isinf(P)
    pos = np.any(over & (P > 0), axis=-1) | (c == math.inf)
    neg = np.any(over & (P < 0), axis=-1) | (c == -math.inf)
    nan = np.any(np.isnan(P), axis=-1) | np.isnan(c) | (pos & neg)
    value = np.where(nan, math.nan, np.where(pos, math.inf, -math.inf))
    return nan | pos | neg, value


def amd_blocks(A3, B3, C3, fmt: str, rules, block: int, neab) -> np.ndarray:
    """D = C3 + A3 @ B3 (shapes (n, M, K), (n, K, N), (n, M, N)) by the AMD rules ``rules``
    (gpu_models.Rules) for input format ``fmt``, blocks of ``block`` chained: float64 values."""
    n, M, K = A3.shape
    N = B3.shape[2]
    d = np.array(C3, dtype=np.float64)
    sum_kind = rules.sum_of(fmt, "float32")
    for k0 in range(0, K, block):
        kb = min(block, K - k0)
        a4 = np.zeros((n, M, 1, block))
        b4 = np.zeros((n, 1, N, block))
        a4[..., :kb] = A3[:, :, None, k0 : k0 + kb]
        b4[..., :kb] = np.moveaxis(B3[:, k0 : k0 + kb, :], 1, 2)[:, None]
        a4, b4 = np.broadcast_arrays(a4, b4)
        with np.errstate(invalid="ignore", over="ignore"):
            P = a4 * b4  # exact in float64 (the formats' products have at most 22 bits)
        mask, value = _special(P, d, rules.product_limit)
        safe = ~mask[..., None]
        P0, a0, b0 = (np.where(safe, x, 0.0) for x in (P, a4, b4))  # special blocks: zeros
        c0 = np.where(mask, 0.0, d)
        if sum_kind == "exact":
            r = _exact(P0, c0)
        elif sum_kind == "pairwise":
            r = _pairwise(P0, a0, b0, c0, fmt)
        else:
            with np.errstate(over="ignore"):
                r = _aligned(P0, a0, b0, c0, fmt, neab, sum_kind == "odd-even")
                r = r.astype(np.float32).astype(np.float64)
        d = np.where(mask, value, r)
    return d
