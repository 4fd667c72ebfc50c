"""This machine, and one real library call run in a fresh process with its own settings.

A library's summation order depends on the machine: OpenBLAS picks a kernel for the CPU
(``OPENBLAS_CORETYPE`` overrides it), a threaded kernel splits the work by its thread count,
PyTorch's lanes follow its CPU capability. Those choices are made when the library loads, so
trying another one needs another process:

- :func:`machine_info`: the CPU, its SIMD flags, NumPy's SIMD levels, the BLAS library with
  its kernel and thread count (through threadpoolctl where installed), versions: plain data,
  JSON-serialisable;
- :func:`run_elsewhere`: runs one library call (a name from :data:`CALLS`) in a new Python
  process of the same interpreter, with environment variables set before anything is
  imported, the arrays passed through ``.npy`` files both ways (every bit kept), and returns
  the result with that process's :func:`machine_info` (so the kernel that really ran is
  visible: OpenBLAS silently ignores a core type it does not know, or one the CPU cannot run);
- :func:`summary`: :func:`machine_info` as ``{"fact": "value"}`` lines for a table;
- :func:`environment`: the machine columns of compare's tables (machine_info read once);
- :func:`available_memory`: the bytes this process may still allocate (system, ``ulimit -v``
  and cgroup limits), what :meth:`fpexplore.ops.opspec.OpSpec.check_size` guards with.

Imports only NumPy and :mod:`fpexplore.libspec` (what each library is: its calls, install
command, thread and environment variables; the child process loads the two files without the
rest of the package); threadpoolctl, torch, jax and polars are imported by the functions that
need them (in the child process for the library calls).
"""

from __future__ import annotations

import importlib.util
import json
import os
import platform
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

from .libspec import LIBRARIES  # (the child process loads it beside this file)

__all__ = [
    "CALLS",
    "OPENBLAS_KERNELS",
    "available_memory",
    "environment",
    "machine_info",
    "run_elsewhere",
    "runs_here",
    "summary",
]

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

#: fpexplore's OpenBLAS kernel names (``fpx.dot(a, b, "openblas", kernel=...)``) -> its
#: :class:`~fpexplore.libspec.Kernel` (``coretype``: the ``OPENBLAS_CORETYPE`` that selects
#: it; ``reports``: the ``architecture`` threadpoolctl then reports; ``needs``: the CPU
#: flags it needs): NumPy's :class:`~fpexplore.libspec.LibrarySpec` ``kernels``.
OPENBLAS_KERNELS = LIBRARIES["numpy"].kernels


def runs_here(kernel: str) -> bool:
    """Whether this CPU has the flags OpenBLAS's ``kernel`` (an :data:`OPENBLAS_KERNELS`
    name) needs. A forced kernel the CPU cannot run kills the process (SIGILL), so
    :func:`run_elsewhere` refuses to force one; loop over the kernels with this."""
    if kernel not in OPENBLAS_KERNELS:
        raise ValueError(f"kernel: unknown {kernel!r}; one of {', '.join(OPENBLAS_KERNELS)}")
    return not _lacking(OPENBLAS_KERNELS[kernel])


def _lacking(kernel) -> list[str]:
    """The flags ``kernel`` needs that this CPU lacks (none on a non-x86 machine, whose
    OpenBLAS has none of these kernels to force)."""
    cpu = _cpu(_numpy_simd()["features"])
    if platform.machine().lower() not in ("x86_64", "amd64", "i686", "i386", "x86"):
        return []
    return [f for f in kernel.needs if f not in cpu["flags"]]


#: The library calls :func:`run_elsewhere` runs: name -> (module it needs, number of
#: arrays, what it computes), from each library's :class:`~fpexplore.libspec.LibrarySpec`.
CALLS = {
    call: (lib.package, arity, text)
    for lib in LIBRARIES.values()
    for call, (arity, text) in lib.calls.items()
}
_INSTALL = {lib.package: lib.install for lib in LIBRARIES.values()}

#: Environment variables that change what a library computes, reported when set.
_ENV_KEYS = tuple(key for lib in LIBRARIES.values() for key in lib.env)

#: What run_elsewhere(threads=n) sets to n in the child (torch: FPX_TORCH_THREADS, which the
#: child passes to torch.set_num_threads).
_THREAD_KEYS = tuple(key for lib in LIBRARIES.values() for key in lib.thread_env)

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


# ----------------------------------------------------------------------------- run_elsewhere


def _check_call(call: str, arrays) -> str:
    if call not in CALLS:
        raise ValueError(f"unknown call {call!r:.80}; valid calls: {', '.join(CALLS)}")
    module, arity, _ = CALLS[call]
    if len(arrays) != arity:
        raise TypeError(f"{call} takes {arity} array(s), got {len(arrays)}")
    if importlib.util.find_spec(module) is None:
        raise ModuleNotFoundError(
            f"{call} needs {module}, which is not installed in this Python "
            f"({sys.executable}): {_INSTALL[module]}",
            name=module,
        )
    return module


def run_elsewhere(call: str, *arrays, env=None, threads=None, timeout=120):
    """Run one real library call in a fresh Python process; return ``(result, info)``.

    ``call``: a name from :data:`CALLS` (``"np.dot"``, ``"torch.sum"``, ...); ``arrays``: its
    NumPy inputs (any shape, a NumPy dtype: float16, float32, float64, ...). ``env``: extra
    environment variables, set before the child imports anything, e.g.
    ``{"OPENBLAS_CORETYPE": "Haswell", "OPENBLAS_NUM_THREADS": "1"}``. ``threads``: sets
    OPENBLAS_NUM_THREADS, OMP_NUM_THREADS, MKL_NUM_THREADS, POLARS_MAX_THREADS and
    FPX_TORCH_THREADS (the child calls ``torch.set_num_threads`` with it) to that number;
    ``env`` wins where both set a variable. The child runs :data:`sys.executable`.

    ``result``: what the call returned, as a NumPy scalar (0-d results) or array, bits
    preserved through a ``.npy`` file. ``info``: the child's :func:`machine_info` taken
    after the call (so threadpoolctl sees the libraries it loaded; ``info["blas"]
    ["architecture"]`` is the OpenBLAS kernel that really ran), plus ``call``, ``requested``
    (the variables passed) and ``library`` (name, version; torch: threads and CPU capability;
    jax: the device).

    Raises ValueError for an unknown call or an ``OPENBLAS_CORETYPE`` whose kernels this CPU
    cannot run (see :func:`runs_here`), ModuleNotFoundError (naming the package to
    install) when the call's library is not installed, TimeoutError after ``timeout``
    seconds, and the child's exception type (RuntimeError for non-builtin ones) if the call
    fails there.
    """
    _check_call(call, arrays)
    arrays = [np.asarray(a) for a in arrays]
    for a in arrays:
        if a.dtype.kind not in "biufc":
            raise TypeError(
                f"{a.dtype} arrays cannot be passed to another process bit for bit; "
                "use bool, integer, float16/32/64 or complex arrays"
            )
    extra = _requested(env, threads, timeout)
    with tempfile.TemporaryDirectory(prefix="fpx-elsewhere-") as tmp:
        job = Path(tmp)
        for i, a in enumerate(arrays):
            np.save(job / f"in{i}.npy", a, allow_pickle=False)
        (job / "request.json").write_text(json.dumps({"call": call, "arrays": len(arrays)}))
        returncode, stderr = _start_child(call, job, {**os.environ, **extra}, timeout)
        result, info = _child_output(call, job, returncode, stderr)
    info["requested"] = extra
    if result.ndim == 0:
        result = result[()]
    return result, info


def _requested(env, threads, timeout) -> dict[str, str]:
    """run_elsewhere's settings checked: the variables to set in the child (``threads`` for
    each library's thread variables, then ``env``)."""
    from . import checks  # (not at the top: the child loads this file without the package)

    if threads is not None:
        threads = checks.integer("threads", threads, 1)
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not timeout > 0:
        raise TypeError(
            f"timeout must be a positive number of seconds, got {checks.shown(timeout)}"
        )
    if env is not None and not isinstance(env, dict):
        raise TypeError(f"env must be a dict of names to strings, got {type(env).__name__}")
    for k, v in (env or {}).items():
        if not isinstance(k, str) or not isinstance(v, (str, int)) or isinstance(v, bool):
            raise TypeError(
                f"env: {checks.shown(k)} -> {checks.shown(v)}: names and values must be "
                f"strings (or ints)"
            )
    extra = {} if threads is None else dict.fromkeys(_THREAD_KEYS, str(threads))
    extra.update({str(k): str(v) for k, v in (env or {}).items()})
    for kernel in OPENBLAS_KERNELS.values():
        lacking = _lacking(kernel)
        if extra.get("OPENBLAS_CORETYPE", "").lower() == kernel.coretype.lower() and lacking:
            raise ValueError(
                f"env: OPENBLAS_CORETYPE={kernel.coretype!r} forces kernels that need "
                f"{', '.join(lacking)}, which this CPU lacks: OpenBLAS would run them and the "
                "process would die (illegal instruction). fpx.machine.runs_here(kernel) says "
                "which kernels this CPU runs"
            )
    return extra


# The child's first lines: this file and libspec.py imported as the modules of a bare
# package (fpexplore's own __init__ and its imports never run there).
_CHILD_CODE = (
    "import importlib, sys, types\n"
    "package = types.ModuleType('fpx_machine_child')\n"
    "package.__path__ = [sys.argv[1]]\n"
    "sys.modules['fpx_machine_child'] = package\n"
    "importlib.import_module('fpx_machine_child.machine')._child(sys.argv[2])\n"
)


def _start_child(call: str, job: Path, env: dict, timeout) -> tuple[int, str]:
    """Run the child on the job folder; (its exit status, its stderr)."""
    # isolated from the caller's folder: with -c the child's first import path is its
    # working folder (a json.py there ran in the child), so it runs in the job folder,
    # which holds only .npy/.json files, and with -P where Python has it (3.11+)
    isolate = ["-P"] if sys.version_info >= (3, 11) else []
    here = str(Path(__file__).resolve().parent)
    try:
        proc = subprocess.run(
            [sys.executable, *isolate, "-c", _CHILD_CODE, here, str(job)],
            cwd=job,
            env=env,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
    except subprocess.TimeoutExpired:
        raise TimeoutError(f"{call} did not finish within {timeout} s") from None
    return proc.returncode, proc.stderr


def _child_output(call: str, job: Path, returncode: int, stderr: str) -> tuple:
    """(result, info) the child wrote; its exception raised here where it failed."""
    error = job / "error.json"
    if error.exists():
        err = json.loads(error.read_text())
        exc = _builtin_exception(err["type"])
        message = f"{call} failed in the child process: {err['type']}: {err['message']}"
        if exc is ModuleNotFoundError:
            raise ModuleNotFoundError(message, name=err.get("name")) from None
        raise exc(message)
    if returncode or not (job / "result.npy").exists():
        why = " (illegal instruction: this CPU cannot run it)" if returncode == -4 else ""
        raise RuntimeError(
            f"{call}: the child process exited with status {returncode}{why}:\n" + stderr[-3000:]
        )
    result = np.load(job / "result.npy", allow_pickle=False)
    return result, json.loads((job / "info.json").read_text())


def _builtin_exception(name: str) -> type[Exception]:
    import builtins

    exc = getattr(builtins, name, None)
    if isinstance(exc, type) and issubclass(exc, Exception):
        return exc
    return RuntimeError


# ----------------------------------------------------------------------------- the child


def run_here(call: str, arrays: list[np.ndarray], threads: int | None = None):
    """Run ``call`` (one of :data:`CALLS`) on ``arrays`` in this process; return (NumPy
    result, library details: name, version, threads, ...). ``threads``: NumPy's BLAS pool
    (through threadpoolctl, where installed) or torch's intra-op threads for this call only;
    polars and XLA fix their pools when they load (``POLARS_MAX_THREADS``, ``XLA_FLAGS``), so
    their details report the pool they have. In a child of :func:`run_elsewhere`, torch's
    threads come from ``FPX_TORCH_THREADS``."""
    _check_call(call, arrays)
    if call.startswith("np."):
        fn = {
            "np.dot": np.dot,
            "np.matmul": np.matmul,
            "np.einsum-dot": lambda a, b: np.einsum("i,i->", a, b),
            "np.einsum-sum": lambda a: np.einsum("i->", a),
            "np.sum": np.sum,
        }[call]
        lib = {"name": "numpy", "version": np.__version__}
        if threads is None:
            return np.asarray(fn(*arrays)), lib
        try:
            from threadpoolctl import threadpool_limits
        except ImportError as e:
            raise ModuleNotFoundError(
                "setting NumPy's BLAS threads needs threadpoolctl: pip install threadpoolctl",
                name="threadpoolctl",
            ) from e
        with threadpool_limits(limits=threads, user_api="blas"):
            return np.asarray(fn(*arrays)), {**lib, "threads": threads}
    if call.startswith("torch."):
        import torch

        env_threads = os.environ.get("FPX_TORCH_THREADS")
        before = torch.get_num_threads()
        want = threads or (int(env_threads) if env_threads else None)
        if want:
            torch.set_num_threads(int(want))
        try:
            # torch has no NumPy bfloat16: those bits go in and out through int16 views
            bf16 = arrays[0].dtype.name == "bfloat16"
            ts = [
                torch.from_numpy(a.view(np.int16).copy()).view(torch.bfloat16)
                if bf16
                else torch.from_numpy(np.ascontiguousarray(a))
                for a in arrays
            ]
            fn = {"torch.sum": torch.sum, "torch.dot": torch.dot, "torch.matmul": torch.matmul}
            r = fn[call](*ts).detach().cpu()
            r = r.view(torch.int16).numpy().view(arrays[0].dtype) if bf16 else r.numpy()
            used = torch.get_num_threads()
        finally:
            if want and threads:
                torch.set_num_threads(before)
        try:
            capability = torch.backends.cpu.get_cpu_capability()
        except AttributeError:
            capability = "unknown"
        lib = {
            "name": "torch",
            "version": torch.__version__,
            "threads": used,
            "cpu_capability": capability,
        }
        return np.asarray(r), lib
    if call.startswith("jnp."):
        import jax
        import jax.numpy as jnp

        wide = any(a.dtype in (np.float64, np.complex128, np.int64) for a in arrays)
        before = jax.config.jax_enable_x64
        jax.config.update("jax_enable_x64", before or wide)  # float64 stays float64
        try:
            fn = {"jnp.sum": jnp.sum, "jnp.dot": jnp.dot}[call]
            r = np.asarray(fn(*[jnp.asarray(a) for a in arrays]))
        finally:
            jax.config.update("jax_enable_x64", before)  # (this process's setting, as it was)
        lib = {"name": "jax", "version": jax.__version__, "device": str(jax.devices()[0])}
        return np.asarray(r), lib
    import polars as pl

    x = arrays[0]
    r = np.asarray(pl.Series(x).sum(), dtype=x.dtype)
    return r, {"name": "polars", "version": pl.__version__, "threads": pl.thread_pool_size()}


def _child(job: str) -> None:
    """The child process's work: read the request, run it, write result and info."""
    path = Path(job)
    try:
        req = json.loads((path / "request.json").read_text())
        arrays = [np.load(path / f"in{i}.npy", allow_pickle=False) for i in range(req["arrays"])]
        result, library = run_here(req["call"], arrays)
        np.save(path / "result.npy", result, allow_pickle=False)
        info = machine_info()
        info["call"] = req["call"]
        info["library"] = library
        (path / "info.json").write_text(json.dumps(info))
    except Exception as e:  # reported to the parent, which raises it there
        err = {"type": type(e).__name__, "message": str(e), "name": getattr(e, "name", None)}
        (path / "error.json").write_text(json.dumps(err))
