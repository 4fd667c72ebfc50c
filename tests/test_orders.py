"""Every evaluation order against its slow independent definition (tests/slow_orders.py),
the `numpy` orders against real NumPy (live and recorded), and the order API's errors."""

from __future__ import annotations

import itertools
import json
import math
from fractions import Fraction
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import fpexplore as fpx

import oracle
import slow_orders as so
from numpy_sum_cases import cases, make, view
from oracle import SPECS, same
from strategies import STORAGE, arrays, random_values

DATA = Path(__file__).parent / "data"
SIZES = [0, 1, 2, 3, 5, 8, 9, 17, 64, 100, 129, 300, 1000]
# the orders defined in docs/orders.md; the library loops (simd.py, frameworks.py) have their
# own slow definitions and recordings: tests/test_simd_orders.py, test_framework_orders.py
# (and the tensor cores: tests/test_tensor_core.py, test_tensor_core_order.py)
LIBRARY_LOOPS = {"openblas", "einsum", "polars", "llvm-fastmath", "numba-prange", "torch", "xla"}
LIBRARY_LOOPS |= {"tensor-core"}
NON_EXACT = [o for o in fpx.orders("sum") if o != "exact" and o not in LIBRARY_LOOPS]


def permutation(n, seed):
    """The seeded permutation the shuffled/atomic orders use (input data, not arithmetic)."""
    from fpexplore.orders._kernels import permutation as perm

    return perm(n, seed).tolist()


def default_acc(order: str, fmt: str) -> str:
    if fmt == "float16" and order in ("numpy", "numpy-chunked", "cupy-kernel"):
        return "float32"
    return fmt


def expected_sum(order, x, fmt, acc=None, **params):
    """The slow definition of fpx.sum(x, order, accumulate=acc, **params), in x's format."""
    acc = acc or default_acc(order, fmt)
    ar = so.Arith(acc, ftz=(order == "cupy-kernel" and params.get("ftz", True)))
    t = [ar.conv(v) for v in x]
    if order == "cupy-kernel":
        t = [ar._f(v) for v in t]
    if order == "sequential":
        r = so.sequential(t, ar)
    elif order == "reverse":
        r = so.sequential(t[::-1], ar)
    elif order == "pairwise":
        r = so.pairwise(t, ar)
    elif order in ("numpy", "numpy-chunked"):
        if fmt == "bfloat16":  # ml_dtypes' add loop: sequential onto +0.0
            r = so.tree(t, ar, block=1) if t else ar.zero()
        else:
            chunk = params.get("chunk", 8192) if order == "numpy-chunked" else None
            r = so.numpy_sum(t, ar, fmt, chunk)
    elif order == "blocked":
        r = so.blocked(t, ar, params.get("block", 128))
    elif order in ("tree", "tree-strided"):
        block = params.get("block", 128)
        nparts = -(-len(t) // block)
        perm, car = None, None
        if params.get("combine") == "atomic":
            perm = permutation(nparts, params.get("seed", 0))
            car = so.Arith(acc, ftz=True)  # atomicAdd(float*) flushes subnormals
        r = so.tree(t, ar, block, order == "tree-strided", perm, car)
    elif order == "cupy-kernel":
        r = so.cupy_kernel(t, ar, params.get("block_size", 512))
    elif order == "cub":
        bits = SPECS[acc][0].itemsize * 8
        ipt = params.get("items") or {16: 32, 32: 16, 64: 8}[bits]
        tree_ = (params.get("thread_reduce") or ("tree" if bits < 64 else "sequential")) == "tree"
        r = so.cub(
            t,
            ar,
            params.get("max_blocks", 5280),
            params.get("threads", 256),
            ipt,
            params.get("vector", 4),
            params.get("aligned", True),
            tree_,
        )
    elif order == "shuffled":
        p = permutation(len(t), params.get("seed", 0))
        r = so.sequential([t[i] for i in p], ar)
    elif order == "kahan":
        r = so.kahan(t, ar)
    elif order == "neumaier":
        r = so.neumaier(t, ar)
    else:
        raise AssertionError(order)
    return so.Arith(fmt).conv(r) if fmt != acc else r


def check(got, want, fmt, ctx):
    want = np.asarray(want, dtype=SPECS[fmt][0])[()] if not isinstance(want, np.generic) else want
    if fmt == "float64":
        want = np.float64(want)
    oracle.CHECKED["cases"] += 1
    assert same(got, want), (ctx, got, want)


def data(fmt, n, seed=0, finite=True):
    rng = np.random.default_rng(seed + n)
    x = random_values(rng, fmt, n)
    if finite:
        with np.errstate(invalid="ignore"):
            bad = ~np.isfinite(x.astype(np.float64))
        x[bad] = np.asarray(0.5, dtype=x.dtype)
        # keep partial sums finite: scale into a moderate range
        big = np.abs(x.astype(np.float64)) > 2.0 ** (SPECS[fmt][3] - 12)
        x[big] = np.asarray(1.5, dtype=x.dtype)
    return x


# ----------------------------------------------------------------------------- sum


@pytest.mark.parametrize("fmt", STORAGE)
@pytest.mark.parametrize("order", NON_EXACT)
def test_sum_orders_match_definitions(order, fmt):
    for n in SIZES:
        x = data(fmt, n)
        check(fpx.sum(x, order), expected_sum(order, x, fmt), fmt, (order, n))


PARAM_CASES = [
    ("blocked", {"block": 1}),
    ("blocked", {"block": 7}),
    ("tree", {"block": 2}),
    ("tree", {"block": 32, "combine": "atomic", "seed": 3}),
    ("tree-strided", {"block": 64, "combine": "atomic", "seed": 9}),
    ("tree-strided", {"block": 256}),
    ("numpy-chunked", {"chunk": 64}),
    ("numpy-chunked", {"chunk": 100}),
    ("cupy-kernel", {"block_size": 64}),
    ("cupy-kernel", {"ftz": False}),
    ("shuffled", {"seed": 12345}),
    ("cub", {"threads": 32, "items": 4, "vector": 2, "max_blocks": 3}),
    ("cub", {"threads": 32, "items": 4, "vector": 4, "aligned": False, "max_blocks": 2}),
    ("cub", {"threads": 64, "items": 8, "thread_reduce": "sequential", "max_blocks": 5}),
]


@pytest.mark.parametrize("fmt", ["float16", "float32", "float64"])
@pytest.mark.parametrize("order,params", PARAM_CASES, ids=lambda v: str(v))
def test_sum_order_parameters(order, params, fmt):
    for n in (0, 1, 31, 129, 700, 1500):
        x = data(fmt, n, seed=1)
        got = fpx.sum(x, order, **params)
        check(got, expected_sum(order, x, fmt, **params), fmt, (order, params, n))


def test_cub_multi_block_default_tile():
    """Sizes over one 4096-element tile: strip-mining over blocks, a partial last tile."""
    for n, max_blocks in ((4097, 5280), (9000, 2), (20000, 3), (12289, 3)):
        x = data("float32", n, seed=5)
        got = fpx.sum(x, "cub", max_blocks=max_blocks)
        check(got, expected_sum("cub", x, "float32", max_blocks=max_blocks), "float32", n)
    rng = np.random.default_rng(6)
    xs = [rng.uniform(0, 1, 4097 + k).astype(np.float32) for k in range(20)]
    # alignment changes the order (vector loads vs striped loads), so some results differ
    assert any(fpx.sum(x, "cub") != fpx.sum(x, "cub", aligned=False) for x in xs)


@pytest.mark.parametrize(
    "fmt,acc",
    [
        ("float16", "float32"),
        ("float16", "float64"),
        ("bfloat16", "float32"),
        ("float32", "float64"),
        ("float32", "float16"),
        ("float64", "float32"),
    ],
)
@pytest.mark.parametrize(
    "order", ["sequential", "pairwise", "tree", "kahan", "neumaier", "blocked"]
)
def test_sum_accumulator_formats(order, fmt, acc):
    for n in (0, 1, 10, 300):
        x = data(fmt, n, seed=2)
        if SPECS[acc][1] < SPECS[fmt][1]:  # narrower accumulator: keep values representable
            x = np.asarray(fpx.as_format(fpx.as_format(x, acc), fmt))
        check(fpx.sum(x, order, accumulate=acc), expected_sum(order, x, fmt, acc), fmt, (n,))


@pytest.mark.parametrize("fmt", STORAGE)
@settings(max_examples=60)
@given(data_=st.data())
def test_sum_specials_hypothesis(fmt, data_):
    """NaN, ±inf, ±0, subnormals, overflow: every order follows its definition."""
    x = data_.draw(arrays(fmt, 0, 24))
    order = data_.draw(st.sampled_from(NON_EXACT))
    with np.errstate(all="ignore"):
        check(fpx.sum(x, order), expected_sum(order, x, fmt), fmt, (order, x))


def _textbook_kahan(t: list[float]) -> float:
    """docs/orders.md's kahan in Python floats (IEEE binary64, round to nearest)."""
    s, c = t[0], 0.0
    for v in t[1:]:
        y = v - c
        u = s + y
        c = (u - s) - y
        s = u
    return s


def _textbook_neumaier(t: list[float]) -> float:
    s, c = t[0], 0.0
    for v in t[1:]:
        u = s + v
        c = c + (((s - u) + v) if abs(s) >= abs(v) else ((v - u) + s))
        s = u
    return s + c


def test_compensated_orders_with_infinities_follow_the_textbook():
    """kahan and neumaier are the unguarded algorithms (docs/orders.md's table): inf - inf in
    the compensation gives NaN where the IEEE sequential sum is inf; sum, dot (fma or not),
    matmul and the slow twins agree on it in every format."""
    inf, mx = math.inf, float(np.finfo(np.float64).max)
    table = {  # terms: (kahan, neumaier), the textbook's answers
        (inf, 1.0): (inf, math.nan),
        (1.0, inf): (inf, math.nan),
        (inf, 1.0, 1.0): (math.nan, math.nan),
        (mx, mx, -mx): (math.nan, math.nan),
        (-inf, 2.0): (-inf, math.nan),
    }
    for terms, (k, nm) in table.items():
        x = np.array(terms)
        with np.errstate(all="ignore"):
            assert same(_textbook_kahan(list(terms)), k) and same(
                _textbook_neumaier(list(terms)), nm
            )
        assert same(fpx.sum(x, "kahan"), k), terms
        assert same(fpx.sum(x, "neumaier"), nm), terms
    for fmt in STORAGE:
        dt = SPECS[fmt][0]
        _, p, _, emax = SPECS[fmt]
        big = (2 - 2.0 ** (1 - p)) * 2.0**emax  # the format's largest finite value
        vals = [inf, -inf, math.nan, 1.0, -1.0, big, -big, -0.0]
        ar = so.Arith(fmt)
        for n in (1, 2, 3):
            for combo in itertools.product(vals, repeat=n):
                x = np.array(combo).astype(dt)
                t = [ar.conv(v) for v in combo]
                ones = np.ones(n, dt)
                for order, slow in (("kahan", so.kahan), ("neumaier", so.neumaier)):
                    want = slow(t, ar)
                    got = [fpx.sum(x, order), fpx.dot(x, ones, order)]
                    got += list(fpx.matmul(x[None, :], np.ones((n, 5), dt), order)[0])
                    if order == "kahan":
                        got.append(fpx.dot(x, ones, order, fma=True))
                    for g in got:
                        assert same(g, want), (fmt, order, combo, g, want)


@settings(max_examples=60)
@given(data_=st.data())
def test_atomic_combine_specials_hypothesis(data_):
    """Subnormal block results: float32 atomics flush them, other formats keep them."""
    fmt = data_.draw(st.sampled_from(STORAGE))
    x = data_.draw(arrays(fmt, 0, 24))
    params = {"block": data_.draw(st.sampled_from([2, 4])), "combine": "atomic", "seed": 5}
    order = data_.draw(st.sampled_from(["tree", "tree-strided"]))
    with np.errstate(all="ignore"):
        check(fpx.sum(x, order, **params), expected_sum(order, x, fmt, **params), fmt, x)


def test_atomic_combine_flushes_float32_subnormals():
    """CUDA: atomicAdd(float*) on global memory flushes subnormal operands and results (CUDA
    C++ Programming Guide, "Floating-Point Standard"); double and half atomics do not."""
    s = 2.0**-140  # a float32 subnormal; two block results of s each (block=2: [s, 0])
    x = np.array([s, 0, -s / 2, 0, s, 0], dtype=np.float32)
    assert fpx.sum(x, "tree", block=2) == np.float32(1.5 * s)  # in block order: kept
    assert fpx.sum(x, "tree", block=2, combine="atomic") == 0.0  # every operand flushed
    big = np.array([2.0**-125, 0, -(2.0**-126) - 2.0**-130, 0], dtype=np.float32)
    # 2^-125 - 2^-126 - 2^-130 is subnormal (exactly): the atomic result flushes to +0
    assert fpx.sum(big, "tree", block=2) == np.float32(2.0**-126 - 2.0**-130)
    r = fpx.sum(big, "tree", block=2, combine="atomic")
    assert r == 0.0 and not np.signbit(r)
    for fmt, scale in (("float64", 2.0**-900), ("float16", 2.0**118)):  # subnormal there too
        y = np.asarray(fpx.as_format(x.astype(np.float64) * scale, fmt))
        assert np.all(np.abs(y.astype(np.float64)) < fpx.format_info(fmt).smallest_normal)
        want = 1.5 * s * scale
        assert fpx.sum(y, "tree", block=2, combine="atomic") == want
        assert fpx.sum(y, "tree", block=2) == want


def test_exact_order_and_signed_zeros():
    x = np.array([1e20, 1.0, -1e20], dtype=np.float64)
    assert fpx.sum(x, "exact") == 1.0
    assert fpx.sum(x, "sequential") == 0.0
    z = np.array([-0.0, -0.0])
    assert np.signbit(fpx.sum(z, "sequential"))  # acc = x[0]: -0 + -0
    assert not np.signbit(fpx.sum(z, "numpy"))  # NumPy adds to the identity +0.0
    assert not np.signbit(fpx.sum(z, "tree"))  # combined onto a zeroed result
    assert not np.signbit(fpx.sum(np.array([], np.float32), "kahan"))
    # Neumaier's textbook result s + c, c starting at +0.0: rn(-0 + +0) = +0 (docs/orders.md)
    z32 = np.array([-0.0, -0.0], np.float32)
    s, c = np.float32(-0.0), np.float32(0.0)
    for t in z32[1:]:  # the algorithm written out in plain float32 NumPy
        u = s + t
        c = c + ((s - u) + t if abs(s) >= abs(t) else (t - u) + s)
        s = u
    assert not np.signbit(s + c) and not np.signbit(fpx.sum(z32, "neumaier"))
    assert np.signbit(fpx.sum(z32, "kahan")) and np.signbit(fpx.exact_sum(z32))


def test_sum_of_2d_flattens_in_c_order():
    x = np.arange(12, dtype=np.float32).reshape(3, 4) / 7
    assert same(fpx.sum(x, "sequential"), fpx.sum(x.ravel(), "sequential"))
    assert same(fpx.sum(x.T, "sequential"), fpx.sum(x.T.ravel(), "sequential"))


# ------------------------------------------------------------------------ numpy orders vs NumPy


@pytest.mark.blas
@pytest.mark.parametrize("how", ["contiguous", "stride2", "reversed"])
@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_numpy_order_equals_installed_np_sum(dtype, how):
    """sizes 0..300, 1000, 8191..8193, 16385, 10^5+3, 10^6+3 (contiguous), three data kinds."""
    if tuple(int(v) for v in np.__version__.split(".")[:2]) < (2, 3):
        pytest.skip("the 'numpy' order models NumPy >= 2.3; 'numpy-chunked' models this one")
    n_checked = 0
    for n, kind, dt, h in cases():
        if dt != dtype or h != how:
            continue
        v = view(make(n, kind, dtype), how)
        with np.errstate(over="ignore"):
            want = np.sum(v)
        check(fpx.sum(v, "numpy"), want, dtype, (n, kind))
        n_checked += 1
    assert n_checked > 300


@pytest.mark.blas
def test_numpy_order_bfloat16_equals_np_sum():
    rng = np.random.default_rng(0)
    for n in (0, 1, 7, 100, 8193):
        x = rng.standard_normal(n).astype(ml_dtypes.bfloat16)
        check(fpx.sum(x, "numpy"), np.sum(x), "bfloat16", n)


@pytest.mark.parametrize("version", ["2.2.6", "1.26.4"])
def test_numpy_chunked_equals_recorded_old_numpy(version):
    """tests/data/numpy_sum_<version>.json: np.sum under that NumPy (record_numpy_sum.py)."""
    rec = json.loads((DATA / f"numpy_sum_{version}.json").read_text())
    assert rec["numpy"] == version
    differs = 0
    for n, kind, dtype, how, hexbits in rec["cases"]:
        v = view(make(n, kind, dtype), how)
        want = np.array(int(hexbits, 16), dtype=SPECS[dtype][0].str.replace("f", "u")).view(dtype)
        got = fpx.sum(v, "numpy-chunked")
        check(got, want[()], dtype, (version, n, kind, how))
        differs += not same(fpx.sum(v, "numpy"), want[()])
    assert differs > 10  # the recording tells the two NumPy generations apart


# ----------------------------------------------------------------------------- dot


def expected_dot(order, a, b, fmt, fused=False, acc=None, **params):
    acc = acc or default_acc(order, fmt)
    ar = so.Arith(acc, ftz=(order == "cupy-kernel"))
    if order in ("numpy", "numpy-chunked", "cub"):  # literal a * b in the inputs' format
        with np.errstate(all="ignore"):
            prods = np.multiply(a, b)
        if order == "cub" and fmt == "float32":
            prods = np.where(np.abs(prods) < 2.0**-126, prods * 0, prods)
        return expected_sum(order, prods.astype(SPECS[fmt][0]), fmt, acc, **params)
    A = [ar.conv(v) for v in a.tolist()]
    B = [ar.conv(v) for v in b.tolist()]
    if order == "cupy-kernel":
        A, B = [ar._f(v) for v in A], [ar._f(v) for v in B]
    t = [ar.mul(p, q) for p, q in zip(A, B)]
    if not fused:
        if order in (
            "sequential",
            "reverse",
            "pairwise",
            "blocked",
            "tree",
            "tree-strided",
            "shuffled",
            "kahan",
            "neumaier",
            "cupy-kernel",
        ):
            r = _sum_terms(order, t, ar, **params)
            return so.Arith(fmt).conv(r) if fmt != acc else r
        raise AssertionError(order)
    if order in ("sequential", "reverse", "shuffled"):
        idx = list(range(len(A)))
        if order == "reverse":
            idx = idx[::-1]
        if order == "shuffled":
            idx = permutation(len(A), params.get("seed", 0))
        r = _fused_chain(A, B, idx, ar)
    elif order == "blocked":
        block = params.get("block", 128)
        parts = [
            _fused_chain(A, B, list(range(lo, min(lo + block, len(A)))), ar)
            for lo in range(0, len(A), block)
        ]
        r = so.sequential(parts, ar)
    elif order in ("tree", "tree-strided"):
        block = params.get("block", 128)
        r = so.tree(t, ar, block, order == "tree-strided", fused=(A, B))
    elif order == "kahan":
        r = so.kahan(None, ar, fused=(A, B)) if A else ar.zero()
    elif order == "cupy-kernel":
        r = so.cupy_kernel(t, ar, params.get("block_size", 512), A, B)
    else:
        raise AssertionError(order)
    return so.Arith(fmt).conv(r) if fmt != acc else r


def _fused_chain(A, B, idx, ar):
    if not idx:
        return ar.zero()
    acc = ar.mul(A[idx[0]], B[idx[0]])
    for i in idx[1:]:
        acc = ar.fma(A[i], B[i], acc)
    return acc


def _sum_terms(order, t, ar, **params):
    if order == "sequential":
        return so.sequential(t, ar)
    if order == "reverse":
        return so.sequential(t[::-1], ar)
    if order == "pairwise":
        return so.pairwise(t, ar)
    if order == "blocked":
        return so.blocked(t, ar, params.get("block", 128))
    if order in ("tree", "tree-strided"):
        return so.tree(t, ar, params.get("block", 128), order == "tree-strided")
    if order == "shuffled":
        return so.sequential([t[i] for i in permutation(len(t), params.get("seed", 0))], ar)
    if order == "kahan":
        return so.kahan(t, ar)
    if order == "neumaier":
        return so.neumaier(t, ar)
    if order == "cupy-kernel":
        return so.cupy_kernel(t, ar, params.get("block_size", 512))
    raise AssertionError(order)


FMA_ORDERS = [o for o in fpx.orders("dot") if o != "exact" and o not in LIBRARY_LOOPS]
# docs/orders.md, "Products": where fma=True fuses a product into an addition
FUSED_DOT = {
    "sequential",
    "reverse",
    "blocked",
    "shuffled",
    "kahan",
    "cupy-kernel",
    "tree",
    "tree-strided",
}


@pytest.mark.parametrize("fmt", STORAGE)
@pytest.mark.parametrize("order", FMA_ORDERS)
def test_dot_orders_match_definitions(order, fmt):
    fusable = order in FUSED_DOT
    for n in (0, 1, 2, 9, 130, 600):
        a = data(fmt, n, seed=3)
        b = data(fmt, n, seed=4)
        # keep products in range
        a = np.asarray(fpx.as_format(np.clip(a.astype(np.float64), -1e3, 1e3), fmt))
        b = np.asarray(fpx.as_format(np.clip(b.astype(np.float64), -1e3, 1e3), fmt))
        for fused in (False, True) if fusable else (False,):
            got = fpx.dot(a, b, order, fma=fused)
            check(got, expected_dot(order, a, b, fmt, fused), fmt, (order, fused, n))


@pytest.mark.parametrize("fmt", STORAGE)
@pytest.mark.parametrize("order", ["tree", "tree-strided"])
def test_fused_trees_with_small_blocks(order, fmt):
    """tree+fma fuses each thread's own product into the first level, for every block size and
    a partial last block (padding threads hold no product)."""
    for block in (2, 4, 8, 64):
        for n in (1, 2, 3, 7, 8, 9, 31, 100):
            a = data(fmt, n, seed=n)
            b = data(fmt, n, seed=n + 50)
            a = np.asarray(fpx.as_format(np.clip(a.astype(np.float64), -1e3, 1e3), fmt))
            b = np.asarray(fpx.as_format(np.clip(b.astype(np.float64), -1e3, 1e3), fmt))
            got = fpx.dot(a, b, order, fma=True, block=block)
            want = expected_dot(order, a, b, fmt, True, block=block)
            check(got, want, fmt, (order, block, n))


def test_fused_tree_differs_from_the_rounded_one():
    """The example in docs/orders.md: a product whose rounding error matters at the first level."""
    e = 2.0**-13
    a = np.array([1 + e, -1.0], np.float32)
    b = np.array([1 + e, 1.0], np.float32)  # a0*b0 = 1 + 2^-12 + 2^-26: not a float32
    assert fpx.dot(a, b, "tree", block=2) == np.float32(2.0**-12)
    assert fpx.dot(a, b, "tree", block=2, fma=True) == np.float32(2.0**-12 + 2.0**-26)
    assert fpx.dot(a, b, "tree-strided", block=2, fma=True) == np.float32(2.0**-12 + 2.0**-26)


@pytest.mark.parametrize("fmt", ["float16", "bfloat16"])
@pytest.mark.parametrize(
    "order", ["sequential", "reverse", "blocked", "kahan", "cupy-kernel", "tree", "tree-strided"]
)
def test_fused_16bit_products_at_a_midpoint(order, fmt):
    """Deliberate double-rounding traps for fused orders in a 16-bit accumulator: a product
    exactly halfway between two values of the format plus a tiny accumulator. Rounding
    a*b + c to float64 first lands on the midpoint and ties to even; the correctly rounded
    fma goes the other way (bfloat16 a = [2^-50, 1.5], b = [2^-50, 0.6796875]: 1.0234375,
    not 1.015625). Random data never builds these."""
    info = fpx.format_info(fmt)
    m = info.precision // 2 + 1  # factors of m + 1 bits: products of up to 2m + 2 bits
    grid = 1 + np.arange(2**m) / 2**m
    x, y = (g.ravel() for g in np.meshgrid(grid, grid))
    prods = x * y  # exact in float64
    rounded = np.asarray(fpx.as_format(prods, fmt)).astype(np.float64)
    half_ulp = np.asarray(fpx.ulp(np.asarray(fpx.as_format(prods, fmt))), np.float64) / 2
    mid = np.flatnonzero(np.abs(prods - rounded) == half_ulp)
    assert len(mid) >= 20  # the premise: products on a midpoint
    tiny = 2.0 ** (-50 if fmt == "bfloat16" else -12)
    checked = 0
    for i in np.random.default_rng(11).permutation(mid)[:20]:
        for sign in (1.0, -1.0):
            a = np.asarray(fpx.as_format([sign * tiny, x[i]], fmt))
            b = np.asarray(fpx.as_format([tiny, y[i]], fmt))
            if order == "reverse":
                a, b = a[::-1].copy(), b[::-1].copy()
            got = fpx.dot(a, b, order, fma=True)
            check(got, expected_dot(order, a, b, fmt, True), fmt, (order, a, b))
            checked += 1
    assert checked >= 40 and info.name == fmt


def test_dot_numpy_is_np_sum_of_products_and_fma_example():
    rng = np.random.default_rng(8)
    for dt in (np.float16, np.float32, np.float64):
        a = rng.standard_normal(10007).astype(dt)
        b = rng.standard_normal(10007).astype(dt)
        assert same(fpx.dot(a, b, "numpy"), np.sum(a * b))
    # docs/cases.md section 3 (NVIDIA whitepaper): serial, FMA serial and the exact value
    a = np.array([1.907607, -0.7862027, 1.147311, 0.9604002], dtype=np.float32)
    b = np.array([-0.9355000, -0.6915108, 1.724470, -0.7097529], dtype=np.float32)
    serial = np.float32(0)
    for x, y in zip(a, b):
        serial = np.float32(serial + np.float32(x * y))
    assert same(fpx.dot(a, b, "sequential"), serial)
    fma_serial = np.float32(a[0] * b[0])
    for x, y in zip(a[1:], b[1:]):
        fma_serial = fpx.fma(x, y, fma_serial)
    assert same(fpx.dot(a, b, "sequential", fma=True), fma_serial)
    assert fpx.dot(a, b, "sequential") != fpx.dot(a, b, "sequential", fma=True)


# ----------------------------------------------------------------------------- matmul


@pytest.mark.parametrize("fmt", ["float16", "bfloat16", "float32", "float64"])
@pytest.mark.parametrize(
    "order", [o for o in fpx.orders("matmul") if o != "exact" and o not in LIBRARY_LOOPS]
)
def test_matmul_each_element_is_the_dot(order, fmt):
    rng = np.random.default_rng(12)
    A = rng.standard_normal((7, 33)).astype(SPECS[fmt][0])
    B = rng.standard_normal((33, 5)).astype(SPECS[fmt][0])
    fusable = order in FUSED_DOT
    for fused in (False, True) if fusable else (False,):
        params = {"block": 8} if order in ("blocked", "tree", "tree-strided") else {}
        M = fpx.matmul(A, B, order, fma=fused, **params)
        assert M.shape == (7, 5) and M.dtype == SPECS[fmt][0]
        for i in range(7):
            for j in range(5):
                d = fpx.dot(A[i], np.ascontiguousarray(B[:, j]), order, fma=fused, **params)
                check(M[i, j], d, fmt, (order, fused, i, j))


def test_matmul_split_k_and_input_rounding():
    rng = np.random.default_rng(13)
    A = rng.standard_normal((4, 50)).astype(np.float32)
    B = rng.standard_normal((50, 3)).astype(np.float32)
    M = fpx.matmul(A, B, "sequential", split_k=3)
    ar = so.Arith("float32")
    for i in range(4):
        for j in range(3):
            cuts = [0, 50 // 3, 100 // 3, 50]
            parts = [
                so.sequential([ar.mul(A[i, k], B[k, j]) for k in range(lo, hi)], ar)
                for lo, hi in zip(cuts, cuts[1:])
            ]
            check(M[i, j], so.sequential(parts, ar), "float32", (i, j))
    T = fpx.matmul(A, B, "pairwise", input_rounding="tf32")
    At = np.asarray(fpx.as_format(A, "tf32"))
    Bt = np.asarray(fpx.as_format(B, "tf32"))
    assert np.array_equal(T, fpx.matmul(At, Bt, "pairwise"))
    assert not np.array_equal(T, fpx.matmul(A, B, "pairwise"))


@pytest.mark.parametrize("fmt", STORAGE)
def test_exact_matmul_matches_exact_dot(fmt):
    rng = np.random.default_rng(14)
    A = random_values(rng, fmt, 12 * 40).reshape(12, 40)
    B = random_values(rng, fmt, 40 * 9).reshape(40, 9)
    with np.errstate(invalid="ignore"):
        A[~np.isfinite(A.astype(np.float64))] = 1
        B[~np.isfinite(B.astype(np.float64))] = 1
    A = np.asarray(fpx.as_format(np.clip(A.astype(np.float64), -1e4, 1e4), fmt))
    B = np.asarray(fpx.as_format(np.clip(B.astype(np.float64), -1e4, 1e4), fmt))
    A[0] = 0.0  # exact zeros: +0
    A[1] = -0.0
    B[:, 0] = 0.0  # (-0) * (+0): all products -0 -> -0
    A[2, :20] = A[3, :20]  # cancelling rows
    A[2, 20:] = -A[3, 20:]
    E = fpx.matmul(A, B, "exact")
    for i in range(12):
        for j in range(9):
            check(E[i, j], fpx.exact_dot(A[i], np.ascontiguousarray(B[:, j])), fmt, (i, j))


def test_exact_matmul_of_few_bit_products_against_rationals():
    """Products of few bits (FP8 values held in float32, small integers) make many exact
    sums a tie of the result's format: exact_matmul decides those by the exact float64 sum
    where every partial sum is a multiple of the products' lowest bit below 2**53 of it (else
    by the exact dot). Each element against the Fraction sum rounded once (NumPy's own
    float32 and float64 rounding of a rational via its numerator and denominator), at the
    2**53 edge too."""
    rng = np.random.default_rng(40)
    A = rng.uniform(0, 1, (6, 512)).astype(ml_dtypes.float8_e4m3fn).astype(np.float32)
    B = rng.uniform(0, 1, (512, 5)).astype(ml_dtypes.float8_e4m3fn).astype(np.float32)
    E = fpx.exact_matmul(A, B)
    ties = 0
    for i in range(6):
        for j in range(5):
            q = sum(Fraction(float(u)) * Fraction(float(v)) for u, v in zip(A[i], B[:, j]))
            want = oracle.round_fraction(q, "float32")
            ties += abs(q - Fraction(want)) * 2 == Fraction(float(np.spacing(np.float32(want))))
            assert E[i, j] == want, (i, j)
    assert ties  # (a quarter of them: their sums have two bits below float32's)
    big = np.array([[2.0**52, 1.0, 1.0], [2.0**53, 1.0, -(2.0**53)], [2.0**53, 1.0, 0.0]])
    col = np.array([[1.0], [0.5], [1.0]])  # (2**53 + 0.5: a tie of float64, to even)
    got = fpx.exact_matmul(big, col)[:, 0]
    for i in range(3):
        q = sum(Fraction(float(u)) * Fraction(float(v)) for u, v in zip(big[i], col[:, 0]))
        assert got[i] == oracle.round_fraction(q, "float64"), i


def test_exact_matmul_special_values_fall_back():
    A = np.array([[np.inf, 1.0], [1e300, 1e300]])
    B = np.array([[0.0, 1.0], [1.0, 1e10]])
    E = fpx.exact_matmul(A, B)
    assert np.isnan(E[0, 0]) and E[0, 1] == np.inf and E[1, 1] == np.inf


# ----------------------------------------------------------------------------- API and errors


def test_orders_listing():
    names = list(fpx.orders("sum"))
    for name in (
        "sequential",
        "reverse",
        "pairwise",
        "numpy",
        "numpy-chunked",
        "blocked",
        "tree",
        "tree-strided",
        "cupy-kernel",
        "cub",
        "shuffled",
        "kahan",
        "neumaier",
        "exact",
    ):
        assert name in names
    assert fpx.orders("sum")["cub"].endswith("[hypothesis]")
    assert "exact" in fpx.orders("matmul") and "cub" not in fpx.orders("matmul")
    # every library loop is listed, as a library, for the ops it has
    listed = set(fpx.orders("sum")) | set(fpx.orders("dot"))
    assert LIBRARY_LOOPS <= listed
    assert all(
        fpx.orders(op)[o].endswith("[library]")
        for op in ("sum", "dot")
        for o in LIBRARY_LOOPS & set(fpx.orders(op))
    )
    with pytest.raises(ValueError, match="ops with orders: sum, dot, matmul"):
        fpx.orders("conv")


def test_order_errors():
    x = np.ones(10, np.float32)
    with pytest.raises(ValueError, match="valid orders: sequential, reverse, pairwise"):
        fpx.sum(x, "random")
    with pytest.raises(ValueError, match="power of two"):
        fpx.sum(x, "tree", block=100)
    with pytest.raises(TypeError, match="its parameters: block, combine, seed"):
        fpx.sum(x, "tree", blocks=128)
    with pytest.raises(TypeError, match="has no parameter"):
        fpx.sum(x, "sequential", block=4)
    with pytest.raises(ValueError, match="unknown combine 'random'; valid: sequential, atomic"):
        fpx.sum(x, "tree", combine="random")
    with pytest.raises(ValueError, match="a sum has none"):
        fpx.sum(x, "sequential", fma=True)
    with pytest.raises(ValueError, match="orders where it does: sequential"):
        fpx.dot(x, x, "pairwise", fma=True)
    with pytest.raises(ValueError, match="input rounding"):
        fpx.sum(x, "sequential", accumulate="tf32")
    with pytest.raises(ValueError, match="valid formats"):
        fpx.sum(x, "sequential", accumulate="float8")
    for bad in ("float33", np.int8, 3):  # the message names the argument
        with pytest.raises(ValueError, match="^accumulate: unknown format"):
            fpx.sum(x, "sequential", accumulate=bad)
        with pytest.raises(ValueError, match="^accumulate: unknown format"):
            fpx.matmul(np.ones((2, 2)), np.ones((2, 2)), "sequential", accumulate=bad)
    with pytest.raises(TypeError, match="block must be an integer"):
        fpx.sum(x, "blocked", block=2.5)
    with pytest.raises(ValueError, match="multiple of vector"):
        fpx.sum(x, "cub", items=6, vector=4)
    with pytest.raises(ValueError, match="1-D arrays of equal length"):
        fpx.dot(x, np.ones(3, np.float32))
    with pytest.raises(ValueError, match="split_k must be"):
        fpx.matmul(np.ones((2, 3)), np.ones((3, 2)), split_k=5)
    with pytest.raises(ValueError, match="input_rounding"):
        fpx.matmul(np.ones((2, 3)), np.ones((3, 2)), input_rounding="float16")
    with pytest.raises(ValueError, match="atomic"):
        fpx.matmul(np.ones((2, 3)), np.ones((3, 2)), "tree", combine="atomic")
    with pytest.raises(TypeError, match="mixed formats"):
        fpx.dot(x, np.ones(10))


def test_dot_takes_input_rounding_like_matmul():
    rng = np.random.default_rng(5)
    a = rng.standard_normal(300).astype(np.float32)
    b = rng.standard_normal(300).astype(np.float32)
    for r in ("tf32", "bfloat16"):
        ra = np.asarray(fpx.as_format(fpx.as_format(a, r), "float32"))
        rb = np.asarray(fpx.as_format(fpx.as_format(b, r), "float32"))
        for order in ("sequential", "pairwise", "exact"):
            got = fpx.dot(a, b, order, input_rounding=r)
            assert fpx.to_bits(got) == fpx.to_bits(fpx.dot(ra, rb, order))
        m = fpx.matmul(a[None, :], b[:, None], "sequential", input_rounding=r)
        assert fpx.to_bits(m[0, 0]) == fpx.to_bits(fpx.dot(a, b, "sequential", input_rounding=r))
    assert fpx.dot(a, b, "sequential", input_rounding="tf32") != fpx.dot(a, b, "sequential")
    with pytest.raises(ValueError, match="input_rounding must be None, 'tf32' or 'bfloat16'"):
        fpx.dot(a, b, input_rounding="float16")


@pytest.mark.parametrize("fmt", ["bfloat16", "float16", "float32"])
@pytest.mark.parametrize("order", ["sequential", "kahan"])
@pytest.mark.parametrize("fma", [False, True])
def test_matmul_four_columns_in_step_equal_the_dot_of_each_column(fmt, order, fma):
    """matmul runs sequential and kahan four output columns at a time (independent chains the
    CPU overlaps): each element equals fpx.dot of its row and column (the 1-D kernel), also
    in the remainder columns (7 = 4 + 3)."""
    A = fpx.generate("wide", 5 * 33, fmt, 1).reshape(5, 33)
    B = fpx.generate("wide", 33 * 7, fmt, 2).reshape(33, 7)
    R = fpx.matmul(A, B, order, fma=fma)
    for i in range(5):
        for j in range(7):
            want = fpx.dot(A[i].copy(), B[:, j].copy(), order, fma=fma)
            assert oracle.same(R[i, j], want), (i, j)  # (any NaN equals any NaN)


def _same_or_both_nan(x, y) -> bool:
    """Arrays of one float dtype equal bit for bit, except that any NaN equals any NaN (NaN
    signs and payloads are not modelled: the compiler orders the operands of a NaN sum)."""
    x, y = np.asarray(x), np.asarray(y)
    u = oracle.UINT[x.dtype.itemsize * 8]
    nan = np.isnan(x.astype(np.float64)) & np.isnan(y.astype(np.float64))
    return x.shape == y.shape and np.array_equal(x.view(u)[~nan], y.view(u)[~nan])


def _lane_values(rng, fmt: str) -> np.ndarray:
    """float64 values for the 16-bit rounding: raw bit patterns over every exponent (float64
    subnormals, huge values, inf, NaN among them), the format's midpoints and their float64
    neighbours, the subnormal and overflow thresholds, 2**960 and their neighbours."""
    dtype, p, emin, emax = SPECS[fmt]
    raw = rng.integers(0, 2**63, size=200_000, dtype=np.int64).view(np.float64)
    raw = np.concatenate([raw, -raw])
    vals = np.asarray(random_values(rng, fmt, 30_000), dtype=np.float64)
    finite = vals[np.isfinite(vals) & (vals != 0)]
    ulp = np.ldexp(1.0, np.maximum(np.frexp(finite)[1] - 1, emin) - p + 1)
    mids = np.concatenate([finite + ulp / 2, finite - ulp / 2, finite * (1 + 2.0**-30)])
    edges = [0.0, 2.0**emin, 2.0 ** (emin - p + 1), 2.0 ** (emin - p), 1.5 * 2.0 ** (emin - p)]
    vmax = fpx.format_info(fmt).max
    edges += [vmax, vmax + 2.0 ** (emax - p), 2.0 ** (emax + 1), 2.0**960, 2.0**1023, 5e-324]
    edges = np.array(edges + [2.0**-1022, np.inf, np.nan])
    near = np.concatenate([edges, np.nextafter(edges, 0), np.nextafter(edges, np.inf)])
    near = np.concatenate([near, -near, mids, -mids])
    return np.concatenate([raw, vals, near])


@pytest.mark.parametrize("fmt", ["bfloat16", "float16"])
def test_lane_rounding_equals_round_to_precision(fmt):
    """matmul_columns' branch-free rounding (_rn_lanes) and round to odd (_odd_add_lanes)
    give round_to_precision's and odd_add64_scalar's bits on float64 values of every kind."""
    import numba as nb

    from fpexplore.orders import _kernels as K
    from fpexplore.orders import _matmul_kernels as MK
    from fpexplore.orders.arith import arith

    rp = arith(fpx.format_info(fmt)).rp

    @nb.njit
    def both_roundings(v, rp):
        tiny, shift = math.ldexp(1.0, rp[1]), ((53 - rp[0]) << 52) | (1 << 51)
        lanes, scalar = np.empty_like(v), np.empty_like(v)
        for i in range(v.shape[0]):
            lanes[i] = MK._rn_lanes(v[i], tiny, shift, rp[2])
            scalar[i] = K._round_rp(v[i], rp)
        return lanes, scalar

    @nb.njit
    def both_odd_adds(a, b):
        lanes, scalar = np.empty_like(a), np.empty_like(a)
        for i in range(a.shape[0]):
            lanes[i] = MK._odd_add_lanes(a[i], b[i])
            scalar[i] = K.odd_add64_scalar(a[i], b[i])
        return lanes, scalar

    rng = np.random.default_rng(31)
    v = _lane_values(rng, fmt)
    lanes, scalar = both_roundings(v, rp)
    assert np.array_equal(lanes.view(np.int64), scalar.view(np.int64))  # NaN: v itself
    # round to odd: sums with a rounding error (odd and even last bits), exact sums, huge ones
    a = np.concatenate([v, rng.standard_normal(100_000), np.full(1000, 1.0)])
    b = np.concatenate(
        [
            rng.permutation(v),
            rng.standard_normal(100_000) * 2.0**-60,
            rng.integers(1, 2**12, 1000) * 2.0**-53,
        ]
    )
    with np.errstate(all="ignore"):
        lanes, scalar = both_odd_adds(a, b)
    assert _same_or_both_nan(lanes, scalar)


@pytest.mark.parametrize("fmt", ["bfloat16", "float16"])
def test_matmul_columns_kernel_equals_the_element_kernel(fmt):
    """The 16-bit accumulators' matmul kernel (a row against tiles of columns, SIMD lanes)
    gives the bits of the element-by-element kernel, in every order, fused or not, with
    split-K, across tile boundaries (300 columns: 256 + 44; a tree's tiles are narrower),
    on data with zeros, subnormals, ties, overflow, infinities and NaN."""
    from fpexplore.orders import _kernels as K
    from fpexplore.orders import _matmul_kernels as MK
    from fpexplore.orders.arith import arith, to_storage

    rng = np.random.default_rng(32)
    ar = arith(fpx.format_info(fmt))
    A = random_values(rng, fmt, 3 * 37).reshape(3, 37)
    B = random_values(rng, fmt, 37 * 300).reshape(37, 300)
    A[1] = np.asarray(fpx.as_format(rng.standard_normal(37), fmt))  # mostly finite results
    B[:, :150] = np.asarray(fpx.as_format(rng.standard_normal((37, 150)), fmt))
    A[2, ::3] = 0.0
    X, Y = to_storage(A, ar), to_storage(B, ar)
    Yt = np.ascontiguousarray(Y.T)
    cases = [(code, False, 4) for code in range(8)] + [(c, True, 4) for c in (0, 1, 3, 4, 5, 6)]
    cases += [(4, False, 64), (5, True, 32), (3, True, 5)]
    for code, fused, block in cases:
        for split in (1, 3):
            with np.errstate(all="ignore"):
                want = K.matmul(X, Yt, code, fused, ar.z, ar.rp, block, split)
                got = MK.matmul_columns(X, Y, code, fused, ar.z, ar.rp, block, split)
            assert _same_or_both_nan(got, want), (code, fused, block, split)
            assert np.isfinite(got[1, :150]).all() and not np.isnan(got).all()
    with np.errstate(all="ignore"):  # k = 0: +0.0 everywhere
        empty = MK.matmul_columns(X[:, :0], Y[:0], 0, False, ar.z, ar.rp, 1, 1)
    assert np.array_equal(empty.view(np.int64), np.zeros((3, 300), np.int64))


def test_dot2_bounds_by_columns_equal_the_element_loop():
    """dot2_bounds (a row against tiles of columns; the zero flags looked at only where
    sum|p| is not positive) gives the interval ends and zero flags of the element-by-element
    loop it replaced, with signed zeros, 0 * inf, NaN and infinities, odd or not."""
    import numba as nb

    from fpexplore._numba import hw_fma
    from fpexplore.numerics import odd_add64_scalar, two_sum
    from fpexplore.orders import _matmul_kernels as MK

    @nb.njit
    def element_loop(A, Bt, odd):  # the kernel as it was, one element at a time
        m, n, k = A.shape[0], Bt.shape[0], A.shape[1]
        lo_end, hi_end = np.empty((m, n)), np.empty((m, n))
        zero = np.zeros((m, n), dtype=np.int8)
        g = k * 2.0**-53 / (1.0 - k * 2.0**-53)
        for i in range(m):
            for j in range(n):
                s = c = absum = 0.0
                all_zero = all_neg_zero = True
                for t in range(k):
                    a, b = A[i, t], Bt[j, t]
                    p = a * b
                    e = hw_fma(a, b, -p)
                    s, q = two_sum(s, p)
                    c = c + (q + e)
                    absum = absum + abs(p)
                    if a == 0.0 or b == 0.0:
                        if math.copysign(1.0, a) == math.copysign(1.0, b):
                            all_neg_zero = False
                    else:
                        all_zero = all_neg_zero = False
                if all_zero:
                    zero[i, j] = 2 if (all_neg_zero and k > 0) else 1
                err = 8.0 * g * g * absum + 4.0 * k * 5e-324
                h, lo = two_sum(s, c)
                if odd:
                    lo_end[i, j] = odd_add64_scalar(h, lo - err)
                    hi_end[i, j] = odd_add64_scalar(h, lo + err)
                else:
                    lo_end[i, j] = h + (lo - err)
                    hi_end[i, j] = h + (lo + err)
        return lo_end, hi_end, zero

    rng = np.random.default_rng(33)
    A = rng.standard_normal((6, 9)) * 2.0 ** rng.integers(-30, 30, (6, 9))
    B = rng.standard_normal((9, 270))
    A[0] = 0.0  # with B's -0 column: all -0 products
    A[1] = -0.0
    A[2, :4] = 0.0
    B[:, 3] = -0.0
    B[:, 4] = 0.0
    B[:, 5] = np.inf  # 0 * inf: NaN products where A's row is zero
    B[:5, 6] = np.nan
    A[3, 2] = -np.inf
    B[:, 7] = 1e-300  # products underflow to zero (nonzero factors)
    A[4] = 1e-300
    for odd in (False, True):
        with np.errstate(all="ignore"):
            got = MK.dot2_bounds(A, B, odd)
            want = element_loop(A, np.ascontiguousarray(B.T), odd)
        assert _same_or_both_nan(got[0], want[0]) and _same_or_both_nan(got[1], want[1])
        assert np.array_equal(got[2], want[2])
    assert got[2][0, 3] == 2 and got[2][1, 4] == 2 and got[2][0, 4] == 1 and got[2][0, 5] == 1


def test_matmul_bits_do_not_depend_on_the_threads(monkeypatch):
    """A large matmul runs blocks of rows in threads: the same bits with 1, 2 or 8."""
    from fpexplore.orders import products

    A = fpx.generate("normal", 203 * 170, "bfloat16", 3).reshape(203, 170)
    B = fpx.generate("normal", 170 * 130, "bfloat16", 4).reshape(170, 130)
    results = []
    for cores in (1, 2, 8):
        monkeypatch.setattr(products.os, "sched_getaffinity", lambda pid, c=cores: set(range(c)))
        results.append(
            [
                fpx.to_bits(fpx.matmul(A, B, "pairwise")),
                fpx.to_bits(fpx.matmul(A, B, "kahan", accumulate="float32")),
                fpx.to_bits(fpx.exact_matmul(A, B)),
                fpx.to_bits(products.matmul64(A, B)),
            ]
        )
    for got in results[1:]:
        assert all(np.array_equal(x, y) for x, y in zip(results[0], got))


def test_the_exact_order_refuses_an_accumulator_it_would_ignore():
    """fpx.sum(x, "exact", accumulate="float16") returned the exact sum as if float16 had
    been used: an argument nobody uses is refused, as the spec "exact@float16" is."""
    x = np.float32([1.0, 2.0**-30, -1.0])
    for call in (
        lambda: fpx.sum(x, "exact", accumulate="float16"),
        lambda: fpx.dot(x, x, "exact", accumulate="float64"),
        lambda: fpx.matmul(x.reshape(3, 1), x.reshape(1, 3), "exact", accumulate="float64"),
    ):
        with pytest.raises(ValueError, match="accumulate does not apply to the exact order"):
            call()
    assert fpx.sum(x, "exact") == np.float32(2.0**-30)  # the exact sum, by hand


def test_an_op_wide_accumulator_is_kept_by_the_variants_that_take_it():
    """compare(..., accumulate="float32") with the exact order among the variants: the exact
    one takes none (correctly rounded) and gives the exact result; the others use float32.
    A spec that names one for the exact order is refused."""
    x = fpx.generate("normal", 300, "float16", 5)
    cmp = fpx.compare(
        "sum",
        inputs=x,
        variants=["exact", "sequential"],
        accumulate="float32",
        backends=["emulated"],
    )
    assert cmp.results[("exact", "emulated")] == cmp.reference
    seq32 = np.float16(np.cumsum(x.astype(np.float32), dtype=np.float32)[-1])  # by hand
    assert cmp.results[("sequential", "emulated")] == seq32
    with pytest.raises(ValueError, match="does not apply to the exact order"):
        fpx.compare("sum", inputs=x, variants=["exact@float32"])
    with pytest.raises(ValueError, match="does not apply to the exact order"):
        fpx.cdist(x[:12].reshape(4, 3), x[:12].reshape(4, 3), order="exact", accumulate="float32")


def test_layouts_are_read_as_the_library_reads_them_or_refused():
    """np.sum of a Fortran-order or transposed array adds in memory order: the "numpy" order
    does too (it raveled in index order: 1 ulp off np.sum here); the definitions add the terms
    in index order whatever the layout; a layout emulated nowhere (a 2-D strided view for
    NumPy's reduction; strided or Fortran data for a library's loop: np.dot of strided
    views takes OpenBLAS's strided kernel) is a ValueError saying so."""
    rng = np.random.default_rng(0)
    C = rng.standard_normal((300, 70)).astype(np.float32)
    F = np.asfortranarray(C)
    for arr in (F, C.T, np.asfortranarray(C.astype(np.float16))):
        assert fpx.to_bits(fpx.sum(arr, "numpy")) == fpx.to_bits(np.sum(arr))
    assert fpx.sum(F, "sequential") == np.cumsum(F.ravel(), dtype=np.float32)[-1]
    x = C[:, 0]  # a strided 1-D view: NumPy's pairwise is the same over any stride
    assert fpx.to_bits(fpx.sum(x, "numpy")) == fpx.to_bits(np.sum(x))
    with pytest.raises(ValueError, match="order 'numpy' is NumPy's reduction.*not emulated"):
        fpx.sum(C[:, ::2], "numpy")
    with pytest.raises(ValueError, match="order 'einsum' is a library's loop.*ascontiguousarray"):
        fpx.sum(F, "einsum")
    with pytest.raises(ValueError, match="order 'openblas' is a library's loop"):
        fpx.dot(C[0, ::2], C[1, ::2], "openblas")
    fpx.dot(np.ascontiguousarray(C[0, ::2]), np.ascontiguousarray(C[1, ::2]), "openblas")


def test_a_big_endian_array_is_summed_as_np_sum_sums_it():
    """np.sum of a byte-swapped array (">f4", from a file written elsewhere) runs through
    NumPy's 8192-element cast buffer, each chunk pairwise in turn: past 8192 elements it is
    not np.sum of the same values in native order (adversarial pass 11: 16.066704 against
    np.sum's 16.06671). The "numpy" order sums it as np.sum does, in every layout it takes;
    np.sum itself is the oracle."""
    rng = np.random.default_rng(0)
    x = rng.standard_normal(8193).astype(">f4")
    assert fpx.to_bits(fpx.sum(x, "numpy")) == fpx.to_bits(np.sum(x))
    assert np.sum(x) != np.sum(x.astype("=f4"))  # (the case differs from native order)
    for dt in (">f2", ">f4", ">f8"):
        for n in (5, 8192, 8193, 20000, 65537):
            base = rng.standard_normal(2 * n).astype(dt)
            views = [base[:n], base[: 2 * n : 2], base[n - 1 :: -1]]
            if n % 2 == 0:
                two = base[:n].reshape(2, -1)
                views += [two, np.asfortranarray(two), two.T]
            for v in views:
                assert fpx.to_bits(fpx.sum(v, "numpy")) == fpx.to_bits(np.sum(v)), (
                    dt,
                    n,
                    v.strides,
                )
                ch = fpx.sum(
                    np.ravel(v.astype(v.dtype.newbyteorder("=")), order="K"), "numpy-chunked"
                )
                assert fpx.to_bits(fpx.sum(v, "numpy")) == fpx.to_bits(ch)
    with pytest.raises(ValueError, match="order 'numpy' is NumPy's reduction.*not emulated"):
        fpx.sum(base.reshape(2, -1)[:, ::2], "numpy")  # refused as in native order
    # compare and explain take the user's arrays as they are: their NumPy rows would be
    # NumPy's on the values in native order, not on the big-endian array, so it is refused
    for call in (
        lambda: fpx.compare("sum", inputs={"x": x}),
        lambda: fpx.explain("sum", x, {"a": np.sum(x), "b": np.float32(0)}),
    ):
        with pytest.raises(ValueError, match=r"inputs\['x'\] is big-endian \(>f4\).*x.astype"):
            call()


def test_np_mean_and_np_var_of_a_big_endian_array_are_emulated_too():
    """np.mean and np.var sum a byte-swapped array through the same cast buffer (pass 12:
    the "numpy" variants gave the native-order answer in 11 of 40 seeds at n = 8193).
    NumPy itself is the oracle."""
    for dt in (">f4", ">f8"):
        for n in (8193, 20000):
            for seed in range(4):
                x = (np.random.default_rng(seed).standard_normal(n) * 10 + 1000).astype(dt)
                assert fpx.to_bits(fpx.mean(x)) == fpx.to_bits(np.mean(x)), (dt, n, seed)
                for ddof in (0, 1):
                    got, want = fpx.variance(x, ddof=ddof), np.var(x, ddof=ddof)
                    assert fpx.to_bits(got) == fpx.to_bits(want), (dt, n, seed, ddof)


def test_pow_names_its_argument_and_pandas_missing_values_are_refused():
    """pow's messages say x or y (pass 12: the same text for both); a pandas Series with
    missing values is refused, as a masked array is (np.sum of it skips them, np.asarray
    makes them NaN: fpx.sum gave NaN where np.sum gave 0.75)."""
    import pandas as pd

    a = np.array([1.0, 3.0], np.float32)
    with pytest.raises(TypeError, match="pow: y: the Python value 0.1 is not exactly"):
        fpx.pow(a, 0.1)
    with pytest.raises(TypeError, match="pow: x: the Python value 0.1 is not exactly"):
        fpx.pow(0.1, a)
    s = pd.Series([0.5, None, 0.25], dtype="Float64")
    assert np.sum(s) == 0.75
    for call in (fpx.exact_sum, lambda v: fpx.sum(v, "numpy")):
        with pytest.raises(TypeError, match="a pandas Series with missing values"):
            call(s)
    assert fpx.exact_sum(pd.Series([0.5, 0.25])) == 0.75


def test_an_input_rounding_that_changes_nothing_is_refused():
    """tf32 holds every float16 and bfloat16 value, bfloat16 every bfloat16 value: rounding
    such inputs changes none of them, so it is refused (as fma=True where it changes
    nothing), in fpx.dot, fpx.matmul and compare; one that changes values is taken."""
    import ml_dtypes

    a16 = np.float16([1.5, 2.25, 3.0])
    for r in ("tf32", "tf32-rne", "tf32-truncate"):
        with pytest.raises(ValueError, match=f"input_rounding='{r}' changes nothing for float16"):
            fpx.dot(a16, a16, input_rounding=r)
    bf = np.array([1.5, 2.0], ml_dtypes.bfloat16)
    with pytest.raises(ValueError, match="changes nothing for bfloat16 data"):
        fpx.matmul(bf[None, :], bf[:, None], input_rounding="bfloat16")
    with pytest.raises(ValueError, match="changes nothing for float16 data"):
        fpx.compare("dot", format="float16", n=10, variants=["sequential+tf32"])
    # values change: taken (float16 data to bfloat16 loses bits; float32 data to tf32)
    assert fpx.dot(np.float16([1.0009765625]), np.float16([1.0]), input_rounding="bfloat16") == 1.0
    x = np.float32([1 + 2**-20])
    assert fpx.dot(x, np.float32([1.0]), input_rounding="tf32") == 1.0


def test_difference_budget_of_results_that_overflow_warns_nothing():
    """Two steps whose results are both inf (float16 sums past 65504): their difference is no
    number (NaN in the table), said without a RuntimeWarning reaching the user."""
    import warnings

    x = np.array([60000, 60000, 1, 2], dtype=np.float16)  # 120003 > float16's 65504
    assert np.isinf(np.float64(fpx.sum(x, "sequential")))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        budget = fpx.difference_budget(x, "sequential@float32", "sequential", "sum")
    assert list(budget.table["step"]) == ["start", "accumulate"]
    assert np.isnan(budget.table["delta_abs"]).all()


def test_a_tree_seed_without_atomics_is_refused_not_ignored():
    """Pass 6 (issue 36): fpx.sum(x, "tree", seed=r) for 20 values of r, meant as 20 GPU
    runs, gave one result 20 times: the seed orders the blocks' atomicAdds only."""
    x = np.random.default_rng(35).standard_normal(100_000).astype(np.float32)
    words = "order 'tree': seed= applies with combine='atomic' only"
    with pytest.raises(ValueError, match=words):
        fpx.sum(x, "tree", seed=1)
    with pytest.raises(ValueError, match="order 'tree-strided': seed= applies"):
        fpx.dot(x, x, "tree-strided", seed=4)
    with pytest.raises(ValueError, match=words):
        fpx.matmul(x[:64].reshape(8, 8), x[:64].reshape(8, 8), "tree", seed=5)
    with pytest.raises(ValueError, match="'tree\\(seed=2\\)': order 'tree': seed= applies"):
        fpx.parse_spec("tree(seed=2)", "sum")
    runs = {float(fpx.sum(x, "tree", combine="atomic", seed=s)) for s in range(5)}
    assert len(runs) > 1  # (with atomics the seed is the block order: 4 values of 5 here)
