"""What an evaluation order is: :class:`OrderSpec`, the one record of everything about an
order (its parameters and their checks, runner, kernels, depth, grid, source, the library
loop it emulates), and the kinds of order. The orders themselves: registry.py (the
definitions, fpexplore's own kernels, the tensor cores) and the library wing,
fpexplore.libraries (real libraries' own loops).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from .. import checks
from .arith import check_accumulate

__all__ = ["DEFINITION", "EXACT", "HYPOTHESIS", "LIBRARY", "OrderSpec", "fixed_calls"]

# kinds of order
DEFINITION = "definition"  # a textbook order, defined in docs/orders.md
LIBRARY = "library"  # what a real library does, verified against it on this machine
HYPOTHESIS = "hypothesis"  # a GPU library's order as read from source, not yet confirmed on a GPU
EXACT = "exact"


@dataclass(frozen=True)
class OrderSpec:
    """One evaluation order (see :mod:`fpexplore.orders.registry`).

    ``run(X, Y, fused, ar, params, out)`` computes the order over the terms ``X[i]`` (``Y``
    None) or the products ``X[i]*Y[i]`` in the compute type of ``ar`` (an
    :class:`~fpexplore.orders.arith.Arith`) and returns a compute-type scalar; ``out`` is the
    output format. ``depth(n, params)`` is the most additions a term goes through (n >= 2),
    the additions onto an exact zero left out.
    ``kernel_calls(has_y, out_name, params)`` lists ``(kernel, "S"|"C"|None)``: the compiled
    kernels ``run`` calls with a first array of the storage ("S") or compute ("C") dtype.
    Library orders (a real library's own loop, emulated: ``library``) take the inputs in
    their own format instead and have no accumulator setting.
    """

    name: str
    description: str
    kind: str = DEFINITION
    params: dict = field(default_factory=dict)  # name -> (default, check)
    fma: bool = False
    float16_accumulate: str | None = None  # default accumulator for float16 data
    run: Callable | None = None
    # its additions in another rounding mode (sum's rounding=): run_rounded(X, rp, mode, draws,
    # params), mode an index into ROUNDING_MODES, draws the stochastic uniforms (_rounded_kernels)
    run_rounded: Callable | None = None
    rounded_kernel: str = ""  # the compiled loop run_rounded calls (_rounded_kernels)
    matmul_code: int | None = None  # the order's number in _kernels.reduce_code
    depth: Callable | None = None
    grid: tuple = ((),)  # the detective's parameter settings, each a tuple of (key, value)
    gpu_kernel: bool = False  # fpexplore/backends/cupy.py has a CUDA kernel for it
    kernel_calls: Callable | None = None
    source: str | None = None  # plain-Python order_sum(t, T) for the reproducer
    ops: tuple = ("sum", "dot")  # the ops it applies to (also matmul: those with a matmul_code)
    library: Callable | None = None  # a library's own loop: library(x, y, params) -> scalar
    verified: str = ""  # library orders: the library, version and machine it was checked on
    formats: tuple = ("float16", "bfloat16", "float32", "float64")  # the input formats it takes
    # hardware that reads its inputs in a format of its own (tensor cores): the input formats
    # it takes only with an input rounding, and library(x, y, params, input_rounding)
    rounded_formats: tuple = ()
    takes_rounding: bool = False
    fixed: str = ""  # why accumulate and fma are no settings of it (library orders: the loop's)
    listed: bool = True  # in fpx.orders(op), compare's defaults and the detective's search
    # the ops where an accumulator wider than the data keeps every partial sum and rounds once,
    # at the end (its result is then known from the exact one: fpexplore.inference.Known)
    wide_once: tuple = ("sum", "dot")
    # dot: its products rounded to the data's format first, then summed as terms (NumPy's
    # a * b, CuPy's elementwise kernel): "rn", or "ftz" where float32 subnormal products
    # become zeros (NVRTC -ftz=true); "": the order forms the products itself (fma may fuse)
    literal_products: str = ""
    # the bits beyond its family's that naming it costs fpexplore.explain (rare in libraries)
    prior_bits: float = 0.0
    # how it reads an array (see laid_out): "index" (the terms in index order, any layout),
    # "memory" (NumPy's reduction: C- or Fortran-contiguous in memory order, 1-D views of any
    # stride), "contiguous" (a library's loop as emulated: C-contiguous data only)
    layout: str = "index"
    # NumPy's cast buffer (elements) a reduction of a byte-swapped array (">f4" here) runs
    # through: each chunk pairwise, in turn, as numpy-chunked (0: none)
    buffer: int = 0
    # the values a parameter is offered with in the explorer's builder, each with its note
    # (name -> ((value, note), ...)); a parameter not named here has a free value
    choices: dict = field(default_factory=dict)
    # a parameter that applies only beside another's value (name -> (other, value)), as the
    # tree's seed with combine="atomic": given otherwise it is refused, not ignored
    applies: dict = field(default_factory=dict)

    def laid_out(self, arrays: tuple, what: str) -> tuple:
        """The arrays' terms, 1-D, in the order this order reads them; a layout its library
        reads another way than emulated (a Fortran array's np.dot, a strided view's
        OpenBLAS kernel) is a ValueError that says so, never a quiet other answer."""
        if self.layout == "index" or all(a.ndim <= 1 and a.flags.c_contiguous for a in arrays):
            return tuple(np.ravel(a) for a in arrays)
        if self.layout == "memory":
            if all(a.ndim <= 1 or a.flags.c_contiguous for a in arrays):
                return tuple(np.ravel(a) for a in arrays)
            if all(a.flags.f_contiguous for a in arrays):
                return tuple(np.ravel(a, order="F") for a in arrays)  # memory order
        elif all(a.flags.c_contiguous for a in arrays):
            return tuple(np.ravel(a) for a in arrays)
        shown = ", ".join(f"shape {a.shape}, strides {a.strides}" for a in arrays)
        how = (
            "NumPy's reduction, emulated on C- or Fortran-contiguous arrays and 1-D views"
            if self.layout == "memory"
            else "a library's loop, emulated on C-contiguous data"
        )
        raise ValueError(
            f"{what}: order {self.name!r} is {how}; this input ({shown}) takes another path "
            f"there, not emulated: pass np.ascontiguousarray(...) (and give the library that)"
        )

    def buffered(self, given, what: str) -> int:
        """The chunk NumPy reduces the user's array ``given`` in: ``buffer`` for a byte-swapped
        array (float16, float32, float64: its cast buffer; np.sum itself, tests/test_orders.py)
        in the layouts :meth:`laid_out` takes, else 0 (one pass)."""
        if not self.buffer or not isinstance(given, np.ndarray) or given.dtype.isnative:
            return 0
        self.laid_out((given,), what)
        return self.buffer

    @property
    def takes_held(self) -> bool:
        """Whether it sums data of the OCP FP8, FP6 and FP4 formats (ml_dtypes arrays) in
        their own format: each addition rounded to it, or exactly."""
        return self.run_rounded is not None or self.name == "exact"

    def refuses_format(self, fmt: str) -> str | None:
        """Why a library order does not run on ``fmt`` inputs (None: it does; an order of
        fpexplore's own runs on every format)."""
        if self.library is None or fmt in self.formats + self.rounded_formats:
            return None
        taken = ", ".join(self.formats)
        if self.rounded_formats:
            taken += f" ({', '.join(self.rounded_formats)} with an input rounding)"
        return f"order {checks.shown(self.name)} is defined for {taken} inputs, not {fmt}"

    def run_library(self, x, y, params: dict, accumulate=None, input_rounding=None):
        """A library order on the inputs in their own format (``y`` None for a sum; 2-D ``x``
        and ``y`` for a matmul), their values already rounded to ``input_rounding``."""
        check_accumulate(self, accumulate)
        if (why := self.refuses_format(x.dtype.name)) is not None:  # (pass 41: named no input)
            raise ValueError(
                f"{why}: the inputs are {x.dtype.name}; convert them, e.g. .astype(np.float32)"
            )
        if self.takes_rounding:  # (it says which rounding a rounded format needs)
            return self.library(x, y, params, input_rounding)
        return self.library(x, y, params)

    def validate(self, given: dict) -> dict:
        unknown = set(given) - set(self.params)
        if unknown:  # an unknown keyword argument: a TypeError, as Python's own
            allowed = ", ".join(sorted(self.params)) or "none"
            raise TypeError(
                f"order {checks.shown(self.name)} has no parameter {', '.join(sorted(unknown))}; "
                f"its parameters: {allowed}"
            )
        out = {}
        for key, (default, check) in self.params.items():
            out[key] = check(given[key]) if key in given else default
        self.check_applies(given, out)
        return out

    def check_applies(self, given: dict, values: dict | None = None) -> None:
        """ValueError for a parameter given where it does not apply (see ``applies``)."""
        values = given if values is None else values
        for key, (other, value) in self.applies.items():
            default = self.params[other][0]
            if key in given and values.get(other, default) != value:
                raise ValueError(
                    f"order {self.name!r}: {key}= applies with {other}={value!r} only "
                    f"(it would change nothing here), got {key}={given[key]!r}"
                )


def fixed_calls(*calls) -> Callable:
    """An order's ``kernel_calls`` that lists the same ``(kernel, dtype kind)`` pairs for
    every input."""
    return lambda has_y, out_name, p: list(calls)
