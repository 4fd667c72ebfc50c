"""What a finished comparison puts on the explorer's widgets: A and B among its results, the
figure of the view, the verdict, the table, the reproducing code; and the buttons that read it
(exports, the order detective): :class:`Output`; what is drawn comes from :mod:`.render`."""

from __future__ import annotations

import base64
import html
import io

import ipywidgets as W

from .. import checks
from ..formats import FORMATS
from . import render
from .controls import EXPORTS
from .state import ORDER_OPS, applied_notes
from .yourdata import Observed

#: matplotlib's font sizes under "large type" (a projector at the back of a room)
LARGE = {"font.size": 16, "axes.titlesize": 18, "axes.labelsize": 16, "xtick.labelsize": 14,
         "ytick.labelsize": 14, "legend.fontsize": 13}  # fmt: skip


class Output:
    """The explorer's output side, on its widgets (``c``: the app's controls): the last
    ``comparison``, its ``observed`` results and their ``explanation``; ``show`` (a finished
    comparison on screen), ``draw`` (the view again), ``fail`` (an error instead),
    ``export`` and the detective's button. ``code_of``: the code of an array chosen by name
    (its variable, or the load of an uploaded file); ``uploaded``: whether a name is an
    uploaded file's."""

    def __init__(self, c, code_of, uploaded) -> None:
        self._c, self._code_of, self._uploaded = c, code_of, uploaded
        self.comparison, self.explanation, self.observed = None, None, Observed()
        self._sent = False  # a figure drawn into the canvas before
        # the app's own notes beside compare's messages (a preset's), each with the format
        # of the data it is about: (format, text)
        self.notes: list = []

    def show(self, cmp, observed, state) -> None:
        """A finished comparison on screen (A and B already among its results): the figure,
        the verdict, the table, the code."""
        c = self._c
        self.observed, self.explanation = observed, observed.explanation
        self.comparison = cmp
        self.draw(state)
        c.message.value = ""
        # (pass 18: a note kept through a failed view is about its format's data only)
        notes = [text for fmt, text in self.notes if fmt == cmp.format]
        applied = applied_notes(state)  # (every view: what an op parameter changes)
        c.banner.value = render.banner_html([*cmp.messages, *notes, *applied])
        self.notes = []  # (shown once, with the view they are about)
        c.verdict.value = (
            f'<div class="fpx-verdict"><b>{html.escape(render.verdict(cmp, observed))}</b></div>'
        )
        said = observed.unexplained if self.explanation is None else self.explanation.verdict
        c.explained.value = (
            f'<div class="fpx-explain"><b>fpx.explain:</b> {html.escape(said)}</div>'
            if said
            else ""
        )
        c.table.value = render.table_html(cmp, observed)
        self.snippet(state)
        numpy_row = any(b == "numpy" for _, b in cmp.results)  # (the detective: not on FP8)
        c.detect.disabled = not (cmp.op in ORDER_OPS and cmp.format in FORMATS and numpy_row)
        c.detect_out.value = ""

    def note(self, fmt: str, texts) -> None:
        """Notes on a change of the state (what a format left out of the variants), about
        ``fmt`` data, for the banner with the next view of that format."""
        self.notes = self.notes + [(fmt, text) for text in texts]

    def fail(self, error) -> None:
        """An error in place of the view (no comparison): nothing of an earlier setting stays
        on screen (its figure, table, code, banner and the detective's button); the app's own
        notes on the change (what it left out) show, and again with the next view (pass 17:
        the picks of two arrays, the first a failed view, lost them)."""
        c = self._c
        self.comparison = self.explanation = None
        self.observed = Observed()
        c.verdict.value = c.explained.value = c.table.value = ""
        c.banner.value = render.banner_html([text for _, text in self.notes])
        c.view_out.value = c.export_out.value = c.detect_out.value = c.copy.value = ""
        c.snippet.value = ""
        c.detect.disabled = True
        c.figure.clf()
        self._refresh()
        c.message.value = render.error_html(error)

    def draw(self, state) -> None:
        """The view of the comparison shown, drawn again for ``state`` (large type: with
        larger fonts); a link or download of the view before it goes (pass 16: it stayed)."""
        import matplotlib

        c = self._c
        c.export_out.value = ""
        with matplotlib.rc_context(LARGE if c.large.value else {}):
            c.view_out.value = render.draw(c.figure, self.comparison, self.observed, state)
            self._refresh()

    def redraw(self, state) -> None:
        """The view drawn again for a change that computes nothing (the view, a pick), its
        code with it; an error is the app's message, never raised into the notebook."""
        try:
            self.draw(state)
            self.snippet(state)
            self._c.message.value = ""  # (an earlier error is not this view's)
        except Exception as e:
            self._c.message.value = render.error_html(e)

    def _refresh(self) -> None:
        """The figure onto its canvas."""
        c = self._c
        if isinstance(c.canvas, W.Image):
            c.canvas.value = render.png(c.figure)
        elif self._sent:  # rendered and sent now: the page drops a draw_idle request
            c.canvas.draw()  # that comes while it waits for an image (a stale figure)
        else:  # the first: the page asks for it once its canvas exists (Voila: later)
            self._sent = True
            c.canvas.draw_idle()

    def large_type(self, app, on: bool, state) -> None:
        """Large type for teaching: bigger table, verdict and diff (a CSS class on ``app``)
        and the figure drawn again with larger fonts."""
        (app.add_class if on else app.remove_class)("fpx-large")
        if self.comparison is not None:
            self.draw(state)

    def snippet(self, state) -> None:
        """The code that reproduces the comparison shown and draws its view."""
        cmp, c = self.comparison, self._c
        if cmp.params.get("inputs") is not None:
            code = {k: self._code_of(var) for k, var in state.inputs}
            numpy = any(self._uploaded(var) for _, var in state.inputs)
            text = render.user_snippet(cmp, self.observed, code, numpy, self._code_of)
        else:
            text = cmp.snippet()
        code = text + "\n" + render.view_code(state, cmp, self._code_of)
        c.snippet.value = code
        c.snippet.rows = code.count("\n") + 2  # the whole snippet, no scrolling
        c.copy.value = render.copy_button(code)

    # ------------------------------------------------------------------ buttons

    def detect(self, _button=None):
        """The order detective on NumPy's own function: :func:`fpexplore.explain_numpy` on
        the inputs of the current view (plus its seeded probes for sum and dot)."""
        out = self._c.detect_out
        try:
            out.value = "<p>searching the orders…</p>"
            out.value = render.detective_html(self.comparison)
        except Exception as e:
            out.value = render.error_html(e)

    def show_link(self, state) -> str:
        """ "Link to this view": the view's code, and how to open it again."""
        from .links import link_of

        code = link_of(state)
        self._c.export_out.value = (
            f'<div class="fpx-link">link to this view: <code>{code}</code><br>'
            f"in a notebook: <code>fpx.explorer(link=&quot;{code}&quot;)</code>; "
            f"in the dashboard: add <code>?link={code}</code> to its address</div>"
        )
        return code

    def export(self, kind: str) -> bytes:
        """The current table (with the observed results' rows) as CSV, or the figure as PNG
        or SVG: returns the file's bytes and shows a download link for it in the app."""
        try:
            if kind not in EXPORTS:
                raise ValueError(
                    f"unknown export {checks.shown(kind)}; choose one of {', '.join(EXPORTS)}"
                )
            cmp = self.comparison
            if cmp is None:
                raise ValueError("nothing to export: the view has no result")
            if kind == "CSV":
                data = render.csv_table(cmp, self.observed).to_csv(index=False).encode()
                mime = "text/csv"
            else:
                buf = io.BytesIO()
                self._c.figure.savefig(buf, format=kind.lower(), dpi=150)
                data, mime = buf.getvalue(), "image/png" if kind == "PNG" else "image/svg+xml"
            name = f"fpexplore-{cmp.op}-{cmp.format}-n{cmp.n}.{kind.lower()}"
            self._c.export_out.value = (
                f'<a class="fpx-download" download="{name}" '
                f'href="data:{mime};base64,{base64.b64encode(data).decode()}">'
                f"download {html.escape(name)} ({len(data) / 1024:.0f} KiB)</a>"
            )
            return data
        except Exception as e:
            self._c.export_out.value = render.error_html(e)
            return b""
