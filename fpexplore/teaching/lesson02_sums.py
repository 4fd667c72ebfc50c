"""Lesson 02's exercises, summation orders: absorption, stagnating float16 sums, np.sum's
accumulators, sequential against pairwise, atomics, NumPy's two versions."""

from __future__ import annotations

import numpy as np

from ..data import generate
from ..exact import exact_sum
from ..formats import ulp, ulp_distance
from ..orders import sum as order_sum
from .exercise import (
    Exercise,
    atomic_runs,
    bars,
    pick,
    registered,
)
from .numbers import same, text_of


@registered("absorbed", "02")
def _absorbed(rng):
    k = 25 if rng is None else int(rng.integers(24, 31))
    small = 1 if rng is None else int(rng.integers(1, 4 * 2 ** (k - 23)))
    x = np.array([2.0**k, small, -(2.0**k)], dtype=np.float32)
    shown = f"[2**{k}, {small}, -2**{k}]"

    def compute():
        seq = order_sum(x, "sequential")
        labels = ["sequential", "reverse", "pairwise", "exact"]
        vals = [order_sum(x, o) for o in labels]
        return {
            "answer": seq,
            "u": text_of(ulp(np.float32(2.0**k))),
            "small": small,
            "vals": vals,
            "labels": labels,
        }

    return Exercise(
        "",
        "",
        "a small number absorbed",
        f"x = np.array({shown}, dtype=np.float32) summed left to right, "
        "fpx.sum(x, 'sequential'): what is the result?",
        "value",
        compute,
        fmt="float32",
        hint=f"Near 2**{k} float32 numbers are 2**{k - 23} apart: what is 2**{k} + {small} "
        "rounded to that grid?",
        explanation_template="2**{k} + {small} is rounded to a multiple of ulp(2**{k}) = {u} "
        "before -2**{k} cancels the big part: the sum is {answer} where the exact sum is "
        "{small}.".replace("{k}", str(k)),
        figure_spec=lambda f: bars(f["labels"], f["vals"], "result", "the same three numbers"),
    )


def _float16_run(rng, default_n, default_inc):
    if rng is None:
        return default_n, default_inc
    inc = pick(rng, [0.25, 0.5, 1.0, 2.0], 1.0)
    return int(rng.integers(1500, 6000)), inc


def _partial_curve(n: int, inc: float) -> dict:
    acc, ys = np.float16(0), []
    step = max(1, n // 200)
    for i in range(n):
        acc = np.float16(acc + np.float16(inc))
        if i % step == 0 or i == n - 1:
            ys.append((i + 1, float(acc)))
    return {
        "kind": "curve",
        "x": [p[0] for p in ys],
        "y": {"float16 loop": [p[1] for p in ys], "exact": [p[0] * inc for p in ys]},
        "xlabel": "terms added",
        "ylabel": "partial sum",
        "title": "a float16 accumulator stagnates",
    }


@registered("float16-stagnation", "02")
def _stagnation(rng):
    n, inc = _float16_run(rng, 3000, 1.0)

    def compute():
        x = np.full(n, inc, dtype=np.float16)
        return {"answer": order_sum(x, "sequential"), "exact": text_of(n * inc)}

    return Exercise(
        "",
        "",
        "a float16 sum that stops growing",
        f"x = np.full({n}, {inc}, dtype=np.float16). What does the float16 loop "
        "fpx.sum(x, 'sequential') return?",
        "value",
        compute,
        fmt="float16",
        hint=f"Once the partial sum s has ulp(s) = 2 * {inc}, s + {inc} is a tie and rounds "
        "back to s (ties to even).",
        explanation_template="The exact sum is {exact}; the float16 loop stops growing where "
        "the step is half an ulp of the partial sum: {answer}.",
        figure_spec=lambda f: _partial_curve(n, inc),
    )


@registered("numpy-float16", "02")
def _numpy_float16(rng):
    n, inc = _float16_run(rng, 5000, 0.5)

    def compute():
        x = np.full(n, inc, dtype=np.float16)
        return {
            "answer": order_sum(x, "numpy"),
            "seq": text_of(order_sum(x, "sequential")),
            "exact": text_of(n * inc),
        }

    return Exercise(
        "",
        "",
        "np.sum of float16",
        f"x = np.full({n}, {inc}, dtype=np.float16). What does np.sum(x) return (NumPy's "
        "order, fpx.sum(x, 'numpy'))?",
        "value",
        compute,
        fmt="float16",
        hint="NumPy adds float16 in float32 accumulators (8 of them, pairwise) and rounds to "
        "float16 once at the end.",
        explanation_template="np.sum accumulates in float32, which holds {exact} exactly, and "
        "rounds once: {answer} (the float16 loop gives {seq}).",
        figure_spec=lambda f: bars(
            ["loop (float16)", "np.sum", "exact"],
            [float(f["seq"]), float(f["answer"]), float(f["exact"])],
            "result",
        ),
    )


_ORDER_BARS = ("sequential", "pairwise", "numpy", "tree", "kahan")


def _order_errors(x) -> dict:
    ex = exact_sum(x)
    return {o: int(ulp_distance(ex, order_sum(x, o))) for o in _ORDER_BARS}


@registered("sequential-or-pairwise", "02")
def _seq_or_pair(rng):
    n = 10**4 if rng is None else int(rng.integers(2000, 50000))
    s = 0 if rng is None else int(rng.integers(1, 1000))
    dist = "uniform" if rng is None else pick(rng, ["uniform", "normal"], "uniform")

    def compute():
        x = generate(dist, n, "float32", seed=s)
        errs = _order_errors(x)
        a, b = abs(errs["sequential"]), abs(errs["pairwise"])
        ans = "equally close" if a == b else ("sequential" if a < b else "pairwise")
        return {"answer": ans, "errs": errs, "seq": errs["sequential"], "pair": errs["pairwise"]}

    return Exercise(
        "",
        "",
        "which order is closer",
        f"x = fpx.generate('{dist}', {n}, 'float32', seed={s}). Which sum is closer to the "
        "exact sum: fpx.sum(x, 'sequential') or fpx.sum(x, 'pairwise')?",
        "choice",
        compute,
        choices=("sequential", "pairwise", "equally close"),
        hint="Sequential error grows with n, pairwise with log2(n).",
        explanation_template="sequential is {seq:+d} ulps from the exact sum, pairwise "
        "{pair:+d}: {answer}.",
        figure_spec=lambda f: bars(
            list(f["errs"]), list(f["errs"].values()), "ulps from the exact sum"
        ),
    )


@registered("sequential-ulps", "02")
def _seq_ulps(rng):
    n = 10**5 if rng is None else int(rng.integers(10**4, 2 * 10**5))
    s = 0 if rng is None else int(rng.integers(1, 1000))

    def compute():
        x = generate("normal", n, "float32", seed=s)
        errs = _order_errors(x)
        return {"answer": errs["sequential"], "errs": errs}

    return Exercise(
        "",
        "",
        "the error of a loop",
        f"x = fpx.generate('normal', {n}, 'float32', seed={s}). How many ulps is the "
        "sequential sum from the exact one, fpx.ulp_distance(fpx.exact_sum(x), "
        "fpx.sum(x, 'sequential'))? (Compute it.)",
        "integer",
        compute,
        hint="fpx.ulp_distance(a, b) counts the float32 numbers from a to b (negative when b "
        "is below a).",
        explanation_template="The loop is {answer} ulps from the exact sum; the other orders "
        "are in the figure.",
        figure_spec=lambda f: bars(
            list(f["errs"]), list(f["errs"].values()), "ulps from the exact sum"
        ),
    )


@registered("atomic-runs", "02")
def _atomic(rng):
    n = 10**4 if rng is None else int(rng.integers(5000, 40000))
    s = 0 if rng is None else int(rng.integers(1, 1000))

    def compute():
        x = generate("normal", n, "float32", seed=s)
        runs = atomic_runs(x)
        ex = exact_sum(x)
        dist = [int(ulp_distance(ex, r)) for r in runs]
        values, counts = np.unique(dist, return_counts=True)
        return {"answer": len(values), "values": values, "counts": counts}

    return Exercise(
        "",
        "",
        "atomics: one answer per run",
        f"x = fpx.generate('normal', {n}, 'float32', seed={s}). A GPU tree adds its block sums "
        "with atomics, in a different order each run: fpx.sum(x, 'tree', combine='atomic', "
        "seed=r). How many distinct results do the 20 runs r = 0, ..., 19 give?",
        "integer",
        compute,
        hint="len(set(...)) of the 20 results; each seed is one run's order of the atomic adds.",
        explanation_template="{answer} distinct results in 20 runs: the same data, the same "
        "kernel, and a different order of the atomic additions each time.",
        figure_spec=lambda f: bars(
            [f"{v:+d}" for v in f["values"]], f["counts"], "runs", "ulps from the exact sum"
        ),
    )


@registered("numpy-versions", "02")
def _numpy_versions(rng):
    n = 100_003 if rng is None else int(rng.integers(4000, 60000))
    s = 3 if rng is None else int(rng.integers(1, 1000))

    def compute():
        x = generate("normal", n, "float32", seed=s)
        new, old = order_sum(x, "numpy"), order_sum(x, "numpy-chunked")
        ex = exact_sum(x)
        return {
            "answer": "same" if same(new, old) else "different",
            "new": text_of(new),
            "old": text_of(old),
            "errs": [int(ulp_distance(ex, new)), int(ulp_distance(ex, old))],
        }

    return Exercise(
        "",
        "",
        "NumPy 2.3 changed np.sum",
        f"x = fpx.generate('normal', {n}, 'float32', seed={s}). Do np.sum of NumPy >= 2.3 "
        "(order 'numpy') and of NumPy < 2.3 ('numpy-chunked', 8192-element chunks added in "
        "turn) give the same value?",
        "choice",
        compute,
        choices=("same", "different"),
        hint="Up to 8192 elements both orders are one pairwise pass; above, the old one adds "
        "the chunk sums one after another.",
        explanation_template="NumPy >= 2.3 gives {new}, NumPy < 2.3 gives {old}: {answer}.",
        figure_spec=lambda f: bars(
            ["numpy >= 2.3", "numpy < 2.3"], f["errs"], "ulps from the exact sum"
        ),
    )
