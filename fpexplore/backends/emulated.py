"""The ``emulated`` backend: fpexplore's own bit-exact implementation of each variant (a
variant spec string, :mod:`fpexplore.spec`) on this CPU."""

from __future__ import annotations

from ..timing import timed
from .job import Job, Result

__all__ = ["UNAVAILABLE", "results", "status", "steps"]

UNAVAILABLE = "{name} backend unavailable: {why}"  # (never: the emulation is always here)


def status(name: str = "emulated") -> tuple[bool, str]:
    return True, "fpexplore's bit-exact emulation on this CPU"


def steps(job: Job, name: str = "emulated") -> list:
    """One step per variant (its VariantSpec, labelled by its spec string), in the order
    given."""
    return list(job.variants)


def results(job: Job, step: str) -> list[Result]:
    """The variant ``step``; a library path that is not emulated is a message instead."""
    try:
        out, elapsed, first_use = timed(lambda: job.op_spec.run(step, job.inputs, job.params))
    except NotImplementedError as e:  # a library path that is not emulated: said so
        job.messages.append(f"{step}: {e}")
        return []
    return [Result(str(step), "emulated", out, elapsed, first_use)]
