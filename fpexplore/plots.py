"""Matplotlib figures from experiment results (no widgets here).

Plots draw what the results hold; they compute nothing of their own: a comparison's errors
are measured against the references :func:`~fpexplore.compare` kept
(:attr:`~fpexplore.results.Comparison.references`), a sweep's bounds are the sweep's, a
budget's steps the budget's. Every function draws into ``ax`` when given (the explorer
redraws one figure in place) or into a new :class:`matplotlib.figure.Figure` (not registered
with pyplot, so a notebook shows it once). Colours: the Okabe-Ito colour-blind-safe palette;
every legend names the backend. matplotlib is imported when a figure is drawn.
"""

from __future__ import annotations

import math

import numpy as np

from . import checks
from ._optional import require
from .bits import bit_string
from .formats import ULP_NAN, format_info
from .held import result_format
from .metrics import ulp_error
from .numerics import clamp_ulps

__all__ = [
    "OKABE_ITO",
    "bit_view",
    "budget_waterfall",
    "diff_plot",
    "error_vs_n",
    "plot_comparison",
    "plot_sweep",
    "quantize_plot",
    "ulp_bars",
    "ulp_heatmap",
    "ulp_histogram",
]

OKABE_ITO = (
    "#0072B2",  # blue
    "#E69F00",  # orange
    "#009E73",  # bluish green
    "#CC79A7",  # reddish purple
    "#56B4E9",  # sky blue
    "#D55E00",  # vermillion
    "#F0E442",  # yellow
    "#000000",  # black
)
BACKEND_HATCH = {"numpy": "", "emulated": "//", "cupy": "", "replay": ".."}


def _new_ax(figsize=(7.0, 3.6), ax=None):
    """(figure, axes): ``ax``'s where given, else a new figure of ``figsize``; TypeError
    naming ``ax`` for anything but a matplotlib Axes (pass 28: "'str' object has no
    attribute 'figure'")."""
    if ax is not None:
        if not (hasattr(ax, "figure") and hasattr(ax, "add_patch")):
            raise TypeError(
                f"ax must be a matplotlib Axes, or None for a new figure; got {checks.shown(ax)}"
            )
        return ax.figure, ax
    Figure = require("matplotlib.figure", "fpexplore's plots").Figure

    fig = Figure(figsize=figsize, layout="constrained")
    return fig, fig.add_subplot()


def _label(variant: str, backend: str) -> str:
    return f"{variant} ({backend})"


def _color(i: int) -> str:
    return OKABE_ITO[i % len(OKABE_ITO)]


def _title(cmp) -> str:
    data = cmp.params.get("distribution", cmp.params.get("inputs", ""))  # or "user data"
    return f"{cmp.op}, {cmp.format}, n = {cmp.n:,} ({data})"


def ulp_bars(cmp, ax=None):
    """Signed ULP error of each scalar result against the correctly rounded value; a result
    that is NaN or infinite where its reference is not (or a distance that is no count of
    ulps) is a marked bar (cross-hatched, red edge, labelled "NaN" or "inf") drawn to the
    axis's edge, so that the finite bars keep an axis of their own."""
    fig, ax = _new_ax(ax=ax)
    t = cmp.table
    labels = [_label(v, b) for v, b in zip(t["variant"], t["backend"])]
    vals = t["ulp_error"].astype(float).to_numpy()
    marks = [
        _bar_mark(u, cmp.results.get((v, b)), cmp)
        for u, v, b in zip(t["ulp_error"], t["variant"], t["backend"])
    ]
    finite = np.array([v for v, m in zip(vals, marks) if m is None])
    lim = max(1.0, float(np.max(np.abs(finite))) if finite.size else 1.0) * 1.25
    widths = [
        v if m is None else math.copysign(lim, v) if m != "NaN" else lim
        for v, m in zip(vals, marks)
    ]
    y = np.arange(len(labels))
    bars = ax.barh(y, widths, color=[_color(i) for i in range(len(labels))], edgecolor="black")
    for bar, b, m in zip(bars, t["backend"], marks):
        bar.set_hatch(BACKEND_HATCH.get(b, "") if m is None else MARKED_HATCH)
        if m is not None:
            bar.set_edgecolor(MARKED_EDGE)
            bar.set_linewidth(1.5)
    for yi, v, w, m in zip(y, vals, widths, marks):
        if m is None:
            ax.annotate(
                f"{int(v):+d}",
                (v, yi),
                xytext=(4 if v >= 0 else -4, 0),
                textcoords="offset points",
                va="center",
                ha="left" if v >= 0 else "right",
            )
        else:
            _mark_text(ax, w, yi, m)
    ax.set_yticks(y, labels)
    ax.invert_yaxis()
    ax.axvline(0, color="black", lw=1)
    _backend_legend(ax, list(t["backend"]), marked=any(m is not None for m in marks))
    ax.set_xlim(-lim, lim)
    ax.set_xlabel(f"error in {_unit(cmp)} (0 = correctly rounded)")
    ax.set_title(_title(cmp))
    return fig


#: how a bar whose error is no number (NaN, inf) is drawn: cross-hatched, a red edge
MARKED_HATCH = "xx"
MARKED_EDGE = OKABE_ITO[5]


def _bar_mark(ulps, out, cmp) -> str | None:
    """None for an error that is a count of ulps, else the bar's label: "NaN" (the result
    is NaN where its reference is not, or the NaN sentinel), "+inf"/"-inf" (the result
    overflowed where its reference is finite, or a saturated distance)."""
    u = int(ulps)
    if u == ULP_NAN:
        return "NaN"
    if out is not None and np.ndim(out) == 0:
        r = float(np.asarray(out, dtype=np.float64))
        ref = float(np.asarray(cmp.reference_of(out), dtype=np.float64))
        if math.isnan(r) and not math.isnan(ref):
            return "NaN"
        if math.isinf(r) and math.isfinite(ref):
            return f"{r:+}"
    c = float(clamp_ulps(u, signed=True))  # a saturated distance: inf, no count of ulps
    return f"{c:+}" if math.isinf(c) else None


def _marked_patch(Patch):
    return Patch(
        facecolor="white",
        edgecolor=MARKED_EDGE,
        hatch=MARKED_HATCH,
        label="NaN or inf (drawn to the edge)",
    )


def _mark_text(ax, w: float, yi: float, text: str) -> None:
    """The label of a marked bar, inside the bar at the axis's edge."""
    ax.annotate(
        text,
        (w, yi),
        xytext=(-6 if w >= 0 else 6, 0),
        textcoords="offset points",
        va="center",
        ha="right" if w >= 0 else "left",
        fontweight="bold",
        color=MARKED_EDGE,
        bbox={"boxstyle": "round,pad=0.2", "facecolor": "white", "edgecolor": MARKED_EDGE},
    )


def _unit(cmp) -> str:
    """The unit of a comparison's errors: "ulps of float32", or of each result's format
    where they differ (np.matmul of bfloat16 gives float32)."""
    fmts = {result_format(v, cmp.format) for v in cmp.results.values()}
    return f"ulps of {fmts.pop()}" if len(fmts) == 1 else "ulps of each result's format"


BACKEND_KIND = {"emulated": "emulated", "cupy": "GPU", "replay": "replayed GPU run"}


def _backend_legend(ax, backends, marked: bool = False) -> None:
    """What the hatching says: emulated (hatched), a library on this CPU, a GPU, a replayed
    GPU run; one entry per kind present (``marked``: and the marked bars', NaN or inf)."""
    Patch = require("matplotlib.patches", "fpexplore's plots").Patch

    kinds = {}
    for b in backends:
        kind = BACKEND_KIND.get(b, "library on this CPU")
        kinds.setdefault(kind, BACKEND_HATCH.get(b, ""))
    handles = [
        Patch(facecolor="white", edgecolor="black", hatch=h, label=k) for k, h in kinds.items()
    ]
    if marked:
        handles.append(_marked_patch(Patch))
    # (with marked bars to the edge: wherever it hides least)
    ax.legend(
        handles=handles, fontsize="small", loc="best" if marked else "lower right", framealpha=0.8
    )


def ulp_histogram(cmp, ax=None, bins: int = 41):
    """Per-element signed ULP errors of each array result, one step histogram per result
    (elements whose error is NaN or inf are counted in the legend, not drawn)."""
    fig, ax = _new_ax(ax=ax)
    errs = {}
    for (variant, backend), out in cmp.results.items():
        e = clamp_ulps(ulp_error(out, cmp.reference_of(out)), signed=True).reshape(-1)
        ok = np.isfinite(e)  # NaN or inf (no count of ulps): not drawn, counted in the legend
        label = _label(variant, backend)
        label += "" if ok.all() else f" ({np.count_nonzero(~ok):,} NaN or inf, not drawn)"
        errs[label] = np.clip(e[ok], -1e6, 1e6)
    allv = np.concatenate(list(errs.values())) if errs else np.zeros(1)
    lim = max(2.0, float(np.max(np.abs(allv))) if allv.size else 2.0)
    edges = (
        np.linspace(-lim - 0.5, lim + 0.5, bins)
        if lim > bins // 2
        else np.arange(-int(lim) - 0.5, int(lim) + 1.5)
    )
    for i, (label, e) in enumerate(errs.items()):
        ax.hist(e, bins=edges, histtype="step", lw=2, color=_color(i), label=label)
    ax.set_yscale("log")
    ax.set_xlabel(f"element error in {_unit(cmp)} (0 = correctly rounded)")
    ax.set_ylabel("elements")
    ax.legend(fontsize="x-small", loc="upper right", framealpha=0.8)  # (the tails are low)
    ax.set_title(_title(cmp))
    return fig


def ulp_heatmap(cmp, ax=None, which=None):
    """Element-wise ULP errors of one matrix result (default: the first emulated one)."""
    fig, ax = _new_ax(figsize=(5.0, 4.2), ax=ax)
    keys = list(cmp.results)
    key = which or next((k for k in keys if k[1] == "emulated"), keys[0])
    out = cmp.results[key]
    if np.ndim(out) != 2:  # (matplotlib's "Invalid shape () for image data" named nothing)
        raise ValueError(
            f"kind='heatmap' needs matrix results (matmul); {key[0]} is of shape "
            f"{np.shape(out)}: kind='bars' or 'hist'"
        )
    e = clamp_ulps(ulp_error(out, cmp.reference_of(out)), signed=True, fill=np.nan)
    lim = max(1.0, float(np.nanmax(np.abs(e))) if e.size else 1.0)
    im = ax.imshow(e, cmap="RdBu_r", vmin=-lim, vmax=lim, interpolation="nearest")
    fig.colorbar(
        im, ax=ax, label=f"ulps of {format_info(np.asarray(out).dtype).name} from the exact result"
    )
    ax.set_title(f"{_label(*key)}: {cmp.op} {cmp.format}, n = {cmp.n}")
    return fig


def plot_comparison(cmp, kind: str = "auto", ax=None):
    kinds = ("auto", "bars", "hist", "heatmap")
    if kind not in kinds:
        raise ValueError(f"unknown plot kind {checks.shown(kind)}; valid: {', '.join(kinds)}")
    scalar = all(np.ndim(v) == 0 for v in cmp.results.values())
    if kind == "auto":
        kind = "bars" if scalar else ("heatmap" if cmp.op == "matmul" else "hist")
    if kind == "bars":
        return ulp_bars(cmp, ax)
    if kind == "heatmap":
        return ulp_heatmap(cmp, ax)
    return ulp_histogram(cmp, ax)


SWEEP_UNITS = ("abs", "ulps")


def error_vs_n(table, bounds=None, ax=None, title="", unit: str = "abs", op: str = "sum"):
    """|error| against n, log-log: per result the median over the seeds (a line) and the
    10-90% band of the seeds (shaded); bounds dashed and labelled. Results with no error at
    all (exact, or equal to the correctly rounded value) are drawn on a dotted floor line
    below the smallest nonzero error, so a log axis does not hide them.

    ``unit``: "abs" draws the absolute error ``abs_error``; "ulps" the largest |error| in
    ulps of the result's format (``max_abs_ulp``), and the bounds divided by the ulp of each
    size's median |result| (scalar results; without them no bounds are drawn). ``op``: the
    bounds' labels, a sum's or a dot's."""
    checks.choice("unit", unit, SWEEP_UNITS)
    fig, ax = _new_ax(ax=ax)
    if unit == "ulps":
        table = table.assign(abs_error=table["max_abs_ulp"].to_numpy(dtype=float))
        bounds = _bounds_in_ulps(table, bounds)
    err_all = table["abs_error"].to_numpy(dtype=float)
    positive = err_all[err_all > 0]
    floor = float(positive.min()) / 4 if positive.size else 1e-300
    if bounds is not None and len(bounds) and not positive.size:
        floor = float(np.nanmin(bounds.drop(columns="n").to_numpy(dtype=float))) / 4
    groups = table.groupby(["variant", "backend"], sort=False)
    any_zero = False
    for i, ((variant, backend), g) in enumerate(groups):
        q = g.groupby("n", sort=True)["abs_error"]
        n = np.array(list(q.groups), dtype=float)
        med, lo, hi = (q.quantile(p).to_numpy(dtype=float) for p in (0.5, 0.1, 0.9))
        at_floor = med <= 0
        any_zero |= bool(at_floor.any())
        med, lo, hi = (np.where(v > 0, v, floor) for v in (med, lo, hi))
        color = _color(i)
        marker = "osD^v<>p"[i % 8]  # lines on the floor overlap: the markers tell them apart
        ax.loglog(n, med, marker + "-", color=color, label=_label(variant, backend))
        if at_floor.any():
            ax.plot(n[at_floor], med[at_floor], marker, mfc="white", color=color)
        if len(g) > len(n):  # several seeds: the 10-90% band
            ax.fill_between(n, lo, hi, color=color, alpha=0.18, lw=0)
    if any_zero:
        ax.axhline(floor, color="grey", ls=":", lw=1, label="no error (0), drawn at this floor")
    if bounds is not None and len(bounds):
        S, seq, pw = r"\Sigma|x|", r"\gamma_{n-1}", r"\gamma_{\lceil\log_2 n\rceil}"
        if op == "dot":  # (each product rounded once more: Higham eq. 3.4)
            S, seq, pw = r"\Sigma|a_i b_i|", r"\gamma_n", r"\gamma_{\lceil\log_2 n\rceil+1}"
        names = {
            "worst_sequential": rf"worst case, sequential (${seq}\,{S}$)",
            "worst_pairwise": rf"worst case, pairwise (${pw}\,{S}$)",
            "probabilistic": rf"probabilistic ($\sqrt{{n}}\,u\,{S}$)",
        }
        for j, (col, label) in enumerate(names.items()):
            if col in bounds:
                ax.loglog(bounds["n"], bounds[col], "--", color="grey", lw=1 + j * 0.5, label=label)
    seeds = table["seed"].nunique() if "seed" in table else 1
    ax.set_xlabel("n")
    note = f"\n(median of {seeds} seeds; band: 10-90%)" if seeds > 1 else ""
    if unit == "ulps":
        fmts = sorted(set(table["format"])) if "format" in table else []
        what = f"ulps of {fmts[0]}" if len(fmts) == 1 else "ulps"
        ax.set_ylabel(f"max |error| in {what}" + note)
    else:
        ax.set_ylabel("absolute error |computed − exact|" + note)
    # below the axes: beside them the legend took half a narrow figure's width
    ax.legend(fontsize="x-small", loc="upper center", bbox_to_anchor=(0.5, -0.2), ncol=3)
    ax.set_title(title)
    return fig


def _bounds_in_ulps(table, bounds):
    """The absolute bounds divided by the ulp of each size's median |result| (in the
    sweep's format); None where the results are not scalars."""
    if bounds is None or not len(bounds) or "value" not in table or "format" not in table:
        return None
    from .formats import as_format, ulp

    fmt = str(table["format"].iloc[0])
    med = table.assign(v=table["value"].abs()).groupby("n")["v"].median()
    if med.isna().any():
        return None
    scale = {n: float(ulp(as_format(np.float64(v), fmt))) for n, v in med.items()}
    out = bounds.copy()
    for col in out.columns.drop("n"):
        out[col] = [b / scale[n] for n, b in zip(out["n"], out[col])]
    return out


def plot_sweep(sw, ax=None, unit: str = "abs"):
    """A :class:`~fpexplore.results.Sweep`'s error against n, in absolute error
    (``unit="abs"``) or in ulps of its format (``unit="ulps"``): see :func:`error_vs_n`."""
    return error_vs_n(
        sw.table,
        sw.bounds,
        ax=ax,
        title=f"{sw.op}, {sw.format}: error against n",
        unit=unit,
        op=sw.op,
    )


def bit_view(values: dict, ax=None, fmt=None):
    """Sign / exponent / significand boxes of one value per row, colour-coded, with a marker
    on every bit that differs from the first row (put the exact value first); ``fmt``: a
    format of ``fpx.format`` the (float64) values are of, as for :func:`fpexplore.bit_string`."""
    items = list(values.items())
    if not items:
        raise ValueError("bit_view needs at least one value")
    info = format_info(fmt if fmt is not None else np.asarray(items[0][1]).dtype)
    nb = 1 + info.exponent_bits + info.fraction_bits if fmt is not None else info.bits
    fig, ax = _new_ax(figsize=(max(6.0, nb * 0.22), 0.55 * len(items) + 0.9), ax=ax)
    first = bit_string(items[0][1], sep="", fmt=fmt)
    colors = {"s": OKABE_ITO[5], "e": OKABE_ITO[0], "f": OKABE_ITO[2]}
    eb = info.exponent_bits
    for row, (label, v) in enumerate(items):
        bits = bit_string(np.asarray(v), sep="", fmt=fmt)
        for k, ch in enumerate(bits):
            part = "s" if k == 0 else ("e" if k <= eb else "f")
            ax.add_patch(_rect(k, row, colors[part], alpha=0.85 if ch == "1" else 0.18))
            ax.text(k + 0.5, row + 0.5, ch, ha="center", va="center", fontsize=7)
            if ch != first[k]:
                ax.plot(k + 0.5, row + 0.08, marker="^", color="black", ms=4)
        ax.text(nb + 0.4, row + 0.5, f"{label} = {float(v)!r}", va="center", fontsize=8)
    ax.set_xlim(0, nb + 14)
    ax.set_ylim(len(items), 0)
    ax.axis("off")
    ax.set_title(f"{info.name}: sign | exponent ({eb} bits) | significand ({info.fraction_bits})")
    return fig


def diff_plot(diff, kind: str = "auto", ax=None):
    """Result b against result a (a :class:`~fpexplore.results.Diff`): "hist" of the
    signed ulp differences per element, "heatmap" of them for a matrix, "bits" of both
    values for a scalar (where the format has bits: a format of fpx.format without IEEE's
    layout has none, "hist" then); "auto" picks by shape."""
    kinds = ("auto", "hist", "heatmap", "bits")
    if kind not in kinds:
        raise ValueError(f"unknown plot kind {checks.shown(kind)}; valid: {', '.join(kinds)}")
    if kind == "auto":  # (bits where the format has IEEE's: not every one of fpx.format)
        kind = {0: "bits", 2: "heatmap"}.get(diff.ulps.ndim, "hist")
        info = format_info(diff.format)
        kind = "hist" if kind == "bits" and info.user_defined and not info.ieee_layout else kind
    if kind == "bits":
        va, vb = diff.values
        fmt = diff.format if format_info(diff.format).user_defined else None
        return bit_view({diff.a: va.reshape(-1)[0], diff.b: vb.reshape(-1)[0]}, ax=ax, fmt=fmt)
    u = clamp_ulps(diff.ulps, signed=True, fill=np.nan)  # one NaN, or saturated: not drawn
    s = diff.summary
    title = (
        f"{diff.b} vs {diff.a}: {100 * s['equal_share']:.4g}% bitwise equal, "
        f"max {s['max_abs_ulp']} ulps"
    )
    if kind == "heatmap":
        if u.ndim != 2:
            raise ValueError("a heatmap needs matrix results (matmul)")
        fig, ax = _new_ax(figsize=(5.0, 4.2), ax=ax)
        lim = max(1.0, float(np.nanmax(np.abs(u))) if np.isfinite(u).any() else 1.0)
        im = ax.imshow(u, cmap="RdBu_r", vmin=-lim, vmax=lim, interpolation="nearest")
        fig.colorbar(im, ax=ax, label=f"ulps of {diff.format} from {diff.a} to {diff.b}")
        ax.set_title(title, fontsize="small")
        return fig
    fig, ax = _new_ax(ax=ax)
    v = u[np.isfinite(u)].reshape(-1)
    lim = max(1, int(np.max(np.abs(v))) if v.size else 1)
    edges = np.arange(-lim - 0.5, lim + 1.5) if lim <= 40 else np.linspace(-lim, lim, 81)
    ax.hist(v, bins=edges, color=OKABE_ITO[0], edgecolor="black")
    ax.set_yscale("log")
    ax.set_xlabel(f"ulps of {diff.format} from {diff.a} to {diff.b} (0 = bitwise equal)")
    ax.set_ylabel("elements")
    ax.set_title(title, fontsize="small")
    return fig


def budget_waterfall(budget, ax=None):
    """A :class:`~fpexplore.budget.Budget` as a waterfall: each factor's change in ulps
    stacked on the ones before it, then the total."""
    fig, ax = _new_ax(ax=ax)
    t = budget.table
    deltas = t["delta_ulp"].to_numpy(dtype=float)[1:]
    labels = list(t["step"])[1:]
    base = np.concatenate([[0.0], np.cumsum(deltas)[:-1]])
    colors = [OKABE_ITO[2] if d >= 0 else OKABE_ITO[5] for d in deltas]
    ax.bar(range(len(deltas)), deltas, bottom=base, color=colors, edgecolor="black")
    ax.bar(len(deltas), budget.total_ulp, color=OKABE_ITO[0], edgecolor="black")
    ax.set_xticks(range(len(deltas) + 1), labels + ["total"], rotation=20, ha="right")
    ax.axhline(0, color="black", lw=1)
    ax.set_ylabel("ulps from the starting result")
    ax.set_title("difference budget: one factor switched at a time")
    return fig


def _rect(x, y, color, alpha):
    Rectangle = require("matplotlib.patches", "fpexplore's plots").Rectangle

    return Rectangle((x + 0.05, y + 0.1), 0.9, 0.8, color=color, alpha=alpha, lw=0)


def explain_plot(expl, ax=None):
    """An :class:`~fpexplore.results.Explanation`: each result's error against the exact
    answer (the normwise relative error that decides which is closer; the closer ones
    darker, a hatch where outside its bound), and the causes' shares of the difference
    (hatched: undecided)."""
    plt = require("matplotlib.pyplot", "Explanation.plot")
    if ax is None:
        fig, (ax, ax2) = plt.subplots(1, 2, figsize=(9.5, 3.4), constrained_layout=True)
    else:
        (fig, ax), ax2 = _new_ax(ax=ax), None
    t = expl.table
    labels = list(t.index)
    y = np.arange(len(labels))
    err = np.asarray(t["rel_error"], dtype=np.float64)
    top = np.nanmax(np.where(np.isfinite(err), err, np.nan)) if np.isfinite(err).any() else 1.0
    top = (top if top > 0 else 1.0) * 1.3  # the axis: the finite errors and their labels
    for i, label in enumerate(labels):
        r = t.loc[label]
        mark = None if np.isfinite(err[i]) else _error_mark(expl, label, err[i])
        ax.barh(
            i,
            err[i] if mark is None else top,  # no number: a marked bar to the axis's edge
            color=OKABE_ITO[1 if r["closer"] else 0],
            hatch=MARKED_HATCH if mark else "" if r["within_bound"] else "//",
            edgecolor=MARKED_EDGE if mark else "black",
            linewidth=1.5 if mark else None,
        )
        if mark is None:
            ax.text(err[i], i, f" {err[i]:.3g}", va="center", fontsize="small")
        else:
            _mark_text(ax, top, i, mark)
    ax.set_xlim(0, top)
    if any(not np.isfinite(e) for e in err):
        Patch = require("matplotlib.patches", "Explanation.plot").Patch
        ax.legend(handles=[_marked_patch(Patch)], fontsize="small", loc="best", framealpha=0.8)
    ax.set_yticks(y, labels)
    ax.invert_yaxis()
    ax.set_xlabel("relative error (normwise)\nfrom the exact result (hatched: outside its bound)")
    ax.set_title("error of each result", fontsize="small")
    if ax2 is not None:
        c = expl.causes
        share = np.nan_to_num(np.asarray(c["share"], dtype=np.float64))
        for i, (_, row) in enumerate(c.iterrows()):
            ax2.barh(
                i,
                share[i],
                color=OKABE_ITO[2],
                edgecolor="black",
                hatch="" if row["decided"] else "..",
            )
        ax2.set_yticks(np.arange(len(c)), list(c["factor"]))
        ax2.invert_yaxis()
        ax2.set_xlim(0, 1)
        ax2.set_xlabel("share of the difference (dotted: undecided)")
        ax2.set_title("causes, the most likely first", fontsize="small")
    return fig


def _error_mark(expl, label: str, err: float) -> str:
    """A result's error that is no number, in words: "NaN" (the result holds a NaN),
    "inf" (it overflowed), "inf (exact is 0)" (a nonzero result where the exact one is
    zero: no relative error)."""
    out = np.asarray(expl.results.get(label, np.nan), dtype=np.float64)
    if np.isnan(out).any() or np.isnan(err):
        return "NaN"
    if np.isinf(out).any():
        return "inf"
    return "inf (exact is 0)"


def reveal_plot(rev, ax=None):
    """A revealed accumulation tree (:func:`fpexplore.reveal`): leaves at the bottom in the
    tree's order, each addition above its operands; fused products in orange."""
    from .orders import trees

    fig, ax = _new_ax((min(14.0, 3.0 + 0.25 * rev.n), 4.0), ax=ax)
    pos, order = {}, []
    for t in trees.nodes_postorder(rev.tree):
        if isinstance(t, int):
            pos[id(t)] = (len(order), 0)
            order.append(t)
            continue
        xs = [pos[id(c)][0] for c in t]
        y = 1 + max(pos[id(c)][1] for c in t)
        pos[id(t)] = (sum(xs) / len(xs), y)
        for c in t:
            cx, cy = pos[id(c)]
            ax.plot([cx, pos[id(t)][0]], [cy, y], color="0.45", lw=0.8)
    xs = np.arange(len(order))
    colors = [_color(1) if v in rev.fused else _color(0) for v in order]
    ax.scatter(xs, np.zeros(len(order)), c=colors, s=18, zorder=3)
    if rev.n <= 64:
        ax.set_xticks(xs, [str(v) for v in order], fontsize=7)
    else:
        ax.set_xticks([])
    ax.set_ylabel("additions above the terms")
    ax.set_title(
        f"{rev.op} of {rev.n} {rev.format} terms: accumulator {rev.accumulator}, fma {rev.fma}"
    )
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)
    return fig


def _scale_text(scale: float, fmt: str) -> str:
    """A block scale as the figure writes it: E8M0 (a power of two) as 2^e, others short."""
    if not np.isfinite(scale):
        return "NaN"
    if fmt == "float8_e8m0" and scale > 0:
        return f"2^{math.frexp(scale)[1] - 1}"
    return f"{scale:.4g}"


def quantize_plot(q, fig=None, *, shown: int = 128, total: int | None = None, name: str = "x"):
    """A block-scaled vector (:func:`fpexplore.quantize` of a 1-D array), its first
    ``shown`` values in whole blocks: (top) each value and its dequantized value, the blocks'
    boundaries and each block's scale; (bottom) each value's error in ulps of its block
    (``error_ulps``), a note on a block of zeros or one whose scale is 0 or NaN. ``total``:
    the vector's length where ``q`` holds its first values only; ``name``: the vector's."""
    from .quantize import Quantized

    if not isinstance(q, Quantized):
        raise TypeError(f"quantize_plot: q must be fpx.quantize's result, got {type(q).__name__}")
    x = np.asarray(q.x)
    if x.ndim != 1:
        raise ValueError(f"quantize_plot: q must hold a vector (1-D), got shape {x.shape}")
    s, head = q.scheme, q.first(checks.integer("shown", shown, 1))
    total = x.size if total is None else checks.integer("total", total, x.size)  # (q's, or more)
    b, m = s.block, head.x.size
    blocks = -(-m // b)
    if fig is None:
        fig = require("matplotlib.figure", "fpexplore's plots").Figure(
            figsize=(7.0, 4.4), layout="constrained"
        )
    i, xs = np.arange(m), np.asarray(head.x, np.float64)
    deq, err = head.dequantize(), head.error_ulps()
    top, bottom = fig.subplots(2, 1, sharex=True)
    top.plot(i, xs, "o", ms=3, color=_color(0), label=name)
    top.plot(i, deq, "_", ms=7, mew=2, color=_color(5), label="dequantized")
    bottom.vlines(i, 0, np.where(np.isfinite(err), err, 0.0), color=_color(0), lw=2)
    bottom.axhline(0, color="black", lw=0.6)
    for ax in (top, bottom):  # the blocks' boundaries (one collection each: fast)
        ax.vlines(np.arange(1, blocks) * b - 0.5, 0, 1, transform=ax.get_xaxis_transform(),
                  color="0.6", ls=":", lw=0.8)  # fmt: skip
    bottom.hlines([-0.5, 0.5], -0.5, m - 0.5, color="0.5", ls="--", lw=0.8)
    for k in range(blocks):
        lo, hi = k * b, min((k + 1) * b, m)
        mid, scale = (lo + hi - 1) / 2, float(head.scales[k])
        top.text(mid, 1.01, _scale_text(scale, s.scale), transform=top.get_xaxis_transform(),
                 ha="center", va="bottom", fontsize=6)  # fmt: skip
        note = (
            "all zeros" if not xs[lo:hi].any()
            else "NaN scale" if np.isnan(scale)
            else "scale 0: set to 0" if scale == 0
            else ""
        )  # fmt: skip
        if note:
            bottom.text(mid, 0.5, note, transform=bottom.get_xaxis_transform(), ha="center",
                        va="center", fontsize="x-small", rotation=90 if b < 32 else 0)  # fmt: skip
    part = f"first {blocks} blocks" if m < total else f"{blocks} blocks"
    tensor = f", tensor scale {q.tensor_scale:.4g}" if s.tensor_scale else ""
    top.set_title(
        f"{s.name}: {part} of {b} of {total:,} values of {name}\n"
        f"block scales ({s.scale}) above{tensor}",
        fontsize="small",
        pad=12,
    )
    top.legend(fontsize="x-small", loc="best", ncols=2, framealpha=0.8)
    top.set_ylabel("value")
    bottom.set_ylabel("error (ulps\nof its block)")
    bottom.set_xlabel(f"index in {name}")
    bottom.set_xlim(-1, m)
    return fig
