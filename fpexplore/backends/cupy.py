"""The CuPy backend: the only module of fpexplore that imports CuPy, and only when called.

Two ways to run on a GPU:

* CuPy's own functions (:func:`library`): ``cupy.sum``, ``cupy.dot``, ``cupy.matmul`` (TF32
  off or on), ``cupy.linspace``, elementwise math. Their orders are CuPy's/CUB's/cuBLAS's.
* fpexplore's own CUDA kernels (:func:`kernel_sum`; with ``y`` a dot product), one per order,
  written so that the order is known exactly: ``sequential``, ``blocked``, ``tree``
  (interleaved addressing), ``tree-strided`` (sequential addressing), the block results
  combined in order or with ``atomicAdd``, and ``kahan``; every operation is an explicit
  round-to-nearest PTX instruction (``add.rn``/``mul.rn``/``fma.rn`` in inline assembly),
  so the compiler cannot contract or reorder anything. CuPy compiles every kernel with
  ``-ftz=true`` appended after the caller's options, which would turn even the ``_rn``
  intrinsics into flushing instructions; explicit PTX without ``.ftz`` keeps float32
  subnormals, as the emulated orders do. Only ``atomicAdd`` on float32 flushes (hardware),
  and the emulated ``combine="atomic"`` flushes likewise.

cupy-cuda12x imports fine on a machine without a GPU and fails at first use
(cudaErrorInsufficientDriver / cudaErrorNoDevice), so availability is checked by asking the
runtime for a device, not by the import alone. The tests marked ``gpu`` (tests/test_gpu.py)
verify it where one is present: all passed on an H200 with CuPy 14.2 (docs/gpu.md).
"""

from __future__ import annotations

import numpy as np

from .. import checks
from .._registry import INFO, SMALL_DTYPES
from ..ops.registry import OP_SPECS
from ..timing import timed
from .job import Job, Result

UNAVAILABLE = "{name} backend unavailable: {why}{instead}"  # (run_step says instead of what)

_STATUS: tuple[bool, str] | None = None


def status(name: str = "cupy") -> tuple[bool, str]:
    """(True, device description) when CuPy can run on a GPU here, else (False, reason)."""
    global _STATUS
    if _STATUS is not None:
        return _STATUS
    try:
        import cupy
    except Exception as e:  # ImportError, or a broken CUDA install raising at import
        _STATUS = (False, f"CuPy is not installed ({type(e).__name__}: {e})".rstrip())
        return _STATUS
    try:
        count = cupy.cuda.runtime.getDeviceCount()
        if count < 1:
            _STATUS = (False, "CuPy is installed but there is no CUDA device")
            return _STATUS
        props = cupy.cuda.runtime.getDeviceProperties(0)
        name = props["name"].decode() if isinstance(props["name"], bytes) else props["name"]
        _STATUS = (True, f"{name} (CuPy {cupy.__version__})")
    except Exception as e:  # cudaErrorInsufficientDriver, cudaErrorNoDevice, ...
        _STATUS = (False, f"CuPy is installed but CUDA is not usable here: {e}")
    return _STATUS


def _cupy():
    ok, why = status()
    if not ok:
        raise RuntimeError(f"the cupy backend is unavailable: {why}")
    import cupy

    return cupy


def device_info() -> dict:
    """Device name, compute capability, SM count, driver/runtime/CuPy versions."""
    cp = _cupy()
    props = cp.cuda.runtime.getDeviceProperties(0)
    name = props["name"].decode() if isinstance(props["name"], bytes) else props["name"]
    return {
        "device": name,
        "compute_capability": f"{props['major']}.{props['minor']}",
        "sm_count": int(props["multiProcessorCount"]),
        "driver": int(cp.cuda.runtime.driverGetVersion()),
        "runtime": int(cp.cuda.runtime.runtimeGetVersion()),
        "cupy": cp.__version__,
    }


# ----------------------------------------------------------------------------- own kernels

_TYPES = {  # C type, PTX type suffix, inline-asm register constraint
    "float32": ("float", "f32", "f"),
    "float64": ("double", "f64", "d"),
}

# CuPy appends -ftz=true to every kernel it compiles, after the caller's options
# (cupy/cuda/compiler.py, _compile_with_cache_cuda), and NVRTC lets the last -ftz win: even
# the _rn intrinsics (__fadd_rn, ...) then become add.rn.ftz.f32 and flush float32
# subnormals. So every operation is written as inline PTX with an explicit rounding modifier
# and no .ftz, which no compiler flag rewrites and which ptxas never contracts into an FMA.
# tests/test_cuda_source.py compiles this source with NVRTC and CuPy's options and checks.


# The kernels' CUDA C: {T} the C type, {P} the PTX type suffix, {C} the inline-asm register
# constraint (doubled braces are C's own)
_KERNELS_CU = """
#define T {T}
// BEGIN arithmetic (tests/cuda_on_cpu.py swaps this section for host arithmetic)
__device__ __forceinline__ T add_rn(T a, T b) {{
    T r; asm("add.rn.{P} %0, %1, %2;" : "={C}"(r) : "{C}"(a), "{C}"(b)); return r;
}}
__device__ __forceinline__ T sub_rn(T a, T b) {{
    T r; asm("sub.rn.{P} %0, %1, %2;" : "={C}"(r) : "{C}"(a), "{C}"(b)); return r;
}}
__device__ __forceinline__ T mul_rn(T a, T b) {{
    T r; asm("mul.rn.{P} %0, %1, %2;" : "={C}"(r) : "{C}"(a), "{C}"(b)); return r;
}}
__device__ __forceinline__ T fma_rn(T a, T b, T c) {{
    T r; asm("fma.rn.{P} %0, %1, %2, %3;" : "={C}"(r) : "{C}"(a), "{C}"(b), "{C}"(c)); return r;
}}
__device__ __forceinline__ T neg(T a) {{
    T r; asm("neg.{P} %0, %1;" : "={C}"(r) : "{C}"(a)); return r;
}}
// END arithmetic
__device__ __forceinline__ T term(const T* x, const T* y, long long i) {{
    return y ? mul_rn(x[i], y[i]) : x[i];
}}
// sequential over [lo, hi): acc = t[lo]; acc = acc + t[i] (fused: fma(x, y, acc))
__device__ T seq(const T* x, const T* y, long long lo, long long hi, int fused) {{
    if (hi <= lo) return (T)0;
    T acc = term(x, y, lo);
    for (long long i = lo + 1; i < hi; ++i)
        acc = (fused && y) ? fma_rn(x[i], y[i], acc) : add_rn(acc, term(x, y, i));
    return acc;
}}
extern "C" __global__ void k_sequential(const T* x, const T* y, long long n, int fused, T* out) {{
    if (blockIdx.x == 0 && threadIdx.x == 0) out[0] = seq(x, y, 0, n, fused);
}}
// one thread per block of `block` terms, sequential inside; partials combined by k_combine
extern "C" __global__ void k_blocked(const T* x, const T* y, long long n, long long block,
                                     int fused, T* partial, long long nblocks) {{
    long long b = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (b < nblocks) {{
        long long lo = b * block, hi = lo + block < n ? lo + block : n;
        partial[b] = seq(x, y, lo, hi, fused);
    }}
}}
// acc = p[0]; acc = acc + p[k] (the blocked order's second level)
extern "C" __global__ void k_chain(const T* p, long long m, T* out) {{
    if (blockIdx.x == 0 && threadIdx.x == 0) out[0] = seq(p, 0, 0, m, 0);
}}
// acc = +0; acc = acc + p[k] in block order (a zeroed result receiving the block results)
extern "C" __global__ void k_combine(const T* p, long long m, T* out) {{
    if (blockIdx.x == 0 && threadIdx.x == 0) {{
        T acc = (T)0;
        for (long long k = 0; k < m; ++k) acc = add_rn(acc, p[k]);
        out[0] = acc;
    }}
}}
// shared-memory tree per block of blockDim.x threads; last block padded with +0;
// fused (products): in the first level a thread fuses its own product into its addition
extern "C" __global__ void k_tree(const T* x, const T* y, long long n, int strided,
                                  int atomic, int fused, T* partial, T* result) {{
    extern __shared__ unsigned char smem[];
    T* s = (T*)smem;
    unsigned int tx = threadIdx.x, B = blockDim.x;
    long long i = (long long)blockIdx.x * B + tx;
    int fuse = fused && y && i < n;
    s[tx] = i < n ? term(x, y, i) : (T)0;
    __syncthreads();
    if (strided) {{
        for (unsigned int h = B / 2; h >= 1; h /= 2) {{
            if (tx < h) {{
                T v = (fuse && h == B / 2) ? fma_rn(x[i], y[i], s[tx + h])
                                           : add_rn(s[tx], s[tx + h]);
                s[tx] = v;
            }}
            __syncthreads();
        }}
    }} else {{
        for (unsigned int k = 1; k < B; k *= 2) {{
            if (tx % (2 * k) == 0) {{
                T v = (fuse && k == 1) ? fma_rn(x[i], y[i], s[tx + 1]) : add_rn(s[tx], s[tx + k]);
                s[tx] = v;
            }}
            __syncthreads();
        }}
    }}
    if (tx == 0) {{
        partial[blockIdx.x] = s[0];
        if (atomic) atomicAdd(result, s[0]);
    }}
}}
// Kahan (Higham Alg. 4.2), one thread
extern "C" __global__ void k_kahan(const T* x, const T* y, long long n, int fused, T* out) {{
    if (blockIdx.x != 0 || threadIdx.x != 0) return;
    if (n == 0) {{ out[0] = (T)0; return; }}
    T s = term(x, y, 0), c = (T)0;
    for (long long i = 1; i < n; ++i) {{
        T v = (fused && y) ? fma_rn(x[i], y[i], neg(c)) : sub_rn(term(x, y, i), c);
        T u = add_rn(s, v);
        c = sub_rn(sub_rn(u, s), v);
        s = u;
    }}
    out[0] = s;
}}
"""


def kernel_source(fmt: str) -> str:
    """CUDA C of the order kernels for float32 or float64 (every operation inline PTX).

    term(i) is x[i], or the product x[i]*y[i] rounded (``y`` not null); fused steps are
    ``fma(x[i], y[i], acc)``. Arithmetic: ``add.rn``/``sub.rn``/``mul.rn``/``fma.rn``/``neg``
    without ``.ftz``; the one exception is ``atomicAdd``, which on float32 in global memory
    always flushes subnormals (the emulated ``combine="atomic"`` does the same).
    """
    if fmt not in _TYPES:
        raise ValueError(
            f"the order kernels exist for float32 and float64, not {checks.shown(fmt)}"
        )
    T, P, C = _TYPES[fmt]
    return _KERNELS_CU.format(T=T, P=P, C=C)


_MODULES: dict = {}


def _module(fmt: str):
    cp = _cupy()
    if fmt not in _MODULES:
        _MODULES[fmt] = cp.RawModule(code=kernel_source(fmt))  # (CuPy adds -ftz=true)
    return _MODULES[fmt]


def _kernel_orders() -> tuple:
    from ..orders.registry import orders_of

    return tuple(name for name, spec in orders_of("sum").items() if spec.gpu_kernel)


KERNEL_ORDERS = _kernel_orders()  # the orders with gpu_kernel=True in the order registry


def kernel_sum(
    x,
    order: str,
    *,
    y=None,
    fma: bool = False,
    block: int = 128,
    combine: str = "sequential",
    return_partials: bool = False,
):
    """Run one of fpexplore's order kernels on the GPU; the result as a NumPy scalar.

    ``order`` in :data:`KERNEL_ORDERS`; ``y`` makes it a dot product; ``combine`` ("tree"
    orders): "sequential" (block order onto +0) or "atomic" (``atomicAdd`` onto a zeroed
    result, in whatever order blocks finish). ``return_partials`` also returns the block
    results of the tree orders (deterministic even with atomics).
    """
    cp = _cupy()
    x = np.ascontiguousarray(x)
    fmt = x.dtype.name
    mod = _module(fmt)
    dx = cp.asarray(x)
    dy = cp.asarray(np.ascontiguousarray(y)) if y is not None else None
    n = np.int64(x.size)
    out = cp.zeros(1, dtype=x.dtype)
    yp = dy if dy is not None else np.uint64(0)  # a null pointer
    if order == "sequential":
        mod.get_function("k_sequential")((1,), (1,), (dx, yp, n, np.int32(fma), out))
    elif order == "kahan":
        mod.get_function("k_kahan")((1,), (1,), (dx, yp, n, np.int32(fma), out))
    elif order == "blocked":
        nb = max(1, -(-int(n) // block))
        part = cp.zeros(nb, dtype=x.dtype)
        threads = 128
        mod.get_function("k_blocked")(
            (-(-nb // threads),),
            (threads,),
            (dx, yp, n, np.int64(block), np.int32(fma), part, np.int64(nb)),
        )
        mod.get_function("k_chain")((1,), (1,), (part, np.int64(nb), out))
    elif order in ("tree", "tree-strided"):
        if block & (block - 1) or not 2 <= block <= 1024:
            raise ValueError("block must be a power of two between 2 and 1024 on the GPU")
        nb = max(1, -(-int(n) // block))
        part = cp.zeros(nb, dtype=x.dtype)
        atomic = combine == "atomic"
        mod.get_function("k_tree")(
            (nb,),
            (block,),
            (
                dx,
                yp,
                n,
                np.int32(order == "tree-strided"),
                np.int32(atomic),
                np.int32(fma),
                part,
                out,
            ),
            shared_mem=block * x.dtype.itemsize,
        )
        if not atomic:
            mod.get_function("k_combine")((1,), (1,), (part, np.int64(nb), out))
        if return_partials:
            return out.get()[0], part.get()
    else:
        raise ValueError(
            f"no GPU kernel for order {checks.shown(order)}; kernels: {', '.join(KERNEL_ORDERS)}"
        )
    return out.get()[0]


# ----------------------------------------------------------------------------- CuPy itself


# the ops whose spec (fpexplore/ops) names a CuPy counterpart
LIBRARY_OPS = tuple(name for name, spec in OP_SPECS.items() if spec.cupy is not None)


def library(op: str, *args, tf32: bool = False, **kwargs):
    """CuPy's own function for ``op`` on NumPy inputs; the result back as NumPy.

    The function is the op spec's ``cupy`` (fpexplore/ops): sum -> cupy.sum, dot -> cupy.dot,
    matmul -> cupy.matmul (``tf32=True``: cuBLAS's CUBLAS_COMPUTE_32F_FAST_TF32 through
    ``cupy.cuda.cublas``' compute type; CuPy reads CUPY_TF32 once per process, so the
    recording runs TF32 in a subprocess), linspace -> cupy.linspace, exp/log/sin/tanh/sqrt/pow
    -> the ufuncs, ...
    """
    cp = _cupy()
    spec = OP_SPECS.get(op)
    if spec is None or spec.cupy is None:
        raise ValueError(f"no CuPy function for op {checks.shown(op)}")
    dev = [cp.asarray(a) if isinstance(a, np.ndarray) else a for a in args]
    if tf32:
        if op != "matmul":
            raise ValueError(f"tf32 applies to matmul (cuBLAS), not {op}")
        kwargs["tf32"] = True
    return cp.asnumpy(spec.cupy(cp, *dev, **kwargs))


# ----------------------------------------------------------------------------- compare's row


def steps(job: Job, name: str = "cupy") -> list[str]:
    return [name]


def results(job: Job, step: str) -> list[Result]:
    """CuPy's own function for the op on the real GPU (compare's ``cupy`` row)."""
    if job.op_spec.gpu_args is None:
        job.messages.append(f"cupy backend: compare() shows no CuPy row for {job.op}")
        return []
    if job.format in SMALL_DTYPES or INFO[job.format].user_defined:  # (no CuPy type for them)
        job.messages.append(
            f"cupy backend: CuPy has no {job.format} arrays or arithmetic: no CuPy row "
            "(the emulated orders show what rounding each addition to it does)"
        )
        return []
    args = job.op_spec.gpu_args(job.inputs, job.params)
    out, elapsed, first_use = timed(lambda: library(job.op, *args))
    return [Result(job.op_spec.gpu_label, "cupy", out, elapsed, first_use, device=status()[1])]
