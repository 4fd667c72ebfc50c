"""Run fpexplore's CUDA order kernels on the CPU: a stand-in for CuPy that executes the kernel
source, one OS thread per CUDA thread, so that the kernels' *order logic* can be tested here.

What this is: the kernel source from :func:`fpexplore.backends.cupy.kernel_source`, compiled by
g++ as C++ with a small prelude: ``threadIdx``/``blockIdx``/``blockDim`` are thread-local or
per-launch variables, ``__syncthreads()`` is a ``std::barrier`` over the block's threads,
``__shared__`` memory is one buffer for the block being run (blocks run one after another),
``atomicAdd`` is a locked add (float: subnormal operands and results flushed to signed zero,
as the CUDA Programming Guide documents for global-memory float atomics), and the section
between ``BEGIN arithmetic`` and ``END arithmetic`` (inline PTX on a GPU) becomes IEEE
float/double arithmetic on this CPU (SSE, round to nearest, subnormals kept, no contraction:
``-ffp-contract=off``; ``fma`` from the C library, correctly rounded). :class:`FakeCupy` offers
the handful of CuPy names that ``fpexplore.backends.cupy.kernel_sum`` uses, with NumPy arrays
as "device" memory, so the real launch code (grid and block sizes, null pointers, partial
arrays) runs unchanged.

What this is not: a GPU. It says nothing about the hardware's arithmetic, its memory model or
warp scheduling; tests/test_cuda_source.py checks the instructions the GPU would run, and
tests/test_gpu.py runs the kernels on a real device where there is one.
"""

from __future__ import annotations

import ctypes
import hashlib
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

import numpy as np

PRELUDE = r"""
#include <barrier>
#include <cfloat>
#include <cmath>
#include <mutex>
#include <thread>
#include <vector>
#include <xmmintrin.h>
#define __device__
#define __global__
#define __forceinline__ inline
#define __shared__
struct fpx_dim3 { unsigned int x, y, z; };
static thread_local fpx_dim3 threadIdx, blockIdx;
static fpx_dim3 blockDim, gridDim;
extern "C" { unsigned char smem[1 << 16]; }  // the running block's shared memory
static std::barrier<>* fpx_bar = nullptr;
static inline void __syncthreads() { fpx_bar->arrive_and_wait(); }
static std::mutex fpx_mu;
static inline float fpx_ftz(float v) {
    return (v != 0 && std::fabs(v) < FLT_MIN) ? std::copysign(0.0f, v) : v;
}
static inline float atomicAdd(float* a, float v) {   // global-memory float atomics flush
    std::lock_guard<std::mutex> g(fpx_mu);
    float old = *a;
    *a = fpx_ftz(fpx_ftz(old) + fpx_ftz(v));
    return old;
}
static inline double atomicAdd(double* a, double v) {
    std::lock_guard<std::mutex> g(fpx_mu);
    double old = *a;
    *a = old + v;
    return old;
}
"""

HOST_ARITHMETIC = r"""
static inline T add_rn(T a, T b) { return a + b; }
static inline T sub_rn(T a, T b) { return a - b; }
static inline T mul_rn(T a, T b) { return a * b; }
static inline T fma_rn(T a, T b, T c) { return std::fma(a, b, c); }
static inline T neg(T a) { return -a; }
"""

LAUNCHER = r"""
extern "C" void launch_{name}(unsigned int gx, unsigned int bx{params}) {{
    gridDim = {{gx, 1, 1}};
    blockDim = {{bx, 1, 1}};
    std::barrier<> bar(bx);
    fpx_bar = &bar;
    std::vector<std::thread> threads;
    threads.reserve(bx);
    for (unsigned int t = 0; t < bx; ++t)
        threads.emplace_back([=, &bar]() {{
            _mm_setcsr(_mm_getcsr() & ~0x8040u);  // no FTZ / DAZ on this thread
            threadIdx = {{t, 1, 1}};
            for (unsigned int b = 0; b < gx; ++b) {{  // blocks one after another
                blockIdx = {{b, 1, 1}};
                {name}({args});
                bar.arrive_and_wait();  // the block is done before the next reuses smem
            }}
        }});
    for (auto& th : threads) th.join();
}}
"""

KERNEL = re.compile(r'extern "C" __global__ void (\w+)\(([^)]*)\)', re.S)
_CTYPE = {"long long": ctypes.c_longlong, "int": ctypes.c_int}


def available() -> tuple[bool, str]:
    gxx = shutil.which("g++")
    return (True, gxx) if gxx else (False, "no g++ to compile the kernels for the CPU")


def _signature(params: str) -> list[tuple[str, str]]:
    """[(C type, name)] of a kernel's parameter list."""
    out = []
    for p in params.replace("\n", " ").split(","):
        p = " ".join(p.split())
        ctype, name = p.rsplit(" ", 1)
        if name.startswith("*"):
            ctype, name = ctype + "*", name[1:]
        out.append((ctype, name))
    return out


def build(source: str, workdir: Path) -> tuple[ctypes.CDLL, dict]:
    """Compile a kernel source for the CPU; (library, {kernel: [(C type, name)]})."""
    begin, end = source.index("// BEGIN arithmetic"), source.index("// END arithmetic")
    body = source[:begin] + HOST_ARITHMETIC + source[end:]
    kernels = {m.group(1): _signature(m.group(2)) for m in KERNEL.finditer(body)}
    launchers = "".join(
        LAUNCHER.format(
            name=name,
            params="".join(f", {t} {n}" for t, n in sig),
            args=", ".join(n for _, n in sig),
        )
        for name, sig in kernels.items()
    )
    code = PRELUDE + body + launchers
    key = hashlib.sha256(code.encode()).hexdigest()[:16]
    src, lib = workdir / f"k_{key}.cpp", workdir / f"k_{key}.so"
    if not lib.exists():
        src.write_text(code)
        cmd = ["g++", "-std=c++20", "-O1", "-ffp-contract=off", "-fno-fast-math", "-shared",
               "-fPIC", "-pthread", "-o", str(lib), str(src)]  # fmt: skip
        subprocess.run(cmd, check=True, capture_output=True, text=True)
    return ctypes.CDLL(str(lib)), kernels


class DeviceArray(np.ndarray):
    """A NumPy array standing in for device memory (``.get()`` copies it back, as CuPy's)."""

    def get(self):
        return np.array(self)


class _Function:
    def __init__(self, lib, name, sig):
        self.fn = getattr(lib, f"launch_{name}")
        self.sig = sig

    def __call__(self, grid, block, args, shared_mem=0):
        assert len(args) == len(self.sig), (self.sig, args)
        assert shared_mem <= 1 << 16
        cargs = []
        for (ctype, _), a in zip(self.sig, args):
            if ctype.endswith("*"):
                # a device array, or np.uint64(0) for a null pointer (as kernel_sum passes it)
                cargs.append(
                    ctypes.c_void_p(a.ctypes.data if isinstance(a, np.ndarray) else int(a))
                )
            else:
                cargs.append(_CTYPE[ctype](int(a)))
        self.fn(ctypes.c_uint(grid[0]), ctypes.c_uint(block[0]), *cargs)


class _Module:
    def __init__(self, code, workdir, options=()):
        self.lib, self.kernels = build(code, workdir)

    def get_function(self, name):
        return _Function(self.lib, name, self.kernels[name])


class _Runtime:
    """cupy.cuda.runtime's device queries, answered for a device named as a stand-in."""

    NAME = "CPU stand-in for a GPU (tests/cuda_on_cpu.py)"

    def getDeviceCount(self):  # noqa: N802 (CuPy's names)
        return 1

    def getDeviceProperties(self, i):  # noqa: N802
        return {"name": self.NAME.encode(), "major": 0, "minor": 0, "multiProcessorCount": 1}

    def driverGetVersion(self):  # noqa: N802
        return 0

    def runtimeGetVersion(self):  # noqa: N802
        return 0


class FakeCupy:
    """The CuPy names fpexplore's CuPy backend uses: asarray, asnumpy, zeros, RawModule
    (compiled for the CPU), cuda.runtime's device queries, and — for exercising code paths
    such as the recorder only — CuPy's sum/dot/matmul/linspace/ufuncs answered by NumPy's."""

    __version__ = "cpu-stand-in"

    def __init__(self, workdir: Path | None = None):
        self.workdir = Path(workdir or tempfile.mkdtemp(prefix="fpx_cuda_cpu_"))
        self.cuda = type("cuda", (), {"runtime": _Runtime()})()
        for name in ("sum", "dot", "matmul", "linspace", "exp", "log", "sin", "tanh", "sqrt"):
            setattr(self, name, getattr(np, name))
        self.power = np.power

    def asnumpy(self, a):
        return np.asarray(a)

    def asarray(self, a):
        return np.array(a).view(DeviceArray)

    def zeros(self, n, dtype):
        return np.zeros(n, dtype=dtype).view(DeviceArray)

    def RawModule(self, code, options=()):  # noqa: N802 (CuPy's name)
        return _Module(code, self.workdir, options)
