"""fpexplore: see, measure and explain floating-point differences between CPU and GPU.

Architecture (dependencies point downward only; ``import fpexplore`` loads NumPy and
ml_dtypes, nothing else):

- ``formats``    format registry, correct rounding to a format (incl. tf32), bits, ulp, neighbours
- ``exact``      correctly rounded references: fma, exact_sum, exact_dot (the oracles' fast twins)
- ``_rounding``  exact rational rounding and round-to-odd helpers used by the two above

Planned on top (see the project issues): ``orders/`` (summation and product orders),
``ops/`` (composite ops and their formula variants), ``metrics``, ``backends/`` (numpy,
emulated, cupy, replay), ``experiment`` (compare/sweep tables), ``plots`` and ``widgets``.
"""

from .exact import exact_dot, exact_sum, fma
from .formats import (
    FORMATS,
    ROUNDINGS,
    ULP_NAN,
    BitFields,
    FormatInfo,
    as_format,
    bit_string,
    fields,
    format_info,
    format_of,
    from_bits,
    next_down,
    next_up,
    to_bits,
    ulp,
    ulp_distance,
)

__version__ = "0.1.0"

__all__ = [
    "FORMATS",
    "ROUNDINGS",
    "ULP_NAN",
    "BitFields",
    "FormatInfo",
    "as_format",
    "bit_string",
    "exact_dot",
    "exact_sum",
    "fields",
    "fma",
    "format_info",
    "format_of",
    "from_bits",
    "next_down",
    "next_up",
    "to_bits",
    "ulp",
    "ulp_distance",
]
