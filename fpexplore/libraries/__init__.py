"""The library wing: real CPU libraries' own loops, emulated bit for bit, and those libraries
as backends. The core never imports it; it loads by name the first time one of its orders is
asked for or the order tables are listed (``fpexplore.orders.registry``), or a backend row
of torch, jax or polars runs (``fpexplore.backends``), or ``fpx.machine.run_elsewhere`` (and
the other names of ``elsewhere``) is asked for. Loading registers its orders.

- ``orders``      the OrderSpecs of the libraries' loops (OpenBLAS, NumPy's einsum, polars,
                  LLVM, numba's prange, torch, XLA); each SIMD order's loops in a table by
                  its parameter, found by name (simd_loop, simd_sum)
- ``simd``        the SIMD-accumulator family's numba kernel (simd_sum runs one shape)
- ``simd_shapes`` its shapes, pure (no numba): Stage, SimdOrder, the builders of the
                  OpenBLAS dot, einsum and LLVM loops
- ``frameworks``  torch.sum / torch.dot (and MKL's sdot as probed), XLA's jnp.sum / jnp.dot
- ``backend``     torch, jax and polars as compare's backends (their own functions here)
- ``elsewhere``   one real library call run here (run_here) or in a fresh process with its
                  own settings (run_elsewhere: OpenBLAS kernel, threads); fpx.machine finds
                  its names too

Adding a library's loop: a loop of the SIMD family (its shape in simd_shapes.py, a row in
its order's table in orders.py; docs/simd_orders.md, tests/slow_simd_orders.py) or a
function of frameworks.py (docs/framework_orders.md, tests/slow_framework_orders.py); its
``OrderSpec`` in orders.py's ``LIBRARY_ORDERS`` with ``library=`` and its ``formats``.
"""

from ..orders import registry
from .orders import LIBRARY_ORDERS

__all__ = ["LIBRARY_ORDERS", "dispatchers"]


def dispatchers() -> dict:
    """The wing's compiled kernels by name, for the warm-up (imports numba)."""
    from . import frameworks, simd

    return {**simd.DISPATCHERS, **frameworks.DISPATCHERS}


registry.register(LIBRARY_ORDERS)
