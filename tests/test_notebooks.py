"""Every notebook runs top to bottom in a real kernel, without a GPU, and is stored clean."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

NOTEBOOKS = sorted((Path(__file__).resolve().parents[1] / "notebooks").glob("*.ipynb"))


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_runs(path, tmp_path):
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    nb = nbformat.read(path, as_version=4)
    client = nbclient.NotebookClient(
        nb, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(path.parent)}}
    )
    client.execute()
    for cell in nb.cells:
        for out in cell.get("outputs", []):
            assert out.get("output_type") != "error", (path.name, cell.source[:80])
            if out.get("name") == "stderr":
                assert "Traceback" not in out.get("text", ""), path.name
    # widget cells render: the last output of a widget cell is a widget view
    views = [
        o
        for c in nb.cells
        for o in c.get("outputs", [])
        if "application/vnd.jupyter.widget-view+json" in o.get("data", {})
    ]
    if "widgets" in path.read_text() or "explorer" in path.name:
        assert views, f"{path.name} displays no widget"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_stored_without_outputs_and_uses_public_api(path):
    data = json.loads(path.read_text())
    for cell in data["cells"]:
        if cell["cell_type"] == "code":
            assert cell["outputs"] == [] and cell["execution_count"] is None
            src = "".join(cell["source"])
            assert "fpexplore." not in src.replace("import fpexplore as fpx", ""), src
            assert "._" not in src.replace("fpx.", ""), "private names in a notebook"
