"""The ``emulated`` backend: fpexplore's own bit-exact implementation of each variant (a
variant spec string, :mod:`fpexplore.spec`) on this CPU."""

from __future__ import annotations

import numpy as np

from ..formats import FP8_DTYPES, as_format, format_info
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
    _fp8_overflow(job, step)
    return [Result(str(step), "emulated", out, elapsed, first_use)]


def _fp8_overflow(job: Job, step) -> None:
    """A message where an FP8 input rounding (``+float8_e4m3``, ``+float8_e5m2``, a
    tensor-core FP8 input format) takes finite inputs beyond the FP8 range: ml_dtypes'
    conversion, emulated here, gives NaN (e4m3, no infinity) or ±inf (e5m2), where CUDA's
    ``__NV_SATFINITE`` conversion (what cuBLAS FP8 GEMMs are fed with) saturates to the
    largest finite value: the result is then not what such a GPU gives."""
    rounding = step.kwargs().get("input_rounding")
    if rounding not in FP8_DTYPES:
        return
    largest = format_info(rounding).max
    count = 0
    for v in job.inputs.values():
        if isinstance(v, np.ndarray) and v.dtype.kind == "f":
            with np.errstate(all="ignore"):
                wide = v.astype(np.float64)
                finite = np.isfinite(wide)
                count += int(np.count_nonzero(finite & ~np.isfinite(as_format(wide, rounding))))
    if count:
        became = "±inf" if format_info(rounding).has_infinity else "NaN"
        job.messages.append(
            f"{step}: {count:,} finite input value(s) beyond {rounding}'s range (largest "
            f"{largest:g}) became {became} in the {rounding} rounding (as ml_dtypes converts); "
            f"cuBLAS's FP8 conversion with __NV_SATFINITE saturates them to ±{largest:g} instead"
        )
