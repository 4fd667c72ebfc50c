"""The order registry: one entry per evaluation order, holding everything about it.

An :class:`~.orderspec.OrderSpec` is the one place an order is defined in code: its name,
description, kind, parameters and their checks, whether ``fma`` fuses in it, its float16
accumulator, its **runner** (which compiled kernels compute it), its matmul kernel code, its
error **depth** (for Higham's bound), the parameter **grid** the detective searches, whether
fpexplore has a **GPU kernel** for it, the kernels a warm-up must compile, and the
plain-Python **source** the reproducer writes. The definitions themselves, bit for bit, are
in docs/orders.md.

Adding an order: one ``OrderSpec`` here (and its kernel in _kernels.py if it needs a new
loop), its definition in docs/orders.md, its slow definition in tests/slow_orders.py. A
real library's own loop belongs to the library wing (:mod:`fpexplore.libraries`, its
docstring says how to add one), which registers its orders here when it loads: the first
time an order is not found here or the tables are listed (:func:`orders_of`).
"""

from __future__ import annotations

import importlib
import math
import re
from collections.abc import Callable

import numpy as np

from .. import checks
from . import gpu_models, tensor_core, trees
from .arith import ORDER_OPS, PRODUCT_OPS, cub_config, kernels, out_rp, rounded_kernels
from .orderspec import DEFINITION, EXACT, HYPOTHESIS, LIBRARY, OrderSpec, fixed_calls

__all__ = [
    "BLOCKS",
    "DEFINITION",
    "EXACT",
    "HYPOTHESIS",
    "LIBRARY",
    "TENSOR_CORE",
    "TENSOR_CORES",
    "WING",
    "OrderSpec",
    "dispatchers",
    "fusable",
    "kernel_needs",
    "lookup",
    "orders_for",
    "orders_of",
    "orders",
    "register",
    "roundable",
]

BLOCKS = (32, 64, 128, 256, 512, 1024)  # block sizes the detective tries


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


# the orders whose additions take a rounding mode (sum's rounding=; _rounded_kernels)


def _rounded_sequential(X, rp, mode, draws, p):
    return rounded_kernels().sequential_rounded(X, rp, mode, draws, 0, 0, X.shape[0], 1)


def _rounded_reverse(X, rp, mode, draws, p):
    return rounded_kernels().sequential_rounded(X, rp, mode, draws, 0, X.shape[0] - 1, -1, -1)


def _rounded_pairwise(X, rp, mode, draws, p):
    return rounded_kernels().pairwise_rounded(X, rp, mode, draws)


def _rounded_blocked(X, rp, mode, draws, p):
    return rounded_kernels().blocked_rounded(X, rp, mode, draws, p["block"])


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
    "block": (128, checks.int_check("block", 2, 1 << 16, pow2=True)),
    "combine": ("sequential", checks.choice_check("combine", ("sequential", "atomic"))),
    "seed": (0, checks.seed),
}
_BLOCK_GRID = tuple((("block", b),) for b in BLOCKS)
# a CPU loop's blocks may be a few SIMD lanes long (a GPU tree's block is a warp or more)
_CPU_BLOCK_GRID = tuple((("block", b),) for b in (4, 8, 16)) + _BLOCK_GRID
_TREE = dict(
    params=TREE_PARAMS,
    applies={"seed": ("combine", "atomic")},
    fma=True,
    # the block's tree (zero padding adds exactly), then the block sums onto 0 in turn
    depth=lambda n, p: min(_log2(n), _log2(p["block"])) + math.ceil(n / p["block"]) - 1,
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
        run_rounded=_rounded_sequential,
        rounded_kernel="sequential_rounded",
        matmul_code=0,
        depth=lambda n, p: n - 1,
        gpu_kernel=True,
        kernel_calls=fixed_calls(("sequential", "S")),
        source=_SOURCE["sequential"],
    ),
    OrderSpec(
        "reverse",
        "sequential from the last element to the first",
        fma=True,
        run=_run_reverse,
        run_rounded=_rounded_reverse,
        rounded_kernel="sequential_rounded",
        matmul_code=1,
        depth=lambda n, p: n - 1,
        kernel_calls=fixed_calls(("sequential", "S")),
        source=_SOURCE["reverse"],
    ),
    OrderSpec(
        "pairwise",
        "recursive halving: S(x[:n//2]) + S(x[n//2:])",
        run=_run_pairwise,
        run_rounded=_rounded_pairwise,
        rounded_kernel="pairwise_rounded",
        matmul_code=2,
        depth=lambda n, p: _log2(n),
        kernel_calls=fixed_calls(("pairwise", "S")),
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
        literal_products="rn",
        wide_once=("sum",),  # its dot rounds each product to the data's format
        layout="memory",
        buffer=8192,
    ),
    OrderSpec(
        "numpy-chunked",
        "np.sum of NumPy < 2.3: the same pairwise per 8192-element chunk, chunks in turn",
        LIBRARY,
        params={"chunk": (8192, checks.int_check("chunk", 1, 1 << 30))},
        float16_accumulate="float32",
        run=_run_numpy,
        depth=_numpy_depth,
        kernel_calls=_numpy_calls,
        literal_products="rn",
        wide_once=(),  # each chunk's sum is rounded
        layout="memory",
    ),
    OrderSpec(
        "blocked",
        "sequential within blocks of `block`, then sequential over block sums",
        params={"block": (128, checks.int_check("block", 1, 1 << 30))},
        fma=True,
        run=_run_blocked,
        run_rounded=_rounded_blocked,
        rounded_kernel="blocked_rounded",
        matmul_code=3,
        depth=lambda n, p: p["block"] - 1 + math.ceil(n / p["block"]) - 1,
        grid=_CPU_BLOCK_GRID,
        gpu_kernel=True,
        kernel_calls=fixed_calls(("blocked", "S")),
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
            "block_size": (512, checks.int_check("block_size", 32, 1024, pow2=True)),
            "ftz": (None, checks.boolean_check("ftz", none=True)),
        },
        fma=True,
        float16_accumulate="float32",
        run=_run_cupy_kernel,
        # every lane sequential from +0, then a log2(lanes)-level tree
        depth=lambda n, p: math.ceil(n / p["block_size"]) + _log2(p["block_size"]),
        grid=tuple(
            (("block_size", b), ("ftz", f)) for b in (256, 512, 1024) for f in (True, False)
        ),
        kernel_calls=fixed_calls(("cupy_kernel", "S")),
    ),
    OrderSpec(
        "cub",
        "CUB DeviceReduce::Sum (cupy.sum default): 4096-element tiles, warp shuffles",
        HYPOTHESIS,
        params={
            "threads": (256, checks.int_check("threads", 32, 1024, pow2=True)),
            "items": (None, checks.int_check("items", 1, 64)),
            "vector": (4, checks.int_check("vector", 1, 4, pow2=True)),
            "aligned": (True, checks.boolean_check("aligned")),
            "thread_reduce": (
                None,
                checks.choice_check("thread_reduce", (None, "tree", "sequential")),
            ),
            "max_blocks": (5280, checks.int_check("max_blocks", 1, 1 << 30)),
        },
        run=_run_cub,
        literal_products="ftz",
        depth=_cub_depth,
        wide_once=("sum",),  # its dot rounds each product to the data's format
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
        params={"seed": (0, checks.seed)},
        fma=True,
        run=_run_shuffled,
        depth=lambda n, p: n - 1,
        grid=(),  # a random order has nothing to match
        kernel_calls=fixed_calls(("permutation", None), ("sequential", "S")),
    ),
    OrderSpec(
        "kahan",
        "Kahan compensated summation",
        fma=True,
        run=_run_kahan,
        matmul_code=6,
        prior_bits=2.0,
        gpu_kernel=True,
        kernel_calls=fixed_calls(("kahan", "S")),
    ),
    OrderSpec(
        "neumaier",
        "Neumaier (Kahan-Babuska) compensated summation",
        run=_run_neumaier,
        matmul_code=7,
        prior_bits=2.0,
        kernel_calls=fixed_calls(("neumaier", "S")),
    ),
    OrderSpec("exact", "the correctly rounded exact sum", EXACT, prior_bits=2.0),
    OrderSpec(
        "revealed",
        "an accumulation tree revealed by fpx.reveal (tree= its code, Reveal.as_order()): each "
        "addition where the tree puts it; +fma fuses the products the probes found fused",
        params={"tree": (None, trees.check_code)},
        fma=True,
        run=_run_revealed,
        depth=lambda n, p: trees.parse(p["tree"]).depth if p["tree"] else n - 1,
        grid=(),  # a tree is found by fpx.reveal, not searched
        kernel_calls=fixed_calls(("tree_eval", "S")),
        ops=ORDER_OPS,
        listed=False,
    ),
]


# ----------------------------------------------------------------------------- tensor cores
# GPU tensor cores (NVIDIA) and matrix cores (AMD) (fpx.mma, docs/tensor_cores.md): A @ B
# with C = 0 and a float32 output, the inputs in the format of the arrays (float16, bfloat16)
# or of the input rounding (+tf32, +bfloat16, +float8_e4m3, ...). Checked against the
# published outputs of the V100, A100 and H100, outputs measured on an H200 (2026-11-26), the
# published models elsewhere (fpx.gpus()).


def _tensor_core(x, y, p, rounding):
    return tensor_core.product(x, y, p["arch"], rounding)


TENSOR_CORE = "tensor-core"  # the name of the GPU tensor cores' order (dot, matmul)
TENSOR_CORES = [
    OrderSpec(
        TENSOR_CORE,
        "GPU tensor cores (NVIDIA) and matrix cores (AMD) (fpx.mma with C = 0, float32 "
        f"output), arch= {', '.join(gpu_models.ARCHS)} or a product alias (fpx.gpus()); inputs: "
        "float16/bfloat16 arrays or an input rounding (+tf32, +float8_e4m3, ...); verified "
        "against published hardware outputs of the V100, A100 and H100 and outputs measured "
        "on an H200, the published models elsewhere (docs/tensor_cores.md)",
        LIBRARY,
        params={"arch": ("h100", tensor_core.check_arch)},
        choices={"arch": tuple((k, tensor_core.verified(k)) for k in gpu_models.ARCHS)},
        ops=PRODUCT_OPS,
        formats=("float16", "bfloat16"),
        rounded_formats=("float32",),
        takes_rounding=True,
        library=_tensor_core,
        fixed=(
            "is the tensor cores' own arithmetic: each block of exact products is summed by "
            "the GPU's rule (NVIDIA: aligned, truncated, added exactly, rounded once) "
            "(docs/tensor_cores.md), with no accumulator format and no fma to choose"
        ),
        # one GPU per set of rules: the detective's tensor-core candidates
        grid=tuple((("arch", k),) for k in gpu_models.one_per_architecture()),
        verified="published hardware outputs of the V100, A100 and H100 and outputs measured "
        "on an H200, the published models elsewhere (docs/tensor_cores.md)",
    ),
]


# ----------------------------------------------------------------------------- the tables
# The real CPU libraries' loops live in the library wing (fpexplore.libraries), which this
# module never imports: it loads by name the first time an order is not found here or the
# tables are listed, and adds its orders with register().

WING = "fpexplore.libraries"
_LIBRARY: list[OrderSpec] = []  # the wing's orders, once it has loaded
_TABLES: dict[str, dict[str, OrderSpec]] = {op: {} for op in ORDER_OPS}


def _build() -> None:
    every = _DEFINED + _LIBRARY + TENSOR_CORES
    dot = {s.name: s for s in every if "dot" in s.ops}
    matmul = {
        name: s
        for name, s in dot.items()
        if s.matmul_code is not None or s.kind == EXACT or "matmul" in s.ops
    }
    _TABLES.update(sum={s.name: s for s in every if "sum" in s.ops}, dot=dot, matmul=matmul)


_build()


def register(specs: list[OrderSpec]) -> None:
    """Add the library wing's orders (listed after fpexplore's own, before the tensor cores)."""
    bad = [s.name for s in specs if s.fma or s.library is None]
    if bad:
        raise ValueError(
            f"a library order runs its library's loop (library=) and sets no fma: {bad}"
        )
    _LIBRARY[:] = specs
    _build()


def _complete() -> None:
    """Load the library wing, which registers its orders (once; then a no-op)."""
    if not _LIBRARY:
        importlib.import_module(WING)


def dispatchers() -> dict:
    """The library wing's compiled kernels by name, for the warm-up (loads the wing)."""
    return importlib.import_module(WING).dispatchers()


def orders_of(op: str) -> dict:
    """Every order of ``op`` (name -> OrderSpec, the library wing's too); ValueError naming
    the ops that have orders."""
    checks.choice("op", op, _TABLES, "ops with orders")
    _complete()
    return _TABLES[op]


def lookup(op: str, order: str) -> OrderSpec:
    """The OrderSpec of ``order`` for ``op``; a library order loads the wing first."""
    if op in _TABLES and isinstance(order, str) and order in _TABLES[op]:
        return _TABLES[op][order]
    table = orders_of(op)
    spec = table.get(order) if isinstance(order, str) else None  # ([1]: unhashable)
    if spec is None:
        spelled = ""  # (a variant spec where an order's name goes: "blocked(block=4)+fma")
        if isinstance(order, str) and (name := re.split(r"[(+@]", order)[0].strip()) in table:
            spelled = (
                f" ({order!r} is a variant spec: give the order {name!r} and its settings as "
                f"keywords, e.g. s = fpx.parse_spec({order!r}, {op!r}); "
                f"fpx.{op}(..., s.name, **s.kwargs()))"
            )
        raise ValueError(
            f"unknown order {checks.shown(order)} for {op}{spelled}; valid orders: "
            f"{', '.join(table)}"
        )
    return spec


def orders_for(op: str, fmt: str, *, rounded: bool = False) -> list[str]:
    """The orders of ``op`` defined for inputs of format ``fmt`` (library loops take only
    the formats their library computes in); ``rounded=True`` adds those that take ``fmt``
    with an input rounding (the tensor cores: float32 with +tf32). For the OCP FP8, FP6 and
    FP4 formats (data in ml_dtypes' types) and those of ``fpx.format`` (data in float64): the
    orders that round each addition to them, and exact (dot and matmul: where float64 holds
    their products exactly)."""
    from ..formats import format_info
    from ..held import is_held_data
    from .arith import ROUNDED_OPS, products_exact

    if is_held_data(fmt):
        held = op in ROUNDED_OPS and (op == "sum" or products_exact(format_info(fmt)))
        return [n for n, s in orders_of(op).items() if held and s.listed and s.takes_held]
    return [
        name
        for name, s in orders_of(op).items()
        if s.listed and (fmt in s.formats or (rounded and fmt in s.rounded_formats))
    ]


def kernel_needs(op: str, order: str, info, accumulate=None, params=None) -> list:
    """The compiled kernels ``op`` (sum, dot or matmul) calls in ``order`` for inputs of format
    ``info`` (a FormatInfo): ``(kernel name, dtype of its first array argument or None,
    compute dtype or None)`` each, from the order's ``kernel_calls``. Empty for ``exact`` and
    for the library loops (their kernels are their modules' own). fpexplore.warmup uses it to
    tell whether a call would compile first."""
    from .arith import (
        accumulator,
        arith,
        in_float64_kernels,
        matmul_by_columns,
        rounded_only,
        rounds_in_float64,
    )

    spec = lookup(op, order)
    if spec.library is not None:  # "X": the inputs' dtype; "A": ATen's float32/float64
        acc = np.dtype(np.float64 if info.name == "float64" else np.float32)
        dt = {"X": info.dtype, "A": acc}
        calls = spec.kernel_calls(op == "dot", info.name, params or {}) if spec.kernel_calls else []
        return [(k, dt[a], None) for k, a in calls]
    if spec.name == "exact":
        return []
    ar = arith(accumulator(accumulate, info, spec))
    if op == "sum" and (params or {}).get("rounding", "nearest_even") != "nearest_even":
        return [(spec.rounded_kernel, ar.storage, None)]  # (the spec checks the order)
    if op != "matmul" and rounded_only(ar.info) and not in_float64_kernels(ar.info):
        if not spec.rounded_kernel:  # (pass 40: "" named a kernel; the run refuses the order)
            return []
        return [(spec.rounded_kernel, ar.storage if op == "sum" else np.dtype(np.float64), None)]
    compute = np.dtype(type(ar.z))
    if op == "matmul" and rounded_only(ar.info):  # FP8, FP6, FP4 and fpx.format's
        if rounds_in_float64(ar.info):  # (on the 16-bit kernel's lanes)
            return [("matmul_columns", np.dtype(np.float64), np.dtype(np.float64))]
        return [("matmul_rounded", np.dtype(np.float64), None)]
    if op == "matmul":
        kernel = "matmul_columns" if matmul_by_columns(spec, ar) else "matmul"
        return [(kernel, ar.storage, compute)]
    dtypes = {"S": ar.storage, "C": compute, None: None}
    has_y = op == "dot" and not spec.literal_products
    calls = spec.kernel_calls(has_y, info.name, params or {})
    return [(k, dtypes[a], None if k == "permutation" else compute) for k, a in calls]


def roundable(op: str = "sum") -> list[str]:
    """The orders of ``op`` whose additions take a rounding mode (``fpx.sum``'s ``rounding=``:
    sum only; this loads nothing)."""
    checks.choice("op", op, _TABLES, "ops with orders")
    return [name for name, s in _TABLES[op].items() if s.run_rounded is not None and op == "sum"]


def fusable(op: str = "dot") -> list[str]:
    """The orders of ``op`` where ``fma=True`` fuses a product into an addition (none of the
    library wing's: a library's kernel decides where it fuses, so this loads nothing)."""
    checks.choice("op", op, _TABLES, "ops with orders")
    return [name for name, s in _TABLES[op].items() if s.fma]


def orders(op: str = "sum") -> dict[str, str]:
    """The orders available for ``op``: name -> one-line description.

    Descriptions of orders that emulate a GPU library from its source (not yet confirmed on a
    GPU) end with "[hypothesis]"; orders reproducing a library verified here, or (the tensor
    cores) against a GPU's published outputs, with "[library]".

    Parameters
    ----------
    op : "sum", "dot" or "matmul"

    Returns
    -------
    dict
        name -> one-line description.

    Raises
    ------
    ValueError
        An op without orders (the message names the ops that have them).
    """
    tag = {LIBRARY: " [library]", HYPOTHESIS: " [hypothesis]"}
    return {
        name: spec.description + tag.get(spec.kind, "")
        for name, spec in orders_of(op).items()
        if spec.listed
    }
