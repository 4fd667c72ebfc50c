"""How the explorer runs ``compare(...)``: in a kernel (a running event loop) in a thread that
reports its progress, so that the cancel button works and a newer request replaces an older
one; elsewhere (plain Python, the tests) here and now. The outcome is shown on the loop's
thread by the app's ``_show_result``."""

from __future__ import annotations

import html
import threading
import traceback

from ..experiment import compare
from . import render
from .state import ORDER_OPS
from .yourdata import Observed, observe


class Cancelled(Exception):
    """Raised inside compare() by the app's progress callback when cancel was clicked."""


def running_loop():
    """The asyncio loop running this code (inside a Jupyter kernel), else None."""
    import asyncio

    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None


class Running:
    """The explorer's computation: ``update()`` (recompute and redraw), progress, cancel.
    Mixed into :class:`~.widget.Explorer`, whose widgets and state it uses."""

    def _start_running(self) -> None:
        self._generation = 0
        self._stop = threading.Event()
        self.cancel.on_click(self._cancel_clicked)

    def _first_update(self) -> None:
        loop = running_loop()
        if loop is not None and self._announce_compiling(self.arguments()):
            # in a kernel with cold kernels: compute once the app is on screen, so the
            # "compiling kernels" note shows instead of a cell that seems to hang
            loop.call_later(0.05, self.update)
        else:
            self.update()

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
        loop = running_loop()
        if loop is None:
            self._compute(args, generation, stop, None)
            return
        self.cancel.layout.display = None
        threading.Thread(
            target=self._compute, args=(args, generation, stop, loop), daemon=True
        ).start()

    def _cancel_clicked(self, _button=None) -> None:
        self._stop.set()

    def _progress(self, generation: int, text: str) -> None:
        if generation == self._generation:
            self.progress.value = f'<div class="fpx-progress">{text}</div>'

    def _compute(self, args, generation: int, stop, loop) -> None:
        """compare(**args) with progress; the outcome goes to _finish (on the loop's thread)."""

        def step(done, total, label):
            if stop.is_set():
                raise Cancelled
            self._progress(generation, f"computing {html.escape(label)} ({done + 1} of {total})…")

        args = dict(args)
        observed = args.pop("observed", None)
        try:
            cmp = compare(**args, progress=step)
            extra = None
            if observed:
                self._progress(
                    generation,
                    "explaining the observed results (fpx.explain searches the orders that "
                    "reproduce each)…",
                )
                extra = observe(cmp, observed)
                if stop.is_set():
                    raise Cancelled
            outcome = (cmp, None, None, extra)
        except Cancelled:
            outcome = (None, Cancelled(), None, None)
        except Exception as e:
            outcome = (None, e, traceback.format_exc(), None)
        if loop is None:
            self._finish(generation, *outcome)
        else:
            loop.call_soon_threadsafe(self._finish, generation, *outcome)

    def _finish(self, generation: int, cmp, error, log, extra=None) -> None:
        """Show a computation's outcome, unless a newer request replaced it; ``extra``: the
        observed results measured (:func:`~.yourdata.observe`)."""
        if generation != self._generation:
            return
        self.progress.value = ""
        self.cancel.layout.display = "none"
        if isinstance(error, Cancelled):  # the last finished view stays on screen
            self.message.value = render.note_html(
                "fpx-cancelled",
                "#E69F00",
                "#fff3cd",
                "cancelled: the view shows the last finished result",
            )
            return
        if error is None:
            try:
                self.message.value = ""
                self._show_result(cmp, extra if extra is not None else Observed())
            except Exception as e:
                error, log = e, traceback.format_exc()
        if error is not None:  # shown in the app, never raised into the notebook
            self.comparison = None
            self.explanation = None
            self.verdict.value = self.explained.value = ""
            self.message.value = render.error_html(error)
            self._log = log
            return
        self.export_out.value = ""
        self.detect.disabled = not (
            cmp.op in ORDER_OPS and any(b == "numpy" for _, b in cmp.results)
        )
        self.detect_out.value = ""

    def _announce_compiling(self, args) -> bool:
        """Show "compiling kernels for <format> (first use only)…" where the view's kernels are
        neither compiled in this process nor in numba's disk cache; True if so."""
        if "emulated" not in args["backends"]:
            return False
        from ..warmup import is_cold  # imports numba, as compare() does anyway

        fmt = args.get("format", self.state.format)  # (your arrays: theirs)
        if not is_cold(args["op"], fmt, args["variants"], self.op_params):
            return False
        self.message.value = render.note_html(
            "fpx-compiling",
            "#0072B2",
            "#e8f1fa",
            f"compiling kernels for {html.escape(fmt)} (first use only)…",
        )
        return True
