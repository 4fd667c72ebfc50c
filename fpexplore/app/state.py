"""The explorer's state and its transitions, pure: no widgets, no figures, nothing computed.

:class:`State` is frozen: the :func:`fpexplore.compare` arguments the controls describe, the
data source (your arrays by variable name, the observed results), the view and the A/B picks.
Each transition takes a state (and plain values) and returns a new one; the app's one change
handler replaces its state with the result and renders it. Variant specs enter the state once,
parsed (:class:`~fpexplore.spec.VariantSpec`, where a string enters: the ``variants`` keyword,
the builder's spec, a preset's list; never again per redraw); results are named by their key,
``(variant spec, backend)`` (the spec's canonical spelling), an observed result by
``(name, "observed")``.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from dataclasses import dataclass, replace

import numpy as np

from .. import checks
from .._registry import INFO
from ..backends import NAMES as BACKEND_NAMES
from ..data import DISTRIBUTIONS
from ..experiment import parse_variants, taken_keywords
from ..libspec import LIBRARIES, backend_libraries
from ..ops.opspec import Params, data_format
from ..ops.registry import get as get_op
from ..ops.registry import ops as op_names
from ..orders.arith import (
    ORDER_OPS,
)
from ..orders.registry import TENSOR_CORE, lookup, orders_for
from ..quantize import SCHEMES
from ..spec import (
    VariantSpec,
    applied_params,
    parse_spec,
    with_keywords,
)
from .fit import refused_params, unfit

SIZES = [10**k * m for k in range(1, 8) for m in (1, 3)]  # 10 ... 3e7: a log slider
# every backend but the CPU libraries, which join where installed (fpexplore.libspec)
BACKEND_CHOICES = tuple(b for b in BACKEND_NAMES if b not in backend_libraries())
VIEWS = ("errors", "A vs B", "sweep", "bits", "quantize")
SWEEP_UNITS = (("ulps", "ulps"), ("absolute error", "abs"))
PLACES = ("side", "view", "picks")  # where a control shows: its column, or above the figure
SOURCES = (("generated", "generated"), ("your arrays", "arrays"))  # the data-source control
OBSERVED = "observed"  # the backend of a result computed elsewhere (a key's second part)
TENSOR_CORE_LABEL = "GPU tensor cores"


def _size(n) -> int:
    """n as the state keeps it: a whole number from 1 to the slider's end (never clamped)."""
    if checks.integer("n", n, 1) > SIZES[-1]:
        raise ValueError(f"n={n}: the largest size the app offers is {SIZES[-1]:,}")
    return int(n)


def _backends(value) -> tuple:
    names = checks.once("backends", checks.name_list("backends", value))
    for b in names:
        checks.choice("backend", b, tuple(BACKEND_NAMES))
    return tuple(names)


def data_formats() -> tuple:
    """Every op's data formats (``OpSpec.formats``): the values the format control keeps."""
    return tuple(dict.fromkeys(f for op in op_names() for f in get_op(op).formats()))


def _one_of(name: str, choices):
    """A check that the value is one of ``choices`` (values or (label, value) pairs; a
    function: the choices as it returns them when called)."""

    def check(value):
        found = choices() if callable(choices) else choices
        return checks.choice(name, value, [c[1] if isinstance(c, tuple) else c for c in found])

    return check


def _data_format(value) -> str:
    """``value`` as one of :func:`data_formats`, else the ValueError naming ``format``, which
    for a name it does not know says a format of fpx.format is defined per kernel (a link
    or a state of a kernel that defined one, opened in a fresh one)."""
    try:
        return _one_of("format", data_formats)(value)
    except ValueError as e:
        if isinstance(value, str) and value not in INFO:
            raise ValueError(
                f"{e} (a format of your own? fpx.format(precision=..., emax=..., "
                f"name={value!r}) defines it in this kernel, before the explorer opens)"
            ) from None
        raise


@dataclass(frozen=True)
class Control:
    """One row of the app's control table, :data:`CONTROLS`: a value of the :class:`State`,
    a keyword of :func:`fpexplore.explorer` and an attribute of the app, shown by one widget.

    ``widget``: the ipywidgets class (by name) and its ``label``; ``options``: (state,
    installed CPU libraries) -> its choices (None: the widget has none); ``check``: the value
    as the state keeps it, or a ValueError naming it; ``recompute``: a change recomputes
    ``compare()`` (else it redraws); ``compare``: passed to ``compare()`` under its name,
    ``"always"`` or only with ``"generated"`` data (the widget hides with your arrays), ""
    never; ``omit``: a value passed to ``compare()`` as nothing; ``transition``: (state,
    value, formats) -> state where a change does more than set the value; ``place``: the
    controls' column or above the figure (:data:`PLACES`); ``shown``: state -> whether the
    widget shows (None: always); ``widget_args``: its other keyword arguments."""

    name: str
    default: object
    widget: str
    label: str
    check: Callable
    options: Callable | None = None
    recompute: bool = True
    compare: str = ""
    omit: object = None
    transition: Callable | None = None
    place: str = "side"
    shown: Callable | None = None
    widget_args: tuple = ()


@dataclass(frozen=True)
class State:
    """Everything the app shows, as values. ``settings``: (name, value) per row of
    :data:`CONTROLS` (read as attributes: ``state.n``); ``variants``: the selection,
    parsed specs (VariantSpec); ``extra``: specs built or given beyond the op's own (newest
    first, on top of the list); ``inputs``: (the op's input name, the variable chosen for it,
    "" for none) per input; ``observed``: the observed results' variable names; ``pick_a``,
    ``pick_b``: result keys; ``want_picks``: the pair a preset (or a link) asks for, taken
    once its results exist; ``chosen``: the selection is the user's (given, picked, a
    preset's): a new format keeps what it still offers, where the format's defaults,
    untouched, become the new format's own; ``set_aside``: the chosen ones a format left
    out, selected again with a format that offers them (until the user picks anew)."""

    settings: tuple = ()
    variants: tuple = ()
    op_params: tuple = ()  # (name, value) pairs as given; compare gets those taken (_taken)
    extra: tuple = ()
    inputs: tuple = ()
    observed: tuple = ()
    pick_a: tuple | None = None
    pick_b: tuple | None = None
    want_picks: tuple = ()
    chosen: bool = False
    set_aside: tuple = ()  # chosen variants a format left out, back where one offers them

    def __getattr__(self, name):
        if name in CONTROLS:
            return dict(self.settings).get(name, CONTROLS[name].default)
        raise AttributeError(f"'State' object has no attribute {name!r}")

    def set(self, **values) -> State:
        """This state with these values (controls' and fields'), as given: unchecked."""
        mine = {k: values.pop(k) for k in list(values) if k in CONTROLS}
        settings = {**dict(self.settings), **mine}
        kept = tuple((k, settings[k]) for k in CONTROLS if k in settings)
        return replace(self, settings=kept, **values)


def nearest_size(n: int) -> int:
    """The slider's size nearest to ``n`` (a whole number >= 1) on a log scale."""
    n = checks.integer("n", n, 1)
    return min(SIZES, key=lambda s: abs(math.log10(s) - math.log10(n)))  # (any int's log)


def sizes(state: State) -> list[int]:
    """The size slider's steps: SIZES, joined by the state's size where it is between them."""
    return sorted({*SIZES, int(state.n)})


def _own_variants(state: State, names=None) -> list[VariantSpec]:
    """The op's variants for the format (or ``names`` of them), as specs."""
    return [VariantSpec(n) for n in names or get_op(state.op).variants_for(state.format)]


def variant_options(state: State) -> list[VariantSpec]:
    """The variants offered: the specs built or given that run on the format (on top, where
    the list shows them), then those the op has for the format."""
    base = _own_variants(state)
    built = [e for e in state.extra if e not in base]
    fit = [e for e in built if unfit(state.op, state.format, e, state.op_params) is None]
    return fit + base


def arch_choices() -> dict:
    """The tensor cores' architectures the builder offers (its order's choices in the
    registry), each with what its model is checked against."""
    return dict(lookup("matmul", TENSOR_CORE).choices["arch"])


def builder_names(op: str, fmt: str) -> list[tuple]:
    """The builder's variants as (label, name): the op's for the format, and the orders that
    take the format through an input rounding (the tensor cores on float32: +tf32)."""
    names = list(get_op(op).variants_for(fmt))
    if op in ORDER_OPS:
        names += [n for n in orders_for(op, fmt, rounded=True) if n not in names]
    return [(TENSOR_CORE_LABEL if n == TENSOR_CORE else n, n) for n in names]


def built_spec(name, *, arch="h100", block=0, fma=False, rounding="", acc="") -> str:
    """The variant spec the builder's parts describe, e.g. "tree(block=256)+tf32" (the
    tensor cores take an arch and an input rounding only)."""
    for key, v in (("name", name), ("arch", arch), ("rounding", rounding), ("acc", acc)):
        if v is not None and not isinstance(v, str):
            raise TypeError(f"{key} must be a string, got {checks.shown(v)}")
    checks.boolean("fma", fma)
    checks.integer("block", block, 0)  # (0: the order's default; parse_spec checks the rest)
    text = name or ""
    tc = text == TENSOR_CORE
    params = [f"arch={arch}"] if tc else []
    if block and not tc:
        params.append(f"block={block}")
    if params:
        text += f"({', '.join(params)})"
    if fma and not tc:
        text += "+fma"
    if rounding:
        text += f"+{rounding}"
    if acc and not tc:
        text += f"@{acc}"
    return text


def with_variants(state: State, selected=None) -> State:
    """Select these specs (parsed: VariantSpecs, the user's choice; None: keep the selection
    where it is still offered, else the op's defaults for the format, not chosen); specs
    beyond the op's own join the list."""
    extra = list(state.extra)
    if selected is not None:  # (the user's own choice: nothing set aside comes back)
        base = _own_variants(state)
        extra = [t for t in reversed(selected) if t not in base and t not in extra] + extra
        state = state.set(chosen=True, set_aside=())
    state = state.set(extra=tuple(dict.fromkeys(extra)))
    opts = variant_options(state)
    if selected is None:
        selected = [v for v in state.variants if v in opts]
        if not selected:
            defaults = get_op(state.op).defaults_for(state.format)
            selected, state = _own_variants(state, defaults), state.set(chosen=False)
    return state.set(variants=tuple(v for v in selected if v in opts))


def initial(variants=None, installed=(), op_params=(), **values) -> State:
    """The first state from :func:`fpexplore.explorer`'s arguments: a value per row of
    :data:`CONTROLS` (the rest at their defaults; n: the op's own first size), each as
    given or a clear error (nothing clamped to a control's range); ``installed``: the CPU
    libraries that join the backends."""
    checks.refuse_unknown("fpx.explorer", values, set(CONTROLS))
    given = {k: CONTROLS[k].check(v) for k, v in values.items() if k != "n" or v is not None}
    for b in given.get("backends", ()):
        if b in backend_libraries() and b not in installed:  # (as compare says it)
            raise ValueError(f"backend {b!r}: {b} is not installed ({LIBRARIES[b].install})")
        checks.choice("backend", b, BACKEND_CHOICES + tuple(installed))
    if variants is not None:
        variants = checks.name_list("variants", variants)
    defaults = {k: row.default for k, row in CONTROLS.items()}
    state = State(op_params=tuple(op_params)).set(**{**defaults, **given})
    data_format(get_op(state.op), state.format)
    if "n" not in given:
        state = state.set(n=int(get_op(state.op).default_n))  # the op's own first size
    if variants is not None:  # where the variants enter as text: parsed, once
        variants = parse_variants(state.op, variants, state.format)
        _refuse_unfit(state.op, state.format, variants, state.op_params)
    return list_names(with_variants(state, variants), {}, follow=False)  # inputs: none yet


def _refuse_unfit(op: str, fmt: str, variants, op_params=()) -> None:
    """The variants given that ``fmt`` data refuse (:func:`unfit`): a ValueError saying why,
    never a selection that quietly leaves them out."""
    for v in variants:
        if (why := unfit(op, fmt, v, op_params)) is not None:
            raise ValueError(f"variants: {str(v)!r} on {fmt} data: {why}")


def opened_on(state: State, formats: dict, given: set) -> State:
    """The first state with your arrays offered (``formats``: name -> format): with source
    "arrays" the format is theirs; a ``format`` given (``given``: the keywords given) that is
    not theirs is a ValueError, as are ``variants`` given that their format refuses."""
    state = list_names(state, formats, follow=False)
    theirs = arrays_format(state, formats)
    if theirs is None or theirs == state.format:
        return state
    if "format" in given:
        raise ValueError(
            f"format={state.format!r}: your arrays are {theirs}, and the format is theirs: "
            "leave format out"
        )
    if "variants" in given:
        _refuse_unfit(state.op, theirs, state.variants, state.op_params)
    return follow_data_format(state, formats)


def checked_request(args: dict) -> dict:
    """compare()'s arguments as they are, or a ValueError saying what to choose."""
    if not args["backends"]:
        raise ValueError("choose at least one backend")
    if "emulated" in args["backends"] and not args["variants"]:
        raise ValueError("choose at least one variant")
    return args


def set_control(state: State, formats: dict | None = None, **values) -> State:
    """Rows of :data:`CONTROLS` set: each value checked, then its transition (a new op, a
    new format, another data source: ``formats``, the arrays offered by name with their
    formats) or the value kept."""
    checks.refuse_unknown("set_control", values, set(CONTROLS))
    for name, value in values.items():
        row = CONTROLS[name]
        if row.transition is not None:
            state = row.transition(state, value, formats or {})
        else:
            state = state.set(**{name: row.check(value)})
    return state


def set_op(state: State, op, formats=None) -> State:
    """A new op: its own first size (a matmul of 10^5 would be refused), its default variants,
    no built specs or op parameters (they belong to an op), its inputs picked again (sum x;
    dot a, b; matmul A, B). ``formats``: the arrays offered by name, each with its format
    (None: not one)."""
    checks.choice("op", op, list(op_names()))
    state = reset_for_op(state, op, formats or {})
    return follow_data_format(with_variants(state, None), formats or {})


def reset_for_op(state: State, op: str, formats: dict) -> State:
    """The state moved to ``op``: its default size, no variants, inputs or op parameters, the
    default format where the op does not take the current one, your arrays named again."""
    # the op parameters (block=64) were given for the op, as specs are built for it: another
    # op that takes none would refuse every comparison (compare: "unexpected keyword")
    n = nearest_size(get_op(op).default_n)
    state = state.set(op=op, variants=(), extra=(), n=n, inputs=(), op_params=(), set_aside=())
    if state.format not in get_op(op).formats():  # (FP8 data: sum and dot only)
        state = state.set(format=CONTROLS["format"].default)
    return list_names(state, formats, follow=False)


def set_format(state: State, fmt, formats: dict | None = None) -> State:
    """A new format: the variants offered with it, the selection kept where still offered;
    the old format's defaults, untouched, become the new one's (float32, FP8 and back to
    float32 selects float32's five again, not FP8's two). With your arrays (``formats``: their
    formats by name) the format is theirs: another one is a ValueError saying so."""
    fmt = data_format(get_op(state.op), fmt)
    theirs = arrays_format(state, formats or {})
    if theirs is not None and fmt != theirs:
        raise ValueError(f"format {fmt}: your arrays are {theirs}, and the format is theirs")
    return _to_format(state, fmt)


def _to_format(state: State, fmt: str) -> State:
    """The state on ``fmt`` data: a chosen selection keeps what the format offers, and what
    it leaves out is set aside, to come back with a format that offers it again (pass 34:
    float32 to FP8 and back lost tree and kahan)."""
    wanted = tuple(dict.fromkeys((*state.variants, *state.set_aside)))
    state = state.set(format=fmt, variants=wanted if state.chosen else (), set_aside=())
    state = with_variants(state, None)
    return state.set(set_aside=tuple(v for v in wanted if v not in state.variants))


def left_out(old: State, new: State) -> list[str]:
    """The variants chosen before a change of format (the same op) that the new format left
    out, each with why (float32 to FP8: no fma; pass 16: dropped without a word); none where
    the old format's defaults, untouched, became the new one's. A new op that does not take
    the old format: that, and the format it has (pass 30: FP8 to mean became float32
    without a word)."""
    if new.op != old.op and old.format not in get_op(new.op).formats():
        return [f"{new.op} takes no {old.format} data: the format is {new.format}"]
    if new.op != old.op or new.format == old.format or not old.chosen:
        return []
    fmt = new.format
    return [
        f"{v} is left out on {fmt} data: "
        + (unfit(new.op, fmt, v, new.op_params) or f"not offered for {fmt}")
        for v in old.variants
        if v not in new.variants
    ]


def add_variant(state: State, spec: str) -> State:
    """Add a variant spec (the builder's text) to the list, on top, and select it; an invalid
    one is a ValueError."""
    spec = parse_spec(spec, state.op)
    if (why := unfit(state.op, state.format, spec, state.op_params)) is not None:
        raise ValueError(f"{spec} on {state.format} data: {why}")
    extra = state.extra if spec in variant_options(state) else (spec, *state.extra)
    chosen = tuple(dict.fromkeys([*state.variants, spec]))
    return state.set(extra=extra, variants=chosen, chosen=True)


def remove_variants(state: State, specs) -> State:
    """Take these variants (specs, or their canonical spelling as the list shows it) out of
    the selection (built specs leave the list too); one spec alone is a list of one."""
    if isinstance(specs, (str, VariantSpec)):
        specs = [specs]
    gone = {str(s) for s in specs}
    state = state.set(extra=tuple(e for e in state.extra if str(e) not in gone))
    return with_variants(state, [v for v in state.variants if str(v) not in gone])


@functools.cache
def input_names(op: str) -> tuple:
    """The op's inputs as (name, ndim) in order (sum: x; dot: a, b; matmul: A, B); empty
    where an input is not an array (linspace's start, stop and num; adam_step's hyper)."""
    probe = get_op(op).inputs(4, "float32", "uniform", 0, Params())
    names = [k for k in probe if k != "format"]
    if not all(isinstance(probe[k], np.ndarray) for k in names):
        return ()
    return tuple((k, probe[k].ndim) for k in names)


def list_names(state: State, formats: dict, *, follow: bool = True) -> State:
    """The arrays offered by name changed (``formats``: name -> its format or None): each
    input keeps a choice that is still there, else takes the array named as the input (x for
    sum's x), else none; the observed results keep those still there."""
    chosen = dict(state.inputs)
    inputs = []
    for k, _nd in input_names(state.op):
        var = chosen.get(k, "")
        inputs.append((k, var if var in formats else (k if k in formats else "")))
    observed = tuple(v for v in state.observed if v in formats)
    state = state.set(inputs=tuple(inputs), observed=observed)
    return follow_data_format(state, formats) if follow else state


def set_source(state: State, source, formats: dict) -> State:
    """Generated data, or your arrays by name (the format then is theirs)."""
    checks.choice("source", source, [v for _, v in SOURCES])
    return list_names(state.set(source=source), formats)


def set_input(state: State, name: str, var: str, formats: dict) -> State:
    """The variable chosen for one input ("" for none), one of ``formats`` (the arrays offered:
    name -> format); the format follows the arrays'."""
    checks.choice("input", name, [k for k, _ in state.inputs], f"{state.op}'s inputs")
    checks.choice("var", var, ["", *formats], "the arrays offered")
    inputs = tuple((k, var if k == name else v) for k, v in state.inputs)
    return follow_data_format(state.set(inputs=inputs), formats)


def set_observed(state: State, names) -> State:
    """The observed results chosen by variable name (results computed elsewhere): a name, or
    a list of names."""
    names = checks.name_list("observed", names)
    for v in names:
        if not isinstance(v, str) or not v:
            raise TypeError(f"observed: a variable name is a string, got {checks.shown(v)}")
    return state.set(observed=tuple(dict.fromkeys(names)))  # (each once)


def follow_data_format(state: State, formats: dict) -> State:
    """With your arrays the format is theirs (the first chosen input's that has one), and the
    variants offered are those of that format (as :func:`set_format` chooses them)."""
    fmt = arrays_format(state, formats)
    return state if fmt is None or fmt == state.format else _to_format(state, fmt)


def arrays_format(state: State, formats: dict) -> str | None:
    """With your arrays, their format (the first chosen input's that has one), where the op
    takes it (else the app says why: :func:`~.yourdata.check_user_arrays`); else None."""
    if state.source != "arrays":
        return None
    fmt = next((formats.get(v) for _, v in state.inputs if formats.get(v)), None)
    return fmt if fmt in get_op(state.op).formats() else None


def pick(state: State, a=None, b=None) -> State:
    """Results A and B by key ((variant, backend); an observed one (name, "observed")). The
    user's pick replaces a preset's pair still waiting for its results."""
    for name, key in (("a", a), ("b", b)):
        if key is not None and not (
            isinstance(key, tuple) and len(key) == 2 and all(isinstance(k, str) for k in key)
        ):
            raise TypeError(
                f"{name} must be a result's key, (variant, backend) or (name, 'observed'), "
                f"got {checks.shown(key)}"
            )
    return replace(
        state,
        pick_a=a if a is not None else state.pick_a,
        pick_b=b if b is not None else state.pick_b,
        want_picks=(),
    )


def settle_picks(state: State, keys: list) -> State:
    """A and B among the results shown (``keys``): a preset's pair where it asked for one,
    else the choice where it is still there (B equal to A too), else the first two."""
    a, b = state.pick_a, state.pick_b
    if len(state.want_picks) == 2 and all(w in keys for w in state.want_picks):
        a, b = state.want_picks
    kept = a in keys
    a = a if kept else keys[0]
    fallback = keys[1] if len(keys) > 1 else keys[0]
    # (B equal to A where the user picked both stays: pass 24 swapped it at the next seed)
    b = b if b in keys and (b != a or kept) else fallback
    return state.set(pick_a=a, pick_b=b, want_picks=())


def computed_part(state: State) -> tuple:
    """What the comparison depends on: a change here recomputes, elsewhere redraws."""
    rows = tuple(getattr(state, k) for k, row in CONTROLS.items() if row.recompute)
    return (*rows, state.variants, state.op_params, state.inputs, state.observed)


def compare_arguments(state: State, inputs=None) -> dict:
    """The :func:`fpexplore.compare` keyword arguments of the state: with your arrays
    ``inputs=`` (given: the arrays chosen by name), no n, distribution or seed."""
    mine = state.source == "arrays"
    kw = {
        k: getattr(state, k)
        for k, row in CONTROLS.items()
        if (row.compare == "always" or (row.compare == "generated" and not mine))
        and getattr(state, k) != row.omit
    }
    if mine:
        kw["inputs"] = inputs
    if "emulated" not in state.backends:  # (no variants run: compare refuses them, pass 22)
        return kw
    return {**kw, "variants": list(state.variants), **_taken(state)}  # (parsed: the specs)


def _taken(state: State) -> dict:
    """The op parameters that change a variant chosen (the others stay in the state for
    when one that takes them is chosen again: pass 18, FP8 data dropped the blocked orders
    and compare refused the view's block=)."""
    params, refused = dict(state.op_params), refused_params(state)
    order = params.get("order")
    applied = set(taken_keywords(state.op, (), order)).union(
        *(applied_params(s, state.op, params) for s in state.variants)
    )  # (pass 21: one every chosen variant sets itself changes nothing: compare refuses it)
    return {k: v for k, v in params.items() if k in applied and k not in refused}


def applied_notes(state: State) -> list:
    """Sentences for the banner: each chosen variant an op parameter changes, and what it
    computes then (pass 19: with fma=True typed beside the explorer, a 'sequential' built
    with the FMA box cleared computed with FMA under its plain name)."""
    if "emulated" not in state.backends:  # (pass 22: chosen, shown, and not run)
        return ["the emulated backend is off: the variants chosen are not run"]
    params, out = _taken(state), []
    for spec in state.variants:
        if given := applied_params(spec, state.op, params):
            said = ", ".join(f"{k}={checks.shown(v)}" for k, v in given.items())
            out.append(
                f"{spec} computes as {with_keywords(spec, given)}: {said} applies to every "
                "variant that takes it"
            )
    for k, why in refused_params(state).items():
        out.append(f"{why}; {k}= is not applied (the variants run without it)")
    return out


def sweep_arguments(state: State) -> dict:
    """The :func:`fpexplore.sweep` keyword arguments of the sweep view: the state's compare()
    arguments, sizes by decades up to n, five seeds from the view's (the last five seeds
    where fewer follow it: pass 21, seed=MAX_SEED failed over a seeds=5 nobody gave)."""
    kw = compare_arguments(state.set(source="generated"))
    n = kw.pop("n")
    kw["sizes"] = [10**k for k in range(1, 9) if 10**k < n] + [int(n)]
    kw["seed"] = min(kw["seed"], checks.MAX_SEED - 4)
    kw["seeds"] = 5
    return kw


def select_variants(state: State, specs) -> State:
    """The variants selected in the list, by the canonical spelling it shows (each one
    offered, so already parsed)."""
    offered = {str(v): v for v in variant_options(state)}
    chosen = dict.fromkeys(str(s) for s in checks.name_list("variants", specs))  # (each once)
    for s in chosen:
        checks.choice("variant", s, offered, "offered")
    return state.set(variants=tuple(offered[s] for s in chosen), chosen=True, set_aside=())


def shown_part(state: State) -> tuple:
    """What the view draws beyond the comparison: A and B where the view uses them, the
    sweep's unit in the sweep; a change here redraws without recomputing."""
    picks = (state.pick_a, state.pick_b) if state.view in ("A vs B", "bits") else ()
    rows = tuple(getattr(state, k) for k, row in CONTROLS.items() if not row.recompute)
    return (*rows, picks)


def _generated(state: State) -> bool:
    return state.source == "generated"


def _threads(value) -> int:
    return checks.integer("threads", value, 0)


def _named(*names):
    return lambda state, installed=(): list(names)


def _thread_options(state, installed=()) -> list:
    """0 (the libraries' defaults), 1, 2, 4, 8, and the count asked for (threads=3) too."""
    shown = [("default", 0), ("1", 1), ("2", 2), ("4", 4), ("8", 8)]
    return shown + (
        [] if state.threads in dict(shown).values() else [(str(state.threads), state.threads)]
    )


# The app's controls, one row each (:class:`Control`): adding a control is one row here.
CONTROLS = {
    row.name: row
    for row in (
        Control(
            "op",
            "sum",
            "Dropdown",
            "op",
            _one_of("op", op_names),
            lambda state, installed=(): list(op_names()),
            compare="always",
            transition=lambda state, v, formats: set_op(state, v, formats),
        ),
        Control(
            "source",
            "generated",
            "Dropdown",
            "data from",
            _one_of("source", SOURCES),
            lambda state, installed=(): list(SOURCES),
            transition=lambda state, v, formats: set_source(state, v, formats),
        ),
        Control(
            "format",
            "float32",
            "Dropdown",
            "format",
            _data_format,
            lambda state, installed=(): list(get_op(state.op).formats()),
            compare="generated",
            transition=lambda state, v, formats: set_format(state, v, formats),
        ),
        Control(
            "n",
            100_000,
            "SelectionSlider",
            "n",
            _size,
            lambda state, installed=(): sizes(state),  # a size between the steps joins them
            compare="generated",
            shown=_generated,
            widget_args=(("continuous_update", False),),
        ),
        Control(
            "distribution",
            "uniform",
            "Dropdown",
            "data",
            _one_of("distribution", DISTRIBUTIONS),
            _named(*DISTRIBUTIONS),
            compare="generated",
            shown=_generated,
        ),
        Control(
            "seed",
            0,
            "IntText",  # (not Bounded: it clamped -5 to 0 without a word, pass 22)
            "seed",
            checks.seed,
            compare="generated",
            shown=_generated,
        ),
        Control(
            "backends",
            ("numpy", "emulated"),
            "SelectMultiple",
            "backend",
            _backends,
            lambda state, installed=(): list(BACKEND_CHOICES + tuple(installed)),
            compare="always",
            widget_args=(("rows", 4),),
        ),
        Control(  # compare(threads=): the real CPU libraries' threads (0: their defaults)
            "threads",
            0,
            "Dropdown",
            "threads",
            _threads,
            _thread_options,
            compare="always",
            omit=0,
        ),
        Control(
            "view",
            "errors",
            "ToggleButtons",
            "view",
            _one_of("view", VIEWS),
            _named(*VIEWS),
            recompute=False,
            place="view",
            widget_args=(("style", {"button_width": "auto"}),),
        ),
        Control(  # the sweep's y axis
            "sweep_unit",
            "ulps",
            "ToggleButtons",
            "error in",
            _one_of("sweep_unit", SWEEP_UNITS),
            _named(*SWEEP_UNITS),
            recompute=False,
            place="picks",
            shown=lambda state: state.view == "sweep",
            widget_args=(("style", {"button_width": "auto"}),),
        ),
        Control(  # the quantize view's block-scaled format (fpx.quantize): a redraw
            "scheme",
            "mxfp4",
            "Dropdown",
            "scheme",
            _one_of("scheme", tuple(SCHEMES)),
            _named(*SCHEMES),
            recompute=False,
            place="picks",
            shown=lambda state: state.view == "quantize",
        ),
    )
}
