"""AMD matrix cores (CDNA1-3), bit for bit: one block of products and c at a time (the loop
over the blocks is compiled: _matrix_core_kernels.amd_loop, numba, imported on first use).

The rules (docs/tensor_cores.md, "AMD matrix cores") of the MATLAB models of Khattak and
Mikaitis (MI100MC.m, MI210MC.m, MI300MC.m; parameters in gpu_models), written here from them:

- ``exact`` (CDNA1): c + the products of the block, summed exactly, rounded once to
  nearest-even binary32 (with subnormals, overflow to ±inf); +0 for an exact zero.
- ``pairwise`` (CDNA2): subnormal inputs flushed (the product becomes +0), each product
  rounded to binary32 and flushed below 2**-126 to +0; then binary32 additions, nearest-even,
  each result's subnormals flushed to a zero of its sign: (p0 + p1) + (p2 + p3), then c + it.
- ``late-c`` (CDNA3): the nonzero products aligned to their largest alignment exponent E
  (as NVIDIA's, no floor) keeping 23 + neab fraction bits, truncated toward zero, summed
  exactly; c (exponent ec = max(floor(log2|c|), -126), -126 for c = 0) is added after: the
  operand with the smaller exponent is rounded down (toward -inf) to the other's grid, the
  products' sum to 2**(ec - 31) (7 more bits), c to 2**(E - 24); the exact sum of the two is
  rounded once to nearest-even binary32.
- ``odd-even`` (CDNA3 FP8): the products at even and at odd k summed apart as in late-c
  (each group from its own largest exponent), the smaller group rounded down to the larger's
  grid and added; then c as in late-c, except that a c more than 25 binades below the
  products' exponent is dropped (truncated) rather than rounded down.

Special values, per block: a NaN, 0 * inf or infinities of both signs give NaN, otherwise an
infinity gives that infinity; where the architecture has a product limit, a product of
magnitude 2**128 or more counts as an infinity of its sign.
"""

from __future__ import annotations

import numpy as np

from ..formats import format_info

__all__ = ["amd_blocks", "significands"]


def significands(x64: np.ndarray, precision: int, emin: int) -> tuple[np.ndarray, np.ndarray]:
    """x = m * 2**(e - precision + 1) with e = max(floor(log2|x|), emin): (m, e) as int64
    (signed m; 0, 0 for zeros and non-finite values)."""
    ok = np.isfinite(x64) & (x64 != 0)
    safe = np.where(ok, x64, 1.0)
    _, e = np.frexp(safe)
    e = np.maximum(e.astype(np.int64) - 1, emin)
    m = np.where(ok, np.ldexp(safe, (precision - 1 - e).astype(np.int32)), 0.0)
    return m.astype(np.int64), np.where(ok, e, 0)


def amd_blocks(A3, B3, C3, fmt: str, rules, block: int, neab) -> np.ndarray:
    """D = C3 + A3 @ B3 (shapes (n, M, K), (n, K, N), (n, M, N)) by the AMD rules ``rules``
    (gpu_models.Rules) for input format ``fmt``, blocks of ``block`` chained: float64 values."""
    from ._matrix_core_kernels import KINDS, amd_loop

    kind = rules.sum_of(fmt, "float32")
    if kind == "pairwise" and block & (block - 1):
        raise ValueError(f"a pairwise tree needs a block of a power of two, got {block}")
    info = format_info(fmt)
    a = np.ascontiguousarray(A3, dtype=np.float64)
    bt = np.ascontiguousarray(np.swapaxes(B3, 1, 2), dtype=np.float64)  # (n, N, K)
    bits = 2 * (info.precision - 1) - (neab or 0) + 1  # fraction bits relative to 23 + neab
    c = np.ascontiguousarray(C3, dtype=np.float64)
    out = np.empty(c.shape)
    amd_loop(a, bt, c, out, block, KINDS.index(kind), rules.product_limit,
             float(info.smallest_normal), info.precision, info.emin, bits)  # fmt: skip
    return out
