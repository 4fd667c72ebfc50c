"""Elementwise math (exp, log, sin, tanh, sqrt, pow): library results vs correctly rounded.

Every function takes arrays of one of ``fpx.FORMATS`` (Python floats and lists adopt the
array's format when exactly representable, see ``fpx.as_format``) and returns the result in
that format, element by element, with the input's shape (0-d input gives a NumPy scalar).
FP8, FP6 and FP4 arrays (ml_dtypes' OCP types) and the formats of ``fpx.format`` (compare's
``format=``; :func:`apply_held`) compute in their own format: see :func:`apply_held`.

Variants
--------
``numpy`` (library)
    NumPy's own ufunc in the input's format: ``np.exp(x)`` etc., whatever this CPU dispatches
    to (SIMD code or the C library; float16 goes through NumPy's half loops, bfloat16 through
    ml_dtypes' ufuncs, which call the C++ library's float32 function and round once).
    Floating-point warnings are silenced; the values are exactly what NumPy returns.
``wide`` (formula)
    The same NumPy function evaluated in a wider format and rounded once to the input's
    format: float16 and bfloat16 through float32, float32 through float64, float64 through
    ``np.longdouble`` (x86-64 Linux: 80-bit extended, 64-bit significand; where
    ``np.longdouble`` is float64, as on Windows and macOS arm64, it equals ``numpy``). This is
    a double rounding: the wide result is itself rounded, so it can still differ from the
    correctly rounded one. Example: bfloat16 ``exp(6.84375)`` is 940 (exact) but 936 here,
    because NumPy's float32 ``exp`` returns 938.0 (glibc's ``expf``: 938.00006), a tie that
    rounds to even; ml_dtypes (``numpy``) gets 940.
``exact`` (exact)
    The correctly rounded value (round to nearest, ties to even) of the real function at the
    input, with IEEE 754 / C99 Annex F special values (below). See "How exact is computed".

Special values of ``exact`` (C99 F.9): ``exp(±0) = 1``, ``exp(-inf) = +0``, ``exp(+inf) =
+inf``; ``log(±0) = -inf``, ``log(1) = +0``, ``log(x<0) = nan``, ``log(+inf) = +inf``;
``sin(±0) = ±0``, ``sin(±inf) = nan``; ``tanh(±0) = ±0``, ``tanh(±inf) = ±1``; ``sqrt(-0) =
-0``, ``sqrt(x<0) = nan``; ``pow`` follows F.9.4.4 to the letter (``pow(x, ±0) = 1`` and
``pow(1, y) = 1`` even for NaN, ``pow(-1, ±inf) = 1``, ``pow(±0, y)`` and ``pow(±inf, y)``
by the sign and oddness of y, ``pow(x<0, non-integer) = nan``, ...). NaN in gives NaN out
otherwise. Results overflow to ``±inf`` and underflow gradually through the subnormals.

How exact is computed
---------------------
``sqrt`` needs no search: IEEE 754 requires a correctly rounded square root, so float64 uses
``np.sqrt`` directly, and the narrower formats round ``np.sqrt`` of the float64 value once
more; that double rounding is innocuous for sqrt because 53 >= 2p + 2 (Figueroa, "When is
double rounding innocuous?", SIGNUM Newsl. 30(3), 1995). A format of ``fpx.format`` of
precision 26 to 53 is past that: its sqrt takes Ziv's loop below (never a midpoint: the
square of a number with p + 1 significant bits and an odd last one has 2p + 2 > p).

The other functions use Ziv's strategy: an approximation ``v`` with a known error bound is
rounded at both ends of its error interval; if both ends round to the same value, that value
is the correctly rounded result, otherwise the element is recomputed more accurately.

1. Fast tier, vectorized. Results in every format but float64 come from NumPy's float64
   function (inputs are exact in float64). We *assume* its relative error is below
   ``2**-40``: that is 4096 float64 ulps, while the C libraries (glibc claims < 1 ulp for
   these) and NumPy's SIMD code (Intel SVML: <= 4 ulp) are far better; measured on the
   development machine the worst was 1.1 ulp. float64 results come from ``np.longdouble``
   when it has at least a 64-bit significand (x86-64 Linux), assumed accurate to ``2**-58``
   (32 ulps of the extended format; glibc's long double functions measured <= 2.2 ulps).
   The interval used is twice the assumed bound.
2. Elements whose interval contains a rounding boundary (a midpoint between two neighbours
   in the target format) go to mpmath: the function is evaluated at working precision
   ``P = p + 48`` bits, then ``2P``, ``4P``, ... (assumed error ``2**-(P-12)`` relative, mpmath
   being accurate to a few ulps of P), until both ends of the interval round alike (FP8,
   FP6, FP4 and fpx.format's: both ends rounded from exact rationals by ``fpx.as_format``,
   with the format's own subnormals and overflow). ``pow``
   is computed as ``exp(y*log|x|)`` with the logarithm carried to enough extra bits for the
   magnitude of ``y*log|x|``. exp, log, sin and tanh of a nonzero float are transcendental
   (Lindemann-Weierstrass), so they are never exactly a midpoint and the loop ends; ``pow``
   *can* be exactly a midpoint (``63.0**2`` is one in float16), so ``pow`` first recognises
   every rational result ``x**y`` (y an integer, or y = a/2**k with x a perfect 2**k-th
   power) and rounds it exactly (by ``fpx.as_format`` in the formats just named).

float64 is the slow format of ``exact``: about one element in ten needs mpmath, and every one
does where there is no extended long double (docs/performance.md has the
timings).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

from .. import checks
from .._registry import SMALL_DTYPES
from ..data import generate
from ..formats import FormatInfo, as_format, coerce, format_info, scalar_out, ulp_distance
from ..held import has_nan, held, is_held_data
from ..numerics import ZIV_SLACK
from .formula import round_ratio, ziv_round
from .opspec import OpSpec, OpTable, Recording
from .variant import EXACT, FORMULA, LIBRARY, Variant

if TYPE_CHECKING:
    from collections.abc import Callable

    from numpy.typing import ArrayLike

__all__ = [
    "FUNCTIONS",
    "OP_TABLE",
    "apply_held",
    "exp",
    "log",
    "pow",
    "sin",
    "sqrt",
    "tanh",
    "ulp_error",
]

#: name -> number of arguments
FUNCTIONS = {"exp": 1, "log": 1, "sin": 1, "tanh": 1, "sqrt": 1, "pow": 2}

_NP = {
    "exp": np.exp,
    "log": np.log,
    "sin": np.sin,
    "tanh": np.tanh,
    "sqrt": np.sqrt,
    "pow": np.power,
}

_DESCRIPTIONS = {
    "exp": "e**x, elementwise",
    "log": "natural logarithm, elementwise",
    "sin": "sine (radians), elementwise",
    "tanh": "hyperbolic tangent, elementwise",
    "sqrt": "square root, elementwise (correctly rounded in IEEE 754)",
    "pow": "x**y, elementwise, broadcasting",
}


def _variants(name: str) -> list[Variant]:
    f = f"np.{_NP[name].__name__}"
    return [
        Variant("numpy", f"{f} in the input's format (bfloat16: ml_dtypes)", LIBRARY),
        Variant(
            "wide",
            f"{f} in the next wider format (float16/bfloat16: float32, float32: float64, "
            "float64: long double), rounded once",
            FORMULA,
        ),
        Variant("exact", "correctly rounded (round to nearest even), C99 special values", EXACT),
    ]


_F64 = np.dtype(np.float64)
_LD = np.dtype(np.longdouble)
_EXTENDED = np.finfo(np.longdouble).nmant >= 63  # long double has >= 64 significand bits

# Assumed relative error bounds of the fast tier and the half-widths of the intervals used
# (twice the bound: the interval ends are themselves computed in floating point).
_REL64 = 2.0**-39  # NumPy float64 functions: assumed < 2**-40
_RELLD = np.longdouble(2.0**-57)  # long double functions: assumed < 2**-58

_MAX_PREC = 1 << 16


# ----------------------------------------------------------------------------- public API


def exp(x: ArrayLike, *, variant: str = "numpy") -> np.ndarray | np.generic:
    """``e**x`` elementwise, in x's format.

    Parameters
    ----------
    x : array_like of one of ``fpx.FORMATS``
    variant : {"numpy", "wide", "exact"}
        See the module docstring: NumPy's ufunc, NumPy in a wider format rounded once, or the
        correctly rounded value.

    Returns
    -------
    numpy.ndarray or numpy.generic
        An array of x's shape and format (a NumPy scalar for 0-d input).
    """
    return _apply("exp", (x,), variant)


def log(x: ArrayLike, *, variant: str = "numpy") -> np.ndarray | np.generic:
    """Natural logarithm elementwise, in x's format (``log(±0) = -inf``, ``log(x<0) = nan``).

    Parameters
    ----------
    x : array_like of one of ``fpx.FORMATS``
    variant : {"numpy", "wide", "exact"}
        As in :func:`exp`.

    Returns
    -------
    numpy.ndarray or numpy.generic
        An array of x's shape and format (a NumPy scalar for 0-d input).
    """
    return _apply("log", (x,), variant)


def sin(x: ArrayLike, *, variant: str = "numpy") -> np.ndarray | np.generic:
    """Sine (radians) elementwise, in x's format; ``exact`` is correctly rounded for every
    argument, including huge ones (mpmath reduces modulo pi with enough bits).

    Parameters
    ----------
    x : array_like of one of ``fpx.FORMATS``
    variant : {"numpy", "wide", "exact"}
        As in :func:`exp`.

    Returns
    -------
    numpy.ndarray or numpy.generic
        An array of x's shape and format (a NumPy scalar for 0-d input).
    """
    return _apply("sin", (x,), variant)


def tanh(x: ArrayLike, *, variant: str = "numpy") -> np.ndarray | np.generic:
    """Hyperbolic tangent elementwise, in x's format.

    Parameters
    ----------
    x : array_like of one of ``fpx.FORMATS``
    variant : {"numpy", "wide", "exact"}
        As in :func:`exp`.

    Returns
    -------
    numpy.ndarray or numpy.generic
        An array of x's shape and format (a NumPy scalar for 0-d input).
    """
    return _apply("tanh", (x,), variant)


def sqrt(x: ArrayLike, *, variant: str = "numpy") -> np.ndarray | np.generic:
    """Square root elementwise, in x's format (``sqrt(-0) = -0``, ``sqrt(x<0) = nan``).

    IEEE 754 requires sqrt to be correctly rounded, so ``numpy`` and ``exact`` agree wherever
    NumPy (or ml_dtypes) is IEEE conforming; ``exact`` uses ``np.sqrt`` as its fast path.

    Parameters
    ----------
    x : array_like of one of ``fpx.FORMATS``
    variant : {"numpy", "wide", "exact"}
        As in :func:`exp`.

    Returns
    -------
    numpy.ndarray or numpy.generic
        An array of x's shape and format (a NumPy scalar for 0-d input).
    """
    return _apply("sqrt", (x,), variant)


def pow(  # noqa: A001  (like math.pow)
    x: ArrayLike, y: ArrayLike, *, variant: str = "numpy"
) -> np.ndarray | np.generic:
    """``x**y`` elementwise with broadcasting, in the common format of x and y.

    ``exact`` follows C99 Annex F.9.4.4 for special cases and recognises exact results
    (``63.0**2`` is a midpoint in float16 and rounds to even).

    Parameters
    ----------
    x, y : array_like of one of ``fpx.FORMATS``
        Both must have the same format (Python floats adopt the array's format if exact).
    variant : {"numpy", "wide", "exact"}
        As in :func:`exp`.

    Returns
    -------
    numpy.ndarray or numpy.generic
        An array of the broadcast shape in the common format (a NumPy scalar for 0-d input).
    """
    return _apply("pow", (x, y), variant)


def ulp_error(
    func: str | Callable, x: ArrayLike, y: ArrayLike | None = None, *, variant: str = "numpy"
) -> np.ndarray | np.generic:
    """Signed ULP error of a variant of an elementwise function against the exact result.

    Parameters
    ----------
    func : str or function
        ``"exp"``, ``"log"``, ``"sin"``, ``"tanh"``, ``"sqrt"``, ``"pow"`` or the function
        itself (``fpexplore.ops.elementwise.exp`` ...).
    x, y : array_like
        The arguments (``y`` only for ``pow``).
    variant : str
        The variant to measure (default ``"numpy"``).

    Returns
    -------
    numpy.ndarray or numpy.generic of int64
        ``fpx.ulp_distance(exact, result, nan="sentinel")``, i.e. the number of representable
        values from the correctly rounded result to the variant's (positive: the variant is
        above). 0 where both are NaN, ``fpx.ULP_NAN`` where exactly one is NaN; ``±inf``
        counts as one step past ``±max``.
    """
    name = func if isinstance(func, str) else getattr(func, "__name__", None)
    if name not in FUNCTIONS:
        raise ValueError(
            f"func: unknown function {checks.shown(func)}; valid functions: {', '.join(FUNCTIONS)}"
        )
    if not isinstance(func, str) and func is not _FUNCTIONS[name]:  # (pass 38: any `exp`)
        raise ValueError(
            f"func={checks.shown(func)} is not fpexplore's {name}: ulp_error measures "
            f"fpexplore's variants (func={name!r}); for results of your own, "
            f"fpx.ulp_distance(fpx.{name}(x, variant='exact'), yours)"
        )
    OP_TABLE.lookup(name, variant)
    args = (x,) if FUNCTIONS[name] == 1 else (x, y)
    if FUNCTIONS[name] == 1 and y is not None:
        raise TypeError(f"{name} takes one argument; got y")
    if FUNCTIONS[name] == 2 and y is None:
        raise TypeError(f"{name} takes two arguments (x, y)")
    got = _apply(name, args, variant)
    ref = _apply(name, args, "exact")
    return ulp_distance(ref, got, nan="sentinel")


# ----------------------------------------------------------------------------- dispatch


def _apply(name: str, args: tuple, variant: str):
    OP_TABLE.lookup(name, variant)  # ValueError listing the valid variants
    names = ("x", "y") if len(args) == 2 else None  # (pow: which argument a message is of)
    if (h := held(args, name, names or ())) is not None:  # FP8, FP6, FP4 data: in their format
        values, fmt = h
        return apply_held(name, values, fmt, variant)
    arrays, info = coerce(*args, what=name, broadcast=True, names=names)
    if len(arrays) > 1:
        arrays = np.broadcast_arrays(*arrays)
    arrays = [np.asarray(a) for a in arrays]
    if variant == "numpy":
        with np.errstate(all="ignore"):
            out = np.asarray(_NP[name](*arrays))
    elif variant == "wide":
        out = _wide(name, arrays, info)
    else:
        out = _exact(name, arrays, info)
    assert out.dtype == info.dtype, (out.dtype, info.dtype)
    return scalar_out(out)


def apply_held(name: str, values: tuple, fmt: str, variant: str = "exact"):
    """The function ``name``'s variant of the values ``values`` (one array, two for pow) of
    the held format ``fmt``: FP8, FP6 or FP4 values in float32 (the result in ml_dtypes'
    type), or those of a format of ``fpx.format`` in float64 (the result in float64).

    ``numpy`` is ml_dtypes' ufunc (it computes in float32 and rounds once); a format of
    ``fpx.format`` has no NumPy function. ``wide`` rounds NumPy's function in the narrowest
    of float32, float64 and long double that holds every value of ``fmt`` with more
    precision (float16's twin: float32, as float16's). ``exact`` is correctly rounded with
    the format's own subnormals and overflow (E4M3: NaN; FP6 and FP4 saturate to their
    largest value, ``-inf`` included, as ``fpx.as_format`` does). A NaN result in FP6 or FP4,
    which have none, is refused."""
    OP_TABLE.lookup(name, variant)
    info = format_info(fmt)
    if variant not in _available(name)(fmt):
        raise ValueError(
            f"{name}: variant {variant!r} does not compute in {fmt} (a format of fpx.format: "
            f"no NumPy function computes in it); its variants: {', '.join(_available(name)(fmt))}"
        )
    arrays = [np.asarray(a) for a in np.broadcast_arrays(*values)]
    if variant == "numpy":
        with np.errstate(all="ignore"):
            out = np.asarray(_NP[name](*[a.astype(SMALL_DTYPES[fmt]) for a in arrays]))
        return scalar_out(out)
    out = _wide(name, arrays, info) if variant == "wide" else _exact(name, arrays, info)
    if not has_nan(fmt) and (nan := np.isnan(out.astype(_F64))).any():
        at = tuple(float(a[nan].reshape(-1)[0]) for a in arrays)
        raise ValueError(
            f"{name}{at if len(at) > 1 else f'({at[0]!r})'} is NaN, which {fmt} cannot hold "
            "(it has no NaN); convert the data first, e.g. x.astype(np.float32)"
        )
    if not info.user_defined:
        out = out.astype(SMALL_DTYPES[fmt])
    return scalar_out(out)


def _wider(info: FormatInfo):
    """The narrowest of float32, float64 and long double holding every value of ``info``
    with more precision: float16 and bfloat16 float32, float32 float64, float64 long double."""
    for t in (np.float32, np.float64):
        w = format_info(t)
        if w.precision > info.precision and w.emax >= info.emax and _least(w) <= _least(info):
            return t
    return np.longdouble


def _least(info: FormatInfo) -> int:
    """The exponent of the least positive value."""
    return info.emin - info.precision + 1 if info.subnormals else info.emin


def _wide(name: str, arrays: list, info: FormatInfo) -> np.ndarray:
    wide = _wider(info)
    with np.errstate(all="ignore"):
        r = np.asarray(_NP[name](*[a.astype(wide) for a in arrays]))
        if wide is np.longdouble:
            r = r.astype(_F64)  # long double -> double: one IEEE conversion
            if info.name == "float64":
                return r
    return np.asarray(as_format(r, info.name))


# ----------------------------------------------------------------------------- exact


def _exact(name: str, arrays: list, info: FormatInfo) -> np.ndarray:
    shape = arrays[0].shape
    with np.errstate(invalid="ignore"):  # NaN patterns of ml_dtypes formats
        flat = [np.ascontiguousarray(a).reshape(-1).astype(_F64) for a in arrays]
    if name == "sqrt" and (info.precision <= 25 or info.name == "float64"):
        with np.errstate(invalid="ignore"):
            r = np.sqrt(flat[0])  # IEEE: correctly rounded in float64
        return np.asarray(as_format(r, info.name)).reshape(shape)  # innocuous for p <= 25
    out, todo = _SPECIALS[name](*flat, info)
    idx = np.flatnonzero(todo)
    if idx.size:
        sub = [a[idx] for a in flat]
        values, decided = _fast(name, sub, info)
        out[idx[decided]] = values[decided]
        slow = _SLOW[name]
        done: dict = {}  # 16-bit data repeats values: each is computed once
        for k in idx[~decided].tolist():
            args = tuple(float(a[k]) for a in flat)
            key = tuple(v.hex() for v in args)
            if key not in done:
                done[key] = slow(*args, info)
            out[k] = done[key]
    if not info.storage:  # FP8, FP6, FP4, fpx.format's: ±inf to the format's own overflow
        return np.asarray(as_format(out, info.name)).reshape(shape)
    with np.errstate(all="ignore"):
        return out.astype(info.dtype).reshape(shape)  # values are representable: exact


def _specials_sqrt(x, info):
    out = np.full(x.shape, np.nan)  # NaN, x < 0, -inf
    out[x == 0] = x[x == 0]  # keeps the sign
    out[x == np.inf] = np.inf
    return out, np.isfinite(x) & (x > 0)


def _specials_exp(x, info):
    out = np.full(x.shape, np.nan)
    out[x == np.inf] = np.inf
    out[x == -np.inf] = 0.0
    out[x == 0] = 1.0
    out[x >= 710.0] = np.inf  # e**710 > 2**1024: overflows every format
    out[x <= -746.0] = 0.0  # e**-746 < 2**-1076: below half the least float64 subnormal
    todo = np.isfinite(x) & (x != 0) & (x < 710.0) & (x > -746.0)
    return out, todo


def _specials_log(x, info):
    out = np.full(x.shape, np.nan)  # NaN, x < 0, -inf
    out[x == 0] = -np.inf
    out[x == np.inf] = np.inf
    out[x == 1] = 0.0
    todo = np.isfinite(x) & (x > 0) & (x != 1)
    return out, todo


def _specials_sin(x, info):
    out = np.full(x.shape, np.nan)  # NaN, ±inf
    zero = x == 0
    out[zero] = x[zero]  # keeps the sign
    return out, np.isfinite(x) & ~zero


def _specials_tanh(x, info):
    out = np.full(x.shape, np.nan)
    zero = x == 0
    out[zero] = x[zero]
    # |x| >= 64: 1 - tanh|x| < 2*e**-128 < 2**-184, far below half an ulp of 1 in any format
    big = np.abs(x) >= 64.0  # includes ±inf
    out[big] = np.sign(x[big])
    return out, np.isfinite(x) & ~zero & ~big


def _specials_pow(x, y, info):
    """C99 Annex F.9.4.4 special cases; ``todo`` marks finite x != 0, ±1 with finite y != 0
    where x > 0 or y is an integer. Over/underflow far from the thresholds is decided here."""
    out = np.full(x.shape, np.nan)
    done = np.zeros(x.shape, bool)

    def put(mask, value):
        nonlocal done
        mask = mask & ~done
        out[mask] = value[mask] if isinstance(value, np.ndarray) else value
        done |= mask

    with np.errstate(all="ignore"):
        y_int = np.isfinite(y) & (np.floor(y) == y)
        y_odd = y_int & (np.fmod(y, 2.0) != 0)  # |y| >= 2**53 is even
        finite_y = np.isfinite(y)
        ax = np.abs(x)
        put((y == 0) | (x == 1), 1.0)  # pow(x, ±0) = 1, pow(+1, y) = 1, even for NaN
        put(np.isnan(x) | np.isnan(y), np.nan)
        zero = x == 0
        signed_inf = np.copysign(np.inf, x)
        put(zero & (y < 0) & y_odd, signed_inf)  # pow(±0, odd y < 0) = ±inf
        put(zero & (y < 0), np.inf)  # other y < 0, incl. -inf
        put(zero & (y > 0) & y_odd, x)  # pow(±0, odd y > 0) = ±0
        put(zero & (y > 0), 0.0)
        put((x == -1) & ~finite_y, 1.0)  # pow(-1, ±inf) = 1
        put((ax < 1) & (y == -np.inf), np.inf)
        put((ax > 1) & (y == -np.inf), 0.0)
        put((ax < 1) & (y == np.inf), 0.0)
        put((ax > 1) & (y == np.inf), np.inf)
        put((x == -np.inf) & (y < 0) & y_odd, -0.0)
        put((x == -np.inf) & (y < 0), 0.0)
        put((x == -np.inf) & (y > 0) & y_odd, -np.inf)
        put((x == -np.inf) & (y > 0), np.inf)
        put((x == np.inf) & (y < 0), 0.0)
        put((x == np.inf) & (y > 0), np.inf)
        put((x < 0) & ~y_int, np.nan)  # finite x < 0, finite non-integer y
        sign = np.where((x < 0) & y_odd, -1.0, 1.0)
        put(x == -1, sign)  # (-1)**integer
        # |x|**y = 2**e2; decide clear overflow (>= 2**(emax+1)) and underflow (< 2**(emin-p-1),
        # below half the least subnormal). e2 is a float64 estimate, relative error << 2**-30.
        e2 = y * np.log2(ax)
        slack = np.abs(e2) * 2.0**-30 + 1.0
        put(~done & (e2 - slack > info.emax + 1), sign * np.inf)
        put(~done & (e2 + slack < info.emin - info.precision - 1), sign * 0.0)
    return out, ~done


_SPECIALS = {
    "sqrt": _specials_sqrt,  # (a format of fpx.format past precision 25)
    "exp": _specials_exp,
    "log": _specials_log,
    "sin": _specials_sin,
    "tanh": _specials_tanh,
    "pow": _specials_pow,
}


def _fast(name: str, args: list, info: FormatInfo) -> tuple[np.ndarray, np.ndarray]:
    """Vectorized first tier: (float64 values, decided mask) for regular arguments."""
    n = args[0].size
    if name == "pow":
        x, y = args
        sign = np.where((x < 0) & (np.fmod(y, 2.0) != 0), -1.0, 1.0)
        args = [np.abs(x), y]
    with np.errstate(all="ignore"):
        if info.name != "float64":
            v = _NP[name](*args)
            lo = np.asarray(as_format(v * (1.0 - _REL64), info.name)).astype(_F64)
            hi = np.asarray(as_format(v * (1.0 + _REL64), info.name)).astype(_F64)
        elif _EXTENDED:
            v = _NP[name](*[a.astype(_LD) for a in args])
            lo = (v * (1 - _RELLD)).astype(_F64)
            hi = (v * (1 + _RELLD)).astype(_F64)
        else:
            return np.zeros(n), np.zeros(n, bool)
    decided = ((lo == hi) & ~np.isnan(lo)) | (np.isnan(lo) & np.isnan(hi) & np.isfinite(v))
    if name == "pow":
        lo = sign * lo
    return lo, decided


# ----------------------------------------------------------------------------- slow tier


def _libmp():
    from mpmath import libmp  # mpmath loads on first use only

    return libmp


def _ziv(evaluate, info: FormatInfo) -> float:
    """Ziv's loop: ``evaluate(P)`` returns an mpf with relative error < 2**-(P - ZIV_SLACK)."""
    P = info.precision + 48
    while P <= _MAX_PREC:
        v = evaluate(P)
        r = ziv_round(v, v[2] + v[3] - (P - ZIV_SLACK), info)
        if r is not None:
            return r
        P *= 2
    raise RuntimeError(f"correct rounding not decided at {_MAX_PREC} bits")  # pragma: no cover


def _slow_unary(fname: str):
    def slow(x: float, info: FormatInfo) -> float:
        lm = _libmp()
        f = getattr(lm, fname)
        X = lm.from_float(x)
        return _ziv(lambda P: f(X, P, "n"), info)

    return slow


def _odd_part(v: int) -> tuple[int, int]:
    """v = m * 2**s with m odd (v > 0)."""
    s = (v & -v).bit_length() - 1
    return v >> s, s


def _int_root(m: int, k: int) -> int | None:
    """The integer r with r**(2**k) == m, or None."""
    r = m
    for _ in range(k):
        s = math.isqrt(r)
        if s * s != r:
            return None
        r = s
    return r


def _pow_rational(x: float, y: float, info: FormatInfo) -> float | None:
    """Correctly rounded ``x**y`` when it is a rational number of moderate size (this covers
    every case where it is a midpoint of the format), else None (then it is irrational, a
    non-dyadic rational or has a huge odd part: not a midpoint, and Ziv's loop ends)."""
    num, den = abs(x).as_integer_ratio()  # den is a power of two
    m, s = _odd_part(num)
    ex = s - (den.bit_length() - 1)  # |x| = m * 2**ex, m odd
    yn, yd = y.as_integer_ratio()
    k = yd.bit_length() - 1  # y = yn / 2**k, yn odd when k > 0
    if k:
        if ex % (1 << k):
            return None
        r = _int_root(m, k)
        if r is None:
            return None
        m, ex = r, ex >> k
    a = yn  # |x|**y = (m * 2**ex)**a
    negative = x < 0 and a % 2 == 1
    p, emin, emax = info.precision, info.emin, info.emax
    if m == 1:
        e2 = ex * a
        if e2 > emax + 1:
            value = math.inf
        elif e2 < emin - p - 1:
            value = 0.0
        else:
            value = round_ratio(1 << max(e2, 0), 1 << max(-e2, 0), info)
    elif abs(a) * m.bit_length() > 4096:
        return None
    else:
        big = m ** abs(a)
        e2 = ex * a
        n_, d_ = (big, 1) if a > 0 else (1, big)
        if e2 >= 0:
            n_ <<= e2
        else:
            d_ <<= -e2
        value = round_ratio(n_, d_, info)
    return -value if negative else value


def _slow_pow(x: float, y: float, info: FormatInfo) -> float:
    r = _pow_rational(x, y, info)
    if r is not None:
        return r
    lm = _libmp()
    AX, Y = lm.from_float(abs(x)), lm.from_float(y)
    mag_y = max(Y[2] + Y[3], 0)  # |y| < 2**mag_y
    negative = x < 0 and y % 2 == 1

    def evaluate(P):
        # |log|x|| < 2**10 (< 745), so |y log|x|| < 2**(mag_y + 10): carrying the log to
        # P + mag_y + 16 bits makes the error of t below 2**-(P + 6) absolute, i.e. a
        # relative error < 2**-(P + 5) of exp(t), on top of exp's own.
        t = lm.mpf_mul(Y, lm.mpf_log(AX, P + mag_y + 16, "n"))
        return lm.mpf_exp(t, P, "n")

    value = _ziv(evaluate, info)
    return -value if negative else value


_SLOW = {
    "sqrt": _slow_unary("mpf_sqrt"),
    "exp": _slow_unary("mpf_exp"),
    "log": _slow_unary("mpf_log"),
    "sin": _slow_unary("mpf_sin"),
    "tanh": _slow_unary("mpf_tanh"),
    "pow": _slow_pow,
}


# ----------------------------------------------------------------------------- the ops


def _inputs_of(name: str):
    """inputs(n, fmt, distribution, seed, params): x from the distribution (log, sqrt and pow
    take |x|, zeros replaced by the smallest normal number); pow's exponent y is uniform on
    [-3, 3]."""

    def inputs(n, fmt, distribution, seed, params):
        x = generate(distribution, n, fmt, seed)
        if name in ("log", "sqrt", "pow"):
            tiny = np.asarray(format_info(fmt).smallest_normal, dtype=x.dtype)
            x = np.where(x == 0, tiny, np.abs(x))
        out = {"format": fmt, "x": x}
        if name == "pow":
            y = generate("uniform", n, "float64", seed + 1) * 6 - 3
            out["y"] = np.asarray(as_format(y, fmt))
        if fmt in SMALL_DTYPES:  # FP8, FP6, FP4: arrays of ml_dtypes' types
            out.update({k: out[k].astype(SMALL_DTYPES[fmt]) for k in ("x", "y") if k in out})
        return out

    return inputs


def _args_of(name: str):
    """The function's arguments from the inputs: (x,) or, for pow, (x, y)."""
    if FUNCTIONS[name] == 2:
        return lambda inputs: (inputs["x"], inputs["y"])
    return lambda inputs: (inputs["x"],)


def _available(name: str):
    """available(fmt): every variant; of a format of fpx.format's, those but numpy."""

    def available(fmt: str) -> list[str]:
        user = is_held_data(fmt) and format_info(fmt).user_defined
        return [v.name for v in _variants(name) if not (user and v.name == "numpy")]

    return available


def _spec(name: str, f) -> OpSpec:
    args = _args_of(name)

    def numpy(inputs, params):
        with np.errstate(all="ignore"):
            return _NP[name](*args(inputs))

    def call(variant, inputs):
        if format_info(inputs["format"]).user_defined:  # (float64 arrays of its values)
            return apply_held(name, args(inputs), inputs["format"], variant)
        return f(*args(inputs), variant=variant)

    return OpSpec(
        name,
        _DESCRIPTIONS[name],
        _variants(name),
        inputs=_inputs_of(name),
        call=lambda variant, settings, inputs, params: call(variant, inputs),
        reference=lambda inputs, params, fmt: call("exact", inputs),
        available=_available(name),
        numpy=numpy,
        numpy_label=f"np.{_NP[name].__name__}",
        cupy=lambda cp, *a: getattr(cp, _NP[name].__name__)(*a),
        recordings=(
            Recording(
                formats=("float32", "float64"),
                sizes=(100_000,),
                calls=((f"cupy.{name}", args),),
            ),
        ),
        default_variants=("numpy", "wide"),
        bytes_per_element=48.0,
        rank=40,
    )


_FUNCTIONS = {"exp": exp, "log": log, "sin": sin, "tanh": tanh, "sqrt": sqrt, "pow": pow}
OP_TABLE = OpTable(*(_spec(name, _FUNCTIONS[name]) for name in FUNCTIONS))
