"""The replay backend: results recorded on a real GPU, shipped as data (fpexplore/data/).

``python -m fpexplore.record`` writes ``gpu_<device>.json.gz`` on a machine with a GPU. Each
entry is one result of a fixed, seeded case (the inputs are regenerated here with
:func:`fpexplore.generate`, so only the outputs are stored), with the device, compute
capability, driver, CUDA runtime and CuPy versions. Format "fpexplore-gpu-recording-v1":

    {"format": ..., "device": {...}, "created": ..., "entries": [
        {"op", "format", "n", "distribution", "seed", "variant", "params",
         "dtype", "shape", "data": base64 of the little-endian result bytes}]}
"""

from __future__ import annotations

import base64
import gzip
import json
import os
from pathlib import Path

import numpy as np

from .job import USER_DATA, Job, Result

DATA = Path(__file__).resolve().parents[1] / "data"  # the recordings fpexplore ships
FORMAT = "fpexplore-gpu-recording-v1"
UNAVAILABLE = "{name} backend unavailable: {why}{instead}"  # (run_step says instead of what)


def user_folder() -> Path:
    """Where ``python -m fpexplore.record`` writes by default, and the replay backend reads
    beside :data:`DATA`: ``$XDG_DATA_HOME/fpexplore/recordings`` (``~/.local/share/...``).
    A user's folder, never the installed package's."""
    base = os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share"
    return Path(base) / "fpexplore" / "recordings"


def recordings(folder: Path | None = None) -> list[Path]:
    """The recording files in ``folder``; None: the shipped ones and the user's own."""
    folders = [DATA, user_folder()] if folder is None else [Path(folder)]
    return sorted(p for f in folders if f.is_dir() for p in f.glob("gpu_*.json.gz"))


def status(name: str = "replay") -> tuple[bool, str]:
    files = recordings()
    if not files:
        return False, "no GPU recordings are shipped yet (none has been made on a GPU)"
    devices = sorted({load(f)["device"].get("device", "?") for f in files})
    return True, f"{len(files)} recording(s) from {', '.join(devices)}"


def encode(result) -> dict:
    a = np.array(result, order="C")  # (ascontiguousarray would make a 0-d array 1-d)
    le = a.astype(a.dtype.newbyteorder("<"), copy=False)
    return {
        "dtype": a.dtype.name,
        "shape": list(a.shape),
        "data": base64.b64encode(le.tobytes()).decode("ascii"),
    }


def decode(entry: dict):
    from ..formats import format_info

    dt = (
        format_info(entry["dtype"]).dtype
        if entry["dtype"] == "bfloat16"
        else np.dtype(entry["dtype"])
    )
    raw = base64.b64decode(entry["data"])
    a = np.frombuffer(raw, dtype=dt.newbyteorder("<")).astype(dt).reshape(entry["shape"])
    return a[()] if a.ndim == 0 else a


def load(path) -> dict:
    """One recording file; ValueError naming the file where it is not a readable one."""
    try:
        with gzip.open(path, "rt") as f:
            doc = json.load(f)
    except (OSError, EOFError, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise ValueError(
            f"{path}: not a readable {FORMAT} file ({type(e).__name__}: {e})"
        ) from None
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise ValueError(f"{path}: not an {FORMAT} file")
    return doc


def lookup(op: str, fmt: str, n: int, distribution: str, seed: int, folder=None) -> list:
    """Every recorded result of this case: a list of (label, device dict, result)."""
    out = []
    for path in recordings(folder):
        doc = load(path)
        for e in doc["entries"]:
            if (e["op"], e["format"], e["n"], e["distribution"], e["seed"]) == (
                op,
                fmt,
                n,
                distribution,
                seed,
            ):
                out.append((e["variant"], doc["device"], decode(e)))
    return out


def steps(job: Job, name: str = "replay") -> list[str]:
    return [name]


def results(job: Job, step: str) -> list[Result]:
    """The GPU recordings of these generated inputs (compare's ``replay`` rows; block
    partials and repeated runs are not rows)."""
    if job.distribution == USER_DATA:
        job.messages.append("replay: recordings are of generated data, not of your inputs")
        return []
    shape = np.shape(job.op_spec.reference_for(job.inputs, None, job.params, job.cache))
    found = [
        Result(
            f"{label} [{device.get('device', 'GPU')}]",
            "replay",
            out,
            0.0,
            device=f"{device.get('device', 'GPU')} (recorded)",
        )
        for label, device, out in lookup(job.op, job.format, job.n, job.distribution, job.seed)
        if np.shape(out) == shape
    ]
    if not found:
        job.messages.append(
            f"replay: no GPU recording of {job.op} {job.format} n={job.n} "
            f"{job.distribution} seed={job.seed}"
        )
    return found
