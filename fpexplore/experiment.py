"""Experiments: ``compare()`` runs an op's variants on generated data (or the user's own)
next to NumPy (and the GPU, the recordings, the CPU libraries where asked) and measures each
result against the exact reference; ``sweep()`` does it over sizes. Both return tidy pandas
tables (pandas is imported when they run), in the result types of :mod:`fpexplore.results`.

Every op is described by its *spec* (inputs, variants, NumPy's own call, the reference, the
size guard), in its own module of :mod:`fpexplore.ops`, found by
:mod:`fpexplore.ops.registry`; each backend's steps and results are in its module of
:mod:`fpexplore.backends` (:func:`fpexplore.backends.steps` lists them in the table's order),
timing in :mod:`fpexplore.timing`, the machine columns from
:func:`fpexplore.machine.environment`.
"""

from __future__ import annotations

import functools
import numbers
from typing import TYPE_CHECKING

import numpy as np

from . import checks
from ._optional import require
from .backends import NAMES, run_step, steps
from .backends.job import Job
from .bits import value_texts
from .data import DISTRIBUTIONS, check_choice
from .formats import format_info, format_name
from .held import is_held_data, result_format
from .machine import environment
from .metrics import summarize
from .ops.opspec import Params, data_format
from .ops.registry import get as get_op
from .orders.arith import ORDER_OPS
from .orders.registry import lookup, orders_of
from .results import USER_DATA, Comparison, Sweep
from .spec import (
    VariantSpec,
    applied_params,
    check_spec,
    keywords_of,
    parse_spec,
    taken_params,
    with_keywords,
    without_defaults,
)

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable

    from numpy.typing import ArrayLike

__all__ = [
    "canonical_params",
    "check_op_params",
    "compare",
    "parse_variants",
    "sweep",
    "taken_keywords",
]

BACKENDS = NAMES  # fpexplore/backends: numpy, emulated, cupy, replay, torch, jax, polars


_check = check_choice


def parse_variants(op: str, variants, fmt: str | None = None) -> list[VariantSpec]:
    """The variants ``compare`` runs for ``op``, parsed once (names, spec strings or
    VariantSpecs; ``None``: the op's defaults that exist for ``fmt``); ValueError for names
    or settings that do not exist for the op."""
    if variants is None:
        variants = get_op(op).defaults_for(fmt)
    elif isinstance(variants, str) or not hasattr(variants, "__iter__"):
        variants = [variants]  # one name, spec string or VariantSpec
    else:  # (pass 28: a dict's values were dropped without a word)
        variants = checks.name_list("variants", variants)
    specs = [parse_spec(v, op) for v in variants]
    seen = [str(s) for s in specs]
    twice = sorted({t for t in seen if seen.count(t) > 1})
    if twice:  # one row per variant: a second one would be the same row again
        raise ValueError(
            f"variants lists {', '.join(map(repr, twice))} more than once (as written or in "
            "another spelling of the same setting); list each variant once"
        )
    return specs


COMPARE_ARGUMENTS = frozenset(
    ("op", "format", "n", "variants", "distribution", "seed", "backends", "threads", "inputs")
    + ("progress",)
)
# sweep's own keywords, and compare's threads= that it passes on
SWEEP_ARGUMENTS = frozenset(
    ("op", "format", "sizes", "variants", "distribution", "seed", "seeds", "backends")
    + ("progress", "threads")
)


def check_op_params(
    op: str, variants, fmt: str | None, op_params: dict, caller=("fpx.compare", COMPARE_ARGUMENTS)
) -> None:
    """compare()'s op parameters checked before anything runs: each value as a setting of
    the variants that take it (:func:`~fpexplore.spec.check_spec`'s ValueError) or as the op
    checks its own (cdist's ``d``: :meth:`OpSpec.checked_keywords`), a keyword that neither
    the op nor these variants take a TypeError naming ``caller`` (its name, its own
    keywords)."""
    specs = parse_variants(op, variants, fmt)
    _refuse_untaken(get_op(op), specs, get_op(op).checked_keywords(op_params), caller)
    for spec in specs:
        check_spec(with_keywords(spec, taken_params(spec, op, op_params)), op)


def _refuse_untaken(
    op_spec, specs: list, op_params: dict, caller=("fpx.compare", COMPARE_ARGUMENTS)
) -> None:
    """TypeError naming a keyword that neither the op nor any of these variants takes."""
    function, own = caller
    taken = taken_keywords(op_spec.name, specs, op_params.get("order"))
    checks.refuse_unknown(function, set(op_params) - taken, own | taken)
    for k in sorted(set(op_params) - _not_settings(op_spec.name)):  # (pass 21: fma=False
        takers = [str(s) for s in specs if k in taken_params(s, op_spec.name, op_params)]
        if takers and not any(k in applied_params(s, op_spec.name, op_params) for s in specs):
            raise ValueError(  # beside 'sequential+fma' alone computed with FMA, unsaid)
                f"{function}: {k}={checks.shown(op_params[k])} changes no variant: each one "
                f"that takes it sets {k} itself ({', '.join(takers)}; a spec's own setting "
                "wins): leave it out, or choose a variant it changes"
            )
    made: dict = {}  # what a variant computes -> (the first spec computing it, its params)
    for spec in specs:  # (pass 19: fma=True beside 'sequential' and 'sequential+fma')
        applied = applied_params(spec, op_spec.name, op_params)
        try:
            full_spec = with_keywords(spec, applied)
            full = str(full_spec)
        except (TypeError, ValueError):  # a value refused where it is checked, named
            continue
        if is_held_data(full_spec.accumulate) and op_spec.name not in ORDER_OPS:
            try:  # (pass 40: welford, among the defaults, refused it when run)
                check_spec(full_spec, op_spec.name)
            except ValueError as e:
                raise ValueError(
                    f"{function}: accumulate={full_spec.accumulate!r} on {str(spec)!r}: {e}; "
                    "choose the variants that take it (variants=[...])"
                ) from None
        full = str(without_defaults(full_spec, op_spec.name))  # (pass 40: order=sequential)
        other, before = made.setdefault(full, (spec, applied))
        if str(other) != str(spec) and not applied | before:
            raise ValueError(
                f"{function}: {str(other)!r} and {str(spec)!r} are one computation ({full}: a "
                "parameter set to its default); list it once"
            )
        if str(other) != str(spec):
            said = ", ".join(f"{k}={checks.shown(op_params[k])}" for k in sorted(applied | before))
            raise ValueError(
                f"{function}: {said} makes {str(other)!r} and {str(spec)!r} one computation "
                f"({full}: an op parameter applies to every variant that takes it, a spec's "
                "own setting wins): choose one of them, or give the setting in a spec"
            )


def _refuse_no_emulated(op_spec, backends, variants, op_params: dict) -> None:
    """ValueError for variants given, or a variant's setting (block=), where no emulated
    backend runs them (pass 22: backends=("numpy",) dropped the variants without a word)."""
    if "emulated" in backends:
        return
    unused = ["variants"] * bool(variants)  # (variants=[]: none chosen, none dropped)
    unused += sorted(k for k in op_params if k not in _not_settings(op_spec.name))
    if unused:
        raise ValueError(
            f"{', '.join(unused)}: the emulated backend runs the variants, and it is not among "
            f"backends ({', '.join(map(str, backends)) or 'none'}): add 'emulated', or leave "
            f"{'it' if len(unused) == 1 else 'them'} out"
        )


def canonical_params(op_params: dict) -> dict:
    """Op parameters with a format given as a NumPy dtype or type or a FormatInfo by its name
    (``accumulate=np.float64``: "float64"; pass 18: the explorer and sweep failed on the
    text of a spec holding the dtype), a NumPy bool, integer or float (64 bits at most) as
    the Python value it equals (pass 19: ``block=np.int64(64)`` failed the explorer's link);
    anything else as given (refused later, named)."""
    op_params = {k: _python(v) for k, v in op_params.items()}
    if "accumulate" in op_params:
        op_params["accumulate"] = format_name(op_params["accumulate"])
    return op_params


def _python(value):
    """A NumPy bool, integer or float of at most 64 bits as the Python value it equals."""
    if isinstance(value, (np.bool_, np.integer)) or (
        isinstance(value, np.floating) and value.dtype.itemsize <= 8
    ):
        return value.item()
    return value


def taken_keywords(op: str, specs, order=None) -> set:
    """The op parameters these variant specs take: the op's own, and each spec's settings
    (``order``: the op's order= where it names the order of a spec's parts)."""
    return set(_not_settings(op)).union(*(keywords_of(s, op, order) for s in specs))


@functools.cache
def _not_settings(op: str) -> frozenset:
    """The op's keywords that are no variant's setting: the others (variance's order=) count
    where a chosen variant takes them (pass 15: welford's order= was taken and ignored)."""
    op_spec = get_op(op)
    settings = set().union(*(keywords_of(VariantSpec(v), op) for v in op_spec.variants))
    for f in op_spec.settings.values():  # an order's parameters (cdist's block=, pass 20:
        if f.order_of and f.order_params:  # an op keyword, it went to 'direct' and failed)
            settings |= {p for o in orders_of(f.order_of).values() for p in o.params}
    return frozenset(op_spec.keywords) - settings


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


def compare(
    op: str,
    *,
    format: str | None = None,  # noqa: A002  (the design's public name)
    n: int | None = None,
    variants: str | VariantSpec | Iterable[str | VariantSpec] | None = None,
    distribution: str = Default("uniform"),
    seed: int = Default(0),
    backends: str | Iterable[str] = ("numpy", "emulated"),
    threads: int | None = None,
    inputs: ArrayLike | tuple | dict | None = None,
    progress: Callable[[int, int, str], object] | None = None,
    **op_params,
) -> Comparison:
    """Run ``op`` on ``n`` generated values (or on your own ``inputs``) in each variant and
    backend; measure each result against the correctly rounded reference.

    Parameters
    ----------
    op : one of ``fpx.ops()``
    format : one of ``fpx.FORMATS`` (default "float32"; with ``inputs``: theirs); sum and
        dot also draw FP8, FP6 and FP4 data ("float8_e4m3", ...: ml_dtypes arrays)
    n : problem size (elements; for matmul the matrix side); required unless ``inputs`` are
        given (then it comes from them: giving both is a ValueError)
    variants : names from ``fpx.variants(op)`` or variant specs such as
        ``"tree(block=256)+tf32@float64"`` (see :func:`fpexplore.parse_spec`; the table's
        ``variant`` column shows each in its canonical spelling); None: the op's defaults
    distribution, seed : one of ``fpx.DISTRIBUTIONS`` (default "uniform"), the data seed
        (default 0); neither with ``inputs``
    inputs : your own arrays instead of generated ones, as :attr:`Comparison.inputs` holds
        them: sum, mean and the one-array ops an array or ``{"x": x}``; dot ``(a, b)`` or
        ``{"a": a, "b": b}``; matmul ``(A, B)`` or ``{"A": A, "B": B}``; other ops their
        input names in order (``fpx.compare(op, n=2).inputs`` shows them). One format, any
        of ``fpx.FORMATS`` (sum and dot: ml_dtypes' FP8, FP6, FP4 arrays too); used as they
        are (never copied with changes; masked arrays are refused). ``n`` is their size
        (matmul: the inner dimension k), the table's ``distribution`` reads "user data" and
        its ``seed`` is None; giving ``distribution`` or ``seed`` too is a ValueError
    backends : "numpy" (NumPy's own function), "emulated" (fpexplore's variants), "cupy"
        (a real GPU; a message, not an error, where there is none), "replay" (recorded GPU
        runs), "torch", "jax", "polars" (the library's own sum/dot/matmul on this CPU where
        it is installed; a message where it is not: :mod:`fpexplore.libraries.backend`)
    threads : for the real CPU libraries: NumPy's BLAS pool (through threadpoolctl) and
        torch's threads for this call; None: their defaults. (Emulated orders take their own
        ``threads`` parameter: ``"torch(threads=2)"``.) The table shows the threads that ran
        (a count past OpenBLAS's most runs its most); ``messages`` says where a count is not
        applied (np.sum, no CPU library among the backends).
    progress : ``progress(done, total, label)``, called before each result (``label``: the
        one starting); an exception it raises stops the run (the explorer's cancel button)
    **op_params : passed to the variants that take them (e.g. ``block=256``, ``accumulate=``);
        one none of them takes is a TypeError naming the accepted ones, one making two chosen
        variants one computation (``fma=True`` beside "sequential+fma") a ValueError

    Returns
    -------
    Comparison
        ``.table`` columns: op, format, n, distribution, seed, variant, backend, value (scalar
        results, as float64), value_repr (the shortest decimal that reads back as the same value in
        ``format``; pandas' six digits would print neighbours alike), value_hex (its bit pattern),
        ulp_error (signed, the largest; ``ULP_NAN``: NaN against a number), max_abs_ulp,
        mean_abs_ulp, exact_share, rel_error,
        bits_error, time_ms (this CPU running the variant, warm: not the speed of the hardware an
        order emulates), compile_ms (first-use overhead in this process, numba compiling or loading
        kernels, measured apart; 0 afterwards), library and library_version and threads (what made a
        real library's row), numpy_version, device, cpu, cpu_flags, simd, blas_kernel, blas_threads
        (the machine: :func:`fpexplore.machine.machine_info`).
    """
    pd = require("pandas", "fpx.compare")
    job, chosen = _job(
        op, inputs, format, n, distribution, seed, variants, backends, threads, progress, op_params
    )
    env = environment()
    job.blas_threads = env["blas_threads"]
    rows, results = [], {}
    todo = _steps(job, chosen, variants, backends)
    for done, (backend, step) in enumerate(todo):
        if progress is not None:
            progress(done, len(todo), str(step))
        for r in run_step(job, backend, step):
            rows.append(_row(job, r, env))
            results[(r.label, r.backend)] = r.out
    ref = job.op_spec.reference_for(job.inputs, None, job.params, job.cache)
    # a keyword no variant used (a typo, another variant's parameter) is an error, never a
    # silent default; the accepted ones are compare's own and what these variants look for
    checks.refuse_unknown("fpx.compare", job.params.unused(), COMPARE_ARGUMENTS | job.params.taken)
    params = {**job.params, "threads": threads}
    public = _public_params(job.variants, job.distribution, job.seed, chosen, params)
    table = _exact_ulps(pd, _some(rows, job, variants, backends))  # job.cache: the reference
    specs = {str(s): s for s in job.variants}
    fields = (table, results, ref, job.inputs, public, job.messages, job.cache, specs)
    return Comparison(op, job.format, int(job.n), *fields)


def _steps(job: Job, chosen, variants, backends) -> list:
    """compare's steps: NumPy's call, each variant, the other backends; a ValueError where
    there is none and no message says why (pass 19: 0 rows, and plot() failed in pandas)."""
    todo = steps(job, chosen)
    if not todo and not job.messages:
        _refuse_nothing(variants, backends)
    return todo


def _some(rows: list, job: Job, variants, backends) -> list:
    """The rows, or where none came and no variant was chosen a ValueError (pass 20: cupy
    unavailable said "showing the emulated GPU orders instead", with none to show)."""
    if not rows and not job.variants:
        _refuse_nothing(variants, backends)
    return rows


def _refuse_nothing(variants, backends) -> None:
    raise ValueError(
        f"fpx.compare: nothing to compare: variants={checks.shown(variants)} with "
        f"backends={checks.shown(backends)} give no result (choose a variant for the "
        "emulated backend, or a backend with a result of its own: numpy)"
    )


def _job(
    op, inputs, format, n, distribution, seed, variants, backends, threads, progress, op_params
) -> tuple[Job, list]:
    """compare's arguments checked and its data drawn: the comparison's :class:`Job` (op
    spec, data, variants, threads) and the backends chosen."""
    if threads is not None:
        checks.integer("threads", threads, 1)
    if progress is not None and not callable(progress):
        raise TypeError(f"progress must be a callable or None, got {checks.shown(progress)}")
    op_spec = get_op(op)
    framed = _pandas_note(op_spec, inputs)
    inputs, format, n, distribution, seed = _data(op_spec, inputs, format, n, distribution, seed)
    backends = checks.once("backends", checks.name_list("backends", backends))
    for b in backends:
        _check("backend", b, BACKENDS)
    if distribution != USER_DATA:
        op_spec.check_size(n, format)
    given = variants is not None
    variants = parse_variants(op, variants, format)
    _refuse_no_emulated(op_spec, backends, variants if given else (), op_params)
    op_params = op_spec.checked_keywords(canonical_params(op_params))  # the op's own keywords
    _refuse_untaken(op_spec, variants, op_params)
    made = _made_by_keywords(op_spec.name, variants, op_params)  # (before Params counts reads)
    blas = _openblas_note(op_spec.name, variants, op_params)
    op_params = Params(op_params)  # remembers what the variants took: the rest is refused
    if distribution != USER_DATA:
        inputs = op_spec.inputs(n, format, distribution, seed, op_params)
    job = Job(op_spec, format, n, distribution, seed, inputs, op_params, threads, {}, [])
    job.backends = tuple(backends)
    if threads is not None and set(backends) <= {"emulated", "cupy", "replay"}:
        job.messages.append(
            f"threads={threads} is not applied: no backend here runs a CPU library "
            f'({", ".join(backends)}; an emulated order takes its own: "torch(threads=2)")'
        )
    if framed and "numpy" in backends:
        job.messages.append(framed)
    job.messages += [m for m in (made, blas) if m and "emulated" in backends]
    job.variants = tuple(variants)
    return job, backends


def _made_by_keywords(op: str, specs, op_params) -> str | None:
    """Which rows the op's keywords change, as the spec each computes (pass 40: accumulate=
    'float64' made the row "numpy" numpy@float64, 0 ulps beside np.sum's 1, unsaid)."""
    made = []
    for spec in specs:
        applied = applied_params(spec, op, op_params)
        if applied:
            full = with_keywords(spec, {k: op_params[k] for k in applied})
            made.append(f"{str(spec)!r} computes {str(full)!r}")
    if not made:
        return None
    return "the op's keywords apply to every variant that takes them: " + ", ".join(made)


def _openblas_note(op: str, specs, op_params) -> str | None:
    """Where the openblas order runs its default kernel and this machine's NumPy another
    (pass 41: haswell beside np.dot's SkylakeX differed without a word)."""
    if not any(s.name == "openblas" and "kernel" not in s.param_dict for s in specs):
        return None
    if "kernel" in op_params:
        return None
    from .libspec import LIBRARIES
    from .machine import UNKNOWN_BLAS, machine_info

    here = machine_info()["blas"]["architecture"]
    default = lookup(op, "openblas").params["kernel"][0]
    mine = [k for k, v in LIBRARIES["numpy"].kernels.items() if v.reports == here]
    if here in ("", UNKNOWN_BLAS) or mine == [default]:
        return None
    which = f"openblas(kernel={mine[0]}) is np.dot here" if mine else "it has no such kernel"
    return (
        f"'openblas' is OpenBLAS's {default} kernel (its default); this machine's NumPy runs "
        f"OpenBLAS's {here}: {which}"
    )


def _pandas_note(op_spec, inputs) -> str | None:
    """What the NumPy row of pandas inputs is (pass 37: np.sum of a float16 Series calls
    Series.sum, which adds in float64; the row is NumPy's on its array)."""
    values = inputs.values() if isinstance(inputs, dict) else inputs
    values = values if isinstance(values, (tuple, list, type({}.values()))) else [inputs]
    if op_spec.numpy is None or not any(type(v).__module__.startswith("pandas") for v in values):
        return None
    return (
        f"the {op_spec.numpy_label} row is NumPy's on the values of your pandas inputs "
        f"(.to_numpy()); {op_spec.numpy_label} of a pandas object calls pandas' own method, "
        "which may compute otherwise (np.sum of a float16 Series adds in float64)"
    )


def _data(op_spec, inputs, format, n, distribution, seed) -> tuple:  # noqa: A002
    """``(inputs, format, n, distribution, seed)``: the user's inputs checked (``n``, the
    format and USER_DATA from them), or the generated data's settings checked (inputs None)."""
    if inputs is not None:
        given = [
            k
            for k, v in (("n", n), ("distribution", distribution), ("seed", seed))
            if v is not None and not isinstance(v, Default)
        ]
        if given:
            raise ValueError(
                f"compare: {', '.join(given)} {'is' if len(given) == 1 else 'are'} for generated "
                "data; with inputs= the data are yours"
                + (" (n comes from their size)" if "n" in given else "")
            )
        inputs, fmt, n = op_spec.user_inputs(inputs, what="fpx.compare", format=format)
        if "num" in inputs:  # linspace's length: its limits, as for n= (pass 17: MemoryError)
            try:
                op_spec.check_size(n, fmt)
            except ValueError as e:
                raise ValueError(f"fpx.compare: inputs' num (the length): {e}") from None
        if format is not None and data_format(op_spec, format) != fmt:  # (np.float32: its name)
            raise ValueError(
                f"format={checks.shown(format)} but the inputs are {fmt}: leave format out"
            )
        return inputs, fmt, n, USER_DATA, None
    if n is None:
        raise TypeError("compare() needs n= (the problem size) or inputs= (your arrays)")
    format = "float32" if format is None else format
    distribution = Default.value_of(distribution)
    seed = Default.value_of(seed)
    format = data_format(op_spec, format)
    _check("distribution", distribution, DISTRIBUTIONS)
    checks.seed(seed)
    return None, format, n, distribution, seed


def _row(job: Job, r, env: dict) -> dict:
    """The table's row of one result (a :class:`fpexplore.backends.job.Result`)."""
    ref = job.op_spec.reference_for(job.inputs, r.out, job.params, job.cache)
    fmt = result_format(r.out, job.format)
    s = summarize(r.out, ref, fmt if format_info(fmt).user_defined else None)
    scalar = np.ndim(r.out) == 0
    text, hexa = value_texts(r.out, fmt) if scalar else (None, None)
    library = r.library or {}
    return {
        "op": job.op,
        "format": job.format,
        "n": job.n,
        "distribution": job.distribution,
        "seed": job.seed,
        "variant": r.label,
        "backend": r.backend,
        "value": float(r.out) if scalar else np.nan,
        "value_repr": text,
        "value_hex": hexa,
        "ulp_error": s["ulp"],
        "max_abs_ulp": s["max_abs_ulp"],
        "mean_abs_ulp": s["mean_abs_ulp"],
        "exact_share": s["exact_share"],
        "rel_error": s["max_rel"],
        "bits_error": s["max_bits"],
        "time_ms": r.elapsed * 1e3,
        "compile_ms": r.first_use * 1e3,
        "library": library.get("name"),
        "library_version": library.get("version"),
        "threads": library.get("threads"),
        **env,
        **({"device": r.device} if r.device else {}),
    }


def _exact_ulps(pd, rows: list):
    """The table of ``rows``, its ``max_abs_ulp`` column exact: pandas makes a column of ints
    and an inf (a NaN mismatch) float64, which would round counts beyond 2**53 (float64
    results far apart): such a column holds the Python ints and inf (object dtype)."""
    table = pd.DataFrame(rows)
    ulps = [r["max_abs_ulp"] for r in rows]
    if table.get("max_abs_ulp", pd.Series([], dtype=object)).dtype.kind == "f" and any(
        v != np.inf and v > 2**53 for v in ulps
    ):
        table["max_abs_ulp"] = pd.Series(ulps, dtype=object, index=table.index)
    return table


def _public_params(variants, distribution, seed, backends, op_params) -> dict:
    # variants only where the emulated backend ran them (pass 27: with numpy alone the
    # snippet listed the defaults, and compare refused them there)
    p = {"variants": [str(v) for v in variants]} if "emulated" in backends else {}
    if distribution == USER_DATA:  # the data were the user's: nothing to draw them again
        p["inputs"] = USER_DATA
    else:
        p.update(distribution=distribution, seed=seed)
    if set(backends) != {"numpy", "emulated"}:  # (in any order: the table's is fixed)
        p["backends"] = tuple(backends)
    p.update({k: v for k, v in op_params.items() if not (k == "threads" and v is None)})
    return p


MAX_SWEEP_RUNS = 10_000  # sizes x seeds: a sweep is refused before it starts beyond this


def _check_sweep_keywords(op: str, variants, fmt: str, op_params: dict) -> dict:
    """sweep's TypeError for compare's n= and inputs= (else compare's "multiple values for
    'n'", or its message on n and seed with inputs=, which the user never gave), and its op
    parameters checked as compare checks them, naming sweep and its keywords: they are
    returned with a format given as a NumPy type by its name (:func:`canonical_params`)."""
    for k, why in (("n", "its sizes are sizes="), ("inputs", "it draws data at each size")):
        if k in op_params:
            raise TypeError(f"fpx.sweep takes no {k}=: {why} (compare takes {k}=)")
    op_params = canonical_params(op_params)
    check_op_params(op, variants, fmt, op_params, caller=("fpx.sweep", SWEEP_ARGUMENTS))
    return op_params


def _seed_list(seed, seeds) -> list[int]:
    """sweep's data seeds: ``seeds`` of them from ``seed`` (default 0), or the list ``seeds``
    (then ``seed`` is refused: it would be ignored)."""
    if isinstance(seeds, (numbers.Integral, str)) or not hasattr(seeds, "__iter__"):
        count = checks.integer("seeds", seeds, 1, MAX_SWEEP_RUNS)  # how many
        first = checks.seed(0 if seed is None else seed)
        if first + count - 1 > checks.MAX_SEED:
            raise ValueError(
                f"seed={first} and seeds={count} run seeds up to {first + count - 1}; seeds "
                f"are at most {checks.MAX_SEED}"
            )
        return [first + k for k in range(count)]
    if seed is not None:
        raise TypeError(
            f"seed={checks.shown(seed)} and a list of seeds: seed is where a count of seeds "
            "starts; give the seeds in the list"
        )
    seed_list = [checks.seed(s, "seeds") for s in seeds]
    if not seed_list:
        raise ValueError("seeds must name at least one seed")
    checks.once("seeds", seed_list)
    return seed_list


def sweep(
    op: str,
    *,
    format: str = "float32",  # noqa: A002
    sizes: int | Iterable[int] = (10, 100, 1_000, 10_000, 100_000, 1_000_000),
    variants: str | VariantSpec | Iterable[str | VariantSpec] | None = None,
    distribution: str = "uniform",
    seed: int | None = None,
    seeds: int | Iterable[int] = 5,
    backends: str | Iterable[str] = ("numpy", "emulated"),
    progress: bool = True,
    **op_params,
) -> Sweep:
    """Error against n: :func:`compare` at each size and seed, stacked into one table.

    Parameters
    ----------
    op, format, variants, distribution, backends, **op_params : as in :func:`compare`
    sizes : an int or a list of problem sizes (each >= 1); sizes x seeds at most ``MAX_SWEEP_RUNS``
    seed, seeds : int, and int or list of int
        The first data seed (default 0) and how many per size (``seed``, ``seed + 1``, ...), or a
        list of seeds (then no ``seed``), each run once per size. One seed: one noisy sample per
        size; several: the median and a 10-90% band (``plot()`` draws it).
    progress : a progress bar on long sweeps

    Returns
    -------
    Sweep
        ``table``: compare's columns (``seed`` among them) and ``abs_error``, |value - reference|
        (as compare measures: the reference is the exact result correctly rounded to the value's
        format; 0 where the value is it, inf where exactly one is NaN; an array's largest element
        error; within half an ulp of |value - exact|, which the bounds bound). Sum/dot: ``bounds``,
        per size ``worst_sequential`` (gamma_{n-1} S), ``worst_pairwise`` (gamma_{ceil(log2 n)} S),
        ``probabilistic`` (sqrt(n) u S), absolute, the median over the seeds; for dot, S is
        sum |a_i b_i| and the worst cases gamma_n and gamma_{ceil(log2 n)+1} (each product
        rounded once more: Higham eq. 3.4).

    Raises
    ------
    ValueError
        No sizes or seeds, too many runs, or no results from any of ``backends``.
    """
    pd = require("pandas", "fpx.sweep")

    progress = checks.boolean("progress", progress)
    op_spec = get_op(op)
    format = data_format(op_spec, format)
    sizes, seed_list = _sweep_runs(op_spec, format, sizes, seed, seeds)
    op_params = _check_sweep_keywords(op, variants, format, op_params)
    _refuse_no_source(variants, backends)
    runs = len(sizes) * len(seed_list)
    bar = _progress(runs) if progress and runs > 1 else None
    parts, bound_rows, messages = [], [], []
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
            messages += [m for m in c.messages if m not in messages]
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
    if not any(len(t) for t in parts):  # every backend asked for is unavailable
        why = "; ".join(messages) or "none named"
        raise ValueError(f"sweep: no results from backends={backends!r}: {why}")
    bounds = pd.DataFrame(bound_rows)
    if len(bounds):
        bounds = bounds.groupby("n", sort=False).median().reset_index()
    return Sweep(op, format, pd.concat(parts, ignore_index=True), bounds, messages)


def _sweep_runs(op_spec, fmt: str, sizes, seed, seeds) -> tuple[list, list]:
    """sweep's sizes and seeds checked: (sizes, seeds), at most ``MAX_SWEEP_RUNS`` runs."""
    sizes = [checks.integer("sizes", s, 1) for s in checks.name_list("sizes", sizes)]
    if not sizes:
        raise ValueError("sizes must name at least one size")
    checks.once("sizes", sizes)
    seed_list = _seed_list(seed, seeds)
    if len(sizes) * len(seed_list) > MAX_SWEEP_RUNS:
        raise ValueError(
            f"{len(sizes)} sizes x {len(seed_list)} seeds is {len(sizes) * len(seed_list)} "
            f"runs; at most {MAX_SWEEP_RUNS}"
        )
    for s in sizes:
        op_spec.check_size(s, fmt)
    return sizes, seed_list


def _refuse_no_source(variants, backends) -> None:
    """ValueError where no backend is named, or no variant for the emulated one alone."""
    named = checks.name_list("backends", backends)
    if not named:
        raise ValueError(f"sweep: no results from backends={backends!r}: none named")
    if (
        variants is not None
        and not checks.name_list("variants", variants)
        and named == ["emulated"]
    ):
        raise ValueError(
            f"sweep: no results: variants={variants!r} chooses none for backends={backends!r} "
            "(choose a variant, or a backend with a result of its own: numpy)"
        )


def _abs_error(out, ref) -> float:
    a = np.asarray(out, dtype=np.float64)
    b = np.asarray(ref, dtype=np.float64)
    with np.errstate(all="ignore"):
        d = np.abs(a - b)
    d = np.where(a == b, 0.0, d)
    # both NaN: the correctly rounded result; a NaN against a number (or a number against
    # NaN) has no finite error, and nanmax would skip it
    d = np.where(np.isnan(a) & np.isnan(b), 0.0, np.where(np.isnan(a) | np.isnan(b), np.inf, d))
    return float(np.max(d)) if d.size else 0.0


def _progress(total: int):
    try:
        from tqdm.auto import tqdm
    except ImportError:  # pragma: no cover - tqdm comes with the jupyter extra
        return None
    return tqdm(total=total, desc="sweep", leave=False)
