"""What fpexplore's CUDA kernels, and the CuPy kernels it emulates, compile to — without a GPU.

NVRTC (the compiler CuPy uses at run time) compiles the sources here with the options CuPy
adds, and the tests read the PTX: which rounding, whether subnormals are flushed (``.ftz``),
whether a multiply and an add were contracted into an FMA. This checks the instructions, not
a run on a device: tests/test_gpu.py does that where a GPU is present.
"""

from __future__ import annotations

import re

import pytest

from fpexplore.backends.cupy import kernel_source

import nvrtc

ok, why = nvrtc.available()
pytestmark = pytest.mark.skipif(not ok, reason=why)

SUFFIX = {"float32": "f32", "float64": "f64"}


@pytest.fixture(scope="module", params=["float32", "float64"])
def compiled(request):
    fmt = request.param
    ptx, log = nvrtc.compile_ptx(kernel_source(fmt))
    return fmt, ptx, log


def test_order_kernels_compile_cleanly_under_cupys_options(compiled):
    fmt, ptx, log = compiled
    assert log == ""  # no warnings either
    assert set(nvrtc.entries(ptx)) == {
        "k_sequential",
        "k_blocked",
        "k_chain",
        "k_combine",
        "k_tree",
        "k_kahan",
    }


def test_every_operation_rounds_to_nearest_and_keeps_subnormals(compiled):
    """CuPy appends -ftz=true; inline PTX keeps every operation .rn and never .ftz."""
    fmt, ptx, _ = compiled
    p = SUFFIX[fmt]
    allowed = {f"add.rn.{p}", f"sub.rn.{p}", f"mul.rn.{p}", f"fma.rn.{p}", f"neg.{p}"}
    ops = nvrtc.float_ops(ptx)
    assert ops and not [o for o in ops if ".ftz" in o]
    atomics = [o for o in ops if o.startswith(("atom", "red"))]
    assert set(ops) - set(atomics) <= allowed, sorted(set(ops))
    # the only atomic is the tree kernels' block-result atomicAdd
    assert set(atomics) == {f"atom.global.add.{p}"}
    per_kernel = {k: set(nvrtc.float_ops(b)) for k, b in nvrtc.entries(ptx).items()}
    assert [k for k, s in per_kernel.items() if f"atom.global.add.{p}" in s] == ["k_tree"]


def test_fma_only_where_the_order_fuses(compiled):
    """An FMA appears only in the kernels with a fused branch (fma=True), never in the
    combining kernels, so no multiply+add was contracted behind the order's back."""
    fmt, ptx, _ = compiled
    p = SUFFIX[fmt]
    per_kernel = {k: set(nvrtc.float_ops(b)) for k, b in nvrtc.entries(ptx).items()}
    for k in ("k_chain", "k_combine"):
        assert not any(o.startswith("fma") for o in per_kernel[k]), k
    for k in ("k_sequential", "k_blocked", "k_tree", "k_kahan"):
        assert {f"fma.rn.{p}", f"add.rn.{p}", f"mul.rn.{p}"} <= per_kernel[k], k


# ----------------------------------------------------------------------------- NVRTC facts

INTRINSIC = """
extern "C" __global__ void k(const float* x, float* out) {
    out[0] = __fadd_rn(x[0], x[1]);
    out[1] = __fmul_rn(x[0], x[1]);
}
"""


def test_cupys_ftz_flag_overrides_the_callers_and_flushes_rn_intrinsics():
    """Why the kernels use inline PTX: CuPy's -ftz=true comes after the caller's -ftz=false,
    the last one wins, and the _rn intrinsics then compile to flushing instructions."""
    ptx, log = nvrtc.compile_ptx(INTRINSIC, ("-ftz=false",) + nvrtc.CUPY_OPTIONS)
    assert "followed by" in log  # NVRTC warns, and takes the later -ftz=true
    assert set(nvrtc.float_ops(ptx)) == {"add.rn.ftz.f32", "mul.rn.ftz.f32"}
    ptx, _ = nvrtc.compile_ptx(INTRINSIC, ("-arch=compute_90",))  # NVRTC's own default
    assert set(nvrtc.float_ops(ptx)) == {"add.rn.f32", "mul.rn.f32"}


# CuPy's linspace with two Python scalars runs the ufunc 'out0 = in0 + i * in1' ('dd->d',
# cupy/_creation/ranges.py) in an elementwise kernel whose loop index i is a signed integer;
# this is that expression in a kernel of the same shape.
LINSPACE_SCALAR = """
extern "C" __global__ void cupy_linspace(const double in0, const double in1, double* out,
                                         long long n) {
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (long long)blockDim.x * gridDim.x) {
        double &out0 = out[i];
        out0 = in0 + i * in1;
    }
}
"""

ELEMENTWISE_F32 = """
extern "C" __global__ void k(const float* a, const float* b, float* out, long long n) {
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = a[i] + b[i];
}
"""


def test_cupy_scalar_linspace_is_contracted_to_one_fma():
    """The `cupy-scalar` linspace variant computes fma(i, step, start) in float64: NVRTC's
    default --fmad=true contracts in0 + i*in1 into one fma.rn.f64."""
    ptx, _ = nvrtc.compile_ptx(LINSPACE_SCALAR)
    ops = nvrtc.float_ops(ptx)
    assert set(ops) == {"fma.rn.f64"}, ops  # (the loop is unrolled: several copies)
    assert re.search(r"cvt\.rn\.f64\.s64", ptx)  # i converted to double exactly (|i| < 2^53)


def test_cupy_float32_elementwise_flushes_subnormals():
    """The `cupy-array` linspace variant (and cupy-kernel's ftz=True) assume CuPy's float32
    kernels flush subnormals: under CuPy's options a + b is add.ftz.f32."""
    ptx, _ = nvrtc.compile_ptx(ELEMENTWISE_F32)
    assert set(nvrtc.float_ops(ptx)) == {"add.ftz.f32"}


CONVERSIONS = """
extern "C" __global__ void k(const float* a, const double* d, double* o, float* p) {
    o[0] = (double)a[0];
    p[0] = (float)d[0];
    p[1] = floorf(a[1]);
}
"""


def test_cupy_conversions_and_floor_flush_float32_subnormals_too():
    """The linspace emulation flushes float32 subnormals in CuPy's astype (f32<->f64) and
    floor as well: under CuPy's options they compile to cvt...ftz instructions."""
    ptx, _ = nvrtc.compile_ptx(CONVERSIONS)
    cvts = set(re.findall(r"\bcvt(?:\.[a-z0-9]+)+(?=\s)", ptx)) - {"cvta.to.global.u64"}
    assert cvts == {"cvt.ftz.f64.f32", "cvt.rn.ftz.f32.f64", "cvt.rmi.ftz.f32.f32"}, cvts
