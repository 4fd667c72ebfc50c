"""Ops: one module per group of ops, each op one spec beside its implementation.

An op module defines its ops' functions and ``OP_TABLE``, an :class:`~.opspec.OpTable` of their
:class:`~.opspec.OpSpec`: variants, input generation, NumPy's call, the exact reference, the
CuPy counterpart and the GPU recording cases. ``registry`` finds the op modules of this
package (nothing registers itself): adding an op is adding a module and its tests.

- ``registry``     ``ops()``, ``variants(op)``, ``get(op)``: the op modules' tables, listed
- ``opspec``       what an op is to an experiment (OpSpec), the recordings made of it
- ``variant``      what a variant is (a name, a description, its kind)
- ``reductions``   sum, dot, matmul: their variants are the evaluation orders of ``orders/``
- ``mean``         the mean: NumPy's and the textbook orders against the exact mean
- ``linspace``     NumPy 1.x / 2.x and CuPy linspace semantics, lerp, fma, exact
- ``elementwise``  exp, log, sin, tanh, sqrt, pow: library results vs correctly rounded
- ``formula``      the formula arithmetic of the composite ops below (rounded once per
                   operation to a storage format)
- ``variance``     variance: two-pass, one-pass (textbook), Welford, np.var
- ``softmax``      softmax and logsumexp (naive, shifted)
- ``cdist``        cdist: the expanded formula against the direct one
- ``adam``         the Adam step in its operation orders
- ``adam_exact``   the Adam step's exact variant (error bounds, exact rationals, intervals)
- ``_error_bounds`` float64 arithmetic with rigorous error bounds (adam's exact variant)
"""

from .registry import ops, variants

__all__ = ["ops", "variants"]
