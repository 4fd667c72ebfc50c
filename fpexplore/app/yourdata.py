"""The explorer's "your arrays" data, pure (NumPy and the modules below, no widgets): arrays
found by name, uploaded files read, the chosen arrays checked as the op's inputs, and the
observed results (computed elsewhere, a GPU's) measured as rows next to the emulations."""

from __future__ import annotations

import io
import keyword
from dataclasses import dataclass, field

import numpy as np

from ..bits import hex_string, shortest_repr
from ..explain import EXPLAINED_OPS
from ..formats import FORMATS, format_info, holding, refuse_big_endian
from ..ops.opspec import REDUCED_AS_NUMPY
from ..ops.registry import get as get_op
from ..results import int_text
from .state import OBSERVED

UPLOADS = ".npy,.npz,.csv"


def user_namespace() -> dict:
    """IPython's user namespace (the notebook's variables) where the app runs in a kernel,
    else an empty dict."""
    try:
        from IPython import get_ipython
    except ImportError:  # pragma: no cover - IPython comes with ipywidgets
        return {}
    shell = get_ipython()
    return getattr(shell, "user_ns", {}) if shell is not None else {}


def is_array(v) -> bool:
    """A NumPy array or scalar of numbers or bools (any dtype: a wrong one gets its message;
    pass 19: a bool array left out read "choose an array for x")."""
    return isinstance(v, (np.ndarray, np.generic)) and np.asarray(v).dtype.kind not in "OSUMm"


def describe(v) -> str:
    """An array's format and shape as the name lists show it: "float32, shape (10,)"."""
    a = np.asarray(v)
    return f"{a.dtype}, shape {a.shape}" if a.ndim else f"{a.dtype} scalar"


def format_of(v) -> str | None:
    """The format of an array (None: not a floating-point format fpexplore has)."""
    try:
        return format_info(np.asarray(v).dtype).name
    except (TypeError, ValueError):
        return None


class YourArrays:
    """The arrays the app offers by name: a namespace's variables (``namespace``, None:
    IPython's user namespace, read each time) and the uploaded files' arrays."""

    def __init__(self, namespace: dict | None = None) -> None:
        if namespace is not None and not isinstance(namespace, dict):
            raise TypeError(
                f"namespace must be a dict of names to arrays, got {type(namespace).__name__}"
            )
        self._namespace = namespace
        self._uploaded: dict = {}  # name -> (array, the code that loads it)

    def names(self) -> dict:
        """The namespace's variables that hold NumPy arrays or scalars, then the uploaded
        files' arrays ("data.npz[x]")."""
        ns = self._namespace if self._namespace is not None else user_namespace()
        found = {k: v for k, v in ns.items() if not k.startswith("_") and is_array(v)}
        found.update({k: a for k, (a, _code) in self._uploaded.items()})
        return found

    def formats(self) -> dict:
        """Each name's format (None: not a floating-point format fpexplore has)."""
        return {k: format_of(v) for k, v in self.names().items()}

    def upload(self, files) -> None:
        """Uploaded .npy, .npz and .csv files (ipywidgets' FileUpload values) join the names;
        a ValueError for one that cannot be read."""
        for f in files:
            self._uploaded.update(read_upload(f["name"], bytes(f["content"])))

    def uploaded(self, name: str) -> bool:
        return name in self._uploaded

    def code_of(self, key) -> str:
        """The code of an array chosen by name: its variable, the load of an uploaded file, or
        for a name no variable has (``"x-data"``, ``"class"``: pass 22, the snippet read
        ``x - data``) the namespace's item, ``namespace['x-data']``."""
        name = key[0] if isinstance(key, tuple) else key
        if name in self._uploaded:
            return self._uploaded[name][1]
        return (
            name if name.isidentifier() and not keyword.iskeyword(name) else f"namespace[{name!r}]"
        )

    def inputs(self, op: str, names: tuple, chosen: tuple) -> dict:
        """The op's inputs (``names``: (name, ndim) each) from the variables ``chosen`` ((input,
        variable) pairs), as ``compare(inputs=)`` takes them (see :func:`check_user_arrays`)."""
        if not names:
            raise ValueError(f"{op} takes numbers, not only arrays: choose generated data for it")
        arrays = self.names()
        return check_user_arrays(op, names, {k: (var, arrays.get(var)) for k, var in chosen})

    def observed(self, names) -> dict:
        """The observed results chosen by name (results computed elsewhere: a GPU's)."""
        return observed_values(self.names(), names)


def check_user_arrays(op: str, names: tuple, chosen: dict) -> dict:
    """The op's inputs ``{name: array}`` from ``chosen`` (input name -> (variable name,
    value)), or a ValueError that says which input and which variable is wrong: none chosen,
    not a floating-point format, two formats, the wrong number of dimensions, shapes that do
    not fit together (dot: one length; matmul: A's columns are B's rows)."""
    takes = f"{op} takes {', '.join(k for k, _ in names)}"
    out, var = {}, {}
    for k, ndim in names:
        name, value = chosen.get(k, ("", None))
        if not name or value is None:
            raise ValueError(f"{takes}: choose an array for {k}")
        a = value if isinstance(value, np.ndarray) else np.asarray(value)
        refuse_big_endian(a, f"{takes}: {k} = {name}", name, REDUCED_AS_NUMPY)
        if format_of(a) not in get_op(op).formats():  # (None: no format of fpexplore's)
            raise ValueError(
                f"{takes}: {k} = {name} is {a.dtype}; {op}'s formats are "
                f"{', '.join(get_op(op).formats())} (convert it, e.g. {name}.astype(np.float32))"
            )
        if a.ndim != ndim:
            raise ValueError(f"{takes}: {k} must be {ndim}-D; {k} = {name} has shape {a.shape}")
        if a.size == 0:
            raise ValueError(f"{takes}: {k} = {name} is empty")
        out[k], var[k] = a, name
    fmts = {k: format_of(a) for k, a in out.items()}
    if len(set(fmts.values())) > 1:  # converted to the narrowest format holding both: exact
        wide = holding(*fmts.values()).name
        to = f"ml_dtypes.{wide}" if wide == "bfloat16" else f"np.{wide}"
        k = next(k for k, f in fmts.items() if f != wide)
        raise ValueError(
            f"{takes} in one format; "
            + ", ".join(f"{k} = {var[k]} is {f}" for k, f in fmts.items())
            + f" (convert exactly, e.g. {var[k]}.astype({to}))"
        )
    shapes = ", ".join(f"{k} = {var[k]} has shape {a.shape}" for k, a in out.items())
    if op == "matmul":
        if out["A"].shape[1] != out["B"].shape[0]:
            raise ValueError(f"{takes}: A's columns must be B's rows; {shapes}")
    elif op == "cdist":
        if out["x"].shape[1] != out["y"].shape[1]:
            raise ValueError(f"{takes}: points of one dimension (columns); {shapes}")
    elif len({a.shape for a in out.values()}) > 1:
        raise ValueError(f"{takes} of one shape; {shapes}")
    return out


def observed_values(arrays: dict, names) -> dict:
    """The observed results chosen by name, as arrays; a ValueError for one that is not in a
    floating-point format."""
    out = {}
    for name in names:
        v = np.asarray(arrays[name])
        refuse_big_endian(v, f"observed {name}", name)
        if format_of(v) is None:
            raise ValueError(
                f"observed {name} is {v.dtype}: a result in float16, bfloat16, float32 "
                "or float64 is needed"
            )
        out[name] = v
    return out


def _header(row: str) -> bool:
    """Whether a CSV's first row is a header: no field of it reads as a number and none
    starts like one ("Infinity" and "nan" are numbers; "0x1p-3" is no header but a number
    np.loadtxt cannot read, which it then says)."""
    fields = [f.strip() for f in row.split(",")]
    for f in fields:
        try:
            float(f)
            return False
        except ValueError:
            if f[:1] in "0123456789+-.":
                return False
    return True


def read_upload(name: str, content: bytes) -> dict:
    """The arrays of an uploaded file by the names the app lists them under, each with the
    code that loads it: a .npy file its one array ("data.npy"), a .npz file each of its
    arrays ("data.npz[x]"), a .csv file its numbers as float64 (one column or one row: 1-D,
    else 2-D; a header row is skipped)."""
    low = name.lower()
    try:
        if low.endswith(".npy"):
            return {name: (np.load(io.BytesIO(content), allow_pickle=False), f"np.load({name!r})")}
        if low.endswith(".npz"):
            with np.load(io.BytesIO(content), allow_pickle=False) as z:
                return {f"{name}[{k}]": (z[k], f"np.load({name!r})[{k!r}]") for k in z.files}
        if low.endswith(".csv"):
            text = content.decode("utf-8")
            first = text.lstrip().split("\n", 1)[0]
            skip = int(_header(first))
            a = np.loadtxt(io.StringIO(text), delimiter=",", skiprows=skip, ndmin=2)
            a = a.reshape(-1) if 1 in a.shape else a
            code = f"np.loadtxt({name!r}, delimiter=',', skiprows={skip}, ndmin=2)"
            return {name: (a, code + (".reshape(-1)" if a.ndim == 1 else ""))}
    except (ValueError, OSError, UnicodeDecodeError) as e:
        raise ValueError(f"cannot read {name}: {e}") from None
    raise ValueError(f"{name}: upload a .npy, .npz or .csv file")


@dataclass
class Observed:
    """The observed results measured: ``values`` (name -> array), ``rows`` (as
    ``cmp.formatted()`` shows rows), ``records`` (as ``cmp.table`` holds rows: the CSV's),
    ``explanation`` (:func:`fpexplore.explain` of them, or None) and ``given``: the
    explanation's result names -> the key of each ((variant, backend); observed:
    (name, "observed")); ``unexplained``: why there is no explanation where explain does not
    take the data (FP8, FP6, FP4); ``refs``: name -> the exact result each row is measured
    against (explain's, in any format: a float16 result of float32 data too)."""

    values: dict = field(default_factory=dict)
    rows: list = field(default_factory=list)
    records: list = field(default_factory=list)
    explanation: object = None
    given: dict = field(default_factory=dict)
    unexplained: str = ""
    refs: dict = field(default_factory=dict)  # name -> the exact result its row measures


def observe(cmp, observed: dict) -> Observed:
    """The observed results (computed elsewhere, e.g. on a GPU) measured, each against the
    exact result in its own format, and :func:`fpexplore.explain` of them (sum, dot, matmul,
    mean; else None): of your results alone where there are two or more, of yours and
    NumPy's (or the first result) where there is one."""
    shape = np.shape(cmp.reference)
    for name, v in observed.items():
        if v.shape != shape:
            what = "a scalar" if shape == () else f"shape {shape}"
            raise ValueError(
                f"observed {name} has shape {v.shape}; {cmp.op} of these inputs gives {what}"
            )
    out = Observed(values=dict(observed))
    out.given = {name: (name, OBSERVED) for name in observed}
    small = [f for f in (cmp.format, *map(format_of, observed.values())) if f not in FORMATS]
    if cmp.op in EXPLAINED_OPS and small:  # FP8, FP6, FP4 data or results
        out.unexplained = (
            f"not run: it weighs the orders of {', '.join(FORMATS)} data and results, "
            f"not {small[0]}"
        )
    elif cmp.op in EXPLAINED_OPS:
        from ..explain import explain

        if len(observed) == 1:  # something to set it against: NumPy's row, or the first
            keys = [k for k in cmp.results if k[1] == "numpy"] or list(cmp.results)[:1]
            out.given.update({"{} ({})".format(*k): k for k in keys})
        results = {
            label: observed[k[0]] if k[1] == OBSERVED else cmp.results[k]
            for label, k in out.given.items()
        }
        if len(results) > 1:
            out.explanation = explain(cmp.op, cmp.inputs, results)
    for name, v in observed.items():
        try:
            ref = out.explanation.reference[name] if out.explanation else _reference(cmp, v)
        except ValueError as e:  # (a result narrower than the data: no exact reference)
            raise ValueError(f"observed {name}: {e}") from None
        out.refs[name] = ref
        row, record = _measured(cmp, name, v, ref)
        out.rows.append(row)
        out.records.append(record)
    return out


def _reference(cmp, v):
    """The exact result in ``v``'s format: the comparison's, or for sum, dot, matmul and
    mean (references of the inputs alone) made now from the inputs widened exactly (a
    float32 result of FP8 data, which explain does not take)."""
    try:
        return cmp.reference_of(v)
    except ValueError:
        if cmp.op not in EXPLAINED_OPS:
            raise
        return get_op(cmp.op).reference_for(cmp.inputs, v, {}, cmp.references)


def _measured(cmp, name: str, v, ref) -> tuple[dict, dict]:
    """One observed result's row as the app's table shows it and as the CSV holds it."""
    from ..metrics import summarize

    s = summarize(v, ref)
    scalar = v.ndim == 0
    fmt = format_of(v)
    numbers = {
        "ulp_error": int(s["ulp"]),
        "max_abs_ulp": s["max_abs_ulp"],  # an exact int, or inf (a NaN mismatch)
        "mean_abs_ulp": float(s["mean_abs_ulp"]),
        "exact_share": float(s["exact_share"]),
        "rel_error": float(s["max_rel"]),
        "bits_error": float(s["max_bits"]),
    }
    row = {
        "variant": name,
        "backend": OBSERVED,
        "value": shortest_repr(v) if scalar else f"array {v.shape}",
        "hex": hex_string(v) if scalar else "",
        "ulp_error": int_text(numbers["ulp_error"]),
        "max_abs_ulp": int_text(numbers["max_abs_ulp"]),
        "mean_abs_ulp": f"{numbers['mean_abs_ulp']:.3g}",
        "exact_share": f"{numbers['exact_share']:.4g}",
        "rel_error": f"{numbers['rel_error']:.3g}",
        "bits_error": f"{numbers['bits_error']:.3g}",
        "unit": f"ulps of {fmt}" if fmt == cmp.format else f"{fmt} result: ulps of {fmt}",
    }
    record = {
        "op": cmp.op,
        "format": fmt,
        "n": cmp.n,
        "distribution": "user data",
        "variant": name,
        "backend": OBSERVED,
        "value": float(v) if scalar else np.nan,
        "value_repr": row["value"] if scalar else "",
        "value_hex": row["hex"],
        **numbers,
    }
    return row, record
