"""How the explorer runs ``compare(...)``: in a kernel (a running event loop) in a thread that
reports its progress, so that the cancel button works and a newer request replaces an older
one; elsewhere (plain Python, the tests) here and now. The outcome goes to the app on the
loop's thread."""

from __future__ import annotations

import html
import threading
import traceback

from ..experiment import compare
from . import render
from .yourdata import observe


class Cancelled(Exception):
    """Raised inside compare() by the app's progress callback when cancel was clicked."""


def running_loop():
    """The asyncio loop running this code (inside a Jupyter kernel), else None."""
    import asyncio

    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None


class Runner:
    """Runs ``compare(**args)`` for the explorer: in a kernel (a running event loop) in a
    thread that writes its progress to ``c.progress`` (an HTML widget; ``c``: the app's
    controls) and stops when ``c.cancel`` is clicked; elsewhere here and now. Cold kernels
    are announced in ``c.message`` before they compile. ``done(cmp, error, log, extra)``
    receives the outcome on the loop's thread, for the newest request only (``extra``: the
    observed results measured, where ``args`` carries ``observed``)."""

    def __init__(self, c, op_params, done) -> None:  # (op_params: the view's, when called)
        self._progress_widget, self._cancel, self._message = c.progress, c.cancel, c.message
        self._op_params, self._done = op_params, done
        self._generation = 0
        self._stop = threading.Event()
        c.cancel.on_click(lambda _b: self._stop.set())

    def _compiling(self, args: dict, fmt: str) -> bool:
        """Show "compiling kernels..." where the kernels of ``args`` are cold; True if so."""
        note = compiling_note(args, args.get("format", fmt), self._op_params())
        self._message.value = note or self._message.value
        return note is not None

    def first(self, args: dict, fmt: str, update) -> None:
        """The app's first computation, ``update()``: in a kernel with cold kernels once the
        app is on screen, so that the "compiling kernels" note shows instead of a cell that
        seems to hang (``args`` None: no request yet, which ``update`` says)."""
        loop = running_loop()
        if loop is not None and args is not None and self._compiling(args, fmt):
            loop.call_later(0.05, update)
        else:
            update()

    def start(self, args: dict | None, fmt: str = "", *, error=None, log: str = "") -> None:
        """A new request, replacing any still running (it stops at its next step, dropped):
        ``args`` computed (``fmt``: the format, where your arrays give it), or ``error``
        reported at once (the request was invalid)."""
        if error is None:
            try:  # a trait change reaches the browser at once: the note shows during the compile
                self._compiling(args, fmt)
            except Exception as e:
                error, log = e, traceback.format_exc()
        self._stop.set()
        self._generation += 1
        generation, stop = self._generation, threading.Event()
        self._stop = stop
        loop = running_loop()
        if error is not None or loop is None:
            if error is None:
                self._compute(args, generation, stop, None)
            else:
                self._finish(generation, None, error, log)
            return
        self._cancel.layout.display = None
        threading.Thread(
            target=self._compute, args=(args, generation, stop, loop), daemon=True
        ).start()

    def _progress(self, generation: int, text: str) -> None:
        if generation == self._generation:
            self._progress_widget.value = f'<div class="fpx-progress">{text}</div>'

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
        if generation != self._generation:  # a newer request replaced it
            return
        self._progress_widget.value = ""
        self._cancel.layout.display = "none"
        self._done(cmp, error, log, extra)


def compiling_note(args: dict, fmt: str, op_params: dict) -> str | None:
    """ "compiling kernels for <format> (first use only)…" as HTML where the kernels of
    ``compare(**args)`` are neither compiled in this process nor in numba's disk cache; else
    None."""
    if "emulated" not in args["backends"]:
        return None
    from ..warmup import is_cold  # imports numba, as compare() does anyway

    if not is_cold(args["op"], fmt, args["variants"], op_params):
        return None
    return render.note_html(
        "fpx-compiling",
        "#0072B2",
        "#e8f1fa",
        f"compiling kernels for {html.escape(fmt)} (first use only)…",
    )
