"""The order detective: which evaluation order produced a result?

* :func:`match_orders` — given the inputs and an observed result (say from a GPU), try every
  evaluation order with its parameters, FMA on and off, accumulator formats and input
  roundings (:func:`candidates`, each a :class:`~fpexplore.VariantSpec`), and rank the
  candidates by how many observations each one reproduces bit for bit.
* :func:`explain_numpy` — the same question put to NumPy's own ``np.sum`` / ``np.dot`` /
  ``np.matmul`` on this machine.

Where a difference comes from, factor by factor, is :mod:`fpexplore.budget`; a standalone
script reproducing a divergence is :mod:`fpexplore.reproduce`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from . import checks
from ._optional import require
from .formats import coerce
from .inference.scoring import CHANCE
from .inference.space import Config, candidates, cost, distance, evaluate, reduction
from .ops.registry import get
from .orders.arith import ORDER_OPS
from .spec import VariantSpec, parse_spec

if TYPE_CHECKING:
    from collections.abc import Iterable

    import pandas as pd
    from numpy.typing import ArrayLike

    from .results import Comparison

__all__ = ["candidates", "evaluate", "explain_numpy", "match_orders"]


def _distance(observed, got):
    """|ulps| from ``observed`` to ``got`` (:func:`fpexplore.inference.distance`); a result in
    a wider format cannot be the observation (ValueError)."""
    d = distance(observed, got)
    if d is None:
        raise ValueError(
            f"a {np.asarray(got).dtype.name} result is not a {observed.dtype.name} observation"
        )
    return d


def _as_observations(inputs, observed, op: str):
    """Normalize to a list of (inputs tuple, observed array)."""
    single = not isinstance(inputs, list)
    if not single and not isinstance(observed, (list, tuple)) and np.ndim(observed) == 0:
        raise TypeError(
            f"match_orders: inputs is a list (one input per observation), so observed must be a "
            f"list of results, one per input; got one result {checks.shown(observed)} (for one "
            f"{op} of these values pass np.asarray(inputs))"
        )
    if not single and not inputs:
        raise ValueError("match_orders: inputs is an empty list: give one input or a list of them")
    ins = [inputs] if single else list(inputs)
    obs = [observed] if single else list(observed)
    if len(ins) != len(obs):
        raise ValueError(f"{len(ins)} inputs but {len(obs)} observations")
    out = []
    arity = 2 if reduction(op).products else 1
    for i, o in zip(ins, obs):
        if isinstance(i, dict):  # by the op's input names (pass 24: the keys were the data)
            given = get(op).user_inputs(i, what="match_orders")[0]
            i = tuple(given[k] for k in get(op).input_names)
        if arity == 2 and not isinstance(i, (tuple, list, dict)):  # (pass 28: "got 1000")
            raise TypeError(
                f"match_orders: {op} takes a pair (a, b) of input arrays per observation, got "
                f"one {type(i).__name__}"
            )
        i = (i,) if arity == 1 and not isinstance(i, tuple) else tuple(i)
        if len(i) != arity:
            raise ValueError(f"{op} takes {arity} input array(s) per observation, got {len(i)}")
        names = ("inputs",) if arity == 1 else ("inputs[0]", "inputs[1]")  # (pass 34)
        try:
            arrays, info = coerce(*i, o, what="match_orders", names=(*names, "observed"))
        except TypeError:  # a result in a wider format (the tensor cores: float32 of float16)
            arrays, info = coerce(*i, what="match_orders", names=names)
            (o,), o_info = coerce(o, what="match_orders", names=("observed",))
            if o_info.precision < info.precision or o_info.emax < info.emax:  # (pass 32)
                raise TypeError(
                    f"match_orders: observed is {o_info.name}, narrower than the inputs' "
                    f"{info.name}: an order of {info.name} inputs gives {info.name} or wider; "
                    "give the result as the function returned it, and the inputs it read"
                ) from None
            arrays = [*arrays, o]
        ins_, o = tuple(arrays[:-1]), arrays[-1]
        red = reduction(op)
        red.check_shapes(op, ins_, "match_orders: ")
        want = (ins_[0].shape[0], ins_[1].shape[1]) if red.matrix and ins_[0].ndim == 2 else ()
        if red.matrix and ins_[0].ndim == ins_[1].ndim == 2 and o.shape != want:
            raise ValueError(f"observed has shape {o.shape}; {op} of these inputs gives {want}")
        if not red.matrix and o.ndim:
            raise ValueError(
                f"observed must be one {op} result (a scalar), got shape {o.shape}; for several "
                "runs give a list of inputs and a list of results, one per run"
            )
        out.append((ins_, o))
    fmts = list(dict.fromkeys(ins_[0].dtype.name for ins_, _ in out))
    if len(fmts) > 1:  # (pass 25: "observed[1] is float64, wider than the float64 inputs")
        raise ValueError(
            f"match_orders: the inputs are {' and '.join(fmts)} data: the observations of one "
            "code share its format; match each format's apart"
        )
    return out, info


def match_orders(
    inputs: ArrayLike | tuple | list,
    observed: ArrayLike,
    op: str = "sum",
    candidates_: str | VariantSpec | Iterable[str | VariantSpec] | None = None,
    *,
    top: int | None = 20,
) -> pd.DataFrame:
    """Which evaluation order reproduces ``observed``? A ranked pandas DataFrame.

    Parameters
    ----------
    inputs : the input array (sum) or a tuple of two arrays (dot, matmul) -- or a list of
        those, one per observation
    observed : the result(s) to explain, in the inputs' format (a scalar for sum/dot, an
        (m, n) array for matmul: each element is an observation), or in a wider one (a
        tensor core's float32 result of float16 inputs: orders with a narrower result are
        compared widened; where no candidate's result has its format, a ValueError says so)
    op : "sum", "dot" or "matmul"
    candidates_ : the variant specs to try, as text or :class:`~fpexplore.VariantSpec` (one
        spec or a list; an unknown one is a ValueError listing the valid names); default: every
        order with its block sizes (4 ... 1024 for blocked, 32 ... 1024 for the GPU trees)
        and other parameters, fma off/on, accumulator =
        the format or a wider one, input rounding none/tf32/bfloat16 for dot and matmul; the
        tensor cores (matrix cores) of one GPU per set of rules of ``fpx.gpus()``, on float32
        data with each input rounding they read it in)
    top : rows to return (None: all)

    Returns
    -------
    pandas.DataFrame
        Best first: ``variant`` (the variant spec, e.g. ``"blocked(block=64)+fma"``:
        ``fpx.compare(op, variants=[df.variant[0]], ...)`` reproduces it), ``order``, ``fma``,
        ``accumulate``, ``input_rounding``, ``params``, ``exact_matches`` (observations reproduced
        bit for bit), ``observations``, ``max_ulp``, ``mean_ulp``, ``exact`` (all reproduced).

    Notes
    -----
    The search is staged: every candidate is run on the first observation; only those within the
    best few ulps there are run on the rest (a bit-exact match must match everywhere). Ties are
    broken toward the simplest configuration (no input rounding, default accumulator, no fma);
    ``df.attrs["note"]`` says how many candidates reproduce everything.
    """
    pd = require("pandas", "fpx.match_orders")
    checks.choice("op", op, ORDER_OPS, "match_orders takes")
    if top is not None:
        checks.integer("top", top, 1)
    obs, info = _as_observations(inputs, observed, op)
    if candidates_ is None:
        cands = candidates(op, info.name)
    else:  # specs as text or VariantSpecs; one spec is a list of one
        cands = [parse_spec(c, op) for c in checks.name_list("candidates_", candidates_)]
        checks.once("candidates_", [str(c) for c in cands])  # (pass 38: rows twice)
    scored = _scored(op, cands, obs)
    total = sum(int(np.size(o)) for _, o in obs)
    rows = [_row(op, c, us, info, total, len(obs)) for c, us in scored]
    df = pd.DataFrame(rows)
    df["_complete"] = df["observations"] == total
    df = (
        df.sort_values(
            ["exact", "_complete", "exact_matches", "max_ulp", "mean_ulp", "_simplicity"],
            ascending=[False, False, False, True, True, True],
            kind="stable",
        )
        .drop(columns=["_complete", "_simplicity"])
        .reset_index(drop=True)
    )
    n_exact = int(df["exact"].sum())
    df.attrs["exact_candidates"] = n_exact
    df.attrs["note"] = (
        "no candidate reproduces every observation"
        if n_exact == 0
        else "one candidate reproduces every observation"
        if n_exact == 1
        else f"{n_exact} candidates reproduce every observation (ties: simplest first); "
        "more observations, or larger ones, tell them apart"
    ) + (_by_chance(op, scored, obs) if n_exact else "")
    return df if top is None else df.head(top)


def _by_chance(op: str, scored: list, obs) -> str:
    """Where the candidates give the observed values so often that an order none of them is
    would match too (the share of candidates giving each observation's value, multiplied:
    above 2^-CHANCE, as explain weighs a match), a sentence saying so; else "" (pass 25:
    in 3 of 29 lists of short mixed dots one candidate of a thousand matched all four
    observations by chance)."""
    bits = 0.0
    for k, (inputs, o) in enumerate(obs):
        if k == 0:  # (every candidate ran on the first)
            share = np.mean([not np.any(us[0]) for _, us in scored])
        else:
            share = np.mean([_gives(op, c, inputs, o) for c, _ in scored])
        bits -= float(np.log2(share))
        if bits >= CHANCE:
            return ""
    return (
        f"; but the candidates give the observed values so often (together 2^-{bits:.1f}, "
        f"a chance above 2^-{CHANCE}) that an order none of them is may match as well: more "
        "observations, or larger ones, decide"
    )


def _gives(op: str, c: VariantSpec, inputs, o) -> bool:
    """``c`` gives the observation ``o`` exactly, as :func:`_scored` counts an exact match."""
    try:
        return not np.any(_distance(o, evaluate(op, c, inputs)))
    except (ValueError, NotImplementedError):
        return False


def _scored(op: str, cands, obs) -> list:
    """[(candidate, [its ulps from each observation])]: every candidate run on the first
    observation, those within 2 ulps of the best there on the rest."""
    first_in, first_obs = obs[0]
    scored, why, formats = [], [], set()
    for c in cands:
        try:
            got = evaluate(op, c, first_in)
            scored.append((c, [_distance(first_obs, got)]))
            formats.add(np.asarray(got).dtype)
        except (ValueError, NotImplementedError) as e:
            why.append(f"{c}: {e}")  # a setting that does not apply, a path not emulated
    if not scored:
        raise ValueError(
            "match_orders: candidates_ is empty"
            if not cands
            else f"match_orders: no candidate could be evaluated; the first: {why[0]}"
        )
    wider = [k for k, (_, o) in enumerate(obs) if o.dtype not in formats]
    if wider:  # wider than every result: none can be it
        k = wider[0]
        fmt, inputs = obs[k][1].dtype.name, np.asarray(obs[k][0][0]).dtype.name
        which = "observed" if len(obs) == 1 else f"observed[{k}]"
        raise ValueError(
            f"match_orders: {which} is {fmt}, wider than the {inputs} inputs, and every "
            f"candidate's result is {' or '.join(sorted(f.name for f in formats))}: none can be "
            f"it (an accumulator @{fmt} rounds its sum to the inputs' format). A {fmt} result of "
            f"{inputs} data (np.sum(x, dtype=np.{fmt})) widens the inputs first: pass them as "
            f"{fmt} (x.astype(np.{fmt})), or ask fpx.explain, which tries that cast"
        )
    best = min(float(np.max(u[0])) for _, u in scored)
    keep_threshold = max(best, 0.0) + 2.0
    for c, us in scored:
        if float(np.max(us[0])) <= keep_threshold:
            for ins, o in obs[1:]:
                try:
                    us.append(_distance(o, evaluate(op, c, ins)))
                except (ValueError, NotImplementedError):
                    break  # not defined there (e.g. a library path not emulated): incomplete
    return scored


def _row(op: str, c: VariantSpec, us: list, info, total: int, count: int) -> dict:
    """match_orders' row of candidate ``c`` (``us``: its ulps from the observations it ran
    on, ``count`` observations of ``total`` elements in all)."""
    flat = np.concatenate([np.ravel(u) for u in us])
    complete = len(us) == count
    return {
        "variant": str(c),
        "order": c.name,
        "fma": c.fma,
        "accumulate": c.accumulate or info.name,
        "input_rounding": c.input_rounding or "none",
        "params": dict(c.params),
        "exact_matches": int(np.sum(flat == 0)),
        "observations": total if complete else int(flat.size),
        "max_ulp": float(np.max(flat)),
        "mean_ulp": float(np.mean(flat)),
        "exact": bool(complete and np.all(flat == 0)),
        "_simplicity": cost(op, Config(c), info.name),
    }


PROBE_SIZE = 20_011


MAX_PROBES = 1000  # explain_numpy's extra inputs: more is refused before any work


def explain_numpy(
    op: str, inputs: dict | Comparison, *, probes: int = 5, top: int | None = 5
) -> pd.DataFrame:
    """Which order did NumPy's own function use? :func:`match_orders` on NumPy's results.

    Runs ``np.sum`` / ``np.dot`` / ``np.matmul`` (on this machine, with its BLAS) on
    ``inputs`` and, for sum and dot, on ``probes`` more seeded inputs (wide-range data of
    20,011 elements in the same format): one scalar rarely singles out an order, several
    observations of the same library do. A matmul result already holds one observation per
    element, so it gets no probes.

    Parameters
    ----------
    op : "sum", "dot" or "matmul"
    inputs : the op's inputs as :attr:`Comparison.inputs` holds them (``{"x"}`` for sum,
        ``{"a", "b"}`` for dot, ``{"A", "B"}`` for matmul), as a tuple in that order (one
        array for sum), or a :class:`Comparison`
    probes, top : the number of extra probe inputs; rows to return (as in match_orders)

    Returns
    -------
    pandas.DataFrame
        The ranked DataFrame of :func:`match_orders`; ``attrs`` adds ``function`` (e.g. "np.dot")
        and ``note`` says how many candidates reproduce every observation. NumPy's ``np.sum`` is the
        ``numpy`` order on every machine; ``np.dot`` and ``np.matmul`` call the BLAS, whose order
        depends on the CPU and the library build, so their answer is about this machine only.
    """
    from .data import generate

    if hasattr(inputs, "inputs") and hasattr(inputs, "op"):  # a Comparison
        if inputs.op != op:
            raise ValueError(
                f"the comparison is of {checks.shown(inputs.op)}, not {checks.shown(op)}"
            )
        inputs = inputs.inputs
    checks.choice("op", op, ORDER_OPS, "explain_numpy explains")
    spec = get(op)
    label, names = spec.numpy_label, spec.input_names
    # a dict, a tuple or an array; masked arrays and mixed formats refused
    inputs, fmt, _ = spec.user_inputs(inputs, what="explain_numpy")
    probes = checks.integer("probes", probes, 0, MAX_PROBES)  # each is a 20,011-element run
    if top is not None:
        checks.integer("top", top, 1)
    first = tuple(np.asarray(inputs[k]) for k in names)
    ins = [first]
    if not reduction(op).matrix:
        for s in range(probes):
            ins.append(
                tuple(generate("wide", PROBE_SIZE, fmt, s + 99 * j) for j in range(len(names)))
            )
    with np.errstate(all="ignore"):
        obs = [spec.numpy_of(i) for i in ins]
    arg = ins if reduction(op).products else [i[0] for i in ins]
    df = match_orders(arg, obs, op, top=top)
    df.attrs["function"] = label
    return df
