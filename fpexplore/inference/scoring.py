"""The scorer: which cause explains the difference between two results, and whether the
evidence decides it.

A hypothesis is a configuration per result. Its cost in bits is a description length: the
first result's configuration (:func:`.space.cost`), then each factor in which the second one
differs (``CHANGE`` bits to say which factor, and the bits of its new value). A result no
configuration reproduces is explained by an unknown configuration: ``UNKNOWN_BITS`` plus the
bits of its value among the values the configurations spread over (a bit-exact match is only
that much evidence). Run-to-run nondeterminism explains three or more results as draws of one
code (``RUN_TO_RUN_BITS`` plus each value's bits). Each hypothesis weighs 2^-bits; a cause's
posterior is the weight of the hypotheses naming it over all. A cause is decided when its
posterior reaches ``DECIDED`` and only exact matches name it (never a nearest configuration);
run-to-run nondeterminism also needs positive evidence (the function called twice differs,
or three or more results none of which a deterministic configuration reproduces).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from .evidence import Evidence
from .space import Config, cost, differing, factor_bits, factors

__all__ = ["CHANGE", "MARGIN", "Cause", "Scores", "score"]

#: bits that say which factor changed between the two results, beyond naming its new value
CHANGE = {
    "order": 1.0,
    "tensor_core": 1.0,
    "nondeterminism": 1.0,
    "accumulator": 1.0,
    "fma": 2.0,
    "input_rounding": 2.0,
    "cast": 2.0,
}
UNKNOWN_BITS = 6.0  # naming "a configuration none of those tried"
RUN_TO_RUN_BITS = 3.0  # naming "the same code, another result on each run"
MARGIN = 3.0  # bits by which a decided cause's best hypothesis beats every other cause's
LISTED = 0.02  # the posterior a competing cause needs to be listed
MEMBERS = 12  # the cheapest configurations of a group scored against each other
GROUPS = 25  # the cheapest groups of a result scored
UNKNOWN = "unknown"
RUN_TO_RUN = frozenset({"nondeterminism"})


@dataclass
class Cause:
    """One explanation of the difference: the differing ``factors`` (a frozenset; empty for
    an unknown configuration), its ``posterior``, the ``bits`` of its best hypothesis, the
    configurations it rests on (``a``, ``b``: None for an unknown one), whether only exact
    matches name it (``exact``), and for an unknown configuration the nearest one."""

    factors: frozenset
    posterior: float
    bits: float
    a: Config | None = None
    b: Config | None = None
    exact: bool = True


@dataclass
class Scores:
    """The scorer's answer for a pair of results: ``causes`` best first, ``decided`` (the
    top cause's factors are decided), ``positive`` (positive evidence of run-to-run
    nondeterminism), ``hypotheses`` (the competing hypotheses, for the table)."""

    causes: list = field(default_factory=list)
    decided: bool = False
    positive: bool = False


def _members(op: str, ev: Evidence, in_fmt: str) -> list:
    """[(group index, [configs scored])], the cheapest groups and members, distinct factors
    kept once."""
    out = []
    for i, g in enumerate(ev.groups[:GROUPS]):
        g = [c for c in g if not c.call] or g  # a real call names only what nothing emulates
        seen, keep = set(), []
        for c in g:
            f = tuple(sorted(factors(c, in_fmt).items(), key=lambda kv: kv[0]))
            if f not in seen:
                seen.add(f)
                keep.append(c)
            if len(keep) == MEMBERS:
                break
        out.append((i, keep))
    return out


def _pair_bits(op: str, ca: Config, cb: Config, in_fmt: str, costs: dict) -> tuple:
    """(bits of the cheaper description of the pair, the differing factors)."""
    fa, fb = factors(ca, in_fmt), factors(cb, in_fmt)
    diff = differing(fa, fb, ca.spec.name == cb.spec.name)
    if not diff:
        diff = frozenset({"order"})  # the same settings named apart (two library loops)

    def change(f_to) -> float:
        return sum(CHANGE[f] + factor_bits(op, f, f_to[f], in_fmt) for f in diff)

    return min(costs[ca] + change(fb), costs[cb] + change(fa)), diff


def _cheapest(op: str, ev: Evidence, in_fmt: str) -> float:
    """The bits of explaining one result alone: its cheapest configuration, or unknown."""
    unknown = UNKNOWN_BITS + ev.chance_bits
    if not ev.groups:
        return unknown
    best = cost(op, ev.best, in_fmt)
    return best if ev.fact else min(best, unknown)


def score(op: str, evidence: dict, pair: tuple, in_fmt: str, *, runs_differ=None) -> Scores:
    """The causes of the difference between the results ``pair`` = (a, b), weighed over
    every hypothesis (``evidence``: label -> :class:`Evidence` of every result;
    ``runs_differ``: True where the function was called twice and gave two results, False
    where it gave the same, None where it was not given)."""
    a, b = (evidence[k] for k in pair)
    weights: dict = {}  # (factors, exact) -> [bits of its best hypothesis, ca, cb]

    def add(diff, bits, ca, cb, exact=True):
        cur = weights.setdefault((diff, exact), [math.inf, None, None])
        if bits < cur[0]:
            cur[:] = [bits, ca, cb]

    _deterministic(op, a, b, in_fmt, add)
    others = sum(_cheapest(op, evidence[k], in_fmt) for k in evidence if k not in pair)
    for key in weights:  # the other results, each explained alone, on every hypothesis
        weights[key][0] += others
    positive = runs_differ is True
    if len(evidence) >= 3 or positive:
        draws = sum(ev.chance_bits for ev in evidence.values())
        bits = RUN_TO_RUN_BITS + draws - (40.0 if positive else 0.0)
        if runs_differ is not False:
            add(RUN_TO_RUN, bits, None, None)
        positive = positive or (
            len(evidence) >= 3
            and not any(ev.groups and not _seeded(ev) for ev in evidence.values())
        )
    return _ranked(weights, positive)


def _seeded(ev: Evidence) -> bool:
    """Only seeded (run-to-run) configurations reproduce the result."""
    return all(c.seeded for c in ev.matched)


def _deterministic(op: str, a: Evidence, b: Evidence, in_fmt: str, add) -> None:
    """Every hypothesis explaining ``a`` and ``b`` by configurations, each reproducing its
    result (or unknown), added with its bits."""
    ma, mb = _members(op, a, in_fmt), _members(op, b, in_fmt)
    costs = {c: cost(op, c, in_fmt) for _, g in ma + mb for c in g}
    for _, ga in ma:
        for _, gb in mb:
            for ca in ga:
                for cb in gb:
                    bits, diff = _pair_bits(op, ca, cb, in_fmt, costs)
                    add(diff, bits, ca, cb)
    for known, other, flip in ((a, b, False), (b, a, True)):
        if other.fact:
            continue  # measured, never unknown
        unknown = UNKNOWN_BITS + other.chance_bits
        if known.groups:
            ck = _described(known)
            guess = _guess(other, ck, in_fmt, flip)
            add(
                guess,
                costs.get(ck, cost(op, ck, in_fmt)) + unknown,
                *_ordered(ck, other, flip),
                False,
            )
    if not a.fact and not b.fact:
        bits = 2 * UNKNOWN_BITS + a.chance_bits + b.chance_bits
        near_a, near_b = (a.nearest or [None])[0], (b.nearest or [None])[0]
        guess = frozenset()
        if near_a is not None and near_b is not None:
            guess = differing(factors(near_a, in_fmt), factors(near_b, in_fmt), False)
        add(guess, bits, near_a, near_b, False)


def _described(ev: Evidence) -> Config:
    return ev.best


def _ordered(ck: Config, other: Evidence, flip: bool) -> tuple:
    near = (other.nearest or [None])[0]
    return (near, ck) if flip else (ck, near)


def _guess(other: Evidence, ck: Config, in_fmt: str, flip: bool) -> frozenset:
    """The factors in which an unknown configuration seems to differ: those of its nearest
    configuration (empty where there is none)."""
    near = (other.nearest or [None])[0]
    if near is None:
        return frozenset()
    return differing(factors(ck, in_fmt), factors(near, in_fmt), False)


def _ranked(weights: dict, positive: bool) -> Scores:
    """The causes best first, each with the weight of its best hypothesis over all; the top
    one decided when it rests on exact matches and every other is ``MARGIN`` bits worse."""
    best = min((w[0] for w in weights.values()), default=math.inf)
    total = sum(2.0 ** (best - w[0]) for w in weights.values())
    causes = [
        Cause(diff, 2.0 ** (best - w[0]) / total, w[0], w[1], w[2], exact)
        for (diff, exact), w in weights.items()
    ]
    causes.sort(key=lambda c: (-c.posterior, c.bits))
    out = Scores(causes, False, positive)
    if causes:
        top = causes[0]
        decidable = top.exact and bool(top.factors)
        if top.factors == RUN_TO_RUN:
            decidable = decidable and positive
        runner_up = causes[1].bits if len(causes) > 1 else math.inf
        out.decided = decidable and runner_up - top.bits >= MARGIN
    return out
