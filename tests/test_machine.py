"""fpexplore.machine: machine_info() and run_elsewhere().

The real library runs in a child process under a forced OpenBLAS kernel and thread count,
and its bits are compared with the emulated orders of fpexplore.libraries.simd (recorded on
another CPU, defined in docs/simd_orders.md): nothing depends on this host's default kernel,
SIMD level or thread count. A kernel this CPU cannot run (threadpoolctl reports another one)
is skipped.
"""

from __future__ import annotations

import importlib.util
import json
import os
import platform
import subprocess
import sys

import numpy as np
import pytest

from fpexplore import machine
from fpexplore.libraries.orders import simd_sum

HAS_THREADPOOLCTL = importlib.util.find_spec("threadpoolctl") is not None


def bits(v) -> str:
    v = np.asarray(v)
    return hex(int(v.view(f"u{v.dtype.itemsize}")))


def pair(n: int, seed: int, dtype):
    """Two normal vectors (seeded): their dot products differ between the kernels' orders."""
    rng = np.random.default_rng([seed, n])
    return rng.normal(size=n).astype(dtype), rng.normal(size=n).astype(dtype)


def forced(info: dict, architecture: str) -> None:
    """Skip unless the child really ran ``architecture`` (a CPU may not support it)."""
    got = info["blas"]["architecture"]
    if info["blas"]["library"] != "openblas" or got != architecture:
        pytest.skip(f"OpenBLAS kernel {architecture} not available here (ran {got!r})")


# ----------------------------------------------------------------------------- machine_info


def test_machine_info_keys_types_and_values():
    info = machine.machine_info()
    assert json.loads(json.dumps(info)) == info  # plain JSON data
    assert set(info) >= {
        "cpu",
        "numpy_simd",
        "blas",
        "threadpools",
        "cpu_count",
        "affinity",
        "python",
        "numpy",
        "machine",
        "env",
        "installed",
    }
    assert info["cpu_count"] == os.cpu_count()
    assert info["python"] == platform.python_version()
    assert info["numpy"] == np.__version__
    assert info["machine"] == platform.machine()
    cpu = info["cpu"]
    assert isinstance(cpu["model"], str) and cpu["model"]
    assert cpu["flags"] == [f for f in machine.FLAGS if f in set(cpu["flags"])]  # known, ordered
    simd = info["numpy_simd"]
    for key in ("baseline", "dispatch", "dispatch_found", "features"):
        assert all(isinstance(s, str) for s in simd[key]), key
    assert set(simd["dispatch_found"]) <= set(simd["dispatch"])
    assert set(simd["baseline"]) <= set(simd["features"])  # the baseline runs here
    assert info["installed"]["threadpoolctl"] is None or HAS_THREADPOOLCTL
    blas = info["blas"]
    assert set(blas) == {"library", "version", "architecture", "threads", "threading_layer"}
    if HAS_THREADPOOLCTL:
        assert isinstance(blas["threads"], int) and blas["threads"] >= 1
        assert any(p["user_api"] == "blas" for p in info["threadpools"])
    summary = machine.summary(info)
    assert summary["Python / NumPy"] == f"{platform.python_version()} / {np.__version__}"
    assert summary["BLAS threads"] == str(blas["threads"])


def test_machine_info_without_threadpoolctl(monkeypatch):
    monkeypatch.setitem(sys.modules, "threadpoolctl", None)  # import raises ImportError
    info = machine.machine_info()
    assert info["threadpools"] is None
    assert info["blas"]["architecture"] == "unknown (install threadpoolctl)"
    assert info["blas"]["threads"] == "unknown (install threadpoolctl)"


def test_machine_info_reports_the_settings(monkeypatch):
    monkeypatch.setenv("OPENBLAS_CORETYPE", "Nehalem")
    monkeypatch.delenv("XLA_FLAGS", raising=False)
    info = machine.machine_info()
    assert info["env"]["OPENBLAS_CORETYPE"] == "Nehalem" and "XLA_FLAGS" not in info["env"]
    assert machine.summary(info)["$OPENBLAS_CORETYPE"] == "Nehalem"


# ----------------------------------------------------------------------------- run_elsewhere

needs_threadpoolctl = pytest.mark.skipif(not HAS_THREADPOOLCTL, reason="needs threadpoolctl")


@needs_threadpoolctl
@pytest.mark.parametrize("kernel", list(machine.OPENBLAS_KERNELS))
def test_np_dot_under_a_forced_kernel_is_its_emulated_order(kernel):
    coretype, architecture, _ = machine.OPENBLAS_KERNELS[kernel]
    if not machine.runs_here(kernel):
        pytest.skip(f"this CPU lacks the flags of OpenBLAS's {kernel} kernels")
    a, b = pair(4099, 0, np.float32)
    got, info = machine.run_elsewhere(
        "np.dot", a, b, env={"OPENBLAS_CORETYPE": coretype, "OPENBLAS_NUM_THREADS": "1"}
    )
    forced(info, architecture)
    assert info["call"] == "np.dot" and info["library"]["name"] == "numpy"
    assert info["blas"]["threads"] == 1
    assert info["env"]["OPENBLAS_CORETYPE"] == coretype
    assert info["requested"] == {"OPENBLAS_CORETYPE": coretype, "OPENBLAS_NUM_THREADS": "1"}
    assert isinstance(got, np.float32)
    want = simd_sum(a, b, preset=f"openblas-sdot({kernel})")
    assert bits(got) == bits(want), (kernel, got, want)
    # the data tell the kernels apart: this is not an order-blind check
    others = {bits(simd_sum(a, b, preset=f"openblas-sdot({k})")) for k in machine.OPENBLAS_KERNELS}
    assert len(others) == 5


def test_a_kernel_this_cpu_cannot_run_is_refused_before_the_child_dies(monkeypatch):
    """Forcing OpenBLAS kernels whose instructions the CPU lacks kills the child (SIGILL):
    run_elsewhere refuses first, naming env and the flags lacking; runs_here says which run.
    The CPU is made to lack every flag here, so the check runs on any machine."""
    monkeypatch.setattr(machine, "_cpu", lambda features: {"flags": ["sse2", "pni"]})
    monkeypatch.setattr(machine.platform, "machine", lambda: "x86_64")
    assert [k for k in machine.OPENBLAS_KERNELS if machine.runs_here(k)] == ["prescott"]
    a = np.ones(3, np.float32)
    with pytest.raises(ValueError, match=r"env: OPENBLAS_CORETYPE='SkylakeX' .* avx2, fma"):
        machine.run_elsewhere("np.dot", a, a, env={"OPENBLAS_CORETYPE": "skylakex"})
    with pytest.raises(ValueError, match="kernel: unknown 'zen'"):
        machine.runs_here("zen")


@needs_threadpoolctl
def test_np_matmul_is_the_same_kernel():
    a, b = pair(1000, 0, np.float32)
    got, info = machine.run_elsewhere("np.matmul", a, b, env={"OPENBLAS_CORETYPE": "Haswell"})
    forced(info, "Haswell")
    want = simd_sum(a, b, preset="openblas-sdot(haswell)")
    assert bits(want) != bits(simd_sum(a, b, preset="openblas-sdot(sandybridge)"))  # FMA shows
    assert bits(got) == bits(want)


@needs_threadpoolctl
@pytest.mark.parametrize("threads", [1, 2])
def test_ddot_float64_threads_split_bits_preserved(threads):
    """float64 through the files both ways, and OpenBLAS's threaded ddot split (n > 10000)."""
    n = 20_001
    a, b = pair(n, 0, np.float64)
    one = simd_sum(a, b, preset="openblas-ddot(haswell)", threads=1)
    two = simd_sum(a, b, preset="openblas-ddot(haswell)", threads=2)
    assert bits(one) != bits(two)  # the data show the split
    got, info = machine.run_elsewhere(
        "np.dot", a, b, threads=threads, env={"OPENBLAS_CORETYPE": "Haswell"}
    )
    forced(info, "Haswell")
    if info["blas"]["threads"] != threads:
        pytest.skip(f"OpenBLAS runs {info['blas']['threads']} threads here, not {threads}")
    assert info["requested"]["OPENBLAS_NUM_THREADS"] == str(threads)
    assert info["requested"]["FPX_TORCH_THREADS"] == str(threads)
    assert isinstance(got, np.float64)
    assert bits(got) == bits(one if threads == 1 else two)


def test_float16_bits_and_arrays_come_back():
    # subnormal float16 values: every partial sum is exact, so the result is known exactly
    x = np.array([-3, -1, -1, 0, 0], np.float16) * np.float16(2.0**-24)
    got, info = machine.run_elsewhere("np.sum", x)
    assert type(got) is np.float16 and bits(got) == "0x8005"
    assert info["library"]["version"] == np.__version__
    # a 2-D result: small integers, exact in any order
    a = np.arange(6, dtype=np.float64).reshape(2, 3) - 2.5
    b = np.arange(6, dtype=np.float64).reshape(3, 2) * 0.25
    got, _ = machine.run_elsewhere("np.matmul", a, b)
    assert got.dtype == np.float64 and got.shape == (2, 2)
    want = [[sum(a[i, k] * b[k, j] for k in range(3)) for j in range(2)] for i in range(2)]
    assert got.tolist() == want == [[-1.25, -2.375], [3.25, 4.375]]


def test_einsum_and_polars_calls():
    a, b = pair(10007, 0, np.float32)  # two 8192-element chunks
    for call, preset, args in [
        ("np.einsum-dot", "numpy-einsum-dot", (a, b)),
        ("np.einsum-sum", "numpy-einsum-sum", (a,)),
    ]:
        want = simd_sum(*args, preset=preset)
        assert bits(want) != bits(simd_sum(*args, preset=preset, chunk=0))  # chunks show
        got, _ = machine.run_elsewhere(call, *args)
        assert bits(got) == bits(want), call
    if importlib.util.find_spec("polars") is None:
        with pytest.raises(ModuleNotFoundError, match="pip install polars"):
            machine.run_elsewhere("polars.sum", a)
    else:
        got, info = machine.run_elsewhere("polars.sum", a)
        assert info["library"]["name"] == "polars"
        assert bits(got) == bits(simd_sum(a, preset="polars-sum"))


def test_unknown_call_wrong_arity_and_types():
    a = np.ones(3, np.float32)
    with pytest.raises(ValueError, match=r"unknown call 'np\.vdot'.*np\.dot, np\.matmul"):
        machine.run_elsewhere("np.vdot", a, a)
    with pytest.raises(TypeError, match="np.sum takes 1 array"):
        machine.run_elsewhere("np.sum", a, a)
    import ml_dtypes

    with pytest.raises(TypeError, match="bit for bit"):
        machine.run_elsewhere("np.sum", a.astype(ml_dtypes.bfloat16))


def test_errors_in_the_child_come_back():
    with pytest.raises(ValueError, match="failed in the child process: ValueError"):
        machine.run_elsewhere("np.dot", np.ones(3), np.ones(4))  # shapes not aligned
    with pytest.raises(TimeoutError, match="np.sum did not finish"):
        machine.run_elsewhere("np.sum", np.ones(3), timeout=0.001)


@pytest.mark.skipif(importlib.util.find_spec("torch") is not None, reason="torch is installed")
def test_missing_library_is_named():
    with pytest.raises(ModuleNotFoundError, match=r"torch\.sum needs torch.*pip install torch"):
        machine.run_elsewhere("torch.sum", np.ones(3, np.float32))
    if importlib.util.find_spec("jax") is None:
        with pytest.raises(ModuleNotFoundError, match="jnp.dot needs jax"):
            machine.run_elsewhere("jnp.dot", np.ones(3), np.ones(3))


def absorb16(n: int, seed: int) -> np.ndarray:
    """+-2^15 at 1 % of the positions (cancelling), small positives elsewhere, float16."""
    rng = np.random.default_rng([seed, n, 6])
    x = rng.uniform(0, 1, n) * 0.01
    k = max(1, n // 100)
    idx = rng.choice(n, 2 * k, replace=False)
    x[idx[:k]], x[idx[k:]] = 2.0**15, -(2.0**15)
    return x.astype(np.float16)


@pytest.mark.skipif(importlib.util.find_spec("torch") is None, reason="torch is not installed")
@pytest.mark.parametrize("threads", [1, 2])
def test_torch_sum_threads_live(threads):
    from fpexplore.libraries.frameworks import torch_sum

    x = absorb16(100_003, 1)
    got, info = machine.run_elsewhere(
        "torch.sum", x, threads=threads, env={"ATEN_CPU_CAPABILITY": "avx2"}
    )
    assert info["library"]["threads"] == threads
    want = torch_sum(x, threads=threads)
    assert got.dtype == np.float16
    assert (np.isnan(got) and np.isnan(want)) or bits(got) == bits(want)


def test_run_elsewhere_is_the_wings_and_found_through_machine():
    """run_elsewhere and its names live in the library wing (fpexplore/libraries/elsewhere.py);
    ``fpx.machine`` finds them by name, loading the wing then and not before."""
    code = """
import sys
import fpexplore as fpx
loaded = lambda: "fpexplore.libraries" in sys.modules
fpx.machine.machine_info(); fpx.machine.environment()
before = loaded()
from fpexplore.libraries import elsewhere
print(before, fpx.machine.run_elsewhere is elsewhere.run_elsewhere,
      fpx.machine.OPENBLAS_KERNELS is elsewhere.OPENBLAS_KERNELS, loaded())
try:
    fpx.machine.run_nowhere
except AttributeError as e:
    print(e)
"""
    got = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert got.returncode == 0, got.stderr
    assert got.stdout.splitlines() == [
        "False True True True",
        "module 'fpexplore.machine' has no attribute 'run_nowhere'",
    ]
