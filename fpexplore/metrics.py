"""Error metrics against a reference, and a-priori error bounds (Higham).

* :func:`ulp_error`: signed ULPs from the reference to the value (``ulp_distance(ref, value)``),
  NaN-tolerant (both NaN: 0; one NaN: ``ULP_NAN``).
* :func:`bits_error`: ``log2(1 + |ulp error|)``, as Herbie reports it (0 = correctly rounded
  when the reference is the correctly rounded result).
* :func:`rel_error`: ``|value - ref| / |ref|``, computed exactly (Fractions) and returned as a
  float64; ``inf`` when ref is 0 and value is not, ``nan`` for NaN/inf mismatches.
* :func:`summarize`: the per-variant numbers the explorer tables show.
* Bounds on |computed sum - exact sum| for n terms with S = sum |x_i| and unit roundoff u
  (Higham, *Accuracy and Stability of Numerical Algorithms*, 2nd ed., §4.2 and §3.1; Higham &
  Mary 2019 for the probabilistic one): :func:`gamma`, :func:`sum_bound`, :func:`dot_bound`.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import TYPE_CHECKING

import numpy as np

from . import checks
from .formats import ULP_NAN, coerce, format_info, ulp_distance

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

__all__ = [
    "pass_rate",
    "bits_error",
    "dot_bound",
    "gamma",
    "posterior_sum_bound",
    "rel_error",
    "sum_bound",
    "sum_depth",
    "summarize",
    "ulp_error",
]


def ulp_error(value, reference, fmt=None):
    """Signed number of representable values from ``reference`` to ``value`` (int64).

    Both must have the same format (``fmt``: a format of ``fpx.format`` whose values both hold
    in float64, counted on its grid). NaN handling: 0 where both are NaN, :data:`ULP_NAN`
    where exactly one is (so "disagree on NaN" is visible and never counted as small).
    """
    return ulp_distance(reference, value, nan="sentinel", fmt=fmt)


def bits_error(ulps):
    """``log2(1 + |ulps|)`` as float64; ``ULP_NAN`` entries give ``inf``."""
    u = np.asarray(ulps, dtype=np.int64)
    out = np.log2(1.0 + np.abs(u.astype(np.float64)))
    return np.where(u == ULP_NAN, np.inf, out)


def rel_error(value, reference):
    """Exact ``|value - reference| / |reference|`` rounded to float64, elementwise."""
    v = np.asarray(value)
    r = np.asarray(reference)
    v, r = np.broadcast_arrays(v, r)
    out = np.empty(v.shape, dtype=np.float64)
    fv = v.astype(np.float64).reshape(-1)
    fr = r.astype(np.float64).reshape(-1)
    flat = out.reshape(-1)
    for i, (a, b) in enumerate(zip(fv.tolist(), fr.tolist())):
        if math.isnan(a) or math.isnan(b):
            flat[i] = 0.0 if (math.isnan(a) and math.isnan(b)) else math.nan
        elif math.isinf(a) or math.isinf(b):
            flat[i] = 0.0 if a == b else math.inf
        elif b == 0:
            flat[i] = 0.0 if a == 0 else math.inf
        else:
            flat[i] = _to_float(abs(Fraction(a) - Fraction(b)) / abs(Fraction(b)))
    return out[()] if out.ndim == 0 else out


def _to_float(q: Fraction) -> float:
    """``q`` rounded to float64; past its largest value (a subnormal reference) ``inf``."""
    try:
        return float(q)
    except OverflowError:
        return math.inf


def _same_sign(v, r) -> np.ndarray:
    """Per element: the signs agree, or the value is NaN (0 ulps apart, bit-equal then: the
    ulps of -0 and +0 are 0 apart; pass 17: np.mean's +0 against -0 counted as exact)."""
    with np.errstate(invalid="ignore"):
        sv, sr = np.broadcast_arrays(np.signbit(v), np.signbit(r))
        return ((sv == sr) | np.isnan(np.asarray(v, np.float64))).reshape(-1)


def summarize(value, reference, fmt=None) -> dict:
    """Summary numbers of a result (scalar or array) against its reference (``fmt``: as for
    :func:`ulp_error`).

    Keys: ``n`` (elements), ``exact_share`` (share bit-equal to the reference, NaN == NaN),
    ``max_abs_ulp`` (an int, exact: float64 results far apart are more than 2**53 ulps apart;
    ``inf`` where an element is NaN and its reference not, or the reverse; ``2**63 - 1``, the
    saturated distance of :func:`~fpexplore.formats.ulp_distance`, means at least that many),
    ``mean_abs_ulp`` (a float; ``ULP_NAN`` elements count as infinite), ``ulp``
    (the signed error of a scalar result, else the one of largest magnitude), ``max_bits``,
    ``max_rel`` (largest exact relative error; an element NaN where the reference is not, or
    the reverse, counts as infinite).
    """
    v = np.asarray(value)
    r = np.asarray(reference)
    u = np.asarray(ulp_error(v, r, fmt)).reshape(-1)
    nan_mismatch = u == ULP_NAN
    absu = np.where(nan_mismatch, np.inf, np.abs(u.astype(np.float64)))
    n = int(u.size)
    # the largest distance in int64, exact (float64 rounds counts beyond 2**53: far-apart
    # float64 results); abs() of ULP_NAN would overflow, so those elements are left out
    exact_abs = np.abs(np.where(nan_mismatch, 0, u))
    if nan_mismatch.any():
        worst, largest = ULP_NAN, math.inf
    else:
        k = int(np.argmax(exact_abs)) if n else 0
        worst, largest = (int(u[k]), int(exact_abs[k])) if n else (0, 0)
    # the largest relative error: located in float64 (exact differences of values of the
    # same format are within one float64 rounding), then computed exactly for that element
    rel = _rel_fast(v, r) if n else np.zeros(0)
    max_rel = 0.0
    if n and np.any(np.isnan(rel)):  # NaN against a number: no relative error is smaller
        max_rel = math.inf
    elif n:
        k = int(np.nanargmax(rel))
        max_rel = float(rel_error(v.reshape(-1)[k], r.reshape(-1)[k]))
    return {
        "n": n,
        "exact_share": float(np.mean((u == 0) & _same_sign(v, r))) if n else 1.0,
        "max_abs_ulp": largest,
        "mean_abs_ulp": float(absu.mean()) if n else 0.0,
        "ulp": worst,
        "max_bits": float(bits_error(worst)) if n else 0.0,
        "max_rel": max_rel,
    }


def _rel_fast(v, r):
    """Relative errors in float64 (two roundings: the difference and the quotient), with the
    special cases of :func:`rel_error`."""
    shape = np.broadcast(v, r).shape
    a = np.broadcast_to(np.asarray(v), shape).astype(np.float64).reshape(-1)
    b = np.broadcast_to(np.asarray(r), shape).astype(np.float64).reshape(-1)
    with np.errstate(all="ignore"):
        d = a - b  # past float64's largest (±max against ∓max): halved, the quotient doubled
        big = np.isinf(d) & np.isfinite(a) & np.isfinite(b)
        out = np.where(big, np.abs(a / 2 - b / 2) / np.abs(b) * 2, np.abs(d) / np.abs(b))
    out[(a == b) | (np.isnan(a) & np.isnan(b))] = 0.0
    return out


# ----------------------------------------------------------------------------- bounds


def gamma(k, fmt) -> float:
    """gamma_k = k u / (1 - k u) for the format's unit roundoff u (inf once k u >= 1)."""
    u = format_info(fmt).unit_roundoff
    ku = k * u
    return math.inf if ku >= 1 else ku / (1 - ku)


def _abs_sum(x) -> float:
    return float(np.sum(np.abs(np.asarray(x, dtype=np.float64))))


def sum_depth(n: int, order: str, *, block: int = 128) -> int:
    """The most additions any one term goes through in ``order`` (an upper bound); a summation
    of depth d has error at most gamma_d * sum|x_i| (Higham §4.2, any summation tree). Each
    order's formula is its registry entry's ``depth`` (fpexplore/orders/registry.py)."""
    from .orders.registry import lookup

    spec = lookup("sum", order)
    if n <= 1:
        return 0
    if spec.depth is None:
        raise ValueError(f"no depth for order {checks.shown(order)}")
    return spec.depth(n, spec.validate({"block": block} if "block" in spec.params else {}))


def sum_bound(x, order: str = "sequential", fmt=None, *, block: int = 128, lam: float = 1.0):
    """A bound on |computed sum - exact sum| for summing ``x`` in ``order`` (a float).

    Worst case (Higham §4.2): ``gamma_d * S`` with S = sum |x_i| and d = :func:`sum_depth`
    (sequential: n - 1; pairwise: ceil(log2 n); blocked: b - 1 + n/b; ...). Compensated
    (kahan, neumaier): ``(2u + gamma_n**2) S`` (Higham §4.3). ``"exact"``: the final rounding,
    ``u |sum|``. ``order="probabilistic"``: ``lam * sqrt(n) * u * S`` (Higham & Mary 2019;
    holds with probability >= 1 - 2 exp(-lam**2 / 2) under their model of independent
    rounding errors). ``fmt`` (default: x's format) gives u.
    """
    x = np.asarray(x)
    fmt = fmt or format_info(x.dtype).name
    n = x.size
    S = _abs_sum(x)
    u = format_info(fmt).unit_roundoff
    if n <= 1:
        return 0.0
    if order in ("kahan", "neumaier"):
        return (2 * u + gamma(n, fmt) ** 2) * S
    if order == "exact":
        return u * abs(float(np.sum(x.astype(np.float64))))
    if order == "probabilistic":
        return lam * math.sqrt(n) * u * S
    return gamma(sum_depth(n, order, block=block), fmt) * S


def posterior_sum_bound(partial_sums, fmt) -> float:
    """A-posteriori bound for any order: u * sum |partial sums| (each addition's error is at
    most u times its result; Higham §4.2 eq. (4.3))."""
    return format_info(fmt).unit_roundoff * _abs_sum(partial_sums)


def dot_bound(a, b, fmt=None) -> float:
    """gamma_n |a|^T |b|: recursive dot product without FMA (Higham §3.1)."""
    a = np.asarray(a)
    fmt = fmt or format_info(a.dtype).name
    s = float(np.sum(np.abs(a.astype(np.float64)) * np.abs(np.asarray(b, dtype=np.float64))))
    return gamma(a.size, fmt) * s


def pass_rate(a: ArrayLike, b: ArrayLike) -> float:
    """Share of elements of ``a`` and ``b`` that are bit-for-bit equal, as the Ascend article's
    "pass rate".

    Any NaN equals any NaN; ``-0.0`` and ``+0.0`` differ.

    Parameters
    ----------
    a, b : array_like
        The same shape and format.

    Returns
    -------
    float
        The share from 0.0 to 1.0; NaN for empty arrays.

    Raises
    ------
    TypeError
        Mixed formats.
    ValueError
        Shapes that differ.

    Examples
    --------
    >>> fpx.pass_rate(np.array([1.0, -0.0, np.nan]), np.array([1.0, 0.0, np.nan]))
    0.6666666666666666
    """
    (a, b), info = coerce(a, b, what="pass_rate", names=("a", "b"))
    if a.shape != b.shape:
        raise ValueError(f"pass_rate: shapes {a.shape} and {b.shape} differ")
    if a.size == 0:
        return math.nan
    same = a.view(info.uint) == b.view(info.uint)
    with np.errstate(invalid="ignore"):
        same |= np.isnan(a.astype(np.float64)) & np.isnan(b.astype(np.float64))
    return float(np.count_nonzero(same)) / a.size
