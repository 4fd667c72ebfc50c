"""Run the case notebooks' code cells as plain Python, the ``if fpx.has_gpu():`` cells included,
and write each cell's status and the GPU cells' output to a JSON file (for a GPU machine with
CuPy but no Jupyter; docs/gpu.md). Usage, from the repository root:

    python tests/notebook_cells.py OUT.json [--no-widgets]

``--no-widgets`` (``--no-ipython``) hides ipywidgets (IPython) as on such a machine, to try the
script on a CPU; without IPython, ``display`` prints."""

import contextlib
import io
import json
import os
import sys
import time
import traceback
import types

import matplotlib

matplotlib.use("Agg")
if "--no-widgets" in sys.argv:
    sys.modules["ipywidgets"] = None
if "--no-ipython" in sys.argv:
    sys.modules["IPython"] = None
try:
    import IPython.display  # noqa: F401
except ImportError:  # no Jupyter on the machine: display() prints
    stub, display_module = types.ModuleType("IPython"), types.ModuleType("IPython.display")
    display_module.display = lambda *a, **k: print(*a)
    stub.display, stub.version_info, stub.get_ipython = display_module, (8, 0, 0), lambda: None
    sys.modules.update({"IPython": stub, "IPython.display": display_module})
NBS = [
    "10_case_linspace",
    "11_case_matmul",
    "12_case_fma_dot",
    "13_case_cdist",
    "14_case_adam",
    "15_case_gpu_reduction",
    "16_case_tolerances",
    "20_detective",
]
out = sys.argv[1]
report = {}
root = os.getcwd()
for nb in NBS:
    cells = json.load(open(f"{root}/notebooks/{nb}.ipynb"))["cells"]
    ns = {"__name__": "__main__", "display": lambda *a, **k: print(*a)}
    os.chdir(f"{root}/notebooks")
    rows = []
    for i, c in enumerate(cells):
        if c["cell_type"] != "code":
            continue
        src = "".join(c["source"])
        src = "\n".join(ln for ln in src.splitlines() if not ln.lstrip().startswith(("%", "!")))
        buf = io.StringIO()
        t = time.time()
        try:
            with contextlib.redirect_stdout(buf):
                exec(compile(src, f"{nb}[{i}]", "exec"), ns)
            status = "ok"
        except Exception as e:  # noqa: BLE001
            status = f"ERR {type(e).__name__}: {str(e)[:300]}"
            buf.write(traceback.format_exc()[-1500:])
        gpu = "has_gpu()" in src
        rows.append(
            {
                "cell": i,
                "gpu_cell": gpu,
                "status": status,
                "s": round(time.time() - t, 2),
                "output": buf.getvalue()[-4000:] if gpu or status != "ok" else "",
            }
        )
        print(nb, i, "GPU" if gpu else "", status, round(time.time() - t, 1), flush=True)
    report[nb] = rows
    os.chdir(root)
json.dump(report, open(out, "w"), indent=1)
