"""Presentation in words and tables: the advisors' numbers formatted for people.

The advisors compute numbers (:class:`~fpexplore.tolerance.Tolerance`, and
:class:`~fpexplore.results.Explanation`); this module turns them into what a notebook or the
app shows: a table, sentences, ready-to-paste code, HTML.
Nothing here measures anything. (Figures are :mod:`fpexplore.plots`.)
"""

from __future__ import annotations

import html
import math

from ._optional import require
from .numerics import printed

__all__ = [
    "explanation_html",
    "explanation_text",
    "tolerance_html",
    "tolerance_notes",
    "tolerance_snippets",
    "tolerance_table",
]


def tolerance_table(t):
    """pandas DataFrame: one row per library default, then the suggestion, with the share of
    elements each rejects (columns check, rtol, atol, kind, rejected)."""
    pd = require("pandas", "Tolerance.table")
    rows = [
        {"check": lib, "rtol": r, "atol": a, "kind": "default", "rejected": t.rejected[lib]}
        for lib, (r, a) in t.defaults.items()
    ]
    rows.append(
        {
            "check": "suggested",
            "rtol": t.rtol,
            "atol": t.atol,
            "kind": "suggested",
            "rejected": t.rejected["suggested"],
        }
    )
    return pd.DataFrame(rows)


def _up(x: float, digits: int = 3) -> str:
    """``x`` (>= 0) printed as :func:`fpexplore.numerics.printed` reads it."""
    v = printed(x, digits)
    return f"{v:.{digits}g}" if v != x or float(f"{x:.{digits}g}") == x else repr(x)


def _max_ulps(t) -> str | None:
    """``t.max_ulp`` as the integer a ULP check prints (None: no count of ulps bounds it)."""
    return None if math.isinf(t.max_ulp) else str(math.ceil(t.max_ulp))


def tolerance_snippets(t) -> dict:
    """Ready-to-paste assertions with the suggested tolerances, by library (and "ulp").

    Each passes the data the suggestion was measured on wherever ``t.coverage`` is 1.0: the
    numbers are rounded up, and the comparison is the measured one, in float64. NumPy (and
    CuPy, which calls it) compare float32 or float16 arrays in their own format, with rtol and
    atol rounded to it, so those snippets convert to float64 first; torch.testing.assert_close
    converts to float64 by itself (and needs ``equal_nan=True`` where NaN meets NaN)."""
    tols = f"rtol={_up(t.rtol)}, atol={_up(t.atol)}"
    if t.format == "float64":
        args, cupy_args = "actual, desired", "actual, desired"
    else:
        args = "np.asarray(actual, np.float64), np.asarray(desired, np.float64)"
        cupy_args = "cupy.asarray(actual, cupy.float64), cupy.asarray(desired, cupy.float64)"
    nan = ", equal_nan=True" if t.both_nan else ""
    bound = _max_ulps(t)
    if bound is None:
        ulp = (
            "# no ULP bound: elements 2**62 or more ulps apart (opposite signs or far apart), "
            "NaN against a number, or an overflow to inf; check with rtol/atol"
        )
    elif t.both_nan or t.coverage < 1:  # NaN against NaN: 0 ulps; against a number, it fails
        ulp = (
            'assert np.abs(fpx.ulp_distance(desired, actual, nan="sentinel").astype(float))'
            f".max() <= {bound}"
        )
    else:
        ulp = f"assert np.abs(fpx.ulp_distance(desired, actual)).max() <= {bound}"
    return {
        "numpy": f"np.testing.assert_allclose({args}, {tols})",
        "cupy": f"cupy.testing.assert_allclose({cupy_args}, {tols})",
        "torch": f"torch.testing.assert_close(actual, desired, {tols}{nan})",
        "ulp": ulp,
    }


def _share(x: float) -> str:
    """A share as a percentage with 4 decimals that never reads 100% while something fails,
    nor 0% while something is rejected (0.9999996 is 99.9999%, 4e-7 is 0.0001%)."""
    text = f"{x:.4%}"
    if text == "100.0000%" and x < 1:
        return "99.9999%"
    if text == "0.0000%" and x > 0:
        return "0.0001%"
    return text


def tolerance_notes(t) -> list[str]:
    """The advice in sentences: what was measured, the suggestion, whether np.allclose's
    fixed atol matters at this scale, and which library defaults reject elements."""
    bound = _max_ulps(t)
    ulps = (
        f"or at most {bound} ulps apart"
        if bound is not None
        else "no count of ulps bounds them (2**62 or more ulps apart, NaN against a number, or "
        "an overflow to inf)"
    )
    notes = [
        f"{t.n} elements ({t.format}); the largest difference is {t.max_abs_diff:.3g} "
        f"and the largest relative difference {t.max_rel_diff:.3g}.",
        f"Suggested: rtol={_up(t.rtol)}, atol={_up(t.atol)} (x{t.margin:g} margin), passing "
        f"{_share(t.coverage)} of the elements; {ulps}.",
    ]
    mag = t.median_abs_desired
    if mag > 0:
        notes.append(
            f"Typical |desired| is {mag:.3g}: np.allclose's atol=1e-8 is "
            + (
                f"{1e-8 / mag:.1e} of it, irrelevant; only rtol counts."
                if mag > 1e-3
                else f"{1e-8 / mag:.3g} times it, so it would accept wrong values."
            )
        )
    for lib, (r, a) in t.defaults.items():
        share = t.rejected[lib]
        if share > 0:
            notes.append(
                f"{lib} with its defaults (rtol={r:g}, atol={a:g}) rejects "
                f"{_share(share)} of the elements."
            )
    return notes


def tolerance_html(t) -> str:
    """The advice for Jupyter: the sentences, the table and the snippets."""
    notes = "".join(f"<li>{html.escape(line)}</li>" for line in tolerance_notes(t))
    code = "\n".join(tolerance_snippets(t).values())
    return (
        f"<ul>{notes}</ul>"
        + tolerance_table(t).to_html(index=False, border=0, classes="fpx-tolerance")
        + f"<pre>{html.escape(code)}</pre>"
    )


# ----------------------------------------------------------------------------- explain

#: what an explanation says of a result no configuration tried computes bit for bit
NOTHING_REPRODUCES = "nothing tried reproduces it"


def _reproduced(by) -> str:
    return f"reproduced by {by}" if isinstance(by, str) else NOTHING_REPRODUCES


def explanation_text(ex) -> str:
    """An :class:`~fpexplore.results.Explanation` as text: one line per result, its causes,
    the verdict."""
    lines = [f"Explanation: {ex.op} of {ex.format} inputs, {len(ex.table)} results"]
    for label, r in ex.table.iterrows():
        lines.append(
            f"  {label}: relative error {r['rel_error']:.3g}, "
            f"{'closer, ' if r['closer'] else ''}"
            f"{'within' if r['within_bound'] else 'outside'} its bound, "
            f"{_reproduced(r['reproduced_by'])}"
        )
    for _, c in ex.causes.iterrows():
        how = "decided" if c["decided"] else f"undecided, posterior {c['posterior']:.2f}"
        lines.append(f"  cause: {c['factor']} ({how})")
    lines.append(ex.verdict)
    return "\n".join(lines)


def explanation_html(ex) -> str:
    """An :class:`~fpexplore.results.Explanation` as HTML: the verdict, the table (a result
    nothing reproduces says so, not None), the causes."""
    table = ex.table.copy()
    by = table["reproduced_by"]
    table["reproduced_by"] = [b if isinstance(b, str) else f"({NOTHING_REPRODUCES})" for b in by]
    return (
        f"<p><b>{html.escape(ex.verdict)}</b></p>"
        + table.to_html(border=0, classes="fpx-table")
        + "<p>Causes, the most likely first:</p>"
        + ex.causes.to_html(index=False, border=0, classes="fpx-table")
    )


def signed_zero_verdict(signed: dict) -> str:
    """fpx.explain's verdict where only the sign of a zero sets the results apart
    (``signed``: label -> its -0.0 elements no configuration tried reproduces)."""
    parts = [f"{k} is -0.0 in {n} element(s)" for k, n in signed.items()]
    return (
        f"The results are equal as numbers and differ only in the sign of a zero ("
        f"{' and '.join(parts)}): no configuration tried reproduces {' or '.join(signed)}. "
        "In round-to-nearest an addition gives -0 only from -0 + -0 (x + (-x) is +0), so "
        "reordering the additions does not change the sign of a zero: neither the order nor "
        "run-to-run nondeterminism explains it. Cannot tell the cause: a rounding toward "
        "-infinity (where x + (-x) is -0), code that negates or subtracts (-(sum of -x)), or a "
        f"tiny negative partial result flushed to -0. What would decide it: the code that made "
        f"{' and '.join(signed)}."
    )


def identical_verdict(rel_error: float, nan_bits: bool) -> str:
    """explain's verdict for results that are one bit pattern (but for NaN's sign or
    payload where ``nan_bits``)."""
    if nan_bits:
        return (
            "The results are identical but for the sign or payload of NaN (a NaN is a NaN, "
            "whatever its bits): there is no difference to explain (relative error "
            f"{rel_error:.3g} against the exact answer)."
        )
    return (
        f"The results are bitwise identical: there is no difference to explain "
        f"(relative error {rel_error:.3g} against the exact answer)."
    )


def widened_verdict(formats: dict, rel_error: float) -> str:
    """explain's verdict for one value in several formats (``formats``: label -> format)."""
    kinds = ", ".join(f"{k} {f}" for k, f in formats.items())
    return (
        f"The results hold the same values in different formats ({kinds}): widening a value "
        "to a wider format is exact, so there is no rounding difference to explain (a wide "
        "result holding a narrower format's value is what converting that result gives; "
        f"relative error {rel_error:.3g} against the exact answer)."
    )
