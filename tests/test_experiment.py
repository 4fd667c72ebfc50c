"""compare(), sweep(), generate() and the plots: tables equal direct API calls."""

from __future__ import annotations

import numpy as np
import pytest

import fpexplore as fpx
from fpexplore import experiment, plots

COLUMNS = [
    "op",
    "format",
    "n",
    "distribution",
    "seed",
    "variant",
    "backend",
    "value",
    "ulp_error",
    "max_abs_ulp",
    "mean_abs_ulp",
    "exact_share",
    "rel_error",
    "bits_error",
    "time_ms",
    "numpy_version",
    "device",
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


def test_compare_sum_rows_equal_direct_calls():
    cmp = fpx.compare(
        "sum",
        format="float32",
        n=5000,
        variants=["sequential", "pairwise"],
        distribution="normal",
        seed=1,
        block=64,
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


def test_compare_errors_are_clear():
    with pytest.raises(ValueError, match="valid ops: sum, dot, matmul"):
        fpx.compare("conv", n=10)
    with pytest.raises(ValueError, match="valid: float16, bfloat16, float32, float64"):
        fpx.compare("sum", format="float8", n=10)
    with pytest.raises(ValueError, match="valid: uniform, normal, wide, ill-conditioned"):
        fpx.compare("sum", n=10, distribution="cauchy")
    with pytest.raises(ValueError, match="valid: numpy, emulated, cupy, replay"):
        fpx.compare("sum", n=10, backends=("tpu",))
    with pytest.raises(ValueError, match="valid variants: sequential"):
        fpx.compare("sum", n=10, variants=["fastest"])
    with pytest.raises(ValueError, match="positive integer"):
        fpx.compare("sum", n=0)
    with pytest.raises(ValueError, match="limit"):
        fpx.compare("matmul", n=5000)


def test_oversized_n_refused_before_allocating(monkeypatch):
    """The memory check runs before any data exists (a 10^8-element request with 1 GiB)."""
    monkeypatch.setattr(experiment, "available_memory", lambda: 1 << 30)
    monkeypatch.setattr(experiment, "generate", None)  # would fail if called
    with pytest.raises(ValueError, match=r"GiB.*limit is about n=\d+"):
        fpx.compare("sum", n=10**8)


def test_gpu_backends_without_gpu_give_messages():
    status = fpx.backends()
    assert set(status) == {"numpy", "emulated", "cupy", "replay"}
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
    again = ns["cmp"].table.drop(columns="time_ms")
    assert again.equals(cmp.table.drop(columns="time_ms"))


def test_sweep_table_and_bounds():
    sw = fpx.sweep(
        "sum", sizes=[10, 100, 1000], variants=["sequential", "pairwise"], progress=False
    )
    assert len(sw.table) == 3 * 3  # np.sum + two orders at each size
    assert list(sw.bounds.columns) == ["n", "worst_sequential", "worst_pairwise", "probabilistic"]
    x = fpx.generate("uniform", 1000, "float32", 0)
    row = sw.table[(sw.table.n == 1000) & (sw.table.variant == "sequential")].iloc[0]
    err = abs(float(fpx.sum(x, "sequential")) - float(fpx.exact_sum(x)))
    assert row["abs_error"] == err
    b = sw.bounds.set_index("n").loc[1000]
    assert b["worst_pairwise"] < b["worst_sequential"] and row["abs_error"] <= b["worst_sequential"]


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
