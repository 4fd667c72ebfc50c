"""What a variant of an op is: a name, a one-line description and its kind (exact, library,
hypothesis or formula). Each op's spec (:mod:`fpexplore.ops.opspec`) lists its variants."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["EXACT", "FORMULA", "HYPOTHESIS", "KINDS", "LIBRARY", "Variant"]

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
