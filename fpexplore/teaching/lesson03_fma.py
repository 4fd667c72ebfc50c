"""Lesson 03's exercises, fused multiply-add: what FMA keeps, two roundings, cancellation, a
short dot product's error, FMA in a long one."""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from ..data import generate
from ..exact import exact_dot, fma
from ..formats import ulp_distance
from ..orders import dot
from ..orders import sum as order_sum
from .exercise import (
    Exercise,
    bars,
    decimal,
    registered,
    round_decimal,
)
from .numbers import text_of


def _fma_pair(rng, default):
    k = default if rng is None else int(rng.integers(12, 21))
    a = np.float32(1 + 2.0**-k)
    b = np.float32(1 + 2.0 ** (1 - k))
    return k, a, b


@registered("fma-residual", "03")
def _fma_residual(rng):
    k, a, b = _fma_pair(rng, 12)

    def compute():
        fused = fma(a, a, -b)
        separate = dot(np.array([a, -b]), np.array([a, 1], dtype=np.float32), "sequential")
        return {"answer": fused, "sep": text_of(separate), "k2": 2 * k}

    return Exercise(
        "",
        "",
        "what FMA keeps",
        f"a = np.float32(1 + 2**-{k}), b = np.float32(1 + 2**-{k - 1}). What is "
        "fpx.fma(a, a, -b), a*a - b rounded once?",
        "value",
        compute,
        fmt="float32",
        hint=f"(1 + 2**-{k})**2 = 1 + 2**-{k - 1} + 2**-{2 * k} exactly.",
        explanation_template="a*a - b = 2**-{k2} exactly, and FMA rounds only that: {answer}. "
        "Without FMA, a*a is rounded first and 2**-{k2} is lost: {sep}.",
        figure_spec=lambda f: bars(
            ["fma", "separate", "exact"],
            [float(f["answer"]), float(f["sep"]), 2.0 ** -(2 * k)],
            "a*a - b",
        ),
    )


@registered("separate-residual", "03")
def _separate_residual(rng):
    k, a, b = _fma_pair(rng, 13)

    def compute():
        separate = dot(np.array([a, -b]), np.array([a, 1], dtype=np.float32), "sequential")
        return {"answer": separate, "k2": 2 * k, "fused": text_of(fma(a, a, -b))}

    return Exercise(
        "",
        "",
        "two roundings",
        f"a = np.float32(1 + 2**-{k}), b = np.float32(1 + 2**-{k - 1}). Without FMA, "
        "np.float32(a * a) - b: what is the result?",
        "value",
        compute,
        fmt="float32",
        hint="a*a needs more than 24 significant bits: which bit does rounding to float32 drop?",
        explanation_template="a*a rounds to 1 + 2**-{k_1} (the 2**-{k2} is below half an ulp), "
        "so the difference is {answer}; FMA keeps it: {fused}.".replace("{k_1}", str(k - 1)),
        figure_spec=lambda f: bars(
            ["separate", "fma"], [float(f["answer"]), float(f["fused"])], "a*a - b"
        ),
    )


@registered("cancellation", "03")
def _cancellation(rng):
    d = decimal(rng, 1e-7, 1e-3, 3, "1e-6")

    def compute():
        d32 = round_decimal(d, "float32")
        s = order_sum(np.array([1, d32], dtype=np.float32), "sequential")
        y = order_sum(np.array([s, -1], dtype=np.float32), "sequential")
        rel = abs(Fraction(float(y)) - Fraction(float(d32))) / Fraction(float(d32))
        return {"answer": float(rel), "y": text_of(y), "d32": text_of(d32)}

    return Exercise(
        "",
        "",
        "catastrophic cancellation",
        f"With d = np.float32({d}), compute y = (np.float32(1) + d) - np.float32(1) in float32. "
        "What is the relative error |y - d| / d? Two significant digits are enough (within 5%).",
        "approx",
        compute,
        tolerance=0.05,
        hint="1 + d is rounded to a multiple of ulp(1) = 2**-23 = 1.19e-07; the subtraction is "
        "then exact.",
        explanation_template="1 + d rounds to a multiple of 2**-23, so y = {y} instead of "
        "{d32}: a relative error of {answer}. The subtraction was exact; it only revealed the "
        "earlier rounding.",
        figure_spec=lambda f: bars(["d", "y"], [float(f["d32"]), float(f["y"])], "value"),
    )


_WHITEPAPER = (
    [1.907607, -0.7862027, 1.147311, 0.9604002],
    [-0.9355000, -0.6915108, 1.724470, -0.7097529],
)


@registered("dot-ulps", "03")
def _dot_ulps(rng):
    if rng is None:
        a, b = (np.array(v, dtype=np.float32) for v in _WHITEPAPER)
    else:
        a = np.float32(rng.normal(size=4))
        b = np.float32(rng.normal(size=4))
    shown = [str(list(map(str, v))).replace("'", "") for v in (a, b)]

    def compute():
        ex = exact_dot(a, b)
        vals = {
            "serial": dot(a, b, "sequential"),
            "serial, FMA": dot(a, b, "sequential", fma=True),
            "pairwise": dot(a, b, "pairwise"),
        }
        errs = {k: int(ulp_distance(ex, v)) for k, v in vals.items()}
        return {"answer": errs["serial"], "errs": errs, "exact": text_of(ex)}

    return Exercise(
        "",
        "",
        "a 4-element dot product",
        f"a = np.array({shown[0]}, dtype=np.float32), b = np.array({shown[1]}, "
        "dtype=np.float32). How many ulps from the exact dot product (fpx.exact_dot) is the "
        "serial one without FMA, fpx.dot(a, b, 'sequential')?",
        "integer",
        compute,
        hint="fpx.ulp_distance(fpx.exact_dot(a, b), fpx.dot(a, b, 'sequential')).",
        explanation_template="The exact dot is {exact}; serial without FMA is {answer} ulps off. "
        "The other orders are in the figure: each rounds at other places.",
        figure_spec=lambda f: bars(list(f["errs"]), list(f["errs"].values()), "ulps from exact"),
    )


@registered("fma-or-not", "03")
def _fma_or_not(rng):
    s = 0 if rng is None else int(rng.integers(1, 1000))
    n = 1000

    def compute():
        a = generate("ill-conditioned", n, "float32", seed=s)
        b = generate("uniform", n, "float32", seed=s)
        ex = exact_dot(a, b)
        with_f = int(ulp_distance(ex, dot(a, b, "sequential", fma=True)))
        without = int(ulp_distance(ex, dot(a, b, "sequential")))
        ans = (
            "equally close"
            if abs(with_f) == abs(without)
            else "with FMA"
            if abs(with_f) < abs(without)
            else "without FMA"
        )
        return {"answer": ans, "w": with_f, "wo": without}

    return Exercise(
        "",
        "",
        "FMA in a long dot product",
        f"a = fpx.generate('ill-conditioned', {n}, 'float32', seed={s}), "
        f"b = fpx.generate('uniform', {n}, 'float32', seed={s}). Which sequential dot product "
        "is closer to the exact one: fpx.dot(a, b, 'sequential', fma=True) or without FMA?",
        "choice",
        compute,
        choices=("with FMA", "without FMA", "equally close"),
        hint="FMA saves one rounding per term, but the order of the additions stays the same; "
        "on ill-conditioned data the additions' errors dominate.",
        explanation_template="with FMA: {w:+d} ulps, without: {wo:+d} ulps: {answer}. FMA is "
        "usually, not always, closer: a different rounding is not always a smaller one.",
        figure_spec=lambda f: bars(
            ["with FMA", "without FMA"], [f["w"], f["wo"]], "ulps from exact"
        ),
    )
