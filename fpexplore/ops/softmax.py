"""Reductions with formula variants: variance, softmax and logsumexp.

All three reduce over every element of ``x`` (flattened in C order; ``softmax`` keeps the
shape, like ``scipy.special.softmax(x, axis=None)``). Inputs follow the package's coercion
rules (one of ``fpx.FORMATS``; integer arrays raise TypeError). Results are in x's format.

Arithmetic of the formula variants
----------------------------------
Every operation is rounded to nearest-even in the *accumulator* format ``accumulate``
(default: x's format); x is first rounded to it (exact when it is wider). Elementwise
``+ - * /`` are correctly rounded (float16/bfloat16: computed in float64 and rounded once,
which is innocuous for p <= 25 bits). ``/ n`` divides by the exact integer count, correctly
rounded. Sums are ``fpx.sum(values, order, accumulate=accumulate)`` with ``order`` one of
``fpx.orders("sum")`` (default ``"sequential"``; ``"numpy"`` gives what the same formula
written with ``np.sum`` computes, including NumPy's float32 accumulator for float16 data
when ``accumulate`` is None). ``exp`` and ``log`` are NumPy's ufuncs in the accumulator
format (the elementwise ``"numpy"`` variant). The result is rounded once to x's format.
FP8, FP6 and FP4 data (ml_dtypes' OCP types) and accumulators, and the formats of
``fpx.format`` up to precision 25, compute in the same way in their own format
(:func:`softmax_held`): ``exp`` and ``log`` are ml_dtypes' ufuncs, for fpx.format's the
elementwise ``"wide"`` variant (NumPy has none in them).

``exact`` variants refuse ``order`` and ``accumulate``: they round the exact real result once.
The variance is exact rational arithmetic (fpexplore.exact's exact accumulators). softmax and
logsumexp shift by the maximum M (``x - M = dh + dl`` exactly, TwoSum), evaluate
``exp(dh + dl)`` in vectorized double-double arithmetic (relative error measured < 2**-105,
assumed < 2**-90), add the terms exactly, and round each ``t / s`` (or ``M + log s``, log by
mpmath) where the error interval decides it; the rest goes through Ziv's loop in mpmath, with
every term recomputed at rising precision. Exact results that could be midpoints (all finite
elements equal: ``1/k``; one finite element: ``M``) are handled first (timings: the
docs/performance.md).
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import TYPE_CHECKING

import numpy as np

from .. import checks
from ..exact import ExactAccumulator
from ..formats import FormatInfo, as_format, coerce, format_info, format_name, scalar_out
from ..held import as_held, held, is_held_data
from ..numerics import (
    DD_EXP_MIN,
    DD_EXP_REL,
    ZIV_SLACK,
    dd_exp,
    fast_two_sum,
    round_rational,
    round_scaled_int,
    two_product,
    two_sum,
)
from ..orders.arith import accumulator_format
from ..orders.registry import kernel_needs, orders_of
from ..orders.registry import lookup as _order_lookup
from ..orders.summation import sum as _fsum
from .elementwise import apply_held
from .formula import (
    HELD_PRECISION,
    SUMMED,
    acc_add,
    acc_div,
    acc_sub,
    accumulator_of,
    caller,
    check_held_order,
    check_held_precision,
    referee,
    round_ratio,
    to_acc,
    x_inputs,
    ziv_round,
)
from .opspec import OpSpec, OpTable
from .variant import EXACT, FORMULA, Variant

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

__all__ = ["OP_TABLE", "logsumexp", "logsumexp_held", "softmax", "softmax_held"]

_SOFTMAX_VARIANTS = (
    Variant("naive", "e = exp(x); e / sum(e): overflows for large x", FORMULA),
    Variant("shifted", "e = exp(x - max(x)); e / sum(e)", FORMULA),
    Variant("exact", "each element correctly rounded", EXACT),
)
_LOGSUMEXP_VARIANTS = (
    Variant("naive", "log(sum(exp(x))): overflows for large x", FORMULA),
    Variant("shifted", "max(x) + log(sum(exp(x - max(x))))", FORMULA),
    Variant("exact", "correctly rounded", EXACT),
)

_F64 = np.dtype(np.float64)


# ----------------------------------------------------------------------------- softmax


def softmax(
    x: ArrayLike,
    *,
    variant: str = "shifted",
    order: str | None = None,
    accumulate: str | None = None,
) -> np.ndarray | np.generic:
    """``exp(x) / sum(exp(x))`` over all elements of ``x`` (shape kept).

    Parameters
    ----------
    x : array_like of one of ``fpx.FORMATS``, or an FP8, FP6 or FP4 array (ml_dtypes' OCP
        types: computed in its format, the result of its type; :func:`softmax_held`)
    variant : str
        ``"naive"``: ``e = exp(x)``; ``s = sum(e)``; ``y = e / s``. Overflows to inf/inf = NaN
        once some ``exp(x)`` exceeds the format's range (x > 88.7 in float32, 11.1 in float16).

        ``"shifted"``: ``m = max(x)`` (0 if that is not finite, as scipy's logsumexp does);
        ``e = exp(x - m)``; ``s = sum(e)``; ``y = e / s``. The formula of
        ``scipy.special.softmax`` (with ``order="numpy"``).

        ``"exact"``: each ``y[i] = exp(x[i]) / sum_j exp(x[j])`` correctly rounded (see the
        module docstring). NaN or ``+inf`` anywhere gives NaN everywhere, ``-inf`` elements
        give +0 (all ``-inf``: NaN).
    order : sum order (default ``"sequential"``), for naive and shifted; ``"exact"`` refuses it.
    accumulate : format of all intermediate arithmetic (default x's), for naive and shifted;
        ``"exact"`` refuses it.

    Returns
    -------
    numpy.ndarray
        An array of x's shape and format (an empty array for empty input).
    """
    OP_TABLE.lookup("softmax", variant)
    values, name = _values(x, "softmax")
    return softmax_held(values, name, variant, order=order, accumulate=accumulate)


def softmax_held(
    x: np.ndarray,
    name: str,
    variant: str = "shifted",
    *,
    order: str | None = None,
    accumulate: str | None = None,
) -> np.ndarray | np.generic:
    """:func:`softmax` of the values ``x`` of the format ``name``: FP8, FP6 or FP4 values in
    float32 and a format of fpx.format's in float64 (held formats: the result in ml_dtypes'
    type, float64 for fpx.format's), or an array of ``fpx.FORMATS``; computing in
    ``accumulate`` (default: ``name``). In a held format every subtraction, sum and division
    is rounded once to it (float64 arithmetic, exact or innocuous for precision <= 25), exp
    is ml_dtypes' ufunc (fpx.format's: NumPy's function in the narrowest wider format,
    rounded once: the elementwise "wide"); ``exact`` rounds each exact element once."""
    OP_TABLE.lookup("softmax", variant)
    order = _check_settings("softmax", variant, order, accumulate)
    info, acc = _formats(name, accumulate, variant, "softmax")
    if variant != "exact":
        check_held_order("softmax", order, acc)
    shape = np.shape(x)
    flat = np.ravel(x)
    if variant == "exact":
        out = _exact_softmax(flat, info)
    else:
        xa = to_acc(flat, acc)
        with np.errstate(all="ignore"):
            if variant == "shifted":
                xa = acc_sub(xa, _shift(xa, acc), acc)
            e = _in_acc("exp", xa, acc)
            s = _fsum(e, order, accumulate=accumulate if acc.storage else acc.name)
            out = np.asarray(as_format(acc_div(e, s, acc), info.name))
    return scalar_out(_out(out, info).reshape(shape))


def _values(x, op: str) -> tuple[np.ndarray, str]:
    """x's values and format: FP8, FP6 and FP4 arrays' in float32 (computed in their format),
    others as the package's coercion gives them."""
    if (h := held((x,), op)) is not None:
        (values,), name = h
        return values, name
    (x,), info = coerce(x, what=op)
    return x, info.name


def _formats(name: str, accumulate, variant: str, op: str) -> tuple[FormatInfo, FormatInfo]:
    """(the data's format, the accumulator's): a held one (FP8, FP6, FP4, fpx.format's) as
    data or ``accumulate`` computes in itself, up to precision 25."""
    info = format_info(name)
    held_acc = is_held_data(format_name(accumulate))
    if held_acc or (accumulate is None and not info.storage):
        acc = format_info(format_name(accumulate) if held_acc else name)
        if variant != "exact":
            check_held_precision(op, acc, "; variant 'exact' takes it")
        return info, acc
    return info, accumulator_of(accumulate, info)


def _in_acc(function: str, values: np.ndarray, acc: FormatInfo) -> np.ndarray:
    """NumPy's ``exp`` or ``log`` of values of acc, in acc: its own ufunc for the IEEE
    formats, ml_dtypes' for FP8, FP6 and FP4, the "wide" elementwise variant for a format of
    fpx.format's (which NumPy has none of); held values come back in their float type."""
    if acc.storage:
        return np.asarray(getattr(np, function)(values))
    variant = "wide" if acc.user_defined else "numpy"
    out = apply_held(function, (np.asarray(values),), acc.name, variant)
    return np.asarray(out).astype(values.dtype)


def _out(values, info: FormatInfo) -> np.ndarray:
    """Values of the data's format in its type: ml_dtypes' for FP8, FP6 and FP4 (a NaN in
    FP6 or FP4, which have none, refused), float64 for fpx.format's."""
    if info.storage:
        return np.asarray(values).astype(info.dtype)
    return np.asarray(as_held(values, info.name))


def logsumexp(
    x: ArrayLike,
    *,
    variant: str = "shifted",
    order: str | None = None,
    accumulate: str | None = None,
) -> np.generic:
    """``log(sum(exp(x)))`` over all elements of ``x``.

    Parameters
    ----------
    x : array_like of one of ``fpx.FORMATS``, or an FP8, FP6 or FP4 array (ml_dtypes' OCP
        types: computed in its format, the result of its type; :func:`softmax_held`)
    variant : str
        ``"naive"``: ``log(sum(exp(x)))``, each step rounded; overflows like naive softmax.

        ``"shifted"``: ``m = max(x)`` (0 if not finite); ``m + log(sum(exp(x - m)))``; the
        formula of ``scipy.special.logsumexp``.

        ``"exact"``: the correctly rounded value. NaN gives NaN, any ``+inf`` gives ``+inf``,
        ``-inf`` elements are ignored, an empty array or all ``-inf`` gives ``-inf``.
    order, accumulate : as for :func:`softmax`.

    Returns
    -------
    numpy.generic
        A NumPy scalar of x's format.
    """
    OP_TABLE.lookup("logsumexp", variant)
    values, name = _values(x, "logsumexp")
    return logsumexp_held(values, name, variant, order=order, accumulate=accumulate)


def logsumexp_held(
    x: np.ndarray,
    name: str,
    variant: str = "shifted",
    *,
    order: str | None = None,
    accumulate: str | None = None,
) -> np.generic:
    """:func:`logsumexp` of the values ``x`` of the format ``name``, as :func:`softmax_held`
    says (``log`` as its ``exp``)."""
    OP_TABLE.lookup("logsumexp", variant)
    order = _check_settings("logsumexp", variant, order, accumulate)
    info, acc = _formats(name, accumulate, variant, "logsumexp")
    if variant != "exact":
        check_held_order("logsumexp", order, acc)
    flat = np.ravel(x)
    if variant == "exact":
        return _out(_exact_logsumexp(flat, info), info)[()]
    xa = to_acc(flat, acc)
    summed = accumulate if acc.storage else acc.name
    with np.errstate(all="ignore"):
        if variant == "shifted":
            m = _shift(xa, acc)
            s = _fsum(_in_acc("exp", acc_sub(xa, m, acc), acc), order, accumulate=summed)
            r = acc_add(m, _in_acc("log", np.asarray(s), acc), acc)
        else:
            s = _fsum(_in_acc("exp", xa, acc), order, accumulate=summed)
            r = _in_acc("log", np.asarray(s), acc)
    return _out(as_format(np.asarray(r), info.name), info)[()]


def _check_settings(op: str, variant: str, order, accumulate) -> str:
    """The sum order's name; the exact variant refuses ``order`` and ``accumulate``."""
    if variant == "exact":
        for name, value in (("order", order), ("accumulate", accumulate)):
            if value is not None:
                raise ValueError(
                    f"{op}: `{name}` does not apply to variant 'exact' (it rounds the exact "
                    f"result once); it applies to 'naive' and 'shifted', got {name}={value!r}"
                )
        return "sequential"
    if order is None:
        return "sequential"
    try:
        return _order_lookup("sum", order).name
    except ValueError:
        valid = ", ".join(orders_of("sum"))
        raise ValueError(
            f"{op}: unknown order {checks.shown(order)} (`order` is the order of {op}'s sums); "
            f"valid orders: {valid}"
        ) from None


def _shift(xa: np.ndarray, acc: FormatInfo):
    m = np.max(xa) if xa.size else acc.dtype.type(0)
    if not np.isfinite(np.float64(m)):
        m = acc.dtype.type(0)
    return m


# ------------------------------------------------------------------ exact softmax: setup


def _prepare(flat: np.ndarray):
    """(x64, M, dh, dl, finite count) with x - M = dh + dl exactly (finite, no overflow)."""
    x64 = flat.astype(_F64)
    finite = x64 > -np.inf
    M = float(np.max(x64[finite]))
    with np.errstate(all="ignore"):
        dh, dl = two_sum(x64, -M)
    dl = np.where(np.isfinite(dh), dl, 0.0)
    return x64, M, dh, dl, int(finite.sum())


def _exp_sum_dd(dh, dl):
    """Exact rational (N, K) of the sum of the double-double approximations of exp(d) over
    dh >= DD_EXP_MIN, and the approximations themselves (th, tl, k, mask)."""
    use = dh >= DD_EXP_MIN
    th, tl, k = dd_exp(dh[use], dl[use])
    acc = ExactAccumulator()
    # th*2**k is exact (normal range); tl*2**k may round in the subnormal range: the error is
    # below 2**-1074 per term, negligible against the sum (>= 1).
    acc.add64(np.ldexp(th, k))
    acc.add64(np.ldexp(tl, k))
    return acc.total(), (th, tl, k, use)


def _round_dd(N: int, K: int):
    """N * 2**K (> 0) as a double-double (hi, lo), relative error < 2**-105."""
    hi = round_scaled_int(N, K, 53, -1022, 1023)
    num, den = hi.as_integer_ratio()  # hi = num/den, den a power of two
    # remainder N*2**K - hi as an exact rational
    if K >= 0:
        rn, rd = (N << K) * den - num, den
    else:
        rn, rd = N * den - (num << -K), den << -K
    lo = round_rational(rn, rd, 53, -1022, 1023) if rn else 0.0
    return hi, lo


def _mpf(lm, N: int, K: int):
    return lm.from_man_exp(N, K)


def _exact_softmax(flat: np.ndarray, info: FormatInfo) -> np.ndarray:
    n = flat.size
    if n == 0:
        return flat.copy()
    x64 = flat.astype(_F64)
    if np.isnan(x64).any() or (x64 == np.inf).any() or (x64 == -np.inf).all():
        return np.full(n, np.nan)
    x64, M, dh, dl, k_finite = _prepare(flat)
    out = np.zeros(n)  # +0 for -inf elements and negligible terms
    if (x64[x64 > -np.inf] == M).all():  # one distinct value: exactly 1/k
        out[x64 == M] = round_ratio(1, k_finite, info)
        return out
    # y < exp(dh) (the sum is >= 1): below half the least subnormal it rounds to +0
    zero_cut = -(info.precision - info.emin + 2) * math.log(2.0) - 1.0
    undecided = np.zeros(n, bool)
    (N, K), (th, tl, k, use) = _exp_sum_dd(dh, dl)
    sh, sl = _round_dd(N, K)
    # y = t / s in double-double, then scaled by 2**k
    q1 = th / sh
    ph, pl = two_product(q1, sh)
    q2 = (((th - ph) - pl) + tl - q1 * sl) / sh
    yh, yl = fast_two_sum(q1, q2)
    yh, yl = np.ldexp(yh, k), np.ldexp(yl, k)
    idx = np.flatnonzero(use)
    rel = 4 * DD_EXP_REL  # t and s each < 2**-90, the division and dd roundings far less
    with np.errstate(all="ignore"):
        if info.name != "float64":
            band = max(2.0**-50, 2 * rel)  # covers yl (< 2**-53 yh) and the error
            lo = np.asarray(as_format(yh * (1 - band), info.name)).astype(_F64)
            hi = np.asarray(as_format(yh * (1 + band), info.name)).astype(_F64)
            ok = lo == hi
        else:
            towards = np.where(yl >= 0, np.inf, 0.0)
            up = np.abs(np.nextafter(yh, towards) - yh)
            down = np.abs(np.nextafter(yh, np.where(yl >= 0, 0.0, np.inf)) - yh)
            spacing = np.where(yl == 0, np.minimum(up, down), up)
            ok = (spacing * 0.5 - np.abs(yl) > 2 * rel * yh) & (yh >= 2.0**-1000)
            lo = yh
    out[idx[ok]] = lo[ok]
    undecided[idx[~ok]] = True
    # terms below DD_EXP_MIN: +0 if clearly below the format's underflow, else undecided
    small = ~use & (dh >= zero_cut)
    undecided |= small & (x64 > -np.inf)
    if undecided.any():
        _softmax_ziv(x64, M, undecided, out, info)
    return out


def _softmax_ziv(x64, M, undecided, out, info: FormatInfo) -> None:
    from mpmath import libmp as lm

    finite = np.flatnonzero(x64 > -np.inf)
    n = finite.size
    lg_n = max(n, 2).bit_length()
    Mm = lm.from_float(M)
    D = {i: lm.mpf_sub(lm.from_float(float(x64[i])), Mm) for i in finite.tolist()}
    dv = {i: float(x64[i]) - M for i in D}  # float64 estimates of d
    todo = np.flatnonzero(undecided).tolist()
    P = info.precision + 48 + lg_n
    while todo:
        if P > 1 << 16:  # pragma: no cover
            raise RuntimeError("softmax: correct rounding not decided")
        wp = P + lg_n + 8
        cut = -(wp + 8) * math.log(2.0) - 1.0  # skipped terms sum to < 2**-(P + 8) of s
        need = set(todo)
        t = {i: lm.mpf_exp(D[i], P, "n") for i in D if dv[i] >= cut or i in need}
        s = lm.fzero
        for i in D:
            if dv[i] >= cut:
                s = lm.mpf_add(s, t[i], wp, "n")
        rest = []
        for i in todo:
            y = lm.mpf_div(t[i], s, P, "n")
            # relative errors: t < 2**-(P-S), s < 2**-(P-S-1), division 2**-P
            r = ziv_round(y, y[2] + y[3] - (P - ZIV_SLACK - 3), info)
            if r is None:
                rest.append(i)
            else:
                out[i] = r
        todo = rest
        P *= 2


# --------------------------------------------------------------- exact logsumexp


def _decide_lse(L, err: int, M: float, info: FormatInfo):
    """ziv_decide for L = M + log(s), s > 1. With M = 0, L = log(s) > 0 may be far below the
    least subnormal (logsumexp([0, -1e300])): [0, |L| + 2**err] under half of it is +0."""
    if M == 0:
        mag = L[2] + L[3] if L[1] else err
        if max(mag, err) + 1 <= info.emin - info.precision:
            return 0.0
    return ziv_round(L, err, info) if L[1] else None


def _exact_logsumexp(flat: np.ndarray, info: FormatInfo):
    x64 = flat.astype(_F64)
    if x64.size == 0 or (x64 == -np.inf).all():
        return np.asarray(-np.inf)
    if np.isnan(x64).any():
        return np.asarray(np.nan)
    if (x64 == np.inf).any():
        return np.asarray(np.inf)
    x64, M, dh, dl, k_finite = _prepare(flat)
    if k_finite == 1:
        # log(exp(M)) = M exactly; M = -0 gives log(exp(-0)) = log(1) = +0
        return np.asarray(M + 0.0)
    from mpmath import libmp as lm

    (N, K), _ = _exp_sum_dd(dh, dl)
    n = k_finite
    # s has relative error < 2**-90 + n 2**-1009 (terms below DD_EXP_MIN left out)
    lg = lm.mpf_log(_mpf(lm, N, K), 200, "n")
    L = lm.mpf_add(lm.from_float(M), lg)  # exact
    err = math.ceil(math.log2(DD_EXP_REL)) + 2  # |error of log s| < 2**-88 (rel(s) 2**-89.9)
    r = _decide_lse(L, err, M, info)
    if r is not None:
        return np.asarray(r)
    # Ziv's loop in mpmath
    lg_n = max(n, 2).bit_length()
    Mm = lm.from_float(M)
    fin = np.flatnonzero(x64 > -np.inf)
    D = [lm.mpf_sub(lm.from_float(float(x64[i])), Mm) for i in fin.tolist()]
    dv = (x64[fin] - M).tolist()
    P = info.precision + 48 + lg_n
    while P <= 1 << 16:
        wp = P + lg_n + 8
        cut = -(wp + 8) * math.log(2.0) - 1.0
        s = lm.fzero
        for d, e in zip(D, dv):
            if e >= cut:
                s = lm.mpf_add(s, lm.mpf_exp(d, P, "n"), wp, "n")
        lg = lm.mpf_log(s, P, "n")
        # |error of lg| < rel(s) + 2**-(P-S) |lg| <= 2**-(P-S-2) (1 + |lg|), |lg| <= log n
        err = -(P - ZIV_SLACK - 2) + (int(math.log(n)) + 2).bit_length()
        L = lm.mpf_add(Mm, lg)
        r = _decide_lse(L, err, M, info)
        if r is not None:
            return np.asarray(r)
        P *= 2
    raise RuntimeError("logsumexp: correct rounding not decided")  # pragma: no cover


# naive and shifted compute in held formats too (FP8, FP6, FP4, fpx.format's)
_SUMMED_TWO = {"naive": replace(SUMMED, held=True), "shifted": replace(SUMMED, held=True)}


def _available(fmt: str) -> list[str]:
    """Every variant; none of a format of fpx.format's past precision 25, where float64
    arithmetic no longer rounds correctly to it (as variance; its exact variant is
    :func:`softmax_held`'s, compare's reference alone)."""
    if is_held_data(fmt) and format_info(fmt).precision > HELD_PRECISION:
        return []
    return ["naive", "shifted", "exact"]


def _summed_kernels(name, kw, info):
    if name == "exact":
        return []
    acc = kw.get("accumulate")
    order = kw.get("order") or "sequential"
    a = format_info(acc) if is_held_data(acc) else accumulator_format(acc, info)
    return kernel_needs("sum", order, a, acc if a.storage else a.name, kw)


OP_TABLE = OpTable(
    OpSpec(
        "softmax",
        "exp(x) / sum(exp(x)) over all elements",
        _SOFTMAX_VARIANTS,
        inputs=x_inputs,
        call=caller(softmax, ("order", "accumulate"), held_function=softmax_held),
        keywords=dict.fromkeys(("order", "accumulate")),
        reference=referee(softmax, held_function=softmax_held),
        available=_available,
        default_variants=("naive", "shifted"),
        max_n=10**6,  # the exact references take a few microseconds per element
        settings=_SUMMED_TWO,
        kernels=_summed_kernels,
        rank=30,
    ),
    OpSpec(
        "logsumexp",
        "log(sum(exp(x))) over all elements",
        _LOGSUMEXP_VARIANTS,
        inputs=x_inputs,
        call=caller(logsumexp, ("order", "accumulate"), held_function=logsumexp_held),
        keywords=dict.fromkeys(("order", "accumulate")),
        reference=referee(logsumexp, held_function=logsumexp_held),
        available=_available,
        default_variants=("naive", "shifted"),
        max_n=10**6,
        settings=_SUMMED_TWO,
        kernels=_summed_kernels,
        rank=30,
    ),
)
