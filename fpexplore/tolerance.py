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

NumPy (and CuPy, which calls it) evaluates that test in the arrays' own format: float32 or
float16 arrays are compared with rtol, atol and every step rounded to float32 or float16,
torch in float64. The suggestion is measured in float64, and its NumPy and CuPy snippets
convert to float64 before comparing, so that what they check is what was measured.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import TYPE_CHECKING

import numpy as np

from . import checks
from .formats import coerce, ulp_distance
from .numerics import clamp_ulps, printed

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

__all__ = ["DEFAULTS", "Tolerance", "suggest_tolerance"]

#: (rtol, atol) each library uses when none is given. numpy.testing.assert_allclose:
#: rtol=1e-7, atol=0; np.allclose: 1e-5, 1e-8; cupy.testing.assert_allclose: as NumPy's;
#: torch.testing.assert_close: per dtype (torch/testing/_comparison.py, default_tolerances).
#: The share each rejects is measured as each checks: NumPy's and CuPy's in the arrays' own
#: format (np.allclose without equal_nan), torch's in float64 (it converts before comparing;
#: equal_nan=False by default).
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


LARGEST = 1.79e308  # the largest tolerance the snippets print finite (3 digits, rounded up)


def _close(actual, desired, rtol, atol, *, in_float64=True, equal_nan=True) -> np.ndarray:
    """Which elements pass ``np.isclose(actual, desired, rtol, atol)``: the test
    ``np.testing.assert_allclose`` applies element by element (``|actual - desired| <= atol +
    rtol * |desired|`` where ``desired`` is finite, equal values, and NaN against NaN with
    ``equal_nan``), with NumPy's own arithmetic. ``in_float64``: on the values converted to
    float64, as the suggested snippets do and as ``torch.testing.assert_close`` does itself;
    otherwise in the arrays' own format, as a plain ``np.testing.assert_allclose(actual,
    desired)`` of float32 or float16 arrays does (NumPy rounds rtol, atol and every step to
    that format)."""
    if in_float64:
        actual, desired = actual.astype(np.float64), desired.astype(np.float64)
    with np.errstate(all="ignore"):
        return np.isclose(actual, desired, rtol=rtol, atol=atol, equal_nan=equal_nan)


def _atol(diff, scale, rtol, same, passable, keep, within) -> float:
    """The atol (before the margin) that lets ``keep`` elements pass with ``rtol``: the
    keep-th smallest ``diff - rtol * scale``, each one step up where rounding left it short
    (``atol + rtol * scale < diff``). Where the requested share is out of reach of any
    finite atol (NaN against a number, an infinite difference, one past ``within``: printed
    with the margin it would read inf), every element one passes."""
    with np.errstate(invalid="ignore", over="ignore"):  # inf * 0, inf - inf
        allowed = rtol * scale
        excess = diff - allowed
        excess = np.where(excess + allowed < diff, np.nextafter(excess, np.inf), excess)
    need = np.where(same, 0.0, np.where(passable & (excess <= within), excess, np.inf))
    need = np.maximum(need, 0.0)
    needed = np.partition(need, keep - 1)[keep - 1]
    if not np.isfinite(needed):
        needed = need[np.isfinite(need)].max(initial=0.0)
    return float(needed)


def _max_ulp(desired, actual, keep, passable, covered) -> float:
    """The largest ULP distance among the ``covered`` elements (those rtol and atol pass),
    and at least the keep-th smallest, as a float64 no smaller than it (float64 rounds counts
    above 2**53 to nearest); inf where no count of ulps applies (:func:`clamp_ulps`) and for
    an element no tolerance passes (an overflow to inf: its count is finite)."""
    ulps = clamp_ulps(ulp_distance(desired, actual, nan="sentinel")).astype(np.float64)
    kth = float(np.partition(np.where(passable, ulps, np.inf), keep - 1)[keep - 1])
    top = max(kth, float(ulps[covered].max(initial=0.0)))
    return top if top < 2**53 else math.nextafter(top, math.inf)


@dataclass
class Tolerance:
    """The advice, as numbers.

    ``rtol``, ``atol`` (the suggestion, margin included), ``max_ulp`` (for a ULP-based
    check; inf where no count of ulps bounds the covered elements), ``coverage`` (share of
    elements the suggestion passes: ``np.isclose`` on the values in float64, as the snippets
    check), ``n``, ``format``, ``margin``; what was measured: ``max_abs_diff``,
    ``max_rel_diff`` (largest absolute and relative difference; inf where an element is NaN
    against a number or an overflow), ``median_abs_desired``
    (typical magnitude of ``desired``); ``defaults`` (each library's default (rtol, atol) for
    this format) and ``rejected`` (the share of elements each library's defaults, and
    ``"suggested"``, reject); ``both_nan`` (elements NaN in both: they pass, as in
    ``np.testing.assert_allclose``'s default ``equal_nan=True``).

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
    both_nan: int = 0

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


def _apart(a64, d64, same) -> np.ndarray:
    """|a - d| per element: 0 where equal (NaN and NaN too), inf for NaN against a number,
    as far apart as can be (pass 18: left out, "the largest difference is 0" where no
    tolerance passed it)."""
    with np.errstate(invalid="ignore", over="ignore"):  # inf - inf, max - (-max)
        apart = np.abs(a64 - d64)
    return np.where(same, 0.0, np.where(np.isnan(apart), np.inf, apart))


def _max_rel(diff, scale) -> float:
    """The largest relative difference over every element: inf where a difference is
    infinite or ``desired`` is 0 (pass 19: the tiny desired values the rtol leaves out were
    left out here too, "the largest relative difference 0" where they differed by 100%)."""
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        rel = np.where(diff == 0, 0.0, diff / scale)
    rel = np.where(np.isnan(rel), np.inf, rel)  # (inf / inf)
    return float(rel.max(initial=0.0))


def _one_shape(a: np.ndarray, d: np.ndarray) -> None:
    """ValueError for two shapes: np.testing.assert_allclose and torch's assert_close, which
    the snippets call, refuse them (a broadcast measured here would pass nothing there)."""
    if a.shape != d.shape:
        raise ValueError(
            f"suggest_tolerance: actual has shape {a.shape} and desired {d.shape}: the checks it "
            "prints compare arrays of one shape; give np.broadcast_to(desired, np.shape(actual))"
        )


def _number(name: str, v) -> float:
    """``v`` as the Python float it equals (pass 19: margin=np.float16(2) computed rtol in
    float16, 0); TypeError for no number, ValueError for a longdouble no float64 equals."""
    if isinstance(v, bool) or not isinstance(v, (int, float, np.integer, np.floating)):
        raise TypeError(f"{name} must be a number, got {checks.shown(v)}")
    if isinstance(v, np.floating) and v.dtype.itemsize > 8 and float(v) != v:
        raise ValueError(f"{name} must be a float64 number, got {checks.shown(v)}")
    return float(v)


def suggest_tolerance(
    actual: ArrayLike, desired: ArrayLike, *, coverage: float = 1.0, margin: float = 2.0
) -> Tolerance:
    """Recommend tolerances under which ``actual`` matches ``desired``.

    Parameters
    ----------
    actual, desired : arrays of one format and shape (the result under test, the expected)
    coverage : share of elements the suggestion must pass (1.0: all)
    margin : safety factor applied to the measured rtol and atol (the next run's data will
        differ; 2 by default)

    Returns
    -------
    Tolerance
        The suggested ``rtol``, ``atol`` and ``max_ulp``, and what was measured.

    Notes
    -----
    The suggestion is the smallest rtol that covers the elements whose ``desired`` is not
    tiny (times ``margin``), and then the smallest atol that lets the remaining elements pass
    (times ``margin``; 0 when none is needed). ``max_ulp`` is the largest ULP distance among
    the covered elements.

    ``coverage`` is measured the way the snippets check: ``np.isclose`` on the values
    converted to float64 (the NumPy and CuPy snippets of float16 / float32 / bfloat16 data
    convert first; ``torch.testing.assert_close`` converts by itself), and the snippets print
    each number rounded up, so at coverage 1.0 every snippet passes the data it came from.
    """
    coverage, margin = _number("coverage", coverage), _number("margin", margin)
    if not 0 < coverage <= 1:
        raise ValueError(f"coverage must be in (0, 1], got {checks.shown(coverage)}")
    if not 1 <= margin < math.inf:  # (NaN fails this too)
        raise ValueError(f"margin must be >= 1 and finite, got {checks.shown(margin)}")
    (a, d), info = coerce(
        actual, desired, what="suggest_tolerance", broadcast=True, names=("actual", "desired")
    )
    _one_shape(a, d)
    a = a.reshape(-1)
    d = d.reshape(-1)
    n = a.size
    if n == 0:
        raise ValueError("suggest_tolerance needs at least one element")
    a64, d64 = a.astype(np.float64), d.astype(np.float64)
    both_nan = np.isnan(a64) & np.isnan(d64)
    same = (a64 == d64) | both_nan
    diff = _apart(a64, d64, same)
    scale = np.abs(d64)
    # no finite tolerance passes a NaN, an infinite difference or an unequal infinite desired
    passable = same | (np.isfinite(diff) & np.isfinite(d64))
    keep = max(1, math.ceil(Fraction(repr(coverage)) * n))  # (as written: 0.28 of 25 is 7)
    # rtol from the elements whose desired value is not tiny (relative error is meaningful)
    tiny = info.smallest_normal * 2**info.precision
    with np.errstate(all="ignore"):
        rel = np.where(scale > tiny, diff / scale, np.nan)
    # a tolerance the snippets print past float64's range (pass 19: rtol=inf) passes none
    within = LARGEST / margin
    passable &= same | (diff <= within) | (rel <= within)
    rel_ok = rel[np.isfinite(rel) & passable & (rel <= within)]
    rtol = 0.0
    if rel_ok.size:  # the k-th smallest, k the same share of these elements as keep of all
        k = min(rel_ok.size, max(1, math.ceil(Fraction(keep * rel_ok.size, n))))
        rtol = float(np.partition(rel_ok, k - 1)[k - 1]) * margin
    atol = _atol(diff, scale, rtol, same, passable, keep, within) * margin
    atol = 0.0 if atol == 0 else atol
    covered = _close(a, d, printed(rtol), printed(atol))  # (as the snippets print them)
    max_ulp, passed = _max_ulp(d, a, keep, passable, covered), float(np.mean(covered))
    defaults, rejected = {}, {}
    for lib, per_fmt in DEFAULTS.items():
        r, t = per_fmt.get(info.name, per_fmt.get("any"))
        defaults[lib] = (r, t)
        torch = lib == "torch.testing.assert_close"
        ok = _close(a, d, r, t, in_float64=torch, equal_nan=lib.endswith("assert_allclose"))
        rejected[lib] = float(np.mean(~ok))
    rejected["suggested"] = 1.0 - passed
    return Tolerance(
        rtol,
        atol,
        max_ulp,
        passed,
        n,
        info.name,
        margin,
        max_abs_diff=float(np.nanmax(diff)) if not np.isnan(diff).all() else math.nan,
        max_rel_diff=_max_rel(diff, scale),
        median_abs_desired=_median(scale) if n else 0.0,
        defaults=defaults,
        rejected=rejected,
        both_nan=int(both_nan.sum()),
    )


def _median(v: np.ndarray) -> float:
    """np.median, but where it overflows averaging two finite middle values (1e308 and 1.5e308
    gave inf: pass 41) their midpoint without overflow."""
    with np.errstate(over="ignore"):
        m = float(np.median(v))
    if math.isinf(m):
        s = np.sort(np.asarray(v, dtype=np.float64).reshape(-1))
        lo, hi = s[(s.size - 1) // 2], s[s.size // 2]
        if np.isfinite(lo) and np.isfinite(hi):
            m = float(lo + (hi - lo) / 2)
    return m
