"""Real CPU libraries as backends: ``torch``, ``jax`` and ``polars`` rows next to ``numpy``.

Each runs the library's own function on the same inputs, in this process, where the library
is installed (optional: ``pip install torch`` / ``jax`` / ``polars``; :func:`status` says so
where it is not). What each op calls:

========  =================  ===============  ==================
op        torch              jax              polars
========  =================  ===============  ==================
sum       ``torch.sum``      ``jnp.sum``      ``Series.sum``
dot       ``torch.dot``      ``jnp.dot``      --
matmul    ``torch.matmul``   --               --
========  =================  ===============  ==================

Their results depend on the machine and the thread count; each result comes with the
library's version and threads (:func:`run`), and :func:`fpexplore.machine.machine_info` gives
the CPU they ran on. fpexplore's emulations of these loops are the orders ``torch``, ``xla``
and ``polars`` (``fpx.orders("sum")``).
"""

from __future__ import annotations

import importlib.util

import numpy as np

from .. import checks
from ..backends.job import Job, Result
from ..libspec import LIBRARIES, backend_libraries
from ..timing import timed
from .elsewhere import run_here

__all__ = ["CALLS", "NAMES", "UNAVAILABLE", "call_name", "results", "run", "status", "steps"]

NAMES = backend_libraries()  # torch, jax, polars: the libraries with a LibrarySpec.ops table
#: (library, op) -> the call compare's row makes (each LibrarySpec's ``ops``)
CALLS = {(name, op): call for name in NAMES for op, call in LIBRARIES[name].ops.items()}
UNAVAILABLE = "{name} backend unavailable: {why}"


def status(name: str) -> tuple[bool, str]:
    """(available, version or why not) for one library backend; imports nothing."""
    if name not in NAMES:
        raise ValueError(f"unknown library backend {checks.shown(name)}; valid: {', '.join(NAMES)}")
    spec = LIBRARIES[name]
    if importlib.util.find_spec(spec.package) is None:
        return False, f"{name} is not installed ({spec.install})"
    from importlib import metadata

    try:
        version = metadata.version(spec.package)
    except metadata.PackageNotFoundError:  # pragma: no cover - importable without metadata
        version = "unknown version"
    return True, f"{name} {version} on this CPU"


def call_name(name: str, op: str) -> str | None:
    """The library function for ``op`` (e.g. "torch.sum"), None where it has none here."""
    return CALLS.get((name, op))


def run(name: str, op: str, arrays, fmt: str, threads: int | None = None):
    """(result in ``fmt``, details: library, version, threads) of the library's own function
    for ``op`` on ``arrays``. ValueError where the library has no such function or format;
    ModuleNotFoundError (naming the package) where it is not installed. ``threads`` reaches
    the libraries whose LibrarySpec says it does (torch)."""
    call = call_name(name, op)
    if call is None:
        have = ", ".join(o for (n, o) in CALLS if n == name)
        raise ValueError(f"{name} backend: no function for {op} here (it has {have})")
    if fmt not in LIBRARIES[name].formats:
        raise ValueError(f"{name} backend: {op} of {fmt} is not computed by {name}")
    arrays = [np.ascontiguousarray(a) for a in arrays]
    out, lib = run_here(call, arrays, threads=threads if LIBRARIES[name].threads else None)
    return np.asarray(out).astype(arrays[0].dtype, copy=False)[()], lib


def steps(job: Job, name: str) -> list[str]:
    return [name]


def results(job: Job, step: str) -> list[Result]:
    """The library ``step`` (torch, jax or polars) on the job's inputs: its own function for
    the op, or a message saying why not."""
    name = step
    call = call_name(name, job.op)
    if call is None:
        job.messages.append(f"{name} backend: {job.op} has no {name} function here")
        return []
    from ..ops.registry import get

    arrays = [job.inputs[k] for k in get(job.op).input_names]
    if job.threads is not None and not LIBRARIES[name].threads:
        job.messages.append(
            f"{name}: threads={job.threads} is not applied (its thread pool is fixed when "
            "it loads: POLARS_MAX_THREADS, XLA_FLAGS)"
        )
    try:
        (out, lib), elapsed, first_use = timed(
            lambda: run(name, job.op, arrays, job.format, threads=job.threads)
        )
    except ValueError as e:
        job.messages.append(str(e))
        return []
    return [Result(call, name, out, elapsed, first_use, lib)]
