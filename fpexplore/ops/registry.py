"""The list of ops (what the explorer, ``compare``, the CuPy backend and the recorder
enumerate): the :class:`~fpexplore.ops.opspec.OpSpec` tables of this package's op modules.

Passive: an op module is a module of ``fpexplore.ops`` with an ``OP_TABLE``
(:class:`~fpexplore.ops.opspec.OpTable`); this registry finds them by listing the package
(``pkgutil``) and reads their tables. Nothing registers itself, so adding an op is adding
its module (and its tests). The explorer lists the ops by their ``rank``, then by module
name, then in each module's own order.
"""

from __future__ import annotations

import importlib
import pkgutil
from pathlib import Path

from .. import checks
from .opspec import OpSpec, OpTable

__all__ = ["OP_SPECS", "get", "op_modules", "ops", "variants"]


def op_modules() -> list[str]:
    """The names of the op modules of ``fpexplore.ops`` (those that define an ``OP_TABLE``
    table), sorted by name."""
    names = []
    for info in sorted(pkgutil.iter_modules([str(Path(__file__).parent)]), key=lambda m: m.name):
        if info.name == __name__.rpartition(".")[2] or info.name.startswith("_"):
            continue
        module = importlib.import_module(f"{__package__}.{info.name}")
        if isinstance(getattr(module, "OP_TABLE", None), OpTable):
            names.append(info.name)
    return names


def _collect() -> dict[str, OpSpec]:
    found: list[tuple[int, str, int, OpSpec]] = []
    seen: dict[str, str] = {}
    for name in op_modules():
        table = importlib.import_module(f"{__package__}.{name}").OP_TABLE
        for position, spec in enumerate(table.values()):
            if spec.name in seen:
                raise RuntimeError(
                    f"op {spec.name!r} is defined by both ops/{seen[spec.name]}.py and "
                    f"ops/{name}.py"
                )
            seen[spec.name] = name
            found.append((spec.rank, name, position, spec))
    return {spec.name: spec for *_, spec in sorted(found, key=lambda t: t[:3])}


OP_SPECS: dict[str, OpSpec] = _collect()  # op name -> its spec, in the explorer's order


def get(op: str) -> OpSpec:
    """The spec of ``op``, or ValueError listing the ops."""
    return OP_SPECS[checks.choice("op", op, OP_SPECS, "valid ops")]


def ops() -> dict[str, str]:
    """Every op the explorer offers (sum, dot and matmul have evaluation *orders*, see
    fpx.orders; the others have formula *variants*).

    Returns
    -------
    dict of str to str
        Op name -> one-line description.
    """
    return {name: spec.description for name, spec in OP_SPECS.items()}


def variants(op: str, *, details: bool = False) -> dict:
    """Variants of ``op``: name -> "description [kind]".

    kind is "exact" (correctly rounded reference), "library" (a real library's behaviour,
    verified here), "hypothesis" (a library's behaviour read from source, unverified) or
    "formula" (a textbook formula as written). For sum/dot/matmul the variants are the orders.

    Parameters
    ----------
    op : one of ``fpx.ops()``
    details : bool
        True: the values are the :class:`~fpexplore.ops.variant.Variant` records, not strings.

    Returns
    -------
    dict
        name -> "description [kind]" (``details=True``: name -> Variant).

    Raises
    ------
    ValueError
        An unknown ``op`` (the message lists the ops).

    Examples
    --------
    >>> list(fpx.variants("mean"))
    ['numpy', 'sequential', 'pairwise', 'kahan', 'exact']
    """
    table = get(op).variants
    if checks.boolean("details", details):
        return dict(table)
    return {n: str(v) for n, v in table.items()}
