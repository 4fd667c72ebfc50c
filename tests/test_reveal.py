"""fpx.reveal: the accumulation trees of fpexplore's own orders are their known trees; NumPy's
np.sum is its 8-accumulator tree; the revealed order reproduces what it revealed, bit for bit;
BLAS calls only as properties that hold on every machine; explain's fallback."""

from __future__ import annotations

import sys
from fractions import Fraction

import numpy as np
import pytest

import fpexplore as fpx
from fpexplore.orders import trees
from fpexplore.spec import parse_spec

# ----------------------------------------------------------------------------- known trees


def chain(items):
    acc = items[0]
    for v in items[1:]:
        acc = (acc, v)
    return acc


def pairwise(lo, n):
    if n == 1:
        return lo
    h = n // 2
    return (pairwise(lo, h), pairwise(lo + h, n - h))


def numpy_tree(lo, m):
    """docs/orders.md, `numpy`: NumPy's pairwise_sum as a tree (the +-0.0 starts add nothing)."""
    if m < 8:
        return chain(list(range(lo, lo + m)))
    if m <= 128:
        full = m - m % 8
        r = [chain(list(range(lo + k, lo + full, 8))) for k in range(8)]
        res = (((r[0], r[1]), (r[2], r[3])), ((r[4], r[5]), (r[6], r[7])))
        return chain([res] + list(range(lo + full, lo + m)))
    h = m // 2
    h -= h % 8
    return (numpy_tree(lo, h), numpy_tree(lo + h, m - h))


def gpu_tree(n, block):
    """`tree` (interleaved addressing): a full binary tree per block (padding dropped), the
    block results added in order; with fma each even position fuses into its first addition."""

    def sub(lo, size):
        if lo >= n:
            return None
        if size == 1:
            return lo
        a, b = sub(lo, size // 2), sub(lo + size // 2, size // 2)
        return a if b is None else (a, b)

    blocks = [sub(lo, block) for lo in range(0, n, block)]
    fused = {i for i in range(0, n, 2) if i + 1 < n}
    return chain(blocks), fused


KNOWN = {
    "sequential": lambda n: chain(list(range(n))),
    "reverse": lambda n: chain(list(range(n - 1, -1, -1))),
    "pairwise": lambda n: pairwise(0, n),
    "numpy": lambda n: numpy_tree(0, n),
    "tree": lambda n: gpu_tree(n, 128)[0],
}


def same(rev, tree, fused=frozenset()):
    """The revealed tree is ``tree`` (compared by code: deep trees overflow tuple ==)."""
    return rev.code == trees.encode(trees.canonical(tree), fused)


@pytest.mark.parametrize("order", sorted(KNOWN))
@pytest.mark.parametrize("n", [8, 37, 300])
def test_the_sum_orders_reveal_their_trees(order, n):
    rev = fpx.reveal(lambda x: fpx.sum(x, order), n)
    assert same(rev, KNOWN[order](n)), str(rev)
    assert rev.accumulator == "float32" and rev.fma is None and rev.reproduces


def test_a_thousand_terms():
    rev = fpx.reveal(lambda x: fpx.sum(x, "numpy"), 1000)
    assert same(rev, numpy_tree(0, 1000)) and rev.queries < 8000
    assert len(rev.as_order()) < 200  # repeated shapes compress


@pytest.mark.parametrize("n", [8, 45])
@pytest.mark.parametrize("fma", [False, True])
def test_the_dot_orders_reveal_their_trees_and_fused_products(n, fma):
    seq = fpx.reveal(lambda a, b: fpx.dot(a, b, "sequential", fma=fma), n, op="dot")
    fused = frozenset(range(1, n)) if fma else frozenset()
    assert same(seq, chain(list(range(n))), fused) and seq.fused == fused and seq.fma is fma
    tree = fpx.reveal(lambda a, b: fpx.dot(a, b, "tree", fma=fma, block=16), n, op="dot")
    want, fused = gpu_tree(n, 16)
    fused = frozenset(fused) if fma else frozenset()
    assert same(tree, want, fused) and tree.fma is fma
    assert seq.reproduces and tree.reproduces
    assert seq.as_order().endswith("+fma") is fma


def test_np_sum_is_the_numpy_tree_on_every_machine():
    rev = fpx.reveal(np.sum, 16)
    assert str(rev) == "((((0+8)+(1+9))+((2+10)+(3+11)))+(((4+12)+(5+13))+((6+14)+(7+15))))"
    assert rev.tree == numpy_tree(0, 16) and rev.accumulator == "float32"
    half = fpx.reveal(np.sum, 40, format="float16")  # float16: float32 pairwise
    assert same(half, numpy_tree(0, 40)) and half.accumulator == "float32"
    assert half.as_order().endswith("@float32") and half.reproduces


def test_the_plot_draws_the_tree():
    pytest.importorskip("matplotlib")
    fig = fpx.reveal(np.sum, 16).plot()
    assert fig.axes and len(fig.axes[0].lines) == 30  # two segments per addition


@pytest.mark.parametrize("order", ["pairwise", "numpy", "tree"])
def test_as_order_reproduces_the_order_in_compare(order):
    n = 300
    spec = fpx.reveal(lambda x: fpx.sum(x, order), n).as_order()
    for seed in range(3):
        x = fpx.generate("wide", n, "float32", seed)
        t = fpx.compare("sum", inputs=x, variants=[spec, order]).table
        hexes = t.set_index("variant").loc[[spec, order], "value_hex"]
        assert hexes.iloc[0] == hexes.iloc[1]
    df = fpx.match_orders(x, fpx.sum(x, order), "sum", candidates_=[spec])
    assert bool(df["exact"].iloc[0])


def test_accumulators_are_probed():
    wide = fpx.reveal(lambda x: fpx.sum(x, "pairwise", accumulate="float64"), 24)
    assert wide.accumulator == "float64" and wide.as_order().endswith("@float64")
    bf = fpx.reveal(lambda x: fpx.sum(x, "sequential"), 24, format="bfloat16")
    assert bf.accumulator == "bfloat16" and "@" not in bf.as_order()
    bf32 = fpx.reveal(lambda x: fpx.sum(x, "sequential", accumulate="float32"), 24,
                      format="bfloat16")  # fmt: skip
    assert bf32.accumulator == "float32" and bf32.reproduces
    # float16 products are exact in float32: fusing cannot show
    h = fpx.reveal(lambda a, b: fpx.dot(a, b, "sequential", fma=True, accumulate="float32"), 16,
                   op="dot", format="float16")  # fmt: skip
    assert h.fma is None and h.accumulator == "float32"


# ----------------------------------------------------------------------------- BLAS: properties


def test_blas_trees_reproduce_blas_on_random_data():
    """Whatever the kernel: the revealed tree gives np.dot's and np.matmul's result."""
    rng = np.random.default_rng(5)
    rev = fpx.reveal(np.dot, 64, op="dot")
    s = fpx.parse_spec(rev.as_order(), "dot")
    for _ in range(5):
        a, b = rng.standard_normal((2, 64)).astype(np.float32)
        assert fpx.dot(a, b, s.name, **s.kwargs()) == np.dot(a, b)
    rev = fpx.reveal(lambda A, B: A @ B, 20, op="matmul")
    s = fpx.parse_spec(rev.as_order(), "matmul")
    A, B = rng.standard_normal((2, 20, 20)).astype(np.float32)
    assert fpx.matmul(A, B, s.name, **s.kwargs())[0, 0] == (A @ B)[0, 0]


def test_a_revealed_sgemm_tail_column_reproduces_real_matmul():
    """Issue 25: the tree of element [0, 32] of a 33 x 33 sgemm gives that element of real
    A @ B on random data, on this machine, whatever its BLAS kernel."""
    rev = fpx.reveal(lambda A, B: (A @ B)[0, 32], 33, op="matmul")
    assert rev.reproduces
    s = fpx.parse_spec(rev.as_order(), "dot")
    rng = np.random.default_rng(33)
    for _ in range(5):
        A, B = rng.standard_normal((2, 33, 33)).astype(np.float32)
        assert fpx.dot(A[0], B[:, 32], s.name, **s.kwargs()) == (A @ B)[0, 32]


# ----------------------------------------------------------------------------- the order


def slow_tree(tree, fused, x, y, acc):
    """The revealed order's definition in rationals: each addition rounded once to acc; a
    fused product is added exactly to the other operand."""

    def rnd(q):
        return Fraction(float(fpx.as_format(q, acc)))

    def exact(i):
        return Fraction(float(x[i])) * (Fraction(float(y[i])) if y is not None else 1)

    def value(t):
        if isinstance(t, int):
            return exact(t) if y is None else rnd(exact(t))
        a, b = t
        for me, other in ((a, b), (b, a)):
            if isinstance(me, int) and me in fused:
                return rnd(exact(me) + value(other))
        return rnd(value(a) + value(b))

    return float(value(tree))


@pytest.mark.parametrize("fmt", ["float16", "bfloat16", "float32", "float64"])
def test_the_revealed_order_against_its_slow_definition(fmt):
    rng = np.random.default_rng(11)
    for trial in range(4):
        items = list(range(40))
        while len(items) > 1:
            i, j = sorted(rng.choice(len(items), 2, replace=False))
            b, a = items.pop(j), items.pop(i)
            items.append((a, b))
        tree = trees.canonical(items[0])
        fused = frozenset(int(v) for v in rng.choice(40, 12, replace=False))
        code = trees.encode(tree, fused)
        assert trees.decode(code) == (tree, fused)
        x = fpx.generate("wide", 40, fmt, trial)
        y = fpx.generate("normal", 40, fmt, trial + 7)
        assert float(fpx.sum(x, "revealed", tree=code)) == slow_tree(tree, set(), x, None, fmt)
        got = fpx.dot(x, y, "revealed", tree=code, fma=True)
        assert float(got) == slow_tree(tree, fused, x, y, fmt)
        got = fpx.dot(x, y, "revealed", tree=code)
        assert float(got) == slow_tree(tree, set(), x, y, fmt)


def test_the_order_is_unlisted_and_checked():
    assert "revealed" not in fpx.orders("sum") and "revealed" not in fpx.orders("matmul")
    assert not any(c.name == "revealed" for c in fpx.detective.candidates("dot", "float32"))
    code = fpx.reveal(np.sum, 8).code
    with pytest.raises(ValueError, match="n=8 terms"):
        fpx.sum(np.ones(9, np.float32), "revealed", tree=code)
    with pytest.raises(ValueError, match="not the code"):
        fpx.parse_spec("revealed(tree=zzzz)", "sum")
    with pytest.raises(ValueError, match="needs tree="):
        fpx.sum(np.ones(9, np.float32), "revealed")
    with pytest.raises(ValueError, match="remembered only"):
        fpx.parse_spec("revealed(tree=h0123456789abcdef)", "sum")


def test_arguments_are_checked():
    with pytest.raises(TypeError, match="callable"):
        fpx.reveal("np.sum", 8)
    with pytest.raises(ValueError, match="n must be"):
        fpx.reveal(np.sum, 300, format="bfloat16")
    with pytest.raises(ValueError, match="unknown op"):
        fpx.reveal(np.sum, 8, op="mean")
    with pytest.raises(TypeError, match="must return a number"):
        fpx.reveal(lambda x: x, 8)


def test_what_is_not_a_tree_of_additions_gets_no_tree():
    """A compensated sum, a function returning a constant (0, or 1.5), one that sorts
    before it sums, one that returns the largest term: each a ValueError saying fn is not a
    tree of additions (a constant 0 and a sorted sum got a 16-term tree before, with only
    reproduces=False to hint)."""
    for fn in (
        lambda x: fpx.sum(x, "kahan"),
        lambda x: x.dtype.type(0),
        lambda x: np.float32(1.5),
        lambda x: np.sum(np.sort(x)),
        np.max,
    ):
        with pytest.raises(ValueError, match="tree of rounded additions|one tree"):
            fpx.reveal(fn, 16)


def test_a_sort_of_a_thousand_terms_is_refused_at_once():
    """Sorted first, every pair of terms meets at one node: the tree was built a child at a
    time, a thousand calls deep (adversarial pass 11: RecursionError after 11 s). More terms
    at one node than any tree of additions adds at once is the ValueError."""
    import time

    t0 = time.perf_counter()
    with pytest.raises(ValueError, match="adds 1000 or more terms at one node"):
        fpx.reveal(lambda x: np.cumsum(np.sort(x))[-1], 1000)
    assert time.perf_counter() - t0 < 30  # (n calls, not n * n)


# ----------------------------------------------------------------------------- explain


def test_explain_falls_back_to_the_revealed_tree():
    rng = np.random.default_rng(7)
    items = list(range(256))
    while len(items) > 1:  # random merges: a tree no registered order has
        i, j = sorted(rng.choice(len(items), 2, replace=False))
        b, a = items.pop(j), items.pop(i)
        items.append((a, b))
    code = trees.encode(trees.canonical(items[0]))

    def odd(x):
        return fpx.sum(x, "revealed", tree=code)

    x = fpx.generate("ill-conditioned", 256, "float32", 0)
    results = {"mine": odd(x), "numpy": np.sum(x)}
    plain = fpx.explain("sum", x, results)
    assert not isinstance(plain.table.loc["mine", "reproduced_by"], str)  # nothing known
    e = fpx.explain("sum", x, results, fn=odd)
    assert e.table.loc["mine", "reproduced_by"].startswith("revealed(tree=")
    assert e.causes.iloc[0]["factor"] == "order"
    with pytest.raises(TypeError, match="callable"):
        fpx.explain("sum", x, results, fn=3)


def _kahan_loop(x):
    """Kahan's compensated sum written as a plain loop in the data's format."""
    s = c = x.dtype.type(0)
    for v in x:
        y = v - c
        t = s + y
        c = (t - s) - y
        s = t
    return s


@pytest.mark.parametrize(
    ("fn", "n", "fmt"),
    [
        (_kahan_loop, 3, "float32"),
        (_kahan_loop, 3, "float64"),  # (pass 11: random data tells it apart 1 time in 9)
        (_kahan_loop, 7, "float64"),
        (_kahan_loop, 33, "float16"),
        (_kahan_loop, 7, "bfloat16"),
        (lambda x: x.dtype.type(np.mean(x) * len(x)), 100, "float32"),
        (lambda x: x.dtype.type(np.mean(x) * len(x)), 5, "bfloat16"),
    ],
)
def test_a_tree_that_only_normal_data_reproduces_is_refused(fn, n, fmt):
    """Issue 36: a compensated loop on a few terms, or n * mean(x), passed the check on three
    standard-normal inputs and got a confident tree (a sequential sum with a float64
    accumulator for Kahan's float32 loop of 3), which gives other values than fn on data
    with a wide range of exponents or with cancellation. The check draws those too."""
    with pytest.raises(ValueError, match="tree of rounded additions"):
        fpx.reveal(fn, n, format=fmt)


@pytest.mark.parametrize("n", [16, 1000])
def test_np_dot_gets_a_tree_that_gives_its_results_or_none(n):
    """Issue 36: on this machine's OpenBLAS, reveal(np.dot, 16) gave a sequential tree with
    a float64 accumulator and reveal(np.dot, 1000) a tree with FMA, both passing three random
    checks, which missed np.dot's result on 22 and 9 of 50 further standard-normal inputs.
    Whatever the BLAS: a refusal, or a tree that gives np.dot's result on all of them."""
    try:
        rev = fpx.reveal(np.dot, n, op="dot")
    except ValueError as e:
        assert "tree of rounded additions" in str(e)
        return
    s = parse_spec(rev.as_spec(), "dot")
    rng = np.random.default_rng(1)
    for _ in range(50):
        a, b = rng.standard_normal((2, n)).astype(np.float32)
        assert fpx.dot(a, b, s.name, **s.kwargs()) == np.dot(a, b)


def _fused_pair(a, b):
    """fma(a[1], b[1], a[0] * b[0]) in float64: the exact sum rounded once (Fraction)."""
    return np.float64(float(Fraction(float(a[1])) * Fraction(float(b[1])) + Fraction(a[0] * b[0])))


def test_two_fused_products_are_probed():
    """Issue 36: with two terms the tree has no inner node below the root, so the accumulator
    probe cannot run, and the FMA probe was skipped with it: fma(a1, b1, a0 * b0) got the
    tree (0+1) without FMA, which passed the three random checks and missed the function's
    result on about one input in six (so did OpenBLAS's 2 x 2 float64 matmul here)."""
    rev = fpx.reveal(_fused_pair, 2, op="dot", format="float64")
    assert rev.fma is True and rev.as_order().endswith("+fma")
    s = parse_spec(rev.as_spec(), "dot")
    rng = np.random.default_rng(2)
    for _ in range(200):
        a = rng.standard_normal(2) * np.exp2(rng.integers(-12, 12, 2))
        b = rng.standard_normal(2)
        assert fpx.dot(a, b, s.name, **s.kwargs()) == _fused_pair(a, b)


@pytest.mark.skipif(sys.version_info < (3, 11), reason="exception notes are Python 3.11+")
def test_an_error_of_fn_says_how_reveal_called_it():
    """Pass 5 (issue 36): np.sum probed as a matmul (fn(A, B): B read as an axis) raised
    NumPy's "only integer scalar arrays can be converted to a scalar index" with no word of
    the call; the user's exception stays, with a note saying how fn was called."""
    with pytest.raises(TypeError) as err:
        fpx.reveal(np.sum, 8, op="matmul")
    assert err.value.__notes__ == [
        "fpx.reveal called fn with (8, 8) and (8, 8) float32 arrays (op='matmul')"
    ]


def test_a_tree_in_two_formats_is_refused_with_that_reason():
    """Pass 6 (issue 36): OpenBLAS's sdot (here its emulation, so no host BLAS is involved)
    adds its 32-term SIMD blocks in float32 lanes and the 8 terms past them in float64: no
    one-accumulator tree reproduces it, and the refusal said only "constant, sort, rescale,
    compensate"."""

    def fn(a, b):
        return fpx.dot(a, b, "openblas", kernel="haswell", threads=1)

    with pytest.raises(ValueError, match="in one accumulator.*add some terms in another format"):
        fpx.reveal(fn, 40, op="dot")


def test_fpx_sum_takes_a_revealed_order_by_its_parts_and_says_so_of_the_text():
    """docs/reveal.md said fpx.sum takes as_order()'s text; it raised "unknown order
    'revealed(tree=...)'" while listing revealed (pass 15). The text is a spec: the message
    says how to pass its parts, and the parts compute np.sum's tree (np.sum the oracle)."""
    x = np.random.default_rng(5).standard_normal(8).astype(np.float32)
    r = fpx.reveal(np.sum, 8)
    with pytest.raises(ValueError, match=r"is a variant spec: give the order 'revealed' and its"):
        fpx.sum(x, r.as_order())
    s = fpx.parse_spec(r.as_order(), "sum")
    assert s == r.as_spec() and fpx.sum(x, s.name, **s.kwargs()) == np.sum(x)


def test_a_format_given_as_a_numpy_type_is_stored_by_name():
    """Pass 32: reveal(np.sum, 8, format=np.float64) kept the type (its repr read
    "<class 'numpy.float64'>")."""
    for given in (np.float64, np.dtype("float64"), "float64"):
        r = fpx.reveal(np.sum, 8, format=given)
        assert r.format == "float64" and repr(r).startswith("Reveal(sum, n=8, float64)")


def test_a_known_format_reveal_does_not_take_is_not_called_unknown():
    """Pass 34: reveal(format='float8_e4m3') said "unknown format 'float8_e4m3'"."""
    with pytest.raises(ValueError, match=r"reveal: format='float8_e4m3': reveal takes float16"):
        fpx.reveal(np.sum, 8, format="float8_e4m3")
    with pytest.raises(ValueError, match=r"unknown format 'f4'; reveal takes: float16"):
        fpx.reveal(np.sum, 8, format="f4")
    assert fpx.reveal(np.sum, 8, format=np.dtype(">f4")).format == "float32"
