"""Block-scaled tensor cores (Blackwell: tcgen05.mma on the B200, mma.sync on the RTX PRO 6000):
``mma(A, B, C, arch=..., scale_a=SA, scale_b=SB)`` is D = C + sum_k SA * A * B * SB as
MMA-Sim models it, bit for bit.

The rules are those of MMA-Sim (P. Xie, Y. Wang, F. Yang, M. Yang, "MMA-Sim: Bit-Accurate
Reference Model of Tensor Cores and Matrix Cores", arXiv:2511.10909, 2025; repository
microsoft/MMA-Sim, MIT licence, commit c785138), restated in docs/tensor_cores.md (section
"Block-scaled (Blackwell, tcgen05)") and written here in fpexplore's own code. One instruction,
per element of D (c a float32, ex the exponent floor(log2 |x|) clamped below at x's format's
emin, -126 for a zero, whatever its format):

- kind mxf8f6f4 (K = 32, one E8M0 scale sa, sb per row of A, column of B): each term
  a_k * b_k * sa * sb has the exponent ea + eb + esa + esb, c has ec; E is the largest of
  them; each term and c is truncated toward zero to a multiple of 2**(E - 25) and summed
  exactly;
- kinds mxf4 / mxf4nvf4 (K = 64, E2M1 elements, four groups of 16): each group's 16 products
  summed exactly, times its two scales (E4M3 scales taken as their magnitudes), has the
  exponent esa + esb of its scales; E the largest of those and ec; each group and c is
  truncated toward zero to a multiple of 2**(E - 35) and summed exactly.

The sum is truncated toward zero to binary32 (subnormals kept; 2**128 or more: ±inf; a zero
result is +0). Specials: mxf8f6f4 gives NaN where the float64 sum of the scaled products and c
is NaN (a NaN among the elements, scales or c, 0 * inf, infinities of both signs), else the
infinity it has; mxf4nvf4 gives NaN where a scale of the instruction or c is NaN. NaN is
0x7FFFFFFF. K longer than one instruction is a chain: each instruction's D is the next one's C.
"""

from __future__ import annotations

import numpy as np

from .. import checks
from ..formats import SMALL_DTYPES, as_array, format_info
from .gpu_models import BLOCK_SCALED, Gpu, ScaledKind

__all__ = ["ELEMENTS", "SCALES", "block_scaled", "scaled_kind"]

#: the element formats of block-scaled inputs, and the scale formats
ELEMENTS = ("float8_e4m3", "float8_e5m2", "float4_e2m1", "float6_e2m3", "float6_e3m2")
SCALES = ("float8_e8m0", "float8_e4m3")
_OF_DTYPE = {SMALL_DTYPES[f]: f for f in ELEMENTS + SCALES}
_NAN_BITS = np.uint32(0x7FFFFFFF)


def _format_of(x, what: str, names: tuple) -> str:
    dtype = as_array(x, what).dtype
    fmt = _OF_DTYPE.get(dtype)
    if fmt not in names:
        raise ValueError(
            f"{what}: its dtype {dtype} names none of {', '.join(names)}; "
            f"give the format (an ml_dtypes array of one, or the keyword)"
        )
    return fmt


def _elements(A, B, inputs) -> tuple[str, str]:
    """The element formats of A and B: ``inputs`` (one name or a pair), or A's and B's
    ml_dtypes types where it is None."""
    if inputs is None:
        pair = (_format_of(A, "A (inputs=None)", ELEMENTS), _format_of(B, "B (inputs=None)",
                                                                       ELEMENTS))  # fmt: skip
    elif isinstance(inputs, str):
        pair = (inputs, inputs)
    elif isinstance(inputs, (tuple, list)) and len(inputs) == 2:
        pair = tuple(inputs)
    else:
        raise ValueError(f"inputs={checks.shown(inputs)}: a format name or a pair (A's, B's)")
    for f in pair:
        if f in ("float6_e2m3", "float6_e3m2"):
            raise ValueError(
                f"inputs={checks.shown(inputs)}: block-scaled {f} has no published rule "
                "(MMA-Sim leaves e2m3 and e3m2 to do); float8_e4m3, float8_e5m2 and "
                "float4_e2m1 have one"
            )
        if f not in ELEMENTS:
            raise ValueError(
                f"inputs={checks.shown(inputs)}: block-scaled element formats are "
                "float8_e4m3, float8_e5m2, float4_e2m1"
            )
    return pair


def scaled_kind(g: Gpu, A, B, inputs, output, scale_a, scale_b, scale_format, block, kind):
    """(rule, A's format, B's format, scale format, block) of a block-scaled call on ``g``,
    each argument checked (ValueError naming it where no published rule has it)."""
    kinds = BLOCK_SCALED.get(g.key)
    if kinds is None:
        archs = ", ".join(BLOCK_SCALED)
        raise ValueError(
            f"scale_a/scale_b: block-scaled mma is modelled on {archs} (MMA-Sim's Blackwell "
            f"rules), not on the {g.name} (arch={g.key!r})"
        )
    if output != "float32":
        raise ValueError(f"output={checks.shown(output)}: block-scaled mma gives float32 only")
    fa, fb = _elements(A, B, inputs)
    kind_given = kind is not None
    if kind is None:
        kind = "mxf4nvf4" if fa == fb == "float4_e2m1" else "mxf8f6f4"
    if kind not in kinds:
        raise ValueError(f"kind={checks.shown(kind)}: the {g.name} has {', '.join(kinds)}")
    rule = kinds[kind]
    if fa not in rule.elements or fb not in rule.elements:
        raise ValueError(
            f"inputs={checks.shown(inputs)}: kind {kind} takes {', '.join(rule.elements)} "
            f"elements, not {fa} x {fb}"
        )
    given = f"scale_format={checks.shown(scale_format)}"
    if scale_format is None:
        scale_format = _format_of(scale_a, "scale_a (scale_format=None)", SCALES)
        if _format_of(scale_b, "scale_b (scale_format=None)", SCALES) != scale_format:
            raise ValueError("scale_b: another scale format than scale_a's")
        given = f"scale_a and scale_b: {scale_format} scales (their dtype)"
    if scale_format not in rule.scales:
        chose = "" if kind_given else f" (the kind for {fa} x {fb} elements; kind= picks one)"
        raise ValueError(
            f"{given}: kind {kind}{chose} on the {g.name} takes {', '.join(rule.scales)} scales"
        )
    blocks = rule.scales[scale_format]
    if block is None:
        block = blocks[0]
    block = checks.integer("block", block)
    if block not in blocks:
        raise ValueError(
            f"block={checks.shown(block)}: kind {kind} with {scale_format} scales on the "
            f"{g.name} takes blocks of {', '.join(map(str, blocks))}"
        )
    for x, what, fmt in ((A, "A", fa), (B, "B", fb), (scale_a, "scale_a", scale_format),
                         (scale_b, "scale_b", scale_format)):  # fmt: skip
        own = _OF_DTYPE.get(as_array(x, what).dtype)
        if own not in (None, fmt):
            raise ValueError(
                f"{what}: an array of {own}, not {fmt}; convert it with fpx.as_format("
                f"{what}.astype(np.float32), {fmt!r}) if you mean it"
            )
    return rule, fa, fb, scale_format, int(block)


def _exponent(x: np.ndarray, emin: int) -> np.ndarray:
    """floor(log2 |x|) clamped below at emin; -126 for a zero (MMA-Sim's convention)."""
    with np.errstate(invalid="ignore"):
        e = np.maximum(np.frexp(x)[1] - 1, emin)
    return np.where(x == 0, -126, e)


def _rz_float32(v: np.ndarray) -> np.ndarray:
    """The float64 values v truncated toward zero to float32 (±inf from 2**128 on, +0 for
    zero)."""
    with np.errstate(over="ignore"):
        f = v.astype(np.float32)
    up = np.abs(f.astype(np.float64)) > np.abs(v)
    f = np.where(up, np.nextafter(f, np.float32(0)), f)
    f = np.where(np.abs(v) >= 2.0**128, np.copysign(np.float32(np.inf), v), f)
    return np.where(f == 0, np.float32(0), f).astype(np.float32)


def _mxf8f6f4(a, b, c, sa, sb, emins, bits):
    """One mxf8f6f4 instruction: a (n, M, 1, K), b (n, 1, N, K), c (n, M, N) float32 values,
    sa (n, M, 1), sb (n, 1, N) powers of two or NaN; float32 D with NaN where it is NaN."""
    with np.errstate(invalid="ignore"):
        p = a * b * (sa * sb)[..., None]
        total = p.sum(-1) + c
    special = ~np.isfinite(total)
    e = (_exponent(a, emins[0]) + _exponent(b, emins[1])).astype(np.int64)
    es = np.frexp(np.where(np.isnan(sa), 1, sa))[1] + np.frexp(np.where(np.isnan(sb), 1, sb))[1]
    e = e + (es - 2)[..., None]
    E = np.maximum(e.max(-1), _exponent(c, -126))
    p = np.where(special[..., None], 0, p)
    s = np.trunc(np.ldexp(p, (bits - E)[..., None])).sum(-1)
    s += np.trunc(np.ldexp(np.where(special, 0, c), bits - E))
    d = _rz_float32(np.ldexp(s, E - bits))
    return np.where(special, np.where(special, total, 0).astype(np.float32), d)


def _mxf4nvf4(a, b, c, sa, sb, scale_emin, bits):
    """One mxf4nvf4 instruction: a (n, M, 1, 64), b (n, 1, N, 64), c (n, M, N), sa (n, M, 1,
    4) and sb (n, 1, N, 4) the scale of each group of 16 (magnitudes, NaN kept)."""
    p = a * b
    g = p.reshape(p.shape[:-1] + (4, 16)).sum(-1)  # exact: multiples of 1/4 below 2**10
    nan = np.isnan(sa).any(-1) | np.isnan(sb).any(-1) | np.isnan(c)
    sa, sb = np.where(np.isnan(sa), 1, sa), np.where(np.isnan(sb), 1, sb)
    e = (_exponent(sa, scale_emin) + _exponent(sb, scale_emin)).astype(np.int64)
    inf = np.isinf(c)
    cc = np.where(inf | nan, 0, c)
    E = np.maximum(e.max(-1), _exponent(cc, -126))
    s = np.trunc(np.ldexp(g * sa * sb, (bits - E)[..., None])).sum(-1)
    s += np.trunc(np.ldexp(cc, bits - E))
    d = _rz_float32(np.ldexp(s, E - bits))
    d = np.where(inf, c.astype(np.float32), d)  # a chain's overflow stays (fpexplore's reading)
    return np.where(nan, np.float32(np.nan), d)


def block_scaled(A3, B3, C3, SA3, SB3, rule: ScaledKind, fa, fb, scale_format, block):
    """D over (n, M, K) @ (n, K, N) with c C3 (n, M, N) and scales SA3 (n, M, K/block), SB3
    (n, K/block, N), all float64 holding exact values, as float32 (NaN 0x7FFFFFFF); K is a
    multiple of the rule's K."""
    K = A3.shape[2]
    d = C3.astype(np.float32)
    if scale_format == "float8_e4m3":
        SA3, SB3 = np.abs(SA3), np.abs(SB3)
    emins = (format_info(fa).emin, format_info(fb).emin)
    for k0 in range(0, K, rule.k):
        a = A3[:, :, None, k0 : k0 + rule.k]
        b = np.swapaxes(B3[:, k0 : k0 + rule.k, :], 1, 2)[:, None]
        c = d.astype(np.float64)
        if rule.terms == "products":
            t = k0 // block
            d = _mxf8f6f4(a, b, c, SA3[:, :, t, None], SB3[:, None, t, :], emins,
                          rule.fraction_bits)  # fmt: skip
        else:
            idx = [(k0 + 16 * j) // block for j in range(4)]
            sa = SA3[:, :, idx][:, :, None, :]
            sb = np.swapaxes(SB3[:, idx, :], 1, 2)[:, None]
            d = _mxf4nvf4(a, b, c, sa, sb, format_info(scale_format).emin, rule.fraction_bits)
    d = np.array(d, dtype=np.float32)
    d.view(np.uint32)[np.isnan(d)] = _NAN_BITS
    return d
