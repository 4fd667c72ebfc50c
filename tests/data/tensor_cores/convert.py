"""Build the compact test copies of the published tensor-core outputs (BSD-2, see LICENCE).

Usage: ``python tests/data/tensor_cores/convert.py FOLDER``, where FOLDER holds the original
text files as published (the repository's ``model_validation``: ``V100/fp16``,
``A100/{fp16,bf16,tf32}``, ``A2/...``, ``Ada/...``, ``L40S/...``, ``H100/...``, ``H200/...``,
``B200/{fp16,bf16,tf32,E4M3,E5M2}``, each with ``a_*.txt``, ``b_*.txt``, ``c_*_fp32.txt`` and
``d_*_fp32.txt`` / ``d_*_fp16.txt``). Writes ``published/<gpu>_<format>.npz``: uint32
arrays ``a`` and ``b`` (rows x K, float32 bits), ``c`` (the float32 addend as written to the
files) and ``d_fp32`` / ``d_fp16`` (the GPU's output as float32 bits; fp16 outputs are exact in
float32).
"""

import sys
from pathlib import Path

import numpy as np

FORMATS = {"fp16": "fp16", "bf16": "bf16", "tf32": "tf32", "E4M3": "e4m3", "E5M2": "e5m2"}


def _hex_rows(path: Path) -> np.ndarray:
    rows = [line.split() for line in path.read_text().splitlines() if line.strip()]
    return np.array([[int(v, 16) for v in row] for row in rows], dtype=np.uint32)


def _bin_rows(path: Path) -> np.ndarray:
    rows = [line.strip() for line in path.read_text().splitlines() if line.strip()]
    return np.array([int(v, 2) for v in rows], dtype=np.uint32)


def convert(folder: Path, out: Path) -> list[Path]:
    written = []
    for gpu_dir in sorted(p for p in folder.iterdir() if p.is_dir()):
        for fmt_dir in sorted(p for p in gpu_dir.iterdir() if p.is_dir()):
            if fmt_dir.name not in FORMATS:
                continue
            gpu = gpu_dir.name
            arrays = {
                "a": _hex_rows(next(fmt_dir.glob("a_*.txt"))),
                "b": _hex_rows(next(fmt_dir.glob("b_*.txt"))),
                "c": _bin_rows(next(fmt_dir.glob("c_*_fp32.txt"))),
            }
            for kind in ("fp32", "fp16"):
                found = list(fmt_dir.glob(f"d_*_{kind}.txt"))
                if found:
                    arrays[f"d_{kind}"] = _bin_rows(found[0])
            n = {len(v) for v in arrays.values()}
            if len(n) != 1:
                raise ValueError(f"{fmt_dir}: files of different lengths {sorted(n)}")
            target = out / f"{gpu.lower()}_{FORMATS[fmt_dir.name]}.npz"
            np.savez_compressed(target, **arrays)
            written.append(target)
    return written


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    for path in convert(Path(sys.argv[1]), Path(__file__).resolve().parent / "published"):
        print(path.name, path.stat().st_size)
