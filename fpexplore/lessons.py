"""The lessons' widgets: exercises to answer, a sum to watch, a bit inspector.

- :func:`exercise` (``fpx.exercise(id, seed=None)``): the question, an answer box (or the
  choices), "check", "hint" and "show answer"; after a right answer or "show answer", the
  explanation with a small figure. A typed answer that is not a number, or an empty box, gets a
  sentence in the widget, never a traceback.
- :func:`step_sum`: a sum in a chosen order (sequential, pairwise, a GPU block tree, NumPy's 8
  accumulators), one addition per slider step: the tree, each partial sum, its rounding error
  in ulps and its error against the exact sum. The last step is ``fpx.sum(x, order)`` bit for
  bit.
- :func:`answers`, :func:`reveal`, :func:`summary`, :func:`answer_key`, :func:`handout`: the
  classroom around the exercises (answers kept in a file beside the notebook, output held back
  until an exercise is answered, a class's summary, paper), from :mod:`fpexplore.classroom`.
- :func:`bit_inspector`: click the bits of a float16, bfloat16, tf32, float32, float64, FP8,
  FP6, FP4 or E8M0 number and see its value (in full: every digit), exponent, significand,
  neighbours and ulp; type a value to see its bits (what was typed stays where the format
  holds it exactly); the hex field is the shareable state (editing it sets the value).

What they show is computed by :mod:`fpexplore.teaching`; ipywidgets and matplotlib load
with this module (``fpx.exercise`` and ``fpx.lessons`` say which extra to install where they
are missing).
"""

from __future__ import annotations

import html
import io
from fractions import Fraction

import ipywidgets as W
import numpy as np

from . import checks, classroom
from .bits import from_bits, shortest_repr
from .classroom import answer_key, answers, handout, reveal, summary
from .formats import FORMATS, FormatInfo, format_info
from .teaching import (
    STEP_ORDERS,
    bit_fields,
    bit_formats,
    bits_of,
    exact_text,
    exercise_markdown,
    get,
    parse_number,
    sum_steps,
)
from .userformat import user_names

__all__ = [
    "BitInspector",
    "ExerciseWidget",
    "StepSum",
    "answer_key",
    "answers",
    "bit_inspector",
    "exercise",
    "handout",
    "reveal",
    "step_sum",
    "summary",
]

GOOD, BAD, NOTE = "#009E73", "#D55E00", "#0072B2"
FIELD_COLORS = {"sign": "#f4c7c3", "exponent": "#c6dbef", "fraction": "#c7e9c0"}


def _figure(size=(5.0, 2.6)):
    from ._optional import require

    Figure = require("matplotlib.figure", "fpx.lessons").Figure
    return Figure(figsize=size, layout="constrained")


PNG_DPI = 90  # the lessons' figures, as PNG images


def _png(fig) -> bytes:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=PNG_DPI)
    return buf.getvalue()


def _box(text: str, color: str, cls: str) -> str:
    return (
        f'<div class="{cls}" style="padding:4px 10px;border-left:4px solid {color};'
        f'margin:4px 0">{text}</div>'
    )


# ----------------------------------------------------------------------------- figures


def draw_exercise_figure(spec: dict, fig) -> None:
    """Draw an exercise's figure spec (:meth:`fpexplore.teaching.Exercise.figure`)."""
    ax = fig.add_subplot()
    kind = spec["kind"]
    if kind == "bars":
        labels, values = spec["labels"], spec["values"]
        colors = [BAD if lab == spec.get("highlight") else NOTE for lab in labels]
        ax.bar(range(len(values)), values, color=colors)
        ax.set_xticks(range(len(values)), labels, fontsize=8, rotation=20 if len(labels) > 4 else 0)
        ax.axhline(0, color="black", lw=0.6)
        ax.set_ylabel(spec.get("ylabel", ""))
    elif kind == "curve":
        for label, ys in spec["y"].items():
            ax.plot(spec["x"], ys, label=label)
        ax.set_xlabel(spec.get("xlabel", ""))
        ax.set_ylabel(spec.get("ylabel", ""))
        ax.legend(fontsize=8)
    elif kind == "numberline":
        ticks = spec["ticks"]
        ax.hlines(0, ticks[0], ticks[-1], color="grey", lw=1)
        ax.plot(ticks, [0] * len(ticks), "|", color="black", ms=14)
        for i, (label, v) in enumerate(spec["marks"].items()):
            ax.annotate(
                label,
                (v, 0),
                xytext=(v, 0.5 + 0.35 * (i % 3)),
                ha="center",
                fontsize=8,
                arrowprops={"arrowstyle": "->", "color": BAD},
            )
        ax.set_ylim(-0.6, 1.6)
        ax.set_yticks([])
        ax.ticklabel_format(useOffset=False, axis="x")
    elif kind == "bits":
        parts = spec["bits"].split(" ")
        colors = [FIELD_COLORS["sign"]] + [FIELD_COLORS["exponent"]] * len(parts[1])
        colors += [FIELD_COLORS["fraction"]] * len(parts[2])
        digits = "".join(parts)
        for i, (d, c) in enumerate(zip(digits, colors)):
            ax.add_patch(_rect(i, c))
            ax.text(i + 0.5, 0.5, d, ha="center", va="center", fontsize=9)
        ax.set_xlim(0, len(digits))
        ax.set_ylim(0, 1)
        ax.set_axis_off()
    ax.set_title(spec.get("title", ""), fontsize=9)


def _rect(i, color):
    from matplotlib.patches import Rectangle

    return Rectangle((i, 0), 1, 1, facecolor=color, edgecolor="white")


# ----------------------------------------------------------------------------- exercises


class ExerciseWidget(W.VBox):
    """One exercise as a widget (see :func:`exercise`). Attributes: ``exercise`` (the
    :class:`fpexplore.teaching.Exercise`), ``entry`` (a Text box, or ToggleButtons for the
    choices), ``check_button``, ``hint_button``, ``show_button``, ``feedback``, ``hint_box``,
    ``explanation`` and ``figure`` (a PNG image, empty until revealed).

    Where :func:`answers` was called for the exercise's lesson, every check and "show answer"
    is kept in the student's answers file, and a new widget shows the attempts kept. Displayed
    in a notebook, the widget comes with its plain form (question and a blank) that HTML and
    PDF exports show (:func:`fpexplore.classroom.print_form`)."""

    def __init__(self, ex):
        self.exercise = ex
        seed = "" if ex.seed is None else f", variant {ex.seed}"
        self.question = W.HTML(
            f'<div class="fpx-question"><b>Exercise {html.escape(ex.id)}</b> '
            f"(lesson {ex.lesson}{seed}): {html.escape(ex.question)}</div>"
        )
        if ex.choices:
            self.entry = W.ToggleButtons(options=list(ex.choices), value=None)
        else:
            self.entry = W.Text(placeholder="your answer", description="answer")
        self.check_button = W.Button(description="check", button_style="primary")
        self.hint_button = W.Button(description="hint")
        self.show_button = W.Button(description="show answer")
        self.feedback = W.HTML()
        self.feedback.add_class("fpx-feedback")
        self.hint_box = W.HTML()
        self.explanation = W.HTML()
        self.figure = W.Image(format="png", layout=W.Layout(max_width="520px"))
        self.figure.layout.display = "none"
        self.check_button.on_click(self._check)
        self.hint_button.on_click(self._hint)
        self.show_button.on_click(self._show)
        buttons = W.HBox([self.check_button, self.hint_button, self.show_button])
        super().__init__(
            [
                self.question,
                self.entry,
                buttons,
                self.feedback,
                self.hint_box,
                self.explanation,
                self.figure,
            ]
        )
        self.add_class("fpx-exercise")
        self.solved = self.shown = False
        self._sheet = classroom.sheet_for(ex.lesson)
        if self._sheet is not None:
            self._sheet.attach(self)

    def _ipython_display_(self) -> None:
        from IPython.display import display

        display(classroom.print_form(self.exercise), raw=True)
        display(self._repr_mimebundle_(), raw=True)

    def _repr_markdown_(self) -> str:
        return exercise_markdown(self.exercise)

    def _keep(self, answer, right: bool, event: str) -> None:
        if self._sheet is not None:
            self._sheet.record(self.exercise, answer, right, event)
        if right or event == "show":
            classroom.done(self.exercise.id).answered = True

    def _check(self, _button=None, keep: bool = True) -> None:
        try:
            ok, message = self.exercise.grade(self.entry.value)
        except Exception as e:  # an exercise's own failure: a message, never a traceback
            ok, message = False, f"Cannot check this answer: {e}"
        self.feedback.value = _box(html.escape(message), GOOD if ok else BAD, "fpx-verdict")
        if keep and self.entry.value is not None and str(self.entry.value).strip():
            self._keep(self.entry.value, ok, "check")
        if ok:
            self.solved = True
            self._reveal()

    def _hint(self, _button=None) -> None:
        self.hint_box.value = _box("Hint: " + html.escape(self.exercise.hint), NOTE, "fpx-hint")

    def _show(self, _button=None, keep: bool = True) -> None:
        self.feedback.value = _box(
            f"The answer: <code>{html.escape(self.exercise.answer_text())}</code>",
            NOTE,
            "fpx-answer",
        )
        self.shown = True
        if keep:
            self._keep(None, False, "show")
        self._reveal()

    def restore(self, attempts: list) -> None:
        """Show the exercise as the attempts kept leave it (a list of attempt dicts, oldest
        first, as :class:`fpexplore.teaching.AnswerBook` keeps them; empty: unanswered)."""
        checks_ = [a for a in attempts if a.get("event") == "check" and a.get("answer") is not None]
        right = [a for a in checks_ if a.get("right")]
        last = (right or checks_ or [None])[-1]
        self.solved = self.shown = False
        for w in (self.feedback, self.hint_box, self.explanation):
            w.value = ""
        self.figure.layout.display = "none"
        if last is not None and (
            not self.exercise.choices or last["answer"] in self.exercise.choices
        ):
            self.entry.value = last["answer"]
            self._check(keep=False)
        else:
            self.entry.value = None if self.exercise.choices else ""
        if not self.solved and any(a.get("event") == "show" for a in attempts):
            self._show(keep=False)
        if self.solved or self.shown:
            classroom.done(self.exercise.id).answered = True

    def _reveal(self) -> None:
        try:
            text = self.exercise.explanation
            spec = self.exercise.figure()
        except Exception as e:
            self.explanation.value = _box(html.escape(str(e)), BAD, "fpx-error")
            return
        self.explanation.value = _box(html.escape(text), NOTE, "fpx-explanation")
        if spec is not None:
            fig = _figure()
            draw_exercise_figure(spec, fig)
            self.figure.value = _png(fig)
            self.figure.layout.display = None


def exercise(id: str, seed: int | None = None) -> ExerciseWidget:
    """The exercise ``id`` as a widget.

    Parameters
    ----------
    id : one of ``[e.id for e in fpx.exercises()]``
    seed : int, optional
        None asks with the lesson's own numbers; ``seed=k`` a variant with other numbers
        (give each student their own k).

    Returns
    -------
    ExerciseWidget
        See :class:`ExerciseWidget`.

    Raises
    ------
    ValueError
        An unknown ``id`` (the message lists the valid ones), or a ``seed`` out of range.
    """
    return ExerciseWidget(get(id, seed))


# ----------------------------------------------------------------------------- a sum to watch


def _positions(trace) -> dict:
    """x (leaves left to right as the tree reads them, a parent between its children) and y
    (the level) of every node reachable from the result."""
    nodes = trace.nodes
    pos, counter = {}, [0]

    def walk(k):
        children = nodes[k]["children"]
        for c in children:
            if c not in pos:
                walk(c)
        if children:
            pos[k] = (sum(pos[c][0] for c in children) / len(children), nodes[k]["level"])
        else:
            pos[k] = (counter[0], 0)
            counter[0] += 1

    import sys

    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 4 * len(nodes) + 100))
    try:
        walk(len(nodes) - 1)
    finally:
        sys.setrecursionlimit(limit)
    return pos


def draw_steps(trace, upto: int, fig) -> None:
    """The tree of ``trace`` with its first ``upto`` steps done (the last in red), and the
    running error per step below it."""
    tree, errs = fig.subplots(2, 1, height_ratios=[3, 1.4])
    pos = _positions(trace)
    done = {s.node for s in trace.steps[:upto]}
    current = trace.steps[upto - 1].node if upto else None
    for k, node in enumerate(trace.nodes):
        if k not in pos:
            continue
        for c in node["children"]:
            color = "black" if k in done else "#cccccc"
            tree.plot([pos[c][0], pos[k][0]], [pos[c][1], pos[k][1]], color=color, lw=0.8)
    leaves = [k for k in pos if not trace.nodes[k]["children"]]
    tree.scatter([pos[k][0] for k in leaves], [0] * len(leaves), s=14, color=NOTE, zorder=3)
    inner = [k for k in pos if trace.nodes[k]["children"]]
    tree.scatter(
        [pos[k][0] for k in inner],
        [pos[k][1] for k in inner],
        s=16,
        color=["black" if k in done else "white" for k in inner],
        edgecolor="grey",
        zorder=3,
    )
    if current is not None:
        x, y = pos[current]
        tree.scatter([x], [y], s=60, color=BAD, zorder=4)
        tree.annotate(
            shortest_repr(trace.steps[upto - 1].value),
            (x, y),
            xytext=(6, 4),
            textcoords="offset points",
            fontsize=8,
            color=BAD,
        )
    if len(leaves) <= 24:
        for k in leaves:
            tree.text(
                pos[k][0],
                -0.35,
                trace.nodes[k]["label"],
                ha="center",
                va="top",
                fontsize=7,
                rotation=90,
            )
    tree.set_ylabel("level")
    tree.set_xticks([])
    tree.set_title(
        f"{trace.order}{_params_text(trace.params)}: step {upto} of {len(trace.steps)}", fontsize=9
    )
    # the steps done so far only (the later ones would give the story away), on an axis that
    # holds every step, so that it stays put while the slider moves
    shown = trace.steps[:upto]
    steps = np.arange(1, upto + 1)
    errs.bar(steps, [s.rounding_ulps for s in shown], color="#bbbbbb", label="rounding")
    errs.plot(steps, [s.error_ulps for s in shown], color=NOTE, lw=1, label="vs exact")
    errs.set_xlim(0.5, len(trace.steps) + 0.5)
    every = (v for s in trace.steps for v in (s.rounding_ulps, s.error_ulps))
    everything = [float(v) for v in every if np.isfinite(v)]
    low, high = min(0.0, *everything), max(0.0, *everything)
    pad = 0.1 * (high - low) or 0.5
    errs.set_ylim(low - pad, high + pad)
    errs.axvline(upto, color=BAD, lw=1)
    errs.set_xlabel("step")
    errs.set_ylabel("ulps")
    errs.legend(fontsize=7, loc="upper left")


def _params_text(params: dict) -> str:
    return "".join(f", {k}={v!r}" for k, v in params.items())


#: the step-through sum's figure: inches (drawn at 90 dpi) and its width on the page
STEP_FIGURE_IN = (5.6, 3.7)
STEP_FIGURE_PX = f"{round(STEP_FIGURE_IN[0] * PNG_DPI)}px"
STEP_TABLE_CSS = "font-size:13px;line-height:1.35;overflow-wrap:anywhere"


class StepSum(W.VBox):
    """A sum to watch (see :func:`step_sum`). Attributes: ``order`` (a Dropdown of
    ``fpexplore.teaching.STEP_ORDERS``), ``block`` (the tree's block size), ``step`` (the
    slider), ``trace`` (the :class:`fpexplore.teaching.SumTrace` shown), ``figure`` (a PNG
    image), ``table`` (the current step in numbers) and ``message``."""

    def __init__(self, x, order: str = "pairwise", block: int = 8):
        self.x = x
        sum_steps(x, order, **({"block": block} if order == "tree" else {}))  # checks x
        self.order = W.Dropdown(options=list(STEP_ORDERS), value=order, description="order")
        self.block = W.Dropdown(
            options=[2**k for k in range(1, 8)], value=block, description="block"
        )
        self.step = W.IntSlider(min=1, max=1, value=1, description="step")
        # the numbers beside the figure (a projector's 1280x720 shows both without scrolling;
        # a narrower page puts them below it)
        self.figure = W.Image(format="png", layout=W.Layout(width=STEP_FIGURE_PX, max_width="100%"))
        self.table = W.HTML(layout=W.Layout(flex="1 1 300px", max_width="460px"))
        self.message = W.HTML()
        self.trace, self._busy = None, False
        wrap = W.Layout(flex_flow="row wrap", align_items="flex-start")
        super().__init__(
            [
                W.HBox([self.order, self.block, self.step], layout=wrap),
                W.HBox([self.figure, self.table], layout=wrap),
                self.message,
            ]
        )
        self.add_class("fpx-step-sum")
        self._retrace()
        self.order.observe(self._retrace, names="value")
        self.block.observe(self._retrace, names="value")
        self.step.observe(self._draw, names="value")

    def call(self) -> str:
        """The fpx.sum call whose result the last step is."""
        extra = f", block={self.block.value}" if self.order.value == "tree" else ""
        return f"fpx.sum(x, {self.order.value!r}{extra})"

    def _retrace(self, _change=None) -> None:
        if self._busy:
            return
        params = {"block": self.block.value} if self.order.value == "tree" else {}
        try:
            self.trace = sum_steps(self.x, self.order.value, **params)
        except Exception as e:  # the controls back to the sum shown, which the message names
            self._busy = True
            try:
                self.order.value, self.block.value = self._shown
            finally:
                self._busy = False
            said = f"{e} (still showing {self.call()})"
            self.message.value = _box(html.escape(said), BAD, "fpx-error")
            return
        self._shown = (self.order.value, self.block.value)
        self.block.layout.display = None if self.order.value == "tree" else "none"
        self.message.value = ""
        n = len(self.trace.steps)
        with self.step.hold_trait_notifications():
            self.step.max = n
            self.step.value = 1  # the first addition: the class predicts the next
        self._draw()

    def _draw(self, _change=None) -> None:
        tr = self.trace
        k = self.step.value
        s = tr.steps[k - 1]
        fig = _figure(STEP_FIGURE_IN)
        draw_steps(tr, k, fig)
        self.figure.value = _png(fig)
        left = shortest_repr(tr.nodes[s.left]["value"])
        if s.right is None:
            what = f"round {left} to {tr.fmt}"
        else:
            what = f"{left} + {shortest_repr(tr.nodes[s.right]['value'])}"
        covers = f"x[{s.covers[0]}..{s.covers[-1]}]" if s.covers else "(no terms)"
        final = tr.result
        rows = [
            ("this step", what),
            ("partial sum", f"{shortest_repr(s.value)}  (of {len(s.covers)} terms, {covers})"),
            ("its rounding error", f"{s.rounding_ulps:+.3g} ulps of {tr.accumulator}"),
            ("against the exact sum of its terms", f"{s.error_ulps:+.3g} ulps"),
            ("result", f"{shortest_repr(final)} = {self.call()}"),
            ("exact sum", f"{shortest_repr(tr.exact_total)}"),
        ]
        body = "".join(
            f"<tr><th style='text-align:left;vertical-align:top;padding-right:12px'>{a}</th>"
            f"<td><code>{html.escape(b)}</code></td></tr>"
            for a, b in rows
        )
        self.table.value = f'<table class="fpx-steps" style="{STEP_TABLE_CSS}">{body}</table>'


def step_sum(x, order: str = "pairwise", *, block: int = 8) -> StepSum:
    """Watch ``fpx.sum(x, order)`` one addition at a time (a slider over the steps).

    Parameters
    ----------
    x : 1-D array of float16, bfloat16, float32 or float64 (up to 512 terms; 8-64 read best)
    order : ``"sequential"``, ``"pairwise"``, ``"tree"`` (a GPU block tree) or ``"numpy"``
        (np.sum's 8 accumulators); a dropdown in the widget changes it
    block : the tree's block size (a power of two, 2 to 128); the widget shows the tree as
        ``fpx.sum(x, "tree", block=block)``

    The last step's value equals ``fpx.sum(x, order)`` (with ``block`` for the tree) bit for
    bit; see :func:`fpexplore.teaching.sum_steps` for the numbers behind it.
    """
    checks.choice("order", order, STEP_ORDERS)
    checks.integer("block", block, 2, 128)
    if block & (block - 1):
        raise ValueError(f"block must be a power of two, got {block}")
    return StepSum(x, order, block)


# ----------------------------------------------------------------------------- bit inspector


class BitInspector(W.VBox):
    """Bits to click (see :func:`bit_inspector`). Attributes: ``format`` (Dropdown),
    ``value_box`` (type a value), ``hex_box`` (the shareable state: edit it to set the bits),
    ``bit_buttons`` (one ToggleButton per bit, sign first), ``info`` (value, exponent,
    significand, neighbours, ulp) and ``fields`` (the current :func:`bit_fields`)."""

    def __init__(self, value="0.1", fmt: str = "float32"):
        fmt = fmt.name if isinstance(fmt, FormatInfo) else fmt  # (what fpx.format returns)
        if isinstance(fmt, str) and fmt in user_names() and fmt not in bit_formats():
            bit_fields(0, fmt)  # (its own reason: no IEEE layout)
        checks.choice("format", fmt, bit_formats())
        self.format = W.Dropdown(options=list(bit_formats()), value=fmt, description="format")
        self.value_box = W.Text(description="value", continuous_update=False)
        self.hex_box = W.Text(description="hex", continuous_update=False)
        self.bits_row = W.HBox(layout=W.Layout(flex_flow="row wrap"))
        self.info = W.HTML()
        self.message = W.HTML()
        self.bit_buttons = []
        self.fields = None
        self._busy = False
        super().__init__(
            [
                self.format,
                W.HBox([self.value_box, self.hex_box]),
                self.bits_row,
                self.info,
                self.message,
            ]
        )
        self.add_class("fpx-bit-inspector")
        self._build_buttons()
        self.set_value(value)
        self.format.observe(self._format_changed, names="value")
        self.value_box.observe(self._value_typed, names="value")
        self.hex_box.observe(self._hex_typed, names="value")

    def _build_buttons(self) -> None:
        width, ebits = bit_fields(0, self.format.value)["width"], None
        ebits = bit_fields(0, self.format.value)["exponent_bits"]
        buttons = []
        for i in range(width):
            part = "sign" if i == 0 else "exponent" if i <= ebits else "fraction"
            b = W.ToggleButton(
                value=False,
                description="0",
                tooltip=f"{part} bit (bit {width - 1 - i})",
                layout=W.Layout(width="26px", padding="0px"),
            )
            b.style.button_color = FIELD_COLORS[part]
            b.observe(self._bit_clicked, names="value")
            buttons.append(b)
        self.bit_buttons = buttons
        self.bits_row.children = buttons

    @property
    def bits(self) -> int:
        """The bit pattern the buttons show, as an int."""
        out = 0
        for b in self.bit_buttons:
            out = (out << 1) | int(b.value)
        return out

    def set_bits(self, bits: int) -> None:
        """Show the bit pattern ``bits`` (an int) in the current format."""
        f = bit_fields(bits, self.format.value)
        self._busy = True
        try:
            digits = format(f["bits"], f"0{f['width']}b")
            for b, d in zip(self.bit_buttons, digits):
                b.value = d == "1"
                b.description = d
            self.hex_box.value = f["hex"]
            self.value_box.value = self._shown(f["value"])
        finally:
            self._busy = False
        self.fields = f
        self.message.value = ""
        self._show(f)

    def set_value(self, value) -> None:
        """Show the bits of ``value`` (a number or typed text) rounded to the format; typed
        text the format holds exactly stays as typed (``65504``, not ``6.55e+04``)."""
        self.set_bits(bits_of(value, self.format.value))
        if isinstance(value, str) and self._exact(value):
            self._busy = True
            try:
                self.value_box.value = value.strip()
            finally:
                self._busy = False

    def _exact(self, text: str) -> bool:
        """Whether typed ``text`` is exactly the finite value the bits hold."""
        v = self.fields["value"]
        try:
            typed = parse_number(text)
        except ValueError:
            return False
        return not isinstance(typed, float) and np.isfinite(v) and typed == Fraction(float(v))

    @property
    def value(self):
        """The value the bits hold, as a NumPy scalar of the format (float32 for tf32/FP8,
        float64 for a format of fpx.format: the type that holds it)."""
        fmt = self.format.value
        if fmt in FORMATS:
            return from_bits(np.uint64(self.bits), fmt)
        return format_info(fmt).dtype.type(self.fields["value"])

    def _shown(self, v: float) -> str:
        fmt = self.format.value
        if np.isnan(v) or np.isinf(v):
            return str(v)
        if fmt in FORMATS:
            return shortest_repr(from_bits(np.uint64(bits_of(v, fmt)), fmt))
        return shortest_repr(format_info(fmt).dtype.type(v))  # (in the type that holds it)

    def _show(self, f: dict) -> None:
        def num(v):
            return "none" if v is None else self._shown(v)

        v = f["value"]
        full = exact_text(v) if v is not None and np.isfinite(v) else num(v)
        rows = [
            ("value", f"{full} ({f['class']})"),
            ("shortest decimal", num(v)),
            ("sign", f"{f['sign']} ({'-' if f['sign'] else '+'})"),
            ("exponent", f"field {f['exponent_field']}, 2**{f['exponent']}"),
            ("significand", f"{f['significand']!r}"),
            ("next up", num(f["next_up"])),
            ("next down", num(f["next_down"])),
            ("ulp", num(f["ulp"]) if np.isfinite(f["ulp"]) else "nan"),
            ("bits", f["bit_string"]),
        ]
        body = "".join(
            f"<tr><th style='text-align:left;padding-right:12px'>{a}</th>"
            f"<td><code>{html.escape(str(b))}</code></td></tr>"
            for a, b in rows
        )
        self.info.value = f'<table class="fpx-bits">{body}</table>'

    def _error(self, e: Exception) -> None:
        self.message.value = _box(html.escape(str(e)), BAD, "fpx-error")

    def _bit_clicked(self, change) -> None:
        if self._busy:
            return
        change["owner"].description = "1" if change["new"] else "0"
        self.set_bits(self.bits)

    def _value_typed(self, change) -> None:
        if self._busy:
            return
        try:
            self.set_value(change["new"])
        except (ValueError, TypeError) as e:
            self._error(e)

    def _hex_typed(self, change) -> None:
        if self._busy:
            return
        text = str(change["new"]).strip().lower().replace(" ", "").replace("_", "")
        try:
            bits = int(text[2:] if text.startswith("0x") else text, 16)
            self.set_bits(bits)
        except ValueError:
            width = len(self.bit_buttons)
            self._error(
                ValueError(f"{change['new']!r} is not a {width}-bit pattern in hexadecimal")
            )

    def _format_changed(self, change) -> None:
        old = bit_fields(self.bits, change["old"])["value"]
        self._build_buttons()
        try:
            self.set_value(old)
        except ValueError as e:  # NaN, in FP6 or FP4: +0 shown (not the old format's bits)
            self.set_bits(0)
            self._error(ValueError(f"{e}; the old value was NaN, +0 is shown"))


def bit_inspector(value="0.1", fmt: str = "float32") -> BitInspector:
    """Bits to click: a ToggleButton per bit of ``fmt`` (one of
    ``fpexplore.teaching.bit_formats()``, a format of ``fpx.format`` with IEEE's layout too),
    the value, exponent, significand, neighbours and ulp they make, a value box (type a
    number: its bits, rounded as ``fpx.as_format`` rounds) and a hex box (the shareable state:
    paste a pattern to set it)."""
    return BitInspector(value, fmt)
