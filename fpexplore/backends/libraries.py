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
from ..machine import run_here

__all__ = ["CALLS", "NAMES", "call_name", "run", "status"]

NAMES = ("torch", "jax", "polars")  # each also the name of the package to import
CALLS = {
    ("torch", "sum"): "torch.sum",
    ("torch", "dot"): "torch.dot",
    ("torch", "matmul"): "torch.matmul",
    ("jax", "sum"): "jnp.sum",
    ("jax", "dot"): "jnp.dot",
    ("polars", "sum"): "polars.sum",
}
# formats each library computes in (jax: float64 only with x64 mode, which run() turns on)
_FORMATS = {
    "torch": ("float16", "bfloat16", "float32", "float64"),
    "jax": ("float16", "bfloat16", "float32", "float64"),
    "polars": ("float32", "float64"),
}


def status(name: str) -> tuple[bool, str]:
    """(available, version or why not) for one library backend; imports nothing."""
    if name not in NAMES:
        raise ValueError(f"unknown library backend {checks.shown(name)}; valid: {', '.join(NAMES)}")
    if importlib.util.find_spec(name) is None:
        return False, f"{name} is not installed (pip install {name})"
    from importlib import metadata

    try:
        version = metadata.version(name)
    except metadata.PackageNotFoundError:  # pragma: no cover - importable without metadata
        version = "unknown version"
    return True, f"{name} {version} on this CPU"


def call_name(name: str, op: str) -> str | None:
    """The library function for ``op`` (e.g. "torch.sum"), None where it has none here."""
    return CALLS.get((name, op))


def run(name: str, op: str, arrays, fmt: str, threads: int | None = None):
    """(result in ``fmt``, details: library, version, threads) of the library's own function
    for ``op`` on ``arrays``. ValueError where the library has no such function or format;
    ModuleNotFoundError (naming the package) where it is not installed."""
    call = call_name(name, op)
    if call is None:
        have = ", ".join(o for (n, o) in CALLS if n == name)
        raise ValueError(f"{name} backend: no function for {op} here (it has {have})")
    if fmt not in _FORMATS[name]:
        raise ValueError(f"{name} backend: {op} of {fmt} is not computed by {name}")
    arrays = [np.ascontiguousarray(a) for a in arrays]
    out, lib = run_here(call, arrays, threads=threads if name == "torch" else None)
    return np.asarray(out).astype(arrays[0].dtype, copy=False)[()], lib
