"""How each op takes part in an experiment: its inputs, variants, NumPy's own call and the
reference. One adapter per op; ``get(op)`` looks them up (ValueError listing the ops)."""

from __future__ import annotations

import numpy as np

from .data import generate
from .exact import exact_dot, exact_sum
from .formats import as_format, format_info
from .metrics import sum_bound
from .ops.registry import ops as _ops
from .ops.registry import variants as _variants
from .orders import dot, exact_matmul, matmul
from .orders import sum as fsum
from .orders.registry import OPS as ORDER_OPS
from .spec import parse_spec


class Adapter:
    """Base: subclasses set ``op`` and implement ``inputs``, ``run`` and ``reference``."""

    op = ""
    default_variants: tuple = ()
    numpy_label: str | None = None
    max_n = 10**7
    default_n = 100_000  # the explorer's first size for the op: live on a 2-core laptop
    bytes_per_element = 64.0  # generous: inputs, outputs, reference and temporaries

    def bytes_needed(self, n: int, itemsize: int) -> int:
        return int(n * self.bytes_per_element)

    unsupported: dict = {}  # format -> variants that do not exist for it (the op says why)

    def variants_for(self, fmt: str) -> list[str]:
        """The variants that exist for inputs of format ``fmt``."""
        skip = self.unsupported.get(fmt, ())
        return [v for v in _variants(self.op) if v not in skip]

    def resolve_variants(self, variants, fmt: str | None = None) -> list[str]:
        """The variants to run, each as its canonical variant spec string (a plain name stays
        itself); ValueError for names or settings that do not exist for the op."""
        valid = _variants(self.op)
        if variants is None:
            chosen = list(self.default_variants) or list(valid)
            return [v for v in chosen if fmt is None or v in self.variants_for(fmt)]
        if isinstance(variants, str) or not hasattr(variants, "__iter__"):
            variants = [variants]  # one name, spec string or VariantSpec
        return [str(parse_spec(v, self.op)) for v in variants]

    def inputs(self, n, fmt, distribution, seed, params) -> dict:
        raise NotImplementedError

    def run(self, variant, inputs, params):
        raise NotImplementedError

    numpy = None  # NumPy's own function on the inputs, or None
    gpu = None  # CuPy's counterpart on the inputs (runs on a GPU), or None
    gpu_label = ""

    def reference(self, inputs, params, fmt):
        """The correctly rounded result in format ``fmt``."""
        raise NotImplementedError

    def reference_for(self, inputs, out, params, cache):
        """The reference in the format of ``out`` (or of the inputs when out is None).

        A library may return another format than its inputs' (``np.matmul`` of bfloat16 gives
        float32): the reference is then the exact result rounded to that format, computed from
        the inputs widened exactly. A narrower output format is refused (no exact widening).
        """
        fmt = format_info(np.asarray(out).dtype).name if out is not None else inputs["format"]
        if fmt not in cache:
            if fmt == inputs["format"]:
                cache[fmt] = self.reference(inputs, params, fmt)
            else:
                src, dst = format_info(inputs["format"]), format_info(fmt)
                if dst.precision < src.precision or dst.emax < src.emax:
                    raise ValueError(
                        f"{self.op}: a {fmt} result of {src.name} inputs has no "
                        "exact reference here"
                    )
                wide = {
                    k: (
                        np.asarray(as_format(v, fmt))
                        if isinstance(v, np.ndarray) and v.dtype == src.dtype
                        else v
                    )
                    for k, v in inputs.items()
                }
                wide["format"] = fmt
                cache[fmt] = self.reference(wide, params, fmt)
        return cache[fmt]

    def bounds(self, inputs, fmt):
        return None


def _sum_bounds(terms, fmt) -> dict:
    """The bounds sweep() overlays, for summing ``terms`` in format ``fmt``."""
    return {
        "worst_sequential": sum_bound(terms, "sequential", fmt),
        "worst_pairwise": sum_bound(terms, "pairwise", fmt),
        "probabilistic": sum_bound(terms, "probabilistic", fmt),
    }


class _OrderAdapter(Adapter):
    """sum, dot, matmul: the variants are evaluation orders."""

    def variants_for(self, fmt: str) -> list[str]:
        from .orders.registry import orders_for

        return orders_for(self.op, fmt)

    default_variants = ("sequential", "pairwise", "numpy", "tree", "kahan")

    def order_params(self, variant: str, params: dict) -> dict:
        spec = ORDER_OPS[self.op][variant]
        keep = set(spec.params) | {"accumulate"}
        if self.op != "sum" and spec.fma:
            keep.add("fma")
        if self.op != "sum":
            keep.add("input_rounding")
        if self.op == "matmul":
            keep.add("split_k")
        return {k: v for k, v in params.items() if k in keep}

    def spec(self, variant, params: dict) -> tuple[str, dict]:
        """(order, keywords): the op-wide params the order takes, then the spec's settings
        (dot and matmul take ``input_rounding``)."""
        s = parse_spec(variant, self.op)
        kw = self.order_params(s.name, params)
        kw.update(s.kwargs())
        return s.name, kw


class SumAdapter(_OrderAdapter):
    op = "sum"
    numpy_label = "np.sum"
    max_n = 10**8
    bytes_per_element = 24.0

    def inputs(self, n, fmt, distribution, seed, params):
        return {"format": fmt, "x": generate(distribution, n, fmt, seed)}

    def run(self, variant, inputs, params):
        order, kw = self.spec(variant, params)
        return fsum(inputs["x"], order, **kw)

    def numpy(self, inputs, params):
        with np.errstate(all="ignore"):
            return np.sum(inputs["x"])

    def reference(self, inputs, params, fmt):
        return exact_sum(inputs["x"])

    gpu_label = "cupy.sum"

    def gpu(self, inputs, params):
        from .backends import cupy as g

        return g.library("sum", inputs["x"])

    def bounds(self, inputs, fmt):
        return _sum_bounds(inputs["x"], fmt)


class DotAdapter(SumAdapter):
    op = "dot"
    numpy_label = "np.dot"
    bytes_per_element = 40.0

    def inputs(self, n, fmt, distribution, seed, params):
        return {
            "format": fmt,
            "a": generate(distribution, n, fmt, seed),
            "b": generate(
                distribution if distribution != "ill-conditioned" else "normal", n, fmt, seed + 1
            ),
        }

    def run(self, variant, inputs, params):
        s = parse_spec(variant, self.op)
        order, kw = self.spec(s, params)
        return dot(inputs["a"], inputs["b"], order, **kw)

    def numpy(self, inputs, params):
        with np.errstate(all="ignore"):
            return np.dot(inputs["a"], inputs["b"])

    def reference(self, inputs, params, fmt):
        return exact_dot(inputs["a"], inputs["b"])

    gpu_label = "cupy.dot"

    def gpu(self, inputs, params):
        from .backends import cupy as g

        return g.library("dot", inputs["a"], inputs["b"])

    def bounds(self, inputs, fmt):
        return _sum_bounds(np.abs(inputs["a"].astype(np.float64) * inputs["b"]), fmt)


class MatmulAdapter(_OrderAdapter):
    op = "matmul"
    numpy_label = "np.matmul"
    default_variants = ("sequential", "pairwise", "tree", "kahan")
    max_n = 1024  # the emulated orders are O(n^3) loops
    default_n = 100

    def bytes_needed(self, n, itemsize):
        return int(n * n * 64)

    def inputs(self, n, fmt, distribution, seed, params):
        return {
            "format": fmt,
            "A": generate(distribution, n * n, fmt, seed).reshape(n, n),
            "B": generate(distribution, n * n, fmt, seed + 1).reshape(n, n),
        }

    def run(self, variant, inputs, params):
        order, kw = self.spec(variant, params)
        return matmul(inputs["A"], inputs["B"], order, **kw)

    def numpy(self, inputs, params):
        with np.errstate(all="ignore"):
            return inputs["A"] @ inputs["B"]

    def reference(self, inputs, params, fmt):
        return exact_matmul(inputs["A"], inputs["B"])

    gpu_label = "cupy.matmul"

    def gpu(self, inputs, params):
        from .backends import cupy as g

        return g.library("matmul", inputs["A"], inputs["B"])


class LinspaceAdapter(Adapter):
    """start and stop are two values drawn from the distribution."""

    op = "linspace"
    unsupported = {"bfloat16": {"numpy1", "numpy2", "cupy", "cupy-array", "cupy-scalar"}}
    numpy_label = "np.linspace"
    default_variants = ("numpy1", "numpy2", "cupy-scalar", "lerp", "fma")
    bytes_per_element = 96.0

    def inputs(self, n, fmt, distribution, seed, params):
        a, b = generate(distribution, 2, fmt, seed)
        return {"format": fmt, "start": a, "stop": b, "num": n}

    def _args(self, inputs, params):
        kw = {k: v for k, v in params.items() if k in ("endpoint",)}
        return inputs["start"], inputs["stop"], inputs["num"], kw

    def run(self, variant, inputs, params):
        from .ops.linspace import linspace

        s, e, num, kw = self._args(inputs, params)
        return linspace(s, e, num, variant=parse_spec(variant, self.op).name, **kw)

    def numpy(self, inputs, params):
        s, e, num, kw = self._args(inputs, params)
        with np.errstate(all="ignore"):
            return np.linspace(s, e, num, **kw)

    def reference(self, inputs, params, fmt):
        from .ops.linspace import exact_column

        s, e, num, kw = self._args(inputs, params)
        div = num - 1 if kw.get("endpoint", True) else num
        y = exact_column(float(s), float(e), num, div, format_info(fmt).dtype)
        if kw.get("endpoint", True) and num > 1:
            y[-1] = float(e)
        return y


class CdistAdapter(Adapter):
    """x: n points of dimension d (param ``d``, default 16) from the distribution; y: the same
    points moved by ``closeness`` (default 1e-2) times normal noise, so that the expanded
    formula cancels (docs/cases.md section 4)."""

    op = "cdist"
    numpy_label = "numpy broadcast"
    default_variants = ("expanded", "direct")
    max_n = 2048
    default_n = 100
    keys = ("order", "accumulate", "fma", "clamp", "block")

    def bytes_needed(self, n, itemsize):
        return int(n * n * 64)

    def inputs(self, n, fmt, distribution, seed, params):
        d = int(params.get("d", 16))
        close = float(params.get("closeness", 1e-2))
        x = generate(distribution, n * d, "float64", seed).reshape(n, d)
        noise = generate("normal", n * d, "float64", seed + 1).reshape(n, d) * close
        return {
            "format": fmt,
            "x": np.asarray(as_format(x, fmt)),
            "y": np.asarray(as_format(x + noise, fmt)),
        }

    def run(self, variant, inputs, params):
        from .ops.ml import cdist

        s = parse_spec(variant, self.op)
        kw = {k: v for k, v in params.items() if k in self.keys}
        if s.name != "expanded":
            kw.pop("clamp", None)
            kw.pop("fma", None)
        kw.update(s.kwargs())  # the spec's own settings win
        return cdist(inputs["x"], inputs["y"], variant=s.name, **kw)

    def numpy(self, inputs, params):
        x, y = inputs["x"], inputs["y"]
        with np.errstate(all="ignore"):
            return np.sqrt(((x[:, None, :] - y[None, :, :]) ** 2).sum(-1))

    def reference(self, inputs, params, fmt):
        from .ops.ml import cdist

        return cdist(inputs["x"], inputs["y"], variant="exact")


class AdamAdapter(Adapter):
    """n parameters from the distribution; gradients normal; moments after one step with a
    previous gradient; this is step 2. Hyperparameters: lr=1e-3, betas (0.9, 0.999),
    eps=1e-8 unless given (``lr=``, ``beta1=``, ...). The table measures the new parameters."""

    op = "adam_step"
    default_variants = ("div-then-mul", "mul-then-div", "div-then-mul+fma", "torch")
    max_n = 10**7
    default_n = 1000  # float64's exact reference takes ~0.3 ms per element (mpmath intervals)
    bytes_per_element = 160.0
    hyper = {"lr": 1e-3, "beta1": 0.9, "beta2": 0.999, "eps": 1e-8, "weight_decay": 0.0}

    def inputs(self, n, fmt, distribution, seed, params):
        from .ops.ml import adam_step

        p = generate(distribution, n, fmt, seed)
        g0 = generate("normal", n, fmt, seed + 1)
        zero = np.zeros_like(p)
        h = {k: params.get(k, v) for k, v in self.hyper.items()}
        _, m, v = adam_step(p, g0, zero, zero, 1, variant="div-then-mul", **h)
        return {
            "format": fmt,
            "param": p,
            "grad": generate("normal", n, fmt, seed + 2),
            "m": m,
            "v": v,
            "hyper": h,
        }

    def _call(self, variant, inputs, params):
        from .ops.ml import adam_step

        s = parse_spec(variant, self.op)
        kw = {k: v for k, v in params.items() if k == "moments"}
        kw.update(s.kwargs())
        return adam_step(
            inputs["param"],
            inputs["grad"],
            inputs["m"],
            inputs["v"],
            2,
            variant=s.name,
            **inputs["hyper"],
            **kw,
        )[0]

    def run(self, variant, inputs, params):
        return self._call(variant, inputs, params)

    def reference(self, inputs, params, fmt):
        return self._call("exact", inputs, params)


class ElementwiseAdapter(Adapter):
    """x from the distribution (log, sqrt and pow take |x|, zeros replaced by the smallest
    normal number); pow's exponent y is uniform on [-3, 3]."""

    default_variants = ("numpy", "wide")
    bytes_per_element = 48.0

    def __init__(self, op: str):
        self.op = op
        self.numpy_label = "np.power" if op == "pow" else f"np.{op}"

    def _func(self):
        from .ops import elementwise

        return getattr(elementwise, self.op)

    def inputs(self, n, fmt, distribution, seed, params):
        x = generate(distribution, n, fmt, seed)
        if self.op in ("log", "sqrt", "pow"):
            tiny = np.asarray(format_info(fmt).smallest_normal, dtype=x.dtype)
            x = np.where(x == 0, tiny, np.abs(x))
        out = {"format": fmt, "x": x}
        if self.op == "pow":
            y = generate("uniform", n, "float64", seed + 1) * 6 - 3
            out["y"] = np.asarray(as_format(y, fmt))
        return out

    def _args(self, inputs):
        return (inputs["x"], inputs["y"]) if self.op == "pow" else (inputs["x"],)

    def run(self, variant, inputs, params):
        return self._func()(*self._args(inputs), variant=parse_spec(variant, self.op).name)

    def numpy(self, inputs, params):
        f = np.power if self.op == "pow" else getattr(np, self.op)
        with np.errstate(all="ignore"):
            return f(*self._args(inputs))

    def reference(self, inputs, params, fmt):
        return self._func()(*self._args(inputs), variant="exact")


class _StatsAdapter(Adapter):
    keys = ("order", "accumulate")
    max_n = 10**6  # the exact references take a few microseconds per element

    def inputs(self, n, fmt, distribution, seed, params):
        return {"format": fmt, "x": generate(distribution, n, fmt, seed)}

    def _func(self):
        from .ops import stats

        return getattr(stats, self.op)

    def run(self, variant, inputs, params):
        s = parse_spec(variant, self.op)
        kw = {k: v for k, v in params.items() if k in self.keys}
        if self.op == "variance" and s.name in ("welford", "numpy", "exact"):
            kw.pop("order", None)  # their order is part of the variant
        kw.update(s.kwargs())  # the spec's own settings win
        return self._func()(inputs["x"], variant=s.name, **kw)

    def reference(self, inputs, params, fmt):
        kw = {k: v for k, v in params.items() if k == "ddof"}
        return self._func()(inputs["x"], variant="exact", **kw)


class VarianceAdapter(_StatsAdapter):
    op = "variance"
    numpy_label = "np.var"
    default_variants = ("two-pass", "one-pass", "welford", "numpy")
    keys = ("order", "accumulate", "ddof")
    max_n = 10**7

    def numpy(self, inputs, params):
        with np.errstate(all="ignore"):
            return np.var(inputs["x"], ddof=params.get("ddof", 0))


class SoftmaxAdapter(_StatsAdapter):
    op = "softmax"
    default_variants = ("naive", "shifted")


class LogsumexpAdapter(_StatsAdapter):
    op = "logsumexp"
    default_variants = ("naive", "shifted")


_ADAPTERS = {
    a.op: a
    for a in (
        SumAdapter(),
        DotAdapter(),
        MatmulAdapter(),
        LinspaceAdapter(),
        CdistAdapter(),
        AdamAdapter(),
        VarianceAdapter(),
        SoftmaxAdapter(),
        LogsumexpAdapter(),
        *(ElementwiseAdapter(f) for f in ("exp", "log", "sin", "tanh", "sqrt", "pow")),
    )
}


def register(adapter: Adapter) -> None:
    _ADAPTERS[adapter.op] = adapter


def get(op: str) -> Adapter:
    if op not in _ADAPTERS:
        valid = [o for o in _ops() if o in _ADAPTERS]
        raise ValueError(f"unknown op {op!r}; valid ops: {', '.join(valid)}")
    return _ADAPTERS[op]


def names() -> list[str]:
    return [o for o in _ops() if o in _ADAPTERS]
