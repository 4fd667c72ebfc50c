"""SIMD-accumulator orders computed: the compiled kernel of the family whose shapes
simd_shapes.py defines (:class:`~.simd_shapes.SimdOrder`; the model is in its docstring), and
:func:`simd_sum`, which runs one shape. The library orders of orders.py hold the
shapes of the real libraries' loops and call :func:`simd_sum` with them.
"""

from __future__ import annotations

import numpy as np

from ..orders import _kernels
from ..orders._kernels import cached_njit
from .simd_shapes import FOLD_CODES, STEP_CODES, TAIL_CODES, SimdOrder, Stage

__all__ = ["SimdOrder", "Stage", "simd_sum"]


# ----------------------------------------------------------------------------- kernels
#
# Arithmetic is done in the type of ``z`` (a +0.0 of float32 or float64): numba's float32
# operations are IEEE single operations (no fast-math, no contraction), float64 ones double.


def _jit(f):
    return cached_njit(f, nogil=True)


@_jit
def _term(x, y, has_y, i, z):
    """x[i], or x[i] * y[i] rounded to the type of z."""
    if has_y:
        return _kernels.cast(x[i], z) * _kernels.cast(y[i], z)
    return _kernels.cast(x[i], z)


@_jit
def _step(acc, x, y, has_y, i, fused, z):
    """acc + term i, or fma(x[i], y[i], acc)."""
    if has_y and fused:
        return _kernels.hw_fma(_kernels.cast(x[i], z), _kernels.cast(y[i], z), acc)
    return acc + _term(x, y, has_y, i, z)


@_jit
def _apply_ops(st, a, w, ops, lo, hi, init, next_lanes):
    """Apply ops[lo:hi] to the state st[:a, :w]; returns the new (a, w)."""
    for q in range(lo, hi):
        op = ops[q]
        if op == 1:  # half: lane j += lane j + w/2
            h = w // 2
            for k in range(a):
                for j in range(h):
                    st[k, j] = st[k, j] + st[k, j + h]
            w = h
        elif op == 2:  # hadd: lane j = lane 2j + lane 2j+1
            h = w // 2
            for k in range(a):
                for j in range(h):
                    st[k, j] = st[k, 2 * j] + st[k, 2 * j + 1]
            w = h
        elif op == 3:  # pairs: adjacent vectors, recursively
            while a > 1:
                m = a // 2
                for k in range(m):
                    for j in range(w):
                        st[k, j] = st[2 * k, j] + st[2 * k + 1, j]
                if a % 2:
                    for j in range(w):
                        st[m, j] = st[a - 1, j]
                    a = m + 1
                else:
                    a = m
        elif op == 4:  # seq: ((v0 + v1) + v2) + ...
            for k in range(1, a):
                for j in range(w):
                    st[0, j] = st[0, j] + st[k, j]
            a = 1
        else:  # seed: one value -> lane 0 of a vector of next_lanes lanes, others init
            for j in range(1, next_lanes):
                st[0, j] = init
            w = next_lanes
    return a, w


@_jit
def _segment(x, y, has_y, lo, hi, z, init, stages, ops, red, fused, tail, tail_double, tail_fma):
    """One segment x[lo:hi] (see the module docstring). stages rows: lanes, accumulators,
    step, pad, fold_lo, fold_hi (a range of ops); red: the reduce range of ops and the body
    multiple (the stages see only the first (hi - lo) - (hi - lo) % body terms)."""
    hb = hi if red[2] <= 0 else lo + (hi - lo) - (hi - lo) % red[2]
    maxa = 1
    maxw = 1
    for s in range(stages.shape[0]):
        maxa = max(maxa, stages[s, 1])
        maxw = max(maxw, stages[s, 0])
    st = np.full((maxa, maxw), init)
    if stages.shape[0]:
        a = 1 if stages[0, 2] != 0 else stages[0, 1]
        w = stages[0, 0]
    else:
        a = 1
        w = 1
    i = lo
    tmp = np.full(maxa, z)
    for s in range(stages.shape[0]):
        lanes = stages[s, 0]
        accs = stages[s, 1]
        step = stages[s, 2]
        pad = stages[s, 3]
        if s > 0:
            a, w = _apply_ops(st, a, w, ops, stages[s, 4], stages[s, 5], init, lanes)
        blk = lanes * accs
        while hb - i >= blk or (pad and hb - i > 0):
            full = hb - i >= blk
            if step == 0:
                for k in range(accs):
                    for j in range(lanes):
                        e = i + k * lanes + j
                        if full or e < hb:
                            st[k, j] = _step(st[k, j], x, y, has_y, e, fused, z)
                        else:  # zero-padded: acc + (+0) (or fma(0, 0, acc))
                            st[k, j] = st[k, j] + z
            else:
                for j in range(lanes):
                    for k in range(accs):
                        e = i + k * lanes + j
                        tmp[k] = _term(x, y, has_y, e, z) if (full or e < hb) else z
                    if step == 1:  # nested: t0 + (t1 + (... + (t_{A-1} + acc)))
                        v = st[0, j]
                        for k in range(accs - 1, -1, -1):
                            if has_y and fused and (full or i + k * lanes + j < hb):
                                e = i + k * lanes + j
                                v = _kernels.hw_fma(
                                    _kernels.cast(x[e], z), _kernels.cast(y[e], z), v
                                )
                            else:
                                v = tmp[k] + v
                        st[0, j] = v
                    else:  # tree: ((t0 + t1) + (t2 + t3)) + acc
                        m = accs
                        while m > 1:
                            h = m // 2
                            for k in range(h):
                                tmp[k] = tmp[2 * k] + tmp[2 * k + 1]
                            if m % 2:
                                tmp[h] = tmp[m - 1]
                                m = h + 1
                            else:
                                m = h
                        st[0, j] = tmp[0] + st[0, j]
            i += blk
        if i > hb:
            i = hb
    a, w = _apply_ops(st, a, w, ops, red[0], red[1], init, 1)
    r = st[0, 0]
    if tail_double:
        s64 = np.float64(r) if tail == 0 else 0.0
        for e in range(i, hi):
            if tail_fma and has_y:
                s64 = _kernels.hw_fma(np.float64(x[e]), np.float64(y[e]), s64)
            else:
                s64 = s64 + np.float64(_term(x, y, has_y, e, z))
        if tail == 1:
            s64 = s64 + np.float64(r)
        return _kernels.cast(s64, z)
    s = r if tail == 0 else z
    for e in range(i, hi):
        s = _step(s, x, y, has_y, e, tail_fma, z)
    if tail == 1:
        s = s + r
    return s


@_jit
def _part(x, y, has_y, lo, hi, z, init, stages, ops, red, fused, tail, tdbl, tfma, chunk, block):
    """A thread's part x[lo:hi]: chunks, polars blocks, or one segment."""
    if chunk > 0:
        out = z
        c = lo
        while c < hi:
            e = min(c + chunk, hi)
            out = out + _segment(
                x, y, has_y, c, e, z, init, stages, ops, red, fused, tail, tdbl, tfma
            )
            c = e
        return out
    if block > 0:
        n = hi - lo
        rest = n % block
        # head: Rust's Iterator::sum, sequential from -0.0 (its sign is never visible here)
        head = -z
        for e in range(lo, lo + rest):
            head = head + _term(x, y, has_y, e, z)
        if n == rest:
            return z + head
        # pairwise over whole blocks: split at half the blocks, the left part first
        frames = np.empty((_kernels.STACK, 3), dtype=np.int64)
        vals = np.full(_kernels.STACK, z)
        frames[0, 0] = lo + rest
        frames[0, 1] = n - rest
        frames[0, 2] = 0
        nf, nv = 1, 0
        while True:
            nf, a, m = _kernels.halving_step(frames, nf, block, block)
            if m < 0:
                break
            if m == 0:
                nv -= 1
                vals[nv - 1] = vals[nv - 1] + vals[nv]
            else:
                vals[nv] = _segment(
                    x, y, has_y, a, a + m, z, init, stages, ops, red, fused, tail, tdbl, tfma
                )
                nv += 1
        return vals[0] + head
    return _segment(x, y, has_y, lo, hi, z, init, stages, ops, red, fused, tail, tdbl, tfma)


@_jit
def _simd(
    x,
    y,
    has_y,
    z,
    init,
    stages,
    ops,
    red,
    fused,
    tail,
    tdbl,
    tfma,
    chunk,
    block,
    threads,
    thread_min,
    thread_double,
):
    n = x.shape[0]
    one = threads <= 1 or n <= thread_min  # a single part: its result as it is
    parts = 1 if one else threads
    acc64 = 0.0
    acc = z
    lo = 0
    t = 0
    while lo < n or (one and t == 0):
        width = (n - lo + (parts - t) - 1) // (parts - t)
        args = (stages, ops, red, fused, tail, tdbl, tfma, chunk, block)
        p = _part(x, y, has_y, lo, lo + width, z, init, *args)
        if one:
            return p
        if thread_double:
            acc64 = acc64 + np.float64(p)
        else:
            acc = acc + p
        lo += width
        t += 1
    if thread_double:
        return _kernels.cast(acc64, z)
    return acc


#: the compiled entry points, by the name fpexplore.warmup and the order registry use
DISPATCHERS = {"simd._simd": _simd}


# ----------------------------------------------------------------------------- API


def _encode(order: SimdOrder):
    ops: list[int] = []
    rows = []
    for st in order.stages:
        lo = len(ops)
        ops += [FOLD_CODES[o] for o in st.fold]
        rows.append([st.lanes, st.accumulators, STEP_CODES[st.step], int(st.pad), lo, len(ops)])
    lo = len(ops)
    ops += [FOLD_CODES[o] for o in order.reduce]
    stages = np.array(rows, dtype=np.int64).reshape(len(rows), 6)
    red = np.array([lo, len(ops), order.body], np.int64)
    return stages, np.array(ops + [0], dtype=np.int64), red


def simd_sum(x, y=None, *, preset: SimdOrder | None = None, **params):
    """Sum ``x`` (or the dot product of ``x`` and ``y``) in a SIMD-accumulator order.

    ``preset``: a :class:`SimdOrder` (a library loop's, by its name:
    ``library_orders.simd_sum``); ``params`` override its fields (``threads=2``) or, without a
    preset, define the order (``stages=(Stage(8, 4),), reduce=("pairs", "half", ...)``).
    ``x`` and ``y`` are 1-D float32 or float64 arrays of one dtype; the result is a NumPy
    scalar of that dtype.
    """
    x = np.ascontiguousarray(x)
    if x.ndim != 1 or x.dtype not in (np.float32, np.float64):
        raise TypeError("x must be a 1-D float32 or float64 array")
    if y is not None:
        y = np.ascontiguousarray(y)
        if y.shape != x.shape or y.dtype != x.dtype:
            raise ValueError("y must have x's shape and dtype")
    if isinstance(preset, SimdOrder):
        order = preset
    elif preset is None:
        order = SimdOrder()
    else:
        raise TypeError(
            "preset must be a SimdOrder or None (a library loop by its name: "
            "fpexplore.libraries.orders.simd_sum)"
        )
    if params:
        order = order.replace(**params)
    z = x.dtype.type(0.0)
    if order.single_term and x.shape[0] == 1:  # np.dot: a 1-element array is a scalar
        with np.errstate(all="ignore"):
            return x[0] * y[0] if y is not None else x[0]
    init = x.dtype.type(order.init)
    stages, ops, red = _encode(order)
    has_y = y is not None
    r = _simd(
        x,
        y if has_y else x,
        has_y,
        z,
        init,
        stages,
        ops,
        red,
        order.fma,
        TAIL_CODES[order.tail],
        order.tail_double,
        order.tail_fma,
        order.chunk,
        order.block,
        order.threads,
        order.thread_min,
        order.thread_double,
    )
    return x.dtype.type(r)
