"""The scorer: which cause explains the difference between two results, and whether the
evidence decides it.

A hypothesis is a configuration per result. Its cost in bits is a description length: the
first result's configuration (:func:`.space.cost`), then each factor in which the second one
differs (``CHANGE`` bits to say which factor, and the bits of its new value). A result no
configuration reproduces is explained by an unknown configuration: ``UNKNOWN_BITS`` plus the
bits of its value among the values the configurations spread over (a bit-exact match is only
that much evidence). Run-to-run nondeterminism explains results that all differ as draws of
one code: ``RUN_TO_RUN_BITS`` plus the bits of one family of random orders (an order with its
seed left open) drawing every value. Configurations that give the same results are one
computation: its weight is shared among the causes its shortest descriptions name (as bits
of each), unless both results were measured by probing their functions (the pair is then a
fact, named by its shortest description alone). Each hypothesis weighs 2^-bits; a cause's
posterior is the weight of the hypotheses naming it over all. A cause is decided when its
posterior reaches ``DECIDED`` and only exact matches name it (never a nearest configuration);
run-to-run nondeterminism also needs positive evidence (the function called twice differs,
or three or more results none of which a deterministic configuration reproduces beyond
chance, one of them none reproduces at all).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from .evidence import Evidence
from .space import Config, cost, differing, factor_bits, factors, reduction

__all__ = ["CHANGE", "DECIDED", "Cause", "Scores", "score"]

#: bits that say which factor changed between the two results, beyond naming its new value
CHANGE = {
    "order": 1.0,
    "tensor_core": 1.0,
    "nondeterminism": 1.0,
    "accumulator": 2.0,
    "fma": 2.0,
    "input_rounding": 2.0,
    "cast": 1.0,
}
UNKNOWN_BITS = 5.0  # naming "a configuration none of those tried"
RUN_TO_RUN_BITS = 2.0  # naming "the same code, another result on each run"
OTHER_BITS = 3.0  # a third (fourth, ...) configuration of one computation
CHANCE = 10.0  # bits a match needs to be more than chance (1 in 1024)
DECIDED = 0.9  # the posterior a decided cause reaches (odds of 9 to 1 against all others)
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
    """The scorer's answer for a pair of results: ``causes`` best first (the first names every
    decided factor), ``decided`` (some factor is), ``positive`` (positive evidence of
    run-to-run nondeterminism), ``marginal`` and the decided ``factors``."""

    causes: list = field(default_factory=list)
    decided: bool = False
    positive: bool = False
    marginal: dict = field(default_factory=dict)  # factor -> posterior of the causes naming it
    factors: frozenset = frozenset()  # the decided factors
    by_chance: bool = False  # undecided: an order (beside another factor, or alone where
    # neither result is reproduced beyond chance) or the tensor cores, matched by chance


def _members(op: str, ev: Evidence, in_fmt: str) -> list:
    """[(its cheapest configurations, its neighbours)] for the cheapest groups: the cheapest
    members with distinct factors, and by each key of :func:`_keys` the cheapest member with
    it (to describe the group next to a partner's configuration by a one-factor change)."""
    out = []
    for group in ev.groups[:GROUPS]:
        g = [c for c in group if not c.call] or group  # a real call names only what nothing
        seen, keep, near = set(), [], {}  # emulates; as a neighbour (np.matmul@float64 next
        for c in g + [c for c in group if c not in g]:  # to np.matmul) it names one change
            f = factors(c, in_fmt)
            key = tuple(sorted(f.items(), key=lambda kv: kv[0]))
            if c in g and key not in seen and len(keep) < MEMBERS:  # cheapest first
                seen.add(key)
                keep.append(c)
            for k in _keys(f):
                near.setdefault(k, c)
        out.append((keep, near))
    return out


def _keys(f: dict) -> list:
    """Keys equal for two configurations that differ in one factor (the accumulator coming
    with a cast)."""
    items = sorted((k, v) for k, v in f.items() if k != "natural")
    out = [(k,) + tuple(kv for kv in items if kv[0] != k) for k, _ in items]
    if f["natural"]:
        out.append(("cast+",) + tuple(kv for kv in items if kv[0] not in ("cast", "accumulator")))
    return out


def _pairs(ga, gb, in_fmt: str):
    """The pairs of configurations that may describe the group pair most briefly: the
    cheapest against the cheapest, and each cheap one against the other group's one-factor
    neighbours of it."""
    keep_a, near_a = ga
    keep_b, near_b = gb
    seen = set()
    for ca in keep_a:
        for cb in keep_b:
            seen.add((ca, cb))
            yield ca, cb
    for mine, near, flip in ((keep_a, near_b, False), (keep_b, near_a, True)):
        for c in mine:
            for k in _keys(factors(c, in_fmt)):
                other = near.get(k)
                pair = (other, c) if flip else (c, other)
                if other is not None and pair not in seen:
                    seen.add(pair)
                    yield pair


def _pair_bits(op: str, ca: Config, cb: Config, in_fmt: str, costs: dict) -> tuple:
    """(bits of the cheaper description of the pair, the differing factors)."""
    fa, fb = factors(ca, in_fmt), factors(cb, in_fmt)
    diff = differing(fa, fb)
    if not diff:
        diff = frozenset({"order"})  # the same settings named apart (two library loops)

    def change(f_to) -> float:
        bits = 0.0
        for f in diff:  # leaving the tensor cores names the order and settings come back to
            f_named = "order" if f == "tensor_core" and f_to[f] is None else f
            bits += CHANGE[f] + factor_bits(op, f_named, f_to[f_named], in_fmt)
        return bits

    return min(costs[ca] + change(fb), costs[cb] + change(fa)), diff


class _Costs(dict):
    """Configuration -> its prior cost in bits, computed once."""

    def __init__(self, op: str, in_fmt: str):
        super().__init__()
        self.op, self.in_fmt = op, in_fmt

    def __missing__(self, cfg: Config) -> float:
        self[cfg] = cost(self.op, cfg, self.in_fmt)
        return self[cfg]


def _cheapest(op: str, ev: Evidence, in_fmt: str) -> float:
    """The bits of explaining one result alone: its cheapest configuration, or unknown."""
    unknown = UNKNOWN_BITS + ev.chance_bits
    if not ev.groups:
        return unknown
    best = cost(op, ev.best, in_fmt)
    return best if ev.fact else min(best, unknown)


def score(
    op: str,
    evidence: dict,
    pair: tuple,
    in_fmt: str,
    *,
    runs_differ=None,
    steady=(),
    repeated=False,
) -> Scores:
    """The causes of the difference between the results ``pair`` = (a, b), weighed over
    every hypothesis (``evidence``: label -> :class:`Evidence` of every result;
    ``runs_differ``: True where the function was called twice and gave two results, False
    where it gave the same, None where it was not given; ``steady``: the labels of results
    whose function gave the same twice: where both of the pair's did, a seeded order is a
    fixed one, and nondeterminism no cause (pass 24: it was listed beside order);
    ``repeated``: two of the results are one value, bit for bit, which runs of one code may
    give)."""
    if runs_differ:  # a fact: the same code gave two results
        return Scores(
            [Cause(RUN_TO_RUN, 1.0, 0.0)], True, True, {"nondeterminism": 1.0}, RUN_TO_RUN
        )
    a, b = (evidence[k] for k in pair)
    fixed_pair = all(k in steady for k in pair)
    weights: dict = {}  # (factors, exact) -> [bits of the summed weight, best bits, ca, cb]

    def add(diff, bits, ca, cb, exact=True, named=None):
        """A hypothesis of weight 2^-bits (``named``: the bits of its own description, where
        its weight is a share of a computation's)."""
        named = bits if named is None else named
        if fixed_pair and "nondeterminism" in diff:
            diff = (diff - RUN_TO_RUN) | {"order"}
        cur = weights.setdefault((diff, exact), [math.inf, math.inf, None, None])
        cur[0] = _plus(cur[0], bits)
        if named < cur[1]:
            cur[1:] = [named, ca, cb]

    _deterministic(op, a, b, in_fmt, add)
    # the other results, each explained alone, a configuration more for one computation
    others = sum(OTHER_BITS + _cheapest(op, evidence[k], in_fmt) for k in evidence if k not in pair)
    for w in weights.values():
        w[0] += others
        w[1] += others
    positive = runs = False
    differ = runs_differ is None and _all_differ(evidence)  # (False: fn ran alike)
    # two runs may give one value (pass 23: of three shuffled runs two coincided, a
    # configuration reproduced them, and nondeterminism was not listed: 6 of 82)
    if differ or (runs_differ is None and repeated):
        add(RUN_TO_RUN, RUN_TO_RUN_BITS + _draws(evidence), None, None)
    if differ:
        chance = [ev for ev in evidence.values() if not _reproduced(ev)]
        # positive: not every one is given by a fixed configuration too (pass 15: 3 results
        # of fixed loops at n = 10, each matched by few values, were decided run-to-run)
        fixed = all(any(not c.seeded for c in ev.matched) for ev in evidence.values())
        # (pass 27: r1, r2, r3 of fixed orders with r1 == r3, none reproduced, were decided
        # nondeterminism: results that do not all differ are no positive evidence)
        distinct = len(evidence) >= 3 and not repeated
        positive = distinct and len(chance) == len(evidence) and not fixed
        runs = distinct and bool(chance)
    return _by_chance(_ranked(weights, positive, runs), a, b)


def _by_chance(out: Scores, a: Evidence, b: Evidence) -> Scores:
    """Undecided where an order is decided beside another factor, or the tensor cores (an
    order and settings of their own), on a match that chance may give (pass 18: two
    results of one loop nothing tried, one on inputs rounded to bfloat16, each matched by
    another tried order, decided ``order`` beside ``input_rounding``; pass 19: the rounded
    one matched by a tensor core, ``tensor_core``): the other factors may explain the
    difference alone, under an order common to both that nothing tried. An order alone is
    undecided where neither result is reproduced beyond chance (pass 22: one element of a
    float16 sum of 3000 dropped, both sequential, was decided ``order``: the buggy value
    was one a tree gives): a change other than the order, a bug smaller than the rounding
    error, fits as well."""
    top = out.causes[0].factors if out.decided else frozenset()
    beside = ("order" in top and len(top) > 1) or "tensor_core" in top
    known = [ev.fact or _reproduced(ev) for ev in (a, b)]
    if (beside and not all(known)) or (top == {"order"} and not any(known)):
        return Scores(out.causes, False, out.positive, out.marginal, by_chance=True)
    return out


def _draws(evidence: dict) -> float:
    """-log2 of the chance that one random order (a family of seeded orders, each as likely)
    drew every result: each family's chance of each value, multiplied; where no family was
    tried, each value's chance among all configurations."""
    evs = list(evidence.values())
    # in the search's order (a set's would change the sum's last bits from run to run)
    fams = [f for f in evs[0].family_bits if all(f in ev.family_bits for ev in evs[1:])]
    if not fams:
        return sum(ev.draw_bits for ev in evs)
    total = math.inf
    for f in fams:
        total = _plus(total, sum(ev.family_bits[f] for ev in evs))
    return total + math.log2(len(fams))


def _all_differ(evidence: dict) -> bool:
    """No configuration reproduces two of the results (they all differ)."""
    seen = set()
    for ev in evidence.values():
        mine = set(map(str, ev.matched))
        if mine & seen:
            return False
        seen |= mine
    return True


def _reproduced(ev: Evidence) -> bool:
    """A deterministic configuration reproduces the result beyond chance: one not seeded
    matches, and the configurations spread over at least 2^CHANCE values of its format."""
    return ev.chance_bits >= CHANCE and any(not c.seeded for c in ev.matched)


def _deterministic(op: str, a: Evidence, b: Evidence, in_fmt: str, add) -> None:
    """Every hypothesis explaining ``a`` and ``b`` by configurations, each reproducing its
    result (or unknown), added with its bits: one per pair of groups (each the same
    computation), named by its shortest description."""
    ma, mb = _members(op, a, in_fmt), _members(op, b, in_fmt)
    costs = _Costs(op, in_fmt)
    for ga in ma:
        for gb in mb:
            # one computation per group pair: its weight is its shortest description's,
            # shared among the causes its minimal descriptions name (each by its shortest)
            named: dict = {}
            for ca, cb in _pairs(ga, gb, in_fmt):
                bits, diff = _pair_bits(op, ca, cb, in_fmt, costs)
                if diff not in named or bits < named[diff][0]:
                    named[diff] = (bits, ca, cb)
            # a description that adds factors to another one's names no other cause
            named = {d: v for d, v in named.items() if not any(o < d for o in named)}
            if a.fact and b.fact:  # both computations measured: one pair, its shortest name
                named = dict([min(named.items(), key=lambda kv: kv[1][0])])
            top = min(v[0] for v in named.values())
            total = math.inf
            for v in named.values():
                total = _plus(total, v[0])
            twins = _accumulated_alike(op, ga, gb, in_fmt, costs)
            for v in twins.values():
                total = _plus(total, v[0])
            top = min([top, *(v[0] for v in twins.values())])
            for diff, (bits, ca, cb) in named.items():
                add(diff, top + bits - total, ca, cb, named=bits)
            for diff, (bits, ca, cb) in twins.items():  # (a guess: never decides)
                add(diff, top + bits - total, ca, cb, False, named=bits)
    # an unknown configuration for a result nothing reproduces (one that a configuration
    # reproduces may come from an unknown one too, but as far as the evidence goes like
    # those that reproduce it: it names the same causes)
    for known, other, flip in ((a, b, False), (b, a, True)):
        drawn = other.groups and not any(not c.seeded for c in other.matched)
        if (other.groups and not drawn) or not known.groups:
            continue
        ck = known.best
        near = other.best if drawn else (other.nearest or [None])[0]
        guess = (
            frozenset() if near is None else differing(factors(ck, in_fmt), factors(near, in_fmt))
        )
        if drawn:  # a fixed order nothing tried, not a random draw (pass 21: a 3-lane sum,
            guess = frozenset({"order"})  # matched by seeded orders alone: only nondeterminism)
        guess |= {"input_rounding"} if other.rounded_reads else set()  # (a sum: none tried)
        bits = costs[ck] + UNKNOWN_BITS + other.chance_bits
        add(guess, bits, *((near, ck) if flip else (ck, near)), False)
    if not a.groups and not b.groups:
        bits = 2 * UNKNOWN_BITS + a.chance_bits + b.chance_bits
        near_a, near_b = (a.nearest or [None])[0], (b.nearest or [None])[0]
        guess = frozenset()
        if near_a is not None and near_b is not None:
            guess = differing(factors(near_a, in_fmt), factors(near_b, in_fmt))
        guess |= {"input_rounding"} if a.rounded_reads or b.rounded_reads else set()
        add(guess, bits, near_a, near_b, False)


#: the compensated orders: on rounded products, the value a wider accumulator of them gives
COMPENSATED = ("kahan", "neumaier")


def _accumulated_alike(op: str, ga, gb, in_fmt: str, costs) -> dict:
    """Where one group of a dot or matmul is a compensated order's on the data's rounded
    products, the computation that gives its value without being tried: those products
    added in a float64 accumulator, rounded once (a C loop ``double acc += a[i] * b[i]``
    over floats), described as an accumulator change from the other group's cheapest (pass
    21: 117 of 132 such float32 matmuls were decided 'order: neumaier'). A guess, weighed
    beside the order it competes with: it decides nothing."""
    if not reduction(op).products or in_fmt == "float64":
        return {}
    out = {}
    for (mine, _), (theirs, _), flip in ((ga, gb, False), (gb, ga, True)):
        comp = next((c for c in mine if _plain(c) and c.spec.name in COMPENSATED), None)
        other = theirs[0] if theirs else None
        if comp is None or other is None or factors(other, in_fmt)["accumulator"] != in_fmt:
            continue
        fc = factors(comp, in_fmt)
        diff = (differing(fc, factors(other, in_fmt)) - {"order"}) | {"accumulator"}
        bits = costs[other] + sum(  # (each factor changed from the other's, as _pair_bits)
            CHANGE[f] + factor_bits(op, f, "float64" if f == "accumulator" else fc[f], in_fmt)
            for f in diff
        )
        pair = (other, comp) if flip else (comp, other)
        if diff not in out or bits < out[diff][0]:
            out[diff] = (bits, *pair)
    return out


def _plain(c: Config) -> bool:
    """The data's accumulator and inputs, no fma, no cast, not seeded."""
    sp = c.spec
    return not (sp.accumulate or sp.input_rounding or sp.fma or c.cast or c.seeded or c.call)


def _plus(x: float, y: float) -> float:
    """The bits of the sum of two weights given in bits (2^-x + 2^-y), without underflow."""
    lo, hi = min(x, y), max(x, y)
    return lo if hi == math.inf else lo - math.log2(1 + 2.0 ** (lo - hi))


def _ranked(weights: dict, positive: bool, runs: bool = False) -> Scores:
    """The causes best first, each with its posterior (its hypotheses' summed weight over
    all). A factor is decided when the hypotheses naming it on exact matches reach
    ``DECIDED`` together (nondeterminism: with positive evidence too); the top cause is then
    the likeliest that names every decided factor."""
    total = math.inf
    for w in weights.values():
        total = _plus(total, w[0])
    causes = [
        Cause(diff, 2.0 ** (total - w[0]), w[1], w[2], w[3], exact)
        for (diff, exact), w in weights.items()
    ]
    causes.sort(key=lambda c: (-c.posterior, c.bits))
    marginal: dict = {}
    for c in causes:
        for f in c.factors if c.exact else ():
            if f == "order" and "nondeterminism" in c.factors:
                continue  # a seeded (run-to-run) order is a random one: no order setting
            marginal[f] = marginal.get(f, 0.0) + c.posterior
    decided = {f for f, p in marginal.items() if p >= DECIDED}
    if not positive:
        decided.discard("nondeterminism")
    if runs:  # three or more results that all differ: a fixed cause needs each beyond chance
        decided &= {"nondeterminism"}
    out = Scores(causes, bool(decided), positive, marginal, frozenset(decided))
    if decided:  # the likeliest hypothesis naming them all leads
        top = next(c for c in causes if c.exact and decided <= c.factors)
        out.causes = [top] + [c for c in causes if c is not top]
    return out
