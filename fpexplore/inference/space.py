"""The hypothesis space: every configuration that may have produced a result, what it computes,
and what it costs to name.

- :class:`Config`: a variant spec and where a cast to the result's format happens.
- :func:`candidates` / :func:`configs`: the configurations tried, from the order registry
  (every order with its parameter grid, fma, accumulators, input roundings, the tensor
  cores; the seeded atomic orders; the casts; the op's real NumPy call where nothing
  emulates it).
- :func:`evaluate` / :func:`run`: a configuration's result; :class:`Known`: the results of
  float64 accumulators known from the exact sum without running.
- :func:`reference`: the exact result correctly rounded to a format.
- :func:`distance`: |ulps| from an observation to a result, the one distance of the search.
- :func:`factors` and :func:`cost`: a configuration's factors and its prior cost in bits.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from fractions import Fraction
from functools import cache

import numpy as np

from ..formats import as_format, format_info, next_down, next_up, ulp_distance
from ..numerics import clamp_ulps
from ..ops.mean import mean as fmean
from ..ops.opspec import Reduction
from ..ops.registry import OP_SPECS, get
from ..orders import dot as fdot
from ..orders import exact_matmul
from ..orders import matmul as fmatmul
from ..orders import sum as fsum
from ..orders.products import round_inputs
from ..orders.registry import BLOCKS, TENSOR_CORE, lookup, orders_of
from ..spec import VariantSpec

__all__ = [
    "SAMPLE",
    "SEEDS",
    "Config",
    "Known",
    "candidates",
    "configs",
    "cost",
    "differing",
    "distance",
    "evaluate",
    "factor_bits",
    "factors",
    "order_op",
    "reduction",
    "reference",
    "run",
    "rounded_otherwise",
    "siblings",
]

SEEDS = tuple(range(8))  # the seeds of the atomic (run-to-run) orders tried
SAMPLE = 8  # a matmul is screened on its first SAMPLE x SAMPLE elements, then confirmed
# the input roundings (of formats.INPUT_ROUNDINGS) tried with a CPU or GPU order
TRIED_ROUNDINGS = (None, "tf32", "bfloat16")
# the tensor cores read float32 data in one of these formats (FP8: Ada, Hopper, Blackwell;
# FNUZ FP8: CDNA3)
HARDWARE_ROUNDINGS = (
    "tf32",
    "bfloat16",
    "float8_e4m3",
    "float8_e5m2",
    "float8_e4m3fnuz",
    "float8_e5m2fnuz",
)
# the ops whose real NumPy call (their OpSpec's ``numpy``) is tried, where no emulated order
# is the function (np.sum is the "numpy" order on every machine; np.mean divides its sum in
# float64; BLAS's sgemm is not emulated)
_TRIED_CALLS = ("mean", "matmul")
FIXED = "fixed"  # a library call's own accumulator and fusing: no setting, never a difference


@cache
def reduction(op: str) -> Reduction:
    """What the engine knows of ``op`` (sum, dot, matmul, mean): its OpSpec's
    :class:`~fpexplore.ops.opspec.Reduction`."""
    return get(op).reduction


def order_op(op: str) -> str:
    """The op whose orders compute ``op`` (a mean is a sum, then a division)."""
    return reduction(op).orders


@dataclass(frozen=True)
class Config:
    """A configuration that may have produced a result: a variant spec and where the cast to
    the result's format happens (None: no cast; "before:F": the inputs are rounded to F
    first; "after:F": the result is)."""

    spec: VariantSpec
    cast: str | None = None

    def __str__(self) -> str:
        return str(self.spec)

    def seedless(self) -> tuple:
        return tuple((k, v) for k, v in self.spec.params if k != "seed")

    @property
    def where(self) -> str | None:
        """ "before", "after" or None."""
        return self.cast.split(":")[0] if self.cast else None

    @property
    def cast_format(self) -> str | None:
        return self.cast.split(":")[1] if self.cast else None

    @property
    def call(self) -> bool:
        """A real library call on this machine (not an emulation)."""
        return self.spec.name in _CALL_NAMES

    @property
    def seeded(self) -> bool:
        return "seed" in dict(self.spec.params)


# a real call's label (its OpSpec's ``numpy_label``) -> its op
_CALL_NAMES = {s.numpy_label: s.name for s in OP_SPECS.values() if s.reduction is not None}


# ----------------------------------------------------------------------------- the space


def candidates(op: str, fmt: str, *, fma=(False, True), roundings=None) -> list[VariantSpec]:
    """Every deterministic configuration searched for ``op`` ("sum", "dot" or "matmul") on
    ``fmt`` inputs: each listed order with its parameter grid, fma off/on where a product
    feeds an accumulator, the data's accumulator or a wider one, input roundings (dot and
    matmul of float32 and float64: none, tf32, bfloat16), the tensor cores with each input
    rounding they read float32 data in."""
    info = format_info(fmt)
    accs = [None] + [f for f in ("float32", "float64") if format_info(f).precision > info.precision]
    hardware = HARDWARE_ROUNDINGS if roundings is None else tuple(r for r in roundings if r)
    if roundings is None:
        products = reduction(op).products
        roundings = TRIED_ROUNDINGS if products and fmt in ("float32", "float64") else (None,)
    out = []
    for order, spec in orders_of(op).items():
        if not spec.listed or fmt not in spec.formats + spec.rounded_formats:
            continue  # a library loop for other formats
        fixed = order == "exact" or spec.library is not None  # no accumulator of its own
        # a library's call reads the inputs rounded too (pass 17: np.dot of bfloat16 inputs
        # against np.dot's was "order" as well as "input rounding")
        rs = (None,) if order == "exact" else roundings
        if spec.takes_rounding:  # the format it reads: the data's own, or a rounding's
            rs = hardware if fmt in spec.rounded_formats else (None,)
        for params in spec.grid:
            for f in fma if (reduction(op).products and spec.fma) else (False,):
                for acc in accs if not fixed else (None,):
                    for r in rs:
                        out.append(VariantSpec(order, params, f, r, acc))
    return out


# input roundings that differ only in ties (or truncate): tried where one nearly reproduces
ROUNDING_FAMILIES = (("tf32", "tf32-rne", "tf32-truncate"), ("bfloat16", "bfloat16-truncate"))
#: the truncations among them (a whole ulp toward zero, not half of one)
TRUNCATIONS = tuple(r for f in ROUNDING_FAMILIES for r in f if r.endswith("-truncate"))


def siblings(cfg: Config) -> list[Config]:
    """``cfg`` with each other rounding of its input rounding's family (tf32: ties away, to
    even, truncated), for a result that ``cfg`` reproduces but for a few ties."""
    r = cfg.spec.input_rounding
    family = next((f for f in ROUNDING_FAMILIES if r in f), ())
    return [replace(cfg, spec=replace(cfg.spec, input_rounding=o)) for o in family if o != r]


def rounded_otherwise(op: str, cfg: Config, in_fmt: str) -> list[Config]:
    """``cfg`` with the inputs rounded each other way tried or truncated (none, tf32 and
    bfloat16, to nearest or truncated; dot and matmul of float32 and float64), for a result
    nothing reproduces: its nearest configuration names an input rounding where there is one
    (pass 20: a matmul blocked in k on truncated inputs was guessed 'order, fma', the
    truncations being tried only beside a rounding)."""
    if not (reduction(op).products and in_fmt in ("float32", "float64")):
        return []
    if cfg.spec.name in ("exact", TENSOR_CORE) or cfg.seeded:
        return []
    ways = dict.fromkeys((*TRIED_ROUNDINGS, *(r for f in ROUNDING_FAMILIES for r in f)))
    r = cfg.spec.input_rounding
    return [replace(cfg, spec=replace(cfg.spec, input_rounding=o)) for o in ways if o != r]


def _seeded(op: str) -> list[Config]:
    """The GPU's run-to-run orders: atomic block sums and a shuffled order, each seed."""
    out = []
    for name in ("tree", "tree-strided"):
        default = lookup(op, name).params["block"][0]
        out += [
            Config(VariantSpec(name, (("block", b),) * (b != default) + atomic))
            for b in BLOCKS
            for atomic in ((("combine", "atomic"), ("seed", s)) for s in SEEDS)
        ]
    return out + [Config(VariantSpec("shuffled", (("seed", s),))) for s in SEEDS]


def _calls(op: str, fmt: str) -> list[Config]:
    if op not in _TRIED_CALLS:
        return []
    name = get(op).numpy_label
    matrix = reduction(op).matrix
    rs = TRIED_ROUNDINGS if matrix and fmt in ("float32", "float64") else (None,)
    wide = [None] + (["float64"] if matrix and fmt != "float64" else [])
    return [Config(VariantSpec(name, (), False, r, a)) for r in rs for a in wide]


def configs(op: str, in_fmt: str, out_fmts) -> list[Config]:
    """Every configuration tried: the candidates on the inputs' format, the real NumPy call
    where nothing emulates it, the seeded atomic orders (sum and dot), and for a narrower
    result format both places of the cast, for a wider one the inputs widened first (exact:
    ``np.sum(x, dtype=np.float64)``)."""
    base_op = order_op(op)
    base = [Config(c) for c in candidates(base_op, in_fmt)] + _calls(op, in_fmt)
    if not reduction(op).matrix:
        base += _seeded(base_op)
    out = list(base)
    s_info = format_info(in_fmt)
    for fmt in sorted(out_fmts):
        info = format_info(fmt)
        if info.precision < s_info.precision or info.emax < s_info.emax:
            out += [Config(c, "before:" + fmt) for c in candidates(base_op, fmt)]
            out += [replace(c, cast="after:" + fmt) for c in base]
        elif info.precision > s_info.precision and info.emin <= s_info.emin:  # held exactly
            out += [Config(c, "before:" + fmt) for c in candidates(base_op, fmt)]
    return out


# ----------------------------------------------------------------------------- results


def evaluate(op: str, spec: VariantSpec, inputs: tuple):
    """The result of ``op`` (sum, dot, matmul; mean: only its NumPy call) on ``inputs`` (a
    tuple of arrays) in the setting ``spec``."""
    if spec.name in _CALL_NAMES:
        return _call(op, spec, inputs)
    f = {"sum": fsum, "dot": fdot, "matmul": fmatmul}[op]
    return f(*inputs, spec.name, **spec.kwargs())


def _call(op: str, spec: VariantSpec, inputs: tuple):
    """The real NumPy call: on the inputs rounded first (``+tf32``), widened to the
    accumulator (``@float64``) and its result rounded back to the data's format."""
    fmt = inputs[0].dtype.name
    if spec.input_rounding:
        inputs = tuple(np.asarray(as_format(a, spec.input_rounding)) for a in inputs)
    if spec.accumulate:
        inputs = tuple(np.asarray(as_format(a, spec.accumulate)) for a in inputs)
    with np.errstate(all="ignore"):
        out = np.asarray(get(_CALL_NAMES[spec.name]).numpy_of(inputs))
    return np.asarray(as_format(out, fmt)) if out.dtype.name != fmt else out


def _finished(op: str, cfg: Config, out, n: int, fmt: str):
    """An order's result made the op's: a mean's s / n rounded once to ``fmt`` (unless the
    call already divided), then the cast after, if any."""
    if reduction(op).divides and not cfg.call:
        f = float(out)
        out = out if f == 0 or not math.isfinite(f) else as_format(Fraction(f) / n, fmt)
        out = np.asarray(out).astype(format_info(fmt).dtype)
    if cfg.where == "after":
        out = as_format(out, cfg.cast_format)
    return np.asarray(out)


def _mean_sum(cfg: Config, inputs: tuple):
    """A mean's sum: in its accumulator's format, unrounded (divided before it is rounded to
    the data's format); the exact one exact."""
    spec = cfg.spec
    if spec.name == "exact":
        return fmean(inputs[0], variant="exact"), 1
    wide = tuple(np.asarray(as_format(a, spec.accumulate)) for a in inputs)
    return evaluate("sum", replace(spec, accumulate=None), wide), inputs[0].size


def run(op: str, cfg: Config, arrays, known: Known | None = None):
    """The result of ``cfg`` on ``arrays`` (None where it does not apply); ``known`` (made for
    these arrays): the inputs cast once, and the results known without running."""
    known = Known(op, arrays) if known is None else known
    inputs = known.inputs(cfg)
    n, fmt = arrays[0].size, inputs[0].dtype.name
    wide_mean = (
        reduction(op).divides and not cfg.call and (cfg.spec.accumulate or cfg.spec.name == "exact")
    )
    out = None if wide_mean else known.result(cfg)
    if out is None:
        spec = cfg.spec
        if spec.input_rounding and not wide_mean and _rounds_first(op, cfg):
            inputs, spec = known.rounded(cfg), replace(spec, input_rounding=None)
        try:
            with np.errstate(all="ignore"):
                if wide_mean:
                    out, n = _mean_sum(cfg, inputs)
                else:
                    out = evaluate(op if cfg.call else order_op(op), spec, inputs)
        except (ValueError, NotImplementedError, TypeError):
            return None
    return _finished(op, cfg, out, n, fmt)


def _rounds_first(op: str, cfg: Config) -> bool:
    """Whether ``cfg``'s input rounding only rounds the inputs before the order runs (an
    emulated order; a library's, the tensor cores', takes it as a setting)."""
    return not cfg.call and lookup(order_op(op), cfg.spec.name).library is None


# ----------------------------------------------------------------------------- known results

_PREDICTED = ("float16", "bfloat16", "float32")  # float64 adds their values and products exactly


class Known:
    """The inputs of ``op`` cast once per format, and the result of a configuration that adds
    in float64 where it is known without running it: the order's error bound (gamma_d S, d its
    registry ``depth``, S the sum of |terms|, the products exact in float64) keeps every value
    it can take inside the rounding interval of one value of the inputs' format, the exact
    result (math.fsum) rounded to it. Only orders whose wide accumulator keeps every partial
    sum and rounds once at the end (``OrderSpec.wide_once``) are known; a matmul never."""

    def __init__(self, op: str, arrays):
        self.op, self.arrays = op, arrays
        self._inputs: dict = {}
        self._rounded: dict = {}
        self._exact: dict = {}

    def inputs(self, cfg: Config) -> tuple:
        """The arrays ``cfg`` runs on: rounded to the cast's format first, if any."""
        if cfg.where != "before":
            return self.arrays
        fmt = cfg.cast_format
        if fmt not in self._inputs:
            self._inputs[fmt] = tuple(np.asarray(as_format(a, fmt)) for a in self.arrays)
        return self._inputs[fmt]

    def rounded(self, cfg: Config) -> tuple:
        """The arrays ``cfg`` runs on with its input rounding done, once per rounding (the
        orders' own :func:`~fpexplore.orders.products.round_inputs`)."""
        key = (cfg.where == "before" and cfg.cast_format, cfg.spec.input_rounding)
        if key not in self._rounded:
            arrays = self.inputs(cfg)
            info = format_info(arrays[0].dtype.name)
            self._rounded[key] = round_inputs(cfg.spec.input_rounding, info, *arrays)
        return self._rounded[key]

    def result(self, cfg: Config):
        """The order's result of ``cfg`` (before a mean's division and a cast after it) where
        it is known without running, else None."""
        spec, op = cfg.spec, order_op(self.op)
        if reduction(op).matrix or cfg.call:
            return None
        order = lookup(op, spec.name)
        if spec.name != "exact" and (spec.accumulate != "float64" or op not in order.wide_once):
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
        depth = 0 if spec.name == "exact" else self._depth(order, spec, n, fmt)
        # gamma_d S, doubled: d u / (1 - d u) <= 2 d u while d u <= 1/2 (here <= 1e-3)
        return _rounds_to(total, 4 * depth * 2.0**-53 * abs_total, fmt)

    def _depth(self, order, spec: VariantSpec, n: int, fmt: str) -> int:
        """The most roundings a term goes through in ``spec``, its product's included."""
        p = order.validate(dict(spec.params))  # with the defaults
        # NumPy has no bfloat16 loop: ml_dtypes adds in turn
        plain = order.depth is None or (spec.name, fmt) == ("numpy", "bfloat16") or n < 2
        d = n - 1 if plain else min(order.depth(n, p), n - 1)
        return d + reduction(self.op).products

    def _exact64(self, arrays, rounding) -> tuple:
        """(the exact result rounded to float64, the sum of |terms| rounded to float64, the
        number of terms), or (None, None, n) where a term is not finite."""
        if rounding:
            arrays = tuple(np.asarray(as_format(a, rounding)).astype(np.float64) for a in arrays)
        else:
            arrays = tuple(a.astype(np.float64) for a in arrays)
        with np.errstate(all="ignore"):  # (inf * 0 is NaN: no prediction, no warning)
            terms = arrays[0] * arrays[1] if reduction(self.op).products else arrays[0]
        n = terms.size
        if n * 2.0**-53 > 1e-3 or not np.all(np.isfinite(terms)):
            return None, None, n
        values = terms.ravel().tolist()
        return math.fsum(values), math.fsum(map(abs, values)), n


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


# ----------------------------------------------------------------------------- references


def _exact(op, arrays, fmt: str):
    """The correctly rounded result in ``fmt`` (the inputs' or a wider one: widened exactly)."""
    arrays = tuple(np.asarray(as_format(a, fmt)) if a.dtype.name != fmt else a for a in arrays)
    red = reduction(op)
    if red.divides:
        return fmean(arrays[0], variant="exact")
    if red.matrix:
        return exact_matmul(*arrays)
    return evaluate(op, VariantSpec("exact"), arrays)


def _exact_fraction(op, arrays, index=None) -> Fraction:
    """The exact result (of element ``index`` of a matmul) as a Fraction: slow, for the few
    elements where rounding the correctly rounded result again could go wrong."""
    red = reduction(op)
    if not red.products:
        s = sum((Fraction(float(v)) for v in arrays[0]), Fraction(0))
        return s / arrays[0].size if red.divides else s
    a, b = (arrays[0][index[0]], arrays[1][:, index[1]]) if red.matrix else arrays
    return sum((Fraction(float(u)) * Fraction(float(v)) for u, v in zip(a, b)), Fraction(0))


def reference(op: str, arrays, fmt: str, wide=None):
    """The exact result correctly rounded to ``fmt``: in a wider or the same format from the
    inputs widened exactly; in a narrower one by rounding the correctly rounded result in the
    inputs' format (or ``wide``, the exact result rounded to a wider format; float64 where
    neither of the two formats holds the other) again, except
    where it is a midpoint of ``fmt`` (the only place a second rounding can err: those
    elements are computed exactly as fractions)."""
    src = arrays[0].dtype.name if wide is None else np.asarray(wide).dtype.name
    s_info, d_info = format_info(src), format_info(fmt)
    if d_info.precision >= s_info.precision and d_info.emax >= s_info.emax:
        return wide if wide is not None and src == fmt else _exact(op, arrays, fmt)
    if d_info.precision > s_info.precision or d_info.emax > s_info.emax:  # neither holds the
        wide = np.asarray(_exact(op, arrays, "float64"))  # other (bfloat16, float16): from
        # float64, which holds both (pass 25: rounded through bfloat16, 1 + 2^-9 was 1.0)
    wide = np.asarray(_exact(op, arrays, src) if wide is None else wide)
    out = np.array(as_format(wide, fmt))
    w64, o64 = wide.astype(np.float64), out.astype(np.float64)
    with np.errstate(all="ignore"):
        other = np.where(w64 > o64, next_up(out), next_down(out)).astype(np.float64)
        mid = np.isfinite(o64) & np.isfinite(other) & (2 * (w64 - o64) == other - o64)
        mid &= w64 != o64
    for idx in zip(*np.nonzero(np.atleast_1d(mid))):
        exact = _exact_fraction(op, arrays, idx if reduction(op).matrix else None)
        value = np.asarray(as_format(exact, fmt))[()]
        if out.ndim:
            out[idx] = value
        else:
            out = np.asarray(value)
    return out[()] if out.ndim == 0 else out


# ----------------------------------------------------------------------------- distance


def distance(observed: np.ndarray, got):
    """|ulps| from ``observed`` to ``got`` per element, in the observation's format (``got``
    widened exactly where narrower; -0.0 and +0.0 one apart, NaN against a number the
    sentinel), or None where ``got`` is in a wider format than the observation."""
    got = np.asarray(got)
    o_info, g_info = format_info(observed.dtype), format_info(got.dtype)
    if g_info.name != o_info.name:
        if g_info.precision > o_info.precision or g_info.emax > o_info.emax:
            return None
        got = np.asarray(as_format(got, o_info.name))
    d = clamp_ulps(ulp_distance(observed, got, nan="sentinel"))
    signs = np.signbit(np.asarray(observed, np.float64)) != np.signbit(got.astype(np.float64))
    zeros = (np.asarray(observed, np.float64) == 0) & (got.astype(np.float64) == 0) & signs
    return np.where(zeros, 1.0, d)


# ----------------------------------------------------------------------------- factors, prior


def _accumulator(cfg: Config, in_fmt: str):
    """The accumulator a configuration adds in (a library call: its own, fixed)."""
    if cfg.spec.accumulate:
        return cfg.spec.accumulate
    if cfg.call:
        return FIXED
    fmt = cfg.cast_format if cfg.where == "before" else in_fmt
    spec = orders_of("dot").get(cfg.spec.name) or lookup("sum", cfg.spec.name)
    if spec.library is not None:
        return FIXED
    return spec.float16_accumulate if fmt == "float16" and spec.float16_accumulate else fmt


def factors(cfg: Config, in_fmt: str) -> dict:
    """A configuration's value of each factor a cause can be (None: not a setting of it)."""
    tc = cfg.spec.name == TENSOR_CORE
    params = dict(cfg.spec.params)
    return {
        "natural": cfg.spec.accumulate is None,  # (not a factor: no accumulator set)
        "tensor_core": (params.get("arch"), cfg.spec.input_rounding) if tc else None,
        "cast": cfg.where,
        "order": None if tc else (cfg.spec.name, cfg.seedless()),
        "nondeterminism": params.get("seed"),
        "accumulator": None if tc else _accumulator(cfg, in_fmt),
        "input_rounding": None if tc else cfg.spec.input_rounding,
        "fma": None if tc or cfg.call else cfg.spec.fma,
    }


def differing(fa: dict, fb: dict) -> frozenset:
    """The factors in which two configurations (their :func:`factors`) differ: a library's
    own (fixed) setting differs from none of another order's; the tensor cores bring their
    own order, rounding and accumulator; a cast brings the accumulator of its format."""
    same_order = fa["order"] == fb["order"]
    diff = {k for k in fa if fa[k] != fb[k] and (same_order or FIXED not in (fa[k], fb[k]))}
    if fa["nondeterminism"] is not None and fb["nondeterminism"] is not None:
        diff.add("nondeterminism")  # two seeds are two draws, equal or not
    if "tensor_core" in diff:
        diff &= {"tensor_core", "cast", "nondeterminism"}
    if "cast" in diff and fa["natural"] and fb["natural"]:
        diff.discard("accumulator")
    return frozenset(diff - {"natural"})


_ROUNDING_BITS = {None: 0.4, "tf32": 3.3, "bfloat16": 3.3}


def factor_bits(op: str, factor: str, value, in_fmt: str) -> float:
    """The bits that name a factor's value: -log2 of its prior probability."""
    if value is None or value == FIXED:
        return 0.0
    if factor in ("order", "tensor_core"):
        orders = orders_of(order_op(op))
        base = math.log2(sum(s.listed for s in orders.values()))
        if factor == "tensor_core":  # (arch, the format it reads float32 data in)
            arch_bits = math.log2(len(orders[TENSOR_CORE].grid))
            return base + arch_bits + _ROUNDING_BITS.get(value[1], 5.0)
        name, params = value
        if name in _CALL_NAMES:
            return 1.0
        spec = orders.get(name)
        if spec is None or not spec.listed:  # a revealed tree: measured, not guessed
            return 0.0
        defaults = spec.params
        changed = [k for k, v in params if k in defaults and defaults[k][0] != v]
        own = 1.0 if spec.library is not None else 0.0  # another library's own loop
        return (
            base
            + own
            + spec.prior_bits
            + sum(1 + math.log2(max(len(spec.grid), 2)) for _ in changed)
        )
    if factor == "nondeterminism":
        return math.log2(len(SEEDS))
    if factor == "accumulator":
        return 0.5 if value == in_fmt or format_info(value).precision <= 24 else 3.3
    if factor == "input_rounding":
        return _ROUNDING_BITS.get(value, 5.0)
    return 1.0  # fma on or off, a cast before or after


def cost(op: str, cfg: Config, in_fmt: str) -> float:
    """The prior cost of a configuration in bits: its description length (the order family,
    log2 of its parameter grid per parameter set, the seed, each setting)."""
    f = factors(cfg, in_fmt)
    return sum(factor_bits(op, k, v, in_fmt) for k, v in f.items() if k != "natural")
