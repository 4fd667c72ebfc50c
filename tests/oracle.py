"""Slow, independent reference implementations written from the definitions.

Nothing here imports fpexplore. Values are exact ``fractions.Fraction``s; rounding to a format
is done by locating the binade with Fraction comparisons and rounding the scaled value, which
is a different route from the package's integer-shift code. IEEE special-value rules are
spelled out case by case from IEEE 754-2019 (sections 6.1-6.3, 5.4.1, 9.4).
"""

from __future__ import annotations

import math
from fractions import Fraction

import ml_dtypes
import numpy as np

# name: (dtype, precision p, emin, emax)
SPECS = {
    "float16": (np.dtype(np.float16), 11, -14, 15),
    "bfloat16": (np.dtype(ml_dtypes.bfloat16), 8, -126, 127),
    "float32": (np.dtype(np.float32), 24, -126, 127),
    "float64": (np.dtype(np.float64), 53, -1022, 1023),
    "tf32": (np.dtype(np.float32), 11, -126, 127),
    "tf32-rne": (np.dtype(np.float32), 11, -126, 127),
    "tf32-truncate": (np.dtype(np.float32), 11, -126, 127),
    "bfloat16-truncate": (np.dtype(np.float32), 8, -126, 127),
    "float8_e4m3": (np.dtype(np.float32), 4, -6, 8),
    "float8_e5m2": (np.dtype(np.float32), 3, -14, 15),
}
# how each rounds: nearest with ties to even unless named here. tf32 is cuBLAS's conversion
# (cvt.rna: ties away from zero, NVIDIA PTX ISA), tf32-truncate and bfloat16-truncate keep
# the top bits.
TIES = {"tf32": "away", "tf32-truncate": "zero", "bfloat16-truncate": "zero"}
# OCP FP8 E4M3 (ml_dtypes float8_e4m3fn): the all-ones pattern is NaN, no infinity; the largest
# value is 1.75 * 2**8 = 448 and what rounds beyond it becomes NaN
MAX_FINITE = {"float8_e4m3": Fraction(448)}
UINT = {16: np.uint16, 32: np.uint32, 64: np.uint64}
# ml_dtypes' type of each format fpexplore holds in float32 (FP8, the MX elements, E8M0): its
# bit patterns read by ml_dtypes, a second way to the values
ML_TYPES = {
    "float8_e4m3": ml_dtypes.float8_e4m3fn,
    "float8_e5m2": ml_dtypes.float8_e5m2,
    "float8_e4m3fnuz": ml_dtypes.float8_e4m3fnuz,
    "float8_e5m2fnuz": ml_dtypes.float8_e5m2fnuz,
    "float6_e2m3": ml_dtypes.float6_e2m3fn,
    "float6_e3m2": ml_dtypes.float6_e3m2fn,
    "float4_e2m1": ml_dtypes.float4_e2m1fn,
    "float8_e8m0": ml_dtypes.float8_e8m0fnu,
}

CHECKED = {"cases": 0}  # incremented by every oracle comparison (reported by conftest)


def floor_log2(q: Fraction) -> int:
    """e with 2**e <= q < 2**(e+1), q > 0 (by comparison, starting from a float estimate)."""
    e = q.numerator.bit_length() - q.denominator.bit_length()
    two = Fraction(2)
    while two**e > q:
        e -= 1
    while two ** (e + 1) <= q:
        e += 1
    return e


def max_finite(fmt: str) -> Fraction:
    if fmt in MAX_FINITE:
        return MAX_FINITE[fmt]
    _, p, _, emax = SPECS[fmt]
    return (2 - Fraction(1, 2 ** (p - 1))) * Fraction(2) ** emax


def round_fraction(q: Fraction, fmt: str) -> float:
    """Round the exact rational q to nearest, ties to even (TIES: other modes), in fmt; return a
    Python float (exactly the format's value; ±inf on overflow, NaN for float8_e4m3; the
    largest finite value for truncation; +0.0 for q == 0)."""
    _, p, emin, emax = SPECS[fmt]
    if q == 0:
        return 0.0
    sign = -1 if q < 0 else 1
    a = abs(q)
    e = max(floor_log2(a), emin)
    quantum = Fraction(2) ** (e - p + 1)
    m = a / quantum
    n = math.floor(m)
    rest = m - n
    mode = TIES.get(fmt, "even")
    half = Fraction(1, 2)
    if mode == "even" and (rest > half or (rest == half and n % 2 == 1)):
        n += 1
    if mode == "away" and rest >= half:
        n += 1
    r = n * quantum
    if r > max_finite(fmt):
        if fmt in MAX_FINITE:
            return math.nan
        if mode == "zero":  # toward zero never passes the largest finite value
            return sign * float(max_finite(fmt))
        return sign * math.inf
    return sign * float(r)


def mpf_fraction(v) -> Fraction:
    """The exact value of an mpmath mpf as a Fraction. mpmath keeps the mantissa as a Python
    int, or as gmpy2's ``mpz`` when gmpy2 is installed (conda environments with sympy ship it);
    ``Fraction`` arithmetic on an ``mpz`` numerator fails, so the mantissa is made an int."""
    sign, man, exp, _ = v._mpf_  # (man_exp drops the sign)
    return (-1) ** sign * Fraction(int(man)) * Fraction(2) ** int(exp)


def to_format(value: float, fmt: str):
    """A Python float that is exactly representable in fmt, as a NumPy scalar of fmt."""
    with np.errstate(invalid="ignore"):
        return np.array([value], dtype=np.float64).astype(SPECS[fmt][0])[0]


def same(x, y) -> bool:
    """Bitwise identity of two format scalars, except that any NaN equals any NaN."""
    x = np.asarray(x)
    y = np.asarray(y)
    if x.dtype != y.dtype:
        return False
    if np.isnan(x.astype(np.float64)) and np.isnan(y.astype(np.float64)):
        return True
    u = UINT[x.dtype.itemsize * 8]
    return bool(x.view(u) == y.view(u))


def _is_neg(v: float) -> bool:
    return math.copysign(1.0, v) < 0


def fma(a: float, b: float, c: float, fmt: str) -> float:
    """IEEE fusedMultiplyAdd(a, b, c), round to nearest even, as a Python float."""
    if math.isnan(a) or math.isnan(b) or math.isnan(c):
        return math.nan
    if math.isinf(a) or math.isinf(b):
        if a == 0 or b == 0:
            return math.nan  # inf * 0 is invalid (even with a quiet c)
        prod_sign = _is_neg(a) != _is_neg(b)
        if math.isinf(c) and _is_neg(c) != prod_sign:
            return math.nan
        return -math.inf if prod_sign else math.inf
    if math.isinf(c):
        return c
    exact = Fraction(a) * Fraction(b) + Fraction(c)
    if exact == 0:
        prod_zero = a == 0 or b == 0
        prod_neg = _is_neg(a) != _is_neg(b)
        if prod_zero and c == 0:
            return -0.0 if (prod_neg and _is_neg(c)) else 0.0
        return 0.0  # x + (-x) is +0 in round to nearest
    return round_fraction(exact, fmt)


def _inf_result(signs: list[bool]) -> float | None:
    if not signs:
        return None
    if any(signs) and not all(signs):
        return math.nan
    return -math.inf if signs[0] else math.inf


def sum_(values: list[float], fmt: str) -> float:
    """Correctly rounded exact sum (IEEE 754-2019 9.4 'sum', round to nearest)."""
    if any(math.isnan(v) for v in values):
        return math.nan
    inf = _inf_result([v < 0 for v in values if math.isinf(v)])
    if inf is not None:
        return inf
    exact = sum((Fraction(v) for v in values), Fraction(0))
    if exact == 0:
        if values and all(v == 0 and _is_neg(v) for v in values):
            return -0.0
        return 0.0
    return round_fraction(exact, fmt)


def dot(a: list[float], b: list[float], fmt: str) -> float:
    """Correctly rounded exact dot product with IEEE rules for the products."""
    inf_signs = []
    for x, y in zip(a, b):
        if math.isnan(x) or math.isnan(y):
            return math.nan
        if math.isinf(x) or math.isinf(y):
            if x == 0 or y == 0:
                return math.nan
            inf_signs.append(_is_neg(x) != _is_neg(y))
    inf = _inf_result(inf_signs)
    if inf is not None:
        return inf
    exact = sum((Fraction(x) * Fraction(y) for x, y in zip(a, b)), Fraction(0))
    if exact == 0:
        prods_neg_zero = [(x == 0 or y == 0) and (_is_neg(x) != _is_neg(y)) for x, y in zip(a, b)]
        if a and all(prods_neg_zero):
            return -0.0
        return 0.0
    return round_fraction(exact, fmt)


# ----------------------------------------------------------------------------- ulps


def count_below(x: float, fmt: str) -> int:
    """For finite x >= 0: how many representable values lie in [0, x) (x representable)."""
    _, p, emin, _ = SPECS[fmt]
    q = Fraction(x)
    sub_quantum = Fraction(2) ** (emin - p + 1)
    if q < Fraction(2) ** emin:
        return int(q / sub_quantum)
    e = floor_log2(q)
    per_binade = 2 ** (p - 1)
    significand = q / Fraction(2) ** (e - p + 1)  # in [2^(p-1), 2^p)
    return per_binade + (e - emin) * per_binade + int(significand) - per_binade


def ordinal(x: float, fmt: str) -> int:
    """Signed position of x among representable values (±0 -> 0, ±inf -> ±(count(max)+1))."""
    if math.isinf(x):
        n = count_below(float(max_finite(fmt)), fmt) + 1
        return -n if x < 0 else n
    n = count_below(abs(x), fmt)
    return -n if x < 0 else n


def ulp(x: float, fmt: str) -> float:
    """Goldberg's ulp: the quantum 2**(max(floor(log2|x|), emin) - p + 1)."""
    _, p, emin, _ = SPECS[fmt]
    if math.isnan(x):
        return math.nan
    if math.isinf(x):
        return math.inf
    if x == 0:
        return float(Fraction(2) ** (emin - p + 1))
    return float(Fraction(2) ** (max(floor_log2(abs(Fraction(x))), emin) - p + 1))
