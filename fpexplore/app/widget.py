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
from ..experiment import compare
from . import render
from .controls import arrange, builder_fits, make_controls, show_state
from .running import Running
from .showing import Showing
from .state import (
    CONTROLS,
    PRESETS,
    SIZES,
    add_variant,
    apply_preset,
    built_spec,
    compare_arguments,
    computed_part,
    initial,
    input_names,
    list_names,
    pick,
    remove_variants,
    select_variants,
    set_control,
    set_input,
    set_observed,
    shown_part,
    sweep_arguments,
)
from .yourdata import (
    Observed,
    check_user_arrays,
    format_of,
    is_array,
    observed_values,
    read_upload,
    user_namespace,
)


class Explorer(Running, Showing, W.VBox):
    """The app. Attributes: one control per :func:`compare` argument (``op``, ``format``,
    ``n``, ``variants``, ``distribution``, ``seed``, ``backends``: numpy and emulated, plus
    cupy where a GPU is usable), ``source`` ("generated" or "arrays": your arrays by name,
    ``input_picks`` per input, ``observed`` results, ``upload``), ``state`` (a frozen
    :class:`~fpexplore.app.state.State`), ``comparison`` (the last result), ``explanation``
    (:func:`fpexplore.explain` of the observed results, or None), ``figure`` (the matplotlib
    Figure), ``table``, ``snippet``, ``message``."""

    def __init__(self, *, namespace=None, variants=None, **kwargs):
        from ..backends import has_gpu, libraries

        installed = tuple(b for b in libraries.NAMES if libraries.status(b)[0])
        values = {k: kwargs.pop(k) for k in list(kwargs) if k in CONTROLS}
        op_params = kwargs  # the rest: compare()'s op parameters (block=, accumulate=)
        if values.get("backends") is None:  # the real GPU side by side wherever there is one
            values["backends"] = (
                ("numpy", "emulated", "cupy") if has_gpu() else ("numpy", "emulated")
            )
        state = initial(variants, installed, tuple(op_params.items()), **values)
        if "inputs" in op_params:  # compare's own data argument: not an op parameter here
            raise TypeError("fpx.explorer() got an unexpected keyword argument 'inputs'")
        if namespace is not None and not isinstance(namespace, dict):
            raise TypeError(
                f"namespace must be a dict of names to arrays, got {type(namespace).__name__}"
            )
        if op_params:  # refused now, as compare() would refuse them, not later in the app
            probe = dict(format=state.format, n=min(SIZES), variants=variants)
            compare(state.op, **probe, backends=("emulated",), **op_params)
        self._namespace = namespace  # None: IPython's user namespace, read when listed
        self._uploaded: dict = {}  # name -> (array, the code that loads it)
        self.op_params = dict(op_params)
        self.state = list_names(state, self._formats(), follow=False)
        self.comparison, self.explanation, self._observed = None, None, Observed()
        self._c = make_controls(self.state, installed)
        for name, widget in vars(self._c).items():
            if name not in ("input_picks", "installed"):
                setattr(self, name, widget)
        super().__init__(arrange(self._c))
        self.add_class("fpx-explorer")
        self._busy, self._log = False, ""
        self._start_running()
        self._wire()
        self._show(self.state)
        self._first_update()

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
        c.large.observe(self._large_changed, names="value")
        c.detect.on_click(self._detect)
        for kind, button in c.exports.items():
            button.on_click(lambda _b, kind=kind: self.export(kind))

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

    def _change(self, transition, *, recompute: bool = False) -> None:
        """Replace the state by ``transition(state)`` and render it: recompute where the
        comparison depends on what changed, else redraw the view. An error (a control set to
        an invalid value from code, ``app.op.value = None``) is a message; the controls show
        the state again and the next valid change works."""
        if self._busy:
            return
        try:
            new = transition(self.state)
        except Exception as e:
            self.message.value = render.error_html(e)
            self._log = traceback.format_exc()
            self._show(self.state)
            return
        old, self.state = self.state, new
        self._show(new)
        if recompute or computed_part(new) != computed_part(old):
            self.update()
        elif shown_part(new) != shown_part(old) and self.comparison is not None:
            try:
                self._draw(self.comparison)
                self._show_snippet(self.comparison)
            except Exception as e:  # shown in the app, never raised into the notebook
                self.message.value = render.error_html(e)

    def _input_changed(self, name: str, var: str) -> None:
        self._change(lambda s: set_input(s, name, var, self._formats()))

    def _relist(self) -> None:
        """The names listed again (refresh, an upload): recompute, the arrays may be new."""
        self._change(lambda s: list_names(s, self._formats()), recompute=True)

    def _uploaded_files(self, change) -> None:
        """Uploaded .npy, .npz and .csv files: their arrays join the names offered."""
        try:
            for f in self.upload.value:
                self._uploaded.update(read_upload(f["name"], bytes(f["content"])))
        except ValueError as e:
            self.message.value = render.error_html(e)
            return
        self._relist()

    def _large_changed(self, change):
        """Large type for teaching: bigger table, verdict and diff (a CSS class)."""
        (self.add_class if change["new"] else self.remove_class)("fpx-large")

    # ------------------------------------------------------------------ the public controls

    def built_spec(self) -> str:
        """The variant spec the builder's controls describe, e.g. "tree(block=256)+tf32"."""
        c = self._c
        return built_spec(
            c.b_name.value,
            arch=c.b_arch.value,
            block=c.b_block.value,
            fma=c.b_fma.value,
            rounding=c.b_rounding.value,
            acc=c.b_acc.value,
        )

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
        if label not in PRESETS:
            raise ValueError(f"unknown preset {checks.shown(label)}; presets: {', '.join(PRESETS)}")
        self._change(lambda s: apply_preset(s, label, self._formats()), recompute=True)

    # ------------------------------------------------------------------ your arrays

    def names(self) -> dict:
        """The arrays the app offers by name: the namespace's variables (IPython's user
        namespace in a kernel, else the dict given as ``namespace``) that hold NumPy arrays
        or scalars, then the uploaded files' arrays ("data.npz[x]")."""
        ns = self._namespace if self._namespace is not None else user_namespace()
        found = {k: v for k, v in ns.items() if not k.startswith("_") and is_array(v)}
        found.update({k: a for k, (a, _code) in self._uploaded.items()})
        return found

    def _formats(self) -> dict:
        return {k: format_of(v) for k, v in self.names().items()}

    def user_inputs(self) -> dict:
        """The op's inputs from the arrays chosen by name, as ``compare(inputs=)`` takes
        them; a ValueError that names the input and the variable where one is missing, not
        in a floating-point format, or of the wrong shape."""
        op = self.state.op
        if not input_names(op):
            raise ValueError(f"{op} takes numbers, not only arrays: choose generated data for it")
        arrays = self.names()
        chosen = {k: (var, arrays.get(var)) for k, var in self.state.inputs}
        return check_user_arrays(op, input_names(op), chosen)

    def observed_results(self) -> dict:
        """The observed results chosen by name (results computed elsewhere: a GPU's)."""
        return observed_values(self.names(), self.state.observed)

    def _code_of(self, key) -> str:
        """The code of an array chosen by name: its variable, or the load of an uploaded file."""
        name = key[0] if isinstance(key, tuple) else key
        return self._uploaded[name][1] if name in self._uploaded else name

    # ------------------------------------------------------------------ state -> compare()

    def arguments(self) -> dict:
        """The :func:`compare` keyword arguments the controls currently describe: with your
        arrays ``inputs=`` (the arrays chosen by name), no n, distribution or seed."""
        mine = self.state.source == "arrays"
        return compare_arguments(self.state, self.user_inputs() if mine else None)

    def sweep_arguments(self) -> dict:
        """The :func:`fpexplore.sweep` keyword arguments of the sweep view."""
        return sweep_arguments(self.state)


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
