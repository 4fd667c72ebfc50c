"""Formats of one's own: ``fpx.format(precision, emax, subnormals=True, name=None)``.

A user-defined format is a :class:`~fpexplore.formats.FormatInfo` in the one format registry
(``_registry.INFO``), under its name, like tf32 (held in float32): its values are held in
float64 (``storage=False``), so every function that takes a format name takes it
(:func:`~fpexplore.formats.as_format` in every rounding mode, :func:`~fpexplore.formats.ulp`,
:func:`~fpexplore.formats.format_info`, ``round_f64``, ``next_up(x, fmt)`` and
``next_down(x, fmt)``, ``fpx.sum(..., accumulate=fmt)`` in the orders that round each addition
from its exact value). Its parameters are CPFloat's (Fasi and Mikaitis, "CPFloat: A C Library
for Simulating Low-precision Arithmetic", ACM TOMS 2023): ``precision`` with the implicit bit,
``emax``, ``emin = 1 - emax``, IEEE 754's infinities, NaN, nearest-even and overflow.

:func:`step_held` is ``next_up`` / ``next_down`` in such a format (float64 data);
:func:`ordered_keys` counts its ulps (``ulp_distance(a, b, fmt=...)``); :func:`held_bits` and
:func:`held_values` are IEEE's patterns where it has IEEE's layout (``to_bits(x, fmt)``,
``from_bits``); :func:`twin` the built-in format with its parameters, where there is one.
"""

from __future__ import annotations

import math
import re

import numpy as np

from . import checks
from ._registry import FORMATS, INFO, FormatInfo
from ._roundmodes import round_f64_in

__all__ = [
    "check_held",
    "format",
    "held_bits",
    "held_values",
    "ordered_keys",
    "refuse_no_layout",
    "step_held",
    "twin",
    "user_names",
]

_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_]*(?:-[A-Za-z0-9_]+)*\Z")  # as a spec reads it
_F64 = np.dtype(np.float64)


def format(  # noqa: A001  (fpx.format, as fpx.sum)
    precision: int, emax: int, *, subnormals: bool = True, name: str | None = None
) -> FormatInfo:
    """Define a binary floating-point format of one's own and register it by name.

    Parameters
    ----------
    precision : int
        Significand bits, the implicit one included (float16: 11, bfloat16: 8), from 2 to
        53: the values are held in float64, which has 53.
    emax : int
        The largest exponent (float16: 15; ``emin = 1 - emax``, as in IEEE 754), from 1 to
        1023: float64 then holds every value exactly (the least, ``2**(emin - precision +
        1)``, is ``2**-1074`` or more).
    subnormals : bool
        True (default): gradual underflow, as IEEE 754. False: no value lies between 0 and
        ``2**emin``; a result there rounds, in the rounding mode, to ``±0`` or ``±2**emin``,
        as CPFloat's ``CPFLOAT_SUBN_RND`` does: to nearest, below ``2**emin / 2`` to ``±0``
        and from it on (the tie included) to ``±2**emin``; toward zero ``±0``; up and down
        toward their infinity; stochastic up with probability ``|x| / 2**emin``. ``ulp(0,
        fmt)`` stays the quantum at ``2**emin``, ``2**(emin - precision + 1)``.
    name : str, optional
        The name to give it wherever a format name goes (letters, digits, ``_`` and ``-``,
        starting with a letter; not a built-in format's, nor "exact", nor a name NumPy reads as
        a dtype, such as "half" or "float8_e4m3fn"). Default:
        ``"custom_p{precision}_emax{emax}"``, with ``"_nosub"`` where ``subnormals=False``.
        Defining a name again with the same parameters gives the same format; with others
        it is refused.

    Returns
    -------
    FormatInfo
        The registry entry: ``name``, ``precision``, ``emin``, ``emax``, ``max`` (the largest
        value, ``(2 - 2**(1 - precision)) * 2**emax``), ``subnormals``, ``exponent_bits``
        (the IEEE field that holds emax), ``storage=False`` (values held in float64).

    Examples
    --------
    >>> import fpexplore as fpx
    >>> half = fpx.format(precision=11, emax=15, name="my_half")
    >>> float(fpx.as_format(0.1, "my_half"))
    0.0999755859375
    """
    checks.boolean("subnormals", subnormals)
    p = checks.integer("precision", precision)
    if not 2 <= p <= 53:
        why = "float64, which holds the values, has 53" if p > 53 else "1 bit has no fraction"
        raise ValueError(f"precision must be from 2 to 53 (with the implicit bit), got {p}: {why}")
    e = checks.integer("emax", emax)
    if not 1 <= e <= 1023:
        why = "float64, which holds the values, reaches 2**1023" if e > 1023 else "emin = 1 - emax"
        raise ValueError(f"emax must be from 1 to 1023, got {e} ({why})")
    if name is None:
        name = f"custom_p{p}_emax{e}" + ("" if subnormals else "_nosub")
    _check_name(name)
    info = FormatInfo(
        name, _F64, np.dtype(np.uint64), 64, p, 1 - e, e, storage=False, subnormals=subnormals
    )
    old = INFO.get(name)
    if old is not None and old != info:
        raise ValueError(
            f"name {name!r} already names a format of fpx.format with precision="
            f"{old.precision}, emax={old.emax}, subnormals={old.subnormals}: give another name"
        )
    INFO[name] = info
    return info


def _check_name(name) -> None:
    if not isinstance(name, str):
        raise TypeError(f"name must be a string, got {checks.shown(name)}")
    if not _NAME.match(name):
        raise ValueError(
            f"name {checks.shown(name)} must start with a letter and hold letters, digits, "
            "'_' and '-' only (it goes into variant specs, e.g. 'sequential@<name>')"
        )
    if name in INFO and not INFO[name].user_defined:
        raise ValueError(f"name {name!r} is a built-in format's: give another name")
    if name.lower() == "exact":  # (pass 35: 'sequential@exact' read as exact accumulation)
        raise ValueError("name 'exact' names the exact reference everywhere: give another name")
    try:  # (pass 26: "float8_e4m3fn" was taken, and meant another format than its dtype)
        dt = np.dtype(name)
    except TypeError:
        return
    raise ValueError(f"name {name!r} is NumPy's name of the dtype {dt}: give another name")


def user_names() -> tuple[str, ...]:
    """The names of the formats :func:`format` defined, in the order of definition."""
    return tuple(n for n, i in INFO.items() if i.user_defined)


def refuse_no_layout(info: FormatInfo, what: str) -> None:
    """A ValueError (``what``: the function, for the message) where the format of
    :func:`format` ``info`` has no IEEE bit layout (``FormatInfo.ieee_layout``): the bit
    helpers and the bit inspector show bits of those that have one."""
    if not info.ieee_layout:
        raise ValueError(
            f"{what}: format {info.name!r} (fpx.format) has no IEEE bit layout: bits are "
            "shown for those with subnormals and emax = 2**(w-1) - 1 (w exponent bits: 1, "
            f"3, 7, 15, ...), got emax={info.emax}, subnormals={info.subnormals}"
        )


def held_values(bits: np.ndarray, info: FormatInfo, what: str) -> np.ndarray:
    """The float64 values of the IEEE 754 patterns ``bits`` (unsigned ints, checked to lie in
    the format's width) of a format of :func:`format` with an IEEE layout: the inverse of
    :func:`held_bits` (NaN patterns give NaN)."""
    refuse_no_layout(info, what)
    b = bits.astype(np.uint64)
    fb, eb = info.fraction_bits, info.exponent_bits
    top = (1 << eb) - 1
    sign = np.where((b >> np.uint64(eb + fb)) & np.uint64(1), -1.0, 1.0)
    e = ((b >> np.uint64(fb)) & np.uint64(top)).astype(np.int64)
    f = (b & np.uint64((1 << fb) - 1)).astype(np.float64)
    mag = np.where(e == 0, np.ldexp(f, info.emin - fb), np.ldexp(f + 2.0**fb, e - info.emax - fb))
    mag = np.where(e == top, np.where(f == 0, np.inf, np.nan), mag)
    return np.copysign(mag, sign)  # (a NaN keeps its sign bit too)


def held_bits(x, fmt, what: str) -> np.ndarray:
    """IEEE 754's bit patterns (uint64) of float64 values ``x`` of the format ``fmt`` of
    :func:`format` with an IEEE layout (``FormatInfo.ieee_layout``): sign, exponent field
    (bias emax), fraction; ``±inf`` all-ones exponent, NaN the quiet one. ``what``: the
    function, for messages."""
    info = fmt if isinstance(fmt, FormatInfo) else INFO.get(fmt) if isinstance(fmt, str) else None
    if info is not None and info.user_defined:
        refuse_no_layout(info, what)
    keys, nan = ordered_keys(x, fmt, what, "x", "x")
    info = INFO[fmt] if isinstance(fmt, str) else fmt
    top = (1 << info.exponent_bits) - 1
    quiet = (top << info.fraction_bits) | (1 << (info.fraction_bits - 1))
    sign = np.signbit(np.asarray(x)).astype(np.uint64) << np.uint64(
        info.exponent_bits + info.precision - 1
    )
    mag = np.where(nan, quiet, np.abs(keys)).astype(np.uint64)
    return mag | sign


def twin(fmt: str) -> str:
    """The built-in storage format (float16, bfloat16, float32, float64) with the parameters
    of the format of :func:`format` named ``fmt`` (precision, emin, emax, subnormals: it then
    behaves exactly as that one); else ``fmt`` itself (a built-in format's name too)."""
    info = INFO[fmt]
    if not info.user_defined:
        return fmt
    same = (info.precision, info.emin, info.emax, info.subnormals)
    for name in FORMATS:
        b = INFO[name]
        if (b.precision, b.emin, b.emax, b.subnormals) == same:
            return name
    return fmt


def _forget(name: str) -> None:
    """Remove a format of :func:`format` from the registry (tests keep the registry clean)."""
    if name in INFO and INFO[name].user_defined:
        del INFO[name]


def check_held(
    x, fmt, what: str, call: str, arg: str = "x", own: str = "step in x's own format"
) -> tuple[FormatInfo, np.ndarray]:
    """``fmt``'s FormatInfo (a format of :func:`format`, by name or FormatInfo) and ``x`` as
    a float64 array of its values (NaN and ±inf too); else the error naming ``fmt`` or ``x``
    (``what``: the function's name; ``call``: how the message writes the call, ``arg`` the
    argument's name; ``own``: what leaving fmt out does)."""
    info = fmt if isinstance(fmt, FormatInfo) else INFO.get(fmt) if isinstance(fmt, str) else None
    if info is None or not info.user_defined:
        raise ValueError(
            f"{what}: fmt={checks.shown(getattr(fmt, 'name', fmt))}: fmt takes only a format of "
            "fpx.format "
            f"(defined: {', '.join(user_names()) or 'none'}), for float64 {arg} holding its "
            f"values; leave it out to {own}"
        )
    arr = np.asarray(x)
    if arr.dtype != _F64 or isinstance(x, np.ma.MaskedArray):
        raise TypeError(
            f"{call.format(info.name)} needs {arg} in float64, which holds {info.name}'s values "
            f"(fpx.as_format({arg}, {info.name!r}) gives them); got {checks.shown(x)}"
        )
    with np.errstate(all="ignore"):
        ok = (round_f64_in(arr, info, "nearest_even") == arr) | np.isnan(arr) | np.isinf(arr)
    if not ok.all():
        bad = float(arr[~ok].reshape(-1)[0]) if arr.ndim else float(arr)
        raise ValueError(
            f"{call.format(info.name)}: {arg} holds {bad!r}, which is not a value of "
            f"{info.name}; round it first with fpx.as_format({arg}, {info.name!r})"
        )
    return info, arr


def step_held(x, fmt, direction: int, what: str):
    """``next_up`` (``direction`` +1) or ``next_down`` (-1) of float64 values ``x`` of the
    format ``fmt`` (a name or FormatInfo) of :func:`format`, as IEEE's nextUp / nextDown:
    ``±0`` steps to the least value of the sign, ``-least`` up to ``-0.0``, ``±max`` past it
    to ``±inf``, ``±inf`` toward the range to ``±max``; NaN stays. ``what``: the function's
    name, for messages."""
    info, arr = check_held(x, fmt, what, what + "(x, {!r})")
    with np.errstate(all="ignore"):
        a, neg = np.abs(arr), np.signbit(arr)
        _, e = np.frexp(a)  # a = m * 2**e, m in [0.5, 1): floor(log2 a) = e - 1
        ex = e.astype(np.int64) - 1
        q = np.ldexp(1.0, np.maximum(ex, info.emin) - info.precision + 1)
        up = np.where(a + q > info.max, np.inf, a + q)
        binade = (np.ldexp(1.0, ex) == a) & (ex > info.emin)  # 2**k: the gap below is half
        down = np.where(binade, a - q / 2, a - q)
        if not info.subnormals:
            down = np.where(a == info.smallest_normal, 0.0, down)
        down = np.where(np.isinf(a), info.max, down)
        up = np.where(np.isinf(a), np.inf, up)
        away = neg if direction < 0 else ~neg
        out = np.where(neg, -1.0, 1.0) * np.where(away, up, down)
        out = np.where(a == 0, math.copysign(info.smallest_subnormal, direction), out)
        out = np.where(np.isnan(arr), arr, out)
    return out[()] if out.ndim == 0 else out


def ordered_keys(x, fmt, what: str, name: str, args: str = "a, b") -> tuple[np.ndarray, np.ndarray]:
    """Integer keys of float64 values ``x`` of the format ``fmt`` of :func:`format`, in which
    consecutive values of the format differ by 1 (``ulp_distance(a, b, fmt=...)``): the
    value over the quantum of the lowest binade plus ``2**(precision - 1)`` per binade above
    it; without subnormals 0 is 0 and ``2**emin`` 1; ``±inf`` one past ``±max``; ``-0`` and
    ``+0`` both 0 (the sign applies to the magnitude). Also where ``x`` is NaN. ``what``:
    the function, ``name``: the argument, ``args``: the call's arguments, for messages."""
    own = "count in the arrays' own format" if args != "x" else "read x in its own format"
    info, arr = check_held(x, fmt, what, f"{what}({args}, fmt={{!r}})", name, own)
    p = info.precision
    with np.errstate(all="ignore"):
        a = np.abs(arr)
        finite = np.isfinite(a)
        a = np.where(finite, a, info.max)  # (inf: max's key, plus 1 below)
        _, e = np.frexp(a)  # a = m * 2**e, m in [0.5, 1): floor(log2 a) = e - 1
        ex = np.where(a == 0, info.emin, np.maximum(e.astype(np.int64) - 1, info.emin))
        mag = ((ex - info.emin) << (p - 1)) + np.ldexp(a, p - 1 - ex).astype(np.int64)
        if not info.subnormals:
            mag = np.where(a == 0, 0, mag - (1 << (p - 1)) + 1)
        mag = np.where(np.isinf(arr), mag + 1, mag)
        nan = np.isnan(arr)
        mag = np.where(nan, 0, mag)
    return np.where(np.signbit(arr), -mag, mag), nan
