"""The shapes of the SIMD-accumulator family, pure data (no numba): how vectorised CPU
library kernels sum and dot, bit for bit.

One parametrised family (:class:`SimdOrder`, its loops :class:`Stage`) describes the loops
that BLAS ``dot`` kernels, NumPy's ``einsum``, polars' ``Series.sum`` and LLVM's fast-math
vectoriser run; the builders below give the shapes of those libraries' loops, which the
library orders of orders.py hold in their tables (one per parameter value and format,
with the library, version and CPU each was checked on); simd.py computes them.
docs/simd_orders.md defines every loop in pseudo-code, with its source file and how it was
verified.

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
from dataclasses import dataclass

from .. import checks

__all__ = [
    "FOLD_CODES",
    "STEP_CODES",
    "TAIL_CODES",
    "SimdOrder",
    "Stage",
    "einsum",
    "llvm_fastmath",
    "openblas_ddot",
    "openblas_sdot",
]

#: the kernel's codes of the fold/reduce operations, stage steps and tails
FOLD_CODES = {"half": 1, "hadd": 2, "pairs": 3, "seq": 4, "seed": 5}
STEP_CODES = {"lanes": 0, "nested": 1, "tree": 2}
TAIL_CODES = {"onto": 0, "apart": 1}


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
        if self.step not in STEP_CODES:
            raise ValueError(
                f"step must be one of {sorted(STEP_CODES)}, not {checks.shown(self.step)}"
            )
        for op in self.fold:
            if op not in FOLD_CODES:
                raise ValueError(
                    f"unknown fold operation {checks.shown(op)}; known: {sorted(FOLD_CODES)}"
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
            if op not in FOLD_CODES:
                raise ValueError(
                    f"unknown reduce operation {checks.shown(op)}; known: {sorted(FOLD_CODES)}"
                )
        if self.tail not in TAIL_CODES:
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


# ----------------------------------------------------------------------------- builders


def openblas_sdot(lanes_stages, fma, reduce):
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


def openblas_ddot(lanes_stages, reduce, fma, tail_fma):
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


def llvm_fastmath(main_lanes, epi_lanes):
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


def einsum(lanes, step):
    hs = ("hadd", "hadd") if lanes == 4 else ("hadd",)
    return SimdOrder(
        stages=(Stage(lanes, 4, step=step), Stage(lanes, 1, pad=True)), reduce=hs, chunk=8192
    )
