"""Cold start (fpexplore.warmup): the warm-up fills numba's cache and is idempotent, is_cold
tells when compare() would compile, and the explorer says so while it does.

Everything that compiles runs in subprocesses with a temporary NUMBA_CACHE_DIR (numba then
writes all its cache files there), so the tree's own cache is neither used nor touched. To keep
the runtime modest the warm-up is tested on a subset: sum and variance in float32 (about 10 s
on 2 cores; the full warm-up, every op in every format, takes 1 to 2.5 minutes).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

import fpexplore as fpx


def _run(code: str, cache, *args: str) -> dict:
    env = dict(os.environ, NUMBA_CACHE_DIR=str(cache))
    out = subprocess.run(
        [sys.executable, "-c", code, *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=900,
        check=False,
    )
    assert out.returncode == 0, out.stderr[-4000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


WARM = """
import json
from fpexplore.warmup import warmup
s = warmup(formats=["float32"], ops=["sum", "variance"], progress=False)
print(json.dumps(dict(compiled=s.compiled, loaded=s.loaded, dirs=s.cache_dirs, text=str(s),
                      rows=s.rows)))
"""


@pytest.fixture(scope="module")
def float32_cache(tmp_path_factory):
    """A numba cache warmed for sum and variance in float32 only (a subset, see above)."""
    cache = tmp_path_factory.mktemp("numba-cache")
    return cache, _run(WARM, cache)


def test_warmup_writes_the_cache_and_a_second_run_compiles_nothing(float32_cache):
    cache, first = float32_cache
    assert first["compiled"] > 0 and first["loaded"] == 0
    assert first["dirs"] and all(d.startswith(str(cache)) for d in first["dirs"])
    names = {p.name.split("-")[0] for p in cache.rglob("*.nbi")}
    for kernel in (
        "_kernels.sequential",
        "_kernels.numpy_sum",
        "_kernels.kahan",
        "variance._welford_py",
    ):
        assert kernel in names, sorted(names)
    assert list(cache.rglob("*.nbc"))
    assert {(r["op"], r["format"]) for r in first["rows"]} == {
        ("sum", "float32"),
        ("variance", "float32"),
    }
    second = _run(WARM, cache)  # a fresh process: everything loads from the cache
    assert second["compiled"] == 0 and second["loaded"] > 0
    assert "total: 0 signatures compiled" in second["text"]


def test_command_line(float32_cache):
    cache, _ = float32_cache
    env = dict(os.environ, NUMBA_CACHE_DIR=str(cache))
    out = subprocess.run(
        [sys.executable, "-m", "fpexplore.warmup", "--formats", "float32", "--ops", "sum"],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
        check=True,
    )
    assert "total: 0 signatures compiled" in out.stdout
    assert f"numba cache: {cache}" in out.stdout
    assert "fpexplore warmup" in out.stderr  # the progress bar (tqdm) or its plain lines


COLD = """
import json, sys
import numpy as np
from fpexplore.experiment import compare
from fpexplore.warmup import _counts, _dispatchers, is_cold
fmt = sys.argv[1]
out = {}
for spec in sys.argv[2:]:
    op, _, vs = spec.partition(":")
    variants = vs.split("|") if vs else None
    cold = is_cold(op, fmt, variants)
    c0 = _counts(_dispatchers())[0]
    with np.errstate(all="ignore"):
        compare(op, format=fmt, n=8 if op in ("matmul", "cdist") else 300, variants=variants)
    out[spec] = [cold, _counts(_dispatchers())[0] - c0, is_cold(op, fmt, variants)]
print(json.dumps(out))
"""


NUMERICS_EDITED = """
import json
from fpexplore import _numba
from fpexplore.warmup import is_cold
before = [is_cold("sum", "float32"), is_cold("variance", "float32")]
_numba._NUMERICS_DIGEST = "as if fpexplore/numerics.py had been edited since"
print(json.dumps(before + [is_cold("sum", "float32"), is_cold("variance", "float32")]))
"""


def test_cache_keys_follow_the_shared_numerics(float32_cache):
    """The kernels call functions of fpexplore/numerics.py, whose source numba's cache does not
    check (only the kernel's own file): the cache keys carry a digest of numerics.py, so after
    an edit there the cached kernels (orders and Welford's) count as missing and compile."""
    cache, _ = float32_cache
    assert _run(NUMERICS_EDITED, cache) == [False, False, True, True]


def test_is_cold_goes_from_true_to_false(tmp_path):
    out = _run(COLD, tmp_path / "empty", "float32", "variance:welford", "exp")
    assert out["variance:welford"][:1] == [True] and out["variance:welford"][1] > 0
    assert out["variance:welford"][2] is False  # compiled in this process now
    assert out["exp"] == [False, 0, False]  # no numba kernel behind it


def test_is_cold_is_true_exactly_when_compare_compiles(float32_cache):
    """A fresh process on the float32 cache: cold exactly where compare() compiles. dot shares
    sum's order kernels and signatures, but its reference (exact_dot) has a kernel of its own,
    not warmed by sum; matmul is cold, then cdist (same kernel) is not; a variant
    spec's accumulator counts (kahan in float64 was not warmed)."""
    cache, _ = float32_cache
    specs = [
        "sum",
        "dot",
        "variance",
        "softmax",
        "logsumexp",
        "matmul",
        "cdist",
        "exp",
        "sum:cub|shuffled",
        "sum:tree(block=64, combine=atomic, seed=3)",
        "dot:sequential+fma|kahan+fma@float64",
        "variance:two-pass(order=pairwise)",
    ]
    out = _run(COLD, cache, "float32", *specs)
    for spec in specs:
        cold, compiled, after = out[spec]
        assert cold == (compiled > 0), (spec, out[spec])
        assert after is False, spec
    assert out["matmul"][0] is True and out["cdist"][0] is False
    assert out["sum"][:2] == [False, 0] and out["dot"][0] is True
    assert out["dot:sequential+fma|kahan+fma@float64"][0] is True
    out = _run(COLD, cache, "float64", "sum:neumaier")  # float64: not warmed
    assert out["sum:neumaier"][0] is True and out["sum:neumaier"][1] > 0


def test_explorer_says_compiling_while_cold(monkeypatch):
    """In process, with is_cold forced: the note is up while compare() runs, gone after."""
    pytest.importorskip("ipywidgets")
    from fpexplore import warmup
    from fpexplore.app import running  # the explorer's compare() calls run there

    app = fpx.explorer(op="exp", n=100)
    seen = []
    real = running.compare

    def spy(**kw):
        seen.append(app.message.value)
        return real(**kw)

    monkeypatch.setattr(running, "compare", spy)
    monkeypatch.setattr(warmup, "is_cold", lambda *a, **k: True)
    app.format.value = "float64"
    assert "compiling kernels for float64 (first use only)" in seen[-1]
    assert app.message.value == "" and app.comparison is not None
    monkeypatch.setattr(warmup, "is_cold", lambda *a, **k: False)
    app.seed.value = 3
    assert seen[-1] == "" and app.message.value == ""
    monkeypatch.setattr(warmup, "is_cold", lambda *a, **k: True)
    app.n.value = 3 * 10**7  # beyond exp's limit: the error replaces the note
    assert "fpx-error" in app.message.value and "compiling" not in app.message.value


WIDGET = """
import json
import fpexplore as fpx
from fpexplore.app import running
app = fpx.explorer(op="variance", format="float32", n=1000, variants=["two-pass"])
seen = []
real = running.compare
def spy(**kw):
    seen.append(app.message.value)
    return real(**kw)
running.compare = spy
app.format.value = "float64"  # not in the cache: compiles
after = app.message.value
app.seed.value = 1  # compiled now
print(json.dumps(dict(seen=seen, after=after, ok=app.comparison is not None)))
"""


def test_explorer_says_compiling_for_real(float32_cache):
    """A fresh process on the float32 cache, no monkeypatching: float64 is cold."""
    pytest.importorskip("ipywidgets")
    cache, _ = float32_cache
    out = _run(WIDGET, cache)
    assert "compiling kernels for float64 (first use only)" in out["seen"][0]
    assert out["seen"][1:] == [""] and out["after"] == "" and out["ok"]
