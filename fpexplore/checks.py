"""Argument checks shared by the public functions: one message per kind of mistake.

* ``TypeError``: a value of the wrong type (text where a number is asked, ``None``, a float
  seed), or a keyword argument the function does not take (named, with the accepted ones).
* ``ValueError``: a value of the right type that is not allowed (out of range, not a power
  of two where one is asked, not one of the choices; the valid ones are listed).

A True/False setting given anything but True or False (``1``, ``"yes"``, ``None`` where None
is not a setting) is a wrong type: ``TypeError``, wherever the setting is checked (a keyword
argument, an order's parameter such as ``ftz=``, a formula's ``clamp=``). A parameter read
from a variant spec's text (``"cub(aligned=1)"``) is refused by :func:`fpexplore.spec.parse_spec`
as a ``ValueError`` naming the spec: the text is the argument there, and it is of the right
type.

The ``*_check`` factories return the one-argument validators that parameter tables hold
(``{"block": (128, int_check("block", 2, 1 << 16, pow2=True))}``): the same checks, the same
messages, by name.

Imports nothing but the standard library: every layer may use it.
"""

from __future__ import annotations

import numbers
import os
from collections.abc import Callable

import numpy as np

__all__ = [
    "MAX_SEED",
    "boolean",
    "boolean_check",
    "choice",
    "choice_check",
    "int_check",
    "integer",
    "name_list",
    "refuse_unknown",
    "same_labels",
    "seed",
    "shown",
]

MAX_SEED = 2**32 - 1  # seeds are 0 .. 2**32 - 1 (NumPy takes more; the kernels take int64)


def shown(value, limit: int = 80) -> str:
    """``repr(value)``, cut to ``limit`` characters (an error never echoes kilobytes; an int
    past Python's 4300 digits by its size, pass 20: its repr raised)."""
    if isinstance(value, int) and value.bit_length() > 14_000:
        return f"an integer of about {int(value.bit_length() * 0.30103) + 1} digits"
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 14] + f"... ({len(text)} chars)"


def refuse_unknown(function: str, given, accepted) -> None:
    """TypeError naming the keyword arguments in ``given`` that ``function`` does not take,
    and the ones it does."""
    unknown = sorted(set(given) - set(accepted))
    if unknown:
        s = "s" if len(unknown) > 1 else ""
        raise TypeError(
            f"{function}() got unexpected keyword argument{s} "
            f"{', '.join(shown(k) for k in unknown)}; it accepts: "
            f"{', '.join(sorted(accepted)) or 'none'}"
        )


def integer(
    name: str, value, low: int | None = None, high: int | None = None, *, pow2: bool = False
) -> int:
    """``value`` as an int in ``[low, high]`` (either end may be open; ``pow2``: a power of
    two). TypeError for anything that is not an integer (bool, float, str, None); ValueError
    out of range or not a power of two."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an integer, got {shown(value)}")
    v = int(value)
    if (low is not None and v < low) or (high is not None and v > high):
        if high is None:
            rule = f">= {low}"
        elif low is None:
            rule = f"<= {high}"
        else:
            rule = f"from {low} to {high}"
        raise ValueError(f"{name} must be {rule}, got {v}")
    if pow2 and (v < 1 or v & (v - 1)):
        raise ValueError(f"{name} must be a power of two (2, 4, ..., 1024, ...), got {v}")
    return v


def int_check(
    name: str, low: int | None = None, high: int | None = None, *, pow2: bool = False
) -> Callable:
    """A validator: ``integer(name, v, low, high, pow2=pow2)``."""
    return lambda v: integer(name, v, low, high, pow2=pow2)


def boolean(name: str, value) -> bool:
    """``value`` if it is True or False (NumPy's bools too); TypeError for anything else (1,
    "yes", None)."""
    if type(value).__name__ not in ("bool", "bool_"):
        raise TypeError(f"{name} must be True or False, got {shown(value)}")
    return bool(value)


def boolean_check(name: str, *, none: bool = False) -> Callable:
    """A validator: ``boolean(name, v)``; with ``none=True`` None passes too (a setting whose
    None means "the default for the data", as the GPU kernels' ``ftz``)."""

    def check(v):
        return None if none and v is None else boolean(name, v)

    return check


def seed(value, name: str = "seed") -> int:
    """A data or order seed: an integer from 0 to :data:`MAX_SEED`."""
    return integer(name, value, 0, MAX_SEED)


def choice(name: str, value, valid, listed: str = "valid"):
    """The one of ``valid`` that ``value`` equals (np.dtype("float16") is "float16"); else
    ValueError listing the valid ones after ``listed`` (TypeError for a value that cannot be
    one: unhashable, or an array); a NumPy type as its dtype (np.float16, as np.dtype(...),
    pass 19)."""
    if isinstance(value, type) and issubclass(value, np.generic):
        value = np.dtype(value)
    try:
        ok = bool(value in valid)
    except (TypeError, ValueError):  # (an array's `in` asks for its truth value)
        raise TypeError(
            f"{name} must be one of {', '.join(map(str, valid))}; got {shown(value)}"
        ) from None
    if not ok:
        raise ValueError(f"unknown {name} {shown(value)}; {listed}: {', '.join(map(str, valid))}")
    return next(v for v in valid if v == value)


def choice_check(name: str, options) -> Callable:
    """A validator: ``choice(name, v, options)``."""
    options = tuple(options)
    return lambda v: choice(name, v, options)


def name_list(name: str, value) -> list:
    """A list of names from one name (a string is one name, never its characters), or an
    iterable of them. TypeError for anything else."""
    if isinstance(value, (str, os.PathLike)) or not hasattr(value, "__iter__"):
        return [value]
    if isinstance(value, dict):
        raise TypeError(f"{name} must be a name or a list of names, got a dict")
    return list(value)


def once(name: str, values) -> list:
    """``values`` (a list), or a ValueError naming those listed more than once (a second
    backend, factor or candidate would be dropped or counted again: pass 38)."""
    values = list(values)
    seen: dict = {}
    for v in values:
        seen[v] = seen.get(v, 0) + 1
    twice = [v for v, k in seen.items() if k > 1]
    if twice:
        raise ValueError(f"{name} lists {', '.join(map(repr, twice))} more than once")
    return values


def same_labels(xs, what: str, names) -> None:
    """TypeError where two pandas inputs are labelled differently (index, columns):
    fpexplore pairs values by position, pandas by label (pass 35: equal Series in another
    order were "0 of 2 equal")."""
    framed = [(i, x) for i, x in enumerate(xs) if type(x).__module__.startswith("pandas")]
    for i, x in framed[1:]:
        j, first = framed[0]
        for part in ("index", "columns"):
            mine, theirs = getattr(x, part, None), getattr(first, part, None)
            if mine is not None and theirs is not None and not mine.equals(theirs):
                this, that = (names[i], names[j]) if names else (f"input {i + 1}", f"input {j + 1}")
                verb = "differ" if part == "columns" else "differs"
                raise TypeError(
                    f"{what}: {this}'s {part} {verb} from {that}'s: fpexplore pairs values by "
                    f"position, pandas by label; align them first ({this}.reindex_like(...)) "
                    "or pass .to_numpy() of each"
                )
