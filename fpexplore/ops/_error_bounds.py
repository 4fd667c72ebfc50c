"""float64 arithmetic with a rigorous bound on the error (Adam's exact variant decides almost
every element of float16/bfloat16/float32 with it): each function takes values and bounds on
their absolute errors and returns the float64 result and a bound on its error, covering the
float64 rounding of the operation itself (``U`` relative, ``TINY`` absolute for underflow)."""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from ..formats import FormatInfo, round_f64

__all__ = ["TINY", "U", "add", "decide_bounds", "div", "mul", "scalar"]

U = 2.0**-53
TINY = 4 * 2.0**-1074


def add(a, ea, b, eb):
    s = a + b
    return s, ea + eb + U * np.abs(s) + TINY


def mul(a, ea, b, eb):
    p = a * b
    return p, np.abs(a) * eb + np.abs(b) * ea + ea * eb + U * np.abs(p) + TINY


def div(a, ea, b, eb):
    q = a / b
    room = np.abs(b) - eb
    ok = room > 0
    err = np.where(
        ok, (np.abs(b) * ea + np.abs(a) * eb) / (np.abs(b) * np.where(ok, room, 1.0)), np.inf
    )
    return q, err + U * np.abs(q) + TINY


def scalar(q: Fraction) -> tuple[float, float]:
    """A rational constant as float64 (correctly rounded) and a bound on its error."""
    f = float(q)  # int / int true division is correctly rounded in CPython
    return f, (0.0 if Fraction(f) == q else U * abs(f))


def decide_bounds(val, err, info: FormatInfo, out: np.ndarray, undecided: np.ndarray) -> None:
    """Where [val - E, val + E] rounds to one F value, store it; else mark undecided.

    The vectorized float64 counterpart of ``numerics.ziv_decide``: val and its error bound err
    are float64 arrays, E widens err to cover the float64 roundings of the ends."""
    E = 2.0 * err + 2.0 * U * np.abs(val) + TINY
    lo = round_f64(val - E, info)
    hi = round_f64(val + E, info)
    same = (lo.view(info.uint) == hi.view(info.uint)) & np.isfinite(E)
    out[...] = np.where(same, lo, out)
    undecided |= ~same
