"""A format of ``fpx.format`` as compare's *data* format (issue 38: "usable everywhere a format
name is"; docs/research/custom_data_format.md). Its values are float64 arrays with the format
named beside them; sum and dot add in it. Checked against oracles written here: every value of
a tiny format enumerated (ulps are steps along that list), IEEE bit patterns from NumPy's own
float16, sums rounded step by step from exact rationals; and "a custom format with the
parameters of float16 behaves exactly as float16": compare's rows of ``fpx.format(11, 15)``
equal float16's, column by column."""

from __future__ import annotations

import math
import subprocess
import sys
from fractions import Fraction

import numpy as np
import pytest

import fpexplore as fpx
from fpexplore.userformat import _forget

pd = pytest.importorskip("pandas")


pytestmark = pytest.mark.usefixtures("clean_formats")  # (tests/conftest.py)


def _grid(p: int, emax: int, subnormals: bool) -> list[float]:
    """Every value of the format in increasing order, -inf to inf, one zero: from its
    definition (m * 2**(e - p + 1), 2**(p-1) <= m < 2**p; subnormals below 2**emin)."""
    emin = 1 - emax
    pos = set()
    for e in range(emin, emax + 1):
        pos |= {math.ldexp(m, e - p + 1) for m in range(2 ** (p - 1), 2**p)}
    if subnormals:
        pos |= {math.ldexp(m, emin - p + 1) for m in range(1, 2 ** (p - 1))}
    pos = sorted(pos)
    return [-math.inf, *[-v for v in reversed(pos)], 0.0, *pos, math.inf]


@pytest.mark.parametrize("subnormals", (True, False))
def test_ulp_distance_counts_steps_along_the_enumerated_values(subnormals):
    """ulp_distance(a, b, fmt=) is b's place minus a's among the format's values listed in
    order (±0 one place; ±inf one past ±max), for every pair of a tiny format."""
    fpx.format(3, 3, subnormals=subnormals, name="t_cd3")
    line = _grid(3, 3, subnormals)
    a, b = np.meshgrid(np.array(line), np.array(line))
    want = np.subtract.outer(np.arange(len(line)), np.arange(len(line)))
    assert np.array_equal(fpx.ulp_distance(a, b, fmt="t_cd3"), want)
    assert fpx.ulp_distance(-0.0, 0.0, fmt="t_cd3") == 0
    assert fpx.ulp_distance(np.nan, 1.0, fmt="t_cd3", nan="sentinel") == fpx.ULP_NAN


def _half_key(h: np.ndarray) -> np.ndarray:
    """float16 values' places in order, from NumPy's bit patterns (sign and magnitude)."""
    b = h.view(np.uint16).astype(np.int64)
    return np.where(b & 0x8000, -(b & 0x7FFF), b)


def test_the_float16_twin_counts_and_encodes_as_float16():
    """Every float16 value (NaN aside): ulps between random pairs as NumPy's bits order them,
    and to_bits / hex_string / bit_string / shortest_repr of the twin equal float16's."""
    fpx.format(11, 15, name="t_h16")
    every = np.arange(2**16, dtype=np.uint16).view(np.float16)
    every = every[~np.isnan(every)]
    wide = every.astype(np.float64)
    assert np.array_equal(fpx.to_bits(wide, "t_h16"), every.view(np.uint16).astype(np.uint64))
    rng = np.random.default_rng(3)
    i, j = rng.integers(0, every.size, (2, 50_000))
    got = fpx.ulp_distance(wide[i], wide[j], fmt="t_h16")
    assert np.array_equal(got, _half_key(every[j]) - _half_key(every[i]))
    some = every[:: every.size // 997]
    for v in some:
        assert fpx.hex_string(float(v), "t_h16") == f"0x{int(v.view(np.uint16)):04x}"
        assert fpx.shortest_repr(float(v), "t_h16") == str(v)  # (NumPy's float16 printing)
    assert fpx.bit_string(-np.inf, fmt="t_h16") == "1 11111 0000000000"
    patterns = np.arange(2**16, dtype=np.uint16)  # from_bits: NumPy's float16, NaN signs too
    got, want = fpx.from_bits(patterns, "t_h16"), patterns.view(np.float16).astype(np.float64)
    assert np.array_equal(got, want, equal_nan=True)
    assert np.array_equal(np.signbit(got), np.signbit(want))
    assert fpx.hex_string(np.nan, "t_h16") == "0x7e00"


def test_values_off_the_grid_and_formats_without_ieee_bits_are_refused_by_name():
    fpx.format(9, 20, name="t_cd_odd")  # emax 20: 6 exponent bits would reach 31
    fpx.format(11, 15, name="t_h16")
    with pytest.raises(ValueError, match=r"ulp_distance\(a, b, fmt='t_h16'\): b holds 0.1, "):
        fpx.ulp_distance(1.0, 0.1, fmt="t_h16")
    with pytest.raises(TypeError, match=r"needs a in float64.*got np.float32\(1.0\)"):
        fpx.ulp_distance(np.float32(1), 1.0, fmt="t_h16")
    with pytest.raises(ValueError, match=r"fmt='float16': fmt takes only a format of fpx"):
        fpx.ulp_distance(1.0, 1.0, fmt="float16")
    with pytest.raises(ValueError, match=r"hex_string: format 't_cd_odd' \(fpx.format\) has no"):
        fpx.hex_string(1.0, "t_cd_odd")
    assert fpx.shortest_repr(float(fpx.as_format(0.1, "t_cd_odd")), "t_cd_odd") == "0.1"


_COLUMNS = [
    "variant",
    "value_repr",
    "value_hex",
    "ulp_error",
    "max_abs_ulp",
    "mean_abs_ulp",
    "exact_share",
    "rel_error",
    "bits_error",
]
_VARIANTS = [
    "sequential",
    "reverse",
    "pairwise",
    "blocked",
    "blocked(block=7)",
    "exact",
    "sequential@float32",
    "pairwise@float64",
    "sequential@float8_e4m3",
]
_SUM_ONLY = ["pairwise(rounding=stochastic,seed=3)", "sequential(rounding=toward_zero)"]


@pytest.mark.parametrize("op", ["sum", "dot"])
@pytest.mark.parametrize("distribution", ["uniform", "normal", "wide", "ill-conditioned"])
def test_the_float16_twin_as_data_gives_float16s_rows(op, distribution):
    """compare of fpx.format(11, 15) data equals compare of float16 data in every row an
    emulated order gives (value, its text and bits, every error column, the reference), for
    the orders that add in the data's format, with accumulators and rounding modes; NumPy's
    row is float16's own (np.sum has no such type: the table says so). One difference is
    allowed: a NaN (inf + -inf) is NumPy's negative NaN in float16 (x86's default NaN; ARM's
    is positive), the canonical quiet NaN 0x7e00 in the twin."""
    fpx.format(11, 15, name="t_h16")
    variants = _VARIANTS + (_SUM_ONLY if op == "sum" else [])
    kw = dict(n=1000, distribution=distribution, seed=2, variants=variants)
    half = fpx.compare(op, format="float16", **kw)
    mine = fpx.compare(op, format="t_h16", **kw)
    want = half.table[half.table.backend == "emulated"].reset_index(drop=True)
    got = mine.table.reset_index(drop=True)
    assert list(got.backend.unique()) == ["emulated"] and set(got.format) == {"t_h16"}
    nan = np.isnan(want.value.to_numpy())
    assert np.array_equal(np.isnan(got.value.to_numpy()), nan)
    assert (got.loc[nan, "value_hex"] == "0x7e00").all()
    keep = ~nan
    for col in _COLUMNS:
        assert got.loc[keep, col].tolist() == want.loc[keep, col].tolist(), col
    assert float(mine.reference) == float(half.reference)
    assert f"NumPy has no t_h16 type or arithmetic: no np.{op} row" in " ".join(mine.messages)
    assert mine.formatted().iloc[0]["hex"] == half.formatted().iloc[0]["hex"]
    d_half, d_mine = half.diff("sequential", "pairwise"), mine.diff("sequential", "pairwise")
    assert d_mine.summary == d_half.summary and d_mine.format == "t_h16"
    assert d_mine.table.drop(columns="index").equals(d_half.table.drop(columns="index"))


def _oracle_sum(x, fmt, order):
    """Sequential or pairwise, each addition rounded once from its exact value."""

    def add(a, b):
        return float(fpx.as_format(Fraction(a) + Fraction(b), fmt))

    def pairwise(t):
        if len(t) == 1:
            return float(t[0])
        h = len(t) // 2
        return add(pairwise(t[:h]), pairwise(t[h:]))

    if order == "pairwise":
        return pairwise(list(x))
    acc = float(x[0])
    for v in x[1:]:
        acc = add(acc, v)
    return acc


@pytest.mark.parametrize("subnormals", (True, False))
def test_compare_of_a_tiny_format_against_rationals_and_the_enumeration(subnormals):
    """Data of a format with no built-in twin (p = 5, emax = 6): each row's value is the sum
    rounded step by step from exact rationals (NumPy's pairwise below 8 terms is sequential:
    this one splits in halves, so n = 5 and 12 differ), the reference the exact sum rounded
    once, ulp_error the steps between them along the enumerated values."""
    fmt = fpx.format(5, 6, subnormals=subnormals, name="t_cd5")
    line = _grid(5, 6, subnormals)
    place = {v: i for i, v in enumerate(line)}
    rng = np.random.default_rng(11)
    for n in (2, 5, 12, 40):
        for _ in range(6):
            x = fpx.as_format(rng.normal(0, 4, n) * rng.choice([1, 1e-3], n), fmt)
            cmp = fpx.compare("sum", inputs=np.asarray(x), format="t_cd5",
                              variants=["sequential", "pairwise", "exact"])  # fmt: skip
            exact = float(fpx.as_format(sum(map(Fraction, x.tolist()), Fraction(0)), fmt))
            assert float(cmp.reference) == exact
            for order in ("sequential", "pairwise"):
                row = cmp.table[cmp.table.variant == order].iloc[0]
                want = _oracle_sum(x.tolist(), fmt, order)
                assert row.value == want, (x, order)
                assert row.ulp_error == place[want + 0.0] - place[exact + 0.0]
            assert cmp.table[cmp.table.variant == "exact"].iloc[0].ulp_error == 0


def test_a_dot_in_a_tiny_format_against_rationals():
    """Each product rounded to the format, then each addition (fma=False, as an accumulator
    of fpx.format adds in dot); the reference the exact dot rounded once."""
    fmt = fpx.format(6, 7, name="t_cd6")
    rng = np.random.default_rng(5)
    for n in (3, 17):
        a, b = (np.asarray(fpx.as_format(rng.normal(0, 2, n), fmt)) for _ in range(2))
        cmp = fpx.compare("dot", inputs=(a, b), format="t_cd6", variants=["sequential", "exact"])
        acc = float(fpx.as_format(Fraction(a[0]) * Fraction(b[0]), fmt))
        for u, v in zip(a[1:].tolist(), b[1:].tolist()):
            product = fpx.as_format(Fraction(u) * Fraction(v), fmt)
            acc = float(fpx.as_format(Fraction(acc) + Fraction(float(product)), fmt))
        seq = cmp.table[cmp.table.variant == "sequential"].iloc[0].value
        exact = sum(Fraction(u) * Fraction(v) for u, v in zip(a.tolist(), b.tolist()))
        assert seq == acc
        assert float(cmp.reference) == float(fpx.as_format(exact, fmt))


@pytest.mark.parametrize("distribution", ["uniform", "wide", "ill-conditioned"])
def test_the_float16_twin_as_mean_data_gives_float16s_rows(distribution):
    """compare("mean") of fpx.format(11, 15) data: the rows of the variants that add in it
    (sequential, pairwise, exact) equal float16's, value and error columns; mean refused
    such data before."""
    fpx.format(11, 15, name="t_h16")
    kw = dict(
        n=2000, distribution=distribution, seed=6, variants=["sequential", "pairwise", "exact"]
    )
    half = fpx.compare("mean", format="float16", **kw)
    mine = fpx.compare("mean", format="t_h16", **kw)
    want = half.table[half.table.backend == "emulated"].reset_index(drop=True)
    for col in _COLUMNS:
        assert mine.table.reset_index(drop=True)[col].tolist() == want[col].tolist(), col
    assert float(mine.reference) == float(half.reference)
    fmt = fpx.format(5, 6, subnormals=False, name="t_cd5n")
    x = np.asarray(fpx.as_format(np.random.default_rng(2).normal(0, 3, 9), fmt))
    cmp = fpx.compare("mean", inputs=x, format="t_cd5n", variants=["sequential", "exact"])
    s = _oracle_sum(x.tolist(), fmt, "sequential")
    assert cmp.results[("sequential", "emulated")] == float(fpx.as_format(Fraction(s) / 9, fmt))
    exact = sum(map(Fraction, x.tolist()), Fraction(0)) / 9
    assert float(cmp.reference) == float(fpx.as_format(exact, fmt))


@pytest.mark.parametrize("distribution", ["uniform", "normal", "wide", "ill-conditioned"])
def test_the_float16_twin_as_variance_data_gives_float16s_rows(distribution):
    """compare("variance") of fpx.format(11, 15) data: the rows of the variants that compute
    in it (two-pass and one-pass in two orders, exact) equal float16's, value and error
    columns, and so does the twin as an accumulator of float32 data; a format without
    subnormals against an oracle written here. variance refused such data before."""
    fpx.format(11, 15, name="t_h16")
    specs = ["two-pass", "one-pass(order=pairwise)", "two-pass(order=pairwise)", "exact"]
    kw = dict(n=1500, distribution=distribution, seed=8, variants=specs)
    half = fpx.compare("variance", format="float16", **kw)
    mine = fpx.compare("variance", format="t_h16", **kw)
    want = half.table[half.table.backend == "emulated"].reset_index(drop=True)
    got = mine.table.reset_index(drop=True)
    for t in (want, got):  # (a NaN's sign is the machine's: x86's inf - inf is -NaN)
        t.loc[t.value_repr == "nan", "value_hex"] = "NaN"
    for col in _COLUMNS:
        assert got[col].tolist() == want[col].tolist(), col
    x = fpx.generate(distribution, 700, "float32", seed=3)
    for v in ("two-pass", "one-pass"):
        h = fpx.variance(x, variant=v, order="pairwise", accumulate="float16")
        mine = fpx.variance(x, variant=v, order="pairwise", accumulate="t_h16")
        assert mine == h or (np.isnan(mine) and np.isnan(h)), v
    fmt = fpx.format(5, 6, subnormals=False, name="t_cd5n")
    x = np.asarray(fpx.as_format(np.random.default_rng(2).normal(0, 3, 9), fmt))

    def rounded(q):
        return float(fpx.as_format(q, fmt))

    mean = rounded(Fraction(_oracle_sum(x.tolist(), fmt, "sequential")) / 9)
    sq = [rounded(Fraction(rounded(Fraction(v) - Fraction(mean))) ** 2) for v in x.tolist()]
    want = rounded(Fraction(_oracle_sum(sq, fmt, "sequential")) / 9)
    with pytest.raises(ValueError, match="variant 'welford' does not compute in t_cd5n"):
        fpx.compare("variance", inputs=x, format="t_cd5n", variants=["welford"])
    cmp = fpx.compare("variance", inputs=x, format="t_cd5n", variants=["two-pass"])
    assert cmp.results[("two-pass", "emulated")] == want
    q = [Fraction(v) for v in x.tolist()]
    exact = sum((v - sum(q) / 9) ** 2 for v in q) / 9
    assert float(cmp.reference) == rounded(exact)


@pytest.mark.parametrize("distribution", ["uniform", "normal", "wide", "ill-conditioned"])
def test_the_float16_twin_as_matmul_data_gives_float16s_matrices(distribution):
    """compare("matmul") of fpx.format(11, 15) data: every emulated order's matrix equals
    float16's bit for bit (as float64 values; NaNs where float16's are), with accumulators,
    the rounded data format as accumulator, split-K; every error column and the reference
    too. Matmul refused such data before."""
    fpx.format(11, 15, name="t_h16")
    variants = [*_VARIANTS, "sequential@t_h16", "pairwise(split_k=3)"]
    kw = dict(n=24, distribution=distribution, seed=3, variants=variants)
    half = fpx.compare("matmul", format="float16", **kw)
    mine = fpx.compare("matmul", format="t_h16", **kw)
    assert set(mine.results) == {(v, "emulated") for v in variants}
    for key, got in mine.results.items():
        want = np.asarray(half.results[key]).astype(np.float64)
        assert got.dtype == np.float64 and np.array_equal(got, want, equal_nan=True), key
        assert np.array_equal(np.signbit(got[~np.isnan(got)]), np.signbit(want[~np.isnan(want)]))
    errors = ["ulp_error", "max_abs_ulp", "mean_abs_ulp", "exact_share", "rel_error", "bits_error"]
    want = half.table[half.table.backend == "emulated"].reset_index(drop=True)[errors]
    assert mine.table.reset_index(drop=True)[errors].equals(want)
    assert np.array_equal(mine.reference, np.asarray(half.reference).astype(np.float64))
    assert "NumPy has no t_h16 type or arithmetic: no np.matmul row" in " ".join(mine.messages)


@pytest.mark.parametrize("p, emax, subnormals", [(5, 6, True), (5, 6, False), (26, 40, True)])
def test_a_matmul_in_a_tiny_format_against_rationals(p, emax, subnormals):
    """Each element: each product rounded to the format, then each addition, in sequential
    and pairwise order, from exact rationals; the reference the exact dot rounded once. (The
    formats without subnormals or of precision > 25 take the element-by-element kernel,
    where rounding a float64 sum would round twice; the others SIMD lanes.)"""
    fmt = fpx.format(p, emax, subnormals=subnormals, name="t_cd5m")
    rng = np.random.default_rng(21)

    def rounded(q: Fraction) -> float:
        return float(fpx.as_format(q, fmt))

    for m, k, n in ((2, 5, 3), (3, 12, 2)):
        A = np.asarray(fpx.as_format(rng.normal(0, 4, (m, k)) * rng.choice([1, 1e-2], (m, k)), fmt))
        B = np.asarray(fpx.as_format(rng.normal(0, 2, (k, n)), fmt))
        cmp = fpx.compare("matmul", inputs=(A, B), format="t_cd5m",
                          variants=["sequential", "pairwise", "exact"])  # fmt: skip
        for i in range(m):
            for j in range(n):
                p = [rounded(Fraction(u) * Fraction(v)) for u, v in zip(A[i], B[:, j])]
                exact = sum((Fraction(u) * Fraction(v) for u, v in zip(A[i], B[:, j])), Fraction(0))
                assert cmp.reference[i, j] == rounded(exact)
                for order in ("sequential", "pairwise"):
                    want = _oracle_sum(p, fmt, order)
                    assert cmp.results[(order, "emulated")][i, j] == want, (order, i, j)


def test_your_arrays_of_the_format_and_what_is_refused():
    """compare(inputs=float64 values, format=name) and compare(inputs=cmp.inputs) keep the
    format; values off its grid, arrays of another type and ops that do not take it are
    refused, naming what is wrong; explain refuses such data as it does FP8."""
    fpx.format(11, 15, name="t_h16")
    fpx.format(27, 15, name="t_p27")
    cmp = fpx.compare("sum", format="t_h16", n=300, distribution="normal", seed=4)
    again = fpx.compare("sum", inputs=cmp.inputs, variants=list(cmp.specs))
    assert again.format == "t_h16" and again.table.value.tolist() == cmp.table.value.tolist()
    with pytest.raises(ValueError, match=r"inputs\['x'\] holds 0.1, which is not a value of t_h16"):
        fpx.compare("sum", inputs=np.array([0.1, 0.5]), format="t_h16")
    with pytest.raises(TypeError, match=r"'t_h16' \(fpx.format\) is held in float64 arrays; the "):
        fpx.compare("sum", inputs=np.array([0.5], np.float32), format="t_h16")
    with pytest.raises(ValueError, match=r"format 't_p27': adam_step takes no t_p27 data"):
        fpx.compare("adam_step", format="t_p27", n=4)
    with pytest.raises(ValueError, match=r"format 't_p27': variance takes no t_p27 data"):
        fpx.compare("variance", format="t_p27", n=4)  # (its arithmetic: p <= 25)
    for op in ("dot", "matmul"):
        with pytest.raises(ValueError, match=rf"{op} takes no t_p27 data \({op} takes the data "):
            fpx.compare(op, format="t_p27", n=4)
    with pytest.raises(ValueError, match=r"order 'numpy' does not accumulate in t_h16 \(the dat"):
        fpx.compare("sum", format="t_h16", n=4, variants=["numpy"])
    with pytest.raises(TypeError, match=r"fpx.explain: inputs are t_h16 data: explain weighs"):
        fpx.explain("sum", cmp.inputs, {"a": cmp.results[("sequential", "emulated")]})


def test_the_snippet_defines_the_format_and_reproduces_the_table(tmp_path):
    fpx.format(7, 9, subnormals=False, name="t_cd7")
    cmp = fpx.compare("dot", format="t_cd7", n=200, distribution="wide", seed=8)
    code = cmp.snippet() + "\nprint(repr(cmp.table.value_repr.tolist()))\n"
    assert code.count("fpx.format(precision=7, emax=9, subnormals=False, name='t_cd7')") == 1
    path = tmp_path / "snippet.py"
    path.write_text(code)
    out = subprocess.run([sys.executable, "-I", str(path)], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip().splitlines()[-1] == repr(cmp.table.value_repr.tolist())
    assert cmp.table.value_hex.isna().all()  # (no IEEE layout without subnormals)


def test_the_reproducer_and_a_fresh_kernels_explorer_say_what_to_do():
    """The reproducer's scripts add in NumPy's types: it refuses such data, naming snippet();
    the explorer opened on a format name this kernel has not defined (a link of a kernel
    that had) says to define it first."""
    pytest.importorskip("ipywidgets")
    fpx.format(11, 15, name="t_h16")
    cmp = fpx.compare("sum", format="t_h16", n=50)
    with pytest.raises(ValueError, match=r"t_h16 data \(a format of fpx.format\): the script's"):
        fpx.reproducer(cmp)
    _forget("t_h16")
    with pytest.raises(ValueError, match=r"unknown format 't_h16'.*fpx.format\(precision=..., "):
        fpx.explorer(op="sum", n=100, format="t_h16")


def _digits(text: str) -> int:
    """Significant digits of a decimal as shortest_repr writes it."""
    mantissa = text.lower().split("e")[0].lstrip("-").replace(".", "").lstrip("0")
    return len(mantissa.rstrip("0")) or 1


@pytest.mark.parametrize("subnormals", (True, False))
def test_shortest_repr_is_shortest_and_reads_back_in_a_tiny_format(subnormals):
    """Every finite value of a tiny format: its text rounds back to it (fpx.as_format, itself
    checked against the exhaustive oracle), and no decimal with fewer digits near it does
    (pass 29: without subnormals 0.25 = 2**emin printed "0.25", though 0.2 rounds to it,
    from 2**emin / 2 up)."""
    fmt = fpx.format(4, 3, subnormals=subnormals, name="t_cd43")
    for v in _grid(4, 3, subnormals)[1:-1]:
        text = fpx.shortest_repr(v, fmt)
        assert float(fpx.as_format(Fraction(text), fmt)) == v, (v, text)
        if v == 0:
            continue
        k = _digits(text)
        for d in range(1, k):
            near = Fraction(f"{v:.{d - 1}e}")
            step = Fraction(10) ** (math.floor(math.log10(abs(float(near)))) - d + 1)
            for c in (near - step, near, near + step):
                assert c == 0 or float(fpx.as_format(c, fmt)) != v, (v, text, c)


def test_inputs_that_name_a_format_are_checked_and_snippets_of_them_name_it(tmp_path):
    """Pass 29: compare(inputs={'format': 's54', ...}) in a session that had not defined s54
    compared float64 data without a word; a 'format' that is not the arrays', or that differs
    from format=, was taken silently too; the snippet of such inputs had no fpx.format line."""
    x = np.array([15.5, 0.25])
    with pytest.raises(ValueError, match=r"inputs\['format'\]: unknown format 't_cd54' \(a format"):
        fpx.compare("sum", inputs={"format": "t_cd54", "x": x})
    with pytest.raises(ValueError, match=r"inputs\['format'\] is 'float16' but the arrays are fl"):
        fpx.compare("sum", inputs={"format": "float16", "x": x})
    fpx.format(5, 4, subnormals=False, name="t_cd54")
    with pytest.raises(ValueError, match=r"format='float16' but inputs\['format'\] is 't_cd54'"):
        fpx.compare("sum", inputs={"format": "t_cd54", "x": x}, format="float16")
    cmp = fpx.compare("sum", inputs={"format": "t_cd54", "x": x}, variants=["sequential"])
    assert cmp.table.value.tolist() == [16.0]  # 15.75 is a tie: to the even 16 (15.5 is odd)
    code = cmp.snippet()
    assert code.count("fpx.format(precision=5, emax=4, subnormals=False, name='t_cd54')") == 1
    path = tmp_path / "snippet.py"
    path.write_text(
        code.replace("cmp = ", "import numpy as np\ninputs = np.array([15.5, 0.25])\ncmp = ")
        + "\nprint(cmp.format, cmp.table.value.tolist())\n"
    )
    out = subprocess.run([sys.executable, "-I", str(path)], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip().splitlines()[-1] == "t_cd54 [16.0]"


def test_the_exact_sum_of_one_held_value_is_that_value():
    """Pass 30: the exact order on 0-d data of fpx.format (and 0-d FP8) raised "too many
    indices for array" (its keywords were checked on data[:0])."""
    import ml_dtypes

    fpx.format(5, 7, name="t_cd57")
    cmp = fpx.compare("sum", format="t_cd57", inputs=np.array(1.5), variants=["exact"])
    assert cmp.table.value.tolist() == [1.5] and float(cmp.reference) == 1.5
    assert float(fpx.sum(np.array(1.5, ml_dtypes.float8_e4m3fn), "exact")) == 1.5


def test_lists_of_whole_numbers_are_read_in_the_format_by_every_op():
    """Pass 36: compare('sum', inputs=[1, 0.5], format=...) was read, [1, 2, 4] (whole
    numbers: NumPy's int64) was "needs inputs['x'] in float64" in mean, dot and matmul."""
    fpx.format(5, 7, subnormals=False, name="t_my5")
    assert float(fpx.compare("mean", inputs=[1, 2, 4], format="t_my5").reference) == float(
        fpx.as_format(Fraction(7, 3), "t_my5")
    )
    assert float(fpx.compare("dot", inputs=([1, 2], [3, 4]), format="t_my5").reference) == 11.0
    got = fpx.compare("matmul", inputs=([[1, 2], [3, 4]], [[1, 0], [0, 1]]), format="t_my5")
    assert got.reference.tolist() == [[1.0, 2.0], [3.0, 4.0]] and got.format == "t_my5"
