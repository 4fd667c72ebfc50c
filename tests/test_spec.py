"""Variant specs (fpexplore/spec.py): the grammar's examples parse and round-trip, random specs
round-trip, every error names the valid parts, and the places that take a variant name take a
spec: compare, sweep, difference_budget, and the detective's answer pasted into compare
reproduces the observation bit for bit."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

import fpexplore as fpx
from fpexplore import budget, detective
from fpexplore.orders.registry import orders_of
from fpexplore.spec import GRAMMAR, VariantSpec, parse_spec

# ----------------------------------------------------------------------------- the grammar

EXAMPLES = [
    "tree(block=256)+fma",
    "sequential@float32",
    "pairwise+tf32",
    "sequential+fma",
    "blocked(block=64)+fma+tf32@float64",
    "cupy-kernel(block_size=512, ftz=True)",
    "tree(split_k=4)",
    "tree(block=64, combine=atomic, seed=3)",
    "pairwise",
]

# the examples with the ops they apply to
VALID = [
    ("sequential@float32", ("sum", "dot", "matmul")),
    ("pairwise+tf32", ("dot", "matmul")),
    ("sequential+fma", ("dot", "matmul")),
    ("blocked(block=64)+fma+tf32@float64", ("dot", "matmul")),
    ("cupy-kernel(block_size=512, ftz=True)", ("sum", "dot")),
    ("tree(split_k=4)", ("matmul",)),
    ("tree(block=64, combine=atomic, seed=3)", ("sum", "dot")),
    ("tree(block=256)", ("sum", "dot", "matmul")),
    ("pairwise", ("sum", "dot", "matmul")),
    ("expanded(order=blocked, block=64)+fma@float32", ("cdist",)),
    ("direct(order=pairwise)@float64", ("cdist",)),
    ("two-pass(order=pairwise)@float64", ("variance",)),
    ("welford@float32", ("variance",)),
    ("shifted(order=numpy)@float64", ("softmax", "logsumexp")),
    ("div-then-mul+fma", ("adam_step",)),
    ("div-then-mul(moments=mul-add)+fma", ("adam_step",)),
    ("numpy1", ("linspace",)),
    ("wide", ("exp", "log", "sin", "tanh", "sqrt", "pow")),
]


@pytest.mark.parametrize("text", EXAMPLES)
def test_examples_parse_and_round_trip(text):
    s = parse_spec(text)
    assert str(s) == text  # they are written canonically
    assert parse_spec(str(s)) == s


@pytest.mark.parametrize("text,ops", VALID, ids=[t for t, _ in VALID])
def test_examples_apply_to_their_ops(text, ops):
    for op in ops:
        s = parse_spec(text, op)
        assert str(s) == text
        assert parse_spec(str(s), op) == s


def test_the_parts_of_a_spec():
    s = parse_spec("blocked(block=64)+fma+tf32@float64", "matmul")
    assert s == VariantSpec("blocked", {"block": 64}, True, "tf32", "float64")
    assert s.kwargs() == {
        "block": 64,
        "fma": True,
        "accumulate": "float64",
        "input_rounding": "tf32",
    }
    assert parse_spec("tree(split_k=4, block=32)", "matmul").kwargs() == {"block": 32, "split_k": 4}
    assert parse_spec("pairwise").kwargs() == {}
    # adam_step's variant named with "+fma" is that variant, not fma=True
    s = parse_spec("div-then-mul+fma", "adam_step")
    assert (s.name, s.fma) == ("div-then-mul+fma", False)


@pytest.mark.parametrize(
    "text,op,canonical",
    [
        (
            "blocked( block = 64 ) + tf32 + FMA @ float64",
            "dot",
            "blocked(block=64)+fma+tf32@float64",
        ),
        ("tree(seed=3,combine='atomic',block=64)", "sum", "tree(block=64, combine=atomic, seed=3)"),
        ('tree(combine="sequential")', "matmul", "tree(combine=sequential)"),
        ("  sequential  ", "sum", "sequential"),
        ("tree()", "sum", "tree"),
        ("sequential@Float32", "sum", "sequential@float32"),
        (
            "expanded(block=8, clamp=False, order=blocked)",
            "cdist",
            "expanded(order=blocked, block=8, clamp=False)",
        ),
        ("div-then-mul( moments=mul-add ) + FMA", "adam_step", "div-then-mul(moments=mul-add)+fma"),
    ],
)
def test_canonical_spelling(text, op, canonical):
    s = parse_spec(text, op)
    assert str(s) == canonical
    assert parse_spec(canonical, op) == s


def test_parameter_values():
    s = parse_spec("x(a=-3, b=0.5, c=1e-08, d=True, e=None, f=atomic, g='two words', h='True')")
    assert s.param_dict == {
        "a": -3,
        "b": 0.5,
        "c": 1e-08,
        "d": True,
        "e": None,
        "f": "atomic",
        "g": "two words",
        "h": "True",
    }
    assert type(s.param_dict["a"]) is int and type(s.param_dict["d"]) is bool
    assert str(s) == "x(a=-3, b=0.5, c=1e-08, d=True, e=None, f=atomic, g='two words', h='True')"
    # NumPy scalars are stored as Python values, spelled the same
    assert VariantSpec("tree", {"block": np.int64(64)}) == parse_spec("tree(block=64)")
    assert str(VariantSpec("tree", {"block": np.int64(64)})) == "tree(block=64)"


# random specs: any syntactically valid spec round-trips; any text either parses or raises
# ValueError

_names = st.from_regex(r"[A-Za-z_][A-Za-z0-9_.\-]{0,12}", fullmatch=True)
_keys = st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,8}", fullmatch=True)
_values = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False)
    | st.text(max_size=12)
    | st.from_regex(r"[A-Za-z_][A-Za-z0-9_.\-]{0,8}", fullmatch=True)
)


@st.composite
def any_spec(draw):
    return VariantSpec(
        draw(_names),
        draw(st.dictionaries(_keys, _values, max_size=4)),
        draw(st.booleans()),
        draw(st.sampled_from([None, "tf32", "bfloat16"])),
        draw(st.sampled_from([None, *fpx.FORMATS])),
    )


@given(any_spec())
def test_random_specs_round_trip(s):
    text = str(s)
    back = parse_spec(text)
    assert back == s
    assert str(back) == text
    # the types survive too (True == 1 in Python, so compare them)
    assert [type(v) for _, v in back.params] == [type(v) for _, v in s.params]


_POOL = [None, True, False, 0, 1, 2, 3, 7, 32, 64, 100, 128, 256, 512, 1024, 4096]
_POOL += ["sequential", "atomic", "tree"]


def _valid_values(check):
    out = []
    for v in _POOL:
        try:
            check(v)
        except (TypeError, ValueError):  # (a wrong type is a TypeError: fpexplore/checks.py)
            continue
        out.append(v)
    return out


@st.composite
def order_spec(draw):
    """A valid spec of sum, dot or matmul, drawn from the order registry."""
    op = draw(st.sampled_from(["sum", "dot", "matmul"]))
    name = draw(st.sampled_from(list(orders_of(op))))
    order = orders_of(op)[name]
    params = {}
    for key, (_, check) in order.params.items():
        values = _valid_values(check)
        if op == "matmul" and key == "combine":
            values = ["sequential"]
        if values and draw(st.booleans()):
            params[key] = draw(st.sampled_from(values))
    for key, (other, value) in order.applies.items():  # (the tree's seed: with atomic only)
        if key in params and params.get(other) != value:
            del params[key]
    if op == "matmul" and order.matmul_code is not None and draw(st.booleans()):
        params["split_k"] = draw(st.integers(1, 64))
    fma = op != "sum" and order.fma and draw(st.booleans())
    rounding = None if op == "sum" else draw(st.sampled_from([None, "tf32", "bfloat16"]))
    fixed = name == "exact" or order.library is not None  # no accumulator setting
    acc = None if fixed else draw(st.sampled_from([None, *fpx.FORMATS]))
    return op, VariantSpec(name, params, fma, rounding, acc)


@given(order_spec())
def test_random_valid_order_specs_round_trip(case):
    op, s = case
    assert parse_spec(s, op) == s  # valid for its op
    text = str(s)
    assert parse_spec(text, op) == s
    assert str(parse_spec(text, op)) == text


@given(st.text(max_size=40))
def test_any_text_parses_or_raises_value_error(text):
    try:
        s = parse_spec(text)
    except ValueError:
        return
    assert parse_spec(str(s)) == s


def test_every_detective_candidate_is_a_valid_spec():
    for op in ("sum", "dot", "matmul"):
        for fmt in ("float16", "float32"):
            for c in detective.candidates(op, fmt):
                assert parse_spec(str(c), op) == c, c


# ----------------------------------------------------------------------------- errors

ERRORS = [
    # unknown order: the op's orders
    (
        "fastest",
        "dot",
        [
            "unknown variant 'fastest' for dot",
            "valid variants: sequential, reverse, pairwise",
            "exact",
        ],
    ),
    (
        "tree",
        "cdist",
        ["unknown variant 'tree' for cdist", "valid variants: expanded, direct, exact"],
    ),
    # unknown parameter: the order's parameters with defaults
    ("tree(blok=64)", "dot", ["no parameter 'blok'", "block=128, combine=sequential, seed=0"]),
    ("sequential(block=64)", "sum", ["no parameter 'block'", "takes no parameters"]),
    ("pairwise(block=8)", "matmul", ["no parameter 'block'", "split_k=None"]),
    ("two-pass(ddof=1)", "variance", ["no parameter 'ddof'", "order=sequential"]),
    ("numpy1(endpoint=False)", "linspace", ["takes no parameters"]),
    # bad parameter value: the check's message
    ("tree(block=100)", "dot", ["block must be a power of two"]),
    ("tree(combine=random)", "sum", ["unknown combine 'random'; valid: sequential, atomic"]),
    ("tree(split_k=0)", "matmul", ["split_k must be >= 1, got 0"]),
    ("two-pass(order=bogus)", "variance", ["unknown order 'bogus'", "valid orders: sequential"]),
    (
        "div-then-mul(moments=fast)",
        "adam_step",
        ["unknown moments 'fast'; valid: lerp, lerp-fma, mul-add"],
    ),
    # unknown accumulator: the formats
    (
        "sequential@float8",
        None,
        ["unknown accumulator 'float8'", "float16, bfloat16, float32, float64"],
    ),
    (
        "sequential@tf32",
        None,
        ["tf32 is an input rounding (write +tf32)", "float16, bfloat16, float32, float64"],
    ),
    # bad syntax: the grammar
    ("tree(block=64", None, ["a '(' is not closed", GRAMMAR]),
    ("tree block", None, ["unexpected 'block'", GRAMMAR]),
    ("(block=64)", None, ["must start with an order or variant name", GRAMMAR]),
    ("tree(64)", None, ["key=value", GRAMMAR]),
    ("tree(block=64, block=32)", None, ["block given twice", GRAMMAR]),
    ("sequential@float32+fma", None, ["the @ACCUMULATOR comes last", GRAMMAR]),
    ("sequential+fast", None, ["unknown modifier +fast", "+fma, +tf32, +bfloat16", GRAMMAR]),
    ("sequential+tf32+bfloat16", None, ["one input rounding at most"]),
    ("", None, [GRAMMAR]),
    # cannot apply: why
    (
        "sequential+fma",
        "sum",
        ["fma applies where a product feeds an accumulator: dot and matmul, not sum"],
    ),
    (
        "pairwise+fma",
        "dot",
        [
            "fma does not change order 'pairwise'",
            "orders where it does: sequential, reverse, blocked",
        ],
    ),
    (
        "neumaier+fma",
        "matmul",
        ["fma does not change order 'neumaier'", "each product is rounded first"],
    ),
    (
        "pairwise+tf32",
        "sum",
        ["input rounding (+tf32) applies to the inputs of products: dot and matmul, not sum"],
    ),
    ("tree(split_k=4)", "dot", ["split_k applies to matmul"]),
    ("exact(split_k=2)", "matmul", ["split_k does not apply to the exact order"]),
    ("exact@float64", "dot", ["does not apply to the exact order", "correctly rounded"]),
    ("tree(combine=atomic)", "matmul", ["matmul combines tree blocks sequentially"]),
    ("direct+fma", "cdist", ["fma does not apply to cdist variant 'direct'", "'expanded'"]),
    ("expanded(order=pairwise)+fma", "cdist", ["fma does not change order 'pairwise'"]),
    ("mul-then-div+fma", "adam_step", ["its fused form is the variant 'div-then-mul+fma'"]),
    ("shifted+fma", "softmax", ["softmax has no product feeding an accumulator"]),
    ("expanded+tf32", "cdist", ["input rounding (+tf32)", "not cdist"]),
    (
        "exact@float32",
        "variance",
        ["does not apply to variance variant 'exact'", "'two-pass', 'one-pass'"],
    ),
    ("lerp@float64", "linspace", ["linspace has no accumulator setting"]),
    ("sequential", "conv", ["unknown op 'conv'", "valid ops: sum, dot, matmul"]),
]


@pytest.mark.parametrize("text,op,parts", ERRORS, ids=[f"{op}:{t}" for t, op, _ in ERRORS])
def test_errors_name_the_valid_parts(text, op, parts):
    with pytest.raises(ValueError) as e:
        parse_spec(text, op)
    for p in parts:
        assert p in str(e.value), (p, str(e.value))


def test_constructor_checks():
    with pytest.raises(ValueError, match="given twice"):
        VariantSpec("tree", (("block", 1), ("block", 2)))
    with pytest.raises(ValueError, match="accumulator formats"):
        VariantSpec("tree", accumulate="float8")
    with pytest.raises(ValueError, match="input_rounding must be"):
        VariantSpec("tree", input_rounding="float16")
    with pytest.raises(TypeError, match="a variant spec is a string"):
        parse_spec(3)


# ----------------------------------------------------------------------------- where specs go


def test_compare_takes_specs_and_shows_them():
    c = fpx.compare("dot", variants=["sequential", "sequential+fma"], n=1000, seed=4)
    t = c.table[c.table["backend"] == "emulated"]
    assert list(t["variant"]) == ["sequential", "sequential+fma"]
    plain, fused = t["value"]
    assert plain != fused  # FMA changes this sum
    a, b = c.inputs["a"], c.inputs["b"]
    assert c.results[("sequential+fma", "emulated")] == fpx.dot(a, b, "sequential", fma=True)
    assert c.results[("sequential", "emulated")] == fpx.dot(a, b, "sequential")
    # the canonical spelling is the label; a VariantSpec works as well
    c = fpx.compare(
        "dot",
        variants=["blocked( block=64 )+tf32", VariantSpec("tree", {"block": 64})],
        n=500,
        backends=("emulated",),
    )
    assert list(c.table["variant"]) == ["blocked(block=64)+tf32", "tree(block=64)"]
    a, b = c.inputs["a"], c.inputs["b"]
    r = [np.asarray(fpx.as_format(fpx.as_format(v, "tf32"), "float32")) for v in (a, b)]
    got = c.results[("blocked(block=64)+tf32", "emulated")]
    assert fpx.to_bits(got) == fpx.to_bits(fpx.dot(*r, "blocked", block=64))


def test_compare_spec_settings_equal_the_direct_calls():
    c = fpx.compare(
        "matmul",
        variants=["tree(block=32, split_k=2)", "blocked(block=8)+fma+bfloat16@float64"],
        n=40,
        backends=("emulated",),
    )
    A, B = c.inputs["A"], c.inputs["B"]
    want = {
        "tree(block=32, split_k=2)": fpx.matmul(A, B, "tree", block=32, split_k=2),
        "blocked(block=8)+fma+bfloat16@float64": fpx.matmul(
            A, B, "blocked", block=8, fma=True, input_rounding="bfloat16", accumulate="float64"
        ),
    }
    for label, w in want.items():
        assert np.array_equal(fpx.to_bits(c.results[(label, "emulated")]), fpx.to_bits(w))
    c = fpx.compare("sum", format="float16", variants=["sequential@float32"], n=3000)
    x = c.inputs["x"]
    got = c.results[("sequential@float32", "emulated")]
    assert fpx.to_bits(got) == fpx.to_bits(fpx.sum(x, "sequential", accumulate="float32"))
    # formula variants
    c = fpx.compare(
        "cdist",
        format="float16",
        variants=["expanded(order=blocked, block=4)+fma@float32", "direct(order=pairwise)"],
        n=12,
        backends=("emulated",),
    )
    x, y = c.inputs["x"], c.inputs["y"]
    exp = fpx.cdist(
        x, y, variant="expanded", order="blocked", block=4, fma=True, accumulate="float32"
    )
    assert np.array_equal(
        c.results[("expanded(order=blocked, block=4)+fma@float32", "emulated")], exp
    )
    assert np.array_equal(
        c.results[("direct(order=pairwise)", "emulated")],
        fpx.cdist(x, y, variant="direct", order="pairwise"),
    )
    c = fpx.compare(
        "variance", format="float16", variants=["two-pass(order=pairwise)@float32"], n=500
    )
    got = c.results[("two-pass(order=pairwise)@float32", "emulated")]
    want = fpx.variance(c.inputs["x"], variant="two-pass", order="pairwise", accumulate="float32")
    assert fpx.to_bits(got) == fpx.to_bits(want)
    c = fpx.compare("adam_step", variants=["div-then-mul(moments=mul-add)+fma"], n=50)
    assert list(c.table["variant"]) == ["div-then-mul(moments=mul-add)+fma"]


def test_the_issues_spellings_run_in_compare():
    """ "tree(block=256)+fma", "sequential@float32" and "pairwise+tf32" as written in the issue:
    each row equals the direct call with those settings."""
    c = fpx.compare(
        "dot",
        variants=["tree(block=256)+fma", "tree(block=256)", "sequential@float32", "pairwise+tf32"],
        n=5000,
        backends=("emulated",),
    )
    a, b = c.inputs["a"], c.inputs["b"]
    want = {
        "tree(block=256)+fma": fpx.dot(a, b, "tree", block=256, fma=True),
        "tree(block=256)": fpx.dot(a, b, "tree", block=256),
        "sequential@float32": fpx.dot(a, b, "sequential", accumulate="float32"),
        "pairwise+tf32": fpx.dot(a, b, "pairwise", input_rounding="tf32"),
    }
    for label, w in want.items():
        assert fpx.to_bits(c.results[(label, "emulated")]) == fpx.to_bits(w), label
    m = fpx.compare("matmul", variants=["tree(block=256)+fma"], n=20, backends=("emulated",))
    A, B = m.inputs["A"], m.inputs["B"]
    got = m.results[("tree(block=256)+fma", "emulated")]
    assert np.array_equal(got, fpx.matmul(A, B, "tree", block=256, fma=True))


def test_a_spec_overrides_the_ops_keywords():
    c = fpx.compare("sum", variants=["tree", "tree(block=64)"], n=5000, block=256)
    x = c.inputs["x"]
    assert c.results[("tree", "emulated")] == fpx.sum(x, "tree", block=256)
    assert c.results[("tree(block=64)", "emulated")] == fpx.sum(x, "tree", block=64)


def test_compare_refuses_a_spec_that_does_not_apply():
    with pytest.raises(ValueError, match="not sum"):
        fpx.compare("sum", variants=["sequential+fma"], n=10)
    with pytest.raises(ValueError, match="valid variants: sequential"):
        fpx.compare("sum", variants=["fastest(block=2)"], n=10)


def test_sweep_takes_specs():
    sw = fpx.sweep(
        "dot",
        sizes=(100, 1000),
        variants=["sequential+fma", "blocked(block=64)@float64"],
        backends=("emulated",),
        seeds=1,
        progress=False,
    )
    assert list(sw.table["variant"]) == ["sequential+fma", "blocked(block=64)@float64"] * 2


def test_difference_budget_takes_specs():
    rng = np.random.default_rng(2)
    a = rng.standard_normal(20000).astype(np.float32)
    b = rng.standard_normal(20000).astype(np.float32)
    start = {"order": "numpy"}
    end = {"order": "tree", "params": {"block": 256}, "input_rounding": "tf32"}
    by_dict = budget.difference_budget((a, b), start, end, "dot")
    by_spec = fpx.difference_budget((a, b), "numpy", "tree(block=256)+tf32", "dot")
    pd.testing.assert_frame_equal(by_dict.table, by_spec.table)
    assert by_spec.total_ulp == by_dict.total_ulp
    assert list(by_spec.table["config"]) == ["numpy", "numpy+tf32", "tree(block=256)+tf32"]
    # a VariantSpec, and an accumulator and fma on the way
    bud = fpx.difference_budget(
        (a, b), parse_spec("sequential"), "blocked(block=64)+fma@float64", "dot"
    )
    assert list(bud.table["step"]) == ["start", "accumulate", "order", "fma"]
    assert bud.end == fpx.dot(a, b, "blocked", block=64, fma=True, accumulate="float64")
    with pytest.raises(ValueError, match="not sum"):
        fpx.difference_budget(a, "sequential", "sequential+fma", "sum")


# ----------------------------------------------------------------------------- the detective


def test_detective_labels_are_specs():
    cands = detective.candidates("dot", "float32")
    assert all(isinstance(c, VariantSpec) for c in cands)
    assert VariantSpec("blocked", (("block", 64),), True, "tf32", "float64") in cands
    c = VariantSpec("blocked", (("block", 64),), True, "tf32", "float64")
    assert str(c) == "blocked(block=64)+fma+tf32@float64"
    assert str(VariantSpec("cupy-kernel", (("ftz", True), ("block_size", 512)))) == (
        "cupy-kernel(block_size=512, ftz=True)"
    )


@pytest.mark.parametrize(
    "op,hidden",
    [
        ("dot", dict(order="blocked", block=64, fma=True)),
        ("dot", dict(order="tree", block=128, rounding="tf32", accumulate=None)),
        ("matmul", dict(order="sequential", fma=True, rounding="bfloat16")),
    ],
    ids=["dot-blocked-fma", "dot-tree-tf32", "matmul-sequential-fma-bfloat16"],
)
def test_the_detectives_answer_pasted_into_compare_reproduces_it(op, hidden):
    """Observations made with a known configuration on compare's own inputs; the detective's
    best spec, run by compare on the same (seeded) inputs, gives the observed bits."""
    hidden = dict(hidden)
    order, rounding = hidden.pop("order"), hidden.pop("rounding", None)
    n = 24 if op == "matmul" else 3000
    seeds = (0,) if op == "matmul" else (0, 1, 2, 3)
    names = ("A", "B") if op == "matmul" else ("a", "b")
    func = fpx.matmul if op == "matmul" else fpx.dot
    inputs, observed = [], []
    for s in seeds:
        c = fpx.compare(
            op, n=n, seed=s, distribution="wide", variants=["sequential"], backends=("emulated",)
        )
        a, b = (c.inputs[k] for k in names)
        if rounding:  # the hidden machine rounds its inputs, keeping float32 storage
            a, b = (
                np.asarray(fpx.as_format(fpx.as_format(v, rounding), "float32")) for v in (a, b)
            )
        inputs.append((c.inputs[names[0]], c.inputs[names[1]]))
        observed.append(func(a, b, order, **hidden))
    df = fpx.match_orders(inputs, observed, op)
    assert df.iloc[0]["exact"]
    spec = df.iloc[0]["variant"]
    assert isinstance(spec, str) and parse_spec(spec, op).name == df.iloc[0]["order"]
    for s, obs in zip(seeds, observed):
        c = fpx.compare(
            op, n=n, seed=s, distribution="wide", variants=[spec], backends=("emulated",)
        )
        got = c.results[(spec, "emulated")]
        assert np.array_equal(fpx.to_bits(got), fpx.to_bits(obs)), (spec, s)
        assert np.all(fpx.ulp_distance(got, obs) == 0)


def test_a_setting_is_read_where_its_text_enters_only(monkeypatch):
    """A VariantSpec given to compare, sweep, match_orders, difference_budget and the
    reproducer, and the settings explain builds (the revealed tree it probes), are passed on
    as objects: the spec grammar's reader is never called again (issue 34: parsed once)."""
    from fpexplore import spec as spec_module

    rng = np.random.default_rng(1)
    x, y = (rng.standard_normal(300).astype(np.float32) for _ in range(2))
    texts = ("pairwise", "tree(block=64)+fma", "numpy", "sequential@float64")
    specs = [parse_spec(t, "dot") for t in texts]
    tree64 = parse_spec("tree(block=64)", "dot")
    read = []
    monkeypatch.setattr(spec_module, "_parse", lambda text: read.append(text))
    assert "BLOCK = 64" in fpx.reproducer(fpx.compare("dot", n=300, variants=[tree64]))
    c = fpx.compare("dot", inputs=(x, y), variants=specs)
    assert [str(s) for s in c.specs] == [str(s) for s in specs]
    fpx.sweep("dot", sizes=[100, 200], seeds=1, variants=specs, progress=False)
    fpx.match_orders((x, y), fpx.dot(x, y, "pairwise"), "dot", candidates_=specs)
    fpx.difference_budget((x, y), specs[1], specs[0], "dot")
    tree = lambda a, b: fpx.dot(a, b, "tree", block=64, fma=True)  # noqa: E731
    results = {"gpu": tree(x, y), "cpu": fpx.dot(x, y, "numpy")}
    fpx.explain("dot", (x, y), results, fn={"gpu": tree})
    assert read == []


def test_accumulate_and_input_rounding_spelt_as_dtypes_are_their_formats():
    """Pass 26: ``{"order": "pairwise", "accumulate": np.dtype("float64")}`` as a budget's
    end was plain pairwise (the dtype was dropped from the spec, silently), and ``str()`` of
    ``VariantSpec(..., accumulate=np.dtype("float16"))`` raised "can only concatenate str";
    ``VariantSpec(..., accumulate=np.float64)`` said "unknown accumulator" beside a list
    holding float64. A type or dtype is its format's name. Oracle: the exact dot (Fraction)
    rounded to float32, which a float64 accumulator of 300 float32 products gives here."""
    from fractions import Fraction

    import ml_dtypes

    rng = np.random.default_rng(0)
    a, b = (rng.uniform(0, 1, 300).astype(np.float32) for _ in range(2))
    exact = np.float32(float(sum(Fraction(float(x)) * Fraction(float(y)) for x, y in zip(a, b))))
    assert fpx.dot(a, b, "pairwise") != exact  # (the plain end the dtype spelling gave)
    for acc in ("float64", np.float64, np.dtype("float64"), fpx.format_info("float64")):
        spec = VariantSpec("pairwise", {}, False, None, acc)
        assert str(spec) == "pairwise@float64" and spec.accumulate == "float64"
        got = fpx.difference_budget(
            (a, b), "sequential", {"order": "pairwise", "accumulate": acc}, "dot"
        )
        assert [s for s, _ in got.steps] == ["accumulate", "order"] and got.steps[-1][1] == exact
    for rounding in (ml_dtypes.bfloat16, np.dtype(ml_dtypes.bfloat16)):
        spec = VariantSpec("sequential", {}, False, rounding, np.float16)
        assert str(spec) == "sequential+bfloat16@float16"
        # oracle: the inputs rounded by ml_dtypes, a float32 loop of float32 products
        ra, rb = (x.astype(ml_dtypes.bfloat16).astype(np.float32) for x in (a, b))
        s = np.float32(0)
        for x, y in zip(ra, rb):
            s = np.float32(s + np.float32(x * y))
        assert fpx.dot(a, b, "sequential", input_rounding=rounding) == s
