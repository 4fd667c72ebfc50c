"""sum, dot and matmul as experiments see them: their variants are the evaluation orders of
:mod:`fpexplore.orders` (``fpx.orders(op)``), one registry entry each; this module says how
their inputs are made, what NumPy and CuPy call, the exact reference, the error bounds and
the GPU recordings.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from .._registry import SMALL_DTYPES
from ..data import generate
from ..exact import exact_dot, exact_dot_to, exact_sum, exact_sum_to
from ..exact import kernel_needs as exact_kernel_needs
from ..formats import format_info
from ..metrics import gamma, sum_bound, sum_depth
from ..orders import dot, exact_matmul, matmul
from ..orders import sum as fsum
from ..orders.arith import order_keywords
from ..orders.products import dot_held, exact_matmul_to, matmul_held
from ..orders.registry import kernel_needs, lookup, orders_for, orders_of
from ..orders.summation import sum_held
from .opspec import OpSpec, OpTable, Recording, Reduction, pick
from .variant import EXACT, FORMULA, HYPOTHESIS, LIBRARY, Variant

__all__ = ["OP_TABLE", "RECORDED_SUM_SIZES", "dot_second_distribution"]

_KIND = {"definition": FORMULA, "library": LIBRARY, "hypothesis": HYPOTHESIS, "exact": EXACT}


class _Orders(Mapping):
    """The op's listed orders as variants (kind "definition" is a formula), read from the
    order registry when asked: a library order's name, or the whole list, loads the library
    wing; one of fpexplore's own orders does not."""

    def __init__(self, op: str):
        self.op = op

    def __getitem__(self, name) -> Variant:
        try:
            s = lookup(self.op, name)
        except (ValueError, TypeError):
            raise KeyError(name) from None
        if not s.listed:
            raise KeyError(name)
        return Variant(s.name, s.description, _KIND[s.kind])

    def __iter__(self):
        return (n for n, s in orders_of(self.op).items() if s.listed)

    def __len__(self) -> int:
        return sum(1 for _ in self)


def _orders(op: str) -> _Orders:
    return _Orders(op)


def _order_kwargs(op: str, order: str, settings: dict, params: dict) -> dict:
    """The op-wide params the order takes, then the spec's settings (they win)."""
    kw = pick(params, order_keywords(op, lookup(op, order)))
    kw.update(settings)
    return kw


def _sum_bounds(terms, fmt) -> dict:
    """The bounds sweep() overlays, for summing ``terms`` in format ``fmt``."""
    return {
        "worst_sequential": sum_bound(terms, "sequential", fmt),
        "worst_pairwise": sum_bound(terms, "pairwise", fmt),
        "probabilistic": sum_bound(terms, "probabilistic", fmt),
    }


def _quiet(f, *args):
    with np.errstate(all="ignore"):
        return f(*args)


# ----------------------------------------------------------------------------- sum


def _drawn(distribution, n, fmt, seed):
    """``generate``'s values, those of the OCP FP8, FP6 and FP4 formats in ml_dtypes' types
    (the format then travels with the data)."""
    x = generate(distribution, n, fmt, seed)
    return x.astype(SMALL_DTYPES[fmt]) if fmt in SMALL_DTYPES else x


def _sum_inputs(n, fmt, distribution, seed, params):
    return {"format": fmt, "x": _drawn(distribution, n, fmt, seed)}


def _user_format(inputs) -> str | None:
    """The data's format where it is one of ``fpx.format``'s (float64 values, the format
    named beside them), else None (the arrays' dtype says their format)."""
    fmt = inputs["format"]
    return fmt if format_info(fmt).user_defined else None


_EXACT = {"sum": (exact_sum, exact_sum_to), "dot": (exact_dot, exact_dot_to)}
_EXACT["matmul"] = (exact_matmul, exact_matmul_to)


def _exact(op: str, inputs):
    """The correctly rounded sum, dot or matmul of the inputs, in their format (fpx.format's:
    its values in float64)."""
    args = [inputs[k] for k in OP_TABLE[op].input_names]
    if fmt := _user_format(inputs):
        return _EXACT[op][1](*args, fmt)
    return _EXACT[op][0](*args)


def _sum_call(name, settings, inputs, params):
    kw = _order_kwargs("sum", name, settings, params)
    if fmt := _user_format(inputs):
        return sum_held(inputs["x"], fmt, name, **kw)
    return fsum(inputs["x"], name, **kw)


# ----------------------------------------------------------------------------- dot


def dot_second_distribution(distribution: str) -> str:
    """b's distribution in dot's generated inputs: a's, except normal for ill-conditioned a
    (the products of two cancelling vectors would not cancel)."""
    return distribution if distribution != "ill-conditioned" else "normal"


def _dot_inputs(n, fmt, distribution, seed, params):
    return {
        "format": fmt,
        "a": _drawn(distribution, n, fmt, seed),
        "b": _drawn(dot_second_distribution(distribution), n, fmt, seed + 1),
    }


def _dot_call(name, settings, inputs, params):
    kw = _order_kwargs("dot", name, settings, params)
    if fmt := _user_format(inputs):
        return dot_held(inputs["a"], inputs["b"], fmt, name, **kw)
    return dot(inputs["a"], inputs["b"], name, **kw)


def _dot_bounds(inputs, fmt):
    """The sum's bounds over |a_i b_i|, each product rounded once more: gamma_n and
    gamma_(ceil(log2 n) + 1) (Higham eq. 3.4; pass 25: gamma_(n-1) S was exceeded by a
    sequential float16 dot of two terms)."""
    terms = np.abs(inputs["a"].astype(np.float64) * inputs["b"])
    S, n = float(np.sum(terms)), terms.size
    return {
        "worst_sequential": gamma(sum_depth(n, "sequential") + 1, fmt) * S,
        "worst_pairwise": gamma(sum_depth(n, "pairwise") + 1, fmt) * S,
        "probabilistic": sum_bound(terms, "probabilistic", fmt),
    }


# ----------------------------------------------------------------------------- matmul


def _matmul_inputs(n, fmt, distribution, seed, params):
    return {
        "format": fmt,
        "A": _drawn(distribution, n * n, fmt, seed).reshape(n, n),
        "B": _drawn(distribution, n * n, fmt, seed + 1).reshape(n, n),
    }


def _matmul_call(name, settings, inputs, params):
    kw = _order_kwargs("matmul", name, settings, params)
    if fmt := _user_format(inputs):
        return matmul_held(inputs["A"], inputs["B"], fmt, name, **kw)
    return matmul(inputs["A"], inputs["B"], name, **kw)


def _cupy_matmul(cp, a, b, tf32: bool = False):
    if tf32:  # CuPy reads CUPY_TF32 once per process
        raise ValueError("TF32 matmul: run with CUPY_TF32=1 in the environment")
    return cp.matmul(a, b)


# ----------------------------------------------------------------------------- the specs

RECORDED_SUM_SIZES = (1000, 100_003, 1_000_003)  # sum and dot on the GPU (--quick: two)
_REDUCTION_DEFAULTS = ("sequential", "pairwise", "numpy", "tree", "kahan")


def _kernels_of(op: str):
    def kernels(name, kw, info):
        needs = kernel_needs(op, name, info, kw.get("accumulate"), kw)
        if op == "matmul":  # the reference, exact_matmul
            needs.append(("dot2_bounds", np.dtype(np.float64), None))
        else:  # the reference, exact_sum or exact_dot
            needs += exact_kernel_needs(f"exact_{op}", info)
        return needs

    return kernels


OP_TABLE = OpTable(
    OpSpec(
        "sum",
        "sum of all elements",
        _orders("sum"),
        inputs=_sum_inputs,
        call=_sum_call,
        reference=lambda inputs, params, fmt: _exact("sum", inputs),
        numpy=lambda inputs, params: _quiet(np.sum, inputs["x"]),
        numpy_label="np.sum",
        cupy=lambda cp, x: cp.sum(x),
        gpu_args=lambda inputs, params: (inputs["x"],),
        gpu_label="cupy.sum",
        recordings=(
            Recording(
                formats=("float32", "float64", "float16"),
                distributions=("uniform", "wide"),
                sizes=RECORDED_SUM_SIZES,
                quick_sizes=RECORDED_SUM_SIZES[:2],
                calls=(("cupy.sum", lambda inputs: (inputs["x"],)),),
                kernels=True,
            ),
        ),
        default_variants=_REDUCTION_DEFAULTS,
        max_n=10**8,
        bytes_per_element=24.0,
        bounds_of=lambda inputs, fmt: _sum_bounds(inputs["x"], fmt),
        available=lambda fmt: orders_for("sum", fmt),
        kernels=_kernels_of("sum"),
        orders=True,
        rank=0,
        reduction=Reduction("sum"),
    ),
    OpSpec(
        "dot",
        "dot product of two vectors",
        _orders("dot"),
        inputs=_dot_inputs,
        call=_dot_call,
        reference=lambda inputs, params, fmt: _exact("dot", inputs),
        numpy=lambda inputs, params: _quiet(np.dot, inputs["a"], inputs["b"]),
        numpy_label="np.dot",
        cupy=lambda cp, a, b: cp.dot(a, b),
        gpu_args=lambda inputs, params: (inputs["a"], inputs["b"]),
        gpu_label="cupy.dot",
        recordings=(
            Recording(
                formats=("float32", "float64"),
                distributions=("uniform", "wide"),
                sizes=RECORDED_SUM_SIZES,
                quick_sizes=RECORDED_SUM_SIZES[:2],
                calls=(("cupy.dot", lambda inputs: (inputs["a"], inputs["b"])),),
                kernels=True,
            ),
        ),
        default_variants=_REDUCTION_DEFAULTS,
        max_n=10**8,
        bytes_per_element=40.0,
        bounds_of=_dot_bounds,
        available=lambda fmt: orders_for("dot", fmt),
        kernels=_kernels_of("dot"),
        orders=True,
        rank=0,
        reduction=Reduction("dot", products=True),
    ),
    OpSpec(
        "matmul",
        "matrix product",
        _orders("matmul"),
        inputs=_matmul_inputs,
        call=_matmul_call,
        reference=lambda inputs, params, fmt: _exact("matmul", inputs),
        numpy=lambda inputs, params: _quiet(np.matmul, inputs["A"], inputs["B"]),
        numpy_label="np.matmul",
        cupy=_cupy_matmul,
        gpu_args=lambda inputs, params: (inputs["A"], inputs["B"]),
        gpu_label="cupy.matmul",
        recordings=(
            Recording(
                formats=("float32", "float64"),
                sizes=(64, 256),
                calls=(("cupy.matmul", lambda inputs: (inputs["A"], inputs["B"])),),
            ),
            Recording(
                formats=("float32",),
                sizes=(64, 256),
                calls=(("cupy.matmul tf32", lambda inputs: (inputs["A"], inputs["B"])),),
                env={"CUPY_TF32": "1"},
            ),
        ),
        default_variants=("sequential", "pairwise", "tree", "kahan"),
        max_n=1024,  # the emulated orders are O(n^3) loops
        default_n=100,
        size_of=lambda n, itemsize: n * n * 64,
        available=lambda fmt: orders_for("matmul", fmt),
        kernels=_kernels_of("matmul"),
        orders=True,
        rank=0,
        reduction=Reduction("matmul", products=True, matrix=True),
    ),
)
