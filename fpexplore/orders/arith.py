"""The arithmetic model shared by every order: the accumulator format, how kernels compute
in it, the rounding of a result to the output format, and the FMA rule.

- An order computes in an *accumulator* format (default: the inputs' format; an order may
  default float16 data to float32, as NumPy's and CuPy's kernels do). Inputs narrower than
  the accumulator are widened exactly, wider ones rounded to it first.
- Kernels compute in a *compute type* (``Arith.z``): float32 and float64 natively; float16
  and bfloat16 in float64, rounded after each operation (``Arith.rp``; see
  fpexplore/orders/_kernels.py).
- The result is rounded once from the accumulator to the output format (``finish``).
- ``fma=True`` applies to products only, and only in orders where a product feeds an
  addition (``OrderSpec.fma``); elsewhere it raises rather than change nothing.

Which setting applies where is judged here, each rule by one function, whoever asks:
``fpx.sum``/``dot``/``matmul``, ``on_gpu``, the ops' keyword filter and
:func:`fpexplore.spec.parse_spec` (which passes ``written=`` the setting as a spec writes it,
``"+fma"``, so the message names what the user wrote): :func:`check_fma`,
:func:`check_combine` (matmul combines tree blocks in order), :func:`check_split_k`,
:func:`check_input_rounding`, :func:`check_accumulate`, :func:`check_rounding` (sum's
``rounding=`` and its ``seed``); and, as booleans,
:func:`accumulate_applies`, :func:`fma_applies`, :func:`split_k_applies`, ``op in PRODUCT_OPS``
(input rounding).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import checks
from .._registry import SMALL_DTYPES, rounding_mode
from ..formats import (
    FORMATS,
    INPUT_ROUNDINGS,
    INPUT_ROUNDINGS_TEXT,
    FormatInfo,
    as_format,
    format_info,
    format_name,
)
from ..held import HELD_FORMATS

__all__ = [
    "NATIVE",
    "ORDER_OPS",
    "PRODUCT_OPS",
    "Arith",
    "accumulator",
    "accumulator_format",
    "arith",
    "check_combine",
    "check_fma",
    "check_input_rounding",
    "check_rounding",
    "check_accumulate",
    "check_split_k",
    "cub_config",
    "accumulate_applies",
    "fma_applies",
    "split_k_applies",
    "finish",
    "kernels",
    "matmul_by_columns",
    "out_rp",
    "rounded_kernels",
    "to_storage",
    "rounded_accumulator",
    "rounded_only",
    "held_accumulators",
]


#: the orders of sum whose additions take a rounding mode, and a format of fpx.format
ROUNDED = ("sequential", "reverse", "pairwise", "blocked")  # registry.roundable(), for messages
ROUNDED_OPS = ("sum", "dot", "matmul")  # the ops whose ROUNDED orders round each addition once
ORDER_OPS = ("sum", "dot", "matmul")  # the ops whose variants are evaluation orders
PRODUCT_OPS = ("dot", "matmul")  # the ops with products: fma and input rounding apply there


@dataclass(frozen=True)
class Arith:
    """How kernels compute in an accumulator format (see _kernels' module docstring)."""

    info: FormatInfo
    z: np.floating  # +0.0 of the compute type
    rp: tuple  # (precision, emin, max) to round to after each operation; (0, 0, 0.0): none
    storage: np.dtype  # dtype inputs are passed in (exact for the accumulator's values)


def arith(acc: FormatInfo) -> Arith:
    if acc.user_defined:  # fpx.format's: its values in float64, each addition rounded
        return Arith(acc, np.float64(0), (acc.precision, acc.emin, acc.max), np.dtype(np.float64))
    if acc.name == "float32":
        return Arith(acc, np.float32(0), (0, 0, 0.0), np.dtype(np.float32))
    if acc.name == "float64":
        return Arith(acc, np.float64(0), (0, 0, 0.0), np.dtype(np.float64))
    return Arith(acc, np.float64(0), (acc.precision, acc.emin, acc.max), np.dtype(np.float32))


NATIVE = (0, 0, 0.0)


def out_rp(info: FormatInfo, ar: Arith) -> tuple:
    """Rounding parameters for 'round to the output format' inside a kernel."""
    if info.name == ar.info.name or info.precision >= 53:
        return NATIVE
    return (info.precision, info.emin, info.max)


def accumulator(accumulate, x_info: FormatInfo, spec) -> FormatInfo:
    """The accumulator of an order: ``accumulate``, else the order's float16 default, else x's."""
    default = x_info
    if x_info.name == "float16" and spec.float16_accumulate:
        default = format_info(spec.float16_accumulate)
    return accumulator_format(accumulate, default)


def accumulator_format(accumulate, default: FormatInfo) -> FormatInfo:
    """``accumulate`` as a storage FormatInfo (``default`` when None); tf32 is refused."""
    if accumulate is None:
        return default
    try:
        acc = format_info(accumulate)  # (ml_dtypes' float8_e4m3fn: float8_e4m3)
    except (TypeError, ValueError):
        raise ValueError(
            f"accumulate: unknown format {checks.shown(accumulate)}; valid formats: "
            f"{', '.join((*FORMATS, *held_accumulators()))} and fpx.format's"
        ) from None
    if rounded_only(acc):
        raise ValueError(
            f"accumulate: {acc.name!r}, {_kind(acc)}, accumulates in the orders of "
            f"fpx.sum, fpx.dot and fpx.matmul that round each addition from its exact value "
            f"({', '.join(ROUNDED)}); "
            "elsewhere accumulate is one of " + ", ".join(FORMATS)
        )
    if acc.name in SMALL_DTYPES:  # AMD's FNUZ FP8, E8M0
        lacks = "no zero" if not acc.has_zero else "no negative zero"
        raise ValueError(
            f"accumulate: {acc.name!r} ({lacks}) is not emulated as an accumulator; "
            f"valid: {', '.join((*FORMATS, *held_accumulators()))} and fpx.format's"
        )
    if not acc.storage:
        raise ValueError(
            f"accumulate must be one of {', '.join((*FORMATS, *held_accumulators()))} or "
            f"fpx.format's; {acc.name!r} is an input rounding"
        )
    return acc


def held_accumulate(spec, op: str, name: str, accumulate):
    """The accumulator of ``op`` in order ``spec`` on data of the held format ``name`` (an
    ml_dtypes FP8, FP6 or FP4 array, or float64 values of a format of fpx.format):
    ``accumulate``, else that format, where the order rounds each addition to it; else a
    ValueError naming the orders that do."""
    if accumulate is not None or spec.name == "exact":  # (exact: refused there, if given)
        return accumulate
    if not spec.takes_held:
        small = name in SMALL_DTYPES  # (else a format of fpx.format, held in float64)
        kind = f"ml_dtypes' {SMALL_DTYPES[name]}" if small else "a format of fpx.format"
        if spec.takes_rounding and name.startswith("float8"):  # the tensor cores
            raise ValueError(
                f"{op}: order {spec.name!r} takes no {name} data ({kind}): the tensor cores "
                f"read FP8 through an input rounding: convert the data, x.astype(np.float32), "
                f"and give input_rounding={name!r} (where the GPU takes it), or call "
                "fpx.mma(A, B, C, arch=...), which takes FP8 arrays"
            )
        if spec.takes_rounding:  # the tensor cores (pass 34: accumulate= was advised)
            reads = (
                "FP6 and FP4 block-scaled only (fpx.mma(A, B, C, arch='b200', scale_a=..., "
                "scale_b=...))"
                if small
                else "the input formats of their GPU (fpx.gpus())"
            )
            raise ValueError(
                f"{op}: order {spec.name!r} takes no {name} data ({kind}): the tensor cores "
                f"read {reads}; the orders that add in it: {', '.join(ROUNDED)} and exact"
            )
        convert = ", or convert the data: x.astype(np.float32)" if small else ""
        raise ValueError(
            f"{op}: order {spec.name!r} does not accumulate in {name} (the data's format, "
            f"{kind}): the orders that do: {', '.join(ROUNDED)} and exact; in another order "
            f"give accumulate= (e.g. 'float32'; in a variant spec '{spec.name}@float32')"
            f"{convert}"
        )
    return name


def rounded_only(acc: FormatInfo) -> bool:
    """Whether only the rounded kernels accumulate in ``acc``: fpx.format's formats and the
    OCP FP8, FP6 and FP4 formats held in float32 (not AMD's FNUZ FP8, which has no -0, nor
    E8M0, which has no zero)."""
    return acc.user_defined or acc.name in HELD_FORMATS


def held_accumulators() -> tuple[str, ...]:
    """The formats held in float32 that accumulate (in the rounded kernels): OCP's FP8, FP6
    and FP4."""
    return HELD_FORMATS


def _kind(acc: FormatInfo) -> str:
    return "a format of fpx.format" if acc.user_defined else "a format held in float32"


def rounded_accumulator(accumulate, spec, op: str, fused: bool = False) -> FormatInfo | None:
    """``accumulate`` where it names a format only the rounded kernels accumulate in
    (:func:`rounded_only`; else None): accepted for the orders of sum and dot with
    ``run_rounded`` (each addition rounded once from its exact value, by TwoSum: right at any
    precision, where rounding a float64 sum would round twice; the format's own overflow:
    inf, NaN or saturation; dot: where its products are exact in float64); refused
    elsewhere, naming ``accumulate``."""
    try:
        acc = format_info(accumulate)
    except (TypeError, ValueError):  # (None; accumulator_format names an unknown format)
        return None
    if not rounded_only(acc):
        return None
    if op not in ROUNDED_OPS or spec.run_rounded is None:
        accumulator_format(acc, acc)  # the ValueError naming the orders that take it
    if fused:  # (the accumulation named, not accumulate=: FP8 data's own, pass 20)
        raise ValueError(
            f"fma=True with {acc.name!r} accumulation ({_kind(acc)}) is not "
            "emulated: its products are rounded to it, then added (fma=False)"
        )
    if op != "sum" and not products_exact(acc):
        raise ValueError(
            f"accumulate: {acc.name!r} (precision {acc.precision}, emax {acc.emax}): a {op} "
            "product accumulates in a format of fpx.format whose products float64 holds "
            "exactly (precision <= 26, emax <= 511, emin - precision + 1 >= -537)"
        )
    return acc


def rounds_in_float64(acc: FormatInfo) -> bool:
    """Whether rounding the float64 sum (or the exact float64 product) of two of ``acc``'s
    values to ``acc``, nearest-even, is rounding the exact value: precision <= 25 (53 >= 2p
    + 2: Figueroa, "When is double rounding innocuous?", 1995) with subnormals, far from
    float64's range (emax < 960); the 16-bit kernels' rounding then serves it."""
    return acc.precision <= 25 and acc.subnormals and acc.emax < 960


def in_float64_kernels(acc: FormatInfo | None, mode: str = "nearest_even") -> bool:
    """Whether an accumulator of the rounded kernels (:func:`rounded_accumulator`) adds in
    the 1-D orders' own kernels, bit for bit: nearest-even, :func:`rounds_in_float64`, and
    IEEE's overflow to inf (their rounding's), or E4M3's NaN through :func:`past_max` (not
    FP6's and FP4's saturation, after which a sum goes on)."""
    return (
        acc is not None and mode == "nearest_even" and rounds_in_float64(acc)
        and acc.overflow in ("inf", "nan")
    )  # fmt: skip


def past_max(r, acc: FormatInfo | None):
    """A kernel's result ``r`` in an accumulator whose rounding past its largest value is NaN
    (E4M3): NaN where ``r`` is not finite. The kernels round past it to ±inf (their
    ``vmax``: 464 ties down to 448, as E4M3), and nothing after brings a sum back from ±inf
    or NaN; E4M3 has no infinity among its inputs. Else ``r``."""
    if acc is not None and acc.overflow == "nan" and not np.isfinite(r):
        return type(r)(np.nan)
    return r


def products_exact(acc: FormatInfo) -> bool:
    """Whether float64 holds every product of two values of ``acc`` exactly (no rounding,
    overflow or underflow): a dot rounds such a product once, to ``acc``."""
    return 2 * acc.precision <= 53 and acc.emax <= 511 and acc.emin - acc.precision + 1 >= -537


def to_storage(x: np.ndarray, ar: Arith) -> np.ndarray:
    """x's values in the accumulator format, as a contiguous array of the storage dtype."""
    if x.dtype != ar.info.dtype or not ar.info.storage:  # (held in float32 or float64)
        x = np.asarray(as_format(x, ar.info))
    return np.ascontiguousarray(x, dtype=ar.storage)


def finish(value, out: FormatInfo):
    """A compute-type scalar rounded once to the output format, as a NumPy scalar."""
    return np.asarray(as_format(np.float64(value), out.name))[()]


def kernels():
    """The compiled kernels (numba is imported on first use only)."""
    from . import _kernels

    return _kernels


def rounded_kernels():
    """The compiled loops of the orders' additions in another rounding mode (numba is
    imported on first use only)."""
    from . import _rounded_kernels

    return _rounded_kernels


def cub_config(params: dict, acc: FormatInfo) -> tuple:
    """(threads, items, vector, aligned, tree) with CUB's per-type defaults (Policy600 with
    MemBoundScaling: 16 items for 4-byte types, 32 for 2-byte, 8 for 8-byte; ThreadReduce is a
    binary tree for types under 8 bytes in CCCL >= 2.8, sequential otherwise)."""
    items = params["items"]
    if items is None:
        items = {2: 32, 4: 16, 8: 8}[acc.bits // 8]
    vector = params["vector"]
    if items % vector:
        raise ValueError(f"items ({items}) must be a multiple of vector ({vector})")
    tree = params["thread_reduce"]
    if tree is None:
        tree = "tree" if acc.bits < 64 else "sequential"
    return params["threads"], items, vector, bool(params["aligned"]), tree == "tree"


# ----------------------------------------------------------------------------- the rules


def accumulate_applies(spec) -> bool:
    """Whether ``accumulate`` is a setting of order ``spec``: not of the exact order
    (correctly rounded) nor of a library's own loop (its own accumulators)."""
    return spec.kind != "exact" and spec.library is None


def fma_applies(op: str, spec) -> bool:
    """Whether ``fma=True`` changes order ``spec`` of ``op``: a product feeds an accumulator."""
    return op in PRODUCT_OPS and spec.library is None and spec.fma


def order_keywords(op: str, spec) -> set:
    """The op-wide keyword arguments (compare's op parameters) order ``spec`` of ``op`` takes:
    its parameters, and ``accumulate``, ``fma``, ``input_rounding`` and ``split_k`` where
    they apply (the settings its variant spec may have)."""
    keys = set(spec.params) | ({"accumulate"} if accumulate_applies(spec) else set())
    if fma_applies(op, spec):
        keys.add("fma")
    if op in PRODUCT_OPS:
        keys.add("input_rounding")
    if split_k_applies(op, spec):
        keys.add("split_k")
    return keys


def matmul_by_columns(spec, ar: Arith) -> bool:
    """Whether matmul runs order ``spec`` in ``ar`` with the kernel that takes a row of A
    against tiles of B's columns (``matmul_columns``: float16 and bfloat16 accumulators, the
    orders of the matmul kernel) rather than element by element (``matmul``); the bits are
    the same."""
    return spec.matmul_code is not None and ar.rp[0] != 0


def split_k_applies(op: str, spec) -> bool:
    """Whether ``split_k`` is a setting of order ``spec`` of ``op`` (a matmul kernel's order)."""
    return op == "matmul" and spec.matmul_code is not None


def check_fma(spec, fma, op: str, fusable=(), *, written: str = "fma=True", of: str = "") -> bool:
    """``fma`` checked for ``op`` and the order ``spec`` (TypeError unless True or False,
    ValueError where it would change nothing); ``fusable``: the names of the orders where it
    applies (for the message); ``written``: the setting as the caller wrote it; ``of``: what
    the order belongs to, for the message (default ``op``)."""
    if not checks.boolean("fma", fma):
        return False
    if op not in PRODUCT_OPS:
        raise ValueError(
            f"{written} applies where a product feeds an accumulator: dot and matmul, not "
            f"{op}; a {op} has none"
        )
    if spec.library is not None:
        raise ValueError(
            f"{written} is not a setting of order {spec.name!r}: it "
            + (
                spec.fixed
                or "is a library's own loop, whose kernel decides where it fuses (see its "
                "parameters, e.g. kernel=)"
            )
        )
    if not spec.fma:
        raise ValueError(
            f"{written} does not change order {spec.name!r} of {of or op}: no product feeds an "
            f"accumulator there (each product is rounded first); orders where it does: "
            f"{', '.join(fusable)}"
        )
    return True


def check_combine(op: str, combine, prefix: str = "") -> None:
    """A matmul (and what reduces with one) combines tree blocks in order: ``combine`` other
    than "sequential" is refused there. ``prefix``: what the message starts with."""
    if op == "matmul" and combine != "sequential":
        raise ValueError(
            f"{prefix}matmul combines tree blocks sequentially; combine=atomic is for sum and dot"
        )


def check_split_k(op: str, spec, split_k, k: int | None = None):
    """``split_k`` checked for order ``spec`` of ``op``: None, or an integer from 1 (to ``k``
    where the data is known) for an order of the matmul kernel. TypeError for a non-integer;
    ValueError out of range or where it does not apply (saying why)."""
    if split_k is None:
        return None
    if op != "matmul":
        raise ValueError(f"split_k applies to matmul (cutting k into slices), not {op}")
    if spec.kind == "exact":
        raise ValueError("split_k does not apply to the exact order (it is correctly rounded)")
    if not split_k_applies(op, spec):
        why = (
            "its blocks of k are chained through the tensor cores' own float32 result"
            if spec.library is not None
            else "its tree is all of k"
        )
        raise ValueError(f"split_k does not apply to order {spec.name!r}: {why}")
    return checks.integer("split_k", split_k, 1, None if k is None else max(k, 1))


def check_input_rounding(rounding, op: str | None = None, *, written: str = ""):
    """``rounding`` checked: None or one of ``INPUT_ROUNDINGS`` (TypeError for a non-string);
    with ``op``, refused where there are no products to round the inputs of. A NumPy or
    ml_dtypes type or dtype is its format's name (ml_dtypes.bfloat16: "bfloat16")."""
    rounding = format_name(rounding)
    if rounding is None:
        return None
    if not isinstance(rounding, str):
        raise TypeError(
            f"input_rounding must be {INPUT_ROUNDINGS_TEXT}, got {checks.shown(rounding)}"
        )
    if rounding not in INPUT_ROUNDINGS:
        raise ValueError(
            f"input_rounding must be {INPUT_ROUNDINGS_TEXT}, got {checks.shown(rounding)}"
        )
    if op is not None and op not in PRODUCT_OPS:
        raise ValueError(
            f"input rounding ({written or rounding}) applies to the inputs of products: dot and "
            f"matmul, not {op}"
        )
    return rounding


def check_accumulate(spec, accumulate, written: str = "accumulate") -> None:
    """``accumulate`` refused where it is no setting: the exact order (correctly rounded)
    and a library's own loop (``spec.library``, its own accumulators). ``written``: the
    setting as the caller wrote it (``"@float32"``)."""
    if accumulate is not None and spec.kind == "exact":
        raise ValueError(
            f"{written} does not apply to the exact order: it is correctly rounded, with no "
            "accumulator"
        )
    if accumulate is not None and spec.library is not None:
        raise ValueError(
            f"{written} does not apply to order {spec.name!r}: it "
            + (spec.fixed or "is a library's own loop, with the accumulators of that library")
        )


def check_rounding(
    spec, op: str, rounding, params: dict, roundable=(), *, written: str = ""
) -> tuple[str, int | None]:
    """The rounding mode of the additions of order ``spec`` of ``op`` (``fpx.sum``'s
    ``rounding=``, one of ``ROUNDING_MODES``) and, for "stochastic", its seed, taken out of
    ``params`` (the order's keyword arguments). TypeError for a non-string; ValueError for an
    unknown mode, a mode other than nearest-even where the order has no other (``roundable``:
    the orders that have, for the message), "stochastic" without ``seed`` and, in those
    orders, ``seed`` without it (elsewhere ``seed`` is the order's own parameter, or unknown
    to it). ``written``: the spec the setting
    came from, for the message."""
    where = f"{written}: " if written else ""
    mode = rounding_mode(rounding, where)
    if mode != "nearest_even" and (op != "sum" or spec.run_rounded is None):
        raise ValueError(
            f"{where}rounding={mode!r} is not a setting of order {spec.name!r} of {op}: its "
            f"additions round to nearest-even; the orders of sum that take rounding=: "
            f"{', '.join(roundable) or 'none'}"
        )
    if mode == "stochastic":
        if params.get("seed") is None:
            raise ValueError(
                f"{where}rounding='stochastic' needs seed= (an integer): the draws are "
                "np.random.default_rng(seed).random(), one per addition"
            )
        return mode, checks.seed(params.pop("seed"))
    if "seed" in params and "seed" not in spec.params and spec.run_rounded is not None:
        raise ValueError(f"{where}seed= is for rounding='stochastic' only; rounding is {mode!r}")
    return mode, None
