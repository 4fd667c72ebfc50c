"""Errors that are no number (a NaN or infinite result where the exact one is finite) are
drawn as marked bars at the axis's edge, labelled, while the finite bars keep their own axis
(issue 37: an explanation chart drew an infinite error on a 1e300 axis, hiding the other
bars)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import fpexplore as fpx
from fpexplore import plots

pytest.importorskip("matplotlib")

# float16: 60000 + 10000 overflows (float16's largest is 65504); the exact sum is 60003
X = np.array([60000, 10000, -10000, 3], dtype=np.float16)


def _sequential(x):
    acc = np.float16(0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        for v in x:
            acc = np.float16(acc + v)
    return acc


def _texts(ax) -> list[str]:
    return [t.get_text() for t in ax.texts]


def test_ulp_bars_mark_an_overflow_and_a_nan():
    cmp = fpx.compare(
        "sum", inputs=X, variants=["sequential", "exact", "kahan"], backends="emulated"
    )
    seq, ex, kahan = (cmp.results[(v, "emulated")] for v in ("sequential", "exact", "kahan"))
    assert np.isposinf(seq) and float(ex) == 60000.0 and np.isnan(kahan)  # the case as built
    ax = plots.ulp_bars(cmp).axes[0]
    lo, hi = ax.get_xlim()
    assert (lo, hi) == (-1.25, 1.25)  # the axis of the one finite error (0), not of 2**63
    widths = [b.get_width() for b in ax.patches]
    assert widths == [hi, 0.0, hi]  # the overflow and the NaN reach the edge
    hatches = [b.get_hatch() for b in ax.patches]
    assert hatches[0] == hatches[2] == plots.MARKED_HATCH != hatches[1]
    assert _texts(ax) == ["+inf", "+0", "NaN"]
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert any("NaN or inf" in t for t in legend)


def test_histogram_counts_the_elements_it_cannot_draw():
    """softmax's naive formula: exp(12) overflows float16 (inf / inf = NaN in two elements);
    the histogram draws the finite errors and says how many it left out."""
    x = np.array([12, 11.5, 0, 1, 2, 3], dtype=np.float16)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        cmp = fpx.compare("softmax", inputs=x, variants=["naive", "shifted"], backends="emulated")
    naive = cmp.results[("naive", "emulated")]
    assert np.isnan(naive).sum() == 2 and np.isfinite(naive).sum() == 4  # the case as built
    ax = plots.ulp_histogram(cmp).axes[0]
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert legend == ["naive (emulated) (2 NaN or inf, not drawn)", "shifted (emulated)"]
    assert ax.get_xlim()[1] < 1e6  # an axis of counts of ulps


def test_explanation_marks_infinite_and_nan_errors():
    good = np.float16(X.astype(np.float32).sum())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        e = fpx.explain("sum", X, {"loop": _sequential(X), "f32": good, "nan": np.float16("nan")})
    rel = float(e.table.loc["f32", "rel_error"])
    assert rel == pytest.approx(3 / 60003)  # 60000 against 60003: a finite error
    ax = e.plot().axes[0]
    lo, hi = ax.get_xlim()
    assert lo == 0 and rel < hi < 2 * rel  # the finite bar's axis, not 1e300
    widths = [b.get_width() for b in ax.patches]
    assert widths == [hi, pytest.approx(rel), hi]
    assert [b.get_hatch() == plots.MARKED_HATCH for b in ax.patches] == [True, False, True]
    texts = _texts(ax)
    assert "inf" in texts and "NaN" in texts  # the NaN result is not called "inf"
    assert texts.index("inf") < texts.index("NaN")


def test_an_ax_that_is_no_axes_is_named():
    """Pass 28: plot(ax="nope") or plot(ax=5) raised "'str' object has no attribute
    'figure'"; every plot names ax now, and a real Axes is drawn on."""
    from matplotlib.figure import Figure

    c = fpx.compare("sum", n=100, variants=["sequential", "pairwise"])
    x = np.float32([1, 2, 3e-4])
    e = fpx.explain("sum", x, {"a": np.float32(3.0003), "b": np.float32(3.0002)})
    calls = (
        lambda ax: c.plot(ax=ax),
        lambda ax: fpx.sweep("sum", sizes=[10, 20], variants=["sequential"]).plot(ax),
        lambda ax: e.plot(ax),
        lambda ax: fpx.diff([1.0, 2.0], [1.0, 2.5]).plot(ax=ax),
    )
    for call in calls:
        for bad in ("nope", 5, [1]):
            with pytest.raises(TypeError, match=r"ax must be a matplotlib Axes, or None"):
                call(bad)
        ax = Figure().add_subplot()
        assert call(ax) is ax.figure
