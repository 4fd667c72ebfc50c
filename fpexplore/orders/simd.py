"""SIMD-accumulator orders: how vectorised CPU library kernels sum and dot, bit for bit.

One parametrised family (:class:`SimdOrder`) describes the loops that BLAS ``dot`` kernels,
NumPy's ``einsum``, polars' ``Series.sum`` and LLVM's fast-math vectoriser run; named
instances of it are in :data:`LIBRARY_ORDERS` (see :func:`library_orders`), each with the
library, version and CPU it was checked on. docs/simd_orders.md defines every instance in
pseudo-code, with its source file and how it was verified.

The model
---------
A *segment* (a whole array, or one thread's, chunk's or block's part of it) is summed by:

1. **Stages**, in order. Stage ``s`` holds a state of ``accumulators`` vectors of ``lanes``
   lanes. It consumes blocks of ``lanes * accumulators`` consecutive terms while that many
   remain (element ``b + k*lanes + l`` of a block at ``b`` goes to vector ``k``, lane ``l``):

   * ``step="lanes"``: ``acc[k][l] = acc[k][l] + t`` (or ``fma(x, y, acc[k][l])``);
   * ``step="nested"`` (one accumulator vector): ``acc = t0 + (t1 + (... + (t_{A-1} + acc)))``
     lane-wise, NumPy einsum's dot;
   * ``step="tree"`` (one accumulator vector): ``acc = ((t0 + t1) + (t2 + t3)) + acc``.

   With ``pad=True`` a last partial block is completed with +0 terms (NumPy's
   ``load_tillz``). Before a stage runs, its ``fold`` operations (below) reshape the previous
   stage's state; the first stage starts from ``init`` (+0.0 unless said otherwise).
2. **reduce**: operations bringing the last state to one value: ``"half"`` (every vector:
   lane ``j`` += lane ``j + w/2``, width halves), ``"hadd"`` (lane ``j`` = lane ``2j`` + lane
   ``2j+1``, as ``haddps``), ``"pairs"`` (vectors ``((v0+v1) + (v2+v3))...``, adjacent pairs
   recursively), ``"seq"`` (vectors ``((v0+v1)+v2)+v3``), ``"seed"`` (a single value becomes
   lane 0 of a new vector of the next stage's width, other lanes ``init``: LLVM's vector
   epilogue).
3. **Tail**: the terms left over, as scalars, in order: ``tail="onto"`` adds them onto the
   kernel result; ``tail="apart"`` sums them from +0 and then adds the kernel result (OpenBLAS
   ``sdot``). ``tail_double``: that scalar arithmetic is float64 and the result is rounded
   once to the format at the end; ``tail_fma``: ``s = fma(x, y, s)``.

``body``: the stages see only the first ``(hi - lo) - (hi - lo) % body`` terms (OpenBLAS
hands its micro-kernel ``n & -32``). ``single_term``: ``n == 1`` returns the term itself
(``np.dot`` treats a 1-element array as a scalar and never calls BLAS).

Around the segments: ``chunk`` (sequential chunks of that many terms, each summed as a segment,
added onto a +0.0 output: NumPy's buffered iterator), ``block`` (polars: the first
``n % block`` terms summed sequentially, the rest by pairwise recursion over blocks of
``block`` terms split at ``(blocks // 2) * block``, result ``main + head``), and ``threads``
(when ``n > thread_min``: parts of ``ceil(rest / threads_left)`` terms, each a segment (with
its own chunks/blocks), added in order onto +0.0, in float64 with ``thread_double``).

Terms are ``x[i]``, or ``x[i] * y[i]`` rounded to the format (``fma=True``: the stage steps
use a fused multiply-add instead). All arithmetic is IEEE round-to-nearest in the format of
``x`` (float32 or float64); nothing is reassociated. NaNs propagate (their payload is not
modelled: compare NaN with NaN).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

import numpy as np

from .. import checks
from . import _kernels
from ._kernels import cached_njit

__all__ = [
    "LIBRARY_ORDERS",
    "SimdOrder",
    "Stage",
    "library_order",
    "library_orders",
    "simd_sum",
]

_OPS = {"half": 1, "hadd": 2, "pairs": 3, "seq": 4, "seed": 5}
_STEPS = {"lanes": 0, "nested": 1, "tree": 2}
_TAILS = {"onto": 0, "apart": 1}


@dataclass(frozen=True)
class Stage:
    """One vector loop: ``accumulators`` vectors of ``lanes`` lanes (see the module doc)."""

    lanes: int
    accumulators: int = 1
    step: str = "lanes"
    pad: bool = False
    fold: tuple[str, ...] = ()

    def __post_init__(self):
        if self.lanes < 1 or self.accumulators < 1:
            raise ValueError("lanes and accumulators must be >= 1")
        if self.step not in _STEPS:
            raise ValueError(f"step must be one of {sorted(_STEPS)}, not {checks.shown(self.step)}")
        for op in self.fold:
            if op not in _OPS:
                raise ValueError(
                    f"unknown fold operation {checks.shown(op)}; known: {sorted(_OPS)}"
                )


@dataclass(frozen=True)
class SimdOrder:
    """A SIMD-accumulator summation order (see the module docstring for each parameter)."""

    stages: tuple[Stage, ...] = ()
    reduce: tuple[str, ...] = ()
    fma: bool = False
    init: float = 0.0
    body: int = 0
    tail: str = "onto"
    tail_double: bool = False
    tail_fma: bool = False
    chunk: int = 0
    block: int = 0
    threads: int = 1
    thread_min: int = 0
    thread_double: bool = False
    single_term: bool = False

    def __post_init__(self):
        for op in self.reduce:
            if op not in _OPS:
                raise ValueError(
                    f"unknown reduce operation {checks.shown(op)}; known: {sorted(_OPS)}"
                )
        if self.tail not in _TAILS:
            raise ValueError(f"tail must be 'onto' or 'apart', not {checks.shown(self.tail)}")
        if self.init != 0.0:
            raise ValueError("init must be 0.0 or -0.0")
        if self.chunk < 0 or self.block < 0 or self.body < 0 or self.threads < 1:
            raise ValueError("chunk, block, body >= 0 and threads >= 1")
        if self.chunk and self.block:
            raise ValueError("chunk and block cannot both be set")
        self._check_shapes()

    def _check_shapes(self):
        """Every fold/reduce must leave the shape the next stage (or one value) needs."""
        a, w = _initial_shape(self.stages[0]) if self.stages else (1, 1)
        for i, st in enumerate(self.stages):
            if i:
                a, w = _apply_shape(st.fold, a, w, st.lanes, f"stage {i} fold")
            elif st.fold:
                raise ValueError("the first stage has no fold (it starts from init)")
            want = _initial_shape(st)  # nested/tree keep a single accumulator vector
            if (a, w) != want:
                raise ValueError(
                    f"stage {i} needs {want[0]} x {want[1]} lanes, the fold leaves {a} x {w}"
                )
        a, w = _apply_shape(self.reduce, a, w, 1, "reduce")
        if (a, w) != (1, 1):
            raise ValueError(f"reduce leaves {a} x {w} values, not one")

    def replace(self, **params) -> SimdOrder:
        return dataclasses.replace(self, **params)


def _initial_shape(st: Stage):
    if st.step != "lanes" and st.accumulators > 1:
        return 1, st.lanes
    return st.accumulators, st.lanes


def _apply_shape(ops, a, w, next_lanes, where):
    for op in ops:
        if op in ("half", "hadd"):
            if w % 2:
                raise ValueError(f"{where}: {op} on an odd width {w}")
            w //= 2
        elif op in ("pairs", "seq"):
            a = 1
        elif op == "seed":
            if (a, w) != (1, 1):
                raise ValueError(f"{where}: seed needs one value, has {a} x {w}")
            w = next_lanes
    return a, w


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
        ops += [_OPS[o] for o in st.fold]
        rows.append([st.lanes, st.accumulators, _STEPS[st.step], int(st.pad), lo, len(ops)])
    lo = len(ops)
    ops += [_OPS[o] for o in order.reduce]
    stages = np.array(rows, dtype=np.int64).reshape(len(rows), 6)
    red = np.array([lo, len(ops), order.body], np.int64)
    return stages, np.array(ops + [0], dtype=np.int64), red


@dataclass(frozen=True)
class LibraryOrder:
    """A named instance: per-dtype orders plus where and how it was verified."""

    name: str
    orders: dict = field(repr=False)  # dtype name -> SimdOrder
    library: str
    call: str
    condition: str
    verified: str
    description: str
    needs_y: bool = False

    def order(self, dtype) -> SimdOrder:
        key = np.dtype(dtype).name
        if key not in self.orders:
            raise ValueError(f"{self.name} is defined for {sorted(self.orders)}, not {key}")
        return self.orders[key]


def simd_sum(x, y=None, *, preset: str | SimdOrder | None = None, **params):
    """Sum ``x`` (or the dot product of ``x`` and ``y``) in a SIMD-accumulator order.

    ``preset``: a name from :func:`library_orders` (its order for ``x.dtype``) or a
    :class:`SimdOrder`; ``params`` override its fields (``threads=2``) or, without a preset,
    define the order (``stages=(Stage(8, 4),), reduce=("pairs", "half", ...)``). ``x`` and
    ``y`` are 1-D float32 or float64 arrays of one dtype; the result is a NumPy scalar of
    that dtype.
    """
    x = np.ascontiguousarray(x)
    if x.ndim != 1 or x.dtype not in (np.float32, np.float64):
        raise TypeError("x must be a 1-D float32 or float64 array")
    if y is not None:
        y = np.ascontiguousarray(y)
        if y.shape != x.shape or y.dtype != x.dtype:
            raise ValueError("y must have x's shape and dtype")
    if isinstance(preset, str):
        order = library_order(preset).order(x.dtype)
    elif isinstance(preset, SimdOrder):
        order = preset
    elif preset is None:
        order = SimdOrder()
    else:
        raise TypeError("preset must be a name, a SimdOrder or None")
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
        _TAILS[order.tail],
        order.tail_double,
        order.tail_fma,
        order.chunk,
        order.block,
        order.threads,
        order.thread_min,
        order.thread_double,
    )
    return x.dtype.type(r)


# ----------------------------------------------------------------------------- presets

_HALF4 = ("half", "half", "half", "half")


def _openblas_sdot(lanes_stages, fma, reduce):
    """x86_64 sdot.c: the kernel over n & -32, the rest as float products summed in a
    double from 0.0, then + the kernel's float result, rounded to float."""
    return SimdOrder(
        stages=lanes_stages,
        reduce=reduce,
        fma=fma,
        body=32,
        tail="apart",
        tail_double=True,
        single_term=True,
    )


def _openblas_ddot(lanes_stages, reduce, fma, tail_fma):
    """x86_64 ddot.c: the kernel over n & -16, the rest added onto its result (double; the
    compiler contracts that loop into FMAs for SkylakeX, not for Haswell); with more than
    one thread and n > 10000, parts of ceil(rest / threads left) added onto 0.0."""
    return SimdOrder(
        stages=lanes_stages,
        reduce=reduce,
        fma=fma,
        body=16,
        tail="onto",
        tail_fma=tail_fma,
        threads=1,
        thread_min=10000,
        single_term=True,
    )


def _llvm(main_lanes, epi_lanes):
    """LLVM's loop vectoriser on `s += x[i]` with fast-math (reassoc): main loop of 4
    interleaved vectors, (v0+v1)+(v2+v3), lanes by halving; a vector epilogue seeded with
    that result in lane 0 (other lanes +0.0), lanes by halving; then scalars onto it."""
    halves = []
    w = main_lanes
    while w > 1:
        halves.append("half")
        w //= 2
    ehalves = []
    w = epi_lanes
    while w > 1:
        ehalves.append("half")
        w //= 2
    return SimdOrder(
        stages=(
            Stage(main_lanes, 4),
            Stage(epi_lanes, 1, fold=("pairs", *halves, "seed")),
        ),
        reduce=tuple(ehalves),
    )


def _einsum(lanes, step):
    hs = ("hadd", "hadd") if lanes == 4 else ("hadd",)
    return SimdOrder(
        stages=(Stage(lanes, 4, step=step), Stage(lanes, 1, pad=True)), reduce=hs, chunk=8192
    )


_OB = "OpenBLAS 0.3.31 (NumPy 2.4.6 wheel, scipy-openblas DYNAMIC_ARCH)"
_ZEN4 = "AMD EPYC Zen 4 (AVX-512), 2 cores, Python 3.11, Linux"

LIBRARY_ORDERS: dict[str, LibraryOrder] = {}


def _add(name, orders, library, call, condition, verified, description, needs_y=False):
    LIBRARY_ORDERS[name] = LibraryOrder(
        name, orders, library, call, condition, verified, description, needs_y
    )


_add(
    "openblas-sdot(haswell)",
    {"float32": _openblas_sdot((Stage(8, 4),), True, ("half", "pairs", "hadd", "hadd"))},
    _OB,
    "np.dot / np.matmul of 1-D float32, OPENBLAS_CORETYPE=Haswell (also Zen)",
    "kernel Haswell (threadpoolctl architecture 'Haswell'); 1 or 2 threads",
    "648/648 recorded np.dot float32 cases (1 and 2 threads) on " + _ZEN4,
    "4 ymm FMA accumulators (32 lanes) over n & -32; each hi128+lo128, (r0+r1)+(r2+r3), "
    "2x hadd; tail products in double from 0, + kernel, -> float",
    needs_y=True,
)
_add(
    "openblas-sdot(skylakex)",
    {
        "float32": _openblas_sdot(
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
)
_add(
    "openblas-sdot(sandybridge)",
    {"float32": _openblas_sdot((Stage(8, 4),), False, ("half", "pairs", "hadd", "hadd"))},
    _OB,
    "np.dot of 1-D float32, OPENBLAS_CORETYPE=Sandybridge (also Bulldozer..Excavator here)",
    "kernel Sandybridge; 1 or 2 threads",
    "648/648 recorded np.dot float32 cases (1 and 2 threads) on " + _ZEN4,
    "as Haswell with vmulps + vaddps (products rounded, no FMA)",
    needs_y=True,
)
_add(
    "openblas-sdot(nehalem)",
    {"float32": _openblas_sdot((Stage(4, 4),), False, ("pairs", "hadd", "hadd"))},
    _OB,
    "np.dot of 1-D float32, OPENBLAS_CORETYPE=Nehalem (also Atom, Barcelona, Bobcat here)",
    "kernel Nehalem; 1 or 2 threads",
    "648/648 recorded np.dot float32 cases (1 and 2 threads) on " + _ZEN4,
    "4 xmm accumulators (16 lanes) over n & -32, mulps + addps; (r0+r1)+(r2+r3), 2x haddps; "
    "tail as Haswell",
    needs_y=True,
)
_add(
    "openblas-sdot(prescott)",
    {
        "float32": SimdOrder(
            stages=(Stage(4, 4), Stage(4, 1, fold=("pairs",))),
            reduce=("hadd", "hadd"),
            single_term=True,
        )
    },
    _OB,
    "np.dot of 1-D float32, OPENBLAS_CORETYPE=Prescott (also Core2, Katmai...: reported 'Katmai')",
    "generic kernel/generic/dot.c with SSE universal intrinsics; 1 or 2 threads",
    "648/648 recorded np.dot float32 cases (1 and 2 threads) on " + _ZEN4,
    "4 xmm accumulators (mul + add) over n & -16, (v0+v1)+(v2+v3); one xmm over the rest "
    "& -4; 2x hadd; scalar float tail onto it",
    needs_y=True,
)
_add(
    "openblas-ddot(haswell)",
    {"float64": _openblas_ddot((Stage(4, 4),), ("half", "pairs", "hadd"), True, False)},
    _OB,
    "np.dot of 1-D float64, OPENBLAS_CORETYPE=Haswell; pass threads=2 for 2 threads",
    "kernel Haswell",
    "648/648 recorded np.dot float64 cases (threads=1 and 2) on " + _ZEN4,
    "4 ymm FMA accumulators (16 lanes) over n & -16; hi+lo, (r0+r1)+(r2+r3), hadd; tail "
    "(mul, add) onto it; 2 threads: halves ceil(n/2) for n > 10000, added onto 0.0",
    needs_y=True,
)
_add(
    "openblas-ddot(sandybridge)",
    {"float64": _openblas_ddot((Stage(4, 4),), ("half", "pairs", "hadd"), False, False)},
    _OB,
    "np.dot of 1-D float64, OPENBLAS_CORETYPE=Sandybridge; pass threads=2 for 2 threads",
    "kernel Sandybridge",
    "648/648 recorded np.dot float64 cases (threads=1 and 2) on " + _ZEN4,
    "as Haswell with vmulpd + vaddpd (no FMA)",
    needs_y=True,
)
_add(
    "openblas-ddot(nehalem)",
    {"float64": _openblas_ddot((Stage(2, 4),), ("pairs", "hadd"), False, False)},
    _OB,
    "np.dot of 1-D float64, OPENBLAS_CORETYPE=Nehalem; pass threads=2 for 2 threads",
    "kernel Nehalem",
    "648/648 recorded np.dot float64 cases (threads=1 and 2) on " + _ZEN4,
    "4 xmm accumulators (8 lanes, mulpd + addpd) over n & -16; (r0+r1)+(r2+r3), haddpd; "
    "tail onto it; threads as Haswell",
    needs_y=True,
)
_add(
    "openblas-ddot(skylakex)",
    {
        "float64": _openblas_ddot(
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
)
_add(
    "numpy-einsum-dot",
    {"float32": _einsum(4, "nested"), "float64": _einsum(2, "nested")},
    "NumPy 2.4.6 (einsum_sumprod.c.src at the X86_V2 baseline: SSE, no FMA)",
    "np.einsum('i,i->', x, y)",
    "any x86-64 NumPy 2.x wheel (the einsum loops are not CPU-dispatched)",
    "648/648 recorded cases (324 float32, 324 float64) on " + _ZEN4,
    "8192-element buffer chunks added onto 0; per chunk: 4 xmm per iteration, "
    "acc = p0 + (p1 + (p2 + (p3 + acc))); zero-padded xmm remainder; 2x hadd (f64: 1)",
    needs_y=True,
)
_add(
    "numpy-einsum-sum",
    {"float32": _einsum(4, "tree"), "float64": _einsum(2, "tree")},
    "NumPy 2.4.6 (einsum_sumprod.c.src at the X86_V2 baseline: SSE, no FMA)",
    "np.einsum('i->', x)",
    "any x86-64 NumPy 2.x wheel (the einsum loops are not CPU-dispatched)",
    "648/648 recorded cases (324 float32, 324 float64) on " + _ZEN4,
    "8192-element chunks added onto 0; per chunk: acc += (a0+a1)+(a2+a3) on xmm; "
    "zero-padded xmm remainder; 2x hadd (f64: 1)",
)
_add(
    "polars-sum",
    {
        dt: SimdOrder(stages=(Stage(16, 1),), reduce=_HALF4, block=128)
        for dt in ("float32", "float64")
    },
    "polars 2.1.0 (polars-compute/src/float_sum.rs)",
    "pl.Series(x).sum() (one chunk, no nulls)",
    "any CPU (portable 16-lane code)",
    "648/648 recorded cases (324 float32, 324 float64) on " + _ZEN4,
    "first n % 128 sequential; pairwise over 128-blocks split at (blocks//2)*128; block = "
    "16 lanes x 8 rows from +0, halved 16->8->4->2->1; main + head",
)
_add(
    "llvm-fastmath(avx512)",
    {"float32": _llvm(16, 8), "float64": _llvm(8, 4)},
    "numba 0.68.1 / llvmlite 0.50 (LLVM 22)",
    "@njit(fastmath=True) loop `s += x[i]` from 0",
    "host CPU znver4 (AVX-512)",
    "648/648 recorded cases (324 float32, 324 float64) on " + _ZEN4,
    "zmm x 4 interleaved (f32: 64 per iteration), (v0+v1)+(v2+v3), halving; ymm epilogue "
    "seeded in lane 0, halving; scalars",
)
_add(
    "llvm-fastmath(avx2)",
    {"float32": _llvm(8, 4), "float64": _llvm(4, 4)},
    "numba 0.68.1 / llvmlite 0.50 (LLVM 22)",
    "@njit(fastmath=True) loop `s += x[i]` from 0",
    "NUMBA_CPU_NAME=haswell with AVX-512 disabled (any AVX2 target)",
    "648/648 recorded cases (324 float32, 324 float64) on " + _ZEN4,
    "ymm x 4 interleaved (f32: 32 per iteration), (v0+v1)+(v2+v3), halving; 4-lane epilogue "
    "seeded in lane 0, halving; scalars",
)


_add(
    "numba-prange",
    {dt: SimdOrder(threads=2) for dt in ("float32", "float64")},
    "numba 0.68.1 (parfor reduction, workqueue/omp layer)",
    "@njit(parallel=True) loop `s += x[i]` over prange, NUMBA_NUM_THREADS=2",
    "any CPU; threads = numba.get_num_threads()",
    "648/648 recorded cases with 2 threads (324 float32, 324 float64) on " + _ZEN4,
    "thread t sums its ceil(rest / threads left) consecutive terms sequentially from +0; "
    "the partial sums added in order onto +0",
)


def library_order(name: str) -> LibraryOrder:
    try:
        return LIBRARY_ORDERS[name]
    except KeyError:
        raise ValueError(
            f"unknown SIMD order {checks.shown(name)}; known: {sorted(LIBRARY_ORDERS)}"
        ) from None


def library_orders() -> list[str]:
    """The names of the library presets (see LIBRARY_ORDERS for their details)."""
    return list(LIBRARY_ORDERS)
