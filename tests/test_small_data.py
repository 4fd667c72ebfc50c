"""Data in FP8, FP6 and FP4 (ml_dtypes arrays): sum, dot, their exact forms, compare and the
bit helpers, against an oracle that knows the formats only through ml_dtypes' enumeration of
their bit patterns and Fraction arithmetic (nothing of fpexplore's rounding)."""

from __future__ import annotations

import math
from decimal import Decimal
from fractions import Fraction

import ml_dtypes
import numpy as np
import pytest

import fpexplore as fpx

from oracle import ML_TYPES

# the OCP formats (with -0; not AMD's FNUZ FP8 or E8M0): ml_dtypes' types
OCP = {
    k: ML_TYPES[k]
    for k in ("float8_e4m3", "float8_e5m2", "float6_e2m3", "float6_e3m2", "float4_e2m1")
}
# past the largest value: OCP FP8 E4M3 has no infinity (NaN), E5M2 is IEEE-like (inf), the
# MX element formats FP6 and FP4 have neither and saturate (OCP MX v1.0; docs/api.md)
BEYOND = {"float8_e4m3": math.nan, "float8_e5m2": math.inf}


def positives(t) -> list[tuple[Fraction, int]]:
    """(value, bit pattern) of every finite value > 0, ascending: patterns 1, 2, ... read by
    ml_dtypes (positive patterns ascend with the value)."""
    width = ml_dtypes.finfo(t).bits
    out = []
    for p in range(1, 1 << (width - 1)):
        v = float(np.array(p, np.uint8).view(t))
        if math.isfinite(v):
            out.append((Fraction(v), p))
    return out


TABLES = {name: positives(t) for name, t in OCP.items()}


def rnd(q: Fraction, name: str) -> float:
    """q rounded to nearest, ties to the even bit pattern; past the largest value as the
    format says (rounded with an unbounded exponent first: e4m3's 464 ties down to 448)."""
    if q == 0:
        return 0.0
    table = TABLES[name]
    a = abs(q)
    top, top_bits = table[-1]
    gap = top - table[-2][0]
    if a >= top:
        beyond = a > top + gap / 2 or (a == top + gap / 2 and top_bits % 2 == 1)
        v = BEYOND.get(name, float(top)) if beyond else float(top)
    else:
        lo, lo_bits = max(((v, b) for v, b in table if v <= a), default=(Fraction(0), 0))
        hi, _ = min((v, b) for v, b in table if v > a)
        if a - lo < hi - a or (a - lo == hi - a and lo_bits % 2 == 0):
            v = float(lo)
        else:
            v = float(hi)
    return -v if q < 0 else v


def add(a: float, b: float, name: str) -> float:
    if not (math.isfinite(a) and math.isfinite(b)):
        return a + b
    q = Fraction(a) + Fraction(b)
    if q == 0:  # an exact zero: -0 only from -0 + -0
        return -0.0 if math.copysign(1, a) < 0 and math.copysign(1, b) < 0 else 0.0
    return rnd(q, name)


def sequential(terms, name):
    acc = terms[0]
    for v in terms[1:]:
        acc = add(acc, v, name)
    return acc


def pairwise(terms, name):
    if len(terms) == 1:
        return terms[0]
    h = len(terms) // 2
    return add(pairwise(terms[:h], name), pairwise(terms[h:], name), name)


def ordinal(v: float, name: str) -> int:
    """The value's place among the format's values (0 for zero, negative below)."""
    pats = {float(w): b for w, b in TABLES[name]}
    return pats.get(abs(v), 0) * (1 if v >= 0 else -1)


def same(got, want: float) -> bool:
    got = float(got)
    return (math.isnan(got) and math.isnan(want)) or (
        got == want and math.copysign(1, got) == math.copysign(1, want)
    )


def draw(name: str, rng, n: int) -> np.ndarray:
    """n values of the format, in its ml_dtypes type: every finite value of either sign."""
    vals = [float(v) for v, _ in TABLES[name]]
    vals = np.array(vals + [-v for v in vals] + [0.0])
    return rng.choice(vals, n).astype(OCP[name])


@pytest.mark.parametrize("name", OCP)
def test_sums_and_dots_of_small_arrays_round_each_addition_to_their_format(name):
    """fpx.sum and fpx.dot of an ml_dtypes array accumulate in its format (each product and
    each addition rounded once, to nearest-even, with the format's own end), and return a
    value of its type. They refused these arrays before."""
    rng = np.random.default_rng(len(name))
    t = OCP[name]
    for n in (1, 2, 3, 7, 16, 40):
        for _ in range(15):
            x, y = draw(name, rng, n), draw(name, rng, n)
            terms = [float(v) for v in x]
            products = [rnd(Fraction(float(a)) * Fraction(float(b)), name) for a, b in zip(x, y)]
            products = [p if p else math.copysign(0.0, float(a) * float(b))
                        for p, a, b in zip(products, x, y)]  # fmt: skip
            for order, oracle in (("sequential", sequential), ("pairwise", pairwise)):
                got = fpx.sum(x, order)
                assert got.dtype == t and same(got, oracle(terms, name)), (order, x, got)
                got = fpx.dot(x, y, order)
                assert got.dtype == t and same(got, oracle(products, name)), (order, x, y, got)
            got = fpx.sum(x, "reverse")
            assert same(got, sequential(terms[::-1], name)), ("reverse", x, got)


def _products(a, b, name: str) -> list[float]:
    """Each product rounded once to the format (an exact zero keeps the product's sign)."""
    out = [rnd(Fraction(float(u)) * Fraction(float(v)), name) for u, v in zip(a, b)]
    return [p if p else math.copysign(0.0, float(u) * float(v)) for p, u, v in zip(out, a, b)]


def _zero_of(a, b) -> float:
    """An exact dot of 0: -0 where every product is -0 (IEEE's sum of -0s), else +0."""
    neg = all(math.copysign(1, float(u) * float(v)) < 0 and u * v == 0 for u, v in zip(a, b))
    return -0.0 if neg else 0.0


def _pairwise32(terms):
    """Textbook pairwise in NumPy's float32 (each addition rounded to float32)."""
    if len(terms) == 1:
        return terms[0]
    h = len(terms) // 2
    return np.float32(_pairwise32(terms[:h]) + _pairwise32(terms[h:]))


@pytest.mark.parametrize("name", OCP)
def test_matmuls_of_small_arrays_round_each_product_and_addition_to_their_format(name):
    """fpx.matmul of ml_dtypes arrays (issue 38: they were refused): every element is the
    oracle's dot of its row and column in the order named, each product and each addition
    rounded once to the format; split_k=2 adds the two halves' results; exact is the exact
    dot rounded once; an accumulator given adds in it (float32 here, exact products), the
    result rounded once to the format. An array of ml_dtypes' type each time."""
    rng = np.random.default_rng(7 + len(name))
    t = OCP[name]
    for m, k, n in ((1, 2, 1), (3, 7, 2), (4, 16, 3)):
        for _ in range(3):
            A, B = draw(name, rng, m * k).reshape(m, k), draw(name, rng, k * n).reshape(k, n)
            got = {o: fpx.matmul(A, B, o) for o in ("sequential", "reverse", "pairwise", "exact")}
            got["blocked"] = fpx.matmul(A, B, "blocked", block=3)
            got["split"] = fpx.matmul(A, B, "sequential", split_k=2)
            got["float32"] = fpx.matmul(A, B, "pairwise", accumulate="float32")
            for i in range(m):
                for j in range(n):
                    a, b = A[i], B[:, j]
                    p = _products(a, b, name)
                    h = k // 2
                    blocks = [sequential(p[s : s + 3], name) for s in range(0, k, 3)]
                    wide = _pairwise32([np.float32(u) * np.float32(v) for u, v in zip(a, b)])
                    exact = sum(
                        (Fraction(float(u)) * Fraction(float(v)) for u, v in zip(a, b)), Fraction(0)
                    )
                    want = {
                        "sequential": sequential(p, name),
                        "reverse": sequential(p[::-1], name),
                        "pairwise": pairwise(p, name),
                        "exact": rnd(exact, name) if exact else _zero_of(a, b),
                        "blocked": sequential(blocks, name),
                        "split": add(sequential(p[:h], name), sequential(p[h:], name), name),
                        "float32": rnd(Fraction(float(wide)), name) if wide else float(wide),
                    }  # fmt: skip
                    for order, g in got.items():
                        assert g.dtype == t and g.shape == (m, n), order
                        assert same(g[i, j], want[order]), (order, a, b, g[i, j], want[order])


@pytest.mark.parametrize("name", OCP)
def test_means_of_small_arrays_sum_in_their_format_then_divide_once(name):
    """fpx.mean of an ml_dtypes array (issue 38: refused before): the sum in its format
    (sequential or pairwise, each addition rounded), then / n rounded once; exact: the
    exact mean rounded once. NumPy's own np.mean is no variant of such data (it says so);
    compare's rows are the oracle's."""
    rng = np.random.default_rng(17 + len(name))
    t = OCP[name]
    for n in (1, 2, 3, 7, 40):
        for _ in range(8):
            x = draw(name, rng, n)
            terms = [float(v) for v in x]
            exact = sum(map(Fraction, terms), Fraction(0)) / n
            neg = all(math.copysign(1, v) < 0 for v in terms)  # (all -0: the exact sum -0)
            want_exact = rnd(exact, name) if exact else (-0.0 if neg else 0.0)
            for order, oracle in (("sequential", sequential), ("pairwise", pairwise)):
                s = oracle(terms, name)
                want = rnd(Fraction(s) / n, name) if s and math.isfinite(s) else s
                got = fpx.mean(x, variant=order)
                assert got.dtype == t and same(got, want), (order, x, got, want)
            assert same(fpx.mean(x, variant="exact"), want_exact), (x, want_exact)
    with pytest.raises(ValueError, match=rf"variant 'numpy' does not take {name} data"):
        fpx.mean(x)
    empty = np.zeros(0, t)  # NaN as NumPy's mean of nothing; FP6 and FP4 have none
    if name.startswith("float8"):
        assert math.isnan(float(fpx.mean(empty, variant="pairwise")))
    else:
        with pytest.raises(ValueError, match=rf"mean of no {name} values: NaN, which {name} "):
            fpx.mean(empty, variant="pairwise")
    cmp = fpx.compare("mean", n=300, format=name, variants=["sequential", "pairwise"], seed=4)
    terms = [float(v) for v in cmp.inputs["x"]]
    for order, oracle in (("sequential", sequential), ("pairwise", pairwise)):
        s = oracle(terms, name)
        want = rnd(Fraction(s) / 300, name) if s and math.isfinite(s) else s
        assert same(cmp.results[(order, "emulated")], want), order


def mul(a: float, b: float, name: str) -> float:
    if not (math.isfinite(a) and math.isfinite(b)) or a == 0 or b == 0:
        return a * b  # (inf * 0 is NaN; signed zeros by IEEE's sign rule)
    return rnd(Fraction(a) * Fraction(b), name)


def by_count(s: float, n: int, name: str) -> float:
    return rnd(Fraction(s) / n, name) if s and math.isfinite(s) else s


def variance_oracle(terms, variant: str, order, name: str) -> float:
    """two-pass and one-pass as docs/api.md writes them, every operation rounded to name."""
    n = len(terms)
    if variant == "two-pass":
        mean = by_count(order(terms, name), n, name)
        d = [add(v, -mean, name) for v in terms]
        return by_count(order([mul(e, e, name) for e in d], name), n, name)
    s1 = order(terms, name)
    s2 = order([mul(v, v, name) for v in terms], name)
    t = by_count(mul(s1, s1, name), n, name)
    return by_count(add(s2, -t, name), n, name)


@pytest.mark.parametrize("name", OCP)
def test_variances_of_small_arrays_compute_in_their_format(name):
    """fpx.variance of an ml_dtypes array (issue 38: refused before): two-pass and one-pass
    with every operation rounded to its format, the sums sequential or pairwise; exact: the
    exact variance rounded once (Fraction); E4M3 past 448 is NaN, FP6 and FP4 saturate.
    Welford and np.var are no variants of such data (they say so); compare's rows are the
    oracle's."""
    rng = np.random.default_rng(29 + len(name))
    t = OCP[name]
    orders = {"sequential": sequential, "pairwise": pairwise}
    for n in (2, 3, 7, 40):
        for k in range(10):
            x = draw(name, rng, n)
            if k % 2:  # values near 1 too: mostly finite variances
                x = (x.astype(np.float32) % 4).astype(t)
            terms = [float(v) for v in x]
            for variant in ("two-pass", "one-pass"):
                for order, oracle in orders.items():
                    want = variance_oracle(terms, variant, oracle, name)
                    got = fpx.variance(x, variant=variant, order=order)
                    assert got.dtype == t and same(got, want), (variant, order, x, got, want)
            q = [Fraction(v) for v in terms]
            mean = sum(q, Fraction(0)) / n
            exact = sum(((v - mean) ** 2 for v in q), Fraction(0)) / (n - 1)
            assert same(fpx.variance(x, variant="exact", ddof=1), rnd(exact, name) if exact else 0)
    with pytest.raises(ValueError, match=rf"variant 'welford' does not compute in {name}"):
        fpx.variance(x, variant="welford")
    with pytest.raises(ValueError, match="variant 'numpy' does not compute in"):
        fpx.variance(x)
    x32 = rng.normal(0, 2, 50).astype(np.float32)  # float32 data computing in the format
    terms = [rnd(Fraction(float(v)), name) for v in x32]  # (x rounded to it first)
    got = fpx.variance(x32, variant="one-pass", order="pairwise", accumulate=name)
    assert got.dtype == np.float32 and same(got, variance_oracle(terms, "one-pass", pairwise, name))
    wide = fpx.variance(x, variant="two-pass", accumulate="float32")  # in float32, then to name
    assert same(
        wide, float(fpx.as_format(fpx.variance(x.astype(np.float32), variant="two-pass"), name))
    )
    cmp = fpx.compare("variance", n=200, format=name, seed=4, distribution="normal")
    assert [v for v, _ in cmp.results if v != "np.var"] == ["two-pass", "one-pass"]
    terms = [float(v) for v in cmp.inputs["x"]]
    for variant in ("two-pass", "one-pass"):
        want = variance_oracle(terms, variant, sequential, name)
        assert same(cmp.results[(variant, "emulated")], want), variant


@pytest.mark.parametrize("name", OCP)
def test_exact_sum_and_dot_of_small_arrays_round_once_to_their_format(name):
    rng = np.random.default_rng(3 + len(name))
    for n in (1, 2, 5, 30, 200):
        for _ in range(10):
            x, y = draw(name, rng, n), draw(name, rng, n)
            want = rnd(sum((Fraction(float(v)) for v in x), Fraction(0)), name)
            assert same(fpx.exact_sum(x), want) and same(fpx.sum(x, "exact"), want), x
            q = sum((Fraction(float(a)) * Fraction(float(b)) for a, b in zip(x, y)), Fraction(0))
            assert same(fpx.exact_dot(x, y), rnd(q, name)), (x, y)
            assert fpx.exact_dot(x, y).dtype == OCP[name]


def test_the_exact_dot_rounds_once_not_through_float32():
    """16*16 + 4*4 + 2**-9 * 2**-9 is 272 + 2**-18: in float32 it is 272, E4M3's tie between
    256 and 288, which goes to 256; rounded once it is 288."""
    a = np.array([16, 4, 2.0**-9], ml_dtypes.float8_e4m3fn)
    assert (
        float(fpx.exact_dot(a, a))
        == 288.0
        == rnd(Fraction(272) + Fraction(1, 2**18), "float8_e4m3")
    )
    assert float(fpx.as_format(fpx.exact_dot(a.astype(np.float32), a.astype(np.float32)),
                               "float8_e4m3")) == 256.0  # fmt: skip


def test_orders_that_do_not_accumulate_in_the_format_say_so():
    x = np.ones(8, ml_dtypes.float8_e4m3fn)
    for order in ("numpy", "tree", "kahan", "cub"):
        with pytest.raises(
            ValueError, match=rf"order '{order}' does not accumulate in float8_e4m3"
        ):
            fpx.sum(x, order)
    # with an accumulator given, any order: float32 additions, the result rounded once
    assert same(fpx.sum(x, "numpy", accumulate="float32"), 8.0)
    with pytest.raises(TypeError, match="mixed formats"):
        fpx.dot(x, np.ones(8, np.float32), "sequential")
    with pytest.raises(TypeError, match="float8_e4m3fnuz arrays .* are read by"):
        fpx.sum(x.astype(ml_dtypes.float8_e4m3fnuz))


@pytest.mark.parametrize("op", ["sum", "dot"])
@pytest.mark.parametrize("name", ["float8_e4m3", "float8_e5m2", "float4_e2m1"])
def test_compare_draws_the_format_and_every_row_is_the_oracles(op, name):
    """compare(format=FP8/FP6/FP4) draws generate's values as the format's ml_dtypes type;
    NumPy's row is NumPy's own function on them, each emulated order the oracle's, the
    reference the exact sum rounded once, and ulp_error the count of values between."""
    cmp = fpx.compare(op, n=300, format=name, variants=["sequential", "pairwise"], seed=2)
    arrays = [cmp.inputs[k] for k in ("x",) if k in cmp.inputs] or [
        cmp.inputs["a"],
        cmp.inputs["b"],
    ]
    assert all(a.dtype == OCP[name] for a in arrays)
    want_values = fpx.generate("uniform", 300, name, 2)
    assert np.array_equal(arrays[0].astype(np.float32), want_values)
    if op == "sum":
        terms = [float(v) for v in arrays[0]]
        exact = sum(map(Fraction, terms), Fraction(0))
        real = np.sum(arrays[0])
    else:
        a, b = arrays
        terms = [rnd(Fraction(float(u)) * Fraction(float(v)), name) for u, v in zip(a, b)]
        exact = sum((Fraction(float(u)) * Fraction(float(v)) for u, v in zip(a, b)), Fraction(0))
        real = np.dot(a, b)
    ref = rnd(exact, name)
    rows = {r.variant: r for r in cmp.table.itertuples()}
    assert same(rows[f"np.{op}"].value, float(real))
    if op == "sum":  # docs/api.md: np.sum of ml_dtypes' types adds sequentially, rounding each
        assert same(float(real), sequential(terms, name))
    for order, oracle in (("sequential", sequential), ("pairwise", pairwise)):
        want = oracle(terms, name)
        assert same(rows[order].value, want), (order, rows[order].value, want)
        if math.isfinite(want) and math.isfinite(ref):
            assert rows[order].ulp_error == ordinal(want, name) - ordinal(ref, name)


def test_the_bit_helpers_read_small_arrays_in_their_own_layout():
    """bit_string, fields, hex_string and shortest_repr take ml_dtypes' small types (they
    refused them): the fields put back together give the value ml_dtypes reads, the strings
    are its bit pattern, and the shortest decimal reads back as it."""
    for t in (*OCP.values(), ml_dtypes.float8_e8m0fnu):
        f = ml_dtypes.finfo(t)
        sign_bits = f.bits - f.nexp - f.nmant
        x = np.arange(1 << f.bits, dtype=np.uint8).view(t)
        x = x[np.isfinite(x.astype(np.float32))]
        s, e, m = (np.asarray(v) for v in fpx.fields(x))
        bias = (1 << (f.nexp - 1)) - 1 if sign_bits else 127
        for v, si, ei, mi, text, hx in zip(x, s, e, m, fpx.bit_string(x, sep=""),
                                           fpx.hex_string(x)):  # fmt: skip
            frac = Fraction(int(mi), 1 << f.nmant)
            if not sign_bits:  # E8M0: a power of two, no zero, no subnormals
                mag = Fraction(2) ** (int(ei) - bias)
            elif ei:
                mag = (1 + frac) * Fraction(2) ** (int(ei) - bias)
            else:
                mag = frac * Fraction(2) ** (1 - bias)
            assert (-1) ** int(si) * mag == Fraction(float(v)), (t, v)
            assert (
                int(text, 2) == int(hx, 16) == int(np.array(v).view(np.uint8))
                and len(text) == f.bits
            )
        pattern = {Fraction(float(v)): int(np.array(v).view(np.uint8)) for v in x}
        for v in x[np.asarray(x.astype(np.float32)) != 0]:
            text = fpx.shortest_repr(v)
            q = Fraction(Decimal(text))  # v is the nearest value to the decimal (ties: even)
            d = min(abs(w - q) for w in pattern)
            near = [w for w in pattern if abs(w - q) == d]
            got = near[0] if len(near) == 1 else next(w for w in near if pattern[w] % 2 == 0)
            assert got == Fraction(float(v)), (t, v, text)


def test_the_reproducer_says_why_it_writes_no_script_for_fp8_data():
    """Its standalone scripts add in NumPy's types: FP8 data would need fpexplore; it said
    "suggest_tolerance: actual: float8_e4m3 arrays ... are read by ...", naming neither."""
    cmp = fpx.compare("sum", n=100, format="float8_e4m3", variants=["sequential"])
    with pytest.raises(ValueError, match="reproducer: float8_e4m3 data: the script's orders"):
        fpx.reproducer(cmp)


def test_the_difference_budget_counts_fp8_results_in_fp8_ulps():
    """Both ends FP8: it converted them to float16 (the narrowest storage format holding
    E5M2) and counted float16's ulps, 3584 where the results are 14 E5M2 values apart."""
    x = fpx.compare("sum", n=200, format="float8_e5m2", variants=["sequential"]).inputs["x"]
    terms = [float(v) for v in x]
    a, b = sequential(terms, "float8_e5m2"), pairwise(terms, "float8_e5m2")
    bud = fpx.difference_budget(x, "sequential", "pairwise", "sum")
    assert (float(bud.start), float(bud.end)) == (a, b)
    assert bud.total_ulp == ordinal(b, "float8_e5m2") - ordinal(a, "float8_e5m2") != 0


def test_a_float64_accumulator_on_fp8_data_rounds_once():
    """Pass 9: with accumulate="float64" the orders ran on float32 values, so the float64
    sum was rounded to float32 first, then to FP8: 272 + 2**-18 became 256, not 288."""
    a = np.array([16, 4, 2.0**-9], ml_dtypes.float8_e4m3fn)
    want = rnd(Fraction(272) + Fraction(1, 2**18), "float8_e4m3")
    for order in ("sequential", "pairwise", "numpy", "kahan", "tree"):
        assert float(fpx.dot(a, a, order, accumulate="float64")) == want == 288.0, order
    x = np.array([32768, 4096, 2.0**-16], ml_dtypes.float8_e5m2)
    want = rnd(Fraction(36864) + Fraction(1, 2**16), "float8_e5m2")
    for order in ("sequential", "numpy", "kahan"):
        assert float(fpx.sum(x, order, accumulate="float64")) == want == 40960.0, order


def test_the_exact_order_on_fp8_data_checks_its_keywords():
    """Pass 9: "exact" on FP8 data returned before reading its keywords (accumulate,
    rounding, fma, a misspelled parameter were all ignored)."""
    x = np.array([1, 2, 3], ml_dtypes.float8_e4m3fn)
    with pytest.raises(ValueError, match="accumulate does not apply to the exact order"):
        fpx.sum(x, "exact", accumulate="float16")
    with pytest.raises(ValueError, match="rounding='up' is not a setting of order 'exact'"):
        fpx.sum(x, "exact", rounding="up")
    with pytest.raises(TypeError, match="order 'exact' has no parameter bogus"):
        fpx.sum(x, "exact", bogus=1)
    with pytest.raises(ValueError, match="fma=True does not change order 'exact'"):
        fpx.dot(x, x, "exact", fma=True)
    assert float(fpx.sum(x, "exact")) == 6.0 and float(fpx.dot(x, x, "exact")) == 14.0


def test_beside_fp8_data_a_list_of_its_values_adopts_it_and_another_format_is_named():
    x = np.array([1, 2, 3], ml_dtypes.float8_e4m3fn)
    assert float(fpx.dot(x, [1.0, 2.0, 3.0], "sequential")) == 14.0  # as docs/api.md says
    assert float(fpx.exact_dot([1.0, 2.0, 3.0], x)) == 14.0
    with pytest.raises(TypeError, match="dot: b is float32 beside float8_e4m3 data"):
        fpx.dot(x, np.ones(3, np.float32), "sequential")
    with pytest.raises(TypeError, match=r"dot: b: the Python value 0.1 is not exactly one"):
        fpx.dot(x, [1.0, 2.0, 0.1], "sequential")
    with pytest.raises(ValueError, match="format='float8_e5m2' but the inputs are float8_e4m3"):
        fpx.compare("sum", inputs=x, format="float8_e5m2")
    with pytest.raises(ValueError, match="format 'float4_e2m1': adam_step takes no float4_e"):
        fpx.compare("adam_step", n=10, format="float4_e2m1")
    with pytest.raises(TypeError, match="fpx.explain: inputs are float8_e4m3 data"):
        fpx.explain("sum", x, {"a": np.float32(6), "b": np.float32(6)})


def test_the_app_refuses_a_format_its_op_does_not_take_at_the_start():
    """Pass 9: initial() (fpx.explorer's keywords, a link) kept FP8 for mean (which takes it
    now); compare then refused it at the first draw."""
    from fpexplore.app import state as S

    with pytest.raises(ValueError, match="format 'float6_e2m3': adam_step takes no float6_e2m"):
        S.initial(op="adam_step", format="float6_e2m3")  # (0/0: NaN, which FP6 has not)
    assert S.initial(op="sum", format="float8_e4m3").format == "float8_e4m3"


def test_fp6_and_fp4_results_never_turn_a_nan_into_minus_zero():
    """Pass 10: an E4M3 accumulator past 448 is NaN, which FP6 cannot hold; ml_dtypes made
    it -0 (a number the data never summed to), and a Python NaN beside FP6 data was taken
    as one of its values."""
    x = np.array([28.0] * 20, ml_dtypes.float6_e3m2fn)
    assert math.isnan(sequential([28.0] * 20, "float8_e4m3"))  # the accumulator's value
    with pytest.raises(ValueError, match="the result is NaN, which float6_e3m2 cannot hold"):
        fpx.sum(x, "sequential", accumulate="float8_e4m3")
    assert same(fpx.sum(x, "sequential"), sequential([28.0] * 20, "float6_e3m2"))  # saturates
    with pytest.raises(TypeError, match="b: NaN is not a value of float6_e2m3"):
        fpx.dot(np.array([1, 2], ml_dtypes.float6_e2m3fn), [np.nan, 0.5])


def test_the_exact_dot_of_fp8_data_rounds_its_inputs_first_when_asked():
    """Pass 10: "exact" with input_rounding= returned the exact dot of the unrounded inputs
    (4.5); 1.125 rounds to 1 in E5M2 (a tie, to even), so the dot is 1 + 3 = 4. A rounding
    that changes no FP8 value is refused, as it is for float16 data."""
    a = np.array([1.125, 3], ml_dtypes.float8_e4m3fn)
    b = np.array([1.125, 1], ml_dtypes.float8_e4m3fn)
    assert rnd(Fraction(1125, 1000), "float8_e5m2") == 1.0
    assert float(fpx.dot(a, b, "exact", input_rounding="float8_e5m2")) == 4.0
    assert same(fpx.dot(a, b, "exact"), rnd(Fraction(81, 64) + 3, "float8_e4m3"))
    with pytest.raises(ValueError, match="'tf32' changes nothing for float8_e4m3 data"):
        fpx.dot(a, b, "sequential", input_rounding="tf32")


def test_the_app_offers_no_setting_that_fp8_data_refuses():
    """Pass 10: the FMA preset on FP8 dot data kept sequential+fma, switching a float32
    selection to FP8 kept it, and "tree" was added to an FP8 sum: compare then raised."""
    from fpexplore.app import presets as P
    from fpexplore.app import state as S

    s = P.apply_preset(
        S.initial(op="dot", format="float8_e4m3", n=30), "FMA vs separate multiply-add"
    )
    assert [str(v) for v in s.variants] == ["sequential"]
    fpx.compare(**S.compare_arguments(s))
    s = P.apply_preset(S.initial(op="dot", n=30), "FMA vs separate multiply-add")
    s = S.set_format(s, "float8_e4m3")
    assert "sequential+fma" not in [str(v) for v in S.variant_options(s)]
    fpx.compare(**S.compare_arguments(s))
    with pytest.raises(ValueError, match="tree on float8_e4m3 data: sum: order 'tree' does not"):
        S.add_variant(S.initial(op="sum", format="float8_e4m3"), "tree")
    assert "numpy@float32" in [
        str(v)
        for v in S.add_variant(S.initial(op="sum", format="float8_e4m3"), "numpy@float32").variants
    ]


def test_orders_that_take_no_fp8_matmul_data_say_what_to_do():
    """matmul of FP8 arrays in an order that does not add in the format: the message names
    the orders that do; the tensor cores name the input rounding and fpx.mma, which take FP8
    (the advice works: the converted call equals mma of the FP8 arrays)."""
    rng = np.random.default_rng(2)
    A, B = (
        draw("float8_e4m3", rng, 4 * 32).reshape(4, 32),
        draw("float8_e4m3", rng, 96).reshape(32, 3),
    )
    with pytest.raises(ValueError, match=r"order 'kahan' does not accumulate in float8_e4m3"):
        fpx.matmul(A, B, "kahan")
    with pytest.raises(ValueError, match=r"order 'tensor-core' takes no float8_e4m3 data .*"
                       r"give input_rounding='float8_e4m3' .* fpx.mma"):  # fmt: skip
        fpx.matmul(A, B, "tensor-core", arch="h100")
    wide = fpx.matmul(A.astype(np.float32), B.astype(np.float32), "tensor-core", arch="h100",
                      input_rounding="float8_e4m3")  # fmt: skip
    assert np.array_equal(wide, fpx.mma(A, B, np.zeros((4, 3), np.float32), arch="h100"))


def test_compare_reads_python_lists_in_the_fp8_format_beside_or_named():
    """Pass 34: a list beside FP8 data was float64 in compare ("B is float64 beside
    float8_e4m3 data") where fpx.matmul read it as FP8; lists with format='float8_e4m3' were
    "float64: leave format out". Both are FP8 arrays now where they are its values; the
    tensor cores and the other orders say what to do in compare's words."""
    A8 = np.array([[1, 2], [3, 0.5]], ml_dtypes.float8_e4m3fn)
    B = [[1.0, 2.0], [0.25, 4.0]]
    B8 = np.array(B, ml_dtypes.float8_e4m3fn)
    want = fpx.compare("matmul", inputs=(A8, B8)).table.value_hex.tolist()
    cmp = fpx.compare("matmul", inputs=(A8, B))
    assert cmp.inputs["B"].dtype == B8.dtype and cmp.inputs["A"] is A8
    assert cmp.table.value_hex.tolist() == want
    named = fpx.compare("matmul", inputs=(A8.astype(float).tolist(), B), format="float8_e4m3")
    assert named.format == "float8_e4m3" and named.inputs["A"].dtype == A8.dtype
    with pytest.raises(TypeError, match=r"inputs\['B'\]: the Python value 0.1 is not exactly"):
        fpx.compare("matmul", inputs=(A8, [[0.1, 1.0], [1.0, 1.0]]))
    with pytest.raises(ValueError, match=r"in a variant spec 'tree@float32'"):
        fpx.compare("matmul", format="float8_e4m3", n=4, variants=["tree"])
    with pytest.raises(ValueError, match=r"tensor cores read FP6 and FP4 block-scaled only"):
        fpx.compare("matmul", format="float4_e2m1", n=4, variants=["tensor-core"])
