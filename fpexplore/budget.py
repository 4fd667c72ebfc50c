"""The difference budget: where a difference between two configurations comes from.

:func:`difference_budget` splits the difference between the results of two configurations
(e.g. the CPU's and the GPU's) into the parts due to input rounding, accumulator precision,
evaluation order, FMA and the tensor cores, by switching one factor at a time; the parts add
up to the total.
Its figure is :func:`fpexplore.plots.budget_waterfall` (``Budget.plot()``).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

import numpy as np

from . import checks
from ._optional import require
from .formats import as_array, as_format, format_info, holding, ulp_distance
from .inference.space import evaluate, reduction
from .orders.arith import ORDER_OPS
from .orders.registry import TENSOR_CORE, lookup
from .spec import VariantSpec, parse_spec

if TYPE_CHECKING:
    from collections.abc import Iterable

    from numpy.typing import ArrayLike

__all__ = ["FACTORS", "Budget", "difference_budget"]

FACTORS = ("input_rounding", "accumulate", "order", "fma", "tensor_core")
CONFIG_KEYS = ("order", "params", "fma", "accumulate", "input_rounding")
TENSOR_CORE_ROUNDED = lookup("matmul", TENSOR_CORE).rounded_formats


@dataclass(repr=False)
class Budget:
    """The result of :func:`difference_budget`: ``table`` (one row per step: the factor
    switched, its configuration, the result, the change in ulps and absolutely), ``total_ulp``
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


def _named(name: str, cfg, op: str) -> VariantSpec:
    """:func:`_as_setting`, its error naming the argument (``start`` or ``end``)."""
    try:
        return _as_setting(cfg, op)
    except (TypeError, ValueError) as e:
        raise type(e)(f"difference_budget: {name}: {e}") from None


def _as_setting(cfg, op: str) -> VariantSpec:
    """The VariantSpec of a configuration given as a variant spec (string or VariantSpec)
    or a dict of CONFIG_KEYS (missing keys: order "sequential", no parameters, no fma, the
    inputs' format, no input rounding)."""
    if isinstance(cfg, (str, VariantSpec)):
        return parse_spec(cfg, op)
    if not isinstance(cfg, dict):
        raise TypeError(f"a configuration is a variant spec or a dict, got {type(cfg).__name__}")
    unknown = sorted(set(cfg) - set(CONFIG_KEYS))
    if unknown:  # {'oder': 'tree'} started from sequential without a word
        raise ValueError(
            f"unknown configuration key(s) {unknown}; the keys: {', '.join(CONFIG_KEYS)}"
        )
    params = cfg.get("params", {})
    if not isinstance(params, dict):  # (pass 21: params=64 was "'int' object is not iterable")
        raise TypeError(
            f"params must be a dict of the order's parameters ({{'block': 64}}), "
            f"got {checks.shown(params)}"
        )
    return VariantSpec(
        cfg.get("order", "sequential"),
        params,
        checks.boolean("fma", cfg.get("fma", False)),  # (pass 16: "False" was fma on)
        cfg.get("input_rounding"),
        cfg.get("accumulate"),
    )


# the VariantSpec fields each factor switches
_FIELDS = {
    "order": ("name", "params"),
    "tensor_core": ("name", "params"),
    "accumulate": ("accumulate",),
    "fma": ("fma",),
    "input_rounding": ("input_rounding",),
}


def _with(cfg: VariantSpec, target: VariantSpec, fields) -> VariantSpec:
    """``cfg`` with these fields switched to ``target``'s."""
    return replace(cfg, **{k: getattr(target, k) for k in fields})


def difference_budget(
    inputs: ArrayLike | tuple,
    start: str | VariantSpec | dict,
    end: str | VariantSpec | dict,
    op: str = "dot",
    *,
    factors: str | Iterable[str] = FACTORS,
) -> Budget:
    """Split the difference between the results of two configurations into its causes.

    Starting from ``start``, the factors are switched to ``end``'s values one at a time in the
    order ``factors``; each step's change (in ulps of the result, and absolute) is that
    factor's share. The shares add up exactly to the total (the steps telescope); the
    attribution depends on the switching order, which is part of the answer.

    Parameters
    ----------
    inputs : the op's arrays: one array for sum, a pair for dot and matmul
    start, end : variant specs (``"numpy"``, ``"tree(block=256)+tf32"``, see
        :func:`fpexplore.parse_spec`) or dicts with keys ``order`` (and ``params``), ``fma``,
        ``accumulate``, ``input_rounding`` (missing keys: order "sequential", no fma, the
        inputs' format, no input rounding)
    op : "sum", "dot" or "matmul"
    factors : names of ``FACTORS`` in switching order (``factors=`` changes the attribution)

    Returns
    -------
    Budget
        Its table has one row per step; the ``config`` column shows each step's configuration as a
        spec. For a matmul each step's ``delta_ulp`` and ``delta_abs`` are
        *signed sums over all elements* of the result matrix (so element changes of opposite
        signs cancel; the step's ``result`` column holds the whole matrix).

    Raises
    ------
    ValueError
        An unknown ``op`` or factor, the wrong number of ``inputs``, a dict with any other
        key or a key misspelled (naming it), a factor left out in which start and end
        differ, so that the steps would not reach end's result (naming it), or a NaN result.

    Notes
    -----
    ``tensor_core``: switching from the start order to the tensor cores (``"tensor-core
    (arch=a100)+tf32"``, or back from them); the tensor cores have no accumulator or fma
    setting and read float32 data only through an input rounding: switching to them also
    switches those where their own factors have not yet; switching from them, those factors
    come right after it. The ``order`` factor leaves the switch to ``tensor_core`` (it makes
    it where ``tensor_core`` is not among the factors). Results in different formats (float16
    data, the tensor cores' float32) are all counted in the widest one.
    """
    pd = require("pandas", "fpx.difference_budget")
    factors, inputs = _checked(op, factors, inputs)
    cfg, target = (_named(name, value, op) for name, value in (("start", start), ("end", end)))
    needs_rounding = np.asarray(inputs[0]).dtype.name in TENSOR_CORE_ROUNDED
    configs, results = _switched(op, cfg, target, factors, needs_rounding, inputs)
    _reaches_end(op, configs[-1][1], target, factors, results[-1], inputs)
    results = _common_format(results)
    for (step, c), r in zip(configs, results):
        if np.isnan(np.asarray(r, dtype=np.float64)).any():
            raise ValueError(
                f"difference_budget: the result of {c} ({step}) is NaN (inputs holding NaN or "
                "infinities of both signs, or an overflow): no ulps to split between NaNs"
            )
    rows, steps = [], []
    for i, ((f, c), cur) in enumerate(zip(configs, results)):
        prev = results[i - 1] if i else cur
        rows.append(
            {
                "step": f,
                "config": str(c),
                "result": _val(cur),
                "delta_ulp": _ulps(prev, cur),
                "delta_abs": _absdiff(prev, cur),
            }
        )
        if i:
            steps.append((f, cur))
    total = _ulps(results[0], results[-1])
    return Budget(pd.DataFrame(rows), total, results[0], results[-1], steps)


def _checked(op: str, factors, inputs) -> tuple[list, tuple]:
    """The factors and the inputs (a tuple of the op's arrays), checked."""
    checks.choice("op", op, ORDER_OPS, "difference_budget takes")
    factors = checks.name_list("factors", factors)
    bad = set(factors) - set(FACTORS)
    if bad:
        raise ValueError(f"unknown factor(s) {sorted(bad)}; factors: {', '.join(FACTORS)}")
    checks.once("factors", factors)  # (pass 35: the second switch was a step of no change)
    products = reduction(op).products
    listed = isinstance(inputs, tuple) or (products and isinstance(inputs, list))
    inputs = tuple(inputs) if listed else (inputs,)  # (one array for a dot: one input)
    if len(inputs) != 1 + products:
        raise ValueError(
            f"difference_budget({checks.shown(op)}) takes "
            f"{'two arrays' if products else 'one array'} "
            f"as inputs, got {len(inputs)}"
        )
    for i, x in enumerate(inputs):  # (a ragged list named, not NumPy's error)
        as_array(x, f"difference_budget: inputs[{i}]")
    return factors, inputs


def _switched(
    op: str, cfg: VariantSpec, target: VariantSpec, factors: list, needs_rounding: bool, inputs
) -> tuple[list, list]:
    """[(step, configuration)] and their results: ``cfg`` ("start"), then each factor switched
    to ``target``'s value in turn (a factor that changes nothing makes no step). A step that
    would leave no setting (fma on NumPy's dot, an A100 reading FP8) switches the fewest of the
    factors after it with it, and is named after all of them ("order and fma")."""
    # the tensor cores: switching to (or from) them is the factor tensor_core where it is
    # one of the factors, else part of order. They have no accumulator or fma setting, and
    # read float32 data only through an input rounding: switching to them switches those
    # with them where their factors have not yet; from them, those factors wait for it.
    tc = TENSOR_CORE in (cfg.name, target.name) and (cfg.name, cfg.params) != (
        target.name,
        target.params,
    )
    switch = "tensor_core" if tc and "tensor_core" in factors else "order" if tc else None
    skipped = "order" if switch == "tensor_core" else "tensor_core"

    def fields(f: str) -> tuple:
        if f == switch and target.name == TENSOR_CORE:
            return _FIELDS[f] + ("accumulate", "fma") + (("input_rounding",) * needs_rounding)
        return _FIELDS[f]

    configs, results = [("start", cfg)], [_result(op, cfg, inputs, "start")]
    todo, waiting = [f for f in factors if f != skipped], []
    while todo:
        f = todo.pop(0)
        on_tc = cfg.name == TENSOR_CORE
        if on_tc and (
            f in ("accumulate", "fma")
            or (f == "input_rounding" and needs_rounding and target.input_rounding is None)
        ):
            waiting.append(f)  # not (or not so) on the tensor cores: after leaving them
            continue
        if f == switch:
            todo[:0], waiting = waiting, []
        if all(getattr(cfg, k) == getattr(target, k) for k in fields(f)):
            continue
        step, cfg, result = _setting(op, cfg, target, [f, *todo], fields, inputs, factors)
        todo = [g for g in todo if g not in step]
        configs.append((" and ".join(step), cfg))
        results.append(result)
    return configs, results


def _setting(op, cfg: VariantSpec, target: VariantSpec, todo: list, fields, inputs, factors):
    """(the factors switched, the configuration, its result): ``cfg`` with ``todo[0]``
    switched, and the fewest of the other factors ``todo`` with it that make it a setting.
    Where none do, the error of the configuration with them all switched: end's, or one
    naming a factor left out of ``factors``."""
    from itertools import combinations

    first, left = todo[0], todo[1:]
    for size in range(len(left) + 1):
        for extra in combinations(left, size):
            trial = cfg
            for g in (first, *extra):
                trial = _with(trial, target, fields(g))
            try:
                return [first, *extra], trial, evaluate(op, trial, inputs)
            except ValueError as e:
                error = e
    if _left_out(trial, target):
        raise _short(trial, target, factors, f"which is no setting ({error})") from None
    raise ValueError(f"difference_budget: end: {error}") from None


def _result(op: str, cfg: VariantSpec, inputs, name: str):
    """The result of the configuration ``name`` (start), its error naming it."""
    try:
        return evaluate(op, cfg, inputs)
    except ValueError as e:
        raise ValueError(f"difference_budget: {name}: {e}") from None


def _reaches_end(op: str, last: VariantSpec, target: VariantSpec, factors, got, inputs) -> None:
    """ValueError where the steps stop short of ``end``: a factor left out of ``factors`` in
    which start and end differ, and end's result is not the last step's."""
    if not _left_out(last, target):
        return
    a, b = (np.asarray(r) for r in _common_format([got, evaluate(op, target, inputs)]))
    if np.array_equal(a, b, equal_nan=True) and np.array_equal(np.signbit(a), np.signbit(b)):
        return
    raise _short(last, target, factors, "whose result is not end's")


def _left_out(last: VariantSpec, target: VariantSpec) -> list:
    """The factors in which the last step's configuration still differs from end (the
    tensor cores' only where one of the two is theirs: pass 42 named it for sequential and
    pairwise)."""
    tc = TENSOR_CORE in (last.name, target.name)
    return [
        f
        for f in FACTORS
        if (f != "tensor_core" or tc)
        and any(getattr(last, k) != getattr(target, k) for k in _FIELDS[f])
    ]


def _short(last: VariantSpec, target: VariantSpec, factors, why: str) -> ValueError:
    left = _left_out(last, target)
    out = [f for f in left if f not in factors] or left
    return ValueError(
        f"difference_budget: start and end also differ in {' and '.join(out)}, which "
        f"factors={list(factors)} leaves out: the steps would stop at {last}, {why}; add it "
        "to factors"
    )


def _common_format(results: list) -> list:
    """The results in one format, the narrowest holding all of theirs (widening is exact): the
    tensor cores' float32 result of float16 inputs next to float16 results, counted in
    float32 ulps."""
    infos = [format_info(np.asarray(r).dtype) for r in results]
    if all(i.name == infos[0].name for i in infos):  # (FP8 results: FP8's ulps, not float16's)
        return results
    wide = holding(*infos)
    return [r if i.name == wide.name else as_format(r, wide.name) for r, i in zip(results, infos)]


def _val(v):
    return float(v) if np.ndim(v) == 0 else np.asarray(v)


def _ulps(a, b) -> int:
    """The signed ulps from ``a`` to ``b``, summed over the elements as Python ints (pass 21:
    two float64 elements from 1.0 to -1.0 overflowed int64's sum to +1.8e16)."""
    return sum(np.asarray(ulp_distance(a, b), dtype=np.int64).ravel().tolist())


def _absdiff(a, b) -> float:
    with np.errstate(all="ignore"):  # inf - inf: NaN, no difference to state (no warning)
        return float(np.sum(np.asarray(b, dtype=np.float64) - np.asarray(a, dtype=np.float64)))
