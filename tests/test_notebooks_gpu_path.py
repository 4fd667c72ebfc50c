"""The notebooks' GPU code paths, run with a TEST DOUBLE in place of CuPy and the GPU.

This verifies nothing about a GPU. Every case notebook has a cell ``if fpx.has_gpu(): ...
else: print("No GPU here: ...")``; without a GPU (here, and in tests/test_notebooks.py) only the
``else`` branch runs. This test executes each such notebook with nbclient after inserting a
setup cell that, inside the kernel, makes fpexplore report a ``cupy`` backend named "TEST
DOUBLE (NumPy on the CPU, not a GPU)" and replaces CuPy's functions by NumPy's and
fpexplore's GPU order kernels by the emulated orders (``combine="atomic"`` with a new seed on
every call, so repeated runs differ as atomics would). No CuPy, no CUDA code and no GPU are
involved: the test checks only that the GPU branches run without errors, call ``fpx.on_gpu``,
and label what they print as measured. tests/test_gpu.py checks the real GPU side where there
is one.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

NOTEBOOKS = Path(__file__).resolve().parents[1] / "notebooks"
# notebook -> which parts of the (doubled) CuPy backend its GPU cells call
GPU_NOTEBOOKS = {
    "10_case_linspace.ipynb": {"library"},
    "11_case_matmul.ipynb": {"library"},
    "12_case_fma_dot.ipynb": {"library", "kernel_sum"},
    "13_case_cdist.ipynb": {"library"},
    "14_case_adam.ipynb": {"library"},
    "15_case_gpu_reduction.ipynb": {"kernel_sum"},
    "16_case_tolerances.ipynb": {"library"},
    "20_detective.ipynb": {"library"},
}
DOUBLE = "TEST DOUBLE (NumPy on the CPU, not a GPU)"

SETUP = f"""\
# TEST DOUBLE, inserted by tests/test_notebooks_gpu_path.py: NumPy on this CPU stands in for
# CuPy so that the notebook's GPU cells run. Nothing here runs on, or says anything about, a GPU.
import importlib as _importlib
import itertools as _itertools

import numpy as _np

import fpexplore as _fpx

# (`import fpexplore.backends` would give the function fpx.backends, not the package)
_B = _importlib.import_module("fpexplore.backends")
_C = _importlib.import_module("fpexplore.backends.cupy")
_DOUBLE = {DOUBLE!r}
_real_status = _B.status
_B.status = lambda name: (True, _DOUBLE) if name == "cupy" else _real_status(name)
_NUMPY = {{
    "sum": _np.sum, "dot": _np.dot, "matmul": _np.matmul, "linspace": _np.linspace,
    "exp": _np.exp, "log": _np.log, "sin": _np.sin, "tanh": _np.tanh, "sqrt": _np.sqrt,
    "pow": _np.power,
}}
_seeds = _itertools.count(1)
_double_calls = {{"library": 0, "kernel_sum": 0}}


def _library(op, *args, **kwargs):  # CuPy's function -> NumPy's, the result as an ndarray
    _double_calls["library"] += 1
    return _np.asarray(_NUMPY[op](*args, **kwargs))


def _kernel_sum(x, order, *, y=None, fma=False, **params):  # the GPU kernel -> the emulated order
    _double_calls["kernel_sum"] += 1
    if order in ("blocked", "tree", "tree-strided"):
        params.setdefault("block", 128)  # the kernels' default
    if params.get("combine") == "atomic":
        params["seed"] = next(_seeds)  # another block order on every run, as atomics give
    if y is None:
        return _fpx.sum(x, order, **params)
    return _fpx.dot(x, y, order, fma=fma, **params)


_C.library, _C.kernel_sum = _library, _kernel_sum
_C.status = lambda name="cupy": (True, _DOUBLE)  # the rows' device column names the double
assert _fpx.has_gpu() and _fpx.backends()["cupy"] == "available: " + _DOUBLE
"""

REPORT = "import json as _json\nprint('TEST DOUBLE calls:', _json.dumps(_double_calls))"


def _text(out) -> str:
    if out.get("output_type") == "stream":
        return out.get("text", "")
    data = out.get("data", {})
    return data.get("text/plain", "") + data.get("text/html", "")


def test_every_case_notebook_with_a_gpu_cell_is_covered():
    found = set()
    for path in NOTEBOOKS.glob("*.ipynb"):
        for cell in json.loads(path.read_text())["cells"]:
            src = "".join(cell["source"])
            if cell["cell_type"] == "code" and "fpx.has_gpu()" in src:
                found.add(path.name)
                # without a GPU the cell says why, in one line, and carries on
                assert 'print("No GPU here:", fpx.backends()["cupy"]' in src, path.name
    assert found == set(GPU_NOTEBOOKS)


@pytest.mark.parametrize("name", sorted(GPU_NOTEBOOKS))
def test_gpu_branch_runs_with_test_double(name, tmp_path):
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    path = NOTEBOOKS / name
    nb = nbformat.read(path, as_version=4)
    first_code = next(k for k, c in enumerate(nb.cells) if c.cell_type == "code")
    setup = nbformat.v4.new_code_cell(SETUP, metadata={"test_double": True})
    report = nbformat.v4.new_code_cell(REPORT, metadata={"test_double": True})
    nb.cells.insert(first_code, setup)
    nb.cells.append(report)
    client = nbclient.NotebookClient(
        nb, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(path.parent)}}
    )
    client.execute()

    gpu_cells = 0
    for cell in nb.cells:
        outputs = cell.get("outputs", [])
        for out in outputs:
            assert out.get("output_type") != "error", (name, cell.source[:80], out.get("evalue"))
            if out.get("name") == "stderr":
                assert "Traceback" not in out.get("text", ""), name
        text = "".join(_text(o) for o in outputs)
        assert "No GPU here" not in text, (name, cell.source[:80])
        ours = cell.metadata.get("test_double", False)
        if cell.cell_type == "code" and "fpx.has_gpu()" in cell.source and not ours:
            gpu_cells += 1
            # the GPU branch ran, named the (doubled) device and labelled its numbers measured
            assert DOUBLE in text, (name, cell.source[:80])
            assert "measured" in text, (name, cell.source[:80])
    assert gpu_cells >= 1

    printed = "".join(_text(o) for o in report.outputs)
    calls = json.loads(printed.split("TEST DOUBLE calls:", 1)[1])
    for part in GPU_NOTEBOOKS[name]:
        assert calls[part] > 0, (name, part, calls)
    if name == "20_detective.ipynb":
        every = "".join(_text(o) for c in nb.cells for o in c.get("outputs", []))
        assert "published GPU result (measured by NVIDIA, not here)" in every
