"""The evidence: which configurations reproduce each result bit for bit, which of them are the
same computation for these inputs, and how likely a match is by chance.

:func:`search` runs every configuration of the space (:mod:`.space`) once on the inputs (a
matmul: on a corner of ``SAMPLE x SAMPLE`` elements, the matches confirmed on every
element) and returns one :class:`Evidence` per result. Configurations that reproduce a
result are grouped by what they compute on probes: the inputs permuted along the summed
axis, and with random signs (cancellation). Two names in one group (``blocked(block=1024)``
and ``sequential`` for n <= 1024; a float64-accumulated sum and the exact one) are one
hypothesis about this computation, not two.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from ..formats import as_format, ulp_distance
from ..numerics import clamp_ulps
from ..orders.registry import TENSOR_CORE
from .measure import rounded_reads
from .space import (
    SAMPLE,
    Config,
    Known,
    configs,
    cost,
    distance,
    reduction,
    rounded_otherwise,
    run,
    siblings,
)

__all__ = ["Evidence", "probes", "screened", "search", "signature"]

PROBES = 3  # inputs each matching configuration is run on, to group the same computations
KEEP = 3  # nearest configurations kept for a result nothing reproduces
SMOOTH = 2.0  # draws of all random orders a family's own count is smoothed with


@dataclass
class Evidence:
    """What the search found for one result: ``groups`` (the configurations reproducing it,
    one list per distinct computation, each cheapest first, the cheapest group first),
    ``nearest`` (the closest configurations when none reproduces it) and their ``ulps``
    (max |ulps|), ``chance_bits`` (-log2 of the chance that an unknown configuration gives
    its value: a bit-exact match is that much evidence), ``fact`` (measured by probing the
    function that made it), ``draw_bits`` (-log2 of how often the configurations give its
    value: the bits of a run-to-run order drawing it) and ``family_bits`` (the same per
    family of random orders: one order with its seed left open, say ``tree(block=256,
    combine=atomic)``), and for a sum or mean nothing reproduces ``rounded_reads`` (the
    input roundings it may have read, with the order reproducing it on them or None: within
    their bound alone: :func:`~.measure.rounded_reads`)."""

    label: str
    groups: list = field(default_factory=list)
    nearest: list = field(default_factory=list)
    ulps: float = math.inf
    chance_bits: float = 0.0
    fact: bool = False
    draw_bits: float = 0.0
    family_bits: dict = field(default_factory=dict)
    rounded_reads: tuple = ()

    @property
    def matched(self) -> list:
        return [c for g in self.groups for c in g]

    @property
    def best(self) -> Config | None:
        """The cheapest reproducing configuration (an emulation before a real call), else the
        nearest one."""
        if self.groups:
            return _describing(self.groups[0])
        return self.nearest[0] if self.nearest else None


def _describing(group: list) -> Config:
    """A group's configuration that names its computation: the cheapest emulated one (a real
    library call only where nothing emulates it)."""
    return next((c for c in group if not c.call), group[0])


# ----------------------------------------------------------------------------- probes


def probes(op: str, arrays: tuple, count: int = PROBES) -> list:
    """``count`` inputs like ``arrays``: their terms permuted along the summed axis (the first
    as they are signed, the others with random signs), seeded (the same on every machine)."""
    rng = np.random.default_rng(20_261_125)
    matrix = reduction(op).matrix
    n = reduction(op).length(arrays)
    out = []
    for i in range(count):
        perm = rng.permutation(n)
        flip = rng.integers(0, 2, n).astype(bool) if i else np.zeros(n, bool)
        if matrix:
            A, B = arrays[0][:, perm], arrays[1][perm, :]
            out.append((np.where(flip[None, :], -A, A), B))
        else:
            first = arrays[0][perm]
            out.append((np.where(flip, -first, first),) + tuple(a[perm] for a in arrays[1:]))
    return out


def signature(op: str, cfg: Config, runs: list) -> bytes:
    """What ``cfg`` computes on the probes (``runs``: [(arrays, Known)]), as bytes."""
    parts = []
    for arrays, known in runs:
        got = run(op, cfg, arrays, known)
        parts.append(b"-" if got is None else got.dtype.str.encode() + got.tobytes())
    return b"|".join(parts)


def _grouped(op: str, cfgs: list, arrays: tuple, in_fmt: str) -> list:
    """``cfgs`` (all reproducing one result) in groups of the same computation on the probes,
    each group cheapest first, the groups by their cheapest member."""
    if len(cfgs) <= 1:
        return [list(cfgs)] if cfgs else []
    runs = [(p, Known(op, p)) for p in probes(op, arrays)]
    groups: dict = {}
    for c in cfgs:
        groups.setdefault(signature(op, c, runs), []).append(c)
    out = [sorted(g, key=lambda c: (c.call, cost(op, c, in_fmt))) for g in groups.values()]
    return sorted(out, key=lambda g: cost(op, _describing(g), in_fmt))


# ----------------------------------------------------------------------------- the search


class _Spread:
    """Per result: what the configurations reading the inputs as they are give (in the
    result's format), for the chance of a match: per element the smallest and largest value
    (the span W, in values of the format), the configurations N, and how many give the
    observed value. The chance that some unknown configuration gives the observed value is
    taken as (count + 1) / (N + W): a value many configurations give is likely by chance, a
    value only one gives (or none) is not."""

    def __init__(self, observed: np.ndarray):
        self.observed = observed
        self.lo = self.hi = None
        self.count = np.zeros(observed.shape)
        self.n = 0
        self.drawn = np.zeros(observed.shape)  # the same for the seeded (random) orders
        self.draws = 0
        self.drawn_values: list = []  # the seeded orders' values (float64), for unseen ones
        self.families: dict = {}  # a random order's family -> [drawn, draws]

    def add(self, values: np.ndarray, cfg: Config) -> None:
        if values.dtype != self.observed.dtype:
            values = np.asarray(as_format(values, self.observed.dtype.name))
        v = values.astype(np.float64)
        if np.isnan(v).any():
            return
        self.lo = v if self.lo is None else np.minimum(self.lo, v)
        self.hi = v if self.hi is None else np.maximum(self.hi, v)
        same = distance(self.observed, values) == 0
        self.count += same
        self.n += 1
        if cfg.seeded:
            self.drawn += same
            self.draws += 1
            self.drawn_values.append(v)
            fam = self.families.setdefault((cfg.spec.name, cfg.seedless(), cfg.cast), [0, 0])
            fam[0] = fam[0] + same
            fam[1] += 1

    def bits(self) -> tuple:
        """(-log2 of the chance that some unknown configuration gives the observed value,
        -log2 of the chance that a run-to-run order draws it: the same among the seeded
        orders, which are random ones; the same per family of seeded orders, its few draws
        smoothed with ``SMOOTH`` draws of all of them), each summed over the elements."""
        if self.lo is None:
            return 0.0, 0.0, {}
        fmt = self.observed.dtype.name
        lo, hi = (np.asarray(as_format(v, fmt)) for v in (self.lo, self.hi))
        span = clamp_ulps(ulp_distance(lo, hi, nan="sentinel"), fill=0.0) + 1
        chance = np.sum(np.log2((self.n + span) / (self.count + 1)))
        if not self.draws:  # no random orders tried (a matmul): the configurations' spread
            return float(chance), float(chance), {}
        pool = np.where(self.drawn > 0, (self.drawn + 1) / (self.draws + 1), self._unseen(fmt))
        fams = {
            f: float(-np.sum(np.log2((drawn + SMOOTH * pool) / (draws + SMOOTH))))
            for f, (drawn, draws) in self.families.items()
        }
        return float(chance), float(-np.sum(np.log2(pool))), fams

    def _unseen(self, fmt: str) -> np.ndarray:
        """Per element, the chance that a random order draws a value none of the seeded ones
        drew: the draws' unseen mass (Good-Turing: the share of values drawn once, plus one)
        spread over the values of the format the draws span (with the observed one) that
        none of them gave. A wide spread makes each unseen value rare; a few values drawn
        again and again leave little to the others."""
        drawn = np.stack(self.drawn_values)  # (draws, *shape)
        ordered = np.sort(drawn, axis=0)
        new = np.ones(ordered.shape, dtype=bool)
        new[1:] = ordered[1:] != ordered[:-1]
        distinct = new.sum(axis=0)
        last = np.ones(ordered.shape, dtype=bool)
        last[:-1] = ordered[1:] != ordered[:-1]
        once = (new & last).sum(axis=0)
        obs = self.observed.astype(np.float64)
        lo = np.asarray(as_format(np.minimum(ordered[0], obs), fmt))
        hi = np.asarray(as_format(np.maximum(ordered[-1], obs), fmt))
        span = clamp_ulps(ulp_distance(lo, hi, nan="sentinel"), fill=0.0) + 1
        unseen = np.maximum(span - distinct, 1)
        return (once + 1) / (self.draws + 1) / unseen


def screened(op: str, arrays: tuple, observed: dict):
    """The inputs and results a matmul is screened on (its first SAMPLE x SAMPLE elements);
    other ops' as they are."""
    if not reduction(op).matrix:
        return arrays, observed
    r, c = min(SAMPLE, arrays[0].shape[0]), min(SAMPLE, arrays[1].shape[1])
    return (arrays[0][:r], arrays[1][:, :c]), {k: v[:r, :c] for k, v in observed.items()}


def search(op: str, arrays: tuple, observed: dict, in_fmt: str, *, skip=()) -> dict:
    """label -> :class:`Evidence` for every result in ``observed`` (labels in ``skip``: only
    the chance of a match, their configuration being known otherwise)."""
    tried = configs(op, in_fmt, {o.dtype.name for o in observed.values()})
    sample, obs_sample = screened(op, arrays, observed)
    known = Known(op, sample)
    full: dict = {}  # a matmul's real call runs on the whole matrices (BLAS blocks by shape)
    scores = {k: [] for k in observed}  # label -> [(max ulps, mean ulps, cfg)]
    spreads = {k: _Spread(v) for k, v in obs_sample.items()}
    for cfg in tried:
        if reduction(op).matrix and cfg.call:
            full[cfg] = run(op, cfg, arrays)
            got = (
                None if full[cfg] is None else full[cfg][: sample[0].shape[0], : sample[1].shape[1]]
            )
        else:
            got = run(op, cfg, sample, known)
        if got is None:
            continue
        plain = cfg.spec.input_rounding is None and cfg.spec.name != TENSOR_CORE
        for label, obs in obs_sample.items():
            d = distance(obs, got)
            if d is None:
                continue
            scores[label].append((float(np.max(d)), float(np.mean(d)), cfg))
            if plain:
                spreads[label].add(got, cfg)
    out = {}
    for label, sc in scores.items():
        chance, draw, fams = spreads[label].bits()
        ev = Evidence(label, chance_bits=chance, draw_bits=draw, family_bits=fams)
        if label not in skip:
            _found(op, arrays, observed[label], sc, ev, in_fmt, full)
        out[label] = ev
    return out


def _found(op, arrays, obs, sc: list, ev: Evidence, in_fmt: str, full: dict) -> None:
    """Fill ``ev`` from the sample's scores ``sc``: the reproducing configurations grouped,
    each group confirmed on every element (a matmul), or the nearest ones."""
    sc.sort(key=lambda t: (t[0], t[1], cost(op, t[2], in_fmt)))
    if not sc:
        return
    matched = [t[2] for t in sc if t[0] == 0]
    sample = screened(op, arrays, {})[0]
    groups = _grouped(op, matched, sample, in_fmt)
    if reduction(op).matrix:  # each group confirmed on every element by its first that holds
        groups = [g for g in (_confirmed(op, g, arrays, obs, full) for g in groups) if g]
    if not groups:  # nearly reproduced: the same with ties of its input rounding otherwise
        near = [t[2] for t in sc[:KEEP]] + matched[:KEEP]
        tried = list(dict.fromkeys(s for c in near for s in siblings(c)))
        tried += _other_ties(op, sc, arrays, sample, obs, set(tried))
        found = [c for c in tried if _reproduces(op, c, arrays, obs)]
        groups = _grouped(op, found, sample, in_fmt)
    if not groups:  # the nearest ones with the inputs rounded otherwise, scored alike
        sc = _rerounded(op, sc, sample, obs, in_fmt)
        found = [t[2] for t in sc if t[0] == 0 and _reproduces(op, t[2], arrays, obs)]
        groups = _grouped(op, found, sample, in_fmt)
    if groups:
        ev.groups, ev.ulps = groups, 0.0
        return
    near = [t for t in sc if t[0] > 0][:KEEP]
    if reduction(op).matrix:
        near = []
        for _, _, cfg in sc[:KEEP]:
            d = _full_distance(op, cfg, arrays, obs, full)
            if d is not None:
                near.append((float(np.max(d)), float(np.mean(d)), cfg))
        near.sort(key=lambda t: (t[0], t[1], cost(op, t[2], in_fmt)))
    if near:
        ev.nearest, ev.ulps = [t[2] for t in near], near[0][0]
    ev.rounded_reads = rounded_reads(op, arrays, obs, in_fmt)


def _rerounded(op, sc: list, sample: tuple, obs, in_fmt: str) -> list:
    """``sc`` with the scores of its nearest configurations' other input roundings
    (:func:`~.space.rounded_otherwise`) on the sample, sorted again."""
    part = obs[: sample[0].shape[0], : sample[1].shape[1]] if reduction(op).matrix else obs
    seen = {t[2] for t in sc}
    more = []
    for cfg in dict.fromkeys(o for t in sc[:KEEP] for o in rounded_otherwise(op, t[2], in_fmt)):
        if cfg not in seen and (got := run(op, cfg, sample)) is not None:
            if (d := distance(part, got)) is not None:
                more.append((float(np.max(d)), float(np.mean(d)), cfg))
    return sorted(sc + more, key=lambda t: (t[0], t[1], cost(op, t[2], in_fmt)))


def _other_ties(op, sc: list, arrays: tuple, sample: tuple, obs, tried: set) -> list:
    """Every other rounding of the tried input roundings' families (tf32 truncated) that
    reproduces the result on the sample (a matmul's library call: on the whole, as BLAS
    blocks by shape): truncated TF32 inputs move a dot further than any order does, so the
    nearest configurations are rarely TF32's (pass 14: n = 100, "a likely bug")."""
    matrix = reduction(op).matrix
    part = obs[: sample[0].shape[0], : sample[1].shape[1]] if matrix else obs
    out = []
    for cfg in dict.fromkeys(s for t in sc for s in siblings(t[2])):
        if cfg in tried:
            continue
        if matrix and cfg.call:
            d = _full_distance(op, cfg, arrays, obs, {})
        else:
            d = None if (got := run(op, cfg, sample)) is None else distance(part, got)
        if d is not None and float(np.max(d)) == 0:
            out.append(cfg)
    return out


def _reproduces(op, cfg, arrays, obs) -> bool:
    d = _full_distance(op, cfg, arrays, obs, {})
    return d is not None and float(np.max(d)) == 0


def _full_distance(op, cfg, arrays, obs, full: dict):
    got = full[cfg] if cfg in full else run(op, cfg, arrays)
    return None if got is None else distance(obs, got)


def _confirmed(op, group: list, arrays, obs, full: dict) -> list:
    """The members of a group (the same computation on the sample) that reproduce the whole
    result: tried in turn until one does, which stands for the others (an empty list where
    none does)."""
    for i, cfg in enumerate(group):
        d = _full_distance(op, cfg, arrays, obs, full)
        if d is not None and float(np.max(d)) == 0:
            return group[i:]
    return []


def with_fact(ev: Evidence, cfgs: list, op: str, in_fmt: str) -> Evidence:
    """``ev`` with its configuration measured (probing the function that made it): one group."""
    cfgs = [c for c in cfgs if not c.seeded] or cfgs  # fn gave one result twice
    group = sorted(cfgs, key=lambda c: (c.call, cost(op, c, in_fmt)))
    return Evidence(ev.label, [group], [], 0.0, ev.chance_bits, True, ev.draw_bits, ev.family_bits)
