"""fpexplore: see, measure and explain floating-point differences between CPU and GPU.

Architecture: the modules from the top layer down. Dependencies point downward only: a module
imports only modules listed below it, lazy imports included (tests/test_project.py checks this
list against the code). ``import fpexplore`` loads NumPy and ml_dtypes, nothing else; numba
loads on the first call of an order; pandas, matplotlib and ipywidgets when a function needs
them. ``fpx.ops``, ``fpx.orders``, ``fpx.backends`` and ``fpx.formats`` are the functions
that list them; import the subpackages' modules with ``from fpexplore.orders import registry``
(``import fpexplore.orders as o`` gives the function).

- ``app/``         fpx.explorer(), the ipywidgets explorer app, state, view and render
                   apart: state (a frozen State: compare's arguments, the data source, the
                   view and the A/B picks;
                   pure transitions), yourdata (your arrays, uploads, observed results),
                   render (verdict, table, figure, code), controls (the widgets, their layout,
                   set from a state), running (compare in a thread: progress, cancel),
                   showing (results on screen, exports), widget (the Explorer: one change
                   handler); ipywidgets loads when asked for
- ``lessons``      the lessons' widgets: fpx.exercise(id, seed) (question, answer box, check,
                   hint, explanation and figure), step_sum (a sum to watch, step by step),
                   bit_inspector (bits to click), and classroom's answers, reveal, summary,
                   answer_key, handout; ipywidgets and matplotlib load with it
- ``classroom``    answers that last (a student's attempts kept in a JSON file beside the
                   notebook, shown again by a new kernel), reveal (output held back until an
                   exercise is answered), a class's summary (table and figure), answer keys,
                   handouts and each exercise's plain form for exports
- ``warmup``       python -m fpexplore.warmup: compile and cache every kernel before first use
- ``record``       python -m fpexplore.record: record GPU results for the replay backend
- ``explain``      explain(op, inputs, results): why results differ, which is closer, whether
                   it is expected, or that the evidence cannot tell; the causes ranked
                   (order, accumulator, cast, ...), each decided or not
- ``detective``    which order produced a result: match_orders, explain_numpy (on inference)
- ``budget``       difference_budget: a difference split into input rounding, accumulator,
                   order, FMA and the tensor cores, one factor switched at a time
- ``inference/``   the one engine of explain, the detective and the budget: space (the
                   configurations tried, from the order registry; their results, references,
                   distance, factors and prior cost in bits), evidence (which reproduce each
                   result, grouped by what they compute on probes; the chance of a match),
                   scoring (the causes weighed over every hypothesis; decided or not),
                   measure (the normwise error against the exact answer, ties, bounds,
                   results beyond rounding), probe (fn= called and probed)
- ``reveal``       reveal(fn, n): the accumulation tree of any black-box function (FPRev's
                   masks), its FMA and accumulator probes; Reveal.as_order() a spec computing it
- ``reproduce``    reproducer: a standalone NumPy script that reproduces a divergence
- ``teaching/``    the lessons' core, pure (NumPy and the modules below): fpx.exercises()
                   (exercise: the Exercise class and registry; lesson01_bits .. lesson05_gpu:
                   each lesson's exercises, answers computed from the exact core and the
                   orders, graded in bits, ulps or a stated tolerance; seeded variants),
                   sum_trace: sum_steps (a sum traced bit for bit), bits: bit_fields /
                   bits_of (a bit pattern of any format taken apart), numbers: typed numbers,
                   answers: AnswerBook (answers files), sheets: exercises as text
- ``tolerance``    the tolerance advisor: rtol / atol / max-ULP numbers for NumPy, CuPy and
                   torch tests
- ``experiment``   compare() and sweep(): tidy pandas tables (pandas loads when they run):
                   the arguments checked, one row per result of the chosen backends' steps
- ``results``      what experiments return: Comparison (keeps the references it measured
                   against, per format), Diff / diff(): two results against each other, in
                   ulps and bits; Sweep; Explanation (what explain found); their text, HTML
                   and formatted tables
- ``plots``        matplotlib figures of comparisons, diffs, sweeps and budgets, from what they
                   hold; they compute nothing (matplotlib loads when they run)
- ``presentation`` the advisors' numbers and explanations as tables, sentences and
                   ready-to-paste code
- ``libraries/``   the library wing, which the modules below never import (the order
                   registry and backends load it by name on first use of one of its names):
                   real CPU libraries' own loops emulated bit for bit (OpenBLAS, einsum,
                   polars, LLVM, numba, torch, XLA; the SIMD family), torch, jax and
                   polars as backends, and a real library call run in a fresh process
                   (run_elsewhere); it registers its orders when it loads
- ``backends/``    where results come from, one module per kind, each answering alike
                   (status, steps(job, name), results(job, step) -> Result records; job: Job,
                   Result): numpy (NumPy's call, its BLAS threads limited), emulated (each
                   variant), cupy (the only module importing CuPy, lazily; CuPy's own
                   function for an op is named by the op's spec), replay (GPU recordings);
                   torch, jax and polars from the library wing; steps() in the table's order,
                   run_step()
- ``spec``         variant specs: "tree(block=256)+tf32@float64", one grammar for a setting
- ``ops/``         one spec per op beside its implementation (variants, inputs, NumPy's call,
                   exact reference, CuPy counterpart, GPU recordings, the size guard
                   check_size, the user's own inputs read by user_inputs): sum/dot/matmul over
                   orders/, linspace, cdist, adam_step, mean, variance, softmax, logsumexp,
                   exp/log/sin/tanh/sqrt/pow; ops/registry finds the op modules
- ``metrics``      ulp / bits / relative error, summaries, Higham's error bounds
- ``orders/``      evaluation orders of sum, dot and matmul (sequential, pairwise, NumPy's, GPU
                   trees, CuPy/CUB hypotheses, compensated, exact): the arithmetic model, one
                   registry entry per order, kernels compiled with numba on first use; mma:
                   tensor cores (NVIDIA Volta to Blackwell) and matrix cores (AMD CDNA1-3)
                   bit for bit, Blackwell's block-scaled kinds (block_scaled: MMA-Sim's
                   rules), gpus() the table of every modelled GPU; trees: revealed
                   accumulation trees as data (the ``revealed`` order's parameter)
- ``machine``      machine_info(): the CPU, SIMD level, BLAS kernel and threads a result came
                   from; environment(): the tables' machine columns; available_memory() (the
                   size guard's budget); the wing's run_elsewhere() answers here too
- ``libspec``      one LibrarySpec per real library (NumPy/OpenBLAS, torch, jax, polars,
                   numba): package, install command, run_elsewhere's calls, the backend row's
                   call per op and formats, threads, environment variables, emulating orders
- ``timing``       timed(): warm time with first-use compiling and imports measured apart
- ``data``         generate(): seeded input data, the same on every machine
- ``quantize``     quantize(x, scheme): block-scaled formats (OCP MX: MXFP8/6/4, E8M0
                   scales per 32; NVIDIA's NVFP4: E4M3 scales per 16 and a tensor scale),
                   elements, scales, dequantize, errors in ulps of each block's grid
- ``exact``        correctly rounded references: fma, exact_sum, exact_dot (the oracles' fast
                   twins)
- ``_exact_kernels`` exact's numba kernels: llvm.fma, exponent-bin (superaccumulator) sums
                   and dot products (loaded on exact's first call)
- ``catalog``      fpx.formats(): every format and input rounding as a table
- ``bits``         a value's bit pattern, fields, binary and hex strings, shortest
                   round-trip decimal, in its own format
- ``held``         FP8, FP6 and FP4 data (ml_dtypes' OCP arrays) read as float32 values,
                   fpx.format's data as float64 values with the format named beside them,
                   and results rounded back to their format (sum, dot, the exact ones)
- ``formats``      correct rounding to a format of the registry
                   (incl. tf32, OCP and AMD FP8, OCP MX FP6/FP4/E8M0), ulp, neighbours,
                   the input coercion every function shares
- ``userformat``   fpx.format(precision, emax, subnormals, name): a format of one's own, a
                   FormatInfo registered by name (values held in float64), its
                   next_up / next_down, ordered keys (ulps), IEEE bits and built-in twin
- ``_roundmodes``  the input roundings' modes: tf32's ties on float32 bits, one exact
                   rational rounded in a format's mode (FP8 overflow to NaN, FP6/FP4
                   saturation, E8M0's missing zero)
- ``_small``       next_up / next_down in ml_dtypes' small formats, by a table of their
                   values (their bit order is not their value order)
- ``_registry``    the format registry: FormatInfo (a format's parameters and its ends:
                   infinity, NaN or saturation), one entry per name, the ml_dtypes types
                   of the formats held in float32 (FP8, FP6, FP4, E8M0); format_info and
                   format_name: a format given by name, dtype or type, parsed once
- ``_numba``       numba plumbing for every kernel: cached_njit (the disk cache keyed also on
                   numerics.py), hw_fma (llvm.fma), float_bits; registers numerics' JITTABLE
- ``numerics``     the shared numerics, one definition each (imports only NumPy): exact
                   rational rounding, error-free transformations, rounding to a precision,
                   round to odd, float32 flush-to-zero, the ULP clamp, Ziv's step; the numba
                   kernels call the same functions
- ``checks``       argument checks every layer shares (integers, seeds, choices, booleans,
                   name lists, unknown keywords, and the validators of parameter tables):
                   TypeError for a wrong type, ValueError for a bad value
- ``_optional``    require(): imports pandas, matplotlib or ipywidgets where a function needs
                   them, and names the extra to install (``pip install "fpexplore[jupyter]"``)
"""

from . import machine
from .backends import backends, has_gpu, on_gpu
from .bits import BitFields, bit_string, fields, from_bits, hex_string, shortest_repr, to_bits
from .budget import difference_budget
from .catalog import formats
from .data import DISTRIBUTIONS, generate
from .detective import explain_numpy, match_orders
from .exact import exact_dot, exact_sum, fma
from .experiment import compare, sweep
from .explain import Explanation, explain
from .formats import (
    FORMATS,
    ROUNDING_MODES,
    ROUNDINGS,
    ULP_NAN,
    FormatInfo,
    as_format,
    format_info,
    format_of,
    next_down,
    next_up,
    ulp,
    ulp_distance,
)
from .metrics import pass_rate
from .ops.adam import adam_pass_rates, adam_run, adam_step
from .ops.cdist import cdist
from .ops.elementwise import (
    exp,
    log,
    pow,  # noqa: A004  (like math.pow)
    sin,
    sqrt,
    tanh,
    ulp_error,
)
from .ops.linspace import linspace
from .ops.mean import mean
from .ops.registry import ops, variants
from .ops.softmax import logsumexp, softmax
from .ops.variance import variance
from .orders import (
    dot,
    exact_matmul,
    gpus,
    matmul,
    mma,
    orders,
    sum,  # noqa: A004  (like np.sum)
)
from .quantize import Quantized, quantize
from .reproduce import reproducer
from .results import Diff, diff
from .reveal import Reveal, reveal
from .spec import VariantSpec, parse_spec
from .teaching import exercises
from .tolerance import suggest_tolerance
from .userformat import format  # noqa: A004  (fpx.format: a format of one's own)

__version__ = "0.1.0"


def __getattr__(name):
    # the widget app needs ipywidgets, plots need matplotlib: load them only when asked for
    if name in ("explorer", "app", "exercise", "lessons"):
        from ._optional import require

        who = "fpx.explorer" if name in ("explorer", "app") else f"fpx.{name}"
        require("ipywidgets", who)  # a clear error where the extra is missing
    if name == "explorer":
        from .app import explorer

        return explorer
    if name == "exercise":
        from .lessons import exercise

        return exercise
    if name in ("plots", "presentation", "app", "record", "lessons"):
        import importlib

        return importlib.import_module(f".{name}", __name__)
    raise AttributeError(f"module 'fpexplore' has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | {"explorer", "exercise", "lessons"})


__all__ = [
    "BitFields",
    "DISTRIBUTIONS",
    "Diff",
    "Explanation",
    "FORMATS",
    "FormatInfo",
    "ROUNDINGS",
    "ROUNDING_MODES",
    "Reveal",
    "Quantized",
    "ULP_NAN",
    "VariantSpec",
    "adam_pass_rates",
    "adam_run",
    "adam_step",
    "as_format",
    "backends",
    "bit_string",
    "cdist",
    "compare",
    "diff",
    "difference_budget",
    "dot",
    "exact_dot",
    "exact_matmul",
    "exact_sum",
    "exercise",
    "exercises",
    "exp",
    "explain",
    "explain_numpy",
    "explorer",
    "fields",
    "fma",
    "format",
    "format_info",
    "format_of",
    "formats",
    "from_bits",
    "generate",
    "gpus",
    "has_gpu",
    "hex_string",
    "linspace",
    "log",
    "logsumexp",
    "machine",
    "match_orders",
    "matmul",
    "mean",
    "mma",
    "next_down",
    "next_up",
    "on_gpu",
    "ops",
    "orders",
    "parse_spec",
    "pass_rate",
    "pow",
    "quantize",
    "reproducer",
    "reveal",
    "shortest_repr",
    "sin",
    "softmax",
    "sqrt",
    "suggest_tolerance",
    "sum",
    "sweep",
    "tanh",
    "to_bits",
    "ulp",
    "ulp_distance",
    "ulp_error",
    "variance",
    "variants",
]
