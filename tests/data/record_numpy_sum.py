"""Record np.sum results of the installed NumPy for tests/test_orders.py.

    python tests/data/record_numpy_sum.py          # writes tests/data/numpy_sum_<version>.json

Run once under NumPy < 2.3 (the 'numpy-chunked' order) and once under NumPy >= 2.3; the files
in this folder were made with NumPy 2.2.6 and 1.26.4 (Python 3.11, x86-64, from PyPI wheels).
Each result is the hex bit pattern of np.sum(view(make(n, kind, dtype))).
"""

import json
import pathlib
import sys

import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))
from numpy_sum_cases import cases, make, view  # noqa: E402

out = {"numpy": np.__version__, "cases": []}
for n, kind, dtype, how in cases():
    r = np.sum(view(make(n, kind, dtype), how))
    bits = np.asarray(r).view({2: np.uint16, 4: np.uint32, 8: np.uint64}[r.itemsize])
    out["cases"].append([n, kind, dtype, how, format(int(bits), "x")])
path = pathlib.Path(__file__).with_name(f"numpy_sum_{np.__version__}.json")
path.write_text(json.dumps(out, separators=(",", ":")))
print(path, len(out["cases"]))
