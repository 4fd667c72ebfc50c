"""NVIDIA tensor cores, bit for bit: ``mma(A, B, C, arch=..., inputs=...)`` is D = C + A @ B.

One definition for every architecture (docs/tensor_cores.md has it with a worked example and
the sources). A block of ``block`` products and the addend c is summed at once:

1. each product a_i * b_i is exact; its *alignment exponent* is ea + eb, where ex is
   floor(log2 |x|) clamped below at the input format's emin (the exponent of the product of
   the two significands, before any normalisation of that product);
2. E is the largest alignment exponent of the nonzero products and of c (c's own exponent,
   as a float32, floor(log2 |c|) clamped at -126), and at least the architecture's floor;
3. every nonzero term is truncated toward zero to a multiple of 2**(E - 23 - neab): the
   aligned significand keeps 23 + neab fraction bits, no guard, round or sticky bit;
4. the truncated terms are summed exactly and the sum is rounded once to the output: toward
   zero to binary32 (with 13 fraction bits, not 23, where neab = -10: the FP8 inputs) or to
   nearest-even binary16, with subnormals, and overflow to ±inf. An exact zero sum is +0.

K longer than a block is cut into blocks (the last one padded with zero products, which add
nothing), each block's result is the next block's c.

FP8 inputs with a float16 output (Hopper) take another path, the one the published outputs
show: each block of 32 is two float16 blocks of 16 (the FP8 values are exact in float16), the
first of the k with k % 4 in {0, 1} from c = 0, the second of the others from the first's
float16 result; c is added last, as one float16 addition rounded to nearest-even.

A NaN among the inputs or c, 0 * inf, or infinities of both signs in a block give NaN;
otherwise an infinity gives that infinity.

The parameters are those of Khattak & Mikaitis, "Accurate models of NVIDIA tensor cores"
(2025), checked against their published GPU outputs (tests/data/tensor_cores).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

import ml_dtypes
import numpy as np

from .. import checks
from ..formats import as_array, as_format, format_info, refuse_masked

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

__all__ = [
    "ARCHS",
    "INPUTS",
    "OUTPUTS",
    "ROUNDING_INPUTS",
    "check_arch",
    "input_format",
    "mma",
    "product",
    "verified",
]

INPUTS = ("float16", "bfloat16", "tf32", "float8_e4m3", "float8_e5m2")
OUTPUTS = ("float32", "float16")


@dataclass(frozen=True)
class Arch:
    """One GPU's tensor-core parameters: per input format (block, neab); the floor of the
    alignment exponent E per output format; the input formats with a binary16 output."""

    name: str
    inputs: dict
    floor: dict
    float16_out: tuple
    verified: str  # the GPU whose published outputs the tests match


_VOLTA = Arch("V100", {"float16": (4, 0)}, {"float32": -1024, "float16": -19}, ("float16",), "V100")
_AMPERE = {"float16": (8, 1), "bfloat16": (8, 1), "tf32": (4, 1)}
_HOPPER = {
    "float16": (16, 2),
    "bfloat16": (16, 2),
    "tf32": (8, 2),
    "float8_e4m3": (32, -10),
    "float8_e5m2": (32, -10),
}
# float16 outputs: float16 inputs, and FP8 ones through two float16 blocks (_fp8_float16)
_HOPPER_F16 = ("float16", "float8_e4m3", "float8_e5m2")
ARCHS = {
    "v100": _VOLTA,
    "a100": Arch("A100", _AMPERE, {"float32": -132, "float16": -20}, ("float16",), "A100"),
    # A2 and A30 are Ampere (GA107, GA100) like the A100: the same tensor-core model
    "a2": Arch("A2", _AMPERE, {"float32": -132, "float16": -20}, ("float16",), "A100"),
    "a30": Arch("A30", _AMPERE, {"float32": -132, "float16": -20}, ("float16",), "A100"),
    "h100": Arch("H100", _HOPPER, {"float32": -133, "float16": -21}, _HOPPER_F16, "H100"),
    # H200 is an H100 (GH100) with more memory: the same tensor cores
    "h200": Arch("H200", _HOPPER, {"float32": -133, "float16": -21}, _HOPPER_F16, "H100"),
}
_NO_DATA = {
    "ada": "Ada (L40S, RTX 40)",
    "l40s": "L40S (Ada)",
    "b200": "B200 (Blackwell)",
}
# input format: (precision with the implicit bit, emin)
_IN = {
    "float16": (11, -14),
    "bfloat16": (8, -126),
    "tf32": (11, -126),
    "float8_e4m3": (4, -6),
    "float8_e5m2": (3, -14),
}
_OUT = {"float32": (24, -126, 127), "float16": (11, -14, 15)}


def _arch(arch) -> Arch:
    key = str(arch).lower()
    if key in _NO_DATA:
        raise ValueError(
            f"arch={checks.shown(arch)}: no published tensor-core parameters or hardware "
            "outputs for "
            f"{_NO_DATA[key]} in the sources this model is checked against; "
            f"modelled: {', '.join(ARCHS)}"
        )
    if key not in ARCHS:
        raise ValueError(f"unknown arch {checks.shown(arch)}; modelled: {', '.join(ARCHS)}")
    return ARCHS[key]


def _check_formats(a: Arch, inputs: str, output: str) -> tuple[int, int]:
    if inputs not in INPUTS:
        raise ValueError(
            f"unknown inputs {checks.shown(inputs)}; tensor-core inputs: {', '.join(INPUTS)}"
        )
    if output not in OUTPUTS:
        raise ValueError(
            f"unknown output {checks.shown(output)}; tensor-core outputs: {', '.join(OUTPUTS)}"
        )
    if inputs not in a.inputs:
        raise ValueError(
            f"the {a.name} tensor cores take no {inputs} inputs; they take {', '.join(a.inputs)}"
        )
    if output == "float16" and inputs not in a.float16_out:
        raise ValueError(
            f"the {a.name} model gives a float16 output for {', '.join(a.float16_out)} inputs "
            f"only, not {inputs} (output='float32')"
        )
    return a.inputs[inputs]


def _ml_float(dt: np.dtype) -> bool:
    """An ml_dtypes floating-point type (bfloat16, the FP8 types: real FP8 arrays)."""
    try:
        ml_dtypes.finfo(dt)
    except (ValueError, TypeError):
        return False
    return True


def _exact_in(x, fmt: str, what: str) -> np.ndarray:
    """x as float64, every value exactly representable in fmt (ValueError otherwise)."""
    refuse_masked(x, what)
    arr = as_array(x, what)
    if arr.dtype.kind not in "f" and not _ml_float(arr.dtype):
        if arr.dtype.kind in "iu" and arr.size and np.max(np.abs(arr)) < 2**53:
            arr = arr.astype(np.float64)
        else:
            raise TypeError(f"{what}: expected a floating-point array, got dtype {arr.dtype}")
    with np.errstate(invalid="ignore", over="ignore"):
        x64 = arr.astype(np.float64)
        r = np.asarray(as_format(x64, fmt), dtype=np.float64)
    bad = ~((r == x64) | (np.isnan(r) & np.isnan(x64)))
    if bad.any():
        v = x64[bad].reshape(-1)[0]
        raise ValueError(
            f"{what}: {int(bad.sum())} value(s) are not representable in {fmt} "
            f"(e.g. {checks.shown(v)}); "
            f"round them first with fpx.as_format(x, {checks.shown(fmt)})"
        )
    return x64


def _significands(x64: np.ndarray, precision: int, emin: int) -> tuple[np.ndarray, np.ndarray]:
    """x = m * 2**(e - precision + 1) with e = max(floor(log2|x|), emin): (m, e) as int64
    (0, 0 for zeros and non-finite values)."""
    ok = np.isfinite(x64) & (x64 != 0)
    safe = np.where(ok, x64, 1.0)
    _, e = np.frexp(safe)
    e = np.maximum(e.astype(np.int64) - 1, emin)
    m = np.where(ok, np.ldexp(safe, (precision - 1 - e).astype(np.int32)), 0.0)
    return m.astype(np.int64), np.where(ok, e, 0)


def _round_sum(s, q0, precision, emin, emax, nearest):
    """The exact s * 2**q0 (int s) rounded to (precision, emin, emax): nearest-even or toward
    zero, overflow to ±inf; +0.0 for s == 0."""
    if s == 0:
        return 0.0
    m = -s if s < 0 else s
    n = math.frexp(float(m))[1]  # bit length of m (m < 2**53)
    qe = max(q0 + n - 1, emin) - (precision - 1)
    sh = qe - q0
    if sh <= 0:
        k = m << -sh
    elif sh >= 62:
        k = 0
    else:
        k = m >> sh
        if nearest:
            r = m - (k << sh)
            half = 1 << (sh - 1)
            if r > half or (r == half and (k & 1) == 1):
                k += 1
    v = math.ldexp(float(k), qe)
    if v >= math.ldexp(1.0, emax + 1):
        v = math.inf
    return -v if s < 0 else v


def _aligned(m, s):
    """The signed integer significand ``m`` aligned to the block: shifted left by ``s >= 0``,
    or right by ``-s`` with the bits shifted out dropped (truncation, no sticky bit)."""
    mag = -m if m < 0 else m
    if s >= 0:
        mag = mag << s
    elif s > -63:
        mag = mag >> -s
    else:
        mag = 0
    return -mag if m < 0 else mag


def _mma_loop(a, am, ae, b, bm, be, c, out, block, neab, floor, shift, p_out, emin_out,
              emax_out, nearest):  # fmt: skip
    nb, mm, kk = a.shape
    nn = b.shape[2]
    q_off = 23 + neab
    for t in range(nb):
        for i in range(mm):
            for j in range(nn):
                cv = c[t, i, j]
                for k0 in range(0, kk, block):
                    k1 = min(k0 + block, kk)
                    nan = math.isnan(cv)
                    pinf = cv == math.inf
                    ninf = cv == -math.inf
                    for k in range(k0, k1):
                        x = a[t, i, k]
                        y = b[t, k, j]
                        if math.isnan(x) or math.isnan(y):
                            nan = True
                        elif math.isinf(x) or math.isinf(y):
                            if x == 0 or y == 0:
                                nan = True
                            elif (x > 0) == (y > 0):
                                pinf = True
                            else:
                                ninf = True
                    if nan or (pinf and ninf):
                        cv = math.nan
                        continue
                    if pinf or ninf:
                        cv = math.inf if pinf else -math.inf
                        continue
                    big = floor
                    for k in range(k0, k1):
                        if am[t, i, k] != 0 and bm[t, k, j] != 0:
                            big = max(big, ae[t, i, k] + be[t, k, j])
                    cm = 0
                    ce = 0
                    if cv != 0:
                        ce = max(math.frexp(cv)[1] - 1, -126)
                        cm = int(math.ldexp(cv, 23 - ce))
                        big = max(big, ce)
                    total = 0
                    for k in range(k0, k1):
                        p = am[t, i, k] * bm[t, k, j]
                        if p == 0:
                            continue
                        total += _aligned(p, ae[t, i, k] + be[t, k, j] - big + shift)
                    if cm != 0:
                        total += _aligned(cm, ce - big + neab)
                    cv = _round_sum(total, big - q_off, p_out, emin_out, emax_out, nearest)
                out[t, i, j] = cv


_COMPILED = {}


def _loop():
    """_mma_loop compiled with numba on first use (the Python function otherwise)."""
    if "loop" not in _COMPILED:
        import numba

        rs = numba.njit(cache=False)(_round_sum)
        al = numba.njit(cache=False)(_aligned)
        g = dict(_mma_loop.__globals__, _round_sum=rs, _aligned=al)
        fn = type(_mma_loop)(_mma_loop.__code__, g, "_mma_loop")
        _COMPILED["loop"] = numba.njit(cache=False)(fn)
    return _COMPILED["loop"]


def _blocks(A3, B3, C3, inputs, output, params, floor) -> np.ndarray:
    """The block model over (n, M, K) @ (n, K, N) with c C3 (n, M, N), as float64."""
    block, neab = params
    p_in, emin_in = _IN[inputs]
    am, ae = _significands(A3, p_in, emin_in)
    bm, be = _significands(B3, p_in, emin_in)
    p_out, emin_out, emax_out = _OUT[output]
    if neab < 0:
        p_out += neab  # FP8: the result keeps 13 fraction bits (the data: the H100)
    out = np.empty(C3.shape, dtype=np.float64)
    c = np.ascontiguousarray(C3, dtype=np.float64)
    shift = 23 + neab - 2 * (p_in - 1)
    _loop()(A3, am, ae, B3, bm, be, c, out, block, neab, floor, shift, p_out, emin_out,
            emax_out, output == "float16")  # fmt: skip
    return out


def _fp8_float16(A3, B3, C3, block, a: Arch) -> np.ndarray:
    """FP8 inputs, float16 output: per block of 32, t = the float16 block model (float16
    inputs and output) over the k with k % 4 < 2 from t = 0, then over the others from t;
    then d = t + c rounded once to float16 (nearest-even, overflow to inf). As if each
    mma.sync m16n8k32 ran as two float16 mma of k = 16 on the FP8 pairs unpacked to float16
    (k 4j, 4j+1, then 4j+2, 4j+3) and a float16 addition of C: every published H100 row."""
    K = A3.shape[2]
    d = np.asarray(C3, dtype=np.float64)
    f16_floor = a.floor["float16"]
    for k0 in range(0, K, block):
        local = np.arange(min(block, K - k0))
        t = np.zeros(d.shape)
        for part in (local % 4 < 2, local % 4 >= 2):
            ks = k0 + local[part]
            if ks.size:
                a16 = np.ascontiguousarray(A3[:, :, ks])
                b16 = np.ascontiguousarray(B3[:, ks, :])
                t = _blocks(a16, b16, t, "float16", "float16", a.inputs["float16"], f16_floor)
        with np.errstate(invalid="ignore", over="ignore"):
            # t and c are float16 values: their float64 sum is exact, one rounding to float16
            d = (t + d).astype(np.float16).astype(np.float64)
    return d


def mma(
    A: ArrayLike, B: ArrayLike, C: ArrayLike, *, arch: str, inputs: str, output: str = "float32"
) -> np.ndarray:
    """D = C + A @ B as the tensor cores of ``arch`` compute it, bit for bit.

    Parameters
    ----------
    A, B : array_like, shapes (..., M, K) and (..., K, N)
        Values exactly representable in ``inputs`` (float16 / bfloat16 arrays, or float32
        arrays holding tf32 or FP8 values: round with ``fpx.as_format(x, inputs)`` first);
        leading dimensions broadcast as in ``np.matmul``.
    C : array_like, broadcastable to (..., M, N)
        The addend, exactly representable in ``output``.
    arch : {"v100", "a100", "a2", "a30", "h100", "h200"}
        "ada", "l40s" and "b200" raise ValueError: no published parameters to check against.
    inputs : {"float16", "bfloat16", "tf32", "float8_e4m3", "float8_e5m2"}
        The tensor-core input format (what the GPU supports: V100 float16; Ampere also
        bfloat16 and tf32; Hopper also float8).
    output : {"float32", "float16"}
        float16 for float16 and (Hopper) FP8 inputs.

    Returns
    -------
    ndarray of float32 (float16 for output="float16"), shape (..., M, N)
    """
    a = _arch(arch)
    block, neab = _check_formats(a, inputs, output)
    A64 = _exact_in(A, inputs, "A")
    B64 = _exact_in(B, inputs, "B")
    C64 = _exact_in(C, output, "C")
    if A64.ndim < 2 or B64.ndim < 2:
        raise ValueError(f"A and B must have at least 2 dimensions, got {A64.ndim} and {B64.ndim}")
    (M, K), (K2, N) = A64.shape[-2:], B64.shape[-2:]
    if K != K2:
        raise ValueError(f"A is (..., {M}, {K}) and B is (..., {K2}, {N}): K differs")
    try:
        batch = np.broadcast_shapes(A64.shape[:-2], B64.shape[:-2])
    except ValueError:
        raise ValueError(
            f"A and B: batch shapes {A64.shape[:-2]} and {B64.shape[:-2]} do not broadcast"
        ) from None
    try:
        shape = np.broadcast_shapes(batch + (M, N), C64.shape)
    except ValueError:
        raise ValueError(
            f"C: shape {C64.shape} does not broadcast to A @ B's shape {batch + (M, N)}"
        ) from None
    batch = shape[:-2]
    n = int(np.prod(batch, dtype=np.int64))
    A3 = np.ascontiguousarray(np.broadcast_to(A64, batch + (M, K))).reshape(n, M, K)
    B3 = np.ascontiguousarray(np.broadcast_to(B64, batch + (K, N))).reshape(n, K, N)
    C3 = np.ascontiguousarray(np.broadcast_to(C64, shape)).reshape(n, M, N)
    if inputs.startswith("float8") and output == "float16":
        out = _fp8_float16(A3, B3, C3, block, a)
    else:
        out = _blocks(A3, B3, C3, inputs, output, (block, neab), a.floor[output])
    dtype = format_info(output).dtype
    return out.reshape(shape).astype(dtype)


# ----------------------------------------------------------------------------- as an order

#: the input rounding of a variant spec -> the tensor-core input format it gives
ROUNDING_INPUTS = {
    "tf32": "tf32",
    "tf32-rne": "tf32",
    "tf32-truncate": "tf32",
    "bfloat16": "bfloat16",
    "float8_e4m3": "float8_e4m3",
    "float8_e5m2": "float8_e5m2",
}


def verified(arch) -> str:
    """What the model of ``arch`` is checked against, as a variant's description says it."""
    return (
        f"verified against published hardware outputs of the {_arch(arch).verified} "
        "(docs/tensor_cores.md)"
    )


def input_format(storage: str, rounding, arch) -> str:
    """The tensor-core input format of arrays of format ``storage`` with the spec's input
    rounding ``rounding`` (None: the arrays' own format), checked against ``arch``."""
    a = _arch(arch)
    if rounding is not None:
        fmt = ROUNDING_INPUTS[rounding]
    elif storage in ("float16", "bfloat16"):
        fmt = storage
    elif "tf32" in a.inputs:
        raise ValueError(
            f"the {a.name} tensor cores take {', '.join(a.inputs)} inputs, not {storage}: "
            f"round the {storage} inputs to one of them with an input rounding, e.g. +tf32 "
            f"(input_rounding='tf32'; a spec 'tensor-core(arch={str(arch).lower()})+tf32')"
        )
    else:
        raise ValueError(
            f"the {a.name} tensor cores take {', '.join(a.inputs)} inputs, not {storage}: "
            "convert the arrays first, e.g. fpx.as_format(x, 'float16')"
        )
    _check_formats(a, fmt, "float32")
    return fmt


def product(x, y, arch, rounding=None):
    """The order ``tensor-core``: ``x @ y`` (2-D) or the dot product ``x . y`` (1-D, a 1xK @
    Kx1 product) as the tensor cores of ``arch`` compute it with C = 0 and a float32 output;
    the inputs' format is ``rounding``'s (values already rounded to it) or the arrays' own."""
    fmt = input_format(np.asarray(x).dtype.name, rounding, arch)
    if np.ndim(x) == 1:
        return mma(np.reshape(x, (1, -1)), np.reshape(y, (-1, 1)), 0.0, arch=arch, inputs=fmt)[0, 0]
    return mma(x, y, 0.0, arch=arch, inputs=fmt)


def check_arch(v) -> str:
    """The order's ``arch`` parameter: a modelled architecture, as its lower-case key."""
    if not isinstance(v, str):
        raise ValueError(f"arch must be one of {', '.join(ARCHS)}, got {checks.shown(v)}")
    _arch(v)
    return v.lower()
