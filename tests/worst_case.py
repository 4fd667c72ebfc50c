"""What holds for NumPy's BLAS on every machine: Higham's worst-case bound for a product.

A BLAS kernel (OpenBLAS picks one per CPU; MKL, Accelerate, ... others) sums each dot product
of length k in an order of its own, with or without FMA, split across threads as it likes.
Whatever the order, |computed - real| <= gamma_k |a|^T |b| (Higham, *Accuracy and Stability
of Numerical Algorithms*, 2nd ed., §3.1: a summation tree of any shape has depth at most k,
and an FMA has one rounding where a multiply and an add have two). Tests that assert on NumPy's
own products (marked ``blas``) check this bound instead of numbers measured on one machine.
"""

from __future__ import annotations

import numpy as np

import fpexplore as fpx


def matmul_bound(a, b) -> np.ndarray:
    """gamma_k |a| @ |b| in float64, for ``a @ b`` of one float format (k = a.shape[-1]).

    |a| @ |b| is itself computed by the float64 BLAS: its terms are nonnegative, so its
    relative error is below gamma_k in float64 (< 1e-12 for any k used here); the factor
    1 + 1e-9 covers it.
    """
    a, b = np.asarray(a), np.asarray(b)
    fmt = fpx.format_of(a)
    k = a.shape[-1]
    return fpx.metrics.gamma(k, fmt) * (np.abs(a).astype(np.float64) @ np.abs(b)) * (1 + 1e-9)


def within_bound(computed, exact, bound) -> np.ndarray:
    """Elementwise: is ``computed`` within ``bound`` of the real value that ``exact`` (the
    correctly rounded result) stands for?"""
    exact = np.asarray(exact)
    err = np.abs(np.asarray(computed, np.float64) - exact.astype(np.float64))
    return err <= bound + np.asarray(fpx.ulp(exact), np.float64) / 2
