"""What a finished comparison puts on the explorer's widgets: A and B among its results, the
figure of the view, the verdict, the table, the reproducing code; and the buttons that read it
(exports, the order detective). Mixed into :class:`~.widget.Explorer`; what is drawn comes
from :mod:`.render`."""

from __future__ import annotations

import base64
import html
import io

import ipywidgets as W

from .. import checks
from . import render
from .controls import EXPORTS, show_picks
from .state import OBSERVED, settle_picks


class Showing:
    """The explorer's output side: ``_show_result`` (a comparison on screen), ``_draw`` (the
    view again), ``view_code``, ``export`` and the detective's button."""

    def view_code(self) -> str:
        """The public-API line that draws the current view from ``cmp``."""
        return render.view_code(self.state, self.comparison, self._code_of)

    def _show_result(self, cmp, observed) -> None:
        """A finished comparison on screen: A and B among its results (and the observed
        ones), the figure, the verdict, the table, the code."""
        keys = list(cmp.results) + [(k, OBSERVED) for k in observed.values]
        if not cmp.results:
            raise ValueError(
                "no results to show: " + ("; ".join(cmp.messages) or "choose a backend")
            )
        self.state = settle_picks(self.state, keys)
        with self._quiet():
            show_picks(self._c, self.state, keys)
        self._observed, self.explanation = observed, observed.explanation
        self._draw(cmp)
        self.comparison = cmp
        self.banner.value = render.banner_html(cmp.messages)
        self.verdict.value = (
            f'<div class="fpx-verdict"><b>{html.escape(render.verdict(cmp))}</b></div>'
        )
        self.explained.value = (
            ""
            if self.explanation is None
            else '<div class="fpx-explain"><b>fpx.explain:</b> '
            f"{html.escape(self.explanation.verdict)}</div>"
        )
        self.table.value = render.table_html(cmp, observed)
        self._show_snippet(cmp)

    def _draw(self, cmp) -> None:
        self.view_out.value = render.draw(self.figure, cmp, self._observed, self.state)
        if isinstance(self.canvas, W.Image):
            self.canvas.value = render.png(self.figure)
        else:
            self.canvas.draw_idle()

    def _show_snippet(self, cmp) -> None:
        if cmp.params.get("inputs") is not None:
            code = {k: self._code_of(var) for k, var in self.state.inputs}
            numpy = any(var in self._uploaded for _, var in self.state.inputs)
            text = render.user_snippet(cmp, self._observed, code, numpy, self._code_of)
        else:
            text = cmp.snippet()
        code = text + "\n" + render.view_code(self.state, cmp, self._code_of)
        self.snippet.value = code
        self.snippet.rows = code.count("\n") + 2  # the whole snippet, no scrolling
        self.copy.value = render.copy_button(code)

    # ------------------------------------------------------------------ buttons

    def _detect(self, _button=None):
        """The order detective on NumPy's own function: :func:`fpexplore.explain_numpy` on
        the inputs of the current view (plus its seeded probes for sum and dot)."""
        try:
            self.detect_out.value = "<p>searching the orders…</p>"
            self.detect_out.value = render.detective_html(self.comparison)
        except Exception as e:
            self.detect_out.value = render.error_html(e)

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
                data = render.csv_table(cmp, self._observed).to_csv(index=False).encode()
                mime = "text/csv"
            else:
                buf = io.BytesIO()
                self.figure.savefig(buf, format=kind.lower(), dpi=150)
                data, mime = buf.getvalue(), "image/png" if kind == "PNG" else "image/svg+xml"
            name = f"fpexplore-{cmp.op}-{cmp.format}-n{cmp.n}.{kind.lower()}"
            self.export_out.value = (
                f'<a class="fpx-download" download="{name}" '
                f'href="data:{mime};base64,{base64.b64encode(data).decode()}">'
                f"download {html.escape(name)} ({len(data) / 1024:.0f} KiB)</a>"
            )
            return data
        except Exception as e:
            self.export_out.value = render.error_html(e)
            return b""
