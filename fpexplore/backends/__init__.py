"""Where results come from: ``numpy`` (NumPy's own functions), ``emulated`` (fpexplore's
bit-exact CPU implementations), ``cupy`` (a real GPU; :mod:`fpexplore.backends.cupy` is the
only module that imports CuPy, and only when asked), ``replay`` (results recorded on a GPU),
``torch``, ``jax``, ``polars`` (those libraries' own functions on this CPU, where installed:
:mod:`fpexplore.libraries.backend`, in the library wing).

``backends()`` reports each one and, where one is unavailable, why; ``has_gpu()`` says
whether the ``cupy`` backend can run here, and ``on_gpu()`` runs one op on the real GPU.

Every backend's module answers alike (:mod:`fpexplore.backends.job`): ``status(name)``,
``steps(job, name)`` (the labels of its steps), ``results(job, step)`` (the
:class:`~fpexplore.backends.job.Result` records of one step) and ``UNAVAILABLE`` (the message
where it cannot run here). :func:`steps` lists a comparison's steps in the table's order and
:func:`run_step` runs one.
"""

from __future__ import annotations

import importlib
import types
from typing import TYPE_CHECKING

from ..libspec import backend_libraries
from .job import Job, Result

if TYPE_CHECKING:
    import numpy as np

__all__ = ["backends", "has_gpu", "on_gpu", "run_step", "status", "steps"]

#: backend name -> its module, in the table's order (the libraries with a backend row after
#: the GPU ones, as fpexplore.libspec lists them; their module is in the library wing)
MODULES = {
    "numpy": f"{__name__}.numpy",
    "emulated": f"{__name__}.emulated",
    "cupy": f"{__name__}.cupy",
    "replay": f"{__name__}.replay",
    **dict.fromkeys(backend_libraries(), "fpexplore.libraries.backend"),
}
NAMES = tuple(MODULES)  # numpy, emulated, cupy, replay, torch, jax, polars


def _module(name: str) -> types.ModuleType:
    if not isinstance(name, str) or name not in MODULES:
        raise ValueError(f"unknown backend {name!r}; valid backends: {', '.join(NAMES)}")
    return importlib.import_module(MODULES[name])


def status(name: str) -> tuple[bool, str]:
    """(available, reason or description) for one backend."""
    return _module(name).status(name)


def steps(job: Job, names) -> list[tuple[str, str]]:
    """``(backend, step)`` pairs of the backends in ``names``, in the table's order (NumPy's
    call, each emulated variant, cupy, replay, torch, jax, polars, whatever the order of
    ``names``); ``step`` is the label progress shows."""
    return [(b, step) for b in NAMES if b in names for step in _module(b).steps(job, b)]


def run_step(job: Job, name: str, step: str) -> list[Result]:
    """The results of one step of backend ``name``; none, with the backend's message in
    ``job.messages``, where it is unavailable here (:func:`status`)."""
    module = _module(name)
    ok, why = status(name)
    if not ok:
        instead = (
            "; showing the emulated GPU orders instead"
            if "emulated" in job.backends
            else "; add the emulated backend to see the GPU orders emulated"
        )
        job.messages.append(module.UNAVAILABLE.format(name=name, why=why, instead=instead))
        return []
    return module.results(job, step)


def backends() -> dict[str, str]:
    """Each backend and whether it can run here.

    Returns
    -------
    dict of str to str
        Backend name -> "available: ..." or "unavailable: <reason>".
    """
    out = {}
    for name in NAMES:
        ok, why = status(name)
        out[name] = ("available: " if ok else "unavailable: ") + why
    return out


def has_gpu() -> bool:
    """Whether CuPy can run on a CUDA device here.

    Returns
    -------
    bool
        True when CuPy can run on a CUDA device here (``backends()["cupy"]`` says why not).
    """
    return status("cupy")[0]


_KERNEL_PARAMS = {"fma", "block", "combine"}


def on_gpu(op: str, *args, order: str | None = None, **kwargs) -> np.ndarray | np.generic:
    """Run ``op`` on the real GPU through CuPy; the result as NumPy (measured, never emulated).

    Parameters
    ----------
    op : str
        With ``order=None``, CuPy's own function: sum -> ``cupy.sum``, dot -> ``cupy.dot``,
        matmul -> ``cupy.matmul``, linspace -> ``cupy.linspace``, exp/log/sin/tanh/sqrt/pow
        -> the ufuncs.
    *args
        The op's arguments. NumPy arrays (0-d ones too) become CuPy arrays, Python scalars
        stay scalars, so CuPy takes the same path as with the user's own call.
    order : "sequential", "blocked", "tree", "tree-strided" or "kahan", optional
        Sum and dot only: run fpexplore's own kernel for that order instead. It equals the
        emulated order bit for bit where tests/test_gpu.py has been run on the device.
    **kwargs
        With ``order=None``, passed on to CuPy's function; with an order, ``fma``, ``block``
        and ``combine`` as in :func:`fpexplore.sum`.

    Returns
    -------
    numpy.ndarray or numpy.generic

    Raises
    ------
    ValueError
        An unknown ``op`` or ``order``, an order for an op other than sum and dot, another
        number of arrays than the order's op takes, arrays the kernels cannot read (not
        float32 or float64; a dot's two of another format or length), or FP8, FP6 or FP4
        data (CuPy has no such arrays).
    TypeError
        An unknown parameter (the message lists the valid ones).
    RuntimeError
        No usable GPU; the message gives the reason (see :func:`backends`).
    """
    from . import cupy as _cupy  # (imports CuPy itself only when it runs something)

    if op not in _cupy.LIBRARY_OPS:
        raise ValueError(
            f"no GPU function for op {op!r}; valid ops: {', '.join(_cupy.LIBRARY_OPS)}"
        )
    if order is not None:
        if op not in ("sum", "dot"):
            raise ValueError(f"GPU order kernels exist for sum and dot, not {op!r}")
        if order not in _cupy.KERNEL_ORDERS:
            raise ValueError(
                f"no GPU kernel for order {order!r}; valid orders: {', '.join(_cupy.KERNEL_ORDERS)}"
            )
        unknown = set(kwargs) - _KERNEL_PARAMS
        if unknown:  # an unknown keyword: TypeError, as Python's own
            raise TypeError(
                f"unknown parameter(s) {', '.join(sorted(unknown))}; "
                f"the GPU kernels take: {', '.join(sorted(_KERNEL_PARAMS))}"
            )
        # the same checks as fpx.sum / fpx.dot for that order (fma only where it fuses,
        # block only for block orders, combine only for trees)
        from ..orders.arith import check_fma
        from ..orders.registry import fusable, lookup

        spec = lookup(op, order)
        check_fma(spec, kwargs.get("fma", False), op, fusable(op))
        spec.validate({k: v for k, v in kwargs.items() if k != "fma"})
        want = 2 if op == "dot" else 1
        if len(args) != want:
            raise ValueError(f"on_gpu({op!r}, order=...) takes {want} array(s), got {len(args)}")
        _kernel_arrays(op, args)
    _cupy_holds(args)
    ok, why = status("cupy")
    if not ok:
        raise RuntimeError(f"no GPU to run {op} on: {why}")
    if order is None:
        return _cupy.library(op, *args, **kwargs)
    y = args[1] if op == "dot" else None
    return _cupy.kernel_sum(args[0], order, y=y, **kwargs)


def _cupy_holds(args) -> None:
    """Refuse the formats CuPy has no arrays of (FP8, FP6, FP4: ml_dtypes' small types)."""
    from ..formats import SMALL_BY_DTYPE

    for i, a in enumerate(args, 1):
        name = SMALL_BY_DTYPE.get(getattr(a, "dtype", None))
        if name is not None:
            raise ValueError(
                f"on_gpu: argument {i} is {a.dtype.name} data: CuPy has no {name} arrays or "
                "arithmetic (fpx.sum, fpx.dot, fpx.matmul and fpx.mean emulate the orders on it)"
            )


def _kernel_arrays(op: str, args) -> None:
    """fpexplore's kernels read float32 or float64 arrays; a dot's two are of one format and
    one length (the kernel reads y through x's type and length)."""
    import numpy as np

    for i, a in enumerate(args, 1):
        if not isinstance(a, np.ndarray) or a.dtype not in (np.float32, np.float64):
            got = a.dtype.name if isinstance(a, np.ndarray) else type(a).__name__
            raise ValueError(
                f"on_gpu({op!r}, order=...): argument {i} is {got}; the GPU kernels take "
                "float32 and float64 NumPy arrays"
            )
    if op == "dot" and (args[0].dtype != args[1].dtype or args[0].size != args[1].size):
        raise ValueError(
            "on_gpu('dot', order=...): the two arrays must have one format and one length, "
            f"got {args[0].dtype.name}[{args[0].size}] and {args[1].dtype.name}[{args[1].size}]"
        )
