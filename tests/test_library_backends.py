"""torch, jax and polars as compare() backends: rows of the real library where it is
installed (live tests, skipped elsewhere), a clear message where it is not, and the machine
each row came from. CI has none of them: there the message tests run."""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest

import fpexplore as fpx
from fpexplore.backends import libraries

HAS = {name: importlib.util.find_spec(name) is not None for name in libraries.NAMES}


def test_status_names_the_package_to_install():
    for name in libraries.NAMES:
        ok, why = libraries.status(name)
        assert ok == HAS[name]
        if not ok:
            assert why == f"{name} is not installed (pip install {name})"
    with pytest.raises(ValueError, match="valid: torch, jax, polars"):
        libraries.status("tensorflow")


def test_a_missing_library_is_a_message_not_an_error():
    missing = [n for n in libraries.NAMES if not HAS[n]]
    if not missing:
        pytest.skip("every library backend is installed here")
    c = fpx.compare("sum", n=1000, backends=("numpy", *missing))
    assert list(c.table["backend"]) == ["numpy"]
    for name in missing:
        assert f"{name} backend unavailable: {name} is not installed (pip install {name})" in (
            c.messages
        )


def test_every_row_names_its_machine_and_library():
    c = fpx.compare("dot", n=2000, backends=("numpy", "emulated"), threads=1)
    info = fpx.machine.machine_info()
    for col in ("cpu", "cpu_flags", "simd", "blas_kernel", "blas_threads", "library", "threads"):
        assert col in c.table.columns
    assert (c.table["cpu"] == info["cpu"]["model"]).all()
    assert (c.table["cpu_flags"] == " ".join(info["cpu"]["flags"])).all()
    assert (c.table["blas_kernel"].str.contains(str(info["blas"]["architecture"]))).all()
    numpy_row = c.table[c.table["backend"] == "numpy"].iloc[0]
    assert numpy_row["library"] == "numpy" and numpy_row["library_version"] == np.__version__
    assert numpy_row["threads"] == 1  # threads=1: NumPy's BLAS pool for this call
    assert c.table[c.table["backend"] == "emulated"]["library"].isna().all()
    assert c.params["threads"] == 1


def test_threads_is_checked_and_reaches_only_what_uses_it():
    for bad in (0, -1):
        with pytest.raises(ValueError, match="threads must be >= 1"):
            fpx.compare("dot", n=100, threads=bad)
    for bad in ("2", 1.5, True):
        with pytest.raises(TypeError, match="threads must be an integer"):
            fpx.compare("dot", n=100, threads=bad)
    c = fpx.compare("sum", n=1000, threads=1)  # np.sum runs no BLAS: no thread count to show
    assert c.table[c.table["backend"] == "numpy"]["threads"].isna().all()


def test_library_functions_and_refusals():
    assert libraries.call_name("torch", "matmul") == "torch.matmul"
    assert libraries.call_name("polars", "dot") is None
    with pytest.raises(ValueError, match="polars backend: no function for dot here"):
        libraries.run("polars", "dot", [np.ones(3), np.ones(3)], "float64")
    with pytest.raises(ValueError, match="polars backend: sum of float16 is not computed"):
        libraries.run("polars", "sum", [np.ones(3, np.float16)], "float16")


def test_the_app_offers_threads_and_installed_libraries_only():
    pytest.importorskip("ipywidgets")
    import ipywidgets as W

    app = fpx.explorer(op="dot", n=2000)
    shown = []
    stack = [app]
    while stack:  # the displayed widget tree
        w = stack.pop()
        shown.append(w)
        stack.extend(getattr(w, "children", ()))
    (threads,) = [w for w in shown if isinstance(w, W.Dropdown) and w.description == "threads"]
    assert app.backends in shown
    for name in libraries.NAMES:
        assert (name in app.backends.options) == HAS[name]
    threads.value = 1
    assert app.arguments()["threads"] == 1
    row = app.comparison.table[app.comparison.table["backend"] == "numpy"].iloc[0]
    assert row["threads"] == 1
    assert "threads=1" in app.snippet.value


@pytest.mark.skipif(not HAS["polars"], reason="polars is not installed")
def test_live_polars_row_is_the_polars_order():
    c = fpx.compare("sum", n=100_003, backends=("emulated", "polars"), variants=["polars"])
    got = c.results[("polars.sum", "polars")]
    assert fpx.to_bits(got) == fpx.to_bits(c.results[("polars", "emulated")])
    row = c.table[c.table["backend"] == "polars"].iloc[0]
    assert row["library"] == "polars" and row["library_version"]


@pytest.mark.skipif(not HAS["torch"], reason="torch is not installed")
@pytest.mark.parametrize("threads", [1, 2])
def test_live_torch_rows_are_the_torch_order(threads):
    c = fpx.compare(
        "sum",
        n=100_003,
        backends=("emulated", "torch"),
        variants=[f"torch(threads={threads})"],
        threads=threads,
    )
    got = c.results[("torch.sum", "torch")]
    assert fpx.to_bits(got) == fpx.to_bits(c.results[(f"torch(threads={threads})", "emulated")])
    assert c.table[c.table["backend"] == "torch"].iloc[0]["threads"] == threads
