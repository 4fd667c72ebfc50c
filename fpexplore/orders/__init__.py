"""Evaluation orders for reductions: sum, dot and matmul, each bit-exact by definition.

- ``_registry``  order names, one-line descriptions, parameters and their validation
- ``summation``  ``sum`` and the shared machinery (accumulator formats, rounding of results)
- ``products``   ``dot``, ``matmul`` (fma, split-K, tf32/bfloat16 input rounding), ``exact_matmul``
- ``_kernels``   the compiled loops (numba, imported on first use)
"""

from ._registry import orders
from .products import dot, exact_matmul, matmul
from .summation import sum  # noqa: A004

__all__ = ["dot", "exact_matmul", "matmul", "orders", "sum"]
