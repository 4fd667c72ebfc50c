"""The order registry: one entry per evaluation order, holding everything about it.

An :class:`OrderSpec` is the one place an order is defined in code: its name, description,
kind, parameters and their checks, whether ``fma`` fuses in it, its float16 accumulator, its
**runner** (which compiled kernels compute it), its matmul kernel code, its error **depth**
(for Higham's bound), the parameter **grid** the detective searches, whether fpexplore has a
**GPU kernel** for it, the kernels a warm-up must compile, and the plain-Python **source** the
reproducer writes. The definitions themselves, bit for bit, are in docs/orders.md.

Adding an order: one ``OrderSpec`` here (and its kernel in _kernels.py if it needs a new
loop), its definition in docs/orders.md, its slow definition in tests/slow_orders.py. A
library's own loop: a preset of the SIMD family (simd.py; docs/simd_orders.md,
tests/slow_simd_orders.py) or a function of frameworks.py (docs/framework_orders.md,
tests/slow_framework_orders.py), registered here with ``library=`` and its ``formats``.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from .. import checks
from . import tensor_core, trees
from .arith import cub_config, kernels, out_rp

__all__ = [
    "BLOCKS",
    "DEFINITION",
    "EXACT",
    "HYPOTHESIS",
    "LIBRARY",
    "DOT_ORDERS",
    "MATMUL_ORDERS",
    "OPS",
    "SUM_ORDERS",
    "OrderSpec",
    "fusable",
    "kernel_needs",
    "lookup",
    "orders_for",
    "orders",
]

# kinds of order
DEFINITION = "definition"  # a textbook order, defined in docs/orders.md
LIBRARY = "library"  # what a real library does, verified against it on this machine
HYPOTHESIS = "hypothesis"  # a GPU library's order as read from source, not yet confirmed on a GPU
EXACT = "exact"

BLOCKS = (32, 64, 128, 256, 512, 1024)  # block sizes the detective tries


def _int(name: str, *, lo: int = 1, hi: int = 1 << 30, pow2: bool = False) -> Callable:
    def check(v):
        if isinstance(v, bool) or not isinstance(v, numbers.Integral):
            raise ValueError(f"{name} must be an integer, got {checks.shown(v)}")
        v = int(v)
        if not lo <= v <= hi:
            raise ValueError(f"{name} must be between {lo} and {hi}, got {v}")
        if pow2 and v & (v - 1):
            raise ValueError(f"{name} must be a power of two (2, 4, ..., 1024, ...), got {v}")
        return v

    return check


def _choice(name: str, options: tuple) -> Callable:
    def check(v):
        if v not in options:
            raise ValueError(
                f"{name} must be one of {', '.join(map(repr, options))}, got {checks.shown(v)}"
            )
        return v

    return check


def _seed(v):
    return checks.seed(v)  # 0 .. 2**32 - 1: a huge one reached numba as a Python object


def _bool(name: str) -> Callable:
    def check(v):
        if v is None or isinstance(v, bool):
            return v
        raise ValueError(f"{name} must be True or False, got {checks.shown(v)}")

    return check


# ----------------------------------------------------------------------------- the spec


@dataclass(frozen=True)
class OrderSpec:
    """One evaluation order (see the module docstring).

    ``run(X, Y, fused, ar, params, out)`` computes the order over the terms ``X[i]`` (``Y``
    None) or the products ``X[i]*Y[i]`` in the compute type of ``ar`` (an
    :class:`~fpexplore.orders.arith.Arith`) and returns a compute-type scalar; ``out`` is the
    output format. ``depth(n, params)`` is the most additions a term goes through (n >= 2).
    ``kernel_calls(has_y, out_name, params)`` lists ``(kernel, "S"|"C"|None)``: the compiled
    kernels ``run`` calls with a first array of the storage ("S") or compute ("C") dtype.
    Library orders (a real library's own loop, emulated: ``library``) take the inputs in
    their own format instead and have no accumulator setting.
    """

    name: str
    description: str
    kind: str = DEFINITION
    params: dict = field(default_factory=dict)  # name -> (default, check)
    fma: bool = False
    float16_accumulate: str | None = None  # default accumulator for float16 data
    run: Callable | None = None
    matmul_code: int | None = None  # the order's number in _kernels.reduce_code
    depth: Callable | None = None
    grid: tuple = ((),)  # the detective's parameter settings, each a tuple of (key, value)
    gpu_kernel: bool = False  # fpexplore/backends/cupy.py has a CUDA kernel for it
    kernel_calls: Callable | None = None
    source: str | None = None  # plain-Python order_sum(t, T) for the reproducer
    ops: tuple = ("sum", "dot")  # the ops it applies to (also matmul: those with a matmul_code)
    library: Callable | None = None  # a library's own loop: library(x, y, params) -> scalar
    verified: str = ""  # library orders: the library, version and machine it was checked on
    formats: tuple = ("float16", "bfloat16", "float32", "float64")  # the input formats it takes
    # hardware that reads its inputs in a format of its own (tensor cores): the input formats
    # it takes only with an input rounding, and library(x, y, params, input_rounding)
    rounded_formats: tuple = ()
    takes_rounding: bool = False
    fixed: str = ""  # why accumulate and fma are no settings of it (library orders: the loop's)
    listed: bool = True  # in fpx.orders(op), compare's defaults and the detective's search

    def run_library(self, x, y, params: dict, accumulate=None, input_rounding=None):
        """A library order on the inputs in their own format (``y`` None for a sum; 2-D ``x``
        and ``y`` for a matmul), their values already rounded to ``input_rounding``."""
        if accumulate is not None:
            raise ValueError(
                f"order {checks.shown(self.name)} "
                + (self.fixed or "is a library's own loop with its own accumulators")
                + "; accumulate does not apply"
            )
        fmt = x.dtype.name
        if fmt not in self.formats + self.rounded_formats:
            taken = ", ".join(self.formats)
            if self.rounded_formats:
                taken += f" ({', '.join(self.rounded_formats)} with an input rounding)"
            raise ValueError(
                f"order {checks.shown(self.name)} is defined for {taken} inputs, not {fmt}"
            )
        if self.takes_rounding:  # (it says which rounding a rounded format needs)
            return self.library(x, y, params, input_rounding)
        return self.library(x, y, params)

    def validate(self, given: dict) -> dict:
        unknown = set(given) - set(self.params)
        if unknown:  # an unknown keyword argument: a TypeError, as Python's own
            allowed = ", ".join(sorted(self.params)) or "none"
            raise TypeError(
                f"order {checks.shown(self.name)} has no parameter {', '.join(sorted(unknown))}; "
                f"its parameters: {allowed}"
            )
        out = {}
        for key, (default, check) in self.params.items():
            out[key] = check(given[key]) if key in given else default
        return out


# ----------------------------------------------------------------------------- runners


def _y(X, Y):
    """(Y, has_y) as the kernels take them: a dummy array when there are no products."""
    if Y is not None:
        return Y, True
    return (X[:1] if X.size else np.zeros(1, X.dtype)), False


def _run_sequential(X, Y, fused, ar, p, out):
    Y, has_y = _y(X, Y)
    return kernels().sequential(X, Y, has_y, fused, ar.z, ar.rp, 0, X.shape[0], 1)


def _run_reverse(X, Y, fused, ar, p, out):
    Y, has_y = _y(X, Y)
    return kernels().sequential(X, Y, has_y, fused, ar.z, ar.rp, X.shape[0] - 1, -1, -1)


def _run_pairwise(X, Y, fused, ar, p, out):
    Y, has_y = _y(X, Y)
    return kernels().pairwise(X, Y, has_y, ar.z, ar.rp, 0, X.shape[0])


def _run_numpy(X, Y, fused, ar, p, out):
    k = kernels()
    Y, has_y = _y(X, Y)
    n = X.shape[0]
    if out.name == "bfloat16":
        # NumPy has no bfloat16: np.sum runs ml_dtypes' add loop, sequentially onto +0.0
        return k.combine(X, ar.z, ar.rp, np.arange(n), False)
    chunk = p.get("chunk", max(n, 1))
    return k.numpy_sum(X, Y, has_y, ar.z, ar.rp, out_rp(out, ar), chunk)


def _run_blocked(X, Y, fused, ar, p, out):
    Y, has_y = _y(X, Y)
    return kernels().blocked(X, Y, has_y, fused, ar.z, ar.rp, p["block"])


def _tree_runner(strided: bool) -> Callable:
    def run(X, Y, fused, ar, p, out):
        k = kernels()
        Y, has_y = _y(X, Y)
        parts = k.tree_partials(X, Y, has_y, fused, ar.z, ar.rp, p["block"], strided)
        if p["combine"] == "atomic":
            # atomicAdd lands in any order; on float32 it flushes subnormals (see k.combine)
            perm = k.permutation(parts.size, p["seed"])
            return k.combine(parts, ar.z, ar.rp, perm, ar.info.name == "float32")
        return k.combine(parts, ar.z, ar.rp, np.arange(parts.size), False)

    return run


def _run_cupy_kernel(X, Y, fused, ar, p, out):
    Y, has_y = _y(X, Y)
    ftz = p["ftz"]
    ftz = (ar.info.name == "float32") if ftz is None else (ftz and ar.info.name == "float32")
    return kernels().cupy_kernel(X, Y, has_y, fused, ar.z, ar.rp, p["block_size"], ftz)


def _run_cub(X, Y, fused, ar, p, out):
    k = kernels()
    Y, has_y = _y(X, Y)
    values = k.terms(X, Y, has_y, ar.z, ar.rp) if has_y else X
    return k.cub_sum(values, ar.z, ar.rp, *cub_config(p, ar.info), p["max_blocks"])


def _run_shuffled(X, Y, fused, ar, p, out):
    k = kernels()
    perm = k.permutation(X.shape[0], p["seed"])
    Yp, has_y = _y(X, None if Y is None else Y[perm])
    return k.sequential(X[perm], Yp, has_y, fused, ar.z, ar.rp, 0, X.shape[0], 1)


def _run_kahan(X, Y, fused, ar, p, out):
    Y, has_y = _y(X, Y)
    return kernels().kahan(X, Y, has_y, fused, ar.z, ar.rp)


def _run_neumaier(X, Y, fused, ar, p, out):
    Y, has_y = _y(X, Y)
    return kernels().neumaier(X, Y, has_y, ar.z, ar.rp)


def _run_revealed(X, Y, fused, ar, p, out):
    if p["tree"] is None:
        raise ValueError("order 'revealed' needs tree= (Reveal.as_order() writes the spec)")
    t = trees.parse(p["tree"])
    if X.shape[0] != t.n:
        raise ValueError(f"this revealed tree adds n={t.n} terms, got {X.shape[0]}")
    if t.multiway:
        return trees.evaluate(t, X, Y, fused, ar)
    Y, has_y = _y(X, Y)
    return kernels().tree_eval(X, Y, has_y, fused, ar.z, ar.rp, t.program)


# ----------------------------------------------------------------------------- warm-up lists


def _calls(*calls) -> Callable:
    return lambda has_y, out_name, p: list(calls)


def _numpy_calls(has_y, out_name, p):
    return [("combine", "S")] if out_name == "bfloat16" else [("numpy_sum", "S")]


def _tree_calls(has_y, out_name, p):
    calls = [("tree_partials", "S"), ("combine", "C")]
    return calls + ([("permutation", None)] if p.get("combine") == "atomic" else [])


def _cub_calls(has_y, out_name, p):
    return [("terms", "S"), ("cub_sum", "C")] if has_y else [("cub_sum", "S")]


# ----------------------------------------------------------------------------- depths


def _log2(n: int) -> int:
    return math.ceil(math.log2(n))


def _cub_depth(n, p):
    # tiles of 4096 per block (strip-mined), per-thread trees, warps, two passes
    tiles = math.ceil(n / 4096)
    grid = min(tiles, 5280)
    per_block = math.ceil(tiles / grid)
    return 5 * (per_block + 1) + 13 + 5 * (math.ceil(grid / 4096) + 1) + 13 + 1


def _numpy_depth(n, p):
    # leaf blocks of <= 128: 15 adds per accumulator, 3 to combine, <= 7 remainder adds
    chunks = math.ceil(n / p["chunk"]) if "chunk" in p else 1
    return 25 + _log2(n) + chunks


# ----------------------------------------------------------------------------- sources

_SOURCE = {
    "sequential": """
def order_sum(t, T):
    acc = t[0] if len(t) else T(0)
    for v in t[1:]:
        acc = T(acc + v)
    return acc
""",
    "reverse": """
def order_sum(t, T):
    t = t[::-1]
    acc = t[0] if len(t) else T(0)
    for v in t[1:]:
        acc = T(acc + v)
    return acc
""",
    "pairwise": """
def order_sum(t, T):
    if len(t) == 0:
        return T(0)
    if len(t) == 1:
        return t[0]
    h = len(t) // 2
    return T(order_sum(t[:h], T) + order_sum(t[h:], T))
""",
    "blocked": """
BLOCK = {block}

def order_sum(t, T):
    sums = []
    for lo in range(0, len(t), BLOCK):
        acc = t[lo]
        for v in t[lo + 1 : lo + BLOCK]:
            acc = T(acc + v)
        sums.append(acc)
    acc = sums[0] if sums else T(0)
    for s in sums[1:]:
        acc = T(acc + s)
    return acc
""",
    "tree": """
BLOCK = {block}

def order_sum(t, T):
    # each block of BLOCK "threads": s[i] += s[i + k] for i % 2k == 0, k = 1, 2, 4, ...
    # (the last block padded with zeros), block results added in order onto 0.0
    acc = T(0)
    for lo in range(0, len(t), BLOCK):
        s = list(t[lo : lo + BLOCK]) + [T(0)] * max(0, lo + BLOCK - len(t))
        k = 1
        while k < BLOCK:
            for i in range(0, BLOCK, 2 * k):
                s[i] = T(s[i] + s[i + k])
            k *= 2
        acc = T(acc + s[0])
    return acc
""",
}


# ----------------------------------------------------------------------------- the orders

TREE_PARAMS = {
    "block": (128, _int("block", lo=2, hi=1 << 16, pow2=True)),
    "combine": ("sequential", _choice("combine", ("sequential", "atomic"))),
    "seed": (0, _seed),
}
_BLOCK_GRID = tuple((("block", b),) for b in BLOCKS)
_TREE = dict(
    params=TREE_PARAMS,
    fma=True,
    depth=lambda n, p: _log2(n) + 1,  # plus the add onto the zeroed result
    grid=_BLOCK_GRID,
    gpu_kernel=True,
    kernel_calls=_tree_calls,
)

_DEFINED = [
    OrderSpec(
        "sequential",
        "acc = x[0]; acc = acc + x[i] for i = 1..n-1",
        fma=True,
        run=_run_sequential,
        matmul_code=0,
        depth=lambda n, p: n - 1,
        gpu_kernel=True,
        kernel_calls=_calls(("sequential", "S")),
        source=_SOURCE["sequential"],
    ),
    OrderSpec(
        "reverse",
        "sequential from the last element to the first",
        fma=True,
        run=_run_reverse,
        matmul_code=1,
        depth=lambda n, p: n - 1,
        kernel_calls=_calls(("sequential", "S")),
        source=_SOURCE["reverse"],
    ),
    OrderSpec(
        "pairwise",
        "recursive halving: S(x[:n//2]) + S(x[n//2:])",
        run=_run_pairwise,
        matmul_code=2,
        depth=lambda n, p: _log2(n),
        kernel_calls=_calls(("pairwise", "S")),
        source=_SOURCE["pairwise"],
    ),
    OrderSpec(
        "numpy",
        "np.sum of NumPy >= 2.3: blocked pairwise (128, 8 accumulators) on +0.0",
        LIBRARY,
        float16_accumulate="float32",
        run=_run_numpy,
        depth=_numpy_depth,
        kernel_calls=_numpy_calls,
    ),
    OrderSpec(
        "numpy-chunked",
        "np.sum of NumPy < 2.3: the same pairwise per 8192-element chunk, chunks in turn",
        LIBRARY,
        params={"chunk": (8192, _int("chunk", lo=1))},
        float16_accumulate="float32",
        run=_run_numpy,
        depth=_numpy_depth,
        kernel_calls=_numpy_calls,
    ),
    OrderSpec(
        "blocked",
        "sequential within blocks of `block`, then sequential over block sums",
        params={"block": (128, _int("block", lo=1))},
        fma=True,
        run=_run_blocked,
        matmul_code=3,
        depth=lambda n, p: p["block"] - 1 + math.ceil(n / p["block"]) - 1,
        grid=_BLOCK_GRID,
        gpu_kernel=True,
        kernel_calls=_calls(("blocked", "S")),
        source=_SOURCE["blocked"],
    ),
    OrderSpec(
        "tree",
        "GPU shared-memory tree per block (interleaved addressing), blocks combined in order "
        "or (combine='atomic') in a seeded order, float32 flushing subnormals like atomicAdd",
        run=_tree_runner(strided=False),
        matmul_code=4,
        source=_SOURCE["tree"],
        **_TREE,
    ),
    OrderSpec(
        "tree-strided",
        "GPU shared-memory tree per block (sequential addressing), blocks combined in order "
        "or (combine='atomic') in a seeded order, float32 flushing subnormals like atomicAdd",
        run=_tree_runner(strided=True),
        matmul_code=5,
        **_TREE,
    ),
    OrderSpec(
        "cupy-kernel",
        "CuPy's own reduction kernel (one 512-thread block, strided lanes, tree)",
        HYPOTHESIS,
        params={
            "block_size": (512, _int("block_size", lo=32, hi=1024, pow2=True)),
            "ftz": (None, _bool("ftz")),
        },
        fma=True,
        float16_accumulate="float32",
        run=_run_cupy_kernel,
        # every lane sequential from +0, then a log2(lanes)-level tree
        depth=lambda n, p: math.ceil(n / p["block_size"]) + _log2(p["block_size"]),
        grid=tuple(
            (("block_size", b), ("ftz", f)) for b in (256, 512, 1024) for f in (True, False)
        ),
        kernel_calls=_calls(("cupy_kernel", "S")),
    ),
    OrderSpec(
        "cub",
        "CUB DeviceReduce::Sum (cupy.sum default): 4096-element tiles, warp shuffles",
        HYPOTHESIS,
        params={
            "threads": (256, _int("threads", lo=32, hi=1024, pow2=True)),
            "items": (None, _int("items", lo=1, hi=64)),
            "vector": (4, _int("vector", lo=1, hi=4, pow2=True)),
            "aligned": (True, _bool("aligned")),
            "thread_reduce": (None, _choice("thread_reduce", (None, "tree", "sequential"))),
            "max_blocks": (5280, _int("max_blocks", lo=1)),
        },
        run=_run_cub,
        depth=_cub_depth,
        grid=tuple(
            (("thread_reduce", t), ("aligned", a))
            for t in ("tree", "sequential")
            for a in (True, False)
        ),
        kernel_calls=_cub_calls,
    ),
    OrderSpec(
        "shuffled",
        "sequential over a seeded random permutation (models atomics)",
        params={"seed": (0, _seed)},
        fma=True,
        run=_run_shuffled,
        depth=lambda n, p: n - 1,
        grid=(),  # a random order has nothing to match
        kernel_calls=_calls(("permutation", None), ("sequential", "S")),
    ),
    OrderSpec(
        "kahan",
        "Kahan compensated summation",
        fma=True,
        run=_run_kahan,
        matmul_code=6,
        gpu_kernel=True,
        kernel_calls=_calls(("kahan", "S")),
    ),
    OrderSpec(
        "neumaier",
        "Neumaier (Kahan-Babuska) compensated summation",
        run=_run_neumaier,
        matmul_code=7,
        kernel_calls=_calls(("neumaier", "S")),
    ),
    OrderSpec("exact", "the correctly rounded exact sum", EXACT),
    OrderSpec(
        "revealed",
        "an accumulation tree revealed by fpx.reveal (tree= its code, Reveal.as_order()): each "
        "addition where the tree puts it; +fma fuses the products the probes found fused",
        params={"tree": (None, trees.check_code)},
        fma=True,
        run=_run_revealed,
        depth=lambda n, p: trees.parse(p["tree"]).depth if p["tree"] else n - 1,
        grid=(),  # a tree is found by fpx.reveal, not searched
        kernel_calls=_calls(("tree_eval", "S")),
        ops=("sum", "dot", "matmul"),
        listed=False,
    ),
]


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


def _threads(v):
    return _int("threads", lo=1, hi=256)(v)


_F32_64 = ("float32", "float64")
_SIMD_CALLS = _calls(("simd._simd", "X"))  # the family's one compiled entry point
_KERNELS = ("haswell", "skylakex", "sandybridge", "nehalem", "prescott")
_ONE_TWO = ((), (("threads", 2),))

_LIBRARY_ORDERS = [
    OrderSpec(
        "openblas",
        "np.dot / np.matmul of 1-D float32 or float64: OpenBLAS's dot kernel for kernel=... "
        "(haswell: also Zen; skylakex: AVX-512 CPUs), threads= (ddot splits at ceil(n/2))",
        LIBRARY,
        params={"kernel": ("haswell", _choice("kernel", _KERNELS)), "threads": (1, _threads)},
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
        params={"target": ("avx2", _choice("target", ("avx2", "avx512")))},
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
        kernel_calls=_calls(("frameworks._row_sum_jit", "A"), ("frameworks._finish_jit", "A")),
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
        params={"ynn": (True, _choice("ynn", (True, False)))},
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


_TENSOR_CORES = [
    OrderSpec(
        "tensor-core",
        "NVIDIA tensor cores (fpx.mma with C = 0, float32 output), arch= v100, a100, h100 "
        "(a2, a30, h200); inputs: float16/bfloat16 arrays or an input rounding (+tf32, "
        "+float8_e4m3, ...); verified against published hardware outputs of the V100, A100 "
        "and H100 (docs/tensor_cores.md)",
        LIBRARY,
        params={"arch": ("h100", tensor_core.check_arch)},
        ops=("dot", "matmul"),
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

_ALL = _DEFINED + _LIBRARY_ORDERS + _TENSOR_CORES
SUM_ORDERS = {s.name: s for s in _ALL if "sum" in s.ops}
DOT_ORDERS = {s.name: s for s in _ALL if "dot" in s.ops}
MATMUL_ORDERS = {
    name: s
    for name, s in DOT_ORDERS.items()
    if s.matmul_code is not None or s.kind == EXACT or "matmul" in s.ops
}

OPS = {"sum": SUM_ORDERS, "dot": DOT_ORDERS, "matmul": MATMUL_ORDERS}


def lookup(op: str, order: str) -> OrderSpec:
    table = OPS.get(op)
    if table is None:
        raise ValueError(f"unknown op {checks.shown(op)}; ops with orders: {', '.join(OPS)}")
    spec = table.get(order)
    if spec is None:
        raise ValueError(
            f"unknown order {checks.shown(order)} for {op}; valid orders: {', '.join(table)}"
        )
    return spec


def orders_for(op: str, fmt: str, *, rounded: bool = False) -> list[str]:
    """The orders of ``op`` defined for inputs of format ``fmt`` (library loops take only
    the formats their library computes in); ``rounded=True`` adds those that take ``fmt``
    with an input rounding (the tensor cores: float32 with +tf32)."""
    if op not in OPS:
        raise ValueError(f"unknown op {checks.shown(op)}; ops with orders: {', '.join(OPS)}")
    return [
        name
        for name, s in OPS[op].items()
        if s.listed and (fmt in s.formats or (rounded and fmt in s.rounded_formats))
    ]


def kernel_needs(op: str, order: str, info, accumulate=None, params=None) -> list:
    """The compiled kernels ``op`` (sum, dot or matmul) calls in ``order`` for inputs of format
    ``info`` (a FormatInfo): ``(kernel name, dtype of its first array argument or None,
    compute dtype or None)`` each, from the order's ``kernel_calls``. Empty for ``exact`` and
    for the library loops (their kernels are their modules' own). fpexplore.warmup uses it to
    tell whether a call would compile first."""
    from .arith import accumulator, arith

    spec = lookup(op, order)
    if spec.library is not None:  # "X": the inputs' dtype; "A": ATen's float32/float64
        acc = np.dtype(np.float64 if info.name == "float64" else np.float32)
        dt = {"X": info.dtype, "A": acc}
        calls = spec.kernel_calls(op == "dot", info.name, params or {}) if spec.kernel_calls else []
        return [(k, dt[a], None) for k, a in calls]
    if spec.name == "exact":
        return []
    ar = arith(accumulator(accumulate, info, spec))
    compute = np.dtype(type(ar.z))
    if op == "matmul":
        return [("matmul", ar.storage, compute)]
    dtypes = {"S": ar.storage, "C": compute, None: None}
    has_y = op == "dot" and order not in ("numpy", "numpy-chunked", "cub")  # literal products
    calls = spec.kernel_calls(has_y, info.name, params or {})
    return [(k, dtypes[a], None if k == "permutation" else compute) for k, a in calls]


def fusable(op: str = "dot") -> list[str]:
    """The orders of ``op`` where ``fma=True`` fuses a product into an addition."""
    return [name for name, s in OPS[op].items() if s.fma]


def orders(op: str = "sum") -> dict[str, str]:
    """The orders available for ``op`` ("sum", "dot" or "matmul"): name -> one-line description.

    Descriptions of orders that emulate a GPU library from its source (not yet confirmed on a
    GPU) end with "[hypothesis]"; orders reproducing a library verified here, or (the tensor
    cores) against a GPU's published outputs, with "[library]".
    """
    if op not in OPS:
        raise ValueError(f"unknown op {checks.shown(op)}; ops with orders: {', '.join(OPS)}")
    tag = {LIBRARY: " [library]", HYPOTHESIS: " [hypothesis]"}
    return {
        name: spec.description + tag.get(spec.kind, "")
        for name, spec in OPS[op].items()
        if spec.listed
    }
