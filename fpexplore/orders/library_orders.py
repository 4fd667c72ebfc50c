"""The orders of real libraries' own loops, emulated bit for bit, for the one order registry
(registry.py gathers them): CPU libraries (OpenBLAS, NumPy's einsum, polars, LLVM's and
numba's loops through the SIMD family of simd.py; torch and XLA through frameworks.py) and
NVIDIA's tensor cores (tensor_core.py). Each is an :class:`~.orderspec.OrderSpec` with
``library=`` its emulation and ``formats`` the input formats it takes; its parameters
choose the library's kernel (``kernel=``, ``target=``, ``threads=``, ``arch=``, ...).
"""

from __future__ import annotations

from collections.abc import Callable

from .. import checks
from ..libspec import LIBRARIES
from . import tensor_core
from .arith import PRODUCT_OPS
from .orderspec import LIBRARY, OrderSpec, fixed_calls

__all__ = ["LIBRARY_ORDERS", "TENSOR_CORES"]


# ----------------------------------------------------------------------------- library orders
# A real CPU library's own loop, emulated bit for bit (docs/simd_orders.md,
# docs/framework_orders.md): on the inputs in their own format, no accumulate or fma
# settings; a path that is not emulated raises NotImplementedError.


def _simd(preset: Callable) -> Callable:
    """A runner over fpexplore.orders.simd; preset(dtype name, is_dot, params) gives the
    preset's name and the parameters it overrides."""

    def run(x, y, p):
        from . import simd

        name, extra = preset(x.dtype.name, y is not None, p)
        return simd.simd_sum(x, y, preset=name, **extra)

    return run


def _framework(sum_name: str | None, dot_name: str | None) -> Callable:
    """A runner over fpexplore.orders.frameworks: its sum and dot functions."""

    def run(x, y, p):
        from . import frameworks

        if y is None:
            return getattr(frameworks, sum_name)(x, **p)
        return getattr(frameworks, dot_name)(x, y, **p)

    return run


def _openblas(dtype: str, is_dot: bool, p: dict):
    if dtype == "float32":
        return f"openblas-sdot({p['kernel']})", {}  # sdot: 1 and 2 threads agree
    if dtype == "float64":
        if p["kernel"] == "prescott":
            raise NotImplementedError(
                "OpenBLAS's Prescott ddot (dot_sse2.S) is not emulated (docs/simd_orders.md)"
            )
        return f"openblas-ddot({p['kernel']})", {"threads": p["threads"]}
    raise ValueError(f"order 'openblas' is np.dot of float32 or float64 (BLAS), not {dtype}")


_threads = checks.int_check("threads", 1, 256)


_F32_64 = ("float32", "float64")
_SIMD_CALLS = fixed_calls(("simd._simd", "X"))  # the family's one compiled entry point
_KERNELS = tuple(LIBRARIES["numpy"].kernels)  # the OpenBLAS kernels emulated
_ONE_TWO = ((), (("threads", 2),))

LIBRARY_ORDERS = [
    OrderSpec(
        "openblas",
        "np.dot / np.matmul of 1-D float32 or float64: OpenBLAS's dot kernel for kernel=... "
        "(haswell: also Zen; skylakex: AVX-512 CPUs), threads= (ddot splits at ceil(n/2))",
        LIBRARY,
        params={
            "kernel": ("haswell", checks.choice_check("kernel", _KERNELS)),
            "threads": (1, _threads),
        },
        ops=("dot",),
        formats=_F32_64,
        library=_simd(_openblas),
        kernel_calls=_SIMD_CALLS,
        grid=tuple((("kernel", k),) for k in _KERNELS)
        + tuple((("kernel", k), ("threads", 2)) for k in _KERNELS),
        verified="OpenBLAS 0.3.31 in NumPy 2.4.6, AMD EPYC Zen 4, each OPENBLAS_CORETYPE",
    ),
    OrderSpec(
        "einsum",
        "np.einsum('i->') and ('i,i->'): SSE baseline, 4 lanes, 8192-element chunks",
        LIBRARY,
        formats=_F32_64,
        library=_simd(
            lambda dtype, is_dot, p: ("numpy-einsum-dot" if is_dot else "numpy-einsum-sum", {})
        ),
        kernel_calls=_SIMD_CALLS,
        verified="NumPy 2.4.6 x86-64 wheel, AMD EPYC Zen 4 (the loops are not CPU-dispatched)",
    ),
    OrderSpec(
        "polars",
        "polars Series.sum: first n % 128 sequentially, pairwise over 128-blocks of 16 lanes",
        LIBRARY,
        ops=("sum",),
        formats=_F32_64,
        library=_simd(lambda dtype, is_dot, p: ("polars-sum", {})),
        kernel_calls=_SIMD_CALLS,
        verified="polars 2.1.0, AMD EPYC Zen 4",
    ),
    OrderSpec(
        "llvm-fastmath",
        "a numba @njit(fastmath=True) loop: LLVM's vectorizer (target= avx2 or avx512)",
        LIBRARY,
        params={"target": ("avx2", checks.choice_check("target", ("avx2", "avx512")))},
        ops=("sum",),
        formats=_F32_64,
        library=_simd(lambda dtype, is_dot, p: (f"llvm-fastmath({p['target']})", {})),
        kernel_calls=_SIMD_CALLS,
        grid=((), (("target", "avx512"),)),
        verified="numba 0.68 (LLVM 22), AMD EPYC Zen 4 (znver4; haswell for avx2)",
    ),
    OrderSpec(
        "numba-prange",
        "a numba parallel prange sum: one sequential part per thread, parts added onto +0",
        LIBRARY,
        params={"threads": (2, _threads)},
        ops=("sum",),
        formats=_F32_64,
        library=_simd(lambda dtype, is_dot, p: ("numba-prange", {"threads": p["threads"]})),
        kernel_calls=_SIMD_CALLS,
        grid=((), (("threads", 4),)),
        verified="numba 0.68, NUMBA_NUM_THREADS=2, AMD EPYC Zen 4",
    ),
    OrderSpec(
        "torch",
        "torch.sum on the CPU (ATen cascade_sum: 4 x 8-lane accumulators), threads=",
        LIBRARY,
        params={"threads": (1, _threads)},
        ops=("sum",),
        library=_framework("torch_sum", None),
        kernel_calls=fixed_calls(("frameworks._row_sum_jit", "A"), ("frameworks._finish_jit", "A")),
        grid=_ONE_TWO,
        verified="torch 2.14.1 CPU (AVX2 kernels), 1 and 2 threads, AMD EPYC Zen 4",
    ),
    OrderSpec(
        "torch",
        "torch.dot on the CPU (float16/bfloat16: float32 arithmetic, 8 x 8 lanes; float32: "
        "MKL's sdot as probed, 2 threads split at ceil(n/2) from n = 8192), threads=",
        LIBRARY,
        params={"threads": (1, _threads)},
        ops=("dot",),
        formats=("float16", "bfloat16", "float32"),
        library=_framework(None, "torch_dot"),
        grid=_ONE_TWO,
        verified="torch 2.14.1 CPU (AVX2 kernels; MKL 2024 on AMD), AMD EPYC Zen 4",
    ),
    OrderSpec(
        "xla",
        "jnp.sum / jnp.dot on XLA:CPU: 32-element windows, recursively (n >= 4096: YNNPACK, "
        "not emulated, unless ynn=False)",
        LIBRARY,
        params={"ynn": (True, checks.boolean_check("ynn"))},
        formats=("float32",),
        library=_framework("xla_sum", "xla_dot"),
        grid=((), (("ynn", False),)),
        verified="jax/jaxlib 0.10.2, AMD EPYC Zen 4",
    ),
]


# ----------------------------------------------------------------------------- tensor cores
# NVIDIA tensor cores (fpx.mma, docs/tensor_cores.md): A @ B with C = 0 and a float32 output,
# the inputs in the tensor-core format of the arrays (float16, bfloat16) or of the input
# rounding (+tf32, +bfloat16, +float8_e4m3, +float8_e5m2). Checked against the published
# outputs of the GPUs, not run on one here.


def _tensor_core(x, y, p, rounding):
    return tensor_core.product(x, y, p["arch"], rounding)


TENSOR_CORES = [
    OrderSpec(
        "tensor-core",
        "NVIDIA tensor cores (fpx.mma with C = 0, float32 output), arch= v100, a100, h100 "
        "(a2, a30, h200); inputs: float16/bfloat16 arrays or an input rounding (+tf32, "
        "+float8_e4m3, ...); verified against published hardware outputs of the V100, A100 "
        "and H100 (docs/tensor_cores.md)",
        LIBRARY,
        params={"arch": ("h100", tensor_core.check_arch)},
        ops=PRODUCT_OPS,
        formats=("float16", "bfloat16"),
        rounded_formats=("float32",),
        takes_rounding=True,
        library=_tensor_core,
        fixed=(
            "is the tensor cores' own arithmetic: each block of exact products is aligned "
            "(truncated) to its largest exponent, added exactly and rounded once to float32 "
            "(docs/tensor_cores.md), with no accumulator format and no fma to choose"
        ),
        grid=tuple((("arch", a),) for a in ("v100", "a100", "h100")),
        verified="published hardware outputs of the V100, A100 and H100 "
        "(docs/tensor_cores.md); not run on a GPU here",
    ),
]
