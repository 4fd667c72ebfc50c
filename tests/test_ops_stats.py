"""variance, softmax, logsumexp (fpexplore/ops/variance.py, fpexplore/ops/softmax.py): exact
variants against independent oracles (exact Fractions for the variance, mpmath at 640 bits for
softmax/logsumexp, rounded with tests/oracle.py's round_fraction), formula variants against
slow per-operation definitions written here from their docstrings, and the "numpy" variance
against np.var."""

from __future__ import annotations

import math
import warnings
from fractions import Fraction

import ml_dtypes
import mpmath
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import fpexplore as fpx
from fpexplore.ops import registry
from fpexplore.ops import softmax as softmax_ops
from fpexplore.ops import variance as variance_ops

import oracle
from oracle import SPECS, mpf_fraction, round_fraction, same, to_format
from strategies import STORAGE, arrays, random_values

PREC = 640
NAN, INF = math.nan, math.inf

# n - ddof <= 0 (the oracles cover it): fpx.variance warns, as np.var does
pytestmark = pytest.mark.filterwarnings("ignore:variance. n - ddof:RuntimeWarning")


def as_fmt(xs, fmt):
    with np.errstate(over="ignore"):
        return np.asarray(xs, dtype=np.float64).astype(SPECS[fmt][0])


def floats(a) -> list[float]:
    with np.errstate(invalid="ignore"):
        return np.atleast_1d(a).astype(np.float64).tolist()


def check_scalar(got, want: float, fmt: str, *info):
    oracle.CHECKED["cases"] += 1
    assert np.asarray(got).dtype == SPECS[fmt][0], info
    assert same(got, to_format(want, fmt)), (*info, got, want)


# ----------------------------------------------------------------------------- slow IEEE ops


def _neg(v: float) -> bool:
    return math.copysign(1.0, v) < 0


def op(kind: str, a: float, b, fmt: str) -> float:
    """One IEEE operation rounded to nearest-even in fmt (b is an int count for "div")."""
    if not (math.isfinite(a) and math.isfinite(b)):
        with np.errstate(all="ignore"):
            x, y = np.float64(a), np.float64(b)
            return float({"add": x + y, "sub": x - y, "mul": x * y, "div": x / y}[kind])
    fa, fb = Fraction(a), Fraction(b)
    if kind == "add":
        q, neg0 = fa + fb, _neg(a) and _neg(b)
    elif kind == "sub":
        q, neg0 = fa - fb, _neg(a) and not _neg(b)
    elif kind == "mul":
        q, neg0 = fa * fb, _neg(a) != _neg(b)
    else:
        q, neg0 = fa / fb, _neg(a)
    if q == 0:
        return -0.0 if neg0 else 0.0
    return round_fraction(q, fmt)


def rnd(v: float, fmt: str) -> float:
    """Round a float64 value (of a wider format) to fmt."""
    if not math.isfinite(v) or v == 0:
        return v
    return round_fraction(Fraction(v), fmt)


def seq_sum(vals: list[float], fmt: str) -> float:
    if not vals:
        return 0.0
    acc = vals[0]
    for v in vals[1:]:
        acc = op("add", acc, v, fmt)
    return acc


# ----------------------------------------------------------------------------- variance


def ref_variance(xs: list[float], ddof: int, fmt: str) -> float:
    n = len(xs)
    if n - ddof <= 0 or not all(math.isfinite(v) for v in xs):
        return NAN
    q = [Fraction(v) for v in xs]
    mean = sum(q, Fraction(0)) / n
    var = sum(((v - mean) ** 2 for v in q), Fraction(0)) / (n - ddof)
    return round_fraction(var, fmt) if var else 0.0


def slow_formula(variant: str, xs: list[float], ddof: int, fmt: str, acc: str) -> float:
    """The formula variants' docstrings, one rounded operation at a time (sequential sums)."""
    n = len(xs)
    if n - ddof <= 0:
        return NAN
    x = [rnd(v, acc) for v in xs]
    if variant == "two-pass":
        mean = op("div", seq_sum(x, acc), n, acc)
        d = [op("sub", v, mean, acc) for v in x]
        var = op("div", seq_sum([op("mul", v, v, acc) for v in d], acc), n - ddof, acc)
    elif variant == "one-pass":
        s1 = seq_sum(x, acc)
        s2 = seq_sum([op("mul", v, v, acc) for v in x], acc)
        t = op("div", op("mul", s1, s1, acc), n, acc)
        var = op("div", op("sub", s2, t, acc), n - ddof, acc)
    else:
        mean = m2 = 0.0
        for k, v in enumerate(x, 1):
            delta = op("sub", v, mean, acc)
            mean = op("add", mean, op("div", delta, k, acc), acc)
            m2 = op("add", m2, op("mul", delta, op("sub", v, mean, acc), acc), acc)
        var = op("div", m2, n - ddof, acc)
    return rnd(var, fmt)


@pytest.mark.parametrize("fmt", STORAGE)
@settings(max_examples=50)
@given(data=st.data())
def test_variance_exact_and_formulas_hypothesis(fmt, data):
    x = data.draw(arrays(fmt, max_size=24))
    ddof = data.draw(st.sampled_from([0, 1, 2]))
    xs = floats(x)
    check_scalar(
        variance_ops.variance(x, variant="exact", ddof=ddof), ref_variance(xs, ddof, fmt), fmt
    )
    wider = {"float16": "float32", "bfloat16": "float32", "float32": "float64"}.get(fmt)
    acc = data.draw(st.sampled_from([None, wider] if wider else [None]))
    for v in ("two-pass", "one-pass", "welford"):
        got = variance_ops.variance(x, variant=v, ddof=ddof, accumulate=acc)
        check_scalar(got, slow_formula(v, xs, ddof, fmt, acc or fmt), fmt, v, acc, xs, ddof)


@pytest.mark.parametrize("fmt", STORAGE)
def test_variance_exact_random(fmt):
    rng = np.random.default_rng(21)
    for n in (1, 2, 3, 10, 100, 1000):
        for loc in (0.0, 1.0, 1e3):
            x = as_fmt(rng.normal(loc, 1.0, n), fmt)
            for ddof in (0, 1):
                got = variance_ops.variance(x, variant="exact", ddof=ddof)
                check_scalar(got, ref_variance(floats(x), ddof, fmt), fmt, n, loc)
    # extreme ranges: huge and tiny values (float64 products beyond TwoProduct's fast range)
    _, p, emin, emax = SPECS[fmt]
    x = as_fmt([math.ldexp(1.5, emax - 1), -math.ldexp(1.25, emax - 2), math.ldexp(1, emin)], fmt)
    check_scalar(variance_ops.variance(x, variant="exact"), ref_variance(floats(x), 0, fmt), fmt)
    x = as_fmt([math.ldexp(3, emin - p + 1), math.ldexp(1, emin - p + 1), 0.0], fmt)
    check_scalar(variance_ops.variance(x, variant="exact"), ref_variance(floats(x), 0, fmt), fmt)


def test_welford_division_by_large_counts():
    """Welford's delta / k is correctly rounded also for k beyond 2**28, where the float64
    quotient rounded again to float32 could double-round (round-to-odd fixes it)."""
    variance_ops.variance(np.float32([1, 2]), variant="welford")  # compile
    rng = np.random.default_rng(4)
    a = random_values(rng, "float32", 3000)
    a = a[np.isfinite(a)]
    k = rng.integers(1, 2**53, a.size).astype(np.float64)
    k[::3] = 2.0 ** rng.integers(20, 53, k[::3].size) + rng.integers(-3, 4, k[::3].size)
    fmt = "float32"
    _, p, emin, _ = SPECS[fmt]
    vmax = float(oracle.max_finite(fmt))
    for ai, ki in zip(a.astype(np.float64).tolist(), k.tolist()):
        got = variance_ops._div_nb(ai, ki, p, emin, vmax)
        want = op("div", ai, int(ki), fmt)
        oracle.CHECKED["cases"] += 1
        assert same(np.float32(got), to_format(want, fmt)), (ai, ki, got, want)


def test_one_pass_catastrophic_cancellation():
    """float32 [10000, 10001, 10002]: the exact variance is 2/3. One-pass: s2 = 1e8 +
    fl(100020001) + fl(100040004) = 1e8 + 100020000 + 100040000 = 300060000 (exact sums),
    s1 = 30003, fl(s1*s1) = 900180032, fl(/3) = 300060000, so s2 - s1**2/n = 0."""
    x = np.float32([10000, 10001, 10002])
    assert variance_ops.variance(x, variant="one-pass") == 0.0
    exact = variance_ops.variance(x, variant="exact")
    assert exact == np.float32(2 / 3)
    assert variance_ops.variance(x, variant="two-pass") == exact
    assert variance_ops.variance(x, variant="welford") == exact
    # N(1e4, 1), n = 1000, seed 0, sequential sums in float32 (measured relative errors:
    # one-pass -250 (the variance comes out as -237.568), two-pass 4.0e-5, Welford 5.6e-4)
    x = np.random.default_rng(0).normal(1e4, 1.0, 1000).astype(np.float32)
    exact = float(variance_ops.variance(x, variant="exact"))
    assert float(variance_ops.variance(x, variant="one-pass")) < 0
    assert abs(float(variance_ops.variance(x, variant="two-pass")) - exact) < 1e-4 * exact
    assert abs(float(variance_ops.variance(x, variant="welford")) - exact) < 1e-3 * exact
    assert variance_ops.variance(x, variant="numpy") == np.var(x)


def _np_var(x, **kw):
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        return np.var(x, **kw)


NP_SIZES = [0, 1, 2, 3, 7, 8, 9, 16, 17, 127, 128, 129, 257, 1000, 8191, 8193, 16385, 100003]


@pytest.mark.parametrize("fmt", STORAGE)
def test_numpy_variant_equals_np_var(fmt):
    rng = np.random.default_rng(8)
    for n in NP_SIZES:
        for kind in range(2):
            base = rng.normal(300.0, 2.0, n) if kind else rng.uniform(-1e3, 1e3, n)
            x = as_fmt(base, fmt)
            views = [x, x[::2], x[::-1]]
            if n and n % 4 == 0:
                views += [x.reshape(4, -1), np.asfortranarray(x.reshape(4, -1))]
            for v in views:
                for ddof in (0, 1, 2):
                    got = variance_ops.variance(v, variant="numpy", ddof=ddof)
                    oracle.CHECKED["cases"] += 1
                    assert same(got, _np_var(v, ddof=ddof)), (fmt, n, kind, v.shape, ddof)
            for acc in ("float32", "float64"):
                if SPECS[acc][1] > SPECS[fmt][1]:  # np.var(x, dtype=acc), rounded to x's
                    want = fpx.as_format(np.asarray(_np_var(x, dtype=np.dtype(acc))), fmt)
                    got = variance_ops.variance(x, variant="numpy", accumulate=acc)
                    assert same(got, want), (fmt, acc, n, kind)
            if n > 1:  # two-pass with NumPy's sum order is the same computation
                assert same(variance_ops.variance(x, variant="two-pass", order="numpy"), _np_var(x))


@pytest.mark.parametrize("fmt", STORAGE)
def test_numpy_variant_special_values(fmt):
    rng = np.random.default_rng(9)
    for _ in range(40):
        x = random_values(rng, fmt, int(rng.integers(1, 40)))
        assert same(variance_ops.variance(x, variant="numpy"), _np_var(x))


def test_variance_float16_overflow_like_numpy():
    """np.var of float16 data overflows where the squared deviations exceed 65504."""
    x = np.float16([-300, 300])
    assert variance_ops.variance(x, variant="numpy") == _np_var(x) == np.inf
    assert _np_var(x, dtype=np.float32) == 90000  # then rounded to float16: inf
    assert variance_ops.variance(x, variant="numpy", accumulate="float32") == np.inf
    assert variance_ops.variance(np.float16([0, 200]), variant="exact") == np.float16(10000)


# ----------------------------------------------------------------------------- softmax


def mp_exact(a: float, b: float) -> mpmath.mpf:
    return mpmath.fsub(a, b, exact=True)


def round_mp(v: mpmath.mpf, fmt: str) -> float:
    _, p, emin, emax = SPECS[fmt]
    if v == 0:
        return 0.0
    mag = int(mpmath.floor(mpmath.log(abs(v), 2)))
    if mag > emax + 2:
        return math.copysign(INF, v)
    if mag < emin - p - 3:
        return math.copysign(0.0, v)
    return round_fraction(mpf_fraction(v), fmt)


def ref_softmax(xs: list[float], fmt: str) -> list[float]:
    if not xs:
        return []
    if any(math.isnan(v) or v == INF for v in xs) or all(v == -INF for v in xs):
        return [NAN] * len(xs)
    fin = [v for v in xs if v != -INF]
    M = max(fin)
    if all(v == M for v in fin):
        one = round_fraction(Fraction(1, len(fin)), fmt)
        return [one if v == M else 0.0 for v in xs]
    with mpmath.workprec(PREC):
        d = [mp_exact(v, M) if v != -INF else None for v in xs]
        # terms below e**-500 change the sum by < 2**-720: left out of it
        S = mpmath.fsum(mpmath.exp(t) for t in d if t is not None and t > -500)
        out = []
        for t in d:
            if t is None or t < -800:  # y < e**-800 < 2**-1154: rounds to +0
                out.append(0.0)
            else:
                out.append(round_mp(mpmath.exp(t) / S, fmt))
    return out


def ref_logsumexp(xs: list[float], fmt: str) -> float:
    if any(math.isnan(v) for v in xs):
        return NAN
    if any(v == INF for v in xs):
        return INF
    fin = [v for v in xs if v != -INF]
    if not fin:
        return -INF
    M = max(fin)
    if len(fin) == 1:
        return M if M != 0 else 0.0  # log(exp(-0)) = log(1) = +0
    rest = list(fin)
    rest.remove(M)  # L = M + log1p(T), T = the sum without one maximal term
    with mpmath.workprec(PREC):
        # terms below e**-3000 < 2**-4328 change nothing that can be rounded
        T = mpmath.fsum(mpmath.exp(mp_exact(v, M)) for v in rest if v - M > -3000)
        if T == 0:
            return M if M != 0 else 0.0
        return round_mp(mpmath.mpf(M) + mpmath.log1p(T), fmt)


def check_softmax(x, fmt):
    xs = floats(x)
    got = softmax_ops.softmax(x, variant="exact")
    assert got.shape == np.shape(x) and got.dtype == SPECS[fmt][0]
    for g, w in zip(np.ravel(got), ref_softmax(xs, fmt)):
        oracle.CHECKED["cases"] += 1
        assert same(g, to_format(w, fmt)), (fmt, xs, g, w)
    check_scalar(softmax_ops.logsumexp(x, variant="exact"), ref_logsumexp(xs, fmt), fmt, xs)


@pytest.mark.parametrize("fmt", STORAGE)
@settings(max_examples=50)
@given(data=st.data())
def test_softmax_logsumexp_exact_hypothesis(fmt, data):
    x = data.draw(arrays(fmt, max_size=10))
    check_softmax(x, fmt)


@pytest.mark.blas
@pytest.mark.parametrize("fmt", STORAGE)
def test_softmax_logsumexp_exact_random(fmt):
    rng = np.random.default_rng(33)
    cases = [
        rng.normal(0, 1, 50),
        rng.normal(0, 30, 50),
        rng.normal(-500, 200, 30),
        [0.0, 0.0, 0.0, 0.0, 0.0],  # exactly 1/5 each
        [2.0, 2.0, -INF, 2.0, 2.0],  # exactly 1/4 and +0
        [1.0, -INF],
        [0.0, -1e4, -1e4],
        [-0.6931471805599453, -0.6931471805599453, -5.0],  # logsumexp close to 0
        rng.uniform(-3, 3, 200),
    ]
    for c in cases:
        check_softmax(as_fmt(c, fmt), fmt)


@pytest.mark.blas
def test_softmax_exact_float64_wide_range():
    """Elements between e**-746 and e**-700 relative to the max (subnormal outputs) take the
    mpmath path; beyond they round to +0."""
    x = np.array([0.0, -1.0, -701.5, -720.0, -744.0, -745.5, -800.0, 3e300, -3e300])
    check_softmax(x, "float64")
    check_softmax(x[:-2], "float64")
    # logsumexp = M + log1p(tiny): far below (+0), in (4.2e-322) and around the subnormals
    for c in ([0.0, -1.7976931348623157e308], [0.0, -740.0], [0.0, -745.0], [0.0, -746.0]):
        check_softmax(np.array(c), "float64")
    for c in ([1e-310, -700.0], [5e-324, -740.0], [-5e-324, -744.0], [1e-300, -1e-300]):
        check_softmax(np.array(c), "float64")
    for fmt in ("float16", "bfloat16", "float32"):
        tiny = float(fpx.next_up(np.zeros((), SPECS[fmt][0])))
        for c in ([0.0, -200.0], [tiny, -100.0], [0.0, -16.0], [-tiny, -20.0]):
            check_softmax(as_fmt(c, fmt), fmt)


@pytest.mark.parametrize("fmt", STORAGE)
def test_softmax_logsumexp_mpmath_tier(fmt, monkeypatch):
    """With the double-double tier declared useless every element goes through mpmath."""
    monkeypatch.setattr(softmax_ops, "DD_EXP_REL", 1.0)
    rng = np.random.default_rng(44)
    for c in (rng.normal(0, 3, 12), rng.normal(0, 0.01, 5), [-0.5, -0.5, 1e-3]):
        check_softmax(as_fmt(c, fmt), fmt)


def test_softmax_exact_speed_and_sum():
    x = np.random.default_rng(0).normal(0, 4, 100_000).astype(np.float32)
    y = softmax_ops.softmax(x, variant="exact")
    assert abs(float(np.sum(y, dtype=np.float64)) - 1) < 1e-5


# ----------------------------------------------------------------------------- naive, shifted


def _library_exp(x: list[float], dt) -> list[float]:
    """NumPy's exp of the whole array, as the variants call it. Its float16/float32 results
    depend on the loop NumPy dispatches (an AVX-512 array loop and the 0-d scalar path differ
    by an ulp on some inputs, e.g. float16 exp(-0.02147)), so the oracle takes the array loop
    too: the formula around exp is what is checked here."""
    return [float(v) for v in np.exp(np.array(x, dtype=np.float64).astype(dt))]


def slow_softmax(variant: str, xs: list[float], fmt: str, acc: str) -> list[float]:
    x = [rnd(v, acc) for v in xs]
    dt = SPECS[acc][0]
    if variant == "shifted":
        m = max(x) if x and not any(math.isnan(v) for v in x) else NAN
        m = m if math.isfinite(m) else 0.0
        x = [op("sub", v, m, acc) for v in x]
    with np.errstate(all="ignore"):
        e = _library_exp(x, dt)
    s = seq_sum(e, acc)
    return [rnd(_div(v, s, acc), fmt) for v in e]


def _div(a: float, b: float, acc: str) -> float:
    if not (math.isfinite(a) and math.isfinite(b)) or b == 0:
        with np.errstate(all="ignore"):
            return float(np.float64(a) / np.float64(b))
    q = Fraction(a) / Fraction(b)
    if q == 0:
        return -0.0 if _neg(a) != _neg(b) else 0.0
    return round_fraction(q, acc)


def slow_logsumexp(variant: str, xs: list[float], fmt: str, acc: str) -> float:
    x = [rnd(v, acc) for v in xs]
    dt = SPECS[acc][0]
    m = 0.0
    if variant == "shifted":
        m = max(x) if x and not any(math.isnan(v) for v in x) else NAN
        m = m if math.isfinite(m) else 0.0
        x = [op("sub", v, m, acc) for v in x]
    with np.errstate(all="ignore"):
        e = _library_exp(x, dt)
        lg = float(np.log(np.array(seq_sum(e, acc), dtype=np.float64).astype(dt)))
    r = op("add", m, lg, acc) if variant == "shifted" else lg
    return rnd(r, fmt)


@pytest.mark.blas
@pytest.mark.parametrize("fmt", STORAGE)
@settings(max_examples=40)
@given(data=st.data())
def test_naive_shifted_definitions(fmt, data):
    x = data.draw(arrays(fmt, max_size=12))
    wider = {"float16": "float32", "bfloat16": "float32", "float32": "float64"}.get(fmt)
    acc = data.draw(st.sampled_from([None, wider] if wider else [None]))
    xs = floats(x)
    for v in ("naive", "shifted"):
        got = softmax_ops.softmax(x, variant=v, accumulate=acc)
        for g, w in zip(got, slow_softmax(v, xs, fmt, acc or fmt)):
            oracle.CHECKED["cases"] += 1
            assert same(g, to_format(w, fmt)), (v, acc, xs, g, w)
        got = softmax_ops.logsumexp(x, variant=v, accumulate=acc)
        check_scalar(got, slow_logsumexp(v, xs, fmt, acc or fmt), fmt, v, acc, xs)


@pytest.mark.blas
def test_shifted_softmax_where_numpys_exp_loops_differ():
    """Found by hypothesis on an AVX-512 machine: float16 exp(-0.02147) is 0.979 in NumPy's
    array loop and 0.9785 on the 0-d path; softmax uses the array loop, and so does the oracle
    (on machines where both paths agree this is an ordinary case)."""
    x = np.float16([7.689e-06, 2.148e-02])
    for g, w in zip(
        softmax_ops.softmax(x, variant="shifted"),
        slow_softmax("shifted", floats(x), "float16", "float16"),
    ):
        assert same(g, to_format(w, "float16"))


@pytest.mark.blas
def test_naive_overflows_shifted_does_not():
    x = np.float32([100, 0])
    naive = softmax_ops.softmax(x, variant="naive")
    assert np.isnan(naive[0]) and naive[1] == 0  # inf/inf and 1/inf
    shifted = softmax_ops.softmax(x, variant="shifted")
    assert (shifted == softmax_ops.softmax(x, variant="exact")).all()
    assert shifted[0] == 1 and shifted[1] == np.float32(27 * 2.0**-149)  # e**-100, subnormal
    assert softmax_ops.logsumexp(x, variant="naive") == np.inf
    assert (
        softmax_ops.logsumexp(x, variant="shifted")
        == softmax_ops.logsumexp(x, variant="exact")
        == 100
    )
    # float16: exp(12) > 65504 already
    assert softmax_ops.logsumexp(np.float16([12, 0]), variant="naive") == np.inf
    assert softmax_ops.logsumexp(np.float16([12, 0]), variant="exact") == np.float16(12)


@pytest.mark.blas
def test_shifted_with_numpy_order_is_scipy_formula():
    """variant="shifted", order="numpy" is exp(x - max) / np.sum(...) as scipy writes it."""
    x = np.random.default_rng(1).normal(0, 5, 1000).astype(np.float32)
    e = np.exp(x - np.max(x))
    assert (softmax_ops.softmax(x, variant="shifted", order="numpy") == e / np.sum(e)).all()
    want = np.max(x) + np.log(np.sum(e))
    assert softmax_ops.logsumexp(x, variant="shifted", order="numpy") == want


# ----------------------------------------------------------------------------- API


def test_empty_inputs():
    for fmt in STORAGE:
        e = np.zeros(0, SPECS[fmt][0])
        for v in ("two-pass", "one-pass", "welford", "numpy", "exact"):
            r = variance_ops.variance(e, variant=v)
            assert r.dtype == e.dtype and np.isnan(float(r))
        for v in ("naive", "shifted", "exact"):
            s = softmax_ops.softmax(e, variant=v)
            assert s.shape == (0,) and s.dtype == e.dtype
            r = softmax_ops.logsumexp(e, variant=v)
            assert r.dtype == e.dtype and float(r) == -INF


def test_logsumexp_exact_of_minus_zero_is_plus_zero():
    # log(exp(-0)) = log(1) = +0 (the shifted formula gives -0 + log(1) = +0 as well)
    for fmt in STORAGE:
        for xs in ([-0.0], [-0.0, -INF], [-INF, -0.0, -INF]):
            x = as_fmt(xs, fmt)
            want = to_format(ref_logsumexp(floats(x), fmt), fmt)
            assert same(want, to_format(0.0, fmt))
            for v in ("exact", "shifted"):
                assert same(softmax_ops.logsumexp(x, variant=v), want), (fmt, xs, v)


def test_ddof_and_undefined_variance():
    x = np.float32([1, 2])
    with pytest.warns(RuntimeWarning, match="the variance is undefined, NaN"):  # (as np.var)
        assert np.isnan(variance_ops.variance(x, variant="two-pass", ddof=2))
    assert np.isnan(variance_ops.variance(x[:1], variant="welford", ddof=1))
    assert same(variance_ops.variance(x, variant="numpy", ddof=2), _np_var(x, ddof=2))  # inf
    assert variance_ops.variance(x, variant="exact", ddof=1) == np.float32(0.5)
    with pytest.raises(ValueError, match="ddof"):
        variance_ops.variance(x, ddof=-1)
    for bad in (0.5, True, np.True_, "1"):  # not an integer: TypeError, as checks.integer says
        with pytest.raises(TypeError, match="ddof"):
            variance_ops.variance(x, ddof=bad)


def test_errors():
    x = np.float32([1, 2, 3])
    with pytest.raises(ValueError, match="two-pass, one-pass, welford, numpy, exact"):
        variance_ops.variance(x, variant="fast")
    with pytest.raises(ValueError, match="naive, shifted, exact"):
        softmax_ops.softmax(x, variant="scipy")
    with pytest.raises(ValueError, match="naive, shifted, exact"):
        softmax_ops.logsumexp(x, variant="scipy")
    with pytest.raises(TypeError, match="integer"):
        variance_ops.variance(np.arange(3))
    with pytest.raises(TypeError, match="integer"):
        softmax_ops.softmax(np.arange(3))
    with pytest.raises(ValueError, match="valid orders"):
        variance_ops.variance(x, variant="two-pass", order="random")
    with pytest.raises(ValueError, match="fixed order"):
        variance_ops.variance(x, variant="welford", order="pairwise")
    with pytest.raises(ValueError, match="valid orders"):
        softmax_ops.softmax(x, order="random")
    with pytest.raises(ValueError, match="input rounding"):
        variance_ops.variance(x, variant="two-pass", accumulate="tf32")
    with pytest.raises(ValueError, match="at least as wide"):
        variance_ops.variance(np.float64([1, 2]), variant="numpy", accumulate="float32")
    with pytest.raises(ValueError, match="valid formats"):
        softmax_ops.softmax(x, accumulate="float8")
    for f in (softmax_ops.softmax, softmax_ops.logsumexp):
        name = f.__name__
        # worded for the op the user called, not "order for sum"
        with pytest.raises(ValueError, match=f"^{name}: unknown order 'nosuch'.*valid orders"):
            f(x, order="nosuch")
        # the exact variant rounds once: order and accumulate are refused, not ignored
        for kw in ({"order": "pairwise"}, {"order": "sequential"}, {"accumulate": "float64"}):
            (key,) = kw
            with pytest.raises(ValueError, match=f"^{name}: `{key}` does not apply to .*'exact'"):
                f(x, variant="exact", **kw)
    with pytest.raises(ValueError, match="`accumulate` does not apply to .*'exact'"):
        variance_ops.variance(x, variant="exact", accumulate="float64")


def test_shapes_and_python_input():
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    s = softmax_ops.softmax(x, variant="exact")
    assert s.shape == (3, 4)
    assert (s.ravel() == softmax_ops.softmax(x.ravel(), variant="exact")).all()
    assert variance_ops.variance([1.0, 2.0, 4.0], variant="exact") == np.float64(14 / 9)
    assert variance_ops.variance(x, variant="exact") == variance_ops.variance(
        x.ravel(), variant="exact"
    )
    bf = np.array([1, 2, 3], dtype=ml_dtypes.bfloat16)
    assert variance_ops.variance(bf, variant="exact").dtype == bf.dtype


def test_registered_variants():
    kinds = {
        "variance": ["formula", "formula", "formula", "library", "exact"],
        "softmax": ["formula", "formula", "exact"],
        "logsumexp": ["formula", "formula", "exact"],
    }
    for op_name, want in kinds.items():
        table = registry.variants(op_name, details=True)
        assert [v.kind for v in table.values()] == want
