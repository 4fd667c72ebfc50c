"""Lesson 04's exercises, tolerances and testing: what allclose allows, ulps across a power
of two, rtol from ulps, a GPU test's tolerance, a relative tolerance at zero."""

from __future__ import annotations

import numpy as np

from ..data import generate
from ..formats import next_down, next_up, ulp, ulp_distance
from ..orders import sum as order_sum
from .exercise import (
    Exercise,
    atomic_runs,
    bars,
    decimal,
    number_line,
    pick,
    registered,
)
from .numbers import text_of


def _moved(v, k: int):
    out = v
    for _ in range(k):
        out = next_up(out)
    return out


@registered("allclose-ulps", "04")
def _allclose_ulps(rng):
    if rng is None:
        v, k = np.float32(100.0), 150
    else:
        v = np.float32(rng.uniform(1, 10) * 10.0 ** int(rng.integers(-3, 4)))
        k = int(rng.integers(1, 400))
    text = text_of(v)

    def compute():
        b = _moved(v, k)
        passes = bool(np.isclose(v, b))  # NumPy's own test, defaults rtol=1e-05, atol=1e-08
        allowed = (1e-8 + 1e-5 * abs(float(b))) / float(ulp(v))
        return {"answer": "passes" if passes else "fails", "allowed": allowed}

    return Exercise(
        "",
        "",
        "what allclose allows",
        f"a = np.float32({text}) and b is a moved {k} float32 ulps up (fpx.next_up {k} times). "
        "Does np.allclose(a, b) pass, with its defaults rtol=1e-05, atol=1e-08?",
        "choice",
        compute,
        choices=("passes", "fails"),
        hint="allclose allows atol + rtol * |b|; one float32 ulp of a is fpx.ulp(a).",
        explanation_template="The defaults allow {allowed:.1f} ulps here, and b is {k} ulps "
        "away: it {answer}. rtol=1e-05 is about 84 float32 ulps near 1, but 168 just below 2: "
        "ulps and relative tolerances are not the same ruler.".replace("{k}", str(k)),
        figure_spec=lambda f: bars(["distance", "allowed"], [k, f["allowed"]], "float32 ulps of a"),
    )


@registered("ulps-across-a-power", "04")
def _ulps_across(rng):
    if rng is None:
        k, i, j = 0, 2, 1
    else:
        k, i, j = int(rng.integers(-5, 10)), int(rng.integers(1, 30)), int(rng.integers(1, 30))
    p = np.float32(2.0**k)
    a = p
    for _ in range(i):
        a = next_down(a)
    b = _moved(p, j)
    ta, tb = text_of(a), text_of(b)

    def compute():
        return {
            "answer": int(ulp_distance(a, b)),
            "i": i,
            "j": j,
            "below": text_of(ulp(next_down(p))),
            "above": text_of(ulp(p)),
        }

    return Exercise(
        "",
        "",
        "counting ulps across a power of two",
        f"How many float32 ulps apart are a = np.float32({ta}) and b = np.float32({tb}), "
        "fpx.ulp_distance(a, b)?",
        "integer",
        compute,
        hint=f"They straddle 2**{k}: below it the gap is half as big as above it. Count the "
        "steps on each side.",
        explanation_template="a is {i} steps of {below} below 2**K and b is {j} steps of "
        "{above} above it: {answer} ulps. fpx.ulp_distance counts representable numbers, which "
        "is why it is the right ruler for a test.".replace("K", str(k)),
        figure_spec=lambda f: number_line(
            "float32", p, {"a": a, "b": b, f"2**{k}": p}, n=max(i, j)
        ),
    )


@registered("rtol-for-ulps", "04")
def _rtol_for_ulps(rng):
    k = 4 if rng is None else int(rng.integers(2, 64))

    def compute():
        return {"answer": k * float(ulp(np.float32(1))), "u": text_of(ulp(np.float32(1)))}

    return Exercise(
        "",
        "",
        "from ulps to rtol",
        f"A float32 GPU kernel may differ from the CPU by up to {k} ulps. What is the smallest "
        f"rtol that lets {k} ulps pass for every value in [1, 2)? Two significant digits are "
        "enough (within 5%).",
        "approx",
        compute,
        tolerance=0.05,
        hint="In [1, 2) one float32 ulp is 2**-23; relative to the value, it is largest at 1.",
        explanation_template="{k} ulps of 1.0 are {k} * {u} = {answer}; that is the relative "
        "size of {k} ulps at 1, the worst place in the binade.".replace("{k}", str(k)),
        figure_spec=lambda f: {
            "kind": "curve",
            "x": [1 + i / 64 for i in range(65)],
            "y": {f"{k} ulps / x": [k * 2.0**-23 / (1 + i / 64) for i in range(65)]},
            "xlabel": "x",
            "ylabel": "relative size",
            "title": "the same ulps, relative to x",
        },
    )


@registered("gpu-test-ulps", "04")
def _gpu_test_ulps(rng):
    n = 10**5 if rng is None else int(rng.integers(2 * 10**4, 2 * 10**5))
    s = 0 if rng is None else int(rng.integers(1, 1000))

    def compute():
        x = generate("normal", n, "float32", seed=s)
        cpu = order_sum(x, "numpy")
        d = [int(ulp_distance(cpu, r)) for r in atomic_runs(x)]
        return {"answer": max(abs(v) for v in d), "d": d}

    return Exercise(
        "",
        "",
        "the tolerance a GPU test needs",
        f"x = fpx.generate('normal', {n}, 'float32', seed={s}). A test compares the GPU's "
        "fpx.sum(x, 'tree', combine='atomic', seed=r) with np.sum (fpx.sum(x, 'numpy')) for "
        "runs r = 0, ..., 19. What is the smallest max-ulp tolerance that passes all 20 runs?",
        "integer",
        compute,
        hint="max over r of abs(fpx.ulp_distance(cpu, gpu_r)).",
        explanation_template="The runs are up to {answer} ulps from np.sum: a test needs at "
        "least that, and a margin (fpx.suggest_tolerance suggests one) because other data "
        "will differ more.",
        figure_spec=lambda f: bars(
            [str(r) for r in range(len(f["d"]))], f["d"], "ulps from np.sum", "each run"
        ),
    )


@registered("allclose-near-zero", "04")
def _near_zero(rng):
    if rng is None:
        tiny, atol = "1e-9", 0.0
    else:
        tiny = decimal(rng, 1e-10, 1e-4, 2, "1e-9")
        atol = pick(rng, [0.0, 1e-6, 1e-8], 0.0)

    def compute():
        passes = bool(np.isclose(float(tiny), 0.0, rtol=1e-6, atol=atol))
        return {"answer": "passes" if passes else "fails", "allowed": atol}

    return Exercise(
        "",
        "",
        "a relative tolerance at zero",
        f"np.testing.assert_allclose(actual, desired, rtol=1e-6, atol={atol!r}) with "
        f"desired = 0.0 and actual = {tiny}: does it pass?",
        "choice",
        compute,
        choices=("passes", "fails"),
        hint="The test is |actual - desired| <= atol + rtol * |desired|.",
        explanation_template="rtol * |desired| is 0 at desired = 0, so only atol = {allowed!r} "
        "is allowed: it {answer}. A result that should be zero needs an atol.",
        figure_spec=lambda f: bars(["|actual|", "allowed"], [float(tiny), atol], "size"),
    )
