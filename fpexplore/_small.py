"""next_up and next_down for arrays of ml_dtypes' small formats (FP8, FP6, FP4, E8M0).

Their bit order is not their value order everywhere (formats without infinity keep NaN or
the largest value at the top, E8M0 has no sign and no zero), so the step is taken in a table
of every pattern's value rather than by adding one to the pattern.
"""

from __future__ import annotations

from functools import cache

import numpy as np


@cache
def _table(dtype: np.dtype) -> tuple[np.ndarray, bool, bool]:
    """The format's finite values, ascending, one zero (float64, exact); whether it has an
    infinity and a -0 (read from ml_dtypes' own values of its 256 byte patterns)."""
    with np.errstate(invalid="ignore"):
        v = np.arange(256, dtype=np.uint8).view(dtype).astype(np.float64)
    neg_zero = bool(((v == 0) & np.signbit(v)).any())
    return np.unique(v[np.isfinite(v)]), bool(np.isinf(v).any()), neg_zero


def step(arr: np.ndarray, name: str, direction: int) -> np.ndarray:
    """IEEE nextUp (direction +1) or nextDown (-1) of every element of ``arr`` (an array of
    format ``name``'s ml_dtypes type), in that type. NaN stays; nextUp(+inf) is +inf;
    nextUp(-min subnormal) is -0 where the format has -0. A finite value with no neighbour that
    way (the largest value of a format without infinity; E8M0's least value) is a ValueError
    naming ``x``."""
    vals, has_inf, has_neg_zero = _table(arr.dtype)
    with np.errstate(invalid="ignore"):
        x = arr.astype(np.float64)
    finite = np.isfinite(x)
    if direction > 0:
        idx = np.searchsorted(vals, x, side="right")
    else:
        idx = np.searchsorted(vals, x, side="left") - 1
    beyond = finite & ((idx < 0) | (idx >= len(vals)))
    if beyond.any() and not has_inf:
        v = float(x[beyond].flat[0])
        which = "greater" if direction > 0 else "smaller"
        raise ValueError(
            f"next_{'up' if direction > 0 else 'down'}: x holds {v!r}, which has no {which} "
            f"value in {name} (the format has no infinity{'' if vals[0] < 0 else ' and no sign'})"
        )
    out = np.where(finite, vals[np.clip(idx, 0, len(vals) - 1)], x)
    out = np.where(beyond, np.inf * direction, out)
    # toward zero from the smallest values: -0 from below, +0 from above (IEEE)
    neg_zero = finite & (out == 0) & (x < 0) & has_neg_zero
    out = np.where(neg_zero, -0.0, np.where(finite & (out == 0), 0.0, out))
    # the infinities: next_up(-inf) is the least finite value, next_down(+inf) the largest
    out = np.where(np.isinf(x) & (np.sign(x) == -direction), vals[0 if direction > 0 else -1], out)
    result = out.astype(arr.dtype)
    return np.where(np.isnan(x), arr, result).astype(arr.dtype)
