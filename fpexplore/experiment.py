"""Experiments: ``compare()`` runs an op's variants on generated data next to NumPy (and the
GPU, when there is one) and measures each result against the exact reference; ``sweep()``
does it over sizes. Both return tidy pandas tables (pandas is imported when they run).

Data: :func:`generate` draws ``n`` values of a format from a named distribution, seeded.
Every op is described by its *spec* (inputs, variants, NumPy's own call, the reference), in
its own module of :mod:`fpexplore.ops`, found by :mod:`fpexplore.ops.registry`.
"""

from __future__ import annotations

import html
import numbers
import os
import platform
import time
from dataclasses import dataclass, field

import numpy as np

from . import checks
from ._optional import require
from .backends import NAMES
from .data import DISTRIBUTIONS, check_choice, generate
from .formats import (
    FORMATS,
    ULP_NAN,
    as_format,
    bit_string,
    coerce,
    format_info,
    hex_string,
    shortest_repr,
    to_bits,
    ulp_distance,
)
from .metrics import summarize
from .numerics import clamp_ulps
from .ops.opspec import Params
from .ops.registry import get as get_op
from .spec import parse_spec

__all__ = ["DISTRIBUTIONS", "Comparison", "Diff", "Sweep", "compare", "diff", "generate", "sweep"]

BACKENDS = NAMES  # fpexplore/backends: numpy, emulated, cupy, replay, torch, jax, polars


_check = check_choice


def environment() -> dict:
    """The machine a run used (columns of every table): NumPy version, device, the CPU model
    and its floating-point flags, its SIMD level as NumPy dispatches it, NumPy's BLAS kernel
    and threads."""
    m = _machine()
    simd = m["numpy_simd"]
    blas = m["blas"]
    return {
        "numpy_version": np.__version__,
        "device": f"CPU ({platform.machine()}, {os.cpu_count()} cores)",
        "cpu": m["cpu"]["model"],
        "cpu_flags": " ".join(m["cpu"]["flags"]),
        "simd": (simd["dispatch_found"] or simd["baseline"] or ["none"])[-1],
        "blas_kernel": f"{blas['library']} {blas['version']} {blas['architecture']}",
        "blas_threads": blas["threads"],
    }


_MACHINE: list = []


def _machine() -> dict:
    """fpexplore.machine.machine_info(), once per process (the CPU does not change)."""
    if not _MACHINE:
        from .machine import machine_info

        _MACHINE.append(machine_info())
    return _MACHINE[0]


@dataclass(repr=False)
class Comparison:
    """The outcome of :func:`compare`: ``table`` (a pandas DataFrame, one row per result),
    ``results`` (the raw outputs by label), ``reference`` (the correctly rounded result in
    the inputs' format), ``references`` (the reference in each format a result came in, by
    format name: ``np.matmul`` of bfloat16 gives float32, measured against the float32
    reference), ``inputs``, ``messages`` (e.g. an unavailable backend), and ``plot()``."""

    op: str
    format: str
    n: int
    table: object
    results: dict
    reference: object
    inputs: dict
    params: dict
    messages: list = field(default_factory=list)
    references: dict = field(default_factory=dict)

    def plot(self, kind: str = "auto", ax=None):
        """A matplotlib Figure: "bars" (ULP error per result, for scalar results), "hist"
        (ULP-error histogram per result), "heatmap" (per-element ULP errors of a matrix
        result), or "auto" (bars for scalars, heatmap for matmul, else hist)."""
        from . import plots

        return plots.plot_comparison(self, kind=kind, ax=ax)

    def snippet(self) -> str:
        """Python code that recreates this comparison with the public API."""
        if self.params.get("inputs") == USER_DATA:  # the user's own arrays, not drawn here
            args = [repr(self.op), "inputs=inputs"]
            args += [f"{k}={v!r}" for k, v in self.params.items() if k != "inputs"]
            return (
                "import fpexplore as fpx\n\n# inputs: your own arrays (user data: "
                f"{self.format}, n = {self.n}), as cmp.inputs holds them\n"
                "cmp = fpx.compare(" + ", ".join(args) + ")\ncmp"
            )
        args = [repr(self.op), f"format={self.format!r}", f"n={self.n}"]
        args += [f"{k}={v!r}" for k, v in self.params.items()]
        return "import fpexplore as fpx\n\ncmp = fpx.compare(" + ", ".join(args) + ")\ncmp"

    def formatted(self):
        """The table as people read it: a DataFrame of strings, the exact reference first.

        ``value`` is the shortest decimal that reads back as the same value in the result's
        own format (so results that differ in the last bit print differently), ``hex`` its
        bit pattern, ulp columns are integers, ``time_ms`` is warm (first-use compilation is
        ``compile_ms``). Displaying a :class:`Comparison` in Jupyter shows this table.
        """
        pd = require("pandas", "Comparison.formatted")

        t = self.table
        scalar = np.ndim(self.reference) == 0
        ref = {
            "variant": "exact (reference)",
            "backend": "reference",
            "value": shortest_repr(self.reference) if scalar else "",
            "hex": hex_string(self.reference) if scalar else "",
            "ulp_error": "0",
            "max_abs_ulp": "0",
            "mean_abs_ulp": "0",
            "exact_share": "1",
            "rel_error": "0",
            "bits_error": "0",
            "time_ms": "",
            "compile_ms": "",
        }
        rows = [ref]
        for _, r in t.iterrows():
            rows.append(
                {
                    "variant": r["variant"],
                    "backend": r["backend"],
                    "value": r["value_repr"] if scalar else f"array {self._shape(r)}",
                    "hex": r["value_hex"] if scalar else "",
                    "ulp_error": _int_text(r["ulp_error"]),
                    "max_abs_ulp": _int_text(r["max_abs_ulp"]),
                    "mean_abs_ulp": _num_text(r["mean_abs_ulp"], 3),
                    "exact_share": _num_text(r["exact_share"], 4),
                    "rel_error": _num_text(r["rel_error"], 3),
                    "bits_error": _num_text(r["bits_error"], 3),
                    "time_ms": _num_text(r["time_ms"], 3),
                    "compile_ms": _num_text(r["compile_ms"], 3) if r["compile_ms"] else "",
                }
            )
        out = pd.DataFrame(rows)
        out.attrs["note"] = TIMING_NOTE
        return out

    def diff(self, a, b, *, top: int = 10) -> Diff:
        """Two results against each other (the "CPU vs GPU diff" itself), not against the
        exact answer: which elements differ, by how many ulps, how often bitwise equal.

        ``a`` and ``b`` name results: a variant label (``"np.matmul"``, ``"sequential+fma"``)
        when one backend has it, ``"label (backend)"``, or a ``(label, backend)`` key of
        :attr:`results`. Returns a :class:`Diff`: ``summary`` (elements, bitwise-equal share,
        largest and mean |ulp| difference), ``table`` (the ``top`` largest differences: index,
        both values and their bits), ``ulps`` (signed ulps from a to b, per element) and
        ``plot()``. ``"exact (reference)"`` names the correctly rounded result (in the other
        result's format), so ``cmp.diff("exact (reference)", "pairwise")`` reads the bits of
        a result against the exact answer.
        """
        la, va = self._named(a, b)
        lb, vb = self._named(b, a)
        return diff_values(la, va, lb, vb, top=top)

    def reference_of(self, out):
        """The reference ``out`` was measured against: the exact result in ``out``'s format
        (``np.matmul`` of bfloat16 gives float32, measured against the float32 reference)."""
        fmt = format_info(np.asarray(out).dtype).name
        if fmt in self.references:
            return self.references[fmt]
        if np.asarray(out).dtype == np.asarray(self.reference).dtype:
            return self.reference
        raise ValueError(f"the comparison holds no {fmt} reference to measure this result against")

    def _named(self, name, other) -> tuple[str, np.ndarray]:
        """(label, value) of a result; the exact reference in the format of ``other``."""
        if name == EXACT_LABEL:
            if other == EXACT_LABEL:
                return EXACT_LABEL, np.asarray(self.reference)
            return EXACT_LABEL, np.asarray(self.reference_of(self.results[self._key(other)]))
        key = self._key(name)
        return "{} ({})".format(*key), np.asarray(self.results[key])

    def _key(self, name) -> tuple:
        if isinstance(name, tuple) and name in self.results:
            return name
        labels = {f"{v} ({bk})": (v, bk) for v, bk in self.results}
        if name in labels:
            return labels[name]
        matches = [k for k in self.results if k[0] == name]
        if len(matches) == 1:
            return matches[0]
        what = "is ambiguous" if matches else "is not a result here"
        raise ValueError(
            f"{checks.shown(name)} {what}; results: {', '.join([*labels, EXACT_LABEL])}"
        )

    def _shape(self, row) -> str:
        out = self.results.get((row["variant"], row["backend"]))
        return "x".join(str(d) for d in np.shape(out))

    def __repr__(self) -> str:  # a plain Python session: the rows, never whole arrays
        t = self.formatted()
        cols = [c for c in ("variant", "backend", "value_repr", "max_abs_ulp") if c in t]
        head = f"Comparison: {self.op}, {self.format}, n = {self.n}, {len(self.results)} results"
        extra = [f"  note: {m}" for m in self.messages]
        return "\n".join([head, t[cols].to_string(index=False), *extra])

    def _repr_html_(self) -> str:
        return (
            f"<p><b>{html.escape(self.op)}</b>, {html.escape(self.format)}, n = {self.n}</p>"
            + self.formatted().to_html(index=False, border=0, classes="fpx-table")
            + f"<p><small>{html.escape(TIMING_NOTE)}</small></p>"
        )


@dataclass(repr=False)
class Diff:
    """The outcome of :meth:`Comparison.diff`: result ``b`` measured against result ``a``."""

    a: str
    b: str
    format: str
    ulps: np.ndarray
    equal: np.ndarray
    values: tuple
    summary: dict
    table: object

    @property
    def bitwise_equal(self) -> float:
        """The share of elements whose bits are equal (1.0: the results are identical)."""
        return self.summary["equal_share"]

    @property
    def ulp_histogram(self):
        """Elements per signed ulp distance from a to b: a pandas Series indexed by the
        distance (0: bitwise equal; ``fpx.ULP_NAN``: exactly one of the two is NaN)."""
        pd = require("pandas", "Diff.ulp_histogram")
        values, counts = np.unique(self.ulps.reshape(-1), return_counts=True)
        return pd.Series(counts, index=pd.Index(values, name="ulps"), name="elements")

    def plot(self, kind: str = "auto", ax=None):
        """ "hist" (signed ulp differences, log counts), "heatmap" (matrix results) or
        "bits" (both values' bit patterns, for scalar results); "auto" picks by shape."""
        from . import plots

        return plots.diff_plot(self, kind=kind, ax=ax)

    def __repr__(self) -> str:
        s = self.summary
        return (
            f"Diff: {self.b} against {self.a} ({self.format}): {s['bitwise_equal']:,} of "
            f"{s['elements']:,} elements bitwise equal ({100 * s['equal_share']:.4g}%), "
            f"largest difference {s['max_abs_ulp']:,} ulps, mean {s['mean_abs_ulp']:.3g}"
            + (f", {s['nan_mismatches']} NaN mismatches" if s["nan_mismatches"] else "")
        )

    def _repr_html_(self) -> str:
        s = self.summary
        head = (
            f"<p><b>{html.escape(self.b)}</b> against <b>{html.escape(self.a)}</b> "
            f"({self.format}): {s['bitwise_equal']:,} of {s['elements']:,} elements bitwise "
            f"equal ({100 * s['equal_share']:.4g}%), largest difference "
            f"{s['max_abs_ulp']:,} ulps</p>"
        )
        return head + self.table.to_html(index=False, border=0, classes="fpx-diff")


EXACT_LABEL = "exact (reference)"


def diff(a, b, *, top: int = 10) -> Diff:
    """Two results of one computation against each other, element by element, in ulps.

    Parameters
    ----------
    a, b : arrays (or scalars) of the same shape and format (say the CPU's and the GPU's
        result); another format is a TypeError saying how to convert, another shape a
        ValueError
    top : how many of the largest differences ``table`` lists

    Returns
    -------
    Diff: ``bitwise_equal`` (the share of elements with equal bits), ``ulp_histogram``
    (elements per signed ulp distance from a to b), ``table`` (a DataFrame of the ``top``
    largest differences: index, a, b, ulps, a_bits, b_bits), ``summary`` (elements,
    bitwise_equal count, equal_share, max_abs_ulp, mean_abs_ulp, nan_mismatches,
    saturated), ``ulps`` and ``equal`` (per element), ``plot()``; a short text and an HTML
    display. The same object as :meth:`Comparison.diff` gives for two results it holds.
    """
    top = checks.integer("top", top, 0)
    (va, vb), _ = coerce(a, b, what="fpx.diff")
    if va.shape != vb.shape:
        raise ValueError(f"fpx.diff: a has shape {va.shape} and b {vb.shape}: not comparable")
    return diff_values("a", va, "b", vb, top=top)


def diff_values(label_a: str, va, label_b: str, vb, *, top: int = 10) -> Diff:
    """The :class:`Diff` of two results (see :meth:`Comparison.diff`), given as values."""
    pd = require("pandas", "Comparison.diff")

    va, vb = np.asarray(va), np.asarray(vb)
    if va.shape != vb.shape:
        raise ValueError(f"{label_a} has shape {va.shape} and {label_b} {vb.shape}: not comparable")
    fa, fb = format_info(va.dtype), format_info(vb.dtype)
    if fa.name != fb.name:  # e.g. np.matmul of bfloat16 gives float32: compare in the wider
        wide = fa if fa.precision >= fb.precision else fb
        va, vb = (np.asarray(as_format(v, wide.name)) for v in (va, vb))
    fmt = format_info(va.dtype).name
    ulps = np.asarray(ulp_distance(va, vb, nan="sentinel"), dtype=np.int64)
    equal = np.asarray(to_bits(va) == to_bits(vb))
    mag = clamp_ulps(ulps)  # one NaN or a saturated distance: inf, no count of ulps
    flat = mag.reshape(-1)
    order = np.argsort(-flat, kind="stable")[: max(int(top), 0)]
    order = order[flat[order] > 0] if flat.size else order
    fa_, fb_, fu = va.reshape(-1), vb.reshape(-1), ulps.reshape(-1)
    rows = []
    for k in order:
        where = tuple(int(i) for i in np.unravel_index(k, va.shape))
        rows.append(
            {
                "index": where[0] if len(where) == 1 else where,
                "a": shortest_repr(fa_[k]),
                "b": shortest_repr(fb_[k]),
                "ulps": int(fu[k]),
                "a_bits": bit_string(fa_[k]),
                "b_bits": bit_string(fb_[k]),
            }
        )
    columns = ["index", "a", "b", "ulps", "a_bits", "b_bits"]
    table = pd.DataFrame(rows, columns=columns)
    finite = mag[np.isfinite(mag)]
    summary = {
        "elements": int(va.size),
        "bitwise_equal": int(np.sum(equal)),
        "equal_share": float(np.mean(equal)) if va.size else 1.0,
        "max_abs_ulp": int(np.max(finite)) if finite.size else 0,
        "mean_abs_ulp": float(np.mean(finite)) if finite.size else 0.0,
        "nan_mismatches": int(np.sum(ulps == ULP_NAN)),
        "saturated": int(np.sum(~np.isfinite(mag)) - np.sum(ulps == ULP_NAN)),
    }
    return Diff(label_a, label_b, fmt, ulps, equal, (va, vb), summary, table)


TIMING_NOTE = (
    "time_ms: this CPU running the variant (fpexplore's emulation for 'emulated' rows), warm; "
    "not the speed of the hardware an order emulates. compile_ms: first use in this process "
    "(numba compiling or loading kernels), measured apart."
)


def _int_text(v) -> str:
    return str(int(v)) if v == v and abs(v) != np.inf else str(v)  # NaN / inf as they are


def _num_text(v, digits: int) -> str:
    if v is None or v != v:
        return "nan"
    return f"{v:.{digits}g}"


MAX_BYTES_FRACTION = 0.5  # use at most half of the available memory


def available_memory() -> int:
    """Bytes this process may still allocate: the least of the memory the system has
    available (Linux /proc/meminfo, else physical memory, else 4 GiB), what the process's
    own address-space limit leaves (``ulimit -v``: RLIMIT_AS less the current size) and what
    its cgroup's memory limit leaves (containers, Binder: ``memory.max`` less
    ``memory.current``; cgroup v1 likewise), where those limits are set."""
    free = _system_available()
    for leaves in (_rlimit_left(), _cgroup_left()):
        if leaves is not None:
            free = min(free, leaves)
    return max(free, 0)


def _system_available() -> int:
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return 4 << 30


def _rlimit_left() -> int | None:
    try:
        import resource

        soft = resource.getrlimit(resource.RLIMIT_AS)[0]
        if soft == resource.RLIM_INFINITY:
            return None
        with open("/proc/self/statm") as f:
            size = int(f.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
        return soft - size
    except (ImportError, OSError, ValueError):
        return None


def _read_int(path: str) -> int | None:
    try:
        with open(path) as f:
            text = f.read().strip()
        return None if text == "max" else int(text)
    except (OSError, ValueError):
        return None


def _cgroup_left() -> int | None:
    for limit_file, usage_file in (
        ("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory.current"),  # cgroup v2
        (
            "/sys/fs/cgroup/memory/memory.limit_in_bytes",
            "/sys/fs/cgroup/memory/memory.usage_in_bytes",
        ),
    ):
        limit = _read_int(limit_file)
        if limit is not None and limit < 1 << 60:  # v1 writes a huge number for "no limit"
            return limit - (_read_int(usage_file) or 0)
    return None


def check_size(op_spec, n: int, fmt: str) -> None:
    """Refuse sizes that would not fit (before allocating anything) or exceed the op's limit."""
    checks.integer("n", n, 1)
    limit = op_spec.max_n
    if n > limit:
        raise ValueError(f"n={n} is too large for {op_spec.op}: the limit is {limit}")
    need = op_spec.bytes_needed(int(n), format_info(fmt).bits // 8)
    budget = int(available_memory() * MAX_BYTES_FRACTION)
    if need > budget:
        max_n = int(n * budget / need)
        raise ValueError(
            f"n={n} needs about {need / 2**30:.1f} GiB for {op_spec.op} but only "
            f"{budget / 2**30:.1f} GiB may be used here; the limit is about n={max_n}"
        )


def resolve_variants(op: str, variants, fmt: str | None = None) -> list[str]:
    """The variants ``compare`` runs for ``op``, each as its canonical variant spec string (a
    plain name stays itself): ``None`` gives the op's defaults that exist for ``fmt``;
    ValueError for names or settings that do not exist for the op."""
    op_spec = get_op(op)
    if variants is None:
        return op_spec.defaults_for(fmt)
    if isinstance(variants, str) or not hasattr(variants, "__iter__"):
        variants = [variants]  # one name, spec string or VariantSpec
    return [str(parse_spec(v, op)) for v in variants]


COMPARE_ARGUMENTS = frozenset(
    ("op", "format", "n", "variants", "distribution", "seed", "backends", "threads", "inputs")
    + ("progress",)
)


class Default:
    """A keyword's default value, told apart from the same value given (compare refuses a
    distribution or seed given with ``inputs=``, not their defaults)."""

    def __init__(self, value):
        self.value = value

    def __repr__(self) -> str:
        return repr(self.value)

    @staticmethod
    def value_of(v):
        return v.value if isinstance(v, Default) else v


USER_DATA = "user data"  # the distribution column of a comparison of the user's own inputs


def user_inputs(op_spec, inputs, *, what: str) -> tuple[dict, str, int]:
    """``(inputs dict, format name, n)`` of the user's own inputs for ``op_spec``: an array
    (one-input ops), a tuple or list in the op's input order, or a dict of its input names
    (as :attr:`Comparison.inputs` holds them). The arrays are kept as they are (no copy, no
    change); masked arrays, mixed formats, missing or unknown names are refused."""
    probe = op_spec.inputs(4, "float32", "uniform", 0, Params())
    names = [k for k in probe if k != "format"]
    if isinstance(inputs, dict):
        given = {k: v for k, v in inputs.items() if k != "format"}
        missing = [k for k in names if k not in given]
        unknown = sorted(set(given) - set(names), key=str)
        if missing or unknown:
            raise ValueError(
                f"{what}: {op_spec.name} takes inputs {', '.join(names)}"
                + (f"; missing {', '.join(missing)}" if missing else "")
                + (f"; unknown {', '.join(map(repr, unknown))}" if unknown else "")
            )
    elif isinstance(inputs, (tuple, list)) and not (
        len(names) == 1 and inputs and not hasattr(inputs[0], "__len__")
    ):
        if len(inputs) != len(names):
            raise ValueError(
                f"{what}: {op_spec.name} takes {len(names)} inputs ({', '.join(names)}), "
                f"got {len(inputs)}"
            )
        given = dict(zip(names, inputs))
    elif len(names) == 1:
        given = {names[0]: inputs}
    else:
        raise TypeError(
            f"{what}: {op_spec.name} takes inputs {', '.join(names)}: give a tuple or a dict"
        )
    numeric = [k for k in names if isinstance(probe[k], (np.ndarray, np.generic))]
    arrays, info = coerce(*(given[k] for k in numeric), what=what)
    out = {"format": info.name, **given}
    for k, arr in zip(numeric, arrays):
        if len(numeric) > 1 and isinstance(probe[k], np.ndarray) and arr.ndim != probe[k].ndim:
            raise ValueError(
                f"{what}: {op_spec.name}'s input {k} is {probe[k].ndim}-D, got shape {arr.shape}"
            )
        out[k] = arr
    first = out[numeric[0]] if numeric else None
    if op_spec.name == "matmul":
        n = int(first.shape[1])  # the inner dimension: the length of every sum
    elif "num" in out:  # linspace
        n = checks.integer("num", out["num"], 1)
    elif first is not None and first.ndim > 1 and probe[numeric[0]].size != 4:
        n = int(first.shape[0])  # rows (cdist)
    else:
        n = int(np.size(first))
    return out, info.name, n


def compare(
    op: str,
    *,
    format: str | None = None,  # noqa: A002  (the design's public name)
    n: int | None = None,
    variants=None,
    distribution: str = Default("uniform"),
    seed: int = Default(0),
    backends=("numpy", "emulated"),
    threads: int | None = None,
    inputs=None,
    progress=None,
    **op_params,
) -> Comparison:
    """Run ``op`` on ``n`` generated values (or on your own ``inputs``) in each variant and
    backend; measure each result against the correctly rounded reference.

    Parameters
    ----------
    op : one of ``fpx.ops()``
    format : one of ``fpx.FORMATS`` (default "float32"; with ``inputs``: theirs, and a
        different one is a ValueError)
    n : problem size (elements; for matmul the matrix side); required unless ``inputs`` are
        given (then it comes from them: giving both is a ValueError)
    variants : names from ``fpx.variants(op)`` or variant specs such as
        ``"tree(block=256)+tf32@float64"`` (see :func:`fpexplore.parse_spec`; the table's
        ``variant`` column shows each in its canonical spelling); None: the op's defaults
    distribution : one of ``fpx.DISTRIBUTIONS`` (default "uniform"); not with ``inputs``
    seed : data seed (default 0); not with ``inputs``
    inputs : your own arrays instead of generated ones, as :attr:`Comparison.inputs` holds
        them: sum, mean and the one-array ops an array or ``{"x": x}``; dot ``(a, b)`` or
        ``{"a": a, "b": b}``; matmul ``(A, B)`` or ``{"A": A, "B": B}``; other ops their
        input names in order (``fpx.compare(op, n=2).inputs`` shows them). One format, any
        of ``fpx.FORMATS``; used as they are (never copied with changes; masked arrays are
        refused). ``n`` is their size (matmul: the inner dimension k), the table's
        ``distribution`` reads "user data" and its ``seed`` is None; giving ``distribution``
        or ``seed`` too is a ValueError (they describe generated data)
    backends : "numpy" (NumPy's own function), "emulated" (fpexplore's variants), "cupy"
        (a real GPU; a message, not an error, where there is none), "replay" (recorded GPU
        runs), "torch", "jax", "polars" (the library's own sum/dot/matmul on this CPU where
        it is installed; a message where it is not: :mod:`fpexplore.backends.libraries`)
    threads : for the real CPU libraries: NumPy's BLAS pool (through threadpoolctl) and
        torch's threads for this call; None: their defaults. (Emulated orders take their own
        ``threads`` parameter: ``"torch(threads=2)"``.)
    progress : optional ``progress(done, total, label)``, called before each result is
        computed (``done`` of ``total`` finished, ``label`` the one starting); an exception it
        raises stops the run and propagates (the explorer's cancel button works this way)
    **op_params : passed to the variants that take them (e.g. ``block=256``, ``accumulate=``);
        one that none of them takes is a TypeError (after the run: what a variant takes is
        known once it ran), naming the accepted ones

    Returns
    -------
    Comparison with ``.table`` columns: op, format, n, distribution, seed, variant, backend,
    value (scalar results, as float64), value_repr (the shortest decimal that reads back as
    the same value in ``format``; pandas' six digits would print neighbours alike),
    value_hex (its bit pattern), ulp_error (signed, the largest), max_abs_ulp, mean_abs_ulp,
    exact_share, rel_error, bits_error, time_ms (this CPU running the variant, warm: not the
    speed of the hardware an order emulates), compile_ms (first-use overhead in this process,
    numba compiling or loading kernels, measured apart; 0 afterwards), library and
    library_version and threads (what made a real library's row), numpy_version, device, cpu,
    cpu_flags, simd, blas_kernel, blas_threads (the machine:
    :func:`fpexplore.machine.machine_info`).
    """
    pd = require("pandas", "fpx.compare")
    if threads is not None:
        checks.integer("threads", threads, 1)
    if progress is not None and not callable(progress):
        raise TypeError(f"progress must be a callable or None, got {checks.shown(progress)}")
    op_spec = get_op(op)
    if inputs is not None:
        given = [
            k
            for k, v in (("n", n), ("distribution", distribution), ("seed", seed))
            if v is not None and not isinstance(v, Default)
        ]
        if given:
            raise ValueError(
                f"compare: {', '.join(given)} {'is' if len(given) == 1 else 'are'} for generated "
                "data; with "
                "inputs= the data are yours (n comes from their size)"
            )
        inputs, fmt, n = user_inputs(op_spec, inputs, what="fpx.compare")
        if format is not None and format != fmt:
            _check("format", format, FORMATS)
            raise ValueError(
                f"format={checks.shown(format)} but the inputs are {fmt}: leave format out"
            )
        format, distribution, seed = fmt, USER_DATA, None
    else:
        if n is None:
            raise TypeError("compare() needs n= (the problem size) or inputs= (your arrays)")
        format = "float32" if format is None else format
        distribution = Default.value_of(distribution)
        seed = Default.value_of(seed)
        _check("format", format, FORMATS)
        _check("distribution", distribution, DISTRIBUTIONS)
        checks.seed(seed)
    backends = checks.name_list("backends", backends)
    for b in backends:
        _check("backend", b, BACKENDS)
    if distribution != USER_DATA:
        check_size(op_spec, n, format)
    variants = resolve_variants(op, variants, format)
    op_params = Params(op_params)  # remembers what the variants took: the rest is refused
    if distribution != USER_DATA:
        inputs = op_spec.inputs(n, format, distribution, seed, op_params)
    reference_cache: dict = {}
    rows, results, messages = [], {}, []
    env = environment()

    def add_row(label, backend, out, elapsed, first_use=0.0, library=None):
        ref = op_spec.reference_for(inputs, out, op_params, reference_cache)
        s = summarize(out, ref)
        scalar = np.ndim(out) == 0
        rows.append(
            {
                "op": op,
                "format": format,
                "n": n,
                "distribution": distribution,
                "seed": seed,
                "variant": label,
                "backend": backend,
                "value": float(out) if scalar else np.nan,
                "value_repr": shortest_repr(out) if scalar else None,
                "value_hex": hex_string(out) if scalar else None,
                "ulp_error": s["ulp"],
                "max_abs_ulp": s["max_abs_ulp"],
                "mean_abs_ulp": s["mean_abs_ulp"],
                "exact_share": s["exact_share"],
                "rel_error": s["max_rel"],
                "bits_error": s["max_bits"],
                "time_ms": elapsed * 1e3,
                "compile_ms": first_use * 1e3,
                "library": (library or {}).get("name"),
                "library_version": (library or {}).get("version"),
                "threads": (library or {}).get("threads"),
                **env,
            }
        )
        results[(label, backend)] = out

    steps = [op_spec.numpy_label] if "numpy" in backends and op_spec.numpy is not None else []
    steps += list(variants) if "emulated" in backends else []
    steps += [b for b in backends if b not in ("numpy", "emulated")]

    def starting(label):
        if progress is not None:
            progress(steps.index(label), len(steps), label)

    if "numpy" in backends and op_spec.numpy is not None:
        starting(op_spec.numpy_label)
        uses_blas = op in _BLAS_OPS
        with _blas_threads(threads if uses_blas else None, messages) as pool:
            out, elapsed, first_use = _timed(lambda: op_spec.numpy(inputs, op_params))
        numpy_lib = {"name": "numpy", "version": np.__version__}
        if uses_blas:  # (np.sum and the ufuncs run on one thread, whatever the BLAS pool)
            numpy_lib["threads"] = env["blas_threads"] if pool.limits is None else threads
        add_row(op_spec.numpy_label, "numpy", out, elapsed, first_use, numpy_lib)
    if "emulated" in backends:
        for v in variants:
            starting(v)
            try:
                out, elapsed, first_use = _timed(
                    lambda v=v: op_spec.run(parse_spec(v, op), inputs, op_params)
                )
            except NotImplementedError as e:  # a library path that is not emulated: said so
                messages.append(f"{v}: {e}")
                continue
            add_row(v, "emulated", out, elapsed, first_use)
    for b in ("cupy", "replay"):
        if b in backends:
            starting(b)
            _gpu_rows(
                b,
                op_spec,
                op,
                format,
                n,
                distribution,
                seed,
                inputs,
                op_params,
                reference_cache,
                add_row,
                messages,
            )
    for b in ("torch", "jax", "polars"):
        if b in backends:
            starting(b)
            _library_rows(b, op, format, inputs, threads, add_row, messages)
    table = pd.DataFrame(rows)
    ref = op_spec.reference_for(inputs, None, op_params, reference_cache)
    # a keyword no variant used (a typo, another variant's parameter) is an error, never a
    # silent default; the accepted ones are compare's own and what these variants look for
    checks.refuse_unknown("fpx.compare", op_params.unused(), COMPARE_ARGUMENTS | op_params.taken)
    return Comparison(
        op,
        format,
        int(n),
        table,
        results,
        ref,
        inputs,
        _public_params(variants, distribution, seed, backends, {**op_params, "threads": threads}),
        messages,
        reference_cache,  # the reference in every format a result came in
    )


def _library_rows(backend, op, fmt, inputs, threads, add_row, messages) -> None:
    """One row from a real CPU library (torch, jax, polars), or a message saying why not."""
    from .backends import libraries

    ok, why = libraries.status(backend)
    call = libraries.call_name(backend, op)
    if not ok:
        messages.append(f"{backend} backend unavailable: {why}")
        return
    if call is None:
        messages.append(f"{backend} backend: {op} has no {backend} function here")
        return
    from .ops.reductions import ARRAYS

    arrays = [inputs[k] for k in ARRAYS[op]]
    if threads is not None and backend != "torch":
        messages.append(
            f"{backend}: threads={threads} is not applied (its thread pool is fixed when it "
            "loads: POLARS_MAX_THREADS, XLA_FLAGS)"
        )
    try:
        (out, lib), elapsed, first_use = _timed(
            lambda: libraries.run(backend, op, arrays, fmt, threads=threads)
        )
    except ValueError as e:
        messages.append(str(e))
        return
    add_row(call, backend, out, elapsed, first_use, lib)


_BLAS_OPS = ("dot", "matmul")  # the ops whose NumPy call runs NumPy's BLAS


class _blas_threads:
    """NumPy's BLAS pool limited to ``threads`` for a block (threadpoolctl); None: as is.
    Without threadpoolctl it says so in ``messages`` and leaves the pool as it is."""

    def __init__(self, threads, messages):
        self.threads, self.messages, self.limits = threads, messages, None

    def __enter__(self):
        if self.threads is not None:
            try:
                from threadpoolctl import threadpool_limits
            except ImportError:
                self.messages.append(
                    f"threads={self.threads} for NumPy's BLAS needs threadpoolctl "
                    "(pip install threadpoolctl): NumPy ran with its own threads"
                )
                return self
            self.limits = threadpool_limits(limits=self.threads, user_api="blas")
        return self

    def __exit__(self, *exc):
        if self.limits is not None:
            self.limits.restore_original_limits()


def _public_params(variants, distribution, seed, backends, op_params) -> dict:
    if distribution == USER_DATA:  # the data were the user's: nothing to draw them again
        p = {"variants": list(variants), "inputs": USER_DATA}
    else:
        p = {"variants": list(variants), "distribution": distribution, "seed": seed}
    if tuple(backends) != ("numpy", "emulated"):
        p["backends"] = tuple(backends)
    p.update({k: v for k, v in op_params.items() if not (k == "threads" and v is None)})
    return p


def _gpu_rows(
    backend, op_spec, op, fmt, n, distribution, seed, inputs, op_params, cache, add_row, messages
) -> None:
    """Rows from a real GPU (cupy) or from recordings made on one (replay)."""
    # (fpx.backends is the function; the package is fpexplore.backends)
    from .backends import status

    ok, reason = status(backend)
    if not ok:
        messages.append(
            f"{backend} backend unavailable: {reason}; showing the emulated GPU orders instead"
        )
        return
    ref_shape = np.shape(op_spec.reference_for(inputs, None, op_params, cache))
    if backend == "replay" and distribution == USER_DATA:
        messages.append("replay: recordings are of generated data, not of your inputs")
        return
    if backend == "replay":
        from .backends import replay

        found = 0
        for label, device, out in replay.lookup(op, fmt, n, distribution, seed):
            if np.shape(out) == ref_shape:  # (block partials and repeated runs are not rows)
                add_row(f"{label} [{device.get('device', 'GPU')}]", "replay", out, 0.0)
                found += 1
        if not found:
            messages.append(
                f"replay: no GPU recording of {op} {fmt} n={n} {distribution} seed={seed}"
            )
        return
    if op_spec.gpu_args is None:
        messages.append(f"cupy backend: compare() shows no CuPy row for {op}")
        return
    from .backends.cupy import library

    args = op_spec.gpu_args(inputs, op_params)
    out, elapsed, first_use = _timed(lambda: library(op, *args))
    add_row(op_spec.gpu_label, "cupy", out, elapsed, first_use)


def _timed(call):
    """(result, seconds, first-use seconds). A call that compiles numba kernels, loads them
    from numba's disk cache or imports modules pays for that once per process, and that
    time is reported apart as ``compile_ms``, never in ``time_ms``: numba's compiling and
    loading is timed by its own compiler-lock events and subtracted; a call that imported
    modules (numba itself, mpmath, ...) runs a second time and that run is ``time_ms``.
    Calls with nothing to set up run once."""
    import sys

    before = _loaded_modules()
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
    if _loaded_modules() == before:
        if listener is None or not listener.done:
            return out, first, 0.0
        setup = min(listener.duration, first)  # compiled or loaded kernels, imported nothing
        return out, first - setup, setup
    t0 = time.perf_counter()
    call()
    warm = time.perf_counter() - t0
    return out, warm, max(first - warm, 0.0)


def _loaded_modules() -> int:
    """How many modules are imported: a call that imports one pays for it once."""
    import sys

    return len(sys.modules)


@dataclass(repr=False)
class Sweep:
    """The outcome of :func:`sweep`: ``table`` (one row per size and result) and ``plot()``
    (error against n, log-log, with the worst-case and probabilistic bounds dashed)."""

    op: str
    format: str
    table: object
    bounds: object

    def plot(self, ax=None):
        from . import plots

        return plots.plot_sweep(self, ax=ax)

    def __repr__(self) -> str:
        sizes = sorted(set(self.table["n"])) if "n" in self.table else []
        return f"Sweep: {self.op}, {self.format}, {len(self.table)} rows over n = {sizes}"


MAX_SWEEP_RUNS = 10_000  # sizes x seeds: a sweep is refused before it starts beyond this


def sweep(
    op: str,
    *,
    format: str = "float32",  # noqa: A002
    sizes=(10, 100, 1_000, 10_000, 100_000, 1_000_000),
    variants=None,
    distribution: str = "uniform",
    seed: int = 0,
    seeds=5,
    backends=("numpy", "emulated"),
    progress: bool = True,
    **op_params,
) -> Sweep:
    """Error against n: :func:`compare` at each size and seed, stacked into one table.

    ``seeds``: how many data seeds per size (``seed``, ``seed + 1``, ...), or a list of seeds;
    one seed gives one noisy sample per size, several give the median and a 10-90% band
    (what ``plot()`` draws). ``table`` has compare's columns (``seed`` among them) plus
    ``abs_error`` (|value - exact| for scalar results, else the largest element error); for
    sum/dot ``bounds`` has one row per size with ``worst_sequential`` (gamma_{n-1} S),
    ``worst_pairwise`` (gamma_{ceil(log2 n)} S) and ``probabilistic`` (sqrt(n) u S), all
    absolute, the median over the seeds. A progress bar shows on long sweeps.
    """
    pd = require("pandas", "fpx.sweep")

    sizes = [checks.integer("sizes", s, 1) for s in checks.name_list("sizes", sizes)]
    if not sizes:
        raise ValueError("sizes must name at least one size")
    if isinstance(seeds, (numbers.Integral, str)) or not hasattr(seeds, "__iter__"):
        count = checks.integer("seeds", seeds, 1, MAX_SWEEP_RUNS)  # how many
        seed_list = [checks.seed(seed) + k for k in range(count)]
    else:
        seed_list = [checks.seed(s, "seeds") for s in seeds]
        if not seed_list:
            raise ValueError("seeds must name at least one seed")
    if len(sizes) * len(seed_list) > MAX_SWEEP_RUNS:
        raise ValueError(
            f"{len(sizes)} sizes x {len(seed_list)} seeds is {len(sizes) * len(seed_list)} "
            f"runs; at most {MAX_SWEEP_RUNS}"
        )
    op_spec = get_op(op)
    for s in sizes:
        check_size(op_spec, s, format)
    runs = len(sizes) * len(seed_list)
    bar = _progress(runs) if progress and runs > 1 else None
    parts, bound_rows = [], []
    for s in sizes:
        for sd in seed_list:
            c = compare(
                op,
                format=format,
                n=s,
                variants=variants,
                distribution=distribution,
                seed=sd,
                backends=backends,
                **op_params,
            )
            t = c.table.copy()
            t["abs_error"] = [_abs_error(out, c.reference_of(out)) for out in c.results.values()]
            parts.append(t)
            b = op_spec.bounds(c.inputs, format)
            if b is not None:
                bound_rows.append({"n": s, **b})
            if bar is not None:
                bar.update(1)
    if bar is not None:
        bar.close()
    bounds = pd.DataFrame(bound_rows)
    if len(bounds):
        bounds = bounds.groupby("n", sort=False).median().reset_index()
    return Sweep(op, format, pd.concat(parts, ignore_index=True), bounds)


def _abs_error(out, ref) -> float:
    a = np.asarray(out, dtype=np.float64)
    b = np.asarray(ref, dtype=np.float64)
    with np.errstate(all="ignore"):
        d = np.abs(a - b)
    d = np.where(a == b, 0.0, d)
    return float(np.nanmax(d)) if d.size else 0.0


def _progress(total: int):
    try:
        from tqdm.auto import tqdm
    except ImportError:  # pragma: no cover - tqdm comes with the jupyter extra
        return None
    return tqdm(total=total, desc="sweep", leave=False)
