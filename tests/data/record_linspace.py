"""Record np.linspace over tests/linspace_grid.py for the numpy1/numpy2 variant tests.

    python tests/data/record_linspace.py OUT.json.gz

linspace_numpy-1.26.4.json.gz and linspace_numpy-2.2.6.json.gz were made with this grid under
NumPy 1.26.4 and 2.2.6 (CPython 3.11.7, x86-64, PyPI wheels). Format
"fpexplore-linspace-recording-v1": each case has the exact inputs, and the output's dtype,
shape and SHA-256 of its bits (plus the bits themselves for outputs of <= 256 elements).
"""

import gzip
import hashlib
import json
import pathlib
import platform
import sys
import warnings

import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))
from linspace_grid import cases, describe_input, digest  # noqa: E402


def enc(a):
    a = np.ascontiguousarray(a)
    d = {"dtype": a.dtype.name, "shape": list(a.shape), "size": int(a.size), "sha256": digest(a)}
    if a.size <= 256:
        u = a.view(f"u{a.dtype.itemsize}").ravel()
        d["bits"] = [format(int(v), f"0{2 * a.dtype.itemsize}x") for v in u]
    return d


warnings.simplefilter("ignore")
out = []
for i, (meta, start, stop) in enumerate(cases()):
    rec = dict(id=i, **meta, start=describe_input(start), stop=describe_input(stop))
    with np.errstate(all="ignore"):
        y = np.linspace(
            start,
            stop,
            num=meta["num"],
            endpoint=meta["endpoint"],
            dtype=meta["dtype"],
            axis=meta["axis"],
        )
    rec["out"] = enc(y)
    out.append(rec)
doc = {
    "format": "fpexplore-linspace-recording-v1",
    "numpy_version": np.__version__,
    "python": platform.python_version(),
    "machine": platform.machine(),
    "cases": out,
}
with gzip.open(sys.argv[1], "wt") as f:
    json.dump(doc, f)
print(sys.argv[1], len(out), hashlib.sha256(open(sys.argv[1], "rb").read()).hexdigest()[:12])
