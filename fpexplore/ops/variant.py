"""What a variant of an op is: a name, a one-line description and its kind (exact, library,
hypothesis or formula). Each op's spec (:mod:`fpexplore.ops.opspec`) lists its variants."""

from __future__ import annotations

from dataclasses import dataclass, field

from .. import checks

__all__ = [
    "Settings",
    "check_order",
    "order_of",
    "EXACT",
    "FORMULA",
    "HYPOTHESIS",
    "KINDS",
    "LIBRARY",
    "Variant",
]

# what a variant is
EXACT = "exact"  # the correctly rounded (or high-precision) reference
LIBRARY = "library"  # reproduces a real library's behaviour, verified bit for bit here
HYPOTHESIS = "hypothesis"  # a library's behaviour as read from its source, not verified here
FORMULA = "formula"  # a textbook formula, evaluated exactly as written
KINDS = (EXACT, LIBRARY, HYPOTHESIS, FORMULA)


@dataclass(frozen=True)
class Variant:
    name: str
    description: str
    kind: str

    def __post_init__(self):
        if self.kind not in KINDS:
            raise ValueError(f"kind must be one of {KINDS}, got {self.kind!r}")

    def __str__(self) -> str:
        return f"{self.description} [{self.kind}]"


@dataclass(frozen=True)
class Settings:
    """What a formula variant takes in a variant spec (``"expanded(order=blocked)+fma"``):
    ``params`` (name -> (default, check)); ``order_of``: the op whose orders its ``order``
    parameter names ("matmul" also admits that order's parameters: ``order_params``);
    ``accumulate``: an ``@ACCUMULATOR`` applies (``held``: FP8, FP6, FP4 and ``fpx.format``'s
    of precision <= 25 too, in the orders that round each addition to them); ``fma``: ``+fma``
    applies, else ``why_no_fma`` says why not."""

    params: dict = field(default_factory=dict)
    order_of: str | None = None
    order_params: bool = False
    accumulate: bool = False
    held: bool = False
    fma: bool = False
    why_no_fma: str = ""


def check_order(op: str, order, user: str = "") -> str:
    """``order`` if it is an order of ``op`` a formula can reduce with (not the tensor cores:
    a product of their own, not a reduction); else ValueError listing those orders (saying
    they are ``user``'s, the formula's op, where given)."""
    from ..orders.registry import orders_of

    valid = [n for n, s in orders_of(op).items() if not s.takes_rounding]
    if order not in valid:
        raise ValueError(
            f"unknown order {checks.shown(order)}{' for ' + user if user else ''}; valid "
            f"orders: {', '.join(valid)}"
        )
    return order


def order_of(op: str, default: str = "sequential") -> dict:
    """The ``order`` parameter of a formula that reduces with ``op``'s orders
    (:func:`check_order`)."""
    return {"order": (default, lambda v: check_order(op, v))}
