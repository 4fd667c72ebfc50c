"""What the explorer shows, drawn from a comparison and the state: the verdict, the table, the
figure of the view, the code that reproduces it, the messages. Nothing here reads a widget or
computes a result (matplotlib and pandas load when a function runs)."""

from __future__ import annotations

import html
import io
import json
import math
import textwrap

import numpy as np

from ..formats import FORMATS, ULP_NAN, ULP_SATURATED
from ..held import result_format
from ..results import EXACT_LABEL, diff_values, held_format, literal
from .state import OBSERVED, ORDER_OPS, State, sweep_arguments

TABLE_COLUMNS = [  # the columns that answer the question first; the box scrolls for the rest
    "variant",
    "backend",
    "ulp_error",
    "max_abs_ulp",
    "unit",
    "value",
    "mean_abs_ulp",
    "exact_share",
    "hex",
    "rel_error",
    "bits_error",
    "time_ms",
    "compile_ms",
]


def label(key: tuple) -> str:
    """A result's name as people read it (and Comparison.diff takes it): "pairwise (emulated)",
    "gpu (observed)"."""
    return "{} ({})".format(*key)


def ulps(k: int) -> str:
    """ "3 ulps"; the saturated distance of ulp_distance (2**63 - 1) is a lower bound."""
    more = " or more" if abs(k) >= ULP_SATURATED else ""
    return f"{k:,}{more} ulp{'' if k == 1 else 's'}"


def units(cmp) -> list[str]:
    """The unit of each row of ``cmp.formatted()`` (the exact reference first): ulps of the
    result's own format, flagged where a result comes in another format than the inputs
    (np.matmul of bfloat16 gives float32)."""
    out = [f"ulps of {cmp.format}"]
    for v, b in zip(cmp.table["variant"], cmp.table["backend"]):
        fmt = result_format(cmp.results[(v, b)], cmp.format)
        out.append(f"ulps of {fmt}" if fmt == cmp.format else f"{fmt} result: ulps of {fmt}")
    return out


def verdict(cmp, observed=None) -> str:
    """The answer in one line: how far each result is from the exact one ("sequential is 52
    ulps below the exact sum; np.sum is exact; ulps of float32"); with more than three results
    the worst and the best. With your own results (``observed``: an
    :class:`~.yourdata.Observed` holding some) the line is about them, as fpx.explain's is;
    else about the comparison's, each named by its variant (and its backend where two
    backends have the same variant)."""
    if observed is not None and observed.records:
        entries = [
            (r["variant"], observed.values[r["variant"]], r, r["format"]) for r in observed.records
        ]
    else:
        names = [v for v, _ in cmp.results]
        entries = []
        for (v, b), out in cmp.results.items():
            r = cmp.table[(cmp.table["variant"] == v) & (cmp.table["backend"] == b)].iloc[0]
            name = v if names.count(v) == 1 else f"{v} ({b})"
            entries.append((name, out, r, result_format(out, cmp.format)))
    mixed = len({fmt for *_, fmt in entries}) > 1  # (np.matmul of bfloat16: a float32 result)
    rows = [_phrase(cmp.op, name, out, r, f" of {fmt}" if mixed else "")
            for name, out, r, fmt in entries]  # fmt: skip
    if not rows:
        return ""
    if len(rows) > 3:
        worst = max(rows, key=lambda t: t[0])
        best = min(rows, key=lambda t: t[0])
        rows = [(0, "worst: " + worst[1]), (0, "best: " + best[1])]
    tail = "" if mixed else f" (ulps of {entries[0][3]})"
    return "; ".join(t for _, t in rows) + tail


def _phrase(op: str, name: str, out, r, unit: str) -> tuple[float, str]:
    """(distance in ulps, "NAME is 3 ulps below the exact sum") of one result whose measured
    numbers are ``r`` (a table row or an observed record)."""
    if np.ndim(out) == 0 and int(r["ulp_error"]) == ULP_NAN:
        text = (
            f"is NaN where the exact {op} is not"
            if np.isnan(out)
            else f"is a number where the exact {op} is NaN"
        )
        return math.inf, f"{name} {text}"
    if np.ndim(out) == 0 and np.isinf(out) and int(r["ulp_error"]) != 0:  # (pass 24: in ulps)
        return math.inf, f"{name} is {float(out)} where the exact {op} is not"
    if np.ndim(out) == 0:
        k = int(r["ulp_error"])
        side = "below" if k < 0 else "above"
        text = "is exact" if k == 0 else f"is {ulps(abs(k))}{unit} {side} the exact {op}"
        return abs(k), f"{name} {text}"
    k = r["max_abs_ulp"]  # an exact int (beyond 2**53 too); inf: NaN where the exact is not
    share = _percent(float(r["exact_share"]))
    if k == 0:
        text = "is exact everywhere"
    elif k == math.inf:
        text = f"has NaN where the exact result has none, or the reverse ({share}% exact)"
    else:
        text = f"is up to {ulps(int(k))}{unit} off ({share}% exact)"
    return k, f"{name} {text}"


def _percent(share: float) -> str:
    """A share as a percentage of 3 digits that reads 100 only where it is (pass 42: 99.995%
    read "100% exact" beside "up to 1 ulp off")."""
    text = f"{100 * share:.3g}"
    if text == "100" and share < 1:
        text = f"{100 * share:.6g}"
        return ">99.9999" if text == "100" else text
    return text


def table_html(cmp, observed) -> str:
    """The table as the app shows it: the observed results' rows first (``observed``: an
    :class:`~.yourdata.Observed`), then the formatted rows with their units, the note."""
    shown = cmp.formatted()
    shown["unit"] = units(cmp)
    if observed.rows:  # yours first: the rows a person came to see
        import pandas as pd

        note = shown.attrs["note"]
        shown = pd.DataFrame([*observed.rows, *shown.to_dict("records")]).fillna("")
        shown.attrs["note"] = note
    cols = [c for c in TABLE_COLUMNS if c in shown]
    return (
        shown[cols].to_html(index=False, border=0, classes="fpx-table")
        + f'<p class="fpx-note"><small>{html.escape(shown.attrs["note"])}</small></p>'
    )


def csv_table(cmp, observed):
    """The table the CSV export writes: ``cmp.table``, then the observed results' rows."""
    if not observed.records:
        return cmp.table
    import pandas as pd

    return pd.concat([cmp.table, pd.DataFrame(observed.records)], ignore_index=True)


def value_of(cmp, observed, key):
    """A result by key: one of the comparison's, or an observed one."""
    return observed.values[key[0]] if key[1] == OBSERVED else cmp.results[key]


def diff_of(cmp, observed, a, b):
    """The :class:`~fpexplore.results.Diff` of two results by key (or the exact reference, in
    the other's format), as :meth:`Comparison.diff` makes it."""
    vb = np.asarray(value_of(cmp, observed, b))
    if a == EXACT_LABEL:  # (an observed one's: the row's, pass 24: a float16 one of float32 data)
        va = observed.refs[b[0]] if b[1] == OBSERVED else cmp.reference_of(vb)
    else:
        va = value_of(cmp, observed, a)
    la, va = (EXACT_LABEL if a == EXACT_LABEL else label(a)), np.asarray(va)
    return diff_values(la, va, label(b), vb, fmt=held_format(cmp.format, va, vb))


def worst_element(cmp, observed, key: tuple):
    """A Diff of one element: the exact value against the chosen result at the element
    where that result is farthest from it."""
    d = diff_of(cmp, observed, EXACT_LABEL, key)  # the farthest element first
    ref, out = d.values
    i = d.table.loc[0, "index"] if len(d.table) else (0,) * ref.ndim
    i = tuple(int(k) for k in i) if isinstance(i, tuple) else (int(i),)
    return diff_values(EXACT_LABEL, ref[i], f"{label(key)} at {i}", out[i])


QUANTIZE_SHOWN = 128  # values the quantize view shows: 4 MX blocks, 8 NVFP4 ones


def quantize_input(cmp) -> tuple[str, np.ndarray]:
    """The comparison's first input vector, flattened, and its name (sum: x; dot: a;
    matmul: A); a ValueError where the op's inputs hold none (linspace)."""
    for k, v in cmp.inputs.items():
        if isinstance(v, np.ndarray) and v.ndim >= 1 and v.size:
            return (k if v.ndim == 1 else f"{k} (flattened)"), v.reshape(-1)
    names = ", ".join(k for k in cmp.inputs if k != "format")
    raise ValueError(f"{cmp.op}'s inputs ({names}) hold no vector to quantize")


def head_quantized(v: np.ndarray, scheme: str, shown: int = QUANTIZE_SHOWN):
    """fpx.quantize of ``v``'s first ``shown`` values (whole blocks), each number as in the
    quantization of all of ``v``, at the cost of a few blocks: MX blocks are independent;
    NVFP4's tensor scale is 6 * 448 / max|v|, so v's value of largest magnitude (or its
    first NaN, which quantize refuses) joins as a block of its own, padded with zeros."""
    from ..quantize import SCHEMES, quantize

    s = SCHEMES[scheme]
    m = -(-shown // s.block) * s.block
    if v.size <= m:
        return quantize(v, scheme)
    head = v[:m]
    if s.tensor_scale:
        i = int(np.argmax(np.abs(v.astype(np.float64))))
        head = np.concatenate([head, v[i : i + 1]])
    return quantize(head, scheme)


def quantize_html(v: np.ndarray, q, scheme: str) -> str:
    """Under the quantize view: its unit, the block scales shown (exact), and per scheme the
    element format, block, scale format and largest error in the values shown."""
    from ..quantize import SCHEMES

    unit = (
        "<p class=\"fpx-unit\">unit: ulps of each value's block (the element format's ulp at "
        "the element times the block's scale); at most 0.5 where rounded within range, more "
        "where clamped</p>"
    )
    scales = ", ".join(repr(float(t)) for t in q.first(QUANTIZE_SHOWN).scales)
    tensor = f"; tensor scale {q.tensor_scale!r}" if q.scheme.tensor_scale else ""
    said = f"{scheme} block scales ({q.scheme.scale}): {scales}{tensor}"
    rows = []
    for name, s in SCHEMES.items():
        try:
            e = np.abs(head_quantized(v, name).first(QUANTIZE_SHOWN).error_ulps())
            worst = f"{np.nanmax(e):.3g}" if np.isfinite(e).any() else "—"
        except (TypeError, ValueError) as err:  # (nvfp4 of float64 data: its own message)
            worst = f"refused: {err}"
        cells = [name, s.element, s.block, s.scale + (" × float32" if s.tensor_scale else "")]
        tr = '<tr style="font-weight:bold">' if name == scheme else "<tr>"
        rows.append(tr + "".join(f"<td>{html.escape(str(c))}</td>" for c in [*cells, worst]))
    head = "".join(
        f"<th>{h}</th>"
        for h in ("scheme", "elements", "block", "scale", "largest |error| shown (ulps)")
    )
    return (
        unit
        + f'<p class="fpx-scales">{html.escape(said)}</p>'
        + f'<table class="fpx-quantize"><thead><tr>{head}</tr></thead><tbody>'
        + "</tr>".join(rows)
        + "</tr></tbody></table>"
    )


def draw_quantize(fig, cmp, scheme: str) -> str:
    """The quantize view: the comparison's first input vector in ``scheme`` (its first
    values, whole blocks), or a note saying why not (no vector; data quantize refuses)."""
    from ..plots import quantize_plot

    try:  # the numbers first: the figure is cleared and drawn at once
        name, v = quantize_input(cmp)
        q = head_quantized(v, scheme)
        said = quantize_html(v, q, scheme)
    except (TypeError, ValueError) as e:
        fig.clear()
        ax = fig.add_subplot()
        ax.axis("off")
        ax.text(0.5, 0.5, textwrap.fill(str(e), 60), ha="center", va="center", wrap=True)
        return f'<p class="fpx-unit">{html.escape(str(e))}</p>'
    fig.clear()
    quantize_plot(q, fig, shown=QUANTIZE_SHOWN, total=v.size, name=name)
    return said


def draw(fig, cmp, observed, state: State) -> str:
    """Draw the state's view of ``cmp`` into ``fig``; returns the HTML shown under it."""
    if state.view == "quantize":
        return draw_quantize(fig, cmp, state.scheme)
    fig.clear()
    ax = fig.add_subplot()
    if state.view == "errors":
        cmp.plot("hist" if cmp.op == "matmul" else "auto", ax=ax)
    elif state.view == "A vs B":
        d = diff_of(cmp, observed, state.pick_a, state.pick_b)
        d.plot(ax=ax)
        return (
            f'<p class="fpx-unit">unit: ulps of {d.format}, from A to B (0 = bitwise '
            "equal)</p>" + d._repr_html_()
        )
    elif state.view == "bits":
        if np.ndim(cmp.reference) == 0:
            d = diff_of(cmp, observed, EXACT_LABEL, state.pick_a)
        else:  # an array result: its element farthest from the exact one
            d = worst_element(cmp, observed, state.pick_a)
        d.plot("bits", ax=ax)
        k = d.summary["max_abs_ulp"]
        return (
            f'<p class="fpx-unit">unit: the bits of {d.format} (sign, exponent, '
            f"significand; ▲ marks a bit that differs); A is {ulps(k)} of {d.format} "
            "from the exact value</p>" + d._repr_html_()
        )
    elif state.source == "arrays":  # the sweep generates data of each size
        ax.axis("off")
        ax.text(
            0.5,
            0.5,
            "the sweep draws generated data:\nchoose data from: generated",
            ha="center",
            va="center",
        )
    else:
        from ..experiment import sweep
        from ..plots import plot_sweep

        kw = sweep_arguments(state)
        plot_sweep(sweep(kw.pop("op"), progress=False, **kw), ax=ax, unit=state.sweep_unit)
    return ""


def png(fig) -> bytes:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=90)
    return buf.getvalue()


def view_code(state: State, cmp, code_of) -> str:
    """The public-API line that draws the state's view from ``cmp``; ``code_of(key)``: the
    code of an observed result (its variable, or the load of an uploaded file)."""
    a, b = state.pick_a, state.pick_b
    observed = any(k is not None and k[1] == OBSERVED for k in (a, b))
    if state.view in ("A vs B", "bits") and observed:

        def code(k):
            return code_of(k) if k[1] == OBSERVED else f"cmp.results[{k!r}]"

        if state.view == "A vs B":
            return f"fpx.diff({code(a)}, {code(b)}).plot()"
        ref = f"cmp.reference_of({code(a)})"
        if a[1] == OBSERVED and cmp.inputs["format"] in FORMATS:  # (explain's, the row's)
            pair = f"{{'A': {code(a)}, 'B': {code(b)}}}"
            ref = f"fpx.explain(cmp.op, cmp.inputs, {pair}).reference['A']"
        return f"fpx.diff({ref}, {code(a)}).plot('bits')  # exact and A"
    if state.view == "quantize":
        try:
            name = quantize_input(cmp)[0].split()[0]
        except ValueError:
            return f"# {cmp.op}'s inputs hold no vector to quantize"
        return (
            f"q = fpx.quantize(cmp.inputs[{name!r}].ravel(), {state.scheme!r})\n"
            f"fpx.plots.quantize_plot(q, shown={QUANTIZE_SHOWN})  # its first values"
        )
    a, b = (label(k) if k else k for k in (a, b))
    if state.view == "A vs B":
        return f"cmp.diff({a!r}, {b!r}).plot()"
    if state.view == "bits":
        return f"cmp.diff({EXACT_LABEL!r}, {a!r}).plot('bits')  # the exact value and A"
    if state.view == "sweep":
        if state.source == "arrays":
            return "# the sweep view draws generated data of each size"
        kw = sweep_arguments(state)
        op, kw["variants"] = kw.pop("op"), [str(v) for v in kw["variants"]]
        sw = f"fpx.sweep({op!r}, " + ", ".join(f"{k}={v!r}" for k, v in kw.items()) + ")"
        if state.sweep_unit == "abs":
            return sw + ".plot()"
        return f"fpx.plots.plot_sweep({sw}, unit='ulps')"
    return "cmp.plot('hist')" if cmp.op == "matmul" else "cmp.plot()"


def user_snippet(cmp, observed, code: dict, numpy: bool, code_of) -> str:
    """The public-API code of a comparison of your arrays (``code``: each input's code) and
    of the explanation of the observed results."""
    args = [repr(cmp.op), "inputs=inputs"]
    args += [f"{k}={literal(v)}" for k, v in cmp.params.items() if k != "inputs"]
    numpy = numpy or any("np." in a for a in args)  # (an op parameter's NumPy scalar)
    lines = ["import fpexplore as fpx"] + (["import numpy as np"] if numpy else [])
    lines += ["", "inputs = {" + ", ".join(f"{k!r}: {c}" for k, c in code.items()) + "}"]
    lines += ["cmp = fpx.compare(" + ", ".join(args) + ")", "cmp"]
    if observed.explanation is not None:
        given = ", ".join(
            f"{name!r}: {code_of(k) if k[1] == OBSERVED else f'cmp.results[{k!r}]'}"
            for name, k in observed.given.items()
        )
        lines.append(f"fpx.explain({cmp.op!r}, inputs, {{{given}}})")
    return "\n".join(lines)


def copy_button(text: str) -> str:
    """A button that copies ``text`` to the clipboard in the browser (one click)."""
    payload = html.escape(json.dumps(text), quote=True)
    return (
        f'<button class="fpx-copy jupyter-button" title="copy the code above" '
        f'onclick="navigator.clipboard.writeText({payload}).then('
        f"() => {{ this.textContent = 'copied'; }})\">copy code</button>"
    )


def error_html(e: Exception) -> str:
    return (
        '<div class="fpx-error" style="background:#fde2e1;padding:6px 10px;'
        'border-left:4px solid #D55E00"><b>Cannot show this combination.</b> '
        f"{html.escape(str(e))}</div>"
    )


def note_html(cls: str, color: str, background: str, text: str) -> str:
    """A one-line note in the app (compiling, cancelled, a banner)."""
    return (
        f'<div class="{cls}" style="background:{background};padding:6px 10px;'
        f'border-left:4px solid {color}">{text}</div>'
    )


CANCELLED = note_html(
    "fpx-cancelled", "#E69F00", "#fff3cd", "cancelled: the view shows the last finished result"
)


def banner_html(messages) -> str:
    return "".join(
        f'<div class="fpx-banner" style="background:#fff3cd;padding:4px 8px;'
        f'border-left:4px solid #E69F00">{html.escape(m)}</div>'
        for m in messages
    )


def detective_html(cmp) -> str:
    """The order detective on NumPy's own function (:func:`fpexplore.explain_numpy`) for the
    inputs of ``cmp``, as HTML; a ValueError where it does not apply."""
    from ..detective import explain_numpy

    if cmp is None or cmp.op not in ORDER_OPS:
        raise ValueError("the order detective explains sum, dot and matmul results")
    if not any(b == "numpy" for _, b in cmp.results):
        raise ValueError("select the numpy backend to explain NumPy's result")
    if cmp.op == "matmul" and cmp.n > 128:
        raise ValueError("the detective tries hundreds of orders: use n <= 128 here")
    df = explain_numpy(cmp.op, cmp.inputs)
    cols = ["variant", "exact", "exact_matches", "observations", "max_ulp"]
    probes = "" if cmp.op == "matmul" else " and 5 seeded probes"
    return (
        f"<p><b>{html.escape(df.attrs['function'])}</b> on this input{probes}: "
        f"{html.escape(df.attrs['note'])}</p>"
        + df[cols].to_html(index=False, border=0, classes="fpx-detective")
    )
