"""fpx.quantize against oracles written here from the texts, by exact rationals:

- OCP Microscaling Formats (MX) v1.0, section 6.3: "Set X to be the largest power-of-two
  less than or equal to max(|V_i|), divided by the largest power-of-two representable in the
  element data type. Set P_i to be the scaled inputs V_i / X quantized to the element data
  type. For this quantization, normal numbers that exceed the max normal representation of
  the element data type should be clamped to the max normal, preserving the sign."
  Rounding: roundTiesToEven. Table 1: blocks of k = 32, scale E8M0; Table 7: E8M0 exponents
  -127 .. 127, 0xFF NaN.
- NVFP4, arXiv:2509.25149 Appendix B: s_enc = 6 * 448 / amax_x, s_dec = 1 / s_enc; per block
  of 16, s_dec_b = amax_b / 6, s_dec_b_e4m3 = e4m3(s_dec_b * s_enc), s_enc_b = 1 /
  (fp32(s_dec_b_e4m3) * s_dec), x_hat = q(x * s_enc_b): every step in float32, the roundings
  to E4M3 and E2M1 nearest even (E2M1 saturating at 6).

The element grids are enumerated from their bit fields (OCP FP8 and MX tables), not taken from
fpexplore.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest

import fpexplore as fpx

from oracle import floor_log2

# element formats: (exponent bits, mantissa bits, bias, codes that are not numbers)
FIELDS = {
    "float8_e4m3": (4, 3, 7, {0b1111111}),  # S.1111.111 is NaN: largest 448
    "float8_e5m2": (5, 2, 15, set(range(0b1111100, 0b10000000))),  # inf and NaN
    "float6_e2m3": (2, 3, 1, set()),
    "float6_e3m2": (3, 2, 3, set()),
    "float4_e2m1": (2, 1, 1, set()),
}


def grid(fmt: str) -> list[Fraction]:
    """The non-negative values of ``fmt``, by code (so a code's parity is its last bit)."""
    e_bits, m_bits, bias, skip = FIELDS[fmt]
    out = []
    for code in range(1 << (e_bits + m_bits)):
        if code in skip:
            break
        e, m = code >> m_bits, code & ((1 << m_bits) - 1)
        if e == 0:
            out.append(Fraction(m, 1 << m_bits) * Fraction(2) ** (1 - bias))
        else:
            out.append((1 + Fraction(m, 1 << m_bits)) * Fraction(2) ** (e - bias))
    return out


GRIDS = {f: grid(f) for f in FIELDS}


def nearest_even(v: Fraction, fmt: str) -> Fraction:
    """v rounded to nearest, ties to the even code, clamped to the largest value."""
    g = GRIDS[fmt]
    a = min(abs(v), g[-1])
    i = max(k for k, w in enumerate(g) if w <= a)
    if i + 1 < len(g) and (g[i + 1] - a < a - g[i] or (g[i + 1] - a == a - g[i] and i % 2)):
        i += 1
    return -g[i] if v < 0 else g[i]


EMAX = {"float8_e4m3": 8, "float8_e5m2": 15, "float6_e2m3": 2, "float6_e3m2": 4, "float4_e2m1": 2}
MX = {
    "mxfp8_e4m3": "float8_e4m3",
    "mxfp8_e5m2": "float8_e5m2",
    "mxfp6_e2m3": "float6_e2m3",
    "mxfp6_e3m2": "float6_e3m2",
    "mxfp4": "float4_e2m1",
}


def mx_oracle(block, fmt: str):
    """(scale, elements) of one block of float values by section 6.3, as Fractions (scale
    None: the NaN scale)."""
    vals = [Fraction(float(v)) for v in block]
    amax = max((abs(v) for v in vals), default=Fraction(0))
    e = (floor_log2(amax) if amax else -127 + EMAX[fmt]) - EMAX[fmt]
    if e > 127:
        return None, None
    x = Fraction(2) ** max(e, -127)
    return x, [nearest_even(v / x, fmt) for v in vals]


def _data(rng, n: int, kind: str) -> np.ndarray:
    if kind == "normal":
        return rng.standard_normal(n)
    if kind == "wide":  # magnitudes over many binades, signs mixed
        return rng.choice([-1, 1], n) * 2.0 ** rng.uniform(-40, 40, n)
    if kind == "ties":  # values on the element grid's midpoints at some power of two
        return rng.choice([-1, 1], n) * (rng.integers(0, 64, n) + 0.5) * 2.0 ** rng.integers(-8, 8)
    if kind == "zeros":
        x = rng.standard_normal(n)
        x[rng.random(n) < 0.5] = 0.0
        return x
    raise ValueError(kind)


@pytest.mark.parametrize("scheme", list(MX))
@pytest.mark.parametrize("kind", ["normal", "wide", "ties", "zeros"])
def test_mx_scales_and_elements_follow_section_6_3(scheme, kind):
    rng = np.random.default_rng([len(scheme), len(kind)])
    fmt = MX[scheme]
    for n in (1, 31, 32, 33, 100):
        x = _data(rng, n, kind).astype(np.float32)
        q = fpx.quantize(x, scheme)
        assert q.scales.shape == (-(-n // 32),) and q.elements.shape == (n,)
        for b in range(q.scales.size):
            block = x[32 * b : 32 * b + 32]  # a short last block: as padded with zeros
            scale, elements = mx_oracle(block, fmt)
            assert Fraction(float(q.scales[b])) == scale, (scheme, kind, n, b)
            got = [Fraction(float(v)) for v in q.elements[32 * b : 32 * b + 32]]
            assert got == elements, (scheme, kind, n, b)


def test_mx_clamps_to_the_largest_normal_keeping_the_sign():
    """MXFP4 of a block whose largest magnitude is 3.5: X = 2**1 / 2**2 = 0.5, and 3.5 / 0.5
    = 7 lies past E2M1's largest normal 6: clamped to 6 (and -7 to -6), not rounded to 8."""
    x = np.zeros(32, np.float32)
    x[:3] = [3.5, -3.5, 1.0]
    q = fpx.quantize(x, "mxfp4")
    assert q.scales.tolist() == [0.5]
    assert q.elements[:3].tolist() == [6.0, -6.0, 2.0]
    assert q.dequantize()[:3].tolist() == [3.0, -3.0, 1.0]
    assert q.error_ulps()[0] == -0.5 / 1.0  # 3 against 3.5, the grid's step there 2 * 0.5
    # MXFP8 E4M3: 480 / 2**(8 - 8) = 480 past 448, clamped to 448 (not NaN)
    y = np.full(32, 480.0, np.float32)
    assert fpx.quantize(y, "mxfp8_e4m3").elements.tolist() == [448.0] * 32


def test_mx_edge_blocks():
    """An all-zero block takes the least scale 2**-127 (the reference code's choice) and zero
    elements; a block holding NaN or inf gets the NaN scale (E8M0 0xFF) and NaN elements,
    the other blocks untouched; a tiny block's scale stops at 2**-127; float64 values past
    2**129 would need a scale past 2**127: NaN."""
    x = np.ones((3, 32), np.float32)
    x[0] = 0.0
    x[1, 5] = np.nan
    q = fpx.quantize(x, "mxfp8_e5m2", axis=1)
    assert q.scales[0, 0] == 2.0**-127 and (q.elements[0] == 0).all()
    assert np.isnan(q.scales[1, 0]) and np.isnan(q.elements[1]).all()
    assert q.scales[2, 0] == 2.0**-15 and (q.elements[2] == 2.0**15).all()
    assert np.isnan(fpx.quantize(np.full(32, np.inf, np.float32), "mxfp4").scales).all()
    tiny = np.full(32, 2.0**-140)
    assert fpx.quantize(tiny, "mxfp4").scales.tolist() == [2.0**-127]
    assert np.isnan(fpx.quantize(np.full(32, 2.0**200), "mxfp4").scales).all()


def test_mx_along_another_axis_equals_the_transposed_blocks():
    rng = np.random.default_rng(7)
    A = rng.standard_normal((64, 5)).astype(np.float32)
    by_columns = fpx.quantize(A, "mxfp6_e2m3", axis=0)
    by_rows = fpx.quantize(A.T.copy(), "mxfp6_e2m3")
    assert by_columns.scales.shape == (2, 5)
    assert np.array_equal(by_columns.scales, by_rows.scales.T)
    assert np.array_equal(by_columns.elements, by_rows.elements.T)


def test_dequantize_is_exact_and_rounding_errors_are_within_half_a_step():
    rng = np.random.default_rng(3)
    x = rng.standard_normal(200).astype(np.float32)
    for scheme in (*MX, "nvfp4"):
        q = fpx.quantize(x, scheme)
        scales = np.repeat(q.scales.astype(np.float64), q.scheme.block)[: x.size]
        want = [
            Fraction(float(e)) * Fraction(float(s)) * Fraction(q.tensor_scale)
            for e, s in zip(q.elements, scales)
        ]
        assert [Fraction(float(v)) for v in q.dequantize()] == want, scheme
        assert np.abs(q.error_ulps()).max() <= 0.5 or scheme == "mxfp4", scheme


def f32(v) -> np.float32:
    return np.float32(v)


F32_MAX = np.finfo(np.float32).max


def nvfp4_oracle(x: np.ndarray):
    """(s_dec, scales, elements) by Appendix B, in NumPy float32 and the grids above; the
    encoding scales at most float32's largest, as TransformerEngine's
    compute_global_encode_scaling_factor_FP4 and compute_nvfp4_scaling_coefficient clamp
    them (a quotient that overflows float32 is FLT_MAX)."""
    amax = f32(np.max(np.abs(x)))
    with np.errstate(over="ignore", divide="ignore"):
        s_enc = min(f32(f32(6 * 448) / amax), F32_MAX) if amax > 0 else f32(1)
    s_dec = f32(f32(1) / s_enc)
    scales, elements = [], []
    for b in range(0, x.size, 16):
        block = x[b : b + 16]
        s_dec_b = f32(f32(np.max(np.abs(block))) / f32(6))
        s = nearest_even(Fraction(float(f32(s_dec_b * s_enc))), "float8_e4m3")
        scales.append(s)
        if s == 0:
            elements += [Fraction(0)] * block.size
            continue
        with np.errstate(over="ignore", divide="ignore"):
            s_enc_b = min(f32(f32(1) / f32(f32(float(s)) * s_dec)), F32_MAX)
        elements += [nearest_even(Fraction(float(f32(v * s_enc_b))), "float4_e2m1") for v in block]
    return s_dec, scales, elements


@pytest.mark.parametrize("kind", ["normal", "wide", "ties", "zeros"])
def test_nvfp4_follows_appendix_b(kind):
    rng = np.random.default_rng(len(kind))
    for n in (16, 17, 100, 256):
        x = _data(rng, n, kind).astype(np.float32)
        q = fpx.quantize(x, "nvfp4")
        s_dec, scales, elements = nvfp4_oracle(x)
        assert q.tensor_scale == float(s_dec)
        assert [Fraction(float(s)) for s in q.scales] == scales, (kind, n)
        assert [Fraction(float(e)) for e in q.elements] == elements, (kind, n)


def test_nvfp4_of_a_tiny_tensor_has_no_nan():
    """Pass 5 (issue 36): a finite tensor below 2688 / FLT_MAX (about 7.9e-36) in magnitude had
    6 * 448 / amax overflow to inf, tensor scale 0 and every element NaN. The oracle's clamps
    are TransformerEngine's; at 1e-36 the numbers are worked by hand too: s_enc = FLT_MAX,
    scale e4m3(1e-36 / 6 * FLT_MAX = 56.7) = 56, elements e2m1(6.07) = 6 and e2m1(2.02) = 2."""
    rng = np.random.default_rng(11)
    for top in (1e-30, 7.8e-36, 1e-36, 1e-38, 1e-40, 1e-43, 1e-45):
        for n in (16, 40):
            x = (rng.uniform(-1, 1, n) * top).astype(np.float32)
            x[0] = np.float32(top)
            q = fpx.quantize(x, "nvfp4")
            s_dec, scales, elements = nvfp4_oracle(x)
            assert not np.isnan(q.elements).any() and not np.isnan(q.scales).any(), top
            assert q.tensor_scale == float(s_dec) > 0, top
            assert [Fraction(float(s)) for s in q.scales] == scales, (top, n)
            assert [Fraction(float(e)) for e in q.elements] == elements, (top, n)
    x = np.full(16, 1e-36, np.float32)
    x[3] = np.float32(1e-36 / 3)
    q = fpx.quantize(x, "nvfp4")
    assert q.tensor_scale == float(np.float32(1) / F32_MAX)
    assert q.scales.tolist() == [56.0] and q.elements[:4].tolist() == [6.0, 6.0, 6.0, 2.0]


def test_nvfp4_edges_and_refusals():
    """All zeros: tensor scale 1, block scales 0, elements 0. A block far smaller than the
    tensor's largest value (its E4M3 scale rounds to 0) quantizes to zeros. float64 data and
    NaN or inf are refused, by name."""
    q = fpx.quantize(np.zeros(32, np.float32), "nvfp4")
    assert q.tensor_scale == 1.0 and (q.scales == 0).all() and (q.elements == 0).all()
    x = np.full(32, 1e-9, np.float32)
    x[0] = 1e6
    q = fpx.quantize(x, "nvfp4")
    assert q.scales[1] == 0 and (q.elements[16:] == 0).all() and q.elements[0] == 6.0
    # pass 21: a zero scale's elements keep their values' signs, as MX's (-0.0 was 0.0)
    x[16:] = np.where(np.arange(16) % 2, -1e-9, -0.0).astype(np.float32)
    assert np.signbit(fpx.quantize(x, "nvfp4").elements[16:]).all()
    q = fpx.quantize(np.float32([-0.0, 0.0]), "nvfp4")
    assert np.signbit(q.elements).tolist() == [True, False]
    assert np.signbit(q.dequantize()).tolist() == [True, False]
    assert np.signbit(fpx.quantize(np.float32([-0.0, 1.0]), "mxfp4").elements[0])
    with pytest.raises(TypeError, match="float32 or narrower"):
        fpx.quantize(np.ones(16), "nvfp4")
    with pytest.raises(ValueError, match="must be finite"):
        fpx.quantize(np.array([1.0, np.nan], np.float32), "nvfp4")


def test_quantize_checks_its_arguments():
    with pytest.raises(ValueError, match="unknown scheme 'mxfp5'; schemes: mxfp8_e4m3"):
        fpx.quantize(np.ones(4, np.float32), "mxfp5")
    with pytest.raises(ValueError, match="axis"):
        fpx.quantize(np.ones((2, 4), np.float32), "mxfp4", axis=2)
    with pytest.raises(TypeError, match="array of floats"):
        fpx.quantize(np.ones(4, np.int32), "mxfp4")
    with pytest.raises(ValueError, match="at least one axis"):
        fpx.quantize(np.float32(1), "mxfp4")
    assert "mxfp4: 4 values in 1 blocks" in repr(fpx.quantize(np.ones(4, np.float32), "mxfp4"))
    assert math.isclose(fpx.quantize(np.ones(4, np.float32), "mxfp4").scales[0], 0.25)


@pytest.mark.skipif(np.finfo(np.longdouble).nmant <= 52, reason="longdouble is float64 here")
def test_a_longdouble_is_refused_not_rounded_to_float64():
    """2.5 + 2**-60 in a block scaled by 1/2 is 5 + 2**-59: E2M1 rounds it to 6 (the oracle);
    widened to float64 first it was the tie 5, which rounds to 4, silently."""
    x = np.array([2.5, 0.0], np.longdouble)
    x[0] += np.longdouble(2) ** -60
    exact = Fraction(5, 2) + Fraction(1, 2**60)
    assert Fraction(int(x[0] * 2**60), 2**60) == exact  # held exactly
    scale = Fraction(2) ** (floor_log2(exact) - EMAX["float4_e2m1"])
    assert scale == Fraction(1, 2) and nearest_even(exact / scale, "float4_e2m1") == 6
    assert nearest_even(Fraction(5), "float4_e2m1") == 4  # what float64 made of it
    with pytest.raises(TypeError, match="wider than float64"):
        fpx.quantize(x, "mxfp4")


@pytest.mark.parametrize("scheme", ["mxfp4", "mxfp8_e4m3", "nvfp4"])
def test_bfloat16_data_is_quantized_as_its_float32_values(scheme):
    """bfloat16 is a float (it was refused: 'x must be an array of floats, got bfloat16');
    its values are exact in float32, so its quantization is theirs."""
    x = np.random.default_rng(3).standard_normal(48).astype(np.float32)
    b = np.asarray(fpx.as_format(x, "bfloat16"))
    want = fpx.quantize(b.astype(np.float32), scheme)
    got = fpx.quantize(b, scheme)
    assert np.array_equal(got.elements, want.elements)
    assert np.array_equal(got.scales, want.scales) and got.tensor_scale == want.tensor_scale
    assert np.array_equal(got.dequantize(), want.dequantize())
    if scheme in MX:  # and section 6.3's oracle
        for k in range(got.scales.size):
            scale, elements = mx_oracle(b[32 * k : 32 * k + 32], MX[scheme])
            assert Fraction(float(got.scales[k])) == scale
            assert [Fraction(float(v)) for v in got.elements[32 * k : 32 * k + 32]] == elements


def test_first_blocks_and_the_plot_hold_the_same_numbers():
    """Quantized.first(count): the first values in whole blocks, this quantization's numbers
    (issue 38 item 5: the explorer's quantize view draws them); quantize_plot refuses what
    is not a vector."""
    pytest.importorskip("matplotlib")
    x = np.random.default_rng(3).standard_normal((2, 70)).astype(np.float32)
    q = fpx.quantize(x, "nvfp4")
    head = q.first(20)  # 2 blocks of 16
    assert head.x.shape == (2, 32) and head.scales.shape == (2, 2)
    assert np.array_equal(head.dequantize(), q.dequantize()[:, :32])
    assert np.array_equal(head.error_ulps(), q.error_ulps()[:, :32], equal_nan=True)
    assert q.first(1000).x.shape == (2, 70) and head.tensor_scale == q.tensor_scale
    with pytest.raises(ValueError, match="count must be >= 1"):
        q.first(0)
    with pytest.raises(ValueError, match="q must hold a vector"):
        fpx.plots.quantize_plot(q)
    fig = fpx.plots.quantize_plot(fpx.quantize(x[0], "mxfp4"), shown=65)
    assert fig.axes[0].get_title().startswith("mxfp4: 3 blocks of 32 of 70 values of x")
    part = fpx.plots.quantize_plot(fpx.quantize(x[0], "mxfp4"), shown=40).axes[0].get_title()
    assert part.startswith("mxfp4: first 2 blocks of 32 of 70 values of x")


def test_quantize_plot_names_its_own_arguments():
    """Issue 36: shown=0 was refused as "count must be >= 1" (first()'s name), total=5 for
    70 values drew "... of 5 values of x", and an array for q raised AttributeError."""
    pytest.importorskip("matplotlib")
    q = fpx.quantize(np.random.default_rng(4).standard_normal(70).astype(np.float32), "mxfp4")
    with pytest.raises(ValueError, match="shown must be >= 1, got 0"):
        fpx.plots.quantize_plot(q, shown=0)
    with pytest.raises(ValueError, match="total must be >= 70, got 5"):
        fpx.plots.quantize_plot(q, total=5)
    with pytest.raises(TypeError, match="q must be fpx.quantize's result, got ndarray"):
        fpx.plots.quantize_plot(np.ones(3))
    title = fpx.plots.quantize_plot(q, shown=40, total=1000).axes[0].get_title()
    assert title.startswith("mxfp4: first 2 blocks of 32 of 1,000 values of x")


@pytest.mark.parametrize("scheme", ["mxfp4", "mxfp8_e5m2", "nvfp4"])
def test_empty_arrays_of_any_shape_quantize_to_empty_blocks(scheme):
    """Pass 5 (issue 36): an array with a zero-length axis other than the blocks' raised
    NumPy's "cannot reshape array of size 0 into shape (0,newaxis)". Each shape keeps its
    axes; the block axis of length n holds ceil(n / block) scales."""
    block = fpx.quantize(np.ones(1, np.float32), scheme).scheme.block
    for shape in [(0, 5), (5, 0), (0,), (2, 0, 3), (0, 40)]:
        for axis in (-1, 0):
            q = fpx.quantize(np.ones(shape, np.float32), scheme, axis=axis)
            assert q.elements.shape == q.dequantize().shape == shape, (shape, axis)
            blocks = list(shape)
            blocks[axis] = -(-shape[axis] // block)
            assert q.scales.shape == tuple(blocks), (shape, axis)


def test_an_nvfp4_block_whose_scale_underflows_is_lost_and_its_errors_say_so():
    """A block 10**8 below the tensor's largest value: the tensor scale is 10**4 / (6 * 448)
    (3.72...), the block's wanted scale 10**-4 / 6 / 3.72 = 4.5e-6, below half of E4M3's least
    subnormal 2**-9: the scale is 0, the block dequantizes to 0, and its errors are ±inf
    steps (the docs said at most 0.5 unless clamped)."""
    x = np.array([1e4] * 16 + [1e-4] * 16 + [-1e-4] * 16, np.float32)
    q = fpx.quantize(x, "nvfp4")
    assert q.tensor_scale == float(np.float32(np.float32(1e4) / np.float32(6 * 448)))
    assert q.scales.tolist() == [448.0, 0.0, 0.0]
    assert not q.dequantize()[16:].any()
    err = q.error_ulps()
    assert np.all(err[16:32] == -np.inf) and np.all(err[32:] == np.inf)
    assert np.abs(err[:16]).max() <= 0.5
