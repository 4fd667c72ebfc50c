"""adam_step's variant "torch" against recordings of torch.optim.Adam (torch 2.14.1, CPU,
float32, foreach False and True; tests/data/adam_torch_*.npz, written by
tests/data/record_frameworks.py): 10**4 parameters, 10 steps.

The recording holds SHA-256 digests of torch's param, exp_avg and exp_avg_sq after each step,
their first 8 values, and where ``torch.sqrt(exp_avg_sq)`` differed from the correctly
rounded sqrt (index, step and signed ulp step): PyTorch's float32 CPU sqrt is not correctly
rounded, so the recorded differences rebuild torch's sqrt here without torch.
"""

from __future__ import annotations

import builtins
import hashlib
import importlib.util
import json
from pathlib import Path

import numpy as np
import pytest

from fpexplore.ops import adam

DATA = Path(__file__).parent / "data"
_spec = importlib.util.spec_from_file_location("record_frameworks", DATA / "record_frameworks.py")
rec = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(rec)


def digest(a):
    return hashlib.sha256(np.ascontiguousarray(a).tobytes()).hexdigest()[:16]


@pytest.fixture(scope="module")
def recording():
    (path,) = sorted(DATA.glob("adam_torch_*.npz"))[-1:]
    with np.load(path) as z:
        return {k: z[k] for k in z.files}


def recorded_sqrt(recording):
    """A sqrt callable that returns what torch.sqrt returned at each step (IEEE sqrt moved by
    the recorded ulp steps); it checks that it is called once per step, in order."""
    calls = []

    def sqrt(v):
        s = len(calls)
        calls.append(s)
        out = np.sqrt(v)
        pick = recording["sqrt_step"] == s
        idx = recording["sqrt_index"][pick].astype(np.int64)
        step = recording["sqrt_delta_ulps"][pick].astype(np.int32)
        bits = out.view(np.int32).copy()
        bits[idx] += step
        return bits.view(np.float32)

    return sqrt


def run(sqrt="ieee"):
    p0, grads = rec.adam_problem()
    return list(adam.adam_run(p0, grads, variant="torch", sqrt=sqrt, **rec.ADAM_HYPER))


def test_recording_metadata(recording):
    meta = json.loads(str(recording["meta"]))
    assert meta["torch"].startswith("2.14.1") and meta["capability"] in ("AVX512", "AVX2")
    # foreach=False and foreach=True were bit-identical at every step
    assert np.array_equal(recording["digests"], recording["foreach_digests"])
    assert recording["digests"].shape == (rec.ADAM_STEPS, 3)


def test_moments_match_torch_exactly_with_ieee_sqrt(recording):
    """m (lerp-fma) and v (the fused addcmul) are bit-identical at all 10 steps."""
    for (step, _p, m, v), want in zip(run(), recording["digests"]):
        assert digest(m) == want[1], ("m", step)
        assert digest(v) == want[2], ("v", step)
        assert np.array_equal(m[:8], recording["first8"][step - 1][1])


def test_param_matches_torch_with_torchs_sqrt(recording):
    """With torch's own sqrt (rebuilt from the recording) param is bit-identical too."""
    steps = run(sqrt=recorded_sqrt(recording))
    for (step, p, _m, _v), want in zip(steps, recording["digests"]):
        assert digest(p) == want[0], ("param", step)
        assert np.array_equal(p[:8], recording["first8"][step - 1][0])


def test_ieee_sqrt_vs_torch_sqrt_counts(recording):
    """How many params differ from torch with the correctly rounded sqrt, per step, and how
    many of torch's sqrt results were not correctly rounded (of 10**4 per step)."""
    ieee = run()
    torch_like = run(sqrt=recorded_sqrt(recording))
    differ = [int(np.count_nonzero(a[1] != b[1])) for a, b in zip(ieee, torch_like)]
    assert differ == [11, 17, 23, 34, 36, 39, 43, 42, 45, 47]
    per_step = np.bincount(recording["sqrt_step"], minlength=rec.ADAM_STEPS)
    assert per_step.sum() == len(recording["sqrt_index"])
    assert 0.1 < per_step.mean() / rec.ADAM_N < 0.3  # about 1 in 5 elements
    assert set(np.unique(recording["sqrt_delta_ulps"]).tolist()) <= {-1, 1}


def test_old_unfused_v_does_not_match(recording):
    """The unfused v (the other variants' formula) differs from torch's from step 2 on: the
    recording can tell the two apart."""
    p0, grads = rec.adam_problem()
    steps = list(
        adam.adam_run(p0, grads, variant="div-then-mul", moments="lerp-fma", **rec.ADAM_HYPER)
    )
    mismatched = [digest(v) != want[2] for (_, _, _, v), want in zip(steps, recording["digests"])]
    assert not mismatched[0] and any(mismatched[1:])


def test_sqrt_option_errors(monkeypatch):
    a = np.ones(4, np.float32)
    with pytest.raises(ValueError, match="unknown sqrt"):
        adam.adam_step(a, a, a, a, 1, variant="torch", sqrt="mkl", **rec.ADAM_HYPER)
    with pytest.raises(ValueError, match="only sqrt='ieee'"):
        adam.adam_step(a, a, a, a, 1, variant="exact", sqrt=np.sqrt, **rec.ADAM_HYPER)
    with pytest.raises(TypeError, match="sqrt callable returned"):
        adam.adam_step(a, a, a, a, 1, variant="torch", sqrt=lambda v: v[:2], **rec.ADAM_HYPER)
    real_import = builtins.__import__

    def no_torch(name, *args, **kwargs):
        if name == "torch" or name.startswith("torch."):
            raise ModuleNotFoundError("No module named 'torch'", name="torch")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_torch)
    monkeypatch.setattr("importlib.import_module", lambda name, *a: no_torch(name))
    with pytest.raises(ModuleNotFoundError, match="pip install torch"):
        adam.adam_step(a, a, a, a, 1, variant="torch", sqrt="torch", **rec.ADAM_HYPER)


def test_callable_sqrt_equal_to_ieee_changes_nothing():
    p0, grads = rec.adam_problem()
    a = adam.adam_step(p0, grads[0], 0 * p0, 0 * p0, 1, variant="torch", **rec.ADAM_HYPER)
    b = adam.adam_step(
        p0, grads[0], 0 * p0, 0 * p0, 1, variant="torch", sqrt=np.sqrt, **rec.ADAM_HYPER
    )
    assert all(np.array_equal(x, y) for x, y in zip(a, b))


@pytest.mark.skipif(importlib.util.find_spec("torch") is None, reason="torch is not installed")
def test_live_torch_sqrt(recording):
    steps = run(sqrt="torch")
    for (step, p, _m, _v), want in zip(steps, recording["digests"]):
        assert digest(p) == want[0], step
