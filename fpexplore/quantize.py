"""Block-scaled quantization: ``fpx.quantize(x, scheme, axis=-1)``.

The schemes (:data:`SCHEMES`) are the OCP Microscaling formats (OCP MX v1.0, September 2023:
MXFP8 with E4M3 or E5M2 elements, MXFP6 with E2M3 or E3M2, MXFP4 with E2M1; blocks of 32
values sharing one E8M0 scale, spec Table 1) and NVIDIA's NVFP4 (E2M1 elements, an E4M3
scale per 16 values and a float32 scale for the whole tensor; *Pretraining Large Language
Models with NVFP4*, arXiv:2509.25149, Appendix B). docs/quantize.md gives the rules with
their clauses and the choices made where the texts leave one open.

MX (spec section 6.3): the scale X of a block is the largest power of two not above the
block's largest magnitude, divided by the largest power of two the element format holds
(2**emax: 4 for E2M1); each element is V_i / X rounded to nearest, ties to even, a value past
the element format's largest normal clamped to it, the sign kept.

NVFP4 (Appendix B, each step in float32): s_enc = 6 * 448 / amax(tensor), s_dec = 1 / s_enc;
per block of 16, the E4M3 decode scale e4m3(amax(block) / 6 * s_enc) (nearest even), its
encode scale 1 / (scale * s_dec), and each element e2m1(x_i * that), saturating at 6.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

import numpy as np

from . import checks
from .formats import as_array, as_format, format_info, refuse_masked, ulp

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

__all__ = ["SCHEMES", "Quantized", "Scheme", "quantize"]


@dataclass(frozen=True)
class Scheme:
    """A block-scaled format: its element format, block length, scale format, and whether a
    float32 scale for the whole tensor comes on top (NVFP4)."""

    name: str
    element: str
    block: int
    scale: str
    tensor_scale: bool = False
    source: str = "OCP MX v1.0, Table 1 and section 6.3"


SCHEMES = {
    s.name: s
    for s in (
        Scheme("mxfp8_e4m3", "float8_e4m3", 32, "float8_e8m0"),
        Scheme("mxfp8_e5m2", "float8_e5m2", 32, "float8_e8m0"),
        Scheme("mxfp6_e2m3", "float6_e2m3", 32, "float8_e8m0"),
        Scheme("mxfp6_e3m2", "float6_e3m2", 32, "float8_e8m0"),
        Scheme("mxfp4", "float4_e2m1", 32, "float8_e8m0"),
        Scheme(
            "nvfp4",
            "float4_e2m1",
            16,
            "float8_e4m3",
            tensor_scale=True,
            source="arXiv:2509.25149 (Pretraining LLMs with NVFP4), Appendix B",
        ),
    )
}

E8M0_MIN, E8M0_MAX = -127, 127  # the scale's exponents (spec Table 7: bias 127, 0xFF NaN)


@dataclass(frozen=True)
class Quantized:
    """The result of :func:`quantize`.

    Attributes
    ----------
    scheme : the :class:`Scheme` used
    x : the input, as an array
    elements : the element values, float32, the shape of ``x``
    scales : one per block, float32, the shape of ``x`` with the block axis cut to the number
        of blocks
    tensor_scale : NVFP4's float32 decode scale s_dec, 1.0 for the MX schemes
    axis : the axis the blocks run along (non-negative)
    """

    scheme: Scheme
    x: np.ndarray
    elements: np.ndarray
    scales: np.ndarray
    tensor_scale: float
    axis: int

    def _per_value(self, a: np.ndarray) -> np.ndarray:
        """A per-block array repeated over the values of each block (float64)."""
        b = self.scheme.block
        n = self.x.shape[self.axis]
        return np.repeat(np.asarray(a, np.float64), b, axis=self.axis).take(
            np.arange(n), axis=self.axis
        )

    def dequantize(self) -> np.ndarray:
        """element * block scale (* tensor scale): exact, in float64 (a product of at most
        2 + 4 + 24 significant bits)."""
        with np.errstate(invalid="ignore"):
            return (
                self.elements.astype(np.float64)
                * self._per_value(self.scales)
                * np.float64(self.tensor_scale)
            )

    def error_ulps(self) -> np.ndarray:
        """(dequantized - x) in ulps of the block's grid at the element: the element format's
        ulp at that element times the block's scale(s). A rounding within range is at most
        half of one; a clamped value more; ±inf where the block's scale is 0 (NVFP4: an E4M3
        scale below its least subnormal's half, a block far smaller than the tensor's
        largest value: every value of the block dequantizes to 0, its grid has no step)."""
        step = ulp(self.elements.astype(np.float32), self.scheme.element)
        grid = np.asarray(step, np.float64) * self._per_value(self.scales) * self.tensor_scale
        with np.errstate(invalid="ignore", divide="ignore"):
            return (self.dequantize() - self.x.astype(np.float64)) / grid

    def first(self, count: int) -> Quantized:
        """The first ``count`` values along the block axis, rounded up to whole blocks (all of
        them where there are fewer), as a :class:`Quantized` holding this one's numbers."""
        b, n = self.scheme.block, self.x.shape[self.axis]
        m = min(-(-checks.integer("count", count, 1) // b) * b, n)

        def head(a, k):
            return np.take(a, np.arange(k), axis=self.axis)

        return replace(
            self,
            x=head(self.x, m),
            elements=head(self.elements, m),
            scales=head(self.scales, -(-m // b)),
        )

    def __repr__(self) -> str:
        return (
            f"Quantized({self.scheme.name}: {self.x.size} values in "
            f"{self.scales.size} blocks of {self.scheme.block}, elements {self.scheme.element}, "
            f"scales {self.scheme.scale}"
            + (f", tensor scale {self.tensor_scale!r})" if self.scheme.tensor_scale else ")")
        )


def _blocks(x: np.ndarray, block: int) -> np.ndarray:
    """x (block axis last) as (..., blocks, block), a short last block padded with zeros
    (a zero changes no block's largest magnitude)."""
    n = x.shape[-1]
    k = -(-n // block)
    padded = np.zeros((*x.shape[:-1], k * block), np.float64)
    padded[..., :n] = x
    return padded.reshape(*x.shape[:-1], k, block)


def _mx(v: np.ndarray, s: Scheme) -> tuple[np.ndarray, np.ndarray]:
    """(elements, scales) of blocks ``v`` (..., blocks, block) by OCP MX section 6.3."""
    info = format_info(s.element)
    amax = np.max(np.abs(v), axis=-1)  # NaN where a block holds NaN
    finite = np.isfinite(amax)
    # floor(log2(amax)) exactly (frexp: a = m 2**e, m in [0.5, 1)); an all-zero block takes
    # the least scale, as the reference code (microxcaling) does
    top = np.frexp(np.where(finite, amax, 1.0))[1].astype(np.int64) - 1
    e = np.where(amax > 0, top, E8M0_MIN + info.emax) - info.emax
    # NaN or inf in the block, or a scale past 2**127: the scale's NaN (0xFF)
    scales = np.where(finite & (e <= E8M0_MAX), np.ldexp(1.0, np.maximum(e, E8M0_MIN)), np.nan)
    with np.errstate(invalid="ignore"):
        scaled = v / scales[..., None]  # exact: a power of two
    big = format_info(s.element).max
    clamped = np.clip(scaled, -big, big)  # the spec's clamp to the largest normal, sign kept
    elements = np.asarray(as_format(clamped, s.element), np.float32)
    return elements, scales


def _f32(a) -> np.ndarray:
    return np.asarray(a, np.float32)


def _nvfp4(v: np.ndarray, s: Scheme) -> tuple[np.ndarray, np.ndarray, float]:
    """(elements, scales, s_dec) of blocks ``v`` by arXiv:2509.25149 Appendix B, in float32;
    a block whose E4M3 scale is 0 (its largest magnitude below about 2**-10 / 448 of the
    tensor's, or 0) has elements 0, each with its value's sign (as MX's). s_enc and s_enc,b
    are at most float32's largest (a tensor below 2688 / 3.4e38 in magnitude), as
    TransformerEngine's (docs/quantize.md)."""
    amax = np.float32(np.max(np.abs(v))) if v.size else np.float32(0)
    with np.errstate(all="ignore"):
        big = np.finfo(np.float32).max
        s_enc = min(np.float32(6 * 448) / amax, big) if amax > 0 else np.float32(1)  # (1)
        s_dec = np.float32(1) / s_enc
        s_dec_b = _f32(np.max(np.abs(v), axis=-1)) / np.float32(6)  # (2)
        scale = as_format(_f32(s_dec_b * s_enc), s.scale)  # (3): nearest even, at most 448
        s_enc_b = np.minimum(np.float32(1) / _f32(_f32(scale) * s_dec), big)
        x_scaled = _f32(_f32(v) * s_enc_b[..., None])  # (4)
    x_scaled = np.where(_f32(scale)[..., None] == 0, np.copysign(np.float32(0), x_scaled), x_scaled)
    elements = np.asarray(as_format(x_scaled, s.element), np.float32)  # saturates at 6
    return elements, np.asarray(scale, np.float64), float(s_dec)


def quantize(x: ArrayLike, scheme: str, *, axis: int = -1) -> Quantized:
    """``x`` in a block-scaled format: its blocks along ``axis``, their scales and elements.

    Parameters
    ----------
    x : array of floats (float16, bfloat16, float32; float64 and FP8 arrays for the MX
        schemes). A last block shorter than the scheme's is taken as padded with zeros.
    scheme : "mxfp8_e4m3", "mxfp8_e5m2", "mxfp6_e2m3", "mxfp6_e3m2", "mxfp4" (OCP MX v1.0:
        blocks of 32, an E8M0 scale each) or "nvfp4" (blocks of 16, an E4M3 scale each, a
        float32 scale for the tensor)
    axis : the axis the blocks run along (default the last)

    Returns
    -------
    Quantized
        ``.elements``, ``.scales``, ``.tensor_scale``, ``.dequantize()``, ``.error_ulps()``.
    """
    if not isinstance(scheme, str) or scheme not in SCHEMES:
        raise ValueError(f"unknown scheme {checks.shown(scheme)}; schemes: {', '.join(SCHEMES)}")
    s = SCHEMES[scheme]
    refuse_masked(x, "quantize")
    a = as_array(x, "quantize: x")
    if a.dtype.kind != "f" and not a.dtype.name.startswith(("float", "bfloat16")):
        raise TypeError(f"quantize: x must be an array of floats, got {a.dtype}")
    if a.dtype.kind == "f" and a.dtype.itemsize > 8:  # (widening to float64 would round it)
        raise TypeError(
            f"quantize: x is {a.dtype}, wider than float64, which would round it: round it "
            "first (fpx.as_format(x, 'float64'))"
        )
    if a.ndim == 0:
        raise ValueError("quantize: x must have at least one axis (the blocks run along one)")
    axis = checks.integer("axis", axis, -a.ndim, a.ndim - 1)
    axis %= a.ndim
    wide = np.asarray(a, np.float64)
    if s.tensor_scale:
        if a.dtype.itemsize > 4:
            raise TypeError(
                "quantize: nvfp4's recipe computes in float32: x must be float32 or narrower "
                f"(got {a.dtype}); convert it first, as the recipe would"
            )
        if not np.isfinite(wide).all():
            raise ValueError(
                "quantize: nvfp4's tensor scale is 6 * 448 / max|x|: x must be finite "
                "(it holds NaN or inf)"
            )
    moved = np.moveaxis(wide, axis, -1)
    v = _blocks(moved, s.block)
    if s.tensor_scale:
        elements, scales, t = _nvfp4(v, s)
    else:
        (elements, scales), t = _mx(v, s), 1.0
    n = moved.shape[-1]
    width = v.shape[-2] * v.shape[-1]  # (not -1: an axis of length 0 leaves it open)
    elements = np.moveaxis(elements.reshape(*moved.shape[:-1], width)[..., :n], -1, axis)
    scales = np.moveaxis(scales.astype(np.float32), -1, axis)
    return Quantized(s, a, np.ascontiguousarray(elements), scales, t, axis)
