"""A bounded fuzzing pass over the public API (issue 22 found its cases this way): a valid
call of each public function with one argument replaced by a hostile value must either work
or raise a clear TypeError or ValueError -- never another exception from deep inside NumPy,
numba or pandas (AttributeError, KeyError, IndexError, OverflowError, a numba TypingError,
...) -- and must leave the caller's arrays unchanged. Seeded, a fixed number of cases, well
under a minute."""

from __future__ import annotations

import time
import warnings

import numpy as np
import pytest

import fpexplore as fpx

X = fpx.generate("normal", 64, "float32", 1)
Y = fpx.generate("normal", 64, "float32", 2)
M = fpx.generate("normal", 36, "float32", 3).reshape(6, 6)
P = fpx.generate("normal", 12, "float32", 4).reshape(4, 3)

# name -> (function, keyword arguments of a valid call)
CALLS = {
    "sum": (fpx.sum, dict(x=X, order="tree", block=32)),
    "dot": (fpx.dot, dict(a=X, b=Y, order="sequential", fma=True)),
    "matmul": (fpx.matmul, dict(A=M, B=M, order="pairwise")),
    "exact_sum": (fpx.exact_sum, dict(x=X)),
    "exact_dot": (fpx.exact_dot, dict(a=X, b=Y)),
    "fma": (fpx.fma, dict(a=X, b=Y, c=X)),
    "mean": (fpx.mean, dict(x=X, variant="numpy")),
    "variance": (fpx.variance, dict(x=X)),
    "softmax": (fpx.softmax, dict(x=X)),
    "logsumexp": (fpx.logsumexp, dict(x=X)),
    "exp": (fpx.exp, dict(x=X)),
    "cdist": (fpx.cdist, dict(x=P, y=P, variant="direct")),
    "linspace": (fpx.linspace, dict(start=0.0, stop=1.0, num=7)),
    "as_format": (fpx.as_format, dict(x=X, fmt="bfloat16")),
    "ulp": (fpx.ulp, dict(x=X)),
    "ulp_distance": (fpx.ulp_distance, dict(a=X, b=Y)),
    "bit_string": (fpx.bit_string, dict(x=X[:3])),
    "from_bits": (fpx.from_bits, dict(bits=np.arange(4, dtype=np.uint32), fmt="float32")),
    "generate": (fpx.generate, dict(distribution="wide", n=10, fmt="float16", seed=3)),
    "parse_spec": (fpx.parse_spec, dict(text="tree(block=64)+fma", op="dot")),
    "suggest_tolerance": (fpx.suggest_tolerance, dict(actual=X, desired=Y)),
    "compare": (fpx.compare, dict(op="sum", n=100, variants=["sequential"], seed=2)),
    "match_orders": (
        fpx.match_orders,
        dict(inputs=X, observed=fpx.sum(X, "pairwise"), op="sum", top=3),
    ),
    "difference_budget": (
        fpx.difference_budget,
        dict(inputs=(X, Y), start="sequential", end="pairwise", op="dot"),
    ),
    "mma": (
        fpx.mma,
        dict(
            A=fpx.as_format(P.T.copy(), "float16"),
            B=fpx.as_format(P, "float16"),
            C=np.zeros((3, 3), np.float32),
            arch="a100",
            inputs="float16",
        ),
    ),
    "diff": (fpx.diff, dict(a=X, b=Y)),
    "explain": (
        fpx.explain,
        dict(
            op="sum", inputs=X, results={"a": fpx.sum(X, "sequential"), "b": fpx.sum(X, "pairwise")}
        ),
    ),
}

HOSTILE = [
    None,
    -1,
    0,
    2**70,
    1.5,
    float("nan"),
    float("inf"),
    True,
    "a",
    "",
    "x" * 10_000,
    [],
    {},
    (),
    [1, 2],
    object(),
    np.ones(3, np.float64),
    np.ones((2, 2), np.float16),
    np.array([], np.float32),
    np.ma.masked_array([1.0], mask=[1]),
    np.int64(-5),
    np.array(["a"]),
    b"bytes",
    1j,
]
CLEAR = (TypeError, ValueError)
CASES = 6000  # seeded; about 10 s on a 2-core machine


def _snapshot():
    return {name: a.tobytes() for name, a in (("X", X), ("Y", Y), ("M", M), ("P", P))}


def test_hostile_arguments_get_a_clear_error_or_work():
    rng = np.random.default_rng(20261124)
    before = _snapshot()
    names = sorted(CALLS)
    unclear, start = [], time.perf_counter()
    for case in range(CASES):
        name = names[rng.integers(len(names))]
        func, base = CALLS[name]
        kwargs = dict(base)
        key = list(kwargs)[rng.integers(len(kwargs))]
        value = HOSTILE[rng.integers(len(HOSTILE))]
        kwargs[key] = value
        try:
            with warnings.catch_warnings(), np.errstate(all="ignore"):
                warnings.simplefilter("ignore")
                func(**kwargs)
        except CLEAR as e:
            message = str(e)
            if not message or len(message) > 2000:
                unclear.append((name, key, repr(value)[:40], f"message of {len(message)} chars"))
        except Exception as e:  # noqa: BLE001 -- what the harness hunts
            unclear.append((name, key, repr(value)[:40], f"{type(e).__name__}: {str(e)[:120]}"))
        if time.perf_counter() - start > 120:
            pytest.fail(f"the fuzzing pass took over 120 s (case {case})")
    assert _snapshot() == before, "a public function changed its input array"
    unique = sorted({(n, k, v[:12], why[:90]) for n, k, v, why in unclear})
    assert not unique, "\n".join(map(str, unique))
