"""Explaining a difference: which order produced a result, and where a difference comes from.

* :func:`match_orders` — the *order detective*: given the inputs and an observed result (say
  from a GPU), try every evaluation order with its parameters, FMA on and off, accumulator
  formats and input roundings, and rank the candidates by how many observations each one
  reproduces bit for bit.
* :func:`difference_budget` — split the difference between two configurations (e.g. the CPU's
  and the GPU's) into the parts due to input rounding, accumulator precision, evaluation order
  and FMA, by switching one factor at a time; the parts add up to the total.
* :func:`reproducer` — a self-contained script (NumPy only; CuPy where present) that
  reproduces a divergence found with :func:`fpexplore.compare` and asserts it with a
  calibrated tolerance.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .formats import _coerce, as_format, format_info, ulp_distance
from .orders import dot as fdot
from .orders import matmul as fmatmul
from .orders import sum as fsum
from .orders._registry import OPS as ORDER_OPS
from .spec import VariantSpec, parse_spec

__all__ = ["Candidate", "difference_budget", "explain_numpy", "match_orders", "reproducer"]

BLOCKS = (32, 64, 128, 256, 512, 1024)
INPUT_ROUNDINGS = (None, "tf32", "bfloat16")


@dataclass(frozen=True)
class Candidate:
    """One configuration: order and its parameters, fma, accumulator, input rounding."""

    order: str
    params: tuple = ()
    fma: bool = False
    accumulate: str | None = None
    input_rounding: str | None = None

    def spec(self) -> VariantSpec:
        """This configuration as a variant spec (what ``compare`` and the explorer take)."""
        return VariantSpec(self.order, self.params, self.fma, self.input_rounding, self.accumulate)

    def label(self) -> str:
        """The variant spec string, e.g. ``"blocked(block=64)+fma+tf32@float64"``."""
        return str(self.spec())

    def kwargs(self) -> dict:
        kw = dict(self.params)
        if self.accumulate:
            kw["accumulate"] = self.accumulate
        return kw


def _param_grid(order: str, op: str) -> list[tuple]:
    spec = ORDER_OPS[op][order]
    if order in ("blocked", "tree", "tree-strided"):
        return [(("block", b),) for b in BLOCKS]
    if order == "cupy-kernel":
        return [(("block_size", b), ("ftz", f)) for b in (256, 512, 1024) for f in (True, False)]
    if order == "cub":
        return [
            (("thread_reduce", t), ("aligned", a))
            for t in ("tree", "sequential")
            for a in (True, False)
        ]
    if order == "shuffled" or spec.kind == "exact":
        return [()] if order == "exact" else []  # a random order has nothing to match
    return [()]


def candidates(op: str, fmt: str, *, fma=(False, True), roundings=None) -> list[Candidate]:
    """Every configuration the detective tries for ``op`` on ``fmt`` inputs."""
    info = format_info(fmt)
    accs = [None] + [f for f in ("float32", "float64") if format_info(f).precision > info.precision]
    if roundings is None:
        roundings = INPUT_ROUNDINGS if op != "sum" and fmt in ("float32", "float64") else (None,)
    out = []
    for order, spec in ORDER_OPS[op].items():
        for params in _param_grid(order, op):
            for f in fma if (op != "sum" and spec.fma) else (False,):
                for acc in accs if order != "exact" else (None,):
                    for r in roundings if order != "exact" else (None,):
                        out.append(Candidate(order, params, f, acc, r))
    return out


def _evaluate(op: str, cand: Candidate, inputs: tuple):
    if cand.input_rounding and op != "sum":
        fmt = format_info(inputs[0].dtype).name
        inputs = tuple(
            np.asarray(as_format(as_format(v, cand.input_rounding), fmt)) for v in inputs
        )
    kw = cand.kwargs()
    if op == "sum":
        return fsum(inputs[0], cand.order, **kw)
    if op == "dot":
        return fdot(inputs[0], inputs[1], cand.order, fma=cand.fma, **kw)
    return fmatmul(inputs[0], inputs[1], cand.order, fma=cand.fma, **kw)


def _as_observations(inputs, observed, op: str):
    """Normalize to a list of (inputs tuple, observed array)."""
    single = not isinstance(inputs, list)
    ins = [inputs] if single else list(inputs)
    obs = [observed] if single else list(observed)
    if len(ins) != len(obs):
        raise ValueError(f"{len(ins)} inputs but {len(obs)} observations")
    out = []
    arity = 1 if op == "sum" else 2
    for i, o in zip(ins, obs):
        i = (i,) if arity == 1 and not isinstance(i, tuple) else tuple(i)
        if len(i) != arity:
            raise ValueError(f"{op} takes {arity} input array(s) per observation, got {len(i)}")
        arrays, info = _coerce(*i, o, what="match_orders")
        out.append((tuple(arrays[:-1]), arrays[-1]))
    return out, info


def match_orders(inputs, observed, op: str = "sum", candidates_=None, *, top: int | None = 20):
    """Which evaluation order reproduces ``observed``? A ranked pandas DataFrame.

    Parameters
    ----------
    inputs : the input array (sum) or a tuple of two arrays (dot, matmul) -- or a list of
        those, one per observation
    observed : the result(s) to explain, in the inputs' format (a scalar for sum/dot, an
        (m, n) array for matmul: each element is an observation)
    op : "sum", "dot" or "matmul"
    candidates_ : a list of :class:`Candidate` to try (default: every order with its block
        sizes {32 ... 1024} and other parameters, fma off/on, accumulator = the format or a
        wider one, input rounding none/tf32/bfloat16 for dot and matmul)
    top : rows to return (None: all)

    Returns
    -------
    DataFrame, best first: ``variant`` (the variant spec, e.g. ``"blocked(block=64)+fma"``:
    ``fpx.compare(op, variants=[df.variant[0]], ...)`` reproduces it), ``order``, ``fma``,
    ``accumulate``, ``input_rounding``, ``params``, ``exact_matches`` (observations
    reproduced bit for bit), ``observations``, ``max_ulp``, ``mean_ulp``, ``exact`` (all
    reproduced).

    The search is staged: every candidate is run on the first observation; only those within
    the best few ulps there are run on the rest (a bit-exact match must match everywhere).
    Ties are broken toward the simplest configuration (no input rounding, default
    accumulator, no fma); ``df.attrs["note"]`` says how many candidates reproduce everything.
    """
    import pandas as pd

    if op not in ("sum", "dot", "matmul"):
        raise ValueError(f"unknown op {op!r}; match_orders takes sum, dot or matmul")
    obs, info = _as_observations(inputs, observed, op)
    cands = candidates_ if candidates_ is not None else candidates(op, info.name)
    first_in, first_obs = obs[0]
    scored = []
    for c in cands:
        try:
            got = _evaluate(op, c, first_in)
        except ValueError:
            continue  # a parameter that does not apply (e.g. block larger than allowed)
        u = np.abs(np.asarray(ulp_distance(first_obs, got, nan="sentinel"), dtype=np.float64))
        u = np.where(u >= 2**62, np.inf, u)
        scored.append((c, [u]))
    if not scored:
        raise ValueError("no candidate could be evaluated")
    best = min(float(np.max(u[0])) for _, u in scored)
    keep_threshold = max(best, 0.0) + 2.0
    for c, us in scored:
        if float(np.max(us[0])) <= keep_threshold:
            for ins, o in obs[1:]:
                got = _evaluate(op, c, ins)
                u = np.abs(np.asarray(ulp_distance(o, got, nan="sentinel"), dtype=np.float64))
                us.append(np.where(u >= 2**62, np.inf, u))
    rows = []
    total = sum(int(np.size(o)) for _, o in obs)
    for c, us in scored:
        flat = np.concatenate([np.ravel(u) for u in us])
        complete = len(us) == len(obs)
        rows.append(
            {
                "variant": c.label(),
                "order": c.order,
                "fma": c.fma,
                "accumulate": c.accumulate or info.name,
                "input_rounding": c.input_rounding or "none",
                "params": dict(c.params),
                "exact_matches": int(np.sum(flat == 0)),
                "observations": total if complete else int(flat.size),
                "max_ulp": float(np.max(flat)),
                "mean_ulp": float(np.mean(flat)),
                "exact": bool(complete and np.all(flat == 0)),
                "_simplicity": (c.input_rounding is not None) + (c.accumulate is not None) + c.fma,
            }
        )
    df = pd.DataFrame(rows)
    df["_complete"] = df["observations"] == total
    df = (
        df.sort_values(
            ["exact", "_complete", "exact_matches", "max_ulp", "mean_ulp", "_simplicity"],
            ascending=[False, False, False, True, True, True],
            kind="stable",
        )
        .drop(columns=["_complete", "_simplicity"])
        .reset_index(drop=True)
    )
    n_exact = int(df["exact"].sum())
    df.attrs["exact_candidates"] = n_exact
    df.attrs["note"] = (
        "no candidate reproduces every observation"
        if n_exact == 0
        else "one candidate reproduces every observation"
        if n_exact == 1
        else f"{n_exact} candidates reproduce every observation (ties: simplest first); "
        "more observations, or larger ones, tell them apart"
    )
    return df if top is None else df.head(top)


NUMPY_FUNCTIONS = {
    "sum": ("np.sum", np.sum),
    "dot": ("np.dot", np.dot),
    "matmul": ("np.matmul", np.matmul),
}
PROBE_SIZE = 20_011


def explain_numpy(op: str, inputs, *, probes: int = 5, top: int | None = 5):
    """Which order did NumPy's own function use? :func:`match_orders` on NumPy's results.

    Runs ``np.sum`` / ``np.dot`` / ``np.matmul`` (on this machine, with its BLAS) on
    ``inputs`` and, for sum and dot, on ``probes`` more seeded inputs (wide-range data of
    20,011 elements in the same format): one scalar rarely singles out an order, several
    observations of the same library do. A matmul result already holds one observation per
    element, so it gets no probes.

    Parameters
    ----------
    op : "sum", "dot" or "matmul"
    inputs : the op's inputs as :attr:`Comparison.inputs` holds them (``{"x"}`` for sum,
        ``{"a", "b"}`` for dot, ``{"A", "B"}`` for matmul), or a :class:`Comparison`
    probes, top : the number of extra probe inputs; rows to return (as in match_orders)

    Returns
    -------
    The ranked DataFrame of :func:`match_orders`; ``attrs`` adds ``function`` (e.g.
    "np.dot") and ``note`` says how many candidates reproduce every observation. NumPy's
    ``np.sum`` is the ``numpy`` order on every machine; ``np.dot`` and ``np.matmul`` call
    the BLAS, whose order depends on the CPU and the library build, so their answer is
    about this machine only.
    """
    from .experiment import generate

    if hasattr(inputs, "inputs") and hasattr(inputs, "op"):  # a Comparison
        if inputs.op != op:
            raise ValueError(f"the comparison is of {inputs.op!r}, not {op!r}")
        inputs = inputs.inputs
    if op not in NUMPY_FUNCTIONS:
        raise ValueError(f"explain_numpy explains {', '.join(NUMPY_FUNCTIONS)}; got {op!r}")
    label, func = NUMPY_FUNCTIONS[op]
    names = {"sum": ("x",), "dot": ("a", "b"), "matmul": ("A", "B")}[op]
    missing = [k for k in names if k not in inputs]
    if missing:
        raise ValueError(f"{op} needs inputs {', '.join(names)}; missing {', '.join(missing)}")
    first = tuple(np.asarray(inputs[k]) for k in names)
    fmt = _coerce(*first, what="explain_numpy")[1].name
    ins = [first]
    if op != "matmul":
        for s in range(probes):
            ins.append(
                tuple(generate("wide", PROBE_SIZE, fmt, s + 99 * j) for j in range(len(names)))
            )
    with np.errstate(all="ignore"):
        obs = [func(*i) for i in ins]
    arg = [i[0] for i in ins] if op == "sum" else ins
    df = match_orders(arg, obs, op, top=top)
    df.attrs["function"] = label
    return df


# ----------------------------------------------------------------------------- budget

FACTORS = ("input_rounding", "accumulate", "order", "fma")


@dataclass
class Budget:
    """The result of :func:`difference_budget`: ``table`` (one row per step: the factor
    switched, its configuration, the result, the change in ulps and absolutely), ``total``
    (ulps from start to end; the steps' ``delta_ulp`` add up to it) and ``plot()`` (a
    waterfall)."""

    table: object
    total_ulp: int
    start: object
    end: object
    steps: list = field(default_factory=list)

    def plot(self, ax=None):
        from .plots import OKABE_ITO, _new_ax

        fig, ax = _new_ax() if ax is None else (ax.figure, ax)
        t = self.table
        deltas = t["delta_ulp"].to_numpy(dtype=float)[1:]
        labels = list(t["step"])[1:]
        base = np.concatenate([[0.0], np.cumsum(deltas)[:-1]])
        colors = [OKABE_ITO[2] if d >= 0 else OKABE_ITO[5] for d in deltas]
        ax.bar(range(len(deltas)), deltas, bottom=base, color=colors, edgecolor="black")
        ax.bar(len(deltas), self.total_ulp, color=OKABE_ITO[0], edgecolor="black")
        ax.set_xticks(range(len(deltas) + 1), labels + ["total"], rotation=20, ha="right")
        ax.axhline(0, color="black", lw=1)
        ax.set_ylabel("ulps from the starting result")
        ax.set_title("difference budget: one factor switched at a time")
        return fig


def _as_config(cfg, op: str) -> dict:
    """A configuration dict from a dict, a variant spec string or a VariantSpec."""
    if isinstance(cfg, (str, VariantSpec)):
        s = parse_spec(cfg, op)
        return {
            "order": s.name,
            "params": dict(s.params),
            "fma": s.fma,
            "accumulate": s.accumulate,
            "input_rounding": s.input_rounding,
        }
    return dict(cfg)


def _config_result(op, inputs, cfg):
    c = Candidate(
        cfg["order"],
        tuple(sorted(cfg.get("params", {}).items())),
        bool(cfg.get("fma", False)),
        cfg.get("accumulate"),
        cfg.get("input_rounding"),
    )
    return _evaluate(op, c, inputs)


def difference_budget(inputs, start, end, op: str = "dot", *, factors=FACTORS) -> Budget:
    """Split the difference between the results of two configurations into its causes.

    ``start`` and ``end`` are variant specs (``"numpy"``, ``"tree(block=256)+tf32"``, see
    :func:`fpexplore.parse_spec`) or dicts with keys ``order`` (and ``params``), ``fma``,
    ``accumulate``, ``input_rounding`` (missing keys: order "sequential", no fma, the
    inputs' format, no input rounding). The table's ``config`` column shows each step's
    configuration as a spec. Starting from ``start``, the factors are switched to
    ``end``'s values one at a time in the order ``factors``; each step's change (in ulps of
    the result, and absolute) is that factor's share. The shares add up exactly to the total
    (the steps telescope); the attribution depends on the switching order, which is part of
    the answer (``factors=`` changes it).
    """
    import pandas as pd

    if op not in ("sum", "dot", "matmul"):
        raise ValueError(f"unknown op {op!r}; difference_budget takes sum, dot or matmul")
    bad = set(factors) - set(FACTORS)
    if bad:
        raise ValueError(f"unknown factor(s) {sorted(bad)}; factors: {', '.join(FACTORS)}")
    inputs = (inputs,) if op == "sum" and not isinstance(inputs, tuple) else tuple(inputs)
    defaults = {
        "order": "sequential",
        "params": {},
        "fma": False,
        "accumulate": None,
        "input_rounding": None,
    }
    cfg = {**defaults, **_as_config(start, op)}
    target = {**defaults, **_as_config(end, op)}
    rows, steps = [], []
    prev = _config_result(op, inputs, cfg)
    first = prev
    rows.append(
        {
            "step": "start",
            "config": _describe(cfg),
            "result": _val(prev),
            "delta_ulp": 0,
            "delta_abs": 0.0,
        }
    )
    for f in factors:
        keys = ("order", "params") if f == "order" else (f,)
        if all(cfg[k] == target[k] for k in keys):
            continue
        for k in keys:
            cfg[k] = target[k]
        cur = _config_result(op, inputs, cfg)
        d = _ulps(prev, cur)
        rows.append(
            {
                "step": f,
                "config": _describe(cfg),
                "result": _val(cur),
                "delta_ulp": d,
                "delta_abs": _absdiff(prev, cur),
            }
        )
        steps.append((f, cur))
        prev = cur
    total = _ulps(first, prev)
    return Budget(pd.DataFrame(rows), total, first, prev, steps)


def _describe(cfg) -> str:
    c = Candidate(
        cfg["order"],
        tuple(sorted(cfg.get("params", {}).items())),
        cfg["fma"],
        cfg["accumulate"],
        cfg["input_rounding"],
    )
    return c.label()


def _val(v):
    return float(v) if np.ndim(v) == 0 else np.asarray(v)


def _ulps(a, b) -> int:
    d = np.asarray(ulp_distance(a, b), dtype=np.int64)
    return int(d) if d.ndim == 0 else int(np.sum(d))


def _absdiff(a, b) -> float:
    return float(np.sum(np.asarray(b, dtype=np.float64) - np.asarray(a, dtype=np.float64)))


# ----------------------------------------------------------------------------- reproducer

_ORDER_SOURCE = {
    "sequential": """
def order_sum(t, T):
    acc = t[0] if len(t) else T(0)
    for v in t[1:]:
        acc = T(acc + v)
    return acc
""",
    "reverse": """
def order_sum(t, T):
    t = t[::-1]
    acc = t[0] if len(t) else T(0)
    for v in t[1:]:
        acc = T(acc + v)
    return acc
""",
    "pairwise": """
def order_sum(t, T):
    if len(t) == 0:
        return T(0)
    if len(t) == 1:
        return t[0]
    h = len(t) // 2
    return T(order_sum(t[:h], T) + order_sum(t[h:], T))
""",
    "blocked": """
BLOCK = {block}

def order_sum(t, T):
    sums = []
    for lo in range(0, len(t), BLOCK):
        acc = t[lo]
        for v in t[lo + 1 : lo + BLOCK]:
            acc = T(acc + v)
        sums.append(acc)
    acc = sums[0] if sums else T(0)
    for s in sums[1:]:
        acc = T(acc + s)
    return acc
""",
    "tree": """
BLOCK = {block}

def order_sum(t, T):
    # each block of BLOCK "threads": s[i] += s[i + k] for i % 2k == 0, k = 1, 2, 4, ...
    # (the last block padded with zeros), block results added in order onto 0.0
    acc = T(0)
    for lo in range(0, len(t), BLOCK):
        s = list(t[lo : lo + BLOCK]) + [T(0)] * max(0, lo + BLOCK - len(t))
        k = 1
        while k < BLOCK:
            for i in range(0, BLOCK, 2 * k):
                s[i] = T(s[i] + s[i + k])
            k *= 2
        acc = T(acc + s[0])
    return acc
""",
}


def reproducer(comparison, variant: str | None = None) -> str:
    """A standalone Python script that reproduces a divergence found by ``compare``.

    The script needs only NumPy (ml_dtypes for bfloat16): it rebuilds the inputs from the same
    seed, computes NumPy's own result and the chosen emulated variant's result with a plain
    Python transcription of that order, prints both and the exact result recorded here,
    checks that they differ as observed, and asserts they agree within the tolerance that
    :func:`fpexplore.suggest_tolerance` calibrates. Where CuPy and a GPU are present it also
    prints the GPU's own result. Supported: ops sum and dot with the orders sequential,
    reverse, pairwise, blocked and tree (the ones a few lines of Python can state exactly).
    """
    from .tolerance import suggest_tolerance

    cmp = comparison
    if cmp.op not in ("sum", "dot"):
        raise ValueError(f"reproducer supports sum and dot comparisons, not {cmp.op!r}")
    if cmp.format == "bfloat16":
        raise ValueError(
            "reproducer: bfloat16 needs a correctly rounding conversion that "
            "plain NumPy/ml_dtypes lacks (their float64 -> bfloat16 rounds twice)"
        )
    extra = sorted(set(cmp.params) - {"variants", "distribution", "seed", "block"})
    if extra:
        raise ValueError(f"reproducer: comparisons with {', '.join(extra)} are not supported")
    emulated = [k for k in cmp.results if k[1] == "emulated" and k[0] in _ORDER_SOURCE]
    if variant is not None:
        emulated = [k for k in emulated if k[0] == variant]
    if not emulated:
        raise ValueError(
            f"no emulated variant among {', '.join(_ORDER_SOURCE)} in this comparison"
            + (f" named {variant!r}" if variant else "")
        )
    key = emulated[0]
    got = cmp.results[key]
    numpy_key = next((k for k in cmp.results if k[1] == "numpy"), None)
    if numpy_key is None:
        raise ValueError("the comparison has no numpy backend result to compare with")
    expected = cmp.results[numpy_key]
    tol = suggest_tolerance(np.asarray([got]), np.asarray([expected]), margin=4.0)
    rtol = max(tol.rtol, 4 * format_info(cmp.format).eps)
    block = cmp.params.get("block", 128)
    dist = cmp.params.get("distribution", "uniform")
    seed = cmp.params.get("seed", 0)
    fmt = cmp.format
    dtype = "ml_dtypes.bfloat16" if fmt == "bfloat16" else f"np.{fmt}"
    gen = {
        "uniform": "rng.random(n)",
        "normal": "rng.standard_normal(n)",
        "wide": f"np.ldexp(1.0 + rng.random(n), rng.integers(-{9 if fmt == 'float16' else 40}, "
        f"{9 if fmt == 'float16' else 40}, n)) * rng.choice([-1.0, 1.0], n)",
        "ill-conditioned": None,
    }[dist]
    if gen is None:
        gen_code = (
            "half = (n + 1) // 2\n"
            "    v = rng.standard_normal(half)\n"
            "    w = -v * (1 + 1e-3 * rng.standard_normal(half))\n"
            "    x = np.concatenate([v, w])[:n]\n"
            "    return x[rng.permutation(n)]"
        )
    else:
        gen_code = f"return {gen}"
    if cmp.op == "dot" and dist == "ill-conditioned":
        raise ValueError("reproducer: dot with ill-conditioned data is not supported yet")
    exact = cmp.reference
    lines = [
        '"""Reproduces an fpexplore comparison without fpexplore.',
        "",
        f"op={cmp.op!r}, format={fmt!r}, n={cmp.n}, distribution={dist!r}, seed={seed}:",
        f"NumPy's {numpy_key[0]} gives {float(expected)!r}; the order {key[0]!r} gives "
        f"{float(got)!r};",
        f"the correctly rounded exact result is {float(exact)!r}.",
        '"""',
        "",
        "import numpy as np",
    ]
    if fmt == "bfloat16":
        lines.append("import ml_dtypes")
    lines += [
        "",
        f"T = {dtype}",
        f"n = {cmp.n}",
        "",
        "",
        "def draw(rng, n):",
        f"    {gen_code}",
        "",
        "",
        "def data(seed):",
        "    x = draw(np.random.default_rng(seed), n)",
        "    return x.astype(T)  # float64 -> format: one correct rounding",
        "",
    ]
    if cmp.op == "dot":
        lines += [
            f"a = data({seed})",
            f"b = data({seed + 1})",
            "with np.errstate(all='ignore'):",
            "    terms = [T(p) for p in (a * b)]  # products rounded to the format",
            "expected = np.dot(a, b)",
        ]
    else:
        lines += [f"x = data({seed})", "terms = [T(v) for v in x]", "expected = np.sum(x)"]
    lines += _ORDER_SOURCE[key[0]].format(block=block).splitlines()
    lines += [
        "",
        "got = order_sum(terms, T)",
        "print('NumPy   ', repr(float(expected)))",
        f"print({key[0]!r:10}, repr(float(got)))",
        f"print('exact   ', {float(exact)!r})",
        "try:  # the real GPU, where there is one",
        "    import cupy",
        "",
        f"    gpu = cupy.{'sum' if cmp.op == 'sum' else 'dot'}("
        + ("cupy.asarray(x)" if cmp.op == "sum" else "cupy.asarray(a), cupy.asarray(b)")
        + ")",
        "    print('cupy    ', repr(float(gpu)))",
        "except Exception as e:  # no CuPy, no driver, no device",
        "    print('cupy     not available:', type(e).__name__)",
        "",
        f"assert float(got) == {float(got)!r}, 'the emulated order should give this value'",
        f"if float(expected) != {float(expected)!r}:",
        "    print('note: this NumPy (or BLAS) computed another value than when recorded')",
        f"np.testing.assert_allclose(float(got), float(expected), rtol={rtol:.3g}, atol=0)",
        "print('reproduced: different bits, within the calibrated tolerance')",
    ]
    return "\n".join(lines) + "\n"
