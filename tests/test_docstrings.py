"""The public API's docstrings are numpydoc (issue 34, point 8: numpydoc for the public API).

Every function in ``fpx.__all__`` documents each of its parameters under "Parameters" and what
it gives back under "Returns" (or "Yields"); every class names its public fields under
"Attributes". Checked against ``inspect.signature`` and the fields, so the docstrings stay true
when a parameter or a field is added or renamed.
"""

from __future__ import annotations

import dataclasses
import inspect

import pytest

import fpexplore as fpx


def sections(doc: str) -> dict[str, list[str]]:
    """A numpydoc docstring's sections: header -> its lines (a header is a line of dashes under)."""
    lines = inspect.cleandoc(doc or "").splitlines()
    out: dict[str, list[str]] = {}
    current = None
    for i, line in enumerate(lines):
        under = lines[i + 1].strip() if i + 1 < len(lines) else ""
        if line.strip() and under and set(under) == {"-"} and line == line.lstrip():
            current = out.setdefault(line.strip(), [])
        elif current is not None and not (line.strip() and set(line.strip()) == {"-"}):
            current.append(line)
    return out


def entry_names(lines: list[str]) -> set[str]:
    """The names of a section's entries: unindented lines ``a, b : type`` (stars dropped)."""
    names = set()
    for line in lines:
        if line.strip() and line == line.lstrip():
            head = line.split(" : ")[0]
            names.update(n.strip().lstrip("*") for n in head.split(","))
    return names


def problems(obj) -> list[str]:
    """What ``obj``'s docstring misses: sections, or entries for parameters and fields."""
    found = sections(obj.__doc__)
    if inspect.isclass(obj):
        if dataclasses.is_dataclass(obj):
            public = [f.name for f in dataclasses.fields(obj)]
        elif issubclass(obj, tuple) and hasattr(obj, "_fields"):
            public = list(obj._fields)
        else:
            has = "Attributes" in found or "Parameters" in found
            return [] if has else ["no Attributes or Parameters section"]
        if "Attributes" not in found:
            return ["no Attributes section"]
        named = entry_names(found["Attributes"])
        return [
            f"field {n!r} not under Attributes"
            for n in public
            if n.lstrip("_") == n and n not in named
        ]
    missing = []
    params = [p for p in inspect.signature(obj).parameters if p not in ("self", "cls")]
    if params:
        named = entry_names(found.get("Parameters", []))
        if "Parameters" not in found:
            missing.append("no Parameters section")
        missing += [f"parameter {p!r} not under Parameters" for p in params if p not in named]
    if "Returns" not in found and "Yields" not in found:
        missing.append("no Returns section")
    return missing


def public(name: str):
    """``fpx.<name>``; None where it needs an extra that is not installed (fpx.explorer)."""
    try:
        return getattr(fpx, name)
    except ImportError:
        return None


PUBLIC = [
    n
    for n in fpx.__all__
    if public(n) is None or inspect.isroutine(public(n)) or inspect.isclass(public(n))
]


def test_the_check_can_fail():
    def f(a, *args, b=1, **kwargs):
        """Add.

        Parameters
        ----------
        a, *args : float
            The numbers.
        """

    assert problems(f) == [
        "parameter 'b' not under Parameters",
        "parameter 'kwargs' not under Parameters",
        "no Returns section",
    ]

    @dataclasses.dataclass
    class C:
        """A class.

        Attributes
        ----------
        x : int
            The x.
        """

        x: int
        y: int

    assert problems(C) == ["field 'y' not under Attributes"]
    assert "explain" in PUBLIC and "Explanation" in PUBLIC and "machine" not in PUBLIC


@pytest.mark.parametrize("name", PUBLIC)
def test_public_docstrings_are_numpydoc(name):
    obj = public(name)
    if obj is None:
        pytest.skip(f"fpx.{name} needs an extra that is not installed")
    assert problems(obj) == [], name
