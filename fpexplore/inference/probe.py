"""Probing the function that made a result: ``fn=`` turns a hypothesis into a fact.

:func:`probe` calls ``fn`` on the inputs twice (two results: run-to-run nondeterminism, a
fact), finds the result it gives, then calls it on probe inputs (the inputs permuted along the
summed axis, with random signs, and inputs spread over many binades; each probe twice) and
keeps the configurations that reproduce
that result and compute what ``fn`` computes on every probe: its order, fused products,
accumulator and input rounding, measured. Where none does, ``fn``'s accumulation tree is
revealed (:func:`fpexplore.reveal`, FPRev's masks) and tried with each input rounding; where
it is too long to reveal (more than ``REVEAL_MAX`` terms), its block size is measured on a
probe of ``SCAN_N`` terms (every order the search tries with a block size, every size).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np

from .. import checks
from ..formats import format_info
from ..orders.registry import orders_of
from ..spec import VariantSpec, check_spec
from .evidence import PROBES, probes, screened
from .measure import beyond_rounding, identical
from .space import TRIED_ROUNDINGS, Config, Known, order_op, reduction, run

__all__ = ["REVEAL_MAX", "Probed", "probe"]

REVEAL_MAX = 4096  # the largest n (a matmul: k) whose tree is revealed where nothing matches
SCAN_N = 1024  # the terms of the probe on which a block size is scanned (2 .. SCAN_N - 1)


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

    def __init__(self, fn, label=None):
        self.fn, self.calls = fn, 0
        self.name = "fn" if label is None else f"fn[{label!r}]"

    def __call__(self, arrays: tuple) -> np.ndarray:
        self.calls += 1
        try:
            with np.errstate(all="ignore"):
                out = np.asarray(self.fn(*(a.copy() for a in arrays)))
        except Exception as e:  # the user's own error, with how explain called fn (3.11+)
            if hasattr(e, "add_note"):
                shapes = " and ".join(f"{a.dtype} {a.shape}" for a in arrays)
                e.add_note(f"fpx.explain called {self.name} with {len(arrays)} array(s): {shapes}")
            raise
        try:
            format_info(out.dtype)
        except (TypeError, ValueError):
            raise TypeError(
                f"fn must return a result in one of fpx.FORMATS, got {checks.shown(out)}"
            ) from None
        return out


def probe(
    fn, op: str, arrays: tuple, observed: dict, evidence: dict, in_fmt: str, label=None
) -> Probed:
    """What ``fn`` computes (see the module docstring); ``evidence``: label ->
    :class:`~.evidence.Evidence` of the search (its matches are the configurations tried);
    ``label``: the result ``fn`` made (None: whichever result it gives)."""
    call = _Caller(fn, label)
    first = call(arrays)
    runs = [first, call(arrays)]
    want = observed if label is None else {label: observed[label]}
    made = next((k for k, v in want.items() if identical(v, first)), None)
    if made is None:  # a nondeterministic fn may give another value each run
        runs += [call(arrays), call(arrays)]
    if any(not identical(first, r) for r in runs[1:]):
        if made is None and all(np.any(beyond_rounding(op, arrays, r, ())) for r in runs):
            raise ValueError(  # (pass 28: random numbers decided nondeterminism)
                f"fn{'' if label is None else f'[{label!r}]'}(*inputs) gives another value on "
                f"each call ({', '.join(checks.shown(r[()] if r.ndim == 0 else r) for r in runs)}"
                f"), none of them the results nor within rounding of the exact {op}: give the "
                "function that made them"
            )
        return Probed(None, True, calls=call.calls)
    if made is None:
        gives = (
            f"gives {checks.shown(first[()] if first.ndim == 0 else first)} "
            f"({first.dtype.name}{'' if first.ndim == 0 else ', shape ' + str(first.shape)})"
        )
        if label is not None:
            raise ValueError(
                f"fn[{label!r}](*inputs) {gives}, not the result {label!r} "
                f"({checks.shown(observed[label])}): give the function that made it"
            )
        shown = ", ".join(map(checks.shown, observed))
        raise ValueError(
            f"fn(*inputs) {gives}, none of the results {shown}: give the function that "
            "made one of them"
        )
    label = made
    tried = probes(op, arrays, PROBES) + _wide(arrays, PROBES)
    outs = []
    for p in tried:
        a, b = call(p), call(p)
        if not identical(a, b):
            return Probed(None, True, calls=call.calls)
        outs.append(a)
    found = _computing(op, evidence[label].matched, tried, outs)
    if found:
        return Probed(label, False, found, "probes", call.calls)
    revealed = _revealed(fn, op, arrays, observed[label], tried, outs, in_fmt)
    if revealed:
        return Probed(label, False, revealed, "reveal", call.calls)
    scanned = _scanned(call, op, arrays, observed[label], tried, outs, in_fmt)
    return Probed(label, False, scanned, "scan" if scanned else "", call.calls)


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
            if got is not None and identical(got, want):
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
    base = check_spec(rev.as_spec(), order_op(op))
    products = reduction(op).products
    roundings = TRIED_ROUNDINGS if products and in_fmt in ("float32", "float64") else (None,)
    cfgs = [Config(replace(base, input_rounding=r)) for r in roundings]
    matched = [c for c in cfgs if _reproduces(op, c, arrays, result)]
    return _computing(op, matched, tried, outs)


def _reproduces(op: str, cfg: Config, arrays: tuple, result) -> bool:
    got = run(op, cfg, arrays)
    return got is not None and identical(got, result)


def _shorter(op: str, arrays: tuple, k: int) -> tuple:
    """``arrays`` cut to their first ``k`` terms along the summed axis."""
    if reduction(op).matrix:
        return arrays[0][:, :k], arrays[1][:k, :]
    return tuple(a[:k] for a in arrays)


def _scans(op: str, fmt: str, k: int) -> list:
    """Each order whose grid the search tries for a block size (an integer parameter the
    grid varies), with every value from 2 to ``k - 1`` in its place, the other settings as
    the grid has them (fma off and on where products are added)."""
    base = order_op(op)
    fmas = (False, True) if reduction(op).products else (False,)
    out = []
    for name, spec in orders_of(base).items():
        if not spec.listed or fmt not in spec.formats or spec.library is not None:
            continue
        for key in spec.params:
            values = {dict(g).get(key) for g in spec.grid}
            if len({v for v in values if type(v) is int}) < 2:
                continue
            rests = dict.fromkeys(tuple(kv for kv in g if kv[0] != key) for g in spec.grid)
            for rest in rests:
                for v in range(2, k):
                    params = tuple(sorted(rest + ((key, v),)))
                    for f in fmas if spec.fma else (False,):
                        out.append(Config(VariantSpec(name, params, f)))
    return out


def _scanned(call, op, arrays, result, tried, outs, in_fmt) -> list:
    """For a function nothing tried computes and too long to reveal: its block size
    measured. Every order that has one (:func:`_scans`) is run on a short probe of
    ``SCAN_N`` terms and kept where it gives ``fn``'s value; those that then reproduce the
    result and every probe are returned."""
    k = min(reduction(op).length(arrays), SCAN_N)
    if k < 3:
        return []
    probe = _shorter(op, _wide(arrays, 1)[0], k)
    want = call(probe)
    known = Known(op, probe)
    cfgs = [c for c in _scans(op, in_fmt, k) if _same_or_none(run(op, c, probe, known), want)]
    matched = [c for c in cfgs if _reproduces(op, c, arrays, result)]
    return _computing(op, matched, tried, outs)


def _same_or_none(got, want) -> bool:
    return got is not None and identical(got, want)
