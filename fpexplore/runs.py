"""compare's runs: what each backend computes for one comparison, one step at a time.

:func:`steps` lists a comparison's steps in the table's order: NumPy's own call, each
emulated variant, then the GPU (``cupy``: a real one; ``replay``: recordings made on one)
and the real CPU libraries (``torch``, ``jax``, ``polars``). A step returns its results as
:class:`Result` records; what it cannot run (an unavailable backend, a variant with no
emulation) is a message in :attr:`Job.messages`, never an error. Each backend kind is one
step function in :data:`BACKEND_STEPS`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial

import numpy as np

from .results import USER_DATA
from .spec import parse_spec
from .timing import timed

__all__ = ["BACKEND_STEPS", "BLAS_OPS", "Job", "Result", "steps"]

BLAS_OPS = ("dot", "matmul")  # the ops whose NumPy call runs NumPy's BLAS


@dataclass(frozen=True)
class Result:
    """One result of a step: its label and backend (the table's ``variant`` and
    ``backend``), the output, warm and first-use seconds, and the library that made it
    (name, version, threads) where a real library did."""

    label: str
    backend: str
    out: object
    elapsed: float
    first_use: float = 0.0
    library: dict | None = None


@dataclass
class Job:
    """What every step of one comparison needs; ``cache`` holds the reference per format,
    ``messages`` what could not be run."""

    op_spec: object  # fpexplore.ops.opspec.OpSpec
    format: str
    n: int
    distribution: str
    seed: int | None
    inputs: dict
    params: dict  # fpexplore.ops.opspec.Params: remembers what the variants took
    threads: int | None
    cache: dict
    messages: list
    blas_threads: object = None  # NumPy's BLAS threads as this machine reports them

    @property
    def op(self) -> str:
        return self.op_spec.name


def steps(job: Job, variants, backends) -> list[tuple[str, Callable[[], list[Result]]]]:
    """``(label, step)`` pairs in the table's order; ``step()`` runs it, returning its
    results."""
    out = []
    if "numpy" in backends and job.op_spec.numpy is not None:
        out.append((job.op_spec.numpy_label, partial(_numpy, job)))
    if "emulated" in backends:
        out += [(v, partial(_emulated, job, v)) for v in variants]
    out += [(b, partial(run, job, b)) for b, run in BACKEND_STEPS.items() if b in backends]
    return out


def _numpy(job: Job) -> list[Result]:
    """NumPy's own call; dot and matmul on NumPy's BLAS pool, limited to ``threads``."""
    uses_blas = job.op in BLAS_OPS
    with _BlasThreads(job.threads if uses_blas else None, job.messages) as pool:
        out, elapsed, first_use = timed(lambda: job.op_spec.numpy(job.inputs, job.params))
    library = {"name": "numpy", "version": np.__version__}
    if uses_blas:  # (np.sum and the ufuncs run on one thread, whatever the BLAS pool)
        library["threads"] = job.blas_threads if pool.limits is None else job.threads
    return [Result(job.op_spec.numpy_label, "numpy", out, elapsed, first_use, library)]


def _emulated(job: Job, variant: str) -> list[Result]:
    """One of fpexplore's variants (a variant spec string)."""
    try:
        out, elapsed, first_use = timed(
            lambda: job.op_spec.run(parse_spec(variant, job.op), job.inputs, job.params)
        )
    except NotImplementedError as e:  # a library path that is not emulated: said so
        job.messages.append(f"{variant}: {e}")
        return []
    return [Result(variant, "emulated", out, elapsed, first_use)]


def _gpu_available(job: Job, backend: str) -> bool:
    from .backends import status  # (looked up when it runs: a test may stand one in)

    ok, reason = status(backend)
    if not ok:
        job.messages.append(
            f"{backend} backend unavailable: {reason}; showing the emulated GPU orders instead"
        )
    return ok


def _cupy(job: Job, backend: str = "cupy") -> list[Result]:
    """CuPy's own function for the op on the real GPU."""
    if not _gpu_available(job, backend):
        return []
    if job.op_spec.gpu_args is None:
        job.messages.append(f"cupy backend: compare() shows no CuPy row for {job.op}")
        return []
    from .backends.cupy import library

    args = job.op_spec.gpu_args(job.inputs, job.params)
    out, elapsed, first_use = timed(lambda: library(job.op, *args))
    return [Result(job.op_spec.gpu_label, "cupy", out, elapsed, first_use)]


def _replay(job: Job, backend: str = "replay") -> list[Result]:
    """The GPU recordings of these generated inputs (fpexplore.record made them)."""
    if not _gpu_available(job, backend):
        return []
    if job.distribution == USER_DATA:
        job.messages.append("replay: recordings are of generated data, not of your inputs")
        return []
    from .backends import replay

    shape = np.shape(job.op_spec.reference_for(job.inputs, None, job.params, job.cache))
    found = [
        Result(f"{label} [{device.get('device', 'GPU')}]", "replay", out, 0.0)
        for label, device, out in replay.lookup(
            job.op, job.format, job.n, job.distribution, job.seed
        )
        if np.shape(out) == shape  # (block partials and repeated runs are not rows)
    ]
    if not found:
        job.messages.append(
            f"replay: no GPU recording of {job.op} {job.format} n={job.n} "
            f"{job.distribution} seed={job.seed}"
        )
    return found


def _library(job: Job, backend: str) -> list[Result]:
    """A real CPU library's own function (torch, jax, polars), or a message saying why not."""
    from .backends import libraries

    ok, why = libraries.status(backend)
    call = libraries.call_name(backend, job.op)
    if not ok:
        job.messages.append(f"{backend} backend unavailable: {why}")
        return []
    if call is None:
        job.messages.append(f"{backend} backend: {job.op} has no {backend} function here")
        return []
    from .ops.reductions import ARRAYS

    arrays = [job.inputs[k] for k in ARRAYS[job.op]]
    if job.threads is not None and backend != "torch":
        job.messages.append(
            f"{backend}: threads={job.threads} is not applied (its thread pool is fixed when "
            "it loads: POLARS_MAX_THREADS, XLA_FLAGS)"
        )
    try:
        (out, lib), elapsed, first_use = timed(
            lambda: libraries.run(backend, job.op, arrays, job.format, threads=job.threads)
        )
    except ValueError as e:
        job.messages.append(str(e))
        return []
    return [Result(call, backend, out, elapsed, first_use, lib)]


#: backend name -> its step, after NumPy's and the emulated ones, in the table's order
BACKEND_STEPS = {
    "cupy": _cupy,
    "replay": _replay,
    "torch": _library,
    "jax": _library,
    "polars": _library,
}


class _BlasThreads:
    """NumPy's BLAS pool limited to ``threads`` for a block (threadpoolctl); None: as is.
    Without threadpoolctl it says so in ``messages`` and leaves the pool as it is."""

    def __init__(self, threads, messages):
        self.threads, self.messages, self.limits = threads, messages, None

    def __enter__(self):
        if self.threads is not None:
            try:
                from threadpoolctl import threadpool_limits
            except ImportError:
                self.messages.append(
                    f"threads={self.threads} for NumPy's BLAS needs threadpoolctl "
                    "(pip install threadpoolctl): NumPy ran with its own threads"
                )
                return self
            self.limits = threadpool_limits(limits=self.threads, user_api="blas")
        return self

    def __exit__(self, *exc):
        if self.limits is not None:
            self.limits.restore_original_limits()
