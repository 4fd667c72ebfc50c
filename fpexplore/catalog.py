"""The tables of what fpexplore knows, for people to read: ``fpx.formats()``, every format and
input rounding (``fpx.gpus()``, every modelled GPU, sits beside its table in
``orders/gpu_models``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .formats import ROUNDINGS, SMALL_DTYPES, format_info
from .userformat import user_names

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["formats"]


def formats() -> pd.DataFrame:
    """Every format fpexplore knows: the storage formats, the input roundings and the formats
    defined with :func:`fpexplore.format` (held in float64), after them.

    Returns
    -------
    pandas.DataFrame
        One row per name of ``ROUNDINGS`` and of ``fpx.format``: ``format``, ``storage`` (an
        array dtype of its own; else values held in float32, or float64), ``dtype`` (NumPy's
        or ml_dtypes' type of the format, "" where there is none), ``precision`` (significand
        bits with the implicit one), ``emin``, ``emax``, ``max`` (the largest finite value),
        ``infinity`` (whether it has one), ``overflow`` (what its rounding gives past the
        largest value: "inf", "max" where it saturates or truncates, "nan") and ``rounding``
        (how ``as_format`` rounds to it by default, one of ``ROUNDING_MODES``; E8M0's ties,
        with one significand bit, go up).
    """
    import pandas as pd

    rows = []
    for name in (*ROUNDINGS, *user_names()):
        info = format_info(name)
        own = info.dtype if info.storage else SMALL_DTYPES.get(name)
        rows.append({
            "format": name, "storage": info.storage, "dtype": "" if own is None else own.name,
            "precision": info.precision, "emin": info.emin, "emax": info.emax, "max": info.max,
            "infinity": info.has_infinity, "overflow": info.overflow,
            "rounding": info.rounding + (" (1.5 * 2**k to 2**(k+1))" if info.precision == 1
                                         else ""),
        })  # fmt: skip
    return pd.DataFrame(rows)
