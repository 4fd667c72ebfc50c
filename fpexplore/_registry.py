"""The format registry: :class:`FormatInfo` (a format's parameters and how it meets the ends
of its range), one entry per format name in ``INFO``, and ``SMALL_DTYPES``, the ml_dtypes type
of each format held in float32 (FP8, FP6, FP4, E8M0); :func:`format_info` finds a format by
name or dtype, :func:`format_name` a format's name. :mod:`fpexplore.formats` rounds, reads
bits and counts ulps from these facts and says what each format does past its largest value.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import ml_dtypes
import numpy as np

from .checks import choice, shown

if TYPE_CHECKING:
    from numpy.typing import DTypeLike

FORMATS = ("float16", "bfloat16", "float32", "float64")
FP8_NAMES = ("float8_e4m3", "float8_e5m2", "float8_e4m3fnuz", "float8_e5m2fnuz")
#: the OCP Microscaling (MX v1.0) element formats and the MX scale
MX_NAMES = ("float6_e2m3", "float6_e3m2", "float4_e2m1", "float8_e8m0")
ROUNDINGS = FORMATS + ("tf32", "tf32-rne", "tf32-truncate", "bfloat16-truncate")
ROUNDINGS += (*FP8_NAMES, *MX_NAMES)
# the roundings a product's inputs may get first (+tf32 in a spec, input_rounding="tf32")
INPUT_ROUNDINGS = ("tf32", "bfloat16", "tf32-rne", "tf32-truncate", "bfloat16-truncate")
INPUT_ROUNDINGS += FP8_NAMES
# the roundings whose mode is their definition -> their grid, rounded in any mode
FIXED_MODE = {"tf32": "tf32-rne", "tf32-truncate": "tf32-rne", "bfloat16-truncate": "bfloat16"}
#: the rounding modes of ``as_format(x, fmt, rounding=...)``
ROUNDING_MODES = ("nearest_even", "nearest_away", "toward_zero", "up", "down", "stochastic")
_r = INPUT_ROUNDINGS  # as messages list them: the two common ones, then the others
INPUT_ROUNDINGS_TEXT = f"None, {_r[0]!r} or {_r[1]!r} (or {', '.join(map(repr, _r[2:]))})"


def rounding_mode(value, where: str = "") -> str:
    """``value`` checked as one of ``ROUNDING_MODES`` (``where``: what the message starts
    with): TypeError for a non-string, ValueError naming the valid modes, and the spelling
    with hyphens ("nearest-even") told the one to write."""
    if not isinstance(value, str):
        raise TypeError(
            f"{where}rounding must be a string, one of {', '.join(ROUNDING_MODES)}; "
            f"got {shown(value)}"
        )
    if value.replace("-", "_") in ROUNDING_MODES and value not in ROUNDING_MODES:
        raise ValueError(
            f"{where}rounding {value!r} is written {value.replace('-', '_')!r}; "
            f"valid: {', '.join(ROUNDING_MODES)}"
        )
    try:
        return choice("rounding", value, ROUNDING_MODES)
    except ValueError as e:
        raise ValueError(f"{where}{e}") from None


_BF16 = np.dtype(ml_dtypes.bfloat16)
_F32 = np.dtype(np.float32)
_U32 = np.dtype(np.uint32)


@dataclass(frozen=True)
class FormatInfo:
    """Parameters of a binary format (IEEE 754 style, with subnormals). Values are Python
    floats.

    Attributes
    ----------
    name : str
        The format's name in the registry.
    dtype : numpy.dtype
        The NumPy dtype that holds its values (float32 for the formats held in float32,
        float64 for ``fpx.format``'s).
    uint : numpy.dtype
        The unsigned integer dtype of ``dtype``'s width (its bit patterns).
    bits : int
        The width of ``dtype`` in bits.
    precision : int
        Significand bits, the implicit bit counted (float32: 24).
    emin, emax : int
        The least and the largest exponent of a normal value.
    storage : bool
        True: ``dtype`` is the format itself; False: it is held in a wider dtype.
    finite_max : float or None
        The largest value where it is not the IEEE one (formats without infinity).
    saturates : bool
        Past ``finite_max``: ``±max`` (FP6, FP4), not NaN.
    signed, has_zero : bool
        False for the MX scale E8M0 alone (powers of two, no sign, no zero).
    rounding : str
        The format's own mode, one of ``ROUNDING_MODES`` (tf32: ties away from zero, as
        cuBLAS converts; tf32-truncate: toward zero, as a tensor core reading float32 bits;
        the others nearest-even).
    subnormals : bool
        False: a format without subnormals (``fpx.format(subnormals=False)``).
    """

    name: str
    dtype: np.dtype = field(repr=False)
    uint: np.dtype = field(repr=False)
    bits: int
    precision: int
    emin: int
    emax: int
    storage: bool = True
    finite_max: float | None = field(default=None, repr=False)  # where it is not the IEEE one
    saturates: bool = field(default=False, repr=False)  # past finite_max: ±max, not NaN
    signed: bool = field(default=True, repr=False)
    has_zero: bool = field(default=True, repr=False)
    rounding: str = field(default="nearest_even", repr=False)  # its own, one of ROUNDING_MODES
    subnormals: bool = field(default=True, repr=False)  # False: fpx.format(subnormals=False)

    @property
    def user_defined(self) -> bool:
        """Whether ``fpx.format`` defined it (values held in float64)."""
        return not self.storage and self.dtype == np.float64

    @property
    def fraction_bits(self) -> int:
        """Explicit significand bits (precision - 1)."""
        return self.precision - 1

    @property
    def exponent_bits(self) -> int:
        if self.user_defined:  # the IEEE field that holds emax (float16's 15: 5 bits)
            return self.emax.bit_length() + 1
        return self.bits - 1 - (self.precision - 1) if self.storage else 8

    @property
    def ieee_layout(self) -> bool:
        """Whether IEEE 754's encoding (sign, ``exponent_bits``, ``fraction_bits``; all-ones
        exponent for inf and NaN) gives exactly its values: a built-in storage format, or one
        of ``fpx.format`` with subnormals and ``emax = 2**(w-1) - 1`` for w exponent bits."""
        if not self.user_defined:
            return self.storage
        return self.subnormals and self.emax == 2 ** (self.exponent_bits - 1) - 1

    @property
    def bias(self) -> int:
        """The exponent bias: 1 - emin with subnormals (not emax where the format gives up
        infinity for range: E4M3 has emax 8, bias 7); emax for E8M0 (no subnormals)."""
        return 1 - self.emin if self.has_zero else self.emax

    @property
    def eps(self) -> float:
        """Distance from 1 to the next larger value, 2**(1 - precision)."""
        return math.ldexp(1.0, 1 - self.precision)

    @property
    def unit_roundoff(self) -> float:
        """u, the bound on the relative error of one rounding in the format's own mode: eps / 2
        to nearest, eps toward zero (tf32-truncate, bfloat16-truncate)."""
        return math.ldexp(1.0, -self.precision + (self.rounding == "toward_zero"))

    @property
    def smallest_subnormal(self) -> float:
        """The least positive value (2**emin where the format has no subnormals)."""
        if not self.subnormals:
            return self.smallest_normal
        return math.ldexp(1.0, self.emin - self.precision + 1)

    @property
    def smallest_normal(self) -> float:
        return math.ldexp(1.0, self.emin)

    @property
    def has_infinity(self) -> bool:
        """False for the formats without one (``finite_max`` set: FP8 e4m3, FNUZ, MX)."""
        return self.finite_max is None

    @property
    def has_negative_zero(self) -> bool:
        """False for the FNUZ formats (AMD FP8: one zero, +0) and E8M0 (no zero)."""
        return self.signed and self.has_zero and not self.name.endswith("fnuz")

    @property
    def overflow(self) -> str:
        """What the format's own rounding gives past the largest value: "inf", "max"
        (saturation; tf32-truncate's toward zero) or "nan"."""
        if self.saturates or self.rounding == "toward_zero":
            return "max"
        return "inf" if self.has_infinity else "nan"

    @property
    def max(self) -> float:
        if self.finite_max is not None:
            return self.finite_max
        return math.ldexp(2.0 - math.ldexp(1.0, 1 - self.precision), self.emax)


def _held(name: str, precision: int, emin: int, emax: int, **kw) -> FormatInfo:
    """A format held in float32 (no array dtype of its own in ``FORMATS``)."""
    return FormatInfo(name, _F32, _U32, 32, precision, emin, emax, storage=False, **kw)


INFO = {
    "float16": FormatInfo("float16", np.dtype(np.float16), np.dtype(np.uint16), 16, 11, -14, 15),
    "bfloat16": FormatInfo("bfloat16", _BF16, np.dtype(np.uint16), 16, 8, -126, 127),
    "float32": FormatInfo("float32", _F32, _U32, 32, 24, -126, 127),
    "float64": FormatInfo(
        "float64", np.dtype(np.float64), np.dtype(np.uint64), 64, 53, -1022, 1023
    ),
    "tf32": _held("tf32", 11, -126, 127, rounding="nearest_away"),
    "tf32-rne": _held("tf32-rne", 11, -126, 127),
    "tf32-truncate": _held("tf32-truncate", 11, -126, 127, rounding="toward_zero"),
    # bfloat16's grid, the top 16 bits of float32 kept (a cast by bit mask or __float2bfloat16_rz)
    "bfloat16-truncate": _held("bfloat16-truncate", 8, -126, 127, rounding="toward_zero"),
    "float8_e4m3": _held("float8_e4m3", 4, -6, 8, finite_max=448.0),
    "float8_e5m2": _held("float8_e5m2", 3, -14, 15),
    "float8_e4m3fnuz": _held("float8_e4m3fnuz", 4, -7, 7, finite_max=240.0),
    "float8_e5m2fnuz": _held("float8_e5m2fnuz", 3, -15, 15, finite_max=57344.0),
    # OCP MX v1.0: FP6 and FP4 have no infinity and no NaN; conversions saturate
    "float6_e2m3": _held("float6_e2m3", 4, 0, 2, finite_max=7.5, saturates=True),
    "float6_e3m2": _held("float6_e3m2", 3, -2, 4, finite_max=28.0, saturates=True),
    "float4_e2m1": _held("float4_e2m1", 2, 0, 2, finite_max=6.0, saturates=True),
    # the MX scale: 2**-127 .. 2**127 (bias 127), NaN 0xFF; precision 1: no subnormals
    "float8_e8m0": _held(
        "float8_e8m0", 1, -127, 127, finite_max=2.0**127, signed=False, has_zero=False
    ),
}
#: the formats held in float32 as ml_dtypes' types (arrays of them are read as their format)
SMALL_DTYPES = {
    "float8_e4m3": np.dtype(ml_dtypes.float8_e4m3fn),
    "float8_e5m2": np.dtype(ml_dtypes.float8_e5m2),
    "float8_e4m3fnuz": np.dtype(ml_dtypes.float8_e4m3fnuz),
    "float8_e5m2fnuz": np.dtype(ml_dtypes.float8_e5m2fnuz),
    "float6_e2m3": np.dtype(ml_dtypes.float6_e2m3fn),
    "float6_e3m2": np.dtype(ml_dtypes.float6_e3m2fn),
    "float4_e2m1": np.dtype(ml_dtypes.float4_e2m1fn),
    "float8_e8m0": np.dtype(ml_dtypes.float8_e8m0fnu),
}
#: the FP8 ones, the tensor cores' inputs
FP8_DTYPES = {name: SMALL_DTYPES[name] for name in FP8_NAMES}
BY_DTYPE = {INFO[name].dtype: INFO[name] for name in FORMATS}
SMALL_BY_DTYPE = {dt: name for name, dt in SMALL_DTYPES.items()}


def format_info(fmt: DTypeLike | FormatInfo) -> FormatInfo:
    """The :class:`FormatInfo` of a format.

    Parameters
    ----------
    fmt : str, dtype or FormatInfo
        A format name, a NumPy dtype (ml_dtypes' FP8, FP6, FP4 and E8M0 types: the
        format of that name) or a FormatInfo of the registry (returned as it is; an edited
        copy is a ValueError).

    Returns
    -------
    FormatInfo

    Raises
    ------
    ValueError
        For an unknown name, listing the valid names (TypeError for a value of another kind).
    """
    if isinstance(fmt, FormatInfo):
        if INFO.get(fmt.name) != fmt:  # (pass 38: an edited copy was read by name, or not)
            raise ValueError(
                f"a FormatInfo is taken as the registry holds it: {shown(fmt.name)} is not a "
                "registered format with these fields (fpx.format defines a format of your own)"
            )
        return fmt
    if fmt is None:  # (np.dtype(None) is float64: None never silently means float64)
        raise TypeError(f"a format is needed, got None; valid formats: {_valid()}")
    if isinstance(fmt, str):
        info = INFO.get(fmt)
        if info is None:
            raise ValueError(f"unknown format {shown(fmt)}; valid formats: {_valid()}")
        return info
    if isinstance(fmt, (np.generic, np.ndarray)):  # (np.dtype reads a value as its type)
        raise TypeError(f"a format is a name or a dtype, got the value {shown(fmt)}")
    try:
        dt = np.dtype(fmt)
    except TypeError:
        dt = None
    if dt is not None and dt.kind == "f":  # (">f2": float16, as arrays of it read)
        dt = dt.newbyteorder("=")
    if dt is not None and dt in BY_DTYPE:
        return BY_DTYPE[dt]
    if dt is not None and dt in SMALL_BY_DTYPE:  # ml_dtypes' FP8, FP6, FP4, E8M0 types
        return INFO[SMALL_BY_DTYPE[dt]]
    raise ValueError(f"unknown format {shown(fmt)}; valid formats: {_valid()}")


def _valid() -> str:
    """The format names, those of fpx.format last."""
    return ", ".join([*ROUNDINGS, *(n for n in INFO if n not in ROUNDINGS)])


def format_arg(fmt, what: str) -> FormatInfo:
    """:func:`format_info` of ``fmt``, its error starting with ``what`` (the function and the
    argument: "as_format: fmt"; pass 40: "unknown format 'FLOAT32'" named neither)."""
    try:
        return format_info(fmt)
    except (TypeError, ValueError) as e:
        raise type(e)(f"{what}: {e}") from None


def format_name(value):
    """A format given as a NumPy dtype or type (ml_dtypes' too) or a :class:`FormatInfo` by
    its name (``np.float16``: "float16", ``ml_dtypes.float8_e4m3fn``: "float8_e4m3"; pass
    18, 19 and 20); anything else as given, for its caller to check and name."""
    if isinstance(value, (np.dtype, FormatInfo)) or (
        isinstance(value, type) and issubclass(value, np.generic)
    ):
        try:
            return format_info(value).name
        except (TypeError, ValueError):
            return value
    return value
