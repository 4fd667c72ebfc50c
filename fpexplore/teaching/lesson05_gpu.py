"""Lesson 05's exercises, GPU arithmetic: a float16 block tree, TF32 and FP8 roundings, the
TF32 tensor cores' error."""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from ..data import generate
from ..exact import exact_dot
from ..formats import as_format, ulp, ulp_distance
from ..orders import dot
from ..orders import sum as order_sum
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
