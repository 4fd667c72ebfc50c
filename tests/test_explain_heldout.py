"""fpx.explain on held-out cases (tests/explain_cases.py): discrepancies built by one known
mechanism each with plain NumPy, ml_dtypes and fractions, never with fpexplore.

The acceptance criteria (docs/explain.md describes explain's answers):

- results only: never confidently wrong (no case whose first cause row is decided and names
  another factor; identical results: no cause; a bug: no decided row and "bug" in the
  verdict); the mechanism is the decided top cause, or among at most three undecided rows, in
  at least 96% of the cases; undecided (ambiguous, or the top row not decided) in at most 40%
  of the cases whose mechanism is a factor (``UNDECIDED``);
- with the function that produced a result (fn=): never wrong; decided and right wherever the
  other result fits one cause (at least 90% of the cases); where it fits two or more (a
  float32 sum of ten numbers that both the reversed order and a float64 accumulator give:
  the function is probed, the other result cannot be), undecided with the mechanism listed
  and at least two causes resting on exact matches in ``e.hypotheses``, or with a verdict
  saying that nothing tried reproduces the other result;
- with the function of every result that has one (fn={label: function}): decided and right
  in every case, nondeterminism included (a bug's wrong result has no function: the correct
  one is probed);
- identical results: no cause;
- the result(s) named closer are the ones nearest the exact answer, in every case.

FPX_EXPLAIN_CASES=all runs the several hundred cases instead of the CI subset;
FPX_EXPLAIN_SEED draws other data; FPX_EXPLAIN_TIMEOUT (seconds, default 60) ends a call
that takes longer (the case then fails with a timeout).

``python tests/test_explain_heldout.py [ci|all] [-v]`` prints a table per mechanism and op
(right or wrong, decided or not, the median time per call), the criteria, and with -v every
failing case.
"""

from __future__ import annotations

import math
import os
import signal
import statistics
import sys
import threading
import time
from dataclasses import dataclass, field
from fractions import Fraction

import ml_dtypes
import numpy as np
import pytest

import explain_cases as ec

KIND = os.environ.get("FPX_EXPLAIN_CASES", "ci")
SEED = int(os.environ.get("FPX_EXPLAIN_SEED", "0"))
TIMEOUT = float(os.environ.get("FPX_EXPLAIN_TIMEOUT", "60"))  # seconds per explain call


# ----------------------------------------------------------------------------- running explain


@dataclass
class Outcome:
    """What explain said about one case (one call)."""

    case: ec.Case
    with_fn: bool | str  # False, True (fn: one result's function) or "every" (case.fns)
    factors: list = field(default_factory=list)  # the cause rows' factors, best first
    decided: list = field(default_factory=list)  # per row (all True without the column)
    ambiguous: bool = False
    verdict: str = ""
    closer: set = field(default_factory=set)
    error: str = ""
    seconds: float = 0.0
    fn_calls: int = 0
    competing: int = 0  # causes of e.hypotheses resting on exact matches (posterior >= 5%)

    @property
    def top(self):
        return self.factors[0] if self.factors else None

    @property
    def top_decided(self) -> bool:
        return bool(self.decided) and bool(self.decided[0])

    @property
    def undecided_rows(self) -> list:
        return [f for f, d in zip(self.factors, self.decided) if not d]

    @property
    def undecided(self) -> bool:
        return self.ambiguous or not self.top_decided

    @property
    def confidently_wrong(self) -> bool:
        mech = self.case.mechanism
        if mech == "identical":
            return bool(self.factors)
        if mech == "bug":
            return any(self.decided)
        return self.top_decided and self.top != mech

    @property
    def right(self) -> bool:
        """Results only: decided and right, or the mechanism among <= 3 undecided rows."""
        mech = self.case.mechanism
        if self.error:
            return False
        if mech == "identical":
            return not self.factors and "identical" in self.verdict.lower()
        if mech == "bug":
            return not any(self.decided) and "bug" in self.verdict.lower()
        if self.top_decided:
            return self.top == mech
        return mech in self.undecided_rows and len(self.undecided_rows) <= 3

    @property
    def right_decided(self) -> bool:
        """With fn: the top row decided and the mechanism (identical, bug as above)."""
        if self.case.mechanism in ("identical", "bug"):
            return self.right
        return not self.error and self.top_decided and self.top == self.case.mechanism

    @property
    def open_for_the_other_result(self) -> bool:
        """With one result's function: undecided because of the result not probed, which
        two or more causes fit on exact matches, or which nothing tried reproduces (the
        verdict says so); the mechanism listed."""
        return self.right and (
            self.competing >= 2 or "no configuration tried reproduces" in self.verdict
        )

    @property
    def category(self) -> str:
        decided = self.case.mechanism in ("identical", "bug") or not self.undecided
        if self.case.mechanism == "bug" and not self.right:
            decided = any(self.decided)
        return ("right" if self.right else "wrong") + ("-decided" if decided else "-undecided")

    def line(self) -> str:
        c = self.case
        what = f"error={self.error}" if self.error else f"verdict={self.verdict[:300]!r}"
        return (
            f"{c.name} [{c.mechanism}{_MODE[self.with_fn]}]: top={self.top} "
            f"decided={self.top_decided} ambiguous={self.ambiguous} "
            f"undecided={self.undecided_rows} closer={sorted(self.closer)} "
            f"want_closer={sorted(c.closer)} {self.seconds:.2f} s"
            f"{f' fn_calls={self.fn_calls}' if self.with_fn else ''} {what}"
        )


_MODE = {False: "", True: ", fn", "every": ", every fn"}


class _Timeout(Exception):
    pass


def _alarm(signum, frame):
    raise _Timeout


def _counted(fn, out: Outcome):
    """fn, counting its calls into out.fn_calls."""

    def wrapper(*args, **kwargs):
        out.fn_calls += 1
        return fn(*args, **kwargs)

    wrapper.__name__ = getattr(fn, "__name__", "fn")
    return wrapper


def run_explain(case: ec.Case, with_fn: bool | str = False) -> Outcome:
    """explain on one case (``with_fn``: False, True: fn= the function of one result,
    "every": fn= a dict of every result's function); an exception, or a call longer than
    TIMEOUT seconds (where SIGALRM works: the main thread on Unix), is recorded as the case's
    error."""
    import fpexplore as fpx

    out = Outcome(case, with_fn)
    fn = None
    if with_fn == "every":
        fn = {label: _counted(f, out) for label, f in case.fns.items()}
    elif with_fn:
        fn = _counted(case.fn, out)
    alarm = hasattr(signal, "SIGALRM") and threading.current_thread() is threading.main_thread()
    if alarm:
        previous = signal.signal(signal.SIGALRM, _alarm)
        signal.setitimer(signal.ITIMER_REAL, TIMEOUT)
    t0 = time.perf_counter()
    try:
        e = fpx.explain(case.op, case.inputs, case.results, fn=fn)
    except _Timeout:
        out.error = f"timeout: more than {TIMEOUT:g} s"
    except Exception as exc:  # reported per case, never stops the run
        out.error = f"{type(exc).__name__}: {exc}"[:300]
    finally:
        out.seconds = time.perf_counter() - t0
        if alarm:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, previous)
    if out.error:
        return out
    causes = e.causes
    out.factors = [str(f) for f in causes["factor"]] if len(causes) else []
    if "decided" in getattr(causes, "columns", ()):
        out.decided = [bool(d) for d in causes["decided"]]
    else:  # today's explain: every row counts as decided
        out.decided = [True] * len(out.factors)
    out.ambiguous = bool(getattr(e, "ambiguous", False))
    hyps = getattr(e, "hypotheses", None)
    if hyps is not None and len(hyps):
        strong = hyps[hyps["exact_match"].astype(bool) & (hyps["posterior"] >= 0.05)]
        out.competing = len(strong)
    out.verdict = str(e.verdict)
    out.closer = {str(k) for k in e.table.index[e.table["closer"].astype(bool)]}
    return out


_CACHE: dict = {}


def cases(kind: str = KIND, seed: int = SEED) -> list[ec.Case]:
    if ("cases", kind, seed) not in _CACHE:
        _CACHE["cases", kind, seed] = ec.build_cases(kind, seed)
    return _CACHE["cases", kind, seed]


def outcomes(
    with_fn: bool | str, kind: str = KIND, seed: int = SEED, progress=False
) -> list[Outcome]:
    key = ("runs", with_fn, kind, seed)
    if key not in _CACHE:
        todo = [c for c in cases(kind, seed) if c.fn is not None or not with_fn]
        _CACHE[key] = []
        for i, c in enumerate(todo):
            _CACHE[key].append(run_explain(c, with_fn))
            if progress:
                o = _CACHE[key][-1]
                print(
                    f"[{i + 1}/{len(todo)}] {o.seconds:6.2f} s {o.category:16} {c.name}",
                    file=sys.stderr,
                )
    return _CACHE[key]


@pytest.fixture(scope="module")
def plain():
    return outcomes(False)


@pytest.fixture(scope="module")
def given_fn():
    return outcomes(True)


@pytest.fixture(scope="module")
def given_every_fn():
    return outcomes("every")


def _report(title: str, bad: list[Outcome], total: int) -> str:
    return f"{title}: {len(bad)} of {total}\n" + "\n".join(o.line() for o in bad)


# ----------------------------------------------------------------------------- the criteria


def test_never_confidently_wrong(plain):
    bad = [o for o in plain if o.confidently_wrong]
    assert not bad, _report("confidently wrong (results only)", bad, len(plain))


def test_mechanism_found_in_96_percent(plain):
    bad = [o for o in plain if not o.right]
    rate = 1 - len(bad) / len(plain)
    assert rate >= 0.96, _report(f"mechanism not found ({rate:.1%} found)", bad, len(plain))


#: The share of factor cases left undecided (issue 33: about 40%). The CI subset measures
#: 37.3% (44 of 118), the full set 43-46% (seeds 0 and 1; docs/explain.md).
UNDECIDED = 0.40


def test_undecided_at_most_40_percent(plain):
    factor_cases = [o for o in plain if o.case.mechanism in ec.FACTORS]
    und = [o for o in factor_cases if o.undecided]
    share = len(und) / len(factor_cases)
    assert share <= UNDECIDED, _report(f"undecided ({share:.1%})", und, len(factor_cases))


def test_with_fn_never_wrong_and_decided_where_the_other_result_fits_one_cause(given_fn):
    wrong = [o for o in given_fn if o.confidently_wrong or o.error]
    assert not wrong, _report("with fn: wrong", wrong, len(given_fn))
    open_ = [o for o in given_fn if not o.right_decided]
    unexplained = [o for o in open_ if not o.open_for_the_other_result]
    assert not unexplained, _report(
        "with fn: undecided, one cause fits", unexplained, len(given_fn)
    )
    share = 1 - len(open_) / len(given_fn)
    assert share >= 0.90, _report(f"with fn: decided and right {share:.1%}", open_, len(given_fn))


def test_with_every_results_function_decided_and_right(given_every_fn):
    bad = [o for o in given_every_fn if not o.right_decided]
    assert not bad, _report("with every fn: not decided and right", bad, len(given_every_fn))


def test_the_mechanisms_are_explains_causes():
    """explain_cases.py names its mechanisms without importing fpexplore (the cases stay
    independent of the code under test); they are explain's vocabulary of causes."""
    from fpexplore.explain import CAUSES

    assert ec.FACTORS == CAUSES


def test_identical_results_have_no_cause(plain, given_fn, given_every_fn):
    same = [o for o in plain + given_fn + given_every_fn if o.case.mechanism == "identical"]
    bad = [o for o in same if o.factors or o.error or "identical" not in o.verdict.lower()]
    assert not bad, _report("identical results with a cause", bad, len(same))


def test_closer_is_right(plain, given_fn, given_every_fn):
    runs = plain + given_fn + given_every_fn
    bad = [o for o in runs if o.error or o.closer != o.case.closer]
    assert not bad, _report("closer wrong", bad, len(runs))


# ----------------------------------------------------------------------------- the builders


def _fmt_values(rng, fmt, n=2000):
    """Values of fmt: random bit patterns of all magnitudes (finite), as float64."""
    if fmt == "float16":
        v = rng.integers(0, 2**16, n, dtype=np.uint64).astype(np.uint16).view(np.float16)
    elif fmt == "bfloat16":
        v = rng.integers(0, 2**16, n, dtype=np.uint64).astype(np.uint16).view(ml_dtypes.bfloat16)
    else:
        v = rng.integers(0, 2**32, n, dtype=np.uint64).astype(np.uint32).view(np.float32)
    with np.errstate(invalid="ignore"):
        v = v.astype(np.float64)
    return v[np.isfinite(v)]


def _neighbours_and_midpoints(fmt, rng):
    """float64 values: values of fmt, the midpoints between neighbours (ties), and points
    just off the midpoints, across the normal and subnormal ranges and at the top."""
    dt = ec.DTYPES[fmt]
    v = np.sort(np.abs(_fmt_values(rng, fmt if fmt != "tf32" else "float32")))
    v = ec.round_to(v, fmt).astype(np.float64)
    p, emin, emax = ec.FORMATS[fmt]
    top = ec.MAXVAL[fmt]
    v = np.concatenate([v, [top, 2.0**emin, 0.0]])
    with np.errstate(over="ignore"):
        up = np.nextafter(v.astype(dt), np.asarray(np.inf, dt)).astype(np.float64)
    if fmt == "tf32":  # neighbours on the tf32 grid
        up = v + np.ldexp(1.0, np.maximum(np.frexp(v)[1] - 1, emin) - (p - 1))
    up = np.where(np.isfinite(up), up, top + 2.0 ** (emax - p + 1))  # past the top: inf's tie
    mid = (v + up) / 2
    tiny = np.abs(mid) * 2.0**-40 + 2.0**-1070
    out = np.concatenate([v, mid, mid + tiny, mid - tiny])
    return np.concatenate([out, -out])


@pytest.mark.parametrize("fmt", ["float16", "bfloat16", "float32", "tf32"])
def test_round_fraction_round_to_and_round_float_agree(fmt):
    rng = np.random.default_rng(1)
    x = _neighbours_and_midpoints(fmt, rng)
    x = x[np.isfinite(x)]
    want = [ec.round_fraction(Fraction(float(v)), fmt) for v in x]
    got_vec = ec.round_to(x, fmt).astype(np.float64)
    got_scalar = [ec.round_float(float(v), fmt) for v in x]
    assert np.array_equal(got_vec, np.array(want), equal_nan=True)
    assert got_scalar == want
    signs = [
        (math.copysign(1, a), math.copysign(1, b)) for a, b, v in zip(got_scalar, want, x) if v
    ]
    assert all(a == b for a, b in signs)  # a tiny negative value rounds to -0 (Fraction(-0.0) is 0)


@pytest.mark.parametrize("fmt, dtype", [("float16", np.float16), ("float32", np.float32)])
def test_round_fraction_matches_numpy_casts(fmt, dtype):
    """NumPy's float64 -> float16 / float32 casts round correctly (once, nearest-even), on
    representable values and on midpoints: round_fraction must agree with them."""
    rng = np.random.default_rng(2)
    x = _neighbours_and_midpoints(fmt, rng)
    with np.errstate(over="ignore"):
        want = x.astype(dtype).astype(np.float64)
    got = np.array([ec.round_fraction(Fraction(float(v)), fmt) for v in x])
    assert np.array_equal(got, want)
    # explicit ties: 1 + 2^-p lies between 1 and 1 + 2^(1-p) and goes to the even 1
    p = ec.FORMATS[fmt][0]
    assert ec.round_fraction(Fraction(1) + Fraction(1, 2**p), fmt) == 1.0
    assert ec.round_fraction(Fraction(1) + Fraction(3, 2**p), fmt) == 1.0 + 2.0 ** (2 - p)
    assert ec.round_fraction(Fraction(int(ec.MAXVAL[fmt])) * 2, fmt) == math.inf


def test_round_fraction_subnormals_and_overflow():
    assert ec.round_fraction(Fraction(1, 2**24), "float16") == 2.0**-24  # smallest subnormal
    assert ec.round_fraction(Fraction(1, 2**25), "float16") == 0.0  # tie to even: 0
    assert ec.round_fraction(Fraction(3, 2**26), "float16") == 2.0**-24
    assert ec.round_fraction(Fraction(65519), "float16") == 65504.0
    assert ec.round_fraction(Fraction(65520), "float16") == math.inf  # the tie goes up
    assert ec.round_fraction(Fraction(-1, 2**150), "float32") == 0.0
    assert math.copysign(1, ec.round_fraction(Fraction(-1, 2**150), "float32")) == -1


def test_tf32_known_values():
    one = np.float32(1)
    cases = {
        1 + 2.0**-11: 1.0,  # a tie between 1 and 1 + 2^-10: to the even 1
        1 + 3 * 2.0**-11: 1 + 2.0**-9,  # a tie between odd 1 + 2^-10 and even 1 + 2^-9
        1 + 2.0**-11 + 2.0**-23: 1 + 2.0**-10,  # past the tie
        1 + 2.0**-10: 1 + 2.0**-10,  # representable
        float(np.nextafter(one, np.float32(2))): 1.0,
        -(1 + 2.0**-11 + 2.0**-23): -(1 + 2.0**-10),
        3.4028234663852886e38: math.inf,  # float32's largest rounds past tf32's
        2.0**-149: 0.0,  # the smallest float32 subnormal: below half tf32's 2^-136
        2.0**-136 + 2.0**-149: 2.0**-136,
    }
    x = np.array(list(cases), dtype=np.float32)
    assert ec.tf32(x).astype(np.float64).tolist() == list(cases.values())
    rng = np.random.default_rng(3)
    v = _fmt_values(rng, "float32", 20000).astype(np.float32)
    assert np.array_equal(ec.tf32(v), ec.round_to(v.astype(np.float64), "tf32"))


def test_ml_dtypes_bfloat16_cast_and_narrow_arithmetic_round_correctly():
    """What the builders rely on: float32 -> bfloat16 (ml_dtypes) rounds once to nearest-even;
    NumPy's float16 and ml_dtypes' bfloat16 + and * round correctly."""
    rng = np.random.default_rng(4)
    v = _neighbours_and_midpoints("bfloat16", rng)
    v = v[np.abs(v) < 3e38]
    v32 = v.astype(np.float32)
    v32 = v32[v32.astype(np.float64) == v[np.abs(v) < 3e38]]  # the float32 ones (ties too)
    v32 = np.concatenate([v32, _fmt_values(rng, "float32", 20000).astype(np.float32)])
    want = ec.round_to(v32.astype(np.float64), "bfloat16")
    assert ec._key(v32.astype(ml_dtypes.bfloat16)) == ec._key(want)
    for fmt in ("float16", "bfloat16"):
        x = _fmt_values(rng, fmt, 3000)
        y = _fmt_values(rng, fmt, 3000)
        k = min(len(x), len(y))
        x, y = x[:k], y[:k]
        dt = ec.DTYPES[fmt]
        with np.errstate(all="ignore"):
            add = (x.astype(dt) + y.astype(dt)).astype(np.float64)
            mul = (x.astype(dt) * y.astype(dt)).astype(np.float64)
        want_add = [ec.round_fraction(Fraction(a) + Fraction(b), fmt) for a, b in zip(x, y)]
        want_mul = [ec.round_fraction(Fraction(a) * Fraction(b), fmt) for a, b in zip(x, y)]
        assert np.array_equal(add, want_add)
        assert np.array_equal(mul, want_mul)


def _loop(t, dt):
    s = dt.type(0)
    for v in t:
        s = dt.type(s + v)
    return s


def _pairwise_loop(t, dt):
    if len(t) == 1:
        return dt.type(t[0])
    h = len(t) // 2
    return dt.type(_pairwise_loop(t[:h], dt) + _pairwise_loop(t[h:], dt))


def _tree_loop(t, block, dt):
    total = dt.type(0)
    for start in range(0, len(t), block):
        s = [dt.type(v) for v in t[start : start + block]]
        s += [dt.type(0)] * (block - len(s))
        k = 1
        while k < block:
            for i in range(0, block, 2 * k):
                s[i] = dt.type(s[i] + s[i + k])
            k *= 2
        total = dt.type(total + s[0])
    return total


def _blocked_loop(t, b, dt):
    total = dt.type(0)
    for start in range(0, len(t), b):
        total = dt.type(total + _loop(t[start : start + b], dt))
    return total


@pytest.mark.parametrize("fmt", ["float16", "bfloat16", "float32", "float64"])
def test_vectorized_orders_equal_plain_loops(fmt):
    """np.cumsum is the sequential loop; the level-by-level pairwise, the reshaped blocked
    loop and the GPU tree equal their scalar loops, bit for bit, also along axis 0 of a
    matmul's (k, m, n) terms."""
    dt = ec.DTYPES[fmt]
    rng = np.random.default_rng(5)
    for n in (1, 2, 3, 7, 10, 33, 100, 257, 1000, 3001):
        dist = "normal" if fmt in ("float16", "bfloat16") else "wide"
        t = ec.make_inputs(rng, "sum", n, dist, fmt)
        same = [
            (ec.o_seq(t), _loop(t, dt)),
            (ec.reduce(t, "reverse"), _loop(t[::-1], dt)),
            (ec.o_pairwise(t), _pairwise_loop(t, dt)),
            (ec.o_blocked(t, 32), _blocked_loop(t, 32, dt)),
            (ec.o_blocked(t, 100), _blocked_loop(t, 100, dt)),
            (ec.o_tree(t, 128), _tree_loop(t, 128, dt)),
        ]
        for i, (vec, loop) in enumerate(same):
            assert ec._key(np.asarray(vec, dt)) == ec._key(np.asarray(loop, dt)), (n, i)
    a, b = ec.make_inputs(rng, "matmul", (3, 37, 2), "normal", fmt)
    terms = ec._terms("matmul", (a, b), dt)
    for order in ("seq", "pairwise", "blocked8", "tree16"):
        c = ec.reduce(terms, order)
        for i in range(3):
            for j in range(2):
                d = ec.reduce(a[i] * b[:, j], order)
                assert ec._key(c[i, j]) == ec._key(np.asarray(d, dt)), (order, i, j)


@pytest.mark.parametrize("fmt", ["float16", "bfloat16", "float32"])
def test_fma_round_is_correct(fmt):
    """fma(x, y, acc) rounded once: TwoSum plus round-to-odd against a Fraction, on random
    values, on accumulators far larger or smaller than the product, and on ties."""
    rng = np.random.default_rng(6)
    x, y = (ec.make_inputs(rng, "sum", 3000, "wide", fmt).astype(np.float64) for _ in range(2))
    acc = ec.make_inputs(rng, "sum", 3000, "wide", fmt).astype(np.float64)
    far = 2.0 ** (5 if fmt == "float16" else 12)
    acc[::3] *= far
    acc[1::3] /= far
    acc = ec.round_to(acc, fmt).astype(np.float64)
    ok = np.isfinite(acc) & np.isfinite(ec.round_to(acc + x * y, fmt).astype(np.float64))
    acc, x, y = acc[ok], x[ok], y[ok]
    p = ec.FORMATS[fmt][0]
    # ties: x * y = 2^-p, half an ulp of 1: 1 + 2^-p goes down to 1, (1 + 2^(1-p)) + 2^-p up
    acc[:2], x[:2], y[:2] = [1.0, 1 + 2.0 ** (1 - p)], 2.0 ** -(p // 2), 2.0 ** -(p - p // 2)
    want = [
        ec.round_fraction(Fraction(c) + Fraction(u) * Fraction(v), fmt)
        for c, u, v in zip(acc, x, y)
    ]
    vec = ec.fma_round(acc, x, y, fmt)
    scalar = [ec.fma_round(c, u, v, fmt) for c, u, v in zip(acc.tolist(), x.tolist(), y.tolist())]
    assert np.array_equal(vec, want)
    assert scalar == want


@pytest.mark.parametrize("fmt", ["float16", "float32", "float64"])
def test_exact_values_against_fractions(fmt):
    rng = np.random.default_rng(7)
    x = ec.make_inputs(rng, "sum", 300, "wide", fmt)
    assert ec.exact_value("sum", x) == sum(map(Fraction, x.astype(np.float64).tolist()))
    assert ec.exact_value("mean", x) == ec.exact_value("sum", x) / 300
    a, b = ec.make_inputs(rng, "dot", 300, "cancel", fmt)
    fa, fb = (list(map(Fraction, v.astype(np.float64).tolist())) for v in (a, b))
    assert ec.exact_value("dot", (a, b)) == sum(u * v for u, v in zip(fa, fb))
    a, b = ec.make_inputs(rng, "matmul", (3, 20, 4), "wide", fmt)
    x = ec.exact_value("matmul", (a, b))
    for i in range(3):
        for j in range(4):
            want = sum(Fraction(float(a[i, k])) * Fraction(float(b[k, j])) for k in range(20))
            assert x[i, j] == want


def test_closer_labels_ties_and_norms():
    x = np.array([1.0, 2.0**-30], dtype=np.float64)  # exact sum 1 + 2^-30
    r = {"up": np.float64(1 + 2.0**-29), "down": np.float64(1.0), "far": np.float64(1.5)}
    assert ec.closer_labels("sum", x, r) == {"up", "down"}  # equally far: a tie
    a = np.eye(2, dtype=np.float32)
    b = np.array([[1, 2], [3, 4]], dtype=np.float32)
    r = {
        "one": np.array([[1, 2], [3, 4.5]], np.float32),
        "two": np.array([[1.25, 2.25], [3.25, 4.25]], np.float32),
        "inf": np.array([[np.inf, 2], [3, 4]], np.float32),
    }
    # ||E||_F^2: one 0.25, two 4 * 0.0625 = 0.25: a tie
    assert ec.closer_labels("matmul", (a, b), r) == {"one", "two"}


def test_case_lists_are_sound():
    """Names unique, every factor built (tensor cores aside) for its ops and size bands, fn
    reproduces the result it is named for, few BLAS cases; the CI list is the subset."""
    every = ec.all_specs()
    ci = ec.ci_specs()
    assert len({s.name for s in every}) == len(every)
    assert {s.name for s in ci} <= {s.name for s in every}
    assert 120 <= len(ci) <= 160
    assert len(every) >= 300
    for specs in (every, ci):
        mechs = {s.mechanism for s in specs}
        assert mechs == set(ec.MECHANISMS) - {"tensor_core"}
        for mech in mechs:
            ops = {s.op for s in specs if s.mechanism == mech}
            want = {"dot", "matmul"} if mech in ("fma", "input_rounding") else ec_ops()
            assert ops == want, mech
            assert {s.band for s in specs if s.mechanism == mech} == {"small", "medium", "large"}
        assert 0.35 <= sum(s.with_fn for s in specs) / len(specs) <= 0.65
    built = cases()
    assert sum(c.uses_blas for c in built) <= 0.1 * len(built)
    for c in built:
        labels = set(c.results)
        assert c.closer and c.closer <= labels, c.name
        assert c.fn_label is None or c.fn_label in labels
        assert c.mechanism != "identical" or len({ec._key(r) for r in c.results.values()}) == 1
        if c.fn is not None and c.fn_label is not None:
            args = (c.inputs,) if c.op in ("sum", "mean") else tuple(c.inputs)
            assert ec._key(c.fn(*args)) == ec._key(c.results[c.fn_label]), c.name


def ec_ops():
    return {"sum", "mean", "dot", "matmul"}


def test_cases_are_reproducible():
    picked = ec.ci_specs()[::15]
    one = [ec.build_case(s, 3) for s in picked]
    two = [ec.build_case(s, 3) for s in picked]
    for a, b in zip(one, two):
        assert a.results.keys() == b.results.keys()
        assert [ec._key(r) for r in a.results.values()] == [ec._key(r) for r in b.results.values()]
        assert a.closer == b.closer


# ----------------------------------------------------------------------------- the table


def _table(runs: list[Outcome]) -> str:
    cats = ("right-decided", "right-undecided", "wrong-decided", "wrong-undecided")
    rows = {}
    for o in runs:
        key = (o.case.mechanism, o.case.op)
        rows.setdefault(key, []).append(o)
    head = f"{'mechanism':<15}{'op':<8}" + "".join(f"{c:>17}" for c in cats) + f"{'median s':>10}"
    lines = [head, "-" * len(head)]
    for (mech, op), os_ in sorted(
        rows.items(), key=lambda kv: (ec.MECHANISMS.index(kv[0][0]), kv[0][1])
    ):
        counts = [sum(o.category == c for o in os_) for c in cats]
        med = statistics.median(o.seconds for o in os_)
        lines.append(f"{mech:<15}{op:<8}" + "".join(f"{n:>17}" for n in counts) + f"{med:>10.2f}")
    totals = [sum(o.category == c for o in runs) for c in cats]
    med = statistics.median(o.seconds for o in runs) if runs else 0.0
    lines.append(f"{'all':<23}" + "".join(f"{n:>17}" for n in totals) + f"{med:>10.2f}")
    return "\n".join(lines)


def _summary(plain: list[Outcome], given: list[Outcome], every: list[Outcome]) -> str:
    factor = [o for o in plain if o.case.mechanism in ec.FACTORS]
    everything = plain + given + every
    same = [o for o in everything if o.case.mechanism == "identical"]
    lines = [
        f"confidently wrong (results only): {sum(o.confidently_wrong for o in plain)} of "
        f"{len(plain)} (must be 0)",
        f"mechanism found (results only): {sum(o.right for o in plain)} of {len(plain)} = "
        f"{sum(o.right for o in plain) / max(1, len(plain)):.1%} (must be >= 96%)",
        f"undecided (factor cases): {sum(o.undecided for o in factor)} of {len(factor)} = "
        f"{sum(o.undecided for o in factor) / max(1, len(factor)):.1%} "
        f"(must be <= {UNDECIDED:.0%})",
        f"with fn decided and right: {sum(o.right_decided for o in given)} of {len(given)} "
        "(must be >= 90%)",
        f"with fn undecided where one cause fits, or wrong: "
        f"{sum(not o.right_decided and not o.open_for_the_other_result for o in given)} "
        "(must be 0)",
        f"with every fn decided and right: {sum(o.right_decided for o in every)} of "
        f"{len(every)} (must be all)",
        f"identical without a cause: {sum(not o.factors and not o.error for o in same)} of "
        f"{len(same)} (must be all)",
        f"closer right: {sum(o.closer == o.case.closer and not o.error for o in everything)} "
        f"of {len(everything)} (must be all)",
        f"errors: {sum(bool(o.error) for o in everything)}",
    ]
    return "\n".join(lines)


def main(argv: list[str]) -> None:
    kind = argv[1] if len(argv) > 1 else "ci"
    verbose = "-v" in argv
    t0 = time.perf_counter()
    built = cases(kind, SEED)
    print(f"{len(built)} {kind} cases built in {time.perf_counter() - t0:.1f} s")
    t0 = time.perf_counter()
    plain = outcomes(False, kind, SEED, progress=True)
    given = outcomes(True, kind, SEED, progress=True)
    every = outcomes("every", kind, SEED, progress=True)
    runs = len(plain) + len(given) + len(every)
    print(f"explain ran {runs} times in {time.perf_counter() - t0:.1f} s\n")
    print("results only:\n" + _table(plain) + "\n")
    print("with fn:\n" + _table(given) + "\n")
    print("with every fn:\n" + _table(every) + "\n")
    print(_summary(plain, given, every))
    if verbose:
        print("\nfailing (results only):")
        print("\n".join(o.line() for o in plain if not o.right or o.closer != o.case.closer))
        print("\nfailing (with fn):")
        print(
            "\n".join(o.line() for o in given if not o.right_decided or o.closer != o.case.closer)
        )
        print("\nfailing (with every fn):")
        print(
            "\n".join(o.line() for o in every if not o.right_decided or o.closer != o.case.closer)
        )


if __name__ == "__main__":
    main(sys.argv)
