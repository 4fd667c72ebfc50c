"""Compile fpexplore's numba kernels ahead of their first use: ``python -m fpexplore.warmup``.

numba compiles each kernel for the argument types it first meets and, since every kernel is
declared with ``cache=True``, writes the machine code to its on-disk cache; later processes
load it from there instead of compiling again. Without a warm cache the first
``compare("sum", format="float32", n=10**6)`` of a process waits seconds for the compiler (the
docs/performance.md, Cold start, has the numbers), and the explorer looks frozen meanwhile.
:func:`warmup` runs every op the explorer offers in every format, with every variant, on a few
elements, so that everything is compiled and cached; ``binder/postBuild`` runs it when the
Binder image is built. A second run loads everything from the cache and compiles nothing.

:func:`is_cold` tells, cheaply, whether ``compare(op, format=...)`` would still compile
kernels in this process (no compiled signature in memory and none in the on-disk cache): the
explorer then shows "compiling kernels ..." while it works.

Where the cache lives: ``$NUMBA_CACHE_DIR`` when that is set (all files); else ``__pycache__``
beside ``fpexplore/orders/_kernels.py`` and ``fpexplore/ops/variance.py`` when those folders are
writable; else numba's user-wide folder (``~/.cache/numba/``, ``$XDG_CACHE_HOME/numba/``).
Where none is writable the kernels compile in every process (with a RuntimeWarning).
:func:`cache_dirs` says which folders are in use.
"""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import dataclass, field

import numpy as np

from . import checks

__all__ = ["WarmupSummary", "cache_dirs", "is_cold", "warmup"]

# problem sizes for the warm-up: enough to run every code path, small enough to be instant
_SMALL_N = {"matmul": 8, "cdist": 8}
_DEFAULT_N = 300


# ----------------------------------------------------------------------------- dispatchers


def _dispatchers() -> dict:
    """name -> numba Dispatcher, for every jitted function of fpexplore (imports numba)."""
    from numba.core.dispatcher import Dispatcher

    from . import _exact_kernels
    from .ops import variance
    from .orders import _kernels, _matmul_kernels, _matrix_core_kernels, _rounded_kernels, registry

    out = {n: f for n, f in vars(_kernels).items() if isinstance(f, Dispatcher)}
    # sum's orders with their additions in another rounding mode (rounding=)
    out.update({n: f for n, f in vars(_rounded_kernels).items() if isinstance(f, Dispatcher)})
    out.update({n: f for n, f in vars(_matmul_kernels).items() if isinstance(f, Dispatcher)})
    # the AMD matrix cores' chain of blocks (fpx.mma, the tensor-core order's mi* archs)
    out.update({n: f for n, f in vars(_matrix_core_kernels).items() if isinstance(f, Dispatcher)})
    # the exact core's kernels (references of sum and dot, fma)
    out.update({n: f for n, f in vars(_exact_kernels).items() if isinstance(f, Dispatcher)})
    out["_welford"] = variance.welford_kernel()
    out.update(registry.dispatchers())  # the library wing's loops
    return out


def _cached(d) -> bool:
    """Whether the dispatcher writes to numba's on-disk cache (cache=True and a usable folder)."""
    return hasattr(d._cache, "_cache_file")


def _counts(disps: dict) -> tuple[int, int]:
    """(signatures compiled, signatures loaded from the disk cache) so far in this process,
    over all of fpexplore's jitted functions (inlined helpers compile with their callers)."""
    compiled = loaded = 0
    for d in disps.values():
        compiled += sum(d._cache_misses.values())
        loaded += sum(d._cache_hits.values())
    return compiled, loaded


def cache_dirs() -> list[str]:
    """The folders numba caches fpexplore's kernels in ([]: caching is off)."""
    return sorted({d._cache.cache_path for d in _dispatchers().values() if _cached(d)})


# ----------------------------------------------------------------------------- warm-up


@dataclass
class WarmupSummary:
    """What :func:`warmup` did. ``rows``: one dict per (op, format) with ``seconds``,
    ``compiled`` (signatures numba compiled, and wrote to its cache where it has one) and
    ``loaded`` (read from the cache);
    ``compiled``/``loaded``/``seconds``: the totals; ``cache_dirs``: where the cache is."""

    rows: list = field(default_factory=list)
    seconds: float = 0.0
    cache_dirs: list = field(default_factory=list)

    @property
    def compiled(self) -> int:
        return sum(r["compiled"] for r in self.rows)

    @property
    def loaded(self) -> int:
        return sum(r["loaded"] for r in self.rows)

    def __str__(self) -> str:
        lines = [f"{'op':<10} {'format':<9} {'compiled':>8} {'loaded':>6} {'seconds':>8}"]
        for r in self.rows:
            if r["compiled"] or r["loaded"]:
                lines.append(
                    f"{r['op']:<10} {r['format']:<9} {r['compiled']:>8} {r['loaded']:>6} "
                    f"{r['seconds']:>8.2f}"
                )
        quiet = [f"{r['op']}/{r['format']}" for r in self.rows if not r["compiled"] + r["loaded"]]
        if quiet:
            lines.append(f"(no kernels needed or all already in memory: {len(quiet)} op/formats)")
        lines.append(
            f"total: {self.compiled} signatures compiled, {self.loaded} loaded from the cache, "
            f"{self.seconds:.1f} s"
        )
        where = ", ".join(self.cache_dirs) or "none: caching is off, every process compiles"
        lines.append(f"numba cache: {where}")
        return "\n".join(lines)


def warmup(formats=None, ops=None, progress=True) -> WarmupSummary:
    """Compile (or load from numba's disk cache) every kernel the explorer can use.

    Runs ``compare(op, format=fmt, n=<small>, variants=<all of them>)`` for every op of the
    explorer and every format, which calls each kernel with exactly the argument types the
    explorer and the public functions use. Idempotent: with a warm cache a second run compiles
    nothing (``summary.compiled == 0``) and takes a few seconds.

    Parameters
    ----------
    formats : format names (default: all of ``fpx.FORMATS``)
    ops : op names (default: every op of the explorer)
    progress : a progress bar (tqdm if installed, else one line per step on stderr)

    Returns
    -------
    :class:`WarmupSummary` (print it for a table).
    """
    from .experiment import compare
    from .formats import FORMATS
    from .ops.registry import get as get_op
    from .ops.registry import ops as op_names

    formats = list(FORMATS if formats is None else _as_list(formats))
    ops = list(op_names() if ops is None else _as_list(ops))
    for f in formats:
        if f not in FORMATS:
            raise ValueError(f"unknown format {checks.shown(f)}; formats: {', '.join(FORMATS)}")
    for op in ops:
        get_op(op)  # ValueError listing the ops
    t_start = time.perf_counter()
    disps = _dispatchers()
    summary = WarmupSummary(cache_dirs=cache_dirs())
    steps = [(op, f) for f in formats for op in ops]
    bar = _progress(len(steps), progress)
    for op, fmt in steps:
        bar.step(f"{op} {fmt}")
        op_spec = get_op(op)
        c0, l0 = _counts(disps)
        t0 = time.perf_counter()
        with np.errstate(all="ignore"):
            compare(
                op,
                format=fmt,
                n=_SMALL_N.get(op, _DEFAULT_N),
                variants=op_spec.variants_for(fmt),
                backends=("numpy", "emulated"),
            )
        c1, l1 = _counts(disps)
        summary.rows.append(
            dict(
                op=op,
                format=fmt,
                seconds=time.perf_counter() - t0,
                compiled=c1 - c0,
                loaded=l1 - l0,
            )
        )
    bar.close()
    summary.seconds = time.perf_counter() - t_start
    return summary


def _as_list(v) -> list:
    if isinstance(v, str):
        return [s for s in v.replace(",", " ").split() if s]
    return list(v)


class _progress:
    """tqdm when importable, else 'step k/n: label' lines on stderr; nothing if off."""

    def __init__(self, total: int, on: bool):
        self.total, self.on, self.k, self.bar = total, on, 0, None
        if on:
            try:
                from tqdm.auto import tqdm
            except ImportError:
                pass
            else:
                self.bar = tqdm(total=total, desc="fpexplore warmup", unit="step")

    def step(self, label: str) -> None:
        if self.bar is not None:
            if self.k:
                self.bar.update(1)
            self.bar.set_postfix_str(label)
        elif self.on:
            print(f"fpexplore warmup {self.k + 1}/{self.total}: {label}", file=sys.stderr)
        self.k += 1

    def close(self) -> None:
        if self.bar is not None:
            self.bar.update(1)
            self.bar.close()


# ----------------------------------------------------------------------------- cold or warm


def is_cold(op: str, format: str, variants=None, params=None) -> bool:  # noqa: A002
    """Whether ``compare(op, format=format, variants=variants, **params)`` would compile numba
    kernels in this process: some kernel it calls has, for the argument types this format
    gives it, neither a compiled signature in memory nor an entry in numba's disk cache.

    ``variants=None``: the op's default selection; variant specs are understood. Ops without
    kernels are never cold, and neither are invalid arguments (compare() reports those).
    Cheap (a few ms: reads the cache index files) but imports numba. Index entries count only
    under numba's own key (numba version, source file hash, CPU name and features), so an
    entry written on another CPU is missing here, as it is for numba, which recompiles it.
    """
    from .experiment import parse_variants

    try:
        chosen = parse_variants(op, variants, format)
        needs = _needs(op, format, chosen, dict(params or {}))
    except Exception:  # invalid arguments: compare() will say so; nothing to announce
        return False
    if not needs:
        return False
    disps = _dispatchers()
    return not all(_available(disps[name], arr, comp) for name, arr, comp in needs)


_F32, _F64 = np.dtype(np.float32), np.dtype(np.float64)


def _available(d, arr, comp) -> bool:
    """A signature of dispatcher d in memory or in the disk cache whose first argument is an
    array of dtype ``arr`` (None: any) and with a scalar argument of dtype ``comp`` (None:
    any), as a call from Python makes it (no literal argument types)."""
    from numba import from_dtype, types

    a = None if arr is None else from_dtype(arr)
    c = None if comp is None else from_dtype(comp)

    def fits(sig) -> bool:
        if any(isinstance(t, types.Literal) for t in sig):
            return False  # compiled for a call from another kernel: Python never passes these
        if a is not None and not (sig and isinstance(sig[0], types.Array) and sig[0].dtype == a):
            return False
        return c is None or any(t == c for t in sig[1:])

    if any(fits(sig) for sig in d.overloads):
        return True
    return any(fits(sig) for sig in _disk_signatures(d))


def _disk_signatures(d) -> list:
    """Signatures in d's cache index that this process can load (same numba, source, CPU)."""
    if not _cached(d):
        return []
    try:
        cache = d._cache
        index = cache._cache_file._load_index()  # {} if missing or stale (other source/numba)
        codegen = d.targetctx.codegen()
        return [key[0] for key in index if key == cache._index_key(key[0], codegen)]
    except Exception:  # numba internals changed: say cold, the safe side
        return []


def _needs(op: str, fmt: str, variants: list, params: dict) -> list:
    """(kernel, dtype of its first array argument or None, compute dtype or None) for every
    kernel call ``compare(op, format=fmt, variants=variants, **params)`` makes; variants may be
    specs (``"tree(block=64)@float32"``: their settings win over ``params``, as in compare).
    Each op's spec says what its variants call (``OpSpec.kernels``);
    tests/test_warmup.py checks that nothing compiles where this says warm."""
    from .formats import format_info
    from .ops.registry import get

    info = format_info(fmt)
    kernels = get(op).kernels
    needs: list = []
    for spec in variants:  # parsed: VariantSpecs
        if kernels is not None:
            needs += kernels(spec.name, {**params, **spec.kwargs()}, info)
    return needs


# ----------------------------------------------------------------------------- command line


def main(argv=None) -> int:
    p = argparse.ArgumentParser(
        prog="python -m fpexplore.warmup",
        description="Compile and cache fpexplore's numba kernels for every op and format.",
    )
    p.add_argument("--formats", help="comma-separated formats (default: all)")
    p.add_argument("--ops", help="comma-separated ops (default: every op of the explorer)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar (the table only)")
    p.add_argument("--quiet", action="store_true", help="no progress bar, no table")
    a = p.parse_args(argv)
    summary = warmup(formats=a.formats, ops=a.ops, progress=not (a.quiet or a.no_progress))
    if not a.quiet:
        print(summary)
    return 0


if __name__ == "__main__":
    sys.exit(main())
