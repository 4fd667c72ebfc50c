"""Every notebook runs top to bottom in a real kernel, without a GPU, and is stored clean."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

NOTEBOOKS = sorted((Path(__file__).resolve().parents[1] / "notebooks").glob("*.ipynb"))
LESSONS = ("01", "02", "03", "04", "05")


def run_notebook(path, folder):
    """``path`` executed top to bottom (Run All) in a new kernel whose folder is ``folder``."""
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    nb = nbformat.read(path, as_version=4)
    client = nbclient.NotebookClient(
        nb, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(folder)}}
    )
    client.execute()
    return nb


def widget_states(nb) -> dict:
    """The widgets' state saved with an executed notebook, by model id."""
    saved = nb.metadata.get("widgets", {}).get("application/vnd.jupyter.widget-state+json", {})
    return {k: v["state"] for k, v in saved.get("state", {}).items()}


def assert_answers_held_back(nb, name):
    """Under Run All, each cell that would give an answer away (``fpx.lessons.reveal``) shows
    nothing but its widget, and the output that widget holds is hidden."""
    states = widget_states(nb)
    held = 0
    for cell in nb.cells:
        if cell.cell_type != "code" or "fpx.lessons.reveal(" not in cell.source:
            continue
        kinds = [set(o.get("data", {})) or {o.get("output_type")} for o in cell.outputs]
        assert kinds and all("application/vnd.jupyter.widget-view+json" in k for k in kinds), (
            name,
            cell.source[:60],
            kinds,
        )
        for out in cell.outputs:
            model = states[out["data"]["application/vnd.jupyter.widget-view+json"]["model_id"]]
            for child in model["children"]:
                child_state = states[child.removeprefix("IPY_MODEL_")]
                if "outputs" in child_state:  # the Output widget holding the cell's output
                    layout = states[child_state["layout"].removeprefix("IPY_MODEL_")]
                    assert layout.get("display") == "none", (name, cell.source[:60])
                    held += 1
    assert held, f"{name}: no output held back until its exercise is answered"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_runs(path, tmp_path):
    # a lesson runs where no answers were kept (its answers folder is relative)
    nb = run_notebook(path, tmp_path if path.name[:2] in LESSONS else path.parent)
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
    if path.name[:2] in LESSONS:
        assert_answers_held_back(nb, path.name)
        assert not list(tmp_path.iterdir()), "Run All wrote files"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_stored_without_outputs_and_uses_public_api(path):
    data = json.loads(path.read_text())
    for cell in data["cells"]:
        if cell["cell_type"] == "code":
            assert cell["outputs"] == [] and cell["execution_count"] is None
            src = "".join(cell["source"])
            assert "fpexplore." not in src.replace("import fpexplore as fpx", ""), src
            assert "._" not in src.replace("fpx.", ""), "private names in a notebook"
