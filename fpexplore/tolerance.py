"""The tolerance advisor: which rtol / atol / max-ULP should a test use for this difference?

``suggest_tolerance(actual, desired)`` measures how two results of the same computation
differ (say GPU against CPU, or a variant against the exact answer) and recommends tolerances
for ``np.testing.assert_allclose``, ``cupy.testing.assert_allclose`` and
``torch.testing.assert_close``, with the share of elements each library's *default*
tolerance would reject on this data. ``coverage`` < 1 asks for tolerances that pass only that
share of elements (ignoring the worst outliers; the report says how many fail).

The advisor computes numbers only; the prose (``explain()``), the table (``table``) and the
ready-to-paste calls (``snippets``) are formatted from those numbers by
:mod:`fpexplore.presentation`.

The closeness test all three use is ``|actual - desired| <= atol + rtol * |desired|``
(asymmetric: ``desired`` scales the relative part). A fixed ``atol`` is an *absolute*
length: for data around 1e6 an atol of 1e-8 is irrelevant and only rtol counts, while for
data around 1e-10 an atol of 1e-8 accepts results that are wrong by a factor of 100.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from . import checks
from .formats import coerce, ulp_distance
from .numerics import clamp_ulps

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

__all__ = ["DEFAULTS", "Tolerance", "suggest_tolerance"]

#: (rtol, atol) each library uses when none is given. numpy.testing.assert_allclose:
#: rtol=1e-7, atol=0; np.allclose: 1e-5, 1e-8; cupy.testing.assert_allclose: as NumPy's;
#: torch.testing.assert_close: per dtype (torch/testing/_comparison.py, default_tolerances).
DEFAULTS = {
    "np.testing.assert_allclose": {"any": (1e-7, 0.0)},
    "np.allclose": {"any": (1e-5, 1e-8)},
    "cupy.testing.assert_allclose": {"any": (1e-7, 0.0)},
    "torch.testing.assert_close": {
        "float16": (1e-3, 1e-5),
        "bfloat16": (1.6e-2, 1e-5),
        "float32": (1.3e-6, 1e-5),
        "float64": (1e-7, 1e-7),
    },
}


def _failures(actual, desired, rtol, atol) -> np.ndarray:
    a = actual.astype(np.float64)
    d = desired.astype(np.float64)
    with np.errstate(all="ignore"):
        ok = np.abs(a - d) <= atol + rtol * np.abs(d)
    ok |= (a == d) | (np.isnan(a) & np.isnan(d))
    return ~ok


@dataclass
class Tolerance:
    """The advice, as numbers.

    ``rtol``, ``atol`` (the suggestion, margin included), ``max_ulp`` (for a ULP-based
    check), ``coverage`` (share of elements the suggestion passes), ``n``, ``format``,
    ``margin``; what was measured: ``max_abs_diff``, ``max_rel_diff`` (largest absolute and
    relative difference), ``median_abs_desired`` (typical magnitude of ``desired``);
    ``defaults`` (each library's default (rtol, atol) for this format) and ``rejected`` (the
    share of elements each library's defaults, and ``"suggested"``, reject).

    Presented by :mod:`fpexplore.presentation`: ``table`` (pandas: each library's default and
    the suggestion, with the share rejected), ``snippets`` (ready-to-paste calls),
    ``notes`` / ``explain()`` (the advice in words); displayed in Jupyter as HTML.
    """

    rtol: float
    atol: float
    max_ulp: float
    coverage: float
    n: int
    format: str
    margin: float
    max_abs_diff: float
    max_rel_diff: float
    median_abs_desired: float
    defaults: dict
    rejected: dict

    @property
    def table(self):
        from .presentation import tolerance_table

        return tolerance_table(self)

    @property
    def snippets(self) -> dict:
        from .presentation import tolerance_snippets

        return tolerance_snippets(self)

    @property
    def notes(self) -> list:
        from .presentation import tolerance_notes

        return tolerance_notes(self)

    def explain(self) -> str:
        return "\n".join(self.notes)

    def _repr_html_(self) -> str:
        from .presentation import tolerance_html

        return tolerance_html(self)


def suggest_tolerance(
    actual: ArrayLike, desired: ArrayLike, *, coverage: float = 1.0, margin: float = 2.0
) -> Tolerance:
    """Recommend tolerances under which ``actual`` matches ``desired``.

    Parameters
    ----------
    actual, desired : arrays of one format (the result under test, the expected one)
    coverage : share of elements the suggestion must pass (1.0: all)
    margin : safety factor applied to the measured rtol and atol (the next run's data will
        differ; 2 by default)

    The suggestion is the smallest rtol that covers the elements whose ``desired`` is not
    tiny (times ``margin``), and then the smallest atol that lets the remaining elements pass
    (times ``margin``; 0 when none is needed). ``max_ulp`` is the largest ULP distance among
    the covered elements.
    """
    if not 0 < coverage <= 1:
        raise ValueError(f"coverage must be in (0, 1], got {checks.shown(coverage)}")
    if margin < 1:
        raise ValueError(f"margin must be >= 1, got {checks.shown(margin)}")
    (a, d), info = coerce(actual, desired, what="suggest_tolerance", broadcast=True)
    a, d = np.broadcast_arrays(a, d)
    a = a.reshape(-1)
    d = d.reshape(-1)
    n = a.size
    if n == 0:
        raise ValueError("suggest_tolerance needs at least one element")
    a64, d64 = a.astype(np.float64), d.astype(np.float64)
    both_nan = np.isnan(a64) & np.isnan(d64)
    with np.errstate(invalid="ignore"):  # inf - inf
        diff = np.where((a64 == d64) | both_nan, 0.0, np.abs(a64 - d64))
    scale = np.abs(d64)
    finite = np.isfinite(diff)
    keep = max(1, int(np.ceil(coverage * n)))
    # rtol from the elements whose desired value is not tiny (relative error is meaningful)
    tiny = info.smallest_normal * 2**info.precision
    with np.errstate(all="ignore"):
        rel = np.where(scale > tiny, diff / scale, np.nan)
    rel_ok = rel[np.isfinite(rel)]
    rtol = 0.0
    if rel_ok.size:
        rtol = float(np.quantile(rel_ok, min(1.0, keep / n), method="higher")) * margin
    # atol for what is left: elements failing rtol alone, at the requested coverage
    with np.errstate(invalid="ignore"):  # inf * 0 where desired is infinite
        excess = np.where(finite, diff - rtol * scale, np.inf)
    need = np.sort(np.maximum(excess, 0.0))
    atol = float(need[keep - 1]) * margin if keep <= need.size else 0.0
    atol = 0.0 if atol == 0 else atol
    ulps = clamp_ulps(ulp_distance(d, a, nan="sentinel"))
    max_ulp = float(np.sort(ulps)[keep - 1])
    passed = 1.0 - float(np.mean(_failures(a, d, rtol, atol)))
    defaults, rejected = {}, {}
    for lib, per_fmt in DEFAULTS.items():
        r, t = per_fmt.get(info.name, per_fmt.get("any"))
        defaults[lib] = (r, t)
        rejected[lib] = float(np.mean(_failures(a, d, r, t)))
    rejected["suggested"] = 1.0 - passed
    return Tolerance(
        rtol,
        atol,
        max_ulp,
        passed,
        n,
        info.name,
        margin,
        max_abs_diff=float(np.nanmax(diff)),
        max_rel_diff=float(np.nanmax(rel_ok)) if rel_ok.size else 0.0,
        median_abs_desired=float(np.median(scale)) if n else 0.0,
        defaults=defaults,
        rejected=rejected,
    )
