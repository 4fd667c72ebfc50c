"""``cdist``: pairwise Euclidean distances, the expanded formula (|x|^2 + |y|^2 - 2 x.y) vs the
direct one (sqrt(sum((x - y)**2))), each evaluated exactly as written, next to an ``exact``
variant whose every output is the correctly rounded value of the exact real distance.

Arrays keep their storage format F (the inputs' common format); every elementwise operation is
rounded once to F (:class:`fpexplore.ops.formula.RoundedArith`). The reductions run in one of
fpexplore's evaluation orders in an *accumulator* format and are rounded once to F at the end
(:func:`fpexplore.matmul`). Case reproduced (docs/cases.md section 4):
openvinotoolkit/openvino#29552 (the expanded formula cancels catastrophically in float16 for
near-duplicate points).
"""

from __future__ import annotations

import math
import numbers
from typing import TYPE_CHECKING

import numpy as np

from .. import checks
from .._registry import SMALL_DTYPES
from ..data import generate
from ..formats import FormatInfo, as_format, coerce, format_info, format_name, round_f64
from ..held import as_held, held, is_held_data
from ..orders.arith import accumulator_format
from ..orders.registry import lookup as order_lookup
from .formula import RoundedArith, check_held_fits, held_fits, round_ratio
from .opspec import OpSpec, OpTable, pick, with_settings
from .variant import EXACT, FORMULA, Settings, Variant, check_order, order_of

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

__all__ = ["OP_TABLE", "cdist", "cdist_held"]

_F64 = np.dtype(np.float64)

_CDIST_VARIANTS = (
    Variant(
        "expanded",
        "sqrt(clamp(|x|^2 - 2 x.y + |y|^2, 0)): norms by sums, x.y by matmul",
        FORMULA,
    ),
    Variant("direct", "sqrt(sum((x - y)^2)) per pair", FORMULA),
    Variant("exact", "each distance correctly rounded (exact sum of squares, exact sqrt)", EXACT),
)

# ----------------------------------------------------------------------------- cdist


def cdist(
    x: ArrayLike,
    y: ArrayLike,
    *,
    variant: str = "expanded",
    order: str | None = None,
    accumulate: str | None = None,
    fma: bool | None = None,
    clamp: bool | None = None,
    **order_params,
) -> np.ndarray:
    """Pairwise Euclidean distances ``out[i, j] = ||x[i] - y[j]||`` in an exact evaluation order.

    Parameters
    ----------
    x, y : arrays (m, d) and (n, d) of one of ``fpx.FORMATS`` (the storage format F), or
        of one FP8, FP6 or FP4 type of ml_dtypes (F is that format: :func:`cdist_held`)
    variant : "expanded", "direct" or "exact" (``fpx.variants("cdist")``)
    order : str
        Evaluation order of every reduction, one of ``fpx.orders("matmul")`` (default
        "sequential": ``acc = t[0]; acc = acc + t[k]``).
    accumulate : format name, optional
        Accumulator format of the reductions (default F). ``x`` in float16 with
        ``accumulate="float32"`` is "float16 storage, float32 accumulate" (the usual GPU
        practice for half tensors); float16 with the default is "float16 throughout".
    fma : bool, default False
        Fuse each product of ``x @ y.T`` into its accumulation (expanded only, orders with an
        accumulator; see :func:`fpexplore.matmul`).
    clamp : bool, default True
        Expanded only (the other variants refuse it): replace negative squared distances by
        +0 before the sqrt (as ``clamp(min=0)``); without it they give NaN.
    **order_params
        The order's parameters (``block=...``).

    Returns
    -------
    numpy.ndarray
        (m, n) array in F.

    Notes
    -----
    ``RN`` rounds to F; ``sum_A`` is the chosen order in the accumulator format A over one
    row, its result rounded once to F (computed as ``fpx.matmul(t, ones((d, 1)))``: each
    product ``t[k]*1`` is exact, so this is exactly ``fpx.sum(t, order, accumulate=A)``).

    * ``expanded`` (docs/cases.md section 4, openvinotoolkit/openvino#29552)::

          xn[i]   = sum_A(RN(x[i, k] * x[i, k]))           # (x**2).sum(-1)
          yn[j]   = sum_A(RN(y[j, k] * y[j, k]))
          xy      = fpx.matmul(x, y.T, order, fma=fma, accumulate=A)   # rounded to F
          d2[i,j] = RN(RN(xn[i] - RN(2 * xy[i, j])) + yn[j])
          d2      = +0 where d2 < 0 (if clamp; NaN stays NaN)
          out     = RN(sqrt(d2))

    * ``direct``::

          t[k]    = RN(RN(x[i, k] - y[j, k]) ** 2)          # (x - y)**2, two roundings
          out     = RN(sqrt(sum_A(t)))

      ``fma=True`` raises here: the squares are rounded before they are summed.
    * ``exact``: ``RN(sqrt(sum_k (x[i,k] - y[j,k])**2))`` of the exact real value, one rounding
      (``order``, ``accumulate``, ``fma`` and ``clamp`` do not apply and are refused). float16,
      bfloat16, float32: evaluated in float64 with a rigorous relative error bound
      ``(d + 8) * 2**-53`` (all terms are non-negative); pairs whose bound straddles a
      rounding boundary, and all float64 input, take the exact path: the sum of squares as a
      Python integer ``D * 2**(-2S)``, ``r = isqrt(D * 4**k)`` with at least p + 2 bits and a
      sticky bit (``2r + (r*r != D*4**k)``, round to odd), then one rounding to F. Pairs with
      NaN or infinite coordinates get the IEEE float64 value of the direct formula.
    """
    OP_TABLE.lookup("cdist", variant)
    kw = dict(order=order, accumulate=accumulate, fma=fma, clamp=clamp, **order_params)
    if (h := held((x, y), "cdist", ("x", "y"))) is not None:  # FP8, FP6, FP4: in their format
        (x, y), name = h
        return cdist_held(x, y, name, variant, **kw)
    (x, y), info = coerce(x, y, what="cdist", names=("x", "y"))
    return _cdist(x, y, info, variant, **kw)


HELD_EMAX = 255  # a held format's squares and sums stay normal and finite in float64


def cdist_held(
    x: np.ndarray, y: np.ndarray, name: str, variant: str = "expanded", **kw
) -> np.ndarray:
    """:func:`cdist` of the values ``x`` and ``y`` of the held format ``name`` (FP8, FP6 or
    FP4 values in float32, a format of fpx.format's in float64), with :func:`cdist`'s
    keywords: every elementwise operation rounded once to it, the reductions
    :func:`fpexplore.matmul` of its data (each product and addition rounded to it, or to
    ``accumulate``); ``exact`` each distance rounded once. An array of ml_dtypes' type
    (float64 for fpx.format's). fpx.format's formats up to precision 25 (float64 arithmetic
    rounds correctly to them) and emax 255 (its squares stay normal in float64)."""
    OP_TABLE.lookup("cdist", variant)
    info = format_info(name)
    check_held_fits("cdist", info, HELD_EMAX)
    out = _cdist(np.asarray(x), np.asarray(y), info, variant, **kw)
    return np.asarray(as_held(out, name))


def _cdist(
    x,
    y,
    info: FormatInfo,
    variant: str,
    *,
    order=None,
    accumulate=None,
    fma=None,
    clamp=None,
    **order_params,
):
    """cdist of the values x and y of the format ``info`` (see :func:`cdist`)."""
    _check_shapes(x, y)
    _refuse_unused(
        variant, dict(order=order, accumulate=accumulate, fma=fma, clamp=clamp), order_params
    )
    fma = checks.boolean("fma", False if fma is None else fma)
    clamp = checks.boolean("clamp", True if clamp is None else clamp)
    if variant == "exact":
        return _cdist_exact(x, y, info)
    order = "sequential" if order is None else order
    check_order("matmul", order, "cdist")
    _check_order_params(order, order_params)
    if not is_held_data(format_name(accumulate)):  # (FP8, ..., fpx.format's: matmul's check)
        accumulator_format(accumulate, info)
    red = dict(order=order, accumulate=accumulate, **order_params)
    if fma and not _CDIST_SETTINGS[variant].fma:  # (the rule a variant spec is checked by)
        why = _CDIST_SETTINGS[variant].why_no_fma
        raise ValueError(f"fma=True does not apply to cdist variant {variant!r}: {why}")
    if variant == "expanded":
        return _expanded(x, y, info, red, fma, clamp)
    return _direct(x, y, info, red)


def _check_order_params(order: str, order_params: dict) -> None:
    """TypeError naming a keyword that is not the order's (pass 38: metric= read "order
    'sequential' has no parameter metric")."""
    known = order_lookup("matmul", order).params
    if unknown := sorted(set(order_params) - set(known)):
        raise TypeError(
            f"cdist got unknown keyword(s) {', '.join(unknown)}: it takes variant, order, "
            f"accumulate, fma, clamp and the order's parameters ({order}: "
            f"{', '.join(known) or 'none'})"
        )


def _refuse_unused(variant: str, given: dict, order_params: dict) -> None:
    """ValueError naming an argument the variant does not use (exact: all of them; direct:
    clamp), rather than ignoring it."""
    given = {**given, **order_params}
    for k in {"exact": tuple(given), "direct": ("clamp",)}.get(variant, ()):
        if given[k] is not None:
            raise ValueError(
                f"cdist: `{k}` does not apply to variant {variant!r}, got {k}={given[k]!r}"
                + ("; the exact variant rounds each distance once" if variant == "exact" else "")
            )


def _expanded(x, y, info: FormatInfo, red: dict, fma: bool, clamp: bool) -> np.ndarray:
    """cdist's expanded formula (see :func:`cdist`)."""
    F = RoundedArith(info)
    xn = _row_sums(F.mul(x, x), info, red)
    yn = _row_sums(F.mul(y, y), info, red)
    xy = _matmul(x, np.ascontiguousarray(y.T), info, red, fma)
    d2 = F.add(F.sub(xn[:, None], F.mul(F.const(2.0), xy)), yn[None, :])
    if clamp:
        d2 = np.where(d2 < 0, np.zeros((), info.dtype), d2)
    return F.sqrt(d2)


def _direct(x, y, info: FormatInfo, red: dict) -> np.ndarray:
    """cdist's direct formula (see :func:`cdist`), a block of rows at a time."""
    F = RoundedArith(info)
    m, n, d = x.shape[0], y.shape[0], x.shape[1]
    out = np.empty((m, n), dtype=info.dtype)
    rows = max(1, (1 << 18) // max(1, n * d))
    for i in range(0, m, rows):
        xi = x[i : i + rows]
        diff = F.sub(xi[:, None, :], y[None, :, :])
        sq = F.mul(diff, diff)
        d2 = _row_sums(sq.reshape(xi.shape[0] * n, d), info, red).reshape(xi.shape[0], n)
        out[i : i + rows] = F.sqrt(d2)
    return out


def _row_sums(t: np.ndarray, info: FormatInfo, red: dict) -> np.ndarray:
    """Each row of t summed in the order (exactly fpx.sum of the row): t @ ones((d, 1))."""
    ones = np.ones((t.shape[1], 1), dtype=info.dtype)
    return _matmul(np.ascontiguousarray(t), ones, info, red)[:, 0]


def _matmul(A, B, info: FormatInfo, red: dict, fma: bool = False) -> np.ndarray:
    """fpx.matmul of A and B, values of ``info`` (held formats: in it, their values back in
    A's type)."""
    from ..orders import matmul
    from ..orders.products import matmul_held

    if info.storage:
        return matmul(A, B, fma=fma, **red)
    return np.asarray(matmul_held(A, B, info.name, fma=fma, **red)).astype(A.dtype)


def _cdist_exact(x: np.ndarray, y: np.ndarray, info: FormatInfo) -> np.ndarray:
    m, n = x.shape[0], y.shape[0]
    out = np.empty((m, n), dtype=info.dtype)
    X = x.astype(_F64)
    Y = y.astype(_F64)
    if info.name == "float64":
        undecided = np.ones((m, n), dtype=bool)
    else:
        undecided = _cdist_bounds(X, Y, info, out)
    if undecided.any():
        xs = _scaled_ints(X)
        ys = _scaled_ints(Y)
        for i, j in zip(*np.nonzero(undecided)):
            out[i, j] = _exact_distance(X[i], Y[j], xs, ys, i, j, info)
    return out


def _cdist_bounds(X: np.ndarray, Y: np.ndarray, info: FormatInfo, out: np.ndarray) -> np.ndarray:
    """float64 distances with a relative error bound (d + 8) * 2**-53 (non-negative terms;
    no under- or overflow for values of at most 24 bits): stores the pairs whose interval
    rounds to one value of F, returns the mask of the others. Non-finite pairs: IEEE value."""
    m, n, d = X.shape[0], Y.shape[0], X.shape[1]
    rel = (d + 8) * 2.0**-53
    undecided = np.zeros((m, n), dtype=bool)
    rows = max(1, (1 << 18) // max(1, n * d))
    with np.errstate(all="ignore"):
        for i in range(0, m, rows):
            diff = X[i : i + rows, None, :] - Y[None, :, :]
            dist = np.sqrt(np.sum(diff * diff, axis=-1))
            lo = round_f64(dist * (1.0 - rel), info)
            hi = round_f64(dist * (1.0 + rel), info)
            out[i : i + rows] = hi
            same = lo.view(info.uint) == hi.view(info.uint)
            undecided[i : i + rows] = ~(same | ~np.isfinite(dist))
    return undecided


def _scaled_ints(A: np.ndarray):
    """(rows of Python ints, S) with A[i, k] == ints[i][k] * 2**-S exactly (finite entries)."""
    vals = A.tolist()
    S = 0
    for row in vals:
        for v in row:
            if math.isfinite(v) and v != 0:
                S = max(S, v.as_integer_ratio()[1].bit_length() - 1)
    ints = []
    for row in vals:
        r = []
        for v in row:
            if math.isfinite(v):
                num, den = v.as_integer_ratio()
                r.append(num << (S - (den.bit_length() - 1)))
            else:
                r.append(None)
        ints.append(r)
    return ints, S


def _exact_distance(xr, yr, xs, ys, i, j, info: FormatInfo) -> float:
    xi, Sx = xs
    yj, Sy = ys
    a, b = xi[i], yj[j]
    if any(v is None for v in a) or any(v is None for v in b):
        with np.errstate(all="ignore"):
            diff = xr - yr
            return float(np.sqrt(np.sum(diff * diff)))
    S = max(Sx, Sy)
    ax, by = S - Sx, S - Sy
    D = sum(((p << ax) - (q << by)) ** 2 for p, q in zip(a, b))  # distance^2 = D * 2**(-2S)
    return _round_sqrt(D, -2 * S, info)


def _round_sqrt(D: int, K: int, info: FormatInfo) -> float:
    """sqrt(D * 2**K) rounded once to nearest-even in ``info`` (D >= 0 an int, K even)."""
    if D == 0:
        return 0.0
    # r = isqrt(D * 4**k) with at least p + 2 bits; 2r + sticky is round-to-odd of 2*sqrt(..)
    k = max(0, info.precision + 3 - D.bit_length() // 2)
    M = D << (2 * k)
    r = math.isqrt(M)
    q = 2 * r + (r * r != M)
    e = K // 2 - k - 1
    return round_ratio(q << max(e, 0), 1 << max(-e, 0), info)


def _cdist_inputs(n, fmt, distribution, seed, params):
    """x: n points of dimension d (param ``d``, default 16) from the distribution; y: the same
    points moved by ``closeness`` (default 1e-2) times normal noise, so that the expanded
    formula cancels (docs/cases.md section 4)."""
    d, close = params.get("d", 16), params.get("closeness", 1e-2)  # (checked by compare)
    x = generate(distribution, n * d, "float64", seed).reshape(n, d)
    noise = generate("normal", n * d, "float64", seed + 1).reshape(n, d) * close
    out = {"format": fmt, "x": as_format(x, fmt), "y": as_format(x + noise, fmt)}
    for k in ("x", "y"):  # (FP8, FP6, FP4: ml_dtypes' types)
        out[k] = np.asarray(out[k]).astype(SMALL_DTYPES.get(fmt, out[k].dtype))
    return out


_CDIST_KEYS = ("order", "accumulate", "fma", "clamp", "block")
MAX_D = 1024  # compare's largest dimension d (an exact distance costs d exact products)


def _closeness(v) -> float:
    """compare's ``closeness``: a finite real number >= 0, the scale of float64 noise."""
    if isinstance(v, bool) or not isinstance(v, numbers.Real) or not 0 <= v < math.inf:
        raise ValueError(f"closeness must be a finite number >= 0, got {checks.shown(v)}")
    return float(v)


def _cdist_call(name, settings, inputs, params):
    kw = pick(params, _CDIST_KEYS)
    if name != "expanded":
        kw.pop("clamp", None)
        kw.pop("fma", None)
    if name == "exact":
        kw = {}  # rounded once from the exact distances: no order, accumulator or fma
    kw = with_settings(kw, settings, "matmul")  # the spec's own settings win
    if format_info(inputs["format"]).user_defined:  # (float64 values, the format named)
        return cdist_held(inputs["x"], inputs["y"], inputs["format"], name, **kw)
    return cdist(inputs["x"], inputs["y"], variant=name, **kw)


def _check_shapes(x, y) -> None:
    if x.ndim != 2 or y.ndim != 2 or x.shape[1] != y.shape[1]:
        raise ValueError(
            "cdist takes 2-D arrays (m, d) and (n, d) with the same number of columns d, got "
            f"shapes {x.shape} and {y.shape}"
        )


def _cdist_numpy(inputs, params):
    x, y = inputs["x"], inputs["y"]
    _check_shapes(x, y)  # (your own arrays reach NumPy's row first)
    with np.errstate(all="ignore"):
        return np.sqrt(((x[:, None, :] - y[None, :, :]) ** 2).sum(-1))


# what each variant's spec may say: "expanded(order=blocked, block=8)+fma@float32"
_SQUARES = (
    "each square is rounded to the storage format before it is summed; it applies to "
    "'expanded' (the x @ y.T products)"
)
_CDIST_SETTINGS = {
    "expanded": Settings(
        {**order_of("matmul"), "clamp": (True, checks.boolean_check("clamp"))},
        order_of="matmul",
        order_params=True,
        accumulate=True,
        held=True,
        fma=True,
    ),
    "direct": Settings(
        order_of("matmul"),
        order_of="matmul",
        order_params=True,
        accumulate=True,
        held=True,
        why_no_fma=_SQUARES,
    ),
}


def _cdist_kernels(name, kw, info):
    from ..orders.registry import kernel_needs

    if name == "exact":
        return []
    order = kw.get("order") or "sequential"
    acc = kw.get("accumulate") or (None if info.storage else info.name)  # (held: in it)
    return kernel_needs("matmul", order, info, acc)


OP_TABLE = OpTable(
    OpSpec(
        "cdist",
        "pairwise Euclidean distances between the rows of x (m, d) and y (n, d)",
        _CDIST_VARIANTS,
        inputs=_cdist_inputs,
        call=_cdist_call,
        reference=lambda inputs, params, fmt: _cdist_call("exact", {}, inputs, {}),
        available=lambda fmt: (
            [v.name for v in _CDIST_VARIANTS] if held_fits(format_info(fmt), HELD_EMAX) else []
        ),
        numpy=_cdist_numpy,
        numpy_label="numpy broadcast",
        default_variants=("expanded", "direct"),
        max_n=2048,
        default_n=100,
        size_of=lambda n, itemsize: n * n * 64,
        settings=_CDIST_SETTINGS,
        keywords={
            **dict.fromkeys(_CDIST_KEYS),
            "d": checks.int_check("d", 1, MAX_D),
            "closeness": _closeness,
        },
        kernels=_cdist_kernels,
        rank=20,
    ),
)
