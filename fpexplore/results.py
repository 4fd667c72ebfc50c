"""What experiments return: :class:`Comparison` (compare's table, results and references),
:class:`Diff` (two results against each other, element by element, in ulps and bits: from
:func:`diff` or :meth:`Comparison.diff`) and :class:`Sweep` (compare over sizes), with their
text, HTML and formatted-table displays, and :class:`Explanation` (what
:func:`fpexplore.explain` found). They hold numbers; they compute no results (the
figures come from :mod:`fpexplore.plots`, loaded when asked for; pandas when a table is made).
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from . import checks, presentation
from ._optional import require
from .backends.job import USER_DATA  # (the distribution column of the user's own inputs)
from .bits import bit_string, shortest_repr, to_bits, value_texts
from .formats import (
    ULP_NAN,
    ULP_SATURATED,
    FormatInfo,
    as_format,
    coerce,
    format_info,
    holding,
    ulp_distance,
)
from .held import result_format
from .numerics import clamp_ulps
from .timing import TIMING_NOTE
from .userformat import user_names

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

__all__ = [
    "EXACT_LABEL",
    "USER_DATA",
    "Comparison",
    "Diff",
    "Explanation",
    "Sweep",
    "diff",
    "diff_values",
    "literal",
]

EXACT_LABEL = "exact (reference)"


@dataclass(repr=False)
class Comparison:
    """The outcome of :func:`fpexplore.compare`: ``table`` (a pandas DataFrame, one row per result),
    ``results`` (the raw outputs by label), ``reference`` (the correctly rounded result in
    the inputs' format), ``references`` (the reference in each format a result came in, by
    format name: ``np.matmul`` of bfloat16 gives float32, measured against the float32
    reference), ``inputs``, ``messages`` (e.g. an unavailable backend), ``specs`` (each
    variant's label -> its :class:`~fpexplore.spec.VariantSpec`, parsed once by compare), and
    ``plot()``."""

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
    specs: dict = field(default_factory=dict)  # variant label -> its parsed VariantSpec

    def plot(self, kind: str = "auto", ax=None):
        """A matplotlib Figure: "bars" (ULP error per result, for scalar results), "hist"
        (ULP-error histogram per result), "heatmap" (per-element ULP errors of a matrix
        result), or "auto" (bars for scalars, heatmap for matmul, else hist); a ValueError
        where there is no result (cupy alone without a GPU: its message says why)."""
        from . import plots

        if not len(self.table):  # (pass 20: a KeyError from pandas)
            raise ValueError(f"Comparison.plot: no result to plot ({'; '.join(self.messages)})")

        return plots.plot_comparison(self, kind=kind, ax=ax)

    def snippet(self) -> str:
        """Python code that recreates this comparison with the public API."""
        if self.params.get("inputs") == USER_DATA:  # the user's own arrays, not drawn here
            args = [repr(self.op), "inputs=inputs"]
            if self.format in user_names():  # (float64 arrays: the format named, defined first)
                args.append(f"format={self.format!r}")
            args += [f"{k}={literal(v)}" for k, v in self.params.items() if k != "inputs"]
            call = "cmp = fpx.compare(" + ", ".join(args) + ")\ncmp"
            return (
                _imports(call) + "\n\n# inputs: your own arrays (user data: "
                f"{self.format}, n = {self.n}), as cmp.inputs holds them\n" + call
            )
        args = [repr(self.op), f"format={self.format!r}", f"n={self.n}"]
        args += [f"{k}={literal(v)}" for k, v in self.params.items()]
        call = "cmp = fpx.compare(" + ", ".join(args) + ")\ncmp"
        return _imports(call) + "\n\n" + call

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
        fmt = result_format(self.reference, self.format)
        text, hexa = value_texts(self.reference, fmt) if scalar else ("", "")
        ref = {
            "variant": "exact (reference)",
            "backend": "reference",
            "value": text,
            "hex": hexa or "",
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
                    "hex": (r["value_hex"] or "") if scalar else "",
                    "ulp_error": int_text(r["ulp_error"]),
                    "max_abs_ulp": int_text(r["max_abs_ulp"]),
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
        return diff_values(la, va, lb, vb, top=top, fmt=held_format(self.format, va, vb))

    def reference_of(self, out):
        """The reference ``out`` was measured against: the exact result in ``out``'s format
        (``np.matmul`` of bfloat16 gives float32, measured against the float32 reference;
        a float64 result of data of a format of ``fpx.format``: that format's)."""
        if not isinstance(out, (np.ndarray, np.generic, float)):  # (pass 28: a label)
            raise TypeError(
                f"reference_of takes a result (an array or scalar, e.g. cmp.results[(label, "
                f"backend)]), got {checks.shown(out)}; by label: cmp.diff({EXACT_LABEL!r}, label)"
            )
        fmt = result_format(out, self.format)
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
        hint = f" (the exact answer is {EXACT_LABEL!r})" if name == "exact" else ""
        raise ValueError(
            f"{checks.shown(name)} {what}{hint}; results: {', '.join([*labels, EXACT_LABEL])}"
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
    """The outcome of :meth:`Comparison.diff`: result ``b`` measured against result ``a``.

    Attributes
    ----------
    a, b : str
        The two results' labels.
    format : str
        The format they are compared in.
    ulps : numpy.ndarray
        Signed ulps from a to b, per element (int64; ``fpx.ULP_NAN``: exactly one of the two
        is NaN).
    equal : numpy.ndarray
        Per element, True where the bits are equal.
    values : tuple
        The two results, ``(a, b)``, in ``format``.
    summary : dict
        elements, bitwise_equal (a count), equal_share, max_abs_ulp, mean_abs_ulp,
        nan_mismatches, saturated (2**62 or more ulps apart, not counted in the largest and
        mean) and saturated_opposite (those of opposite signs).
    table : pandas.DataFrame
        The ``top`` largest differences: index, a, b, ulps, a_bits, b_bits.
    """

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
            f"{_largest(s)}, mean {s['mean_abs_ulp']:.3g}" + _uncounted(s)
        )

    def _repr_html_(self) -> str:
        s = self.summary
        head = (
            f"<p><b>{html.escape(self.b)}</b> against <b>{html.escape(self.a)}</b> "
            f"({self.format}): {s['bitwise_equal']:,} of {s['elements']:,} elements bitwise "
            f"equal ({100 * s['equal_share']:.4g}%), {_largest(s)}"
            f"{html.escape(_uncounted(s))}</p>"
        )
        return head + self.table.to_html(index=False, border=0, classes="fpx-diff")


def _largest(s: dict) -> str:
    """ "largest difference 3 ulps", said of the counted elements where some are not (pass
    27: "largest difference 0 ulps" where every element was 2**62 or more ulps apart)."""
    left = s["saturated"] + s["nan_mismatches"]
    if not left:
        return f"largest difference {s['max_abs_ulp']:,} ulps"
    return f"largest difference of the {s['elements'] - left:,} counted {s['max_abs_ulp']:,} ulps"


def _uncounted(s: dict) -> str:
    """The elements the largest and mean differences leave out, in words."""
    out = ""
    if s["saturated"]:
        opposite = s.get("saturated_opposite", 0)
        why = [f"{opposite:,} of opposite signs"] if opposite else []
        if s["saturated"] > opposite:
            why.append(f"{s['saturated'] - opposite:,} of one sign, far apart in magnitude")
        out += (
            f", {s['saturated']:,} element(s) 2**62 or more ulps apart ({'; '.join(why)}) "
            "not counted in these"
        )
    if s["nan_mismatches"]:
        n = s["nan_mismatches"]
        out += f", {n:,} NaN mismatch(es) (NaN against a number) not counted in these"
    return out


def diff(a: ArrayLike, b: ArrayLike, *, top: int = 10) -> Diff:
    """Two results of one computation against each other, element by element, in ulps.

    Parameters
    ----------
    a, b : arrays (or scalars) of the same shape (say the CPU's and the GPU's result), each
        in one of ``fpx.FORMATS``; two formats are compared in the narrowest one holding
        both (bfloat16 and float16: float32), exactly; another shape is a ValueError
    top : how many of the largest differences ``table`` lists

    Returns
    -------
    Diff
        ``bitwise_equal`` (the share of elements with equal bits), ``ulp_histogram`` (elements per
        signed ulp distance from a to b), ``table`` (a DataFrame of the ``top`` largest differences:
        index, a, b, ulps, a_bits, b_bits), ``summary`` (elements, bitwise_equal count, equal_share,
        max_abs_ulp, mean_abs_ulp, nan_mismatches, saturated), ``ulps`` and ``equal`` (per element),
        ``plot()``; a short text and an HTML display. The same object as :meth:`Comparison.diff`
        gives for two results it holds.
    """
    arrays = [isinstance(v, (np.ndarray, np.generic)) for v in (a, b)]
    if all(arrays) and np.asarray(a).dtype != np.asarray(b).dtype:  # two formats
        va, vb = (
            coerce(v, what="fpx.diff", names=(k,), keep_bits=True)[0][0]
            for v, k in ((a, "a"), (b, "b"))
        )
    else:
        (va, vb), _ = coerce(a, b, what="fpx.diff", names=("a", "b"), keep_bits=True)
    if va.shape != vb.shape:
        raise ValueError(f"fpx.diff: a has shape {va.shape} and b {vb.shape}: not comparable")
    return diff_values("a", va, "b", vb, top=top)


def held_format(data_format: str, *values) -> str | None:
    """The format of ``fpx.format`` results of data of ``data_format`` are of (float64 values
    holding its values; :func:`fpexplore.held.result_format`), or None: their dtypes say."""
    found = {result_format(v, data_format) for v in values} & set(user_names())
    return found.pop() if len(found) == 1 else None


def diff_values(label_a: str, va, label_b: str, vb, *, top: int = 10, fmt=None) -> Diff:
    """The :class:`Diff` of two results (see :meth:`Comparison.diff`), given as values
    (``fmt``: a format of ``fpx.format`` whose values both hold in float64)."""
    top = checks.integer("top", top, 0)  # (every diff: fpx.diff, Comparison's, Explanation's)
    pd = require("pandas", "Comparison.diff")

    va, vb = np.asarray(va), np.asarray(vb)
    if va.shape != vb.shape:
        raise ValueError(f"{label_a} has shape {va.shape} and {label_b} {vb.shape}: not comparable")
    if va.dtype != vb.dtype:  # np.matmul of bfloat16 gives float32: compared in one holding both
        wide = holding(va.dtype, vb.dtype).name
        va, vb = (np.asarray(as_format(v, wide)) for v in (va, vb))
    yours, fmt = fmt, fmt or format_info(va.dtype).name
    ulps = np.asarray(ulp_distance(va, vb, nan="sentinel", fmt=yours), dtype=np.int64)
    bits = None if yours and not format_info(yours).ieee_layout else yours  # (bits: IEEE's)
    equal = np.asarray(to_bits(va) == to_bits(vb))
    mag = clamp_ulps(ulps)  # one NaN or a saturated distance: inf, no count of ulps
    flat = mag.reshape(-1)
    order = np.argsort(-flat, kind="stable")[:top]
    order = order[flat[order] > 0] if flat.size else order
    fa_, fb_, fu = va.reshape(-1), vb.reshape(-1), ulps.reshape(-1)
    rows = []
    for k in order:
        where = tuple(int(i) for i in np.unravel_index(k, va.shape))
        rows.append(
            {
                "index": where[0] if len(where) == 1 else where,
                "a": shortest_repr(fa_[k], yours),
                "b": shortest_repr(fb_[k], yours),
                "ulps": int(fu[k]),
                "a_bits": "" if yours and not bits else bit_string(fa_[k], fmt=bits),
                "b_bits": "" if yours and not bits else bit_string(fb_[k], fmt=bits),
            }
        )
    columns = ["index", "a", "b", "ulps", "a_bits", "b_bits"]
    table = pd.DataFrame(rows, columns=columns)
    finite = mag[np.isfinite(mag)]
    summary = {
        "elements": int(va.size),
        "bitwise_equal": int(np.sum(equal)),
        "equal_share": float(np.mean(equal)) if va.size else 1.0,
        "max_abs_ulp": int(np.max(np.abs(ulps[np.isfinite(mag)]))) if finite.size else 0,
        "mean_abs_ulp": float(np.mean(finite)) if finite.size else 0.0,
        "nan_mismatches": int(np.sum(ulps == ULP_NAN)),
        "saturated": int(np.sum(~np.isfinite(mag)) - np.sum(ulps == ULP_NAN)),
        "saturated_opposite": int(
            np.sum(~np.isfinite(mag) & (ulps != ULP_NAN) & (np.signbit(va) != np.signbit(vb)))
        ),
    }
    return Diff(label_a, label_b, fmt, ulps, equal, (va, vb), summary, table)


def int_text(v) -> str:
    """An ulp count as a table shows it: NaN and inf as they are, the NaN sentinel
    (``ULP_NAN``: one of result and reference is NaN) as "nan", never as -2^63; the
    saturated distance (``±ULP_SATURATED``) as the bound it is, "≥9223372036854775807"
    (pass 26: the app showed a capped count as exact)."""
    if v == ULP_NAN:
        return "nan"
    if v == v and ULP_SATURATED <= abs(v) < np.inf:
        return f"≥{int(v)}" if v > 0 else f"≤{int(v)}"
    return str(int(v)) if v == v and abs(v) != np.inf else str(v)


def _num_text(v, digits: int) -> str:
    if v is None or v != v:
        return "nan"
    return f"{v:.{digits}g}"


@dataclass(repr=False)
class Sweep:
    """The outcome of :func:`fpexplore.sweep`: ``table`` (one row per size and result) and
    ``plot()`` (error against n, log-log, with the worst-case and probabilistic bounds
    dashed); ``messages``: compare's notes (a backend that is unavailable), each once."""

    op: str
    format: str
    table: object
    bounds: object
    messages: list = field(default_factory=list)

    def plot(self, ax=None):
        from . import plots

        return plots.plot_sweep(self, ax=ax)

    def __repr__(self) -> str:
        sizes = sorted(set(self.table["n"])) if "n" in self.table else []
        head = f"Sweep: {self.op}, {self.format}, {len(self.table)} rows over n = {sizes}"
        return "\n".join([head] + [f"  note: {m}" for m in self.messages])


@dataclass(repr=False)
class Explanation:
    """What :func:`fpexplore.explain` found; a short text and an HTML display.

    Attributes
    ----------
    op : str
        The op explained: "sum", "dot", "matmul" or "mean".
    format : str
        The inputs' format.
    table : pandas.DataFrame
        One row per result (index: the labels); its columns are in :func:`fpexplore.explain`.
    causes : pandas.DataFrame
        The causes ranked, best first, each ``decided`` or not.
    verdict : str
        Plain sentences.
    results : dict
        Label -> the observed result.
    reference : dict
        Label -> the exact result in that result's format.
    reproduced : dict
        Label -> the configurations reproducing it bit for bit.
    pair : tuple
        The labels of the result nearest the exact answer and of the farthest; the default
        pair of ``diff()``.
    ambiguous : bool
        True: the evidence cannot separate the undecided causes.
    hypotheses : pandas.DataFrame
        The competing explanations weighed.
    """

    op: str
    format: str
    table: object
    causes: object
    verdict: str
    results: dict
    reference: dict
    reproduced: dict = field(default_factory=dict)
    pair: tuple = ()
    ambiguous: bool = False
    hypotheses: object = None

    def plot(self, ax=None):
        """Each result's error against the exact answer, and the causes' shares (a matplotlib
        Figure)."""
        from . import plots

        return plots.explain_plot(self, ax=ax)

    def diff(self, a=None, b=None, *, top: int = 10):
        """The :class:`Diff` of two results (default: the nearest and the farthest from the
        exact answer; ``b`` left out: the other of those two, pass 28: ``diff("cpu")`` of the
        nearest compared it with itself)."""
        a = self.pair[0] if a is None else a
        b = (self.pair[1] if a != self.pair[1] else self.pair[0]) if b is None else b
        for name, label in (("a", a), ("b", b)):  # (pass 28: a bare KeyError)
            if label not in self.results:
                listed = ", ".join(map(repr, self.results))
                raise ValueError(f"{name}={label!r} is not a result here; the results: {listed}")
        return diff_values(a, self.results[a], b, self.results[b], top=top)

    def __repr__(self) -> str:
        return presentation.explanation_text(self)

    def _repr_html_(self) -> str:
        return presentation.explanation_html(self)


def literal(v) -> str:
    """``v`` as Python code that gives it back: NumPy's scalars as ``np.float32(0.001)``, a
    non-finite float as ``float('inf')`` (pass 17: snippets of them raised NameError), a
    format given as a dtype or type by its name, one of ``fpx.format`` as its definition
    (pass 18: ``accumulate=np.float64`` printed ``<class 'numpy.float64'>``)."""
    if isinstance(v, FormatInfo):
        if not v.user_defined:
            return repr(v.name)
        return (
            f"fpx.format(precision={v.precision}, emax={v.emax}, subnormals={v.subnormals}, "
            f"name={v.name!r})"
        )
    if isinstance(v, np.dtype) or (isinstance(v, type) and issubclass(v, np.generic)):
        try:
            return repr(format_info(v).name)
        except (TypeError, ValueError):
            return repr(np.dtype(v).name)
    if isinstance(v, (float, np.floating)) and not np.isfinite(v):
        kind = "float" if type(v) is float else f"np.{v.dtype.name}"
        return f"{kind}({str(float(v))!r})"
    if isinstance(v, (list, tuple)):
        inner = ", ".join(map(literal, v)) + ("," if type(v) is tuple and len(v) == 1 else "")
        return f"[{inner}]" if isinstance(v, list) else f"({inner})"
    return repr(v)


def _imports(code: str) -> str:
    """The imports ``code`` needs beside fpexplore (NumPy's scalars, Fraction, Decimal),
    then the definitions of the formats of ``fpx.format`` it names by name (pass 19:
    ``"pairwise@my_half"`` gave a snippet failing on an unknown accumulator)."""
    lines = ["import numpy as np"] if "np." in code else []
    lines += [f"from {m} import {n}" for m, n in (("decimal", "Decimal"), ("fractions", "Fraction"))
              if f"{n}(" in code]  # fmt: skip
    named = [
        literal(format_info(name))
        for name in user_names()
        if re.search(rf"[@'\"]{re.escape(name)}\b", code) and f"name={name!r}" not in code
    ]
    return "\n".join([*lines, "import fpexplore as fpx", *named])
