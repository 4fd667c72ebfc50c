"""The explorer's widgets: made once, arranged for a projector (controls in one column beside
the figure), and set from a :class:`~.state.State` (``show_state``). No handler lives here."""

from __future__ import annotations

from types import SimpleNamespace

import ipywidgets as W

from ..formats import FORMATS, INPUT_ROUNDINGS
from ..orders.arith import held_accumulators
from ..orders.registry import BLOCKS
from ..userformat import user_names
from .presets import PRESETS
from .render import label
from .state import (
    CONTROLS,
    PLACES,
    TENSOR_CORE,
    State,
    arch_choices,
    builder_names,
    built_spec,
    input_names,
    variant_options,
)
from .yourdata import UPLOADS, describe

EXPORTS = ("CSV", "PNG", "SVG")
FIGSIZE = (5.4, 3.2)  # inches at 100 dpi: beside the controls' column at 1280 px
SIDE = "285px"  # the controls' column
# the app's own style (an HTML widget): full button labels, a table that scrolls in its box,
# large type for a projector
STYLE = """<style>
.fpx-explorer .widget-button, .fpx-explorer .widget-toggle-button {
  flex: 0 0 auto; width: auto; overflow: visible; }
.fpx-explorer .fpx-side .widget-dropdown, .fpx-explorer .fpx-side .widget-select-multiple,
.fpx-explorer .fpx-side .widget-inline-hbox { width: 100%; }
.fpx-explorer .fpx-tablebox { max-height: 220px; overflow: auto; }
.fpx-explorer table.fpx-table td, .fpx-explorer table.fpx-table th {
  padding: 1px 6px; white-space: nowrap; }
.fpx-explorer .fpx-verdict { font-size: 110%; margin: 2px 0; }
.fpx-explorer.fpx-large table.fpx-table, .fpx-explorer.fpx-large table.fpx-diff {
  font-size: 150%; }
.fpx-explorer.fpx-large .fpx-verdict { font-size: 160%; }
</style>"""


def canvas():
    """(figure, widget): an ipympl canvas if available, else an Agg figure + Image widget."""
    from .._optional import require

    Figure = require("matplotlib.figure", "fpx.explorer").Figure

    fig = Figure(figsize=FIGSIZE, layout="constrained")
    try:
        from ipympl.backend_nbagg import Canvas, FigureManager

        c = Canvas(fig)
        FigureManager(c, 0)
        c.header_visible = False
        c.toolbar_visible = "fade-in-fade-out"
        return fig, c
    except Exception:  # pragma: no cover - ipympl is part of the jupyter extra
        return fig, W.Image(format="png")


def set_choices(widget, options, value) -> None:
    """New options and a value for a selection widget, sent to the browser in one message.

    Set one after the other, the browser got the new option labels while the old selection
    index was still set; a SelectMultiple whose index pointed past the new, shorter list
    logged "Error setting state: Cannot set properties of undefined (setting 'selected')".
    Nothing is sent where both are as they are.
    """
    if tuple(widget.options) == tuple(options) and widget.value == value:
        return
    with widget.hold_sync():
        widget.options = options
        widget.value = value


def table_controls(state: State, installed: tuple) -> dict:
    """One widget per row of :data:`~.state.CONTROLS`, showing the state's value; and the
    variant list."""
    made = {}
    for name, row in CONTROLS.items():
        kw = dict(row.widget_args, description=row.label)
        if row.options is not None:
            kw["options"] = row.options(state, installed)
        made[name] = getattr(W, row.widget)(value=getattr(state, name), **kw)
    made["variants"] = W.SelectMultiple(description="variants", rows=8)
    return made


def data_controls() -> dict:
    """The data source: generated (n, distribution, seed) or your arrays by variable name
    (the notebook's, or an uploaded file's), with observed results shown next to the rows."""
    c = dict(
        inputs_box=W.VBox(),
        observed=W.SelectMultiple(
            description="observed",
            rows=3,
            tooltip="results you computed elsewhere (a GPU's): rows next to the emulations",
        ),
        upload=W.FileUpload(
            accept=UPLOADS, multiple=True, description="upload", layout=W.Layout(width="auto")
        ),
        refresh=W.Button(
            description="refresh names",
            tooltip="list the notebook's arrays again",
            layout=W.Layout(width="auto"),
        ),
        data_note=W.HTML(),
    )
    row = W.HBox([c["refresh"], c["upload"]], layout=W.Layout(flex_flow="row wrap"))
    c["arrays_box"] = W.VBox(
        [c["inputs_box"], c["observed"], row, c["data_note"]], layout=W.Layout(display="none")
    )
    return c


def accumulator_options() -> list:
    """The builder's accumulators: the data's, the storage formats, OCP FP8/FP6/FP4 and the
    formats of fpx.format defined so far (the list follows them: see :func:`show_state`)."""
    fmts = (*FORMATS, *held_accumulators(), *user_names())
    return [("accumulator: data's", "")] + [(f"@{f}", f) for f in fmts]


def builder_controls() -> dict:
    """The variant builder: each control is one part of a variant spec (fpx.parse_spec), the
    presets one click each."""
    small = W.Layout(width="auto")
    return dict(
        b_name=W.Dropdown(description="build"),
        b_fma=W.Checkbox(value=False, description="FMA", indent=False, layout=small),
        b_acc=W.Dropdown(options=accumulator_options(), layout=small),
        b_block=W.Dropdown(
            options=[("block: default", 0)] + [(f"block={b}", b) for b in BLOCKS], layout=small
        ),
        b_rounding=W.Dropdown(
            options=[("inputs: as they are", "")] + [(f"+{r}", r) for r in INPUT_ROUNDINGS],
            layout=small,
        ),
        # the tensor cores' architecture (the order tensor-core, "GPU tensor cores")
        b_arch=W.Dropdown(
            options=[(f"arch={a}", a) for a in arch_choices()], value="h100", description="arch"
        ),
        b_add=W.Button(description="add", button_style="info", layout=small),
        b_remove=W.Button(description="remove selected", layout=small),
        presets={
            name: W.Button(description=name, layout=small, tooltip=", ".join(p.variants))
            for name, p in PRESETS.items()
        },
    )


def view_controls() -> dict:
    """What the figure shows (errors against the exact answer, two results against each
    other, error against n over seeds, the bits of one result next to the exact one), and
    everything the app writes: verdict, table, code, messages, exports, the detective."""
    picks = W.Layout(width="270px")
    table = W.HTML(layout=W.Layout(width="100%"))
    table.add_class("fpx-tablebox")
    return dict(
        pick_a=W.Dropdown(description="A", layout=picks),
        pick_b=W.Dropdown(description="B", layout=picks),
        view_out=W.HTML(),
        explained=W.HTML(),  # fpx.explain's verdict on the observed results
        message=W.HTML(),
        # work over a second: "computing pairwise (3 of 5)…" and a cancel button
        progress=W.HTML(),
        cancel=W.Button(
            description="cancel",
            tooltip="stop this computation; the last finished view stays",
            layout=W.Layout(width="auto", display="none"),
        ),
        banner=W.HTML(),
        verdict=W.HTML(),  # one line: the answer, computed from the comparison
        table=table,
        large=W.ToggleButton(
            value=False,
            description="large type",
            tooltip="bigger table, verdict and figure (teaching)",
        ),
        snippet=W.Textarea(layout=W.Layout(width="100%"), description="reproduce this"),
        detect=W.Button(
            description="Which order did NumPy use?",
            layout=W.Layout(width="auto"),
            tooltip="run the order detective on NumPy's result",
        ),
        detect_out=W.HTML(),
        exports={
            kind: W.Button(
                description=f"Export {kind}",
                layout=W.Layout(width="auto"),
                tooltip=f"the current {'table' if kind == 'CSV' else 'figure'} as {kind}",
            )
            for kind in EXPORTS
        },
        export_out=W.HTML(),
        link=W.Button(
            description="Link to this view",
            layout=W.Layout(width="auto"),
            tooltip="a code that opens this view again: fpx.explorer(link=...), or the "
            "dashboard's address with ?link=...",
        ),
        copy=W.HTML(),
    )


def arrange(c) -> list:
    """The app's children: every control in one column beside the figure (projector first),
    then the exports, the detective and the code."""
    wrap = W.Layout(flex_flow="row wrap", width="100%")
    placed = {p: [getattr(c, k) for k, r in CONTROLS.items() if r.place == p] for p in PLACES}
    side = placed["side"]
    side.insert(side.index(c.source) + 1, c.arrays_box)  # your arrays under "data from"
    side = W.VBox(
        [
            *side,
            *(c.variants, c.b_name, c.b_arch),
            W.HBox([c.b_block, c.b_fma], layout=wrap),
            W.HBox([c.b_rounding, c.b_acc], layout=wrap),
            W.HBox([c.b_add, c.b_remove], layout=wrap),
            W.HTML("<b>presets</b>"),
            W.HBox(list(c.presets.values()), layout=wrap),
        ],
        layout=W.Layout(width=SIDE, min_width=SIDE),
    )
    side.add_class("fpx-side")
    main = W.VBox(
        [
            W.HBox([*placed["view"], c.large], layout=wrap),
            W.HBox([c.pick_a, c.pick_b, *placed["picks"]], layout=wrap),
            *(c.verdict, c.explained, c.message),
            W.HBox([c.progress, c.cancel]),
            *(c.banner, c.canvas, c.view_out, c.table),
        ],
        layout=W.Layout(flex="1 1 auto", min_width="0"),
    )
    return [
        W.HTML(STYLE),
        W.HBox([side, main]),
        W.HBox([*c.exports.values(), c.link, c.export_out], layout=wrap),
        W.VBox([c.detect, c.detect_out]),
        c.snippet,
        c.copy,
    ]


def make_controls(state: State, installed: tuple) -> SimpleNamespace:
    """Every widget of the app by name, the figure and its canvas among them."""
    c = SimpleNamespace(
        **table_controls(state, installed),
        **data_controls(),
        **builder_controls(),
        **view_controls(),
        input_picks={},  # the op's input name -> its Dropdown ("input x")
        installed=installed,  # the CPU libraries among the backends
    )
    c.figure, c.canvas = canvas()
    return c


def show_state(c, state: State, arrays: dict, *, on_input) -> None:
    """Set every control from ``state`` (``arrays``: the arrays offered by name; ``on_input``:
    the handler of a new input dropdown, which ``show_state`` makes when the op changes)."""
    show_table_controls(c, state)
    show_data_controls(c, state, arrays, on_input)
    names = builder_names(state.op, state.format)
    keep = c.b_name.value if c.b_name.value in [v for _, v in names] else names[0][1]
    set_choices(c.b_name, names, keep)
    accs = accumulator_options()  # (a format defined after the explorer opened: offered now)
    set_choices(c.b_acc, accs, c.b_acc.value if c.b_acc.value in [v for _, v in accs] else "")
    builder_fits(c, state.format)
    # A and B: only where the view uses them
    show = "flex" if state.view in ("A vs B", "bits") else "none"
    c.pick_a.layout.display = show
    c.pick_b.layout.display = show if state.view == "A vs B" else "none"


def show_table_controls(c, state: State) -> None:
    """Each row's widget shows the state's value (its options where they follow the state,
    as n's do), where the row is shown."""
    for name, row in CONTROLS.items():
        w, value = getattr(c, name), getattr(state, name)
        options = row.options(state, c.installed) if row.options is not None else None
        if options is not None and list(w.options) != list(options):
            set_choices(w, options, value)
        w.value = value
        w.layout.display = None if row.shown is None or row.shown(state) else "none"
    opts, chosen = [str(v) for v in variant_options(state)], tuple(map(str, state.variants))
    if list(c.variants.options) != opts or c.variants.value != chosen:
        set_choices(c.variants, opts, chosen)


def show_data_controls(c, state: State, arrays: dict, on_input) -> None:
    """The data source's controls: one dropdown per input of the op (sum: "input x"; dot: a,
    b; matmul: A, B), the arrays offered by name with their format and shape."""
    if list(c.input_picks) != [k for k, _ in input_names(state.op)]:
        for w in c.input_picks.values():
            w.close()
        c.input_picks = {k: W.Dropdown(description=f"input {k}") for k, _ in state.inputs}
        for k, w in c.input_picks.items():
            w.observe(lambda change, k=k: on_input(k, change["new"]), names="value")
        c.inputs_box.children = list(c.input_picks.values())
    opts = [(f"{k}: {describe(v)}", k) for k, v in arrays.items()]
    for k, var in state.inputs:
        set_choices(c.input_picks[k], [("choose an array", ""), *opts], var)
    set_choices(c.observed, opts, state.observed)
    c.data_note.value = (
        ""
        if arrays
        else "<small>no arrays yet: define one in the notebook (then refresh names) or "
        "upload a .npy, .npz or .csv file</small>"
    )
    mine = state.source == "arrays"
    c.arrays_box.layout.display = None if mine else "none"
    c.format.disabled = mine  # the format is your arrays' own


def show_picks(c, state: State, keys: list) -> None:
    """A and B offer the results shown (their values are the results' keys)."""
    options = [(label(k), k) for k in keys]
    set_choices(c.pick_a, options, state.pick_a)
    set_choices(c.pick_b, options, state.pick_b)


def builder_spec(c) -> str:
    """The variant spec the builder's controls describe, e.g. "tree(block=256)+tf32"."""
    return built_spec(
        c.b_name.value,
        arch=c.b_arch.value,
        block=c.b_block.value,
        fma=c.b_fma.value,
        rounding=c.b_rounding.value,
        acc=c.b_acc.value,
    )


def builder_fits(c, fmt: str) -> None:
    """The arch control applies to the tensor cores only (its tooltip says what the model
    is checked against); they read float32 data through an input rounding (+tf32)."""
    tc = c.b_name.value == TENSOR_CORE
    c.b_arch.disabled = not tc
    c.b_arch.tooltip = arch_choices()[c.b_arch.value] if tc else "GPU tensor cores only"
    for w in (c.b_fma, c.b_acc, c.b_block):
        w.disabled = tc  # no fma, accumulator or block setting on the tensor cores
    if tc and fmt == "float32" and not c.b_rounding.value:
        c.b_rounding.value = "tf32"
