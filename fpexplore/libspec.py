"""The real libraries fpexplore runs or emulates, one :class:`LibrarySpec` each.

NumPy (with its OpenBLAS), torch, jax, polars and numba: the package to import, how to
install it, the calls :func:`fpexplore.libraries.elsewhere.run_elsewhere` can make of it,
which function compare's backend row calls per op and in which formats, whether compare's
``threads=`` reaches it, the environment variables that change what it computes, and
fpexplore's orders that emulate its loops (by name). :mod:`fpexplore.machine`,
:mod:`fpexplore.backends` and the library wing read these records.

Imports nothing from fpexplore: ``run_elsewhere``'s child process loads this module,
``machine.py`` and ``libraries/elsewhere.py`` without the package.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from types import MappingProxyType
from typing import NamedTuple

__all__ = ["LIBRARIES", "Kernel", "LibrarySpec", "backend_libraries"]

_ALL_FORMATS = ("float16", "bfloat16", "float32", "float64")


def _frozen(mapping: dict) -> MappingProxyType:
    return MappingProxyType(dict(mapping))


class Kernel(NamedTuple):
    """One OpenBLAS kernel family of an x86-64 DYNAMIC_ARCH build.

    coretype : the ``OPENBLAS_CORETYPE`` that selects it
    reports : the ``architecture`` threadpoolctl then reports (the Prescott kernels say
        "Katmai")
    needs : the CPU flags (Linux /proc/cpuinfo spelling) its instructions need. OpenBLAS
        checks them when it picks a kernel itself, never when ``OPENBLAS_CORETYPE`` forces
        one: a forced kernel the CPU lacks them for dies with SIGILL (driver/others/dynamic.c)
    """

    coretype: str
    reports: str
    needs: tuple[str, ...]


@dataclass(frozen=True)
class LibrarySpec:
    """One real library.

    name : the library's name, also its backend's name where it has one ("torch")
    package : the package to import ("numpy", "torch", "jax", "polars", "numba")
    install : the pip command that installs it (``'pip install "jax[cpu]"'``)
    calls : ``run_elsewhere``'s calls of it: call name -> (arrays it takes, what it computes)
    ops : compare's backend row of it (fpexplore/libraries/backend.py): op -> the call it
        makes; empty where the library has no such row (NumPy's row is each op's own call)
    formats : the formats that backend row computes in
    threads : whether compare's ``threads=`` reaches its calls (NumPy: the BLAS pool of dot
        and matmul; torch: its intra-op threads); jax and polars fix theirs when they load
    thread_env : the variables ``run_elsewhere(threads=n)`` sets for it in the child
    env : environment variables that change what it computes (machine_info reports them)
    orders : fpexplore's orders that emulate its loops (``fpx.orders(op)`` names)
    kernels : NumPy's OpenBLAS: fpexplore's kernel name (``fpx.dot(a, b, "openblas",
        kernel=...)``) -> its :class:`Kernel` (OpenBLAS 0.3.31's x86-64 DYNAMIC_ARCH build)
    """

    name: str
    package: str
    install: str
    calls: MappingProxyType = field(default_factory=lambda: _frozen({}))
    ops: MappingProxyType = field(default_factory=lambda: _frozen({}))
    formats: tuple[str, ...] = ()
    threads: bool = False
    thread_env: tuple[str, ...] = ()
    env: tuple[str, ...] = ()
    orders: tuple[str, ...] = ()
    kernels: MappingProxyType = field(default_factory=lambda: _frozen({}))

    def __hash__(self) -> int:  # (its tables are read-only mappings, which do not hash)
        return hash(self.name)

    @property
    def backend(self) -> bool:
        """Whether compare has a backend row of this library (``backends=(name,)``)."""
        return bool(self.ops)


#: name -> its LibrarySpec, in the order machine.CALLS lists their calls
LIBRARIES = {
    spec.name: spec
    for spec in (
        LibrarySpec(
            "numpy",
            "numpy",
            "pip install numpy",
            calls=_frozen(
                {
                    "np.dot": (2, "np.dot(a, b)"),
                    "np.matmul": (2, "np.matmul(a, b)"),
                    "np.einsum-dot": (2, "np.einsum('i,i->', a, b)"),
                    "np.einsum-sum": (1, "np.einsum('i->', x)"),
                    "np.sum": (1, "np.sum(x)"),
                }
            ),
            formats=_ALL_FORMATS,
            threads=True,
            thread_env=("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"),
            env=(
                "OPENBLAS_CORETYPE",
                "OPENBLAS_NUM_THREADS",
                "OPENBLAS_VERBOSE",
                "OMP_NUM_THREADS",
                "MKL_NUM_THREADS",
                "MKL_ENABLE_INSTRUCTIONS",
                "MKL_CBWR",
                "NPY_DISABLE_CPU_FEATURES",
                "NPY_ENABLE_CPU_FEATURES",
            ),
            orders=("numpy", "openblas", "einsum"),
            kernels=_frozen(
                {
                    "haswell": Kernel("Haswell", "Haswell", ("avx2", "fma")),
                    "skylakex": Kernel(
                        "SkylakeX",
                        "SkylakeX",
                        ("avx2", "fma", "avx512f", "avx512dq", "avx512bw", "avx512vl"),
                    ),
                    "sandybridge": Kernel("Sandybridge", "Sandybridge", ("avx",)),
                    "nehalem": Kernel("Nehalem", "Nehalem", ("sse4_2",)),
                    "prescott": Kernel("Prescott", "Katmai", ("pni",)),
                }
            ),
        ),
        LibrarySpec(
            "torch",
            "torch",
            "pip install torch",
            calls=_frozen(
                {
                    "torch.sum": (1, "torch.sum(torch.from_numpy(x))"),
                    "torch.dot": (2, "torch.dot(torch.from_numpy(a), torch.from_numpy(b))"),
                    "torch.matmul": (
                        2,
                        "torch.matmul(torch.from_numpy(a), torch.from_numpy(b))",
                    ),
                }
            ),
            ops=_frozen({"sum": "torch.sum", "dot": "torch.dot", "matmul": "torch.matmul"}),
            formats=_ALL_FORMATS,
            threads=True,
            thread_env=("FPX_TORCH_THREADS",),  # the child calls torch.set_num_threads with it
            env=("ATEN_CPU_CAPABILITY", "FPX_TORCH_THREADS"),
            orders=("torch",),
        ),
        LibrarySpec(
            "jax",
            "jax",
            'pip install "jax[cpu]"',
            calls=_frozen({"jnp.sum": (1, "jnp.sum(x)"), "jnp.dot": (2, "jnp.dot(a, b)")}),
            ops=_frozen({"sum": "jnp.sum", "dot": "jnp.dot"}),
            formats=_ALL_FORMATS,  # float64 only with x64 mode, which the call turns on
            env=("XLA_FLAGS", "JAX_PLATFORMS", "JAX_ENABLE_X64"),
            orders=("xla",),
        ),
        LibrarySpec(
            "polars",
            "polars",
            "pip install polars",
            calls=_frozen({"polars.sum": (1, "pl.Series(x).sum()")}),
            ops=_frozen({"sum": "polars.sum"}),
            formats=("float32", "float64"),
            thread_env=("POLARS_MAX_THREADS",),
            env=("POLARS_MAX_THREADS",),
            orders=("polars",),
        ),
        LibrarySpec(
            "numba",
            "numba",
            "pip install numba",
            env=("NUMBA_NUM_THREADS", "NUMBA_CPU_NAME"),
            orders=("llvm-fastmath", "numba-prange"),
        ),
    )
}


def backend_libraries() -> tuple[str, ...]:
    """The libraries compare has a backend row of (torch, jax, polars), in LIBRARIES' order."""
    return tuple(name for name, spec in LIBRARIES.items() if spec.backend)
