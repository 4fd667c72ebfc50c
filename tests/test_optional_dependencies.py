"""A core install (no ``jupyter`` extra) fails clearly: every function that needs pandas,
matplotlib or ipywidgets names the package and the extra to install, instead of a bare
``ModuleNotFoundError``; what needs none of them (the advisor's numbers and words) works.

Each case runs in a fresh interpreter in which the package cannot be imported
(``sys.modules[name] = None``, as if it were not installed)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from fpexplore._optional import require

INSTALL = 'pip install "fpexplore[jupyter]"'

SCRIPT = """
import json, sys
for name in {blocked!r}:
    sys.modules[name] = None  # import fails: "not installed"
import numpy as np
import fpexplore as fpx
x = np.ones(4, np.float32)
found = {{}}
for what, call in {calls!r}:
    try:
        eval(call)
    except ModuleNotFoundError as e:
        found[what] = [str(e), e.name]
    else:
        found[what] = None
print(json.dumps(found))
"""

# blocked package -> (what the message names, the call)
CASES = {
    "pandas": [
        ("fpx.compare", "fpx.compare('sum', n=10)"),
        ("fpx.sweep", "fpx.sweep('sum', sizes=(10,), seeds=1, progress=False)"),
        ("fpx.match_orders", "fpx.match_orders(x, x.sum(), 'sum')"),
        ("fpx.difference_budget", "fpx.difference_budget(x, 'sequential', 'pairwise', 'sum')"),
        ("Tolerance.table", "fpx.suggest_tolerance(x, x).table"),
    ],
    "matplotlib": [
        ("fpexplore's plots", "fpx.plots.bit_view({'one': np.float32(1)})"),
        ("fpx.explorer", "fpx.explorer(n=10)"),  # ipywidgets there, matplotlib not
    ],
    "ipywidgets": [("fpx.explorer", "fpx.explorer")],
}


def _run(blocked: str, calls) -> dict:
    code = SCRIPT.format(blocked=[blocked], calls=calls)
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=300, check=False
    )
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("package", sorted(CASES))
def test_missing_extra_is_named(package):
    found = _run(package, CASES[package])
    for what, _call in CASES[package]:
        assert found[what] is not None, f"{what} ran without {package}"
        message, name = found[what]
        assert name == package
        assert message.startswith(f"{what} needs {package}"), message
        assert INSTALL in message, message


def test_the_advisor_needs_no_pandas():
    calls = [
        ("numbers", "fpx.suggest_tolerance(x, x * 1.0000001).rtol"),
        ("words", "fpx.suggest_tolerance(x, x).explain()"),
        ("snippets", "fpx.suggest_tolerance(x, x).snippets['numpy']"),
    ]
    assert _run("pandas", calls) == {"numbers": None, "words": None, "snippets": None}


def test_require_returns_the_module_and_passes_other_errors_on(monkeypatch, tmp_path):
    import numpy

    assert require("numpy") is numpy
    monkeypatch.setitem(sys.modules, "pandas", None)
    with pytest.raises(ModuleNotFoundError, match=r"^this needs pandas, .*fpexplore\[jupyter\]"):
        require("pandas")
    with pytest.raises(ModuleNotFoundError, match="pip install fpx_not_a_package$"):
        require("fpx_not_a_package")  # no extra provides it
    # a package that is there but misses a dependency of its own: that error, unchanged
    (tmp_path / "fpx_broken_package.py").write_text("import fpx_its_missing_dependency\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(ModuleNotFoundError) as info:
        require("fpx_broken_package")
    assert info.value.name == "fpx_its_missing_dependency"
    assert "pip install" not in str(info.value)
