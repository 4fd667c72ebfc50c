"""Block-scaled ``fpx.mma`` (Blackwell's mxf8f6f4, mxf4, mxf4nvf4 kinds: MMA-Sim's rules) against
a slow twin written here in exact rationals from the rules as docs/tensor_cores.md states them
(section "Block-scaled (Blackwell, tcgen05)"), not from fpexplore's code: bit for bit on random,
wide-range, cancelling, subnormal-producing and special inputs, one instruction and chains."""

from __future__ import annotations

import math
import zlib
from fractions import Fraction
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

import fpexplore as fpx
from fpexplore.orders import gpu_models

from oracle import floor_log2

DTYPES = {
    "float8_e4m3": ml_dtypes.float8_e4m3fn,
    "float8_e5m2": ml_dtypes.float8_e5m2,
    "float4_e2m1": ml_dtypes.float4_e2m1fn,
    "float8_e8m0": ml_dtypes.float8_e8m0fnu,
}
EMIN = {"float8_e4m3": -6, "float8_e5m2": -14, "float4_e2m1": 0, "float8_e8m0": -127}
NAN_BITS = 0x7FFFFFFF


# ----------------------------------------------------------------------------- the slow twin


def _exponent(x: float, emin: int) -> int:
    """The rules' exponent of a value: floor(log2 |x|) at least emin; -126 for a zero."""
    return -126 if x == 0 else max(floor_log2(abs(Fraction(x))), emin)


def _toward_zero_f32(v: Fraction) -> float:
    """v truncated toward zero to binary32 with subnormals; 2**128 or more: inf; zero: +0."""
    if v == 0:
        return 0.0
    e = max(floor_log2(abs(v)), -126)
    q = math.trunc(abs(v) * Fraction(2) ** (23 - e))
    r = q * Fraction(2) ** (e - 23)
    if r == 0:
        return 0.0
    out = math.inf if r >= Fraction(2) ** 128 else float(r)
    return out if v > 0 else -out


def _aligned_sum(terms, E: int, bits: int) -> Fraction:
    """Each (exact) term truncated toward zero to a multiple of 2**(E - bits), summed."""
    unit = Fraction(2) ** (E - bits)
    return sum((math.trunc(t / unit) for t in terms), 0) * unit


def _special_f8(a, b, c, sa, sb):
    """NaN, an infinity, or None (finite) for one mxf8f6f4 instruction."""
    if any(math.isnan(x) for x in [*a, *b, c, sa, sb]):
        return math.nan
    signs = set()
    for x, y in zip(a, b):
        if math.isinf(x) or math.isinf(y):
            if x == 0 or y == 0:
                return math.nan
            signs.add((x > 0) == (y > 0))
    if math.isinf(c):
        signs.add(c > 0)
    if len(signs) == 2:
        return math.nan
    return (math.inf if signs.pop() else -math.inf) if signs else None


def _one_f8(a, b, c, sa, sb, fa, fb):
    """One mxf8f6f4 instruction (K = 32, one E8M0 scale each)."""
    special = _special_f8(a, b, c, sa, sb)
    if special is not None:
        return special
    s = _exponent(sa, -127) + _exponent(sb, -127)
    exps = [_exponent(x, EMIN[fa]) + _exponent(y, EMIN[fb]) + s for x, y in zip(a, b)]
    E = max([*exps, _exponent(c, -126)])
    scale = Fraction(sa) * Fraction(sb)
    terms = [Fraction(x) * Fraction(y) * scale for x, y in zip(a, b)] + [Fraction(c)]
    return _toward_zero_f32(_aligned_sum(terms, E, 25))


def _one_f4(a, b, c, sa, sb, semin):
    """One mxf4 / mxf4nvf4 instruction (K = 64): sa, sb the scales of its 4 groups of 16."""
    if any(math.isnan(x) for x in [*sa, *sb, c]):
        return math.nan
    if math.isinf(c):
        return c
    sa, sb = [abs(x) for x in sa], [abs(x) for x in sb]
    groups = [sum(Fraction(a[k]) * Fraction(b[k]) for k in range(16 * g, 16 * g + 16))
              for g in range(4)]  # fmt: skip
    E = max([_exponent(x, semin) + _exponent(y, semin) for x, y in zip(sa, sb)]
            + [_exponent(c, -126)])  # fmt: skip
    terms = [g * Fraction(x) * Fraction(y) for g, x, y in zip(groups, sa, sb)] + [Fraction(c)]
    return _toward_zero_f32(_aligned_sum(terms, E, 35))


def twin(A, B, C, SA, SB, kind, fa, fb, sfmt, block):
    """D (M, N) as float32, instruction after instruction (each D the next C)."""
    A, B, SA, SB = (np.asarray(x, np.float64) for x in (A, B, SA, SB))
    (M, K), N = A.shape, B.shape[1]
    C = np.broadcast_to(np.asarray(C, np.float64), (M, N))
    step = 32 if kind == "mxf8f6f4" else 64
    D = np.empty((M, N), np.float32)
    for i in range(M):
        for j in range(N):
            c = float(C[i, j])
            for k0 in range(0, K, step):
                a, b = A[i, k0 : k0 + step].tolist(), B[k0 : k0 + step, j].tolist()
                if kind == "mxf8f6f4":
                    t = k0 // block
                    c = _one_f8(a, b, c, float(SA[i, t]), float(SB[t, j]), fa, fb)
                else:
                    ts = [(k0 + 16 * g) // block for g in range(4)]
                    c = _one_f4(a, b, c, [float(SA[i, t]) for t in ts],
                                [float(SB[t, j]) for t in ts], EMIN[sfmt])  # fmt: skip
            D[i, j] = c
    return D


# ----------------------------------------------------------------------------- inputs


def _values(fmt):
    """Every value of a format (NaN included), as float64."""
    n = 16 if fmt == "float4_e2m1" else 256
    return np.arange(n, dtype=np.uint8).view(DTYPES[fmt]).astype(np.float64)


def _pick(rng, fmt, shape, finite=True):
    v = _values(fmt)
    if finite:
        v = v[np.isfinite(v)]
    return rng.choice(v, size=shape)


def _scales(rng, sfmt, shape, lo, hi):
    """Scales of sfmt with exponents in [lo, hi] (E4M3: any sign, its subnormals if lo < -6)."""
    if sfmt == "float8_e8m0":
        return np.ldexp(1.0, rng.integers(lo, hi + 1, size=shape))
    v = _values("float8_e4m3")
    v = v[np.isfinite(v) & (v != 0)]
    e = np.floor(np.log2(np.abs(v)))
    return rng.choice(v[(e >= lo) & (e <= hi)], size=shape)


def _c(rng, shape, lo, hi):
    """float32 c with exponents in [lo, hi] (and some zeros)."""
    c = rng.standard_normal(shape) * np.ldexp(1.0, rng.integers(lo, hi + 1, size=shape))
    c[rng.random(shape) < 0.1] = 0.0
    return c.astype(np.float32)


def _case(rng, kind, fa, fb, sfmt, block, style, K):
    M, N = 3, 4
    A, B = _pick(rng, fa, (M, K)), _pick(rng, fb, (K, N))
    lo, hi = {"random": (-8, 8), "wide": (-127, 127), "subnormal": (-75, -60),
              "cancel": (-4, 4), "special": (-30, 30)}[style]  # fmt: skip
    if sfmt == "float8_e4m3":  # 2**-9 .. 448
        lo, hi = (-9, -6) if style == "subnormal" else (max(lo, -9), min(hi, 8))
    SA, SB = (
        _scales(rng, sfmt, (M, K // block), lo, hi),
        _scales(rng, sfmt, (K // block, N), lo, hi),
    )
    C = _c(rng, (M, N), -10, 10)
    if style == "wide":
        C = _c(rng, (M, N), -140, 120)
    elif style == "subnormal":
        C = _c(rng, (M, N), -149, -120)
    elif style == "cancel":  # the second half of each row undoes the first
        A[:, K // 2 :] = -A[:, : K // 2]
        B[K // 2 :] = B[: K // 2]
        SA[:], SB[:] = SA[:, :1], SB[:1]  # one scale for the row, one for the column
        A[0, 1] = A[0, 0] = 0.0
        C[1] = 0.0
    elif style == "special":
        _specials(rng, A, B, C, SA, SB, kind, fa, fb, sfmt)
    return A, B, C, SA, SB


def _specials(rng, A, B, C, SA, SB, kind, fa, fb, sfmt):
    """Zeros, NaN and infinite elements (where the format has them), NaN scales, NaN and
    infinite c (mxf8f6f4 only: an infinite C is refused in mxf4nvf4)."""
    A[rng.random(A.shape) < 0.2] = 0.0
    for X, f in ((A, fa), (B, fb)):
        v = _values(f)
        bad = v[~np.isfinite(v)]
        if bad.size:
            flat = X.reshape(-1)
            flat[rng.integers(0, flat.size, 3)] = rng.choice(bad, 3)
    SA[0, 0] = np.nan
    if sfmt == "float8_e8m0":
        SB[0, -1] = 2.0**127  # overflow to inf
        SA[-1, -1] = 2.0**127
    else:
        SB[-1, 0] = 0.0  # a zero E4M3 scale
    C[1, 1] = np.nan
    if kind == "mxf8f6f4":
        C[0, 2] = -np.inf


CASES = [
    ("mxf8f6f4", "float8_e4m3", "float8_e4m3", "float8_e8m0", 32),
    ("mxf8f6f4", "float8_e5m2", "float8_e5m2", "float8_e8m0", 32),
    ("mxf8f6f4", "float4_e2m1", "float4_e2m1", "float8_e8m0", 32),
    ("mxf8f6f4", "float8_e4m3", "float8_e5m2", "float8_e8m0", 32),
    ("mxf8f6f4", "float4_e2m1", "float8_e4m3", "float8_e8m0", 32),
    ("mxf8f6f4", "float8_e5m2", "float4_e2m1", "float8_e8m0", 32),
    ("mxf4", "float4_e2m1", "float4_e2m1", "float8_e8m0", 32),
    ("mxf4nvf4", "float4_e2m1", "float4_e2m1", "float8_e8m0", 32),
    ("mxf4nvf4", "float4_e2m1", "float4_e2m1", "float8_e8m0", 16),
    ("mxf4nvf4", "float4_e2m1", "float4_e2m1", "float8_e4m3", 16),
]


def _same_bits(got, want):
    g = np.asarray(got, np.float32).view(np.uint32)
    w = np.asarray(want, np.float32).view(np.uint32).copy()
    w[np.isnan(np.asarray(want))] = NAN_BITS
    assert g.tolist() == w.tolist()


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c[0]}-{c[1]}-{c[2]}-{c[3]}-{c[4]}")
@pytest.mark.parametrize("style", ["random", "wide", "cancel", "subnormal", "special"])
def test_fpx_mma_is_the_twin_bit_for_bit(case, style):
    kind, fa, fb, sfmt, block = case
    rng = np.random.default_rng(zlib.crc32(repr((case, style)).encode()))
    step = 32 if kind == "mxf8f6f4" else 64
    for K in (step, 3 * step):  # one instruction and a chain
        for _ in range(4):
            A, B, C, SA, SB = _case(rng, kind, fa, fb, sfmt, block, style, K)
            got = fpx.mma(A, B, C, arch="b200", inputs=(fa, fb), scale_a=SA, scale_b=SB,
                          scale_format=sfmt, block=block, kind=kind)  # fmt: skip
            assert got.dtype == np.float32 and got.shape == C.shape
            _same_bits(got, twin(A, B, C, SA, SB, kind, fa, fb, sfmt, block))


def test_the_cases_cover_overflow_subnormals_nan_and_zero():
    """The styles above produce what they are named for (checked on mxf8f6f4 E4M3)."""
    kinds = ("mxf8f6f4", "float8_e4m3", "float8_e4m3", "float8_e8m0", 32)
    rng = np.random.default_rng(5)
    seen = set()
    for style in ("wide", "subnormal", "special", "cancel"):
        for _ in range(10):
            A, B, C, SA, SB = _case(rng, *kinds, style, 64)
            d = twin(A, B, C, SA, SB, *kinds).ravel()
            seen |= {"nan"} if np.isnan(d).any() else set()
            seen |= {"inf"} if np.isinf(d).any() else set()
            seen |= {"subnormal"} if ((d != 0) & (np.abs(d) < 2.0**-126)).any() else set()
            seen |= {"zero"} if (d == 0).any() else set()
    assert seen == {"nan", "inf", "subnormal", "zero"}


def test_ml_dtypes_arrays_and_float32_arrays_alike():
    rng = np.random.default_rng(1)
    A, B = _pick(rng, "float4_e2m1", (2, 128)), _pick(rng, "float4_e2m1", (128, 3))
    SA, SB = _scales(rng, "float8_e4m3", (2, 8), -9, 8), _scales(rng, "float8_e4m3", (8, 3), -9, 8)
    ml = fpx.mma(A.astype(ml_dtypes.float4_e2m1fn), B.astype(ml_dtypes.float4_e2m1fn), 1.5,
                 arch="b200", scale_a=SA.astype(ml_dtypes.float8_e4m3fn),
                 scale_b=SB.astype(ml_dtypes.float8_e4m3fn))  # fmt: skip
    f32 = fpx.mma(A.astype(np.float32), B.astype(np.float32), 1.5, arch="b200",
                  inputs="float4_e2m1", scale_a=SA, scale_b=SB, scale_format="float8_e4m3",
                  block=16)  # fmt: skip
    assert ml.tobytes() == f32.tobytes()
    _same_bits(ml, twin(A, B, 1.5, SA, SB, "mxf4nvf4", "float4_e2m1", "float4_e2m1",
                        "float8_e4m3", 16))  # fmt: skip


def test_batches_broadcast_like_matmul():
    rng = np.random.default_rng(2)
    A = _pick(rng, "float8_e4m3", (2, 3, 64))
    B = _pick(rng, "float8_e4m3", (64, 2))
    SA, SB = (
        _scales(rng, "float8_e8m0", (2, 3, 2), -5, 5),
        _scales(rng, "float8_e8m0", (2, 2), -5, 5),
    )
    got = fpx.mma(A, B, 0.0, arch="b200", inputs="float8_e4m3", scale_a=SA, scale_b=SB,
                  scale_format="float8_e8m0")  # fmt: skip
    assert got.shape == (2, 3, 2)
    for t in range(2):
        _same_bits(got[t], twin(A[t], B, np.zeros((3, 2)), SA[t], SB, "mxf8f6f4",
                                "float8_e4m3", "float8_e4m3", "float8_e8m0", 32))  # fmt: skip


def test_rtx_pro_6000_takes_e4m3_scales_per_32_and_the_b200_does_not():
    rng = np.random.default_rng(3)
    A, B = _pick(rng, "float4_e2m1", (2, 64)), _pick(rng, "float4_e2m1", (64, 2))
    SA, SB = _scales(rng, "float8_e4m3", (2, 2), -3, 3), _scales(rng, "float8_e4m3", (2, 2), -3, 3)
    kw = {"inputs": "float4_e2m1", "scale_a": SA, "scale_b": SB, "scale_format": "float8_e4m3",
          "block": 32}  # fmt: skip
    got = fpx.mma(A, B, 0.0, arch="rtx-pro-6000", **kw)
    _same_bits(got, twin(A, B, 0.0, SA, SB, "mxf4nvf4", "float4_e2m1", "float4_e2m1",
                         "float8_e4m3", 32))  # fmt: skip
    assert got.tobytes() == fpx.mma(A, B, 0.0, arch="rtx5090", **kw).tobytes()
    with pytest.raises(ValueError, match="block=32"):
        fpx.mma(A, B, 0.0, arch="b200", **kw)


def test_the_worked_example_of_the_docs():
    """docs/tensor_cores.md, "Block-scaled (Blackwell, tcgen05)": mxf8f6f4, E4M3."""
    A = np.zeros((1, 32))
    A[0, :2] = [1.0, -1.0]
    B = np.ones((32, 1))
    c = np.float32(2.0**-20)
    kw = {"arch": "b200", "inputs": "float8_e4m3", "scale_format": "float8_e8m0"}

    def d(s, A=A, B=B, c=c):
        s = np.full((1, 1), s)
        return fpx.mma(A, B, c, scale_a=s, scale_b=s, **kw)[0, 0]

    assert d(1.0) == 2.0**-20  # E = 0: c keeps 2**-20 = 2**5 units of 2**-25
    assert d(2.0**5) == 0.0  # E = 10: c is below 2**(10 - 25), truncated away
    assert d(2.0**5).tobytes() == np.float32(0).tobytes()  # +0
    # a zero element counts with the exponent -126: with scales 2**100, 0 * 448 has the
    # exponent -126 + 8 + 200 = 82 and c = 1 is truncated away
    assert d(2.0**100, A=np.zeros((1, 32)), B=np.full((32, 1), 448.0), c=np.float32(1)) == 0.0
    assert d(2.0**50, A=np.zeros((1, 32)), B=np.full((32, 1), 448.0), c=np.float32(1)) == 1.0
    # overflow: 448 * 448 * 2**120 is beyond binary32
    assert d(2.0**60, A=np.full((1, 32), 448.0), B=np.full((32, 1), 448.0)) == np.inf
    nan = fpx.mma(A, B, c, scale_a=np.full((1, 1), np.nan), scale_b=np.ones((1, 1)), **kw)
    assert nan.view(np.uint32)[0, 0] == NAN_BITS


# ----------------------------------------------------------------------------- refusals

_A32, _B32 = np.ones((2, 32)), np.ones((32, 3))
_SA, _SB = np.ones((2, 1)), np.ones((1, 3))
_KW = {"inputs": "float8_e4m3", "scale_format": "float8_e8m0"}


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda: fpx.mma(_A32, _B32, 0.0, arch="h100", scale_a=_SA, scale_b=_SB, **_KW),
         "scale_a/scale_b: block-scaled mma is modelled on b200, rtx-pro-6000"),
        (lambda: fpx.mma(_A32, _B32, 0.0, arch="b200-rn", scale_a=_SA, scale_b=_SB, **_KW),
         "not on the B200 \\(round-to-nearest"),
        (lambda: fpx.mma(_A32, _B32, 0.0, arch="b200", scale_a=_SA, **_KW), "scale_b=None"),
        (lambda: fpx.mma(_A32, _B32, 0.0, arch="b200", block=32, inputs="float8_e4m3"),
         "block=32: only with scale_a and scale_b"),
        (lambda: fpx.mma(_A32, _B32, 0.0, arch="b200", scale_a=_SA, scale_b=_SB,
                         inputs="float6_e2m3", scale_format="float8_e8m0"),
         "float6_e2m3 has no published rule"),
        (lambda: fpx.mma(_A32, _B32, 0.0, arch="b200", scale_a=_SA, scale_b=_SB,
                         inputs="float6_e3m2", scale_format="float8_e8m0"),
         "float6_e3m2 has no published rule"),
        (lambda: fpx.mma(_A32, _B32, 0.0, arch="b200", scale_a=_SA, scale_b=_SB,
                         inputs="float16", scale_format="float8_e8m0"),
         "element formats are float8_e4m3"),
        (lambda: fpx.mma(_A32, _B32, 0.0, arch="b200", scale_a=_SA, scale_b=_SB, **_KW,
                         output="float16"), "output='float16'"),
        (lambda: fpx.mma(_A32, _B32, 0.0, arch="b200", scale_a=np.ones((2, 2)), scale_b=_SB,
                         **_KW), "scale_a: shape \\(2, 2\\), expected \\(..., 2, 1\\)"),
        (lambda: fpx.mma(_A32, _B32, 0.0, arch="b200", scale_a=_SA, scale_b=np.ones((1, 2)),
                         **_KW), "scale_b: shape \\(1, 2\\), expected \\(..., 1, 3\\)"),
        (lambda: fpx.mma(_A32[:, :16], _B32[:16], 0.0, arch="b200", scale_a=_SA, scale_b=_SB,
                         **_KW), "A: K = 16 is not a multiple of 32"),
        (lambda: fpx.mma(_A32, _B32, 0.0, arch="b200", scale_a=np.ones((2, 2)),
                         scale_b=np.ones((2, 3)), block=16, **_KW), "block=16: kind mxf8f6f4"),
        (lambda: fpx.mma(_A32, _B32, 0.0, arch="b200", scale_a=_SA, scale_b=_SB,
                         inputs="float8_e4m3", scale_format="float8_e4m3"),
         "scale_format='float8_e4m3': kind mxf8f6f4"),
        (lambda: fpx.mma(_A32, _B32, 0.0, arch="b200", scale_a=_SA, scale_b=_SB, kind="mxf4",
                         **_KW), "kind mxf4 takes float4_e2m1 elements"),
        (lambda: fpx.mma(_A32, _B32, 0.0, arch="b200", scale_a=_SA, scale_b=_SB, kind="mxf9",
                         **_KW), "kind='mxf9'"),
        (lambda: fpx.mma(_A32, _B32, 0.0, arch="b200", scale_a=_SA * 3, scale_b=_SB, **_KW),
         "scale_a: 2 value\\(s\\) are not representable in float8_e8m0"),
        (lambda: fpx.mma(_A32, _B32, 0.0, arch="b200", scale_a=_SA, scale_b=_SB,
                         inputs="float8_e4m3"), "scale_a \\(scale_format=None\\)"),
        (lambda: fpx.mma(_A32.astype(ml_dtypes.float8_e5m2), _B32, 0.0, arch="b200",
                         scale_a=_SA, scale_b=_SB, **_KW), "A: an array of float8_e5m2"),
        (lambda: fpx.mma(_A32, _B32, 0.0, arch="b200", scale_a=_SA, inputs="float8_e4m3",
                         scale_b=_SB.astype(ml_dtypes.float8_e8m0fnu),
                         scale_format="float8_e4m3", kind="mxf8f6f4"),
         "scale_format='float8_e4m3': kind mxf8f6f4"),
        (lambda: fpx.mma(np.ones((2, 64)), np.ones((64, 3)), 0.0, arch="b200",
                         scale_a=np.ones((2, 4)), inputs="float4_e2m1", scale_format="float8_e4m3",
                         scale_b=np.ones((4, 3), ml_dtypes.float8_e8m0fnu)),
         "scale_b: an array of float8_e8m0, not float8_e4m3"),
        (lambda: fpx.mma(_A32, _B32, 0.0, arch="b200", inputs="float4_e2m1"),
         "MX elements: give scale_a and scale_b"),
        (lambda: fpx.mma(np.ones((2, 64)), np.ones((64, 3)), np.inf, arch="b200",
                         scale_a=np.ones((2, 2)), scale_b=np.ones((2, 3)), inputs="float4_e2m1",
                         scale_format="float8_e8m0"), "C: an infinite c in mxf4nvf4"),
    ],
)  # fmt: skip
def test_what_is_not_published_is_refused(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_fp4_by_fp4_as_mxf8f6f4_is_the_other_rule():
    """E2M1 x E2M1 with E8M0 scales per 32 is both kinds: mxf4nvf4 by default (K = 64, groups of
    16, 35 bits), mxf8f6f4 with kind= (K = 32, 25 bits); the twin of each."""
    rng = np.random.default_rng(4)
    A, B = _pick(rng, "float4_e2m1", (3, 64)), _pick(rng, "float4_e2m1", (64, 3))
    SA = _scales(rng, "float8_e8m0", (3, 2), -30, 30)
    SB = _scales(rng, "float8_e8m0", (2, 3), -30, 30)
    C = _c(rng, (3, 3), -20, 20)
    args = (A, B, C, SA, SB)
    kw = {"arch": "b200", "inputs": "float4_e2m1", "scale_format": "float8_e8m0"}
    f4 = ("float4_e2m1", "float4_e2m1", "float8_e8m0", 32)
    _same_bits(fpx.mma(*args[:3], scale_a=SA, scale_b=SB, **kw), twin(*args, "mxf4nvf4", *f4))
    _same_bits(fpx.mma(*args[:3], scale_a=SA, scale_b=SB, kind="mxf8f6f4", **kw),
               twin(*args, "mxf8f6f4", *f4))  # fmt: skip


def _markdown_kinds() -> str:
    lines = ["| arch | kind | K | elements | scales (blocks) | fraction_bits | terms |",
             "|---|---|---|---|---|---|---|"]  # fmt: skip
    for arch, kinds in gpu_models.BLOCK_SCALED.items():
        for r in kinds.values():
            scales = ", ".join(f"{s} ({', '.join(map(str, b))})" for s, b in r.scales.items())
            lines.append(f"| {arch} | {r.kind} | {r.k} | {', '.join(r.elements)} | {scales} | "
                         f"{r.fraction_bits} | {r.terms} |")  # fmt: skip
    return "\n".join(lines)


def test_the_docs_table_of_kinds_is_the_data():
    doc = (Path(__file__).parents[1] / "docs" / "tensor_cores.md").read_text()
    assert _markdown_kinds() in doc, _markdown_kinds()


def test_a_block_that_is_no_integer_and_scales_given_by_dtype_are_named_as_given():
    """Pass 16: block=32.0 was told "takes blocks of 32"; FP4 x E4M3 elements with E4M3 scale
    arrays were told about a scale_format= nobody passed, and not which kind was chosen."""
    for block in (32.0, "32"):
        with pytest.raises(TypeError, match="block must be an integer, got"):
            fpx.mma(_A32, _B32, 0.0, arch="b200", scale_a=_SA, scale_b=_SB, block=block, **_KW)
    A4 = np.ones((2, 64), ml_dtypes.float4_e2m1fn)
    B8 = np.ones((64, 2), ml_dtypes.float8_e4m3fn)
    SA, SB = np.ones((2, 2), ml_dtypes.float8_e4m3fn), np.ones((2, 2), ml_dtypes.float8_e4m3fn)
    said = (
        "scale_a and scale_b: float8_e4m3 scales \\(their dtype\\): kind mxf8f6f4 \\(the kind "
        "for float4_e2m1 x float8_e4m3 elements; kind= picks one\\) on the B200 takes float8_e8m0"
    )
    with pytest.raises(ValueError, match=said):
        fpx.mma(A4, B8, 0.0, arch="b200", scale_a=SA, scale_b=SB)
