"""``fpx.linspace``: NumPy 1.x, NumPy 2.x and CuPy semantics, accurate formulas, exact.

The library variants reproduce each library's arithmetic *and* its type promotion, step by
step with explicit loop dtypes, so they do not depend on the installed NumPy:

* ``numpy1``: NumPy 1.26 (``numpy/core/function_base.py``). Legacy value-based promotion: any
  0-d input (Python scalar, NumPy scalar, 0-d array) is computed in float64. Verified bit for
  bit against NumPy 1.26.4 (21,150 recorded cases in tests/data).
* ``numpy2``: NumPy >= 2.0 (``numpy/_core/function_base.py``, NEP 50): Python scalars are weak,
  NumPy scalars and 0-d arrays keep their dtype. Verified against NumPy 2.2.6 and 2.4.6, and
  against the installed ``np.linspace`` in the tests.
* ``cupy-array`` / ``cupy-scalar``: ``cupy/_creation/ranges.py`` (CuPy 13.6-14.2), read from
  source, not run on a GPU (hypotheses). Both ends Python or NumPy scalars take the scalar
  path: one float64 kernel ``start + i*step``, contracted to ``fma(i, step, start)`` by NVRTC,
  rounded once to the result dtype. Otherwise the array path: NumPy 2's formula, each
  operation a separate kernel compiled with ``-ftz=true`` (float32 subnormals flushed).
  ``cupy`` picks the path as CuPy does.

Accurate formulas, computed in the result dtype of the NumPy 2 rules (t = i/div):

* ``lerp``: ``start*(1 - t) + stop*t``, each operation rounded (exact at both ends).
* ``fma``: ``fma(i, step, start)`` with ``step = (stop - start)/div``: one rounding per element
  after the step.
* ``exact``: every element is ``start + i*(stop - start)/div`` computed exactly and rounded
  once (the last element is ``stop``); integer dtypes take the floor, as NumPy does.

Per element, NumPy computes ``y[i] = (i*step) + start`` with ``step = (stop - start)/div``,
rounded after each operation, then sets ``y[-1] = stop`` when ``endpoint``.
"""

from __future__ import annotations

import math
import operator
from fractions import Fraction
from functools import reduce
from typing import TYPE_CHECKING

import numpy as np

from .. import checks
from .._registry import SMALL_DTYPES
from ..data import generate
from ..exact import fma as exact_fma
from ..formats import FormatInfo, as_array, as_format, format_info, native, refuse_masked
from ..held import as_held, held, is_held_data
from ..numerics import flush_subnormals, odd_add64, two_sum
from .formula import check_held_fits, held_fits, round_ratio
from .opspec import OpSpec, OpTable, Recording, pick
from .variant import EXACT, FORMULA, HYPOTHESIS, LIBRARY, Variant

if TYPE_CHECKING:
    from numpy.typing import ArrayLike, DTypeLike

__all__ = ["HELD_VARIANTS", "OP_TABLE", "linspace", "linspace_held"]

_VARIANTS = (
    Variant("numpy1", "NumPy 1.26: 0-d inputs promoted to float64", LIBRARY),
    Variant("numpy2", "NumPy >= 2.0: NEP 50 promotion, float32 stays float32", LIBRARY),
    Variant("cupy", "CuPy: the scalar path for two scalars, else the array path", HYPOTHESIS),
    Variant("cupy-array", "CuPy array path: NumPy 2's formula in kernels, -ftz", HYPOTHESIS),
    Variant("cupy-scalar", "CuPy scalar path: fma(i, step, start) in float64", HYPOTHESIS),
    Variant("lerp", "start*(1-t) + stop*t, t = i/div", FORMULA),
    Variant("fma", "fma(i, step, start), step = (stop-start)/div", FORMULA),
    Variant("exact", "start + i*(stop-start)/div, correctly rounded", EXACT),
)

_F64 = np.dtype(np.float64)
_BF16 = format_info("bfloat16").dtype  # ml_dtypes: promotes with a Python float to float64
_I64 = np.dtype(np.int64)  # a Python int on Linux/macOS x86-64 and arm64


# ----------------------------------------------------------------------------- operands


class _Op:
    """A value as a promotion rule sees it: an array (possibly 0-d) and, for Python scalars
    under NEP 50, the weak Python value."""

    __slots__ = ("arr", "weak", "py")

    def __init__(self, arr, weak=False, py=None):
        self.arr = arr
        self.weak = weak
        self.py = py

    @property
    def dtype(self):
        return self.arr.dtype

    @property
    def ndim(self):
        return self.arr.ndim

    def cast(self, dt):
        dt = np.dtype(dt)
        if self.arr.dtype == dt and not self.weak:
            return self.arr
        with np.errstate(all="ignore"):  # (100000 in float16: inf, as NumPy's cast gives)
            return np.asarray(np.asarray(self.py, dtype=dt)) if self.weak else self.arr.astype(dt)


def _is_py(x) -> bool:
    return type(x) in (int, float)


def _py(x) -> _Op:
    if type(x) is int and not -(2**63) <= x < 2**63:  # (np.linspace fails on it as well)
        raise TypeError(
            f"linspace: the Python int {checks.shown(x)} is beyond int64, which NumPy "
            "converts it to; pass a float"
        )
    return _Op(np.asarray(x, dtype=_I64 if type(x) is int else _F64), weak=True, py=x)


def _strong(x) -> _Op:
    a = np.asarray(x)
    if a.dtype.kind not in "biuf" and a.dtype != _BF16:
        hint = (
            " (exact rationals: round them first, fpx.as_format(x, fmt))"
            if a.dtype == object
            else ""
        )
        raise TypeError(
            f"linspace: start and stop must be real numbers or arrays, got {checks.shown(x)}{hint}"
        )
    return _Op(a)


def _exact_in_float64(what: str, x) -> None:
    """The exact variant computes with the values NumPy computes with (float64 for ints): an
    int it cannot hold exactly is refused, not rounded on the way in."""
    a = np.asarray(x, dtype=object) if isinstance(x, int) else np.asarray(x)
    if a.dtype.kind not in "iuO":
        return
    ints = [int(v) for v in a.reshape(-1) if isinstance(v, (int, np.integer))]
    bad = [v for v in ints if int(float(v)) != v]
    if bad:
        raise ValueError(
            f"linspace: {what}={bad[0]} is not exact in float64, which the exact variant (as "
            f"np.linspace) computes with: it would use {int(float(bad[0]))}; pass "
            f"float({what}) to accept that"
        )


def _operand(x) -> _Op:
    if type(x) is complex or isinstance(x, (complex, np.complexfloating)):
        raise TypeError("linspace: complex start/stop are not supported")
    if isinstance(x, bool):
        raise TypeError("linspace: start and stop must be numbers, not bool")
    return _py(x) if _is_py(x) else _strong(x)


def _cat(dt) -> int:
    if np.dtype(dt) == _BF16:
        return 2
    return {"b": 0, "u": 1, "i": 1, "f": 2, "c": 3}[np.dtype(dt).kind]


def _legacy_type(ops):
    """NumPy 1.x value-based promotion (legacy PyArray_ResultType)."""
    arrays = [o for o in ops if o.ndim > 0]
    scalars = [o for o in ops if o.ndim == 0]
    if not arrays or (
        scalars and max(_cat(s.dtype) for s in scalars) > max(_cat(a.dtype) for a in arrays)
    ):
        return reduce(np.promote_types, [o.dtype for o in ops])
    dts = [a.dtype for a in arrays] + [np.min_scalar_type(s.arr[()]) for s in scalars]
    return reduce(np.promote_types, dts)


def _nep50_type(ops):
    """NumPy 2 (NEP 50) promotion: Python int/float are weak."""
    strong = [o.dtype for o in ops if not o.weak]
    weak = [o for o in ops if o.weak]
    if not strong:
        return _F64 if any(type(w.py) is float for w in weak) else _I64
    r = reduce(np.promote_types, strong)
    for w in weak:
        if type(w.py) is float and r.kind in "biu":
            r = np.promote_types(r, _F64)
        elif type(w.py) is int and r.kind == "b":
            r = np.promote_types(r, _I64)
    return r


def _flush(a):
    """CUDA -ftz=true: float32 subnormals become zeros of the same sign (other dtypes stay)."""
    a = np.asarray(a)
    return np.asarray(flush_subnormals(a)) if a.dtype == np.float32 else a


_UFUNC = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.true_divide}


def _binop(name, a: _Op, b: _Op, loop, ftz=False) -> _Op:
    x, y = a.cast(loop), b.cast(loop)
    if ftz:
        x, y = _flush(x), _flush(y)
    with np.errstate(all="ignore"):
        r = np.asarray(_UFUNC[name](x, y, dtype=loop))
    return _Op(_flush(r) if ftz else r)


def _inplace(name, y: _Op, b: _Op, loop, ftz=False) -> _Op:
    """y <op>= b: computed in the loop dtype, stored back in y's dtype."""
    r = _binop(name, y, b, loop, ftz)
    out = r.cast(y.dtype)
    return _Op(_flush(out) if ftz else out)


def _is_int_dtype(dtype) -> bool:
    return dtype is not None and np.issubdtype(np.dtype(dtype), np.integer)


def _finish(y, endpoint, num, stop_vals, axis, dtype, integer_dtype):
    if endpoint and num > 1:
        y[-1, ...] = stop_vals
    if axis != 0:
        y = np.moveaxis(y, 0, axis)
    if integer_dtype:
        np.floor(y, out=y)
    with np.errstate(all="ignore"):
        return y.astype(dtype, copy=False)


# ----------------------------------------------------------------------------- NumPy


def _scale_and_shift(y, delta, divop, div, S, rule) -> _Op:
    """NumPy's ``y = arange * step + start`` (the same in 1.x and 2.x, each loop dtype chosen
    by ``rule``): ``step = delta/div``; if a step underflows to 0, ``y /= div; y *= delta``
    instead; with ``div <= 0``, ``y * delta``; then ``y += start``. A 0-d delta multiplies in
    place (keeping y's dtype), an n-d one broadcasts."""
    if div > 0:
        step = _binop("div", delta, divop, rule([delta, divop]))
        mul = _inplace if delta.ndim == 0 else _binop
        if np.any(step.arr == 0):
            y = _inplace("div", y, divop, rule([y, divop]))
            y = mul("mul", y, delta, rule([y, delta]))
        else:
            y = mul("mul", y, step, rule([y, step]))
    else:
        y = _binop("mul", y, delta, rule([y, delta]))
    return _inplace("add", y, S, rule([y, S]))


def _numpy1(start, stop, num, endpoint, dtype, axis):
    div = (num - 1) if endpoint else num
    one = _Op(np.asarray(1.0))
    S0, P0 = _strong(start), _strong(stop)  # asanyarray(): Python int -> int64
    S = _binop("mul", S0, one, _legacy_type([S0, one]))  # start * 1.0
    P = _binop("mul", P0, one, _legacy_type([P0, one]))
    dt = _legacy_type([S, P, _Op(np.asarray(float(num)))])
    integer_dtype = _is_int_dtype(dtype)
    dtype = dt if dtype is None else dtype
    delta = _binop("sub", P, S, _legacy_type([P, S]))
    y = _Op(np.arange(0, num, dtype=dt).reshape((-1,) + (1,) * delta.ndim))
    y = _scale_and_shift(y, delta, _Op(np.asarray(div, dtype=_I64)), div, S, _legacy_type)
    return _finish(y.arr.copy(), endpoint, num, P.arr, axis, dtype, integer_dtype)


def _numpy2_dtype(start, stop):
    S, P = _operand(start), _operand(stop)
    return S, P, _nep50_type([S, P, _py(1.0)])


def _numpy2(start, stop, num, endpoint, dtype, axis):
    div = (num - 1) if endpoint else num
    both_py = _is_py(start) and _is_py(stop)
    S, P, dt = _numpy2_dtype(start, stop)
    if both_py:  # _array_converter makes both 0-d arrays only when both are Python scalars
        S, P = _Op(S.arr), _Op(P.arr)
    integer_dtype = _is_int_dtype(dtype)
    dtype = dt if dtype is None else dtype
    delta = _binop("sub", P, S, dt)  # np.subtract(stop, start, dtype=type(dt))
    y = _Op(np.arange(0, num, dtype=dt).reshape((-1,) + (1,) * delta.ndim))
    y = _scale_and_shift(y, delta, _py(div), div, S, _nep50_type)
    return _finish(y.arr.copy(), endpoint, num, P.cast(y.dtype), axis, dtype, integer_dtype)


# ----------------------------------------------------------------------------- CuPy (hypotheses)


def _astype_device(a, dtype, ftz):
    """CuPy's astype kernel: with -ftz a float32 source or destination is flushed."""
    dtype = np.dtype(dtype)
    if a.dtype == dtype:
        return a
    if ftz:
        a = _flush(a)
    with np.errstate(all="ignore"):
        r = a.astype(dtype)
    return _flush(r) if ftz else r


def _host_sub(stop, start):
    """stop - start on the host with NumPy 2 rules (CuPy's scalar path)."""
    if _is_py(stop) and _is_py(start):
        return stop - start
    S, P = _operand(start), _operand(stop)
    return _binop("sub", P, S, _nep50_type([P, S])).arr[()]


def _cupy_scalar(start, stop, num, endpoint, dtype, ftz=True):
    S, P = _operand(start), _operand(stop)
    if S.ndim or P.ndim or not (np.isscalar(start) and np.isscalar(stop)):
        raise ValueError("cupy-scalar: start and stop must both be scalars (CuPy's scalar path)")
    dt = _nep50_type([S, P, _py(float(num))])
    dtype = dt if dtype is None else dtype
    ret = np.empty((num,), dtype=dt)
    div = (num - 1) if endpoint else num
    if div <= 0:
        if num > 0:
            ret[...] = S.cast(dt)  # ret.fill(start)
    else:
        step = float(_host_sub(stop, start)) / div  # Python float division on the host
        start_d = float(S.cast(_F64))
        i = np.arange(num, dtype=np.float64)
        if step == 0.0:  # kernel 'ddd->d': out0 = in0 + i * in1 / in2 (nothing to contract)
            d = float(_host_sub(float(stop), start))
            vals = start_d + (i * d) / float(div)
        else:  # kernel 'dd->d': out0 = in0 + i * in1, contracted to fma(i, step, start)
            vals = np.asarray(exact_fma(i, step, start_d))
        with np.errstate(all="ignore"):
            ret[...] = vals.astype(dt)
        if ftz:
            ret = _flush(ret)
        if endpoint:
            ret[-1] = float(stop)
    if _is_int_dtype(dtype):
        if ftz:
            ret = _flush(ret)
        np.floor(ret, out=ret)
    return _astype_device(ret, dtype, ftz)


def _cupy_array(start, stop, num, endpoint, dtype, axis, ftz=True):
    div = (num - 1) if endpoint else num
    one = _py(1.0)

    def conv(x):
        if np.isscalar(x):
            return _operand(x)
        a = _strong(x)  # cupy.asarray(x) * 1.0; float arrays (also 0-d) keep their dtype
        return a if a.dtype.kind == "f" else _binop("mul", a, one, _nep50_type([a, one]))

    S, P = conv(start), conv(stop)
    dt = _nep50_type([S, P, _py(float(num))])
    dtype = dt if dtype is None else dtype
    delta = _binop("sub", P, S, _nep50_type([P, S]), ftz)
    ret = _Op(np.arange(0, num, dtype=dt).reshape((-1,) + (1,) * delta.ndim))
    divop = _py(div)
    if num > 1:
        step = _binop("div", delta, divop, _nep50_type([delta, divop]), ftz)
        if np.any(step.arr == 0):
            ret = _inplace("div", ret, divop, _nep50_type([ret, divop]), ftz)
            ret = _binop("mul", ret, delta, _nep50_type([ret, delta]), ftz)
        else:
            ret = _binop("mul", ret, step, _nep50_type([ret, step]), ftz)
    else:
        ret = _binop("mul", ret, delta, _nep50_type([ret, delta]), ftz)
    ret = _inplace("add", ret, S, _nep50_type([ret, S]), ftz)
    y = ret.arr.copy()
    if endpoint and num > 1:
        y[-1, ...] = P.cast(y.dtype)
    if axis != 0:
        y = np.moveaxis(y, 0, axis)
    if _is_int_dtype(dtype):
        if ftz:
            y = _flush(y)
        np.floor(y, out=y)
    return _astype_device(y, dtype, ftz)


# ----------------------------------------------------------------------------- formulas


def _formula(variant, start, stop, num, endpoint, dtype, axis):
    """lerp / fma / exact in the NumPy 2 result dtype (cast to `dtype` at the end)."""
    S, P, dt = _numpy2_dtype(start, stop)
    if dt != _BF16 and (dt.kind != "f" or dt.itemsize not in (2, 4, 8)):
        raise TypeError(
            f"linspace variant {checks.shown(variant)} computes in one of fpx.FORMATS, not {dt}"
        )
    a, b = S.cast(dt), P.cast(dt)
    a, b = np.broadcast_arrays(a, b)
    div = (num - 1) if endpoint else num
    shape = (num,) + a.shape
    i = np.arange(num).reshape((-1,) + (1,) * a.ndim)
    with np.errstate(all="ignore"):
        if variant == "exact":
            y = _exact_values(a, b, num, div, dt)
        elif div <= 0:
            y = np.broadcast_to(a + 0 * (b - a), shape).astype(dt)  # 0*delta + start, as NumPy
        elif variant == "lerp":
            t = (i.astype(dt) / dt.type(div)).astype(dt)
            y = (a * (dt.type(1) - t)).astype(dt) + (b * t).astype(dt)
        else:  # fma
            step = ((b - a) / dt.type(div)).astype(dt)
            y = np.asarray(exact_fma(np.broadcast_to(i.astype(dt), shape), step, a))
        y = np.array(np.broadcast_to(y, shape), dtype=dt)
    integer_dtype = _is_int_dtype(dtype)
    return _finish(y, endpoint, num, b, axis, dt if dtype is None else dtype, integer_dtype)


def _exact_values(a, b, num, div, dt):
    """start + i*(stop - start)/div exactly, rounded once per element to dt (any columns)."""
    out = np.empty((num,) + a.shape, dtype=dt)
    flat_a, flat_b = a.reshape(-1), b.reshape(-1)
    cols = out.reshape(num, flat_a.size)
    for c, (s, e) in enumerate(zip(flat_a.tolist(), flat_b.tolist())):
        cols[:, c] = exact_column(s, e, num, div, dt)
    return out


def exact_column(s: float, e: float, num: int, div: int, dt) -> np.ndarray:
    """The exact values s + i*(e - s)/div, i < num, each rounded once to dt (a dtype, or the
    FormatInfo of a held format: its values in its float type).

    Fast path (Ziv's strategy): with q = (e - s)/div = hi + lo + r (hi, lo float64, |r| tiny),
    y_i = s + i*hi + i*lo is formed as an unevaluated float64 pair with error-free TwoProduct
    and TwoSum; |pair - exact| <= err = 2**-100 * (|s| + i*|hi|) + 2**-1060. Where both ends of
    [pair - err, pair + err] round to the same value of dt (float64: to nearest; narrower: to odd
    in float64, then to dt), that is the correctly rounded value; the other elements are
    computed with exact rationals.
    """
    info = dt if isinstance(dt, FormatInfo) else format_info(dt)  # (held: FP8's, ...)
    dt = info.dtype
    if not (math.isfinite(s) and math.isfinite(e)):
        with np.errstate(all="ignore"):
            i = np.arange(num, dtype=dt)
            return s + (i / dt.type(max(div, 1))) * (dt.type(e) - dt.type(s))
    if div <= 0:
        return np.full(num, s, dtype=dt)
    fs, fe = Fraction(s), Fraction(e)
    q = (fe - fs) / div
    try:
        hi = float(q)
    except OverflowError:  # a step past float64's range (-max to max in 2): rationals (pass 33)
        hi = math.inf if q > 0 else -math.inf
    lo = float(q - Fraction(hi)) if math.isfinite(hi) else 0.0
    i = np.arange(num, dtype=np.float64)
    with np.errstate(all="ignore"):
        p = i * hi
        e1 = np.asarray(exact_fma(i, hi, -p))  # i*hi - p, exact (no underflow in the safe range)
        hs, e2 = two_sum(p, np.full(num, s))
        t = (e1 + e2) + i * lo
        err = 2.0**-100 * (abs(s) + i * abs(hi)) + 2.0**-1060
        if info.name == "float64":  # round to nearest directly
            lo_end, hi_end = hs + (t - err), hs + (t + err)
        else:  # round to odd in float64, then once to the narrower format
            lo_end = np.asarray(as_format(odd_add64(hs, t - err), info.name))
            hi_end = np.asarray(as_format(odd_add64(hs, t + err), info.name))
    safe = abs(hi) < 2.0**900 and abs(s) < 2.0**900 and (hi == 0 or abs(hi) > 2.0**-900)
    good = (lo_end.view(info.uint) == hi_end.view(info.uint)) & np.isfinite(hs)
    out = lo_end.astype(dt)
    bad = np.flatnonzero(~good) if safe else np.arange(num)
    if bad.size:
        den = fs.denominator * fe.denominator * div
        base = fs.numerator * fe.denominator * div
        slope = fe.numerator * fs.denominator - fs.numerator * fe.denominator
        for k in bad.tolist():
            n = base + k * slope
            out[k] = round_ratio(n, den, info) if n else 0.0
    if num:
        out[0] = s  # i = 0 is start itself (keeps the sign of a zero)
    return out


# ----------------------------------------------------------------------------- public


def _check_memory(num: int, start, stop) -> None:
    """Refuse a ``num`` whose float64 result (and its working copies) cannot fit in the
    memory left, naming ``num`` (NumPy's MemoryError names no argument)."""
    from ..machine import available_memory

    need = 4 * 8 * num * max(int(np.size(start)), int(np.size(stop)), 1)
    if need > available_memory():
        raise ValueError(
            f"linspace: num={num} needs about {need / 2**30:.3g} GiB, more than the "
            f"{available_memory() / 2**30:.3g} GiB of memory left"
        )


def linspace(
    start: ArrayLike,
    stop: ArrayLike,
    num: int = 50,
    *,
    variant: str = "numpy2",
    dtype: DTypeLike | None = None,
    endpoint: bool = True,
    axis: int = 0,
) -> np.ndarray:
    """``num`` evenly spaced values from ``start`` to ``stop`` as a given library computes them.

    Parameters
    ----------
    start, stop : Python or NumPy scalars, 0-d or n-d arrays (as ``np.linspace`` takes them;
        the *kind* matters: a 0-d float32 array is promoted differently by NumPy 1 and 2).
    num : int >= 0
    variant : one of ``fpx.variants("linspace")`` (see the module docstring)
    dtype, endpoint, axis : as in ``np.linspace``

    Returns
    -------
    numpy.ndarray
        Its dtype follows the emulated library's promotion rules (``numpy1`` gives float64 for
        a 0-d float32 ``stop``, ``numpy2`` float32).
    """
    spec = OP_TABLE.lookup("linspace", variant)
    if (h := held((start, stop), "linspace", ("start", "stop"))) is not None:  # FP8, FP6, FP4
        return _of_held(h, num, variant, dtype, endpoint, axis)
    if isinstance(num, (bool, np.bool_)):
        raise TypeError(f"linspace: num must be an integer, got {checks.shown(num)}")
    try:
        num = operator.index(num)
    except TypeError:
        raise TypeError(f"linspace: num must be an integer, got {checks.shown(num)}") from None
    if num < 0:
        raise ValueError(f"linspace: num must be >= 0, got {num}")
    for name, v in (("start", start), ("stop", stop)):  # (a ragged list named, not NumPy's)
        if isinstance(v, (list, tuple)):
            as_array(v, f"linspace: {name}")
    _check_memory(num, start, stop)
    if not isinstance(endpoint, (bool, np.bool_)):
        raise TypeError(f"linspace: endpoint must be True or False, got {checks.shown(endpoint)}")
    # a big-endian array (">f4", from a file written elsewhere): its values in this machine's
    # byte order (NumPy's result is the same values)
    start, stop = (native(v) if isinstance(v, np.ndarray) else v for v in (start, stop))
    for what, x in (("start", start), ("stop", stop)):
        refuse_masked(x, f"linspace: {what}")
        _operand(x)  # type checks
        if spec.kind == EXACT:
            _exact_in_float64(what, x)
    if dtype is not None:
        try:
            dt = np.dtype(dtype)
        except TypeError as e:
            raise TypeError(f"linspace: dtype: {e}") from None
        if dt.kind not in "biuf":
            raise TypeError(f"linspace: dtype must be a real numeric dtype, got {dt}")
    try:
        np.broadcast_shapes(np.shape(start), np.shape(stop))
    except ValueError:
        raise ValueError(
            f"linspace: start of shape {np.shape(start)} and stop of shape {np.shape(stop)} "
            "do not broadcast together"
        ) from None
    nd = max(np.ndim(start), np.ndim(stop)) + 1  # the result's dimensions
    axis = checks.integer("axis", axis)
    if not -nd <= axis < nd:
        raise ValueError(f"linspace: axis {axis} is out of bounds for a {nd}-D result")
    name = spec.name
    if (
        spec.kind != EXACT
        and spec.kind != FORMULA
        and any(np.asarray(v).dtype == _BF16 for v in (start, stop))
    ):
        raise ValueError(
            f"linspace variant {checks.shown(name)} has no bfloat16 semantics to "
            f"reproduce: NumPy 1.26 and "
            "CuPy have no bfloat16, and NumPy 2 with ml_dtypes promotes it inconsistently "
            "(np.result_type(bfloat16 array, 1.0) is float64, a ufunc gives float32). "
            "Use variant 'lerp', 'fma' or 'exact', or float32 endpoints"
        )
    if name == "numpy1":
        return _numpy1(start, stop, num, endpoint, dtype, axis)
    if name == "numpy2":
        return _numpy2(start, stop, num, endpoint, dtype, axis)
    if name == "cupy-scalar":
        return _cupy_scalar(start, stop, num, endpoint, dtype)
    if name == "cupy-array":
        return _cupy_array(start, stop, num, endpoint, dtype, axis)
    if name == "cupy":
        if np.isscalar(start) and np.isscalar(stop):
            return _cupy_scalar(start, stop, num, endpoint, dtype)
        return _cupy_array(start, stop, num, endpoint, dtype, axis)
    return _formula(name, start, stop, num, endpoint, dtype, axis)


HELD_VARIANTS = ("lerp", "fma", "exact")  # those that compute in held formats


def linspace_held(
    start, stop, num: int, fmt: str, variant: str = "exact", *, endpoint=True, axis: int = 0
) -> np.ndarray:
    """:func:`linspace` of ends ``start`` and ``stop`` that are values of the held format
    ``fmt`` (FP8, FP6 or FP4 values in float32, a format of fpx.format's in float64):
    ``lerp`` and ``fma`` as written, every operation rounded once to it (``i`` and ``div``
    too, as a cast to a dtype rounds them; fma's ``i*step + start`` rounded once), ``exact``
    each element once. An array of ml_dtypes' type (float64 for fpx.format's). The library
    variants have no such semantics (NumPy and CuPy have no FP8 linspace) and are refused;
    fpx.format's formats up to precision 25 and emax 511 (float64 holds their products)."""
    name = OP_TABLE.lookup("linspace", variant).name
    info = format_info(fmt)
    if name not in HELD_VARIANTS:
        raise ValueError(
            f"linspace variant {checks.shown(name)} has no {fmt} semantics to reproduce "
            f"(NumPy and CuPy compute no linspace in it); the variants that do: "
            + ", ".join(HELD_VARIANTS)
        )
    check_held_fits("linspace", info, why=" (float64 holds its products)")
    num = checks.integer("num", num, 0)
    endpoint = checks.boolean("endpoint", endpoint)
    a, b = np.broadcast_arrays(*(np.asarray(v, dtype=np.float64) for v in (start, stop)))
    axis = checks.integer("axis", axis)
    if not -a.ndim - 1 <= axis <= a.ndim:
        raise ValueError(f"linspace: axis {axis} is out of bounds for a {a.ndim + 1}-D result")
    div = (num - 1) if endpoint else num
    shape = (num,) + a.shape
    i = np.arange(num, dtype=np.float64).reshape((-1,) + (1,) * a.ndim)

    def rn(v):
        return np.asarray(as_format(np.asarray(v, dtype=np.float64), fmt), dtype=np.float64)

    with np.errstate(all="ignore"):
        if name == "exact":
            y = np.empty((num, a.size))
            for c, (s, e) in enumerate(zip(a.reshape(-1).tolist(), b.reshape(-1).tolist())):
                y[:, c] = exact_column(s, e, num, div, info)
            y = y.reshape(shape)
        elif div <= 0:
            y = rn(rn(0.0 * rn(b - a)) + a)  # 0*delta + start, as NumPy
        elif name == "lerp":
            t = rn(rn(i) / rn(div))
            y = rn(rn(a * rn(1.0 - t)) + rn(b * t))
        else:  # fma: i*step is exact in float64; the sum rounded to odd, then once to fmt
            step = rn(rn(b - a) / rn(div))
            p = np.broadcast_to(rn(i) * step, shape)
            y = rn(odd_add64(p, np.broadcast_to(a, shape)))
        y = np.array(np.broadcast_to(y, shape))
    if endpoint and num > 1:
        y[-1, ...] = b
    return np.asarray(as_held(np.moveaxis(y, 0, axis), fmt))


def _of_held(h: tuple, num, variant: str, dtype, endpoint, axis) -> np.ndarray:
    """linspace of FP8, FP6 or FP4 ends (``held``'s values and format), in their format."""
    (a, b), name = h
    if dtype is not None:
        raise TypeError(
            f"linspace: dtype={checks.shown(dtype)} with {name} ends: the result is in "
            "their format; convert them first for another, e.g. start.astype(np.float32)"
        )
    return linspace_held(a, b, num, name, variant, endpoint=endpoint, axis=axis)


# ----------------------------------------------------------------------------- the op


def _inputs(n, fmt, distribution, seed, params):
    """start and stop: two values drawn from the distribution (FP8, FP6, FP4: of ml_dtypes'
    types); num = n."""
    a, b = generate(distribution, 2, fmt, seed)
    if fmt in SMALL_DTYPES:
        a, b = (np.asarray(v).astype(SMALL_DTYPES[fmt])[()] for v in (a, b))
    return {"format": fmt, "start": a, "stop": b, "num": n}


def _args(inputs, params):
    kw = pick(params, ("endpoint",))
    return inputs["start"], inputs["stop"], inputs["num"], kw


def _call(name, settings, inputs, params):
    s, e, num, kw = _args(inputs, params)
    if format_info(inputs["format"]).user_defined:  # (float64 values, the format named)
        return linspace_held(s, e, num, inputs["format"], name, **kw)
    return linspace(s, e, num, variant=name, **kw)


def _numpy(inputs, params):
    s, e, num, kw = _args(inputs, params)
    with np.errstate(all="ignore"):
        return np.linspace(s, e, num, **kw)


def _reference(inputs, params, fmt):
    if is_held_data(inputs["format"]):  # (the data's format: results are measured in it)
        return _call("exact", {}, inputs, params)
    s, e, num, kw = _args(inputs, params)
    div = num - 1 if kw.get("endpoint", True) else num
    y = exact_column(float(s), float(e), num, div, format_info(fmt).dtype)
    if kw.get("endpoint", True) and num > 1:
        y[-1] = float(e)
    return y


def _available(fmt: str) -> list[str]:
    """Every variant (bfloat16: lerp, fma and exact); of held data lerp, fma and exact."""
    if fmt == "bfloat16" or is_held_data(fmt):
        return list(HELD_VARIANTS) if held_fits(format_info(fmt)) else []
    return [v.name for v in _VARIANTS]


OP_TABLE = OpTable(
    OpSpec(
        "linspace",
        "evenly spaced numbers over an interval (np.linspace / cupy.linspace)",
        _VARIANTS,
        inputs=_inputs,
        call=_call,
        reference=_reference,
        numpy=_numpy,
        numpy_label="np.linspace",
        keywords={"endpoint": checks.boolean_check("endpoint")},
        cupy=lambda cp, *args, **kwargs: cp.linspace(*args, **kwargs),
        recordings=(
            Recording(
                formats=("float32", "float64"),
                sizes=(50, 2000),
                calls=(
                    (
                        "cupy.linspace(scalars)",
                        lambda inputs: (inputs["start"], inputs["stop"], inputs["num"]),
                    ),
                    (
                        "cupy.linspace(0-d arrays)",
                        lambda inputs: (
                            np.asarray(inputs["start"]),
                            np.asarray(inputs["stop"]),
                            inputs["num"],
                        ),
                    ),
                ),
            ),
        ),
        default_variants=("numpy1", "numpy2", "cupy-scalar", "lerp", "fma"),
        available=_available,
        bytes_per_element=96.0,
        rank=10,
    ),
)
