"""Formula arithmetic shared by the composite ops (cdist, adam_step, variance, softmax,
logsumexp): elementwise IEEE operations rounded once to a storage format
(:class:`RoundedArith`, as a framework that writes every intermediate tensor in that format
does), the same in an accumulator format (``acc_add`` ... ``acc_div_count``), and the op-spec
plumbing of the one-array reductions (``x_inputs``, ``caller``, ``referee``). float16 and
bfloat16 are computed in float64 and rounded once, which is the correctly rounded result
since 53 >= 2p + 2."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from .._registry import SMALL_DTYPES
from ..data import generate
from ..exact import fma as exact_fma
from ..formats import FormatInfo, as_format, format_info, round_f64
from ..numerics import odd_add64, round_rational, ziv_decide
from ..orders.arith import accumulator_format
from .opspec import pick, with_settings
from .variant import Settings, order_of

__all__ = [
    "HELD_PRECISION",
    "SUMMED",
    "RoundedArith",
    "acc_add",
    "acc_div",
    "acc_div_count",
    "acc_mul",
    "acc_sub",
    "accumulator_of",
    "check_held_fits",
    "check_held_order",
    "check_held_precision",
    "caller",
    "referee",
    "round_ratio",
    "to_acc",
    "x_inputs",
    "ziv_round",
]

# a formula variant whose sums take an order and an accumulator: "two-pass(order=pairwise)@float32"
SUMMED = Settings(order_of("sum"), order_of="sum", accumulate=True)
HELD_PRECISION = 25  # float64 arithmetic rounds correctly to precision p where 53 >= 2p + 2

_F64 = np.dtype(np.float64)


class RoundedArith:
    """Elementwise IEEE operations rounded once to the format ``info``. ``sqrt``: "ieee"
    (correctly rounded) or a callable taking and returning an array of the format (a
    library's own square root, e.g. torch's)."""

    def __init__(self, info: FormatInfo, sqrt="ieee"):
        self.info = info
        self.native = info.name in ("float32", "float64")  # NumPy's own IEEE loops
        self.sqrt_with = sqrt

    def const(self, value: float) -> np.ndarray:
        """A Python float rounded once to the format (0-d array)."""
        return np.asarray(round_f64(np.asarray(float(value), dtype=_F64), self.info))

    def _apply(self, f, *args):
        with np.errstate(all="ignore"):
            if self.native:
                return f(*args)
            return round_f64(np.asarray(f(*(np.asarray(a, dtype=_F64) for a in args))), self.info)

    def add(self, a, b):
        return self._apply(np.add, a, b)

    def sub(self, a, b):
        return self._apply(np.subtract, a, b)

    def mul(self, a, b):
        return self._apply(np.multiply, a, b)

    def div(self, a, b):
        return self._apply(np.divide, a, b)

    def fma(self, a, b, c):
        """``a*b + c`` rounded once (:func:`fpexplore.fma`; a held format of precision <= 26
        and emax <= 511: the product exact in float64, the sum rounded to odd there, then
        once to the format)."""
        if self.info.storage:
            return exact_fma(a, b, c)
        a, b, c = (np.asarray(v, dtype=_F64) for v in (a, b, c))
        with np.errstate(all="ignore"):
            p, c = np.broadcast_arrays(a * b, c)
            return round_f64(odd_add64(p, c), self.info)

    def sqrt(self, a):
        if self.sqrt_with == "ieee":
            return self._apply(np.sqrt, a)
        a = np.asarray(a, dtype=self.info.dtype)
        out = np.asarray(self.sqrt_with(a))
        if out.shape != a.shape or out.dtype != self.info.dtype:
            raise TypeError(
                f"the sqrt callable returned {out.dtype} of shape {out.shape}, "
                f"expected {self.info.dtype} of shape {a.shape}"
            )
        return out


# ------------------------------------------------------------- arithmetic in an accumulator


def accumulator_of(accumulate, info: FormatInfo) -> FormatInfo:
    return accumulator_format(accumulate, info)


# --------------------------------------------------------------- arithmetic in a format


def to_acc(x: np.ndarray, acc: FormatInfo) -> np.ndarray:
    """``x`` rounded to acc (held in its dtype: FP8's float32 too)."""
    return x if x.dtype == acc.dtype and acc.storage else np.asarray(as_format(x, acc.name))


def _native(acc: FormatInfo) -> bool:
    return acc.name in ("float32", "float64")


def _binary(op, a, b, acc: FormatInfo):
    """Correctly rounded ``a op b`` in acc (operands are values of acc)."""
    with np.errstate(all="ignore"):
        if _native(acc):
            return np.asarray(op(np.asarray(a, acc.dtype), np.asarray(b, acc.dtype)))
        # p <= 25: the float64 result is exact or rounded innocuously (53 >= 2p + 2); the
        # format's own overflow (E4M3: NaN, FP6 and FP4: max) and subnormals from as_format
        r = op(np.asarray(a).astype(_F64), np.asarray(b).astype(_F64))
        return np.asarray(as_format(np.asarray(r), acc.name))


def acc_sub(a, b, acc):
    return _binary(np.subtract, a, b, acc)


def acc_add(a, b, acc):
    return _binary(np.add, a, b, acc)


def acc_mul(a, b, acc):
    return _binary(np.multiply, a, b, acc)


def acc_div(a, b, acc):
    return _binary(np.divide, a, b, acc)


def acc_div_count(v, n: int, acc: FormatInfo):
    """``v / n`` for a scalar v of acc and an exact integer n >= 1, correctly rounded."""
    f = float(np.asarray(v).astype(_F64))
    if not math.isfinite(f) or f == 0:
        return acc.dtype.type(f)  # nan, ±inf, ±0 divided by a positive count
    if not acc.storage:  # FP8, FP6, FP4, fpx.format's: their own subnormals and largest value
        return np.asarray(as_format(Fraction(f) / n, acc.name))[()]
    num, den = f.as_integer_ratio()
    r = round_rational(num, den * n, acc.precision, acc.emin, acc.emax)
    return np.asarray(r).astype(acc.dtype)[()]


def check_held_order(op: str, order: str, acc: FormatInfo) -> None:
    """ValueError naming ``order`` (a sum order's name) where the held format ``acc`` (FP8,
    FP6, FP4, fpx.format's) is summed in an order that does not round each addition to it
    (the sum's own message named ``accumulate``, which nobody gave)."""
    from ..orders.registry import orders_for

    if acc.storage:
        return
    rounding = [n for n in orders_for("sum", acc.name) if n != "exact"]
    if order not in rounding:
        raise ValueError(
            f"{op}: order {order!r} does not round each addition to {acc.name}, the format "
            f"{op} computes in; the orders that do: {', '.join(rounding)}"
        )


def check_held_precision(op: str, acc: FormatInfo, why: str = "") -> None:
    """ValueError where ``op`` would compute in the held format ``acc`` past precision 25,
    where float64 arithmetic no longer rounds correctly to it (``why``: what to do)."""
    if not acc.storage and acc.precision > HELD_PRECISION:
        raise ValueError(
            f"{op}: {acc.name} has precision {acc.precision}: its arithmetic is emulated "
            f"in float64, correctly rounded up to precision {HELD_PRECISION} (53 >= 2p + 2)" + why
        )


def held_fits(info: FormatInfo, emax: int = 511) -> bool:
    """Whether an op computes in ``info`` in float64: a storage format, or a held one up to
    precision 25 and ``emax`` (511: float64 holds every product of its values)."""
    return info.storage or (info.precision <= HELD_PRECISION and info.emax <= emax)


def check_held_fits(op: str, info: FormatInfo, emax: int = 511, why: str = "") -> None:
    """ValueError naming ``info`` where not :func:`held_fits`."""
    if not held_fits(info, emax):
        raise ValueError(
            f"{op}: {info.name} (precision {info.precision}, emax {info.emax}) is not emulated: "
            f"{op} computes a held format in float64 up to precision {HELD_PRECISION} and "
            f"emax {emax}{why}"
        )


# ------------------------------------------------ correct rounding in any format, from exact values


def round_ratio(num: int, den: int, info: FormatInfo) -> float:
    """num / den > 0 correctly rounded to the format (FP8, FP6, FP4, fpx.format's: with its
    own subnormals and overflow, by fpx.as_format)."""
    if info.storage:
        return round_rational(num, den, info.precision, info.emin, info.emax)
    return float(np.asarray(as_format(Fraction(num, den), info.name)))


def ziv_round(v, err_exp: int, info: FormatInfo) -> float | None:
    """One step of Ziv's loop (:func:`fpexplore.numerics.ziv_decide`) in any format: both ends
    of ``v ± 2**err_exp`` (an mpmath mpf tuple) rounded to nearest-even, the common result or
    None. FP8, FP6, FP4 and fpx.format's round by fpx.as_format from exact rationals, with
    their own subnormals and overflow (NaN where both ends overflow to E4M3's NaN)."""
    if info.storage:
        return ziv_decide(v, err_exp, info.precision, info.emin, info.emax)
    sign, man, e, bc = v
    if not man or err_exp >= e + bc - 2:  # (the interval may hold 0: not decided)
        return None
    mid, d = Fraction(man) * Fraction(2) ** e, Fraction(2) ** err_exp
    ends = [float(np.asarray(as_format(-q if sign else q, info.name))) for q in (mid - d, mid + d)]
    if math.isnan(ends[0]) and math.isnan(ends[1]):
        return math.nan
    return ends[0] if ends[0] == ends[1] else None


# ------------------------------------------------------------- the one-array reductions' specs


def x_inputs(n, fmt, distribution, seed, params):
    """The array ``x`` (FP8, FP6 and FP4: of ml_dtypes' type)."""
    x = generate(distribution, n, fmt, seed)
    return {"format": fmt, "x": x.astype(SMALL_DTYPES[fmt]) if fmt in SMALL_DTYPES else x}


def caller(function, keys: tuple, fixed_order: tuple = (), held_function=None):
    """call(name, settings, inputs, params) of a stats op: the op-wide params in ``keys``
    (``order`` not for the variants in ``fixed_order``, neither ``order`` nor ``accumulate`` for
    ``exact``), then the spec's settings (they win); ``held_function(x, fmt, variant=...)``
    for the float64 values of a format of fpx.format's (the inputs name it)."""

    def call(name, settings, inputs, params):
        kw = pick(params, keys)
        if name in fixed_order or name == "exact":
            kw.pop("order", None)  # their order is part of the variant
        if name == "exact":
            kw.pop("accumulate", None)  # rounded once from the exact value
        kw = with_settings(kw, settings, "sum")
        if held_function is not None and format_info(inputs["format"]).user_defined:
            return held_function(inputs["x"], inputs["format"], variant=name, **kw)
        return function(inputs["x"], variant=name, **kw)

    return call


def referee(function, keys: tuple = (), held_function=None):
    """reference(inputs, params, fmt): the exact variant, with the op-wide params in ``keys``
    (variance's ``ddof``), of ``held_function`` as :func:`caller` says."""

    def reference(inputs, params, fmt):
        kw = pick(params, keys)
        if held_function is not None and format_info(inputs["format"]).user_defined:
            return held_function(inputs["x"], inputs["format"], variant="exact", **kw)
        return function(inputs["x"], variant="exact", **kw)

    return reference
