"""Each result against the exact answer: how far (:func:`errors`, one stated measure), which
is closer (:func:`closer`, ties as ties), and whether rounding can explain it at all
(:func:`bound` of a configuration, :func:`beyond_rounding`: the elements outside the
worst-case bound of every evaluation order, accumulator and input rounding;
:func:`overflow_reach`: whether a partial result can overflow to a result's inf or NaN;
:func:`rounded_reads`: the input roundings a sum nothing reproduces may have read).

The measure is the normwise relative error ``||R - X|| / ||X||`` (Frobenius norm; a scalar:
``|r - x| / |x|``), X the exact result, R measured in float64 (every format widens exactly):
elements whose exact value cancels to near zero do not dominate it. Scalars are compared
exactly: two results equally far from the exact value (it lies halfway between them) tie.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from ..exact import exact_dot, exact_sum
from ..formats import FORMATS, as_format, format_info
from ..metrics import gamma
from ..orders.products import exact_matmul, matmul64
from ..orders.registry import TENSOR_CORE, orders_of
from .space import TRIED_ROUNDINGS, TRUNCATIONS, Config, factors, order_op, reduction, reference

__all__ = [
    "beyond_one_code",
    "beyond_rounding",
    "bound",
    "bound_roundings",
    "closer",
    "deviation",
    "errors",
    "identical",
    "magnitude",
    "overflow_reach",
    "rounded_reads",
]

CANCELLED = 2.0**-10  # an element whose exact value is below this share of sum |terms|


def _wide(arrays) -> tuple:
    return tuple(np.asarray(a).astype(np.float64) for a in arrays)


def deviation(op: str, arrays: tuple, result, exact64) -> np.ndarray:
    """exact - result per element in float64: for a sum, mean or dot rounded once from the
    exact value (its sign and order exact); a matmul's from the exact product rounded to
    float64 (a float64 result's rounded once from the exact difference: the exact product
    rounded to float64 would hide differences below its ulp). Where the exact result is not
    finite: 0 where the result is the same (NaN for NaN), else inf; a non-finite result of a
    finite exact result: inf."""
    r = np.asarray(result).astype(np.float64)
    x = np.asarray(exact64, dtype=np.float64)
    red = reduction(op)
    with np.errstate(all="ignore"):
        if red.matrix and np.asarray(result).dtype == np.float64:
            A, B = _wide(arrays)
            dev = np.empty(r.shape)
            for j in range(r.shape[1]):  # column j: [A | -r_j] @ [B_j; 1], exactly rounded
                aug = np.concatenate([A, -r[:, j : j + 1]], axis=1)
                dev[:, j] = exact_matmul(aug, np.append(B[:, j], 1.0)[:, None])[:, 0]
        elif red.matrix:
            dev = x - r
        else:
            w = _wide(arrays)
            a = np.append(w[0].ravel(), r)
            b = np.append(w[1].ravel(), 0.0) if red.products else np.ones_like(a)
            b[-1] = -float(a.size - 1) if red.divides else -1.0
            dev = np.asarray(exact_dot(a, b), np.float64)
            dev = dev / (a.size - 1) if red.divides else dev
        same = (r == x) | (np.isnan(r) & np.isnan(x))
        special = ~np.isfinite(x) | ~np.isfinite(r)
        return np.where(special, np.where(same, 0.0, np.inf), dev)


def magnitude(op: str, arrays: tuple) -> np.ndarray:
    """sum |terms| per element in float64 (the scale of rounding errors)."""
    w, red = _wide(arrays), reduction(op)
    with np.errstate(all="ignore"):
        if red.matrix:
            return np.abs(w[0]) @ np.abs(w[1])
        terms = np.abs(w[0] * w[1]) if red.products else np.abs(w[0])
        s = np.asarray(exact_sum(terms.ravel()), np.float64)
        return s / terms.size if red.divides else s


def overflow_reach(op: str, arrays: tuple, result, formats) -> np.ndarray:
    """Per element of ``result``: whether its value may come from a partial result that
    exceeded the largest value of the narrowest of ``formats`` (True where it is finite):
    +inf where the positive terms, grown by every rounding ((1 + u)^n <= e^(nu)), reach it,
    -inf where the negative ones do, NaN where either does (inf - inf; a compensated sum's
    correction after an overflow) (pass 24: a -inf sum of two float16 65504s was "within
    rounding")."""
    infos = [format_info(f) for f in formats]
    w, red = _wide(arrays), reduction(op)
    with np.errstate(all="ignore"):
        if red.matrix:
            (pa, na), (pb, nb) = ((np.maximum(v, 0), np.maximum(-v, 0)) for v in w)
            pos, neg = pa @ pb + na @ nb, pa @ nb + na @ pb
        else:
            t = (w[0] * w[1] if red.products else w[0]).ravel()
            pos, neg = float(np.sum(t[t > 0])), float(-np.sum(t[t < 0]))
    grow = math.exp(min(red.length(arrays) * max(float(i.unit_roundoff) for i in infos), 700.0))
    top = min(float(i.max) for i in infos)
    up, down = np.asarray(pos) * grow >= top, np.asarray(neg) * grow >= top
    r = np.asarray(result).astype(np.float64)
    return np.isfinite(r) | np.where(np.isnan(r), up | down, np.where(r > 0, up, down))


def errors(devs: dict, exact64) -> dict:
    """label -> the normwise relative error ||dev|| / ||exact|| (inf: infinitely far; where
    the exact result is zero, the absolute error)."""
    x = np.asarray(exact64, dtype=np.float64)
    with np.errstate(all="ignore"):
        norm = _norm(np.where(np.isfinite(x), x, 0.0))
        out = {}
        for label, d in devs.items():
            e = _norm(d) if np.all(np.isfinite(d)) else np.inf
            out[label] = e / norm if norm > 0 and np.isfinite(norm) else e
    return out


def _norm(v) -> float:
    """The Frobenius norm, scaled by the largest |element| first: its squares neither
    overflow nor underflow (pass 24: float64 sums near 1e160 had an infinite error, and a
    dropped term was "within rounding"; near 1e-160 every error was 0)."""
    v = np.abs(np.asarray(v, dtype=np.float64))
    top = float(np.max(v, initial=0.0))
    if top == 0 or not np.isfinite(top):
        return top
    return top * float(np.sqrt(np.sum(np.square(v / top))))


def exact_is_zero(exact64) -> bool:
    """Whether every element of the exact result is zero (errors() is then absolute)."""
    return bool(np.all(np.asarray(exact64, dtype=np.float64) == 0))


def relative(errs: dict, exact64) -> dict:
    """label -> the relative error by its definition ``||R - X|| / ||X||``: where the exact
    result X is zero, 0 for a zero result and inf for any other (errs, absolute there, still
    rank the results)."""
    if not exact_is_zero(exact64):
        return dict(errs)
    return {k: (0.0 if e == 0 else math.inf) for k, e in errs.items()}


def _exact_abs(op: str, arrays: tuple, r) -> Fraction:
    """|exact - r| as a Fraction (a scalar result: sum, mean, dot)."""
    w, red = _wide(arrays), reduction(op)
    if red.products:
        s = sum(
            (Fraction(u) * Fraction(v) for u, v in zip(w[0].tolist(), w[1].tolist())), Fraction(0)
        )
    else:
        s = sum(map(Fraction, w[0].ravel().tolist()), Fraction(0))
        s = s / w[0].size if red.divides else s
    return abs(s - Fraction(float(r)))


def closer(op: str, arrays: tuple, observed: dict, devs: dict, errs: dict, refs: dict) -> set:
    """The labels of the results nearest the exact answer (all of them where they tie).
    Scalars equally far in float64 but not equal are compared exactly (fractions); results
    infinitely far, by whether each inf or NaN is the exact result rounded to the result's
    format (``refs``: label -> it; pass 24: +inf and -inf sums of 65504 + 65504 in float16
    tied)."""
    best = min(errs.values())
    near = [k for k, e in errs.items() if e == best]
    if not np.isfinite(best):
        with np.errstate(all="ignore"):
            rounded = [
                k
                for k in near
                if np.all(np.isfinite(observed[k].astype(np.float64)) | (observed[k] == refs[k]))
            ]
        near = rounded or near
    if len(near) <= 1 or np.ndim(observed[near[0]]) or not np.isfinite(best):
        return set(near)
    values = {k: float(observed[k]) for k in near}
    finite = all(np.all(np.isfinite(a)) for a in arrays) and all(
        map(math.isfinite, values.values())
    )
    if not finite or len(set(values.values())) == 1:  # (NaN and -NaN: as far, no exact value)
        return set(near)
    exact = {k: _exact_abs(op, arrays, v) for k, v in values.items()}
    low = min(exact.values())
    return {k for k, e in exact.items() if e == low}


# ----------------------------------------------------------------------------- bounds


def _depth(op: str, cfg: Config, n: int) -> int:
    spec = orders_of(order_op(op)).get(cfg.spec.name)
    if spec is None or spec.depth is None or spec.library is not None or n < 2:
        return max(n - 1, 0)
    try:
        d = spec.depth(n, spec.validate(dict(cfg.spec.params)))
    except (ValueError, TypeError):
        return n - 1
    return min(d, n - 1)


# the formats some evaluation tried flushes below the normal range: float32's atomics and
# matrix cores (FTZ), the formats tensor cores read float32 data in
FLUSHED = ("float32", "tf32", "tf32-rne", "tf32-truncate", "bfloat16", "bfloat16-truncate")


def _tiny(fmt: str) -> float:
    """The most one rounding into ``fmt`` may be off in absolute terms below its normal range
    (the relative u |x| says nothing there): the least normal value where an evaluation
    flushes ``fmt`` (:data:`FLUSHED`, or no subnormals), else the least subnormal (pass 20:
    nothing flushes float16, whose additions below 2**-14 are exact; its least normal per
    rounding made a dropped term of ten values near 5e-4 "within rounding")."""
    info = format_info(fmt)
    return float(info.smallest_normal if info.name in FLUSHED else info.smallest_subnormal)


def _underflow(op: str, arrays: tuple, fmt: str, ops: int):
    """The absolute part of a bound where values fall below ``fmt``'s normal range: ``ops``
    roundings to it per term (an addition, a product), each off by up to tiny(fmt); the
    inputs rounded to a format are :func:`_inputs_underflow`. None for a sum or mean of
    terms of one sign, each 0 or normal in ``fmt``: every partial sum is at least the least
    of them (pass 19: a float16 sum of ten terms near 5e-4 took 2.4e-3, half the sum, and
    a dropped term was "within rounding")."""
    red = reduction(op)
    if not red.products and _stays_normal(arrays[0], fmt):
        return 0.0
    n = red.length(arrays)
    t = _tiny(fmt) * ops * n
    return t / n if red.divides else t


def _stays_normal(x, fmt: str) -> bool:
    """Every nonzero term of ``x`` normal in ``fmt``, all of one sign (NaN: not so)."""
    v = np.asarray(x, np.float64).ravel()
    v = v[v != 0]
    one_sign = bool(np.all(v > 0) or np.all(v < 0))
    return v.size == 0 or (one_sign and np.abs(v).min() >= format_info(fmt).smallest_normal)


def _inputs_underflow(op: str, arrays: tuple, fmt: str):
    """|exact of the inputs - exact of the inputs rounded to ``fmt``| beyond the relative part:
    each input off by at most tiny(fmt); a product a*b then by tiny (|a| + |b|) + tiny**2."""
    red, t = reduction(op), _tiny(fmt)
    if not red.products:
        return t  # n inputs each off by t: n t, a mean's n t / n
    a, b = (np.abs(np.asarray(x, np.float64)) for x in arrays)
    with np.errstate(all="ignore"):
        if red.matrix:
            s = a.sum(axis=1)[:, None] + b.sum(axis=0)[None, :]
        else:
            s = a.sum() + b.sum()
        return 1.01 * t * s + red.length(arrays) * t * t


def bound(op: str, arrays: tuple, cfg: Config | None, out_fmt: str, ref, S) -> np.ndarray:
    """The worst-case |result - exact| of ``cfg`` per element (None: the op's generic bound,
    a sequential evaluation in the result's format): Higham's gamma_d S (d the order's
    registry depth, S the sum of |terms|), each rounding of the inputs, and the final
    rounding of the result and of the exact reference."""
    red = reduction(op)
    n, products = red.length(arrays), red.products
    u_out = format_info(out_fmt).unit_roundoff
    in_fmt = arrays[0].dtype.name
    # below the normal range a rounding is off by up to the least normal value, not u |x|:
    # the absolute terms (_underflow, _inputs_underflow) cover it
    if cfg is None:
        cast = format_info(out_fmt).precision < format_info(in_fmt).precision
        err = (gamma(n + products, out_fmt) + cast * 2 * u_out) * S
        err = (
            err + _underflow(op, arrays, out_fmt, 2) + cast * _inputs_underflow(op, arrays, out_fmt)
        )
    elif cfg.spec.name == TENSOR_CORE:
        u_r = format_info(cfg.spec.input_rounding or in_fmt).unit_roundoff
        u32 = format_info("float32").unit_roundoff
        err = (2 * (n + 32) * u32 + 2.01 * u_r * (cfg.spec.input_rounding is not None)) * S
        err = err + _underflow(op, arrays, "float32", 4)
        if cfg.spec.input_rounding:
            err = err + _inputs_underflow(op, arrays, cfg.spec.input_rounding)
    else:
        acc = factors(cfg, in_fmt)["accumulator"]
        acc = in_fmt if acc in (None, "fixed") else acc
        if cfg.call:  # a library's own order: any
            acc = min((acc, in_fmt), key=lambda f: format_info(f).precision)
        err = gamma(_depth(op, cfg, n) + products, acc) * S + _underflow(op, arrays, acc, 2)
        if cfg.spec.input_rounding:
            err += 2.01 * format_info(cfg.spec.input_rounding).unit_roundoff * S
            err = err + _inputs_underflow(op, arrays, cfg.spec.input_rounding)
        if cfg.where == "before":
            err += 1.01 * u_out * S * (2 if products else 1)
            err = err + _inputs_underflow(op, arrays, out_fmt)
    err = np.asarray(err, dtype=np.float64)  # (S of a mean is already divided by n)
    ref = np.abs(np.asarray(ref, dtype=np.float64))
    return err + 2 * u_out * ref + 2 * _tiny(out_fmt)  # the result's and the reference's


def bound_roundings(op: str, in_fmt: str, observed: dict) -> tuple:
    """The input roundings :func:`beyond_rounding` covers: tf32 and bfloat16, to nearest and
    truncated (pass 17: a blocked matmul of truncated inputs was "a likely bug"; pass 18: a
    sum of a bfloat16 copy too), and each result's own format where it is not the data's (a
    cast first)."""
    rs = TRIED_ROUNDINGS[1:] + TRUNCATIONS
    return rs + tuple(sorted({o.dtype.name for o in observed.values()} - {in_fmt}))


def beyond_rounding(op: str, arrays: tuple, result, roundings) -> np.ndarray:
    """The elements of ``result`` (finite where the exact result is) outside the worst-case
    bound of every evaluation: any order (a sum's n - 1 roundings to nearest, a mean's two
    more; dot's and matmul's twice over, with room for the tensor cores' blocks) in the
    narrowest accumulator of the data and the result, the inputs as they are or rounded to
    each of ``roundings`` (or cast to the result's format first)."""
    r = np.asarray(result)
    outside = None
    for rounded in _rounded(arrays, roundings):
        far = _far(op, arrays, rounded, r)
        outside = far if outside is None else outside & far
    return np.asarray(outside)


def _far(op: str, arrays: tuple, rounded: tuple, r: np.ndarray) -> np.ndarray:
    """The elements of ``r`` (finite, as the exact result) outside the bound of the
    ``rounded`` inputs."""
    exact, width = _width(op, arrays, rounded, r.dtype.name)
    with np.errstate(all="ignore"):
        far = np.abs(r.astype(np.float64) - exact) > width
    return far & np.isfinite(r.astype(np.float64)) & np.isfinite(exact)


def rounded_reads(op: str, arrays: tuple, result, in_fmt: str) -> tuple:
    """For a sum or mean of float32 or float64 data (whose orders read the inputs as they
    are: none is tried on rounded ones), the input roundings ``result`` may have read, as
    pairs (rounding, order): an order of :data:`READ_ORDERS` that gives ``result`` bit for
    bit on a sum's inputs rounded to a narrower storage format (pass 26: a float32 loop on a
    float16 copy listed no input rounding, 10 of 16), or (rounding, None) for a rounding of
    :func:`bound_roundings` within whose bound ``result`` lies where it lies beyond that of
    every order on the inputs as they are (pass 23: a loop on a bfloat16 copy was guessed
    'order' alone, 28 of 28 such sums). () where none: a guess either way."""
    if reduction(op).products or in_fmt not in ("float32", "float64"):
        return ()
    out = _copies_read(op, arrays[0], result, in_fmt)
    if not np.any(beyond_rounding(op, arrays, result, ())):
        return out
    r = np.asarray(result)
    return (
        out
        + tuple(  # (each rounding's own bound: the inputs as they are are beyond)
            (k, None)
            for k in TRIED_ROUNDINGS[1:] + TRUNCATIONS
            for rounded in list(_rounded(arrays, (k,)))[1:]
            if not np.any(_far(op, arrays, rounded, r))
        )
    )


#: the orders :func:`rounded_reads` runs on a sum's rounded copies
READ_ORDERS = ("sequential", "pairwise", "numpy", "reverse")


def _copies_read(op: str, x: np.ndarray, result, in_fmt: str) -> tuple:
    """(rounding, order) where the order gives ``result`` on ``x`` rounded to a narrower
    storage format (a cast bug: ``x.astype(np.float16)`` summed in ``in_fmt``; a mean: that
    sum over n, pass 27: 16 of 25 means of a float16 copy listed no input rounding)."""
    from ..orders.summation import sum as order_sum

    r = np.asarray(result)
    if op not in ("sum", "mean") or r.dtype != x.dtype or r.ndim != 0:
        return ()
    n = x.dtype.type(x.size)  # (a mean: the sum divided by n in the data's format, as np.mean)
    narrower = [f for f in FORMATS if format_info(f).bits < format_info(in_fmt).bits]
    out = []
    for (copy,) in list(_rounded((x,), narrower))[1:]:
        rounding = format_info(copy.dtype).name
        copy = copy.astype(x.dtype)
        if np.array_equal(copy, x):
            continue  # (the data are of that format: nothing was lost)
        sums = ((o, order_sum(copy, o)) for o in READ_ORDERS)
        out += [(rounding, o) for o, v in sums if identical(v / n if op == "mean" else v, r)][:1]
    return tuple(out)


def identical(x, y) -> bool:
    """Two results of one format, shape and bits (NaN: the same NaN)."""
    x, y = np.asarray(x), np.asarray(y)
    return x.dtype == y.dtype and x.shape == y.shape and x.tobytes() == y.tobytes()


def beyond_one_code(op: str, arrays: tuple, observed: dict, in_fmt: str) -> bool:
    """Whether the results are further apart than two evaluations of one code in two orders
    can be, the inputs as they are or rounded to each of :func:`bound_roundings`: each is
    within the bound of :func:`beyond_rounding` of the exact result, two of them within
    twice it (pass 19: results 7.6e-4 apart were run-to-run nondeterminism, "the likeliest
    at 100%")."""
    vals = [np.asarray(v, np.float64) for v in observed.values()]
    with np.errstate(all="ignore"):
        spread = np.max(vals, axis=0) - np.min(vals, axis=0)
    narrowest = min((np.asarray(v) for v in observed.values()), key=lambda v: _precision(v))
    for rounded in _rounded(arrays, bound_roundings(op, in_fmt, observed)):
        width = _width(op, arrays, rounded, narrowest.dtype.name)[1]
        if not np.any(np.isfinite(spread) & (spread > 2 * width)):
            return False
    return True


def _precision(v) -> int:
    return format_info(np.asarray(v).dtype.name).precision


def _rounded(arrays: tuple, roundings):
    """The inputs as they are, then rounded to each of ``roundings`` where they stay finite
    (pass 25: float64 data near 1e160 rounded to bfloat16 were inf, their bound NaN, and a
    dropped term "within rounding")."""
    yield arrays
    with np.errstate(all="ignore"):
        for rounding in roundings:
            rounded = tuple(np.asarray(as_format(a, rounding)) for a in arrays)
            if all(
                np.isfinite(r.astype(np.float64)).sum() == np.isfinite(a.astype(np.float64)).sum()
                for r, a in zip(rounded, arrays)
            ):
                yield rounded


def _width(op: str, arrays: tuple, rounded: tuple, out_fmt: str) -> tuple:
    """(the exact result of the ``rounded`` inputs, the bound of :func:`beyond_rounding` around
    it) for a result in ``out_fmt``."""
    in_fmt = arrays[0].dtype.name
    red = reduction(op)
    n, products = red.length(arrays), red.products
    acc = min((in_fmt, out_fmt), key=lambda f: format_info(f).precision)
    S = magnitude(op, rounded)
    if red.matrix:  # within the slack of the exact product
        exact = matmul64(*rounded)
    else:
        exact = np.asarray(reference(op, rounded, "float64"), np.float64)
    slack = 2 * gamma(n + 1, "float64") * S  # the float64 reference of a matmul
    # every evaluation tried rounds to nearest: a sum's n - 1 additions are within
    # gamma_(n-1) sum |x| in any order (Higham, Accuracy and Stability, 2nd ed., 4.2),
    # a mean's two more (its division; a + (b - a) / 2, pass 18; none for one term,
    # that term in every formula); products and the tensor cores' blocks: twice over,
    # with room to spare
    k = {"sum": n - 1, "mean": 0 if n == 1 else n + 1}.get(op, 2 * n + 64 + products)
    width = gamma(k, acc) * S + _underflow(op, arrays, acc, 4)
    # a result narrower than the data: one rounding more, the cast (else the result's
    # last rounding is among the k; pass 16: 1 ulp off a 1-term sum was "within")
    cast = format_info(out_fmt).precision < format_info(in_fmt).precision
    width = width + 2 * cast * format_info(out_fmt).unit_roundoff * np.abs(exact) + slack
    return exact, width + 2 * _tiny(out_fmt)  # below the normal range: absolute


def signed_zeros(observed: dict, evidence: dict) -> dict:
    """label -> the number of -0.0 elements of a result nothing tried reproduces where another
    result has +0.0, the results being otherwise equal as numbers (empty: not so). In
    round-to-nearest an addition gives -0 only from -0 + -0, so no order gives them."""
    vals = {k: v.astype(np.float64) for k, v in observed.items()}
    first = next(iter(vals.values()))
    if not all(np.array_equal(v, first, equal_nan=True) for v in vals.values()):
        return {}
    plus = np.array([(w == 0) & ~np.signbit(w) for w in vals.values()]).any(0)
    out = {}
    for k, v in vals.items():
        flip = (v == 0) & np.signbit(v) & plus
        if flip.any() and not evidence[k].groups:
            out[k] = int(np.sum(flip))
    return out
