"""Slow, independent definitions of the framework orders (fpexplore/libraries/frameworks.py),
written from docs/framework_orders.md and ATen's C++ loops, never calling fpexplore.

Arithmetic on NumPy/ml_dtypes *scalars* (each operation rounds to the scalar's format),
terms in Python lists, one element at a time; fma by the Fraction oracle (tests/oracle.py).
"""

from __future__ import annotations

import ml_dtypes
import numpy as np

import oracle

F32 = np.float32
SCALAR = {"float16": np.float16, "bfloat16": ml_dtypes.bfloat16, "float32": F32, "float64": float}


def _add(a, b):
    with np.errstate(all="ignore"):
        return a + b


def _to(v, fmt):
    with np.errstate(all="ignore"):
        return SCALAR[fmt](v)


# ----------------------------------------------------------------------------- torch.sum


def aten_multi_row_sum(rows, zero):
    """multi_row_sum: rows is a list of equal-length lists; 4 levels of accumulators."""
    size = len(rows)
    width = len(rows[0]) if rows else 0
    ceil_log2 = 1 if size <= 2 else (size - 1).bit_length()
    power = max(4, ceil_log2 // 4)
    step = 1 << power
    mask = step - 1
    acc = [[zero] * width for _ in range(4)]
    i = 0
    while i + step <= size:
        for _ in range(step):
            acc[0] = [_add(a, v) for a, v in zip(acc[0], rows[i])]
            i += 1
        for j in range(1, 4):
            acc[j] = [_add(a, b) for a, b in zip(acc[j], acc[j - 1])]
            acc[j - 1] = [zero] * width
            if i & (mask << (j * power)):
                break
    while i < size:
        acc[0] = [_add(a, v) for a, v in zip(acc[0], rows[i])]
        i += 1
    for j in range(1, 4):
        acc[0] = [_add(a, b) for a, b in zip(acc[0], acc[j])]
    return acc[0]


def aten_row_sum(items, zero):
    """row_sum: items (lists of lanes) as a (-1, 4) array: 4 partial sums, leftovers into
    partial 0, then partial 0 + 1, + 2, + 3."""
    width = len(items[0]) if items else 1
    groups = len(items) // 4
    if groups:
        rows = [sum((items[4 * g + k] for k in range(4)), []) for g in range(groups)]
        flat = aten_multi_row_sum(rows, zero)
        parts = [flat[k * width : (k + 1) * width] for k in range(4)]
    else:
        parts = [[zero] * width for _ in range(4)]
    for it in items[4 * groups :]:
        parts[0] = [_add(a, v) for a, v in zip(parts[0], it)]
    for k in range(1, 4):
        parts[0] = [_add(a, b) for a, b in zip(parts[0], parts[k])]
    return parts[0]


def torch_cascade(xs, fmt, lanes):
    """One thread of cascade_sum over the values xs (format fmt): the accumulator value."""
    acc_fmt = "float64" if fmt == "float64" else "float32"
    A = SCALAR[acc_fmt]
    zero = A(0.0)
    vals = [A(v) for v in xs]
    numel = {"float64": lanes // 2, "float32": lanes}.get(fmt, 2 * lanes)
    width = lanes // 2 if fmt == "float64" else lanes
    n = len(vals)
    if n < numel:
        return aten_row_sum([[v] for v in vals], zero)[0]
    nvec = n // numel
    items = []
    for k in range(nvec):
        chunk = vals[k * numel : (k + 1) * numel]
        if numel == 2 * width:  # float16/bfloat16: first + second
            items.append([_add(chunk[i], chunk[i + width]) for i in range(width)])
        else:
            items.append(chunk)
    lanes_sum = aten_row_sum(items, zero)
    final = zero
    for v in vals[nvec * numel :]:
        final = _add(final, v)
    for v in lanes_sum:
        final = _add(final, v)
    return final


def torch_sum(xs, fmt, threads=1, lanes=8, grain=32768):
    n = len(xs)
    T = SCALAR[fmt]
    if threads == 1 or n < grain:
        return _to(_add(T(0.0), _to(torch_cascade(xs, fmt, lanes), fmt)), fmt)
    used = min(threads, -(-n // grain))
    chunk = -(-n // used)
    buffer = [T(0.0)] * threads
    for t in range(used):
        part = xs[t * chunk : (t + 1) * chunk]
        if part:
            buffer[t] = _to(torch_cascade(part, fmt, lanes), fmt)
    return _to(torch_cascade(buffer, fmt, lanes), fmt)


# ----------------------------------------------------------------------------- torch.dot


def reduce_lanes(v, how):
    if how == "sequential":
        acc = v[0]
        for u in v[1:]:
            acc = _add(acc, u)
        return acc
    v = list(v)
    while len(v) > 4:
        h = len(v) // 2
        v = [_add(v[i], v[i + h]) for i in range(h)]
    return _add(_add(v[0], v[2]), _add(v[1], v[3]))


def torch_dot_reduced(a, b, fmt, lanes=8, how="tree"):
    p = [F32(F32(u) * F32(v)) for u, v in zip(a, b)]
    n = len(p)
    block = 8 * lanes
    regs = [[F32(0)] * lanes for _ in range(8)]
    i = 0
    while i + block <= n:
        for e in range(block):
            r, lane = divmod(e, lanes)
            regs[r][lane] = _add(regs[r][lane], p[i + e])
        i += block
    for w in (4, 2, 1):
        for r in range(w):
            regs[r] = [_add(x, y) for x, y in zip(regs[r], regs[r + w])]
    total = reduce_lanes(regs[0], how)
    if i + 2 * lanes <= n:
        tv = [F32(0)] * lanes
        while i + 2 * lanes <= n:
            for half in (0, 1):
                tv = [_add(tv[k], p[i + half * lanes + k]) for k in range(lanes)]
            i += 2 * lanes
        total = _add(total, reduce_lanes(tv, how))
    for k in range(i, n):
        total = _add(total, p[k])
    return _to(total, fmt)


def mkl_sdot(a, b, threads=1, offsets=(0, 0)):
    p = [F32(F32(u) * F32(v)) for u, v in zip(a, b)]
    n = len(p)
    oa, ob = offsets
    if threads > 1 and n >= 8192:
        h = -(-n // 2)
        return _add(_mkl_one(p[:h], oa, ob), _mkl_one(p[h:], oa + h, ob + h))
    return _mkl_one(p, oa, ob)


def _mkl_one(p, oa, ob):
    acc = [[F32(0)] * 4 for _ in range(4)]
    if (oa - ob) % 2:
        for k, v in enumerate(p[:4]):
            acc[0][k] = v
        for v in p[4:]:
            acc[0][0] = _add(acc[0][0], v)
    else:
        peel = min((4 - oa % 4) % 4, len(p))
        for v in p[:peel]:
            acc[0][0] = _add(acc[0][0], v)
        q = p[peel:]
        i = 0
        while i + 16 <= len(q):
            for e in range(16):
                acc[e // 4][e % 4] = _add(acc[e // 4][e % 4], q[i + e])
            i += 16
        if len(q) - i >= 8:
            for e in range(8):
                acc[e // 4][e % 4] = _add(acc[e // 4][e % 4], q[i + e])
            i += 8
        if len(q) - i >= 4:
            for e in range(4):
                acc[0][e] = _add(acc[0][e], q[i + e])
            i += 4
        for v in q[i:]:
            acc[0][0] = _add(acc[0][0], v)
    v = acc[0]
    for k in (1, 2, 3):
        v = [_add(x, y) for x, y in zip(v, acc[k])]
    return _add(_add(v[0], v[2]), _add(v[1], v[3]))


# ----------------------------------------------------------------------------- XLA


def xla_tree(xs):
    """Recursive: windows of 32 with SAME padding (+0, the smaller half in front), each
    summed from +0 left to right, until at most 32 remain; those summed from +0."""
    xs = list(xs)
    while len(xs) > 32:
        out = -(-len(xs) // 32)
        need = out * 32 - len(xs)
        padded = [F32(0.0)] * (need // 2) + xs + [F32(0.0)] * (need - need // 2)
        sums = []
        for w in range(out):
            acc = F32(0.0)
            for v in padded[32 * w : 32 * w + 32]:
                acc = _add(acc, v)
            sums.append(acc)
        xs = sums
    acc = F32(0.0)
    for v in xs:
        acc = _add(acc, v)
    return acc


def xla_dot(a, b):
    if len(a) <= 32:
        acc = F32(0.0)
        for u, v in zip(a, b):
            acc = F32(oracle.fma(float(u), float(v), float(acc), "float32"))
        return acc
    return xla_tree([F32(F32(u) * F32(v)) for u, v in zip(a, b)])
