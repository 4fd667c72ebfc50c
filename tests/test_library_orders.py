"""The CPU libraries' own loops as orders of fpx.sum / fpx.dot, and the detective naming them.

The emulations themselves are checked against slow definitions and the recordings in
tests/test_simd_orders.py and tests/test_framework_orders.py. Here: the public orders call
them with the right presets, refuse what does not apply, and ``fpx.match_orders`` names the
library's order from observations it did not generate: results of the real libraries,
recorded on an AMD EPYC Zen 4 (tests/data/cpu_*.json.gz, torch_*.json.gz, jax_*.json.gz, with
the machine in each file), replayed without the libraries.
"""

from __future__ import annotations

import gzip
import importlib.util
import json
from pathlib import Path

import numpy as np
import pytest

import fpexplore as fpx
from fpexplore.libraries import frameworks
from fpexplore.libraries import orders as library_orders

DATA = Path(__file__).parent / "data"


def _module(name, file):
    spec = importlib.util.spec_from_file_location(name, DATA / file)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


cpu = _module("record_cpu", "record_cpu_libraries.py")
fw = _module("record_frameworks", "record_frameworks.py")


def _load(pattern):
    (path,) = sorted(DATA.glob(pattern))
    return json.loads(gzip.decompress(path.read_bytes()))


def _value(hexbits, fmt):
    u = {"float16": np.uint16, "bfloat16": np.uint16, "float32": np.uint32}.get(fmt, np.uint64)
    dt = fpx.format_info(fmt).dtype
    return np.array(int(hexbits, 16), dtype=u).view(dt)[()]


def _bits(v):
    return int(fpx.to_bits(v))


# ----------------------------------------------------------------------------- the orders


def test_library_orders_are_listed_with_their_kind():
    for op, names in {
        "sum": ["einsum", "polars", "llvm-fastmath", "numba-prange", "torch", "xla"],
        "dot": ["openblas", "einsum", "torch", "xla"],
    }.items():
        listed = fpx.orders(op)
        for name in names:
            assert listed[name].endswith("[library]"), (op, name)
    assert "openblas" not in fpx.orders("sum") and "polars" not in fpx.orders("dot")
    assert "torch" not in fpx.orders("matmul")


@pytest.mark.parametrize("kernel", ["haswell", "skylakex", "sandybridge", "nehalem", "prescott"])
def test_openblas_order_is_the_kernels_preset(kernel):
    rng = np.random.default_rng(5)
    a, b = rng.standard_normal((2, 20_011)).astype(np.float32)
    want = library_orders.simd_sum(a, b, preset=f"openblas-sdot({kernel})")
    assert _bits(fpx.dot(a, b, "openblas", kernel=kernel)) == _bits(want)
    assert _bits(fpx.dot(a, b, "openblas", kernel=kernel, threads=2)) == _bits(want)
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    if kernel == "prescott":
        with pytest.raises(NotImplementedError, match="Prescott ddot"):
            fpx.dot(a64, b64, "openblas", kernel=kernel)
        return
    for threads in (1, 2):
        got = fpx.dot(a64, b64, "openblas", kernel=kernel, threads=threads)
        pre = library_orders.simd_sum(a64, b64, preset=f"openblas-ddot({kernel})", threads=threads)
        assert _bits(got) == _bits(pre)


def test_the_other_library_orders_call_their_emulations():
    x = fpx.generate("normal", 3001, "float32", seed=2)
    y = fpx.generate("normal", 3001, "float32", seed=3)
    pairs = [
        (fpx.sum(x, "einsum"), library_orders.simd_sum(x, preset="numpy-einsum-sum")),
        (fpx.dot(x, y, "einsum"), library_orders.simd_sum(x, y, preset="numpy-einsum-dot")),
        (fpx.sum(x, "polars"), library_orders.simd_sum(x, preset="polars-sum")),
        (fpx.sum(x, "llvm-fastmath"), library_orders.simd_sum(x, preset="llvm-fastmath(avx2)")),
        (
            fpx.sum(x, "llvm-fastmath", target="avx512"),
            library_orders.simd_sum(x, preset="llvm-fastmath(avx512)"),
        ),
        (fpx.sum(x, "numba-prange"), library_orders.simd_sum(x, preset="numba-prange", threads=2)),
        (fpx.sum(x, "torch"), frameworks.torch_sum(x)),
        (fpx.sum(x, "xla"), frameworks.xla_sum(x)),
        (fpx.dot(x, y, "xla"), frameworks.xla_dot(x, y)),
    ]
    for got, want in pairs:
        assert _bits(got) == _bits(want)
    h = x.astype(np.float16)
    big = np.tile(h, 40)  # 120040 elements: two threads split it
    assert _bits(fpx.sum(big, "torch", threads=2)) == _bits(frameworks.torch_sum(big, threads=2))
    assert _bits(fpx.dot(h, h, "torch")) == _bits(frameworks.torch_dot(h, h))
    # the orders differ from one another on this input: they are not one order renamed
    sums = {float(fpx.sum(x, o)) for o in ("einsum", "polars", "llvm-fastmath", "torch", "xla")}
    assert len(sums) >= 3


def test_library_orders_refuse_what_does_not_apply():
    x = fpx.generate("normal", 5000, "float32")
    with pytest.raises(ValueError, match="accumulate does not apply"):
        fpx.sum(x, "torch", accumulate="float64")
    with pytest.raises(ValueError, match="fma=True is not a setting of order 'openblas'"):
        fpx.dot(x, x, "openblas", fma=True)
    # an op-wide accumulator goes to the orders that have one; a spec asking it of a
    # library loop is refused with the reason
    c = fpx.compare("sum", variants=["sequential", "torch"], n=1000, accumulate="float64")
    assert _bits(c.results[("torch", "emulated")]) == _bits(fpx.sum(c.inputs["x"], "torch"))
    with pytest.raises(ValueError, match="does not apply to order 'polars': it is a library's own"):
        fpx.parse_spec("polars@float64", "sum")
    with pytest.raises(ValueError, match=r"\+fma is not a setting of order 'openblas'"):
        fpx.parse_spec("openblas+fma", "dot")
    with pytest.raises(ValueError, match="'einsum' is defined for float32, float64 inputs, not"):
        fpx.sum(x.astype(np.float16), "einsum")
    with pytest.raises(ValueError, match="unknown kernel 'zen'; valid: haswell"):
        fpx.dot(x, x, "openblas", kernel="zen")
    with pytest.raises(NotImplementedError, match="YNNPACK"):
        fpx.sum(x, "xla")  # n >= 4096: not emulated, said so
    assert _bits(fpx.sum(x, "xla", ynn=False)) == _bits(frameworks.xla_sum(x, ynn=False))
    with pytest.raises(ValueError, match="unknown order 'openblas' for sum"):
        fpx.sum(x, "openblas")


def test_library_orders_as_variant_specs_in_compare():
    c = fpx.compare(
        "dot",
        variants=["openblas(kernel=skylakex)", "openblas(kernel=haswell)", "torch(threads=2)"],
        n=10_000,
        backends=("emulated",),
    )
    a, b = c.inputs["a"], c.inputs["b"]
    got = c.results[("openblas(kernel=skylakex)", "emulated")]
    assert _bits(got) == _bits(fpx.dot(a, b, "openblas", kernel="skylakex"))
    assert str(fpx.parse_spec("openblas(kernel=skylakex)", "dot")) == "openblas(kernel=skylakex)"


# ----------------------------------------------------------------------------- the detective


def _detect(op, observations):
    inputs = [i for i, _ in observations]
    observed = [o for _, o in observations]
    df = fpx.match_orders(inputs, observed, op, top=5)
    return df.iloc[0]


@pytest.mark.parametrize(
    "core,kernel", [("Haswell", "haswell"), ("SkylakeX", "skylakex"), ("Nehalem", "nehalem")]
)
def test_detective_names_the_openblas_kernel_from_recorded_np_dot(core, kernel):
    """np.dot results recorded under OPENBLAS_CORETYPE=core: the detective, given only the
    inputs and NumPy's answers, names that kernel (float32 sdot) and its thread split
    (float64 ddot with 2 threads splits at ceil(n/2) for n > 10000)."""
    doc = _load("cpu_openblas_*.json.gz")
    for fmt, threads, sizes in (
        ("float32", 1, (1000, 8193)),
        ("float64", 2, (100_003,)),
    ):
        (run,) = [
            r
            for r in doc["results"]
            if r["config"] == {"OPENBLAS_CORETYPE": core, "OPENBLAS_NUM_THREADS": threads}
        ]
        obs = [
            ((cpu.make(n, kind, f, off, 0), cpu.make(n, kind, f, off, 1)), _value(hx, f))
            for n, kind, f, off, hx in run["cases"]
            if f == fmt and n in sizes and kind in ("normal", "wide") and off == 0
        ]
        assert len(obs) == 2 * len(sizes)
        best = _detect("dot", obs)
        want = f"openblas(kernel={kernel})" if fmt == "float32" else None
        if fmt == "float64":
            want = f"openblas(kernel={kernel}, threads=2)"
        assert best["exact"] and best["variant"] == want, (fmt, best["variant"])


def test_detective_names_einsum_polars_llvm_and_prange_from_recordings():
    cases = [
        ("cpu_numpy-einsum_*.json.gz", 0, "dot", "einsum"),
        ("cpu_numpy-einsum_*.json.gz", 1, "sum", "einsum"),
        ("cpu_polars_*.json.gz", 0, "sum", "polars"),
        ("cpu_numba_*.json.gz", 0, "sum", "llvm-fastmath(target=avx512)"),  # znver4 target
        ("cpu_numba_*.json.gz", 1, "sum", "llvm-fastmath"),  # NUMBA_CPU_NAME=haswell: avx2
        ("cpu_numba_*.json.gz", 2, "sum", "numba-prange"),  # 2 threads: halves at ceil(n/2)
    ]
    for pattern, index, op, want in cases:
        run = _load(pattern)["results"][index]
        obs = []
        for n, kind, f, off, hx in run["cases"]:
            if f == "float32" and n in (1000, 8193, 100_003) and kind == "normal" and off == 0:
                x = cpu.make(n, kind, f, off, 0)
                ins = (x, cpu.make(n, kind, f, off, 1)) if op == "dot" else x
                obs.append((ins, _value(hx, f)))
        assert obs, pattern
        best = _detect(op, obs)
        assert best["exact"] and best["variant"] == want, (pattern, best["variant"])


def test_detective_names_torch_sum_with_its_threads_and_xla():
    doc = _load("torch_*.json.gz")
    (cap,) = [c for c in doc["captures"] if c["capability_env"] == ""]
    for threads in ("1", "2"):
        obs = []
        for op, fmt, kind, n, _sha, want in cap["runs"][threads]:
            if op == "sum" and fmt == "float32" and kind == "normal" and 40_000 <= n <= 200_000:
                (x,) = (fw.make_input(kind, n, 1, fmt),)
                obs.append((x, _value(want[2:], fmt)))
        assert len(obs) >= 2
        best = _detect("sum", obs)
        expect = "torch" if threads == "1" else "torch(threads=2)"
        assert best["exact"] and best["variant"] == expect, (threads, best["variant"])
    jx = _load("jax_*.json.gz")
    (default,) = [c for c in jx["captures"] if c["xla_flags"] == ""]
    obs = [
        (fw.make_input(kind, n, 4, fmt), _value(want[2:], fmt))  # seed 4: the recorder's x
        for op, fmt, kind, n, _sha, want in default["cases"]
        if op == "sum" and fmt == "float32" and kind == "normal" and 100 <= n < 4096
    ]
    assert len(obs) >= 2
    best = _detect("sum", obs)
    assert best["exact"] and best["variant"] == "xla", best["variant"]


# the kernel each architecture name threadpoolctl may report runs (OpenBLAS 0.3.31's x86-64
# DYNAMIC_ARCH table, docs/simd_orders.md)
_ARCH_KERNEL = {
    "haswell": "haswell",
    "zen": "haswell",
    "skylakex": "skylakex",
    "cooperlake": "skylakex",
    "sapphirerapids": "skylakex",
    "sandybridge": "sandybridge",
    "bulldozer": "sandybridge",
    "piledriver": "sandybridge",
    "steamroller": "sandybridge",
    "excavator": "sandybridge",
    "nehalem": "nehalem",
    "atom": "nehalem",
    "barcelona": "nehalem",
    "bobcat": "nehalem",
    "katmai": "prescott",
    "prescott": "prescott",
    "core2": "prescott",
}


@pytest.mark.blas
def test_the_numpy_button_names_the_openblas_kernel_of_this_machine():
    """explain_numpy("dot") (the app's button) names the kernel np.dot runs here: bit-exact
    on this machine, whichever kernel that is (tests/test_any_machine.py reruns this under
    several forced kernels)."""
    blas = fpx.machine.machine_info()["blas"]
    kernel = _ARCH_KERNEL.get(str(blas["architecture"]).lower())
    if "openblas" not in str(blas["library"]).lower() or kernel is None:
        pytest.skip(f"NumPy's BLAS here is {blas['library']} {blas['architecture']}")
    rng = np.random.default_rng(9)
    a, b = rng.standard_normal((2, 30_011)).astype(np.float32)
    df = fpx.explain_numpy("dot", {"a": a, "b": b})
    assert df.iloc[0]["exact"] and df.iloc[0]["variant"] == f"openblas(kernel={kernel})"


def test_detective_names_torch_dot_and_jnp_dot_from_recordings():
    """torch.dot of float16 (tree-revealing probes) and of aligned float32 (MKL's sdot as
    probed, 2 threads split from n = 8192), and jnp.dot (n < 4096): named from the recorded
    results of the real libraries."""
    doc = _load("torch_*.json.gz")
    (cap,) = [c for c in doc["captures"] if c["capability_env"] == ""]
    for threads, fmt, kinds, expect in (
        ("1", "float16", [f"fprev{k}" for k in range(10)], "torch"),
        ("1", "bfloat16", [f"fprev{k}" for k in range(10)], "torch"),
        ("2", "float32", ["offsets0,0"], "torch(threads=2)"),
    ):
        obs = []
        for op, f, kind, n, _sha, want in cap["runs"][threads]:
            if op != "dot" or f != fmt or kind not in kinds or n > 50_000:
                continue
            if kind.startswith("fprev"):
                pair = fw.fprev_pair(n, int(kind[5:]), f)
            else:
                if n < 8192:
                    continue  # the thread split shows from n = 8192 on
                pair = fw.dot_pair(n, 3, f)
            obs.append((tuple(pair), _value(want[2:], f)))
        assert len(obs) >= 2, (fmt, threads)
        best = _detect("dot", obs)
        assert best["exact"] and best["variant"] == expect, (fmt, threads, best["variant"])
    jx = _load("jax_*.json.gz")
    (default,) = [c for c in jx["captures"] if c["xla_flags"] == ""]
    obs = [
        (
            (fw.make_input(kind, n, 4, fmt), fw.make_input("normal", n, 5, fmt)),
            _value(want[2:], fmt),
        )
        for op, fmt, kind, n, _sha, want in default["cases"]
        if op == "dot" and kind == "normal" and 100 <= n < 4096
    ]
    assert len(obs) >= 2
    best = _detect("dot", obs)
    assert best["exact"] and best["variant"] == "xla", best["variant"]


@pytest.mark.blas
def test_the_apps_numpy_button_names_the_kernel_for_dot():
    """The explorer's "Which order did NumPy use?" on a float32 dot: OpenBLAS's kernel of
    this machine, read from the displayed answer."""
    pytest.importorskip("ipywidgets")
    blas = fpx.machine.machine_info()["blas"]
    kernel = _ARCH_KERNEL.get(str(blas["architecture"]).lower())
    if "openblas" not in str(blas["library"]).lower() or kernel is None:
        pytest.skip(f"NumPy's BLAS here is {blas['library']} {blas['architecture']}")
    app = fpx.explorer(op="dot", n=20_000)
    app.detect.click()
    answer = app.detect_out.value
    first_row = answer.split("<tbody>")[1].split("</tr>")[0]
    assert f"openblas(kernel={kernel})" in first_row and "True" in first_row, answer[:500]


def test_the_app_knows_when_a_library_loop_compiles_first(tmp_path):
    """is_cold (the explorer's "compiling kernels…" note) sees the library loops' kernels: in
    a fresh process with an empty numba cache a polars sum is cold, then warm, and einsum
    (the same compiled family) is warm with it. (compare also computes the exact reference,
    whose exact_sum kernel the process compiles too.)"""
    import os
    import subprocess
    import sys

    code = (
        "import fpexplore as fpx\n"
        "from fpexplore.warmup import is_cold\n"
        "x = fpx.generate('normal', 1000, 'float64')\n"
        "before = is_cold('sum', 'float64', ['polars'])\n"
        "fpx.sum(x, 'polars'), fpx.exact_sum(x)\n"
        "after = [is_cold('sum', 'float64', [o]) for o in ('polars', 'einsum')]\n"
        "print(before, *after)"
    )
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path)}
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300
    )
    assert out.returncode == 0, out.stderr[-800:]
    assert out.stdout.split() == ["True", "False", "False"]
