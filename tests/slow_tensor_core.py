"""Slow exact twin of fpexplore.orders.tensor_core, in exact rationals (Fraction, Python ints).

Written from the rules in docs/tensor_cores.md, not from the fast code: one block of products
and c is aligned to the largest exponent, each aligned term truncated toward zero to the grid
``2**(E - 23 - neab)``, the truncated terms summed exactly and the sum rounded once to the
output (toward zero for binary32, to nearest even for binary16). FP8 inputs with a binary16
output (``fp8_float16``): two float16 blocks (k % 4 in {0, 1} from 0, then the rest), then
c added with one rounding to binary16.
"""

from __future__ import annotations

import math
from fractions import Fraction

# arch: (block, neab) per input format, and the least alignment exponent per output
_P = {
    "v100": ({"float16": (4, 0)}, {"float32": -1024, "float16": -19}),
    "a100": (
        {"float16": (8, 1), "bfloat16": (8, 1), "tf32": (4, 1)},
        {"float32": -132, "float16": -20},
    ),
    "h100": (
        {
            "float16": (16, 2),
            "bfloat16": (16, 2),
            "tf32": (8, 2),
            "float8_e4m3": (32, -10),
            "float8_e5m2": (32, -10),
        },
        {"float32": -133, "float16": -21},
    ),
}
_EMIN = {"float16": -14, "bfloat16": -126, "tf32": -126, "float8_e4m3": -6, "float8_e5m2": -14}
_OUT = {"float32": (24, -126, 127), "float16": (11, -14, 15)}


def _exp(x: Fraction, emin: int) -> int:
    """max(floor(log2|x|), emin) for x != 0."""
    n, d = abs(x.numerator), x.denominator
    e = n.bit_length() - d.bit_length()
    if Fraction(n, d) < Fraction(2) ** e:
        e -= 1
    return max(e, emin)


def _trunc(x: Fraction, q: Fraction) -> Fraction:
    k = abs(x) // q
    return k * q if x >= 0 else -k * q


def _round(s: Fraction, precision: int, emin: int, emax: int, nearest: bool) -> float:
    if s == 0:
        return 0.0
    e = _exp(s, emin)
    q = Fraction(2) ** (e - precision + 1)
    k, r = divmod(abs(s), q)
    if nearest and (2 * r > q or (2 * r == q and k % 2 == 1)):
        k += 1
    v = k * q
    if v >= Fraction(2) ** (emax + 1):
        v = math.inf
    return math.copysign(float(v), s)


def _special(a, b, c):
    """NaN if a NaN, 0 * inf or infinities of both signs are in the block; else the infinity;
    None for a finite block."""
    floats = [float(x) for x in (*a, *b, c)]
    if all(math.isfinite(x) for x in floats):
        return None
    signs = set()
    for x, y in zip(a, b):
        x, y = float(x), float(y)
        if math.isnan(x) or math.isnan(y):
            return math.nan
        if math.isinf(x) or math.isinf(y):
            if x == 0 or y == 0:
                return math.nan
            signs.add((x > 0) == (y > 0))
    c = float(c)
    if math.isnan(c):
        return math.nan
    if math.isinf(c):
        signs.add(c > 0)
    if len(signs) == 2:
        return math.nan
    return math.inf if signs.pop() else -math.inf


def block(a, b, c, *, arch: str, inputs: str, output: str) -> float:
    """d = c + sum(a_i * b_i) for one block (values as floats, finite ones also Fractions)."""
    (fmts, limits) = _P[arch]
    _, neab = fmts[inputs]
    special = _special(a, b, c)
    if special is not None:
        return special
    terms, exps = [], []
    for x, y in zip(a, b):
        x, y = Fraction(x), Fraction(y)
        if x and y:
            terms.append(x * y)
            exps.append(_exp(x, _EMIN[inputs]) + _exp(y, _EMIN[inputs]))
    c = Fraction(c)
    if c:
        terms.append(c)
        exps.append(_exp(c, -126))
    if not terms:
        return 0.0
    big = max(max(exps), limits[output])
    q = Fraction(2) ** (big - 23 - neab)
    s = sum(_trunc(t, q) for t in terms)
    precision, emin, emax = _OUT[output]
    if neab < 0:
        precision += neab
    return _round(s, precision, emin, emax, nearest=output == "float16")


def fp8_float16(a, b, c, *, arch: str) -> float:
    """FP8 inputs, binary16 output, one block of at most 32: t = the float16 block (float16
    inputs and output) of the k with k % 4 < 2 from t = 0, then of the other k from t; the
    result is t + c rounded once to nearest-even binary16."""
    t = 0.0
    for part in (0, 2):
        ks = [k for k in range(len(a)) if k % 4 in (part, part + 1)]
        if ks:
            t = block([a[k] for k in ks], [b[k] for k in ks], t, arch=arch, inputs="float16",
                      output="float16")  # fmt: skip
    c = float(c)
    if not (math.isfinite(t) and math.isfinite(c)):
        return t + c  # NaN, or the infinity (NaN for infinities of both signs)
    if t == 0 and c == 0:  # IEEE: -0 + -0 is -0, any other sum of zeros +0
        return -0.0 if math.copysign(1, t) < 0 and math.copysign(1, c) < 0 else 0.0
    return _round(Fraction(t) + Fraction(c), *_OUT["float16"], nearest=True)
