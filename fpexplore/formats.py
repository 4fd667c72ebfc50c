"""Binary floating-point formats: registry, correct rounding, bits, ulps, neighbours.

``FORMATS`` are the storage formats an array can have. The other ``ROUNDINGS`` are *input
roundings* (float32 storage), accepted by :func:`as_format`, :func:`format_info` and
:func:`ulp` but not array dtypes:

- ``"tf32"``: 10 explicit significand bits, float32's exponent range, rounded to nearest with
  ties *away from zero*, as cuBLAS and CUTLASS convert float32 to tf32 (PTX
  ``cvt.rna.tf32.f32``); ``"tf32-rne"`` ties to even instead; ``"tf32-truncate"`` keeps the top
  10 fraction bits (toward zero), as a tensor core reading raw float32 bits does;
  ``"bfloat16-truncate"`` keeps the top 7 (bfloat16's grid toward zero: a cast by bit mask,
  CUDA's ``__float2bfloat16_rz``).
- ``"float8_e4m3"`` and ``"float8_e5m2"``: ml_dtypes' ``float8_e4m3fn`` and ``float8_e5m2``
  (OCP FP8), nearest-even. float8_e4m3 has no infinity: its largest value is 448, and
  |x| > 464 (464 itself ties to 448) and ``±inf`` become NaN, as in ml_dtypes (CUDA's
  ``__NV_SATFINITE`` conversion saturates to ±448 instead). float8_e5m2 overflows to ``±inf``
  like the IEEE formats.
- ``"float8_e4m3fnuz"`` and ``"float8_e5m2fnuz"``: ml_dtypes' types of the same names, AMD's
  FP8 (CDNA3, MI300): exponent bias 8 and 16 (one more than OCP's, so the least normal is
  2**-7 and 2**-15), no infinity, no negative zero, one NaN (bit pattern 0x80); largest
  values 240 and 57344. Rounding is nearest-even; beyond the largest value, and ``±inf``,
  give NaN, as in ml_dtypes. Kept apart from OCP's float8_e4m3 / float8_e5m2: the same bits
  are other numbers.
- ``"float6_e2m3"``, ``"float6_e3m2"``, ``"float4_e2m1"``: the OCP Microscaling (MX v1.0)
  element formats, ml_dtypes' ``float6_e2m3fn``, ``float6_e3m2fn``, ``float4_e2m1fn``: no
  infinity, no NaN; largest values 7.5, 28 and 6 (float4_e2m1 holds 0, 0.5, 1, 1.5, 2, 3, 4, 6
  and their negatives). Nearest-even; past the largest value, and ``±inf``, they *saturate*
  to ``±max``, as ml_dtypes does, as the MX spec has element values clamped to the largest
  normal, and as the only float32 conversions to them in PTX do (``cvt.rn.satfinite``). NaN
  has no encoding: it stays NaN in the float32 holding (ml_dtypes makes it -0.0, a number the
  input never was; fpexplore does not).
- ``"float8_e8m0"``: the MX scale, ml_dtypes' ``float8_e8m0fnu``: the powers of two 2**-127
  .. 2**127 (bias 127), NaN 0xFF, no zero, no sign (precision 1: no subnormals). Rounded to
  the nearest power of two by value, a tie 1.5 * 2**k to 2**(k+1) (the even significand, 2 *
  2**k against 1 * 2**k), as ml_dtypes does; below 2**-127 every positive value gives 2**-127;
  from 1.5 * 2**127 on, and ``inf``, NaN; zero and negative values NaN (as in ml_dtypes).
  Unlike ml_dtypes 0.6, which rounds every float32 subnormal in (2**-127, 2**-126) up to
  2**-126, the nearest: 1.25 * 2**-127 gives 2**-127.

Everything here is exact: :func:`as_format` rounds correctly (to nearest, ties to even unless
the format or ``rounding=`` says otherwise: ``ROUNDING_MODES``, stochastic rounding
included) with gradual underflow and overflow to infinity, from any of the formats, from
integers of any size and from exact rationals (``fractions.Fraction``, ``decimal.Decimal``).

For the other modules of the package (internal, not in ``__all__``): :func:`coerce` brings
inputs to one format, :func:`round_f64` rounds a float64 array to a format, :func:`scalar_out`
turns 0-d results into NumPy scalars.
"""

from __future__ import annotations

from fractions import Fraction
from typing import TYPE_CHECKING

import ml_dtypes
import numpy as np

from . import _registry, _small, checks
from ._registry import (
    BY_DTYPE,
    FORMATS,
    INFO,
    ROUNDING_MODES,
    ROUNDINGS,
    SMALL_BY_DTYPE,
    SMALL_DTYPES,
    FormatInfo,
    format_arg,
    format_info,
)
from ._registry import FP8_DTYPES as FP8_DTYPES  # (re-exported, as are the next two)
from ._registry import INPUT_ROUNDINGS as INPUT_ROUNDINGS
from ._registry import INPUT_ROUNDINGS_TEXT as INPUT_ROUNDINGS_TEXT
from ._registry import format_name as format_name  # (re-exported: the one parser)
from ._roundmodes import (
    round_exact_scalar,
    round_f32_bits,
    round_f64_in,
)
from .numerics import odd_f64_to_f32
from .userformat import ordered_keys, step_held

if TYPE_CHECKING:
    from decimal import Decimal

    from numpy.typing import ArrayLike, DTypeLike

__all__ = [
    "FORMATS",
    "ROUNDINGS",
    "ROUNDING_MODES",
    "ULP_NAN",
    "FormatInfo",
    "as_format",
    "format_info",
    "format_of",
    "holding",
    "refuse_masked",
    "next_down",
    "next_up",
    "ulp",
    "ulp_distance",
]

#: Returned by ``ulp_distance(..., nan="sentinel")`` where exactly one side is NaN.
ULP_NAN = int(np.iinfo(np.int64).min)
#: ``ulp_distance``'s saturated distance (±): float64 values farther apart give it.
ULP_SATURATED = int(np.iinfo(np.int64).max)

_BF16 = np.dtype(ml_dtypes.bfloat16)
_INFO = INFO


def _unsupported_dtype(dt: np.dtype) -> TypeError:
    if dt.kind in "iu":
        hint = (
            "integer input is not a floating-point format: convert it explicitly, "
            "e.g. fpx.as_format(x, 'float64')"
        )
    elif dt.kind == "b":
        hint = "boolean input is not a floating-point format"
    elif dt.kind == "O":
        hint = "object arrays are not supported: convert them with fpx.as_format(x, fmt)"
    elif dt in SMALL_BY_DTYPE:
        name = SMALL_BY_DTYPE[dt]
        readers = "to_bits, fields, bit_string, hex_string, shortest_repr, ulp, ulp_distance, "
        readers += "next_up, next_down, as_format" + (", mma" if name in FP8_DTYPES else "")
        if _INFO[name].has_negative_zero:  # the formats the rounded orders accumulate in
            readers += ", sum, dot, matmul, mean, variance, softmax, logsumexp, cdist, linspace, "
            readers += "adam_step, exp, log, sin, tanh, sqrt, pow, exact_sum, exact_dot, "
            readers += "exact_matmul and compare"
        hint = (
            f"{name} arrays ({dt}) are read by {readers}; for the others convert it, e.g. "
            "x.astype(np.float32) (exact)"
        )
    else:
        hint = f"dtype {dt} is not supported"
    return TypeError(f"{hint}; supported formats: {', '.join(FORMATS)}")


def refuse_masked(x, what: str) -> None:
    """TypeError for a masked array (``np.asarray`` drops the mask: its hidden values count)
    and for a pandas object with missing values (NaN to NumPy, skipped by pandas' own sum)."""
    if isinstance(x, np.ma.MaskedArray):
        raise TypeError(
            f"{what}: masked arrays are not supported (the masked values would be used); "
            "pass x.compressed() for the unmasked values, or x.filled(value)"
        )
    if type(x).__module__.startswith("pandas") and hasattr(x, "isna"):
        kinds = sorted({str(t) for t in getattr(x, "dtypes", [])}) if hasattr(x, "columns") else []
        if len(kinds) > 1:  # (pass 35: NumPy widens them to one, silently)
            raise TypeError(
                f"{what}: a pandas DataFrame whose columns are {' and '.join(kinds)}: NumPy "
                "reads them as one format, widening some; give the columns one at a time"
            )
        if np.asarray(x.isna()).any():
            raise TypeError(
                f"{what}: a pandas {type(x).__name__} with missing values (pandas' sum skips "
                "them, np.asarray makes them NaN): pass x.dropna().to_numpy() for the values "
                "there, or x.to_numpy(dtype=float, na_value=np.nan) for NaN"
            )


def holding(*fmts) -> FormatInfo:
    """The narrowest of ``FORMATS`` holding every value of each of ``fmts`` (float16 and
    bfloat16: float32), where results of different formats compare exactly."""
    infos = [format_info(f) for f in fmts]
    for name in sorted(FORMATS, key=lambda f: _INFO[f].bits):
        i = _INFO[name]
        if all(i.precision >= j.precision and i.emax >= j.emax and i.emin <= j.emin for j in infos):
            return i
    raise ValueError(f"no format holds {', '.join(j.name for j in infos)}")


def native(arr: np.ndarray) -> np.ndarray:
    """``arr`` in this machine's byte order: a big-endian array (``>f4``, from a file written
    elsewhere) as the same values in native order (a copy); any other array as it is."""
    if arr.dtype.kind == "f" and not arr.dtype.isnative:
        return arr.astype(arr.dtype.newbyteorder("="))
    return arr


def refuse_big_endian(arr, who: str, name: str, why: str = "") -> None:
    """A ValueError naming ``who`` where ``arr`` is a big-endian floating-point array, for a
    place that cannot compute as NumPy would on it (``why`` says so), suggesting the conversion
    of ``name``."""
    dt = getattr(arr, "dtype", None)
    if isinstance(dt, np.dtype) and dt.kind == "f" and not dt.isnative:
        raise ValueError(
            f"{who} is big-endian ({dt.str}){why}: give it in this machine's byte order, "
            f"{name}.astype({dt.newbyteorder('=').str!r})"
        )


def format_of(x: ArrayLike) -> str:
    """The name of the format of a NumPy array or scalar.

    Parameters
    ----------
    x : array_like
        An array or scalar of a storage format (TypeError for other dtypes).

    Returns
    -------
    str
    """
    if isinstance(x, (np.ndarray, np.generic)) and x.dtype.kind == "f":  # (big-endian too)
        x = x.astype(x.dtype.newbyteorder("="))
    return float_array(x, "format_of: x")[1].name  # (pass 38: None was "object arrays")


def scalar_out(out: np.ndarray):
    """NumPy convention: 0-d results come back as NumPy scalars."""
    return out[()] if out.ndim == 0 else out


# ----------------------------------------------------------------------------- rounding


def round_f64(x64: np.ndarray, info: FormatInfo) -> np.ndarray:
    """Correctly round a float64 array to ``info`` (vectorized)."""
    name = info.name
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):
        if name == "float64":
            return x64
        if info.user_defined:  # fpx.format's: held in float64, rounded on its grid
            return round_f64_in(x64, info, info.rounding)
        if name in ("float32", "float16"):
            # IEEE conversions (float16: NumPy's direct double->half, no double rounding)
            return x64.astype(info.dtype)
        if not info.has_zero:  # E8M0 from the float64 itself: ml_dtypes 0.6 rounds every
            # float32 subnormal in (2**-127, 2**-126) up to 2**-126
            return round_f64_in(x64, info, info.rounding).astype(np.float32)
        odd32 = odd_f64_to_f32(x64)  # round to odd at 24 bits, then once to the target
        if name == "bfloat16":
            return odd32.astype(_BF16)
        if name in SMALL_DTYPES:
            return _small_from_f32(odd32, info)
        return round_f32_bits(odd32, 24 - info.precision, info.rounding)  # (tf32: 13 bits)


def _small_from_f32(x32: np.ndarray, info: FormatInfo) -> np.ndarray:
    """float32 rounded by ml_dtypes (as the registry says); FP6, FP4's float32 keeps NaN."""
    out = x32.astype(SMALL_DTYPES[info.name]).astype(np.float32)
    return np.where(np.isnan(x32), x32, out) if info.saturates else out


def _from_storage(arr: np.ndarray, src: FormatInfo, info: FormatInfo, mode: str, vector):
    """``arr`` (of storage format ``src``) rounded to ``info`` (``vector``: from float64)."""
    if src.name == info.name:
        return arr.copy()
    with np.errstate(invalid="ignore"):  # a signalling NaN converts to NaN, no warning
        wide = src.precision <= info.precision and src.emin >= info.emin
        if wide and src.emax <= info.emax and info.subnormals:  # (else subnormals round)
            return arr.astype(info.dtype)  # widening: exact
        small = src.name == "float32" and info.name in SMALL_DTYPES and info.has_zero
        if small and mode == info.rounding:  # (round_f64's path, no float64 round trip)
            return _small_from_f32(arr, info)
        return vector(arr.astype(np.float64))


def as_format(
    x: ArrayLike | Fraction | Decimal,
    fmt: DTypeLike | FormatInfo,
    *,
    rounding: str | None = None,
    seed: int | None = None,
) -> np.ndarray | np.generic:
    """Round ``x`` to the format ``fmt`` (of ``ROUNDINGS`` or ``fpx.format``) in ``rounding``.

    ``x`` may be a NumPy array or scalar of any of the formats, a Python float or int, a list,
    an integer array (exact whatever its size), or exact rationals (``Fraction``, ``Decimal``,
    object arrays of them). The result has the format's dtype (``"tf32"``: float32 holding
    values with 11 significant bits; ``"float8_*"``, ``"float6_*"``, ``"float4_e2m1"``:
    float32 holding their values; ``fpx.format``'s: float64). Rounding is correct: no double
    rounding, gradual underflow, overflow to ``±inf`` (the truncations: to the largest
    finite value; ``"float8_e4m3"``: NaN, as ml_dtypes' ``float8_e4m3fn``; FP6, FP4: ``±max``;
    fpx.format(subnormals=False): see it); NaN stays NaN, signed zeros keep their sign (see
    the module docstring for E8M0, which has none).

    ``rounding`` (one of ``ROUNDING_MODES``; None: the format's own, nearest-even but for
    ``"tf32"``, ties away from zero, and the truncations, toward zero, which take no other):
    ``"nearest_even"``, ``"nearest_away"`` (ties away from zero), ``"toward_zero"``, ``"up"``
    (toward +inf), ``"down"`` (toward -inf), or ``"stochastic"``: up with probability
    (x - lo) / (hi - lo) between the neighbours lo < x < hi (to 2**-53: the draws have 53
    bits), seeded by ``seed`` (an int, required there and only there). Past the largest
    value a directed mode gives ``±max`` toward the range and the format's overflow
    (``±inf``, NaN, saturation) away from it; beyond ``max`` the stochastic neighbour is the
    grid's next value, which overflows as nearest would. E8M0 gives 2**-127 for every
    positive value below it, in every mode.

    Parameters
    ----------
    x : array_like, Fraction or Decimal
        The values to round.
    fmt : str, dtype or FormatInfo
        A name of ``ROUNDINGS``, a format of ``fpx.format``, or a dtype.
    rounding : str, optional
        One of ``ROUNDING_MODES``; None: the format's own.
    seed : int, optional
        The stochastic mode's seed (required there, refused in any other mode).

    Returns
    -------
    ndarray or scalar
        Of the format's dtype (its holding dtype for the formats held in float32 or float64).
    """
    refuse_masked(x, "as_format")
    info = format_arg(fmt, "as_format: fmt")
    mode, rng = _rounding_mode(info, rounding, seed)
    if isinstance(x, (bool, np.bool_)):
        raise TypeError("as_format: x: boolean values are not numbers to round")
    arr = as_array(x, "as_format: x") if not isinstance(x, np.ndarray) else x
    if (sm := small_array(arr, "as_format: x")) is not None:
        arr = sm.astype(np.float32)  # an ml_dtypes array's values, exact in float32
    if isinstance(x, (list, tuple)) and arr.dtype == np.float64:
        if any(_inexact_int(v) for v in np.asarray(x, dtype=object).reshape(-1)):
            arr = np.asarray(x, dtype=object)  # ints float64 would round: each exactly

    def vector(x64: np.ndarray) -> np.ndarray:
        if mode == info.rounding:
            return round_f64(x64, info)
        return round_f64_in(x64, info, mode, rng).astype(info.dtype)

    kind = arr.dtype.kind
    if arr.dtype in BY_DTYPE:
        return scalar_out(_from_storage(arr, BY_DTYPE[arr.dtype], info, mode, vector))
    if kind in "iu":
        if arr.size == 0 or int(np.max(np.abs(arr.astype(np.float64)))) < 2**53:
            return scalar_out(vector(arr.astype(np.float64)))
        arr = arr.astype(object)
        kind = "O"
    if kind in "fO":  # other float widths (longdouble) and objects: exact per element
        items = arr.reshape(-1).tolist() if kind == "O" else arr.reshape(-1)
        try:
            flat = [round_exact_scalar(v, info, mode, rng) for v in items]
        except TypeError as e:  # (a dict, a complex number: the function and argument named)
            raise TypeError(f"as_format: x: {e}") from None
        out = np.array(flat, dtype=np.float64).reshape(arr.shape)
        return scalar_out(out.astype(info.dtype))  # exactly representable already
    if kind == "b":
        raise TypeError("as_format: x: boolean values are not numbers to round")
    raise TypeError(f"as_format: x: cannot round values of dtype {arr.dtype} to {info.name}")


def _rounding_mode(info: FormatInfo, rounding, seed) -> tuple[str, np.random.Generator | None]:
    """as_format's ``rounding`` and ``seed`` checked: the mode, and the stochastic draws."""
    if rounding is None:
        mode = info.rounding
    else:
        mode = _registry.rounding_mode(rounding, "as_format: ")
        grid = _registry.FIXED_MODE.get(info.name)
        if grid is not None and mode != info.rounding:
            raise ValueError(
                f"as_format: rounding={mode!r} with fmt={info.name!r}, which rounds "
                f"{info.rounding} by definition; for its grid in another mode give "
                f"fmt={grid!r}, rounding={mode!r}"
            )
    if mode == "stochastic":
        if seed is None:
            raise ValueError("as_format: rounding='stochastic' needs seed= (an integer)")
        return mode, np.random.default_rng(checks.seed(seed))
    if seed is not None:
        raise ValueError(
            f"as_format: seed= is for rounding='stochastic' only; rounding is {mode!r}"
        )
    return mode, None


# ----------------------------------------------------------------------------- bits


def as_array(x, what: str) -> np.ndarray:
    """np.asarray(x); a ragged nested list is a ValueError that names ``what``, a list mixing
    booleans with numbers (NumPy reads True as 1.0) a TypeError."""
    try:
        arr = np.asarray(x)
    except ValueError:
        if not isinstance(x, (list, tuple)):
            raise
        raise ValueError(
            f"{what}: a nested list whose rows have different lengths (ragged) is not an array"
        ) from None
    if isinstance(x, (list, tuple)) and arr.dtype.kind != "b":  # (all booleans: refused later)
        if any(isinstance(v, (bool, np.bool_)) for v in np.asarray(x, dtype=object).flat):
            raise TypeError(f"{what}: a list mixing booleans with numbers (True reads as 1)")
    return arr


def _numbers(x, what: str) -> np.ndarray:
    """:func:`as_array`, where Python numbers NumPy keeps as objects (ints beyond int64:
    2**64) are the float64s they are exactly; a TypeError naming ``what`` for an int float64
    does not hold (10**400) and for what is not numbers (None, a generator, Fractions)."""
    arr = as_array(x, what)
    if arr.dtype != object or isinstance(x, np.ndarray):
        return arr
    values = arr.reshape(-1).tolist()
    if not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values):
        raise TypeError(
            f"{what}: expected floats, ints or an array of them, got {checks.shown(x)} "
            "(exact rationals: round them first with fpx.as_format(x, fmt))"
        )
    _refuse_rounded_ints(x, arr, what)
    return np.array(values, dtype=np.float64).reshape(arr.shape)


def float_array(x, what: str) -> tuple[np.ndarray, FormatInfo]:
    """``x`` as an array of a storage format and that format; else a TypeError that starts
    with ``what`` (the function and argument: "to_bits: x")."""
    refuse_masked(x, what)
    arr = native(_numbers(x, what))
    _refuse_rounded_ints(x, arr, what)
    if arr.dtype in BY_DTYPE:
        return arr, BY_DTYPE[arr.dtype]
    raise TypeError(f"{what}: {_unsupported_dtype(arr.dtype)}")


def bit_patterns(arr: np.ndarray, info: FormatInfo) -> np.ndarray:
    """Bit patterns as a new unsigned array of the same shape (0-d stays 0-d)."""
    return np.array(arr, dtype=info.dtype, order="C", copy=True).view(info.uint)


def small_array(x, what: str) -> np.ndarray | None:
    """``x`` as an array where it is an FP8 array or scalar (ml_dtypes' types), else None."""
    refuse_masked(x, what)
    if isinstance(x, (np.ndarray, np.generic)) and x.dtype in SMALL_BY_DTYPE:
        return np.asarray(x)
    return None


# ----------------------------------------------------------------------------- ulps


def ulp(x: ArrayLike, fmt: DTypeLike | FormatInfo | None = None) -> np.ndarray | np.generic:
    """Unit in the last place of ``x``: the quantum ``2**(max(e, emin) - precision + 1)``.

    ``e = floor(log2|x|)``; zeros and subnormals get ``2**(emin - precision + 1)`` (without
    subnormals no step from zero: see ``next_up``); ``ulp(±inf) = inf``, ``ulp(nan) = nan``.
    The result has x's dtype. ``fmt`` (e.g. ``"tf32"`` for float32 data) selects the
    precision when it differs from the storage format. An FP8 array has its own format's ulps.

    Parameters
    ----------
    x : array_like
        Values of a storage format, or an array of ml_dtypes' small types.
    fmt : str, dtype or FormatInfo, optional
        The format whose ulps are counted; None: x's own.

    Returns
    -------
    ndarray or scalar
        Of x's dtype.
    """
    if (sm := small_array(x, "ulp: x")) is not None:
        arr, storage, out_dtype = sm, _INFO[SMALL_BY_DTYPE[sm.dtype]], sm.dtype
    else:
        arr, storage = float_array(x, "ulp: x")
        out_dtype = storage.dtype
    info = storage if fmt is None else format_arg(fmt, "ulp: fmt")
    if info.dtype != storage.dtype or (sm is not None and info != storage):
        raise TypeError(
            f"ulp(x, {info.name!r}) needs x stored as {np.dtype(info.dtype).name}, got "
            f"{storage.name} data: convert x first (fpx.as_format(x, {info.name!r})), or leave "
            f"fmt out for the ulps of {storage.name}"
        )
    with np.errstate(invalid="ignore"):  # signalling NaNs (float16's 0x7d01): quiet, no warning
        x64 = arr.astype(np.float64)
        if info != storage and sm is None:  # tf32, FP8 in float32: values within its range
            no_inf = not info.has_infinity
            big = np.abs(x64[np.isfinite(x64) | no_inf & np.isinf(x64)]) > info.max
            if big.any():
                raise ValueError(
                    f"ulp(x, {info.name!r}): x holds a value past {info.name}'s largest, "
                    f"{info.max!r}{' (and no infinity)' if no_inf else ''}, which it cannot hold"
                )
            if not info.signed and (x64 <= 0).any():
                raise ValueError(
                    f"ulp(x, {info.name!r}): x holds zero or a negative value, which "
                    f"{info.name} (powers of two, no sign, no zero) cannot hold"
                )
        _, e = np.frexp(np.abs(x64))  # |x| = m * 2^e, m in [0.5, 1): floor(log2|x|) = e - 1
        e = np.where(x64 == 0, info.emin, e.astype(np.int64) - 1)
        q = np.maximum(e, info.emin) - (info.precision - 1)
        out = np.ldexp(1.0, q)
        out = np.where(np.isfinite(x64), out, np.abs(x64))
        return scalar_out(out.astype(out_dtype))


def _step(x, direction: int):
    with np.errstate(invalid="ignore"):  # NaN bit patterns in ml_dtypes formats
        return _step_impl(x, direction)


def _step_impl(x, direction: int):
    arr, info = float_array(x, f"{'next_up' if direction > 0 else 'next_down'}: x")
    b = bit_patterns(arr, info).astype(np.uint64)
    one = np.uint64(1)
    sign_bit = np.uint64(1 << (info.bits - 1))
    negative = (b & sign_bit) != 0
    is_zero = (b & ~sign_bit) == 0
    # moving away from zero is +1 on the bit pattern, toward zero is -1
    away = negative if direction < 0 else ~negative
    nb = np.where(away, b + one, b - one)
    tiny = np.uint64(1) | (sign_bit if direction < 0 else np.uint64(0))
    nb = np.where(is_zero, tiny, nb)
    out = nb.astype(info.uint).view(info.dtype)
    inf = np.isinf(arr) & (np.signbit(arr) == (direction < 0))  # next_up(+inf) = +inf
    out = np.where(np.isnan(arr) | inf, arr, out)
    return scalar_out(out.astype(info.dtype))


def next_up(x: ArrayLike, fmt: str | FormatInfo | None = None) -> np.ndarray | np.generic:
    """The least value of the format greater than ``x`` (IEEE nextUp; ``next_up(-0.0)`` is the
    smallest positive subnormal, ``next_up(max) = inf``, ``next_up(inf) = inf``, NaN stays).
    An array of ml_dtypes' FP8, FP6, FP4 or E8M0 type steps in its format; where the format has
    no infinity, the largest value has no next and is refused.

    Parameters
    ----------
    x : array_like
        Values of a storage format, or an array of ml_dtypes' small types.
    fmt : str or FormatInfo, optional
        A format of :func:`fpexplore.format`, for float64 ``x`` holding its values; None:
        x's own format.

    Returns
    -------
    ndarray or scalar
        Of x's dtype.
    """
    if fmt is not None:
        return step_held(x, fmt, +1, "next_up")
    if (sm := small_array(x, "next_up: x")) is not None:
        return scalar_out(_small.step(sm, SMALL_BY_DTYPE[sm.dtype], +1))
    return _step(x, +1)


def next_down(x: ArrayLike, fmt: str | FormatInfo | None = None) -> np.ndarray | np.generic:
    """The greatest value of the format less than ``x`` (IEEE nextDown), as :func:`next_up`.

    Parameters
    ----------
    x : array_like
        Values of a storage format, or an array of ml_dtypes' small types.
    fmt : str or FormatInfo, optional
        As in :func:`next_up`.

    Returns
    -------
    ndarray or scalar
        Of x's dtype.
    """
    if fmt is not None:
        return step_held(x, fmt, -1, "next_down")
    if (sm := small_array(x, "next_down: x")) is not None:
        return scalar_out(_small.step(sm, SMALL_BY_DTYPE[sm.dtype], -1))
    return _step(x, -1)


def _nan_bits(arr: np.ndarray, info: FormatInfo) -> np.ndarray:
    """Where ``arr`` holds NaN, read from the bits: no arithmetic, so a signalling NaN raises
    no 'invalid value' warning (ml_dtypes' bfloat16 ufuncs convert through float32)."""
    b = bit_patterns(arr, info).astype(np.uint64) & np.uint64((1 << (info.bits - 1)) - 1)
    return b > np.uint64(((1 << info.exponent_bits) - 1) << info.fraction_bits)  # beyond inf


def quiet_nans(arr: np.ndarray, info: FormatInfo) -> np.ndarray:
    """``arr`` with each signalling NaN made quiet (its top fraction bit set, as any IEEE
    operation on it would), so that NumPy and ml_dtypes warn about none of them; ``arr``
    itself where it holds none. Every other bit pattern is kept."""
    if not arr.size:
        return arr
    nan = _nan_bits(arr, info)
    quiet = np.uint64(1 << (info.precision - 2))
    b = bit_patterns(arr, info).astype(np.uint64)
    signalling = nan & ((b & quiet) == 0)
    if not signalling.any():
        return arr
    return (b | np.where(signalling, quiet, 0)).astype(info.uint).view(info.dtype)


def _ordered_key(arr: np.ndarray, info: FormatInfo) -> np.ndarray:
    """Map values to int64 so that consecutive values differ by 1 and ±0 both map to 0."""
    b = bit_patterns(arr, info).astype(np.uint64)
    sign_bit = np.uint64(1 << (info.bits - 1))
    mag = (b & ~sign_bit).astype(np.int64)
    return np.where((b & sign_bit) != 0, -mag, mag)


def ulp_distance(
    a: ArrayLike, b: ArrayLike, *, nan: str = "raise", fmt: str | FormatInfo | None = None
) -> np.ndarray | np.generic:
    """Signed number of representable values from ``a`` to ``b`` (int64).

    ``ulp_distance(a, next_up(a)) == 1``; ``-0.0`` and ``+0.0`` are 0 apart; ``±inf`` count as
    one step beyond ``±max``. ``a`` and ``b`` must have the same format (no silent conversion)
    and broadcast together. float64 distances beyond 2**63 - 1 saturate at ±(2**63 - 1).

    NaN: ``nan="raise"`` (default) raises ValueError; ``nan="sentinel"`` returns 0 where both
    are NaN and :data:`ULP_NAN` (the most negative int64) where exactly one is.

    FP8 arrays (ml_dtypes' ``float8_e4m3fn``, ``float8_e5m2``, ``float8_e4m3fnuz``,
    ``float8_e5m2fnuz``) are counted in their own format, both of one type.

    Parameters
    ----------
    a, b : array_like
        Values of one format, broadcasting together.
    nan : {"raise", "sentinel"}
        What a NaN gives.
    fmt : str or FormatInfo, optional
        A format of :func:`fpexplore.format`, for float64 ``a`` and ``b`` holding its values
        (counted on its grid, as :func:`next_up` with ``fmt`` steps); None: their own format.

    Returns
    -------
    int64 ndarray or scalar
        The signed distances, ``b`` above ``a`` positive.
    """
    if nan not in ("raise", "sentinel"):
        raise ValueError(f"nan must be 'raise' or 'sentinel', got {checks.shown(nan)}")
    sm = [small_array(v, f"ulp_distance: {n}") for v, n in ((a, "a"), (b, "b"))]
    if fmt is not None:
        (ka, na), (kb, nb_) = (
            ordered_keys(v, fmt, "ulp_distance", n) for v, n in ((a, "a"), (b, "b"))
        )
        try:
            ka, kb, na, nb_ = np.broadcast_arrays(ka, kb, na, nb_)
        except ValueError:
            raise ValueError(
                f"ulp_distance: shapes {ka.shape} and {kb.shape} do not broadcast together"
            ) from None
    elif sm[0] is not None or sm[1] is not None:
        ka, kb, na, nb_ = _small_keys(a, b, *sm)
    else:
        (xa, xb), info = coerce(a, b, what="ulp_distance", broadcast=True, names=("a", "b"))
        xa, xb = np.broadcast_arrays(xa, xb)
        na, nb_ = np.isnan(xa), np.isnan(xb)
        ka, kb = _ordered_key(xa, info), _ordered_key(xb, info)
    any_nan = na | nb_
    if nan == "raise" and any_nan.any():
        raise ValueError(
            f"ulp_distance of NaN is undefined ({int(any_nan.sum())} NaN position(s)); "
            "pass nan='sentinel' to get ULP_NAN there"
        )
    with np.errstate(over="ignore"):
        d = kb - ka
    overflow = ((ka < 0) != (kb < 0)) & ((d < 0) != (kb < 0))
    big = np.int64(ULP_SATURATED)
    overflow |= d == -big - 1  # exactly -2**63 (2.0 to -2.0): no overflow, but the sentinel
    if overflow.any():
        d = np.where(overflow, np.where(kb < 0, -big, big), d)
    if any_nan.any():
        d = np.where(any_nan, np.where(na & nb_, 0, ULP_NAN), d)
    return scalar_out(np.asarray(d, dtype=np.int64))


def _small_keys(a, b, fa, fb) -> tuple[np.ndarray, ...]:
    """ulp_distance's ordered keys and NaN positions of two arrays of one ml_dtypes type
    (FP8, FP6, FP4, E8M0), from their bits: sign-magnitude (E8M0: no sign), so consecutive
    values differ by 1 in the key."""
    if fa is None or fb is None or fa.dtype != fb.dtype:
        kinds = [
            str(v.dtype) if isinstance(v, (np.ndarray, np.generic)) else f"a {type(v).__name__}"
            for v in (a, b)
        ]
        raise TypeError(
            f"ulp_distance: a is {kinds[0]} and b is {kinds[1]}: give both in one ml_dtypes "
            "type, or convert both, e.g. with .astype(np.float32) (exact for these types)"
        )
    try:
        fa, fb = np.broadcast_arrays(fa, fb)
    except ValueError:
        raise ValueError(
            f"ulp_distance: shapes {fa.shape} and {fb.shape} do not broadcast together"
        ) from None
    signed = _INFO[SMALL_BY_DTYPE[fa.dtype]].signed
    sign = 1 << (ml_dtypes.finfo(fa.dtype).bits - 1) if signed else 0  # 0x80, 0x20, 0x08
    keys, nans = [], []
    for f in (fa, fb):
        bits = np.array(f, order="C", copy=True).view(np.uint8).astype(np.int64)
        mag = bits & ~sign
        keys.append(np.where(bits & sign, -mag, mag))
        with np.errstate(invalid="ignore"):
            nans.append(np.isnan(f.astype(np.float32)))  # ml_dtypes reads the NaN patterns
    return keys[0], keys[1], nans[0], nans[1]


# ----------------------------------------------------------------------------- input coercion


def _weak_array(x, what: str) -> np.ndarray | None:
    """Python scalars and lists are 'weak' (no format of their own); arrays are 'strong'."""
    if isinstance(x, (bool, np.bool_)):
        raise TypeError(f"{what}: boolean input is not a floating-point number")
    if isinstance(x, np.generic):  # np.float64 subclasses float but has a format
        return None
    if isinstance(x, (float, int, list, tuple)):
        arr = _numbers(x, what)
        if arr.dtype == np.float64 or arr.dtype.kind in "iu":
            return arr
    return None


def _inexact_int(v) -> bool:
    """An integer (Python's or NumPy's, not a bool) that float64 does not hold exactly."""
    if not isinstance(v, (int, np.integer)) or isinstance(v, (bool, np.bool_)):
        return False
    return int(v).bit_length() > 1024 or int(float(v)) != int(v)


def _refuse_rounded_ints(x, arr: np.ndarray, what: str) -> None:
    """TypeError where NumPy rounded an int of the list ``x`` to make the float64 ``arr``, or
    where an integer array ``arr`` holds one that float64 does not (2**53 + 1; 2**53 is
    one)."""
    if arr.dtype.kind in "iu":
        values = arr[np.abs(arr.astype(np.float64)) >= 2**53].tolist()
    elif arr.dtype == object or (isinstance(x, (list, tuple)) and arr.dtype == np.float64):
        values = np.asarray(x, dtype=object).reshape(-1)
    else:
        return
    for v in values:
        if _inexact_int(v):
            big = f"of {int(v).bit_length()} bits" if abs(v) > 2**200 else v
            where = " in the list" if isinstance(x, (list, tuple)) else ""
            raise TypeError(
                f"{what}: the integer {big}{where} is not exactly a float64; pass an array "
                "of a format that holds it, or a float"
            )


def coerce(
    *xs, what: str, broadcast: bool = False, names: tuple | None = None, keep_bits: bool = False
) -> tuple[list[np.ndarray], FormatInfo]:
    """Bring inputs to one format without changing any value.

    Signalling NaNs come back quiet (:func:`quiet_nans`: NaN, and no NumPy warning later)
    unless ``keep_bits`` (functions that show or compare bit patterns).

    NumPy arrays and scalars fix the format; all of them must agree (mixed formats raise
    TypeError saying how to convert). Python floats/ints and lists adopt that format only if
    every value is exactly representable in it (else TypeError); alone they are float64.
    ``names`` (one per input, e.g. ``"inputs['a']"``) go into the messages about one input.
    """
    strong: dict[str, FormatInfo] = {}
    prepared: list[tuple[np.ndarray, bool]] = []
    checks.same_labels(xs, what, names)
    for i, x in enumerate(xs):
        one = f"{what}: {names[i]}" if names else what
        refuse_masked(x, one)
        weak = _weak_array(x, one)
        if weak is not None:
            _refuse_rounded_ints(x, weak, one)
            if weak.dtype.kind not in "iuf":
                raise TypeError(f"{one}: unsupported input {checks.shown(x)}")
            prepared.append((weak, True))
            continue
        arr = native(_numbers(x, one))
        info = BY_DTYPE.get(arr.dtype)
        if info is None:
            raise TypeError(f"{one}: {_unsupported_dtype(arr.dtype)}")
        strong[info.name] = info
        prepared.append((arr if keep_bits else quiet_nans(arr, info), False))
    if len(strong) > 1:
        names = sorted(strong, key=FORMATS.index)
        wide = holding(*strong.values()).name  # bfloat16 and float16: float32
        raise TypeError(
            f"{what}: mixed formats {' and '.join(names)}; convert explicitly first, e.g. "
            f"fpx.as_format(x, {wide!r}) (it holds both: exact) or "
            f"fpx.as_format(x, {checks.shown(names[0])}) (rounds)"
        )
    info = next(iter(strong.values())) if strong else _INFO["float64"]
    out = []
    for i, (arr, is_weak) in enumerate(prepared):
        if is_weak:
            f64 = arr.astype(np.float64)
            conv = as_format(f64, info.name)
            conv = np.asarray(conv)
            same = (conv.astype(np.float64) == f64) | (
                np.isnan(f64) & np.isnan(conv.astype(np.float64))
            )
            if not np.all(same):
                bad = f64[~same].reshape(-1)[0] if f64.ndim else float(f64)
                raise TypeError(
                    f"{f'{what}: {names[i]}' if names else what}: the Python value "
                    f"{checks.shown(bad)} is not exactly representable in "
                    f"{info.name}; round it explicitly with fpx.as_format(value, "
                    f"{checks.shown(info.name)}) "
                    "or pass an array of that format"
                )
            arr = conv if keep_bits else quiet_nans(conv, info)
        out.append(arr)
    if broadcast:  # elementwise: NumPy's own message would not say which function
        try:
            np.broadcast_shapes(*(a.shape for a in out))
        except ValueError:
            shapes = " and ".join(str(a.shape) for a in out)
            raise ValueError(f"{what}: shapes {shapes} do not broadcast together") from None
    return out, info
