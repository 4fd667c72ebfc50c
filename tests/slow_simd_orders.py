"""Slow, literal definitions of the library orders' SIMD loops (fpexplore.libraries.simd).

Each function transcribes one library loop (the OpenBLAS micro-kernels, NumPy's einsum loops,
polars' float_sum.rs, the LLVM vectoriser's output as read from numba's assembly) with plain
Python loops over scalars of the format, never calling fpexplore. Arithmetic is that of
tests/slow_orders.py's Arith: NumPy float32 scalars / Python floats, each operation rounded to
the format; fused multiply-adds through the Fraction oracle. docs/simd_orders.md has the
pseudo-code these follow.
"""

from __future__ import annotations

import numpy as np

from slow_orders import Arith


def _ar(fmt):
    return Arith(fmt)


def _hadd(ar, v):
    """haddps/haddpd of a vector with itself, low half: [v0+v1, v2+v3, ...]."""
    return [ar.add(v[2 * j], v[2 * j + 1]) for j in range(len(v) // 2)]


def _lanes_add(ar, a, b):
    return [ar.add(p, q) for p, q in zip(a, b, strict=True)]


def _lo_plus_hi(ar, v):
    h = len(v) // 2
    return [ar.add(v[j], v[j + h]) for j in range(h)]


# ----------------------------------------------------------------------------- OpenBLAS sdot


def _sdot_finish(ar, x, y, n1, mydot):
    """sdot.c after the kernel: float products of the tail summed in a double from 0.0,
    then dot += mydot, returned as float."""
    dot = 0.0
    for i in range(n1, len(x)):
        dot += float(ar.mul(x[i], y[i]))
    dot += float(mydot)
    with np.errstate(over="ignore"):
        return np.float32(dot)


def _numpy_dot_one(ar, x, y):
    return ar.mul(x[0], y[0])  # NumPy treats a 1-element array as a scalar


def sdot_haswell(x, y, fma=True):
    """sdot_microk_haswell-2.c (fma=False: sdot_microk_sandy-2.c) + sdot.c."""
    ar = _ar("float32")
    x = [np.float32(v) for v in x]
    y = [np.float32(v) for v in y]
    n = len(x)
    if n == 1:
        return _numpy_dot_one(ar, x, y)
    n1 = n & -32
    mydot = np.float32(0.0)
    if n1:
        acc = [[np.float32(0.0)] * 8 for _ in range(4)]  # ymm4..ymm7
        for i in range(0, n1, 32):
            for k in range(4):
                for j in range(8):
                    e = i + 8 * k + j
                    if fma:
                        acc[k][j] = ar.fma(x[e], y[e], acc[k][j])
                    else:
                        acc[k][j] = ar.add(acc[k][j], ar.mul(x[e], y[e]))
        r = [_lo_plus_hi(ar, a) for a in acc]  # vextractf128 + vaddps
        s = _lanes_add(ar, _lanes_add(ar, r[0], r[1]), _lanes_add(ar, r[2], r[3]))
        mydot = _hadd(ar, _hadd(ar, s))[0]
    return _sdot_finish(ar, x, y, n1, mydot)


def sdot_sandybridge(x, y):
    return sdot_haswell(x, y, fma=False)


def sdot_skylakex(x, y):
    """sdot_microk_skylakex-2.c (AVX512CD path, FMA-contracted) + sdot.c."""
    ar = _ar("float32")
    x = [np.float32(v) for v in x]
    y = [np.float32(v) for v in y]
    n = len(x)
    if n == 1:
        return _numpy_dot_one(ar, x, y)
    n1 = n & -32
    mydot = np.float32(0.0)
    if n1:
        n64 = n1 & ~63
        z = [[np.float32(0.0)] * 16 for _ in range(4)]
        i = 0
        while i < n64:
            for k in range(4):
                for j in range(16):
                    e = i + 16 * k + j
                    z[k][j] = ar.fma(x[e], y[e], z[k][j])
            i += 64
        a = [_lo_plus_hi(ar, v) for v in z]  # extractf32x8 0 + 1
        while i < n1:
            for k in range(4):
                for j in range(8):
                    e = i + 8 * k + j
                    a[k][j] = ar.fma(x[e], y[e], a[k][j])
            i += 32
        s = _lanes_add(ar, _lanes_add(ar, _lanes_add(ar, a[0], a[1]), a[2]), a[3])
        h = _lo_plus_hi(ar, s)
        mydot = _hadd(ar, _hadd(ar, h))[0]
    return _sdot_finish(ar, x, y, n1, mydot)


def sdot_nehalem(x, y):
    """sdot_microk_nehalem-2.c + sdot.c."""
    ar = _ar("float32")
    x = [np.float32(v) for v in x]
    y = [np.float32(v) for v in y]
    n = len(x)
    if n == 1:
        return _numpy_dot_one(ar, x, y)
    n1 = n & -32
    mydot = np.float32(0.0)
    if n1:
        acc = [[np.float32(0.0)] * 4 for _ in range(4)]
        for i in range(0, n1, 16):
            for k in range(4):
                for j in range(4):
                    e = i + 4 * k + j
                    acc[k][j] = ar.add(acc[k][j], ar.mul(x[e], y[e]))
        s = _lanes_add(ar, _lanes_add(ar, acc[0], acc[1]), _lanes_add(ar, acc[2], acc[3]))
        mydot = _hadd(ar, _hadd(ar, s))[0]
    return _sdot_finish(ar, x, y, n1, mydot)


def sdot_prescott(x, y):
    """kernel/generic/dot.c with the SSE universal intrinsics (no FMA, SSE3 hadd)."""
    ar = _ar("float32")
    x = [np.float32(v) for v in x]
    y = [np.float32(v) for v in y]
    n = len(x)
    if n == 1:
        return _numpy_dot_one(ar, x, y)
    unroll4 = n & -16
    unroll = n & -4
    v = [[np.float32(0.0)] * 4 for _ in range(4)]
    i = 0
    while i < unroll4:
        for k in range(4):
            for j in range(4):
                e = i + 4 * k + j
                v[k][j] = ar.add(ar.mul(x[e], y[e]), v[k][j])
        i += 16
    s = _lanes_add(ar, _lanes_add(ar, v[0], v[1]), _lanes_add(ar, v[2], v[3]))
    while i < unroll:
        for j in range(4):
            s[j] = ar.add(ar.mul(x[i + j], y[i + j]), s[j])
        i += 4
    dot = _hadd(ar, _hadd(ar, s))[0]
    while i < n:
        dot = ar.add(dot, ar.mul(x[i], y[i]))
        i += 1
    return dot


# ----------------------------------------------------------------------------- OpenBLAS ddot


def _ddot_compute(ar, x, y, kernel):
    n = len(x)
    n1 = n & -16
    dot = 0.0
    if n1:
        dot = kernel(ar, x[:n1], y[:n1])
    return dot, n1


def _ddot_kernel_haswell(fma):
    def k(ar, x, y):
        acc = [[0.0] * 4 for _ in range(4)]
        for i in range(0, len(x), 16):
            for q in range(4):
                for j in range(4):
                    e = i + 4 * q + j
                    if fma:
                        acc[q][j] = ar.fma(x[e], y[e], acc[q][j])
                    else:
                        acc[q][j] = ar.add(acc[q][j], ar.mul(x[e], y[e]))
        r = [_lo_plus_hi(ar, a) for a in acc]
        s = _lanes_add(ar, _lanes_add(ar, r[0], r[1]), _lanes_add(ar, r[2], r[3]))
        return _hadd(ar, s)[0]

    return k


def _ddot_kernel_skylakex(ar, x, y):
    n = len(x)
    n32 = n & ~31
    z = [[0.0] * 8 for _ in range(4)]
    i = 0
    while i < n32:
        for q in range(4):
            for j in range(8):
                e = i + 8 * q + j
                z[q][j] = ar.fma(x[e], y[e], z[q][j])
        i += 32
    a = [_lo_plus_hi(ar, v) for v in z]
    while i < n:
        for q in range(4):
            for j in range(4):
                e = i + 4 * q + j
                a[q][j] = ar.fma(x[e], y[e], a[q][j])
        i += 16
    s = _lanes_add(ar, _lanes_add(ar, _lanes_add(ar, a[0], a[1]), a[2]), a[3])
    return _hadd(ar, _lo_plus_hi(ar, s))[0]


def _ddot_kernel_nehalem(ar, x, y):
    acc = [[0.0] * 2 for _ in range(4)]
    for i in range(0, len(x), 8):
        for q in range(4):
            for j in range(2):
                e = i + 2 * q + j
                acc[q][j] = ar.add(acc[q][j], ar.mul(x[e], y[e]))
    s = _lanes_add(ar, _lanes_add(ar, acc[0], acc[1]), _lanes_add(ar, acc[2], acc[3]))
    return _hadd(ar, s)[0]


_DDOT = {
    "haswell": (_ddot_kernel_haswell(True), False),
    "sandybridge": (_ddot_kernel_haswell(False), False),
    "skylakex": (_ddot_kernel_skylakex, True),
    "nehalem": (_ddot_kernel_nehalem, False),
}


def ddot(x, y, core, threads=1):
    """x86_64 ddot.c with the core's micro-kernel; tail `dot += y[i] * x[i]` (an FMA where
    the compiler contracts it); with threads > 1 and n > 10000 parts of
    ceil(rest / threads left) summed onto 0.0."""
    ar = _ar("float64")
    x = [float(v) for v in x]
    y = [float(v) for v in y]
    kernel, tail_fma = _DDOT[core]
    n = len(x)
    if n == 1:
        return _numpy_dot_one(ar, x, y)

    def compute(lo, hi):
        dot, n1 = _ddot_compute(ar, x[lo:hi], y[lo:hi], kernel)
        for i in range(lo + n1, hi):
            dot = ar.fma(x[i], y[i], dot) if tail_fma else ar.add(dot, ar.mul(x[i], y[i]))
        return dot

    if threads == 1 or n <= 10000:
        return compute(0, n)
    total = 0.0
    lo = 0
    for t in range(threads):
        if lo >= n:
            break
        width = -(-(n - lo) // (threads - t))
        total = ar.add(total, compute(lo, lo + width))
        lo += width
    return total


# ----------------------------------------------------------------------------- NumPy einsum


def _einsum_chunks(x, chunk_sum, fmt):
    ar = _ar(fmt)
    out = ar.zero()
    for c in range(0, len(x), 8192):
        out = ar.add(out, chunk_sum(ar, c, min(c + 8192, len(x))))
    return out


def _vsum(ar, v):
    """npyv_sum: f32 2x hadd = (v0+v1)+(v2+v3); f64 hadd = v0+v1."""
    while len(v) > 1:
        v = _hadd(ar, v)
    return v[0]


def einsum_dot(x, y, fmt):
    """sum_of_products_contig_contig_outstride0_two (SSE, npyv_muladd = mul then add)."""
    L = 4 if fmt == "float32" else 2

    def chunk(ar, lo, hi):
        xs = [ar.conv(v) for v in x[lo:hi]]
        ys = [ar.conv(v) for v in y[lo:hi]]
        acc = [ar.zero()] * L
        count = hi - lo
        i = 0
        while count >= 4 * L:
            for j in range(L):
                v = acc[j]
                for q in (3, 2, 1, 0):  # ab3 = a3*b3 + acc; ...; acc = a0*b0 + ab1
                    v = ar.add(ar.mul(xs[i + q * L + j], ys[i + q * L + j]), v)
                acc[j] = v
            i += 4 * L
            count -= 4 * L
        while count > 0:  # npyv_load_tillz: missing lanes are +0
            for j in range(L):
                a = xs[i + j] if j < count else ar.zero()
                b = ys[i + j] if j < count else ar.zero()
                acc[j] = ar.add(ar.mul(a, b), acc[j])
            i += L
            count -= L
        return _vsum(ar, acc)

    return _einsum_chunks(x, chunk, fmt)


def einsum_sum(x, fmt):
    """sum_of_arr (SSE): acc = ((a0+a1)+(a2+a3)) + acc; zero-padded remainder."""
    L = 4 if fmt == "float32" else 2

    def chunk(ar, lo, hi):
        xs = [ar.conv(v) for v in x[lo:hi]]
        acc = [ar.zero()] * L
        count = hi - lo
        i = 0
        while count >= 4 * L:
            for j in range(L):
                a = [xs[i + q * L + j] for q in range(4)]
                acc[j] = ar.add(ar.add(ar.add(a[0], a[1]), ar.add(a[2], a[3])), acc[j])
            i += 4 * L
            count -= 4 * L
        while count > 0:
            for j in range(L):
                acc[j] = ar.add(xs[i + j] if j < count else ar.zero(), acc[j])
            i += L
            count -= L
        return _vsum(ar, acc)

    return _einsum_chunks(x, chunk, fmt)


# ----------------------------------------------------------------------------- polars


def polars_sum(x, fmt):
    """polars-compute float_sum.rs FloatSum::sum (no nulls, one chunk)."""
    ar = _ar(fmt)
    t = [ar.conv(v) for v in x]
    rem = len(t) % 128
    rest, main = t[:rem], t[rem:]

    def block(f):
        v = [ar.zero()] * 16
        for c in range(8):
            for j in range(16):
                v[j] = ar.add(v[j], f[16 * c + j])
        w = 16
        while w > 4:
            for j in range(w // 2):
                v[j] = ar.add(v[j], v[w // 2 + j])
            w //= 2
        return ar.add(ar.add(v[0], v[2]), ar.add(v[1], v[3]))

    def pairwise(f):
        if len(f) == 128:
            return block(f)
        left = (len(f) // 128 // 2) * 128
        return ar.add(pairwise(f[:left]), pairwise(f[left:]))

    mainsum = pairwise(main) if main else ar.zero()
    restsum = ar.conv(-0.0)  # Rust's float Sum starts from -0.0
    for v in rest:
        restsum = ar.add(restsum, v)
    return ar.add(mainsum, restsum)


# ----------------------------------------------------------------------------- LLVM / numba


def _halving(ar, v):
    while len(v) > 1:
        v = _lo_plus_hi(ar, v)
    return v[0]


def llvm_fast_sum(x, fmt, lanes, epilogue):
    """numba @njit(fastmath=True) `s += x[i]` as compiled by LLVM: 4 interleaved vectors of
    `lanes`, (v0+v1)+(v2+v3), halving; a vector epilogue of `epilogue` lanes seeded with
    that in lane 0 when at least `epilogue` terms remain; scalars."""
    ar = _ar(fmt)
    t = [ar.conv(v) for v in x]
    n = len(t)
    s = ar.zero()
    i = 0
    if n >= epilogue:
        main = n - n % (4 * lanes)
        if main:
            v = [[ar.zero()] * lanes for _ in range(4)]
            for b in range(0, main, 4 * lanes):
                for q in range(4):
                    for j in range(lanes):
                        v[q][j] = ar.add(v[q][j], t[b + q * lanes + j])
            w = _lanes_add(ar, _lanes_add(ar, v[0], v[1]), _lanes_add(ar, v[2], v[3]))
            s = _halving(ar, w)
        i = main
        if n - main >= epilogue:
            e = [s] + [ar.zero()] * (epilogue - 1)
            end = n - n % epilogue
            while i < end:
                for j in range(epilogue):
                    e[j] = ar.add(e[j], t[i + j])
                i += epilogue
            s = _halving(ar, e)
    while i < n:
        s = ar.add(s, t[i])
        i += 1
    return s


def prange_sum(x, fmt, threads):
    """numba prange reduction: per-thread sequential sums from 0 over ceil-sized parts,
    added in order onto 0."""
    ar = _ar(fmt)
    t = [ar.conv(v) for v in x]
    n = len(t)
    total = ar.zero()
    lo = 0
    for k in range(threads):
        if lo >= n:
            break
        width = -(-(n - lo) // (threads - k))
        s = ar.zero()
        for v in t[lo : lo + width]:
            s = ar.add(s, v)
        total = ar.add(total, s)
        lo += width
    return total
