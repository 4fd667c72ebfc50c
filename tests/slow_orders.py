"""Slow, independent definitions of every evaluation order, written from their definitions
(docs/orders.md) and the research notes (docs/research/), never calling fpexplore's arithmetic.

Arithmetic is done with NumPy/ml_dtypes *scalars* of the accumulator format (np.float16 and
ml_dtypes.bfloat16 scalar operations round each result to the format; float64 uses Python
floats), and fused multiply-adds with the Fraction oracle. Terms are Python lists.
"""

from __future__ import annotations

import math

import ml_dtypes
import numpy as np

import oracle

SCALAR = {
    "float16": np.float16,
    "bfloat16": ml_dtypes.bfloat16,
    "float32": np.float32,
    "float64": float,
}


class Arith:
    """+, * and fma rounded to the accumulator format `fmt`; optional CUDA float32 FTZ."""

    def __init__(self, fmt: str, ftz: bool = False):
        self.fmt = fmt
        self.T = SCALAR[fmt]
        self.ftz = ftz and fmt == "float32"

    def _f(self, v):
        if self.ftz and v != 0 and abs(float(v)) < 2.0**-126:
            return self.T(math.copysign(0.0, float(v)))
        return v

    def conv(self, v):
        with np.errstate(all="ignore"):
            return self._f(self.T(v))

    def zero(self):
        return self.T(0.0)

    def add(self, a, b):
        with np.errstate(all="ignore"):
            return self._f(self.T(self._f(a) + self._f(b)))

    def sub(self, a, b):
        with np.errstate(all="ignore"):
            return self.T(a - b)

    def mul(self, a, b):
        with np.errstate(all="ignore"):
            return self._f(self.T(self.T(a) * self.T(b)))

    def fma(self, a, b, c):
        r = oracle.fma(float(self._f(a)), float(self._f(b)), float(self._f(c)), self.fmt)
        return self._f(self.T(r))


# ----------------------------------------------------------------------------- sums


def sequential(t, ar):
    if not t:
        return ar.zero()
    acc = t[0]
    for v in t[1:]:
        acc = ar.add(acc, v)
    return acc


def pairwise(t, ar):
    if not t:
        return ar.zero()
    if len(t) == 1:
        return t[0]
    h = len(t) // 2
    return ar.add(pairwise(t[:h], ar), pairwise(t[h:], ar))


def numpy_pairwise(t, ar):
    n = len(t)
    if n < 8:
        res = ar.T(-0.0)
        for v in t:
            res = ar.add(res, v)
        return res
    if n <= 128:
        r = list(t[:8])
        i = 8
        while i < n - n % 8:
            for k in range(8):
                r[k] = ar.add(r[k], t[i + k])
            i += 8
        a = ar.add(ar.add(r[0], r[1]), ar.add(r[2], r[3]))
        b = ar.add(ar.add(r[4], r[5]), ar.add(r[6], r[7]))
        res = ar.add(a, b)
        for v in t[n - n % 8 :]:
            res = ar.add(res, v)
        return res
    n2 = n // 2
    n2 -= n2 % 8
    return ar.add(numpy_pairwise(t[:n2], ar), numpy_pairwise(t[n2:], ar))


def numpy_sum(t, ar, out_fmt, chunk=None):
    """acc = +0 (output format); acc = out(acc + pairwise(chunk)) per chunk."""
    out = Arith(out_fmt)
    acc = out.zero()
    chunk = chunk or max(len(t), 1)
    for lo in range(0, len(t), chunk):
        acc = out.conv(ar.add(ar.conv(acc), numpy_pairwise(t[lo : lo + chunk], ar)))
    return acc


def blocked(t, ar, block):
    sums = [sequential(t[lo : lo + block], ar) for lo in range(0, len(t), block)]
    return sequential(sums, ar)


def tree_block(vals, ar, strided, fused=None):
    """One block's shared-memory tree; fused = (a, b) lists of the block's factors (None past
    the end): the first level's addition fuses the left operand's own product,
    s[i] = fma(a[i], b[i], s[i + d])."""
    s = list(vals)
    b = len(s)

    def first(i, j):
        if fused is not None and fused[0][i] is not None:
            return ar.fma(fused[0][i], fused[1][i], s[j])
        return ar.add(s[i], s[j])

    if strided:
        h = b // 2
        while h >= 1:
            for i in range(h):
                s[i] = first(i, i + h) if h == b // 2 else ar.add(s[i], s[i + h])
            h //= 2
    else:
        k = 1
        while k < b:
            for i in range(0, b, 2 * k):
                s[i] = first(i, i + k) if k == 1 else ar.add(s[i], s[i + k])
            k *= 2
    return s[0]


def tree(t, ar, block, strided=False, order=None, combine_ar=None, fused=None):
    """Block trees, then the block results added onto +0 in `order` with `combine_ar`'s
    arithmetic (atomics: float32 atomicAdd on global memory flushes subnormals). fused =
    (a, b): the factors of the products t, fused into the first tree level (tree_block)."""
    parts = []
    for lo in range(0, len(t), block):
        vals = list(t[lo : lo + block])
        pad = block - len(vals)
        vals += [ar.zero()] * pad
        f = None
        if fused is not None:
            f = tuple(list(v[lo : lo + block]) + [None] * pad for v in fused)
        parts.append(tree_block(vals, ar, strided, f))
    order = range(len(parts)) if order is None else order
    car = combine_ar or ar
    acc = car.zero()
    for k in order:
        acc = car.add(acc, parts[k])
    return acc


def cupy_kernel(t, ar, block_size=512, a=None, b=None):
    """cupy/_core/_reduction.pyx full reduction; with a, b given: fused lanes (fma)."""
    n = len(t) if a is None else len(a)
    if n == 0:
        return ar.zero()
    v = max(1, block_size // n)
    bstride = 1 << (v.bit_length() - 1)
    P = block_size // bstride
    s = [ar.zero() for _ in range(P)]
    for m in range(P):
        for j in range(m, n, P):
            s[m] = ar.add(s[m], t[j]) if a is None else ar.fma(a[j], b[j], s[m])
    h = P // 2
    while h >= 1:
        for i in range(h):
            s[i] = ar.add(s[i], s[i + h])
        h //= 2
    return s[0]


def kahan(t, ar, fused=None):
    """Higham Alg. 4.2; fused=(a, b): terms are products and y = fma(a_i, b_i, -c)."""
    if not (t if fused is None else fused[0]):
        return ar.zero()
    s = t[0] if fused is None else ar.mul(fused[0][0], fused[1][0])
    c = ar.zero()
    for i in range(1, len(t) if fused is None else len(fused[0])):
        if fused is None:
            y = ar.sub(t[i], c)
        else:
            y = ar.fma(fused[0][i], fused[1][i], -c)
        u = ar.add(s, y)
        c = ar.sub(ar.sub(u, s), y)
        s = u
    return s


def neumaier(t, ar):
    if not t:
        return ar.zero()
    s = t[0]
    c = ar.zero()
    for v in t[1:]:
        u = ar.add(s, v)
        if abs(float(s)) >= abs(float(v)):
            c = ar.add(c, ar.add(ar.sub(s, u), v))
        else:
            c = ar.add(c, ar.add(ar.sub(v, u), s))
        s = u
    return ar.add(s, c)


# ----------------------------------------------------------------------------- CUB
# From the helper's source reading (docs/research/cupy_cub_sum.md, section 6).


def _thread_reduce(v, ar, tree_):
    v = list(v)
    if not tree_:
        r = v[0]
        for e in v[1:]:
            r = ar.add(r, e)
        return r
    i = 1
    while i < len(v):
        for j in range(0, len(v) - i, 2 * i):
            v[j] = ar.add(v[j], v[j + i])
        i *= 2
    return v[0]


def _warp_reduce(vals, nvalid, ar):
    v = list(vals)
    last = nvalid - 1
    for off in (1, 2, 4, 8, 16):
        v = [ar.add(v[i + off], v[i]) if i + off <= last else v[i] for i in range(32)]
    return v[0]


def _block_reduce(agg, num_valid, ar):
    bt = len(agg)
    full = num_valid >= bt
    w = [
        _warp_reduce(
            agg[32 * k : 32 * k + 32], 32 if full else max(0, min(32, num_valid - 32 * k)), ar
        )
        for k in range(bt // 32)
    ]
    r = w[0]
    for k in range(1, bt // 32):
        if full or 32 * k < num_valid:
            r = ar.add(r, w[k])
    return r


def _consume(x, begin, end, stride, bt, ipt, vec, vectorized, tree_, ar):
    tile = bt * ipt

    def items(o, t):
        if vectorized:
            return [
                x[o + i * bt * vec + t * vec + k] for i in range(ipt // vec) for k in range(vec)
            ]
        return [x[o + t + i * bt] for i in range(ipt)]

    def tail(o, t, a, first):
        for j in range(o + t, end, bt):
            a = x[j] if first and j == o + t else ar.add(a, x[j])
        return a

    off = begin
    if end - off < tile:
        return _block_reduce([tail(off, t, ar.zero(), True) for t in range(bt)], end - off, ar)
    agg = [_thread_reduce(items(off, t), ar, tree_) for t in range(bt)]
    if end - off >= stride:
        off += stride
        while off <= end - tile:
            agg = [_thread_reduce([agg[t]] + items(off, t), ar, tree_) for t in range(bt)]
            if end - off < stride:
                break
            off += stride
        else:
            if off < end:
                agg = [tail(off, t, agg[t], False) for t in range(bt)]
    return _block_reduce(agg, bt, ar)


def cub(x, ar, max_blocks, bt=256, ipt=16, vec=4, aligned=True, tree_=True):
    n = len(x)
    tile = bt * ipt
    if n == 0:
        return ar.zero()
    if n <= tile:
        return ar.add(ar.zero(), _consume(x, 0, n, tile, bt, ipt, vec, aligned, tree_, ar))
    g = min(-(-n // tile), max_blocks)
    part = [_consume(x, b * tile, n, g * tile, bt, ipt, vec, aligned, tree_, ar) for b in range(g)]
    return ar.add(ar.zero(), _consume(part, 0, g, tile, bt, ipt, vec, True, tree_, ar))
