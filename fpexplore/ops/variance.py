"""``variance``: two-pass, one-pass (textbook), Welford and NumPy's np.var, each evaluated
exactly as written in an accumulator format, next to an ``exact`` variant (exact rationals).
The arithmetic model is the one of :mod:`fpexplore.ops.softmax`'s module docstring.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import replace
from fractions import Fraction
from typing import TYPE_CHECKING

import numpy as np

from .. import checks
from ..exact import ExactAccumulator, accumulate_dot64
from ..formats import FormatInfo, as_format, coerce, format_info, format_name
from ..held import as_held, has_nan, held, is_held_data
from ..numerics import (
    nudge_to_odd_scalar,
    round_rational,
    round_to_precision,
    two_product,
)
from ..orders.arith import accumulator_format
from ..orders.registry import kernel_needs
from ..orders.registry import lookup as _order_lookup
from ..orders.summation import sum as _fsum
from .formula import (
    HELD_PRECISION,
    SUMMED,
    acc_div_count,
    acc_mul,
    acc_sub,
    accumulator_of,
    caller,
    check_held_order,
    check_held_precision,
    referee,
    to_acc,
    x_inputs,
)
from .opspec import OpSpec, OpTable
from .variant import EXACT, FORMULA, LIBRARY, Settings, Variant, check_order

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

__all__ = ["HELD_VARIANTS", "OP_TABLE", "variance", "variance_held"]

_F64 = np.dtype(np.float64)

_VARIANCE_VARIANTS = (
    Variant("two-pass", "mean = sum(x)/n, then sum((x - mean)**2)/(n - ddof)", FORMULA),
    Variant(
        "one-pass",
        "textbook (sum(x*x) - sum(x)**2/n)/(n - ddof): cancels for large means",
        FORMULA,
    ),
    Variant("welford", "Welford's update of the running mean and M2", FORMULA),
    Variant("numpy", "np.var (numpy/_core/_methods.py _var), NumPy >= 2.3 sums", LIBRARY),
    Variant("exact", "correctly rounded variance of the exact values", EXACT),
)
# ----------------------------------------------------------------------------- variance


def variance(
    x: ArrayLike,
    *,
    variant: str = "numpy",
    ddof: int = 0,
    accumulate: str | None = None,
    order: str | None = None,
) -> np.generic:
    """Variance of all elements of ``x``: ``sum((x - mean)**2) / (n - ddof)``.

    Parameters
    ----------
    x : array_like of one of ``fpx.FORMATS`` (flattened in C order), or an OCP FP8, FP6 or
        FP4 array of ml_dtypes' type (variants two-pass, one-pass and exact:
        :func:`variance_held`, which an FP8, FP6, FP4 or ``fpx.format`` ``accumulate`` uses too)
    variant : str
        ``"two-pass"``: ``s = sum(x)``; ``m = s / n``; ``d[i] = x[i] - m``;
        ``q[i] = d[i] * d[i]``; ``var = sum(q) / (n - ddof)``.

        ``"one-pass"``: the textbook one-pass formula (Chan, Golub & LeVeque 1983):
        ``s1 = sum(x)``; ``s2 = sum(x[i] * x[i])``; ``var = (s2 - (s1*s1)/n) / (n - ddof)``.
        Cancels catastrophically when the mean is large against the spread; the result can
        even be negative (it is not clamped).

        ``"welford"``: ``mean = M2 = 0``; for k = 1..n: ``delta = x - mean``;
        ``mean = mean + delta / k``; ``M2 = M2 + delta * (x - mean)``; ``var = M2/(n - ddof)``
        (Welford 1962, in Knuth's form). Compiled with numba on first use.

        ``"numpy"``: exactly what ``np.var(x)`` computes (``_var`` in
        ``numpy/_core/_methods.py``): ``s = np.sum(x)`` (order ``"numpy"``; float16 summed in
        float32); ``mean = fmt(float64(s) / n)`` (a float64 division cast back, as
        ``true_divide(..., out=, casting="unsafe")`` does); ``d = x - mean``; ``d*d``;
        ``ret = np.sum(d*d)``; ``var = fmt(float64(ret) / (n - ddof))``. With ``accumulate``
        it is ``np.var(x, dtype=accumulate)``: the sum of the cast input uses 8192-element
        buffered chunks (order ``"numpy-chunked"``). Equals ``np.var(np.ravel(x, "K"))``
        (so ``np.var(x)`` for C- or Fortran-contiguous arrays and 1-D views), verified bit for
        bit in the tests; n - ddof <= 0 gives NumPy's nan/inf.

        ``"exact"``: the exact variance of the input values, ``(n*sum(x*x) - sum(x)**2) /
        (n*(n - ddof))`` in integer arithmetic, rounded once. Any NaN or infinity gives NaN.
    ddof : int >= 0
        Delta degrees of freedom (1 for the sample variance). Where ``n - ddof <= 0`` the
        variance is undefined and every variant but ``"numpy"`` returns NaN (an empty array
        included) with a RuntimeWarning, as ``np.var`` warns; ``fpx.compare`` refuses it.
    accumulate : format name, optional
        Format of all intermediate arithmetic (default: x's format); see the module docstring.
        ``"numpy"`` needs it at least as wide as x. ``"exact"`` refuses it.
    order : sum order, optional
        The summation order of ``"two-pass"`` and ``"one-pass"`` (default ``"sequential"``);
        the other variants have a fixed order and refuse this argument.

    Returns
    -------
    numpy.generic
        A NumPy scalar of x's format.
    """
    OP_TABLE.lookup("variance", variant)
    kw = dict(ddof=ddof, accumulate=accumulate, order=order)
    if (h := held((x,), "variance")) is not None:  # FP8, FP6, FP4 data: in their format
        (wide,), name = h
        return variance_held(wide, name, variant, **kw)
    given = x
    (x,), info = coerce(x, what="variance")
    if is_held_data(format_name(accumulate)):  # an FP8, FP6, FP4 or fpx.format accumulator
        return variance_held(x, info.name, variant, **kw)
    ddof, order = _checked(variant, ddof, order, accumulate)
    acc = accumulator_of(accumulate, info)
    if variant == "numpy":  # (a byte-swapped array: np.sum's cast buffer, chunked)
        chunked = bool(_order_lookup("sum", "numpy").buffered(given, "variance"))
        return _numpy_var(x, info, acc, ddof, chunked)
    x = np.ravel(x)
    n = x.size
    if n - ddof <= 0:
        return _undefined(n, ddof, info.name)
    if variant == "exact":
        return _exact_var(x, info, ddof)
    xa = to_acc(x, acc)
    if variant == "welford":
        var = _welford(xa, acc, ddof)
    else:
        var = _formula(xa, variant, order, acc, accumulate, ddof)
    return np.asarray(as_format(np.asarray(var, dtype=acc.dtype), info.name))[()]


def _formula(xa, variant: str, order: str, acc: FormatInfo, summed, ddof: int):
    """two-pass or one-pass of the values ``xa`` of acc, each operation rounded once to acc,
    the sums in ``order`` accumulating in ``summed`` (None: xa's format)."""
    n = xa.size
    if variant == "two-pass":
        mean = acc_div_count(_fsum(xa, order, accumulate=summed), n, acc)
        d = acc_sub(xa, mean, acc)
        return acc_div_count(_fsum(acc_mul(d, d, acc), order, accumulate=summed), n - ddof, acc)
    s1 = _fsum(xa, order, accumulate=summed)
    s2 = _fsum(acc_mul(xa, xa, acc), order, accumulate=summed)
    t = acc_div_count(acc_mul(s1, s1, acc), n, acc)
    return acc_div_count(acc_sub(s2, t, acc), n - ddof, acc)


HELD_VARIANTS = ("two-pass", "one-pass", "exact")  # those that compute in held formats


def variance_held(
    x: np.ndarray,
    name: str,
    variant: str = "two-pass",
    *,
    ddof: int = 0,
    accumulate: str | None = None,
    order: str | None = None,
) -> np.generic:
    """:func:`variance` of the values ``x`` of the format ``name`` (FP8, FP6 or FP4 values
    in float32; a format of ``fpx.format``'s in float64; or an array of ``fpx.FORMATS``),
    computing in ``accumulate`` (default: ``name``) where one of the two is such a held
    format: each operation rounded once to it (float64 arithmetic, exact or rounded
    innocuously for precision <= 25, then rounded with the format's own subnormals and
    overflow), the sums in ``order`` (one that rounds each addition: sequential, reverse,
    pairwise, blocked); ``exact`` rounds the exact variance once to ``name``. The result in
    ``name``'s ml_dtypes type (float64 for fpx.format's; a NumPy scalar of ``fpx.FORMATS``)."""
    OP_TABLE.lookup("variance", variant)
    if variant not in HELD_VARIANTS:
        raise ValueError(
            f"variance: variant {variant!r} does not compute in {name}"
            + (f" with accumulate={accumulate!r}" if accumulate is not None else "")
            + " (Welford's kernel and np.var round as IEEE formats do); the variants that do: "
            + ", ".join(HELD_VARIANTS)
        )
    ddof, order = _checked(variant, ddof, order, accumulate)
    info = format_info(name)
    acc = info if accumulate is None else format_info(format_name(accumulate))
    check_held_precision("variance", acc)
    if variant != "exact":
        check_held_order("variance", order, acc)
    x = np.ravel(x)
    if x.size - ddof <= 0:
        return _undefined(x.size, ddof, name)
    if variant == "exact":
        return _held_out(_exact_held(x, ddof), name)
    xa = to_acc(x, acc)
    var = _formula(xa, variant, order, acc, acc.name, ddof)
    return _held_out(var, name)


def _checked(variant: str, ddof, order, accumulate) -> tuple[int, str]:
    """``ddof`` and ``order`` checked (the sum order's name); the exact variant refuses
    ``accumulate``."""
    ddof = checks.integer("ddof", ddof, 0)
    order = _check_order(order, variant, ("two-pass", "one-pass"))
    if variant == "exact" and accumulate is not None:
        raise ValueError(
            "variance: `accumulate` does not apply to variant 'exact' (it rounds the exact "
            f"variance once), got accumulate={accumulate!r}"
        )
    return ddof, order


def _held_out(value, name: str) -> np.generic:
    """A result rounded to ``name``: of its ml_dtypes type where it is held, else its dtype."""
    if is_held_data(name):
        return as_held(value, name)
    return np.asarray(as_format(value, name))[()]


def _undefined(n: int, ddof: int, name: str):
    """NaN where n - ddof <= 0, with a RuntimeWarning as np.var's ("Degrees of freedom <= 0
    for slice"); FP6 and FP4, which have no NaN, refuse it."""
    said = f"variance: n - ddof = {n - ddof} <= 0 (n={n}, ddof={ddof}): the variance is "
    if is_held_data(name) and not has_nan(name):
        raise ValueError(said + f"undefined: NaN, which {name} cannot hold (no NaN)")
    warnings.warn(said + "undefined, NaN", RuntimeWarning, stacklevel=3)
    return _held_out(np.nan, name)


def _check_order(order, variant: str, uses: tuple) -> str:
    if order is None:
        return "sequential"
    if variant not in uses:
        raise ValueError(
            f"variant {checks.shown(variant)} has a fixed order; `order` applies to "
            f"{', '.join(uses)}"
        )
    check_order("sum", order, "variance")  # (pass 40: "unknown order ... for sum")
    return _order_lookup("sum", order).name


# ----------------------------------------------------------------------------- numpy


def _numpy_var(x: np.ndarray, info: FormatInfo, acc: FormatInfo, ddof: int, chunked: bool):
    if acc.precision < info.precision or acc.emax < info.emax:
        raise ValueError(
            f"variant 'numpy' (np.var(x, dtype=...)) needs accumulate at least as wide as "
            f"{info.name}, got {acc.name}"
        )
    (x,) = _order_lookup("sum", "numpy").laid_out((x,), "variance")  # np.sum's reading of x
    n = x.size
    if n - ddof <= 0:  # (pass 38: np.var's inf without its warning)
        warnings.warn(
            f"variance: n - ddof = {n - ddof} <= 0 (n={n}, ddof={ddof}): the variance is "
            "undefined; np.var's value as it computes it (inf or NaN), as np.var warns",
            RuntimeWarning,
            stacklevel=3,
        )
    dt = acc.dtype
    if acc.name == info.name:  # umr_sum(arr): no cast, one pairwise pass (byte-swapped: cast)
        s = _fsum(x, "numpy-chunked" if chunked else "numpy")
    else:  # umr_sum(arr, dtype=acc): the cast goes through 8192-element buffers
        s = _fsum(to_acc(x, acc), "numpy-chunked")
    with np.errstate(all="ignore"):
        # true_divide(arrmean, intp(n), out=arrmean, casting="unsafe"): float64 loop, cast back
        mean = np.asarray(np.float64(s) / np.float64(n)).astype(dt)
        d = acc_sub(to_acc(x, acc), mean, acc)  # subtract(arr, arrmean): acc loop
        ret = _fsum(acc_mul(d, d, acc), "numpy")  # square, then umr_sum (already acc: no cast)
        # ret.dtype.type(ret / intp(max(n - ddof, 0))): a float64 division, cast back
        var = dt.type(np.float64(ret) / np.float64(max(n - ddof, 0)))
    return np.asarray(as_format(np.asarray(var), info.name))[()]


# ----------------------------------------------------------------------------- welford

_div_nb = None  # numba versions, compiled on first use
_welford_nb = None


def _div_py(a, k, p, emin, vmax):
    """a / k (k an exact integer < 2**53) correctly rounded at precision p: the float64
    quotient is turned into the round-to-odd quotient with an exact remainder (TwoProduct),
    then rounded once (p + 2 <= 53 makes that correct; Boldo & Melquiond 2008)."""
    q = a / k
    if p == 0 or q == 0.0 or not math.isfinite(q):
        return q
    # exact remainder a - q*k (Dekker's TwoProduct of q*k; a - ph is exact by Sterbenz)
    ph, pl = two_product(q, k)
    rem = (a - ph) - pl
    # k > 0: the exact quotient lies on rem's side of q; step to the odd neighbour there
    return round_to_precision(nudge_to_odd_scalar(q, rem), p, emin, vmax)


def _welford_py(x, ddof, p, emin, vmax):
    mean = 0.0
    m2 = 0.0
    n = x.size
    for i in range(n):
        xi = x[i]
        delta = round_to_precision(xi - mean, p, emin, vmax)
        mean = round_to_precision(mean + _div_nb(delta, float(i + 1), p, emin, vmax), p, emin, vmax)
        t = round_to_precision(xi - mean, p, emin, vmax)
        m2 = round_to_precision(m2 + round_to_precision(delta * t, p, emin, vmax), p, emin, vmax)
    return _div_nb(m2, float(n - ddof), p, emin, vmax)


def welford_kernel():
    """The numba-compiled Welford loop (created on first use; fpexplore.warmup asks too)."""
    global _div_nb, _welford_nb
    if _welford_nb is None:
        # numba: njit(cache=True), tolerant; importing _kernels registers numerics.JITTABLE
        from ..orders._kernels import cached_njit

        _div_nb = cached_njit(_div_py)
        _welford_nb = cached_njit(_welford_py)
    return _welford_nb


def _welford(xa: np.ndarray, acc: FormatInfo, ddof: int):
    welford_kernel()
    # float64 arithmetic rounded to acc after each operation: exact or innocuous for p <= 24
    p = 0 if acc.name == "float64" else acc.precision
    with np.errstate(invalid="ignore"):  # NaN bit patterns of the 16-bit formats
        x64 = np.ascontiguousarray(xa, dtype=_F64)
    return _welford_nb(x64, ddof, p, acc.emin, acc.max)


# ----------------------------------------------------------------------------- exact var


def _exact_var(x: np.ndarray, info: FormatInfo, ddof: int):
    if not np.isfinite(x).all():
        return info.dtype.type(np.nan)
    num, den = _exact_ratio(x, info.name == "float64", ddof)
    if num == 0:
        return info.dtype.type(0.0)
    value = round_rational(num, den, info.precision, info.emin, info.emax)
    return np.asarray(value).astype(info.dtype)[()]


def _exact_ratio(x: np.ndarray, wide: bool, ddof: int) -> tuple[int, int]:
    """The exact variance of the values ``x`` as integers num / den (``wide``: float64
    values; else values that float32 holds exactly, whose products float64 holds)."""
    n = x.size
    s = ExactAccumulator()
    if wide:
        x64 = np.ascontiguousarray(x, dtype=_F64)
        s.add64(x64)
        q, _ = accumulate_dot64(x64, x64)
    else:
        x64 = x.astype(_F64)
        s.add32(x.astype(np.float32))
        q = ExactAccumulator()
        q.add64(x64 * x64)  # products of <= 24-bit values are exact in float64
    N1, K1 = s.total()
    NQ, KQ = q.total()
    # var = (n * Q - S**2) / (n * (n - ddof)) with Q = NQ 2**KQ, S = N1 2**K1
    K = min(KQ, 2 * K1)
    num = n * (NQ << (KQ - K)) - ((N1 * N1) << (2 * K1 - K))
    den = n * (n - ddof)
    if num != 0:
        if K >= 0:
            num <<= K
        else:
            den <<= -K
    return num, den


def _exact_held(x: np.ndarray, ddof: int):
    """The exact variance of held values (float32: FP8, FP6, FP4; float64: fpx.format's) as
    a Fraction, NaN where one is NaN or infinite."""
    if not np.isfinite(x).all():
        return np.nan
    num, den = _exact_ratio(x, x.dtype == _F64, ddof)
    return Fraction(num, den)


def _reference(inputs, params, fmt):
    """The exact variance; compare refuses n - ddof <= 0 (pass 32: np.var's inf measured
    against a NaN reference, the other rows "0 ulps" from it)."""
    n, ddof = int(np.size(inputs["x"])), params.get("ddof", 0)
    if n - ddof <= 0:
        raise ValueError(
            f"variance: ddof={ddof} with n={n} values: n - ddof <= 0, the variance is "
            "undefined (np.var gives inf or nan with a warning); give ddof < n"
        )
    return referee(variance, ("ddof",), variance_held)(inputs, params, fmt)


def _np_var(inputs, params):
    with np.errstate(all="ignore"), warnings.catch_warnings():  # (ddof >= n: refused after)
        warnings.simplefilter("ignore", RuntimeWarning)
        x = inputs["x"]  # (np.var takes a C long: past n, every ddof divides by 0)
        return np.var(x, ddof=min(params.get("ddof", 0), x.size + 1))


# what each variant's spec may say: "two-pass(order=pairwise)@float32"
_VARIANCE_SETTINGS = {
    "two-pass": replace(SUMMED, held=True),
    "one-pass": replace(SUMMED, held=True),
    "welford": Settings(accumulate=True),
    "numpy": Settings(accumulate=True),
}


def _available(fmt: str) -> list[str]:
    """Every variant; of held data (FP8, FP6, FP4, fpx.format's) those that compute in it
    (none past precision 25, where float64 arithmetic no longer rounds correctly to it)."""
    if is_held_data(fmt):
        return list(HELD_VARIANTS) if format_info(fmt).precision <= HELD_PRECISION else []
    return [v.name for v in _VARIANCE_VARIANTS]


def _variance_kernels(name, kw, info):
    acc = kw.get("accumulate")
    a = format_info(acc) if is_held_data(acc) else accumulator_format(acc, info)
    if name in ("two-pass", "one-pass"):
        summed = acc if a.storage else a.name  # (held: the sums accumulate in it)
        return kernel_needs("sum", kw.get("order") or "sequential", a, summed, kw)
    if name == "welford":
        return [("_welford", np.dtype(np.float64), None)]
    if name == "numpy":
        first = "numpy" if a.name == info.name else "numpy-chunked"
        return kernel_needs("sum", first, a, None, kw) + kernel_needs("sum", "numpy", a, None, kw)
    return []


OP_TABLE = OpTable(
    OpSpec(
        "variance",
        "variance of all elements, sum((x - mean)**2) / (n - ddof)",
        _VARIANCE_VARIANTS,
        inputs=x_inputs,
        call=caller(
            variance, ("order", "accumulate", "ddof"), ("welford", "numpy", "exact"), variance_held
        ),
        keywords={"order": None, "accumulate": None, "ddof": checks.int_check("ddof", 0)},
        reference=_reference,
        available=_available,
        numpy=_np_var,
        numpy_label="np.var",
        default_variants=("two-pass", "one-pass", "welford", "numpy"),
        settings=_VARIANCE_SETTINGS,
        kernels=_variance_kernels,
        rank=30,
    ),
)
