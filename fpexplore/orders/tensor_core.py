"""Tensor cores (NVIDIA) and matrix cores (AMD), bit for bit: ``mma(A, B, C, arch=...,
inputs=...)`` is D = C + A @ B as the GPU ``arch`` computes it.

Every GPU's parameters are in gpu_models (``fpx.gpus()``); the AMD sums are in matrix_core. One
definition for every NVIDIA architecture (docs/tensor_cores.md has it with a worked example
and the sources). A block of ``block`` products and the addend c is summed at once:

1. each product a_i * b_i is exact; its *alignment exponent* is ea + eb, where ex is
   floor(log2 |x|) clamped below at the input format's emin (the exponent of the product of
   the two significands, before any normalisation of that product);
2. E is the largest alignment exponent of the nonzero products and of c (c's own exponent,
   as a float32, floor(log2 |c|) clamped at -126), and at least the architecture's floor;
3. every nonzero term is truncated toward zero to a multiple of 2**(E - 23 - neab): the
   aligned significand keeps 23 + neab fraction bits, no guard, round or sticky bit;
4. the truncated terms are summed exactly and the sum is rounded once to the output: toward
   zero to binary32 (with 13 fraction bits, not 23, where neab = -10: the FP8 inputs of Ada
   and Hopper; to nearest-even on the B200's round-to-nearest variant) or to nearest-even
   binary16, with subnormals, and overflow to ±inf. An exact zero sum is +0.

K longer than a block is cut into blocks (the last one padded with zero products, which add
nothing), each block's result is the next block's c.

FP8 inputs with a float16 output (Hopper) take another path, the one the published outputs
show: each block of 32 is two float16 blocks of 16 (the FP8 values are exact in float16), the
first of the k with k % 4 in {0, 1} from c = 0, the second of the others from the first's
float16 result; c is added last, as one float16 addition rounded to nearest-even.

A NaN among the inputs or c, 0 * inf, or infinities of both signs in a block give NaN;
otherwise an infinity gives that infinity.

The parameters are those of Khattak & Mikaitis, "Accurate models of NVIDIA tensor cores"
(2025), checked against their published GPU outputs where there are some
(tests/data/tensor_cores: V100, A100, H100); ``fpx.gpus()`` says what backs each GPU.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import ml_dtypes
import numpy as np

from .. import checks
from ..formats import FP8_DTYPES, as_array, as_format, format_info, format_name, refuse_masked
from .block_scaled import ELEMENTS as MX_ELEMENTS
from .block_scaled import block_scaled, scaled_kind
from .gpu_models import ARCHS, INPUTS, OUTPUTS, Gpu, gpu
from .matrix_core import amd_blocks, significands

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


def _check_formats(g: Gpu, inputs: str, output: str) -> tuple[int, int]:
    """(block, neab) of ``inputs`` on ``g`` with ``output``; ValueError naming the argument
    where the GPU or its published model has no such combination."""
    r = g.rules
    if inputs not in INPUTS:
        mx = " (MX elements: give scale_a and scale_b)" if inputs in MX_ELEMENTS else ""
        raise ValueError(
            f"unknown inputs {checks.shown(inputs)}; tensor-core inputs: {', '.join(INPUTS)}{mx}"
        )
    if output not in OUTPUTS:
        raise ValueError(
            f"unknown output {checks.shown(output)}; tensor-core outputs: {', '.join(OUTPUTS)}"
        )
    if inputs not in r.inputs:
        raise ValueError(
            f"inputs={checks.shown(inputs)}: the {g.name} {_cores(g)} take no {inputs} "
            f"inputs; they take {', '.join(r.inputs)}"
        )
    if (inputs, output) in r.refusals:
        raise ValueError(f"output={checks.shown(output)}: {r.refusals[inputs, output]}")
    if output not in r.rounding or (output == "float16" and inputs not in r.float16_out):
        which = (
            f"for {', '.join(r.float16_out)} inputs only, not {inputs}"
            if r.float16_out
            else "for no inputs"
        )
        raise ValueError(
            f"output={checks.shown(output)}: the {g.name} model gives a float16 output {which} "
            "(use output='float32')"
        )
    return r.inputs[inputs]


def _cores(g: Gpu) -> str:
    return "matrix cores" if g.rules.vendor == "AMD" else "tensor cores"


def _ml_float(dt: np.dtype) -> bool:
    """An ml_dtypes floating-point type (bfloat16, the FP8 types: real FP8 arrays); not a
    complex one, whose finfo ml_dtypes gives too (pass 18: mma dropped the imaginary part)."""
    if np.dtype(dt).kind == "c":
        return False
    try:
        ml_dtypes.finfo(dt)
    except (ValueError, TypeError):
        return False
    return True


def _exact_in(x, fmt: str, what: str) -> np.ndarray:
    """x as float64, every value exactly representable in fmt (ValueError otherwise).
    Integer arrays are read exactly, whatever their size (an empty one too)."""
    refuse_masked(x, what)
    arr = as_array(x, what)
    if arr.dtype.kind in "iu":
        x64 = np.asarray(as_format(arr, fmt), dtype=np.float64)  # exact for any integer
        shown = arr.astype(object)  # Python ints: compared with floats exactly
        bad = x64.astype(object) != shown
    elif arr.dtype.kind == "f" or _ml_float(arr.dtype):
        with np.errstate(invalid="ignore", over="ignore"):
            x64 = arr.astype(np.float64)
            r = np.asarray(as_format(x64, fmt), dtype=np.float64)
        bad = ~((r == x64) | (np.isnan(r) & np.isnan(x64)))
        shown = x64
    else:
        raise TypeError(
            f"{what}: expected a floating-point or integer array, got dtype {arr.dtype}"
        )
    if bad.any():
        v = shown[bad].reshape(-1)[0]
        raise ValueError(
            f"{what}: {int(bad.sum())} value(s) are not representable in {fmt} "
            f"(e.g. {checks.shown(v)}); "
            f"round them first with fpx.as_format(x, {checks.shown(fmt)})"
        )
    return x64


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


def _blocks(A3, B3, C3, inputs, output, params, rules) -> np.ndarray:
    """The block model over (n, M, K) @ (n, K, N) with c C3 (n, M, N), as float64."""
    block, neab = params
    floor = rules.floor[output]
    fin, fout = format_info(inputs), format_info(output)
    p_in, emin_in = fin.precision, fin.emin
    am, ae = significands(A3, p_in, emin_in)
    bm, be = significands(B3, p_in, emin_in)
    p_out, emin_out, emax_out = fout.precision, fout.emin, fout.emax
    if neab < 0:
        p_out += neab  # FP8: the result keeps 13 fraction bits (the data: the H100)
    out = np.empty(C3.shape, dtype=np.float64)
    c = np.ascontiguousarray(C3, dtype=np.float64)
    shift = 23 + neab - 2 * (p_in - 1)
    _loop()(A3, am, ae, B3, bm, be, c, out, block, neab, floor, shift, p_out, emin_out,
            emax_out, rules.rounding[output] == "rne")  # fmt: skip
    return out


def _fp8_as_float16(A3, B3, C3, block, rules, output) -> np.ndarray:
    """FP8 inputs as Hopper's mma.sync runs them (SASS: F2FP unpack to float16, then two
    HMMA.16816): per block of 32, t = the float16 block model (float16 inputs, ``output``)
    over the k with k % 4 < 2 from t = 0, then over the others from t; then d = t + c rounded
    once to ``output`` (nearest-even, overflow to inf). Every published H100 float16 row and
    every measured H200 row (tests/data/tensor_cores/h200_fp8.npz)."""
    K = A3.shape[2]
    dtype = format_info(output).dtype
    d = np.asarray(C3, dtype=np.float64)
    for k0 in range(0, K, block):
        local = np.arange(min(block, K - k0))
        t = np.zeros(d.shape)
        for part in (local % 4 < 2, local % 4 >= 2):
            ks = k0 + local[part]
            if ks.size:
                a16 = np.ascontiguousarray(A3[:, :, ks])
                b16 = np.ascontiguousarray(B3[:, ks, :])
                t = _blocks(a16, b16, t, "float16", output, rules.inputs["float16"], rules)
        with np.errstate(invalid="ignore", over="ignore"):
            # t and c are values of the output format: their float64 sum rounded to it is
            # the correctly rounded sum (53 >= 2 * 24 + 2: the double rounding is innocuous)
            d = (t + d).astype(dtype).astype(np.float64)
    return d


def _stacked(A64, B64, C64, *scales):
    """A, B, C (and scale_a, scale_b) broadcast to one batch and stacked: (n, M, K), (n, K,
    N), (n, M, N) (and (n, M, K/block), (n, K/block, N)), with the shape of D."""
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
    for x, what in zip(scales, ("scale_a", "scale_b")):
        try:
            batch = np.broadcast_shapes(batch, x.shape[:-2])
        except ValueError:
            raise ValueError(f"{what}: batch shape {x.shape[:-2]} does not broadcast") from None
    n = int(np.prod(batch, dtype=np.int64))
    out = [(A64, (M, K)), (B64, (K, N)), (C64, (M, N))]
    out += [(x, x.shape[-2:]) for x in scales]
    stacked = [np.ascontiguousarray(np.broadcast_to(x, batch + s)).reshape((n, *s)) for x, s in out]
    return (*stacked, batch + (M, N))


def _block_scaled(A, B, C, g, inputs, output, scale_a, scale_b, scaled) -> np.ndarray:
    """mma with scale_a and scale_b: the block-scaled kinds (block_scaled's rules)."""
    if scale_a is None or scale_b is None:
        raise ValueError(f"scale_{'b' if scale_b is None else 'a'}=None: give both scales")
    rule, fa, fb, sfmt, block = scaled_kind(g, A, B, inputs, output, scale_a, scale_b,
                                            **scaled)  # fmt: skip
    A64, B64 = _exact_in(A, fa, "A"), _exact_in(B, fb, "B")
    C64 = _exact_in(C, "float32", "C")
    SA, SB = _exact_in(scale_a, sfmt, "scale_a"), _exact_in(scale_b, sfmt, "scale_b")
    if min(A64.ndim, B64.ndim, SA.ndim, SB.ndim) < 2:
        raise ValueError("A, B, scale_a and scale_b must have at least 2 dimensions")
    (M, K), N = A64.shape[-2:], B64.shape[-1]
    if K % rule.k:
        raise ValueError(
            f"A: K = {K} is not a multiple of {rule.k}, the K of one {rule.kind} instruction"
        )
    for x, what, want in ((SA, "scale_a", (M, K // block)), (SB, "scale_b", (K // block, N))):
        if x.shape[-2:] != want:
            raise ValueError(
                f"{what}: shape {x.shape}, expected (..., {want[0]}, {want[1]}) "
                f"(K = {K}, block = {block})"
            )
    if rule.terms == "groups" and np.isinf(C64).any():
        raise ValueError(
            f"C: an infinite c in {rule.kind} has no published rule (MMA-Sim's sum cannot take one)"
        )
    A3, B3, C3, SA3, SB3, shape = _stacked(A64, B64, C64, SA, SB)
    return block_scaled(A3, B3, C3, SA3, SB3, rule, fa, fb, sfmt, block).reshape(shape)


def _inputs_of(A, B, inputs) -> str:
    """``inputs``, or the format of A's and B's dtype where it is None; an FP8 array of
    another FP8 format than ``inputs`` is refused (OCP and AMD FP8 are other numbers)."""
    if isinstance(inputs, (tuple, list)):  # (pass 40: "A is float8_e4m3, another format")
        raise ValueError(
            f"inputs={checks.shown(inputs)}: a pair of formats (A's, B's) is block-scaled mma's, "
            "with scale_a and scale_b; without them A and B are of one format, inputs= one of "
            + ", ".join(INPUTS)
            + " (an e4m3 x e5m2 product without scales is not modelled)"
        )
    A, B = as_array(A, "A"), as_array(B, "B")
    fmts = {format_name(x.dtype) for x in (A, B)}  # (>f2: float16)
    fmts = {f if f in INPUTS else None for f in fmts}
    if inputs is None:
        if len(fmts) != 1 or None in fmts:
            raise ValueError(
                "inputs=None: give inputs= (one of " + ", ".join(INPUTS) + "), or A and B "
                "as arrays of one tensor-core format (float16, bfloat16, ml_dtypes FP8); "
                f"got dtypes {np.asarray(A).dtype} and {np.asarray(B).dtype}"
            )
        return fmts.pop()
    for x, what in ((A, "A"), (B, "B")):
        dt = np.asarray(x).dtype
        if (name := format_name(dt)) in FP8_DTYPES and name != inputs:
            raise ValueError(
                f"inputs={checks.shown(inputs)}: {what} is an array of {dt} "
                f"({name}), another format; convert it with "
                f"fpx.as_format({what}.astype(np.float32), {checks.shown(inputs)}) if you mean it"
            )
    return inputs


def mma(
    A: ArrayLike,
    B: ArrayLike,
    C: ArrayLike,
    *,
    arch: str,
    inputs: str | tuple[str, str] | None = None,
    output: str = "float32",
    scale_a: ArrayLike | None = None,
    scale_b: ArrayLike | None = None,
    scale_format: str | None = None,
    block: int | None = None,
    kind: str | None = None,
) -> np.ndarray:
    """D = C + A @ B as the tensor cores (matrix cores) of ``arch`` compute it, bit for bit.

    Parameters
    ----------
    A, B : array_like, shapes (..., M, K) and (..., K, N)
        Values exactly representable in ``inputs``: float16 / bfloat16 arrays, ml_dtypes FP8
        arrays (``float8_e4m3fn``, ``float8_e5m2``, ``float8_e4m3fnuz``,
        ``float8_e5m2fnuz``), or float32 arrays holding tf32 or FP8 values (round them with
        ``fpx.as_format(x, inputs)`` first); leading dimensions broadcast as in
        ``np.matmul``.
    C : array_like, broadcastable to (..., M, N)
        The addend, exactly representable in ``output``.
    arch : str
        A key of ``fpx.gpus()`` (v100, a100, a2, a30, ada, l40s, h100, h200, h100-mma,
        b200, b200-mma, b200-rn, rtx-pro-6000, mi100, mi250, mi300) or a product alias of one
        (rtx4090, rtx5090, mi210, mi300x, ...); any case. Hopper's and the B200's FP8 have two
        paths: ``h100``/``h200`` and ``b200`` are their own FP8 instructions (wgmma, tcgen05:
        what cuBLAS runs), ``h100-mma`` and ``b200-mma`` are ``mma.sync``, which unpacks FP8
        to float16 (measured on an H200 and an H100; the B200's published rows).
    inputs : str, optional
        The input format: float16, bfloat16, tf32, float8_e4m3, float8_e5m2 (NVIDIA, OCP
        FP8), float8_e4m3fnuz, float8_e5m2fnuz (AMD CDNA3 FP8), as the GPU supports them
        (``fpx.gpus()``). None: the format of A's and B's dtype. Here, in ``output`` and in
        ``scale_format``, a NumPy or ml_dtypes type or dtype means its format.
    output : {"float32", "float16"}
        float16 where the model gives one (NVIDIA float16 inputs, Hopper FP8); AMD: float32.
    scale_a, scale_b : array_like, shapes (..., M, K/block) and (..., K/block, N), optional
        Block scales (Blackwell's block-scaled kinds, b200 and rtx-pro-6000: MMA-Sim's rules,
        docs/tensor_cores.md): D = C + sum_k scale_a * A * B * scale_b, float32 out;
        ``inputs`` float8_e4m3, float8_e5m2, float4_e2m1 or a pair (A's, B's); K a multiple
        of the instruction's (32, or 64 for FP4), longer K a chain of instructions.
    scale_format : {"float8_e8m0", "float8_e4m3"}, optional
        The scales' format (None: their ml_dtypes type); E4M3 scales are used unsigned.
    block : {32, 16}, optional
        Elements per scale (None: 32 for E8M0 scales, 16 for E4M3).
    kind : {"mxf8f6f4", "mxf4", "mxf4nvf4"}, optional
        The instruction kind (None: mxf4nvf4 for FP4 x FP4, mxf8f6f4 otherwise).

    Returns
    -------
    ndarray of float32 (float16 for output="float16"), shape (..., M, N)
    """
    g = gpu(arch)
    if isinstance(inputs, (tuple, list)):  # (a dtype or type: its format's name)
        inputs = type(inputs)(map(format_name, inputs))
    inputs, output, scale_format = map(format_name, (inputs, output, scale_format))
    scaled = {"scale_format": scale_format, "block": block, "kind": kind}
    if scale_a is not None or scale_b is not None:
        return _block_scaled(A, B, C, g, inputs, output, scale_a, scale_b, scaled)
    for name, v in scaled.items():
        if v is not None:
            raise ValueError(f"{name}={checks.shown(v)}: only with scale_a and scale_b")
    inputs = _inputs_of(A, B, inputs)
    block, neab = _check_formats(g, inputs, output)
    A64 = _exact_in(A, inputs, "A")
    B64 = _exact_in(B, inputs, "B")
    C64 = _exact_in(C, output, "C")
    A3, B3, C3, shape = _stacked(A64, B64, C64)
    r = g.rules
    if r.vendor == "AMD":
        out = amd_blocks(A3, B3, C3, inputs, r, block, neab)
    elif r.sum_of(inputs, output) == "two-f16":
        out = _fp8_as_float16(A3, B3, C3, block, r, output)
    else:
        out = _blocks(A3, B3, C3, inputs, output, (block, neab), r)
    dtype = format_info(output).dtype
    with np.errstate(over="ignore"):
        return out.reshape(shape).astype(dtype)


# ----------------------------------------------------------------------------- as an order

#: the input rounding of a variant spec -> the tensor-core input format it gives
ROUNDING_INPUTS = {
    "tf32": "tf32",
    "tf32-rne": "tf32",
    "tf32-truncate": "tf32",
    "bfloat16": "bfloat16",
    "bfloat16-truncate": "bfloat16",
    "float8_e4m3": "float8_e4m3",
    "float8_e5m2": "float8_e5m2",
    "float8_e4m3fnuz": "float8_e4m3fnuz",
    "float8_e5m2fnuz": "float8_e5m2fnuz",
}


def verified(arch) -> str:
    """What the model of ``arch`` is checked against, as a variant's description says it."""
    g = gpu(arch)
    return f"{g.name} ({g.rules.name}): {g.evidence} (docs/tensor_cores.md)"


def input_format(storage: str, rounding, arch) -> str:
    """The tensor-core input format of arrays of format ``storage`` with the spec's input
    rounding ``rounding`` (None: the arrays' own format), checked against ``arch``."""
    a = gpu(arch)
    if rounding is not None:
        fmt = ROUNDING_INPUTS[rounding]
    elif storage in ("float16", "bfloat16"):
        fmt = storage
    elif "tf32" in a.rules.inputs:
        raise ValueError(
            f"the {a.name} {_cores(a)} take {', '.join(a.rules.inputs)} inputs, not {storage}: "
            f"round the {storage} inputs to one of them with an input rounding, e.g. +tf32 "
            f"(input_rounding='tf32'; a spec 'tensor-core(arch={str(arch).lower()})+tf32')"
        )
    else:
        raise ValueError(
            f"the {a.name} {_cores(a)} take {', '.join(a.rules.inputs)} inputs, not {storage}: "
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
    gpu(v)
    return v.lower()
