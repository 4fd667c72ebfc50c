"""Adding an order is one OrderSpec entry (issue 34): an order written here, outside the
package, and put into the registry's list of definitions is computed, listed, compared,
searched by the detective and written out by the reproducer, with nothing else changed.

The order, "halves": the sequential sum of the first n // 2 terms plus the sequential sum of
the rest, one rounding each addition. Its oracle is a plain NumPy loop in this file.
"""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

import fpexplore as fpx
from fpexplore.orders import registry
from fpexplore.orders.arith import kernels
from fpexplore.orders.orderspec import OrderSpec, fixed_calls

SOURCE = """
def order_sum(t, T):
    def seq(u):
        acc = u[0] if len(u) else T(0)
        for v in u[1:]:
            acc = T(acc + v)
        return acc

    h = len(t) // 2
    return T(seq(t[:h]) + seq(t[h:]))
"""


def _run_halves(X, Y, fused, ar, p, out):
    has_y = Y is not None
    Y = Y if has_y else X[:1]
    k, h, n = kernels(), X.shape[0] // 2, X.shape[0]
    a = k.sequential(X, Y, has_y, fused, ar.z, ar.rp, 0, h, 1)
    b = k.sequential(X, Y, has_y, fused, ar.z, ar.rp, h, n, 1)
    P = np.array([a, b]).astype(X.dtype)  # (each partial a value of the accumulator)
    return k.sequential(P, P[:1], False, False, ar.z, ar.rp, 0, 2, 1)


HALVES = OrderSpec(
    "halves",
    "sequential over x[:n//2], sequential over x[n//2:], then their sum",
    fma=True,
    run=_run_halves,
    depth=lambda n, p: n - n // 2,
    kernel_calls=fixed_calls(("sequential", "S")),
    source=SOURCE,
)


@pytest.fixture
def halves(monkeypatch):
    monkeypatch.setattr(registry, "_DEFINED", [*registry._DEFINED, HALVES])
    registry._build()
    yield
    monkeypatch.undo()
    registry._build()


def _oracle(t: np.ndarray) -> np.floating:
    """The definition, SOURCE run as plain Python on NumPy scalars: each addition rounded to
    the terms' format (also what the reproducer's script runs)."""
    space = {}
    exec(SOURCE, space)  # noqa: S102  (this file's own text)
    with np.errstate(all="ignore"):  # (float16 data may overflow: inf and NaN are values too)
        return space["order_sum"](list(t), t.dtype.type)


def _data(n: int, seed: int, dtype=np.float32) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return (rng.standard_normal(n) * 10.0 ** rng.integers(-3, 4, n)).astype(dtype)


def test_an_added_order_is_computed_and_listed(halves):
    assert "halves" in fpx.orders("sum") and "halves" in fpx.orders("dot")
    for n in (2, 3, 17, 1000, 4097):
        for dtype in (np.float32, np.float64, np.float16):
            x, y = _data(n, n, dtype), _data(n, n + 1, dtype)
            assert fpx.sum(x, "halves").tobytes() == _oracle(x).tobytes()
            with np.errstate(over="ignore"):
                products = x * y
            assert fpx.dot(x, y, "halves").tobytes() == _oracle(products).tobytes()


def test_an_added_order_is_compared_searched_and_reproduced(halves, tmp_path):
    x = _data(3000, 7)
    want = _oracle(x)
    assert want != np.float32(fpx.sum(x, "sequential"))  # (data where the orders differ)
    c = fpx.compare("sum", inputs=x, variants=["halves", "pairwise"])
    assert c.results["halves", "emulated"].tobytes() == want.tobytes()
    table = fpx.match_orders(x, want, "sum")
    exact = set(table[table["exact"]]["variant"])
    assert "halves" in exact and not exact & {"sequential", "pairwise", "numpy"}
    script = fpx.reproducer(fpx.compare("sum", n=3000, variants=["halves"]))
    path = tmp_path / "halves.py"
    path.write_text(script)
    run = subprocess.run([sys.executable, str(path)], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    assert "reproduced" in run.stdout


def test_without_the_entry_there_is_no_such_order():
    assert "halves" not in fpx.orders("sum")
    with pytest.raises(ValueError, match="unknown order 'halves'"):
        fpx.sum(np.ones(4, np.float32), "halves")
