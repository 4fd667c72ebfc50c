"""The ``numpy`` backend: NumPy's own call for the op (the op spec's ``numpy``), dot and
matmul on NumPy's BLAS pool limited to compare's ``threads`` (through threadpoolctl)."""

from __future__ import annotations

import numpy as np

from ..formats import format_info
from ..timing import timed
from .job import Job, Result

__all__ = ["BLAS_OPS", "UNAVAILABLE", "results", "status", "steps"]

BLAS_OPS = ("dot", "matmul")  # the ops whose NumPy call runs NumPy's BLAS
UNAVAILABLE = "{name} backend unavailable: {why}"  # (never: NumPy is always here)


def status(name: str = "numpy") -> tuple[bool, str]:
    return True, f"NumPy {np.__version__} on this CPU"


def steps(job: Job, name: str = "numpy") -> list[str]:
    """NumPy's call for the op, where the op has one and NumPy computes in the data's format
    (not in a format of ``fpx.format``: np.sum of the float64 values that hold it would be a
    float64 sum, another computation)."""
    if job.op_spec.numpy is None:
        return []
    if format_info(job.format).user_defined:
        _say(job, f"NumPy has no {job.format} type or arithmetic: no {job.op_spec.numpy_label} "
                  f"row (the emulated orders add in {job.format})")  # fmt: skip
        return []
    return [job.op_spec.numpy_label]


def results(job: Job, step: str) -> list[Result]:
    """NumPy's own call; dot and matmul on NumPy's BLAS pool, limited to ``threads``."""
    uses_blas = job.op in BLAS_OPS
    if job.threads is not None and not uses_blas:
        _say(job, f"threads={job.threads} is not applied to {step}: NumPy runs it on one "
                  "thread (threads sets the BLAS pool of dot and matmul)")  # fmt: skip
    with _BlasThreads(job.threads if uses_blas else None, job.messages) as pool:
        out, elapsed, first_use = timed(lambda: job.op_spec.numpy(job.inputs, job.params))
    library = {"name": "numpy", "version": np.__version__}
    if uses_blas:  # (np.sum and the ufuncs run on one thread, whatever the BLAS pool)
        library["threads"] = job.blas_threads if pool.limits is None else pool.ran
        if pool.limits is not None and pool.ran != job.threads:  # (OpenBLAS: its most)
            _say(job, f"threads={job.threads}: NumPy's BLAS ran {pool.ran} (its most)")
    return [Result(step, "numpy", out, elapsed, first_use, library)]


def _say(job: Job, message: str) -> None:
    if message not in job.messages:
        job.messages.append(message)


def _blas_pools() -> list:
    """The BLAS pools NumPy's libraries hold now (threadpoolctl's view)."""
    from threadpoolctl import threadpool_info

    return [p for p in threadpool_info() if p.get("user_api") == "blas"]


class _BlasThreads:
    """NumPy's BLAS pool limited to ``threads`` for a block (threadpoolctl); None: as is.
    Without threadpoolctl it says so in ``messages`` and leaves the pool as it is."""

    def __init__(self, threads, messages):
        self.threads, self.messages, self.limits = threads, messages, None
        self.ran = threads  # the threads the BLAS pool holds while limited

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
            pools = [p["num_threads"] for p in _blas_pools()]
            self.ran = max(pools) if pools else self.threads
        return self

    def __exit__(self, *exc):
        if self.limits is not None:
            self.limits.restore_original_limits()
