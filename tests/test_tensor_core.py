"""fpx.mma, the tensor-core model: every published GPU output bit for bit, and the fast model
against the slow exact twin (tests/slow_tensor_core.py) on random and crafted blocks."""

from __future__ import annotations

import math
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest
import slow_tensor_core as slow
from hypothesis import given, settings
from hypothesis import strategies as st

import fpexplore as fpx
from fpexplore.orders import gpu_models, tensor_core

DATA = Path(__file__).parent / "data" / "tensor_cores"
# The hardware rows published with the models (tests/data/tensor_cores/published: V100, A100,
# A2, Ada, L40S, H100, H200, B200), one file per GPU and input format, named <arch>_<format>
PUBLISHED = DATA / "published"
_INPUTS = {"fp16": "float16", "bf16": "bfloat16", "tf32": "tf32", "e4m3": "float8_e4m3",
           "e5m2": "float8_e5m2"}  # fmt: skip
# the published test program ran mma.sync: on the B200, FP8 through mma.sync is b200-mma's rule
MMA_SYNC = {"b200_e4m3": "b200-mma", "b200_e5m2": "b200-mma"}
# file, arch, inputs
CASES = [(p.stem, MMA_SYNC.get(p.stem, p.stem.split("_")[0]), _INPUTS[p.stem.split("_")[1]])
         for p in sorted(PUBLISHED.glob("*.npz"))]  # fmt: skip
# Hopper's FP8 rows with a float32 output ran with c = 0 (docs/tensor_cores.md, "The c of the
# FP8 float32 rows"); every other file's rows added the c of their c file
C_ZERO = {"h100_e4m3", "h100_e5m2", "h200_e4m3", "h200_e5m2"}
# float16 outputs no published model gives a rule for (refused by fpx.mma, test below)
NO_F16_RULE = {"ada_e4m3", "ada_e5m2"}


def _load(name):
    z = np.load(PUBLISHED / f"{name}.npz")
    return {k: z[k] for k in z.files}


def _run(z, arch, inputs, output, c):
    a, b = z["a"].view(np.float32), z["b"].view(np.float32)
    d = fpx.mma(a[:, None, :], b[:, :, None], c[:, None, None], arch=arch, inputs=inputs,
                output=output)  # fmt: skip
    return d.reshape(-1).astype(np.float32).view(np.uint32)


def test_every_published_gpu_and_format_is_here():
    got = {(arch, inputs) for _, arch, inputs in CASES}
    assert len(CASES) == 32 and len(got) == 32
    assert {arch for arch, _ in got} == {"v100", "a100", "a2", "ada", "l40s", "h100", "h200",
                                         "b200", "b200-mma"}  # fmt: skip


@pytest.mark.parametrize(("name", "arch", "inputs"), CASES)
def test_every_published_float32_output_bit_for_bit(name, arch, inputs):
    z = _load(name)
    c = z["c"].view(np.float32)
    if name in C_ZERO:
        # The GPU added c = 0 to these rows, not the c of the c file: with the file's c almost
        # no row matches, with c = 0 every row does. The d file was replaced upstream by this
        # GPU output (the earlier one was c + a.b rounded to nearest off the GPU); the
        # generator sets c only from a c line exactly 32 characters long and otherwise leaves
        # c = 0. On an H100, cuBLASLt's FP8 GEMM with c = 0 gives these rows
        # (tests/test_tensor_core_measured.py).
        assert np.count_nonzero(_run(z, arch, inputs, "float32", c) == z["d_fp32"]) <= 2
        c = np.zeros_like(c)
    got = _run(z, arch, inputs, "float32", c)
    assert len(got) == 5000
    assert np.array_equal(got, z["d_fp32"])


F16_CASES = [case for case in CASES if "d_fp16" in np.load(PUBLISHED / f"{case[0]}.npz").files]


@pytest.mark.parametrize(("name", "arch", "inputs"),
                         [case for case in F16_CASES if case[0] not in NO_F16_RULE])  # fmt: skip
def test_every_published_float16_output_bit_for_bit(name, arch, inputs):
    z = _load(name)
    c16 = z["c"].view(np.float32).astype(np.float16)  # the generator: __float2half(c), RNE
    got = _run(z, arch, inputs, "float16", c16)
    assert len(got) == 5000
    assert np.array_equal(got, z["d_fp16"])


@pytest.mark.parametrize(("name", "hopper_rule"), [("ada_e4m3", 2861), ("ada_e5m2", 2948)])
def test_ada_fp8_float16_rows_have_no_rule_here(name, hopper_rule):
    """Ada's FP8 rows with a float16 output: its model files give them no usable rule (refused),
    and Hopper's (two float16 blocks, c last) fits only some rows."""
    z = _load(name)
    c16 = z["c"].view(np.float32).astype(np.float16)
    with pytest.raises(ValueError, match="output='float16': the Ada model files"):
        _run(z, "ada", _INPUTS[name[-4:]], "float16", c16)
    got = _run(z, "h100", _INPUTS[name[-4:]], "float16", c16)
    assert np.count_nonzero(got == z["d_fp16"]) == hopper_rule
    assert sorted(n for n, _, _ in F16_CASES if n not in NO_F16_RULE) == [
        "a100_fp16", "a2_fp16", "ada_fp16", "b200_e4m3", "b200_e5m2", "b200_fp16", "h100_e4m3",
        "h100_e5m2", "h100_fp16", "h200_e4m3", "h200_e5m2", "h200_fp16", "l40s_fp16",
        "v100_fp16"]  # fmt: skip


@pytest.mark.parametrize(("name", "with_c", "without_c"),
                         [("h100_e4m3", 3120, 7), ("h100_e5m2", 3356, 4)])  # fmt: skip
def test_fp8_float16_rows_did_add_the_c_of_the_c_file(name, with_c, without_c):
    # The FP8 float16-output rows, from the same a, b and c files, did add c (as the float16
    # __float2half(c)): the exact c + a.b rounded once to float16 gives the GPU's bits in
    # about two thirds of the rows with that c and in almost none with c = 0. (The exact sum
    # fits a float64 here: math.fsum gives it, the float16 cast rounds it to nearest-even.)
    z = _load(name)
    a, b = z["a"].view(np.float32).astype(float), z["b"].view(np.float32).astype(float)
    c16 = z["c"].view(np.float32).astype(np.float16).astype(float)
    d16 = z["d_fp16"].view(np.float32)
    for c, want in ((c16, with_c), (0 * c16, without_c)):
        s = np.array([math.fsum([*(a[i] * b[i]), c[i]]) for i in range(len(a))])
        assert np.count_nonzero(s.astype(np.float16).astype(np.float32) == d16) == want


@pytest.mark.parametrize(("name", "halves", "c_first"),
                         [("h100_e4m3", 3477, 3113), ("h100_e5m2", 3821, 3153)])  # fmt: skip
def test_fp8_float16_rows_need_the_k_mod_4_split_and_c_last(name, halves, c_first):
    # The FP8 float16-output rows are two float16 blocks of 16 (k % 4 < 2 from 0, then the
    # rest) and c added last in float16: every row. Splitting k into 0-15 / 16-31 instead,
    # or starting the first block from c, matches far fewer rows.
    z = _load(name)
    a = z["a"].view(np.float32).astype(np.float16)[:, None, :]
    b = z["b"].view(np.float32).astype(np.float16)[:, :, None]
    c16 = z["c"].view(np.float32).astype(np.float16)[:, None, None]
    d = z["d_fp16"].view(np.float32)
    k = np.arange(32)

    def two_blocks(first, second, c_start):
        t = fpx.mma(a[..., first], b[:, first], c_start, arch="h100", inputs="float16",
                    output="float16")  # fmt: skip
        return fpx.mma(a[..., second], b[:, second], t, arch="h100", inputs="float16",
                       output="float16")  # fmt: skip

    def matches(got):
        return np.count_nonzero(got.reshape(-1).astype(np.float32) == d)

    lo, hi = k[k % 4 < 2], k[k % 4 >= 2]
    zero = np.zeros_like(c16)
    assert matches((two_blocks(lo, hi, zero).astype(float) + c16).astype(np.float16)) == 5000
    assert matches((two_blocks(k[:16], k[16:], zero).astype(float) + c16).astype(np.float16)) == (
        halves
    )
    assert matches(two_blocks(lo, hi, c16)) == c_first


def test_fp8_float16_rounds_the_first_block_before_the_second_and_c():
    # H100, E4M3, float16 output: products 2048 (k = 0), 1 (k = 1), 1 (k = 2). The block of
    # k = 0, 1 gives 2049, a tie rounded to the even 2048; the block of k = 2 adds 1 to it:
    # 2049 again, 2048 again. The exact 2050 is a float16 number.
    a = np.zeros((1, 32), np.float32)
    b = np.zeros((32, 1), np.float32)
    a[0, :3], b[:3, 0] = (256, 1, 1), (8, 1, 1)
    d = fpx.mma(a, b, np.float16([[0]]), arch="h100", inputs="float8_e4m3", output="float16")
    assert d.dtype == np.float16 and d[0, 0] == 2048
    # c is added after that rounding: with c = -2048 the result is 0, the exact sum is 2
    d = fpx.mma(a, b, np.float16([[-2048]]), arch="h100", inputs="float8_e4m3", output="float16")
    assert d[0, 0] == 0 and not np.signbit(d[0, 0])
    # with the two 1s both in the second block (k = 2, 3) that block gives 2050 exactly
    a[0, 1:3], b[1:3, 0], a[0, 2:4], b[2:4, 0] = 0, 0, 1, 1
    d = fpx.mma(a, b, np.float16([[0]]), arch="h100", inputs="float8_e4m3", output="float16")
    assert d[0, 0] == 2050


# ----------------------------------------------------------------------------- fast == slow


def _values(fmt: str) -> np.ndarray:
    """Every finite value of a small format, or a spread of float16 / bfloat16 / tf32 ones."""
    fp8 = {"float8_e4m3": ml_dtypes.float8_e4m3fn, "float8_e5m2": ml_dtypes.float8_e5m2,
           "float8_e4m3fnuz": ml_dtypes.float8_e4m3fnuz,
           "float8_e5m2fnuz": ml_dtypes.float8_e5m2fnuz}  # fmt: skip
    if fmt in fp8:
        v = np.arange(256, dtype=np.uint8).view(fp8[fmt]).astype(np.float32)
    elif fmt == "float16":
        v = np.arange(0, 65536, 7, dtype=np.uint16).view(np.float16).astype(np.float32)
    elif fmt == "bfloat16":
        v = np.arange(0, 65536, 7, dtype=np.uint16).view(ml_dtypes.bfloat16).astype(np.float32)
    else:
        v = np.asarray(fpx.as_format(np.arange(0, 2**32, 2**19 + 7, dtype=np.uint32)
                                     .view(np.float32), "tf32"))  # fmt: skip
    return np.unique(v[np.isfinite(v)])


COMBOS = [(arch, fmt, out) for arch in slow._P
          for fmt in slow._P[arch][0] for out in ("float32", "float16")
          if out == "float32" or fmt == "float16"
          or (arch in ("h100", "h100-mma", "b200-mma") and fmt.startswith("float8"))]  # fmt: skip
AMD_COMBOS = [(arch, fmt, "float32") for arch in slow.AMD for fmt in slow.AMD[arch]]
_POOL = {fmt: _values(fmt) for fmt in slow._EMIN}


@st.composite
def blocks(draw, combos=COMBOS):
    arch, fmt, out = draw(st.sampled_from(combos))
    block = (slow._P[arch][0] if arch in slow._P else slow.AMD[arch])[fmt][0]
    k = draw(st.sampled_from([1, block - 1, block, block + 1, 2 * block + 3]))
    pool = _POOL[fmt]
    # crafted: a narrow exponent window (carries, cancellation), tiny values (subnormals)
    mode = draw(st.sampled_from(["any", "window", "tiny", "cancel", "special"]))
    idx = st.integers(0, len(pool) - 1)
    if mode == "window":
        lo = draw(idx)
        idx = st.integers(lo, min(lo + 40, len(pool) - 1))
    elif mode == "tiny":
        small = int(np.searchsorted(pool, 0.0))
        idx = st.integers(max(small - 30, 0), min(small + 30, len(pool) - 1))
    a = np.array([pool[draw(idx)] for _ in range(k)], np.float32)
    b = np.array([pool[draw(idx)] for _ in range(k)], np.float32)
    if mode == "cancel" and k > 1:
        a[1::2] = -a[0::2][: len(a[1::2])]
        b[1::2] = b[0::2][: len(b[1::2])]
    if mode == "special":  # inf (where the format has one), NaN, zeros
        kinds = [np.nan, 0.0] + ([] if fmt.startswith("float8_e4m3") or "fnuz" in fmt
                                 else [np.inf, -np.inf])  # fmt: skip
        for _ in range(draw(st.integers(1, 2))):
            arr = draw(st.sampled_from([a, b]))
            arr[draw(st.integers(0, k - 1))] = draw(st.sampled_from(kinds))
    cfmt = np.float16 if out == "float16" else np.float32
    c = draw(st.sampled_from([0.0, -0.0, 1.0, -3.0, 2.0**-130, 6e-5, 1e-3, 65504.0]))
    with np.errstate(all="ignore"):
        c = float(cfmt(draw(st.sampled_from([c, float(a[0]) * float(b[0]), -np.inf]))))
    return arch, fmt, out, a, b, c


def _slow_chain(arch, fmt, out, a, b, c):
    block = slow._P[arch][0][fmt][0]
    v = c
    for k in range(0, len(a), block):
        if fmt.startswith("float8") and (out == "float16" or arch in slow.FP8_AS_FLOAT16):
            v = slow.fp8_as_float16(a[k : k + block].tolist(), b[k : k + block].tolist(), v,
                                    arch=arch, output=out)  # fmt: skip
            continue
        v = slow.block(a[k : k + block].tolist(), b[k : k + block].tolist(), v, arch=arch,
                       inputs=fmt, output=out)  # fmt: skip
    return v


@settings(max_examples=400, deadline=None)
@given(blocks())
def test_fast_model_equals_slow_exact_twin(case):
    arch, fmt, out, a, b, c = case
    cdt = np.float16 if out == "float16" else np.float32
    got = fpx.mma(a[None, :], b[:, None], np.array([[c]], cdt), arch=arch, inputs=fmt,
                  output=out)[0, 0]  # fmt: skip
    want = _slow_chain(arch, fmt, out, a, b, c)
    assert got.dtype == cdt
    if math.isnan(want):
        assert np.isnan(got)
    else:
        u = np.uint16 if out == "float16" else np.uint32
        assert np.array(got).view(u) == np.array(cdt(want)).view(u)


def test_truncation_of_an_aligned_term_changes_the_result():
    # the worked example of docs/tensor_cores.md: A100, float16 inputs, one block of 8
    a = np.float16([1.0, 2.0**-12, 2.0**-12, 2.0**-12, 0, 0, 0, 0])
    b = np.float16([1.0, 1.5, 1.5, 1.5, 0, 0, 0, 0])
    d = fpx.mma(a[None, :], b[:, None], np.float32([[0.0]]), arch="a100", inputs="float16")
    # aligned to 2**0 with 24 fraction bits, 1.5 * 2**-12 is kept exactly (it needs 13):
    assert float(d[0, 0]) == 1 + 3 * 1.5 * 2.0**-12
    t = 1.5 * 2.0**-12
    a2 = np.float16([1.0, 2.0**-12, 2.0**-12, 2.0**-12, 2.0**-12, 0, 0, 0])
    b2 = np.float16([1.0, t, t, t, t, 0, 0, 0])
    d2 = fpx.mma(a2[None, :], b2[:, None], np.float32([[0.0]]), arch="a100", inputs="float16")
    # each product 1.5 * 2**-24 is truncated to 2**-24 on the grid 2**-24 (E = 0, 24 bits):
    # 1 + 4 * 2**-24 = 1 + 2**-22, where IEEE float32 gives the exact 1 + 6 * 2**-24
    assert float(d2[0, 0]) == 1 + 2.0**-22
    exact = 1 + 4 * 1.5 * 2.0**-24
    assert float(np.float32(exact)) == exact != float(d2[0, 0])


def test_special_values_and_signed_zero():
    one = np.ones((1, 4), np.float16)
    col = np.ones((4, 1), np.float16)
    z = np.zeros((1, 1), np.float32)
    inf_a = one.copy()
    inf_a[0, 1] = np.inf
    assert fpx.mma(inf_a, col, z, arch="v100", inputs="float16")[0, 0] == np.inf
    assert np.isnan(fpx.mma(inf_a, col * 0, z, arch="v100", inputs="float16")[0, 0])  # inf * 0
    both = inf_a.copy()
    both[0, 2] = -np.inf
    assert np.isnan(fpx.mma(both, col, z, arch="v100", inputs="float16")[0, 0])
    neg = fpx.mma(one * 0, col, np.float32([[-0.0]]), arch="v100", inputs="float16")[0, 0]
    assert neg == 0 and not np.signbit(neg)  # an exact zero sum is +0, as the models say
    # overflow of the float16 output
    big = fpx.mma(np.float16([[65504, 65504, 0, 0]]), np.float16([[1], [1], [0], [0]]),
                  np.float16([[0]]), arch="v100", inputs="float16", output="float16")  # fmt: skip
    assert big[0, 0] == np.inf and big.dtype == np.float16


def test_shapes_broadcast_and_chained_blocks():
    rng = np.random.default_rng(1)
    A = rng.standard_normal((2, 3, 37)).astype(np.float16)
    B = rng.standard_normal((37, 4)).astype(np.float16)
    C = np.float32(rng.standard_normal(4))
    D = fpx.mma(A, B, C, arch="h100", inputs="float16")
    assert D.shape == (2, 3, 4) and D.dtype == np.float32
    want = _slow_chain("h100", "float16", "float32", A[1, 2].astype(np.float32),
                       B[:, 3].astype(np.float32), float(C[3]))  # fmt: skip
    assert D[1, 2, 3] == np.float32(want)


def test_errors_name_what_the_gpu_supports():
    a = np.ones((1, 4), np.float32)
    b = np.ones((4, 1), np.float32)
    c = np.zeros((1, 1), np.float32)
    with pytest.raises(
        ValueError, match="V100 tensor cores take no tf32 inputs; they take float16"
    ):
        fpx.mma(a, b, c, arch="v100", inputs="tf32")
    with pytest.raises(ValueError, match="A100 tensor cores take no float8_e4m3 inputs"):
        fpx.mma(a, b, c, arch="a100", inputs="float8_e4m3")
    # combinations no published model gives are refused, naming the argument and the reason
    with pytest.raises(ValueError, match=r"output='float16': the Ada model files .* 0 fraction"):
        fpx.mma(a, b, c, arch="l40s", inputs="float8_e4m3", output="float16")
    with pytest.raises(ValueError, match=r"output='float16': the B200 model .* arch='b200-mma'\)"):
        fpx.mma(a, b, c, arch="b200", inputs="float8_e5m2", output="float16")
    with pytest.raises(ValueError, match=r"output='float16': the MI300 .* float16 output for no"):
        fpx.mma(a, b, c, arch="mi300x", inputs="float16", output="float16")
    with pytest.raises(ValueError, match=r"inputs='float8_e4m3': the MI300 .* matrix cores"):
        fpx.mma(a, b, c, arch="mi300", inputs="float8_e4m3")  # OCP FP8: MI300 reads FNUZ
    with pytest.raises(ValueError, match=r"inputs='float8_e4m3fnuz': the H100 tensor cores"):
        fpx.mma(a, b, c, arch="h100", inputs="float8_e4m3fnuz")
    with pytest.raises(ValueError, match="unknown arch 'p100'; modelled: v100, a100"):
        fpx.mma(a, b, c, arch="p100", inputs="float16")
    with pytest.raises(ValueError, match="unknown arch 'RTX3090'.*rtx4090=ada"):
        fpx.mma(a, b, c, arch="RTX3090", inputs="float16")
    with pytest.raises(ValueError, match=r"not representable in float16 .*fpx.as_format"):
        fpx.mma(a * 1.0001, b, c, arch="v100", inputs="float16")
    with pytest.raises(ValueError, match="C: 1 value"):
        fpx.mma(a, b, c + 1e-5, arch="v100", inputs="float16", output="float16")
    with pytest.raises(TypeError):
        fpx.mma(a, b, c, arch="v100", inputs="float16", rounding="rz")
    assert "mma" in fpx.__all__ and fpx.mma is tensor_core.mma
    # the same values give the same result in their own format or as float32
    a16 = np.float16([[1.5, -2.25, 3.0, 2.0**-20]])
    b16 = np.float16([[1.0], [2.0**-3], [2.0**-11], [1.0]])
    r1 = fpx.mma(a16, b16, c, arch="a100", inputs="float16")
    r2 = fpx.mma(a16.astype(np.float32), b16.astype(np.float32), c, arch="a100", inputs="float16")
    assert r1.tobytes() == r2.tobytes()
    assert math.isfinite(float(r1[0, 0]))


def test_shape_errors_name_the_argument():
    A, B = np.ones((16, 16), np.float16), np.ones((16, 8), np.float16)
    kw = dict(arch="a100", inputs="float16")
    for C in (np.ones((3, 3), np.float32), np.ones((16, 9), np.float32)):
        with pytest.raises(ValueError, match=r"^C: shape \(\d+, \d+\) does not broadcast to"):
            fpx.mma(A, B, C, **kw)
    with pytest.raises(ValueError, match="^C: a nested list whose rows have different lengths"):
        fpx.mma(A, B, [[1.0, 2.0], [3.0]], **kw)
    with pytest.raises(ValueError, match="^A: a nested list"):
        fpx.mma([[1.0], [2.0, 3.0]], B, np.zeros((16, 8), np.float32), **kw)
    with pytest.raises(ValueError, match=r"^A and B: batch shapes \(2,\) and \(3,\)"):
        fpx.mma(np.ones((2, 16, 16)), np.ones((3, 16, 8)), np.zeros((16, 8)), **kw)
    # a C that broadcasts (a row) is taken: D = C + A @ B, here 16 + row
    D = fpx.mma(A, B, np.arange(8, dtype=np.float32), **kw)
    assert np.array_equal(D, np.broadcast_to(16 + np.arange(8, dtype=np.float32), (16, 8)))


def test_integer_arrays_empty_or_large_are_read_exactly():
    """Integer A, B, C are their exact values, an empty array too (it was "not a
    floating-point array"), and one beyond 2**53 too: exact when the format holds it, else
    refused naming the argument and the integer."""
    kw = dict(arch="h100", inputs="float16")
    for shapes in (((0, 3), (3, 2), (0, 2)), ((2, 0), (0, 2), (2, 2)), ((2, 3), (3, 0), (2, 0))):
        ints = [np.arange(math.prod(s), dtype=np.int64).reshape(s) for s in shapes]
        floats = [v.astype(t) for v, t in zip(ints, (np.float16, np.float16, np.float32))]
        D = fpx.mma(*ints, **kw)
        assert D.dtype == np.float32 and D.shape == (shapes[0][0], shapes[1][1])
        assert np.array_equal(D, fpx.mma(*floats, **kw))
        if shapes[0][1] == 0:  # K = 0: D is C
            assert D.tolist() == [[0.0, 1.0], [2.0, 3.0]]
    one = np.ones((1, 1), np.int8)
    big = 2**60 + 2**37  # a float32 (24 bits from 2**37 to 2**60); A @ B + C = big + 1
    assert fpx.mma(one, one, np.array([[big]], np.int64), **kw)[0, 0] == np.float32(big)
    with pytest.raises(ValueError, match=r"^C: 1 value\(s\) are not representable in float32 "
                       r"\(e.g. 9007199254740993\)"):  # fmt: skip
        fpx.mma(one, one, np.array([[2**53 + 1]], np.int64), **kw)
    with pytest.raises(
        TypeError, match="^A: expected a floating-point or integer array, got dtype bool"
    ):
        fpx.mma(np.ones((1, 1), bool), one, one, **kw)


@settings(max_examples=400, deadline=None)
@given(blocks(AMD_COMBOS))
def test_amd_fast_model_equals_slow_exact_twin(case):
    arch, fmt, out, a, b, c = case
    got = fpx.mma(a[None, :], b[:, None], np.float32([[c]]), arch=arch, inputs=fmt)[0, 0]
    want = slow.amd_chain(a.tolist(), b.tolist(), c, arch=arch, inputs=fmt)
    assert got.dtype == np.float32
    if math.isnan(want):
        assert np.isnan(got)
    else:
        assert np.array(got).view(np.uint32) == np.array(np.float32(want)).view(np.uint32)


# ----------------------------------------------------------------------------- AMD, by hand


def _one(arch, a, b, c, inputs="float16"):
    dt = np.float16 if inputs == "float16" else np.float32
    d = fpx.mma(np.array([a], dt), np.array(b, dt)[:, None], np.float32([[c]]), arch=arch,
                inputs=inputs)  # fmt: skip
    return float(d[0, 0])


def test_amd_rules_worked_examples():
    # CDNA3 adds c after the products, the smaller rounded DOWN to the other's grid: 1 - 2**-30
    # becomes 1 - 2**-24 (c floored to 2**(0 - 24)); the exact sum rounds to 1 (CDNA1), and
    # NVIDIA's truncation toward zero drops c (1 as well)
    one = ([1, 0, 0, 0], [1, 0, 0, 0])
    assert _one("mi300", *one, -(2.0**-30)) == 1 - 2.0**-24
    assert _one("mi100", *one, -(2.0**-30)) == 1.0 == _one("h100", *one, -(2.0**-30))
    # CDNA2 flushes a subnormal float16 input (2**-20) to zero; CDNA1 and CDNA3 keep it
    tiny = ([2.0**-20, 0, 0, 0], [1024, 0, 0, 0])
    assert _one("mi250", *tiny, 0.0) == 0.0
    assert _one("mi100", *tiny, 0.0) == 2.0**-10 == _one("mi300", *tiny, 0.0)
    # CDNA2 adds in float32 pairs: (1 + 2**-24) + (2**-24 + 0) = 1 + 0 (ties to even twice);
    # CDNA1 sums exactly: 1 + 2**-23
    pairs = ([1, 2.0**-12, 2.0**-12, 0], [1, 2.0**-12, 2.0**-12, 0])
    assert _one("mi250", *pairs, 0.0) == 1.0
    assert _one("mi100", *pairs, 0.0) == 1 + 2.0**-23
    # CDNA2 and CDNA3 limit a product to the float32 range: 2**64 * 2**64 is an overflow
    # (a NaN with one of the other sign), CDNA1 sums it exactly and overflows only if the sum
    # does; a product of -2**128 next to it gives NaN
    big = 2.0**64
    for arch in ("mi250", "mi300"):
        assert _one(arch, [big, 0, 0, 0], [big, 0, 0, 0], 0.0, "bfloat16") == math.inf
        assert math.isnan(_one(arch, [big, big, 0, 0], [big, -big, 0, 0], 0.0, "bfloat16"))
    assert _one("mi100", [big, big], [big, -big], 1.0, "bfloat16") == 1.0
    # CDNA3 FP8 (FNUZ): even and odd products summed apart; E4M3FNUZ's largest value is 240
    a = np.zeros((1, 16), ml_dtypes.float8_e4m3fnuz)
    b = np.zeros((16, 1), ml_dtypes.float8_e4m3fnuz)
    a[0, :3], b[:3, 0] = 240, (1, 2.0**-10, -(2.0**-10))  # 2**-10: the least subnormal
    d = fpx.mma(a, b, np.float32([[0]]), arch="mi300")  # inputs from the dtype
    # even k: 240 (k = 0) and -240 * 2**-10 (k = 2) -> aligned to 240's grid: 240 - 0.234375
    # (exact on it); odd k: 240 * 2**-10 alone; joined: the odd sum floored to the even grid
    assert d.dtype == np.float32 and float(d[0, 0]) == 240.0


def test_amd_fp8_is_fnuz_and_kept_apart_from_ocp():
    e4m3fnuz = np.arange(256, dtype=np.uint8).view(ml_dtypes.float8_e4m3fnuz)
    assert np.isnan(e4m3fnuz[0x80].astype(np.float32))  # one NaN, no -0, no infinity
    v = e4m3fnuz.astype(np.float32)
    assert np.nanmax(v) == 240 and fpx.format_info("float8_e4m3fnuz").max == 240
    assert fpx.format_info("float8_e5m2fnuz").emin == -15  # bias 16: one more than OCP's
    names = list(fpx.formats()["format"])
    assert {"float8_e4m3", "float8_e5m2", "float8_e4m3fnuz", "float8_e5m2fnuz"} <= set(names)
    # the same values as float32 and as ml_dtypes arrays give the same bits
    A = e4m3fnuz[None, 1:33].copy()
    B = e4m3fnuz[1:33, None][::-1].copy()
    d1 = fpx.mma(A, B, 0.0, arch="mi300x")
    d2 = fpx.mma(A.astype(np.float32), B.astype(np.float32), 0.0, arch="mi300x",
                 inputs="float8_e4m3fnuz")  # fmt: skip
    assert d1.tobytes() == d2.tobytes()
    with pytest.raises(
        ValueError, match=r"inputs='float8_e4m3fnuz': A is an array of float8_e4m3fn"
    ):
        fpx.mma(A.astype(np.float32).astype(ml_dtypes.float8_e4m3fn), B, 0.0, arch="mi300",
                inputs="float8_e4m3fnuz")  # fmt: skip
    with pytest.raises(ValueError, match=r"inputs=None: give inputs="):
        fpx.mma(A.astype(np.float32), B.astype(np.float32), 0.0, arch="mi300")
    # OCP FP8 arrays are NVIDIA's inputs; the 0x80 NaN and 240 are not OCP values there
    a8 = np.ones((1, 16), ml_dtypes.float8_e4m3fn)
    assert fpx.mma(a8, a8.T.copy(), 0.0, arch="ada")[0, 0] == 16


def test_gpus_table_is_the_arch_table():
    df = fpx.gpus()
    keys = list(dict.fromkeys(df["arch"]))
    assert keys == list(gpu_models.ARCHS)
    for key in keys:
        rows = df[df["arch"] == key]
        g = gpu_models.ARCHS[key]
        assert list(rows["inputs"]) == list(g.rules.inputs)
        assert set(rows["evidence"]) == {g.evidence}
        assert g.evidence.startswith(("hardware rows matched", "model only"))
    assert set(df.loc[df["evidence"].str.startswith("hardware"), "arch"]) == {
        "v100",
        "a100",
        "a2",  # published beside the models, not in the model's test data here before
        "ada",
        "l40s",
        "h100",
        "h200",  # and measured here (tests/test_tensor_core_measured.py)
        "h100-mma",
        "b200",  # fp16, bf16, tf32 (FP8: the model's rule, tcgen05's in MMA-Sim)
        "b200-mma",
    }
    row = df[(df["arch"] == "h100-mma") & (df["inputs"] == "float8_e4m3")].iloc[0]
    assert (row["outputs"], row["sum"]) == ("float32, float16", "two-f16")
    row = df[(df["arch"] == "ada") & (df["inputs"] == "float8_e4m3")].iloc[0]
    assert (row["block"], row["alignment_bits"], row["outputs"]) == (16, "13", "float32")
    row = df[(df["arch"] == "b200") & (df["inputs"] == "float8_e4m3")].iloc[0]
    assert (row["block"], row["alignment_bits"], row["outputs"]) == (32, "25", "float32")
    row = df[(df["arch"] == "b200-mma") & (df["inputs"] == "float8_e4m3")].iloc[0]
    assert (row["outputs"], row["sum"]) == ("float32, float16", "two-f16")
    assert "rtx4090" in df.loc[df["arch"] == "ada", "aliases"].iloc[0]
    # every alias gives its GPU's bits
    A = np.float16([[1.5, -(2.0**-13), 3.0, 2.0**-20] * 2])
    for alias, key in gpu_models.ALIASES.items():
        got = fpx.mma(A, A.T.copy(), 0.0, arch=alias.upper(), inputs="float16")
        assert got.tobytes() == fpx.mma(A, A.T.copy(), 0.0, arch=key, inputs="float16").tobytes()


def _markdown(df, cols):
    lines = ["| " + " | ".join(cols) + " |", "|" + "|".join("---" for _ in cols) + "|"]
    for _, r in df.iterrows():
        lines.append("| " + " | ".join(str(r[c]) or "-" for c in cols) + " |")
    return "\n".join(lines)


def test_the_docs_tables_are_printed_from_fpx_gpus():
    doc = (Path(__file__).parents[1] / "docs" / "tensor_cores.md").read_text()
    df = fpx.gpus()
    params = ["arch", "architecture", "inputs", "outputs", "block", "alignment_bits", "floor",
              "rounding", "sum"]  # fmt: skip
    assert _markdown(df, params) in doc
    assert _markdown(df.drop_duplicates("arch"), ["arch", "gpu", "aliases", "source",
                                                  "evidence"]) in doc  # fmt: skip


def test_big_endian_arrays_are_their_values():
    """A big-endian float16 array (>f2) is float16 data (its format was not recognised:
    'give inputs=')."""
    A = np.array([[1.5, -2.0, 0.25, 3.0]], ">f2")
    B = np.array([[2.0], [1.0], [4.0], [0.5]], np.float16)
    got = fpx.mma(A, B, 0.0, arch="h100")
    assert got.tolist() == [[1.5 * 2 - 2.0 + 0.25 * 4 + 3.0 * 0.5]]


@pytest.mark.parametrize(
    ("arch", "inputs", "spellings", "output"),
    [
        ("h100", "float16", [np.float16, np.dtype("<f2")], np.float16),
        ("a100", "bfloat16", [ml_dtypes.bfloat16, np.dtype(ml_dtypes.bfloat16)], np.float32),
        ("h100", "float8_e4m3", [ml_dtypes.float8_e4m3fn], np.dtype(np.float32)),
    ],
)
def test_inputs_and_output_given_as_dtypes_are_their_formats(arch, inputs, spellings, output):
    """inputs= and output= spelt as a NumPy or ml_dtypes type or dtype are that format (the
    one parser, formats.format_name): "the H100 tensor cores take no float16 inputs; they take
    float16, ..." was the answer to inputs=np.dtype("float16") (pass 23's leftover). Oracle:
    the slow exact twin, one block."""
    fmt = np.dtype(output).name
    k = slow._P[arch][0][inputs][0]
    rng = np.random.default_rng(38)
    a = fpx.as_format(rng.normal(size=k), inputs).astype(np.float64)
    b = fpx.as_format(rng.normal(size=k), inputs).astype(np.float64)
    want = _slow_chain(arch, inputs, fmt, a, b, 0.25)
    for spelt in spellings:
        got = fpx.mma(a[None, :], b[:, None], np.array([[0.25]], output), arch=arch,
                      inputs=spelt, output=output)[0, 0]  # fmt: skip
        assert got.dtype == np.dtype(output) and float(got) == want, spelt
    with pytest.raises(ValueError, match=r"unknown inputs 'float32'; tensor-core inputs: float16"):
        fpx.mma(a[None, :], b[:, None], np.zeros((1, 1), output), arch=arch, inputs=np.float32,
                output=output)  # fmt: skip


def test_scale_format_given_as_a_dtype_is_its_format():
    """scale_format=ml_dtypes.float8_e8m0fnu is "float8_e8m0" (it said "kind mxf8f6f4 ... takes
    float8_e8m0 scales"); the named form is the twin's (tests/test_block_scaled_mma.py)."""
    rng = np.random.default_rng(5)
    a = fpx.as_format(rng.normal(size=(2, 32)), "float8_e4m3")
    b = fpx.as_format(rng.normal(size=(32, 3)), "float8_e4m3")
    sa, sb = np.full((2, 1), 0.5, np.float32), np.full((1, 3), 4.0, np.float32)
    call = dict(arch="b200", inputs="float8_e4m3", scale_a=sa, scale_b=sb)
    named = fpx.mma(a, b, np.zeros((2, 3), np.float32), scale_format="float8_e8m0", **call)
    for spelt in (ml_dtypes.float8_e8m0fnu, np.dtype(ml_dtypes.float8_e8m0fnu)):
        got = fpx.mma(a, b, np.zeros((2, 3), np.float32), scale_format=spelt, **call)
        assert got.tobytes() == named.tobytes() and np.any(named != 0)
