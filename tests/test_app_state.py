"""The explorer's state and its transitions as plain functions: no widgets, nothing computed
(fpexplore/app/state.py); the app applies exactly these (tests/test_widgets.py)."""

from __future__ import annotations

import dataclasses
import sys

import pytest

from fpexplore.app import links as L
from fpexplore.app import presets as P
from fpexplore.app import state as S
from fpexplore.ops import registry as op_registry
from fpexplore.spec import VariantSpec


def texts(specs) -> tuple:
    """The variant specs' canonical spellings (the state holds them parsed)."""
    return tuple(map(str, specs))


def test_the_state_is_frozen_and_loads_no_widgets():
    s = S.initial()
    with pytest.raises(dataclasses.FrozenInstanceError):
        s.op = "dot"
    if "ipywidgets" not in sys.modules:  # (another test may have loaded it already)
        import fpexplore.app.render  # noqa: F401
        import fpexplore.app.yourdata  # noqa: F401

        assert "ipywidgets" not in sys.modules


def test_initial_state_takes_the_arguments_as_given():
    s = S.initial(op="dot", n=2000, variants=["sequential + fma", "pairwise"], seed=3)
    assert (s.op, s.n, s.seed, s.format) == ("dot", 2000, 3, "float32")
    assert texts(s.variants) == ("sequential+fma", "pairwise")  # canonical, parsed once
    assert all(isinstance(v, VariantSpec) for v in s.variants)
    assert s.inputs == (("a", ""), ("b", ""))  # dot's inputs, none chosen
    assert S.initial(op="matmul").n == op_registry.get("matmul").default_n
    assert texts(S.initial().variants) == tuple(op_registry.get("sum").defaults_for("float32"))
    with pytest.raises(ValueError, match="unknown variant 'seq'"):
        S.initial(variants=["seq"])
    with pytest.raises(ValueError, match="the largest size the app offers"):
        S.initial(n=10**12)


def test_set_op_and_set_format():
    s = S.add_variant(S.initial(n=10), "tree(block=64)")
    assert texts(s.extra) == ("tree(block=64)",) and "tree(block=64)" in texts(s.variants)
    m = S.set_op(s, "matmul")
    assert m.n == 100 and m.extra == () and m.inputs == (("A", ""), ("B", ""))
    assert texts(m.variants) == tuple(op_registry.get("matmul").defaults_for("float32"))
    with pytest.raises(ValueError, match="valid: sum, dot"):
        S.set_op(s, "cumsum")
    # a new format keeps the selection where it is still offered
    f = S.set_format(S.select_variants(s, ["sequential", "kahan"]), "float64")
    assert f.format == "float64" and texts(f.variants) == ("sequential", "kahan")
    with pytest.raises(ValueError):
        S.set_format(s, "float8")


def test_untouched_defaults_follow_the_format():
    """float32, then FP8 (where a sum has two of float32's five defaults), then float32 again
    selected FP8's two (pass 13's one left finding): the defaults, untouched, are the new
    format's; a selection the user made is kept where still offered."""
    sum_defaults = op_registry.get("sum").defaults_for
    s = S.initial(op="sum")
    assert len(sum_defaults("float32")) > len(sum_defaults("float8_e4m3"))
    fp8 = S.set_format(s, "float8_e4m3")
    assert texts(fp8.variants) == tuple(sum_defaults("float8_e4m3"))
    assert texts(S.set_format(fp8, "float32").variants) == tuple(sum_defaults("float32"))
    mine = S.set_format(S.select_variants(fp8, ["sequential"]), "float32")
    assert texts(mine.variants) == ("sequential",)


def test_add_and_remove_variants():
    s = S.initial(op="dot", variants=["pairwise"])
    s = S.add_variant(s, "sequential+fma")
    assert str(S.variant_options(s)[0]) == "sequential+fma"  # a built spec: on top
    assert texts(s.variants) == ("pairwise", "sequential+fma")
    assert S.add_variant(s, "sequential + fma") == s  # the same spec: nothing new
    s = S.add_variant(s, "sequential")  # one of the op's own: not an extra
    assert texts(s.extra) == ("sequential+fma",) and str(s.variants[-1]) == "sequential"
    with pytest.raises(ValueError, match="unknown variant"):
        S.add_variant(s, "bogus")
    r = S.remove_variants(s, ["sequential+fma", "pairwise"])
    assert texts(r.variants) == ("sequential",) and r.extra == ()
    assert "sequential+fma" not in texts(S.variant_options(r))
    # one spec, not in a list: it read the string's letters and removed nothing
    assert texts(S.remove_variants(s, "pairwise").variants) == ("sequential+fma", "sequential")
    assert texts(S.remove_variants(s, s.variants[0]).variants) == ("sequential+fma", "sequential")


def test_the_builder_spec_is_a_plain_function():
    assert S.built_spec("tree", block=32, rounding="tf32", acc="float64") == (
        "tree(block=32)+tf32@float64"
    )
    assert S.built_spec("sequential", fma=True) == "sequential+fma"
    # the tensor cores take an arch and an input rounding only
    assert S.built_spec("tensor-core", arch="a100", fma=True, block=8, rounding="tf32") == (
        "tensor-core(arch=a100)+tf32"
    )
    names = dict((v, k) for k, v in S.builder_names("matmul", "float32"))
    assert names["tensor-core"] == "GPU tensor cores"


def test_presets():
    s = S.initial(op="sum", format="float16", backends=("emulated",))
    p = P.apply_preset(s, "tensor cores vs CPU")
    assert (p.op, p.format, p.view) == ("matmul", "float32", "errors")
    assert texts(p.variants) == (
        "sequential",
        "tensor-core(arch=a100)+tf32",
        "tensor-core(arch=h100)+tf32",
    )
    assert p.backends == ("numpy", "emulated")
    q = P.apply_preset(S.initial(), "FMA vs separate multiply-add")
    assert q.op == "matmul" and q.view == "A vs B"
    assert q.want_picks == (("sequential", "emulated"), ("sequential+fma", "emulated"))
    settled = S.settle_picks(q, [("np.matmul", "numpy"), *q.want_picks])
    assert (settled.pick_a, settled.pick_b, settled.want_picks) == (*q.want_picks, ())
    # the user's own pick replaces a preset's pair that is still waiting for its results
    mine = S.pick(q, a=("np.matmul", "numpy"))
    assert mine.want_picks == ()
    settled = S.settle_picks(mine, [("np.matmul", "numpy"), *q.want_picks])
    assert settled.pick_a == ("np.matmul", "numpy")
    with pytest.raises(ValueError, match="unknown preset 'x'; presets: FMA vs"):
        P.apply_preset(s, "x")


def test_a_preset_keeps_the_format_of_your_arrays():
    """Your float16 matrices chosen, the preset "tensor cores vs CPU" (float32 by itself)
    keeps float16, the arrays' format (it set float32 over them), and offers only what
    float16 has; switching op through a preset follows the new op's arrays, not a stale
    format."""
    formats = {"A": "float16", "B": "float16", "x": "float64"}
    s = S.set_source(S.initial(op="matmul", n=10), "arrays", formats)
    s = S.set_input(S.set_input(s, "A", "A", formats), "B", "B", formats)
    assert s.format == "float16"
    p = P.apply_preset(s, "tensor cores vs CPU", formats)
    assert (p.op, p.format) == ("matmul", "float16")
    assert set(p.variants) <= set(S.variant_options(p))
    q = P.apply_preset(p, "CPU library vs GPU orders", formats)  # matmul -> sum: x, float64
    assert (q.op, q.inputs, q.format) == ("sum", (("x", "x"),), "float64")


def test_set_control_checks_every_value():
    """n=-5 or backends ('g', 'p', 'u') (a string spelled out) were stored as they came."""
    s = S.initial()
    for kw, msg in (
        ({"n": -5}, "n must be >= 1, got -5"),
        ({"n": 10**9}, "the largest size the app offers"),
        ({"backends": ("g", "p", "u")}, "unknown backend 'g'"),
        ({"seed": -1}, "seed must be from 0"),
        ({"threads": -2}, "threads must be >= 0"),
        ({"sweep_unit": "metres"}, "unknown sweep_unit 'metres'; valid: ulps, abs"),
        ({"view": "table"}, "unknown view 'table'"),
        ({"distribution": "cauchy"}, "unknown distribution 'cauchy'"),
    ):
        with pytest.raises(ValueError, match=msg):
            S.set_control(s, **kw)
    t = S.set_control(s, n=1000, backends=["emulated"], threads=2, sweep_unit="abs")
    assert (t.n, t.backends, t.threads, t.sweep_unit) == (1000, ("emulated",), 2, "abs")


def test_picks_are_result_keys():
    keys = [("np.sum", "numpy"), ("sequential", "emulated"), ("gpu", S.OBSERVED)]
    s = S.settle_picks(S.initial(), keys)
    assert (s.pick_a, s.pick_b) == tuple(keys[:2])  # the first two
    s = S.settle_picks(S.pick(s, b=keys[2]), keys)
    assert s.pick_b == ("gpu", "observed")  # kept while it is there
    s = S.settle_picks(s, keys[:2])
    assert s.pick_b == keys[1]  # gone: the fallback


def test_your_arrays_set_the_source_inputs_and_format():
    formats = {"x": "float64", "M": "float64", "counts": None, "gpu": "float32"}
    s = S.set_source(S.initial(n=1000), "arrays", formats)
    assert s.inputs == (("x", "x"),)  # the array named as the input
    assert s.format == "float64"  # the arrays' format, its variants offered
    assert set(s.variants) <= set(S.variant_options(s))
    s = S.set_observed(s, ["gpu"])
    t = S.set_input(s, "x", "", formats)
    assert t.inputs == (("x", ""),) and t.format == "float64"
    gone = S.list_names(s, {"x": "float64"})  # gpu no longer offered
    assert gone.observed == ()
    with pytest.raises(ValueError, match="your arrays are float64, and the format is theirs"):
        S.set_format(s, "float32", formats)
    assert S.set_format(s, "float64", formats).format == "float64"
    back = S.set_source(s, "generated", formats)
    assert S.compare_arguments(back)["distribution"] == "uniform"
    assert S.set_format(back, "float32", formats).format == "float32"  # generated: any
    with pytest.raises(ValueError, match="valid: generated, arrays"):
        S.set_source(s, "files", formats)


def test_compare_arguments_are_what_compare_takes():
    s = S.set_control(S.initial(op="dot", n=100, seed=4), threads=2, distribution="wide")
    args = S.compare_arguments(s)
    assert args == dict(
        op="dot",
        format="float32",
        n=100,
        variants=list(s.variants),
        distribution="wide",
        seed=4,
        backends=("numpy", "emulated"),
        threads=2,
    )
    arrays = S.compare_arguments(S.set_source(s, "arrays", {}), inputs={"a": 1, "b": 2})
    assert arrays["inputs"] == {"a": 1, "b": 2} and "n" not in arrays and "seed" not in arrays
    kw = S.sweep_arguments(S.set_control(s, n=1000))
    assert kw["sizes"] == [10, 100, 1000] and kw["seeds"] == 5
    assert S.computed_part(S.set_control(s, view="bits")) == S.computed_part(s)
    assert S.shown_part(S.set_control(s, view="bits")) != S.shown_part(s)
    assert S.set_control(s, op="sum") == S.set_op(s, "sum")  # a row with its own transition
    with pytest.raises(TypeError, match="unexpected keyword argument 'ops'"):
        S.set_control(s, ops="sum")
    with pytest.raises(ValueError, match="valid: errors"):
        S.set_control(s, view="heatmap")


def test_another_op_leaves_the_op_parameters_of_the_first():
    # explorer(op="sum", block=64) then op "sqrt" (or a preset's matmul): block went on to
    # every comparison, and compare refused each one ("unexpected keyword argument 'block'")
    import fpexplore as fpx

    s = L.from_keywords({"op": "sum", "n": 10, "block": 64}, ["tree"], (), False)
    assert S.compare_arguments(s)["block"] == 64
    for moved in (S.set_op(s, "sqrt"), P.apply_preset(s.set(op="mean"), "tensor cores vs CPU")):
        args = S.compare_arguments(moved)
        assert "block" not in args and moved.op_params == ()
        assert "block" not in L.keywords_of_link(L.link_of(moved))
        fpx.compare(**{**args, "n": 10, "backends": ["emulated"]})


def test_variant_specs_are_parsed_where_their_text_enters_only(monkeypatch):
    """The state holds the variants parsed (VariantSpec): the transitions that move them
    (a format, the list's selection, removing, an op's defaults, compare's arguments) parse
    nothing again; they were parsed on every change (with_variants: parse_spec, then
    resolve_variants parsing the same texts a second time)."""
    from fpexplore import experiment, spec

    s = S.add_variant(S.initial(op="dot", variants=["sequential + fma", "pairwise"]), "kahan")

    def refuse(*args, **kwargs):
        raise AssertionError("a variant spec was parsed again")

    for module in (S, experiment, spec):
        monkeypatch.setattr(module, "parse_spec", refuse)
    f = S.set_format(S.select_variants(s, ["pairwise", "sequential+fma"]), "float64")
    assert texts(f.variants) == ("pairwise", "sequential+fma") and f.extra == s.extra
    r = S.remove_variants(f, ["pairwise"])
    assert texts(r.variants) == ("sequential+fma",)
    assert S.compare_arguments(r)["variants"] == list(r.variants)  # the specs, passed on
    m = S.set_op(r, "matmul")
    assert texts(m.variants) == tuple(op_registry.get("matmul").defaults_for("float32"))
    assert texts(S.set_op(m, "sum").variants) == texts(S.initial().variants)


def test_the_state_functions_refuse_what_they_cannot_store_by_name():
    """Pass 6 (issue 36): set_observed split "r1" into ('r', '1'); select_variants raised a
    bare KeyError; set_input stored an input or array that does not exist; pick stored 3 as
    a result's key; nearest_size gave 10 for -5 and a bare error for NaN; built_spec read
    fma="no" as True."""
    formats = {"x": "float64", "r1": "float64"}
    s = S.set_source(S.initial(n=1000), "arrays", formats)
    assert S.set_observed(s, "r1").observed == ("r1",)  # one name, not its characters
    with pytest.raises(TypeError, match="observed: a variable name is a string, got 5"):
        S.set_observed(s, [5])
    with pytest.raises(ValueError, match="unknown variant 'bogus'; offered: "):
        S.select_variants(s, ["bogus"])
    assert texts(S.select_variants(s, "pairwise").variants) == ("pairwise",)
    with pytest.raises(ValueError, match="unknown input 'zz'; sum's inputs: x"):
        S.set_input(s, "zz", "x", formats)
    with pytest.raises(ValueError, match="unknown var 'nope'; the arrays offered: , x, r1"):
        S.set_input(s, "x", "nope", formats)
    with pytest.raises(TypeError, match=r"b must be a result's key, \(variant, backend\)"):
        S.pick(s, ("x", "numpy"), 3)
    with pytest.raises(ValueError, match="n must be >= 1, got -5"):
        S.nearest_size(-5)
    with pytest.raises(TypeError, match="n must be an integer, got nan"):
        S.nearest_size(float("nan"))
    with pytest.raises(TypeError, match="fma must be True or False, got 'no'"):
        S.built_spec("sequential", fma="no")
    with pytest.raises(TypeError, match="block must be an integer, got 1.5"):
        S.built_spec("tree", block=1.5)
    assert S.built_spec("tree", block=64, acc="float64") == "tree(block=64)@float64"


def test_the_state_functions_keep_each_name_once_and_name_what_they_refuse():
    """Pass 7 (issue 36): select_variants kept a variant twice (compare then refused the
    list), set_observed stored "" and a name twice; nearest_size(10**400) and
    apply_preset(state, ["x"]) failed without naming the argument."""
    s = S.add_variant(S.initial(), "pairwise@float32")
    assert texts(S.select_variants(s, ["pairwise@float32"] * 2).variants) == ("pairwise@float32",)
    arrays = S.set_source(S.initial(n=1000), "arrays", {"x": "float64", "r": "float64"})
    assert S.set_observed(arrays, ["r", "r"]).observed == ("r",)
    with pytest.raises(TypeError, match="observed: a variable name is a string, got ''"):
        S.set_observed(arrays, "")
    assert S.nearest_size(10**400) == S.SIZES[-1]
    with pytest.raises(TypeError, match="preset must be one of"):
        P.apply_preset(s, ["x"])


def test_a_library_backend_not_installed_is_said_so():
    """explorer(backends=["torch"]) without torch was "unknown backend 'torch'; valid: numpy,
    emulated, cupy, replay", where compare says it is not installed (pass 14)."""
    with pytest.raises(ValueError, match=r"backend 'torch': torch is not installed \(pip install"):
        S.initial(backends=("torch",), installed=())
    assert S.initial(backends=("torch",), installed=("torch",)).backends == ("torch",)
    with pytest.raises(ValueError, match="unknown backend 'tourch'"):
        S.initial(backends=("tourch",), installed=())
