"""NVRTC, the CUDA runtime compiler, through ctypes: compiles CUDA C to PTX without a GPU.

CuPy compiles its kernels (and fpexplore's own) with NVRTC at first use; running the same
compiler here shows what instructions a kernel becomes under CuPy's options, on a machine
with no GPU and no driver. The library comes from the ``nvidia-cuda-nvrtc-cu12`` wheel (a
dev dependency) or a CUDA toolkit on the library path.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import glob
import os
import re

# What CuPy passes to NVRTC for a RawModule with no options of its own (CuPy 13/14:
# cupy/_core/core.pyx assemble_cupy_compiler_options, cupy/cuda/compiler.py
# _compile_with_cache_cuda and _compile_using_nvrtc): the caller's options first, then
# --std=c++17, include paths, -ftz=true, the architecture, --device-as-default-execution-space.
CUPY_OPTIONS = (
    "--std=c++17",
    "-ftz=true",
    "-arch=compute_90",
    "--device-as-default-execution-space",
)


def _find() -> str | None:
    try:
        import nvidia.cuda_nvrtc as wheel

        for d in wheel.__path__:
            found = sorted(glob.glob(os.path.join(d, "lib", "libnvrtc.so.*")))
            found = [f for f in found if "builtins" not in f and ".alt." not in f]
            if found:
                return found[0]
    except ImportError:
        pass
    return ctypes.util.find_library("nvrtc")


_PATH = _find()
_LIB = None


def available() -> tuple[bool, str]:
    if _PATH is None:
        return False, "NVRTC not found (pip install nvidia-cuda-nvrtc-cu12)"
    try:
        _lib()
    except OSError as e:
        return False, f"NVRTC at {_PATH} does not load: {e}"
    return True, _PATH


def _lib():
    global _LIB
    if _LIB is None:
        _LIB = ctypes.CDLL(_PATH)
    return _LIB


def version() -> tuple[int, int]:
    major, minor = ctypes.c_int(), ctypes.c_int()
    _lib().nvrtcVersion(ctypes.byref(major), ctypes.byref(minor))
    return major.value, minor.value


class CompileError(RuntimeError):
    pass


def compile_ptx(source: str, options=CUPY_OPTIONS) -> tuple[str, str]:
    """(PTX, compiler log) for ``source``; raises CompileError with the log on failure."""
    lib = _lib()
    prog = ctypes.c_void_p()
    rc = lib.nvrtcCreateProgram(ctypes.byref(prog), source.encode(), b"kernel.cu", 0, None, None)
    if rc:
        raise CompileError(f"nvrtcCreateProgram failed ({rc})")
    try:
        opts = (ctypes.c_char_p * len(options))(*[o.encode() for o in options])
        rc = lib.nvrtcCompileProgram(prog, len(options), opts)
        size = ctypes.c_size_t()
        lib.nvrtcGetProgramLogSize(prog, ctypes.byref(size))
        buf = ctypes.create_string_buffer(size.value)
        lib.nvrtcGetProgramLog(prog, buf)
        log = buf.value.decode(errors="replace").strip()
        if rc:
            raise CompileError(log or f"nvrtcCompileProgram failed ({rc})")
        lib.nvrtcGetPTXSize(prog, ctypes.byref(size))
        buf = ctypes.create_string_buffer(size.value)
        lib.nvrtcGetPTX(prog, buf)
        return buf.value.decode(), log
    finally:
        lib.nvrtcDestroyProgram(ctypes.byref(prog))


def entries(ptx: str) -> dict[str, str]:
    """The body of each ``.entry`` (kernel) in a PTX module, by name."""
    out = {}
    for m in re.finditer(r"\.entry\s+(\w+)\s*\((.*?)\n\}", ptx, re.S):
        out[m.group(1)] = m.group(0)
    return out


FLOAT_OP = re.compile(
    r"^\s*(?:@!?%p\d+\s+)?((?:add|sub|mul|fma|mad|neg|abs|div|rcp|sqrt|min|max|atom|red)"
    r"(?:\.[a-z0-9:]+)*\.f(?:16|32|64))\b",
    re.M,
)


def float_ops(ptx: str) -> list[str]:
    """Every floating-point arithmetic instruction (opcode with modifiers) in ``ptx``."""
    return FLOAT_OP.findall(ptx)
