"""Presentation in words and tables: the advisors' numbers formatted for people.

The advisors compute numbers (:class:`~fpexplore.tolerance.Tolerance`); this module turns
them into what a notebook or the app shows: a table, sentences, ready-to-paste code, HTML.
Nothing here measures anything. (Figures are :mod:`fpexplore.plots`.)
"""

from __future__ import annotations

import html

from ._optional import require

__all__ = ["tolerance_html", "tolerance_notes", "tolerance_snippets", "tolerance_table"]


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


def tolerance_snippets(t) -> dict:
    """Ready-to-paste assertions with the suggested tolerances, by library (and "ulp")."""
    rtol, atol = f"rtol={t.rtol:.3g}", f"atol={t.atol:.3g}"
    return {
        "numpy": f"np.testing.assert_allclose(actual, desired, {rtol}, {atol})",
        "cupy": f"cupy.testing.assert_allclose(actual, desired, {rtol}, {atol})",
        "torch": f"torch.testing.assert_close(actual, desired, {rtol}, {atol})",
        "ulp": f"assert np.abs(fpx.ulp_distance(desired, actual)).max() <= {t.max_ulp:.0f}",
    }


def tolerance_notes(t) -> list[str]:
    """The advice in sentences: what was measured, the suggestion, whether np.allclose's
    fixed atol matters at this scale, and which library defaults reject elements."""
    notes = [
        f"{t.n} elements ({t.format}); the largest difference is {t.max_abs_diff:.3g} "
        f"and the largest relative difference {t.max_rel_diff:.3g}.",
        f"Suggested: rtol={t.rtol:.3g}, atol={t.atol:.3g} (x{t.margin:g} margin), passing "
        f"{t.coverage:.4%} of the elements; or at most {t.max_ulp:.0f} ulps apart.",
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
                f"{lib} with its defaults (rtol={r:g}, atol={a:g}) rejects {share:.4%} "
                "of the elements."
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
