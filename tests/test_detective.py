"""The order detective against hidden truth: observations made by the slow, independent
definitions in tests/slow_orders.py (never by fpexplore); the difference budget's parts add up
(fpexplore/budget.py); the reproducer script runs standalone (fpexplore/reproduce.py)."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

import fpexplore as fpx
from fpexplore import budget, detective, reproduce

import oracle
import slow_orders as so


def _hidden(order, x, ar, **p):
    t = [ar.conv(v) for v in x]
    if order == "sequential":
        return so.sequential(t, ar)
    if order == "reverse":
        return so.sequential(t[::-1], ar)
    if order == "pairwise":
        return so.pairwise(t, ar)
    if order == "numpy":
        return so.numpy_sum(t, ar, ar.fmt)
    if order == "numpy-chunked":
        return so.numpy_sum(t, ar, ar.fmt, 8192)
    if order == "blocked":
        return so.blocked(t, ar, p["block"])
    if order in ("tree", "tree-strided"):
        return so.tree(t, ar, p["block"], order == "tree-strided")
    if order == "kahan":
        return so.kahan(t, ar)
    if order == "neumaier":
        return so.neumaier(t, ar)
    raise AssertionError(order)


TRUTHS = [
    ("sequential", {}),
    ("reverse", {}),
    ("pairwise", {}),
    ("numpy", {}),
    ("numpy-chunked", {}),
    ("blocked", {"block": 64}),
    ("blocked", {"block": 512}),
    ("tree", {"block": 128}),
    ("tree", {"block": 1024}),
    ("tree-strided", {"block": 32}),
    ("kahan", {}),
]


@pytest.mark.parametrize("order,params", TRUTHS, ids=lambda v: str(v))
def test_detective_names_the_hidden_sum_order(order, params):
    rng = np.random.default_rng(len(order) + sum(params.values()))
    xs = [
        (rng.standard_normal(9000) * np.exp2(rng.uniform(-6, 6, 9000))).astype(np.float32)
        for _ in range(4)
    ]
    ar = so.Arith("float32")
    observed = [np.float32(_hidden(order, list(x), ar, **params)) for x in xs]
    df = detective.match_orders(xs, observed, "sum", top=None)
    exact = df[df["exact"]]
    labels = list(exact["variant"])
    truth = str(fpx.VariantSpec(order, tuple(sorted(params.items()))))
    assert truth in labels, (truth, labels[:5])
    # only genuinely indistinguishable configurations may tie (e.g. kahan vs a wider acc)
    assert len(labels) <= 4, labels
    assert df.attrs["exact_candidates"] == len(labels)


def test_detective_dot_with_fma_and_matmul():
    rng = np.random.default_rng(5)
    A = rng.standard_normal((6, 300)).astype(np.float32)
    B = rng.standard_normal((300, 5)).astype(np.float32)
    ar = so.Arith("float32")
    # hidden: blocked(64) fma chains, written with the Fraction fma oracle
    obs = np.empty((6, 5), np.float32)
    for i in range(6):
        for j in range(5):
            parts = []
            for lo in range(0, 300, 64):
                acc = ar.mul(A[i, lo], B[lo, j])
                for k in range(lo + 1, min(lo + 64, 300)):
                    acc = ar.fma(A[i, k], B[k, j], acc)
                parts.append(acc)
            obs[i, j] = so.sequential(parts, ar)
    df = detective.match_orders((A, B), obs, "matmul", top=None)
    assert df.iloc[0]["variant"] == "blocked(block=64)+fma" and df.iloc[0]["exact"]
    assert df.iloc[0]["exact_matches"] == 30
    # dot: many single observations of the same hidden configuration
    xs = [
        (rng.standard_normal(700).astype(np.float32), rng.standard_normal(700).astype(np.float32))
        for _ in range(3)
    ]
    seq_obs = []
    for a, b in xs:
        acc = ar.mul(a[0], b[0])
        for k in range(1, 700):
            acc = ar.fma(a[k], b[k], acc)
        seq_obs.append(acc)
    df = detective.match_orders(xs, seq_obs, "dot", top=5)
    assert df.iloc[0]["variant"] == "sequential+fma"


def test_an_observation_has_the_shape_of_one_result():
    """match_orders(x, x, "sum") took the 100 values of x as "observations" of one sum."""
    x = np.random.default_rng(3).standard_normal(100).astype(np.float32)
    with pytest.raises(ValueError, match=r"observed must be one sum result \(a scalar\)"):
        detective.match_orders(x, x, "sum")
    A = x.reshape(10, 10)
    with pytest.raises(ValueError, match=r"observed has shape \(3, 3\); matmul of these"):
        detective.match_orders((A, A), np.ones((3, 3), np.float32), "matmul")
    df = detective.match_orders(x, np.cumsum(x)[-1], "sum")
    assert bool(df.iloc[0]["exact"])


def test_a_list_of_inputs_needs_a_list_of_results():
    """A list of inputs is one per observation: with one result ([1.0, 2.0, 0.5], 3.5) it was
    Python's "'float' object is not iterable", naming nothing."""
    x = np.float32([1.0, 2.0, 0.5])
    for inputs in ([1.0, 2.0, 0.5], [x, x]):
        with pytest.raises(TypeError, match=r"inputs is a list .* observed must be a list"):
            detective.match_orders(inputs, np.float32(3.5), "sum")
    with pytest.raises(ValueError, match="inputs is an empty list"):  # (was UnboundLocalError)
        detective.match_orders([], [], "sum")
    df = detective.match_orders(np.asarray([1.0, 2.0, 0.5]), 3.5, "sum")
    assert bool(df.iloc[0]["exact"])  # 1 + 2 + 0.5 is 3.5 in every order


def test_detective_ranks_near_misses_and_checks_input():
    x = np.random.default_rng(1).uniform(0, 1, 5000).astype(np.float32)
    observed = fpx.next_up(fpx.sum(x, "sequential"))  # nobody computes this
    df = detective.match_orders(x, observed, "sum")
    assert not df["exact"].any() and df.attrs["note"] == "no candidate reproduces every observation"
    assert df.iloc[0]["max_ulp"] == 1.0
    with pytest.raises(ValueError, match="2 inputs but 1 observations"):
        detective.match_orders([x, x], [observed], "sum")
    with pytest.raises(ValueError, match="match_orders takes: sum, dot, matmul"):
        detective.match_orders(x, observed, "cdist")


def test_difference_budget_adds_up():
    rng = np.random.default_rng(2)
    a = rng.standard_normal(20000).astype(np.float32)
    b = rng.standard_normal(20000).astype(np.float32)
    start = {"order": "numpy"}  # a CPU: pairwise, products rounded
    end = {"order": "tree", "params": {"block": 256}, "fma": False, "input_rounding": "tf32"}
    bud = budget.difference_budget((a, b), start, end, "dot")
    t = bud.table
    assert list(t["step"]) == ["start", "input_rounding", "order"]
    assert int(t["delta_ulp"].sum()) == bud.total_ulp
    assert bud.total_ulp == fpx.ulp_distance(fpx.dot(a, b, "numpy"), bud.end)
    assert bud.end == fpx.dot(fpx.as_format(a, "tf32"), fpx.as_format(b, "tf32"), "tree", block=256)
    assert abs(t["delta_abs"].sum() - (float(bud.end) - float(bud.start))) < 1e-12
    fig = bud.plot()
    assert len(fig.axes[0].patches) == 3  # two steps and the total
    with pytest.raises(ValueError, match="unknown factor"):
        budget.difference_budget((a, b), start, end, "dot", factors=("colour",))


def test_difference_budget_reaches_end_or_says_which_factor_is_left_out():
    """factors="order" from sequential to pairwise@float64: the steps stopped at pairwise
    and the budget said "0 ulps from start to end", where end is 1 ulp away (fpx.dot)."""
    rng = np.random.default_rng(19)
    a, b = (rng.standard_normal(3000).astype(np.float32) for _ in range(2))
    total = fpx.ulp_distance(fpx.dot(a, b), fpx.dot(a, b, "pairwise", accumulate="float64"))
    assert total != 0 and fpx.dot(a, b) == fpx.dot(a, b, "pairwise")
    with pytest.raises(ValueError, match="differ in accumulate, which factors=.'order'."):
        budget.difference_budget((a, b), "sequential", "pairwise@float64", "dot", factors="order")
    bud = budget.difference_budget((a, b), "sequential", "pairwise@float64", "dot")
    assert bud.total_ulp == total
    with pytest.raises(ValueError, match=r"differ in accumulate and fma, .* no setting \(fma"):
        start = "sequential+fma"
        budget.difference_budget((a, b), start, "pairwise@float64", "dot", factors="order")
    # a factor left out that changes nothing here: the end is reached all the same
    same = budget.difference_budget((a, b), "sequential", "sequential@float32", "dot", factors=[])
    assert same.total_ulp == 0


def test_difference_budget_works_both_ways_where_a_setting_leaves_with_its_order():
    """sequential+fma -> numpy (and kahan+fma -> pairwise): NumPy's order has no fma, so
    fma switches with the order in one step (it raised on numpy+fma, a setting the budget
    built itself); the other way round each factor is a step. Start and end are the slow
    oracles' (Fraction fma chain; NumPy's blocked pairwise of rounded products)."""
    rng = np.random.default_rng(11)
    a = rng.standard_normal(300).astype(np.float32)
    b = rng.standard_normal(300).astype(np.float32)
    ar = so.Arith("float32")
    chain = ar.mul(a[0], b[0])
    for k in range(1, 300):
        chain = ar.fma(a[k], b[k], chain)
    numpy_order = so.numpy_pairwise([ar.mul(x, y) for x, y in zip(a, b)], ar)
    forth = budget.difference_budget((a, b), "sequential+fma", "numpy", "dot")
    assert list(forth.table["step"]) == ["start", "order and fma"]
    assert list(forth.table["config"]) == ["sequential+fma", "numpy"]
    assert (float(forth.start), float(forth.end)) == (float(chain), float(numpy_order))
    back = budget.difference_budget((a, b), "numpy", "sequential+fma", "dot")
    assert list(back.table["step"]) == ["start", "order", "fma"]
    assert -back.total_ulp == forth.total_ulp == fpx.ulp_distance(chain, numpy_order) != 0
    for start, end in (("kahan+fma", "pairwise"), ("tree+fma", "cub"), ("einsum", "kahan@float64")):
        for s, e in ((start, end), (end, start)):
            bud = budget.difference_budget((a, b), s, e, "dot")
            assert int(bud.table["delta_ulp"].sum()) == bud.total_ulp
            spec = fpx.parse_spec(e, "dot")
            assert bud.end == fpx.dot(a, b, spec.name, **spec.kwargs()), (s, e)


def _run_script(tmp_path, script: str):
    path = tmp_path / "repro.py"
    path.write_text(script)
    return subprocess.run(
        [sys.executable, "-I", str(path)], capture_output=True, text=True, cwd=tmp_path, timeout=300
    )


@pytest.mark.parametrize(
    "op, kwargs, says",
    [
        # float16 sums of tiny values: the calibrated margin is in atol, which the script
        # must use (it hard-coded atol=0 and exited 1)
        (
            "sum",
            dict(format="float16", n=5000, distribution="ill-conditioned", seed=2),
            "different bits, within",
        ),
        # NumPy and pairwise give identical bits here: the script said "different bits"
        ("sum", dict(format="float16", n=8193, seed=3), "the same bits as NumPy"),
        # -inf from NumPy, NaN from the sequential order: the script raised NameError 'inf'
        (
            "dot",
            dict(format="float16", n=8193, distribution="wide", seed=3),
            "different non-finite results",
        ),
        # every distribution, dot's ill-conditioned one included (it was refused)
        ("dot", dict(format="float32", n=3000, distribution="ill-conditioned", seed=1), ""),
        ("sum", dict(format="float64", n=3000, distribution="wide", seed=4), ""),
        ("sum", dict(format="float32", n=3000, distribution="normal", seed=5), ""),
    ],
)
def test_reproducer_scripts_run_clean_and_say_what_they_saw(tmp_path, op, kwargs, says):
    variant = "sequential" if op == "dot" else "pairwise"
    cmp = fpx.compare(op, variants=[variant], **kwargs)
    out = _run_script(tmp_path, reproduce.reproducer(cmp))
    assert out.returncode == 0, out.stdout + out.stderr
    got, want = (
        cmp.results[(variant, "emulated")],
        cmp.results[next(k for k in cmp.results if k[1] == "numpy")],
    )
    same = oracle.same(got, want)
    assert ("the same bits as NumPy" in out.stdout) == same, out.stdout
    assert says in out.stdout


def test_reproducer_refuses_what_is_not_a_comparison():
    with pytest.raises(TypeError, match="needs a Comparison"):
        reproduce.reproducer(None)


def test_reproducer_runs_standalone(tmp_path):
    cmp = fpx.compare("sum", format="float32", n=20000, variants=["tree", "pairwise"], seed=3)
    script = reproduce.reproducer(cmp, "tree")
    assert "fpexplore" not in script.split('"""')[2]  # the code imports only NumPy (+ CuPy)
    path = tmp_path / "repro.py"
    path.write_text(script)
    out = subprocess.run(
        [sys.executable, "-I", str(path)], capture_output=True, text=True, cwd=tmp_path, timeout=300
    )
    assert out.returncode == 0, out.stderr
    assert "reproduced" in out.stdout
    got = float(cmp.results[("tree", "emulated")])
    assert repr(got) in out.stdout
    dot = fpx.compare(
        "dot", format="float16", n=3000, variants=["sequential"], distribution="normal"
    )
    path.write_text(reproduce.reproducer(dot))
    out = subprocess.run(
        [sys.executable, "-I", str(path)], capture_output=True, text=True, cwd=tmp_path, timeout=300
    )
    assert out.returncode == 0, out.stderr
    with pytest.raises(ValueError, match="supports sum and dot"):
        reproduce.reproducer(fpx.compare("matmul", n=10))


def test_reproducer_takes_a_variant_with_its_block_size(tmp_path):
    """ "tree(block=256)" in a comparison: reproducer(cmp, "tree(block=256)") and
    reproducer(cmp, "tree") give its script with BLOCK = 256 (it said "no emulated variant
    among ... tree"), whose run computes the comparison's value of that variant; a variant
    with another setting (+fma) or two of one order are refused by name."""
    cmp = fpx.compare(
        "dot",
        format="float32",
        n=5000,
        variants=["tree(block=256)", "tree", "pairwise", "sequential+fma"],
        seed=4,
    )
    script = reproduce.reproducer(cmp, "tree(block=256)")
    assert "BLOCK = 256" in script
    out = _run_script(tmp_path, script)
    assert out.returncode == 0, out.stderr
    assert repr(float(cmp.results[("tree(block=256)", "emulated")])) in out.stdout
    assert "BLOCK = 128" in reproduce.reproducer(cmp, "tree")  # the spec named exactly
    with pytest.raises(ValueError, match="variant 'sequential\\+fma' sets more than the block"):
        reproduce.reproducer(cmp, "sequential+fma")
    with pytest.raises(ValueError, match="no emulated variant of the orders .* named 'kahan'"):
        reproduce.reproducer(cmp, "kahan")  # (not in the comparison at all)
    # in the comparison, an order the scripts do not write: it was "sets more than the block
    # size", of a kahan that sets nothing (pass 14)
    with pytest.raises(ValueError, match="variant 'kahan': the reproducer writes the orders "):
        reproduce.reproducer(fpx.compare("sum", n=100, variants=["kahan"]), "kahan")
    two = fpx.compare("sum", n=1000, variants=["tree(block=256)", "tree(block=64)"])
    with pytest.raises(ValueError, match="several variants of order 'tree'"):
        reproduce.reproducer(two, "tree")
    assert "BLOCK = 64" in reproduce.reproducer(two, "tree(block=64)")


def test_budget_refuses_misspelled_configuration_keys():
    a, b = fpx.generate("normal", 100, "float32", 1), fpx.generate("normal", 100, "float32", 2)
    for bad in ({"oder": "tree"}, {"order": "tree", "parms": {"block": 64}}):
        with pytest.raises(ValueError, match="unknown configuration key"):
            budget.difference_budget((a, b), bad, "sequential", "dot")
    with pytest.raises(TypeError, match="a variant spec or a dict"):
        budget.difference_budget((a, b), 3, "sequential", "dot")
    # pass 16: {"fma": "False"} was fma on (bool of a non-empty string)
    for bad in ("False", "no", 1):
        with pytest.raises(TypeError, match="difference_budget: end: fma must be True or False"):
            budget.difference_budget(
                (a, b), "sequential", {"order": "sequential", "fma": bad}, "dot"
            )
    on = budget.difference_budget((a, b), "sequential", {"fma": np.True_}, "dot")
    assert on.table.config.tolist()[-1] == "sequential+fma"


def test_matmul_budget_and_comparison_print_short_and_say_what_they_sum():
    cmp = fpx.compare("matmul", n=100, variants=["sequential", "tree"])
    A, B = cmp.inputs["A"], cmp.inputs["B"]
    bud = budget.difference_budget((A, B), "sequential", "tree+fma", "matmul")
    text = repr(bud)
    assert len(text) < 1000 and "signed sums over its elements" in text
    # the steps' signed per-element sums add up to the total
    steps = bud.table["delta_ulp"].sum()
    assert steps == bud.total_ulp == int(np.sum(fpx.ulp_distance(bud.start, bud.end)))
    assert "signed sums over all elements" in fpx.difference_budget.__doc__
    shown = repr(cmp)
    assert len(shown) < 2000 and "Comparison: matmul" in shown and "sequential" in shown
    assert len(repr(cmp.diff("sequential", "tree"))) < 1000


def test_difference_budget_of_nan_results_says_so():
    """A NaN input made every result NaN, and the budget asked for ulp_distance's nan=,
    an argument difference_budget does not have."""
    x = np.array([np.nan, 1.0], np.float32)
    with pytest.raises(ValueError, match=r"the result of sequential \(start\) is NaN"):
        fpx.difference_budget((x, x), "sequential", "pairwise")
    y = np.array([np.inf, -np.inf, 1.0], np.float32)
    with pytest.raises(ValueError, match="is NaN"):
        fpx.difference_budget(y, "sequential", "pairwise", op="sum")


def test_difference_budget_joins_a_half_switched_setting_that_is_none():
    """From A100 TF32 tensor cores to H100 FP8 ones, switching the input rounding first would
    leave an A100 reading FP8, which no A100 does (it raised); that step joins the next:
    one step 'input_rounding and tensor_core', the deltas still adding up, the end the H100
    model's own product of the FP8-rounded inputs."""
    rng = np.random.default_rng(0)
    A = rng.standard_normal((8, 64)).astype(np.float32)
    B = rng.standard_normal((64, 8)).astype(np.float32)
    bud = budget.difference_budget(
        (A, B), "tensor-core(arch=a100)+tf32", "tensor-core(arch=h100)+float8_e5m2", "matmul"
    )
    t = bud.table
    assert list(t["step"]) == ["start", "input_rounding and tensor_core"]
    assert int(t["delta_ulp"].sum()) == bud.total_ulp
    a8 = np.asarray(fpx.as_format(A, "float8_e5m2"))
    b8 = np.asarray(fpx.as_format(B, "float8_e5m2"))
    want = fpx.mma(a8, b8, np.zeros((8, 8), np.float32), arch="h100", inputs="float8_e5m2")
    assert np.array_equal(bud.end, want)
    with pytest.raises(ValueError, match="A100 tensor cores take no float8_e5m2"):  # an end
        budget.difference_budget((A, B), "sequential", "tensor-core(arch=a100)+float8_e5m2",
                                 "matmul")  # fmt: skip


def test_difference_budget_names_start_or_end_and_every_factor_of_a_joined_step():
    """One rule for a half-switched setting that is none: the step switches the fewest
    factors after it with it and is named after all of them (fma on NumPy's dot was named
    "order" only); an order that refuses the data says whether it is start or end (it
    named neither)."""
    rng = np.random.default_rng(5)
    a = rng.standard_normal(50).astype(np.float32)
    b = rng.standard_normal(50).astype(np.float32)
    bud = budget.difference_budget((a, b), "pairwise@float64", "einsum", "dot",
                                   factors=("order", "fma", "accumulate"))  # fmt: skip
    assert list(bud.table["step"]) == ["start", "order and accumulate"]
    assert bud.end == fpx.dot(a, b, "einsum") and int(bud.table["delta_ulp"].sum()) == bud.total_ulp
    h, hb = a.astype(np.float16), b.astype(np.float16)
    with pytest.raises(ValueError, match="difference_budget: end: order 'einsum' is defined"):
        budget.difference_budget((h, hb), "sequential", "einsum", "dot")
    with pytest.raises(ValueError, match="difference_budget: start: order 'einsum' is defined"):
        budget.difference_budget((h, hb), "einsum", "sequential", "dot")


def test_match_orders_names_inputs_of_the_wrong_shape_and_an_empty_candidate_list():
    """Pass 5 (issue 36): dot inputs of two lengths, a column for a dot, vectors for a matmul
    and an empty candidates_ all said "no candidate could be evaluated", naming nothing."""
    x = np.random.default_rng(0).normal(0, 1, 40).astype(np.float32)
    cases = [
        (
            (x, x[:-1]),
            "dot",
            r"match_orders: dot takes two 1-D arrays of equal length, got \(40,\) and \(39,\)",
        ),
        ((x[:, None], x), "dot", r"dot takes two 1-D .* got \(40, 1\) and \(40,\)"),
        ((x, x), "matmul", r"matmul takes \(m, k\) and \(k, n\) arrays, got \(40,\) and \(40,\)"),
    ]
    for inputs, op, match in cases:
        with pytest.raises(ValueError, match=match):
            detective.match_orders(inputs, np.float32(0), op, ["sequential", "pairwise"])
    with pytest.raises(ValueError, match="match_orders: candidates_ is empty"):
        detective.match_orders(x, np.float32(0), "sum", [])


def test_a_wider_observation_no_candidate_can_give_is_refused_with_the_way_out():
    """Pass 6 (issue 36): np.sum(x, dtype=np.float64) of float32 data was scored against
    candidates that all round to float32 (numpy@float64 too): "no candidate reproduces" at
    24 million float64 ulps. Now it says why and what decides; with the inputs widened as
    NumPy does, the plain orders reproduce it (the oracle: np.sum itself)."""
    x = np.random.default_rng(21).uniform(0, 1, 1000).astype(np.float32)
    obs = np.sum(x, dtype=np.float64)
    with pytest.raises(ValueError, match="observed is float64, wider than the float32 inputs"):
        fpx.match_orders(x, obs, "sum", ["numpy@float64", "sequential@float64"])
    df = fpx.match_orders(x.astype(np.float64), obs, "sum", ["numpy", "sequential"])
    assert df.set_index("variant").loc["numpy", "exact"]
    y = x[::-1].copy()  # pass 7: the second of a list of observations was not looked at
    with pytest.raises(ValueError, match=r"observed\[1\] is float64, wider than the float32"):
        fpx.match_orders([y, x], [np.sum(y), obs], "sum", ["numpy", "numpy@float64"])


def test_pass_21_budget_totals_are_exact_and_params_named():
    """Pass 21: a float64 matmul whose two elements go from 1.0 to -1.0 summed their ulps in
    int64 and overflowed to +1.8e16 (the exact signed sum, a Python int from the elements'
    distances, is about -1.8e19); params given as no dict was a bare Python error."""
    r = np.array([-1.0, 2.0**1000, -(2.0**1000), 1.0])
    bud = budget.difference_budget(
        (np.array([r, r]), np.ones((4, 1))), "sequential", "reverse", "matmul"
    )
    one = int(fpx.ulp_distance(1.0, -1.0))  # each element's distance, in range
    assert one == -(2**63 - 2**53) and bud.total_ulp == 2 * one
    assert list(bud.table["delta_ulp"]) == [0, 2 * one]
    for bad in (64, "block=64", None):
        with pytest.raises(TypeError, match="params must be a dict"):
            budget.difference_budget(
                (np.ones(8),), {"order": "tree", "params": bad}, "sequential", "sum"
            )


def test_pass_21_reproducer_takes_a_spec_as_compare_spells_it():
    """Pass 21: reproducer(variant="tree(block = 8)") was refused where compare took the same
    text (its key is the canonical "tree(block=8)"); variant=4 was a ValueError listing the
    variants: a TypeError naming variant."""
    c = fpx.compare("sum", n=100, variants=["tree(block = 8)", "sequential"])
    assert reproduce.reproducer(c, variant="tree(block = 8)") == reproduce.reproducer(
        c, variant="tree(block=8)"
    )
    with pytest.raises(TypeError, match="variant must be a variant spec"):
        reproduce.reproducer(c, variant=4)


def test_match_orders_takes_matmul_inputs_by_name():
    """Pass 24: match_orders({"B": B, "A": A}, R, "matmul") took the dict's keys as data
    ("dtype <U1 is not supported"): the names say which is which, as for compare and
    explain; a name missing is refused, naming it. R: each element summed left to right
    over k (NumPy's cumsum), so sequential reproduces all 64."""
    rng = np.random.default_rng(0)
    A, B = (rng.standard_normal((8, 8)).astype(np.float32) for _ in range(2))
    R = np.cumsum(A[:, :, None] * B[None], axis=1, dtype=np.float32)[:, -1, :]
    by_name = fpx.match_orders({"B": B, "A": A}, R, "matmul")
    assert by_name.equals(fpx.match_orders((A, B), R, "matmul"))
    row = by_name[by_name["variant"] == "sequential"].iloc[0]
    assert row["exact_matches"] == 64 and row["max_ulp"] == 0
    with pytest.raises(ValueError, match="match_orders: matmul takes inputs A, B; missing B"):
        fpx.match_orders({"A": A}, R, "matmul")


def test_match_orders_refuses_observations_in_several_formats():
    """Pass 25: a float32 and a float64 sum in one list raised "observed[1] is float64,
    wider than the float64 inputs" (the candidates were built for the last format): the
    formats are named."""
    rng = np.random.default_rng(0)
    x32, x64 = rng.normal(size=100).astype(np.float32), rng.normal(size=150)
    obs = [np.cumsum(x32, dtype=np.float32)[-1], np.cumsum(x64)[-1]]
    with pytest.raises(ValueError, match="the inputs are float32 and float64 data"):
        fpx.match_orders([x32, x64], obs, "sum")


def _three_lanes(a, b):
    """A float32 dot in three strided lanes, added last to first: an order match_orders does
    not try (plain NumPy)."""
    acc = [np.float32(0)] * 3
    for i, (x, y) in enumerate(zip(a, b)):
        acc[i % 3] = np.float32(acc[i % 3] + np.float32(x * y))
    s = np.float32(0)
    for v in acc[::-1]:
        s = np.float32(s + v)
    return s


def test_a_match_that_chance_gives_is_said_to_be_one():
    """Pass 25: of a thousand candidates, one matched all four observations of short dots of
    an order none of them is, and the note said only "one candidate reproduces every
    observation". Where the candidates give the observed values so often that a match is
    no evidence (the shares multiplied, above 2^-10), the note says so; on long dots of a
    tried order, it does not."""
    rng = np.random.default_rng(1)
    ins, obs = [], []
    for _ in range(4):
        n = int(rng.integers(5, 12))
        a, b = (rng.standard_normal(n).astype(np.float32) for _ in range(2))
        ins.append((a, b))
        obs.append(_three_lanes(a, b))
    df = detective.match_orders(ins, obs, "dot")
    assert df.attrs["exact_candidates"] >= 1  # (matched by chance: the order is none of them)
    assert "an order none of them is may match as well" in df.attrs["note"], df.attrs["note"]
    long = [tuple(rng.standard_normal(3000).astype(np.float32) for _ in range(2)) for _ in "ab"]
    seq = [np.cumsum(a * b, dtype=np.float32)[-1] for a, b in long]  # (products rounded)
    df = detective.match_orders(long, seq, "dot")
    assert df.attrs["exact_candidates"] >= 1 and "may match" not in df.attrs["note"]


def test_an_observation_narrower_than_the_inputs_is_named():
    """Pass 32: a float16 or bfloat16 observed result of float32 inputs gave "mixed formats
    float16 and float32", naming neither argument."""
    import ml_dtypes

    x = np.float32([1, 2, 3.5])
    for narrow in (np.float16(6.5), ml_dtypes.bfloat16(6.5)):
        with pytest.raises(TypeError, match=r"match_orders: observed is (float16|bfloat16), nar"):
            fpx.match_orders(x, narrow)
    with pytest.raises(ValueError, match=r"observed is float64, wider than the float32 inputs"):
        fpx.match_orders(x, np.float64(6.5))  # (a wider result: its own message)


def test_a_refusal_names_observed_or_inputs():
    """Pass 34: match_orders(x, None), (x, 'x') and an FP8 observed or FP8 inputs gave
    messages naming neither argument (two of them the same text)."""
    import ml_dtypes

    x = np.float32([1, 2, 3.5])
    for bad in (None, "x", ml_dtypes.float8_e4m3fn(1.0)):
        with pytest.raises(TypeError, match=r"^match_orders: observed: "):
            fpx.match_orders(x, bad)
    with pytest.raises(TypeError, match=r"^match_orders: inputs: float8_e4m3 arrays"):
        fpx.match_orders(x.astype(ml_dtypes.float8_e4m3fn), np.float32(0))
