"""No test may depend on the host's BLAS kernel, its thread count or NumPy's SIMD level.

NumPy's ``np.dot``, ``np.matmul`` and ``@`` call the BLAS NumPy was built with. OpenBLAS (in
NumPy's wheels) picks a kernel for the CPU when it loads, and every kernel sums in its own
order: on the development machine (AMD Zen 4, AVX-512) the float32 product of two 400x400
matrices comes out five different ways under OPENBLAS_CORETYPE=Prescott, Nehalem,
Sandybridge, Haswell and the default (SkylakeX), and the thread count changes it for some
kernels. NumPy's own loops for np.exp, np.log, np.exp2, ... are dispatched by CPU feature
level (AVX-512, AVX2, baseline) and differ in the last bits too. A test that asserted a
number measured with one of them failed on a 2-core AMD EPYC without AVX-512 (issue 12).

So every test that asserts on such results is marked ``blas`` and asserts only what holds
for every kernel (tests/worst_case.py: Higham's bound), the emulated orders' exact bits, or
a property. This file checks that claim: it reruns ``pytest -m blas`` in subprocesses that
stand in for other machines (OPENBLAS_CORETYPE, OPENBLAS_NUM_THREADS,
NPY_DISABLE_CPU_FEATURES), each of which also checks that it really runs the kernel, thread
count and SIMD level it asked for, and it checks the premise: the kernels give different bits.
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import fpexplore as fpx

ROOT = Path(__file__).resolve().parents[1]
RUN = "FPX_ANY_MACHINE_RUN"  # set in the subprocesses: what they were asked to be, as JSON

# Machines to stand in for, each a kernel with the SIMD level of the CPUs it is chosen for
# (and the numpy CPU features that kernel needs on this host): OpenBLAS's Prescott (SSE3),
# Nehalem (SSE4.2) and Sandybridge (AVX) kernels run on CPUs without AVX2, where NumPy has
# only its baseline loops; Haswell (AVX2 + FMA) is the reporter's machine, an AMD EPYC
# without AVX-512. Thread counts 1 and 2 alternate; the main run has the host's default.
RUNS = [
    ("Prescott kernel, baseline SIMD, 1 thread", "Prescott", "baseline", 1, ()),
    ("Nehalem kernel, baseline SIMD, 2 threads", "Nehalem", "baseline", 2, ()),
    ("Sandybridge kernel, baseline SIMD, 1 thread", "Sandybridge", "baseline", 1, ("AVX",)),
    ("Haswell kernel, no AVX-512, 2 threads", "Haswell", "no-avx512", 2, ("AVX2", "FMA3")),
    # The host's own kernel: where the environment presets OPENBLAS_CORETYPE (some hosts must,
    # because an old OpenBLAS crashes on their CPU), that preset is kept; None = leave it.
    ("this host's kernel and SIMD, 1 thread", None, "host", 1, ()),
]


def _openblas() -> dict | None:
    """threadpoolctl's record of the OpenBLAS NumPy uses (None: another BLAS, or none)."""
    from threadpoolctl import threadpool_info

    found = [d for d in threadpool_info() if d.get("internal_api") == "openblas"]
    return found[0] if found else None


def _cpu():
    from numpy._core._multiarray_umath import __cpu_dispatch__, __cpu_features__

    return list(__cpu_dispatch__), dict(__cpu_features__)


def _simd_off(level: str) -> list[str]:
    """NumPy's dispatch targets to switch off (NPY_DISABLE_CPU_FEATURES) for a SIMD level:
    "baseline" all of them, "no-avx512" the AVX-512 ones (NumPy 2.4: X86_V4, AVX512_*)."""
    dispatch, features = _cpu()
    on = [f for f in dispatch if features.get(f)]
    if level == "baseline":
        return on
    if level == "no-avx512":
        return [f for f in on if "AVX512" in f or f == "X86_V4"]
    return []


def _premise_digest() -> str:
    """The float32 product of notebook 16 (400x400, uniform), as the BLAS computes it here."""
    rng = np.random.default_rng(0)
    a = rng.uniform(0, 1, (400, 400)).astype(np.float32)
    b = rng.uniform(0, 1, (400, 400)).astype(np.float32)
    return hashlib.sha256((a @ b).tobytes()).hexdigest()[:16]


@pytest.mark.blas
def test_this_run_has_the_blas_kernel_threads_and_simd_it_asked_for():
    """In every run: the BLAS and SIMD configuration is what the environment asks for. In a
    run of test_blas_marked_tests_pass_on_other_machines, also that the kernel really is
    another one than the host's, and it reports what it ran for the premise."""
    info = _openblas()
    if info is None:
        pytest.skip("NumPy's BLAS here is not OpenBLAS (threadpoolctl finds no openblas)")
    assert info["architecture"] and info["num_threads"] >= 1
    if "OPENBLAS_NUM_THREADS" in os.environ:
        assert info["num_threads"] == int(os.environ["OPENBLAS_NUM_THREADS"])
    _, features = _cpu()
    off = os.environ.get("NPY_DISABLE_CPU_FEATURES", "").replace(",", " ").split()
    assert not [f for f in off if features.get(f)], off  # really switched off
    asked = json.loads(os.environ.get(RUN, "null"))
    if asked is None:
        return
    assert info["num_threads"] == asked["threads"]
    assert sorted(off) == sorted(asked["simd_off"])
    if asked["coretype"] is not None:
        # forced (never the host's own kernel): OpenBLAS silently keeps its default for a name
        # it does not know. (It may report another name than the one forced: Prescott is
        # "Katmai" in NumPy 2.4's OpenBLAS, the same kernel under its oldest name.)
        assert info["architecture"] != asked["host_architecture"], info
    report = {"architecture": info["architecture"], "threads": info["num_threads"]}
    report |= {"simd_off": off, "digest": _premise_digest()}
    Path(asked["report"]).write_text(json.dumps(report))


def _blas_test_files() -> list[str]:
    here = Path(__file__).parent
    return sorted(str(p) for p in here.glob("test_*.py") if "mark.blas" in p.read_text())


def test_blas_marked_tests_pass_on_other_machines(tmp_path):
    """``pytest -m blas`` passes under other OpenBLAS kernels (at least Prescott and Nehalem,
    which every x86-64 CPU runs, and Sandybridge and Haswell where the CPU has AVX, AVX2),
    thread counts 1 and 2 and NumPy's baseline and non-AVX-512 loops; and those kernels give
    different float32 products (else the runs would prove nothing)."""
    if platform.machine().lower() not in ("x86_64", "amd64"):
        pytest.skip("OPENBLAS_CORETYPE names x86-64 kernels")
    host = _openblas()
    if host is None:
        pytest.skip("NumPy's BLAS here is not OpenBLAS: its kernel cannot be switched")
    _, features = _cpu()
    files = _blas_test_files()
    assert len(files) >= 5, files
    cmd = [sys.executable, "-m", "pytest", "-m", "blas", "-q", "-p", "no:cacheprovider", *files]
    runs, skipped = [], []
    for name, coretype, simd, threads, needs in RUNS:
        if not all(features.get(f) for f in needs):
            skipped.append(name)  # OpenBLAS would run that kernel into SIGILL here
            continue
        own = {host["architecture"].lower(), os.environ.get("OPENBLAS_CORETYPE", "").lower()}
        if coretype is not None and coretype.lower() in own:
            coretype = None  # the host's own kernel: only the SIMD level and threads change
        env = {k: v for k, v in os.environ.items() if k != "FPX_MIN_ORACLE_CASES"}
        env.pop("NPY_DISABLE_CPU_FEATURES", None)
        if coretype is not None:
            env["OPENBLAS_CORETYPE"] = coretype
        env["OPENBLAS_NUM_THREADS"] = str(threads)
        off = _simd_off(simd)
        if off:
            env["NPY_DISABLE_CPU_FEATURES"] = " ".join(off)
        report = tmp_path / f"run{len(runs)}.json"
        asked = {
            "report": str(report),
            "coretype": coretype,
            "host_coretype": os.environ.get("OPENBLAS_CORETYPE"),
            "host_architecture": host["architecture"],
            "threads": threads,
            "simd_off": off,
        }
        env[RUN] = json.dumps(asked)
        runs.append((name, env, report, coretype))
    # the first run alone (on a fresh machine it fills numba's cache, 30 s of compiling), then
    # two at a time (the CI machine has two cores; each run is mostly one Python thread)
    reports, failures = {}, []
    for batch in [runs[:1]] + [runs[i : i + 2] for i in range(1, len(runs), 2)]:
        started = []
        for name, env, report, _ in batch:
            log = report.with_suffix(".log")
            with open(log, "w") as f:
                proc = subprocess.Popen(cmd, env=env, cwd=ROOT, stdout=f, stderr=subprocess.STDOUT)
            started.append((name, report, log, proc))
        for name, report, log, proc in started:
            try:
                proc.wait(timeout=600)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
            tail = log.read_text()[-4000:]
            summary = tail.strip().splitlines()[-1] if tail.strip() else ""
            if proc.returncode != 0 or re.search(r"\b\d+ (failed|errors?)\b", summary):
                failures.append(f"{name} (exit {proc.returncode}):\n{tail}")
            elif not report.exists():
                failures.append(f"{name}: the configuration check did not run\n{tail}")
            else:
                reports[name] = json.loads(report.read_text())
    assert not failures, "\n\n".join(failures)
    print(json.dumps({"host": host["architecture"], "skipped": skipped, **reports}, indent=1))
    assert len(skipped) <= 2 and RUNS[0][0] in reports and RUNS[1][0] in reports, skipped
    forced = [reports[n]["architecture"] for n, *_, c in runs if c is not None and n in reports]
    assert len(set(forced)) == len(forced) >= 2, forced  # each coretype its own kernel
    assert host["architecture"] not in forced
    assert {r["threads"] for r in reports.values()} == {1, 2}
    # the premise: the same float32 product, different bits from different kernels
    digests = {r["digest"] for r in reports.values()} | {_premise_digest()}
    assert len(digests) >= 3, reports
    if _simd_off("no-avx512"):  # this host's AVX-512 loops were switched off in one run
        assert any("AVX512" in " ".join(r["simd_off"]) for r in reports.values())


def test_blas_marker_is_registered(pytestconfig):
    assert any(m.startswith("blas:") for m in pytestconfig.getini("markers"))


def _rerun(op: str, row, inputs):
    """The detective's candidate ``row``, evaluated again with the public functions."""
    fmt = fpx.format_of(inputs[0])
    if row["input_rounding"] != "none":
        r = row["input_rounding"]
        inputs = [np.asarray(fpx.as_format(fpx.as_format(v, r), fmt)) for v in inputs]
    acc = None if row["accumulate"] == fmt else row["accumulate"]
    kw = dict(row["params"], fma=row["fma"], accumulate=acc)
    return (fpx.dot if op == "dot" else fpx.matmul)(*inputs, row["order"], **kw)


@pytest.mark.blas
@pytest.mark.parametrize("op", ["dot", "matmul"])
def test_detective_on_numpys_blas_says_only_what_is_true(op):
    """Which orders explain np.dot or np.matmul depends on the kernel. For these inputs,
    measured with OpenBLAS: np.dot is reproduced by 7 candidates with the AVX-512, Haswell or
    Sandybridge kernel, by 86 with the Nehalem or Prescott one; np.matmul by 6, led by
    "sequential+fma" with the AVX-512 kernel and by "sequential" with the Sandybridge,
    Nehalem or Prescott one, and by none with the Haswell one. So on every kernel only this is
    asserted: each candidate the detective reports as reproducing NumPy does, evaluated
    again; the nearest it reports as not reproducing it do not; the note counts them."""
    if op == "dot":
        inputs = [fpx.generate("uniform", 1000, "float32", seed=s) for s in (0, 1)]
        observed = np.dot(*inputs)
        df = fpx.explain_numpy("dot", {"a": inputs[0], "b": inputs[1]}, probes=0, top=None)
    else:
        inputs = [fpx.generate("uniform", 48 * 48, "float32", seed=s) for s in (0, 1)]
        inputs = [v.reshape(48, 48) for v in inputs]
        observed = inputs[0] @ inputs[1]
        df = fpx.explain_numpy("matmul", {"A": inputs[0], "B": inputs[1]}, top=None)
    assert df.attrs["function"] == f"np.{op}"
    exact = df[df["exact"]]
    assert df.attrs["exact_candidates"] == len(exact)
    assert (df.attrs["note"] == "no candidate reproduces every observation") == exact.empty
    for _, row in exact.iterrows():
        assert np.array_equal(_rerun(op, row, inputs), observed), row["variant"]
    for _, row in df[~df["exact"]].head(5).iterrows():  # the nearest misses
        assert not np.array_equal(_rerun(op, row, inputs), observed), row["variant"]
