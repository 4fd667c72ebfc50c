"""torch, jax and polars as compare() backends: rows of the real library where it is
installed (live tests, skipped elsewhere), a clear message where it is not, and the machine
each row came from. CI has none of them: there the message tests run."""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest

import fpexplore as fpx
from fpexplore.backends import NAMES as BACKEND_NAMES
from fpexplore.libraries import backend as libraries
from fpexplore.libspec import LIBRARIES

HAS = {name: importlib.util.find_spec(name) is not None for name in libraries.NAMES}


def test_status_names_the_package_to_install():
    for name in libraries.NAMES:
        ok, why = libraries.status(name)
        assert ok == HAS[name]
        if not ok:
            assert why == f"{name} is not installed ({LIBRARIES[name].install})"  # one text
    with pytest.raises(ValueError, match="valid: torch, jax, polars"):
        libraries.status("tensorflow")


def test_a_missing_library_is_a_message_not_an_error():
    missing = [n for n in libraries.NAMES if not HAS[n]]
    if not missing:
        pytest.skip("every library backend is installed here")
    c = fpx.compare("sum", n=1000, backends=("numpy", *missing))
    assert list(c.table["backend"]) == ["numpy"]
    for name in missing:
        why = f"{name} is not installed ({LIBRARIES[name].install})"
        assert f"{name} backend unavailable: {why}" in c.messages


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
    # pass 6 (issue 36): said, not silently unused; a count past OpenBLAS's most is not shown
    # as what ran (threadpoolctl reads the pool back)
    assert "threads=1 is not applied to np.sum: NumPy runs it on one thread" in c.messages[0]
    c = fpx.compare("sum", n=100, threads=4, backends=["emulated"])
    assert c.messages == [
        "threads=4 is not applied: no backend here runs a CPU library (emulated; an emulated "
        'order takes its own: "torch(threads=2)")'
    ]
    pytest.importorskip("threadpoolctl")
    from threadpoolctl import threadpool_info

    if not any(p["user_api"] == "blas" for p in threadpool_info()):
        pytest.skip("threadpoolctl sees no BLAS pool here")
    A = np.ones((40, 40), np.float32)
    c = fpx.compare("matmul", inputs=(A, A), threads=10**6, variants=["sequential"])
    ran = c.table.set_index("backend").loc["numpy", "threads"]
    assert ran < 10**6
    assert c.messages == [f"threads=1000000: NumPy's BLAS ran {int(ran)} (its most)"]


def test_library_functions_and_refusals():
    assert libraries.call_name("torch", "matmul") == "torch.matmul"
    assert libraries.call_name("polars", "dot") is None
    with pytest.raises(ValueError, match="polars backend: no function for dot here"):
        libraries.run("polars", "dot", [np.ones(3), np.ones(3)], "float64")
    with pytest.raises(ValueError, match="polars backend: sum of float16 is not computed"):
        libraries.run("polars", "sum", [np.ones(3, np.float16)], "float16")


def test_library_rows_with_stand_in_libraries(monkeypatch):
    """The rows of installed libraries (CI has none: stand-ins that sum with NumPy): one row
    each after NumPy's, in the table's order whatever the order asked; threads reach torch
    alone (the others say so); an op or format a library lacks is a message, not a row."""
    calls = []

    def run_here(call, arrays, threads=None):
        calls.append((call, threads))
        out = getattr(np, call.split(".")[1])(*arrays)  # (np.sum, np.dot, np.matmul)
        return out, {"name": call.split(".")[0], "version": "0", "threads": threads}

    monkeypatch.setattr(libraries, "status", lambda name: (True, f"{name} stand-in"))
    monkeypatch.setattr(libraries, "run_here", run_here)
    c = fpx.compare("sum", n=100, backends=("polars", "jax", "numpy", "torch"), threads=2)
    assert list(zip(c.table["backend"], c.table["variant"])) == [
        ("numpy", "np.sum"),
        ("torch", "torch.sum"),
        ("jax", "jnp.sum"),
        ("polars", "polars.sum"),
    ]
    assert calls == [("torch.sum", 2), ("jnp.sum", None), ("polars.sum", None)]
    assert (c.table["value"] == c.table["value"].iloc[0]).all()
    assert c.table["threads"].iloc[1] == 2 and c.table["threads"].iloc[2:].isna().all()
    for name in ("jax", "polars"):
        assert f"{name}: threads=2 is not applied (its thread pool is fixed when it loads: " in (
            " ".join(c.messages)
        )
    c = fpx.compare("matmul", n=4, backends=("polars", "torch", "jax"))
    assert list(c.table["backend"]) == ["torch"]
    assert c.messages == [
        "jax backend: matmul has no jax function here",
        "polars backend: matmul has no polars function here",
    ]
    c = fpx.compare("sum", format="float16", n=10, backends=("polars",))
    assert c.table.empty
    assert c.messages == ["polars backend: sum of float16 is not computed by polars"]


def test_one_library_spec_per_library():
    """What each real library is (fpexplore/libspec.py) is what machine, the backends and the
    app read: run_elsewhere's calls, the library rows' calls and formats, the orders."""
    import dataclasses

    from fpexplore import machine
    from fpexplore.libspec import LIBRARIES

    assert list(LIBRARIES) == ["numpy", "torch", "jax", "polars", "numba"]
    assert libraries.NAMES == ("torch", "jax", "polars")
    assert BACKEND_NAMES == ("numpy", "emulated", "cupy", "replay", *libraries.NAMES)
    assert list(machine.CALLS)[:3] == ["np.dot", "np.matmul", "np.einsum-dot"]
    assert machine.CALLS["jnp.dot"] == ("jax", 2, "jnp.dot(a, b)")
    assert machine.OPENBLAS_KERNELS["prescott"] == ("Prescott", "Katmai", ("pni",))
    known = {o for op in ("sum", "dot", "matmul") for o in fpx.orders(op)}
    for lib in LIBRARIES.values():
        assert lib.orders and set(lib.orders) <= known, lib.name
        assert set(lib.ops.values()) <= set(lib.calls), lib.name  # run_here runs each row
        assert set(lib.formats) <= set(fpx.FORMATS) and lib.install.startswith("pip install")
        assert lib.backend == (lib.name in libraries.NAMES)
    assert {lib.name for lib in LIBRARIES.values() if lib.threads} == {"numpy", "torch"}
    with pytest.raises(dataclasses.FrozenInstanceError):
        LIBRARIES["torch"].threads = False
    with pytest.raises(TypeError):
        LIBRARIES["torch"].ops["sum"] = "torch.nansum"
    assert len({*LIBRARIES.values()}) == 5  # (hashable, by name)


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
