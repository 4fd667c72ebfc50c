"""Slow exact twin of fpexplore.orders.tensor_core and matrix_core, in exact rationals
(Fraction, Python ints).

Written from the rules in docs/tensor_cores.md (and the MATLAB model files they come from),
not from the fast code. NVIDIA: one block of products
and c is aligned to the largest exponent, each aligned term truncated toward zero to the grid
``2**(E - 23 - neab)``, the truncated terms summed exactly and the sum rounded once to the
output (toward zero for binary32, to nearest even for binary16). FP8 inputs with a binary16
output, and every FP8 block of ``h100-mma`` and ``b200-mma`` (``fp8_as_float16``: mma.sync
unpacks FP8 to float16 on Hopper, and the B200's published FP8 rows are that rule): two
float16 blocks (k % 4 in {0, 1} from 0, then the rest), then c added with one rounding to
nearest in the output format.

AMD (``amd_block``): CDNA1 sums exactly and rounds once to nearest binary32; CDNA2 flushes
subnormal inputs and products and adds in binary32, pairwise, c last; CDNA3 aligns the
products (FP8: the even and the odd ones apart) and adds c after, the smaller operand rounded
down. Every value of a block is a Fraction here; the grids are powers of two.
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
    # AdaTC.m / L40STC.m: Ampere's blocks, FP8 in blocks of 16 keeping 13 bits
    "ada": (
        {
            "float16": (8, 1),
            "bfloat16": (8, 1),
            "tf32": (4, 1),
            "float8_e4m3": (16, -10),
            "float8_e5m2": (16, -10),
        },
        {"float32": -132, "float16": -20},
    ),
    # B200TC.m: Hopper's blocks; FP8 blocks of 32 with neab = 2 (and a float32 output only)
    "b200": (
        {
            "float16": (16, 2),
            "bfloat16": (16, 2),
            "tf32": (8, 2),
            "float8_e4m3": (32, 2),
            "float8_e5m2": (32, 2),
        },
        {"float32": -133, "float16": -21},
    ),
}
# Hopper's mma.sync with FP8 (measured on an H200): float16 blocks; FP8 entries give the block
_P["h100-mma"] = ({**_P["h100"][0], "float8_e4m3": (32, 2), "float8_e5m2": (32, 2)},
                  _P["h100"][1])  # fmt: skip
# the B200's mma.sync with FP8: its published FP8 rows, Hopper's mma.sync rule
_P["b200-mma"] = _P["h100-mma"]
FP8_AS_FLOAT16 = {"h100-mma", "b200-mma"}
# B200TCRN.m: the B200 with the final rounding to nearest, and the float16 floor -15
_P["b200-rn"] = (_P["b200"][0], {"float32": -133, "float16": -15})
_NEAREST_F32 = {"b200-rn"}
_EMIN = {
    "float16": -14,
    "bfloat16": -126,
    "tf32": -126,
    "float8_e4m3": -6,
    "float8_e5m2": -14,
    "float8_e4m3fnuz": -7,  # AMD FP8: bias one more than OCP's
    "float8_e5m2fnuz": -15,
}
# AMD (MI100MC.m, MI210MC.m, MI300MC.m): per input format the block and the sum
AMD = {
    "mi100": {"float16": (4, "exact"), "bfloat16": (2, "exact")},
    "mi250": {"float16": (4, "pairwise"), "bfloat16": (4, "pairwise")},
    "mi300": {
        "float16": (8, "late"),
        "bfloat16": (8, "late"),
        "tf32": (4, "late"),
        "float8_e4m3fnuz": (16, "odd-even"),
        "float8_e5m2fnuz": (16, "odd-even"),
    },
}
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
    nearest = output == "float16" or arch in _NEAREST_F32
    return _round(s, precision, emin, emax, nearest=nearest)


def fp8_as_float16(a, b, c, *, arch: str, output: str = "float16") -> float:
    """FP8 inputs, one block of at most 32: t = the float16 block (float16 inputs, ``output``)
    of the k with k % 4 < 2 from t = 0, then of the other k from t; the result is t + c
    rounded once to nearest-even in ``output``."""
    t = 0.0
    for part in (0, 2):
        ks = [k for k in range(len(a)) if k % 4 in (part, part + 1)]
        if ks:
            t = block([a[k] for k in ks], [b[k] for k in ks], t, arch=arch, inputs="float16",
                      output=output)  # fmt: skip
    c = float(c)
    if not (math.isfinite(t) and math.isfinite(c)):
        return t + c  # NaN, or the infinity (NaN for infinities of both signs)
    if t == 0 and c == 0:  # IEEE: -0 + -0 is -0, any other sum of zeros +0
        return -0.0 if math.copysign(1, t) < 0 and math.copysign(1, c) < 0 else 0.0
    return _round(Fraction(t) + Fraction(c), *_OUT[output], nearest=True)


# ----------------------------------------------------------------------------- AMD

_TWO = Fraction(2)


def _floor_to(x: Fraction, q: Fraction) -> Fraction:
    """x rounded down (toward -inf) to a multiple of q."""
    return (x // q) * q


def _amd_special(a, b, c, limit: bool):
    """As _special, a finite product of magnitude 2**128 or more counting as an infinity of
    its sign where the architecture has that limit."""
    signs = set()
    for x, y in zip(a, b):
        x, y = float(x), float(y)
        if math.isnan(x) or math.isnan(y):
            return math.nan
        if math.isinf(x) or math.isinf(y):
            if x == 0 or y == 0:
                return math.nan
            signs.add((x > 0) == (y > 0))
        elif limit and abs(Fraction(x) * Fraction(y)) >= _TWO**128:
            signs.add((x > 0) == (y > 0))
    c = float(c)
    if math.isnan(c):
        return math.nan
    if math.isinf(c):
        signs.add(c > 0)
    if not signs:
        return None
    return math.nan if len(signs) == 2 else (math.inf if signs.pop() else -math.inf)


def _fl32(x: Fraction) -> float:
    return _round(x, 24, -126, 127, nearest=True)


def _add32(x: float, y: float) -> float:
    """IEEE binary32 x + y, nearest-even (x, y binary32 values as floats)."""
    if not (math.isfinite(x) and math.isfinite(y)):
        return x + y
    s = Fraction(x) + Fraction(y)
    if s == 0:
        return -0.0 if math.copysign(1, x) < 0 and math.copysign(1, y) < 0 else 0.0
    return _fl32(s)


def _ftz(x: float) -> float:
    return math.copysign(0.0, x) if abs(x) < 2.0**-126 else x


def _group(a, b, emin):
    """(E, S): the largest alignment exponent of the nonzero products and their sum, each
    truncated toward zero to 2**(E - 24); (None, 0) without a nonzero product."""
    prods = [(Fraction(x) * Fraction(y), _exp(Fraction(x), emin) + _exp(Fraction(y), emin))
             for x, y in zip(a, b) if x != 0 and y != 0]  # fmt: skip
    if not prods:
        return None, Fraction(0)
    E = max(e for _, e in prods)
    return E, sum(_trunc(p, _TWO ** (E - 24)) for p, _ in prods)


def _late_c(E, S, c: Fraction, drop_far: bool) -> Fraction:
    """The products' sum S (grid 2**(E - 24)) plus c: the one with the smaller exponent
    rounded down to the other's grid (the products to 2**(ec - 31)); c far below (more than
    25 binades, drop_far) truncated instead."""
    ec = _exp(c, -126) if c else -126
    if E is None:
        return c
    if E < ec:
        return _floor_to(S, _TWO ** (ec - 31)) + c
    if ec < E:
        q = _TWO ** (E - 24)
        return S + (_trunc(c, q) if drop_far and ec < E - 25 else _floor_to(c, q))
    return S + c


def amd_block(a, b, c, *, arch: str, inputs: str) -> float:
    """d = c + sum(a_i * b_i) for one block (zero-padded to the block) of an AMD GPU."""
    _, kind = AMD[arch][inputs]
    emin = _EMIN[inputs]
    special = _amd_special(a, b, c, limit=kind != "exact")
    if special is not None:
        return special
    if kind == "exact":
        s = Fraction(c) + sum(Fraction(x) * Fraction(y) for x, y in zip(a, b))
        return _fl32(s) if s else 0.0
    if kind == "pairwise":
        lo = _TWO**emin
        p = []
        for x, y in zip(a, b):
            x, y = Fraction(x), Fraction(y)
            v = x * y if abs(x) >= lo and abs(y) >= lo else 0  # subnormal inputs flushed
            p.append(_fl32(v) if abs(v) >= _TWO**-126 else 0.0)  # and tiny products, to +0
        while len(p) > 1:
            p = [_ftz(_add32(p[i], p[i + 1])) for i in range(0, len(p), 2)]
        return _ftz(_add32(_ftz(float(c)), p[0]))
    c = Fraction(c)
    if kind == "late":
        E, S = _group(a, b, emin)
        t = _late_c(E, S, c, drop_far=False)
    else:  # odd-even
        e0, s0 = _group(a[0::2], b[0::2], emin)
        e1, s1 = _group(a[1::2], b[1::2], emin)
        if e0 is None or e1 is None:
            E, S = (e1, s1) if e0 is None else (e0, s0)
        else:
            E = max(e0, e1)
            q = _TWO ** (E - 24)
            S = (_floor_to(s0, q) if e0 < E else s0) + (_floor_to(s1, q) if e1 < E else s1)
        t = _late_c(E, S, c, drop_far=True)
    return _fl32(t) if t else 0.0


def amd_chain(a, b, c, *, arch: str, inputs: str) -> float:
    """The blocks of K chained, the last one padded with zeros."""
    block, _ = AMD[arch][inputs]
    a, b = list(a), list(b)
    pad = -len(a) % block
    a += [0.0] * pad
    b += [0.0] * pad
    v = c
    for k in range(0, len(a), block):
        v = amd_block(a[k : k + block], b[k : k + block], v, arch=arch, inputs=inputs)
    return v
