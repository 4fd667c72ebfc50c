"""The explorer app: ipywidgets controls mapped one to one onto :func:`fpexplore.compare`.

``explorer()`` returns an :class:`Explorer`; display it (it is an ``ipywidgets.VBox``). Each
control change recomputes ``compare(...)`` with the controls' values and redraws the one figure
in place (an ipympl canvas when ipympl is installed, so it works with ``%matplotlib widget``,
in Voila and on Binder; otherwise a PNG image widget). Errors appear as a message inside the
app, never as a traceback. A "reproduce this" box shows the public-API call behind the view.
"""

from __future__ import annotations

import base64
import contextlib
import functools
import html
import io
import json
import threading
import traceback
from dataclasses import dataclass

import ipywidgets as W
import numpy as np

from . import checks
from .data import DISTRIBUTIONS
from .experiment import compare, resolve_variants
from .formats import FORMATS, format_info, hex_string, shortest_repr
from .ops.opspec import Params
from .ops.registry import get as get_op
from .ops.registry import ops as op_names
from .orders.registry import BLOCKS, orders_for
from .orders.tensor_core import ARCHS, verified
from .results import EXACT_LABEL, diff_values

__all__ = ["Explorer", "explorer"]

SIZES = [10**k * m for k in range(1, 8) for m in (1, 3)]  # 10 ... 3e7: a log slider
BACKEND_CHOICES = ("numpy", "emulated", "cupy", "replay")
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
EXPORTS = ("CSV", "PNG", "SVG")
VIEWS = ("errors", "A vs B", "sweep", "bits")
SOURCES = (("generated", "generated"), ("your arrays", "arrays"))  # the data-source control
UPLOADS = ".npy,.npz,.csv"
EXPLAINED_OPS = ("sum", "dot", "matmul", "mean")  # the ops fpx.explain takes
ORDER_OPS = ("sum", "dot", "matmul")


@dataclass(frozen=True)
class Preset:
    """One click that answers a common question: the op to use when the current one does not
    fit (``op``), the ops it fits, its variants, a format it needs (None: any), whether it
    shows NumPy's own row, and the view (None: A vs B for two variants, else errors)."""

    label: str
    op: str
    ops: tuple
    variants: tuple
    format: str | None = None
    numpy: bool = False
    view: str | None = None


PRESETS = {
    p.label: p
    for p in (
        # (a matmul shows it on 10,000 dot products at once)
        Preset(
            "FMA vs separate multiply-add",
            "matmul",
            ("dot", "matmul"),
            ("sequential", "sequential+fma"),
        ),
        Preset("sequential vs pairwise", "sum", ORDER_OPS, ("sequential", "pairwise")),
        Preset(
            "accumulator precision",
            "sum",
            ORDER_OPS,
            ("sequential@float16", "sequential@float32", "sequential@float64"),
        ),
        Preset(
            "CPU library vs GPU orders",
            "sum",
            ("sum", "dot"),
            ("numpy", "tree", "cub", "cupy-kernel", "exact"),
            numpy=True,
        ),
        # float32 inputs: np.matmul (numpy backend), a GPU's CUDA cores, its TF32 tensor cores
        Preset(
            "tensor cores vs CPU",
            "matmul",
            ("dot", "matmul"),
            ("sequential", "tensor-core(arch=a100)+tf32", "tensor-core(arch=h100)+tf32"),
            format="float32",
            numpy=True,
        ),
    )
}
TENSOR_CORE = "tensor-core"
TENSOR_CORE_LABEL = "GPU tensor cores"
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


def _canvas():
    """(figure, widget): an ipympl canvas if available, else an Agg figure + Image widget."""
    from ._optional import require

    Figure = require("matplotlib.figure", "fpx.explorer").Figure

    fig = Figure(figsize=FIGSIZE, layout="constrained")
    try:
        from ipympl.backend_nbagg import Canvas, FigureManager

        canvas = Canvas(fig)
        FigureManager(canvas, 0)
        canvas.header_visible = False
        canvas.toolbar_visible = "fade-in-fade-out"
        return fig, canvas
    except Exception:  # pragma: no cover - ipympl is part of the jupyter extra
        return fig, W.Image(format="png")


class _Cancelled(Exception):
    """Raised inside compare() by the app's progress callback when cancel was clicked."""


def _shows_errors(handler):
    """A change handler whose errors show in the app as a message (a control set to an
    invalid value from code, e.g. ``app.op.value = None``), never raised out of the observer;
    the next valid change works again."""

    @functools.wraps(handler)
    def wrapped(self, change):
        try:
            return handler(self, change)
        except Exception as e:
            self.comparison = None
            self.message.value = _error_html(e)
            self._log = traceback.format_exc()

    return wrapped


class Explorer(W.VBox):
    """The app. Attributes: one control per :func:`compare` argument (``op``, ``format``,
    ``n``, ``variants``, ``distribution``, ``seed``, ``backends``: numpy and emulated, plus
    cupy where a GPU is usable), ``source`` ("generated" or "arrays": your arrays by name,
    ``input_picks`` per input, ``observed`` results, ``upload``), ``comparison`` (the last
    result), ``explanation`` (:func:`fpexplore.explain` of the observed results, or None),
    ``figure`` (the matplotlib Figure), ``table``, ``snippet``, ``message``."""

    def __init__(
        self,
        op="sum",
        format="float32",
        n=None,
        variants=None,  # noqa: A002
        distribution="uniform",
        seed=0,
        backends=None,
        namespace=None,
        **op_params,
    ):
        from .backends import libraries

        installed = tuple(b for b in libraries.NAMES if libraries.status(b)[0])
        if backends is None:  # the real GPU side by side wherever there is one
            from .backends import has_gpu

            backends = ("numpy", "emulated", "cupy") if has_gpu() else ("numpy", "emulated")
        # every argument as given or a clear error: nothing clamped to a control's range
        checks.choice("op", op, list(op_names()))
        checks.choice("format", format, FORMATS)
        checks.choice("distribution", distribution, list(DISTRIBUTIONS))
        seed = checks.seed(seed)
        if n is not None and checks.integer("n", n, 1) > SIZES[-1]:
            raise ValueError(f"n={n}: the largest size the app offers is {SIZES[-1]:,}")
        backends = checks.name_list("backends", backends)
        for b in backends:
            checks.choice("backend", b, BACKEND_CHOICES + installed)
        if variants is not None:
            variants = checks.name_list("variants", variants)
        if "inputs" in op_params:  # compare's own data argument: not an op parameter here
            raise TypeError("fpx.explorer() got an unexpected keyword argument 'inputs'")
        if namespace is not None and not isinstance(namespace, dict):
            raise TypeError(
                f"namespace must be a dict of names to arrays, got {type(namespace).__name__}"
            )
        self._namespace = namespace  # None: IPython's user namespace, read when listed
        self._uploaded: dict = {}  # name -> (array, the code that loads it)
        if op_params:  # refused now, as compare() would refuse them, not later in the app
            compare(
                op,
                format=format,
                n=min(SIZES),
                variants=variants,
                backends=("emulated",),
                **op_params,
            )
        self.op_params = dict(op_params)
        self.comparison = None
        self.op = W.Dropdown(options=list(op_names()), value=op, description="op")
        self.format = W.Dropdown(options=list(FORMATS), value=format, description="format")
        if n is None:  # the op's own first size (matmul 100, adam_step 1000, sum 100,000)
            n = get_op(self.op.value).default_n
        self.n = W.SelectionSlider(  # a size between the slider's steps joins them
            options=sorted({*SIZES, int(n)}),
            value=int(n),
            description="n",
            continuous_update=False,
        )
        self.variants = W.SelectMultiple(description="variants", rows=8)
        self.distribution = W.Dropdown(
            options=list(DISTRIBUTIONS), value=distribution, description="data"
        )
        self.seed = W.BoundedIntText(value=seed, min=0, max=checks.MAX_SEED, description="seed")
        self.backends = W.SelectMultiple(
            options=BACKEND_CHOICES + installed,  # torch, jax, polars where installed
            value=tuple(backends),
            description="backend",
            rows=4,
        )
        self.threads = W.Dropdown(  # compare(threads=): the real CPU libraries' threads
            options=[("default", 0), ("1", 1), ("2", 2), ("4", 4), ("8", 8)],
            value=0,
            description="threads",
        )
        # the data: generated (n, distribution, seed) or your arrays by variable name (the
        # notebook's, or an uploaded file's), with observed results shown next to the rows
        self.source = W.Dropdown(options=SOURCES, value="generated", description="data from")
        self.input_picks: dict = {}  # the op's input name -> its Dropdown ("input x")
        self.inputs_box = W.VBox()
        self.observed = W.SelectMultiple(
            description="observed",
            rows=3,
            tooltip="results you computed elsewhere (a GPU's): rows next to the emulations",
        )
        self.upload = W.FileUpload(
            accept=UPLOADS, multiple=True, description="upload", layout=W.Layout(width="auto")
        )
        self.refresh = W.Button(
            description="refresh names",
            tooltip="list the notebook's arrays again",
            layout=W.Layout(width="auto"),
        )
        self.data_note = W.HTML()
        self.arrays_box = W.VBox(
            [
                self.inputs_box,
                self.observed,
                W.HBox([self.refresh, self.upload], layout=W.Layout(flex_flow="row wrap")),
                self.data_note,
            ],
            layout=W.Layout(display="none"),
        )
        self.explained = W.HTML()  # fpx.explain's verdict on the observed results
        self.explanation = None
        self.message = W.HTML()
        # work over a second: "computing pairwise (3 of 5)…" and a cancel button (in a kernel
        # the computation runs in a thread, so the button can be clicked while it runs)
        self.progress = W.HTML()
        self.cancel = W.Button(
            description="cancel",
            tooltip="stop this computation; the last finished view stays",
            layout=W.Layout(width="auto", display="none"),
        )
        self.cancel.on_click(self._cancel_clicked)
        self._generation = 0
        self._stop = threading.Event()
        self.banner = W.HTML()
        self.verdict = W.HTML()  # one line: the answer, computed from the comparison
        self.table = W.HTML(layout=W.Layout(width="100%"))
        self.table.add_class("fpx-tablebox")
        self.large = W.ToggleButton(
            value=False, description="large type", tooltip="bigger table and verdict (teaching)"
        )
        self.large.observe(self._large_changed, names="value")
        self.snippet = W.Textarea(layout=W.Layout(width="100%"), description="reproduce this")
        self.detect = W.Button(
            description="Which order did NumPy use?",
            layout=W.Layout(width="auto"),
            tooltip="run the order detective on NumPy's result",
        )
        self.detect_out = W.HTML()
        self.detect.on_click(self._detect)
        self.exports = {
            kind: W.Button(
                description=f"Export {kind}",
                layout=W.Layout(width="auto"),
                tooltip=f"the current {'table' if kind == 'CSV' else 'figure'} as {kind}",
            )
            for kind in EXPORTS
        }
        for kind, button in self.exports.items():
            button.on_click(lambda _b, kind=kind: self.export(kind))
        self.export_out = W.HTML()
        self.copy = W.HTML()
        # the variant builder: each control is one part of a variant spec (fpx.parse_spec)
        small = W.Layout(width="auto")
        self.b_name = W.Dropdown(description="build")
        self.b_fma = W.Checkbox(value=False, description="FMA", indent=False, layout=small)
        self.b_acc = W.Dropdown(
            options=[("accumulator: data's", "")] + [(f"@{f}", f) for f in FORMATS],
            layout=small,
        )
        self.b_block = W.Dropdown(
            options=[("block: default", 0)] + [(f"block={b}", b) for b in BLOCKS], layout=small
        )
        self.b_rounding = W.Dropdown(
            options=[("inputs: as they are", "")]
            + [(f"+{r}", r) for r in ("tf32", "bfloat16", "float8_e4m3", "float8_e5m2")],
            layout=small,
        )
        # the tensor cores' architecture (the order tensor-core, "GPU tensor cores" above)
        self.b_arch = W.Dropdown(
            options=[(f"arch={a}", a) for a in ARCHS],
            value="h100",
            description="arch",
        )
        self.b_name.observe(lambda _c: self._builder_fits(), names="value")
        self.b_arch.observe(lambda _c: self._builder_fits(), names="value")
        self.b_add = W.Button(description="add", button_style="info", layout=small)
        self.b_remove = W.Button(description="remove selected", layout=small)
        self.b_add.on_click(lambda _b: self.add_variant(self.built_spec()))
        self.b_remove.on_click(lambda _b: self.remove_variants(self.variants.value))
        self.presets = {
            label: W.Button(description=label, layout=small, tooltip=", ".join(p.variants))
            for label, p in PRESETS.items()
        }
        for label, button in self.presets.items():
            button.on_click(lambda _b, label=label: self.apply_preset(label))
        # what the figure shows: errors against the exact answer, two results against each
        # other, error against n over seeds, or the bits of one result next to the exact one
        self.view = W.ToggleButtons(
            options=VIEWS, value="errors", description="view", style={"button_width": "auto"}
        )
        self.pick_a = W.Dropdown(description="A", layout=W.Layout(width="270px"))
        self.pick_b = W.Dropdown(description="B", layout=W.Layout(width="270px"))
        self.sweep_unit = W.ToggleButtons(  # the sweep's y axis
            options=[("ulps", "ulps"), ("absolute error", "abs")],
            value="ulps",
            description="error in",
            style={"button_width": "auto"},
            layout=W.Layout(display="none"),
        )
        self.view_out = W.HTML()
        self._extra: list[str] = []  # specs built or given beyond the op's own variants
        self._want_picks: list[tuple] = []  # A and B a preset asks for (keys of results)
        self.figure, self.canvas = _canvas()
        self._set_variant_options(variants)
        wrap = W.Layout(flex_flow="row wrap", width="100%")
        side = W.VBox(  # every control in one column beside the figure (projector first)
            [
                self.op,
                self.source,
                self.arrays_box,
                self.format,
                self.n,
                self.distribution,
                self.seed,
                self.backends,
                self.threads,
                self.variants,
                self.b_name,
                self.b_arch,
                W.HBox([self.b_block, self.b_fma], layout=wrap),
                W.HBox([self.b_rounding, self.b_acc], layout=wrap),
                W.HBox([self.b_add, self.b_remove], layout=wrap),
                W.HTML("<b>presets</b>"),
                W.HBox(list(self.presets.values()), layout=wrap),
            ],
            layout=W.Layout(width=SIDE, min_width=SIDE),
        )
        side.add_class("fpx-side")
        main = W.VBox(
            [
                W.HBox([self.view, self.large], layout=wrap),
                W.HBox([self.pick_a, self.pick_b, self.sweep_unit], layout=wrap),
                self.verdict,
                self.explained,
                self.message,
                W.HBox([self.progress, self.cancel]),
                self.banner,
                self.canvas,
                self.view_out,
                self.table,
            ],
            layout=W.Layout(flex="1 1 auto", min_width="0"),
        )
        super().__init__(
            [
                W.HTML(STYLE),
                W.HBox([side, main]),
                W.HBox([*self.exports.values(), self.export_out], layout=wrap),
                W.VBox([self.detect, self.detect_out]),
                self.snippet,
                self.copy,
            ]
        )
        self.add_class("fpx-explorer")
        self._busy = False
        for w in (
            self.n,
            self.variants,
            self.distribution,
            self.seed,
            self.backends,
            self.threads,
        ):
            w.observe(self._changed, names="value")
        self.format.observe(self._format_changed, names="value")
        self.op.observe(self._op_changed, names="value")
        self.source.observe(self._source_changed, names="value")
        self.observed.observe(self._data_changed, names="value")
        self.upload.observe(self._uploaded_files, names="value")
        self.refresh.on_click(lambda _b: self._data_changed(None))
        self._build_input_picks()
        for w in (self.view, self.pick_a, self.pick_b, self.sweep_unit):
            w.observe(self._view_changed, names="value")
        loop = _running_loop()
        if loop is not None and self._announce_compiling(self.arguments()):
            # in a kernel with cold kernels: compute once the app is on screen, so the
            # "compiling kernels" note shows instead of a cell that seems to hang
            loop.call_later(0.05, self.update)
        else:
            self.update()

    # ------------------------------------------------------------------ state -> compare()

    @contextlib.contextmanager
    def _quiet(self):
        """Set several controls without each change recomputing the view."""
        self._busy = True
        try:
            yield
        finally:
            self._busy = False

    def _set_variant_options(self, selected=None):
        """Offer the variants that exist for the op and format, plus the specs built or given
        (each as its canonical spelling); keep the selection where it is still valid."""
        from .spec import parse_spec

        op_spec = get_op(self.op.value)
        base = op_spec.variants_for(self.format.value)
        if selected is not None:
            keep = []
            for v in selected:  # given specs join the list (an invalid one: the error shows)
                text = str(parse_spec(v, self.op.value))
                keep.append(text)
                if text not in base and text not in self._extra:
                    self._extra.append(text)
            selected = keep
        opts = [e for e in self._extra if e not in base] + base  # built specs on top: seen
        if selected is None:
            selected = [v for v in self.variants.value if v in opts] or None
        chosen = resolve_variants(self.op.value, selected, self.format.value)
        with self._quiet():
            _set_choices(self.variants, opts, tuple(v for v in chosen if v in opts))
            names = self._builder_names()
            keep = self.b_name.value if self.b_name.value in [v for _, v in names] else None
            _set_choices(self.b_name, names, keep if keep is not None else names[0][1])
        self._builder_fits()

    def _builder_names(self) -> list:
        """The builder's variants: the op's for the format, and the orders that take the
        format through an input rounding (the tensor cores on float32: +tf32)."""
        names = list(get_op(self.op.value).variants_for(self.format.value))
        if self.op.value in ORDER_OPS:
            extra = orders_for(self.op.value, self.format.value, rounded=True)
            names += [n for n in extra if n not in names]
        return [(TENSOR_CORE_LABEL if n == TENSOR_CORE else n, n) for n in names]

    def _builder_fits(self) -> None:
        """The arch control applies to the tensor cores only (its tooltip says what the model
        is checked against); they read float32 data through an input rounding (+tf32)."""
        tc = self.b_name.value == TENSOR_CORE
        self.b_arch.disabled = not tc
        self.b_arch.tooltip = verified(self.b_arch.value) if tc else "GPU tensor cores only"
        for w in (self.b_fma, self.b_acc, self.b_block):
            w.disabled = tc  # no fma, accumulator or block setting on the tensor cores
        if tc and self.format.value == "float32" and not self.b_rounding.value:
            self.b_rounding.value = "tf32"

    def built_spec(self) -> str:
        """The variant spec the builder's controls describe, e.g. "tree(block=256)+tf32"."""
        text = self.b_name.value or ""
        tc = text == TENSOR_CORE
        params = [f"arch={self.b_arch.value}"] if tc else []
        if self.b_block.value and not tc:
            params.append(f"block={self.b_block.value}")
        if params:
            text += f"({', '.join(params)})"
        if self.b_fma.value and not tc:
            text += "+fma"
        if self.b_rounding.value:
            text += f"+{self.b_rounding.value}"
        if self.b_acc.value and not tc:
            text += f"@{self.b_acc.value}"
        return text

    def add_variant(self, spec: str) -> None:
        """Add a variant spec to the list and select it (an invalid one: the error shows)."""
        from .spec import parse_spec

        try:
            text = str(parse_spec(spec, self.op.value))
        except ValueError as e:
            self.message.value = _error_html(e)
            return
        selected = self.variants.value  # (new options reset a selection)
        if text not in self.variants.options:
            self._extra.append(text)
        with self._quiet():
            opts = list(self.variants.options)
            _set_choices(
                self.variants,
                opts if text in opts else [text, *opts],  # on top, where the list shows it
                tuple(dict.fromkeys([*selected, text])),
            )
            self.b_fma.value = False  # the next spec starts plain
        self.update()

    def remove_variants(self, specs) -> None:
        """Take these variants out of the selection (built specs leave the list too)."""
        specs = set(specs)
        self._extra = [e for e in self._extra if e not in specs]
        self._set_variant_options([v for v in self.variants.value if v not in specs])
        self.update()

    def apply_preset(self, label: str) -> None:
        """One of PRESETS: the op it needs (kept if it fits) and its variants, one redraw."""
        from .spec import parse_spec

        if label not in PRESETS:
            raise ValueError(f"unknown preset {checks.shown(label)}; presets: {', '.join(PRESETS)}")
        preset = PRESETS[label]
        if self.op.value not in preset.ops:
            with self._quiet():
                self.op.value = preset.op
            self._reset_for_op()
        with self._quiet():
            if preset.format:
                self.format.value = preset.format
        offered = {v for _, v in self._builder_names()}
        specs = [parse_spec(v, self.op.value) for v in preset.variants]
        chosen = [str(sp) for sp in specs if sp.name in offered]
        with self._quiet():
            if preset.numpy and "numpy" not in self.backends.value:
                self.backends.value = ("numpy", *self.backends.value)
            # two variants: show them against each other; more: their errors
            self.view.value = preset.view or ("A vs B" if len(chosen) == 2 else "errors")
        self._set_variant_options(chosen)
        self._want_picks = [(v, "emulated") for v in chosen][:2]  # results' keys
        self.update()

    @_shows_errors
    def _op_changed(self, change):
        if self._busy:
            return
        self._reset_for_op()
        self._set_variant_options(None)
        self._follow_data_format()
        self.update()

    def _reset_for_op(self) -> None:
        """A new op: no selection, no built specs, the op's own first size (a matmul of 10^5
        would be refused), set without recomputing."""
        with self._quiet():
            self.variants.value = ()
            self.n.value = _nearest(get_op(self.op.value).default_n)
        self._extra = []  # specs belong to an op
        self._build_input_picks()  # (its inputs: sum x; dot a, b; matmul A, B)

    @_shows_errors
    def _format_changed(self, change):
        if self._busy:
            return
        self._set_variant_options(None)
        self.update()

    def _changed(self, change):
        if not self._busy:
            self.update()

    def _large_changed(self, change):
        """Large type for teaching: bigger table, verdict and diff (a CSS class)."""
        (self.add_class if change["new"] else self.remove_class)("fpx-large")

    def _view_changed(self, change):
        picks = change["owner"] in (self.pick_a, self.pick_b)
        if picks and self.view.value not in ("A vs B", "bits"):
            return  # the errors and sweep views do not show A and B
        if change["owner"] is self.sweep_unit and self.view.value != "sweep":
            return
        if not self._busy and self.comparison is not None:
            try:
                self._draw(self.comparison)
                self._show_snippet(self.comparison)
            except Exception as e:  # shown in the app, never raised into the notebook
                self.message.value = _error_html(e)

    # ------------------------------------------------------------------ your arrays

    def names(self) -> dict:
        """The arrays the app offers by name: the namespace's variables (IPython's user
        namespace in a kernel, else the dict given as ``namespace``) that hold NumPy arrays
        or scalars, then the uploaded files' arrays ("data.npz[x]")."""
        ns = self._namespace if self._namespace is not None else _user_namespace()
        found = {k: v for k, v in ns.items() if not k.startswith("_") and _is_array(v)}
        found.update({k: a for k, (a, _code) in self._uploaded.items()})
        return found

    def _build_input_picks(self) -> None:
        """One dropdown per input of the op (sum: "input x"; dot: a, b; matmul: A, B)."""
        for w in self.input_picks.values():
            w.close()
        self.input_picks = {
            k: W.Dropdown(description=f"input {k}") for k, _nd in _input_names(self.op.value)
        }
        for w in self.input_picks.values():
            w.observe(self._data_changed, names="value")
        self.inputs_box.children = list(self.input_picks.values())
        self._list_names()

    def _list_names(self) -> None:
        """Offer the arrays by name (with their format and shape) to each input and to the
        observed results; keep a choice that is still there, else pick the array named as the
        input (x for sum's x), else none."""
        arrays = self.names()
        opts = [(f"{k}: {_describe(v)}", k) for k, v in arrays.items()]
        with self._quiet():
            for k, w in self.input_picks.items():
                keep = w.value if w.value in arrays else (k if k in arrays else "")
                _set_choices(w, [("choose an array", ""), *opts], keep)
            _set_choices(self.observed, opts, tuple(v for v in self.observed.value if v in arrays))
        self.data_note.value = (
            ""
            if arrays
            else "<small>no arrays yet: define one in the notebook (then refresh names) or "
            "upload a .npy, .npz or .csv file</small>"
        )

    @_shows_errors
    def _source_changed(self, change):
        """Your arrays: n, distribution and seed describe generated data, so they hide; the
        format is the arrays' own (shown, not changeable)."""
        arrays = self.source.value == "arrays"
        self.arrays_box.layout.display = None if arrays else "none"
        for w in (self.n, self.distribution, self.seed):
            w.layout.display = "none" if arrays else None
        self.format.disabled = arrays
        if not arrays:
            self.explained.value = ""
        self._data_changed(None)

    @_shows_errors
    def _data_changed(self, change):
        """An input, the observed results or the names changed: the format follows the
        arrays' (the variants offered with it), then recompute."""
        if self._busy:
            return
        if change is None:  # listed again (refresh, a switch of source, an upload)
            self._list_names()
        self._follow_data_format()
        self.update()

    def _follow_data_format(self) -> None:
        """With your arrays the format is theirs: set it, and the variants offered with it."""
        if self.source.value != "arrays":
            return
        fmt = self._data_format()
        if fmt is not None and fmt != self.format.value:
            with self._quiet():
                self.format.value = fmt
            self._set_variant_options(None)

    def _data_format(self) -> str | None:
        """The format of the first chosen input that has one (None: none chosen yet)."""
        arrays = self.names()
        for w in self.input_picks.values():
            try:
                return format_info(np.asarray(arrays[w.value]).dtype).name
            except (KeyError, TypeError, ValueError):
                continue
        return None

    @_shows_errors
    def _uploaded_files(self, change):
        """Uploaded .npy, .npz and .csv files: their arrays join the names offered."""
        for f in self.upload.value:
            self._uploaded.update(read_upload(f["name"], bytes(f["content"])))
        self._data_changed(None)

    def user_inputs(self) -> dict:
        """The op's inputs from the arrays chosen by name, as ``compare(inputs=)`` takes
        them; a ValueError that names the input and the variable where one is missing, not
        in a floating-point format, or of the wrong shape."""
        names = _input_names(self.op.value)
        if not names:
            raise ValueError(
                f"{self.op.value} takes numbers, not only arrays: choose generated data for it"
            )
        arrays = self.names()
        chosen = {k: (w.value, arrays.get(w.value)) for k, w in self.input_picks.items()}
        return check_user_arrays(self.op.value, names, chosen)

    def observed_results(self) -> dict:
        """The observed results chosen by name (results computed elsewhere: a GPU's)."""
        arrays = self.names()
        out = {}
        for name in self.observed.value:
            v = np.asarray(arrays[name])
            try:
                format_info(v.dtype)
            except (TypeError, ValueError):
                raise ValueError(
                    f"observed {name} is {v.dtype}: a result in float16, bfloat16, float32 "
                    "or float64 is needed"
                ) from None
            out[name] = v
        return out

    def _data_code(self) -> tuple[dict, bool]:
        """The code of each chosen input (its variable name, or the load of an uploaded
        file), and whether that code needs NumPy."""
        code, numpy = {}, False
        for k, w in self.input_picks.items():
            if w.value in self._uploaded:
                code[k], numpy = self._uploaded[w.value][1], True
            else:
                code[k] = w.value
        return code, numpy

    def _user_snippet(self, cmp) -> str:
        """The public-API code of a comparison of your arrays (by their names) and of the
        explanation of the observed results."""
        code, numpy = self._data_code()
        args = [repr(cmp.op), "inputs=inputs"]
        args += [f"{k}={v!r}" for k, v in cmp.params.items() if k != "inputs"]
        lines = ["import fpexplore as fpx"] + (["import numpy as np"] if numpy else [])
        lines += ["", "inputs = {" + ", ".join(f"{k!r}: {c}" for k, c in code.items()) + "}"]
        lines += ["cmp = fpx.compare(" + ", ".join(args) + ")", "cmp"]
        if self.explanation is not None:
            given = ", ".join(
                f"{label!r}: {label}"
                if label in self.observed.value
                else f"{label!r}: cmp.results[{_key_of(cmp, label)!r}]"
                for label in self.explanation.results
            )
            lines.append(f"fpx.explain({cmp.op!r}, inputs, {{{given}}})")
        return "\n".join(lines)

    def arguments(self) -> dict:
        """The :func:`compare` keyword arguments the controls currently describe: with your
        arrays ``inputs=`` (the arrays chosen by name), no n, distribution or seed."""
        if self.source.value == "arrays":
            return dict(
                op=self.op.value,
                inputs=self.user_inputs(),
                variants=list(self.variants.value),
                backends=tuple(self.backends.value),
                **({"threads": int(self.threads.value)} if self.threads.value else {}),
                **self.op_params,
            )
        return dict(
            op=self.op.value,
            format=self.format.value,
            n=int(self.n.value),
            variants=list(self.variants.value),
            distribution=self.distribution.value,
            seed=int(self.seed.value),
            backends=tuple(self.backends.value),
            **({"threads": int(self.threads.value)} if self.threads.value else {}),
            **self.op_params,
        )

    def update(self):
        """Recompute and redraw; any error becomes a message in the app. In a kernel (a running
        event loop) the computation runs in a thread, reporting its progress, so that the
        cancel button works and a newer request replaces an older one; elsewhere (plain
        Python, the tests) it runs here and now."""
        self._stop.set()  # a computation still running stops at its next step (dropped)
        self._generation += 1
        generation, stop = self._generation, threading.Event()
        self._stop = stop
        try:
            args = self.arguments()
            if "inputs" in args:  # the observed results travel with the request
                args["observed"] = self.observed_results()
            if not args["backends"]:
                raise ValueError("choose at least one backend")
            if "emulated" in args["backends"] and not args["variants"]:
                raise ValueError("choose at least one variant")
            # a trait change reaches the browser at once: the note shows during the compile,
            # replaced below by "" (or by the error)
            self._announce_compiling(args)
        except Exception as e:  # shown in the app, never raised into the notebook
            self._finish(generation, None, e, traceback.format_exc())
            return
        loop = _running_loop()
        if loop is None:
            self._compute(args, generation, stop, None)
            return
        self.cancel.layout.display = None
        threading.Thread(
            target=self._compute, args=(args, generation, stop, loop), daemon=True
        ).start()

    def _cancel_clicked(self, _button=None) -> None:
        self._stop.set()

    def _compute(self, args, generation: int, stop, loop) -> None:
        """compare(**args) with progress; the outcome goes to _finish (on the loop's thread)."""

        def step(done, total, label):
            if stop.is_set():
                raise _Cancelled
            if generation == self._generation:
                self.progress.value = (
                    f'<div class="fpx-progress">computing {html.escape(label)} '
                    f"({done + 1} of {total})…</div>"
                )

        args = dict(args)
        observed = args.pop("observed", None)
        try:
            cmp = compare(**args, progress=step)
            extra = None
            if observed:
                if generation == self._generation:
                    self.progress.value = (
                        '<div class="fpx-progress">explaining the observed results (fpx.explain '
                        "searches the orders that reproduce each)…</div>"
                    )
                extra = observe(cmp, observed)
                if stop.is_set():
                    raise _Cancelled
            outcome = (cmp, None, None, extra)
        except _Cancelled:
            outcome = (None, _Cancelled(), None, None)
        except Exception as e:
            outcome = (None, e, traceback.format_exc(), None)
        if loop is None:
            self._finish(generation, *outcome)
        else:
            loop.call_soon_threadsafe(self._finish, generation, *outcome)

    def _finish(self, generation: int, cmp, error, log, extra=None) -> None:
        """Show a computation's outcome, unless a newer request replaced it; ``extra``: the
        observed results' rows and their explanation (:func:`observe`)."""
        if generation != self._generation:
            return
        self.progress.value = ""
        self.cancel.layout.display = "none"
        if isinstance(error, _Cancelled):  # the last finished view stays on screen
            self.message.value = (
                '<div class="fpx-cancelled" style="background:#fff3cd;padding:6px 10px;'
                'border-left:4px solid #E69F00">cancelled: the view shows the last finished '
                "result</div>"
            )
            return
        if error is None:
            try:
                self._set_picks(cmp)
                self._draw(cmp)
            except Exception as e:
                error, log = e, traceback.format_exc()
        if error is not None:  # shown in the app, never raised into the notebook
            self.comparison = None
            self.explanation = None
            self.verdict.value = self.explained.value = ""
            self.message.value = _error_html(error)
            self._log = log
            return
        self.comparison = cmp
        self.message.value = ""
        self.banner.value = "".join(
            f'<div class="fpx-banner" style="background:#fff3cd;padding:4px 8px;'
            f'border-left:4px solid #E69F00">{html.escape(m)}</div>'
            for m in cmp.messages
        )
        self.verdict.value = f'<div class="fpx-verdict"><b>{html.escape(verdict(cmp))}</b></div>'
        shown = cmp.formatted()
        shown["unit"] = _units(cmp)
        rows, self.explanation = extra if extra is not None else ([], None)
        if rows:  # the observed results, next to the emulations
            import pandas as pd

            note = shown.attrs["note"]
            shown = pd.DataFrame([*shown.to_dict("records"), *rows]).fillna("")
            shown.attrs["note"] = note
        self.explained.value = (
            ""
            if self.explanation is None
            else '<div class="fpx-explain"><b>fpx.explain:</b> '
            f"{html.escape(self.explanation.verdict)}</div>"
        )
        cols = [c for c in TABLE_COLUMNS if c in shown]
        self.table.value = (
            shown[cols].to_html(index=False, border=0, classes="fpx-table")
            + f'<p class="fpx-note"><small>{html.escape(shown.attrs["note"])}</small></p>'
        )
        self._show_snippet(cmp)
        self.export_out.value = ""
        self.detect.disabled = not (
            cmp.op in ("sum", "dot", "matmul") and any(b == "numpy" for _, b in cmp.results)
        )
        self.detect_out.value = ""

    def _announce_compiling(self, args) -> bool:
        """Show "compiling kernels for <format> (first use only)…" where the view's kernels are
        neither compiled in this process nor in numba's disk cache; True if so."""
        if "emulated" not in args["backends"]:
            return False
        from .warmup import is_cold  # imports numba, as compare() does anyway

        fmt = args.get("format", self.format.value)  # (your arrays: theirs)
        if not is_cold(args["op"], fmt, args["variants"], self.op_params):
            return False
        self.message.value = (
            '<div class="fpx-compiling" style="background:#e8f1fa;'
            'padding:6px 10px;border-left:4px solid #0072B2">compiling kernels '
            f"for {html.escape(fmt)} (first use only)…</div>"
        )
        return True

    def _detect(self, _button=None):
        """The order detective on NumPy's own function: :func:`fpexplore.explain_numpy` on
        the inputs of the current view (plus its seeded probes for sum and dot)."""
        from .detective import explain_numpy

        cmp = self.comparison
        try:
            if cmp is None or cmp.op not in ("sum", "dot", "matmul"):
                raise ValueError("the order detective explains sum, dot and matmul results")
            if not any(b == "numpy" for _, b in cmp.results):
                raise ValueError("select the numpy backend to explain NumPy's result")
            if cmp.op == "matmul" and cmp.n > 128:
                raise ValueError("the detective tries hundreds of orders: use n <= 128 here")
            self.detect_out.value = "<p>searching the orders…</p>"
            df = explain_numpy(cmp.op, cmp.inputs)
            cols = ["variant", "exact", "exact_matches", "observations", "max_ulp"]
            probes = "" if cmp.op == "matmul" else " and 5 seeded probes"
            self.detect_out.value = (
                f"<p><b>{html.escape(df.attrs['function'])}</b> on this input{probes}: "
                f"{html.escape(df.attrs['note'])}</p>"
                + df[cols].to_html(index=False, border=0, classes="fpx-detective")
            )
        except Exception as e:
            self.detect_out.value = _error_html(e)

    def export(self, kind: str) -> bytes:
        """The current table as CSV, or the figure as PNG or SVG: returns the file's bytes and
        shows a download link for it in the app (a teacher pastes them into slides)."""
        try:
            if kind not in EXPORTS:
                raise ValueError(
                    f"unknown export {checks.shown(kind)}; choose one of {', '.join(EXPORTS)}"
                )
            cmp = self.comparison
            if cmp is None:
                raise ValueError("nothing to export: the view has no result")
            if kind == "CSV":
                data = cmp.table.to_csv(index=False).encode()
                mime = "text/csv"
            else:
                buf = io.BytesIO()
                self.figure.savefig(buf, format=kind.lower(), dpi=150)
                data = buf.getvalue()
                mime = "image/png" if kind == "PNG" else "image/svg+xml"
            name = f"fpexplore-{cmp.op}-{cmp.format}-n{cmp.n}.{kind.lower()}"
            self.export_out.value = (
                f'<a class="fpx-download" download="{name}" '
                f'href="data:{mime};base64,{base64.b64encode(data).decode()}">'
                f"download {html.escape(name)} ({len(data) / 1024:.0f} KiB)</a>"
            )
            return data
        except Exception as e:
            self.export_out.value = _error_html(e)
            return b""

    def _set_picks(self, cmp) -> None:
        """A and B offer the current results (their values are the results' keys, (variant,
        backend)); keep the choice where it is still there."""
        keys = list(cmp.results)
        if not keys:
            raise ValueError(
                "no results to show: " + ("; ".join(cmp.messages) or "choose a backend")
            )
        a, b = self.pick_a.value, self.pick_b.value
        if all(w in keys for w in self._want_picks) and len(self._want_picks) == 2:
            a, b = self._want_picks  # a preset's pair
        self._want_picks = []
        a = a if a in keys else keys[0]
        fallback = keys[1] if len(keys) > 1 else keys[0]
        options = [(_label(k), k) for k in keys]
        with self._quiet():
            _set_choices(self.pick_a, options, a)
            _set_choices(self.pick_b, options, b if b in keys and b != a else fallback)

    def view_code(self) -> str:
        """The public-API line that draws the current view from ``cmp``."""
        a, b = (_label(k) if k else k for k in (self.pick_a.value, self.pick_b.value))
        if self.view.value == "A vs B":
            return f"cmp.diff({a!r}, {b!r}).plot()"
        if self.view.value == "bits":
            return f"cmp.diff({EXACT_LABEL!r}, {a!r}).plot('bits')  # the exact value and A"
        if self.view.value == "sweep":
            if self.source.value == "arrays":
                return "# the sweep view draws generated data of each size"
            kw = self.sweep_arguments()
            op = kw.pop("op")
            sw = f"fpx.sweep({op!r}, " + ", ".join(f"{k}={v!r}" for k, v in kw.items()) + ")"
            if self.sweep_unit.value == "abs":
                return sw + ".plot()"
            return f"fpx.plots.plot_sweep({sw}, unit='ulps')"
        return "cmp.plot('hist')" if self._matmul_errors() else "cmp.plot()"

    def _matmul_errors(self) -> bool:
        """The errors view of a matrix result: every result's ulp histogram (one result's
        heatmap would hide the others)."""
        cmp = self.comparison
        return self.view.value == "errors" and cmp is not None and cmp.op == "matmul"

    def sweep_arguments(self) -> dict:
        """The :func:`fpexplore.sweep` keyword arguments of the sweep view: the controls'
        compare() arguments, sizes by decades up to n, five seeds."""
        kw = self.arguments()
        kw["sizes"] = _sweep_sizes(kw.pop("n"))
        kw["seeds"] = 5
        return kw

    def _show_snippet(self, cmp) -> None:
        user = cmp.params.get("inputs") is not None
        code = (self._user_snippet(cmp) if user else cmp.snippet()) + "\n" + self.view_code()
        self.snippet.value = code
        self.snippet.rows = code.count("\n") + 2  # the whole snippet, no scrolling
        self.copy.value = _copy_button(code)

    def _draw(self, cmp):
        fig = self.figure
        fig.clear()
        ax = fig.add_subplot()
        self.view_out.value = ""
        view = self.view.value
        if view == "errors":
            cmp.plot("hist" if cmp.op == "matmul" else "auto", ax=ax)
        elif view == "A vs B":
            d = cmp.diff(self.pick_a.value, self.pick_b.value)
            d.plot(ax=ax)
            self.view_out.value = (
                f'<p class="fpx-unit">unit: ulps of {d.format}, from A to B (0 = bitwise '
                "equal)</p>" + d._repr_html_()
            )
        elif view == "bits":
            d = cmp.diff(EXACT_LABEL, self.pick_a.value) if np.ndim(cmp.reference) == 0 else None
            if d is None:  # an array result: its element farthest from the exact one
                d = _worst_element(cmp, self.pick_a.value)
            d.plot("bits", ax=ax)
            k = d.summary["max_abs_ulp"]
            self.view_out.value = (
                f'<p class="fpx-unit">unit: the bits of {d.format} (sign, exponent, '
                f"significand; ▲ marks a bit that differs); A is {_ulps(k)} of {d.format} "
                "from the exact value</p>" + d._repr_html_()
            )
        elif self.source.value == "arrays":  # the sweep generates data of each size
            ax.axis("off")
            ax.text(
                0.5,
                0.5,
                "the sweep draws generated data:\nchoose data from: generated",
                ha="center",
                va="center",
            )
        else:
            from .experiment import sweep
            from .plots import plot_sweep

            kw = self.sweep_arguments()
            plot_sweep(sweep(kw.pop("op"), progress=False, **kw), ax=ax, unit=self.sweep_unit.value)
        if isinstance(self.canvas, W.Image):
            buf = io.BytesIO()
            fig.savefig(buf, format="png", dpi=90)
            self.canvas.value = buf.getvalue()
        else:
            self.canvas.draw_idle()
        # A and B: only where the view uses them
        show = "flex" if view in ("A vs B", "bits") else "none"
        self.pick_a.layout.display = show
        self.pick_b.layout.display = show if view == "A vs B" else "none"
        self.sweep_unit.layout.display = "flex" if view == "sweep" else "none"


def _set_choices(widget, options, value) -> None:
    """New options and a value for a selection widget, sent to the browser in one message.

    Set one after the other, the browser got the new option labels while the old selection
    index was still set; a SelectMultiple whose index pointed past the new, shorter list
    logged "Error setting state: Cannot set properties of undefined (setting 'selected')".
    """
    with widget.hold_sync():
        widget.options = options
        widget.value = value


def _user_namespace() -> dict:
    """IPython's user namespace (the notebook's variables) where the app runs in a kernel,
    else an empty dict."""
    try:
        from IPython import get_ipython
    except ImportError:  # pragma: no cover - IPython comes with ipywidgets
        return {}
    shell = get_ipython()
    return getattr(shell, "user_ns", {}) if shell is not None else {}


def _is_array(v) -> bool:
    """A NumPy array or scalar of numbers (any dtype: a wrong one gets its message)."""
    return isinstance(v, (np.ndarray, np.generic)) and np.asarray(v).dtype.kind not in "OSUMmb"


def _describe(v) -> str:
    a = np.asarray(v)
    return f"{a.dtype}, shape {a.shape}" if a.ndim else f"{a.dtype} scalar"


@functools.cache
def _input_names(op: str) -> tuple:
    """The op's inputs as (name, ndim) in order (sum: x; dot: a, b; matmul: A, B); empty
    where an input is not an array (linspace's start, stop and num; adam_step's hyper)."""
    probe = get_op(op).inputs(4, "float32", "uniform", 0, Params())
    names = [k for k in probe if k != "format"]
    if not all(isinstance(probe[k], np.ndarray) for k in names):
        return ()
    return tuple((k, probe[k].ndim) for k in names)


def check_user_arrays(op: str, names: tuple, chosen: dict) -> dict:
    """The op's inputs ``{name: array}`` from ``chosen`` (input name -> (variable name,
    value)), or a ValueError that says which input and which variable is wrong: none chosen,
    not a floating-point format, two formats, the wrong number of dimensions, shapes that do
    not fit together (dot: one length; matmul: A's columns are B's rows)."""
    takes = f"{op} takes {', '.join(k for k, _ in names)}"
    out, var = {}, {}
    for k, ndim in names:
        name, value = chosen.get(k, ("", None))
        if not name or value is None:
            raise ValueError(f"{takes}: choose an array for {k}")
        a = value if isinstance(value, np.ndarray) else np.asarray(value)
        try:
            format_info(a.dtype)
        except (TypeError, ValueError):
            raise ValueError(
                f"{takes}: {k} = {name} is {a.dtype}; the formats are {', '.join(FORMATS)} "
                f"(convert it, e.g. {name}.astype(np.float32))"
            ) from None
        if a.ndim != ndim:
            raise ValueError(f"{takes}: {k} must be {ndim}-D; {k} = {name} has shape {a.shape}")
        if a.size == 0:
            raise ValueError(f"{takes}: {k} = {name} is empty")
        out[k], var[k] = a, name
    fmts = {k: format_info(a.dtype).name for k, a in out.items()}
    if len(set(fmts.values())) > 1:
        raise ValueError(
            f"{takes} in one format; "
            + ", ".join(f"{k} = {var[k]} is {f}" for k, f in fmts.items())
            + f" (convert one, e.g. {var[names[-1][0]]}.astype(np.{fmts[names[0][0]]}))"
        )
    shapes = ", ".join(f"{k} = {var[k]} has shape {a.shape}" for k, a in out.items())
    if op == "matmul":
        A, B = out["A"], out["B"]
        if A.shape[1] != B.shape[0]:
            raise ValueError(f"{takes}: A's columns must be B's rows; {shapes}")
    elif op == "cdist":
        if out["x"].shape[1] != out["y"].shape[1]:
            raise ValueError(f"{takes}: points of one dimension (columns); {shapes}")
    elif len({a.shape for a in out.values()}) > 1:
        raise ValueError(f"{takes} of one shape; {shapes}")
    return out


def read_upload(name: str, content: bytes) -> dict:
    """The arrays of an uploaded file by the names the app lists them under, each with the
    code that loads it: a .npy file its one array ("data.npy"), a .npz file each of its
    arrays ("data.npz[x]"), a .csv file its numbers as float64 (one column or one row: 1-D,
    else 2-D; a header row is skipped)."""
    low = name.lower()
    try:
        if low.endswith(".npy"):
            return {name: (np.load(io.BytesIO(content), allow_pickle=False), f"np.load({name!r})")}
        if low.endswith(".npz"):
            with np.load(io.BytesIO(content), allow_pickle=False) as z:
                return {f"{name}[{k}]": (z[k], f"np.load({name!r})[{k!r}]") for k in z.files}
        if low.endswith(".csv"):
            text = content.decode("utf-8")
            skip = 0
            first = text.lstrip().split("\n", 1)[0]
            if any(c.isalpha() and c not in "eEinfaINFA" for c in first):
                skip = 1  # a header row
            a = np.loadtxt(io.StringIO(text), delimiter=",", skiprows=skip, ndmin=2)
            a = a.reshape(-1) if 1 in a.shape else a
            code = f"np.loadtxt({name!r}, delimiter=',', skiprows={skip}, ndmin=2)"
            return {name: (a, code + (".reshape(-1)" if a.ndim == 1 else ""))}
    except (ValueError, OSError, UnicodeDecodeError) as e:
        raise ValueError(f"cannot read {name}: {e}") from None
    raise ValueError(f"{name}: upload a .npy, .npz or .csv file")


def observe(cmp, observed: dict) -> tuple[list, object]:
    """The rows of the observed results (computed elsewhere, e.g. on a GPU) as
    ``cmp.formatted()`` shows rows, each measured against the exact result in its own
    format, and :func:`fpexplore.explain` of them (sum, dot, matmul, mean; else None) with
    NumPy's result beside them (or the first result, where they are one)."""
    from .metrics import summarize

    shape = np.shape(cmp.reference)
    for name, v in observed.items():
        if v.shape != shape:
            what = "a scalar" if shape == () else f"shape {shape}"
            raise ValueError(
                f"observed {name} has shape {v.shape}; {cmp.op} of these inputs gives {what}"
            )
    expl = None
    if cmp.op in EXPLAINED_OPS:
        from .explain import explain

        results = dict(observed)
        keys = [k for k in cmp.results if k[1] == "numpy"] or list(cmp.results)[:1]
        if len(observed) == 1 or any(k[1] == "numpy" for k in keys):
            results.update({_label(k): cmp.results[k] for k in keys})
        expl = explain(cmp.op, cmp.inputs, results) if len(results) > 1 else None
    rows = []
    for name, v in observed.items():
        ref = expl.reference[name] if expl is not None else cmp.reference_of(v)
        s = summarize(v, ref)
        scalar = v.ndim == 0
        fmt = format_info(v.dtype).name
        rows.append(
            {
                "variant": name,
                "backend": "observed",
                "value": shortest_repr(v) if scalar else f"array {v.shape}",
                "hex": hex_string(v) if scalar else "",
                "ulp_error": f"{int(s['ulp'])}",
                "max_abs_ulp": f"{int(s['max_abs_ulp'])}",
                "mean_abs_ulp": f"{float(s['mean_abs_ulp']):.3g}",
                "exact_share": f"{float(s['exact_share']):.4g}",
                "rel_error": f"{float(s['max_rel']):.3g}",
                "bits_error": f"{float(s['max_bits']):.3g}",
                "unit": f"ulps of {fmt}" if fmt == cmp.format else f"{fmt} result: ulps of {fmt}",
            }
        )
    return rows, expl


def _key_of(cmp, label: str) -> tuple:
    """The results' key of a label made by :func:`_label`."""
    return next(k for k in cmp.results if _label(k) == label)


def _result_format(cmp, out) -> str:
    from .formats import format_info

    return format_info(np.asarray(out).dtype).name


def _units(cmp) -> list[str]:
    """The unit of each row of ``cmp.formatted()`` (the exact reference first): ulps of the
    result's own format, flagged where a result comes in another format than the inputs
    (np.matmul of bfloat16 gives float32)."""
    units = [f"ulps of {cmp.format}"]
    for v, b in zip(cmp.table["variant"], cmp.table["backend"]):
        fmt = _result_format(cmp, cmp.results[(v, b)])
        units.append(f"ulps of {fmt}" if fmt == cmp.format else f"{fmt} result: ulps of {fmt}")
    return units


def verdict(cmp) -> str:
    """The answer in one line, computed from a comparison: how far each result is from the
    exact one ("sequential is 52 ulps below the exact sum; np.sum is exact; ulps of float32");
    with more than three results the worst and the best. A result is named by its variant,
    with its backend where two backends have the same variant."""
    names = [v for v, _ in cmp.results]
    fmts = {key: _result_format(cmp, out) for key, out in cmp.results.items()}
    mixed = len(set(fmts.values())) > 1  # (np.matmul of bfloat16: a float32 result)
    rows = []
    for (v, b), out in cmp.results.items():
        r = cmp.table[(cmp.table["variant"] == v) & (cmp.table["backend"] == b)].iloc[0]
        unit = f" of {fmts[v, b]}" if mixed else ""
        label = v if names.count(v) == 1 else f"{v} ({b})"
        if np.ndim(out) == 0:
            k = int(r["ulp_error"])
            side = "below" if k < 0 else "above"
            text = "is exact" if k == 0 else f"is {_ulps(abs(k))}{unit} {side} the exact {cmp.op}"
        else:
            k = int(r["max_abs_ulp"])
            share = 100 * float(r["exact_share"])
            text = (
                "is exact everywhere"
                if k == 0
                else f"is up to {_ulps(k)}{unit} off ({share:.3g}% exact)"
            )
        rows.append((abs(k), f"{label} {text}"))
    if not rows:
        return ""
    if len(rows) > 3:
        worst = max(rows, key=lambda t: t[0])
        best = min(rows, key=lambda t: t[0])
        rows = [(0, "worst: " + worst[1]), (0, "best: " + best[1])]
    tail = "" if mixed else f" (ulps of {next(iter(fmts.values()))})"
    return "; ".join(t for _, t in rows) + tail


def _ulps(k: int) -> str:
    return f"{k:,} ulp{'' if k == 1 else 's'}"


def _sweep_sizes(n: int) -> list[int]:
    """Decades from 10 up to n, and n itself."""
    sizes = [10**k for k in range(1, 9) if 10**k < n]
    return sizes + [int(n)]


def _label(key: tuple) -> str:
    """A result's name as Comparison.diff reads it: "sequential+fma (emulated)"."""
    return "{} ({})".format(*key)


def _worst_element(cmp, key: tuple):
    """A :class:`~fpexplore.results.Diff` of one element: the exact value against the
    chosen result at the element where that result is farthest from it."""
    d = cmp.diff(EXACT_LABEL, key, top=1)  # the element farthest from the exact one first
    ref, out = d.values
    i = d.table.loc[0, "index"] if len(d.table) else (0,) * ref.ndim
    i = tuple(int(k) for k in i) if isinstance(i, tuple) else (int(i),)
    return diff_values(EXACT_LABEL, ref[i], f"{_label(key)} at {i}", out[i])


def _running_loop():
    """The asyncio loop running this code (inside a Jupyter kernel), else None."""
    import asyncio

    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None


def _nearest(n: int) -> int:
    return min(SIZES, key=lambda s: abs(np.log10(s) - np.log10(max(int(n), 1))))


def _copy_button(text: str) -> str:
    """A button that copies ``text`` to the clipboard in the browser (one click)."""
    payload = html.escape(json.dumps(text), quote=True)
    return (
        f'<button class="fpx-copy jupyter-button" title="copy the code above" '
        f'onclick="navigator.clipboard.writeText({payload}).then('
        f"() => {{ this.textContent = 'copied'; }})\">copy code</button>"
    )


def _error_html(e: Exception) -> str:
    return (
        '<div class="fpx-error" style="background:#fde2e1;padding:6px 10px;'
        'border-left:4px solid #D55E00"><b>Cannot show this combination.</b> '
        f"{html.escape(str(e))}</div>"
    )


def explorer(**kwargs) -> Explorer:
    """The ipywidgets app of notebooks/00_explorer.ipynb (see :class:`Explorer`).

    Parameters
    ----------
    op, format, n, variants, distribution, seed, backends, **op_params
        The initial controls, as :func:`fpexplore.compare` takes them (checked now: an
        unknown keyword is a TypeError, a value the app cannot show a ValueError).
    namespace : dict, optional
        Where "data from: your arrays" finds arrays by name (default: IPython's user
        namespace, the notebook's variables; an empty dict outside a kernel).

    Returns
    -------
    Explorer
    """
    return Explorer(**kwargs)
