"""Probing the function that made a result: ``fn=`` turns a hypothesis into a fact.

:func:`probe` calls ``fn`` on the inputs twice (two results: run-to-run nondeterminism, a
fact), finds the result it gives, then calls it on probe inputs (the inputs permuted along the
summed axis, with random signs, and inputs spread over many binades; each probe twice) and
keeps the configurations that reproduce
that result and compute what ``fn`` computes on every probe: its order, fused products,
accumulator and input rounding, measured. Where none does, ``fn``'s accumulation tree is
revealed (:func:`fpexplore.reveal`, FPRev's masks) and tried with each input rounding.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np

from .. import checks
from ..formats import format_info
from ..spec import parse_spec
from .evidence import PROBES, probes, screened
from .space import TRIED_ROUNDINGS, Config, Known, order_op, reduction, run

__all__ = ["REVEAL_MAX", "Probed", "probe"]

REVEAL_MAX = 4096  # the largest n (a matmul: k) whose tree is revealed where nothing matches


@dataclass
class Probed:
    """What probing ``fn`` found: ``label`` (the result it gives on the inputs; None where
    its runs differ), ``runs_differ`` (two calls on the same inputs gave two results),
    ``configs`` (the configurations computing what it computes on every probe), ``how``
    ("probes", "reveal" or "": nothing tried computes it), ``calls`` (of fn)."""

    label: str | None
    runs_differ: bool
    configs: list = field(default_factory=list)
    how: str = ""
    calls: int = 0


class _Caller:
    """fn on copies of its inputs (it may not change them), its result as an array."""

    def __init__(self, fn):
        self.fn, self.calls = fn, 0

    def __call__(self, arrays: tuple) -> np.ndarray:
        self.calls += 1
        with np.errstate(all="ignore"):
            out = np.asarray(self.fn(*(a.copy() for a in arrays)))
        try:
            format_info(out.dtype)
        except (TypeError, ValueError):
            raise TypeError(
                f"fn must return a result in one of fpx.FORMATS, got {checks.shown(out)}"
            ) from None
        return out


def _same(x: np.ndarray, y: np.ndarray) -> bool:
    return x.dtype == y.dtype and x.shape == y.shape and x.tobytes() == y.tobytes()


def probe(fn, op: str, arrays: tuple, observed: dict, evidence: dict, in_fmt: str) -> Probed:
    """What ``fn`` computes (see the module docstring); ``evidence``: label ->
    :class:`~.evidence.Evidence` of the search (its matches are the configurations tried)."""
    call = _Caller(fn)
    first = call(arrays)
    runs = [first, call(arrays)]
    label = next((k for k, v in observed.items() if _same(v, first)), None)
    if label is None:  # a nondeterministic fn may give another value each run
        runs += [call(arrays), call(arrays)]
    if any(not _same(first, r) for r in runs[1:]):
        return Probed(None, True, calls=call.calls)
    if label is None:
        shown = ", ".join(map(checks.shown, observed))
        raise ValueError(
            f"fn(*inputs) gives {checks.shown(first[()] if first.ndim == 0 else first)} "
            f"({first.dtype.name}{'' if first.ndim == 0 else ', shape ' + str(first.shape)}), "
            f"none of the results {shown}: give the function that made one of them"
        )
    tried = probes(op, arrays, PROBES) + _wide(arrays, PROBES)
    outs = []
    for p in tried:
        a, b = call(p), call(p)
        if not _same(a, b):
            return Probed(None, True, calls=call.calls)
        outs.append(a)
    found = _computing(op, evidence[label].matched, tried, outs)
    if found:
        return Probed(label, False, found, "probes", call.calls)
    revealed = _revealed(fn, op, arrays, observed[label], tried, outs, in_fmt)
    return Probed(label, False, revealed, "reveal" if revealed else "", call.calls)


def _wide(arrays: tuple, count: int) -> list:
    """``count`` inputs of the shapes and format of ``arrays`` spread over many binades with
    random signs (float16: normal values), seeded: orders, fusing, accumulators and input
    roundings that agree on the inputs rarely agree on all of these."""
    from ..data import generate

    fmt = arrays[0].dtype.name
    rng = np.random.default_rng(20_261_126)
    out = []
    for i in range(count):
        probe = []
        for j, a in enumerate(arrays):
            v = generate("normal" if fmt == "float16" else "wide", a.size, fmt, 7 * i + j)
            v = np.asarray(v).reshape(a.shape)
            probe.append(np.where(rng.integers(0, 2, a.shape).astype(bool), -v, v))
        out.append(tuple(probe))
    return out


def _corner(op: str, arrays: tuple, out: np.ndarray):
    """A matmul's probe screened on its corner (as the search screens the inputs)."""
    small, observed = screened(op, arrays, {"fn": out})
    return small, observed["fn"]


def _computing(op: str, cfgs: list, tried: list, outs: list) -> list:
    """The configurations of ``cfgs`` that give ``fn``'s result on every probe."""
    keep = list(cfgs)
    for p, out in zip(tried, outs):
        if not keep:
            break
        full = [c for c in keep if c.call]  # a real call runs on the whole matrices
        p_small, out_small = _corner(op, p, out)
        known = Known(op, p_small)
        nxt = []
        for c in keep:
            got = run(op, c, p if c in full else p_small, None if c in full else known)
            want = out if c in full else out_small
            if got is not None and _same(np.asarray(got), np.asarray(want)):
                nxt.append(c)
        keep = nxt
    return keep


def _revealed(fn, op, arrays, result, tried, outs, in_fmt) -> list:
    """fn's revealed tree as configurations (with each input rounding) that reproduce its
    result and its probes; empty where the tree cannot be revealed (n too large, fn not a
    tree of additions, a mean)."""
    from ..reveal import reveal

    if reduction(op).divides:
        return []
    n = reduction(op).length(arrays)
    if n > REVEAL_MAX or n < 2:
        return []
    try:
        rev = reveal(fn, n, op=op, format=in_fmt)
    except (ValueError, TypeError):
        return []
    base = parse_spec(rev.as_order(), order_op(op))
    products = reduction(op).products
    roundings = TRIED_ROUNDINGS if products and in_fmt in ("float32", "float64") else (None,)
    cfgs = [Config(replace(base, input_rounding=r)) for r in roundings]
    matched = [c for c in cfgs if _reproduces(op, c, arrays, result)]
    return _computing(op, matched, tried, outs)


def _reproduces(op: str, cfg: Config, arrays: tuple, result) -> bool:
    got = run(op, cfg, arrays)
    return got is not None and _same(np.asarray(got), np.asarray(result))
