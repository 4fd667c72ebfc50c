"""cdist and the Adam step (fpexplore/ops/cdist.py, fpexplore/ops/adam.py) against slow,
independent definitions.

The slow definitions below evaluate each documented formula element by element with NumPy /
ml_dtypes *scalars* of the format (each scalar operation rounds its result to the format; a
different route from the package's vectorized float64-then-round code), reductions with
tests/slow_orders.py, fused multiply-adds and constants with the Fraction oracle
(tests/oracle.py). Exact references use ``fractions.Fraction`` and ``mpmath`` at 400 bits,
with a check that the rounding is decided. Results must be bit-identical (NaN == NaN).

Documented numbers (docs/cases.md sections 4 and 5), reproduced here:

* Ascend ``apply_adam`` article: float32, seed 0, 10**5 elements, param ~ N(0, 1), grads
  ~ N(0, 1), lr=1e-3, betas (0.9, 0.999), eps=1e-8, four warm-up steps: at step 5
  div-then-mul and mul-then-div agree on 99.906 % of the params (94 elements differ). Run
  side by side from a fresh optimizer, the pass rate falls from 99.938 % after step 1 to
  99.290 % after step 10 and 98.141 % after step 50: the difference grows. Against the
  correctly rounded step (variant "exact") at step 5: div-then-mul 99.679 %, mul-then-div
  99.692 %, div-then-mul+fma 99.716 %, torch 99.687 % (lerp-fma moments, fused addcmul,
  IEEE sqrt).
* openvinotoolkit/openvino#29552 model: float16, 64 points in 16-D ~ N(0, 1), y = x + N(0,
  0.01) (seed 0; true distances 0.027 to 0.054): mean absolute error (vs the exact
  distances) over the 64 close pairs of the expanded formula 0.0481 with a float32
  accumulator (0.0609 in float16 throughout), of the direct formula 3.1e-06 (6.7e-06): over
  10,000 times larger. Distances of points to themselves: direct exactly 0; expanded exactly 0
  in float16 throughout, up to 0.1768 with a float32 accumulator.
"""

from __future__ import annotations

import importlib.util
import math
from fractions import Fraction

import ml_dtypes
import mpmath
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import fpexplore as fpx
from fpexplore.metrics import pass_rate
from fpexplore.ops import registry
from fpexplore.ops.adam import ADAM_MOMENTS, adam_pass_rates, adam_run, adam_step
from fpexplore.ops.cdist import cdist

import oracle
import slow_orders as so
from oracle import SPECS, mpf_fraction, same
from strategies import STORAGE, values

# compare needs pandas: the gmpy2 oracle run (make test-gmpy2) installs none; the main run
# has it and runs these
needs_pandas = pytest.mark.skipif(
    importlib.util.find_spec("pandas") is None, reason="fpx.compare needs pandas"
)


SCALAR = {
    "float16": np.float16,
    "bfloat16": ml_dtypes.bfloat16,
    "float32": np.float32,
    "float64": np.float64,
}


def rn(value, fmt):
    """A Python float or Fraction rounded once to fmt (the oracle's own rounding)."""
    if isinstance(value, float) and not math.isfinite(value):
        return SCALAR[fmt](value)
    return oracle.to_format(oracle.round_fraction(Fraction(value), fmt), fmt)


class Scalar:
    """IEEE operations on NumPy / ml_dtypes scalars of one format, each rounded to it."""

    def __init__(self, fmt):
        self.fmt = fmt
        self.T = SCALAR[fmt]

    def _r(self, v):
        return self.T(v)

    def add(self, a, b):
        with np.errstate(all="ignore"):
            return self._r(self.T(a) + self.T(b))

    def sub(self, a, b):
        with np.errstate(all="ignore"):
            return self._r(self.T(a) - self.T(b))

    def mul(self, a, b):
        with np.errstate(all="ignore"):
            return self._r(self.T(a) * self.T(b))

    def div(self, a, b):
        with np.errstate(all="ignore"):
            return self._r(self.T(a) / self.T(b))

    def sqrt(self, a):
        with np.errstate(all="ignore"):
            return self._r(np.sqrt(self.T(a)))

    def fma(self, a, b, c):
        return oracle.to_format(oracle.fma(float(a), float(b), float(c), self.fmt), self.fmt)


def check_same(got, want, fmt, what):
    got = np.asarray(got)
    want = np.asarray(want, dtype=SPECS[fmt][0])
    assert got.dtype == SPECS[fmt][0], (what, got.dtype)
    assert got.shape == want.shape, (what, got.shape, want.shape)
    for idx in np.ndindex(got.shape):
        oracle.CHECKED["cases"] += 1
        assert same(got[idx], want[idx]), (what, idx, got[idx], want[idx])


# ----------------------------------------------------------------------------- cdist: slow


REDUCERS = {
    "sequential": so.sequential,
    "pairwise": so.pairwise,
    "blocked": lambda t, ar: so.blocked(t, ar, 3),
    "tree": lambda t, ar: so.tree(t, ar, 4),
    "kahan": so.kahan,
}
ORDER_PARAMS = {"blocked": {"block": 3}, "tree": {"block": 4}}


def slow_reduce(terms, fmt, acc, order):
    """Terms of fmt summed in the order in the accumulator acc, then rounded once to fmt."""
    ar = so.Arith(acc)
    t = [ar.conv(rn(float(v), acc)) for v in terms]
    return rn(float(REDUCERS[order](t, ar)), fmt)


def slow_dot(a, b, fmt, acc, order, fused):
    ar = so.Arith(acc)
    A = [ar.conv(rn(float(v), acc)) for v in a]
    B = [ar.conv(rn(float(v), acc)) for v in b]
    if fused:
        assert order == "sequential"
        r = ar.mul(A[0], B[0])
        for x, y in zip(A[1:], B[1:]):
            r = ar.fma(x, y, r)
    else:
        r = REDUCERS[order]([ar.mul(x, y) for x, y in zip(A, B)], ar)
    return rn(float(r), fmt)


def slow_cdist(x, y, fmt, variant, acc, order, fused=False, clamp=True):
    S = Scalar(fmt)
    acc = acc or fmt
    out = np.empty((x.shape[0], y.shape[0]), dtype=SPECS[fmt][0])
    if variant == "expanded":
        xn = [slow_reduce([S.mul(v, v) for v in row], fmt, acc, order) for row in x]
        yn = [slow_reduce([S.mul(v, v) for v in row], fmt, acc, order) for row in y]
    for i, xi in enumerate(x):
        for j, yj in enumerate(y):
            if variant == "expanded":
                xy = slow_dot(xi, yj, fmt, acc, order, fused)
                d2 = S.add(S.sub(xn[i], S.mul(S.T(2.0), xy)), yn[j])
                if clamp and d2 < 0:
                    d2 = S.T(0.0)
            else:
                terms = [S.mul(S.sub(a, b), S.sub(a, b)) for a, b in zip(xi, yj)]
                d2 = slow_reduce(terms, fmt, acc, order)
            out[i, j] = S.sqrt(d2)
    return out


def exact_distance(a, b, fmt):
    """Correctly rounded sqrt(sum (a - b)**2): Fraction sum, mpmath sqrt at 400 bits for the
    two candidates, and an exact comparison of q with the square of their midpoint."""
    q = sum(((Fraction(float(u)) - Fraction(float(w))) ** 2 for u, w in zip(a, b)), Fraction(0))
    if q == 0:
        return 0.0
    with mpmath.workprec(400):
        r = mpf_fraction(mpmath.sqrt(mpmath.mpf(q.numerator) / q.denominator))
    lo = oracle.round_fraction(r * (1 - Fraction(1, 2**380)), fmt)
    hi = oracle.round_fraction(r * (1 + Fraction(1, 2**380)), fmt)
    if lo == hi:
        return lo
    # sqrt(q) is within 2**-380 of the midpoint of two neighbours: decide exactly
    mid = (Fraction(lo) + Fraction(hi)) / 2
    if q != mid * mid:
        return hi if q > mid * mid else lo
    return lo if oracle.count_below(abs(lo), fmt) % 2 == 0 else hi  # a tie: even wins


def exact_cdist(x, y, fmt):
    out = np.empty((x.shape[0], y.shape[0]), dtype=SPECS[fmt][0])
    for i, a in enumerate(x):
        for j, b in enumerate(y):
            out[i, j] = oracle.to_format(exact_distance(a, b, fmt), fmt)
    return out


def points(fmt, m, n, d, seed, near=False, scale=1.0):
    rng = np.random.default_rng(seed)
    x = rng.normal(0, scale, (m, d))
    if near:
        y = x[:n] + rng.normal(0, 1e-2 * scale, (n, d))
    else:
        y = rng.normal(0, scale, (n, d))
    return fpx.as_format(x, fmt), fpx.as_format(y, fmt)


# ----------------------------------------------------------------------------- cdist: tests


CDIST_CASES = [
    (fmt, acc, order)
    for fmt in STORAGE
    for acc, order in [(None, "sequential"), (None, "pairwise"), (None, "kahan")]
] + [
    ("float16", "float32", "sequential"),
    ("float16", "float32", "pairwise"),
    ("float16", "float32", "tree"),
    ("bfloat16", "float32", "blocked"),
    ("float32", "float64", "sequential"),
    ("float32", "float16", "pairwise"),  # a narrower accumulator rounds the terms first
]


@pytest.mark.parametrize("variant", ["expanded", "direct"])
@pytest.mark.parametrize(("fmt", "acc", "order"), CDIST_CASES)
def test_cdist_matches_slow_definition(fmt, acc, order, variant):
    for seed, near in ((1, False), (2, True)):
        x, y = points(fmt, 5, 4, 7, seed, near=near)
        got = cdist(
            x, y, variant=variant, order=order, accumulate=acc, **ORDER_PARAMS.get(order, {})
        )
        want = slow_cdist(x, y, fmt, variant, acc, order)
        check_same(got, want, fmt, (variant, order, acc, seed))


@pytest.mark.parametrize("fmt", STORAGE)
def test_cdist_expanded_fma_and_no_clamp(fmt):
    x, y = points(fmt, 6, 6, 5, 3, near=True)
    x[0] = y[0]  # identical points: cancellation, negative squared distances likely
    got = cdist(x, y, variant="expanded", fma=True)
    check_same(got, slow_cdist(x, y, fmt, "expanded", None, "sequential", fused=True), fmt, "fma")
    got = cdist(x, y, variant="expanded", clamp=False)
    want = slow_cdist(x, y, fmt, "expanded", None, "sequential", clamp=False)
    check_same(got, want, fmt, "no clamp")


@pytest.mark.parametrize("fmt", STORAGE)
def test_cdist_exact_against_fraction_mpmath(fmt):
    cases = [points(fmt, 6, 5, 9, 4), points(fmt, 6, 5, 9, 5, near=True)]
    x, y = points(fmt, 4, 4, 3, 6, scale=1e-3)
    y[1] = x[1]  # identical rows: distance exactly +0
    cases.append((x, y))
    for x, y in cases:
        got = cdist(x, y, variant="exact")
        check_same(got, exact_cdist(x, y, fmt), fmt, "exact")
    assert same(got[1, 1], SPECS[fmt][0].type(0.0))


@pytest.mark.parametrize("fmt", ["float16", "bfloat16", "float32"])
def test_cdist_exact_integer_path_in_every_format(fmt, monkeypatch):
    """Force the exact integer path (isqrt with a sticky bit) for every pair, not only for
    the few the float64 bound leaves undecided."""
    from fpexplore.ops import cdist as cdist_module

    monkeypatch.setattr(
        cdist_module, "_cdist_bounds", lambda X, Y, info, out: np.ones(out.shape, bool)
    )
    x, y = points(fmt, 5, 4, 6, 8, near=True)
    y[0] = x[0]
    x[1, 0] = np.inf
    got = cdist(x, y, variant="exact")
    assert np.isinf(got[1]).all() and got[0, 0] == 0
    check_same(np.delete(got, 1, 0), exact_cdist(np.delete(x, 1, 0), y, fmt), fmt, "integer")


def _tie_triples():
    """Pythagorean triples (a, b, c) with a, b < 2**24 and c an odd 25-bit integer: in float32,
    c is a midpoint between two neighbours, an exact tie (rounds to even)."""
    found = []
    for m in range(2897, 3300):
        for n in range(1, m):
            a, b, c = m * m - n * n, 2 * m * n, m * m + n * n
            if a < 2**24 and b < 2**24 and 2**24 < c < 2**25 and c % 2 == 1:
                found.append((a, b, c))
                break
        if len(found) == 6:
            return found
    return found


def test_cdist_exact_ties_round_to_even():
    triples = _tie_triples()
    assert len(triples) == 6
    x = np.array([[a, 0.0] for a, _, _ in triples], dtype=np.float32)
    y = np.array([[0.0, b] for _, b, _ in triples], dtype=np.float32)
    got = np.diag(cdist(x, y, variant="exact"))
    for g, (_, _, c) in zip(got, triples):
        k = c // 2  # c = 2k + 1 sits between 2k and 2k + 2: the even significand wins
        want = 2 * k if k % 2 == 0 else 2 * k + 2
        assert float(g) == want
        assert float(g) == exact_distance([c], [0], "float32")


@pytest.mark.parametrize("fmt", STORAGE)
@settings(max_examples=40)
@given(data=st.data())
def test_cdist_exact_hypothesis(fmt, data):
    """Any finite values, including huge ones (distances overflow to inf) and subnormals."""
    d = data.draw(st.integers(1, 4))
    finite = values(fmt).filter(math.isfinite)
    x = np.array(data.draw(st.lists(finite, min_size=2 * d, max_size=2 * d)), dtype=np.float64)
    y = np.array(data.draw(st.lists(finite, min_size=d, max_size=d)), dtype=np.float64)
    x = x.astype(SPECS[fmt][0]).reshape(2, d)
    y = y.astype(SPECS[fmt][0]).reshape(1, d)
    check_same(cdist(x, y, variant="exact"), exact_cdist(x, y, fmt), fmt, "hypothesis")


def test_cdist_nonfinite_coordinates():
    x = np.array([[1.0, np.nan], [np.inf, 0.0], [1.0, 2.0]], dtype=np.float32)
    y = np.array([[0.0, 0.0], [np.inf, 0.0]], dtype=np.float32)
    for variant in ("direct", "exact"):
        d = cdist(x, y, variant=variant)
        assert np.isnan(d[0]).all()
        assert d[1, 0] == np.inf and np.isnan(d[1, 1])  # inf - inf
        assert d[2, 0] == np.float32(math.sqrt(5.0)) and d[2, 1] == np.inf


def test_cdist_of_points_without_coordinates_is_zero_in_every_variant():
    """Issue 36: points of width 0 (the distance of empty vectors: 0) crashed the direct
    variant, and compare with it, with "cannot reshape array of size 0 into shape (0)"."""
    x = np.zeros((3, 0), np.float32)
    for variant in ("expanded", "direct", "exact"):
        d = cdist(x, x[:2], variant=variant)
        assert d.shape == (3, 2) and not d.any(), variant


@needs_pandas
def test_compare_of_cdist_without_coordinates_agrees_everywhere():
    """The same points of width 0 through compare (which crashed with the direct variant)."""
    x = np.zeros((3, 0), np.float32)
    t = fpx.compare("cdist", inputs=(x, x)).table
    assert (t["max_abs_ulp"] == 0).all()


def test_cdist_row_sums_equal_fpx_sum_in_every_order():
    """The reductions run as matmul(t, ones): exactly fpx.sum of each row, in every order."""
    from fpexplore.ops.cdist import _row_sums

    rng = np.random.default_rng(7)
    for fmt, acc in (("float16", "float32"), ("float32", None), ("bfloat16", None)):
        t = fpx.as_format(rng.uniform(0, 2, (3, 37)), fmt)
        info = fpx.format_info(fmt)
        for order in fpx.orders("matmul"):
            if order == "tensor-core":  # a product of its own: not one of cdist's reductions
                with pytest.raises(ValueError, match="unknown order 'tensor-core' for cdist"):
                    cdist(t, t, variant="expanded", order=order)
                continue
            params = {"block": 8} if order in ("blocked", "tree", "tree-strided") else {}
            a = None if order == "exact" else acc  # (correctly rounded: no accumulator)
            red = dict(order=order, accumulate=a, **params)
            got = _row_sums(t, info, red)
            for i in range(t.shape[0]):
                want = fpx.sum(t[i], order, accumulate=a, **params)
                assert same(got[i], want), (fmt, order, i)


def test_cdist_float16_near_duplicates_case_openvino():
    """docs/cases.md section 4: expanded is far worse than direct in float16 for close points."""
    x, y = points("float16", 64, 64, 16, 0, near=True)
    exact = np.diag(cdist(x, y, variant="exact")).astype(np.float64)
    mae = {}
    for acc in (None, "float32"):
        for variant in ("expanded", "direct"):
            d = np.diag(cdist(x, y, variant=variant, accumulate=acc)).astype(np.float64)
            mae[variant, acc] = float(np.mean(np.abs(d - exact)))
    assert mae["expanded", "float32"] == pytest.approx(0.048139095306396484, rel=1e-9)
    assert mae["expanded", None] == pytest.approx(0.060923099517822266, rel=1e-9)
    assert mae["direct", "float32"] == pytest.approx(3.0994415283203125e-06, rel=1e-9)
    assert mae["direct", None] == pytest.approx(6.67572021484375e-06, rel=1e-9)
    for acc in (None, "float32"):
        assert mae["expanded", acc] > 1000 * mae["direct", acc]
    # distances of points to themselves
    assert np.all(np.diag(cdist(x, x, variant="direct")) == 0)
    assert np.all(np.diag(cdist(x, x, variant="exact")) == 0)
    # expanded: float16 throughout rounds the squares of x_norm and the products of x @ x.T
    # alike, so xn - 2*xx + xn is exactly 0; with a float32 accumulator the products stay
    # exact while the squares were rounded to float16 first, and 5 of 64 come out positive
    self16 = np.diag(cdist(x, x, variant="expanded")).astype(np.float64)
    self32 = np.diag(cdist(x, x, variant="expanded", accumulate="float32")).astype(np.float64)
    assert self16.max() == 0.0
    assert self32.max() == 0.1767578125 and np.count_nonzero(self32) == 5


# ----------------------------------------------------------------------------- Adam: slow


def slow_adam(p, g, m, v, step, fmt, variant, moments, lr, beta1, beta2, eps, wd=0.0):
    """The documented formulas, element by element, in NumPy scalars of fmt."""
    S = Scalar(fmt)

    def c(x):
        return rn(x, fmt)

    bc1 = 1.0 - beta1**step
    bc2 = 1.0 - beta2**step
    w = c(1.0 - beta1)
    outs = [np.empty(p.shape, SPECS[fmt][0]) for _ in range(3)]
    for i in np.ndindex(p.shape):
        gi = g[i] if wd == 0 else S.add(g[i], S.mul(c(wd), p[i]))
        diff = S.sub(gi, m[i])
        if moments == "mul-add":
            m1 = S.add(S.mul(c(beta1), m[i]), S.mul(w, gi))
        elif moments == "lerp":
            if abs(float(w)) < 0.5:
                m1 = S.add(m[i], S.mul(w, diff))
            else:
                m1 = S.sub(gi, S.mul(diff, S.sub(c(1.0), w)))
        elif abs(float(w)) < 0.5:
            m1 = S.fma(w, diff, m[i])
        else:
            m1 = S.fma(S.sub(w, c(1.0)), diff, gi)
        if variant == "torch":  # addcmul_: fma(RN(c(1 - beta2) * g), g, RN(c(beta2) * v))
            v1 = S.fma(S.mul(c(1.0 - beta2), gi), gi, S.mul(c(beta2), v[i]))
        else:
            v1 = S.add(S.mul(c(beta2), v[i]), S.mul(S.mul(c(1.0 - beta2), gi), gi))
        if variant == "torch":
            den = S.add(S.div(S.sqrt(v1), c(math.sqrt(bc2))), c(eps))
            p1 = S.add(p[i], S.div(S.mul(c(-(lr / bc1)), m1), den))
        else:
            mh = S.div(m1, c(bc1))
            den = S.add(S.sqrt(S.div(v1, c(bc2))), c(eps))
            if variant == "mul-then-div":
                p1 = S.sub(p[i], S.div(S.mul(c(lr), mh), den))
            elif variant == "div-then-mul":
                p1 = S.sub(p[i], S.mul(c(lr), S.div(mh, den)))
            else:
                p1 = S.fma(-c(lr), S.div(mh, den), p[i])
        outs[0][i], outs[1][i], outs[2][i] = p1, m1, v1
    return outs


def exact_adam(p, g, m, v, step, fmt, lr, beta1, beta2, eps, wd=0.0):
    """Fractions for m', v'; mpmath at 400 bits for param' with a decided-rounding check."""
    B1, B2 = Fraction(beta1), Fraction(beta2)
    bc1, bc2 = 1 - B1**step, 1 - B2**step

    def mp(q):
        return mpmath.mpf(q.numerator) / q.denominator

    with mpmath.workprec(400):
        mbc1, mbc2 = mp(bc1), mp(bc2)
    outs = [np.empty(p.shape, SPECS[fmt][0]) for _ in range(3)]
    for i in np.ndindex(p.shape):
        P = Fraction(float(p[i]))
        G = Fraction(float(g[i])) + Fraction(wd) * P
        M1 = B1 * Fraction(float(m[i])) + (1 - B1) * G
        V1 = B2 * Fraction(float(v[i])) + (1 - B2) * G * G
        assert M1 != 0 and V1 > 0  # the data below avoid signed-zero corner cases
        with mpmath.workprec(400):
            den = mpmath.sqrt(mp(V1) / mbc2) + mpmath.mpf(eps)
            U = mpmath.mpf(lr) * (mp(M1) / mbc1) / den
            P1 = mpf_fraction(mpmath.mpf(float(p[i])) - U)
            delta = (abs(P) + abs(mpf_fraction(U))) / 2**380
        lo = oracle.round_fraction(P1 - delta, fmt)
        hi = oracle.round_fraction(P1 + delta, fmt)
        assert lo == hi, "rounding not decided at 400 bits"
        outs[0][i] = oracle.to_format(lo, fmt)
        outs[1][i] = rn(M1, fmt)
        outs[2][i] = rn(V1, fmt)
    return outs


def adam_data(fmt, n, seed, step=3, scale=1.0):
    """Realistic state: param ~ N(0, scale), m and v after `step` - 1 steps of N(0, 1) grads
    (computed in float64, then rounded), and the next gradient."""
    rng = np.random.default_rng(seed)
    grads = rng.normal(0, 1, (step, n))
    m = np.zeros(n)
    v = np.zeros(n)
    for gk in grads[:-1]:
        m = 0.9 * m + 0.1 * gk
        v = 0.999 * v + 0.001 * gk * gk
    p = rng.normal(0, scale, n)
    return tuple(fpx.as_format(a, fmt) for a in (p, grads[-1], m, v))


HYPER = dict(lr=1e-3, beta1=0.9, beta2=0.999, eps=1e-8)


# ----------------------------------------------------------------------------- Adam: tests


@pytest.mark.parametrize("moments", list(ADAM_MOMENTS))
@pytest.mark.parametrize("variant", ["div-then-mul", "div-then-mul+fma", "mul-then-div", "torch"])
@pytest.mark.parametrize("fmt", STORAGE)
def test_adam_variants_match_slow_definition(fmt, variant, moments):
    cases = [
        (HYPER, 3, 0.0),
        (dict(lr=3e-2, beta1=0.3, beta2=0.99, eps=1e-3), 1, 0.0),  # lerp weight 0.7 >= 0.5
        (dict(lr=1e-2, beta1=0.5, beta2=0.9, eps=1e-4), 2000, 1e-2),  # weight decay, late step
    ]
    for k, (hp, step, wd) in enumerate(cases):
        p, g, m, v = adam_data(fmt, 60, 10 + k, step=min(step, 3))
        got = adam_step(p, g, m, v, step, variant=variant, moments=moments, weight_decay=wd, **hp)
        want = slow_adam(p, g, m, v, step, fmt, variant, moments, wd=wd, **hp)
        for name, gv, wv in zip(("param", "m", "v"), got, want):
            check_same(gv, wv, fmt, (variant, moments, k, name))


@pytest.mark.parametrize("fmt", STORAGE)
def test_adam_exact_against_fraction_mpmath(fmt):
    n = 40 if fmt == "float64" else 300
    cases = [(HYPER, 3, 0.0, 1.0), (HYPER, 1, 0.0, 0.02), (HYPER, 5000, 0.0, 1.0)]
    cases.append((dict(lr=1e-2, beta1=0.3, beta2=0.95, eps=1e-6), 7, 0.1, 1.0))
    for k, (hp, step, wd, scale) in enumerate(cases):
        p, g, m, v = adam_data(fmt, n, 20 + k, step=3, scale=scale)
        got = adam_step(p, g, m, v, step, variant="exact", weight_decay=wd, **hp)
        want = exact_adam(p, g, m, v, step, fmt, wd=wd, **hp)
        for name, gv, wv in zip(("param", "m", "v"), got, want):
            check_same(gv, wv, fmt, ("exact", k, name))


@pytest.mark.parametrize("fmt", ["float16", "bfloat16", "float32"])
def test_adam_exact_moments_near_midpoints(fmt):
    """m' = 0.9 m + 0.1 g is dyadic, often a midpoint of fmt, when 9m + g is a multiple of
    5 (in units of its last place): only the tiny representation error of the float 0.9
    decides the rounding. Every such element must still be correctly rounded."""
    rng = np.random.default_rng(30)
    m = fpx.as_format(rng.normal(0, 0.1, 400), fmt)
    g = fpx.as_format(rng.normal(0, 1, 400), fmt)
    p = fpx.as_format(rng.normal(0, 1, 400), fmt)
    v = fpx.as_format(rng.uniform(0.001, 0.01, 400), fmt)
    got = adam_step(p, g, m, v, 2, variant="exact", **HYPER)
    want = exact_adam(p, g, m, v, 2, fmt, **HYPER)
    for name, gv, wv in zip(("param", "m", "v"), got, want):
        check_same(gv, wv, fmt, ("midpoints", name))
    # with the decimal coefficients 9/10 and 1/10 many of these are exact midpoints
    ties = sum(
        is_midpoint(
            Fraction(9, 10) * Fraction(float(a)) + Fraction(1, 10) * Fraction(float(b)), fmt
        )
        for a, b in zip(m, g)
    )
    assert ties > 10


def is_midpoint(q: Fraction, fmt) -> bool:
    """q lies exactly halfway between two neighbours of fmt."""
    r = Fraction(oracle.round_fraction(q, fmt))
    return q != r and abs(q - r) * 2 == Fraction(oracle.ulp(float(r), fmt))


@pytest.mark.parametrize("fmt", ["float16", "bfloat16", "float32"])
def test_adam_exact_interval_path_in_every_format(fmt, monkeypatch):
    """Force the exact-rational / mpmath-interval path for every element (float64 always
    takes it; narrower formats only where the float64 bounds leave an element undecided)."""
    from fpexplore.ops import adam_exact

    monkeypatch.setattr(adam_exact, "_adam_bounds", lambda P, *a: np.ones(P.size, bool))
    for k, (hp, step, wd) in enumerate([(HYPER, 2, 0.0), (HYPER, 5000, 0.01)]):
        p, g, m, v = adam_data(fmt, 60, 50 + k)
        got = adam_step(p, g, m, v, step, variant="exact", weight_decay=wd, **hp)
        want = exact_adam(p, g, m, v, step, fmt, wd=wd, **hp)
        for name, gv, wv in zip(("param", "m", "v"), got, want):
            check_same(gv, wv, fmt, ("interval", k, name))


def test_adam_signed_zeros_and_nonfinite():
    f = np.float32
    p = np.array([-0.0, 0.0, 1.0, np.nan, 1.0, 2.0], dtype=f)
    g = np.array([0.0, -0.0, 0.0, 1.0, np.inf, 1.0], dtype=f)
    m = np.zeros(6, dtype=f)
    v = np.zeros(6, dtype=f)
    for variant in ("exact", "div-then-mul", "mul-then-div", "div-then-mul+fma"):
        p1, m1, v1 = adam_step(p, g, m, v, 1, variant=variant, **HYPER)
        # zero gradient and moments: the update is +0; p - (+0) keeps -0.0
        assert same(p1[0], f(-0.0)) and same(p1[1], f(0.0)) and p1[2] == 1.0, variant
        assert same(m1[1], f(0.0))  # 0.9*0 + 0.1*(-0) = +0 + -0 = +0
        assert np.isnan(p1[3]) and np.isnan(p1[4]), variant
        assert m1[4] == np.inf and v1[4] == np.inf


def test_adam_pass_rate_case_ascend():
    """docs/cases.md section 5: the two operation orders agree on most, not all, float32 params."""
    rng = np.random.default_rng(0)
    n = 10**5
    p = rng.normal(0, 1, n).astype(np.float32)
    grads = rng.normal(0, 1, (5, n)).astype(np.float32)
    m = np.zeros(n, np.float32)
    v = np.zeros(n, np.float32)
    for s in range(1, 5):
        p, m, v = adam_step(p, grads[s - 1], m, v, s, **HYPER)
    a = adam_step(p, grads[4], m, v, 5, variant="div-then-mul", **HYPER)
    b = adam_step(p, grads[4], m, v, 5, variant="mul-then-div", **HYPER)
    rate = pass_rate(a[0], b[0])
    assert 0.99 < rate < 1.0
    assert rate == 0.99906  # 94 of 10**5 elements differ
    assert pass_rate(a[1], b[1]) == 1.0 and pass_rate(a[2], b[2]) == 1.0  # same moments
    # the differing elements are close: mostly one ulp apart, more where |param| is small
    # and the update dominates
    ulps = np.abs(fpx.ulp_distance(a[0], b[0]))
    assert np.bincount(ulps).tolist() == [99906, 88, 2, 0, 3, 0, 0, 0, 1]
    # against the correctly rounded step neither order is right everywhere; the FMA form is
    # the closest
    exact = adam_step(p, grads[4], m, v, 5, variant="exact", **HYPER)[0]
    rates = {
        name: pass_rate(adam_step(p, grads[4], m, v, 5, variant=name, **HYPER)[0], exact)
        for name in ("div-then-mul", "mul-then-div", "div-then-mul+fma", "torch")
    }
    assert rates == {
        "div-then-mul": 0.99679,
        "mul-then-div": 0.99692,
        "div-then-mul+fma": 0.99716,
        "torch": 0.99687,  # moments lerp-fma, v by the fused addcmul (was 0.99684)
    }


def test_adam_pass_rates_over_steps_grow_apart():
    rng = np.random.default_rng(0)
    n = 10**5
    p = rng.normal(0, 1, n).astype(np.float32)
    grads = rng.normal(0, 1, (50, n)).astype(np.float32)
    rates = adam_pass_rates(p, grads, **HYPER)
    assert rates.shape == (50,)
    assert rates[0] == 0.99938 and rates[9] == 0.9929 and rates[49] == 0.98141
    assert np.all(rates < 1.0) and rates[49] < rates[9] < rates[0]
    # the same through dict specs and an iterable of gradients
    same_rates = adam_pass_rates(
        p, list(grads[:5]), a={"variant": "div-then-mul"}, b={"variant": "mul-then-div"}, **HYPER
    )
    assert np.array_equal(same_rates, rates[:5])
    assert np.all(adam_pass_rates(p, grads[:3], a="mul-then-div", b="mul-then-div", **HYPER) == 1)


def test_adam_run_is_repeated_steps():
    p, _, _, _ = adam_data("float32", 50, 40)
    grads = fpx.as_format(np.random.default_rng(41).normal(size=(4, 50)), "float32")
    steps = list(adam_run(p, grads, variant="mul-then-div", moments="mul-add", **HYPER))
    assert [s for s, *_ in steps] == [1, 2, 3, 4]
    q, m, v = p, np.zeros_like(p), np.zeros_like(p)
    for k, (s, ps, ms, vs) in enumerate(steps):
        q, m, v = adam_step(
            q, grads[k], m, v, s, variant="mul-then-div", moments="mul-add", **HYPER
        )
        assert np.array_equal(q, ps) and np.array_equal(m, ms) and np.array_equal(v, vs)


def test_adam_run_and_pass_rates_bad_input():
    p = np.ones(3, np.float32)
    with pytest.raises(ValueError, match="valid variants"):
        adam_run(p, [p], variant="adamw", **HYPER)  # at the call, not at the first step
    with pytest.raises(ValueError, match="beta1 must be in"):
        adam_run(p, [p], **dict(HYPER, beta1=1.5))
    with pytest.raises(TypeError, match="first_step must be|step must be an integer"):
        adam_run(p, [p], first_step=0.5, **HYPER)
    with pytest.raises(ValueError, match="a must be a variant name or a dict"):
        adam_pass_rates(p, [p], a={"variant": "div-then-mul", "fma": True}, **HYPER)
    with pytest.raises(ValueError, match="valid: lerp"):
        adam_pass_rates(p, [p], b={"variant": "mul-then-div", "moments": "x"}, **HYPER)


def test_pass_rate_semantics():
    a = np.array([1.0, np.nan, -0.0, 2.0], dtype=np.float32)
    b = np.array([1.0, np.nan, 0.0, 3.0], dtype=np.float32)
    assert pass_rate(a, b) == 0.5  # NaN == NaN; -0.0 and +0.0 differ
    assert math.isnan(pass_rate(a[:0], b[:0]))
    with pytest.raises(ValueError, match="shapes"):
        pass_rate(a, b[:3])
    with pytest.raises(TypeError, match="mixed formats"):
        pass_rate(a, b.astype(np.float64))


# ----------------------------------------------------------------------------- registry, errors


def test_registry_lists_the_variants():
    spec = registry.get("cdist")
    table = spec.variants
    assert list(table) == ["expanded", "direct", "exact"]
    assert table["exact"].kind == "exact" and table["direct"].kind == "formula"
    spec = registry.get("adam_step")
    desc, table = spec.description, spec.variants
    assert list(table) == ["div-then-mul", "div-then-mul+fma", "mul-then-div", "torch", "exact"]
    # m and v equal torch.optim.Adam's bit for bit (tests/test_adam_torch.py, recorded runs):
    # a library variant that says what it was verified against
    assert table["torch"].kind == "library"
    assert "torch 2.14.1" in table["torch"].description
    assert all(name in desc for name in ADAM_MOMENTS)


def test_cdist_bad_input():
    x = np.ones((3, 2), np.float32)
    with pytest.raises(ValueError, match="valid variants: expanded, direct, exact"):
        cdist(x, x, variant="naive")
    with pytest.raises(ValueError, match="same number of columns"):
        cdist(x, np.ones((3, 4), np.float32))
    with pytest.raises(ValueError, match="2-D"):
        cdist(x[0], x)
    with pytest.raises(TypeError, match="mixed formats"):
        cdist(x, x.astype(np.float64))
    with pytest.raises(TypeError, match="integer"):
        cdist(np.ones((3, 2), np.int64), np.ones((3, 2), np.int64))
    with pytest.raises(ValueError, match="valid orders: sequential"):
        cdist(x, x, order="numpy")
    with pytest.raises(ValueError, match="does not apply to cdist variant 'direct'"):
        cdist(x, x, variant="direct", fma=True)
    with pytest.raises(ValueError, match="does not change order"):
        cdist(x, x, variant="expanded", fma=True, order="pairwise")
    with pytest.raises(ValueError, match="valid formats"):
        cdist(x, x, accumulate="float8")
    with pytest.raises(ValueError, match="input rounding"):
        cdist(x, x, accumulate="tf32")
    with pytest.raises(TypeError, match="True or False"):
        cdist(x, x, clamp=1)
    with pytest.raises(TypeError, match=r"unknown keyword\(s\) block: .*\(sequential: none\)"):
        cdist(x, x, order="sequential", block=4)
    # arguments a variant does not use are refused, not ignored (they are named)
    for kw in (
        {"order": "pairwise"},
        {"order": "sequential"},
        {"accumulate": "float64"},
        {"fma": False},
        {"clamp": True},
        {"order": "blocked", "block": 4},
    ):
        with pytest.raises(
            ValueError, match=f"^cdist: `{next(iter(kw))}` does not apply .*'exact'"
        ):
            cdist(x, x, variant="exact", **kw)
    with pytest.raises(ValueError, match="^cdist: `clamp` does not apply to variant 'direct'"):
        cdist(x, x, variant="direct", clamp=False)
    assert cdist(x[:0], x).shape == (0, 3)
    assert np.all(cdist(x[:, :0], x[:, :0]) == 0)


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"variant": "fast"}, ValueError, "valid variants: div-then-mul, div-then-mul"),
        ({"moments": "ema"}, ValueError, "valid: lerp, lerp-fma, mul-add"),
        ({"lr": -1e-3}, ValueError, "lr must be >= 0"),
        ({"lr": math.nan}, ValueError, "lr must be finite"),
        ({"lr": "0.1"}, TypeError, "lr must be a real number"),
        # not rounded to a float silently: the exact variant would use another lr
        ({"lr": Fraction(1, 3)}, TypeError, "not exactly representable as a float"),
        ({"beta2": np.longdouble(1) / 3}, TypeError, "beta2=.* not exactly representable"),
        ({"beta1": 1.0}, ValueError, r"beta1 must be in \[0, 1\)"),
        ({"beta2": -0.1}, ValueError, r"beta2 must be in \[0, 1\)"),
        ({"eps": 0.0}, ValueError, "eps must be > 0"),
        ({"eps": math.inf}, ValueError, "eps must be finite"),
        ({"weight_decay": -1.0}, ValueError, "weight_decay must be >= 0"),
        ({"step": 0}, ValueError, "step must be from 1 to"),
        ({"step": 1.5}, TypeError, "step must be an integer"),
        ({"step": True}, TypeError, "step must be an integer"),
    ],
)
def test_adam_bad_input(kwargs, error, match):
    a = np.ones(4, np.float32)
    args = dict(HYPER, step=1)
    args.update(kwargs)
    step = args.pop("step")
    with pytest.raises(error, match=match):
        adam_step(a, a, a, a, step, **args)


def test_adam_bad_arrays():
    a = np.ones(4, np.float32)
    with pytest.raises(ValueError, match="same shape"):
        adam_step(a, a[:3], a, a, 1, **HYPER)
    with pytest.raises(TypeError, match="mixed formats"):
        adam_step(a, a.astype(np.float64), a, a, 1, **HYPER)
    with pytest.raises(TypeError, match="integer"):
        adam_step(np.ones(4, np.int32), a, a, a, 1, **HYPER)
    # Python scalars and lists adopt the format only when exact
    p1, _, _ = adam_step(a, [1.0, 2.0, 3.0, 4.0], a, a, 1, **HYPER)
    assert p1.dtype == np.float32
    with pytest.raises(TypeError, match="not exactly representable"):
        adam_step(a, [0.1, 0.2, 0.3, 0.4], a, a, 1, **HYPER)
    # 0-d inputs give NumPy scalars
    p0, m0, v0 = adam_step(np.float32(1), np.float32(0.5), np.float32(0), np.float32(0), 1, **HYPER)
    assert isinstance(p0, np.float32) and isinstance(m0, np.float32)


def _adam_div_then_mul_f32(p, g, m, v, step, lr, beta1, beta2, eps):
    """div-then-mul with lerp moments, written out in float32 NumPy (each op rounded once)."""
    f = np.float32
    w = f(1.0 - beta1)
    m1 = m + w * (g - m)  # |w| < 0.5: lerp's first branch
    v1 = f(beta2) * v + (f(1.0 - beta2) * g) * g
    m_hat = m1 / f(1.0 - beta1**step)
    v_hat = v1 / f(1.0 - beta2**step)
    return p - f(lr) * (m_hat / (np.sqrt(v_hat) + f(eps)))


@needs_pandas
@pytest.mark.parametrize("step", [1, 2, 7, 1000])
def test_adam_compare_runs_the_step_asked_for(step):
    """compare('adam_step') ran step 2 whatever the data (issue 36): ``step=`` (or the
    inputs' hyper["step"]) is the step's number, checked against a float32 NumPy oracle."""
    rng = np.random.default_rng(3)
    p, g, m = (rng.standard_normal(64).astype(np.float32) for _ in range(3))
    v = np.abs(rng.standard_normal(64)).astype(np.float32)
    want = _adam_div_then_mul_f32(p, g, m, v, step, **HYPER)
    inputs = {"param": p, "grad": g, "m": m, "v": v, "hyper": dict(HYPER)}
    c = fpx.compare("adam_step", inputs=inputs, variants=["div-then-mul"], step=step)
    assert np.array_equal(
        c.results[("div-then-mul", "emulated")].view(np.uint32), want.view(np.uint32)
    )
    c = fpx.compare(
        "adam_step", inputs={**inputs, "hyper": {**HYPER, "step": step}}, variants=["div-then-mul"]
    )
    assert np.array_equal(
        c.results[("div-then-mul", "emulated")].view(np.uint32), want.view(np.uint32)
    )
    # generated data: the step is a parameter too, kept with the inputs
    c = fpx.compare("adam_step", n=8, variants=["div-then-mul"], step=step)
    assert c.inputs["hyper"]["step"] == step
    d = c.inputs
    want = _adam_div_then_mul_f32(d["param"], d["grad"], d["m"], d["v"], step, **HYPER)
    assert np.array_equal(
        c.results[("div-then-mul", "emulated")].view(np.uint32), want.view(np.uint32)
    )


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"step": 0}, ValueError, "step must be from 1 to"),
        ({"step": 2.0}, TypeError, "step must be an integer"),
        ({"step": 10**400}, ValueError, "step must be"),
        ({"hyper_step": -1}, ValueError, r"hyper\[.step.\] must be from 1"),
        ({"step": 3, "hyper_step": 4}, ValueError, "step=3 but the inputs' hyper says step 4"),
        ({"hyper_extra": 1.0}, ValueError, "hyper takes lr, .* unknown 'betas'"),
        ({"hyper_only_lr": 1}, ValueError, "hyper takes lr, .*; missing beta1, beta2, eps$"),
    ],
)
@needs_pandas
def test_adam_compare_step_checked(kwargs, error, match):
    a = np.ones(4, np.float32)
    hyper = dict(HYPER)
    if "hyper_step" in kwargs:
        hyper["step"] = kwargs.pop("hyper_step")
    if kwargs.pop("hyper_extra", None):
        hyper["betas"] = (0.9, 0.999)
    if kwargs.pop("hyper_only_lr", None):
        hyper = {"lr": 1e-3}
    inputs = {"param": a, "grad": a, "m": a, "v": a, "hyper": hyper}
    with pytest.raises(error, match=match):
        fpx.compare("adam_step", inputs=inputs, **kwargs)


def test_adam_step_beyond_int64_refused():
    a = np.ones(4, np.float32)
    with pytest.raises(ValueError, match="step must be"):
        adam_step(a, a, a, a, 10**400, **HYPER)  # was Python's OverflowError, unnamed


@needs_pandas
def test_compare_adam_step_with_moments_given_as_an_op_parameter():
    """Pass 25: compare("adam_step", moments="mul-add") failed on "the variant 'exact'
    takes no moments=" (compare lists moments among its keywords): the exact step takes
    none, the variants take it. The same numbers as the spec form
    div-then-mul(moments=mul-add), and as adam_step itself."""
    c = fpx.compare("adam_step", n=16, moments="mul-add", variants=["div-then-mul"])
    d = fpx.compare("adam_step", n=16, variants=["div-then-mul(moments=mul-add)"])
    got = c.results[("div-then-mul", "emulated")]
    assert np.array_equal(got, d.results[("div-then-mul(moments=mul-add)", "emulated")])
    i, h = c.inputs, dict(c.inputs["hyper"])
    step = h.pop("step")
    own = fpx.adam_step(
        i["param"], i["grad"], i["m"], i["v"], step, variant="div-then-mul", moments="mul-add", **h
    )
    assert np.array_equal(got, own[0])
    assert c.reference.tobytes() == d.reference.tobytes()


@needs_pandas
def test_a_dot_sweeps_worst_case_bounds_hold_for_two_float16_terms():
    """Pass 25: sweep's worst case for a dot was a sum's, gamma_(n-1) sum |a_i b_i|; a
    sequential float16 dot of two terms exceeded it 1.66 times (each product is rounded
    too: Higham eq. 3.4 gives gamma_n, and gamma_(ceil(log2 n) + 1) for pairwise). Oracle:
    Fraction, the error of a loop rounding each product and each addition to float16."""
    a = np.array([1.7099609375, 1.1025390625], np.float16)
    b = np.array([1.4775390625, 1.34765625], np.float16)
    p = [np.float16(x * y) for x, y in zip(a, b)]  # each product rounded (float16 * float16)
    loop = np.float16(p[0] + p[1])
    exact = sum(Fraction(float(x)) * Fraction(float(y)) for x, y in zip(a, b))
    err = abs(Fraction(float(loop)) - exact)
    u = Fraction(1, 2**11)
    S = sum(abs(Fraction(float(x)) * Fraction(float(y))) for x, y in zip(a, b))
    assert err > u / (1 - u) * S  # beyond gamma_1 S, the sum's bound for n = 2
    from fpexplore.ops.registry import get

    own = get("dot").bounds_of({"a": a, "b": b}, "float16")  # what sweep draws, per seed
    assert own["worst_sequential"] == pytest.approx(float(2 * u / (1 - 2 * u) * S))
    assert own["worst_pairwise"] == own["worst_sequential"] and own["worst_sequential"] >= err
    sw = fpx.sweep("dot", sizes=[2, 100], seeds=1, format="float16", progress=False)
    assert (sw.bounds["worst_sequential"] >= sw.bounds["worst_pairwise"]).all()
