"""What a variant of a composite op is, and the table each op module declares its ops in.

Each op module (linspace, elementwise, stats, ml) defines ``OPS = OpTable()`` and adds its ops
with their variants; :mod:`fpexplore.ops.registry` lists the modules' tables (nothing
registers itself on import).
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["EXACT", "FORMULA", "HYPOTHESIS", "KINDS", "LIBRARY", "OpTable", "Variant"]

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


class OpTable(dict):
    """op name -> (one-line description, {variant name: Variant}), as one module declares them."""

    def add(self, op: str, description: str, variants: list[Variant]) -> None:
        self[op] = (description, {v.name: v for v in variants})

    def lookup(self, op: str, variant: str) -> Variant:
        """The Variant, or ValueError listing the valid names."""
        table = self[op][1]
        if variant not in table:
            raise ValueError(
                f"unknown variant {variant!r} for {op}; valid variants: {', '.join(table)}"
            )
        return table[variant]
