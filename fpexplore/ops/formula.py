"""Formula arithmetic shared by the composite ops: elementwise IEEE operations rounded once to
a storage format (:class:`RoundedArith`), as a framework that writes every intermediate
tensor in that format does. float16 and bfloat16 are computed in float64 and rounded once,
which is the correctly rounded result since 53 >= 2p + 2."""

from __future__ import annotations

import numpy as np

from ..formats import FormatInfo, round_f64

__all__ = ["RoundedArith"]

_F64 = np.dtype(np.float64)


class RoundedArith:
    """Elementwise IEEE operations rounded once to the format ``info``. ``sqrt``: "ieee"
    (correctly rounded) or a callable taking and returning an array of the format (a
    library's own square root, e.g. torch's)."""

    def __init__(self, info: FormatInfo, sqrt="ieee"):
        self.info = info
        self.native = info.name in ("float32", "float64")  # NumPy's own IEEE loops
        self.sqrt_with = sqrt

    def const(self, value: float) -> np.ndarray:
        """A Python float rounded once to the format (0-d array)."""
        return np.asarray(round_f64(np.asarray(float(value), dtype=_F64), self.info))

    def _apply(self, f, *args):
        with np.errstate(all="ignore"):
            if self.native:
                return f(*args)
            return round_f64(np.asarray(f(*(np.asarray(a, dtype=_F64) for a in args))), self.info)

    def add(self, a, b):
        return self._apply(np.add, a, b)

    def sub(self, a, b):
        return self._apply(np.subtract, a, b)

    def mul(self, a, b):
        return self._apply(np.multiply, a, b)

    def div(self, a, b):
        return self._apply(np.divide, a, b)

    def sqrt(self, a):
        if self.sqrt_with == "ieee":
            return self._apply(np.sqrt, a)
        a = np.asarray(a, dtype=self.info.dtype)
        out = np.asarray(self.sqrt_with(a))
        if out.shape != a.shape or out.dtype != self.info.dtype:
            raise TypeError(
                f"the sqrt callable returned {out.dtype} of shape {out.shape}, "
                f"expected {self.info.dtype} of shape {a.shape}"
            )
        return out
