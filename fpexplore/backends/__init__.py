"""Where results come from: ``numpy`` (NumPy's own functions), ``emulated`` (fpexplore's
bit-exact CPU implementations), ``cupy`` (a real GPU; :mod:`fpexplore.backends.cupy` is the
only module that imports CuPy, and only when asked), ``replay`` (results recorded on a GPU).

``backends()`` reports each one and, where one is unavailable, why.
"""

from __future__ import annotations

__all__ = ["backends", "status"]

NAMES = ("numpy", "emulated", "cupy", "replay")


def status(name: str) -> tuple[bool, str]:
    """(available, reason or description) for one backend."""
    if name == "numpy":
        import numpy as np

        return True, f"NumPy {np.__version__} on this CPU"
    if name == "emulated":
        return True, "fpexplore's bit-exact emulation on this CPU"
    if name == "cupy":
        from . import cupy as _cupy

        return _cupy.status()
    if name == "replay":
        from . import replay as _replay

        return _replay.status()
    raise ValueError(f"unknown backend {name!r}; valid backends: {', '.join(NAMES)}")


def backends() -> dict[str, str]:
    """Each backend: "available: ..." or "unavailable: <reason>"."""
    out = {}
    for name in NAMES:
        ok, why = status(name)
        out[name] = ("available: " if ok else "unavailable: ") + why
    return out
