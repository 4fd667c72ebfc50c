"""The orders of real CPU libraries' own loops, emulated bit for bit, which the wing adds to
the order registry when it loads (OpenBLAS, NumPy's einsum, polars, LLVM's and numba's loops
through the SIMD family of simd.py; torch and XLA through frameworks.py). Each is an
:class:`~fpexplore.orders.orderspec.OrderSpec` with ``library=`` its emulation and
``formats`` the input formats it takes; its parameters choose the library's kernel
(``kernel=``, ``target=``, ``threads=``, ...).

A SIMD order's emulation is a :class:`SimdLoops`: its loops by the value of its parameter,
each a :class:`SimdLoop` (its shape per format, from simd_shapes.py, and the library, call,
condition and verification behind it). A loop's name (``"openblas-sdot(haswell)"``: the
``openblas`` order's float32 loop for kernel=haswell) finds it (:func:`simd_loop`) and runs it
(:func:`simd_sum`), as docs/simd_orders.md and the tests do.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from .. import checks
from ..libspec import LIBRARIES
from ..orders.orderspec import LIBRARY, OrderSpec, fixed_calls
from .simd_shapes import SimdOrder, Stage, einsum, llvm_fastmath, openblas_ddot, openblas_sdot

__all__ = [
    "LIBRARY_ORDERS",
    "SimdLoop",
    "SimdLoops",
    "simd_loop",
    "simd_loops",
    "simd_sum",
]


# ----------------------------------------------------------------------------- library orders
# A real CPU library's own loop, emulated bit for bit (docs/simd_orders.md,
# docs/framework_orders.md): on the inputs in their own format, no accumulate or fma
# settings; a path that is not emulated raises NotImplementedError.


@dataclass(frozen=True)
class SimdLoop:
    """One loop of a library order in the SIMD family (simd_shapes.py): its shape per input
    format, and the library, call, condition and verification behind it. ``name`` is how
    docs/simd_orders.md and tests/slow_simd_orders.py call it (:func:`simd_loop`)."""

    name: str
    orders: dict = field(repr=False)  # dtype name -> SimdOrder
    library: str
    call: str
    condition: str
    verified: str
    description: str
    needs_y: bool = False  # a dot loop (else a sum loop)
    threaded: bool = False  # the order's threads= reaches it (else its shape's threads)

    def order(self, dtype) -> SimdOrder:
        key = np.dtype(dtype).name
        if key not in self.orders:
            raise ValueError(f"{self.name} is defined for {sorted(self.orders)}, not {key}")
        return self.orders[key]


@dataclass(frozen=True)
class SimdLoops:
    """A library order's runner over the SIMD family: its loops by the value of its parameter
    ``param`` (None: the order has one set of loops, under the key None). The loop for a call
    is the one of that value taking the input's format, for a dot or a sum; ``not_emulated``:
    (value, format) -> why that path raises NotImplementedError."""

    param: str | None
    table: dict  # param value -> tuple of SimdLoop
    not_emulated: dict = field(default_factory=dict)

    def loop(self, dtype: str, is_dot: bool, p: dict) -> SimdLoop:
        value = p[self.param] if self.param else None
        for lp in self.table[value]:
            if dtype in lp.orders and lp.needs_y == is_dot:
                return lp
        raise NotImplementedError(
            self.not_emulated.get((value, dtype), f"no emulated loop for {dtype} here")
        )

    def loops(self) -> list[SimdLoop]:
        return [lp for loops in self.table.values() for lp in loops]

    def __call__(self, x, y, p):
        from . import simd

        lp = self.loop(x.dtype.name, y is not None, p)
        extra = {"threads": p["threads"]} if lp.threaded else {}
        return simd.simd_sum(x, y, preset=lp.order(x.dtype), **extra)


def _framework(sum_name: str | None, dot_name: str | None) -> Callable:
    """A runner over frameworks.py: its sum and dot functions."""

    def run(x, y, p):
        from . import frameworks

        if y is None:
            return getattr(frameworks, sum_name)(x, **p)
        return getattr(frameworks, dot_name)(x, y, **p)

    return run


# ----------------------------------------------------------------------------- SIMD loops
# The loops of the CPU libraries' orders in the SIMD family (simd_shapes.py), by parameter:
# each its shape per format and where it was verified (docs/simd_orders.md defines them).

_OB = "OpenBLAS 0.3.31 (NumPy 2.4.6 wheel, scipy-openblas DYNAMIC_ARCH)"
_ZEN4 = "AMD EPYC Zen 4 (AVX-512), 2 cores, Python 3.11, Linux"
_HALF4 = ("half", "half", "half", "half")
_KERNELS = tuple(LIBRARIES["numpy"].kernels)  # the OpenBLAS kernels emulated

_SDOT = {  # kernel -> np.dot of float32 (sdot: 1 and 2 threads agree)
    "haswell": SimdLoop(
        "openblas-sdot(haswell)",
        {"float32": openblas_sdot((Stage(8, 4),), True, ("half", "pairs", "hadd", "hadd"))},
        _OB,
        "np.dot / np.matmul of 1-D float32, OPENBLAS_CORETYPE=Haswell (also Zen)",
        "kernel Haswell (threadpoolctl architecture 'Haswell'); 1 or 2 threads",
        "648/648 recorded np.dot float32 cases (1 and 2 threads) on " + _ZEN4,
        "4 ymm FMA accumulators (32 lanes) over n & -32; each hi128+lo128, (r0+r1)+(r2+r3), "
        "2x hadd; tail products in double from 0, + kernel, -> float",
        needs_y=True,
    ),
    "skylakex": SimdLoop(
        "openblas-sdot(skylakex)",
        {
            "float32": openblas_sdot(
                (Stage(16, 4), Stage(8, 4, fold=("half",))), True, ("seq", "half", "hadd", "hadd")
            )
        },
        _OB,
        "np.dot / np.matmul of 1-D float32, OPENBLAS_CORETYPE=SkylakeX (default on AVX-512)",
        "kernel SkylakeX (also Cooperlake, SapphireRapids); 1 or 2 threads",
        "648/648 recorded np.dot float32 cases (1 and 2 threads) on " + _ZEN4,
        "4 zmm FMA accumulators (64 lanes) over n & -64, each folded lo256+hi256; then 4 ymm "
        "over one more 32-block; ((a0+a1)+a2)+a3, lo128+hi128, 2x hadd; tail as Haswell",
        needs_y=True,
    ),
    "sandybridge": SimdLoop(
        "openblas-sdot(sandybridge)",
        {"float32": openblas_sdot((Stage(8, 4),), False, ("half", "pairs", "hadd", "hadd"))},
        _OB,
        "np.dot of 1-D float32, OPENBLAS_CORETYPE=Sandybridge (also Bulldozer..Excavator here)",
        "kernel Sandybridge; 1 or 2 threads",
        "648/648 recorded np.dot float32 cases (1 and 2 threads) on " + _ZEN4,
        "as Haswell with vmulps + vaddps (products rounded, no FMA)",
        needs_y=True,
    ),
    "nehalem": SimdLoop(
        "openblas-sdot(nehalem)",
        {"float32": openblas_sdot((Stage(4, 4),), False, ("pairs", "hadd", "hadd"))},
        _OB,
        "np.dot of 1-D float32, OPENBLAS_CORETYPE=Nehalem (also Atom, Barcelona, Bobcat here)",
        "kernel Nehalem; 1 or 2 threads",
        "648/648 recorded np.dot float32 cases (1 and 2 threads) on " + _ZEN4,
        "4 xmm accumulators (16 lanes) over n & -32, mulps + addps; (r0+r1)+(r2+r3), 2x haddps; "
        "tail as Haswell",
        needs_y=True,
    ),
    "prescott": SimdLoop(
        "openblas-sdot(prescott)",
        {
            "float32": SimdOrder(
                stages=(Stage(4, 4), Stage(4, 1, fold=("pairs",))),
                reduce=("hadd", "hadd"),
                single_term=True,
            )
        },
        _OB,
        "np.dot of 1-D float32, OPENBLAS_CORETYPE=Prescott (also Core2, Katmai...: "
        "reported 'Katmai')",
        "generic kernel/generic/dot.c with SSE universal intrinsics; 1 or 2 threads",
        "648/648 recorded np.dot float32 cases (1 and 2 threads) on " + _ZEN4,
        "4 xmm accumulators (mul + add) over n & -16, (v0+v1)+(v2+v3); one xmm over the rest "
        "& -4; 2x hadd; scalar float tail onto it",
        needs_y=True,
    ),
}
_DDOT = {  # kernel -> np.dot of float64 (threads= splits it)
    "haswell": SimdLoop(
        "openblas-ddot(haswell)",
        {"float64": openblas_ddot((Stage(4, 4),), ("half", "pairs", "hadd"), True, False)},
        _OB,
        "np.dot of 1-D float64, OPENBLAS_CORETYPE=Haswell; pass threads=2 for 2 threads",
        "kernel Haswell",
        "648/648 recorded np.dot float64 cases (threads=1 and 2) on " + _ZEN4,
        "4 ymm FMA accumulators (16 lanes) over n & -16; hi+lo, (r0+r1)+(r2+r3), hadd; tail "
        "(mul, add) onto it; 2 threads: halves ceil(n/2) for n > 10000, added onto 0.0",
        needs_y=True,
        threaded=True,
    ),
    "skylakex": SimdLoop(
        "openblas-ddot(skylakex)",
        {
            "float64": openblas_ddot(
                (Stage(8, 4), Stage(4, 4, fold=("half",))), ("seq", "half", "hadd"), True, True
            )
        },
        _OB,
        "np.dot of 1-D float64, OPENBLAS_CORETYPE=SkylakeX; pass threads=2 for 2 threads",
        "kernel SkylakeX",
        "648/648 recorded np.dot float64 cases (threads=1 and 2) on " + _ZEN4,
        "4 zmm FMA accumulators (32 lanes) over n & -32, folded lo+hi; 4 ymm over one more "
        "16-block; ((a0+a1)+a2)+a3, lo+hi, hadd; tail fma onto it; threads as Haswell",
        needs_y=True,
        threaded=True,
    ),
    "sandybridge": SimdLoop(
        "openblas-ddot(sandybridge)",
        {"float64": openblas_ddot((Stage(4, 4),), ("half", "pairs", "hadd"), False, False)},
        _OB,
        "np.dot of 1-D float64, OPENBLAS_CORETYPE=Sandybridge; pass threads=2 for 2 threads",
        "kernel Sandybridge",
        "648/648 recorded np.dot float64 cases (threads=1 and 2) on " + _ZEN4,
        "as Haswell with vmulpd + vaddpd (no FMA)",
        needs_y=True,
        threaded=True,
    ),
    "nehalem": SimdLoop(
        "openblas-ddot(nehalem)",
        {"float64": openblas_ddot((Stage(2, 4),), ("pairs", "hadd"), False, False)},
        _OB,
        "np.dot of 1-D float64, OPENBLAS_CORETYPE=Nehalem; pass threads=2 for 2 threads",
        "kernel Nehalem",
        "648/648 recorded np.dot float64 cases (threads=1 and 2) on " + _ZEN4,
        "4 xmm accumulators (8 lanes, mulpd + addpd) over n & -16; (r0+r1)+(r2+r3), haddpd; "
        "tail onto it; threads as Haswell",
        needs_y=True,
        threaded=True,
    ),
}
_OPENBLAS = SimdLoops(
    "kernel",
    {k: (_SDOT[k], *((_DDOT[k],) if k in _DDOT else ())) for k in _KERNELS},
    not_emulated={
        ("prescott", "float64"): "OpenBLAS's Prescott ddot (dot_sse2.S) is not emulated "
        "(docs/simd_orders.md)"
    },
)
_EINSUM = SimdLoops(
    None,
    {
        None: (
            SimdLoop(
                "numpy-einsum-dot",
                {"float32": einsum(4, "nested"), "float64": einsum(2, "nested")},
                "NumPy 2.4.6 (einsum_sumprod.c.src at the X86_V2 baseline: SSE, no FMA)",
                "np.einsum('i,i->', x, y)",
                "any x86-64 NumPy 2.x wheel (the einsum loops are not CPU-dispatched)",
                "648/648 recorded cases (324 float32, 324 float64) on " + _ZEN4,
                "8192-element buffer chunks added onto 0; per chunk: 4 xmm per iteration, "
                "acc = p0 + (p1 + (p2 + (p3 + acc))); zero-padded xmm remainder; 2x hadd (f64: 1)",
                needs_y=True,
            ),
            SimdLoop(
                "numpy-einsum-sum",
                {"float32": einsum(4, "tree"), "float64": einsum(2, "tree")},
                "NumPy 2.4.6 (einsum_sumprod.c.src at the X86_V2 baseline: SSE, no FMA)",
                "np.einsum('i->', x)",
                "any x86-64 NumPy 2.x wheel (the einsum loops are not CPU-dispatched)",
                "648/648 recorded cases (324 float32, 324 float64) on " + _ZEN4,
                "8192-element chunks added onto 0; per chunk: acc += (a0+a1)+(a2+a3) on xmm; "
                "zero-padded xmm remainder; 2x hadd (f64: 1)",
            ),
        )
    },
)
_POLARS = SimdLoops(
    None,
    {
        None: (
            SimdLoop(
                "polars-sum",
                {
                    dt: SimdOrder(stages=(Stage(16, 1),), reduce=_HALF4, block=128)
                    for dt in ("float32", "float64")
                },
                "polars 2.1.0 (polars-compute/src/float_sum.rs)",
                "pl.Series(x).sum() (one chunk, no nulls)",
                "any CPU (portable 16-lane code)",
                "648/648 recorded cases (324 float32, 324 float64) on " + _ZEN4,
                "first n % 128 sequential; pairwise over 128-blocks split at (blocks//2)*128; "
                "block = 16 lanes x 8 rows from +0, halved 16->8->4->2->1; main + head",
            ),
        )
    },
)
_LLVM = SimdLoops(
    "target",
    {
        "avx2": (
            SimdLoop(
                "llvm-fastmath(avx2)",
                {"float32": llvm_fastmath(8, 4), "float64": llvm_fastmath(4, 4)},
                "numba 0.68.1 / llvmlite 0.50 (LLVM 22)",
                "@njit(fastmath=True) loop `s += x[i]` from 0",
                "NUMBA_CPU_NAME=haswell with AVX-512 disabled (any AVX2 target)",
                "648/648 recorded cases (324 float32, 324 float64) on " + _ZEN4,
                "ymm x 4 interleaved (f32: 32 per iteration), (v0+v1)+(v2+v3), halving; "
                "4-lane epilogue seeded in lane 0, halving; scalars",
            ),
        ),
        "avx512": (
            SimdLoop(
                "llvm-fastmath(avx512)",
                {"float32": llvm_fastmath(16, 8), "float64": llvm_fastmath(8, 4)},
                "numba 0.68.1 / llvmlite 0.50 (LLVM 22)",
                "@njit(fastmath=True) loop `s += x[i]` from 0",
                "host CPU znver4 (AVX-512)",
                "648/648 recorded cases (324 float32, 324 float64) on " + _ZEN4,
                "zmm x 4 interleaved (f32: 64 per iteration), (v0+v1)+(v2+v3), halving; "
                "ymm epilogue seeded in lane 0, halving; scalars",
            ),
        ),
    },
)
_PRANGE = SimdLoops(
    None,
    {
        None: (
            SimdLoop(
                "numba-prange",
                {dt: SimdOrder(threads=2) for dt in ("float32", "float64")},
                "numba 0.68.1 (parfor reduction, workqueue/omp layer)",
                "@njit(parallel=True) loop `s += x[i]` over prange, NUMBA_NUM_THREADS=2",
                "any CPU; threads = numba.get_num_threads()",
                "648/648 recorded cases with 2 threads (324 float32, 324 float64) on " + _ZEN4,
                "thread t sums its ceil(rest / threads left) consecutive terms sequentially "
                "from +0; the partial sums added in order onto +0",
                threaded=True,
            ),
        )
    },
)


_threads = checks.int_check("threads", 1, 256)


_F32_64 = ("float32", "float64")
_SIMD_CALLS = fixed_calls(("simd._simd", "X"))  # the family's one compiled entry point
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
        library=_OPENBLAS,
        kernel_calls=_SIMD_CALLS,
        grid=tuple((("kernel", k),) for k in _KERNELS)
        + tuple((("kernel", k), ("threads", 2)) for k in _KERNELS),
        verified="OpenBLAS 0.3.31 in NumPy 2.4.6, AMD EPYC Zen 4, each OPENBLAS_CORETYPE",
        layout="contiguous",
    ),
    OrderSpec(
        "einsum",
        "np.einsum('i->') and ('i,i->'): SSE baseline, 4 lanes, 8192-element chunks",
        LIBRARY,
        formats=_F32_64,
        library=_EINSUM,
        kernel_calls=_SIMD_CALLS,
        verified="NumPy 2.4.6 x86-64 wheel, AMD EPYC Zen 4 (the loops are not CPU-dispatched)",
        layout="contiguous",
    ),
    OrderSpec(
        "polars",
        "polars Series.sum: first n % 128 sequentially, pairwise over 128-blocks of 16 lanes",
        LIBRARY,
        ops=("sum",),
        formats=_F32_64,
        library=_POLARS,
        kernel_calls=_SIMD_CALLS,
        verified="polars 2.1.0, AMD EPYC Zen 4",
        layout="contiguous",
    ),
    OrderSpec(
        "llvm-fastmath",
        "a numba @njit(fastmath=True) loop: LLVM's vectorizer (target= avx2 or avx512)",
        LIBRARY,
        params={"target": ("avx2", checks.choice_check("target", ("avx2", "avx512")))},
        ops=("sum",),
        formats=_F32_64,
        library=_LLVM,
        kernel_calls=_SIMD_CALLS,
        grid=((), (("target", "avx512"),)),
        verified="numba 0.68 (LLVM 22), AMD EPYC Zen 4 (znver4; haswell for avx2)",
        layout="contiguous",
    ),
    OrderSpec(
        "numba-prange",
        "a numba parallel prange sum: one sequential part per thread, parts added onto +0",
        LIBRARY,
        params={"threads": (2, _threads)},
        ops=("sum",),
        formats=_F32_64,
        library=_PRANGE,
        kernel_calls=_SIMD_CALLS,
        grid=((), (("threads", 4),)),
        verified="numba 0.68, NUMBA_NUM_THREADS=2, AMD EPYC Zen 4",
        layout="contiguous",
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
        layout="contiguous",
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
        layout="contiguous",
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
        layout="contiguous",
    ),
]


# ----------------------------------------------------------------------------- by name


def _simd_loops() -> dict[str, SimdLoop]:
    return {
        lp.name: lp
        for spec in LIBRARY_ORDERS
        if isinstance(spec.library, SimdLoops)
        for lp in spec.library.loops()
    }


def simd_loops() -> list[str]:
    """The names of the library orders' SIMD loops (docs/simd_orders.md)."""
    return list(_simd_loops())


def simd_loop(name: str) -> SimdLoop:
    """A library order's SIMD loop by its name, such as ``"openblas-sdot(haswell)"`` (the
    ``openblas`` order's loop for kernel=haswell, a float32 dot)."""
    loops = _simd_loops()
    if not isinstance(name, str):
        raise TypeError(f"a SIMD loop's name is a str, not {type(name).__name__}")
    if name not in loops:
        raise ValueError(f"unknown SIMD order {checks.shown(name)}; known: {sorted(loops)}")
    return loops[name]


def simd_sum(x, y=None, *, preset: str | SimdOrder | None = None, **params):
    """simd.simd_sum with ``preset`` also a loop's name (:func:`simd_loop`: its shape for
    ``x.dtype``); ``params`` override the shape's fields (``threads=2``)."""
    from . import simd

    if isinstance(preset, str):
        preset = simd_loop(preset).order(np.asarray(x).dtype)
    return simd.simd_sum(x, y, preset=preset, **params)
