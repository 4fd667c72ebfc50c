"""The list of composite ops and their formula variants (what the explorer enumerates): the
tables the op modules declare, in the explorer's order. Passive: importing an op module
changes nothing here."""

from __future__ import annotations

from ..orders.registry import OPS as ORDER_OPS
from . import elementwise, linspace, ml, stats
from .variant import EXACT, FORMULA, HYPOTHESIS, LIBRARY, Variant

__all__ = ["OPS", "lookup", "ops", "variants"]

_PREFERRED = (
    "linspace",
    "cdist",
    "adam_step",
    "variance",
    "softmax",
    "logsumexp",
    "exp",
    "log",
    "sin",
    "tanh",
    "sqrt",
    "pow",
)  # the order the explorer lists them

_ALL = {**linspace.OPS, **ml.OPS, **stats.OPS, **elementwise.OPS}
OPS = {name: _ALL[name] for name in _PREFERRED if name in _ALL}
OPS.update({name: t for name, t in _ALL.items() if name not in OPS})

_ORDER_OP_DESCRIPTIONS = {
    "sum": "sum of all elements",
    "dot": "dot product of two vectors",
    "matmul": "matrix product",
}
assert set(_ORDER_OP_DESCRIPTIONS) == set(ORDER_OPS)


def ops() -> dict[str, str]:
    """Every op the explorer offers: name -> one-line description (sum, dot and matmul have
    evaluation *orders*, see fpx.orders; the others have formula *variants*)."""
    return {**_ORDER_OP_DESCRIPTIONS, **{name: t[0] for name, t in OPS.items()}}


def variants(op: str, *, details: bool = False) -> dict:
    """Variants of ``op``: name -> "description [kind]" (``details=True``: name -> Variant).

    kind is "exact" (correctly rounded reference), "library" (a real library's behaviour,
    verified here), "hypothesis" (a library's behaviour read from source, unverified) or
    "formula" (a textbook formula as written). For sum/dot/matmul the variants are the orders.
    """
    if op in ORDER_OPS:
        kind = {"definition": FORMULA, "library": LIBRARY, "hypothesis": HYPOTHESIS, "exact": EXACT}
        table = {n: Variant(n, s.description, kind[s.kind]) for n, s in ORDER_OPS[op].items()}
    elif op in OPS:
        table = OPS[op][1]
    else:
        raise ValueError(f"unknown op {op!r}; valid ops: {', '.join(ops())}")
    return dict(table) if details else {n: str(v) for n, v in table.items()}


def lookup(op: str, variant: str) -> Variant:
    """The Variant of a composite op, or ValueError listing the valid names."""
    if op not in OPS:
        raise ValueError(f"unknown op {op!r}; ops with formula variants: {', '.join(OPS)}")
    table = OPS[op][1]
    if variant not in table:
        raise ValueError(
            f"unknown variant {variant!r} for {op}; valid variants: {', '.join(table)}"
        )
    return table[variant]
