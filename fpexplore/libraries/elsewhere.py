"""One real library call run in a fresh process with its own settings (the library wing).

A library picks its summation order when it loads (OpenBLAS its kernel for the CPU, or the
one ``OPENBLAS_CORETYPE`` forces; a threaded kernel its split; torch its lanes), so trying
another one needs another process:

- :func:`run_elsewhere`: runs one library call (a name from :data:`CALLS`) in a new Python
  process of the same interpreter, with environment variables set before anything is
  imported, the arrays passed through ``.npy`` files both ways (every bit kept), and returns
  the result with that process's :func:`~fpexplore.machine.machine_info` (so the kernel that
  really ran is visible: OpenBLAS silently ignores a core type it does not know, or one the
  CPU cannot run);
- :func:`run_here`: the same call in this process (the torch, jax and polars backends);
- :func:`runs_here`: whether this CPU runs an OpenBLAS kernel (a forced one it cannot run
  kills the process).

``fpx.machine.run_elsewhere`` (and the other names here) finds these too. Imports only NumPy,
:mod:`fpexplore.machine` and :mod:`fpexplore.libspec`: the child process loads the three files
without the rest of the package; torch, jax and polars are imported where a call needs them.
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

from ..libspec import LIBRARIES
from ..machine import cpu_flags, machine_info

__all__ = ["CALLS", "OPENBLAS_KERNELS", "run_elsewhere", "run_here", "runs_here"]

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
    if platform.machine().lower() not in ("x86_64", "amd64", "i686", "i386", "x86"):
        return []
    flags = cpu_flags()
    return [f for f in kernel.needs if f not in flags]


#: The library calls :func:`run_elsewhere` runs: name -> (module it needs, number of
#: arrays, what it computes), from each library's :class:`~fpexplore.libspec.LibrarySpec`.
CALLS = {
    call: (lib.package, arity, text)
    for lib in LIBRARIES.values()
    for call, (arity, text) in lib.calls.items()
}
_INSTALL = {lib.package: lib.install for lib in LIBRARIES.values()}

#: What run_elsewhere(threads=n) sets to n in the child (torch: FPX_TORCH_THREADS, which the
#: child passes to torch.set_num_threads).
_THREAD_KEYS = tuple(key for lib in LIBRARIES.values() for key in lib.thread_env)


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
    from .. import checks  # (not at the top: the child loads this file without the package)

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


# The child's first lines: this file, machine.py and libspec.py imported as the modules of
# bare packages (fpexplore's own __init__, the wing's and their imports never run there).
_CHILD_CODE = (
    "import importlib, sys, types\n"
    "for name, path in (('fpx_child', sys.argv[1]), ('fpx_child.libraries', sys.argv[2])):\n"
    "    package = types.ModuleType(name)\n"
    "    package.__path__ = [path]\n"
    "    sys.modules[name] = package\n"
    "importlib.import_module('fpx_child.libraries.elsewhere')._child(sys.argv[3])\n"
)


def _start_child(call: str, job: Path, env: dict, timeout) -> tuple[int, str]:
    """Run the child on the job folder; (its exit status, its stderr)."""
    # isolated from the caller's folder: with -c the child's first import path is its
    # working folder (a json.py there ran in the child), so it runs in the job folder,
    # which holds only .npy/.json files, and with -P where Python has it (3.11+)
    isolate = ["-P"] if sys.version_info >= (3, 11) else []
    wing = Path(__file__).resolve().parent
    try:
        proc = subprocess.run(
            [sys.executable, *isolate, "-c", _CHILD_CODE, str(wing.parent), str(wing), str(job)],
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
