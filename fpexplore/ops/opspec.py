"""What an op is to an experiment: one :class:`OpSpec` per op, defined in the op's own module
beside its implementation, and the GPU recordings made of it (:class:`Recording`).

An op module exports ``OP_TABLE``, an :class:`OpTable` of its specs; :mod:`fpexplore.ops.registry`
finds the op modules of this package and lists their tables (nothing registers itself). A
spec holds everything :func:`fpexplore.compare`, the explorer, the CuPy backend and the
recorder need about the op: its variants, how its inputs are generated, how a variant runs,
NumPy's own call, the exact reference, the CuPy counterpart and the recording cases. Adding
an op is adding a module with an ``OP_TABLE`` (and its tests).

The variants of a spec run from a *parsed* variant spec (:func:`fpexplore.parse_spec` gives
one; anything with ``name`` and ``kwargs()``) or a plain variant name: the grammar of
variant specs sits above the ops (it checks names against this registry).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

from .. import checks, machine
from .._registry import INFO, SMALL_DTYPES
from ..formats import (
    FORMATS,
    FormatInfo,
    as_format,
    coerce,
    format_info,
    format_name,
    refuse_big_endian,
)
from ..held import held, held_data_formats, result_format
from ..userformat import check_held
from .variant import Variant

__all__ = ["OpSpec", "OpTable", "Params", "Recording", "Reduction", "data_format", "pick"]

MAX_BYTES_FRACTION = 0.5  # check_size: use at most half of the available memory


class Params(dict):
    """An op's keyword parameters (``compare(op, **params)``) that remember which keys the
    code that ran looked for (``taken``), so that ``compare`` can refuse the ones nothing
    used (a typo, a parameter of another variant) instead of running without them."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.taken: set = set()

    def get(self, key, default=None):
        self.taken.add(key)
        return super().get(key, default)

    def __getitem__(self, key):
        self.taken.add(key)
        return super().__getitem__(key)

    def __contains__(self, key):
        self.taken.add(key)
        return super().__contains__(key)

    def unused(self) -> list:
        return sorted(set(self) - self.taken)


def with_settings(kw: dict, settings: dict, orders_of: str) -> dict:
    """The op-wide keyword arguments ``kw``, then a spec's ``settings`` (they win); an
    op-wide ``accumulate`` left out where the order (of ``orders_of``'s orders) takes none
    (the exact order), and another order's parameters where this order (named, or
    "sequential") has none, as each variant keeps the op-wide arguments it takes."""
    from ..orders import registry
    from ..orders.arith import accumulate_applies

    kw = {**kw, **settings}
    name = kw.get("order", "sequential")
    orders = registry.orders_of(orders_of)
    order = orders.get(name) if isinstance(name, str) else None
    if "accumulate" not in settings and order is not None and not accumulate_applies(order):
        kw.pop("accumulate", None)
    if order is not None:  # another order's parameter (block= beside 'sequential', pass 20)
        other = {p for o in orders.values() for p in o.params} - set(order.params)
        kw = {k: v for k, v in kw.items() if k not in other or k in settings}
    return kw


def pick(params: Mapping, keys) -> dict:
    """The items of ``params`` whose key is one of ``keys`` (taken, where ``params`` is a
    :class:`Params`)."""
    keys = set(keys)
    if isinstance(params, Params):
        params.taken |= keys
    return {k: v for k, v in params.items() if k in keys}


@dataclass(frozen=True)
class Recording:
    """Results ``python -m fpexplore.record`` stores for the replay backend: on the op's inputs
    (``OpSpec.inputs``, seed 0, no parameters) for every format, distribution and size, each
    of ``calls`` — ``(label, args)``: the op's CuPy counterpart called with ``args(inputs)``,
    stored under ``label`` — and, with ``kernels``, fpexplore's own order kernels on the first
    call's arrays (a second array makes them dot products; float32 and float64 only).
    ``quick_sizes``: the sizes of ``--quick``. ``env``: run in a fresh process with these
    environment variables (CuPy reads ``CUPY_TF32`` once per process); such recordings come
    after the others."""

    formats: tuple
    sizes: tuple
    calls: tuple  # ((label, args(inputs) -> tuple), ...)
    distributions: tuple = ("uniform",)
    quick_sizes: tuple | None = None
    kernels: bool = False
    env: Mapping = field(default_factory=dict)

    def sizes_for(self, quick: bool) -> tuple:
        return self.quick_sizes if quick and self.quick_sizes is not None else self.sizes


def _none(*args):
    return None


@dataclass(frozen=True)
class Reduction:
    """An op that adds terms, as fpexplore.inference (explain's engine) sees it.

    orders : the op whose evaluation orders compute it ("sum" for the mean)
    products : each term is the product of two inputs (dot, matmul)
    matrix : the result is a matrix of such sums, over A's columns and B's rows (matmul)
    divides : the sum is divided by the number of terms (mean)
    """

    orders: str
    products: bool = False
    matrix: bool = False
    divides: bool = False

    def length(self, arrays) -> int:
        """The number of terms each result element adds."""
        return arrays[0].shape[1] if self.matrix else arrays[0].size

    def check_shapes(self, op: str, arrays, who: str = "") -> None:
        """ValueError (``who`` first) where ``arrays`` are not ``op``'s: dot's two 1-D arrays
        of one length, matmul's (m, k) and (k, n)."""
        if not self.products:
            return
        a, b = arrays
        if self.matrix:
            ok = a.ndim == b.ndim == 2 and a.shape[1] == b.shape[0]
            need = "(m, k) and (k, n) arrays"
        else:
            ok = a.ndim == b.ndim == 1 and a.shape == b.shape
            need = "two 1-D arrays of equal length"
        if not ok:
            raise ValueError(f"{who}{op} takes {need}, got {a.shape} and {b.shape}")


# why a big-endian array is refused where it would be reduced (compare's inputs, the app's)
REDUCED_AS_NUMPY = (
    ": NumPy reduces such an array through its cast buffer (np.sum in 8192-element chunks), "
    "not as the same values in this machine's byte order, which fpexplore computes on"
)


def _in_format(value, fmt: str, arg: str) -> np.ndarray:
    """Python numbers or lists named with the IEEE format ``fmt`` (compare's format=) as an
    array of it where they are its values (pass 34: they were float64, and the advice was to
    leave format out); else a ValueError naming them."""
    (arr,), _ = coerce(value, what=arg)
    with np.errstate(all="ignore"):
        off = np.asarray(as_format(arr, fmt), dtype=np.float64) != arr
    if (off & ~np.isnan(arr)).any():
        bad = float(arr[off].reshape(-1)[0]) if arr.ndim else float(arr)
        raise ValueError(
            f"{arg} holds {bad!r}, which is not a value of {fmt}; round it first with "
            f"fpx.as_format(x, {fmt!r})"
        )
    return arr.astype(format_info(fmt).dtype)


def _user_arrays(op_spec, values: list, names: list, what: str, named) -> tuple[list, FormatInfo]:
    """The user's input arrays in one format (:func:`fpexplore.formats.coerce`), or where the
    op takes them (sum, dot, matmul, mean), as FP8, FP6 or FP4 arrays in ml_dtypes' type:
    theirs, and Python numbers and lists beside them or with the format ``named`` in its
    type where they are its values (pass 34: a list beside FP8 data was float64)."""
    for k, v in zip(names, values):
        refuse_big_endian(v, f"{what}: inputs[{k!r}]", k, REDUCED_AS_NUMPY)
    labels = tuple(f"inputs[{k!r}]" for k in names)
    if named in FORMATS and not any(hasattr(v, "dtype") for v in values):  # (a Series: pass 35)
        values = [_in_format(v, named, f"{what}: {k}") for v, k in zip(values, labels)]
    small = held(values, what, labels, named) if op_spec.formats() != FORMATS else None
    if small is not None:
        t = SMALL_DTYPES[small[1]]
        kept = [v if getattr(v, "dtype", None) == t else np.asarray(w).astype(t)
                for v, w in zip(values, small[0])]  # fmt: skip
        return kept, format_info(small[1])
    return coerce(*values, what=what, names=tuple(f"inputs[{k!r}]" for k in names))


def _named(format, inputs, what: str):  # noqa: A002
    """The format named with the user's inputs: ``format`` (compare's; a dtype by its name),
    else a dict's ``"format"`` (``Comparison.inputs``), checked: two that differ or an
    unknown name are a ValueError (pass 29: an unknown name gave a float64 comparison)."""
    format = format_name(format)  # noqa: A001  (np.float32 is "float32")
    named = inputs.get("format") if isinstance(inputs, dict) else None
    if named is None:
        return format
    if format is not None and format != named:
        raise ValueError(
            f"{what}: format={checks.shown(format)} but inputs['format'] is "
            f"{checks.shown(named)}: give one of them"
        )
    if not isinstance(named, str) or named not in INFO:
        raise ValueError(
            f"{what}: inputs['format']: unknown format {checks.shown(named)} (a format of your "
            f"own? define it first: fpx.format(precision=..., emax=..., name={named!r}))"
        )
    return named


def _yours(op_spec, fmt, listed, values: list, names: list, info, what: str) -> FormatInfo:
    """The format of the user's arrays ``values`` (of format ``info``, named ``names``):
    ``info``, or where ``fmt`` (the format named with them) is one of ``fpx.format``'s, that
    one where the op takes it and they are float64 arrays of its values, else the error that
    says which is not; ``listed``: the inputs are a dict that names ``fmt``, which must then
    be their format (compare checks its own ``format=``)."""
    if listed and fmt != info.name and not INFO[fmt].user_defined:
        raise ValueError(
            f"{what}: inputs['format'] is {fmt!r} but the arrays are {info.name}: leave it "
            "out, or give arrays of that format"
        )
    if not (isinstance(fmt, str) and fmt in INFO and INFO[fmt].user_defined):
        return info
    data_format(op_spec, fmt)
    if info.name != "float64":
        raise TypeError(
            f"{what}: format {fmt!r} (fpx.format) is held in float64 arrays; the inputs are "
            f"{info.name}: give float64 arrays of its values (fpx.as_format(x, {fmt!r}))"
        )
    for k, v in zip(names, values):  # (the message: "... inputs['x'] holds 0.1, which ...")
        check_held(v, fmt, what, what, f"inputs[{k!r}]")
    return format_info(fmt)


@dataclass(frozen=True, eq=False)
class OpSpec:
    """Everything an experiment needs about one op.

    Callables (plain functions of the op's module):

    - ``inputs(n, fmt, distribution, seed, params) -> dict``: the generated inputs, with the
      key ``"format"`` (the format name).
    - ``call(name, settings, inputs, params)``: the variant ``name`` with its spec's
      ``settings`` (``VariantSpec.kwargs()``: they take precedence over ``params``, the
      op-wide keyword arguments of ``compare``, each variant keeping those it takes).
    - ``reference(inputs, params, fmt)``: the correctly rounded result in format ``fmt``.
    - ``numpy(inputs, params)``: NumPy's own function, or None (labelled ``numpy_label``).
    - ``cupy(cp, *args, **kwargs)``: CuPy's own function for the op on device arrays
      (``cp`` the cupy module), what ``backends.cupy.library(op, ...)`` calls, or None.
      ``gpu_args(inputs, params) -> args``: its arguments (a tuple) in ``compare``'s cupy
      backend (labelled ``gpu_label``); None: compare shows no CuPy row for the op.
    - ``bounds_of(inputs, fmt) -> dict | None``: the error bounds ``sweep`` overlays.
    - ``size_of(n, itemsize) -> bytes``: the memory a size needs (default n * bytes_per_element).
    - ``available(fmt) -> list``: the variants for inputs of format ``fmt`` (default: all
      but those ``unsupported`` lists for it).

    ``default_variants``: compare's selection when none is given (default: all);
    ``unsupported``: format -> variants that do not exist for it; ``max_n``: the largest
    size; ``default_n``: the explorer's first size; ``orders``: the variants are the
    evaluation orders of ``fpx.orders(name)``; ``rank``: where the explorer lists it (lower
    first; then by module name and the module's own order); ``settings``: variant name ->
    :class:`~fpexplore.ops.variant.Settings`, what its variant spec may say (none: no
    parameters, no ``+fma``, no ``@ACCUMULATOR``); ``kernels(name, settings, info)``: the
    compiled kernels the variant calls for inputs of format ``info``, as
    :func:`fpexplore.orders.registry.kernel_needs` lists them (fpexplore.warmup announces a
    first compile from it; None: no kernels). ``keywords``: compare's op parameters the op's
    own code reads for every variant (cdist's ``d``, linspace's ``endpoint``), beside those
    its variants take as settings, each with its check (:meth:`checked_keywords`): what the
    explorer accepts, and compare checks, before anything runs.
    """

    name: str
    description: str
    variants: Mapping[str, Variant]
    inputs: Callable
    call: Callable
    reference: Callable
    numpy: Callable | None = None
    numpy_label: str | None = None
    cupy: Callable | None = None
    gpu_args: Callable | None = None
    gpu_label: str = ""
    recordings: tuple = ()
    default_variants: tuple = ()
    unsupported: Mapping = field(default_factory=dict)
    max_n: int = 10**7
    default_n: int = 100_000  # live on a 2-core laptop
    bytes_per_element: float = 64.0  # generous: inputs, outputs, reference and temporaries
    size_of: Callable | None = None
    available: Callable | None = None
    bounds_of: Callable = _none
    orders: bool = False
    rank: int = 100
    settings: Mapping = field(default_factory=dict)  # variant -> Settings (its spec's parts)
    kernels: Callable | None = None  # (name, settings, info) -> compiled kernels it calls
    reduction: Reduction | None = None  # an op that adds terms: what explain's engine needs
    # compare's op parameters the op reads whatever the variant: name -> its check (the
    # value, or a ValueError/TypeError naming it), None where its variants' specs check it
    keywords: Mapping = field(default_factory=dict)

    def __post_init__(self):
        if not isinstance(self.variants, Mapping):  # a list of Variant
            object.__setattr__(self, "variants", {v.name: v for v in self.variants})
        unknown = [v for v in self.default_variants if v not in self.variants]
        if unknown:
            raise ValueError(f"{self.name}: default variants {unknown} are not variants")

    @property
    def op(self) -> str:
        return self.name

    def replace(self, **changes) -> OpSpec:
        """A copy with some fields changed (tests: other recording sizes, ...)."""
        return dataclasses.replace(self, **changes)

    def bytes_needed(self, n: int, itemsize: int) -> int:
        if self.size_of is not None:
            return int(self.size_of(n, itemsize))
        return int(n * self.bytes_per_element)

    def checked_keywords(self, params: Mapping) -> dict:
        """``params`` with the op's own keywords checked (each its check's value; the
        others as given, for the variants' specs to check)."""
        return {k: self.keywords[k](v) if self.keywords.get(k) else v for k, v in params.items()}

    def formats(self) -> tuple:
        """The data formats compare takes for the op: ``FORMATS``, and the held ones
        (FP8, ..., fpx.format's) in which its ``available`` variants compute."""
        held = held_data_formats() if self.available is not None else ()
        return FORMATS + tuple(f for f in held if self.variants_for(f))

    def check_size(self, n: int, fmt: str) -> None:
        """Refuse a size beyond the op's limit (``max_n``) or one whose data would not fit
        in memory (``bytes_needed`` against half of what
        :func:`fpexplore.machine.available_memory` leaves), before anything is allocated."""
        checks.integer("n", n, 1)
        if n > self.max_n:
            raise ValueError(f"n={n} is too large for {self.op}: the limit is {self.max_n}")
        need = self.bytes_needed(int(n), format_info(fmt).bits // 8)
        budget = int(machine.available_memory() * MAX_BYTES_FRACTION)
        if need > budget:
            max_n = int(n * budget / need)
            raise ValueError(
                f"n={n} needs about {need / 2**30:.1f} GiB for {self.op} but only "
                f"{budget / 2**30:.1f} GiB may be used here; the limit is about n={max_n}"
            )

    @cached_property
    def input_names(self) -> tuple:
        """The names of the op's inputs, in order (the keys its ``inputs`` generates)."""
        return tuple(k for k in self.inputs(4, "float32", "uniform", 0, Params()) if k != "format")

    def numpy_of(self, arrays: tuple):
        """NumPy's own function (``numpy``) on the op's input arrays given in order."""
        return self.numpy(dict(zip(self.input_names, arrays)), Params())

    def user_inputs(self, inputs, *, what: str, format=None) -> tuple[dict, str, int]:  # noqa: A002
        """``(inputs dict, format name, n)`` of the user's own inputs for this op: an array
        (one-input ops), a tuple or list in the op's input order, or a dict of its input
        names (as ``Comparison.inputs`` holds them). The arrays are kept as they are (no
        copy, no change); masked arrays, mixed formats, missing or unknown names are
        refused. Float64 arrays of a format of fpx.format's values are of it where it is
        named (``format``, or the dict's ``"format"``)."""
        probe = self.inputs(4, "float32", "uniform", 0, Params())
        names = self.input_names
        if isinstance(inputs, dict):
            given = {k: v for k, v in inputs.items() if k != "format"}
            missing = [k for k in names if k not in given]
            unknown = sorted(set(given) - set(names), key=str)
            if missing or unknown:
                raise ValueError(
                    f"{what}: {self.name} takes inputs {', '.join(names)}"
                    + (f"; missing {', '.join(missing)}" if missing else "")
                    + (f"; unknown {', '.join(map(repr, unknown))}" if unknown else "")
                )
            given = {k: given[k] for k in names}  # in the op's order (pass 24: B@A for {B, A})
        elif isinstance(inputs, (tuple, list)) and not (
            len(names) == 1 and inputs and not hasattr(inputs[0], "__len__")
        ):
            if len(inputs) != len(names):
                raise ValueError(
                    f"{what}: {self.name} takes {len(names)} inputs ({', '.join(names)}), "
                    f"got {len(inputs)}"
                )
            given = dict(zip(names, inputs))
        elif len(names) == 1:
            given = {names[0]: inputs}
        else:
            raise TypeError(
                f"{what}: {self.name} takes inputs {', '.join(names)}: give a tuple or a dict"
            )
        numeric = [k for k in names if isinstance(probe[k], (np.ndarray, np.generic))]
        named = _named(format, inputs, what)
        arrays, info = _user_arrays(self, [given[k] for k in numeric], numeric, what, named)
        listed = isinstance(inputs, dict) and inputs.get("format") is not None
        info = _yours(self, named, listed, arrays, numeric, info, what)  # (lists: pass 36)
        out = {"format": info.name, **given}
        for k, arr in zip(numeric, arrays):
            if len(numeric) > 1 and isinstance(probe[k], np.ndarray) and arr.ndim != probe[k].ndim:
                raise ValueError(
                    f"{what}: {self.name}'s input {k} must be {probe[k].ndim}-D, got shape "
                    f"{arr.shape}"
                )
            if isinstance(probe[k], np.generic):  # a scalar input (linspace's start, stop)
                if arr.ndim:
                    raise ValueError(
                        f"{what}: {self.name}'s input {k} must be a scalar, got shape {arr.shape}"
                    )
                arr = arr[()]
            out[k] = arr
        _check_inner(self.name, out, what)
        first = out[numeric[0]] if numeric else None
        if self.name == "matmul":
            n = int(first.shape[1])  # the inner dimension: the length of every sum
        elif "num" in out:  # linspace (NumPy's int64 as Python's int: pass 32)
            n = out["num"] = checks.integer("num", out["num"], 1)
        elif first is not None and first.ndim > 1 and probe[numeric[0]].size != 4:
            n = int(first.shape[0])  # rows (cdist)
        else:
            n = int(np.size(first))
        return out, info.name, n

    def lookup(self, variant: str) -> Variant:
        """The Variant, or ValueError listing the valid names."""
        if variant not in self.variants:
            raise ValueError(
                f"unknown variant {checks.shown(variant)} for {self.name}; valid variants: "
                f"{', '.join(self.variants)}"
            )
        return self.variants[variant]

    def variants_for(self, fmt: str) -> list[str]:
        """The variants that exist for inputs of format ``fmt``."""
        if self.available is not None:
            return list(self.available(fmt))
        skip = self.unsupported.get(fmt, ())
        return [v for v in self.variants if v not in skip]

    def defaults_for(self, fmt: str | None = None) -> list[str]:
        """compare's variants when none are given, those that exist for ``fmt``."""
        chosen = list(self.default_variants) or list(self.variants)
        return [v for v in chosen if fmt is None or v in self.variants_for(fmt)]

    def run(self, variant, inputs: dict, params: dict):
        """Run ``variant`` — a parsed variant spec (``name`` and ``kwargs()``) or a plain
        variant name — on ``inputs``."""
        if isinstance(variant, str):
            if variant not in self.variants:
                raise ValueError(
                    f"{checks.shown(variant)} is not a variant of {self.name}: give a "
                    f"variant name or a "
                    f"spec parsed by fpexplore.parse_spec(text, {checks.shown(self.name)})"
                )
            return self.call(variant, {}, inputs, params)
        return self.call(variant.name, variant.kwargs(), inputs, params)

    def bounds(self, inputs: dict, fmt: str):
        return self.bounds_of(inputs, fmt)

    def reference_for(self, inputs: dict, out, params: dict, cache: dict):
        """The reference in the format of ``out`` (or of the inputs when out is None). A
        library may return another format than its inputs' (``np.matmul`` of bfloat16 gives
        float32): the reference is then the exact result rounded to that format, computed from
        the inputs widened exactly. A narrower output format is refused (no exact widening)."""
        fmt = result_format(out, inputs["format"]) if out is not None else inputs["format"]
        if fmt not in cache:
            if fmt == inputs["format"]:
                cache[fmt] = self.reference(inputs, params, fmt)
            else:
                src, dst = format_info(inputs["format"]), format_info(fmt)
                if dst.precision < src.precision or dst.emax < src.emax:
                    raise ValueError(
                        f"{self.name}: a {fmt} result of {src.name} inputs has no "
                        "exact reference here"
                    )
                theirs = (src.dtype, SMALL_DTYPES.get(src.name))  # (FP8: ml_dtypes' type)
                wide = {
                    k: np.asarray(as_format(v, fmt))
                    if isinstance(v, np.ndarray) and v.dtype in theirs
                    else v
                    for k, v in inputs.items()
                }
                wide["format"] = fmt
                cache[fmt] = self.reference(wide, params, fmt)
        return cache[fmt]


def data_format(op: OpSpec, value) -> str:
    """``value`` (a name, a NumPy or ml_dtypes type or dtype) as one of ``op.formats()``;
    else a ValueError naming ``format``, that says so of a format the registry holds (pass
    26: a format of fpx.format was an "unknown format")."""
    fmt, valid = format_name(value), op.formats()
    if isinstance(fmt, str) and fmt in INFO and fmt not in valid:
        hint = ""
        if INFO[fmt].user_defined and op.reduction and op.reduction.products:  # dot, matmul
            hint = (
                f" ({op.name} takes the data of a format of fpx.format whose products float64 "
                "holds exactly: precision <= 26 and emax <= 511)"
            )
        raise ValueError(
            f"format {fmt!r}: {op.name} takes no {fmt} data{hint}; "
            f"{op.name} takes: {', '.join(valid)}"
        )
    return checks.choice("format", fmt, valid, f"{op.name} takes")


class OpTable(dict):
    """op name -> OpSpec: the ops one module defines, in its order (``OpTable(spec, ...)``)."""

    def __init__(self, *specs: OpSpec):
        super().__init__((s.name, s) for s in specs)

    def lookup(self, op: str, variant: str) -> Variant:
        """The Variant of ``op``, or ValueError listing the valid names."""
        return self[op].lookup(variant)


def _check_inner(op: str, out: dict, what: str) -> None:
    """dot's a and b of one length, matmul's A columns matching B rows, pow's x and y
    broadcasting together (NumPy's own message would name neither input)."""
    if op == "pow":
        try:
            np.broadcast_shapes(out["x"].shape, out["y"].shape)
        except ValueError:
            raise ValueError(
                f"{what}: inputs['x'] of shape {out['x'].shape} and inputs['y'] of shape "
                f"{out['y'].shape} of pow do not broadcast together"
            ) from None
    if op == "dot" and out["a"].shape != out["b"].shape:
        raise ValueError(
            f"{what}: inputs['a'] and inputs['b'] of dot have lengths {out['a'].shape} and "
            f"{out['b'].shape}: a dot product needs equal lengths"
        )
    if op == "matmul" and out["A"].shape[1] != out["B"].shape[0]:
        raise ValueError(
            f"{what}: inputs['A'] has shape {out['A'].shape} and inputs['B'] "
            f"{out['B'].shape}: A's {out['A'].shape[1]} columns must match B's rows"
        )
