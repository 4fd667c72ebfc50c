"""Explain my discrepancy: ``fpx.explain(op, inputs, results)`` says why two (or more) results
of one computation differ, which is closer to the exact answer, and whether that is expected,
or says that the evidence cannot tell.

The inference is :mod:`fpexplore.inference`: every configuration that reproduces each result
bit for bit (grouped by what it computes), the causes weighed over every hypothesis, each
result measured against the exact answer. This module turns its answer into a table, the
ranked causes (``decided`` or not) and a verdict in words. docs/explain.md says how.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

from . import checks, presentation
from ._optional import require
from .bits import to_bits
from .budget import difference_budget
from .formats import (
    FORMATS,
    as_format,
    format_info,
    holding,
    native,
    quiet_nans,
    refuse_masked,
    ulp_distance,
)
from .inference import measure
from .inference.evidence import search, with_fact
from .inference.probe import probe
from .inference.scoring import DECIDED, RUN_TO_RUN, score
from .inference.space import Config, order_op, reduction, reference
from .inference.texts import evidence_text, examples
from .metrics import summarize
from .numerics import clamp_ulps
from .ops.registry import get as get_op
from .orders.products import matmul64
from .results import Comparison, Explanation

if TYPE_CHECKING:
    from collections.abc import Callable

    from numpy.typing import ArrayLike

__all__ = ["CAUSES", "EXPLAINED_OPS", "Explanation", "explain"]

EXPLAINED_OPS = ("sum", "dot", "matmul", "mean")
#: the causes, a fixed vocabulary (docs/explain.md says what each means)
CAUSES = (
    "order",
    "accumulator",
    "cast",
    "input_rounding",
    "fma",
    "tensor_core",
    "nondeterminism",
    "overflow",
)
# the budget's factors, tensor cores first (switching to them brings their input rounding)
_FACTORS = ("tensor_core", "input_rounding", "accumulate", "order", "fma")
_NAMES = {"accumulate": "accumulator"}
_MAX_UNDECIDED = 3  # competing causes listed when the evidence cannot tell
_COLUMNS = ["factor", "share", "decided", "posterior", "evidence"]


# ----------------------------------------------------------------------------- inputs


def _arrays(op: str, inputs) -> tuple[tuple, str]:
    """The op's input arrays in order, and their format (the checks of compare(inputs=))."""
    if hasattr(inputs, "inputs") and hasattr(inputs, "op"):  # a Comparison
        inputs = inputs.inputs
    given, fmt, _ = get_op(op).user_inputs(inputs, what="fpx.explain")
    if fmt not in FORMATS:  # FP8, FP6, FP4 data (ml_dtypes): compare shows them, explain not
        raise TypeError(
            f"fpx.explain: inputs are {fmt} data: explain weighs the orders of "
            f"{', '.join(FORMATS)} data; fpx.compare({op!r}, inputs=...) shows what each order "
            "gives on them"
        )
    arrays = tuple(np.asarray(v) for k, v in given.items() if k != "format")
    if reduction(op).divides and arrays[0].size == 0:  # (pass 16: a ZeroDivisionError)
        raise ValueError(f"fpx.explain: inputs: the {op} of 0 values is undefined (NaN)")
    if not reduction(op).products:
        return (np.ravel(arrays[0]),), fmt
    reduction(op).check_shapes(op, arrays)
    return arrays, fmt


def _observed(results, shape) -> dict:
    if not isinstance(results, dict):
        raise TypeError(f"results must be a dict label -> result, got {type(results).__name__}")
    if len(results) < 2:
        raise ValueError(f"explain compares two or more results, got {len(results)}")
    out = {}
    for label, r in results.items():
        if str(label) in out:  # 1 and "1": one name in the table, one result lost
            raise ValueError(
                f"results has two labels that read {str(label)!r} ({checks.shown(label)} and "
                "another): give each result its own name"
            )
        refuse_masked(r, f"fpx.explain: result {checks.shown(label)}")
        arr = native(np.asarray(r))  # a Python float is a float64
        if arr.dtype.name not in FORMATS:
            raise TypeError(
                f"result {checks.shown(label)} is {checks.shown(r)} ({arr.dtype}): give it in "
                f"one of {', '.join(FORMATS)} (a Python float is a float64)"
            )
        if arr.shape != shape:
            raise ValueError(
                f"result {checks.shown(label)} has shape {arr.shape}; the op gives {shape}"
            )
        out[str(label)] = quiet_nans(arr, format_info(arr.dtype))  # a signalling NaN: NaN
    return out


# ----------------------------------------------------------------------------- explain


def explain(
    op: str,
    inputs: ArrayLike | tuple | dict | Comparison,
    results: dict,
    *,
    fn: Callable | dict | None = None,
) -> Explanation:
    """Why do these results of one computation differ, which is closer, and is it expected?

    Parameters
    ----------
    op : "sum", "dot", "matmul" or "mean"
    inputs : the op's input arrays as :func:`fpexplore.compare`'s ``inputs=`` takes them (sum
        and mean: an array or ``{"x": x}``; dot: ``(a, b)``; matmul: ``(A, B)``), one format
    results : a dict label -> observed result (a scalar, or an (m, n) array for matmul), two
        or more; each in any format (a float16 sum of float64 data, a float32 tensor-core
        product of float16 matrices; a Python float is a float64)
    fn : callable, or a dict label -> callable, optional
        The function that produced one of the results (sum and mean: ``fn(x)``, dot:
        ``fn(a, b)``, matmul: ``fn(A, B)``). explain checks which result ``fn(*inputs)``
        gives, calls it twice (two results: run-to-run nondeterminism, decided), then probes
        it on inputs of its own: its order, fused products, accumulator and input rounding
        become facts (where nothing tried computes it, its tree is revealed:
        :func:`fpexplore.reveal`, or beyond 4096 terms its block size measured). A dict
        gives the function of each result it names (``{"cpu": np.sum, "gpu": gpu_sum}``):
        every one is probed, so the cause is a fact where the one function alone leaves the
        other result two explanations.

    Returns
    -------
    Explanation
        ``table`` (index: the labels; ``format``, ``rel_error`` (normwise: ||R - X|| / ||X||, the
        measure ``closer`` uses), ``closer`` (the results nearest the exact answer; all of them
        where they tie), ``within_bound`` (inside the worst-case bound of the configuration that
        reproduces it, else of any evaluation), ``reproduced_by``, ``cast``, ``max_abs_ulp`` and
        ``mean_abs_ulp`` against the correctly rounded result in the result's format (a matrix: the
        elements whose exact value does not cancel to near zero; those apart in
        ``max_abs_ulp_cancelled``)), ``causes`` (a DataFrame, the most likely first: ``factor`` from
        :data:`CAUSES`, ``share`` of the difference, ``decided``, ``posterior``, ``evidence``; empty
        for bitwise identical results and for a result no rounding explains), ``ambiguous``,
        ``verdict`` (sentences), ``plot()``, ``diff()``.
    """
    require("pandas", "fpx.explain")
    checks.choice("op", op, EXPLAINED_OPS)
    arrays, in_fmt = _arrays(op, inputs)
    shape = (arrays[0].shape[0], arrays[1].shape[1]) if reduction(op).matrix else ()
    observed = _observed(results, shape)
    return _Explaining(op, arrays, in_fmt, observed).explained(_functions(fn, observed))


def _functions(fn, observed: dict) -> list:
    """``fn=`` as (label or None, function) pairs (None: whichever result it gives)."""
    if fn is None:
        return []
    if callable(fn):
        return [(None, fn)]
    if not isinstance(fn, dict) or not fn:
        raise TypeError(f"fn must be callable, or a dict label -> callable, got {checks.shown(fn)}")
    out = []
    for label, f in fn.items():
        if str(label) not in observed:
            shown = ", ".join(map(repr, observed))
            raise ValueError(f"fn names the result {label!r}; the results are {shown}")
        if not callable(f):
            raise TypeError(f"fn[{label!r}] must be callable, got {checks.shown(f)}")
        out.append((str(label), f))
    return out


class _Explaining:
    """One call of explain: the measures first, then the evidence, then the words."""

    def __init__(self, op: str, arrays: tuple, in_fmt: str, observed: dict):
        self.op, self.arrays, self.in_fmt, self.observed = op, arrays, in_fmt, observed
        # a matmul element's error needs no correctly rounded float64 value
        wide = not reduction(op).matrix
        self.exact64 = reference(op, arrays, "float64") if wide else matmul64(*arrays)
        refs = {
            f: reference(op, arrays, f, self.exact64 if wide else None)
            for f in {o.dtype.name for o in observed.values()}
        }
        self.refs = {k: refs[o.dtype.name] for k, o in observed.items()}
        self.devs = {k: measure.deviation(op, arrays, o, self.exact64) for k, o in observed.items()}
        self.errors = measure.errors(self.devs, self.exact64)
        self.closer = measure.closer(op, arrays, observed, self.devs, self.errors, self.refs)
        self.S = measure.magnitude(op, arrays)

    def explained(self, fns: list) -> Explanation:
        near = next(k for k in self.observed if k in self.closer)
        d = {k: bool(np.any(_ne(self.observed[near], v))) for k, v in self.observed.items()}
        far = max((k for k in d if k != near), key=lambda k: (d[k], self.errors[k]))  # differing
        self.pair = (near, far)
        if (same := _no_difference(self)) is not None:  # (fn= has nothing to decide: pass 32)
            unused = " fn= was not called: the results are one value." if fns else ""
            return self._done({}, [], same[0] + unused, *same[1:])
        evidence = search(self.op, self.arrays, self.observed, self.in_fmt)
        probed = []
        for label, fn in fns:
            p = probe(fn, self.op, self.arrays, self.observed, evidence, self.in_fmt, label)
            probed.append(p)
            if p.configs:
                evidence[p.label] = with_fact(evidence[p.label], p.configs, self.op, self.in_fmt)
        scores = score(self.op, evidence, self.pair, self.in_fmt, **_runs(self, probed))
        self.evidence, self.scores, self.probed = evidence, scores, probed
        beyond = self._beyond()
        rows = self._overflow(beyond) + (copied := _copy_rows(self, beyond))
        if beyond:
            return self._done(evidence, rows, _bug_verdict(self, beyond), bool(copied), beyond)
        if signed := measure.signed_zeros(self.observed, evidence):  # no order decides them
            return self._done(evidence, [], presentation.signed_zero_verdict(signed), True)
        rows += self._cause_rows()
        ambiguous = any(not r["decided"] for r in rows)
        return self._done(evidence, rows, None, ambiguous)

    # ------------------------------------------------------------------------- the table

    def _done(self, evidence, rows, verdict, ambiguous, beyond=None) -> Explanation:
        pd = require("pandas", "fpx.explain")
        table = pd.DataFrame(
            [self._row(k, evidence.get(k), beyond or {}) for k in self.observed]
        ).set_index("result")
        causes = pd.DataFrame(rows, columns=_COLUMNS)
        if verdict is None:
            verdict = _verdict(self, table, causes)
        hyps = _hypotheses(self, pd) if evidence else pd.DataFrame()
        reproduced = {k: [str(c) for c in ev.matched] for k, ev in evidence.items()}
        return Explanation(
            self.op,
            self.in_fmt,
            table,
            causes,
            verdict,
            self.observed,
            self.refs,
            reproduced or {k: [] for k in self.observed},
            self.pair,
            ambiguous,
            hyps,
        )

    def _chosen(self, label: str, ev):
        """The configuration a result's row names: the one the top cause rests on, else the
        cheapest that reproduces it (None: nothing does)."""
        if ev is None or not ev.groups:
            return None
        top = self.scores.causes[0] if self.scores.causes else None
        if top is not None and top.factors == RUN_TO_RUN:
            seeded = [c for c in ev.matched if c.seeded]
            return seeded[0] if seeded else ev.best
        if top is not None and top.exact and label in self.pair:
            cfg = top.a if label == self.pair[0] else top.b
            return cfg if cfg is not None else ev.best
        return ev.best

    def _row(self, label: str, ev, beyond: dict) -> dict:
        obs, ref = self.observed[label], self.refs[label]
        cfg = self._chosen(label, ev)
        if cfg is not None:
            b = measure.bound(self.op, self.arrays, cfg, obs.dtype.name, ref, self.S)
            dev = np.abs(self.devs[label])
            within = bool(np.all((dev <= b) | (dev == 0)))  # (an inf or NaN bound: exact only)
        else:
            within = label not in beyond and not _blown(self, label).any()
        cancelled = np.abs(np.asarray(self.exact64, np.float64)) < measure.CANCELLED * self.S
        keep = ~cancelled if obs.ndim else np.ones((), bool)
        s = summarize(obs[keep] if obs.ndim else obs, ref[keep] if obs.ndim else ref)
        apart = summarize(obs[cancelled], ref[cancelled]) if obs.ndim and cancelled.any() else None
        return {
            "result": label,
            "format": obs.dtype.name,
            "rel_error": measure.relative(self.errors, self.exact64)[label],
            "closer": label in self.closer,
            "within_bound": within,
            "reproduced_by": str(cfg) if cfg is not None else None,
            "cast": cfg.where if cfg is not None else None,
            "max_abs_ulp": s["max_abs_ulp"] if s["n"] else 0.0,
            "mean_abs_ulp": s["mean_abs_ulp"] if s["n"] else 0.0,
            "max_abs_ulp_cancelled": apart["max_abs_ulp"] if apart else float("nan"),
        }

    # ------------------------------------------------------------------------- causes

    def _overflow(self, beyond: dict) -> list:
        """An overflow row: a result infinite (or NaN) where the exact result is finite (and
        some partial result may overflow: not one of the results ``beyond`` rounding)."""
        blown = {k: _blown(self, k) for k in self.observed if k not in beyond}
        over = [k for k, v in blown.items() if np.any(v)]
        if not over:
            return []
        near, far = self.pair
        differ = max(int(np.sum(_ne(self.observed[near], self.observed[far]))), 1)
        k = over[0]
        ev = self.evidence.get(k)
        acc = None
        if ev is not None and ev.groups:
            acc = ev.best.spec.accumulate or self.in_fmt
        info = format_info(acc or self.observed[k].dtype.name)
        cnt = int(np.sum(blown[k]))
        what = "NaN" if np.isnan(self.observed[k].astype(np.float64)[blown[k]]).all() else "inf"
        return [
            {
                "factor": "overflow",
                "share": min(1.0, cnt / differ),
                "decided": True,
                "posterior": 1.0,
                "evidence": f"{k} is {what} in {cnt} element(s) where the exact result is "
                f"finite: a partial result exceeded {info.name}'s largest value "
                f"({float(info.max):.6g})",
            }
        ]

    def _beyond(self) -> dict:
        """label -> the elements no rounding explains, for results nothing reproduces."""
        roundings = measure.bound_roundings(self.op, self.in_fmt, self.observed)
        out = {}
        for k, ev in self.evidence.items():
            wrong = _not_special(self, k)
            if wrong.any():  # the exact result is inf or NaN, and this one is not that
                out[k] = np.argwhere(np.atleast_1d(wrong))
                continue
            fmts = {self.in_fmt} | {o.dtype.name for o in self.observed.values()}
            blown = _blown(self, k)
            never = blown & ~measure.overflow_reach(self.op, self.arrays, self.observed[k], fmts)
            if ev.groups or (blown.any() and not never.any()):
                continue
            if never.any():  # inf or NaN where no partial result can overflow to it
                out[k] = np.argwhere(np.atleast_1d(never))
                continue
            far = measure.beyond_rounding(self.op, self.arrays, self.observed[k], roundings)
            if np.any(far):
                out[k] = np.argwhere(np.atleast_1d(far))
        return out

    def _cause_rows(self) -> list:
        """The causes of the difference between the pair: the decided one's factors, or the
        competing ones (at most three), each with its share from the difference budget."""
        sc = self.scores
        if not sc.causes:
            return []
        if sc.decided:  # the decided factors only (what else changed is not told apart)
            rows = self._factor_rows(sc.causes[0], True)
            return [r for r in rows if r["factor"] in sc.factors]
        rows, seen = [], set()
        for c in sc.causes:
            if c.posterior < 0.02 and rows and seen != {"nondeterminism"}:
                break  # (nondeterminism alone, which two results never decide: the next one
            for row in self._factor_rows(c, False):  # too, a fixed order; pass 22)
                if row["factor"] not in seen and len(rows) < _MAX_UNDECIDED:
                    seen.add(row["factor"])
                    rows.append(row)
        return rows

    def _factor_rows(self, cause, decided: bool) -> list:
        a, b = self.pair
        if not cause.factors:  # an unknown configuration
            return [
                {
                    "factor": "order",
                    "share": float("nan"),
                    "decided": False,
                    "posterior": cause.posterior,
                    "evidence": self._unknown_evidence(),
                }
            ]
        if cause.factors == RUN_TO_RUN and cause.a is None:
            return [self._run_to_run_row(cause, decided)]
        single = len(cause.factors) == 1  # the whole difference: no budget to run
        shares = {} if single else _shares(self.op, self.arrays, cause.a, cause.b, self.in_fmt)
        fs = sorted(cause.factors, key=lambda f: (-shares.get(f, 0.0), _PRIORITY[f]))
        rows = []
        for f in fs:
            share = shares.get(f, 0.0 if shares else 1.0 / len(fs))
            rows.append(
                {
                    "factor": f,
                    "share": share,
                    "decided": decided,
                    "posterior": self.scores.marginal.get(f, cause.posterior)
                    if decided
                    else cause.posterior,
                    "evidence": evidence_text(f, cause, a, b, self.in_fmt, self.evidence)
                    + (examples(self.pair, self.evidence) if f == "order" and cause.exact else ""),
                }
            )
        return rows

    def _run_to_run_row(self, cause, decided: bool) -> dict:
        unfixed = _unfixed(self.evidence)
        text = (
            "fn gave two different results on the same inputs: the same code gives another "
            "result on each run"
            if any(p.runs_differ for p in self.probed)
            else _results_differ(self.observed)
            + (
                ": draws of a run-to-run (atomic, scheduling-dependent) order give them, as "
                "fixed orders do"
                if not unfixed
                else f" and no fixed configuration reproduces {_them(unfixed, self.evidence)}"
                ": a run-to-run (atomic, scheduling-dependent) order"
            )
        )
        row = {"factor": "nondeterminism", "share": 1.0, "decided": decided}
        return {**row, "posterior": cause.posterior, "evidence": text}

    def _unknown_evidence(self) -> str:
        missing = [k for k in self.pair if not self.evidence[k].groups]
        if not missing:
            return "another configuration than those tried"
        parts = []
        for k in missing:
            ev = self.evidence[k]
            near = f" (nearest: {ev.nearest[0]}, {ev.ulps:g} ulps away)" if ev.nearest else ""
            parts.append(f"{k}{near}")
        return (
            f"no configuration tried reproduces {' or '.join(parts)} bit for bit: another "
            "evaluation order (a library's own loop) is the most common cause"
        )


# ----------------------------------------------------------------------------- verdicts


def _hypotheses(ex, pd):
    """The competing hypotheses weighed, best first (at most ten; none where only the sign of
    a zero sets the results apart: no hypothesis tried explains it)."""
    if measure.signed_zeros(ex.observed, ex.evidence):
        return pd.DataFrame()
    a, b = ex.pair
    rows = [
        {
            "cause": " + ".join(sorted(c.factors)) or "unknown",
            "posterior": c.posterior,
            "bits": c.bits,
            a: None if c.a is None else str(c.a),
            b: None if c.b is None else str(c.b),
            "exact_match": c.exact,
        }
        for c in ex.scores.causes[:10]
    ]
    return pd.DataFrame(rows)


def _runs(ex, probed: list) -> dict:
    """score's keywords of the runs: ``runs_differ`` (whether a function probed gave two
    results: None where none was given, False too where the results are too far apart for
    one code's orders), ``steady`` (the labels of the results whose function gave the same
    twice) and ``repeated`` (two results are one value, bit for bit)."""
    runs = any(p.runs_differ for p in probed) if probed else None
    if not runs and measure.beyond_one_code(ex.op, ex.arrays, ex.observed, ex.in_fmt):
        runs = False  # too far apart for one code's orders: no run-to-run nondeterminism
    steady = {p.label for p in probed if not p.runs_differ}
    return {
        "runs_differ": runs,
        "steady": steady,
        "repeated": _values(ex.observed) < len(ex.observed),
    }


def _not_special(ex, label: str) -> np.ndarray:
    """The elements where the exact result is inf or NaN (inputs holding inf or NaN) and
    the result is not the same (NaN: any NaN): no rounding turns inf + 1 into 1."""
    x = np.asarray(ex.exact64, dtype=np.float64)
    with np.errstate(all="ignore"):
        r = ex.observed[label].astype(np.float64)
        return ~np.isfinite(x) & ~((r == x) | (np.isnan(r) & np.isnan(x)))


def _blown(ex, label: str) -> np.ndarray:
    """The elements of a result that are inf or NaN where the exact result is finite and
    not the value it rounds to (an inf of its sign beyond the format's largest value)."""
    finite = np.isfinite(np.asarray(ex.exact64, dtype=np.float64)) & ~_rounded_to(ex, label)
    with np.errstate(all="ignore"):
        return ~np.isfinite(ex.observed[label].astype(np.float64)) & finite


def _rounded_to(ex, label: str) -> np.ndarray:
    """The elements of a result equal to the exact result rounded to its format."""
    return np.asarray(ex.observed[label] == ex.refs[label])


def _values(observed: dict) -> int:
    """How many values the results are, bit for bit."""
    return len({(o.dtype, o.tobytes()) for o in observed.values()})


def _results_differ(observed: dict) -> str:
    """ "3 results of the same inputs all differ", or how many values they are (pass 27:
    said of three results two of which were one value)."""
    values = _values(observed)
    if values == len(observed):
        return f"{len(observed)} results of the same inputs all differ"
    return f"{len(observed)} results of the same inputs are {values} values"


def _copy_read(ex, beyond: dict) -> tuple | None:
    """(label, rounding, order) of the first result beyond rounding that an order gives bit
    for bit on the inputs rounded to a narrower storage format, else None: a cast of the
    inputs fits it as well as a bug (pass 26: float64 data summed from a float32 copy was "a
    likely bug" alone; pass 27: a dropped element equal by chance to a float16 copy's sum,
    of integer data, 45 of 45 such, was "within rounding")."""
    evidence = getattr(ex, "evidence", {})  # (none where the results do not differ)
    for k in beyond:
        for rounding, order in evidence[k].rounded_reads if k in evidence else ():
            if order is not None:
                return k, rounding, order
    return None


def _copy_rows(ex, beyond: dict) -> list:
    """The undecided input-rounding row of :func:`_copy_read`'s result, if any."""
    if (read := _copy_read(ex, beyond)) is None:
        return []
    k, rounding, order = read
    said = (
        f"{k} is what the order {order} gives on the inputs read as {rounding}, bit for bit: "
        "a cast of the inputs fits as well as a bug"
    )
    return [
        {"factor": "input_rounding", "share": float("nan"), "decided": False,
         "posterior": float("nan"), "evidence": said}
    ]  # fmt: skip


def _bug_verdict(ex, beyond: dict) -> str:
    parts = []
    for k, idx in beyond.items():
        first = tuple(int(i) for i in idx[0]) if idx.size else ()
        obs = ex.observed[k]
        v = obs[first] if obs.ndim else obs
        x = float(np.asarray(ex.exact64)[first] if obs.ndim else ex.exact64)
        where = f"element {first}: " if obs.ndim else ""
        parts.append(
            f"{k} in {len(idx)} element(s) ({where}{float(v):.9g} where the exact value is {x:.9g})"
        )
    read = _copy_read(ex, beyond)
    cast = (
        f" Yet {read[0]} is what the order {read[2]} gives on the inputs read as {read[1]}, "
        f"bit for bit: the code may read its inputs rounded (a cast, such as "
        f"x.astype(np.{read[1]})). The evidence cannot tell that cast from a bug."
        if read
        else ""
    )
    return (
        "Not explained by rounding: a likely bug"
        + (", or inputs read rounded" if read else "")
        + ". No configuration reproduces "
        + " or ".join(parts)
        + ", and it lies outside the worst-case error bound of every evaluation order, "
        "accumulator (the data's format or a wider one: a narrower one, such as an FP8 "
        "accumulator, is not tried) and input rounding (to tf32 or bfloat16, or to a "
        "result's format)." + cast
    )


def _verdict(ex, table, causes) -> str:
    over = len(causes) and causes.iloc[0]["factor"] == "overflow"
    if over:
        first = "The difference is not expected of rounding alone: a result overflowed."
    elif table["within_bound"].all():
        alone = [str(k) for k, r in table.iterrows() if not isinstance(r["reproduced_by"], str)]
        first = (
            "The difference is expected: every result is within the worst-case error "
            "bound of the configuration that reproduces it."
            if not alone
            else "The difference is within rounding: every result is within the worst-case "
            f"error bound of an evaluation, though no configuration tried reproduces "
            f"{' or '.join(alone)}."
        )
    else:
        out = ", ".join(k for k, r in table.iterrows() if not r["within_bound"])
        first = f"The difference is larger than expected: {out} exceeds its worst-case bound."
    return f"{first} {_closer_sentence(ex, table)} {_cause_sentence(ex, causes)}".strip()


def _closer_sentence(ex, table) -> str:
    near, far = ex.pair
    what = "normwise relative error" if reduction(ex.op).matrix else "relative error"
    if measure.exact_is_zero(ex.exact64):  # (no relative error: all but exact ones are inf)
        what = "absolute error, the exact answer being 0,"
    close = [k for k in table.index if table.loc[k, "closer"]]
    if len(close) == len(table):
        return (
            f"The results are equally close to the exact answer ({what} "
            f"{ex.errors[near]:.3g}): they tie."
        )
    if len(close) > 1:
        return (
            f"{' and '.join(close)} tie as the closest to the exact answer ({what} "
            f"{ex.errors[near]:.3g} against {ex.errors[far]:.3g} for {far})."
        )
    return (
        f"{near} is closer to the exact answer ({what} {ex.errors[near]:.3g} against "
        f"{ex.errors[far]:.3g} for {far})."
    )


def _cause_sentence(ex, causes) -> str:
    rest = causes[causes["factor"] != "overflow"] if len(causes) else causes
    if not len(rest):
        return ""
    main = rest.iloc[0]
    if bool(main["decided"]):
        return f"The main cause is {main['factor'].replace('_', ' ')}: {main['evidence']}."
    names = " or ".join(dict.fromkeys(f.replace("_", " ") for f in rest["factor"]))
    listed = [c for c in ex.scores.causes if c.posterior >= 0.02]
    if listed and not any(c.exact and c.factors for c in listed):  # guesses only
        unmatched = [k for k, ev in ex.evidence.items() if not ev.groups]
        return (
            f"Cannot tell the cause: no configuration tried reproduces "
            f"{' or '.join(unmatched)}; the nearest ones differ in {names}, a guess rather "
            f"than evidence (an order, block size or setting not tried here; or a bug "
            f"smaller than the rounding error, which fits as well). "
            f"{_what_decides(ex)}"
        )
    p = float(main["posterior"])
    if p < DECIDED:
        why = f"the likeliest at {_percent(p)}, {DECIDED:.0%} decides"
    elif ex.scores.by_chance:  # (the tensor cores: an order and settings of their own)
        rest = [f.replace("_", " ") for f in ex.scores.causes[0].factors - {"order", "tensor_core"}]
        alone = " and ".join(rest) + " alone, under one order nothing tried," if rest else ""
        why = f"the likeliest at {p:.0%}, but its orders may match by chance: "
        if ex.scores.causes[0].factors == {"order"}:  # neither result reproduced beyond chance
            why += "a change other than the order (a bug smaller than the rounding error) "
            why += "may give one of the values"
        else:
            why += f"{alone or 'an order nothing tried'} may explain the difference"
    elif main["factor"] == "nondeterminism":
        why = f"the likeliest at {p:.0%}, but only two differing runs of one computation decide it"
    else:
        why = f"the likeliest at {p:.0%}, but on results reproduced only nearly, not exactly"
    fit = "fits" if " or " not in names else "fit"
    return f"Cannot tell the cause: {names} {fit} the evidence ({why}). {_what_decides(ex)}"


def _percent(p: float) -> str:
    """A posterior below :data:`DECIDED` as a percentage that reads below it (89.8%, where
    whole percents would say 90%)."""
    return f"{p:.0%}" if round(p, 2) < DECIDED else f"{math.floor(p * 1000) / 10:g}%"


def _what_decides(ex) -> str:
    tips = []
    if not ex.probed:
        tips.append("give fn= (the function that made one result) to probe it")
    else:
        left = [k for k in ex.pair if k not in {p.label for p in ex.probed}]
        if left:
            tips.append(f"give fn={{{left[0]!r}: the function that made it}} too")
    if reduction(ex.op).matrix:
        tips.append("larger matrices")
    else:
        tips.append("a larger size, or several inputs of the same code (fpx.match_orders)")
    return "What would decide it: " + "; or ".join(tips) + "."


_PRIORITY = {
    f: i
    for i, f in enumerate(
        (
            "overflow",
            "nondeterminism",
            "cast",
            "tensor_core",
            "input_rounding",
            "accumulator",
            "fma",
            "order",
        )
    )
}


def _identical(observed: dict) -> bool:
    """The same values: bitwise, but for the sign or payload of NaN (-0.0 is not +0.0)."""
    vals = list(observed.values())

    def same(v, w) -> bool:
        both_nan = np.isnan(v.astype(np.float64)) & np.isnan(w.astype(np.float64))
        return bool(np.all(both_nan | (to_bits(v) == to_bits(w))))

    return all(v.dtype == vals[0].dtype and same(v, vals[0]) for v in vals)


def _no_difference(ex) -> tuple | None:
    """(verdict, ambiguous, beyond) where the results are one (bitwise, or the same values in
    different formats: float32's value held in float64 is a widening), else None; where no
    rounding explains that value, the bug verdict follows (and within_bound is False)."""
    e = next(iter(ex.errors.values()))
    if _identical(ex.observed):
        first = next(iter(ex.observed.values()))
        nan_bits = any(v.tobytes() != first.tobytes() for v in ex.observed.values())
        text = presentation.identical_verdict(e, nan_bits)
    elif _same_values(ex.observed):
        text = presentation.widened_verdict({k: v.dtype.name for k, v in ex.observed.items()}, e)
    else:
        return None
    roundings = measure.bound_roundings(ex.op, ex.in_fmt, ex.observed)
    beyond = {}
    for k, obs in ex.observed.items():
        far = np.atleast_1d(
            _not_special(ex, k) | measure.beyond_rounding(ex.op, ex.arrays, obs, roundings)
        )
        if far.any():
            beyond[k] = np.argwhere(far)
    return (f"{text} {_bug_verdict(ex, beyond)}" if beyond else text), False, beyond


def _them(labels: list, evidence: dict) -> str:
    return "them" if len(labels) == len(evidence) else " or ".join(labels)


def _unfixed(evidence: dict) -> list:
    """The results no configuration with no seed reproduces (pass 14: the run-to-run row said
    none did, beside the order row naming them; pass 21: 'them', where one was)."""
    return [k for k, ev in evidence.items() if not any(not c.seeded for c in ev.matched)]


def _same_values(observed: dict) -> bool:
    """The same values in different formats (a widening is exact): -0.0 is not +0.0."""
    vals = [v.astype(np.float64) for v in observed.values()]
    return all(
        v.shape == vals[0].shape
        and np.array_equal(v, vals[0], equal_nan=True)
        and np.array_equal(np.signbit(v) & ~np.isnan(v), np.signbit(vals[0]) & ~np.isnan(v))
        for v in vals
    )


def _ne(a, b):
    """Elementwise: the two results differ (NaN equals NaN)."""
    a, b = np.asarray(a), np.asarray(b)
    if a.dtype != b.dtype:
        a64, b64 = a.astype(np.float64), b.astype(np.float64)
        return ~((a64 == b64) | (np.isnan(a64) & np.isnan(b64)))
    return np.asarray(ulp_distance(a, b, nan="sentinel")) != 0


def _abs_ulps(a, b) -> float:
    """Sum over elements of |ulps| from a to b (in a format holding both; saturated: counted
    big)."""
    a, b = np.asarray(a), np.asarray(b)
    if a.dtype != b.dtype:
        wide = holding(a.dtype, b.dtype).name
        a, b = (np.asarray(as_format(v, wide)) for v in (a, b))
    u = clamp_ulps(ulp_distance(a, b, nan="sentinel"))
    u = np.where(np.isfinite(u), u, 1e18)  # NaN against a number, or saturated: very far
    return float(np.sum(u))


def _shares(op, arrays, ca: Config, cb: Config, in_fmt: str) -> dict:
    """factor -> share of the difference from the difference budget (same cast only)."""
    from .inference.space import factors

    if ca is None or cb is None:
        return {}
    if ca.where == "before":
        arrays = tuple(np.asarray(as_format(a, ca.cast_format)) for a in arrays)

    def cfgdict(c):
        sp, keys = c.spec, ("fma", "accumulate", "input_rounding")
        return {"order": sp.name, "params": dict(sp.params)} | {k: getattr(sp, k) for k in keys}

    try:
        bud = difference_budget(arrays, cfgdict(ca), cfgdict(cb), order_op(op), factors=_FACTORS)
    except (ValueError, NotImplementedError, TypeError):
        return {}
    prev, parts = bud.start, {}
    same_order = factors(ca, in_fmt)["order"] == factors(cb, in_fmt)["order"]
    for step, cur in bud.steps:
        name = _NAMES.get(step, step)
        if name == "order" and same_order:
            name = "nondeterminism"  # only the seed changed
        parts[name] = parts.get(name, 0.0) + _abs_ulps(prev, cur)
        prev = cur
    total = sum(parts.values())
    return {k: (v / total if total else 0.0) for k, v in parts.items()}
