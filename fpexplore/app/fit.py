"""Why a variant does not run on a format's data, as the explorer asks before a run: the
call's own ValueError, found without running it (an order the format refuses, an input
rounding that changes nothing, a held format an order or formula does not compute in), and
the op parameters a format refuses for a variant that takes them."""

from __future__ import annotations

from ..formats import format_info
from ..held import is_held_data
from ..ops.registry import get as get_op
from ..orders.arith import ROUNDED_OPS, held_accumulate, rounded_accumulator
from ..orders.products import check_rounding_changes
from ..orders.registry import TENSOR_CORE, lookup
from ..orders.tensor_core import input_format
from ..spec import VariantSpec, check_spec, taken_params, with_keywords

__all__ = ["refused_params", "unfit"]


def unfit(op: str, fmt: str, spec: VariantSpec, op_params=()) -> str | None:
    """Why ``spec`` does not run on ``fmt`` data (the call's own ValueError; else None): a
    library order not defined for it (the tensor cores on float64), the tensor cores of an
    arch with inputs it does not take (the V100's tf32), an input rounding that changes
    nothing (tf32 of float16 data), on FP8, FP6 or FP4 data an order
    that does not add in it or fma with it; with the ``op_params`` (name, value) pairs it
    takes (pass 20: kahan with accumulate="float16" typed runs on FP8 data)."""
    given = taken_params(spec, op, dict(op_params))
    if _refused_by(op, fmt, spec, given) is not None:
        return None  # the parameters are refused instead, and not given (refused_params)
    return _unfit(op, fmt, with_keywords(spec, given))


def refused_params(state) -> dict:
    """The op parameters the format refuses for a chosen variant that takes them (it runs
    without them, not with them), each with why: compare is not given them, the banner says
    so (pass 20: a link's input_rounding='tf32' opened with format="float16" was refused)."""
    out = {}
    for k, v in state.op_params:
        for spec in state.variants:
            why = _refused_by(state.op, state.format, spec, taken_params(spec, state.op, {k: v}))
            if why is not None:
                out[k] = why
                break
    return out


def _refused_by(op: str, fmt: str, spec: VariantSpec, given: dict) -> str | None:
    """Why ``fmt`` data refuse the op parameters ``given`` to ``spec``, which runs on them
    without those (else None)."""
    if not given or _unfit(op, fmt, spec) is not None:
        return None
    return _unfit(op, fmt, with_keywords(spec, given))


def _unfit(op: str, fmt: str, sp: VariantSpec) -> str | None:
    try:
        order = lookup(op, sp.name)
    except ValueError:  # (not an order: another op's variant)
        return _formula_unfit(op, fmt, sp)
    try:
        if (why := order.refuses_format(fmt)) is not None:
            return why
        check_rounding_changes(order, sp.input_rounding, format_info(fmt))  # (tf32 of float16)
        if sp.name == TENSOR_CORE:
            input_format(fmt, sp.input_rounding, sp.param_dict.get("arch", order.params["arch"][0]))
        elif is_held_data(fmt) and op in ROUNDED_OPS:
            rounded_accumulator(held_accumulate(order, op, fmt, sp.accumulate), order, op, sp.fma)
    except ValueError as e:
        return str(e)
    return None


def _formula_unfit(op: str, fmt: str, sp: VariantSpec) -> str | None:
    """Why a formula variant does not run on ``fmt`` data: not one of those that compute in
    it (FP8 data: welford), or an accumulator it does not compute in (pass 40: the explorer
    took both, then could show nothing)."""
    ok = get_op(op).variants_for(fmt)
    if sp.name not in ok:
        return f"{op} variant {sp.name!r} does not take {fmt} data; those that do: {', '.join(ok)}"
    if is_held_data(sp.accumulate):
        try:
            check_spec(sp, op)
        except ValueError as e:
            return str(e)
    return None
