"""fpexplore: see, measure and explain floating-point differences between CPU and GPU.

Architecture (dependencies point downward only; ``import fpexplore`` loads NumPy and
ml_dtypes, nothing else; numba loads on the first call of an order):

- ``formats``    format registry, correct rounding to a format (incl. tf32), bits, ulp, neighbours
- ``exact``      correctly rounded references: fma, exact_sum, exact_dot (the oracles' fast twins)
- ``_rounding``  exact rational rounding and round-to-odd helpers used by the two above
- ``orders/``    evaluation orders of sum, dot and matmul (sequential, pairwise, NumPy's, GPU
                 trees, CuPy/CUB hypotheses, compensated, exact), compiled with numba on first use

- ``ops/``       composite ops and their formula variants (linspace, ...); ops(), variants()

Planned on top (see the project issues): ``metrics``, ``backends/`` (numpy, emulated, cupy,
replay), ``experiment`` (compare/sweep tables), ``plots`` and ``widgets``.
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
from .ops._registry import ops, variants
from .ops.linspace import linspace
from .orders import (
    dot,
    exact_matmul,
    matmul,
    orders,
    sum,  # noqa: A004  (like np.sum)
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
    "dot",
    "exact_dot",
    "exact_matmul",
    "exact_sum",
    "fields",
    "linspace",
    "fma",
    "format_info",
    "format_of",
    "from_bits",
    "matmul",
    "next_down",
    "next_up",
    "ops",
    "orders",
    "sum",
    "to_bits",
    "ulp",
    "ulp_distance",
    "variants",
]
