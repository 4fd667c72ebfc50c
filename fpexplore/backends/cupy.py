"""The CuPy backend: the only module of fpexplore that imports CuPy, and only when called.

cupy-cuda12x imports fine on a machine without a GPU and fails at first use
(cudaErrorInsufficientDriver / cudaErrorNoDevice), so availability is checked by asking the
runtime for a device, not by the import alone.
"""

from __future__ import annotations

_STATUS: tuple[bool, str] | None = None


def status() -> tuple[bool, str]:
    """(True, device description) when CuPy can run on a GPU here, else (False, reason)."""
    global _STATUS
    if _STATUS is not None:
        return _STATUS
    try:
        import cupy
    except Exception as e:  # ImportError, or a broken CUDA install raising at import
        _STATUS = (False, f"CuPy is not installed ({type(e).__name__}: {e})".rstrip())
        return _STATUS
    try:
        count = cupy.cuda.runtime.getDeviceCount()
        if count < 1:
            _STATUS = (False, "CuPy is installed but there is no CUDA device")
            return _STATUS
        props = cupy.cuda.runtime.getDeviceProperties(0)
        name = props["name"].decode() if isinstance(props["name"], bytes) else props["name"]
        _STATUS = (True, f"{name} (CuPy {cupy.__version__})")
    except Exception as e:  # cudaErrorInsufficientDriver, cudaErrorNoDevice, ...
        _STATUS = (False, f"CuPy is installed but CUDA is not usable here: {e}")
    return _STATUS
