"""fpexplore.libraries.simd: the SIMD-accumulator family (its loops, the library orders' tables
in fpexplore.libraries.orders, by name) against slow literal definitions
(tests/slow_simd_orders.py), against committed recordings of the real libraries
(tests/data/cpu_*.json.gz, made by tests/data/record_cpu_libraries.py), and, where the library
is installed and the CPU can run the kernel, against the live library."""

from __future__ import annotations

import gzip
import importlib.util
import json
import math
import os
import platform
import subprocess
import sys
import zlib
from pathlib import Path

import numpy as np
import pytest
import slow_simd_orders as ss

from fpexplore.libraries import orders as library_orders
from fpexplore.libraries import simd

from oracle import same
from strategies import random_values

DATA = Path(__file__).parent / "data"
_spec = importlib.util.spec_from_file_location("record_cpu", DATA / "record_cpu_libraries.py")
rec = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(rec)

FMTS = ["float32", "float64"]


def slow_of(name, x, y, fmt, threads=1):
    """The slow definition of preset `name` for inputs of format fmt."""
    if name.startswith("openblas-sdot("):
        return getattr(ss, "sdot_" + name[len("openblas-sdot(") : -1])(x, y)
    if name.startswith("openblas-ddot("):
        return ss.ddot(x, y, name[len("openblas-ddot(") : -1], threads)
    if name == "numpy-einsum-dot":
        return ss.einsum_dot(x, y, fmt)
    if name == "numpy-einsum-sum":
        return ss.einsum_sum(x, fmt)
    if name == "polars-sum":
        return ss.polars_sum(x, fmt)
    if name == "llvm-fastmath(avx512)":
        return ss.llvm_fast_sum(x, fmt, 16 if fmt == "float32" else 8, 8 if fmt == "float32" else 4)
    if name == "llvm-fastmath(avx2)":
        return ss.llvm_fast_sum(x, fmt, 8 if fmt == "float32" else 4, 4)
    if name == "numba-prange":
        return ss.prange_sum(x, fmt, threads)
    raise KeyError(name)


def make_data(rng, kind, n, fmt):
    """Test inputs: every kind stresses something an order can get wrong."""
    dt = np.dtype(fmt)
    info = np.finfo(dt)
    if kind == "mixed":  # raw bit patterns, short significands, edge values; finite only
        v = random_values(rng, fmt, n).astype(np.float64)
        bad = ~np.isfinite(v)
        v[bad] = rng.standard_normal(int(bad.sum()))
    elif kind == "special":  # with inf, -inf and NaN
        v = random_values(rng, fmt, n).astype(np.float64)
    elif kind == "normal":  # ordinary data: every rounding shows
        v = rng.standard_normal(n)
    elif kind == "cancel":  # large values that cancel: the order decides what survives
        v = rng.choice([-1.0, 1.0], n) * np.exp2(rng.integers(-30, 30, n)) + rng.random(n)
    elif kind == "zeros":  # +-0 only: the sign of the result shows the zeros added
        v = rng.choice([-0.0, 0.0, -0.0], n)
    elif kind == "negzero":
        v = np.full(n, -0.0)
    elif kind == "subnormal":
        v = rng.integers(-(2**12), 2**12, n) * float(info.smallest_subnormal)
    else:  # huge: partial sums overflow, or not, depending on the order
        v = np.clip(rng.standard_normal(n), -3.9, 3.9) * (float(info.max) / 4)
    with np.errstate(all="ignore"):
        return v.astype(dt)


SIZES = list(range(0, 70)) + [95, 96, 97, 127, 128, 129, 191, 192, 193, 255, 256, 257, 300]
BIG = [8191, 8192, 8193, 8192 + 17, 10001, 16384 + 130, 640 + 37, 1280 + 127]
KINDS = ["mixed", "special", "normal", "cancel", "zeros", "negzero", "subnormal", "huge"]


def preset_cases():
    for name in library_orders.simd_loops():
        lo = library_orders.simd_loop(name)
        for fmt in lo.orders:
            yield name, fmt


def check_against_slow(name, fmt, sizes, kinds, seed, threads=None):
    lo = library_orders.simd_loop(name)
    rng = np.random.default_rng(seed)
    checked = 0
    for n in sizes:
        for kind in kinds:
            x = make_data(rng, kind, n, fmt)
            y = make_data(rng, "mixed" if kind in ("special", "cancel") else kind, n, fmt)
            if kind in ("negzero", "subnormal", "huge"):
                y = (1.0 + rng.random(n)).astype(fmt)  # keep x's character in the products
            if not lo.needs_y:
                y = None
            params = {} if threads is None else {"threads": threads}
            got = library_orders.simd_sum(x, y, preset=name, **params)
            t = threads or lo.order(fmt).threads
            want = slow_of(name, list(x), None if y is None else list(y), fmt, t)
            want = np.dtype(fmt).type(want)
            assert same(got, want), (name, fmt, n, kind, got, want)
            checked += 1
    return checked


@pytest.mark.parametrize(("name", "fmt"), list(preset_cases()))
def test_fast_equals_slow_small(name, fmt):
    """Every size 0..69 (every tail length of every body) and the block edges up to 300."""
    seed = zlib.crc32(f"{name} {fmt}".encode())
    assert check_against_slow(name, fmt, SIZES, KINDS, seed) == len(SIZES) * len(KINDS)


@pytest.mark.parametrize(("name", "fmt"), list(preset_cases()))
def test_fast_equals_slow_large(name, fmt):
    """Chunk (8192), thread (10000) and polars block-tree boundaries."""
    threads = 2 if name.startswith("openblas-ddot") or name == "numba-prange" else None
    assert check_against_slow(name, fmt, BIG, ["normal", "cancel"], seed=7, threads=threads)


def test_threads_change_the_result():
    """ddot with 2 threads splits at ceil(n/2) only above 10000 terms."""
    rng = np.random.default_rng(3)
    x = rng.standard_normal(20001)
    y = rng.standard_normal(20001)
    one = library_orders.simd_sum(x, y, preset="openblas-ddot(haswell)")
    two = library_orders.simd_sum(x, y, preset="openblas-ddot(haswell)", threads=2)
    assert not same(one, two)
    assert same(two, np.float64(ss.ddot(list(x), list(y), "haswell", 2)))
    small = x[:10000], y[:10000]
    assert same(
        library_orders.simd_sum(*small, preset="openblas-ddot(haswell)"),
        library_orders.simd_sum(*small, preset="openblas-ddot(haswell)", threads=2),
    )


def test_custom_orders_and_errors():
    x = np.full(5, -0.0, np.float32)
    # init -0.0 keeps an all -0 sum negative; +0.0 does not
    assert math.copysign(1, simd.simd_sum(x, stages=(simd.Stage(4),), reduce=("half", "half"))) > 0
    neg = simd.simd_sum(x, stages=(simd.Stage(4),), reduce=("half", "half"), init=-0.0)
    assert math.copysign(1, neg) < 0
    # the default order is sequential from +0
    v = np.array([1e8, 1.0, -1e8, 1.0], np.float32)
    assert simd.simd_sum(v) == np.float32(1.0)
    with pytest.raises(ValueError, match="reduce leaves"):
        simd.SimdOrder(stages=(simd.Stage(8, 4),), reduce=("half",))
    with pytest.raises(ValueError, match="unknown"):
        library_orders.simd_sum(x, preset="no-such-library")
    with pytest.raises(ValueError, match="float64"):
        library_orders.simd_sum(x, x, preset="openblas-ddot(haswell)")  # float32 data
    with pytest.raises(ValueError, match="shape"):
        simd.simd_sum(x, x[:3])
    for name in library_orders.simd_loops():
        lo = library_orders.simd_loop(name)
        assert lo.library and lo.call and lo.condition and lo.description
        assert "/648 recorded" in lo.verified
    assert library_orders.simd_loop("numba-prange").order("float32").threads == 2
    with pytest.raises(TypeError, match="libraries.orders.simd_sum"):
        simd.simd_sum(x, preset="polars-sum")  # simd.py knows shapes, not the orders' names


def test_the_loops_are_the_orders_tables():
    """Each SIMD loop is in one library order's table, under the value of its parameter."""
    tables = {
        s.name: s.library
        for s in library_orders.LIBRARY_ORDERS
        if isinstance(s.library, library_orders.SimdLoops)
    }
    assert sorted(tables) == ["einsum", "llvm-fastmath", "numba-prange", "openblas", "polars"]
    names = [lp.name for t in tables.values() for lp in t.loops()]
    assert sorted(names) == sorted(library_orders.simd_loops()) and len(set(names)) == 15
    ob = tables["openblas"]
    assert ob.loop("float32", True, {"kernel": "skylakex"}).name == "openblas-sdot(skylakex)"
    assert ob.loop("float64", True, {"kernel": "nehalem"}).name == "openblas-ddot(nehalem)"
    with pytest.raises(NotImplementedError, match="Prescott ddot"):
        ob.loop("float64", True, {"kernel": "prescott"})
    llvm = tables["llvm-fastmath"].loop("float64", False, {"target": "avx512"})
    assert llvm.name == "llvm-fastmath(avx512)"
    assert tables["einsum"].loop("float32", False, {}).name == "numpy-einsum-sum"
    assert tables["einsum"].loop("float64", True, {}).name == "numpy-einsum-dot"


# ----------------------------------------------------------------------------- recordings


def load(pattern):
    files = sorted(DATA.glob(pattern))
    assert files, pattern
    return [json.loads(gzip.decompress(f.read_bytes())) for f in files]


def value(hexbits, fmt):
    u = np.uint32 if fmt == "float32" else np.uint64
    return np.array(int(hexbits, 16), dtype=u).view(fmt)[()]


def replay(result, preset_of, y_needed, params=None):
    """(matches, total, first mismatches) of the emulation against one recorded config;
    params(fmt): overrides of the preset's parameters."""
    ok = 0
    bad = []
    total = 0
    for n, kind, fmt, off, hx in result["cases"]:
        name = preset_of(fmt)
        if name is None:
            continue
        x = rec.make(n, kind, fmt, off, 0)
        y = rec.make(n, kind, fmt, off, 1) if y_needed else None
        got = library_orders.simd_sum(x, y, preset=name, **(params(fmt) if params else {}))
        total += 1
        if same(got, value(hx, fmt)):
            ok += 1
        elif len(bad) < 5:
            bad.append((name, n, kind, fmt, off, got, value(hx, fmt)))
    return ok, total, bad


CORE = {
    "Haswell": "haswell",
    "SkylakeX": "skylakex",
    "Sandybridge": "sandybridge",
    "Nehalem": "nehalem",
    "Prescott": "prescott",
}


def test_recorded_openblas():
    (doc,) = load("cpu_openblas_*.json.gz")
    assert {r["config"]["OPENBLAS_CORETYPE"] for r in doc["results"]} == set(CORE)
    for r in doc["results"]:
        core = CORE[r["config"]["OPENBLAS_CORETYPE"]]
        threads = r["config"]["OPENBLAS_NUM_THREADS"]
        assert r["blas"]["num_threads"] == threads
        # float64 on Prescott (dot_sse2.S) is not emulated
        ok, total, bad = replay(
            r,
            lambda fmt, core=core: (
                f"openblas-sdot({core})"
                if fmt == "float32"
                else (None if core == "prescott" else f"openblas-ddot({core})")
            ),
            True,
            lambda fmt, t=threads: {"threads": t} if fmt == "float64" else {},
        )
        assert bad == [] and ok == total == (324 if core == "prescott" else 648), (core, bad)


def test_recorded_einsum():
    (doc,) = load("cpu_numpy-einsum_*.json.gz")
    for r, name, y in zip(
        doc["results"], ["numpy-einsum-dot", "numpy-einsum-sum"], [True, False], strict=True
    ):
        ok, total, bad = replay(r, lambda fmt, name=name: name, y)
        assert bad == [] and ok == total == 648


def test_recorded_polars():
    (doc,) = load("cpu_polars_*.json.gz")
    ok, total, bad = replay(doc["results"][0], lambda fmt: "polars-sum", False)
    assert bad == [] and ok == total == 648


def test_recorded_numba():
    (doc,) = load("cpu_numba_*.json.gz")
    names = []
    for r in doc["results"]:
        if r["op"].startswith("njit prange"):
            name, params = "numba-prange", lambda fmt, t=r["threads"]: {"threads": t}
        else:
            assert r["target_cpu"] in ("znver4", "haswell")
            name = "llvm-fastmath(avx512)" if r["target_cpu"] == "znver4" else "llvm-fastmath(avx2)"
            params = None
        names.append(name)
        ok, total, bad = replay(r, lambda fmt, name=name: name, False, params)
        assert bad == [] and ok == total == 648, (name, bad)
    assert sorted(names) == ["llvm-fastmath(avx2)", "llvm-fastmath(avx512)", "numba-prange"]


def test_recordings_are_small_and_described():
    files = list(DATA.glob("cpu_*.json.gz"))
    assert sum(f.stat().st_size for f in files) < 1_000_000
    for doc in load("cpu_*.json.gz"):
        m = doc["machine"]
        assert m["cpu"] and "numpy" in m and "flags" in m and doc["recipe"]["seed"] == rec.SEED


# ----------------------------------------------------------------------------- live


LIVE_N = [0, 1, 7, 31, 32, 33, 64, 100, 1000, 8193, 10001]


def _cpu_flags():
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("flags"):
                return set(line.split(":", 1)[1].split())
    except OSError:
        pass
    return set()


def test_live_einsum():
    if platform.machine().lower() not in ("x86_64", "amd64") or not np.__version__.startswith("2."):
        pytest.skip("the einsum preset describes NumPy 2.x on x86-64")
    for n in LIVE_N:
        for kind in ("normal", "wide", "negzero"):
            for fmt in FMTS:
                x = rec.make(n, kind, fmt, 1, 0)
                y = rec.make(n, kind, fmt, 1, 1)
                assert same(
                    np.einsum("i,i->", x, y),
                    library_orders.simd_sum(x, y, preset="numpy-einsum-dot"),
                )
                assert same(
                    np.einsum("i->", x), library_orders.simd_sum(x, preset="numpy-einsum-sum")
                )


def test_live_polars():
    pl = pytest.importorskip("polars")
    for n in LIVE_N + [128 * 5 + 3]:
        for kind in ("normal", "wide"):
            for fmt in FMTS:
                x = rec.make(n, kind, fmt, 0, 0)
                got = np.dtype(fmt).type(pl.Series(x).sum())
                assert same(got, library_orders.simd_sum(x, preset="polars-sum")), (n, kind, fmt)


_LIVE_DOT = """
import json, sys, numpy as np, threadpoolctl
sys.path.insert(0, sys.argv[1])
from record_cpu_libraries import make, hexbits
info = [d for d in threadpoolctl.threadpool_info() if d.get("user_api") == "blas"]
out = {"info": info[0] if info else {}, "cases": []}
for n in json.loads(sys.argv[2]):
    for kind in ("normal", "wide", "negzero"):
        for fmt in ("float32", "float64"):
            x, y = make(n, kind, fmt, 1, 0), make(n, kind, fmt, 1, 1)
            out["cases"].append([n, kind, fmt, 1, hexbits(np.dot(x, y))])
print(json.dumps(out))
"""


@pytest.mark.parametrize("core", ["Haswell", "SkylakeX", "Sandybridge", "Nehalem", "Prescott"])
@pytest.mark.parametrize("threads", [1, 2])
def test_live_np_dot(core, threads):
    """np.dot under a forced OpenBLAS core (a fresh process); skipped where NumPy's BLAS is
    not OpenBLAS or cannot run that core here."""
    env = {**os.environ, "OPENBLAS_CORETYPE": core, "OPENBLAS_NUM_THREADS": str(threads)}
    r = subprocess.run(
        [sys.executable, "-c", _LIVE_DOT, str(DATA), json.dumps(LIVE_N)],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    if r.returncode:
        pytest.skip(f"np.dot probe failed: {r.stderr[-300:]}")
    out = json.loads(r.stdout)
    info = out["info"]
    if info.get("internal_api") != "openblas":
        pytest.skip("NumPy's BLAS is not OpenBLAS")
    want_arch = "Katmai" if core == "Prescott" else core  # Prescott is reported as Katmai
    if info.get("architecture") != want_arch:
        pytest.skip(f"OpenBLAS runs {info.get('architecture')}, not {core}, on this CPU")
    c = CORE[core]
    ok, total, bad = replay(
        out,
        lambda fmt: (
            f"openblas-sdot({c})"
            if fmt == "float32"
            else (None if c == "prescott" else f"openblas-ddot({c})")
        ),
        True,
        lambda fmt: {"threads": threads} if fmt == "float64" else {},
    )
    assert bad == [] and ok == total > 0


_LIVE_NUMBA = """
import json, sys, numpy as np, numba as nb
sys.path.insert(0, sys.argv[1])
from record_cpu_libraries import make, hexbits, numba_sum
f = numba_sum(sys.argv[2] == "prange")
out = {"threads": nb.get_num_threads(), "cases": []}
for n in json.loads(sys.argv[3]):
    for kind in ("normal", "wide", "negzero"):
        for fmt in ("float32", "float64"):
            x = make(n, kind, fmt, 1, 0)
            out["cases"].append([n, kind, fmt, 1, hexbits(np.dtype(fmt).type(f(x)))])
print(json.dumps(out))
"""


@pytest.mark.parametrize("what", ["avx2", "avx512", "prange"])
def test_live_numba(what, tmp_path):
    nb = pytest.importorskip("numba")
    if nb.__version__ != "0.68.1":
        pytest.skip("the LLVM presets were read from numba 0.68.1 (LLVM 22)")
    flags = _cpu_flags()
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path)}
    if what == "avx2":
        if not {"avx2", "fma"} <= flags:
            pytest.skip("no AVX2 here")
        env.update(NUMBA_CPU_NAME="haswell", NUMBA_CPU_FEATURES=rec.AVX2_FEATURES)
    elif what == "avx512":
        if "avx512f" not in flags:
            pytest.skip("no AVX-512 here")
        env.update(NUMBA_CPU_NAME="znver4")
    else:
        env.update(NUMBA_NUM_THREADS="2")
    r = subprocess.run(
        [sys.executable, "-c", _LIVE_NUMBA, str(DATA), what, json.dumps(LIVE_N + [129, 1001])],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert r.returncode == 0, r.stderr[-500:]
    out = json.loads(r.stdout)
    name = {"avx2": "llvm-fastmath(avx2)", "avx512": "llvm-fastmath(avx512)"}.get(
        what, "numba-prange"
    )
    params = (lambda fmt: {"threads": out["threads"]}) if what == "prange" else None
    ok, total, bad = replay(out, lambda fmt: name, False, params)
    assert bad == [] and ok == total > 0
