"""Record what real CPU libraries return for seeded sums and dot products, bit for bit.

    python tests/data/record_cpu_libraries.py [openblas einsum polars numba]

writes tests/data/cpu_<library>_<version>.json.gz for tests/test_simd_orders.py, which
replays them against fpexplore.libraries.simd. The inputs are not stored: each case is a recipe
(n, kind, dtype, offset) for :func:`make`, seeded and platform independent. Results are hex bit
patterns. Every file carries the machine it was recorded on (CPU model and flags, NumPy's SIMD
levels, the BLAS core threadpoolctl reports, thread counts, library versions).

* openblas: ``np.dot(x, y)`` (1-D float32 and float64) in a fresh subprocess per
  OPENBLAS_CORETYPE and OPENBLAS_NUM_THREADS (set before NumPy is imported); the core
  threadpoolctl reports is stored, and a core the CPU cannot run is left out.
* einsum: ``np.einsum('i,i->', x, y)`` and ``np.einsum('i->', x)``.
* polars: ``pl.Series(x).sum()`` (needs polars, e.g. in a separate virtual environment).
* numba: an ``@njit(fastmath=True)`` loop ``s += x[i]`` for the host CPU and for an AVX2
  target (NUMBA_CPU_NAME=haswell without AVX-512), and a ``prange`` loop with 2 threads.

Libraries that are not installed are skipped. The committed files were made with
``python3 -m venv`` + ``pip install numpy==2.4.6 polars numba==0.68.1 threadpoolctl``.
"""

from __future__ import annotations

import gzip
import json
import os
import pathlib
import platform
import subprocess
import sys

import numpy as np

HERE = pathlib.Path(__file__).resolve().parent
SIZES = [0, 1, 7, 31, 32, 33, 63, 64, 65, 100, 129, 1000, 8191, 8193, 10001, 16390, 100003, 10**6]
KINDS = ["uniform", "normal", "wide", "negzero", "subnormal", "huge"]
DTYPES = ["float32", "float64"]
OFFSETS = [0, 1, 2]
CORES = ["Haswell", "SkylakeX", "Sandybridge", "Nehalem", "Prescott"]
SEED = 20240613


def make(n: int, kind: str, dtype: str, offset: int = 0, which: int = 0) -> np.ndarray:
    """Input `which` (0: x, 1: y) of a case: a seeded array of n + offset values, sliced
    [offset:] (so the data start offset * itemsize bytes past an aligned allocation)."""
    rng = np.random.default_rng([SEED, n, KINDS.index(kind), DTYPES.index(dtype), which])
    m = n + offset
    info = np.finfo(dtype)
    if which == 1 and kind in ("negzero", "subnormal", "huge"):
        v = 1.0 + rng.random(m)  # y in [1, 2): the products keep x's character
    elif kind == "uniform":
        v = rng.random(m)
    elif kind == "normal":
        v = rng.standard_normal(m)
    elif kind == "wide":  # signs and magnitudes over 2^-20 .. 2^20
        v = rng.standard_normal(m) * np.exp2(rng.integers(-20, 21, size=m))
    elif kind == "negzero":  # all -0.0: the sign of a zero sum shows the initial values
        v = np.full(m, -0.0)
    elif kind == "subnormal":  # signed subnormals (flush-to-zero would show)
        v = rng.integers(-(2**20), 2**20, size=m) * float(info.smallest_subnormal)
    else:  # huge: |x| up to max/8, so partial sums overflow in an order-dependent way
        v = rng.standard_normal(m) * (float(info.max) / 16)
    buf = np.empty(m + 16, dtype=dtype)  # aligned start, then the offset
    start = (-buf.ctypes.data // buf.itemsize) % 16
    a = buf[start : start + m]
    a[:] = v.astype(dtype)
    return a[offset:]


def cases(max_n: int | None = None):
    for dtype in DTYPES:
        for n in SIZES:
            if max_n is not None and n > max_n:
                continue
            for kind in KINDS:
                for offset in OFFSETS:
                    yield n, kind, dtype, offset


def hexbits(v) -> str:
    a = np.asarray(v)
    return format(int(a.view({4: np.uint32, 8: np.uint64}[a.itemsize])), "x")


def machine() -> dict:
    info = {"platform": platform.platform(), "python": platform.python_version()}
    try:
        text = pathlib.Path("/proc/cpuinfo").read_text()
        for line in text.splitlines():
            if line.startswith("model name"):
                info["cpu"] = line.split(":", 1)[1].strip()
                break
        for line in text.splitlines():
            if line.startswith("flags"):
                flags = set(line.split(":", 1)[1].split())
                keep = ["sse3", "ssse3", "sse4_1", "sse4_2", "avx", "avx2", "fma", "f16c"]
                keep += sorted(f for f in flags if f.startswith("avx512"))
                info["flags"] = [f for f in keep if f in flags]
                break
        info["cores"] = os.cpu_count()
    except OSError:
        info["cpu"] = platform.processor()
    try:
        from numpy._core._multiarray_umath import __cpu_baseline__, __cpu_dispatch__

        info["numpy_simd_baseline"] = list(__cpu_baseline__)
        info["numpy_simd_dispatch"] = list(__cpu_dispatch__)
    except ImportError:
        pass
    info["numpy"] = np.__version__
    return info


# ----------------------------------------------------------------------------- workers


def _blas_info():
    import threadpoolctl

    for d in threadpoolctl.threadpool_info():
        if d.get("user_api") == "blas":
            return {k: d.get(k) for k in ("architecture", "num_threads", "version", "prefix")}
    return {}


def worker_openblas():
    out = {"blas": _blas_info(), "cases": []}
    for n, kind, dtype, off in cases():
        x = make(n, kind, dtype, off, 0)
        y = make(n, kind, dtype, off, 1)
        out["cases"].append([n, kind, dtype, off, hexbits(np.dot(x, y))])
    return out


def numba_sum(parallel: bool):
    """The loop people write: ``s += x[i]`` from 0, as a prange reduction (parallel) or with
    fastmath (LLVM vectorizes it)."""
    import numba as nb

    if parallel:

        @nb.njit(parallel=True)
        def f(x):
            s = np.zeros(1, x.dtype)[0]
            for i in nb.prange(x.shape[0]):
                s += x[i]
            return s

    else:

        @nb.njit(fastmath=True)
        def f(x):
            s = np.zeros(1, x.dtype)[0]
            for i in range(x.shape[0]):
                s += x[i]
            return s

    return f


def worker_numba(parallel: bool):
    import numba as nb

    f = numba_sum(parallel)

    import llvmlite.binding as ll

    out = {
        "numba": nb.__version__,
        "llvm": ".".join(map(str, ll.llvm_version_info)),
        "target_cpu": os.environ.get("NUMBA_CPU_NAME") or ll.get_host_cpu_name(),
        "threads": nb.get_num_threads(),
        "cases": [],
    }
    for n, kind, dtype, off in cases():
        x = make(n, kind, dtype, off, 0)
        out["cases"].append([n, kind, dtype, off, hexbits(np.dtype(dtype).type(f(x)))])
    return out


def _run_worker(args, env):
    r = subprocess.run(
        [sys.executable, __file__, "--worker", *args],
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        check=False,
    )
    if r.returncode:
        print(r.stderr, file=sys.stderr)
        return None
    return json.loads(r.stdout)


# ----------------------------------------------------------------------------- recorders


def _write(library, version, results, extra=None):
    doc = {
        "library": library,
        "version": version,
        "machine": machine(),
        "recipe": {"function": "record_cpu_libraries.make", "seed": SEED},
        **(extra or {}),
        "results": results,
    }
    path = HERE / f"cpu_{library}_{version}.json.gz"
    with gzip.open(path, "wt", compresslevel=9) as f:
        json.dump(doc, f, separators=(",", ":"))
    print(path, sum(len(r["cases"]) for r in results), "cases")


def record_openblas():
    results = []
    version = None
    for core in CORES:
        for threads in (1, 2):
            env = {"OPENBLAS_CORETYPE": core, "OPENBLAS_NUM_THREADS": str(threads)}
            out = _run_worker(["openblas"], env)
            if out is None:
                continue
            arch = out["blas"].get("architecture")
            version = out["blas"].get("version")
            results.append(
                {
                    "op": "np.dot",
                    "config": {"OPENBLAS_CORETYPE": core, "OPENBLAS_NUM_THREADS": threads},
                    "blas": out["blas"],
                    "architecture": arch,
                    "cases": out["cases"],
                }
            )
            print(core, threads, "->", arch, out["blas"].get("num_threads"))
    _write("openblas", version, results)


def record_einsum():
    results = []
    for op in ("i,i->", "i->"):
        rows = []
        for n, kind, dtype, off in cases():
            x = make(n, kind, dtype, off, 0)
            if op == "i,i->":
                r = np.einsum(op, x, make(n, kind, dtype, off, 1))
            else:
                r = np.einsum(op, x)
            rows.append([n, kind, dtype, off, hexbits(r)])
        results.append({"op": f"np.einsum('{op}')", "config": {}, "cases": rows})
    _write("numpy-einsum", np.__version__, results)


def record_polars():
    try:
        import polars as pl
    except ImportError:
        print("polars not installed: skipped")
        return
    rows = []
    for n, kind, dtype, off in cases():
        x = make(n, kind, dtype, off, 0)
        r = np.dtype(dtype).type(pl.Series(x).sum())
        rows.append([n, kind, dtype, off, hexbits(r)])
    _write("polars", pl.__version__, [{"op": "Series.sum", "config": {}, "cases": rows}])


AVX2_FEATURES = (
    "+avx,+avx2,+fma,+sse4.2,+sse4.1,+ssse3,+sse3,+sse2,+sse,+popcnt,+bmi,+bmi2,+f16c,"
    "+lzcnt,+movbe,+cx16,-avx512f"
)


def record_numba():
    try:
        import numba
    except ImportError:
        print("numba not installed: skipped")
        return
    results = []
    configs = [
        ("fastmath", {}),
        ("fastmath", {"NUMBA_CPU_NAME": "haswell", "NUMBA_CPU_FEATURES": AVX2_FEATURES}),
        ("prange", {"NUMBA_NUM_THREADS": "2"}),
    ]
    for what, env in configs:
        out = _run_worker(["numba-" + what], {**env, "NUMBA_CACHE_DIR": "/tmp/numba-record"})
        if out is None:
            continue
        results.append(
            {
                "op": "njit(fastmath=True) loop" if what == "fastmath" else "njit prange loop",
                "config": env,
                "target_cpu": out["target_cpu"],
                "llvm": out["llvm"],
                "threads": out["threads"],
                "cases": out["cases"],
            }
        )
    _write("numba", numba.__version__, results)


if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[1] == "--worker":
        w = sys.argv[2]
        if w == "openblas":
            res = worker_openblas()
        else:
            res = worker_numba(parallel=(w == "numba-prange"))
        print(json.dumps(res))
        sys.exit(0)
    which = sys.argv[1:] or ["openblas", "einsum", "polars", "numba"]
    for name in which:
        globals()["record_" + name]()
