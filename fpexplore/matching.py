"""What :func:`fpexplore.explain` matches the results against: the exact references and the
configurations that may have produced each result.

- :func:`reference`: the exact result correctly rounded to a result's format.
- :func:`configs`: every configuration tried (:class:`Config`: the detective's candidates, the
  seeded atomic orders, and for a result in a narrower format the inputs rounded to it first or
  the result rounded to it after).
- :func:`reproduce`: label -> the configurations that reproduce each result bit for bit, or
  the nearest ones. A configuration adding in float64 (an order with ``@float64``, or the exact
  one) is not run where its result is known beforehand: its error bound keeps every value it
  can take inside the rounding interval of one value of the result's format, the exact sum
  (or dot product) rounded to that format.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from fractions import Fraction

import numpy as np

from .detective import candidates, evaluate
from .formats import as_format, format_info, next_down, next_up, ulp_distance
from .numerics import clamp_ulps
from .ops.mean import mean as fmean
from .orders import exact_matmul
from .orders.registry import BLOCKS, ORDERS_BY_OP
from .spec import VariantSpec

__all__ = [
    "SAMPLE",
    "SEEDS",
    "Config",
    "Known",
    "configs",
    "distance",
    "reference",
    "reproduce",
    "run",
    "simplicity",
]

SEEDS = tuple(range(8))  # the seeds of the atomic (run-to-run) orders tried
SAMPLE = 8  # a matmul is screened on its first SAMPLE x SAMPLE elements, then confirmed


@dataclass(frozen=True)
class Config:
    """A configuration that may have produced a result: a variant spec and where the cast to
    the result's format happens (None: no cast; "before": the inputs are rounded to it
    first; "after": the result is)."""

    spec: VariantSpec
    cast: str | None = None

    def __str__(self) -> str:
        return str(self.spec)

    def seedless(self) -> tuple:
        return tuple((k, v) for k, v in self.spec.params if k != "seed")


# ----------------------------------------------------------------------------- references


def _exact(op, arrays, fmt: str):
    """The correctly rounded result in ``fmt`` (the inputs' or a wider one: widened exactly)."""
    arrays = tuple(np.asarray(as_format(a, fmt)) if a.dtype.name != fmt else a for a in arrays)
    if op == "sum":
        return evaluate("sum", VariantSpec("exact"), arrays)
    if op == "mean":
        return fmean(arrays[0], variant="exact")
    if op == "dot":
        return evaluate("dot", VariantSpec("exact"), arrays)
    return exact_matmul(*arrays)


def _exact_fraction(op, arrays, index=None) -> Fraction:
    """The exact result (of element ``index`` of a matmul) as a Fraction: slow, for the few
    elements where rounding the correctly rounded result again could go wrong."""
    if op in ("sum", "mean"):
        s = sum((Fraction(float(v)) for v in arrays[0]), Fraction(0))
        return s / arrays[0].size if op == "mean" else s
    a, b = arrays if op == "dot" else (arrays[0][index[0]], arrays[1][:, index[1]])
    return sum((Fraction(float(u)) * Fraction(float(v)) for u, v in zip(a, b)), Fraction(0))


def reference(op: str, arrays, fmt: str):
    """The exact result correctly rounded to ``fmt``: in a wider or the same format from the
    inputs widened exactly; in a narrower one by rounding the correctly rounded result again,
    except where it is a midpoint of ``fmt`` (the only place a second rounding can err: those
    elements are computed exactly as fractions)."""
    src = arrays[0].dtype.name
    s_info, d_info = format_info(src), format_info(fmt)
    if d_info.precision >= s_info.precision and d_info.emax >= s_info.emax:
        return _exact(op, arrays, fmt)
    wide = np.asarray(_exact(op, arrays, src))
    out = np.array(as_format(wide, fmt))
    w64, o64 = wide.astype(np.float64), out.astype(np.float64)
    with np.errstate(all="ignore"):
        other = np.where(w64 > o64, next_up(out), next_down(out)).astype(np.float64)
        mid = np.isfinite(o64) & np.isfinite(other) & (2 * (w64 - o64) == other - o64)
        mid &= w64 != o64
    for idx in zip(*np.nonzero(np.atleast_1d(mid))):
        exact = _exact_fraction(op, arrays, idx if op == "matmul" else None)
        value = np.asarray(as_format(exact, fmt))[()]
        if out.ndim:
            out[idx] = value
        else:
            out = np.asarray(value)
    return out[()] if out.ndim == 0 else out


# ----------------------------------------------------------------------------- configurations


def configs(op: str, in_fmt: str, out_fmts: set) -> list[Config]:
    """Every configuration tried: the detective's candidates on the inputs' format, the seeded
    atomic orders, and for a narrower result format both places of the cast."""
    order_op = "sum" if op == "mean" else op
    base = [Config(c) for c in candidates(order_op, in_fmt)]
    if order_op in ("sum", "dot"):
        for name in ("tree", "tree-strided"):
            default = ORDERS_BY_OP[order_op][name].params["block"][0]
            base += [
                Config(VariantSpec(name, (("block", b),) * (b != default) + atomic))
                for b in BLOCKS
                for atomic in ((("combine", "atomic"), ("seed", s)) for s in SEEDS)
            ]
        base += [Config(VariantSpec("shuffled", (("seed", s),))) for s in SEEDS]
    out = list(base)
    s_info = format_info(in_fmt)
    for fmt in sorted(out_fmts):
        info = format_info(fmt)
        if info.precision < s_info.precision or info.emax < s_info.emax:
            out += [Config(c, "before:" + fmt) for c in candidates(order_op, fmt)]
            out += [replace(c, cast="after:" + fmt) for c in base]
    return out


def _finished(op: str, cfg: Config, out, n: int):
    """An order's result made the op's: a mean's s / n rounded once (fpx.mean's formula
    variants), then the cast after the sum, if any."""
    if op == "mean":
        f = float(out)
        info = format_info(np.asarray(out).dtype)
        out = out if f == 0 or not math.isfinite(f) else as_format(Fraction(f) / n, info.name)
    if cfg.cast and cfg.cast.startswith("after"):
        out = as_format(out, cfg.cast.split(":")[1])
    return np.asarray(out)


def run(op: str, cfg: Config, arrays, known: Known | None = None):
    """The result of ``cfg`` on ``arrays`` (None where it does not apply); ``known`` (made for
    these arrays): the inputs cast once, and the results known without running."""
    order_op = "sum" if op == "mean" else op
    known = Known(op, arrays) if known is None else known
    out = known.result(cfg)
    if out is None:
        try:
            with np.errstate(all="ignore"):
                out = evaluate(order_op, cfg.spec, known.inputs(cfg))
        except (ValueError, NotImplementedError, TypeError):
            return None
    return _finished(op, cfg, out, arrays[0].size)


# ----------------------------------------------------------------------------- known results

_PREDICTED = ("float16", "bfloat16", "float32")  # float64 adds their values and products exactly
# the orders whose float64 accumulator keeps every partial sum and rounds once at the end
# (numpy-chunked rounds its chunks' sums; NumPy's and CUB's dot products round on the way)
_ROUNDED_ONCE = (
    "sequential",
    "reverse",
    "pairwise",
    "blocked",
    "tree",
    "tree-strided",
    "cupy-kernel",
    "shuffled",
    "kahan",
    "neumaier",
    "exact",
)


class Known:
    """The inputs of ``op`` (sum, mean or dot; a matmul: none known) cast once per format, and
    the result of a configuration that adds in float64 where it is known without running it:
    the order's error bound (gamma_d S, d the most additions a term goes through, at most
    n - 1; S the sum of |terms|; the products exact in float64) keeps every value it can take
    inside the rounding interval of one value of the inputs' format, the exact result (math.fsum)
    rounded to it. Only orders that keep every partial sum in the accumulator and round once at
    the end (:data:`_ROUNDED_ONCE`) are known; tests/test_explain.py checks them against runs."""

    def __init__(self, op: str, arrays):
        self.op, self.arrays = op, arrays
        self._inputs: dict = {}
        self._exact: dict = {}

    def inputs(self, cfg: Config) -> tuple:
        """The arrays ``cfg`` runs on: rounded to the cast's format first, if any."""
        if not (cfg.cast and cfg.cast.startswith("before")):
            return self.arrays
        fmt = cfg.cast.split(":")[1]
        if fmt not in self._inputs:
            self._inputs[fmt] = tuple(np.asarray(as_format(a, fmt)) for a in self.arrays)
        return self._inputs[fmt]

    def result(self, cfg: Config):
        """The order's result of ``cfg`` (before a mean's division and a cast after it) where
        it is known without running, else None."""
        spec = cfg.spec
        once = spec.name in _ROUNDED_ONCE or (spec.name in ("numpy", "cub") and self.op != "dot")
        if self.op == "matmul" or not once:
            return None
        if spec.name != "exact" and spec.accumulate != "float64":
            return None
        arrays = self.inputs(cfg)
        fmt = arrays[0].dtype.name
        if fmt not in _PREDICTED or (spec.input_rounding and spec.input_rounding not in _PREDICTED):
            return None
        key = (fmt, spec.input_rounding)
        if key not in self._exact:
            self._exact[key] = self._exact64(arrays, spec.input_rounding)
        total, abs_total, n = self._exact[key]
        if total is None:
            return None
        depth = 0 if spec.name == "exact" else self._depth(spec, n, fmt)
        # gamma_d S, doubled: d u / (1 - d u) <= 2 d u while d u <= 1/2 (here <= 1e-3)
        return _rounds_to(total, 4 * depth * 2.0**-53 * abs_total, fmt)

    def _depth(self, spec: VariantSpec, n: int, fmt: str) -> int:
        """The most roundings a term goes through in ``spec``, its product's included (any
        order of n terms: n - 1 additions at most)."""
        order = ORDERS_BY_OP["dot" if self.op == "dot" else "sum"][spec.name]
        p = order.validate(dict(spec.params))  # with the defaults
        # NumPy has no bfloat16 loop: ml_dtypes adds in turn
        name = "sequential" if (spec.name, fmt) == ("numpy", "bfloat16") else spec.name
        return min(_additions(name, p, n), n - 1) + (self.op == "dot")

    def _exact64(self, arrays, rounding) -> tuple:
        """(the exact result rounded to float64, the sum of |terms| rounded to float64, the
        number of terms), or (None, None, n) where a term is not finite."""
        if rounding:
            arrays = tuple(np.asarray(as_format(a, rounding)).astype(np.float64) for a in arrays)
        else:
            arrays = tuple(a.astype(np.float64) for a in arrays)
        with np.errstate(all="ignore"):  # (inf * 0 is NaN: no prediction, no warning)
            terms = arrays[0] * arrays[1] if self.op == "dot" else arrays[0]
        n = terms.size
        if n * 2.0**-53 > 1e-3 or not np.all(np.isfinite(terms)):
            return None, None, n
        values = terms.ravel().tolist()
        return math.fsum(values), math.fsum(map(abs, values)), n


def _additions(name: str, p: dict, n: int) -> int:
    """An upper bound on the additions a term goes through in order ``name`` (its own count
    here, from the kernels: a compensated or unlisted order counts n - 1)."""
    log2 = (max(n, 1) - 1).bit_length()  # ceil(log2 n)
    if name == "pairwise":
        return log2
    if name == "numpy":  # 15 per accumulator, 3 to combine, 7 left over; halving; onto 0
        return 26 + log2
    if name == "blocked":
        return p["block"] - 1 + -(-n // p["block"])
    if name in ("tree", "tree-strided"):  # the block's tree, then the block sums onto 0
        return (p["block"] - 1).bit_length() + -(-n // p["block"])
    if name == "cupy-kernel":  # each lane's terms onto 0, then the lanes' tree
        return -(-n // p["block_size"]) + (p["block_size"] - 1).bit_length() + 1
    return n - 1


def _rounds_to(total: float, bound: float, fmt: str):
    """The value of ``fmt`` every number within ``bound`` of the exact result rounds to, the
    exact result known as ``total`` (rounded to float64, so within 2**-53 |total| of it); None
    where that interval reaches a rounding boundary, or where that value is infinite or zero
    (the sign of a zero is the order's)."""
    r = as_format(np.float64(total), fmt)
    f = float(r)
    if f == 0 or not math.isfinite(f):
        return None
    lo, hi = float(next_down(r)), float(next_up(r))
    lo = lo if math.isfinite(lo) else f - (hi - f)  # the overflow threshold, half a gap out
    hi = hi if math.isfinite(hi) else f + (f - lo)
    x, slack = Fraction(total), Fraction(bound) + Fraction(abs(total)) * Fraction(2) ** -52
    below, above = (Fraction(f) + Fraction(lo)) / 2, (Fraction(f) + Fraction(hi)) / 2
    return r if below < x - slack and x + slack < above else None


# ----------------------------------------------------------------------------- matching


def distance(observed: np.ndarray, got):
    """|ulps| from observed to got per element (got widened where narrower), or None where
    got is in a wider format than the observation."""
    o_info, g_info = format_info(observed.dtype), format_info(got.dtype)
    if g_info.name != o_info.name:
        if g_info.precision > o_info.precision or g_info.emax > o_info.emax:
            return None
        got = np.asarray(as_format(got, o_info.name))
    return clamp_ulps(ulp_distance(observed, got, nan="sentinel"))


def simplicity(op: str, cfg: Config, in_fmt: str | None = None) -> int:
    """How many settings differ from the plain order (fewer: more likely). A float32
    accumulator for float16 or bfloat16 data is what libraries do, and counts as none."""
    spec = cfg.spec
    order_op = "sum" if op == "mean" else op
    defaults = ORDERS_BY_OP[order_op][spec.name].params
    changed = sum(1 for k, v in spec.params if k in defaults and defaults[k][0] != v)
    usual = spec.accumulate == "float32" and in_fmt in ("float16", "bfloat16")
    wider = spec.accumulate is not None and not usual
    return (spec.input_rounding is not None) + wider + spec.fma + changed


def _scored(cfg: Config, obs, got) -> tuple | None:
    d = distance(obs, got)
    return None if d is None else (float(np.max(d)), float(np.mean(d)), cfg)


def reproduce(op: str, arrays, observed: dict, in_fmt: str) -> dict:
    """label -> (exact configs, nearest config, its max ulps), staged for a matmul (screened on
    a corner of SAMPLE x SAMPLE elements, the best confirmed on every element)."""
    tried = configs(op, in_fmt, {o.dtype.name for o in observed.values()})
    if op == "matmul":
        r, c = min(SAMPLE, arrays[0].shape[0]), min(SAMPLE, arrays[1].shape[1])
        sample = (arrays[0][:r], arrays[1][:, :c])
        obs_sample = {k: v[:r, :c] for k, v in observed.items()}
    else:
        sample, obs_sample = arrays, observed
    known = Known(op, sample)
    scores = {k: [] for k in observed}  # label -> [(max ulps, mean ulps, cfg)]
    for cfg in tried:
        got = run(op, cfg, sample, known)
        if got is None:
            continue
        for label, obs in obs_sample.items():
            s = _scored(cfg, obs, got)
            if s is not None:
                scores[label].append(s)
    out = {}
    for label, sc in scores.items():
        sc.sort(key=lambda t: (t[0], t[1], simplicity(op, t[2])))
        if not sc:
            out[label] = ([], None, math.inf)
            continue
        best = sc[0][0]
        keep = [t for t in sc if t[0] == 0] if best == 0 else sc[:3]
        if op == "matmul":  # confirmed on every element
            full = [_scored(cfg, observed[label], run(op, cfg, arrays)) for _, _, cfg in keep]
            full.sort(key=lambda t: (t[0], t[1], simplicity(op, t[2])))
            keep, best = full, full[0][0]
        out[label] = ([t[2] for t in keep if t[0] == 0], keep[0][2], best)
    return out
