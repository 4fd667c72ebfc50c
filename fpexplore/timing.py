"""How long a call took, with its first-use setup apart: :func:`timed` gives the warm time
(``time_ms`` in compare's tables) and what compiling or loading numba kernels and importing
modules cost on first use (``compile_ms``); :data:`TIMING_NOTE` says what the times mean.

Imports nothing of fpexplore; numba's compiler-lock events are read where numba is loaded.
"""

from __future__ import annotations

import sys
import time

__all__ = ["TIMING_NOTE", "loaded_modules", "timed"]

TIMING_NOTE = (
    "time_ms: this CPU running the variant (fpexplore's emulation for 'emulated' rows), warm; "
    "not the speed of the hardware an order emulates. compile_ms: first use in this process "
    "(numba compiling or loading kernels), measured apart."
)


def timed(call):
    """(result, seconds, first-use seconds). A call that compiles numba kernels, loads them
    from numba's disk cache or imports modules pays for that once per process, and that
    time is reported apart as ``compile_ms``, never in ``time_ms``: numba's compiling and
    loading is timed by its own compiler-lock events and subtracted; a call that imported
    modules (numba itself, mpmath, ...) runs a second time and that run is ``time_ms``.
    Calls with nothing to set up run once."""
    before = loaded_modules()
    listener = None
    if "numba" in sys.modules:
        from numba.core import event

        listener = event.TimingListener()
        with event.install_listener("numba:compiler_lock", listener):
            t0 = time.perf_counter()
            out = call()
    else:
        t0 = time.perf_counter()
        out = call()
    first = time.perf_counter() - t0
    if loaded_modules() == before:
        if listener is None or not listener.done:
            return out, first, 0.0
        setup = min(listener.duration, first)  # compiled or loaded kernels, imported nothing
        return out, first - setup, setup
    t0 = time.perf_counter()
    call()
    warm = time.perf_counter() - t0
    return out, warm, max(first - warm, 0.0)


def loaded_modules() -> int:
    """How many modules are imported: a call that imports one pays for it once."""
    return len(sys.modules)
