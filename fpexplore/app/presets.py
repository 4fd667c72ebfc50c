"""The explorer's presets: one click that answers a common question, as a transition of the
state (:mod:`.state`), with what a preset asked for and the data's format refuses, in words."""

from __future__ import annotations

from dataclasses import dataclass

from .. import checks
from ..orders.arith import ORDER_OPS
from ..spec import VariantSpec, parse_spec
from .fit import unfit
from .state import State, arrays_format, builder_names, reset_for_op, with_variants


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


def preset_variants(state: State, label: str) -> tuple[list[VariantSpec], list[str]]:
    """The variants of the preset ``label`` that the state's op and format take, and those it
    leaves out, each in words with why (FP8 data: no fma; pass 15: left out without a word)."""
    checks.choice("preset", label, PRESETS, "presets")
    offered = {v for _, v in builder_names(state.op, state.format)}
    chosen, left = [], []
    for spec in (parse_spec(v, state.op) for v in PRESETS[label].variants):
        why = unfit(state.op, state.format, spec, state.op_params)
        if why is None and spec.name in offered:
            chosen.append(spec)
        else:
            why = why or f"not offered for {state.format}"
            left.append(f"preset {label!r} leaves out {spec} on {state.format} data: {why}")
    return chosen, left


def apply_preset(state: State, label: str, formats=None) -> State:
    """One of PRESETS: the op it needs (kept if it fits), the format it needs (unless your
    arrays are chosen: the format is theirs), its variants (those the op offers) and the
    emulated backend that runs them, NumPy's row where it asks for it, its view, and its A/B
    pair."""
    checks.choice("preset", label, PRESETS, "presets")
    preset = PRESETS[label]
    if state.op not in preset.ops:
        state = reset_for_op(state, preset.op, formats or {})
    theirs = arrays_format(state, formats or {})
    if theirs is not None:
        state = state.set(format=theirs)
    elif preset.format:
        state = state.set(format=preset.format)
    chosen, _ = preset_variants(state, label)
    if preset.numpy and "numpy" not in state.backends:
        state = state.set(backends=("numpy", *state.backends))
    if "emulated" not in state.backends:  # (its variants run there: pass 22, np.sum twice)
        state = state.set(backends=(*state.backends, "emulated"))
    # two variants: show them against each other; more: their errors
    view = preset.view or ("A vs B" if len(chosen) == 2 else "errors")
    state = with_variants(state.set(view=view), chosen)
    return state.set(want_picks=tuple((str(v), "emulated") for v in chosen)[:2])


def preset_notes(old: State, new: State, label: str) -> list[str]:
    """What the preset ``label`` changed that it was not asked for, and what it left out, in
    words: the data's format where it moved (the op it needs does not take the old one, or it
    needs its own; pass 21: FP8 data became float32 without a word), then the variants the
    format refuses (:func:`preset_variants`)."""
    notes = []
    if new.format != old.format:
        needs = PRESETS[label].format == new.format
        why = f"it needs {new.format} data" if needs else f"{new.op} does not take {old.format}"
        notes.append(f"preset {label!r} moves the data from {old.format} to {new.format}: {why}")
    return notes + preset_variants(new, label)[1]
