"""This machine: what decides a library's summation order here, and how much memory is left.

A library's summation order depends on the machine: OpenBLAS picks a kernel for the CPU
(``OPENBLAS_CORETYPE`` overrides it), a threaded kernel splits the work by its thread count,
PyTorch's lanes follow its CPU capability.

- :func:`machine_info`: the CPU, its SIMD flags, NumPy's SIMD levels, the BLAS library with
  its kernel and thread count (through threadpoolctl where installed), versions: plain data,
  JSON-serialisable;
- :func:`summary`: :func:`machine_info` as ``{"fact": "value"}`` lines for a table;
- :func:`environment`: the machine columns of compare's tables (machine_info read once);
- :func:`available_memory`: the bytes this process may still allocate (system, ``ulimit -v``
  and cgroup limits), what :meth:`fpexplore.ops.opspec.OpSpec.check_size` guards with.

Trying another kernel or thread count needs another process: ``run_elsewhere``, ``run_here``,
``runs_here``, ``CALLS`` and ``OPENBLAS_KERNELS`` are the library wing's
(:mod:`fpexplore.libraries.elsewhere`), found here by name too (``fpx.machine.run_elsewhere``),
which loads the wing on first use.

Imports only NumPy and :mod:`fpexplore.libspec` (the wing's child process loads this file and
libspec.py without the rest of the package); threadpoolctl is imported where it is used.
"""

from __future__ import annotations

import importlib
import os
import platform
from pathlib import Path

import numpy as np

from .libspec import LIBRARIES  # (the child process loads it beside this file)

__all__ = [
    "available_memory",
    "cpu_flags",
    "environment",
    "machine_info",
    "summary",
]

#: The library wing's names that ``fpx.machine`` also answers to (run in another process).
_WING_NAMES = ("CALLS", "OPENBLAS_KERNELS", "run_elsewhere", "run_here", "runs_here")


def __getattr__(name: str):
    if name in _WING_NAMES:  # loads the library wing, by name (it is never imported here)
        return getattr(importlib.import_module("fpexplore.libraries.elsewhere"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


UNKNOWN_BLAS = "unknown (install threadpoolctl)"

#: CPU flags worth knowing for floating-point results (Linux /proc/cpuinfo spelling).
FLAGS = (
    "sse2",
    "pni",
    "sse4_1",
    "sse4_2",
    "avx",
    "f16c",
    "fma",
    "avx2",
    "avx512f",
    "avx512dq",
    "avx512bw",
    "avx512vl",
    "avx512_bf16",
    "avx512_fp16",
    "amx_tile",
    "neon",
    "asimd",
    "asimdhp",
    "sve",
    "sve2",
)

#: NumPy's feature names for the same flags (used where /proc/cpuinfo is not available).
_NUMPY_FLAGS = {
    "SSE2": "sse2",
    "SSE3": "pni",
    "SSE41": "sse4_1",
    "SSE42": "sse4_2",
    "AVX": "avx",
    "F16C": "f16c",
    "FMA3": "fma",
    "AVX2": "avx2",
    "AVX512F": "avx512f",
    "AVX512DQ": "avx512dq",
    "AVX512BW": "avx512bw",
    "AVX512VL": "avx512vl",
    "AVX512BF16": "avx512_bf16",
    "AVX512FP16": "avx512_fp16",
    "NEON": "neon",
    "ASIMD": "asimd",
    "ASIMDHP": "asimdhp",
    "SVE": "sve",
}


#: Environment variables that change what a library computes, reported when set.
_ENV_KEYS = tuple(key for lib in LIBRARIES.values() for key in lib.env)

_OPTIONAL = ("threadpoolctl", "numba", "torch", "jax", "jaxlib", "polars", "pandas", "scipy")


# ----------------------------------------------------------------------------- machine_info


def _cpuinfo() -> dict[str, str]:
    """The first processor's block of /proc/cpuinfo (empty where there is none)."""
    try:
        text = Path("/proc/cpuinfo").read_text()
    except OSError:
        return {}
    out = {}
    for line in text.split("\n\n", 1)[0].splitlines():
        key, sep, value = line.partition(":")
        if sep:
            out[key.strip()] = value.strip()
    return out


def _numpy_simd() -> dict:
    """NumPy's compiled-in SIMD baseline, the dispatch targets, which of them this CPU has."""
    umath = None
    for name in ("numpy._core._multiarray_umath", "numpy.core._multiarray_umath"):
        try:
            umath = __import__(name, fromlist=["_"])
            break
        except ImportError:
            continue
    baseline = list(getattr(umath, "__cpu_baseline__", []) or [])
    dispatch = list(getattr(umath, "__cpu_dispatch__", []) or [])
    features = dict(getattr(umath, "__cpu_features__", {}) or {})
    return {
        "baseline": baseline,
        "dispatch": dispatch,
        "dispatch_found": [d for d in dispatch if features.get(d)],
        "features": sorted(k for k, v in features.items() if v),
    }


def _cpu(simd_features: list[str]) -> dict:
    info = _cpuinfo()
    model = (
        info.get("model name")
        or info.get("Model")
        or info.get("Hardware")
        or platform.processor()
        or platform.machine()
        or "unknown"
    )
    if "flags" in info or "Features" in info:
        present = set((info.get("flags") or info.get("Features", "")).split())
        source = "/proc/cpuinfo"
    else:
        present = {_NUMPY_FLAGS[f] for f in simd_features if f in _NUMPY_FLAGS}
        source = "numpy"
    return {
        "model": model,
        "vendor": info.get("vendor_id", ""),
        "family": info.get("cpu family", ""),
        "model_number": info.get("model", ""),
        "flags": [f for f in FLAGS if f in present],
        "flags_source": source,
    }


def cpu_flags() -> list[str]:
    """This CPU's flags among :data:`FLAGS` (Linux /proc/cpuinfo spelling)."""
    return _cpu(_numpy_simd()["features"])["flags"]


def _threadpools() -> list[dict] | None:
    """threadpoolctl's view of the loaded BLAS and OpenMP libraries; None if not installed."""
    try:
        import threadpoolctl
    except ImportError:
        return None
    keys = ("user_api", "internal_api", "prefix", "version", "architecture", "num_threads")
    pools = []
    for d in threadpoolctl.threadpool_info():
        pool = {k: d.get(k) for k in keys}
        pool["threading_layer"] = d.get("threading_layer")
        pool["filepath"] = d.get("filepath")
        pools.append(pool)
    return pools


def _blas(pools: list[dict] | None) -> dict:
    """NumPy's BLAS: library, version, kernel ("architecture") and threads."""
    if pools is None:
        try:
            build = np.show_config(mode="dicts")["Build Dependencies"]["blas"]
            library, version = build.get("name", "unknown"), build.get("version", "unknown")
        except Exception:  # old NumPy, or a build without that information
            library, version = "unknown", "unknown"
        return {
            "library": library,
            "version": version,
            "architecture": UNKNOWN_BLAS,
            "threads": UNKNOWN_BLAS,
            "threading_layer": UNKNOWN_BLAS,
        }
    blas = [p for p in pools if p["user_api"] == "blas"]
    numpy_dir = str(Path(np.__file__).resolve().parent)
    mine = [p for p in blas if str(p.get("filepath") or "").startswith(numpy_dir)]
    mine += [p for p in blas if "numpy" in str(p.get("filepath") or "")]
    pick = (mine or blas or [None])[0]
    if pick is None:
        return {
            "library": "none loaded",
            "version": "",
            "architecture": "",
            "threads": 0,
            "threading_layer": "",
        }
    return {
        "library": pick["internal_api"],
        "version": pick["version"],
        "architecture": pick["architecture"] or "",
        "threads": pick["num_threads"],
        "threading_layer": pick.get("threading_layer") or "",
    }


def _installed() -> dict[str, str | None]:
    """Versions of the optional libraries that are installed (None: not installed); nothing
    is imported."""
    from importlib import metadata

    out = {}
    for name in _OPTIONAL:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = None
    return out


def machine_info() -> dict:
    """What decides a library's summation order on this machine, as plain data.

    Keys: ``cpu`` (model, vendor, family, model number, the floating-point-relevant
    ``flags`` present), ``numpy_simd`` (NumPy's compiled ``baseline``, its ``dispatch``
    targets, those this CPU has: ``dispatch_found``, every detected feature), ``blas``
    (NumPy's BLAS: ``library``, ``version``, ``architecture`` = the kernel OpenBLAS picked,
    ``threads``; through threadpoolctl, else "unknown (install threadpoolctl)"),
    ``threadpools`` (every BLAS/OpenMP pool threadpoolctl sees, or None), ``cpu_count``,
    ``affinity`` (CPUs this process may use), ``python``, ``numpy``, ``machine`` (platform
    machine), ``system``, ``env`` (the settings in :data:`_ENV_KEYS` that are set),
    ``installed`` (versions of optional libraries, None where absent).
    """
    simd = _numpy_simd()
    pools = _threadpools()
    try:
        affinity = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        affinity = os.cpu_count()
    return {
        "cpu": _cpu(simd["features"]),
        "numpy_simd": simd,
        "blas": _blas(pools),
        "threadpools": pools,
        "cpu_count": os.cpu_count(),
        "affinity": affinity,
        "python": platform.python_version(),
        "python_implementation": platform.python_implementation(),
        "numpy": np.__version__,
        "machine": platform.machine(),
        "system": f"{platform.system()} {platform.release()}",
        "env": {k: os.environ[k] for k in _ENV_KEYS if k in os.environ},
        "installed": _installed(),
    }


def summary(info: dict | None = None) -> dict[str, str]:
    """:func:`machine_info` (or ``info``) as short ``{"fact": "value"}`` lines for a table."""
    info = machine_info() if info is None else info
    cpu, simd, blas = info["cpu"], info["numpy_simd"], info["blas"]
    out = {
        "CPU": cpu["model"]
        + (f" (family {cpu['family']}, model {cpu['model_number']})" if cpu["family"] else ""),
        "CPU flags": " ".join(cpu["flags"]) or "(none found)",
        "platform": f"{info['machine']}, {info['system']}",
        "CPUs (usable)": f"{info['cpu_count']} ({info['affinity']})",
        "Python / NumPy": f"{info['python']} / {info['numpy']}",
        "NumPy SIMD baseline": " ".join(simd["baseline"]) or "(none)",
        "NumPy SIMD dispatched, found here": " ".join(simd["dispatch_found"]) or "(none)",
        "NumPy SIMD dispatched, not here": " ".join(
            d for d in simd["dispatch"] if d not in simd["dispatch_found"]
        )
        or "(none)",
        "BLAS": f"{blas['library']} {blas['version']}",
        "BLAS kernel": str(blas["architecture"]),
        "BLAS threads": str(blas["threads"]),
    }
    for name, version in info.get("installed", {}).items():
        if version and (name in LIBRARIES or name == "threadpoolctl"):
            out[name] = version
    for key, value in info.get("env", {}).items():
        out[f"${key}"] = value
    return out


# ----------------------------------------------------------------------------- the tables' facts


def environment() -> dict:
    """The machine a run used (columns of every table): NumPy version, device, the CPU model
    and its floating-point flags, its SIMD level as NumPy dispatches it, NumPy's BLAS kernel
    and threads."""
    m = _machine_once()
    simd = m["numpy_simd"]
    blas = m["blas"]
    return {
        "numpy_version": np.__version__,
        "device": f"CPU ({platform.machine()}, {os.cpu_count()} cores)",
        "cpu": m["cpu"]["model"],
        "cpu_flags": " ".join(m["cpu"]["flags"]),
        "simd": (simd["dispatch_found"] or simd["baseline"] or ["none"])[-1],
        "blas_kernel": f"{blas['library']} {blas['version']} {blas['architecture']}",
        "blas_threads": blas["threads"],
    }


_MACHINE: list = []


def _machine_once() -> dict:
    """:func:`machine_info`, once per process (the CPU does not change)."""
    if not _MACHINE:
        _MACHINE.append(machine_info())
    return _MACHINE[0]


# ----------------------------------------------------------------------------- memory


def available_memory() -> int:
    """Bytes this process may still allocate: the least of the memory the system has
    available (Linux /proc/meminfo, else physical memory, else 4 GiB), what the process's
    own address-space limit leaves (``ulimit -v``: RLIMIT_AS less the current size) and what
    its cgroup's memory limit leaves (containers, Binder: ``memory.max`` less
    ``memory.current``; cgroup v1 likewise), where those limits are set."""
    free = _system_available()
    for leaves in (_rlimit_left(), _cgroup_left()):
        if leaves is not None:
            free = min(free, leaves)
    return max(free, 0)


def _system_available() -> int:
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return 4 << 30


def _rlimit_left() -> int | None:
    try:
        import resource

        soft = resource.getrlimit(resource.RLIMIT_AS)[0]
        if soft == resource.RLIM_INFINITY:
            return None
        with open("/proc/self/statm") as f:
            size = int(f.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
        return soft - size
    except (ImportError, OSError, ValueError):
        return None


def _read_int(path: str) -> int | None:
    try:
        with open(path) as f:
            text = f.read().strip()
        return None if text == "max" else int(text)
    except (OSError, ValueError):
        return None


def _cgroup_left() -> int | None:
    for limit_file, usage_file in (
        ("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory.current"),  # cgroup v2
        (
            "/sys/fs/cgroup/memory/memory.limit_in_bytes",
            "/sys/fs/cgroup/memory/memory.usage_in_bytes",
        ),
    ):
        limit = _read_int(limit_file)
        if limit is not None and limit < 1 << 60:  # v1 writes a huge number for "no limit"
            return limit - (_read_int(usage_file) or 0)
    return None
