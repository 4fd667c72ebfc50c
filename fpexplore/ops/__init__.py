"""Composite ops and their formula variants, each with an exact (or high-precision) reference.

- ``variant``      what a variant is, and the table each op module declares its ops in
- ``registry``     ``ops()`` and ``variants(op)``: the modules' tables, what the explorer lists
- ``linspace``     NumPy 1.x / 2.x and CuPy linspace semantics, lerp, fma, exact
- ``elementwise``  exp, log, sin, tanh, sqrt, pow: library results vs correctly rounded
- ``stats``        variance (two-pass, one-pass, Welford), softmax and logsumexp (naive, shifted)
- ``ml``           cdist (expanded vs direct) and the Adam step (operation orders)
"""

import sys
import types

from .registry import ops, variants

__all__ = ["ops", "variants"]


class _CallableModule(types.ModuleType):
    """This subpackage, callable as fpx.ops(): ``fpx.ops`` is both the subpackage (its
    modules are its attributes) and the function, so neither shadows the other."""

    def __call__(self, *args, **kwargs):
        return ops(*args, **kwargs)


sys.modules[__name__].__class__ = _CallableModule
