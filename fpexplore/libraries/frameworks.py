"""PyTorch's and XLA's (JAX's) CPU reductions, emulated bit for bit.

Plain functions, arrays in and a NumPy scalar of the input's format out:

* :func:`torch_sum`: ``torch.sum`` of a contiguous 1-D CPU tensor (ATen ``cascade_sum`` in
  ``aten/src/ATen/native/cpu/SumKernel.cpp``): float32, float64, float16, bfloat16; one
  thread or the two-pass split of several OpenMP threads.
* :func:`torch_dot`: ``torch.dot`` of 1-D tensors. float16/bfloat16: ATen's
  ``dot_with_fp32_arith`` (``ReducedPrecisionFloatGemvFastPathKernel.cpp``); float32: MKL's
  ``cblas_sdot`` (closed source), as probed: :func:`mkl_sdot`.
* :func:`xla_sum` and :func:`xla_dot`: ``jnp.sum`` and ``jnp.dot`` of 1-D float32 arrays on
  XLA:CPU (``xla/service/tree_reduction_rewriter.cc``). XLA:CPU hands n >= 4096 to YNNPACK,
  which is not emulated (:class:`NotImplementedError`; ``ynn=False`` gives XLA's own tree).

Every order depends on the machine: the SIMD code ATen dispatches to, the number of OpenMP
threads (``threads``), MKL's path for the CPU and the vectors' alignment. ``PRESETS`` lists
parameter sets with the library versions and machines each was verified on;
docs/framework_orders.md defines each order step by step, and
tests/test_framework_orders.py replays recordings of the real libraries.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np
from numba.extending import register_jitable

from .. import checks
from ..exact import fma as exact_fma
from ..formats import coerce, scalar_out
from ..orders._kernels import cached_njit

__all__ = ["PRESETS", "mkl_sdot", "torch_dot", "torch_sum", "xla_dot", "xla_sum"]

_BF16 = np.dtype(ml_dtypes.bfloat16)
_F16 = np.dtype(np.float16)
_F32 = np.dtype(np.float32)
_F64 = np.dtype(np.float64)
_REDUCED = (_F16, _BF16)

#: ATen's internal::GRAIN_SIZE: reductions of fewer elements run on one thread
TORCH_GRAIN = 32768
#: the float32 lanes of ATen's Vectorized<float>: 8 (its AVX2 and default kernels), 16 (AVX-512)
TORCH_LANES = (8, 16)

#: Parameter sets with what each was checked against (bit for bit, counts in
#: docs/framework_orders.md). ``function`` names the function of this module.
PRESETS = {
    "torch-cpu": {
        "function": "torch_sum",
        "params": {"lanes": 8},
        "verified": "torch 2.14.1 CPU on AMD EPYC (Zen 4, AVX-512): ATEN_CPU_CAPABILITY "
        "avx512 (the default there: SumKernel registers no AVX-512 kernel, so ATen runs its "
        "AVX2 one), avx2 and default; 1 and 2 threads; float32/64, float16, bfloat16. "
        "torch 2.13 AVX2 on Zen 3",
    },
    "torch-dot-cpu": {
        "function": "torch_dot",
        "params": {"lanes": 8, "lane_reduce": "tree"},
        "verified": "torch 2.14.1, float16/bfloat16, capabilities avx512 (runs the AVX2 kernel) "
        "and avx2, AMD EPYC Zen 4",
    },
    "torch-dot-default": {
        "function": "torch_dot",
        "params": {"lanes": 8, "lane_reduce": "sequential"},
        "verified": "torch 2.14.1, float16/bfloat16, ATEN_CPU_CAPABILITY=default",
    },
    "mkl-sdot-amd": {
        "function": "mkl_sdot",
        "params": {},
        "verified": "torch 2.14.1 (MKL 2024.2), float32, AMD EPYC Zen 4 and Zen 3, 1 and 2 "
        "threads, offsets of equal parity (and different parity on one thread)",
    },
    "xla-cpu": {
        "function": "xla_sum",
        "params": {"ynn": True},
        "verified": "jax/jaxlib 0.10.2, n <= 4095 (from 4096 on YNNPACK: not emulated); "
        "xla_dot likewise",
    },
    "xla-cpu-no-ynn": {
        "function": "xla_sum",
        "params": {"ynn": False},
        "verified": "jax/jaxlib 0.10.2 with XLA_FLAGS=--xla_cpu_experimental_ynn_fusion_type=; "
        "xla_dot likewise",
    },
}


# ----------------------------------------------------------------------------- helpers


def _vector(x, what: str, formats) -> tuple[np.ndarray, np.dtype]:
    (a,), info = coerce(x, what=what)
    if info.dtype not in formats:
        names = ", ".join(str(f) for f in formats)
        raise TypeError(f"{what} takes {names} arrays, got {info.name}")
    if a.ndim != 1:
        raise ValueError(f"{what} takes a 1-D array (a contiguous tensor), got shape {a.shape}")
    return np.ascontiguousarray(a), info.dtype


def _round_to(value: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """float32/float64 values rounded once to dtype (IEEE round to nearest even)."""
    with np.errstate(all="ignore"):
        return np.asarray(value).astype(dtype)


# ----------------------------------------------------------------------------- torch.sum


def _ceil_log2(x: int) -> int:
    """ATen's utils::CeilLog2 (1 for x <= 2)."""
    return 1 if x <= 2 else (x - 1).bit_length()


@register_jitable
def _into_level0(acc, V, i):
    """Group i of 4 rows into the cascade's first level: acc[0, k] += V[4i + k]."""
    for k in range(4):
        for lane in range(V.shape[1]):
            acc[0, k, lane] += V[4 * i + k, lane]


def _row_sum_kernel(V, level_power):
    """ATen's row_sum over the rows of V (count, W): rows viewed as (-1, 4) items of W lanes,
    multi_row_sum's 4-level cascade over the groups of 4, leftover rows into accumulator 0,
    then ((a0 + a1) + a2) + a3. Returns the W lanes."""
    count, W = V.shape
    size_ilp = count // 4
    step = 1 << level_power
    mask = step - 1
    acc = np.zeros((4, 4, W), V.dtype)
    i = 0
    while i + step <= size_ilp:
        for _ in range(step):
            _into_level0(acc, V, i)
            i += 1
        for j in range(1, 4):
            for k in range(4):
                for lane in range(W):
                    acc[j, k, lane] += acc[j - 1, k, lane]
                    acc[j - 1, k, lane] = 0
            if (i & (mask << (j * level_power))) != 0:
                break
    while i < size_ilp:
        _into_level0(acc, V, i)
        i += 1
    for j in range(1, 4):
        for k in range(4):
            for lane in range(W):
                acc[0, k, lane] += acc[j, k, lane]
    out = acc[0, 0].copy()
    for r in range(size_ilp * 4, count):
        for lane in range(W):
            out[lane] += V[r, lane]
    for k in range(1, 4):
        for lane in range(W):
            out[lane] += acc[0, k, lane]
    return out


def _finish_kernel(tail, lanes_sum):
    """final_acc = 0; += each tail element; += each lane, in order."""
    acc = tail.dtype.type(0)
    for v in tail:
        acc += v
    for v in lanes_sum:
        acc += v
    return acc


_row_sum_jit = cached_njit(_row_sum_kernel, nogil=True)
_finish_jit = cached_njit(_finish_kernel, nogil=True)
#: the compiled entry points, by the name fpexplore.warmup and the order registry use
DISPATCHERS = {"frameworks._row_sum_jit": _row_sum_jit, "frameworks._finish_jit": _finish_jit}


def _row_sum(V: np.ndarray) -> np.ndarray:
    level_power = max(4, _ceil_log2(V.shape[0] // 4) // 4)
    return _row_sum_jit(np.ascontiguousarray(V), level_power)


def _cascade(x: np.ndarray, dtype: np.dtype, lanes: int):
    """One thread's cascade_sum of x (its format dtype): the accumulator-format result."""
    acc_t = _F64 if dtype == _F64 else _F32
    n = x.size
    if dtype == _F64:
        width, numel = lanes // 2, lanes // 2
    elif dtype in _REDUCED:
        width, numel = lanes, 2 * lanes
    else:
        width, numel = lanes, lanes
    xa = x.astype(acc_t)
    if n < numel:  # vec_t::size() > n: the scalar row_sum (4 accumulators)
        return _row_sum(xa.reshape(n, 1))[0]
    nvec = n // numel
    if dtype in _REDUCED:  # load_to_float(ptr, first, second); first + second
        pairs = xa[: nvec * numel].reshape(nvec, 2, width)
        V = pairs[:, 0, :] + pairs[:, 1, :]
    else:
        V = xa[: nvec * numel].reshape(nvec, width)
    return _finish_jit(np.ascontiguousarray(xa[nvec * numel :]), _row_sum(V))


def torch_sum(x, *, threads: int = 1, lanes: int = 8, grain: int = TORCH_GRAIN):
    """``torch.sum`` of a contiguous 1-D CPU tensor, bit for bit (ATen ``cascade_sum``).

    Parameters
    ----------
    x : 1-D array of float32, float64, float16 or bfloat16
    threads : the number of OpenMP threads (``torch.get_num_threads()``)
    lanes : float32 lanes of the ``Vectorized<float>`` the kernel runs with: 8 on x86 for
        every capability (SumKernel registers no AVX-512 kernel, so ATen runs the AVX2 one
        even where ``torch.backends.cpu.get_cpu_capability()`` says AVX512); 16 models an
        AVX-512 build of the kernel, which torch 2.14.1 does not have
    grain : ATen's ``GRAIN_SIZE`` (32768): fewer elements always run on one thread

    One thread: vectors of ``lanes`` float32 (float16/bfloat16: 2*lanes elements loaded, lane
    i = float(x[i]) + float(x[i + lanes]); float64: lanes/2 doubles), grouped 4 at a time
    into 4 vector accumulators by a 4-level cascade; leftover vectors into accumulator 0;
    ``((a0 + a1) + a2) + a3``; then ``0 + tail elements + lanes`` in order; stored as
    ``out = 0 + value`` in the tensor's format. Fewer elements than one vector: the same
    cascade on scalars. With ``threads`` > 1 and n >= grain: chunks of ceil(n / T) elements
    (T = min(threads, ceil(n / grain))), each chunk's sum stored **in the tensor's format**
    (float16 partials can overflow), then those ``threads`` partials (zeros past T) summed
    by the same function on one thread.
    """
    x, dtype = _vector(x, "torch_sum", (_F32, _F64, _F16, _BF16))
    threads = checks.integer("threads", threads, 1)
    lanes = checks.choice("lanes", checks.integer("lanes", lanes), TORCH_LANES)
    grain = checks.integer("grain", grain, 1)
    n = x.size
    if threads == 1 or n < grain:
        return scalar_out(_round_to(_cascade(x, dtype, lanes), dtype))
    used = min(threads, -(-n // grain))
    chunk = -(-n // used)
    buffer = np.zeros(threads, dtype)
    for t in range(used):
        lo = t * chunk
        if lo < n:
            buffer[t] = _round_to(_cascade(x[lo : lo + chunk], dtype, lanes), dtype)
    return scalar_out(_round_to(_cascade(buffer, dtype, lanes), dtype))


# ----------------------------------------------------------------------------- torch.dot


def _vec_reduce_all(v: np.ndarray, lane_reduce: str = "tree") -> np.float32:
    """ATen's vec_reduce_all(+) of one Vectorized<float>. "tree" (the AVX2/AVX512
    shuffles): halve the width, lane i += lane i + w/2, down to 4 lanes, then
    (l0 + l2) + (l1 + l3). "sequential" (the generic Vectorized of the capability
    ``default``): l0 + l1 + l2 + ... in order."""
    if lane_reduce == "sequential":
        acc = v[0]
        for u in v[1:]:
            acc = acc + u
        return acc
    v = v.copy()
    w = v.size
    while w > 4:
        w //= 2
        v[:w] = v[:w] + v[w : 2 * w]
    return (v[0] + v[2]) + (v[1] + v[3])


def _dot_reduced(a: np.ndarray, b: np.ndarray, lanes: int, lane_reduce: str):
    """dot_with_fp32_arith: float32 products (exact for float16/bfloat16 inputs)."""
    n = a.size
    p = a.astype(_F32) * b.astype(_F32)  # exact: at most 22 significant bits
    block = 8 * lanes
    nb = n // block
    acc = np.zeros((8, lanes), _F32)
    for k in range(nb):
        acc += p[k * block : (k + 1) * block].reshape(8, lanes)
    for w in (4, 2, 1):
        acc[:w] = acc[:w] + acc[w : 2 * w]
    total = _vec_reduce_all(acc[0], lane_reduce)
    i = nb * block
    two = 2 * lanes
    if i + two <= n:
        tv = np.zeros(lanes, _F32)
        while i + two <= n:
            tv = tv + p[i : i + lanes]
            tv = tv + p[i + lanes : i + two]
            i += two
        total = total + _vec_reduce_all(tv, lane_reduce)
    for k in range(i, n):
        total = total + p[k]
    return total


def torch_dot(a, b, *, lanes: int = 8, lane_reduce: str = "tree", threads: int = 1, offsets=(0, 0)):
    """``torch.dot`` of two 1-D CPU tensors, bit for bit where the order is known.

    float16/bfloat16 (ATen ``dot_with_fp32_arith``): products in float32 (exact); 8 vector
    accumulators of ``lanes`` float32 take the 8*lanes-element blocks (element e of a block
    into register e // lanes, lane e % lanes); registers folded pairwise (r[i] += r[i+4],
    r[i] += r[i+2], r0 += r1); the lanes reduced by ``vec_reduce_all`` (halving to 4 lanes,
    then (l0 + l2) + (l1 + l3); ``lane_reduce="sequential"``: l0 + l1 + ... in order, as
    ATen's capability ``default`` does); then one vector accumulator over the remaining
    2*lanes-element chunks (the first ``lanes`` products, then the next ``lanes``), reduced
    the same way and added; then the remaining products one by one; the result rounded to
    the format. ``threads`` is ignored there (the kernel runs on one thread).

    float32 goes to MKL's ``cblas_sdot`` (closed): see :func:`mkl_sdot` (``offsets`` is
    passed on to it).
    """
    lanes = checks.choice("lanes", checks.integer("lanes", lanes), TORCH_LANES)
    threads = checks.integer("threads", threads, 1)
    checks.choice("lane_reduce", lane_reduce, ("tree", "sequential"))
    a, da = _vector(a, "torch_dot", (_F32, _F16, _BF16))
    b, db = _vector(b, "torch_dot", (_F32, _F16, _BF16))
    if da != db:
        raise TypeError(f"torch_dot: a is {da} and b is {db} (one format, as torch.dot)")
    if a.size != b.size:
        raise ValueError(f"torch_dot: sizes {a.size} and {b.size} differ")
    if da == _F32:
        return mkl_sdot(a, b, threads=threads, offsets=offsets)
    with np.errstate(all="ignore"):
        return scalar_out(_round_to(_dot_reduced(a, b, lanes, lane_reduce), da))


#: From this length on, MKL's sdot splits the work between 2 threads (probed)
MKL_SDOT_SPLIT = 8192


def _mkl_sdot_one(p: np.ndarray, off_a: int, off_b: int) -> np.float32:
    """One thread's MKL sdot over the rounded products p (see mkl_sdot)."""
    n = p.size
    acc = np.zeros((4, 4), _F32)
    with np.errstate(all="ignore"):
        if (off_a - off_b) % 2:  # offsets of different parity: one vector, then scalars
            k = min(4, n)
            acc[0, :k] = p[:k]
            lane0 = acc[0, 0]
            for v in p[k:]:
                lane0 = lane0 + v
            acc[0, 0] = lane0
        else:
            peel = min((4 - off_a % 4) % 4, n)
            lane0 = _F32.type(0)
            for v in p[:peel]:
                lane0 = lane0 + v
            acc[0, 0] = lane0
            q = p[peel:]
            nb = q.size // 16
            for t in range(nb):
                acc = acc + q[16 * t : 16 * t + 16].reshape(4, 4)
            r = q[16 * nb :]
            if r.size >= 8:
                acc[0] = acc[0] + r[:4]
                acc[1] = acc[1] + r[4:8]
                r = r[8:]
            if r.size >= 4:
                acc[0] = acc[0] + r[:4]
                r = r[4:]
            lane0 = acc[0, 0]
            for v in r:
                lane0 = lane0 + v
            acc[0, 0] = lane0
        v = ((acc[0] + acc[1]) + acc[2]) + acc[3]
        return (v[0] + v[2]) + (v[1] + v[3])


def mkl_sdot(a, b, *, threads: int = 1, offsets: tuple = (0, 0)):
    """MKL ``cblas_sdot`` of two float32 vectors as ``torch.dot`` calls it (MKL 2024.2 in torch
    2.14.1 on AMD EPYC: the order probed FPRev-style, MKL is closed source).

    ``offsets``: where each vector starts, in float32 elements past a 16-byte boundary
    (``(address // 4) % 4``; NumPy and PyTorch allocate aligned, so (0, 0) unless a vector
    is a slice). Products are rounded to float32 (no FMA). When both offsets agree mod 4:
    the first ``(4 - offset) % 4`` products summed from 0 as scalars seed lane 0 of
    accumulator 0; then 16-element blocks, element 4k + l of a block into lane l of
    accumulator k; of the remainder one 8-element chunk into accumulators 0 and 1, one
    4-element chunk into accumulator 0, the rest one by one into lane 0 of accumulator 0;
    ``v = ((a0 + a1) + a2) + a3`` and ``(v0 + v2) + (v1 + v3)``. When they differ: the first
    4 products into the 4 lanes, every later product into lane 0, then ``(l0 + l2) + (l1 +
    l3)`` (probed for offsets (1, 0) mod 4 on one thread; other unequal offsets take other
    paths, not emulated: :class:`NotImplementedError`). With ``threads``
    > 1 and n >= 8192: the halves ``[0, ceil(n/2))`` and the rest (each with its own
    offsets) are summed as above and their results added.
    """
    threads = checks.integer("threads", threads, 1)
    a, _ = _vector(a, "mkl_sdot", (_F32,))
    b, _ = _vector(b, "mkl_sdot", (_F32,))
    if a.size != b.size:
        raise ValueError(f"mkl_sdot: sizes {a.size} and {b.size} differ")
    if not (isinstance(offsets, tuple) and len(offsets) == 2):
        raise TypeError(f"offsets must be a pair of integers, got {checks.shown(offsets)}")
    oa, ob = (checks.integer("offsets", o, 0) for o in offsets)
    if oa % 4 != ob % 4 and (oa % 4, ob % 4) != (1, 0):
        raise NotImplementedError(
            f"mkl_sdot: offsets {(oa % 4, ob % 4)} mod 4 take an MKL path that is not emulated "
            "(emulated: equal offsets, and (1, 0) on one thread)"
        )
    with np.errstate(all="ignore"):
        p = a * b
        n = p.size
        if threads > 1 and n >= MKL_SDOT_SPLIT:
            if (oa - ob) % 2:
                raise NotImplementedError(
                    "mkl_sdot: the 2-thread split of vectors whose starts differ by 4 bytes "
                    "mod 16 is not emulated"
                )
            h = -(-n // 2)
            r0 = _mkl_sdot_one(p[:h], oa, ob)
            r1 = _mkl_sdot_one(p[h:], oa + h, ob + h)
            return scalar_out(np.asarray(r0 + r1, _F32))
        return scalar_out(np.asarray(_mkl_sdot_one(p, oa, ob), _F32))


# ----------------------------------------------------------------------------- XLA:CPU

#: XLA's TreeReductionRewriter window on CPU
XLA_WINDOW = 32
#: from this length on, XLA:CPU (jaxlib 0.10.2) hands a float32 sum to YNNPACK
XLA_YNN_SUM_FROM = 4096


def _sequential_rows(P: np.ndarray) -> np.ndarray:
    """Row sums of P, each from +0 in column order (one rounding per addition)."""
    acc = np.zeros(P.shape[0], P.dtype)
    for c in range(P.shape[1]):
        acc = acc + P[:, c]
    return acc


def _xla_tree(x: np.ndarray, window: int = XLA_WINDOW):
    """reduce-window(window, stride window, SAME padding with +0) while more than ``window``
    values remain; then a sequential reduce from +0."""
    with np.errstate(all="ignore"):
        while x.size > window:
            out = -(-x.size // window)
            need = out * window - x.size
            low = need // 2
            padded = np.zeros(out * window, x.dtype)
            padded[low : low + x.size] = x
            x = _sequential_rows(padded.reshape(out, window))
        return _sequential_rows(x.reshape(1, -1))[0] if x.size else x.dtype.type(0)


def _ynn_refusal(what: str, n: int, limit: int):
    raise NotImplementedError(
        f"{what}: XLA:CPU reduces {n} elements with YNNPACK (from n = {limit} on in jaxlib "
        "0.10.2), which is not emulated; ynn=False gives XLA's tree, which is what JAX "
        "computes with XLA_FLAGS=--xla_cpu_experimental_ynn_fusion_type="
    )


def xla_sum(x, *, ynn: bool = True):
    """``jnp.sum`` of a 1-D float32 array on XLA:CPU (jaxlib 0.10.2), bit for bit.

    XLA's TreeReductionRewriter: while more than 32 values remain, a reduce-window of 32
    with stride 32 and SAME padding (``need = 32*ceil(n/32) - n`` zeros, ``need // 2`` in
    front), each window summed from +0 in order; then the last <= 32 summed from +0 in
    order. With ``ynn=True`` (XLA:CPU's default) n >= 4096 goes to YNNPACK, not emulated:
    :class:`NotImplementedError`.
    """
    x, _ = _vector(x, "xla_sum", (_F32,))
    if ynn and x.size >= XLA_YNN_SUM_FROM:
        _ynn_refusal("xla_sum", x.size, XLA_YNN_SUM_FROM)
    return scalar_out(np.asarray(_xla_tree(x)))


#: from this length on, XLA:CPU (jaxlib 0.10.2) hands a float32 dot to YNNPACK
XLA_YNN_DOT_FROM = 4096


def xla_dot(a, b, *, ynn: bool = True):
    """``jnp.dot`` of two 1-D float32 arrays on XLA:CPU (jaxlib 0.10.2), bit for bit.

    n <= 32: one loop ``acc = fma(a[i], b[i], acc)`` from +0. n > 32: the products rounded
    to float32, then :func:`xla_sum`'s tree. With ``ynn=True`` n >= ``XLA_YNN_DOT_FROM``
    goes to YNNPACK, not emulated (:class:`NotImplementedError`).
    """
    a, _ = _vector(a, "xla_dot", (_F32,))
    b, _ = _vector(b, "xla_dot", (_F32,))
    if a.size != b.size:
        raise ValueError(f"xla_dot: sizes {a.size} and {b.size} differ")
    n = a.size
    if ynn and n >= XLA_YNN_DOT_FROM:
        _ynn_refusal("xla_dot", n, XLA_YNN_DOT_FROM)
    with np.errstate(all="ignore"):
        if n <= XLA_WINDOW:
            acc = np.float32(0)
            for u, v in zip(a, b):
                acc = exact_fma(u, v, acc)
            return scalar_out(np.asarray(acc, _F32))
        return scalar_out(np.asarray(_xla_tree(a * b)))
