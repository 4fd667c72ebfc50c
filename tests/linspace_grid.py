"""The linspace recording grid and its exact input encoding (see tests/data/record_linspace.py).

36 start/stop kind pairs (Python float, Python int, np.float32, np.float64, 0-d float32 array,
1-d float32 array) x 5 value sets x num in {0,1,2,3,7,50,1000,1999,2000} x endpoint x dtype
(None, float32, float64, float16, int32) x axis (0, and -1 with a 1-d array): 21,150 calls.
"""

from __future__ import annotations

import hashlib
import itertools

import numpy as np

KINDS = ["pyfloat", "pyint", "f32", "f64", "a0f32", "a1f32"]
VALUES = [  # (float start, float stop, int start, int stop)
    (0.1, 2.7, 0, 10),
    (-1.3, 1e-3, -7, 13),
    (5.0, 5.0, 5, 5),
    (0.0, 1e-44, 1, 16777217),  # float32 subnormal stop
    (-3e38, 3e38, -2147483647, 2147483647),  # float32 delta overflows
]
NUMS = [0, 1, 2, 3, 7, 50, 1000, 1999, 2000]
DTYPES = [None, "float32", "float64", "float16", "int32"]


def make(kind, fv, iv):
    return {
        "pyfloat": lambda: float(fv),
        "pyint": lambda: int(iv),
        "f32": lambda: np.float32(fv),
        "f64": lambda: np.float64(fv),
        "a0f32": lambda: np.array(fv, dtype=np.float32),
        "a1f32": lambda: np.array([fv, fv / 3, -fv], dtype=np.float32),
    }[kind]()


def cases():
    for ks, kp in itertools.product(KINDS, KINDS):
        axes = [0, -1] if "a1f32" in (ks, kp) else [0]
        for vi, (fs, fe, is_, ie) in enumerate(VALUES):
            for num, ep, dt, ax in itertools.product(NUMS, [True, False], DTYPES, axes):
                meta = dict(
                    start_kind=ks,
                    stop_kind=kp,
                    value_set=vi,
                    num=num,
                    endpoint=ep,
                    dtype=dt,
                    axis=ax,
                )
                yield meta, make(ks, fs, is_), make(kp, fe, ie)


def describe_input(x):
    if type(x) is float:
        return {"type": "pyfloat", "hex": x.hex()}
    if type(x) is int:
        return {"type": "pyint", "int": x}
    a = np.asarray(x)
    u = a.view(np.dtype(f"u{a.dtype.itemsize}"))
    return {
        "type": "npscalar" if isinstance(x, np.generic) else "ndarray",
        "dtype": a.dtype.name,
        "shape": list(a.shape),
        "bits": [format(int(v), f"0{2 * a.dtype.itemsize}x") for v in u.ravel()],
    }


def decode_input(d):
    if d["type"] == "pyfloat":
        return float.fromhex(d["hex"])
    if d["type"] == "pyint":
        return int(d["int"])
    dt = np.dtype(d["dtype"])
    u = np.array([int(b, 16) for b in d["bits"]], dtype=f"u{dt.itemsize}")
    a = u.view(dt).reshape(d["shape"])
    return a[()] if d["type"] == "npscalar" else a


def digest(a) -> str:
    a = np.ascontiguousarray(np.asarray(a))
    u = a.view(f"u{a.dtype.itemsize}").ravel()
    return hashlib.sha256(u.astype(u.dtype.newbyteorder("<")).tobytes()).hexdigest()


def matches(rec, a) -> bool:
    """Same dtype, shape and bits (SHA-256 of the little-endian bit patterns)."""
    a = np.asarray(a)
    return (
        a.dtype.name == rec["dtype"]
        and list(a.shape) == rec["shape"]
        and digest(a) == rec["sha256"]
    )
