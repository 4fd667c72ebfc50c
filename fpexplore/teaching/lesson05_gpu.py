"""Lesson 05's exercises, GPU arithmetic: a float16 block tree, TF32 and FP8 roundings, the
TF32 tensor cores' error, FP4 and the block-scaled formats (MXFP4, NVFP4)."""

from __future__ import annotations

from decimal import Decimal
from fractions import Fraction

import numpy as np

from ..data import generate
from ..exact import exact_dot
from ..formats import as_format, ulp, ulp_distance
from ..orders import dot
from ..orders import sum as order_sum
from ..quantize import quantize
from .exercise import (
    Exercise,
    bars,
    bits_figure,
    closer,
    decimal,
    pick,
    registered,
    round_decimal,
)
from .numbers import exact_text, text_of


@registered("tree-float16", "05")
def _tree_float16(rng):
    n = 3000 if rng is None else int(rng.integers(2100, 9000))
    block = 256 if rng is None else pick(rng, [64, 128, 256], 256)

    def compute():
        x = np.ones(n, dtype=np.float16)
        return {
            "answer": order_sum(x, "tree", block=block),
            "seq": text_of(order_sum(x, "sequential")),
        }

    return Exercise(
        "",
        "",
        "a GPU tree on float16",
        f"x = np.ones({n}, dtype=np.float16). What does a GPU block tree in float16 give, "
        f"fpx.sum(x, 'tree', block={block})?",
        "value",
        compute,
        fmt="float16",
        hint=f"Each block of {block} ones sums exactly to {block}; then the block sums are "
        "added in order: where does float16 start rounding multiples of the block size?",
        explanation_template="The tree never adds 1 to a large partial sum: it gives {answer} "
        "where the float16 loop stagnates at {seq}.",
        figure_spec=lambda f: bars(
            ["loop", "tree", "exact"], [float(f["seq"]), float(f["answer"]), n], "result"
        ),
    )


@registered("tf32-round", "05")
def _tf32_round(rng):
    d = decimal(rng, 0.01, 1000, 6, "1.1")

    def compute():
        x = round_decimal(d, "float32")
        t = as_format(x, "tf32")
        return {
            "answer": t,
            "x": text_of(x),
            "rel": float(abs(Fraction(float(t)) - Fraction(float(x))) / Fraction(float(x))),
        }

    return Exercise(
        "",
        "",
        "TF32 inputs",
        f"x = np.float32({d}). Tensor cores in TF32 mode keep 10 fraction bits (11 significant): "
        "what is fpx.as_format(x, 'tf32') (ties away from zero)? Type it exactly.",
        "exact",
        compute,
        fmt="tf32",
        hint="Near x TF32 numbers are 2**(e-10) apart for x in [2**e, 2**(e+1)): take the "
        "nearest multiple.",
        explanation_template="x = {x} becomes {answer} in TF32: a relative error of {rel:.1e}, "
        "about 1000 times float32's.",
        figure_spec=lambda f: bits_figure(
            f["answer"], "tf32", "TF32: the 13 low fraction bits are gone"
        ),
    )


@registered("fp8-e4m3", "05")
def _fp8_e4m3(rng):
    d = decimal(rng, 0.02, 400, 3, "0.3")

    def compute():
        v = round_decimal(d, "float8_e4m3")
        return {"answer": v, "d": d, "gap": exact_text(ulp(v, "float8_e4m3"))}

    return Exercise(
        "",
        "",
        "FP8 e4m3",
        f"What does {d} become in FP8 e4m3 (3 fraction bits, 4 exponent bits), "
        f"fpx.as_format({d}, 'float8_e4m3')? Type it exactly.",
        "exact",
        compute,
        fmt="float8_e4m3",
        hint="With 4 significant bits, [2**e, 2**(e+1)) holds only 8 numbers, 2**(e-3) apart.",
        explanation_template="Near {d} e4m3 numbers are {gap} apart: {d} becomes {answer}.",
        figure_spec=lambda f: bits_figure(f["answer"], "float8_e4m3"),
    )


@registered("fp8-which", "05")
def _fp8_which(rng):
    d = pick(rng, ["0.3", "500", "3.5", "0.0004", "100.5", "7e-6"], "500")
    if rng is not None and rng.random() < 0.5:
        d = decimal(rng, 1e-6, 5e4, 3, d)

    def compute():
        ans, (e4, e5), (a, b) = closer(d, ("float8_e4m3", "float8_e5m2"))
        return {"answer": ans, "e4": e4, "e5": e5, "err": [min(a, 1e300), min(b, 1e300)]}

    return Exercise(
        "",
        "",
        "which FP8",
        f"Which FP8 format holds {d} more accurately: float8_e4m3 (3 fraction bits, largest "
        "448, no infinity) or float8_e5m2 (2 fraction bits, largest 57344)?",
        "choice",
        compute,
        choices=("float8_e4m3", "float8_e5m2", "equally close"),
        hint="e4m3 has one more digit, e5m2 a wider range (and subnormals down to 2**-16).",
        explanation_template="e4m3 gives {e4}, e5m2 gives {e5}: {answer}.",
        figure_spec=lambda f: bars(["e4m3", "e5m2"], f["err"], "absolute error"),
    )


@registered("tensor-core-ulps", "05")
def _tensor_core_ulps(rng):
    n = 256 if rng is None else int(pick(rng, [64, 128, 256, 512, 1024], 256))
    s = 0 if rng is None else int(rng.integers(1, 1000))

    def compute():
        a = generate("normal", n, "float32", seed=s)
        b = generate("normal", n, "float32", seed=s + 1)
        ex = exact_dot(a, b)
        tc = dot(a, b, "tensor-core", arch="a100", input_rounding="tf32")
        cuda = dot(a, b, "tree", fma=True)
        return {"answer": int(ulp_distance(ex, tc)), "cuda": int(ulp_distance(ex, cuda))}

    return Exercise(
        "",
        "",
        "TF32 tensor cores",
        f"a = fpx.generate('normal', {n}, 'float32', seed={s}), b = fpx.generate('normal', "
        f"{n}, 'float32', seed={s + 1}). How many float32 ulps from the exact dot product "
        "(fpx.exact_dot) is the A100's TF32 tensor-core result, fpx.dot(a, b, 'tensor-core', "
        "arch='a100', input_rounding='tf32')?",
        "integer",
        compute,
        hint="fpx.ulp_distance(fpx.exact_dot(a, b), tc). Rounding every input to 11 bits "
        "costs far more than the additions.",
        explanation_template="The TF32 tensor cores are {answer} ulps off; the CUDA cores' "
        "float32 tree with FMA is {cuda} ulps off. The inputs' rounding to TF32 dominates.",
        figure_spec=lambda f: bars(
            ["TF32 tensor cores", "float32 tree + FMA"], [f["answer"], f["cuda"]], "ulps from exact"
        ),
    )


@registered("fp4-value", "05")
def _fp4_value(rng):
    d = decimal(rng, 0.05, 8, 2, "0.1")

    def compute():
        return {"answer": round_decimal(d, "float4_e2m1"), "d": d}

    return Exercise(
        "",
        "",
        "FP4 e2m1",
        f"FP4 e2m1 (1 fraction bit, 2 exponent bits, no infinity, no NaN) is what MXFP4 and "
        f"NVFP4 store each value in. What does {d} become, fpx.as_format({d}, "
        "'float4_e2m1')? Type it exactly.",
        "exact",
        compute,
        fmt="float4_e2m1",
        hint="FP4 holds 0, 0.5, 1, 1.5, 2, 3, 4 and 6 (and their negatives): take the nearest, "
        "a tie to the one with an even last bit; past 6 it stays at 6.",
        explanation_template="FP4 holds 0, 0.5, 1, 1.5, 2, 3, 4, 6: {d} becomes {answer}.",
        figure_spec=lambda f: bits_figure(f["answer"], "float4_e2m1"),
    )


@registered("mx-block-scale", "05")
def _mx_block_scale(rng):
    big = decimal(rng, 40, 2000, 2, "100")
    small = decimal(rng, 0.5, 30, 2, "3.3")

    def compute():
        x = np.zeros(32, np.float32)
        x[0], x[1] = float(Decimal(big)), float(Decimal(small))
        q = quantize(x, "mxfp4")
        back = q.dequantize()
        return {
            "answer": np.float32(back[1]),
            "scale": exact_text(q.scales[0]),
            "elem": exact_text(q.elements[1]),
            "big_back": exact_text(np.float32(back[0])),
            "errs": [abs(float(back[0]) - float(x[0])), abs(float(back[1]) - float(x[1]))],
        }

    return Exercise(
        "",
        "",
        "an MX block's scale",
        f"x = np.zeros(32, np.float32); x[0] = {big}; x[1] = {small}. In MXFP4 the 32 values "
        "share one power-of-two scale, set by the largest: what does x[1] come back as, "
        "fpx.quantize(x, 'mxfp4').dequantize()[1]? Type it exactly.",
        "exact",
        compute,
        fmt="float32",
        hint="The scale is the largest power of two not above max|x|, divided by 4 (FP4's "
        "largest power of two); x[1] / scale is rounded to FP4 (0, 0.5, 1, 1.5, 2, 3, 4, 6).",
        explanation_template="The block's scale is {scale}; x[1] / scale rounds to the FP4 "
        "element {elem}, so x[1] comes back as {answer} (x[0] as {big_back}). A small value "
        "next to a large one loses its digits, or everything, to the shared scale.",
        figure_spec=lambda f: bars(["x[0]", "x[1]"], f["errs"], "absolute error"),
    )


@registered("nvfp4-blocks", "05")
def _nvfp4_blocks(rng):
    s = 0 if rng is None else int(rng.integers(1, 1000))
    out = "40" if rng is None else decimal(rng, 8, 200, 2, "40")

    def compute():
        x = generate("normal", 64, "float32", seed=s)
        x[3] = float(Decimal(out))
        err = {}
        for scheme in ("mxfp4", "nvfp4"):
            back = quantize(x, scheme).dequantize()
            err[scheme] = float(np.max(np.abs(back - x.astype(np.float64))))
        mx, nv = err["mxfp4"], err["nvfp4"]
        answer = "equally close" if mx == nv else ("mxfp4" if mx < nv else "nvfp4")
        return {"answer": answer, "mx": mx, "nv": nv}

    return Exercise(
        "",
        "",
        "NVFP4's blocks of 16",
        f"x = fpx.generate('normal', 64, 'float32', seed={s}); x[3] = {out} (one outlier). "
        "Which gives the smaller largest error, max |q.dequantize() - x|: q = fpx.quantize(x, "
        "'mxfp4') (blocks of 32, power-of-two scales) or fpx.quantize(x, 'nvfp4') (blocks of "
        "16, E4M3 scales and a scale for the whole tensor)?",
        "choice",
        compute,
        choices=("mxfp4", "nvfp4", "equally close"),
        hint="The outlier sets its block's scale: how many neighbours share it, and can a "
        "power of two fit the block's largest value to FP4's 6?",
        explanation_template="The largest errors: mxfp4 {mx:.3g}, nvfp4 {nv:.3g}: {answer}. "
        "NVFP4's blocks of 16 let an outlier spoil half as many neighbours, and its E4M3 "
        "scale fits each block's largest value to 6 instead of the power of two below it.",
        figure_spec=lambda f: bars(["mxfp4", "nvfp4"], [f["mx"], f["nv"]], "largest error"),
    )
