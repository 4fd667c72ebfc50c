"""Compiled (numba) loops for the evaluation orders. Private: use fpexplore.orders.

Arithmetic model
----------------
Every kernel computes in a *compute type* given by the type of its ``z`` argument (a +0.0):

* float32 ``z``: native IEEE single arithmetic (the float32 accumulator).
* float64 ``z``: IEEE double arithmetic, followed after every operation by a rounding to the
  accumulator format described by ``rp = (p, emin, vmax)``; ``p == 0`` means no rounding
  (the float64 accumulator). float16 and bfloat16 accumulators use this: their sums and
  products are exact or innocuously double-rounded in float64 (53 >= 2*11 + 2) and then
  rounded once to the format; fused multiply-adds add the exact product with round-to-odd
  in float64 before that one rounding. So each operation is correctly rounded.

Products of two inputs are rounded to the accumulator format; ``fused`` steps use a hardware
(or libm) fused multiply-add through the ``llvm.fma`` intrinsic for float32/float64, which is
correctly rounded; they are cross-checked against fpexplore.exact.fma in the tests.
Kernels never use fast-math, so no operation is reassociated or contracted by the compiler.

The shared scalar numerics (TwoSum, rounding to a precision, round to odd, the float32
flush) are those of :mod:`fpexplore.numerics`, registered with numba by
:mod:`fpexplore._numba` (``numerics.JITTABLE``): one source for Python and the kernels. Its
:func:`cached_njit` keys numba's on-disk cache also on a digest of fpexplore/numerics.py
(numba checks only the kernel's own file), and its ``hw_fma`` is the ``llvm.fma`` intrinsic.
"""

from __future__ import annotations

import numba as nb
import numpy as np
from numba import types
from numba.extending import overload

from .._numba import cached_njit, hw_fma
from ..numerics import (
    flush_subnormals,
    odd_add64_scalar,
    round_to_precision,
)


def _jit(func):
    return cached_njit(func, nogil=True)


# ----------------------------------------------------------------------------- scalar helpers


@nb.njit
def _round_rp(v, rp):
    """Round a float64 to nearest-even at precision rp[0], min exponent rp[1], max rp[2]."""
    return round_to_precision(v, rp[0], rp[1], rp[2])


def _rnd(v, rp):
    """Round a compute-type value to the accumulator format (float32: nothing to do)."""


@overload(_rnd)
def _rnd_impl(v, rp):
    if v == types.float32:
        return lambda v, rp: v
    return lambda v, rp: _round_rp(v, rp)


def _round_to(v, rp):
    """Round a compute-type value to another format (rp), keeping the compute type."""


@overload(_round_to)
def _round_to_impl(v, rp):
    if v == types.float32:
        return lambda v, rp: np.float32(_round_rp(np.float64(v), rp))
    return lambda v, rp: _round_rp(v, rp)


def cast(v, z):
    """v converted to the type of z (exact: storage values are representable)."""


@overload(cast)
def _cast_impl(v, z):
    if z == types.float32:
        return lambda v, z: np.float32(v)
    return lambda v, z: np.float64(v)


def _fma(a, b, c, rp):
    """Correctly rounded a*b + c in the accumulator format."""


@overload(_fma)
def _fma_impl(a, b, c, rp):
    if a == types.float32:
        return lambda a, b, c, rp: hw_fma(a, b, c)

    def impl(a, b, c, rp):
        if rp[0] == 0:
            return hw_fma(a, b, c)
        # 16-bit values: a*b is exact in float64; the sum is rounded to odd in float64 (53 >=
        # p + 2 bits), then once to the format. Rounding it to nearest first would double
        # round where a*b lies on a midpoint of the format and c is tiny (bfloat16 has the
        # exponent range for that: 2^-100 + 1.5 * 0.6796875 must round up, not tie to even).
        return _round_rp(odd_add64_scalar(a * b, c), rp)

    return impl


@nb.njit
def _add(a, b, rp):
    return _rnd(a + b, rp)


@nb.njit
def _term(x, y, i, has_y, z, rp):
    """Term i: x[i], or the product x[i]*y[i] rounded to the accumulator format."""
    if has_y:
        return _rnd(cast(x[i], z) * cast(y[i], z), rp)
    return cast(x[i], z)


@nb.njit
def _flush_if(v, on):
    """CUDA -ftz=true for float32 (on): subnormal operands and results become signed zeros."""
    return flush_subnormals(v) if on else v


# ----------------------------------------------------------------------------- 1-D orders


@_jit
def sequential(x, y, has_y, fused, z, rp, lo, hi, step):
    """acc = t[first]; acc = acc + t[i] for the rest of range(lo, hi, step) (fused: fma)."""
    first = True
    acc = z
    for i in range(lo, hi, step):
        if first:
            acc = _term(x, y, i, has_y, z, rp)
            first = False
        elif fused:
            acc = _fma(cast(x[i], z), cast(y[i], z), acc, rp)
        else:
            acc = _add(acc, _term(x, y, i, has_y, z, rp), rp)
    return acc


# The two pairwise orders walk their recursion trees with explicit stacks: numba's cache
# (cache=True) can crash when it loads a recursive function called from another one.
STACK = 192  # frames; the trees are at most ~2*log2(n) + 2 deep


@_jit
def _pairwise_leaf(x, y, has_y, z, rp, lo, n):
    """Textbook pairwise for n <= 4 terms (the same tree, spelled out)."""
    if n <= 0:
        return z
    if n == 1:
        return _term(x, y, lo, has_y, z, rp)
    if n == 2:
        return _add(_term(x, y, lo, has_y, z, rp), _term(x, y, lo + 1, has_y, z, rp), rp)
    if n == 3:
        t12 = _add(_term(x, y, lo + 1, has_y, z, rp), _term(x, y, lo + 2, has_y, z, rp), rp)
        return _add(_term(x, y, lo, has_y, z, rp), t12, rp)
    t01 = _add(_term(x, y, lo, has_y, z, rp), _term(x, y, lo + 1, has_y, z, rp), rp)
    t23 = _add(_term(x, y, lo + 2, has_y, z, rp), _term(x, y, lo + 3, has_y, z, rp), rp)
    return _add(t01, t23, rp)


@_jit
def halving_step(frames, nf, leaf_max, grain):
    """One step of a recursive halving walked with an explicit stack (numba's cache can crash
    loading a recursive function called from another one). ``frames[k] = (a, m, done)``: the
    range ``[a, a + m)``; start with ``frames[0] = (lo, n, 0)``, ``nf = 1``. A range with
    ``m <= leaf_max`` is a leaf; a larger one splits at ``((m // 2) // grain) * grain``, its
    left part first. Returns ``(nf, a, m)``: ``m > 0`` a leaf to evaluate, ``m == 0`` "add the
    last two values (left + right)", ``m < 0`` done."""
    while nf > 0:
        nf -= 1
        a = frames[nf, 0]
        m = frames[nf, 1]
        if m <= leaf_max:
            return nf, a, m
        if frames[nf, 2] == 1:
            return nf, a, 0
        left = ((m // 2) // grain) * grain
        frames[nf, 2] = 1
        frames[nf + 1, 0] = a + left
        frames[nf + 1, 1] = m - left
        frames[nf + 1, 2] = 0
        frames[nf + 2, 0] = a
        frames[nf + 2, 1] = left
        frames[nf + 2, 2] = 0
        nf += 3  # the left part is evaluated first, then the right, then their sum
    return nf, 0, -1


@_jit
def _halving(x, y, has_y, z, rp, lo, n, numpy_leaves):
    """Textbook pairwise (S = S(first n//2) + S(rest), leaves of <= 4 terms spelled out) or,
    with numpy_leaves, NumPy's pairwise_sum (leaves of <= 128 terms, splits at n/2 rounded
    down to a multiple of 8)."""
    frames = np.empty((STACK, 3), dtype=np.int64)
    vals = np.full(STACK, z)
    frames[0, 0] = lo
    frames[0, 1] = n
    frames[0, 2] = 0
    nf, nv = 1, 0
    leaf_max, grain = (128, 8) if numpy_leaves else (4, 1)
    while True:
        nf, a, m = halving_step(frames, nf, leaf_max, grain)
        if m < 0:
            return vals[0]
        if m == 0:
            nv -= 1
            vals[nv - 1] = _add(vals[nv - 1], vals[nv], rp)
        else:
            if numpy_leaves:
                vals[nv] = _numpy_block(x, y, has_y, z, rp, a, m)
            else:
                vals[nv] = _pairwise_leaf(x, y, has_y, z, rp, a, m)
            nv += 1


@_jit
def pairwise(x, y, has_y, z, rp, lo, hi):
    """Textbook recursive halving: S(t[lo:hi]) = S(first n//2) + S(rest); S([a]) = a."""
    if hi - lo <= 0:
        return _pairwise_leaf(x, y, has_y, z, rp, lo, 0)
    return _halving(x, y, has_y, z, rp, lo, hi - lo, False)


@_jit
def _numpy_block(x, y, has_y, z, rp, lo, n):
    """NumPy's pairwise_sum for n <= 128 terms (loops_utils.h.src)."""
    if n < 8:
        res = -z
        for i in range(lo, lo + n):
            res = _add(res, _term(x, y, i, has_y, z, rp), rp)
        return res
    r0 = _term(x, y, lo, has_y, z, rp)
    r1 = _term(x, y, lo + 1, has_y, z, rp)
    r2 = _term(x, y, lo + 2, has_y, z, rp)
    r3 = _term(x, y, lo + 3, has_y, z, rp)
    r4 = _term(x, y, lo + 4, has_y, z, rp)
    r5 = _term(x, y, lo + 5, has_y, z, rp)
    r6 = _term(x, y, lo + 6, has_y, z, rp)
    r7 = _term(x, y, lo + 7, has_y, z, rp)
    end = n - n % 8
    i = 8
    while i < end:
        b = lo + i
        r0 = _add(r0, _term(x, y, b, has_y, z, rp), rp)
        r1 = _add(r1, _term(x, y, b + 1, has_y, z, rp), rp)
        r2 = _add(r2, _term(x, y, b + 2, has_y, z, rp), rp)
        r3 = _add(r3, _term(x, y, b + 3, has_y, z, rp), rp)
        r4 = _add(r4, _term(x, y, b + 4, has_y, z, rp), rp)
        r5 = _add(r5, _term(x, y, b + 5, has_y, z, rp), rp)
        r6 = _add(r6, _term(x, y, b + 6, has_y, z, rp), rp)
        r7 = _add(r7, _term(x, y, b + 7, has_y, z, rp), rp)
        i += 8
    res = _add(
        _add(_add(r0, r1, rp), _add(r2, r3, rp), rp),
        _add(_add(r4, r5, rp), _add(r6, r7, rp), rp),
        rp,
    )
    while i < n:
        res = _add(res, _term(x, y, lo + i, has_y, z, rp), rp)
        i += 1
    return res


@_jit
def numpy_pairwise(x, y, has_y, z, rp, lo, n):
    """NumPy's pairwise_sum: blocks of <= 128 as above; larger n split at n/2 rounded down to
    a multiple of 8, the two halves summed and added."""
    if n <= 0:
        return _numpy_block(x, y, has_y, z, rp, lo, 0)
    return _halving(x, y, has_y, z, rp, lo, n, True)


@_jit
def numpy_sum(x, y, has_y, z, rp, out_rp, chunk):
    """np.sum: acc = +0 (output format); per chunk acc = out(acc + pairwise(chunk)).

    The addition is done in the accumulator type and rounded to the output format (float16
    data: float32 pairwise, rounded to half per inner-loop call, as NumPy does).
    """
    n = x.shape[0]
    acc = z
    lo = 0
    while lo < n:
        m = min(chunk, n - lo)
        acc = _round_to(_add(acc, numpy_pairwise(x, y, has_y, z, rp, lo, m), rp), out_rp)
        lo += m
    return acc


@_jit
def blocked(x, y, has_y, fused, z, rp, block):
    """Sequential within blocks of `block` terms, then sequential over the block sums."""
    n = x.shape[0]
    acc = z
    first = True
    for lo in range(0, n, block):
        s = sequential(x, y, has_y, fused, z, rp, lo, min(lo + block, n), 1)
        if first:
            acc = s
            first = False
        else:
            acc = _add(acc, s, rp)
    return acc


@_jit
def tree_partials(x, y, has_y, fused, z, rp, block, strided):
    """Per-block shared-memory tree of a CUDA reduction kernel; the last block is padded with
    +0.0 as threads past the end load 0. Interleaved addressing: t[i] += t[i + s] for
    i % 2s == 0, s = 1, 2, 4...; strided (sequential addressing): t[i] += t[i + h] for i < h,
    h = block/2, block/4, ..., 1. fused (products only): in the first level each thread that
    holds a product fuses it into its addition, t[i] = fma(x[i], y[i], t[i + d])."""
    n = x.shape[0]
    nb_ = (n + block - 1) // block
    out = np.full(nb_, z)
    buf = np.full(block, z)
    fuse = fused and has_y
    for b in range(nb_):
        lo = b * block
        for i in range(block):
            buf[i] = _term(x, y, lo + i, has_y, z, rp) if lo + i < n else z
        if strided:
            h = block // 2
            while h >= 1:
                for i in range(h):
                    if fuse and h == block // 2 and lo + i < n:
                        buf[i] = _fma(cast(x[lo + i], z), cast(y[lo + i], z), buf[i + h], rp)
                    else:
                        buf[i] = _add(buf[i], buf[i + h], rp)
                h //= 2
        else:
            s = 1
            while s < block:
                for i in range(0, block, 2 * s):
                    if fuse and s == 1 and lo + i < n:
                        buf[i] = _fma(cast(x[lo + i], z), cast(y[lo + i], z), buf[i + 1], rp)
                    else:
                        buf[i] = _add(buf[i], buf[i + s], rp)
                s *= 2
        out[b] = buf[0]
    return out


@_jit
def tree_eval(x, y, has_y, fused, z, rp, prog):
    """A revealed tree's postfix program (fpexplore/orders/trees.py; additions of two only):
    token i >= 0 pushes term i (i >= n: term i - n, a product fused into its addition when
    fused is on), -2 adds the two top values: fma(x[l], y[l], other) where one is a fused
    product l, else a rounded addition."""
    n = x.shape[0]
    vals = np.full(prog.shape[0], z)
    leaf = np.full(prog.shape[0], -1)
    sp = 0
    for k in range(prog.shape[0]):
        t = prog[k]
        if t >= 0:
            i = t - n if t >= n else t
            vals[sp] = _term(x, y, i, has_y, z, rp)
            leaf[sp] = i if (t >= n and fused and has_y) else -1
            sp += 1
        else:
            a, b = vals[sp - 2], vals[sp - 1]
            la, lb = leaf[sp - 2], leaf[sp - 1]
            sp -= 2
            if la >= 0:
                v = _fma(cast(x[la], z), cast(y[la], z), b, rp)
            elif lb >= 0:
                v = _fma(cast(x[lb], z), cast(y[lb], z), a, rp)
            else:
                v = _add(a, b, rp)
            vals[sp] = v
            leaf[sp] = -1
            sp += 1
    return vals[0]


@_jit
def combine(values, z, rp, order, ftz):
    """acc = +0.0; acc = acc + values[order[k]] for k in turn (atomicAdd onto a zeroed result).
    ftz: float32 atomicAdd on global memory flushes subnormal operands and results to signed
    zeros whatever the compiler flags (CUDA Programming Guide, "Floating-Point Standard";
    PTX ISA, atom: "atom.add.f32 ... flushes subnormal inputs and results")."""
    acc = z
    for k in range(order.shape[0]):
        acc = _flush_if(_add(acc, _flush_if(values[order[k]], ftz), rp), ftz)
    return acc


@_jit
def cupy_kernel(x, y, has_y, fused, z, rp, block_size, ftz):
    """CuPy's own reduction kernel for a full reduction (cupy/_core/_reduction.pyx): one block;
    lane m sums t[m], t[m+P], ... onto +0.0 (P = block_size / block_stride); then a shared-memory
    tree with strides P/2, ..., 1. ftz: CuPy compiles with -ftz=true (float32 only)."""
    n = x.shape[0]
    if n == 0:
        return z
    v = max(1, block_size // n)
    bstride = 1
    while bstride * 2 <= v:
        bstride *= 2
    P = block_size // bstride
    s = np.full(P, z)  # lane m adds t[m], t[m+P], ... onto +0.0, in that order
    for j in range(n):
        m = j % P
        if fused:
            s[m] = _flush_if(
                _fma(_flush_if(cast(x[j], z), ftz), _flush_if(cast(y[j], z), ftz), s[m], rp), ftz
            )
        else:
            t = _flush_if(_term(x, y, j, has_y, z, rp), ftz)
            s[m] = _flush_if(_add(s[m], t, rp), ftz)
    h = P // 2
    while h >= 1:
        for t in range(h):
            s[t] = _flush_if(_add(s[t], s[t + h], rp), ftz)
        h //= 2
    return s[0]


@_jit
def kahan(x, y, has_y, fused, z, rp):
    """Kahan (Higham, Alg. 4.2): s = t0; c = 0; y = t_i - c; u = s + y; c = (u - s) - y; s = u.
    fused: y = fma(a_i, b_i, -c)."""
    n = x.shape[0]
    if n == 0:
        return z
    s = _term(x, y, 0, has_y, z, rp)
    c = z
    for i in range(1, n):
        if fused:
            yy = _fma(cast(x[i], z), cast(y[i], z), -c, rp)
        else:
            yy = _rnd(_term(x, y, i, has_y, z, rp) - c, rp)
        u = _add(s, yy, rp)
        c = _rnd(_rnd(u - s, rp) - yy, rp)
        s = u
    return s


@_jit
def neumaier(x, y, has_y, z, rp):
    """Neumaier (Higham's Kahan-Babuska): s = t0; c = 0; u = s + t; c += (s - u) + t if
    |s| >= |t| else (t - u) + s; s = u; result s + c."""
    n = x.shape[0]
    if n == 0:
        return z
    s = _term(x, y, 0, has_y, z, rp)
    c = z
    for i in range(1, n):
        t = _term(x, y, i, has_y, z, rp)
        u = _add(s, t, rp)
        if abs(s) >= abs(t):
            c = _add(c, _add(_rnd(s - u, rp), t, rp), rp)
        else:
            c = _add(c, _add(_rnd(t - u, rp), s, rp), rp)
        s = u
    return _add(s, c, rp)


@_jit
def permutation(n, seed):
    """A seeded random permutation of range(n): Fisher-Yates driven by SplitMix64.

    Deterministic on every platform (integer arithmetic only); NumPy's Generator.permutation
    is several times slower at 10^6 elements.
    """
    perm = np.arange(n)
    state = np.uint64(seed) * np.uint64(0x9E3779B97F4A7C15) + np.uint64(0x632BE59BD9B4E019)
    for i in range(n - 1, 0, -1):
        state += np.uint64(0x9E3779B97F4A7C15)
        r = state
        r = (r ^ (r >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        r = (r ^ (r >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        r = r ^ (r >> np.uint64(31))
        j = np.int64(r % np.uint64(i + 1))
        perm[i], perm[j] = perm[j], perm[i]
    return perm


@_jit
def terms(x, y, has_y, z, rp):
    """All terms as an array of the compute type."""
    n = x.shape[0]
    out = np.full(n, z)
    for i in range(n):
        out[i] = _term(x, y, i, has_y, z, rp)
    return out


# ----------------------------------------------------------------------------- CUB


@_jit
def _cub_thread_reduce(v, m, tree, rp):
    """ThreadReduce over v[0:m]: binary tree (CCCL >= 2.8) or sequential (CCCL <= 2.6)."""
    if not tree:
        r = v[0]
        for k in range(1, m):
            r = _add(r, v[k], rp)
        return r
    s = 1
    while s < m:
        for j in range(0, m - s, 2 * s):
            v[j] = _add(v[j], v[j + s], rp)
        s *= 2
    return v[0]


@_jit
def _cub_block_reduce(agg, num_valid, rp, warp):
    """BLOCK_REDUCE_WARP_REDUCTIONS: shfl_down offsets 1..16 per warp, then warps in order."""
    bt = agg.shape[0]
    full = num_valid >= bt
    result = agg[0]
    for k in range(bt // 32):
        nvalid = 32 if full else max(0, min(32, num_valid - 32 * k))
        last = nvalid - 1
        for i in range(32):
            warp[i] = agg[32 * k + i]
        off = 1
        while off <= 16:
            # all lanes shuffle at once: ascending i reads warp[i + off] before it is updated
            for i in range(32):
                if i + off <= last:
                    warp[i] = _add(warp[i + off], warp[i], rp)
            off *= 2
        if k == 0:
            result = warp[0]
        elif full or 32 * k < num_valid:
            result = _add(result, warp[0], rp)
    return result


@_jit
def _cub_consume(v, begin, end, stride, bt, ipt, vec, vectorized, tree, z, rp, agg, items, warp):
    """AgentReduce::ConsumeRange for one thread block (strip-mined tiles)."""
    tile = bt * ipt
    off = begin
    if end - off < tile:
        for t in range(bt):
            a = z
            first = True
            for j in range(off + t, end, bt):
                if first:
                    a = v[j]
                    first = False
                else:
                    a = _add(a, v[j], rp)
            agg[t] = a
        return _cub_block_reduce(agg, end - off, rp, warp)
    for t in range(bt):
        _cub_items(v, off, t, bt, ipt, vec, vectorized, items, 0)
        agg[t] = _cub_thread_reduce(items, ipt, tree, rp)
    if end - off >= stride:
        off += stride
        broke = False
        while off <= end - tile:
            for t in range(bt):
                items[0] = agg[t]
                _cub_items(v, off, t, bt, ipt, vec, vectorized, items, 1)
                agg[t] = _cub_thread_reduce(items, ipt + 1, tree, rp)
            if end - off < stride:
                broke = True
                break
            off += stride
        if not broke and off < end:
            for t in range(bt):
                a = agg[t]
                for j in range(off + t, end, bt):
                    a = _add(a, v[j], rp)
                agg[t] = a
    return _cub_block_reduce(agg, bt, rp, warp)


@_jit
def _cub_items(v, off, t, bt, ipt, vec, vectorized, items, at):
    if vectorized:
        k = at
        for i in range(ipt // vec):
            base = off + i * bt * vec + t * vec
            for q in range(vec):
                items[k] = v[base + q]
                k += 1
    else:
        for i in range(ipt):
            items[at + i] = v[off + t + i * bt]


@_jit
def cub_sum(v, z, rp, bt, ipt, vec, aligned, tree, max_blocks):
    """cub::DeviceReduce::Sum as read from CCCL source (a hypothesis until a GPU confirms it)."""
    n = v.shape[0]
    if n == 0:
        return z
    tile = bt * ipt
    agg = np.full(bt, z)
    items = np.full(ipt + 1, z)
    warp = np.full(32, z)
    if n <= tile:
        r = _cub_consume(v, 0, n, tile, bt, ipt, vec, aligned, tree, z, rp, agg, items, warp)
        return _add(z, r, rp)
    g = min((n + tile - 1) // tile, max_blocks)
    part = np.full(g, z)
    for b in range(g):
        part[b] = _cub_consume(
            v, b * tile, n, g * tile, bt, ipt, vec, aligned, tree, z, rp, agg, items, warp
        )
    r = _cub_consume(part, 0, g, tile, bt, ipt, vec, True, tree, z, rp, agg, items, warp)
    return _add(z, r, rp)


# ----------------------------------------------------------------------------- matmul


# order codes for reduce_code (OrderSpec.matmul_code in registry.py)
@_jit
def reduce_code(code, x, y, fused, z, rp, block):
    """One order over the products x[i]*y[i] (used per output element by matmul)."""
    n = x.shape[0]
    if code == 0:
        return sequential(x, y, True, fused, z, rp, 0, n, 1)
    if code == 1:
        return sequential(x, y, True, fused, z, rp, n - 1, -1, -1)
    if code == 2:
        return pairwise(x, y, True, z, rp, 0, n)
    if code == 3:
        return blocked(x, y, True, fused, z, rp, block)
    if code == 4 or code == 5:
        parts = tree_partials(x, y, True, fused, z, rp, block, code == 5)
        return combine(parts, z, rp, np.arange(parts.shape[0]), False)
    if code == 6:
        return kahan(x, y, True, fused, z, rp)
    return neumaier(x, y, True, z, rp)


@nb.njit
def _sequential4(x, Bt, j, fused, z, rp, out, i):
    """out[i, j:j+4]: the sequential order of four output elements, run in step. The four
    accumulations are independent chains, so the CPU overlaps them (one chain alone waits on
    every rounding of a 16-bit format); each is exactly ``sequential`` of its column."""
    k = x.shape[0]
    y0, y1, y2, y3 = Bt[j], Bt[j + 1], Bt[j + 2], Bt[j + 3]
    if k == 0:
        a0 = a1 = a2 = a3 = z
    else:
        a0 = _term(x, y0, 0, True, z, rp)
        a1 = _term(x, y1, 0, True, z, rp)
        a2 = _term(x, y2, 0, True, z, rp)
        a3 = _term(x, y3, 0, True, z, rp)
        for t in range(1, k):
            xt = cast(x[t], z)
            if fused:
                a0 = _fma(xt, cast(y0[t], z), a0, rp)
                a1 = _fma(xt, cast(y1[t], z), a1, rp)
                a2 = _fma(xt, cast(y2[t], z), a2, rp)
                a3 = _fma(xt, cast(y3[t], z), a3, rp)
            else:
                a0 = _add(a0, _rnd(xt * cast(y0[t], z), rp), rp)
                a1 = _add(a1, _rnd(xt * cast(y1[t], z), rp), rp)
                a2 = _add(a2, _rnd(xt * cast(y2[t], z), rp), rp)
                a3 = _add(a3, _rnd(xt * cast(y3[t], z), rp), rp)
    out[i, j], out[i, j + 1], out[i, j + 2], out[i, j + 3] = a0, a1, a2, a3


@nb.njit
def _kahan4(x, Bt, j, fused, z, rp, out, i):
    """out[i, j:j+4]: ``kahan`` of four output elements, in step (see _sequential4); the
    steps are written out, as in ``kahan``, one statement per chain."""
    k = x.shape[0]
    y0, y1, y2, y3 = Bt[j], Bt[j + 1], Bt[j + 2], Bt[j + 3]
    if k == 0:
        s0 = s1 = s2 = s3 = z
    else:
        s0 = _term(x, y0, 0, True, z, rp)
        s1 = _term(x, y1, 0, True, z, rp)
        s2 = _term(x, y2, 0, True, z, rp)
        s3 = _term(x, y3, 0, True, z, rp)
        c0 = c1 = c2 = c3 = z
        for t in range(1, k):
            xt = cast(x[t], z)
            if fused:
                v0 = _fma(xt, cast(y0[t], z), -c0, rp)
                v1 = _fma(xt, cast(y1[t], z), -c1, rp)
                v2 = _fma(xt, cast(y2[t], z), -c2, rp)
                v3 = _fma(xt, cast(y3[t], z), -c3, rp)
            else:
                v0 = _rnd(_rnd(xt * cast(y0[t], z), rp) - c0, rp)
                v1 = _rnd(_rnd(xt * cast(y1[t], z), rp) - c1, rp)
                v2 = _rnd(_rnd(xt * cast(y2[t], z), rp) - c2, rp)
                v3 = _rnd(_rnd(xt * cast(y3[t], z), rp) - c3, rp)
            u0 = _rnd(s0 + v0, rp)
            u1 = _rnd(s1 + v1, rp)
            u2 = _rnd(s2 + v2, rp)
            u3 = _rnd(s3 + v3, rp)
            c0 = _rnd(_rnd(u0 - s0, rp) - v0, rp)
            c1 = _rnd(_rnd(u1 - s1, rp) - v1, rp)
            c2 = _rnd(_rnd(u2 - s2, rp) - v2, rp)
            c3 = _rnd(_rnd(u3 - s3, rp) - v3, rp)
            s0, s1, s2, s3 = u0, u1, u2, u3
    out[i, j], out[i, j + 1], out[i, j + 2], out[i, j + 3] = s0, s1, s2, s3


@_jit
def matmul(A, Bt, code, fused, z, rp, block, split):
    """out[i, j] = order over k of A[i, k] * Bt[j, k]; with split > 1 the k range is cut into
    `split` contiguous slices whose results are added in slice order (split-K). The
    sequential and Kahan orders compute four columns in step (_sequential4, _kahan4).
    fpx.matmul calls it for float32 and float64 accumulators; float16 and bfloat16 ones run
    matmul_columns (the same bits, on SIMD lanes)."""
    m = A.shape[0]
    n = Bt.shape[0]
    k = A.shape[1]
    out = np.full((m, n), z)
    four = split <= 1 and (code == 0 or code == 6)
    for i in range(m):
        x = A[i]
        done = 0
        if four:
            while done + 4 <= n:
                if code == 0:
                    _sequential4(x, Bt, done, fused, z, rp, out, i)
                else:
                    _kahan4(x, Bt, done, fused, z, rp, out, i)
                done += 4
        for j in range(done, n):
            y = Bt[j]
            if split <= 1:
                out[i, j] = reduce_code(code, x, y, fused, z, rp, block)
            else:
                acc = z
                for s in range(split):
                    lo = s * k // split
                    hi = (s + 1) * k // split
                    part = reduce_code(code, x[lo:hi], y[lo:hi], fused, z, rp, block)
                    acc = part if s == 0 else _add(acc, part, rp)
                out[i, j] = acc
    return out
