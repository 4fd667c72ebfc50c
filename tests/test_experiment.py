"""compare(), sweep(), generate() and the plots: tables equal direct API calls."""

from __future__ import annotations

import importlib.util
import itertools
import re

import numpy as np
import pytest

import fpexplore as fpx
from fpexplore import machine, plots, results, timing

COLUMNS = [
    "op",
    "format",
    "n",
    "distribution",
    "seed",
    "variant",
    "backend",
    "value",
    "value_repr",
    "value_hex",
    "ulp_error",
    "max_abs_ulp",
    "mean_abs_ulp",
    "exact_share",
    "rel_error",
    "bits_error",
    "time_ms",
    "compile_ms",
    "library",
    "library_version",
    "threads",
    "numpy_version",
    "device",
    "cpu",
    "cpu_flags",
    "simd",
    "blas_kernel",
    "blas_threads",
]


@pytest.mark.parametrize("dist", list(fpx.DISTRIBUTIONS))
@pytest.mark.parametrize("fmt", fpx.FORMATS)
def test_generate(dist, fmt):
    a = fpx.generate(dist, 1000, fmt, seed=3)
    b = fpx.generate(dist, 1000, fmt, seed=3)
    assert a.dtype == fpx.format_info(fmt).dtype and a.shape == (1000,)
    assert np.array_equal(a, b) and not np.array_equal(a, fpx.generate(dist, 1000, fmt, 4))
    assert np.isfinite(a.astype(np.float64)).all()
    if dist == "uniform":
        assert (a >= 0).all() and (a <= 1).all()
    if dist == "ill-conditioned":  # the exact sum is tiny next to sum |x|
        s = abs(float(fpx.exact_sum(a.astype(np.float64))))
        assert s < 0.05 * float(np.sum(np.abs(a.astype(np.float64))))


@pytest.mark.parametrize(
    "op, kwargs, unknown",
    [
        ("sum", dict(variants=["sequential", "pairwise"], block=64), "block"),  # no taker
        ("sum", dict(variants=["tree"], blok=64), "blok"),  # a typo ran block=128
        ("sum", dict(split_k=3), "split_k"),  # a matmul parameter
        ("matmul", dict(input=(1, 2)), "input"),  # a typo of inputs= ran on generated data
        ("linspace", dict(accumulate="float8"), "accumulate"),
        ("variance", dict(block="abc"), "block"),
    ],
)
def test_compare_refuses_keywords_no_variant_takes(op, kwargs, unknown):
    with pytest.raises(TypeError, match=f"unexpected keyword argument '{unknown}'; it accepts"):
        fpx.compare(op, n=30, **kwargs)


def test_compare_rows_take_the_keywords_their_variants_take():
    cmp = fpx.compare("sum", n=1000, variants=["tree", "sequential"], block=64, seed=2)
    x = fpx.generate("uniform", 1000, "float32", 2)
    assert cmp.results[("tree", "emulated")] == fpx.sum(x, "tree", block=64)
    assert cmp.results[("tree", "emulated")] != fpx.sum(x, "tree", block=128)


def test_compare_sum_rows_equal_direct_calls():
    cmp = fpx.compare(
        "sum",
        format="float32",
        n=5000,
        variants=["sequential", "pairwise"],
        distribution="normal",
        seed=1,
    )
    assert list(cmp.table.columns) == COLUMNS
    x = fpx.generate("normal", 5000, "float32", 1)
    exact = fpx.exact_sum(x)
    t = cmp.table.set_index("variant")
    assert t.loc["np.sum", "backend"] == "numpy" and t.loc["np.sum", "value"] == float(np.sum(x))
    for v in ("sequential", "pairwise"):
        got = fpx.sum(x, v)
        assert t.loc[v, "value"] == float(got) and t.loc[v, "backend"] == "emulated"
        assert t.loc[v, "ulp_error"] == fpx.ulp_distance(exact, got)
        assert t.loc[v, "bits_error"] == np.log2(1 + abs(fpx.ulp_distance(exact, got)))
    assert (cmp.table["numpy_version"] == np.__version__).all()
    assert cmp.reference == exact


def test_compare_array_ops_and_params():
    cmp = fpx.compare(
        "matmul",
        format="float16",
        n=12,
        variants=["sequential", "tree"],
        block=4,
        accumulate="float32",
    )
    A = fpx.generate("uniform", 144, "float16", 0).reshape(12, 12)
    B = fpx.generate("uniform", 144, "float16", 1).reshape(12, 12)
    got = cmp.results[("tree", "emulated")]
    assert np.array_equal(got, fpx.matmul(A, B, "tree", block=4, accumulate="float32"))
    ref = fpx.matmul(A, B, "exact")
    row = cmp.table.set_index("variant").loc["tree"]
    assert row["max_abs_ulp"] == np.abs(fpx.ulp_distance(ref, got)).max()
    assert row["exact_share"] == np.mean(fpx.ulp_distance(ref, got) == 0)
    lin = fpx.compare("linspace", n=50, variants=["numpy1", "numpy2"], backends=("emulated",))
    assert set(lin.table["backend"]) == {"emulated"}
    s, e = lin.inputs["start"], lin.inputs["stop"]
    assert np.array_equal(
        lin.results[("numpy1", "emulated")], fpx.linspace(s, e, 50, variant="numpy1")
    )


def test_compare_shape_and_ragged_errors_name_the_input():
    with pytest.raises(ValueError, match=r"^fpx.compare: inputs\['a'\] and inputs\['b'\] of dot"):
        fpx.compare("dot", inputs={"a": np.ones(3), "b": np.ones(4)})
    with pytest.raises(ValueError, match=r"^fpx.compare: inputs\['A'\] has shape \(2, 3\)"):
        fpx.compare("matmul", inputs=(np.ones((2, 3)), np.ones((4, 2))))
    # pow's x and y that do not broadcast: NumPy's message named neither (issue 36)
    with pytest.raises(ValueError, match=r"^fpx.compare: inputs\['x'\] of shape \(3,\) and "):
        fpx.compare("pow", inputs=(np.ones(3, np.float32), np.ones(2, np.float32)))
    c = fpx.compare("pow", inputs=(np.array([2, 3], np.float32), np.array([2], np.float32)))
    assert np.array_equal(c.reference, [4.0, 9.0])  # (broadcasting ones still run)
    ragged = [[1.0, 2.0], [3.0]]
    with pytest.raises(ValueError, match=r"^fpx.compare: inputs\['a'\]: a nested list whose rows"):
        fpx.compare("dot", inputs={"a": ragged, "b": [1.0, 2.0]})
    calls = {
        "dot: a": lambda: fpx.dot(ragged, [1.0, 2.0]),
        "matmul: B": lambda: fpx.matmul(np.ones((2, 2)), ragged),
        "exact_sum": lambda: fpx.exact_sum(ragged),
        "fpx.diff: a": lambda: fpx.diff(ragged, [1.0, 2.0]),
        "suggest_tolerance: desired": lambda: fpx.suggest_tolerance([1.0, 2.0], ragged),
        "ulp_distance: b": lambda: fpx.ulp_distance([1.0, 2.0], ragged),
    }
    for where, call in calls.items():
        with pytest.raises(ValueError, match=f"^{where}: a nested list whose rows have different"):
            call()


def test_compare_errors_are_clear():
    with pytest.raises(ValueError, match="valid ops: sum, dot, matmul"):
        fpx.compare("conv", n=10)
    with pytest.raises(ValueError, match="sum takes: float16, bfloat16, float32, float64, float8"):
        fpx.compare("sum", format="float8", n=10)
    with pytest.raises(ValueError, match="valid: uniform, normal, wide, ill-conditioned"):
        fpx.compare("sum", n=10, distribution="cauchy")
    with pytest.raises(ValueError, match="valid: numpy, emulated, cupy, replay"):
        fpx.compare("sum", n=10, backends=("tpu",))
    with pytest.raises(ValueError, match="valid variants: sequential"):
        fpx.compare("sum", n=10, variants=["fastest"])
    with pytest.raises(ValueError, match="n must be >= 1, got 0"):
        fpx.compare("sum", n=0)
    with pytest.raises(TypeError, match="n must be an integer, got '10'"):
        fpx.compare("sum", n="10")
    for bad in (-1, 2**40):
        with pytest.raises(ValueError, match="seed must be from 0 to 4294967295"):
            fpx.compare("sum", n=10, seed=bad)
    for bad in (1.5, "a", None):
        with pytest.raises(TypeError, match="seed must be an integer"):
            fpx.compare("sum", n=10, seed=bad)
    # one name where a list is expected is that one name, not its characters
    assert set(fpx.compare("sum", n=10, backends="numpy").table["backend"]) == {"numpy"}
    with pytest.raises(ValueError, match="limit"):
        fpx.compare("matmul", n=5000)


def test_oversized_n_refused_before_allocating(monkeypatch):
    """The memory check runs before any data exists (a 10^8-element request with 1 GiB)."""
    monkeypatch.setattr(machine, "available_memory", lambda: 1 << 30)
    from fpexplore.ops import reductions

    monkeypatch.setattr(reductions, "generate", None)  # sum's inputs: would fail if called
    with pytest.raises(ValueError, match=r"GiB.*limit is about n=\d+"):
        fpx.compare("sum", n=10**8)


def test_gpu_backends_without_gpu_give_messages():
    status = fpx.backends()
    assert set(status) == {"numpy", "emulated", "cupy", "replay", "torch", "jax", "polars"}
    if status["cupy"].startswith("available"):
        pytest.skip("a GPU is present")
    cmp = fpx.compare("sum", n=100, backends=("emulated", "cupy"))
    assert any("cupy backend unavailable" in m for m in cmp.messages)
    assert set(cmp.table["backend"]) == {"emulated"}


def test_snippet_reproduces_the_table():
    cmp = fpx.compare(
        "dot", format="bfloat16", n=300, variants=["kahan", "pairwise"], distribution="wide", seed=7
    )
    ns = {}
    exec(cmp.snippet(), ns)
    timings = ["time_ms", "compile_ms"]
    again = ns["cmp"].table.drop(columns=timings)
    assert again.equals(cmp.table.drop(columns=timings))


def test_a_snippet_of_numpy_scalars_and_fractions_runs_and_reproduces_the_table():
    """Pass 17: lr=np.float32(0.001), lr=Fraction(1, 1024), step=np.int64(5), block=
    np.int64(2) and seed=np.int64(7) gave snippets that raised NameError (they printed
    np.float32(...) and Fraction(...) without importing them); an infinite float prints as
    float('inf'), not inf."""
    from fractions import Fraction

    timings = ["time_ms", "compile_ms"]
    for cmp in (
        fpx.compare("adam_step", n=6, lr=np.float32(0.001)),
        fpx.compare("adam_step", n=6, lr=Fraction(1, 1024), step=np.int64(5)),
        fpx.compare("matmul", n=6, variants=["blocked"], block=np.int64(2)),
        fpx.compare("logsumexp", n=6, seed=np.int64(7)),
    ):
        ns = {}
        exec(cmp.snippet(), ns)
        assert ns["cmp"].table.drop(columns=timings).equals(cmp.table.drop(columns=timings))
    from fpexplore.results import literal

    assert literal(float("-inf")) == "float('-inf')"
    assert literal(np.float16(np.inf)) == "np.float16('inf')"
    assert literal((np.int8(1),)) == "(np.int8(1),)"
    assert eval(literal([np.float32(0.1), float("nan")]), {"np": np})[0] == np.float32(0.1)
    # pass 18: accumulate= as a dtype, a type or a format of fpx.format printed <class ...>
    import ml_dtypes

    from fpexplore.userformat import _forget

    half2 = fpx.format(precision=11, emax=15, name="half2")
    try:  # (forgotten after: other modules' tests list the formats of fpx.format)
        for acc in (np.dtype("float64"), np.float64, ml_dtypes.bfloat16, half2):
            cmp = fpx.compare("sum", n=50, variants=["sequential"], accumulate=acc)
            ns = {}
            exec(cmp.snippet(), ns)
            assert ns["cmp"].table.drop(columns=timings).equals(cmp.table.drop(columns=timings))
        assert literal(half2) == "fpx.format(precision=11, emax=15, subnormals=True, name='half2')"
    finally:
        _forget("half2")


def test_exact_share_counts_a_zero_of_the_other_sign_as_not_exact():
    """Pass 17: the reference of a mean of two -0.0 is -0.0 (Fraction: 0, its sign from the
    terms'); np.mean gives +0.0 (its bits 0x00000000, not 0x80000000), and exact_share, "the
    share bit-equal to the reference", said 1.0."""
    x = np.array([-0.0, -0.0], np.float32)
    cmp = fpx.compare("mean", inputs=x)
    assert np.signbit(cmp.reference)
    for (variant, _), out in cmp.results.items():
        row = cmp.table[cmp.table["variant"] == variant].iloc[0]
        assert row["exact_share"] == (1.0 if np.signbit(out) else 0.0), variant
    nan = fpx.compare("sum", inputs=np.array([np.nan, 1.0], np.float32))
    assert set(nan.table["exact_share"]) == {1.0}  # NaN where the reference is NaN: exact


def test_linspace_of_your_own_num_keeps_the_op_limit():
    """Pass 17: compare("linspace", inputs=(0, 1, 10**12)) raised NumPy's bare MemoryError;
    n=10**12 and fpx.linspace name the limit."""
    for num in (10**12, 10**7 + 1):
        with pytest.raises(ValueError, match="inputs' num \\(the length\\): n=.* the limit is"):
            fpx.compare("linspace", inputs=(np.float32(0), np.float32(1), num))


def test_sweep_table_and_bounds():
    sw = fpx.sweep(
        "sum", sizes=[10, 100, 1000], variants=["sequential", "pairwise"], seeds=1, progress=False
    )
    assert len(sw.table) == 3 * 3  # np.sum + two orders at each size
    assert list(sw.bounds.columns) == ["n", "worst_sequential", "worst_pairwise", "probabilistic"]
    x = fpx.generate("uniform", 1000, "float32", 0)
    row = sw.table[(sw.table.n == 1000) & (sw.table.variant == "sequential")].iloc[0]
    err = abs(float(fpx.sum(x, "sequential")) - float(fpx.exact_sum(x)))
    assert row["abs_error"] == err
    b = sw.bounds.set_index("n").loc[1000]
    assert b["worst_pairwise"] < b["worst_sequential"] and row["abs_error"] <= b["worst_sequential"]


def test_sweep_over_seeds_draws_median_band_and_exact_results():
    sizes, variants = [10, 1000, 10**5], ["sequential", "kahan"]
    sw = fpx.sweep("sum", sizes=sizes, variants=variants, seeds=5, seed=3, progress=False)
    assert len(sw.table) == 3 * 5 * 3 and sorted(sw.table["seed"].unique()) == [3, 4, 5, 6, 7]
    for s in sizes:  # each row is compare() at that size and seed
        x = fpx.generate("uniform", s, "float32", 6)
        row = sw.table[(sw.table.n == s) & (sw.table.seed == 6) & (sw.table.variant == "kahan")]
        assert row["abs_error"].item() == abs(float(fpx.sum(x, "kahan")) - float(fpx.exact_sum(x)))
    # bounds: the median over the seeds of each seed's bound
    one = [fpx.sweep("sum", sizes=[1000], seeds=[k], progress=False).bounds for k in range(3, 8)]
    med = np.median([b["worst_sequential"].item() for b in one])
    assert sw.bounds.set_index("n").loc[1000, "worst_sequential"] == med
    ax = sw.plot().axes[0]
    # median lines (one per result), 10-90% bands, and the floor for error-free results
    seq = sw.table[(sw.table.variant == "sequential")].groupby("n")["abs_error"].median()
    positive = sw.table["abs_error"][sw.table["abs_error"] > 0]
    floor = positive.min() / 4  # error-free medians sit on it
    line = next(ln for ln in ax.get_lines() if ln.get_label() == "sequential (emulated)")
    assert list(line.get_ydata()) == list(np.where(seq > 0, seq, floor))
    assert len(ax.collections) == 3  # a band per result
    kahan = sw.table[sw.table.variant == "kahan"]["abs_error"]
    assert (kahan == 0).any()  # the premise: compensated sums are often exact here
    floor_line = next(ln for ln in ax.get_lines() if ln.get_label().startswith("no error"))
    assert floor_line.get_label() == "no error (0), drawn at this floor"
    assert floor_line.get_ydata()[0] == floor
    with pytest.raises(ValueError, match="seeds must be from 1 to 10000"):
        fpx.sweep("sum", sizes=[10], seeds=0)
    with pytest.raises(ValueError, match="seeds must be from 1 to 10000, got 1000000000"):
        fpx.sweep("sum", sizes=[10], seeds=10**9)  # refused at once (it built a list for 37 s)
    with pytest.raises(ValueError, match="sizes must name at least one size"):
        fpx.sweep("sum", sizes=[])


def test_sweep_takes_seed_only_with_a_count_and_each_run_once():
    """Pass 5 (issue 36): seed= beside a list of seeds was ignored (seed=5, seeds=[1] ran seed
    1) and never checked (seed="abc" ran); seed=2**32-1 with seeds=3 was refused for a seed
    the user never gave; a size or seed listed twice ran twice, weighing the medians."""
    kw = {"sizes": [10], "variants": ["sequential"], "progress": False}
    got = fpx.sweep("sum", seeds=[1], **kw).table
    assert set(got["seed"]) == {1}
    assert set(fpx.sweep("sum", seed=7, seeds=2, **kw).table["seed"]) == {7, 8}
    assert set(fpx.sweep("sum", seeds=2, **kw).table["seed"]) == {0, 1}  # (from 0)
    with pytest.raises(TypeError, match="seed=5 and a list of seeds"):
        fpx.sweep("sum", seed=5, seeds=[1], **kw)
    with pytest.raises(TypeError, match="seed must be an integer"):
        fpx.sweep("sum", seed="abc", seeds=2, **kw)
    with pytest.raises(ValueError, match="seed=4294967295 and seeds=3 run seeds up to 4294967297"):
        fpx.sweep("sum", seed=2**32 - 1, seeds=3, **kw)
    with pytest.raises(ValueError, match="seeds lists 1 more than once"):
        fpx.sweep("sum", seeds=[1, 1, 2], **kw)
    with pytest.raises(ValueError, match="sizes lists 10 more than once"):
        fpx.sweep("sum", sizes=[10, 10], seeds=1, progress=False)


def test_plots_render():
    from matplotlib.figure import Figure

    c = fpx.compare("sum", n=1000)
    fig = c.plot()
    assert isinstance(fig, Figure)
    bars = fig.axes[0].patches
    assert [b.get_width() for b in bars] == c.table["ulp_error"].astype(float).tolist()
    labels = [t.get_text() for t in fig.axes[0].get_yticklabels()]
    assert labels[0] == "np.sum (numpy)" and all("(" in lab for lab in labels)
    assert isinstance(fpx.compare("matmul", n=10).plot(), Figure)
    assert isinstance(fpx.compare("linspace", n=100).plot(kind="hist"), Figure)
    sw = fpx.sweep("sum", sizes=[10, 100], progress=False)
    legend = [t.get_text() for t in sw.plot().axes[0].get_legend().get_texts()]
    assert any("worst case" in t for t in legend) and any("probabilistic" in t for t in legend)
    x = np.float32(1.5)
    bv = plots.bit_view({"exact": x, "other": fpx.next_up(x)})
    assert isinstance(bv, Figure)
    with pytest.raises(ValueError, match="valid: auto, bars, hist, heatmap"):
        c.plot(kind="pie")


def test_comparison_keeps_its_references_and_plots_compute_none(monkeypatch):
    """compare() keeps the reference of every format a result came in (np.matmul of
    bfloat16 gives float32); the plots measure against those and compute no reference."""
    from fpexplore.ops.opspec import OpSpec

    c = fpx.compare("matmul", format="bfloat16", n=8)
    formats = {fpx.format_info(np.asarray(v).dtype).name for v in c.results.values()}
    assert formats == {"bfloat16", "float32"} and set(c.references) == formats
    assert c.references["bfloat16"] is c.reference
    a32, b32 = (fpx.as_format(c.inputs[k], "float32") for k in ("A", "B"))  # exact widening
    exact32 = fpx.exact_matmul(a32, b32)  # rounded once, to float32
    assert np.array_equal(fpx.to_bits(c.references["float32"]), fpx.to_bits(exact32))

    def computed(*args, **kwargs):
        raise AssertionError("a plot computed a reference")

    monkeypatch.setattr(OpSpec, "reference_for", computed)
    hist = c.plot("hist").axes[0]
    assert len(hist.patches) == len(c.results)  # one step histogram per result
    assert c.plot("heatmap").axes[0].images


# ----------------------------------------------------------------------------- what the table shows


@pytest.mark.parametrize("fmt", fpx.FORMATS)
def test_formatted_table_tells_last_bits_apart(fmt):
    """Results that differ in their last bits print as different numbers (pandas' default six
    digits printed 49957.4 for sum, float32, n = 1e5, for values 1 to 3 ulps apart)."""
    n = 10**5 if fmt != "float16" else 2000
    variants = ["sequential", "pairwise", "numpy", "tree", "kahan", "exact"]
    cmp = fpx.compare("sum", format=fmt, n=n, variants=variants)
    shown = cmp.formatted()
    assert shown.iloc[0]["variant"] == "exact (reference)"
    assert shown.iloc[0]["value"] == fpx.shortest_repr(cmp.reference)
    assert shown.iloc[0]["hex"] == fpx.hex_string(cmp.reference)
    rows = shown.iloc[1:].reset_index(drop=True)
    values = [cmp.results[(v, b)] for v, b in zip(cmp.table["variant"], cmp.table["backend"])]
    bits = [int(fpx.to_bits(v)) for v in values]
    assert len(set(bits)) >= 2, "the data should give at least two different results"
    for i, j in itertools.combinations(range(len(bits)), 2):
        same_text = rows.loc[i, "value"] == rows.loc[j, "value"]
        assert same_text == (bits[i] == bits[j]), (rows.loc[i, "value"], rows.loc[j, "value"])
    for row, v in zip(rows.itertuples(), values):
        assert row.value == fpx.shortest_repr(v) and row.hex == fpx.hex_string(v)
        assert row.ulp_error == str(int(fpx.ulp_distance(cmp.reference, v)))
    html = cmp._repr_html_()
    assert all(t in html for t in rows["value"]) and "not the speed of the hardware" in html


def test_formatted_table_of_array_results():
    cmp = fpx.compare("matmul", n=8, variants=["sequential"])
    shown = cmp.formatted()
    assert list(shown["value"]) == ["", "array 8x8", "array 8x8"]
    assert shown.loc[2, "max_abs_ulp"] == str(int(cmp.table.loc[1, "max_abs_ulp"]))


def test_first_use_is_timed_apart(monkeypatch):
    calls = []
    # the first call imports a module (the count of loaded modules moves): it runs again
    loaded = iter([0, 1, 1, 1])

    def slow_first():
        calls.append(1)
        if len(calls) == 1:
            import time

            time.sleep(0.3)  # stands for importing on first use
        return 1.0

    monkeypatch.setattr(timing, "loaded_modules", lambda: next(loaded))
    out, warm, first_use = timing.timed(slow_first)
    assert out == 1.0 and len(calls) == 2 and warm < 0.1 and first_use >= 0.25
    out, warm, first_use = timing.timed(slow_first)
    assert len(calls) == 3 and first_use == 0.0  # nothing to set up: one run


def test_compiling_is_timed_by_numba_and_not_rerun():
    import numba

    from fpexplore.orders import arith

    arith.kernels()  # numba is loaded
    numba.njit(lambda x: x - 1.0)(1.0)  # and its compiler's modules (imported on first use)
    calls = []
    f = numba.njit(lambda x: x * 2.0 + 1.0)

    def call():
        calls.append(1)
        return f(3.0)

    out, warm, setup = timing.timed(call)
    assert out == 7.0 and len(calls) == 1  # compiled once, not run twice
    assert setup > 0.005 and warm < setup  # compiling (milliseconds) reported apart
    out, warm, setup = timing.timed(call)
    assert len(calls) == 2 and setup == 0.0  # compiled: nothing to set up


def test_compile_time_is_not_in_time_ms(tmp_path):
    """In a fresh process with an empty numba cache, the first compare() compiles its kernels:
    that goes to compile_ms, and time_ms stays within 10x of the warm time."""
    import json
    import os
    import subprocess
    import sys

    code = (
        "import json, fpexplore as fpx\n"
        "args = dict(format='float64', n=10**5, variants=['sequential', 'kahan'])\n"
        "a = fpx.compare('sum', **args).table\n"
        "b = fpx.compare('sum', **args).table\n"
        "print(json.dumps([a.time_ms.tolist(), a.compile_ms.tolist(), b.time_ms.tolist(),"
        " b.compile_ms.tolist()]))\n"
    )
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path))
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    )
    first_t, first_c, warm_t, warm_c = json.loads(out.stdout.strip().splitlines()[-1])
    assert max(first_c[1:]) > 100  # numba compiled the emulated orders (milliseconds)
    assert warm_c == [0.0, 0.0, 0.0]
    for t, w in zip(first_t, warm_t):  # (a 20 ms floor: compiling takes 100s of ms)
        assert t <= 10 * max(w, 2.0), (first_t, first_c, warm_t)


# ----------------------------------------------------------------------------- A against B


def test_diff_of_two_matrix_results():
    cmp = fpx.compare("matmul", n=48, variants=["sequential", "sequential+fma", "pairwise"])
    a = cmp.results[("sequential", "emulated")]
    b = cmp.results[("sequential+fma", "emulated")]
    d = cmp.diff("sequential", "sequential+fma", top=7)
    same = a.view(np.uint32) == b.view(np.uint32)  # independent of the Diff's own bit code
    u = fpx.ulp_distance(a, b)
    assert d.summary["elements"] == 48 * 48
    assert d.summary["bitwise_equal"] == int(same.sum()) and 0 < same.sum() < 48 * 48
    assert d.summary["equal_share"] == same.mean()
    assert d.summary["max_abs_ulp"] == int(np.abs(u).max()) >= 1
    assert np.array_equal(d.ulps, u) and np.array_equal(d.equal, same)
    assert len(d.table) == 7 and list(d.table["ulps"].abs()) == sorted(
        d.table["ulps"].abs(), reverse=True
    )
    for row in d.table.itertuples():
        i, j = row.index
        assert row.ulps == u[i, j] != 0
        assert row.a == fpx.shortest_repr(a[i, j]) and row.b == fpx.shortest_repr(b[i, j])
        assert row.a_bits == fpx.bit_string(a[i, j]) and row.b_bits == fpx.bit_string(b[i, j])
    # the same names by label and by key; the plots draw
    assert d.summary == cmp.diff("sequential (emulated)", ("sequential+fma", "emulated")).summary
    assert d.plot().axes[0].images  # a heatmap for matrices
    assert d.plot("hist").axes[0].patches
    with pytest.raises(ValueError, match="valid: auto, hist, heatmap, bits"):
        d.plot("pie")
    assert "bitwise equal" in d._repr_html_()


def test_diff_of_scalars_with_and_without_fma():
    cmp = fpx.compare("dot", n=1000, seed=4, variants=["sequential", "sequential+fma"])
    d = cmp.diff("sequential", "sequential+fma")
    a, b = (cmp.results[(v, "emulated")] for v in ("sequential", "sequential+fma"))
    assert d.summary["bitwise_equal"] == 0 and d.summary["max_abs_ulp"] == 1
    assert int(d.table.loc[0, "ulps"]) == int(fpx.ulp_distance(a, b)) != 0
    assert d.plot().axes  # the bits of both values
    nothing = cmp.diff("sequential", "sequential")
    assert nothing.summary["equal_share"] == 1.0 and len(nothing.table) == 0


def test_diff_names_and_formats():
    cmp = fpx.compare("matmul", format="bfloat16", n=16, variants=["sequential"])
    # np.matmul of bfloat16 gives float32: compared in the wider format, exactly widened
    d = cmp.diff("np.matmul", "sequential")
    assert d.format == "float32" == cmp.results[("np.matmul", "numpy")].dtype.name
    seq = np.asarray(cmp.results[("sequential", "emulated")], dtype=np.float32)
    assert np.array_equal(d.ulps, fpx.ulp_distance(cmp.results[("np.matmul", "numpy")], seq))
    with pytest.raises(ValueError, match="not a result here; results: np.matmul"):
        cmp.diff("pairwise", "sequential")


def test_diff_against_the_exact_reference():
    cmp = fpx.compare("matmul", format="bfloat16", n=16, variants=["sequential"])
    d = cmp.diff("exact (reference)", "np.matmul")  # np.matmul gives float32: its reference
    assert d.format == "float32" and np.array_equal(d.values[0], cmp.references["float32"])
    e = cmp.diff("exact (reference)", "sequential")
    assert e.format == "bfloat16" and np.array_equal(e.values[0], cmp.reference)
    assert np.array_equal(
        e.ulps, fpx.ulp_distance(cmp.reference, cmp.results[("sequential", "emulated")])
    )


def test_sweep_measures_each_result_against_its_own_format():
    # np.matmul of bfloat16 gives float32: its error is against the float32 reference
    sw = fpx.sweep("matmul", format="bfloat16", sizes=[8], seeds=1, progress=False)
    row = sw.table[sw.table.backend == "numpy"].iloc[0]
    c = fpx.compare("matmul", format="bfloat16", n=8)
    out = c.results[("np.matmul", "numpy")]
    want = np.abs(out.astype(np.float64) - c.references["float32"].astype(np.float64)).max()
    assert row["abs_error"] == want and out.dtype == np.float32


def test_diff_of_saturated_and_nan_distances():
    a = np.array([1e308, 1.0, 2.0, np.nan])
    b = np.array([-1e308, 1.0, np.nextafter(2.0, 3.0), 1.0])
    d = results.diff_values("a", a, "b", b)
    assert d.summary["max_abs_ulp"] == 1 and d.summary["nan_mismatches"] == 1
    assert d.summary["saturated"] == 1  # 1e308 to -1e308: no count of ulps
    ax = d.plot("hist").axes[0]
    assert ax.get_xlim()[1] < 10  # the saturated distance is not drawn at 1e19


def test_diff_words_saturated_distances_truly():
    """2**62 or more ulps apart: opposite signs, or one sign far apart in magnitude (float64's
    ordinals span 2**63); the text says which, counted from the values themselves."""
    a = np.array([1e300, 5e-324, -1e-300, 2.0, 7.0])
    b = np.array([1e-300, 1e300, -1e300, -2.0, 7.0])
    d = fpx.diff(a, b)
    same_sign = np.signbit(a) == np.signbit(b)
    assert d.summary["saturated"] == 4 and d.summary["saturated_opposite"] == 1
    assert int(np.sum(same_sign[:4])) == 3
    text = repr(d)
    want = "4 element(s) 2**62 or more ulps apart (1 of opposite signs; 3 of one sign, far apart"
    assert want in text and "far from zero" not in text
    only_same = repr(fpx.diff(np.array([1e300]), np.array([1e-300])))
    assert "(1 of one sign, far apart in magnitude)" in only_same and "opposite" not in only_same
    assert "(1 of opposite signs)" in repr(fpx.diff(np.array([5.0]), np.array([-5.0])))


def test_compare_on_the_users_own_arrays():
    """compare(inputs=): the rows are bit for bit the variants on those arrays (direct calls),
    the arrays are used as they are, format and n come from them, and what describes
    generated data is refused with them."""
    x = fpx.generate("normal", 3000, "float64", 7)
    x_before = x.copy()
    cmp = fpx.compare("sum", inputs=x, variants=["sequential", "pairwise", "tree(block=64)"])
    assert cmp.format == "float64" and cmp.n == 3000 and cmp.inputs["x"] is x
    assert np.array_equal(x.view(np.uint64), x_before.view(np.uint64))  # not changed
    for label, direct in (
        ("sequential", fpx.sum(x, "sequential")),
        ("pairwise", fpx.sum(x, "pairwise")),
        ("tree(block=64)", fpx.sum(x, "tree", block=64)),
    ):
        got = cmp.results[(label, "emulated")]
        assert got.dtype == np.float64 and got.view(np.uint64) == direct.view(np.uint64)
    assert cmp.reference == fpx.exact_sum(x)
    assert set(cmp.table["distribution"]) == {"user data"} and cmp.table["seed"].isna().all()
    assert cmp.params["inputs"] == "user data" and "seed" not in cmp.params
    assert "inputs=inputs" in cmp.snippet() and "user data" in cmp.snippet()
    # dot as a tuple or a dict, matmul of any shapes (n: the inner dimension)
    a = fpx.generate("uniform", 500, "float16", 1)
    b = fpx.generate("uniform", 500, "float16", 2)
    for given in ((a, b), {"a": a, "b": b}):
        d = fpx.compare("dot", inputs=given, variants=["sequential@float32"], format="float16")
        want = fpx.dot(a, b, "sequential", accumulate="float32")
        assert d.results[("sequential@float32", "emulated")].view(np.uint16) == want.view(np.uint16)
    A = fpx.generate("normal", 7 * 30, "float32", 3).reshape(7, 30)
    B = fpx.generate("normal", 30 * 5, "float32", 4).reshape(30, 5)
    m = fpx.compare("matmul", inputs={"A": A, "B": B}, variants=["sequential+fma", "pairwise"])
    assert m.n == 30 and m.format == "float32"
    for v, direct in (
        ("sequential+fma", fpx.matmul(A, B, "sequential", fma=True)),
        ("pairwise", fpx.matmul(A, B, "pairwise")),
    ):
        assert np.array_equal(m.results[(v, "emulated")].view(np.uint32), direct.view(np.uint32))
    assert np.array_equal(m.reference, fpx.exact_matmul(A, B))
    # refused: n, distribution or seed with inputs; another format; masked; unknown keywords
    for bad in ({"n": 3000}, {"seed": 0}, {"distribution": "normal"}):
        with pytest.raises(ValueError, match="for generated data"):
            fpx.compare("sum", inputs=x, **bad)
    with pytest.raises(ValueError, match="format='float32' but the inputs are float64"):
        fpx.compare("sum", inputs=x, format="float32")
    assert fpx.compare("sum", inputs=x, format="float64", variants="sequential").format == "float64"
    with pytest.raises(TypeError, match="masked arrays are not supported"):
        fpx.compare("sum", inputs=np.ma.masked_array(x, mask=x > 0))
    with pytest.raises(TypeError, match="blok"):
        fpx.compare("sum", inputs=x, blok=64)
    with pytest.raises(ValueError, match="missing b"):
        fpx.compare("dot", inputs={"a": a})
    with pytest.raises(TypeError, match="mixed|format"):
        fpx.compare("dot", inputs=(a, x[:500]))
    with pytest.raises(TypeError, match="needs n= .* or inputs="):
        fpx.compare("sum")


def test_diff_of_two_arrays():
    """fpx.diff: b built from a by moving chosen elements k ulps (integer steps of the bit
    pattern of positive values), so every number is known beforehand."""
    a = np.linspace(1, 2, 1000, dtype=np.float32)
    moves = np.zeros(1000, np.int32)
    moves[[3, 50, 700]] = [2, -1, 5]
    moves[900:910] = 1
    b = (a.view(np.int32) + moves).view(np.float32)
    d = fpx.diff(a, b, top=4)
    assert d.bitwise_equal == (1000 - 13) / 1000
    h = d.ulp_histogram
    assert dict(zip(h.index.tolist(), h.tolist())) == {-1: 1, 0: 987, 1: 10, 2: 1, 5: 1}
    assert list(d.table.columns) == ["index", "a", "b", "ulps", "a_bits", "b_bits"]
    assert list(d.table["index"]) == [700, 3, 50, 900] and list(d.table["ulps"]) == [5, 2, -1, 1]
    row = d.table.iloc[0]
    assert row.a_bits.replace(" ", "") == np.binary_repr(a.view(np.int32)[700], 32)
    assert row.b_bits.replace(" ", "") == np.binary_repr(b.view(np.int32)[700], 32)
    assert "987 of 1,000 elements bitwise equal" in repr(d) and "5 ulps" in repr(d)
    assert "bitwise" in d._repr_html_() and "<table" in d._repr_html_()
    assert d.plot().axes[0].patches  # the histogram (1-D results)
    # matrices: the heatmap; scalars: the bits; one piece of code with Comparison.diff
    M = fpx.diff(a.reshape(40, 25), b.reshape(40, 25))
    assert M.table.loc[0, "index"] == (28, 0) and M.plot().axes[0].images
    cmp = fpx.compare("dot", n=500, seed=4, variants=["sequential", "sequential+fma"])
    x, y = (cmp.results[(v, "emulated")] for v in ("sequential", "sequential+fma"))
    assert fpx.diff(x, y).summary == cmp.diff("sequential", "sequential+fma").summary
    with pytest.raises(ValueError, match=r"shape \(1000,\) and b \(10,\)"):
        fpx.diff(a, b[:10])
    wide = fpx.diff(a, b.astype(np.float64))  # two formats: in the one holding both
    assert wide.format == "float64" and wide.summary["bitwise_equal"] == 987
    with pytest.raises(TypeError, match="masked arrays are not supported"):
        fpx.diff(np.ma.masked_array(a), b)


def test_diff_of_two_formats_is_in_one_holding_both():
    """bfloat16 101888 (the sum rounded to bfloat16) against float16's inf (the same sum
    overflowed): different, in float32 (it rounded bfloat16 to float16 and called them
    bitwise equal); small bfloat16 values no longer become float16 zeros; float32 against
    float64 is counted in float64. The ulps are float32's, counted from the bits."""
    import ml_dtypes

    from fpexplore.formats import holding

    a = np.array([101888.0, 2.0**-30, 3.0], ml_dtypes.bfloat16)
    b = np.array([np.inf, 0.0, 3.0], np.float16)
    d = fpx.diff(a, b)
    assert d.format == "float32" and d.summary["bitwise_equal"] == 1
    bits = [int(np.float32(v).view(np.uint32)) for v in (101888.0, np.inf, 2.0**-30, 0.0)]
    assert list(d.ulps) == [bits[1] - bits[0], bits[3] - bits[2], 0]
    assert holding("bfloat16", "float16").name == "float32"
    assert holding("float16", "float32").name == "float32"
    assert holding("float64", "bfloat16").name == "float64"
    wide = fpx.diff(np.float32(0.1), np.float64(0.1))
    assert wide.format == "float64" and wide.ulps[()] != 0


def test_compare_says_where_an_fp8_input_rounding_overflows():
    """+float8_e4m3 turns a float32 input beyond 464 into NaN (e4m3 has no infinity; ml_dtypes'
    conversion), +float8_e5m2 into inf, where cuBLAS's __NV_SATFINITE conversion saturates to
    the largest finite value: compare said nothing (issue 36). Counted here with plain NumPy:
    e4m3's largest is 448 (464 ties to it), e5m2's 57344 (61440 ties to it)."""
    rng = np.random.default_rng(5)
    A = rng.uniform(-1, 1, (3, 4)).astype(np.float32)
    A[0, 1], A[2, 3], A[1, 0] = 465.0, -1e4, 464.0  # two overflow e4m3, 464 rounds to 448
    B = rng.uniform(-1, 1, (4, 2)).astype(np.float32)
    want = int(np.sum(np.abs(A) > 464) + np.sum(np.abs(B) > 464))
    for v in ("sequential+float8_e4m3", "tensor-core(arch=h100)+float8_e4m3"):
        cmp = fpx.compare("matmul", inputs=(A, B), variants=[v])
        notes = [m for m in cmp.messages if m.startswith(v)]
        assert len(notes) == 1 and f": {want} finite input value(s)" in notes[0], cmp.messages
        assert "became NaN" in notes[0] and "saturates them to ±448" in notes[0]
        assert np.isnan(cmp.results[(v, "emulated")][0]).any()  # what the note explains
    big = A * np.float32(200)  # e5m2: |x| > 61440 becomes inf
    want = int(np.sum(np.abs(big.astype(np.float64)) > 61440))
    cmp = fpx.compare("matmul", inputs=(big, B), variants=["sequential+float8_e5m2"])
    assert any(f": {want} finite input value(s)" in m and "became ±inf" in m for m in cmp.messages)
    small = np.clip(A, -448, 448)
    cmp = fpx.compare("matmul", inputs=(small, B), variants=["sequential+float8_e4m3"])
    assert not [m for m in cmp.messages if "float8" in m]


def test_compare_refuses_a_variant_listed_twice():
    """Each variant is one row: the same setting twice (as written, or spelled another way)
    is refused by name, not shown as two identical rows."""
    with pytest.raises(ValueError, match="'pairwise' more than once"):
        fpx.compare("sum", n=10, variants=["pairwise", "pairwise"])
    with pytest.raises(ValueError, match=r"'blocked\(block=64\)' more than once"):
        fpx.compare("sum", n=10, variants=["blocked(block=64)", "blocked( block=64 )"])
    table = fpx.compare("sum", n=10, variants=["pairwise", "blocked(block=64)"]).table
    assert list(table["variant"][table["backend"] == "emulated"]) == [
        "pairwise",
        "blocked(block=64)",
    ]


def test_the_op_parameters_checked_before_a_run_are_those_compare_takes(monkeypatch):
    """The explorer checks its op parameters without a run (check_op_params: the op's
    ``keywords`` and what its variants take as settings); every keyword a compare() of an
    op's default variants looks for is one of those, so nothing compare takes is refused."""
    from fpexplore import experiment
    from fpexplore.ops.opspec import Params
    from fpexplore.ops.registry import get
    from fpexplore.spec import keywords_of

    made = []

    class Spy(Params):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            made.append(self)

    monkeypatch.setattr(experiment, "Params", Spy)
    for op in fpx.ops():
        made.clear()
        fpx.compare(op, n=16, backends=("emulated",))
        taken = set().union(*(p.taken for p in made)) - experiment.COMPARE_ARGUMENTS
        specs = experiment.parse_variants(op, None, "float32")
        static = set(get(op).keywords).union(*(keywords_of(s, op) for s in specs))
        assert taken <= static, (op, taken - static)


@pytest.mark.parametrize(
    "op, given, error, says",
    [
        ("cdist", {"d": 16.7}, TypeError, "d must be an integer, got 16.7"),  # (was 16)
        ("cdist", {"d": True}, TypeError, "d must be an integer, got True"),  # (was 1)
        ("cdist", {"d": 0}, ValueError, "d must be from 1 to 1024, got 0"),
        ("cdist", {"closeness": -1.0}, ValueError, "closeness must be a finite number >= 0"),
        ("cdist", {"closeness": "a"}, ValueError, "closeness must be a finite number >= 0"),
        ("linspace", {"endpoint": 1}, TypeError, "endpoint must be True or False, got 1"),
        ("variance", {"ddof": -1}, ValueError, "ddof must be >= 0, got -1"),
        ("adam_step", {"lr": -1}, ValueError, "lr must be >= 0"),
        ("adam_step", {"step": 0}, ValueError, "step must be from 1"),
        ("adam_step", {"moments": "x"}, ValueError, "unknown moments 'x'"),
        ("softmax", {"ddof": 1}, TypeError, "unexpected keyword argument 'ddof'"),
    ],
)
def test_an_ops_own_parameters_are_checked_before_anything_runs(
    monkeypatch, op, given, error, says
):
    """The op's own keywords (OpSpec.keywords) are checked by compare before its data is
    drawn, and by the explorer before any compare (issue 34); cdist's d was int()'d (16.7 ran
    as 16, True as 1) and a negative closeness ran; softmax took ddof (its reference's
    TypeError came from inside the run)."""
    from fpexplore.ops.registry import get

    monkeypatch.setitem(vars(get(op)), "inputs", lambda *a: pytest.fail("data drawn"))
    with pytest.raises(error, match=says):
        fpx.compare(op, n=16, **given)
    monkeypatch.undo()
    monkeypatch.setattr(fpx.experiment, "compare", lambda *a, **k: pytest.fail("compare ran"))
    with pytest.raises(error, match=says):
        fpx.experiment.check_op_params(op, None, "float32", given)


def test_an_ops_own_parameters_pass_on_as_given():
    got = fpx.compare("cdist", n=8, d=8, closeness=0.5, variants=["direct"])
    assert got.params["d"] == 8 and got.inputs["x"].shape == (8, 8)
    assert fpx.compare("variance", n=8, ddof=np.int64(1)).params["ddof"] == 1


@pytest.mark.parametrize("op", ["softmax", "logsumexp", "variance", "cdist"])
def test_an_unhashable_order_is_named(op):
    """Issue 36: compare(op, order=[1]) (and fpx.softmax(x, order=[1])) said "unhashable
    type: 'list'", naming no argument."""
    for order in ([1], {"a": 1}):
        with pytest.raises(ValueError, match="order"):
            fpx.compare(op, n=8, order=order)
    with pytest.raises(ValueError, match=r"unknown order \[1\]"):
        fpx.softmax(np.ones(4, np.float32), order=[1])


def test_a_ddof_of_n_or_past_it_is_refused_naming_it():
    """Issue 36: compare("variance", ddof=10**30) raised OverflowError from np.var (a C
    long). Pass 32: with ddof >= n the table measured np.var's inf against a NaN reference
    and called the other rows exact: the variance is undefined there, and compare says so
    (fpx.variance returns NaN, with a RuntimeWarning as NumPy's np.var warns)."""
    for ddof in (8, 9, 10**30):
        with pytest.raises(ValueError, match=rf"ddof={ddof} with n=8 values: n - ddof <= 0, the"):
            fpx.compare("variance", n=8, ddof=ddof)
    assert fpx.compare("variance", n=8, ddof=7).reference == fpx.variance(
        fpx.generate("uniform", 8, "float32", 0), variant="exact", ddof=7
    )
    with pytest.warns(RuntimeWarning, match=r"n - ddof = 0 <= 0 \(n=8, ddof=8\)"):
        assert np.isnan(fpx.variance(np.ones(8, np.float32), variant="two-pass", ddof=8))


def test_sweep_abs_error_counts_a_nan_where_the_reference_is_a_number():
    # expanded cdist without the clamp: sqrt of a negative d2 is NaN where the exact distance
    # is a number (here inf: float16 distances past 65504); that is no error-free result
    sw = fpx.sweep(
        "cdist", format="float16", sizes=[16], seeds=1, distribution="wide",
        variants=["expanded(clamp=False)"], backends="emulated", progress=False,
    )  # fmt: skip
    row = sw.table[sw.table.variant == "expanded(clamp=False)"].iloc[0]
    x = fpx.generate("wide", 16 * 16, "float64", 0).reshape(16, 16)  # the op's inputs
    y = x + fpx.generate("normal", 16 * 16, "float64", 1).reshape(16, 16) * 1e-2
    x, y = fpx.as_format(x, "float16"), fpx.as_format(y, "float16")
    got = fpx.cdist(x, y, variant="expanded", clamp=False).astype(np.float64)
    exact = fpx.cdist(x, y, variant="exact").astype(np.float64)
    assert (np.isnan(got) & ~np.isnan(exact)).any()  # the premise
    assert row["abs_error"] == np.inf


@pytest.mark.parametrize("progress", ["no", 0, None])
def test_sweep_progress_is_true_or_false(progress):
    # a string or a number was read as its truth value ("no" drew the bar)
    with pytest.raises(TypeError, match="progress must be True or False"):
        fpx.sweep("sum", sizes=[10, 100], seeds=1, progress=progress)


def test_sweep_says_which_backends_gave_nothing():
    # an empty table (and a KeyError from plot()) came back, compare's note dropped
    with pytest.raises(ValueError, match=r"^sweep: no results from backends=\[\]: none named"):
        fpx.sweep("sum", sizes=[10], seeds=1, backends=[], progress=False)
    if importlib.util.find_spec("torch") is None:
        note = "torch backend unavailable: torch is not installed"
        with pytest.raises(ValueError, match=f"backends='torch': {note}"):
            fpx.sweep("sum", sizes=[10], seeds=1, backends="torch", progress=False)
        sw = fpx.sweep("sum", sizes=[10], seeds=1, backends=("numpy", "torch"), progress=False)
        assert sw.messages == [note + " (pip install torch)"] and note in repr(sw)


def test_sweep_names_the_compare_arguments_it_does_not_take():
    """Issue 36: sweep(n=5) said "compare() got multiple values for keyword argument 'n'"
    (after its progress bar started), sweep(inputs=x) that compare's n, distribution and
    seed are for generated data, which the user never gave."""
    with pytest.raises(TypeError, match=r"fpx.sweep takes no n=: its sizes are sizes="):
        fpx.sweep("sum", n=5, progress=False)
    with pytest.raises(TypeError, match=r"fpx.sweep takes no inputs="):
        fpx.sweep("sum", inputs=np.ones(3, np.float32), progress=False)


def test_sweep_names_itself_and_its_own_keywords_for_a_misspelled_one():
    """Pass 16: sweep(seedz=2) was "fpx.compare() got unexpected keyword argument", listing
    compare's n and inputs (which sweep refuses) and not sweep's sizes and seeds; a variant
    setting no chosen variant takes (sequential's block=) ran."""
    said = "fpx.sweep\\(\\) got unexpected keyword argument 'seedz'; it accepts: .*seeds, sizes"
    with pytest.raises(TypeError, match=said):
        fpx.sweep("sum", sizes=[10], seedz=2, progress=False)
    with pytest.raises(TypeError, match="fpx.sweep\\(\\) got unexpected keyword argument 'block'"):
        fpx.sweep("sum", sizes=[10], variants=["sequential"], block=8, progress=False)
    sw = fpx.sweep("sum", sizes=[10], seeds=1, variants=["tree"], block=8, threads=1)
    assert set(sw.table["variant"]) == {"np.sum", "tree"}  # (tree with block=8)
    # pass 18: accumulate= as a NumPy type failed on the text of a spec holding it
    sw = fpx.sweep("sum", sizes=[10], seeds=1, variants=["sequential"], accumulate=np.float64)
    assert len(sw.table) == 2


def test_a_heatmap_of_scalar_results_names_the_kind():
    """Pass 10: cmp.plot("heatmap") of a sum raised matplotlib's "Invalid shape () for
    image data"."""
    cmp = fpx.compare("sum", n=50, variants=["sequential"])
    with pytest.raises(ValueError, match="kind='heatmap' needs matrix results"):
        cmp.plot("heatmap")


def test_a_dtype_given_for_format_is_its_name():
    """compare(format=np.dtype("float16")) kept the dtype: .format, the table's column and
    the snippet (format=dtype('float16'), a NameError when run) held it (pass 14)."""
    c = fpx.compare("sum", n=50, format=np.dtype("float16"))
    assert type(c.format) is str and c.format == "float16"
    assert set(c.table["format"]) == {"float16"} and "dtype(" not in c.snippet()
    assert (
        c.table["value"].tolist()
        == fpx.compare("sum", n=50, format="float16").table["value"].tolist()
    )
    s = fpx.sweep("sum", sizes=[10, 20], format=np.dtype("float16"), progress=False)
    assert type(s.format) is str and s.format == "float16"


def test_op_parameters_that_make_two_variants_one_computation_are_refused():
    """Pass 19: fma=True beside 'sequential' and 'sequential+fma' made both FMA (an op
    parameter goes to every variant that takes it), and the explorer's FMA preset then
    called them bitwise identical. Refused, naming the keyword and both variants; a
    variant's own setting still wins where nothing collides."""
    for variants, kw in (
        (["sequential", "sequential+fma"], {"fma": True}),
        (["sequential+fma", "sequential"], {"fma": True}),
        (["tree", "tree(block=64)"], {"block": 64}),
        (["sequential", "sequential@float64"], {"accumulate": "float64"}),
    ):
        said = f"{next(iter(kw))}={kw[next(iter(kw))]!r}"
        with pytest.raises(ValueError, match=re.escape(f"fpx.compare: {said} makes")) as e:
            fpx.compare("dot", n=100, variants=variants, backends="emulated", **kw)
        assert all(repr(v) in str(e.value) for v in variants)
    c = fpx.compare("dot", n=1000, variants=["tree", "tree(block=128)"], block=64)
    a, b = c.inputs["a"], c.inputs["b"]
    for label, block in (("tree", 64), ("tree(block=128)", 128)):
        want = fpx.dot(a, b, "tree", block=block)
        assert np.array_equal(c.results[(label, "emulated")], want)


def test_nothing_to_compare_is_said_and_a_format_may_be_a_numpy_type():
    """Pass 19: compare(variants=[], backends="emulated") (or backends=[]) returned 0 rows
    without a word, and plot() failed in pandas; format=np.float16 was "unknown format"
    where np.dtype("float16") and accumulate=np.float64 were taken."""
    for kw in ({"variants": [], "backends": "emulated"}, {"backends": []}):
        with pytest.raises(ValueError, match="fpx.compare: nothing to compare: variants="):
            fpx.compare("sum", n=10, **kw)
    assert len(fpx.compare("sum", n=10, variants=[], backends=["numpy"]).table) == 1
    with pytest.raises(ValueError, match="sweep: no results: variants=\\[\\] chooses none"):
        fpx.sweep("sum", sizes=[10], variants=[], backends="emulated", progress=False)
    args = {"n": 50, "variants": ["pairwise"], "backends": "emulated"}
    want = fpx.compare("sum", format="float16", **args).table.value.tolist()
    import ml_dtypes

    assert fpx.compare("sum", format=np.float16, **args).table.value.tolist() == want
    assert fpx.compare("sum", format=ml_dtypes.bfloat16, **args).table.format[0] == "bfloat16"
    with pytest.raises(ValueError, match="unknown format dtype\\('int32'\\); sum takes"):
        fpx.compare("sum", format=np.int32, **args)


def test_pass_20_an_empty_comparison_and_a_format_given_by_its_ml_dtypes_type():
    """Pass 20: variants=[] beside an unavailable cupy returned 0 rows under cupy's message
    "showing the emulated GPU orders instead", and plot() of an empty comparison was a
    KeyError from pandas; format=ml_dtypes.float8_e4m3fn was "unknown format"."""
    import importlib.util

    import ml_dtypes

    if importlib.util.find_spec("cupy") is None:
        with pytest.raises(ValueError, match="fpx.compare: nothing to compare: variants=\\[\\]"):
            fpx.compare("sum", n=100, variants=[], backends=["cupy", "emulated"])
        c = fpx.compare("sum", n=100, backends=["cupy"])
        with pytest.raises(ValueError, match="Comparison.plot: no result to plot \\(cupy backend"):
            c.plot()
    args = {"n": 50, "variants": ["sequential"], "backends": "emulated"}
    want = fpx.compare("sum", format="float8_e4m3", **args).table.value.tolist()
    got = fpx.compare("sum", format=ml_dtypes.float8_e4m3fn, **args)
    assert got.format == "float8_e4m3" and got.table.value.tolist() == want


def test_cdist_block_goes_to_the_variants_whose_order_takes_it():
    """Pass 20: block=8 beside cdist's 'expanded' and 'expanded(order=blocked)' reached the
    plain one's sequential order ("order 'sequential' has no parameter block"), and beside
    'direct' alone it ran into the same error, where no chosen variant takes it."""
    c = fpx.compare("cdist", n=8, variants=["expanded", "expanded(order=blocked)"], block=8)
    want = fpx.compare("cdist", n=8, variants=["expanded", "expanded(order=blocked, block=8)"])
    for got, spec in (
        ("expanded", "expanded"),
        ("expanded(order=blocked)", "expanded(order=blocked, block=8)"),
    ):
        assert np.array_equal(c.results[(got, "emulated")], want.results[(spec, "emulated")])
    with pytest.raises(
        TypeError, match="fpx.compare\\(\\) got unexpected keyword argument 'block'"
    ):
        fpx.compare("cdist", n=8, variants=["direct"], block=8)


def test_pass_21_an_op_parameter_every_variant_sets_itself_is_refused():
    """Pass 21: fma=False beside 'sequential+fma' alone computed with FMA (the spec's own
    setting wins), block=64 beside 'tree(block=128)' used 128, and the keyword stayed in
    params and the snippet: it changes no variant, so compare, sweep and the explorer refuse
    it, naming it; beside a variant it does change, it applies there (reverse's FMA
    result, from the plain fpx.dot call)."""
    cases = [
        ("dot", ["sequential+fma"], {"fma": False}),
        ("sum", ["tree(block=128)"], {"block": 64}),
        ("dot", ["sequential+tf32"], {"input_rounding": "bfloat16"}),
        ("sum", ["sequential@float64"], {"accumulate": "float32"}),
    ]
    for op, variants, kw in cases:
        (k,) = kw
        for call, args in (
            (fpx.compare, {"op": op, "n": 100}),
            (fpx.sweep, {"op": op, "sizes": [10, 100]}),
            (fpx.explorer, {"op": op, "n": 100}),
        ):
            with pytest.raises(
                ValueError,
                match=f"{k}=.* changes no variant: each one that takes it sets {k} itself",
            ):
                call(**args, variants=variants, **kw)
    c = fpx.compare("dot", n=100, seed=4, variants=["sequential+fma", "reverse"], fma=True)
    want = fpx.dot(c.inputs["a"], c.inputs["b"], "reverse", fma=True)
    assert c.results[("reverse", "emulated")] == want and c.params["fma"] is True


def test_pass_22_variants_without_the_emulated_backend_are_refused():
    """Pass 22: compare(variants=[...], backends=("numpy",)) ran np.sum alone and dropped
    the variants (and block=64) without a word: no backend runs them, a ValueError naming
    them; without them, np.sum alone, as asked."""
    with pytest.raises(ValueError, match="variants: the emulated backend runs the variants"):
        fpx.compare("sum", n=100, variants=["sequential", "pairwise"], backends=("numpy",))
    with pytest.raises(ValueError, match="block: the emulated backend runs the variants"):
        fpx.compare("sum", n=100, backends=("numpy",), block=64)
    c = fpx.compare("sum", n=100, seed=1, backends=("numpy",))
    assert list(c.results) == [("np.sum", "numpy")] and c.results[("np.sum", "numpy")] == np.sum(
        c.inputs["x"]
    )


def test_reference_of_a_label_says_it_takes_a_result():
    """Pass 28: cmp.reference_of("sequential") said "unknown format dtype('<U10')"."""
    cmp = fpx.compare("sum", n=10, variants=["sequential"])
    with pytest.raises(TypeError, match=r"reference_of takes a result .*got 'sequential'; by"):
        cmp.reference_of("sequential")
    assert cmp.reference_of(cmp.results[("sequential", "emulated")]) == cmp.reference


def test_format_given_as_the_inputs_dtype_is_their_format():
    """compare(inputs=float32 data, format=np.float32) said "format=<class 'numpy.float32'>
    but the inputs are float32: leave format out" (it compared the type with the name)."""
    x = np.arange(1, 6, dtype=np.float32) / 3
    for given in (np.float32, np.dtype("float32"), "float32"):
        assert fpx.compare("sum", inputs=x, format=given, variants=["sequential"]).format == (
            "float32"
        )
        cmp = fpx.compare("sum", inputs={"x": x, "format": "float32"}, format=given)
        assert cmp.format == "float32"
    with pytest.raises(ValueError, match=r"format=<class 'numpy.float16'> but the inputs are fl"):
        fpx.compare("sum", inputs=x, format=np.float16)


def test_python_numbers_named_with_a_format_are_read_in_it():
    """Pass 34: compare('linspace', inputs={'start': 0.0, 'stop': 1.0, 'num': 5},
    format='float16') said "the inputs are float64: leave format out" (a float64 comparison
    if followed). Python numbers and lists named with a format are its values in it, or the
    value that is not is named."""
    cmp = fpx.compare("linspace", inputs={"start": 0.0, "stop": 1.0, "num": 5}, format="float16")
    assert cmp.format == "float16" and cmp.inputs["start"].dtype == np.float16
    assert fpx.compare("sum", inputs=[0.5, 0.25, 1.0], format="bfloat16").format == "bfloat16"
    with pytest.raises(ValueError, match=r"inputs\['x'\] holds 0.1, which is not a value of floa"):
        fpx.compare("sum", inputs=[0.1, 0.25], format="float32")
    assert fpx.compare("sum", inputs=[0.1, 0.25]).format == "float64"
