"""Evaluation orders for reductions: sum, dot and matmul, each bit-exact by definition.

- ``arith``      the arithmetic model: accumulator formats, compute types, rounding of
                 results; the rules of which setting applies where (fma, split_k, combine,
                 input rounding)
- ``orderspec``  OrderSpec, everything about one order, and the kinds of order
- ``registry``   the orders by op; fpexplore's own and the tensor cores: parameters, runner,
                 matmul code, error depth, the detective's grid, GPU kernel, warm-up
                 kernels, reproducer source; the library wing (fpexplore.libraries: real CPU
                 libraries' loops) registers its orders here when it loads
- ``summation``  ``sum``
- ``products``   ``dot``, ``matmul`` (fma, split-K, tf32/bfloat16 input rounding), ``exact_matmul``
- ``_kernels``   the compiled loops (numba, imported on first use)
- ``_rounded_kernels`` sum's orders with their additions in another rounding mode
                 (``rounding=``: directed, nearest-away, stochastic; numba, first use)
- ``_matmul_kernels`` matmul's float16/bfloat16 orders and exact_matmul's bounds, a row
                 against tiles of columns on SIMD lanes (numba, imported on first use)
- ``tensor_core`` ``mma``: D = C + A @ B as a GPU's tensor cores (NVIDIA) or matrix cores
                 (AMD) compute it; the NVIDIA block sum
- ``block_scaled`` mma with scale_a, scale_b: Blackwell's block-scaled kinds (mxf8f6f4,
                 mxf4, mxf4nvf4) by MMA-Sim's rules
- ``matrix_core`` the AMD matrix cores' sums (CDNA1 exact, CDNA2 pairwise, CDNA3 late c)
- ``_matrix_core_kernels`` their compiled loop: each output element's chain of blocks
                 (numba, imported on first use)
- ``gpu_models`` every modelled GPU's parameters, defined once: Rules per architecture, Gpu
                 per arch key, product aliases, the block-scaled kinds (ScaledKind);
                 ``fpx.gpus()`` the table of them
- ``trees``      accumulation trees as data: the ``revealed`` order's parameter
"""

from .gpu_models import gpus
from .products import dot, exact_matmul, matmul
from .registry import orders
from .summation import sum  # noqa: A004
from .tensor_core import mma

__all__ = ["dot", "exact_matmul", "gpus", "matmul", "mma", "orders", "sum"]
