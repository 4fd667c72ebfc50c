"""The difference budget: where a difference between two configurations comes from.

:func:`difference_budget` splits the difference between the results of two configurations
(e.g. the CPU's and the GPU's) into the parts due to input rounding, accumulator precision,
evaluation order and FMA, by switching one factor at a time; the parts add up to the total.
Its figure is :func:`fpexplore.plots.budget_waterfall` (``Budget.plot()``).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from . import checks
from ._optional import require
from .detective import evaluate
from .formats import ulp_distance
from .spec import VariantSpec, parse_spec

__all__ = ["FACTORS", "Budget", "difference_budget"]

FACTORS = ("input_rounding", "accumulate", "order", "fma")
CONFIG_KEYS = ("order", "params", "fma", "accumulate", "input_rounding")


@dataclass(repr=False)
class Budget:
    """The result of :func:`difference_budget`: ``table`` (one row per step: the factor
    switched, its configuration, the result, the change in ulps and absolutely), ``total``
    (ulps from start to end; the steps' ``delta_ulp`` add up to it) and ``plot()`` (a
    waterfall). For a matmul, ``delta_ulp``, ``delta_abs`` and ``total_ulp`` are *signed sums
    over all elements* of the result (element differences of opposite signs cancel in
    them); ``start``, ``end`` and ``steps`` hold the whole arrays."""

    table: object
    total_ulp: int
    start: object
    end: object
    steps: list = field(default_factory=list)

    def plot(self, ax=None):
        """The waterfall (:func:`fpexplore.plots.budget_waterfall`), a matplotlib Figure."""
        from . import plots

        return plots.budget_waterfall(self, ax=ax)

    def __repr__(self) -> str:  # a line per step, never whole arrays
        shape = np.shape(self.start)
        what = f"a {shape} result: signed sums over its elements" if shape else "a scalar"
        lines = [f"Budget: {self.total_ulp} ulps from start to end ({what})"]
        for row in self.table.itertuples():
            lines.append(f"  {row.step:<15} {row.config:<32} {row.delta_ulp:+d} ulps")
        return "\n".join(lines)


def _as_config(cfg, op: str) -> dict:
    """A configuration dict from a dict, a variant spec string or a VariantSpec."""
    if isinstance(cfg, (str, VariantSpec)):
        s = parse_spec(cfg, op)
        return {
            "order": s.name,
            "params": dict(s.params),
            "fma": s.fma,
            "accumulate": s.accumulate,
            "input_rounding": s.input_rounding,
        }
    if not isinstance(cfg, dict):
        raise TypeError(f"a configuration is a variant spec or a dict, got {type(cfg).__name__}")
    unknown = sorted(set(cfg) - set(CONFIG_KEYS))
    if unknown:  # {'oder': 'tree'} started from sequential without a word
        raise ValueError(
            f"unknown configuration key(s) {unknown}; the keys: {', '.join(CONFIG_KEYS)}"
        )
    return dict(cfg)


def _setting(cfg) -> VariantSpec:
    """A budget configuration (order, params, fma, accumulate, input_rounding) as a spec."""
    return VariantSpec(
        cfg["order"],
        tuple(sorted(cfg.get("params", {}).items())),
        bool(cfg.get("fma", False)),
        cfg.get("input_rounding"),
        cfg.get("accumulate"),
    )


def _config_result(op, inputs, cfg):
    return evaluate(op, _setting(cfg), inputs)


def difference_budget(inputs, start, end, op: str = "dot", *, factors=FACTORS) -> Budget:
    """Split the difference between the results of two configurations into its causes.

    ``start`` and ``end`` are variant specs (``"numpy"``, ``"tree(block=256)+tf32"``, see
    :func:`fpexplore.parse_spec`) or dicts with keys ``order`` (and ``params``), ``fma``,
    ``accumulate``, ``input_rounding`` (missing keys: order "sequential", no fma, the
    inputs' format, no input rounding). The table's ``config`` column shows each step's
    configuration as a spec. Starting from ``start``, the factors are switched to
    ``end``'s values one at a time in the order ``factors``; each step's change (in ulps of
    the result, and absolute) is that factor's share. The shares add up exactly to the total
    (the steps telescope); the attribution depends on the switching order, which is part of
    the answer (``factors=`` changes it). For a matmul each step's ``delta_ulp`` and
    ``delta_abs`` are *signed sums over all elements* of the result matrix (so element
    changes of opposite signs cancel; the step's ``result`` column holds the whole matrix).
    A dict with any other key, or a key misspelled, is refused (ValueError naming it).
    """
    pd = require("pandas", "fpx.difference_budget")
    if op not in ("sum", "dot", "matmul"):
        raise ValueError(f"unknown op {op!r}; difference_budget takes sum, dot or matmul")
    factors = checks.name_list("factors", factors)
    bad = set(factors) - set(FACTORS)
    if bad:
        raise ValueError(f"unknown factor(s) {sorted(bad)}; factors: {', '.join(FACTORS)}")
    inputs = (inputs,) if op == "sum" and not isinstance(inputs, tuple) else tuple(inputs)
    defaults = {
        "order": "sequential",
        "params": {},
        "fma": False,
        "accumulate": None,
        "input_rounding": None,
    }
    cfg = {**defaults, **_as_config(start, op)}
    target = {**defaults, **_as_config(end, op)}
    rows, steps = [], []
    prev = _config_result(op, inputs, cfg)
    first = prev
    rows.append(
        {
            "step": "start",
            "config": _describe(cfg),
            "result": _val(prev),
            "delta_ulp": 0,
            "delta_abs": 0.0,
        }
    )
    for f in factors:
        keys = ("order", "params") if f == "order" else (f,)
        if all(cfg[k] == target[k] for k in keys):
            continue
        for k in keys:
            cfg[k] = target[k]
        cur = _config_result(op, inputs, cfg)
        d = _ulps(prev, cur)
        rows.append(
            {
                "step": f,
                "config": _describe(cfg),
                "result": _val(cur),
                "delta_ulp": d,
                "delta_abs": _absdiff(prev, cur),
            }
        )
        steps.append((f, cur))
        prev = cur
    total = _ulps(first, prev)
    return Budget(pd.DataFrame(rows), total, first, prev, steps)


def _describe(cfg) -> str:
    return str(_setting(cfg))


def _val(v):
    return float(v) if np.ndim(v) == 0 else np.asarray(v)


def _ulps(a, b) -> int:
    d = np.asarray(ulp_distance(a, b), dtype=np.int64)
    return int(d) if d.ndim == 0 else int(np.sum(d))


def _absdiff(a, b) -> float:
    return float(np.sum(np.asarray(b, dtype=np.float64) - np.asarray(a, dtype=np.float64)))
