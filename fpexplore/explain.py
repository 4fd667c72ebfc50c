"""Explain my discrepancy: ``fpx.explain(op, inputs, results)`` says why two (or more) results
of one computation differ, which is closer to the exact answer, and whether that is expected.

For each result it finds the configuration that reproduces it bit for bit (the detective's
candidates: every order with its parameters, fma, accumulators, input roundings, the tensor
cores, and seeded atomic orders; for a result in a narrower format than the inputs, the
inputs rounded to it first or the result rounded to it after), measures it against the
correctly rounded exact result in its own format and against the worst-case error bound of
that configuration (Higham's gamma bounds, :mod:`fpexplore.metrics`), and ranks the causes of
the difference between the nearest and the farthest result: the factors in which their
configurations differ, each with its share from the difference budget
(:mod:`fpexplore.budget`), after overflow, nondeterminism and the cast, which decide alone.
What each cause means and how it is found: docs/explain.md.
"""

from __future__ import annotations

import html
from dataclasses import dataclass, field

import numpy as np

from . import checks
from ._optional import require
from .budget import difference_budget
from .formats import as_format, format_info, ulp_distance
from .matching import Config, distance, reference, reproduce, run, simplicity
from .metrics import gamma, summarize
from .numerics import clamp_ulps
from .ops.registry import get as get_op
from .orders.registry import ORDERS_BY_OP
from .results import diff_values
from .spec import parse_spec

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


@dataclass(repr=False)
class Explanation:
    """What :func:`explain` found: ``table`` (one row per result), ``causes`` (ranked, best
    first), ``verdict`` (plain sentences), ``reproduced`` (label -> the reproducing
    configurations), ``reference`` (label -> the exact result in that result's format),
    ``plot()``; a short text and an HTML display."""

    op: str
    format: str
    table: object
    causes: object
    verdict: str
    results: dict
    reference: dict
    reproduced: dict = field(default_factory=dict)
    pair: tuple = ()

    def plot(self, ax=None):
        """Each result's error against the exact answer, and the causes' shares (a matplotlib
        Figure)."""
        from . import plots

        return plots.explain_plot(self, ax=ax)

    def diff(self, a=None, b=None, *, top: int = 10):
        """The :class:`~fpexplore.results.Diff` of two results (default: the nearest and
        the farthest from the exact answer)."""
        a = self.pair[0] if a is None else a
        b = self.pair[1] if b is None else b
        return diff_values(a, self.results[a], b, self.results[b], top=top)

    def __repr__(self) -> str:
        t = self.table
        lines = [f"Explanation: {self.op} of {self.format} inputs, {len(t)} results"]
        for label, r in t.iterrows():
            lines.append(
                f"  {label}: max {r['max_abs_ulp']:g} ulps, "
                f"{'closer, ' if r['closer'] else ''}"
                f"{'within' if r['within_bound'] else 'outside'} its bound, "
                f"reproduced by {r['reproduced_by']}"
            )
        if len(self.causes):
            lines.append(f"  cause: {self.causes.iloc[0]['factor']}")
        lines.append(self.verdict)
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        return (
            f"<p><b>{html.escape(self.verdict)}</b></p>"
            + self.table.to_html(border=0, classes="fpx-table")
            + "<p>Causes, the most likely first:</p>"
            + self.causes.to_html(index=False, border=0, classes="fpx-table")
        )


# ----------------------------------------------------------------------------- inputs


def _arrays(op: str, inputs) -> tuple[tuple, str]:
    """The op's input arrays in order, and their format (the checks of compare(inputs=))."""
    if hasattr(inputs, "inputs") and hasattr(inputs, "op"):  # a Comparison
        inputs = inputs.inputs
    given, fmt, _ = get_op(op).user_inputs(inputs, what="fpx.explain")
    names = ("x",) if op in ("sum", "mean") else ("a", "b") if op == "dot" else ("A", "B")
    arrays = tuple(given[k] for k in names)
    if op == "dot" and (arrays[0].ndim != 1 or arrays[0].shape != arrays[1].shape):
        raise ValueError(
            f"dot takes two 1-D arrays of equal length, got {arrays[0].shape} and {arrays[1].shape}"
        )
    if op == "matmul" and (arrays[0].ndim != 2 or arrays[0].shape[1] != arrays[1].shape[0]):
        raise ValueError(
            f"matmul takes (m, k) and (k, n) arrays, got {arrays[0].shape} and {arrays[1].shape}"
        )
    if op in ("sum", "mean"):
        arrays = (np.ravel(arrays[0]),)
    return arrays, fmt


def _observed(results, shape) -> dict:
    if not isinstance(results, dict):
        raise TypeError(f"results must be a dict label -> result, got {type(results).__name__}")
    if len(results) < 2:
        raise ValueError(f"explain compares two or more results, got {len(results)}")
    out = {}
    for label, r in results.items():
        if isinstance(r, np.ma.MaskedArray):
            raise TypeError(
                "fpx.explain: masked arrays are not supported (the masked values "
                "would be used); pass x.compressed() or x.filled(value)"
            )
        arr = np.asarray(r)
        format_info(arr.dtype)  # one of FORMATS (TypeError otherwise)
        if arr.shape != shape:
            raise ValueError(
                f"result {checks.shown(label)} has shape {arr.shape}; the op gives {shape}"
            )
        out[str(label)] = arr
    return out


# ----------------------------------------------------------------------------- factors


def _acc(cfg: Config, in_fmt: str) -> str:
    """The accumulator a configuration adds in."""
    fmt = cfg.cast.split(":")[1] if cfg.cast and cfg.cast.startswith("before") else in_fmt
    if cfg.spec.accumulate:
        return cfg.spec.accumulate
    spec = ORDERS_BY_OP["dot"].get(cfg.spec.name) or ORDERS_BY_OP["sum"][cfg.spec.name]
    return spec.float16_accumulate if fmt == "float16" and spec.float16_accumulate else fmt


def _factors(cfg: Config, in_fmt: str) -> dict:
    tc = cfg.spec.name == "tensor-core"
    return {
        "tensor_core": dict(cfg.spec.params).get("arch") if tc else None,
        "cast": cfg.cast.split(":")[0] if cfg.cast else None,
        "order": None if tc else (cfg.spec.name, cfg.seedless()),
        "nondeterminism": dict(cfg.spec.params).get("seed"),
        "accumulator": None if tc else _acc(cfg, in_fmt),
        "input_rounding": None if tc else cfg.spec.input_rounding,
        "fma": None if tc else cfg.spec.fma,
    }


def _differing(ca: Config, cb: Config, in_fmt: str) -> list[str]:
    fa, fb = _factors(ca, in_fmt), _factors(cb, in_fmt)
    diff = [k for k in fa if fa[k] != fb[k]]
    if "tensor_core" in diff:  # the tensor cores bring their own order, rounding, accumulator
        diff = [k for k in diff if k in ("tensor_core", "cast", "nondeterminism")]
    return diff


def _pair(op, ra, rb, in_fmt):
    """The two reproducing configurations that differ in the fewest factors."""
    la = ra[0] or [ra[1]]
    lb = rb[0] or [rb[1]]
    best = None
    for ca in la[:40]:
        for cb in lb[:40]:
            if ca is None or cb is None:
                continue
            diff = _differing(ca, cb, in_fmt)
            # equally few factors: the simplest settings, then the more specific factor (order
            # is the catch-all)
            specific = sorted(_PRIORITY.get(f, 9) for f in diff)
            simple = simplicity(op, ca, in_fmt) + simplicity(op, cb, in_fmt)
            key = (len(diff), simple, specific)
            if best is None or key < best[0]:
                best = (key, ca, cb)
    return (None, None) if best is None else best[1:]


def _evidence(factor: str, ca: Config, cb: Config, la: str, lb: str, in_fmt: str) -> str:
    fa, fb = _factors(ca, in_fmt), _factors(cb, in_fmt)
    if factor == "order":
        return f"{la} adds in the order {ca.spec.name}, {lb} in {cb.spec.name}"
    if factor == "accumulator":
        return f"{la} accumulates in {fa['accumulator']}, {lb} in {fb['accumulator']}"
    if factor == "input_rounding":
        return (
            f"{la} reads the inputs {_as_read(fa['input_rounding'])}, "
            f"{lb} {_as_read(fb['input_rounding'])}"
        )
    if factor == "fma":
        fused = la if fa["fma"] else lb
        return f"{fused} fuses each product into the addition (one rounding instead of two)"
    if factor == "tensor_core":
        tc, other = (la, lb) if fa["tensor_core"] else (lb, la)
        cfg = ca if fa["tensor_core"] else cb
        return (
            f"{tc} is reproduced by NVIDIA tensor cores ({cfg}: each block of products "
            f"aligned and added exactly, rounded once), {other} is not"
        )
    if factor == "cast":

        def how(cfg, label):
            fmt = cfg.cast.split(":")[1] if cfg.cast else in_fmt
            if fa["cast"] == fb["cast"] or not cfg.cast:
                return f"{label} sums in {in_fmt}"
            if cfg.cast.startswith("before"):
                return (
                    f"{label} rounds the {in_fmt} inputs to {fmt} first, then sums "
                    "(NumPy's np.sum(x, dtype=...))"
                )
            return f"{label} sums in {in_fmt} and rounds the sum to {fmt} (CuPy: cupy issue 9029)"

        return f"{how(ca, la)}; {how(cb, lb)}"
    if factor == "nondeterminism":
        return (
            "the results differ only in the seeded order of the block sums (atomicAdd "
            "lands in any order): the same code gives another result on every run"
        )
    return ""


def _as_read(rounding) -> str:
    return f"as {rounding}" if rounding else "as they are"


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


def _abs_ulps(a, b) -> float:
    """Sum over elements of |ulps| from a to b (in the wider format; saturated: counted big)."""
    a, b = np.asarray(a), np.asarray(b)
    if a.dtype != b.dtype:
        fa, fb = format_info(a.dtype), format_info(b.dtype)
        wide = fa if fa.precision >= fb.precision else fb
        a, b = (np.asarray(as_format(v, wide.name)) for v in (a, b))
    u = clamp_ulps(ulp_distance(a, b, nan="sentinel"))
    u = np.where(np.isfinite(u), u, 1e18)  # NaN against a number, or saturated: very far
    return float(np.sum(u))


def _shares(op, arrays, ca: Config, cb: Config, in_fmt: str) -> dict:
    """factor -> share of the difference from the difference budget (same cast only)."""
    order_op = "sum" if op == "mean" else op
    if ca.cast:
        if ca.cast.startswith("before"):
            fmt = ca.cast.split(":")[1]
            arrays = tuple(np.asarray(as_format(a, fmt)) for a in arrays)

    def cfgdict(c):
        return {
            "order": c.spec.name,
            "params": dict(c.spec.params),
            "fma": c.spec.fma,
            "accumulate": c.spec.accumulate,
            "input_rounding": c.spec.input_rounding,
        }

    try:
        bud = difference_budget(arrays, cfgdict(ca), cfgdict(cb), order_op, factors=_FACTORS)
    except (ValueError, NotImplementedError, TypeError):
        return {}
    prev, parts = bud.start, {}
    for step, cur in bud.steps:
        name = _NAMES.get(step, step)
        if name == "order" and _factors(ca, in_fmt)["order"] == _factors(cb, in_fmt)["order"]:
            name = "nondeterminism"  # only the seed changed
        parts[name] = parts.get(name, 0.0) + _abs_ulps(prev, cur)
        prev = cur
    total = sum(parts.values())
    return {k: (v / total if total else 0.0) for k, v in parts.items()}


# ----------------------------------------------------------------------------- bounds


def _bound(op, arrays, cfg: Config | None, out_fmt: str, ref):
    """The worst-case |result - exact| of ``cfg`` (None: the op's generic bound, a sequential
    evaluation in the result's format), elementwise; Higham's gamma_d S with S the sum of
    |terms|, plus each rounding of the inputs and of the result."""
    n = arrays[0].shape[1] if op == "matmul" else arrays[0].size
    with np.errstate(all="ignore"):
        if op in ("sum", "mean"):
            S = float(np.sum(np.abs(arrays[0].astype(np.float64))))
        elif op == "dot":
            S = float(np.sum(np.abs(arrays[0].astype(np.float64) * arrays[1].astype(np.float64))))
        else:
            S = np.abs(arrays[0].astype(np.float64)) @ np.abs(arrays[1].astype(np.float64))
    products = op in ("dot", "matmul")
    u_out = format_info(out_fmt).unit_roundoff
    in_fmt = arrays[0].dtype.name
    if cfg is None:  # generic: sequential, every term and the result in the result's format
        cast = 0 if format_info(out_fmt).precision >= format_info(in_fmt).precision else 1
        err = (gamma(n + products, out_fmt) + cast * 2 * u_out) * S
    elif cfg.spec.name == "tensor-core":
        u_r = format_info(cfg.spec.input_rounding or in_fmt).unit_roundoff
        u32 = format_info("float32").unit_roundoff
        err = (2 * (n + 32) * u32 + 2.01 * u_r * (cfg.spec.input_rounding is not None)) * S
    else:
        order_op = "sum" if op == "mean" else op
        spec = ORDERS_BY_OP[order_op][cfg.spec.name]
        d = n - 1
        if spec.depth is not None and spec.library is None and n > 1:
            try:
                d = spec.depth(n, spec.validate(dict(cfg.spec.params)))
            except (ValueError, TypeError):
                d = n - 1
        d = max(d, n - 1) if cfg.spec.name in ("kahan", "neumaier") else d
        acc = _acc(cfg, in_fmt)
        err = gamma(d + products, acc) * S
        if cfg.spec.input_rounding:
            err += 2.01 * format_info(cfg.spec.input_rounding).unit_roundoff * S
        if cfg.cast and cfg.cast.startswith("before"):
            err += 1.01 * u_out * S * (2 if products else 1)
    err = np.asarray(err, dtype=np.float64)
    if op == "mean":
        err = err / n
    # the last rounding to the result's format, and the exact reference's own rounding
    return err + 2 * u_out * np.abs(np.asarray(ref, dtype=np.float64))


# ----------------------------------------------------------------------------- explain


def _reveal_fallback(op, fn, arrays, observed, reproduced, in_fmt) -> None:
    """Where no known configuration reproduces a result: fn's own tree (:func:`reveal`), added
    to the configurations of the results it reproduces bit for bit."""
    from .reveal import reveal

    n = arrays[0].shape[1] if op == "matmul" else arrays[0].size
    try:
        rev = reveal(fn, n, op=op, format=in_fmt)
    except ValueError:
        return  # fn is not a tree of additions, or n is beyond the method's reach
    cfg = Config(parse_spec(rev.as_order(), op))
    got = run(op, cfg, arrays)
    if got is None:
        return
    for label, obs in observed.items():
        if reproduced[label][0]:
            continue
        d = distance(obs, got)
        if d is not None and float(np.max(d)) == 0:
            reproduced[label] = ([cfg], cfg, 0.0)


def explain(op: str, inputs, results: dict, *, fn=None) -> Explanation:
    """Why do these results of one computation differ, which is closer, and is it expected?

    Parameters
    ----------
    op : "sum", "dot", "matmul" or "mean"
    inputs : the op's input arrays as :func:`fpexplore.compare`'s ``inputs=`` takes them (sum
        and mean: an array or ``{"x": x}``; dot: ``(a, b)``; matmul: ``(A, B)``), one format
    results : a dict label -> observed result (a scalar, or an (m, n) array for matmul), two
        or more; each in any format (a float16 sum of float64 data, a float32 tensor-core
        product of float16 matrices)

    Returns
    -------
    Explanation with ``table`` (index: the labels; ``format``, ``max_abs_ulp``,
    ``mean_abs_ulp``, ``rel_error`` against the correctly rounded exact result in the
    result's format, ``closer`` (the result(s) nearest the exact answer), ``within_bound``
    (inside the worst-case bound of the configuration that reproduces it, else of the op's
    generic bound), ``reproduced_by`` (the variant spec that reproduces it bit for bit, or
    None), ``cast`` (where the cast to a narrower result format happens, if any)),
    ``causes`` (a DataFrame, the most likely first: ``factor`` from :data:`CAUSES`,
    ``share`` of the difference between the nearest and the farthest result, ``evidence``),
    ``verdict`` (two or three sentences), ``plot()``, ``diff()``.

    fn : callable, optional
        The function that produced a result (sum and mean: ``fn(x)``, dot: ``fn(a, b)``,
        matmul: ``fn(A, B)``, as :func:`fpexplore.reveal` takes it). Where no known order
        reproduces a result of sum, dot or matmul, fn's own accumulation tree is revealed
        and tried: a result it reproduces is ``reproduced_by`` its ``revealed(tree=...)``
        spec, and the causes compare it with the other results' configurations.
    """
    pd = require("pandas", "fpx.explain")
    checks.choice("op", op, EXPLAINED_OPS)
    arrays, in_fmt = _arrays(op, inputs)
    shape = (arrays[0].shape[0], arrays[1].shape[1]) if op == "matmul" else ()
    observed = _observed(results, shape)
    refs = {lbl: reference(op, arrays, o.dtype.name) for lbl, o in observed.items()}
    reproduced = reproduce(op, arrays, observed, in_fmt)
    if fn is not None:
        if not callable(fn):
            raise TypeError(f"fn must be callable, got {checks.shown(fn)}")
        if op != "mean" and any(not v[0] for v in reproduced.values()):
            _reveal_fallback(op, fn, arrays, observed, reproduced, in_fmt)
    errors = _errors(observed, refs)
    near = min(errors, key=lambda k: errors[k])
    far = max(errors, key=lambda k: errors[k])
    if near == far:
        far = next(k for k in observed if k != near)
    chosen: dict = {}  # label -> the reproducing configuration the causes rest on
    causes = _causes(op, arrays, observed, refs, reproduced, in_fmt, near, far, chosen)
    rows = [
        _row(op, arrays, label, obs, refs[label], reproduced[label][0], chosen, errors)
        for label, obs in observed.items()
    ]
    table = pd.DataFrame(rows).set_index("result")
    cause_df = pd.DataFrame(causes, columns=["factor", "share", "evidence"])
    verdict = _verdict(table, cause_df, near, far, errors)
    return Explanation(
        op,
        in_fmt,
        table,
        cause_df,
        verdict,
        observed,
        refs,
        {k: [str(c) for c in v[0]] for k, v in reproduced.items()},
        (near, far),
    )


def _deviation(obs, ref) -> np.ndarray:
    """|obs - ref| per element in float64 (0 where equal, infinities included)."""
    ref64 = np.asarray(ref, dtype=np.float64)
    with np.errstate(all="ignore"):
        dev = np.abs(obs.astype(np.float64) - ref64)
    return np.where(obs.astype(np.float64) == ref64, 0.0, dev)


def _errors(observed: dict, refs: dict) -> dict:
    """label -> the closeness: mean |error| against the exact result in the widest result
    format (NaN: infinitely far)."""
    wide = max(
        (o.dtype.name for o in observed.values()),
        key=lambda f: (format_info(f).precision, format_info(f).emax),
    )
    ref_wide = refs[next(k for k, o in observed.items() if o.dtype.name == wide)]
    errors = {}
    for label, obs in observed.items():
        e = _deviation(obs, ref_wide)
        errors[label] = float(np.mean(np.where(np.isnan(e), np.inf, e)))
    return errors


def _row(op, arrays, label, obs, ref, exact, chosen, errors) -> dict:
    """The table's row of one result."""
    s = summarize(obs, ref)
    cfg = chosen.get(label, exact[0] if exact else None)
    bound = _bound(op, arrays, cfg, obs.dtype.name, ref)
    best = min(errors.values())
    return {
        "result": label,
        "format": obs.dtype.name,
        "max_abs_ulp": s["max_abs_ulp"],
        "mean_abs_ulp": s["mean_abs_ulp"],
        "rel_error": s["max_rel"],
        "closer": errors[label] == best and not all(e == best for e in errors.values()),
        "within_bound": bool(np.all(_deviation(obs, ref) <= bound)),
        "reproduced_by": str(cfg) if cfg is not None else None,
        "cast": (cfg.cast.split(":")[0] if cfg is not None and cfg.cast else None),
    }


def _causes(op, arrays, observed, refs, reproduced, in_fmt, near, far, chosen) -> list[dict]:
    """The causes of the difference between the nearest and the farthest result, ranked
    (``chosen`` gets label -> the reproducing configuration they rest on)."""
    rows = _overflow(observed, refs, reproduced, in_fmt, near, far)
    rows += _nondeterminism(observed, reproduced, in_fmt, chosen)
    ca, cb = _pair(op, reproduced[near], reproduced[far], in_fmt)
    if ca is not None and not chosen:
        for k, c in ((near, ca), (far, cb)):
            if c in reproduced[k][0]:  # (a nearest configuration reproduces nothing)
                chosen[k] = c
    if ca is not None and not any(r["factor"] == "nondeterminism" for r in rows):
        rows += _differences(op, arrays, reproduced, in_fmt, near, far, ca, cb, rows)
    if not rows:  # nothing reproduced and nothing else found: an order is the usual cause
        rows.append(
            {
                "factor": "order",
                "share": 1.0,
                "evidence": (
                    "no configuration tried reproduces the results; another evaluation order (a "
                    "library's own loop) is the most common cause"
                ),
            }
        )
    rows.sort(key=lambda r: (-r["share"], _PRIORITY[r["factor"]]))
    return rows


def _overflow(observed, refs, reproduced, in_fmt, near, far) -> list[dict]:
    """One result infinite (or NaN) where the exact result is finite: that row, or none."""
    ref_finite = np.isfinite(np.asarray(refs[far], dtype=np.float64))
    with np.errstate(all="ignore"):
        blown = {k: ~np.isfinite(o.astype(np.float64)) & ref_finite for k, o in observed.items()}
    over = [k for k, v in blown.items() if np.any(v)]
    if not over:
        return []
    differ = max(int(np.sum(_ne(observed[near], observed[far]))), 1)
    k = over[0]
    fmt = observed[k].dtype.name
    cnt = int(np.sum(blown[k]))
    acc = _acc(reproduced[k][0][0], in_fmt) if reproduced[k][0] else None
    return [
        {
            "factor": "overflow",
            "share": min(1.0, cnt / differ),
            "evidence": f"{k} is {_what(observed[k], blown[k])} in {cnt} element(s) where "
            f"the exact result is finite: a partial result exceeded "
            f"{format_info(acc or fmt).name}'s largest value "
            f"({float(format_info(acc or fmt).max):.6g})",
        }
    ]


def _nondeterminism(observed, reproduced, in_fmt, chosen) -> list[dict]:
    """Results reproduced by one configuration apart from its seed (``chosen`` gets them), or
    three or more results that all differ and that no configuration reproduces: that row."""
    labels = list(observed)
    seeded = _seeded_common(labels, reproduced)
    if seeded is not None:
        cfgs = [seeded[k] for k in labels]
        chosen.update(seeded)
        evidence = _evidence("nondeterminism", cfgs[0], cfgs[1], labels[0], labels[1], in_fmt)
        seeds = ", ".join(f"{k}: seed {dict(c.spec.params)['seed']}" for k, c in zip(labels, cfgs))
        return [
            {
                "factor": "nondeterminism",
                "share": 1.0,
                "evidence": f"{evidence}; {cfgs[0].spec.name} with {seeds}",
            }
        ]
    unreproduced = sum(not reproduced[k][0] for k in labels)
    if len(labels) >= 3 and unreproduced >= 2 and _all_differ(observed):
        return [
            {
                "factor": "nondeterminism",
                "share": 1.0,
                "evidence": (
                    f"{len(labels)} results of the same inputs all differ and no fixed "
                    "configuration reproduces them: a run-to-run (atomic, scheduling-dependent) "
                    "order is likely"
                ),
            }
        ]
    return []


def _differences(op, arrays, reproduced, in_fmt, near, far, ca, cb, rows) -> list[dict]:
    """The factors in which the configurations ``ca`` (of ``near``) and ``cb`` (of ``far``)
    differ, each with its share of what ``rows`` (overflow) leaves: the cast decides alone."""
    diff = _differing(ca, cb, in_fmt)
    note = ""
    if not reproduced[near][0] or not reproduced[far][0]:
        unmatched = " and ".join(k for k in (near, far) if not reproduced[k][0])
        note = f" (no configuration reproduces {unmatched} bit for bit: its nearest is used)"
    out = []
    if "cast" in diff:
        overflow = sum(r["share"] for r in rows if r["factor"] == "overflow")
        evidence = _evidence("cast", ca, cb, near, far, in_fmt) + note
        out.append({"factor": "cast", "share": 1.0 - overflow, "evidence": evidence})
        for f in diff:
            if f not in ("cast", "nondeterminism"):
                also = "also differs: " + _evidence(f, ca, cb, near, far, in_fmt)
                out.append({"factor": f, "share": 0.0, "evidence": also})
        return out
    shares = _shares(op, arrays, ca, cb, in_fmt) if diff else {}
    rest = 1.0 - sum(r["share"] for r in rows)
    for f in diff:
        out.append(
            {
                "factor": f,
                "share": rest * shares.get(f, 0.0 if shares else 1.0 / len(diff)),
                "evidence": _evidence(f, ca, cb, near, far, in_fmt) + note,
            }
        )
    return out


def _seeded_common(labels, reproduced):
    """label -> configuration, one seeded configuration apart from its seed that reproduces
    every result with a seed of its own (run-to-run nondeterminism), or None."""
    keys = None
    per = {}
    for k in labels:
        mine = {}
        for c in reproduced[k][0]:
            seed = dict(c.spec.params).get("seed")
            if seed is not None:
                key = (c.spec.name, c.seedless(), c.spec.fma, c.spec.accumulate, c.cast)
                mine.setdefault(key, c)
        per[k] = mine
        keys = set(mine) if keys is None else keys & set(mine)
    for key in sorted(keys or (), key=str):
        cfgs = {k: per[k][key] for k in labels}
        if len({dict(c.spec.params)["seed"] for c in cfgs.values()}) == len(labels):
            return cfgs
    return None


def _ne(a, b):
    """Elementwise: the two results differ (NaN equals NaN)."""
    a, b = np.asarray(a), np.asarray(b)
    if a.dtype != b.dtype:
        a64, b64 = a.astype(np.float64), b.astype(np.float64)
        return ~((a64 == b64) | (np.isnan(a64) & np.isnan(b64)))
    return np.asarray(ulp_distance(a, b, nan="sentinel")) != 0


def _what(obs, mask) -> str:
    v = obs.astype(np.float64)[mask] if obs.ndim else np.asarray([float(obs)])
    return "NaN" if np.isnan(v).all() else "inf"


def _all_differ(observed: dict) -> bool:
    vals = list(observed.values())
    return all(
        bool(np.any(_ne(vals[i], vals[j])))
        for i in range(len(vals))
        for j in range(i + 1, len(vals))
    )


def _verdict(table, causes, near, far, errors) -> str:
    inside = bool(table["within_bound"].all())
    main = causes.iloc[0] if len(causes) else None
    overflow = main is not None and main["factor"] in ("overflow",)
    if overflow:
        first = "The difference is not expected of rounding alone: a result overflowed."
    elif inside:
        first = (
            "The difference is expected: every result is within the worst-case error "
            "bound of the configuration that reproduces it."
        )
    else:
        out = ", ".join(k for k, r in table.iterrows() if not r["within_bound"])
        first = f"The difference is larger than expected: {out} exceeds its worst-case bound."
    closer = [k for k, r in table.iterrows() if r["closer"]]
    if closer:
        second = (
            f"{' and '.join(closer)} {'is' if len(closer) == 1 else 'are'} closer to the "
            f"exact answer (max {table.loc[closer[0], 'max_abs_ulp']:g} ulps against "
            f"{table.loc[far, 'max_abs_ulp']:g} for {far})."
        )
    else:
        second = "The results are equally close to the exact answer."
    third = ""
    if main is not None:
        third = f" The main cause is {main['factor'].replace('_', ' ')}: {main['evidence']}."
    return f"{first} {second}{third}"
