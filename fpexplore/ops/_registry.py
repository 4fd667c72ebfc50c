"""Registry of composite ops and their formula variants (what the explorer enumerates)."""

from __future__ import annotations

from dataclasses import dataclass

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


_OPS: dict[str, tuple[str, dict[str, Variant]]] = {}
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


def register(op: str, description: str, variants: list[Variant]) -> None:
    """Register an op (called once by each ops module at import)."""
    _OPS[op] = (description, {v.name: v for v in variants})


def _ensure_loaded() -> None:
    from . import elementwise, linspace, ml, stats  # noqa: F401  (they register themselves)


def ops() -> dict[str, str]:
    """Every op the explorer offers: name -> one-line description (sum, dot and matmul have
    evaluation *orders*, see fpx.orders; the others have formula *variants*)."""
    _ensure_loaded()
    from ..orders._registry import OPS as ORDER_OPS

    out = {
        "sum": "sum of all elements",
        "dot": "dot product of two vectors",
        "matmul": "matrix product",
    }
    assert set(out) == set(ORDER_OPS)
    order = [o for o in _PREFERRED if o in _OPS] + [o for o in _OPS if o not in _PREFERRED]
    out.update({name: _OPS[name][0] for name in order})
    return out


def variants(op: str, *, details: bool = False) -> dict:
    """Variants of ``op``: name -> "description [kind]" (``details=True``: name -> Variant).

    kind is "exact" (correctly rounded reference), "library" (a real library's behaviour,
    verified here), "hypothesis" (a library's behaviour read from source, unverified) or
    "formula" (a textbook formula as written). For sum/dot/matmul the variants are the orders.
    """
    _ensure_loaded()
    if op in ("sum", "dot", "matmul"):
        from ..orders._registry import OPS as ORDER_OPS

        kind = {"definition": FORMULA, "library": LIBRARY, "hypothesis": HYPOTHESIS, "exact": EXACT}
        table = {n: Variant(n, s.description, kind[s.kind]) for n, s in ORDER_OPS[op].items()}
    elif op in _OPS:
        table = _OPS[op][1]
    else:
        raise ValueError(f"unknown op {op!r}; valid ops: {', '.join(ops())}")
    return dict(table) if details else {n: str(v) for n, v in table.items()}


def lookup(op: str, variant: str) -> Variant:
    """The Variant, or ValueError listing the valid names."""
    table = _OPS[op][1]
    if variant not in table:
        raise ValueError(
            f"unknown variant {variant!r} for {op}; valid variants: {', '.join(table)}"
        )
    return table[variant]
