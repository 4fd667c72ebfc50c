"""The explorer app: the widgets of :mod:`.controls` wired to the transitions of :mod:`.state`.

Every control change goes through one handler, :meth:`Explorer._change`: it computes the new
state with a pure transition, sets the controls from it, and recomputes ``compare(...)`` where
the comparison depends on what changed (else redraws the view). Errors appear as a message
inside the app, never as a traceback.
"""

from __future__ import annotations

import contextlib
import traceback

import ipywidgets as W

from .. import checks
from ..experiment import check_op_params
from ..libspec import backend_libraries
from ..spec import taken_params, with_keywords
from . import render
from .controls import arrange, builder_fits, builder_spec, make_controls, show_picks, show_state
from .fit import unfit
from .links import from_keywords
from .presets import PRESETS, apply_preset, preset_notes
from .running import Cancelled, Runner
from .showing import Output
from .state import (
    CONTROLS,
    OBSERVED,
    add_variant,
    checked_request,
    compare_arguments,
    computed_part,
    input_names,
    left_out,
    list_names,
    opened_on,
    pick,
    remove_variants,
    select_variants,
    set_control,
    set_input,
    set_observed,
    settle_picks,
    shown_part,
    sweep_arguments,
)
from .yourdata import Observed, YourArrays


class Explorer(W.VBox):
    """The app. Attributes: a widget per row of :data:`~.state.CONTROLS` (``op``, ``format``,
    ``n``, ``backends``, ``source``...), ``variants``, ``input_picks``, ``observed``,
    ``upload``, ``state`` (a frozen :class:`~.state.State`), ``comparison`` (the last
    result), ``explanation`` (:func:`fpexplore.explain` of the observed results, or None),
    ``figure`` (the matplotlib Figure), ``table``, ``snippet``, ``message``."""

    def __init__(self, *, namespace=None, variants=None, **kwargs):
        from ..backends import status

        installed = tuple(b for b in backend_libraries() if status(b)[0])
        self._arrays = YourArrays(namespace)
        self.state, notes = _first_state(kwargs, variants, installed, self._formats())
        self._c = make_controls(self.state, installed)
        self._out = Output(self._c, self._arrays.code_of, self._arrays.uploaded)
        self._out.note(self.state.format, notes)
        for name, widget in vars(self._c).items():
            if name not in ("input_picks", "installed"):
                setattr(self, name, widget)
        super().__init__(arrange(self._c))
        self.add_class("fpx-explorer")
        self._busy, self._log, self._failed = False, "", ["", ""]  # (the message before, its)
        self._runner = Runner(self._c, lambda: self.op_params, self._done)
        self._wire()
        self._show(self.state)
        try:
            args = self.arguments()
        except ValueError:  # (your arrays not chosen yet: update() says so in the app)
            args = None
        self._runner.first(args, self.state.format, self.update)

    @property
    def op_params(self) -> dict:
        """compare()'s op parameters of the view (block=): the state's (a new op drops them)."""
        return dict(self.state.op_params)

    @property
    def comparison(self):
        """The comparison shown (None: none, or an error)."""
        return self._out.comparison

    @property
    def explanation(self):
        """:func:`fpexplore.explain` of the observed results shown, or None."""
        return self._out.explanation

    @property
    def input_picks(self) -> dict:
        """The op's input name -> its Dropdown ("input x")."""
        return self._c.input_picks

    def _wire(self) -> None:
        """Each control's change: a transition of the state, through :meth:`_change`."""
        c = self._c

        def on(widget, transition):
            widget.observe(
                lambda ch: self._change(lambda s: transition(s, ch["new"])), names="value"
            )

        for name in CONTROLS:
            on(getattr(c, name), lambda s, v, k=name: set_control(s, self._formats(), **{k: v}))
        on(c.variants, select_variants)
        on(c.pick_a, lambda s, v: pick(s, a=v))
        on(c.pick_b, lambda s, v: pick(s, b=v))
        on(c.observed, set_observed)
        c.upload.observe(self._uploaded_files, names="value")
        c.refresh.on_click(lambda _b: self._relist())
        c.b_add.on_click(lambda _b: self.add_variant(self.built_spec()))
        c.b_remove.on_click(lambda _b: self.remove_variants(c.variants.value))
        for name, button in c.presets.items():
            button.on_click(lambda _b, name=name: self.apply_preset(name))
        for w in (c.b_name, c.b_arch):
            w.observe(lambda _ch: builder_fits(c, self.state.format), names="value")
        c.large.observe(lambda ch: self._out.large_type(self, ch["new"], self.state), "value")
        c.detect.on_click(self._out.detect)
        for kind, button in c.exports.items():
            button.on_click(lambda _b, kind=kind: self.export(kind))
        c.link.on_click(lambda _b: self._out.show_link(self.state))

    # ------------------------------------------------------------------ the one change handler

    @contextlib.contextmanager
    def _quiet(self):
        """Set controls from the state without each change coming back as a change."""
        self._busy = True
        try:
            yield
        finally:
            self._busy = False

    def _show(self, state) -> None:
        with self._quiet():
            show_state(self._c, state, self.names(), on_input=self._input_changed)

    def _change(self, transition, *, recompute: bool = False, note: bool = True) -> None:
        """Replace the state by ``transition(state)`` and render it: recompute where the
        comparison depends on what changed, else redraw. An error (``app.op.value = None``) is
        a message, the controls show the state again, the next valid change works. ``note``:
        the variants a new format left out are noted in the banner (a preset notes its own)."""
        if self._busy:
            return
        try:
            new = transition(self.state)
        except Exception as e:  # (the message it replaces comes back with a change that works)
            was, said = self.message.value, render.error_html(e)
            self._failed = [self._failed[0] if was == self._failed[1] else was, said]
            self.message.value, self._log = self._failed[1], traceback.format_exc()
            self._show(self.state)
            return
        if self.message.value == self._failed[1]:  # (that change failed; this one did not)
            self.message.value = self._failed[0]
        old, self.state = self.state, new
        if note:  # (pass 16, 17: by the format control, your arrays' picks, a refresh)
            self._out.note(new.format, left_out(old, new))
        self._show(new)
        if recompute or computed_part(new) != computed_part(old):
            self.update()
        elif shown_part(new) != shown_part(old) and self.comparison is not None:
            self._out.redraw(new)

    def _input_changed(self, name: str, var: str) -> None:
        self._change(lambda s: set_input(s, name, var, self._formats()))

    def _relist(self) -> None:
        """The names listed again (refresh, an upload): recompute, the arrays may be new."""
        self._change(lambda s: list_names(s, self._formats()), recompute=True)

    def _uploaded_files(self, change) -> None:
        """Uploaded .npy, .npz and .csv files: their arrays join the names offered."""
        try:
            self._arrays.upload(self.upload.value)
        except ValueError as e:
            self.message.value = render.error_html(e)
            return
        self._relist()

    # ------------------------------------------------------------------ the public controls

    def built_spec(self) -> str:
        """The variant spec the builder's controls describe, e.g. "tree(block=256)+tf32"."""
        return builder_spec(self._c)

    def add_variant(self, spec: str) -> None:
        """Add a variant spec to the list and select it (an invalid one: the error shows);
        the builder's FMA box is clear again (the next spec starts plain)."""
        before = self.state
        self._change(lambda s: add_variant(s, spec))
        if self.state is not before:
            with self._quiet():
                self.b_fma.value = False

    def remove_variants(self, specs) -> None:
        """Take these variants out of the selection (built specs leave the list too)."""
        self._change(lambda s: remove_variants(s, specs), recompute=True)

    def apply_preset(self, label: str) -> None:
        """One of PRESETS: the op it needs (kept if it fits) and its variants, one redraw."""
        checks.choice("preset", label, PRESETS, "presets")
        self._change(_preset(self._out, label, self._formats()), recompute=True, note=False)

    # ------------------------------------------------------------------ your arrays

    def names(self) -> dict:
        """The arrays offered by name (:meth:`~.yourdata.YourArrays.names`)."""
        return self._arrays.names()

    def _formats(self) -> dict:
        return self._arrays.formats()

    def user_inputs(self) -> dict:
        """The op's inputs from the arrays chosen by name, as ``compare(inputs=)`` takes them
        (a ValueError naming the input and the variable where one does not fit)."""
        op = self.state.op
        return self._arrays.inputs(op, input_names(op), self.state.inputs)

    def observed_results(self) -> dict:
        """The observed results chosen by name (results computed elsewhere: a GPU's)."""
        return self._arrays.observed(self.state.observed)

    # ------------------------------------------------------------------ state -> compare()

    def arguments(self) -> dict:
        """The :func:`compare` keyword arguments the controls currently describe: with your
        arrays ``inputs=`` (the arrays chosen by name), no n, distribution or seed."""
        mine = self.state.source == "arrays"
        return compare_arguments(self.state, self.user_inputs() if mine else None)

    def sweep_arguments(self) -> dict:
        """The :func:`fpexplore.sweep` keyword arguments of the sweep view."""
        return sweep_arguments(self.state)

    def view_code(self) -> str:
        """The public-API line that draws the current view from ``cmp``."""
        return render.view_code(self.state, self.comparison, self._arrays.code_of)

    def export(self, kind: str) -> bytes:
        """The current table (with the observed results' rows) as CSV, or the figure as PNG
        or SVG: returns the file's bytes and shows a download link for it in the app."""
        return self._out.export(kind)

    # ------------------------------------------------------------------ computing

    def _request(self) -> dict:
        """compare()'s arguments, the observed results with your arrays, checked."""
        args = self.arguments()
        if "inputs" in args:  # the observed results travel with the request
            args["observed"] = self.observed_results()
        return checked_request(args)

    def update(self) -> None:
        """Recompute and redraw; any error becomes a message in the app. In a kernel (a
        running event loop) the computation runs in a thread, reporting its progress, so that
        the cancel button works and a newer request replaces an older one; elsewhere (plain
        Python, the tests) it runs here and now."""
        try:
            args = self._request()
        except Exception as e:  # shown in the app, never raised into the notebook
            self._runner.start(None, error=e, log=traceback.format_exc())
            return
        self._runner.start(args, self.state.format)

    def _done(self, cmp, error, log, extra=None) -> None:
        """A computation's outcome on screen (``extra``: the observed results measured)."""
        if isinstance(error, Cancelled):  # the last finished view stays on screen
            self.message.value = render.CANCELLED
            return
        if error is None:
            try:
                self._show_result(cmp, extra if extra is not None else Observed())
            except Exception as e:
                error, log = e, traceback.format_exc()
        if error is not None:  # shown in the app, never raised into the notebook
            self._out.fail(error)
            self._log = log

    def _show_result(self, cmp, observed) -> None:
        """A finished comparison on screen: A and B among its results (and the observed ones),
        then the output side."""
        if not cmp.results:
            raise ValueError(
                "no results to show: " + ("; ".join(cmp.messages) or "choose a backend")
            )
        keys = list(cmp.results) + [(k, OBSERVED) for k in observed.values]
        self.state = settle_picks(self.state, keys)
        with self._quiet():
            show_picks(self._c, self.state, keys)
        self._out.show(cmp, observed, self.state)


def _preset(out, label: str, formats: dict):
    """The transition to a preset, its left-out variants noted for ``out`` to show."""

    def transition(state):
        new = apply_preset(state, label, formats)
        out.notes = [(new.format, text) for text in preset_notes(state, new, label)]
        return new

    return transition


def _first_state(kwargs: dict, variants, installed: tuple, formats: dict):
    """The first state from :func:`explorer`'s keywords (``formats``: your arrays' by name),
    its op parameters (compare()'s: block=, accumulate=) refused now, as compare() would
    refuse them, not later in the app; and the notes for the banner: what another format
    than a link's (given, or your arrays') left out of its variants."""
    from ..backends import has_gpu

    state = from_keywords(kwargs, variants, installed, has_gpu())
    given = {k for k, v in kwargs.items() if v is not None}
    given |= {"variants"} if variants is not None else set()
    state = opened_on(state, formats, given)
    own = frozenset(CONTROLS) | {"variants", "link", "namespace"}
    caller = ("fpx.explorer", own)
    typed = {k: v for k, v in state.op_params if k in kwargs}  # (not a link's: pass 18)
    check_op_params(state.op, state.variants, state.format, typed, caller)
    for spec in state.variants:  # (a setting the data refuse: fma on FP8, pass 18)
        given = taken_params(spec, state.op, typed)
        if given and (why := unfit(state.op, state.format, with_keywords(spec, given))):
            said = ", ".join(f"{k}={checks.shown(v)}" for k, v in given.items())
            raise ValueError(f"{said} for {spec} on {state.format} data: {why}")
    if kwargs.get("link") is None or variants is not None:
        return state, []
    return state, left_out(from_keywords({"link": kwargs["link"]}, None, (), False), state)


def explorer(**kwargs) -> Explorer:
    """The ipywidgets app of notebooks/00_explorer.ipynb (see :class:`Explorer`).

    Parameters
    ----------
    **kwargs
        The keywords below, each optional.
    op, format, n, distribution, seed, backends, threads, source, view, sweep_unit, scheme
        The initial value of each control, one keyword per row of
        :data:`fpexplore.app.state.CONTROLS` (the compare() ones as :func:`fpexplore.compare`
        takes them), checked now: a value the app cannot show is a ValueError.
    variants : list of str, optional
        The variants selected (default: the op's own for the format).
    link : str, optional
        A view's code from "Link to this view": that view again (op, format, n, variants,
        the other controls, the op parameters); keywords given beside it win.
    **op_params
        compare()'s op parameters (``block=``, ``accumulate=``...), checked now without
        computing anything: one that neither the op nor a variant takes is a TypeError, a
        value a variant's spec refuses a ValueError (the op's own, cdist's ``d`` or
        linspace's ``endpoint``, are checked when compare() runs: a message in the app).
    namespace : dict, optional
        Where "data from: your arrays" finds arrays by name (default: IPython's user
        namespace, the notebook's variables; an empty dict outside a kernel).

    Returns
    -------
    Explorer
        The app (an ipywidgets VBox).
    """
    return Explorer(**kwargs)
