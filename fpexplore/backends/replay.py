"""The replay backend: results recorded on a real GPU, shipped as data (fpexplore/data/)."""

from __future__ import annotations

from pathlib import Path

DATA = Path(__file__).resolve().parents[1] / "data"


def recordings() -> list[Path]:
    return sorted(DATA.glob("gpu_*.json*")) if DATA.is_dir() else []


def status() -> tuple[bool, str]:
    files = recordings()
    if not files:
        return False, "no GPU recordings are shipped yet (none has been made on a GPU)"
    return True, f"{len(files)} recording(s) in {DATA}"
