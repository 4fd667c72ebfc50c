"""What every backend reads and returns: the :class:`Job` of one comparison (its op, data,
settings, the references computed so far and the messages so far) and each :class:`Result`.

Every backend module (``numpy``, ``emulated``, ``cupy``, ``replay``, ``libraries``) answers
alike: ``steps(job, name)`` lists its steps for the job (the labels progress shows: NumPy's
call, each emulated variant, else the backend's name) and ``results(job, step)`` runs one,
returning its results as :class:`Result` records; what it cannot run (a variant with no
emulation, an op the library has no function for) is a message in :attr:`Job.messages`,
never an error.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["USER_DATA", "Job", "Result"]

USER_DATA = "user data"  # the distribution column of a comparison of the user's own inputs


@dataclass(frozen=True)
class Result:
    """One result of a step: its label and backend (the table's ``variant`` and
    ``backend``), the output, warm and first-use seconds, the library that made it
    (name, version, threads) where a real library did, and the device it ran on where that
    is not this machine's CPU (a GPU, a recording's GPU)."""

    label: str
    backend: str
    out: object
    elapsed: float
    first_use: float = 0.0
    library: dict | None = None
    device: str | None = None


@dataclass
class Job:
    """What every step of one comparison needs; ``cache`` holds the reference per format,
    ``messages`` what could not be run, ``variants`` the emulated variants (VariantSpecs,
    parsed once by compare)."""

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
    variants: tuple = ()
    backends: tuple = ()  # the backends compare runs

    @property
    def op(self) -> str:
        return self.op_spec.name
