"""The explorer app without a kernel: set controls, compare with direct API calls; fuzz."""

from __future__ import annotations

import html
import importlib
from fractions import Fraction

import numpy as np
import pytest

import fpexplore as fpx
from fpexplore.orders.registry import orders_for

from widget_tree import displayed, find

pytest.importorskip("ipywidgets")


def _same_table(a, b):
    timings = ["time_ms", "compile_ms"]
    return a.drop(columns=timings).equals(b.drop(columns=timings))


def test_controls_map_onto_compare():
    app = fpx.explorer(n=1000)
    assert app.comparison is not None and app.message.value == ""
    direct = fpx.compare(**app.arguments())
    assert _same_table(app.comparison.table, direct.table)
    app.format.value = "float16"
    app.distribution.value = "wide"
    app.seed.value = 5
    args = app.arguments()
    assert (args["format"], args["distribution"], args["seed"]) == ("float16", "wide", 5)
    direct = fpx.compare(
        "sum", format="float16", n=1000, variants=args["variants"], distribution="wide", seed=5
    )
    assert _same_table(app.comparison.table, direct.table)
    # the figure shows the same numbers as the direct call's plot
    bars = [p.get_width() for p in app.figure.axes[0].patches]
    assert bars == direct.table["ulp_error"].astype(float).tolist()
    assert "fpx.compare('sum', format='float16', n=1000" in app.snippet.value
    assert "ulp_error" in app.table.value


def test_op_change_updates_variants_and_plot():
    app = fpx.explorer(n=1000)
    app.op.value = "matmul"
    app.n.value = 10
    # (all but the tensor cores, which read float32 through +tf32: the builder offers them)
    assert set(app.variants.options) == set(fpx.variants("matmul")) - {"tensor-core"}
    assert set(app.variants.options) == set(orders_for("matmul", "float32"))
    assert app.comparison.op == "matmul" and app.comparison.n == 10
    # every result's ulp histogram, not one variant's heatmap
    ax = app.figure.axes[0]
    assert not ax.images
    shown = [t.get_text() for t in ax.get_legend().get_texts()]
    assert shown == ["{} ({})".format(*k) for k in app.comparison.results]
    assert "ulps of float32" in ax.get_xlabel() and "cmp.plot('hist')" in app.snippet.value
    app.variants.value = ("pairwise",)
    assert list(app.comparison.table["variant"]) == ["np.matmul", "pairwise"]


def test_detective_button_is_displayed_and_answers():
    import ipywidgets as W

    app = fpx.explorer(n=10_000)
    button = find(app, W.Button, description="Which order did NumPy use?")
    assert not button.disabled
    shown = {id(w) for w in displayed(app)}
    button.click()
    answers = [w for w in displayed(app) if isinstance(w, W.HTML) and "fpx-detective" in w.value]
    assert len(answers) == 1 and id(answers[0]) in shown
    # np.sum of a contiguous float32 array is the 'numpy' order, bit for bit, on any machine
    first_row = answers[0].value.split("<tbody>")[1].split("</tr>")[0]
    assert "<td>numpy</td>" in first_row and "<td>True</td>" in first_row
    assert "np.sum" in answers[0].value and "one candidate reproduces" in answers[0].value
    # the button shows what the public function returns
    df = fpx.explain_numpy("sum", app.comparison.inputs)
    assert df.iloc[0]["variant"] == "numpy" and df.attrs["function"] == "np.sum"
    assert df.attrs["note"] == "one candidate reproduces every observation"
    find(app, W.Dropdown, description="op").value = "linspace"
    assert button.disabled


def test_explain_numpy_checks_its_arguments():
    with pytest.raises(ValueError, match="sum, dot, matmul"):
        fpx.explain_numpy("linspace", {"x": np.ones(3)})
    with pytest.raises(ValueError, match="missing b"):
        fpx.explain_numpy("dot", {"a": np.ones(3)})
    cmp = fpx.compare("sum", n=100)
    with pytest.raises(ValueError, match="comparison is of 'sum'"):
        fpx.explain_numpy("dot", cmp)
    assert fpx.explain_numpy("sum", cmp, probes=1).iloc[0]["variant"] == "numpy"
    # the inputs as a tuple (explain's form) or one array for sum: the same answer
    a, b = cmp.inputs["x"], cmp.inputs["x"][::-1].copy()
    by_name = fpx.explain_numpy("dot", {"a": a, "b": b}, probes=1)
    assert fpx.explain_numpy("dot", (a, b), probes=1).equals(by_name)
    assert fpx.explain_numpy("sum", a, probes=1).equals(fpx.explain_numpy("sum", cmp, probes=1))
    with pytest.raises(ValueError, match="takes 2 inputs"):
        fpx.explain_numpy("dot", (a,))
    with pytest.raises(TypeError, match="give a tuple or a dict"):
        fpx.explain_numpy("dot", a)


def test_errors_stay_inside_the_app():
    app = fpx.explorer(op="matmul", n=10)
    app.n.value = 3000  # beyond matmul's limit
    assert app.comparison is None
    assert "fpx-error" in app.message.value and "limit is 1024" in app.message.value
    app.n.value = 10
    assert app.message.value == "" and app.comparison is not None
    app.backends.value = ()
    assert "at least one backend" in app.message.value


def test_an_error_leaves_nothing_of_the_last_view_on_screen():
    """After an error the figure, table, code and detective of the last good setting are
    gone (adversarial pass 11: the old table and a snippet without backends= stayed)."""
    app = fpx.explorer(n=100)
    assert app.table.value and app.snippet.value and not app._c.detect.disabled
    app.backends.value = ()
    assert "at least one backend" in app.message.value
    assert app.table.value == app.snippet.value == app.banner.value == ""
    assert app._c.detect.disabled and not app.figure.axes
    app.backends.value = ("numpy", "emulated")
    assert app.message.value == "" and app.table.value and app.figure.axes


def test_a_redraw_clears_an_earlier_error_and_big_endian_observed_is_named():
    """A failed "add" left its error on screen through later view changes that redrew a
    valid comparison (pass 13); a big-endian observed result was "is >f4: a result in
    float16, ... float32 ... is needed", which it is."""
    app = fpx.explorer(n=1000)
    app.view.value = "A vs B"
    app.b_name.value, app.b_block.value = "shuffled", 1024  # (shuffled takes no block)
    app.b_add.click()
    assert "has no parameter" in html.unescape(app.message.value)
    app.pick_a.value = app.pick_a.options[2][1]  # a redraw only
    assert app.message.value == "" and app.comparison is not None
    x = np.random.default_rng(0).random(50).astype(np.float32)
    ns = {"x": x, "rbe": np.array(np.sum(x), ">f4")}
    app = fpx.explorer(namespace=ns, source="arrays")
    app.observed.value = ("rbe",)
    said = html.unescape(app.message.value)
    assert "observed rbe is big-endian (>f4): give it in this machine's byte order" in said


def test_pass_14_explorer_findings():
    """Pass 14: a misspelled keyword was "fpx.compare() got unexpected keyword argument",
    listing compare's (inputs, which the explorer refuses) and not the explorer's own; a
    dtype for format was kept as the dtype (its snippet, format=dtype('float16'), did not
    run); your big-endian array was "is >f4; sum's formats are ... float32 (convert it, e.g.
    x.astype(np.float32))"; a failed add stayed on screen after an add that changed
    nothing."""
    with pytest.raises(TypeError) as raised:
        fpx.explorer(opp="sum")
    said = str(raised.value)
    assert said.startswith("fpx.explorer() got unexpected keyword argument 'opp'; it accepts: ")
    accepts = said.split("it accepts: ")[1].split(", ")
    assert {"namespace", "link", "view", "variants", "block"} <= set(accepts)
    assert "inputs" not in accepts and "progress" not in accepts
    app = fpx.explorer(format=np.dtype("float16"), n=100)
    assert app.state.format == "float16" and type(app.state.format) is str
    assert "fpx.compare('sum', format='float16', n=100" in app.snippet.value
    assert "dtype(" not in app.snippet.value
    x = np.random.default_rng(1).random(100).astype(">f4")
    app = fpx.explorer(source="arrays", namespace={"x": x})
    said = html.unescape(app.message.value)
    assert "x = x is big-endian (>f4): NumPy reduces such an array" in said
    assert "x.astype('<f4')" in said and "convert it, e.g." not in said
    app = fpx.explorer(n=1000)
    app.add_variant("sequential(block=64)")
    assert "has no parameter" in html.unescape(app.message.value)
    app.add_variant("pairwise")  # already selected: nothing changes, nothing failed
    assert app.message.value == ""


def test_an_input_rounding_that_changes_nothing_is_refused_at_add_and_left_out_in_words():
    """Pass 16: sequential+tf32 kept on float16 data, or sequential+bfloat16 added on FP8
    data, was refused by compare ("changes nothing"), taking every row down; a format change
    dropped chosen variants (FP8: sequential+fma) without a word."""
    app = fpx.explorer(op="dot", n=50, format="float8_e4m3")
    shown = app.table.value
    app.b_rounding.value = "bfloat16"
    app.b_add.click()
    said = html.unescape(app.message.value)
    assert "input_rounding='bfloat16' changes nothing for float8_e4m3 data" in said
    assert app.table.value == shown and app.comparison is not None
    assert "sequential+bfloat16" not in [str(v) for v in app.state.variants]
    app = fpx.explorer(op="dot", n=50, variants=["sequential", "sequential+fma", "sequential+tf32"])
    app.format.value = "float16"
    assert [str(v) for v in app.state.variants] == ["sequential", "sequential+fma"]
    said = html.unescape(app.banner.value)
    assert "sequential+tf32 is left out on float16 data: input_rounding='tf32' changes" in said
    assert app.comparison is not None and app.comparison.format == "float16"
    app.format.value = "float8_e4m3"
    assert [str(v) for v in app.state.variants] == ["sequential"]
    assert "sequential+fma is left out on float8_e4m3 data: fma=True" in app.banner.value
    assert "left out" not in fpx.explorer(op="dot", n=50, format="float16").banner.value
    app = fpx.explorer(op="dot", n=50)  # untouched defaults become the new format's: no note
    app.format.value = "float8_e4m3"
    assert "left out" not in app.banner.value and app.comparison is not None


def test_your_arrays_and_a_link_say_which_variants_another_format_left_out():
    """Pass 17: picking float16 then FP8 arrays, or a refresh that made them FP8, dropped
    chosen variants (sequential+tf32, then numpy, tree, kahan, sequential+fma) without a word
    (the first pick's view failed, two arrays in two formats, and took the note with it); a
    link opened with format= was refused for the link's own numpy ('variants: numpy on
    float8_e4m3 data'), where the format control drops what the format refuses."""
    import ml_dtypes

    from fpexplore.app.links import link_of

    rng = np.random.default_rng(0)
    ns = {k: rng.standard_normal(30).astype(np.float32) for k in ("a", "b")}
    ns |= {k + "16": v.astype(np.float16) for k, v in list(ns.items())}
    ns |= {k + "8": ns[k].astype(ml_dtypes.float8_e4m3fn) for k in ("a", "b")}
    app = fpx.explorer(op="dot", namespace=ns, source="arrays")
    app.input_picks["a"].value, app.input_picks["b"].value = "a", "b"
    app.add_variant("sequential+fma")
    app.add_variant("sequential+tf32")
    app.input_picks["a"].value = "a16"  # a float16, b float32: a failed view, the note shows
    assert app.comparison is None and "sequential+tf32 is left out on float16" in app.banner.value
    app.input_picks["b"].value = "b16"  # and again with the view
    assert app.comparison is not None and app.comparison.format == "float16"
    assert "sequential+tf32 is left out on float16 data" in app.banner.value
    app.input_picks["a"].value, app.input_picks["b"].value = "a8", "b8"
    said = html.unescape(app.banner.value)
    for v in ("numpy", "tree", "kahan", "sequential+fma"):
        assert f"{v} is left out on float8_e4m3 data" in said, v
    assert [str(v) for v in app.state.variants] == ["sequential", "pairwise"]
    # a link opened on another format: its variants that format refuses, left out, in words
    code = link_of(fpx.explorer(op="dot", n=30).state)  # the default view: no note
    app = fpx.explorer(link=code, format="float8_e4m3")
    assert app.comparison is not None and "left out" not in app.banner.value
    chosen = ["sequential", "sequential+fma", "sequential+bfloat16-truncate"]
    code = link_of(fpx.explorer(op="dot", n=30, variants=chosen).state)
    app = fpx.explorer(link=code, format="bfloat16")
    assert [str(v) for v in app.state.variants] == ["sequential", "sequential+fma"]
    said = html.unescape(app.banner.value)
    assert "sequential+bfloat16-truncate is left out on bfloat16 data: input_rounding=" in said
    with pytest.raises(ValueError, match="variants: 'sequential\\+fma' on float8_e4m3 data"):
        fpx.explorer(link=code, format="float8_e4m3", variants=["sequential+fma"])


def test_pass_18_notes_op_parameters_and_links():
    """Pass 18: a note kept through a failed view (FP8 picks) showed over the float32 view
    that came back, which had those rows; block=8 given to the explorer took the FP8 view
    down ("unexpected keyword argument 'block'": FP8 keeps no blocked order), also from a
    link opened with format=; accumulate=np.dtype("float64") was a bare TypeError from a
    spec's text; a link opened with n=None took the op's default n."""
    import ml_dtypes

    from fpexplore.app.links import link_of

    rng = np.random.default_rng(0)
    a32, b32 = (rng.standard_normal(30).astype(np.float32) for _ in range(2))
    ns = {"a": a32, "b": b32, "a8": a32.astype(ml_dtypes.float8_e4m3fn)}
    app = fpx.explorer(op="dot", namespace=ns, source="arrays")
    app.add_variant("sequential+fma")
    app.input_picks["a"].value = "a8"  # a FP8, b float32: a failed view, the notes show
    assert app.comparison is None and "left out on float8_e4m3 data" in app.banner.value
    app.input_picks["a"].value = "a"  # float32 again: nothing of FP8's notes
    assert app.comparison.format == "float32" and "left out" not in app.banner.value
    app = fpx.explorer(op="dot", n=30, block=8)
    app.format.value = "float8_e4m3"  # no order there takes block=: compare is not given it
    assert app.comparison is not None and app.message.value == "" and app.op_params == {"block": 8}
    assert "block" not in app.comparison.params
    app.format.value = "float32"  # the tree order takes it again
    assert app.comparison.params["block"] == 8
    code = link_of(app.state)
    assert fpx.explorer(link=code, format="float8_e4m3").comparison is not None
    assert fpx.explorer(link=code, n=None).state.n == 30
    with pytest.raises(
        TypeError, match="fpx.explorer\\(\\) got unexpected keyword argument 'block'"
    ):
        fpx.explorer(op="dot", n=30, format="float8_e4m3", block=8)  # typed: refused
    with pytest.raises(ValueError, match="fma=True for sequential on float8_e4m3 data: fma=True"):
        fpx.explorer(op="dot", n=30, format="float8_e4m3", fma=True)  # (it opened on an error)
    for acc in (np.dtype("float64"), np.float64):
        app = fpx.explorer(op="sum", n=30, accumulate=acc, variants=["sequential"])
        assert app.op_params == {"accumulate": "float64"} and app.comparison is not None
        assert (
            fpx.compare("sum", n=30, variants=["sequential"], accumulate=acc).params["accumulate"]
            == "float64"
        )


def test_pass_15_explorer_findings():
    """Pass 15: after a failure on a view that was itself an error ("choose at least one
    backend"), a redraw cleared the failure and left the app blank; the builder added
    tensor-core(arch=v100)+tf32 on float32, which compare then refused, taking every row
    down; the detective button stayed on for FP8 data, where it can only fail."""
    import ml_dtypes

    app = fpx.explorer(n=100, backends=())
    app.b_fma.value = True
    app.b_add.click()  # sum+fma: refused
    assert "not sum" in html.unescape(app.message.value)
    app.view.value = "A vs B"  # a change that works: the view's own message is back
    assert app.comparison is None and "choose at least one backend" in app.message.value
    app = fpx.explorer(op="matmul", n=10)
    shown = app.table.value
    app.add_variant("tensor-core(arch=v100)+tf32")
    said = html.unescape(app.message.value)
    assert "the V100 tensor cores take no tf32 inputs" in said and app.table.value == shown
    assert "tensor-core(arch=v100)+tf32" not in [str(v) for v in app.state.variants]
    x8 = np.linspace(-2, 2, 64).astype(ml_dtypes.float8_e4m3fn)
    app = fpx.explorer(source="arrays", namespace={"x": x8})
    assert app.comparison is not None and app.comparison.format == "float8_e4m3"
    assert app._c.detect.disabled
    assert not fpx.explorer(n=100)._c.detect.disabled  # (float32: it works)
    # a preset on FP8 data left its fma variant out without a word: the banner says so
    app = fpx.explorer(source="arrays", namespace={"a": x8, "b": x8[::-1].copy()}, op="dot")
    app.apply_preset("FMA vs separate multiply-add")
    assert [str(v) for v in app.state.variants] == ["sequential"]
    said = html.unescape(app.banner.value)
    assert "preset 'FMA vs separate multiply-add' leaves out sequential+fma on float8_e4m3" in said
    app.apply_preset("sequential vs pairwise")  # nothing left out: no note
    assert "leaves out" not in app.banner.value
    # a sum view's link opened as a matmul kept the sum's variants: "unknown variant 'numpy'
    # for matmul"; another op drops them and the op parameters, as an op change does
    from fpexplore.app.links import link_of
    from fpexplore.ops.registry import get as op_registry_get

    code = link_of(fpx.explorer(n=1000, variants=["numpy", "tree"], block=64).state)
    m = fpx.explorer(link=code, op="matmul")
    assert m.state.op == "matmul" and m.op_params == {}
    assert [str(v) for v in m.state.variants] == list(
        op_registry_get("matmul").defaults_for("float32")
    )
    again = fpx.explorer(link=code)
    assert [str(v) for v in again.state.variants] == ["numpy", "tree"] and again.op_params


def test_no_gpu_banner():
    if fpx.backends()["cupy"].startswith("available"):
        pytest.skip("a GPU is present")
    app = fpx.explorer(n=100, backends=("emulated", "cupy"))
    assert "cupy backend unavailable" in app.banner.value and app.comparison is not None


def test_default_backends_add_the_gpu_where_there_is_one(monkeypatch):
    B = importlib.import_module("fpexplore.backends")  # (fpx.backends is the function)
    C = importlib.import_module("fpexplore.backends.cupy")
    assert fpx.explorer(n=100).backends.value == (
        ("numpy", "emulated", "cupy") if fpx.has_gpu() else ("numpy", "emulated")
    )
    # a stand-in GPU (NumPy's sum labelled as measured): the app then shows a cupy row
    real = B.status
    monkeypatch.setattr(B, "status", lambda n: (True, "stand-in") if n == "cupy" else real(n))
    monkeypatch.setattr(C, "library", lambda op, *a, **k: np.asarray(np.sum(a[0])))
    app = fpx.explorer(n=100)
    assert app.backends.value == ("numpy", "emulated", "cupy")
    assert "cupy" in set(app.comparison.table["backend"]) and app.banner.value == ""


def test_fuzz_every_op_format_variant():
    """Every op x format x variant at a small n: nothing escapes, every valid view renders."""
    app = fpx.explorer(n=10)
    failures = []
    for op in app.op.options:
        app.op.value = op
        app.n.value = 10
        for fmt in app.format.options:  # sum, dot and matmul: FP8, FP6 and FP4 too
            app.format.value = fmt
            offered = set(app.variants.options)
            missing = set(fpx.variants(op)) - offered
            # only documented gaps: linspace's library variants have no bfloat16 or FP8; the CPU
            # libraries' own loops take the formats their library computes in
            ordered = op in ("sum", "dot", "matmul")
            gaps = set(fpx.orders(op)) - set(orders_for(op, fmt)) if ordered else set()
            if op in ("mean", "variance") and fmt not in fpx.FORMATS:  # (held data: those
                gaps = {"numpy", "kahan" if op == "mean" else "welford"}  # that compute in it)
            if op == "linspace" and (fmt == "bfloat16" or fmt not in fpx.FORMATS):
                gaps = {"numpy1", "numpy2", "cupy", "cupy-array", "cupy-scalar"}  # (no such
            assert missing == gaps, (op, fmt, missing)  # semantics: lerp, fma, exact do)
            for variant in app.variants.options:
                app.variants.value = (variant,)
                if app.comparison is None:
                    failures.append((op, fmt, variant, app.message.value))
                else:
                    assert app.comparison.op == op and app.comparison.format == fmt
                    assert app.figure.axes, (op, fmt, variant)
    assert failures == []


def test_the_format_control_offers_fp8_fp6_fp4_where_the_orders_take_them():
    """Every op draws FP8, FP6 and FP4 data (ml_dtypes arrays) and computes in them, but
    adam_step FP6 and FP4 (its 0/0 is a NaN they cannot hold): switching to it from such a
    format goes back to float32, saying so."""
    small = ("float8_e4m3", "float8_e5m2", "float6_e2m3", "float6_e3m2", "float4_e2m1")
    app = fpx.explorer(n=1000)
    assert app.format.options == (*fpx.FORMATS, *small)
    app.format.value = "float8_e4m3"
    x8 = app.comparison.inputs["x"].dtype
    assert x8.name == "float8_e4m3fn"
    assert set(app.variants.options) == {"sequential", "reverse", "pairwise", "blocked", "exact"}
    assert list(app.comparison.table["variant"]) == ["np.sum", "sequential", "pairwise"]
    direct = fpx.compare(**app.arguments())
    assert _same_table(app.comparison.table, direct.table)
    app.view.value = "bits"
    assert app.message.value == "" and app.figure.axes
    app.op.value = "matmul"  # (matmul takes them too: each product and addition rounded)
    assert app.format.options == (*fpx.FORMATS, *small) and app.format.value == "float8_e4m3"
    assert app.comparison.inputs["A"].dtype.name == "float8_e4m3fn"
    assert list(app.comparison.table["variant"]) == ["np.matmul", "sequential", "pairwise"]
    assert _same_table(app.comparison.table, fpx.compare(**app.arguments()).table)
    app.op.value = "variance"  # (two-pass and one-pass compute in it: issue 38)
    assert app.format.value == "float8_e4m3" and app.comparison.inputs["x"].dtype == x8
    assert list(app.comparison.table["variant"]) == ["np.var", "two-pass", "one-pass"]
    assert _same_table(app.comparison.table, fpx.compare(**app.arguments()).table)
    app.op.value = "softmax"  # (naive and shifted compute in it, exp ml_dtypes': issue 38)
    assert app.format.value == "float8_e4m3" and app.comparison.inputs["x"].dtype == x8
    assert list(app.comparison.table["variant"]) == ["naive", "shifted"]
    assert _same_table(app.comparison.table, fpx.compare(**app.arguments()).table)
    app.op.value = "cdist"  # (expanded and direct in it, their matmuls fpx.matmul's)
    assert app.format.value == "float8_e4m3" and app.comparison.inputs["x"].dtype == x8
    assert _same_table(app.comparison.table, fpx.compare(**app.arguments()).table)
    app.op.value = "linspace"  # (lerp and fma in it)
    assert app.format.value == "float8_e4m3" and app.comparison.inputs["start"].dtype == x8
    app.op.value = "adam_step"  # (every op takes FP8 now: issue 38)
    assert app.format.value == "float8_e4m3" and app.comparison.inputs["param"].dtype == x8
    app.op.value = "sum"
    app.format.value = "float6_e2m3"
    app.op.value = "adam_step"  # (pass 30: the format went back to float32 without a word)
    assert "float6_e2m3" not in app.format.options and app.format.value == "float32"
    assert app.comparison is not None and app.comparison.format == "float32"
    assert "adam_step takes no float6_e2m3 data: the format is float32" in app.banner.value


def test_image_fallback_without_ipympl(monkeypatch):
    import ipywidgets as W

    from fpexplore.app import controls

    def no_ipympl():
        from matplotlib.figure import Figure

        return Figure(), W.Image(format="png")

    monkeypatch.setattr(controls, "canvas", no_ipympl)
    app = fpx.explorer(n=100)
    assert app.canvas.value[:8] == b"\x89PNG\r\n\x1a\n"
    before = bytes(app.canvas.value)
    app.format.value = "float64"
    assert bytes(app.canvas.value) != before


_ = np


def _html_table(text):
    """The first HTML table in ``text`` as a DataFrame of the strings a person reads."""
    import html.parser

    import pandas as pd

    class Cells(html.parser.HTMLParser):
        def __init__(self):
            super().__init__()
            self.rows, self.cell = [], None

        def handle_starttag(self, tag, attrs):
            if tag == "tr":
                self.rows.append([])
            elif tag in ("td", "th"):
                self.cell = ""

        def handle_endtag(self, tag):
            if tag in ("td", "th") and self.cell is not None:
                self.rows[-1].append(self.cell.strip())
                self.cell = None

        def handle_data(self, data):
            if self.cell is not None:
                self.cell += data

    parser = Cells()
    parser.feed(text)
    header, *body = parser.rows
    return pd.DataFrame(body, columns=header)


def test_table_shows_full_precision_and_warm_timings():
    """sum, float32, n = 1e5, the default variants: results a few ulps apart print apart."""
    app = fpx.explorer(n=100_000)
    cmp = app.comparison
    shown = _html_table(app.table.value)
    assert shown.loc[0, "variant"] == "exact (reference)"
    assert shown.loc[0, "value"] == fpx.shortest_repr(cmp.reference)
    values = [cmp.results[k] for k in cmp.results]
    assert len({int(fpx.to_bits(v)) for v in values}) >= 3  # the premise: they differ
    for row, v in zip(shown.iloc[1:].itertuples(), values):
        assert row.value == fpx.shortest_repr(v) and row.hex == fpx.hex_string(v)
    distinct = {int(fpx.to_bits(v)) for v in [cmp.reference, *values]}
    assert shown["value"].nunique() == len(distinct)  # one string per bit pattern
    assert "not the speed of the hardware" in app.table.value
    # time_ms is the warm time: a seed change (nothing left to compile) gives the same scale
    first = cmp.table["time_ms"].to_numpy()
    app.seed.value = 1
    warm = app.comparison.table["time_ms"].to_numpy()
    assert (app.comparison.table["compile_ms"] == 0).all()
    assert (first <= 10 * np.maximum(warm, 2.0)).all(), (
        first,
        warm,
    )  # 2 ms: noise; compiling is 100s of ms


def test_export_buttons_and_copy_are_displayed_and_produce_files():
    import base64

    import ipywidgets as W

    app = fpx.explorer(n=1000)
    for kind, magic in (("CSV", b"op,format,n,"), ("PNG", b"\x89PNG"), ("SVG", b"<?xml")):
        find(app, W.Button, description=f"Export {kind}").click()
        link = app.export_out.value
        assert 'class="fpx-download"' in link and 'download="fpexplore-sum-float32-n1000.' in link
        data = base64.b64decode(link.split("base64,")[1].split('"')[0])
        assert data.startswith(magic), (kind, data[:20])
    csv = app.export("CSV").decode()
    assert csv.splitlines()[0].startswith("op,format,n,") and len(csv.splitlines()) == 1 + len(
        app.comparison.table
    )
    app.seed.value = 3  # a new view clears the old link
    assert app.export_out.value == ""
    # pass 16: a change that only redraws (the view, a pick) left the old view's link on screen
    large = find(app, W.ToggleButton, description="large type")
    for change in (
        lambda: setattr(app.view, "value", "A vs B"),
        lambda: setattr(large, "value", True),
    ):
        find(app, W.Button, description="Export PNG").click()
        assert "fpx-download" in app.export_out.value
        change()
        assert app.export_out.value == ""
    find(app, W.Button, description="Link to this view").click()
    app.view.value = "bits"
    assert app.export_out.value == ""
    copy = [w for w in displayed(app) if isinstance(w, W.HTML) and "fpx-copy" in w.value]
    assert len(copy) == 1 and "navigator.clipboard.writeText" in copy[0].value
    assert "fpx.compare(&#x27;sum&#x27;" in copy[0].value or "fpx.compare('sum'" in copy[0].value


def test_first_render_waits_for_the_screen_when_kernels_are_cold(monkeypatch):
    """In a kernel (a running event loop) with cold kernels, the app appears at once with the
    compiling note and computes right after the cell returns; elsewhere it computes at once."""
    import asyncio

    from fpexplore import warmup

    monkeypatch.setattr(warmup, "is_cold", lambda *a, **k: True)

    async def in_a_kernel():
        app = fpx.explorer(op="exp", n=100)
        shown = (app.comparison, app.message.value)
        await asyncio.sleep(0.5)  # the cell has returned: the loop runs the scheduled update
        return app, shown

    app, (first, note) = asyncio.run(in_a_kernel())
    assert first is None and "compiling kernels for float32 (first use only)" in note
    assert app.comparison is not None and app.message.value == ""
    plain = fpx.explorer(op="exp", n=100)  # no running loop (a script, these tests): at once
    assert plain.comparison is not None and plain.message.value == ""


def test_each_op_starts_at_its_own_size():
    app = fpx.explorer()
    assert app.n.value == 100_000 and app.comparison.n == 100_000
    app.op.value = "matmul"  # 10^5 would be refused (limit 1024)
    assert app.n.value == 100 and app.comparison.n == 100 and app.message.value == ""
    app.op.value = "adam_step"  # float64's exact reference is slow per element
    assert app.n.value == 1000 and app.comparison.n == 1000
    assert fpx.explorer(op="cdist").comparison.n == 100
    assert fpx.explorer(op="sum", n=10).comparison.n == 10  # a given n wins


# ----------------------------------------------------------------------------- builder and views


def _builder_add(app, name, *, fma=False, block=0, rounding="", acc=""):
    import ipywidgets as W

    find(app, W.Dropdown, description="build").value = name
    find(app, W.Checkbox, description="FMA").value = fma
    app.b_block.value, app.b_rounding.value, app.b_acc.value = block, rounding, acc
    assert app.b_block in set(displayed(app)) and app.b_acc in set(displayed(app))
    find(app, W.Button, description="add").click()


def test_fp8_arrays_open_the_explorer_and_observed_results_are_measured():
    """FP8 arrays by name at the start (source="arrays"): the variants are those of their
    format, not float32's (adversarial pass 11: "order 'numpy' does not accumulate in
    float8_e4m3" and no table); an observed result beside them is measured against the
    exact sum in its own format, and explain, which does not take FP8 data, says so instead
    of taking the table with it. Oracle: the E4M3 values in [0, 1) are multiples of 2**-9,
    so 300 of them add exactly in float32."""
    import ml_dtypes

    x8 = np.random.default_rng(0).uniform(0, 1, 300).astype(ml_dtypes.float8_e4m3fn)
    exact = sum(Fraction(float(v)) for v in x8)
    assert (exact * 2**9).denominator == 1 and exact < 2**9  # exact in float32
    r32 = np.nextafter(np.float32(exact), np.float32(np.inf))  # one float32 ulp above
    ns = {"x8": x8, "r8": np.sum(x8), "r32": r32}
    app = fpx.explorer(namespace=ns, source="arrays")  # (no array named x: none chosen)
    assert "choose an array for x" in app.message.value and app.comparison is None
    app.input_picks["x"].value = "x8"
    assert app.message.value == "" and app.state.format == "float8_e4m3"
    assert [str(v) for v in app.state.variants] == ["sequential", "pairwise"]
    direct = fpx.compare(
        "sum", inputs={"x": x8}, variants=["sequential", "pairwise"], backends=app.backends.value
    )
    assert _same_table(app.comparison.table, direct.table)
    app.observed.value = ("r32", "r8")
    assert app.message.value == ""
    rows = {r["variant"]: r for r in app._out.observed.rows}
    assert rows["r32"]["ulp_error"] == "1" and rows["r32"]["unit"].endswith("ulps of float32")
    assert rows["r8"]["unit"] == "ulps of float8_e4m3"
    assert "not run: it weighs the orders of float16" in app.explained.value
    # an FP8 result of float32 data: its exact reference would be rounded twice here, so the
    # app names the observed result that has none (pass 12: explain's refusal, unnamed)
    x32 = x8.astype(np.float32)
    app32 = fpx.explorer(namespace={"x": x32, "r8": np.sum(x8)}, source="arrays", n=None)
    app32.observed.value = ("r8",)
    said = html.unescape(app32.message.value)
    assert "observed r8: sum: a float8_e4m3 result of float32 inputs has no exact" in said
    with pytest.raises(ValueError, match="your arrays are float8_e4m3, and the format is theirs"):
        fpx.explorer(namespace={"x": x8}, source="arrays", format="float32")
    with pytest.raises(ValueError, match="variants: 'numpy' on float8_e4m3 data: sum: order"):
        fpx.explorer(namespace={"x": x8}, source="arrays", variants=["numpy"])


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(variants=["tree"]), "'tree' on float8_e4m3 data: sum: order 'tree' does not"),
        (dict(op="dot", variants=["sequential+fma"]), "fma=True with 'float8_e4m3' accumulation"),
    ],
)
def test_explorer_refuses_variants_the_format_refuses(kwargs, match):
    """A variant given that FP8 data refuse is the call's own error, not quietly dropped
    (adversarial pass 11: the app opened with no variant and "choose at least one")."""
    with pytest.raises(ValueError, match=match):
        fpx.explorer(n=100, format="float8_e4m3", **kwargs)


@pytest.mark.parametrize(
    "op, arrays",
    [
        ("sum", {"x": ("float8_e4m3fnuz", 64)}),
        ("sum", {"x": ("float8_e8m0fnu", 64)}),
        ("cdist", {"x": ("float8_e4m3fnuz", (8, 3)), "y": ("float8_e4m3fnuz", (8, 3))}),
    ],
)
def test_arrays_of_a_format_the_op_does_not_take_are_a_message(op, arrays):
    """AMD's FNUZ FP8 or E8M0 for sum and cdist: the app says which input and which
    formats the op takes (adversarial pass 12: a TraitError out of the format control, and
    the state's format no longer the control's)."""
    import ml_dtypes

    rng = np.random.default_rng(0)
    ns = {
        k: rng.uniform(1, 2, shape).astype(getattr(ml_dtypes, t))
        for k, (t, shape) in arrays.items()
    }
    app = fpx.explorer(op=op, namespace=ns, source="arrays")
    first = next(iter(arrays))
    assert f"{first} = {first} is {arrays[first][0]}; {op}'s formats are float16" in html.unescape(
        app.message.value
    )
    assert app.state.format == app.format.value == "float32" and app.comparison is None


def test_fp8_arrays_follow_a_switch_to_ops_that_take_them():
    """(No op with arrays of its own refuses FP8 now: the FNUZ and E8M0 refusals are
    test_arrays_of_a_format_the_op_does_not_take_are_a_message's.)"""
    import ml_dtypes

    a8 = np.random.default_rng(0).uniform(0, 1, (8, 8)).astype(ml_dtypes.float8_e4m3fn)
    ns = {"a": a8[0], "b": a8[1], "A": a8, "B": a8, "x": a8, "y": a8[:3]}
    app = fpx.explorer(op="dot", namespace=ns, source="arrays")
    assert app.comparison is not None and app.state.format == "float8_e4m3"
    app.op.value = "matmul"  # (it takes FP8 arrays)
    assert app.state.format == app.format.value == "float8_e4m3"
    assert app.comparison is not None and app.comparison.inputs["A"] is a8
    app.op.value = "cdist"  # (and cdist: issue 38)
    assert app.state.format == app.format.value == "float8_e4m3"
    assert app.comparison is not None and app.comparison.inputs["y"] is ns["y"]
    mixed = fpx.explorer(
        op="dot", namespace={"a": a8[0], "b": a8[1].astype(np.float32)}, source="arrays"
    )
    said = html.unescape(mixed.message.value)
    assert (
        "a = a is float8_e4m3, b = b is float32 (convert exactly, e.g. a.astype(np.float32))"
        in said
    )


def test_a_format_switch_drops_the_variants_the_format_refuses():
    """The tensor cores take float16, bfloat16 and float32 (+tf32) data: on float64 they
    leave the selection, as orders leave FP8's (adversarial pass 12: they stayed and the
    view failed with the order's refusal)."""
    app = fpx.explorer(op="matmul", n=10)
    app._c.presets["tensor cores vs CPU"].click()
    assert any(v.name == "tensor-core" for v in app.state.variants)
    app.format.value = "float64"
    assert [str(v) for v in app.state.variants] == ["sequential"]
    assert app.message.value == "" and app.comparison is not None


def test_builder_offers_a_format_of_your_own_as_accumulator():
    """fpx.format's formats are accumulators in the builder (issue 38): the float16 twin's
    dot equals float16's; an order that does not take it shows why, and nothing is added."""
    from fpexplore.userformat import _forget

    fpx.format(11, 15, name="t_app_half")
    try:
        app = fpx.explorer(op="dot", n=1000, seed=4, variants=["pairwise"])
        assert "t_app_half" in [v for _, v in app.b_acc.options]
        _builder_add(app, "sequential", acc="t_app_half")
        _builder_add(app, "sequential", acc="float16")
        assert app.variants.value == ("pairwise", "sequential@t_app_half", "sequential@float16")
        t = app.comparison.table.set_index("variant")
        assert t.loc["sequential@t_app_half", "value"] == t.loc["sequential@float16", "value"]
        _builder_add(app, "tree", acc="t_app_half")
        assert "accumulates in the orders of fpx.sum, fpx.dot and fpx.matmul" in app.message.value
        assert len(app.variants.value) == 3
    finally:
        _forget("t_app_half")


def test_a_format_of_your_own_defined_later_is_a_data_format_of_the_explorer():
    """Issue 38: a format defined after the explorer opened is offered by the format control
    (for sum, not matmul) and the builder's accumulators once anything changes; chosen, the
    table is compare's of that format, the verdict counts its ulps, and A vs B shows its own
    bits (the float16 twin's: float16's patterns, from NumPy)."""
    import ipywidgets as W

    from fpexplore.userformat import _forget

    app = fpx.explorer(op="sum", n=1000, seed=4)
    fmt = find(app, W.Dropdown, description="format")
    assert "t_app_h16" not in fmt.options
    fpx.format(11, 15, name="t_app_h16")
    try:
        app.seed.value = 5  # (any change redraws the controls)
        assert "t_app_h16" in fmt.options
        assert "t_app_h16" in [v for _, v in app.b_acc.options]
        fmt.value = "t_app_h16"
        assert app.message.value == "" and app.comparison.format == "t_app_h16"
        direct = fpx.compare(
            "sum", format="t_app_h16", n=1000, seed=5, variants=list(app.variants.value)
        )
        assert _same_table(app.comparison.table, direct.table)
        assert "(ulps of t_app_h16)" in app.verdict.value
        find(app, W.ToggleButtons, description="view").value = "A vs B"
        find(app, W.Dropdown, description="A").label = "sequential (emulated)"
        find(app, W.Dropdown, description="B").label = "pairwise (emulated)"
        shown = _html_table(app.view_out.value)
        seq, pw = (
            float(app.comparison.results[(v, "emulated")]) for v in ("sequential", "pairwise")
        )
        if seq != pw:
            bits = format(int(np.float16(seq).view(np.uint16)), "016b")
            assert shown.loc[0, "a_bits"] == f"{bits[0]} {bits[1:6]} {bits[6:]}"
        find(app, W.ToggleButtons, description="view").value = "bits"
        assert app.message.value == ""
        title = app.figure.axes[0].get_title()
        assert title == "t_app_h16: sign | exponent (5 bits) | significand (10)"
        app.op.value = "matmul"  # (each product and addition rounded to it)
        assert app.state.format == "t_app_h16" and app.comparison.format == "t_app_h16"
        direct = fpx.compare(**app.arguments())
        assert _same_table(app.comparison.table, direct.table)
        app.op.value = "variance"  # (two-pass and one-pass compute in it)
        assert app.comparison.format == "t_app_h16"
        assert _same_table(app.comparison.table, fpx.compare(**app.arguments()).table)
        for op in ("softmax", "cdist", "linspace", "adam_step", "exp"):  # (issue 38)
            app.op.value = op
            assert app.comparison.format == "t_app_h16", op
            assert _same_table(app.comparison.table, fpx.compare(**app.arguments()).table)
    finally:
        _forget("t_app_h16")


def test_a_vs_b_of_a_format_without_ieee_bits_draws_and_the_bits_view_says_why():
    """A format of fpx.format without subnormals has no IEEE bit layout: A vs B of its scalar
    results failed on drawing their bits ("Cannot show this combination", and the preset
    "sequential vs pairwise" left no table); it draws their ulps now, and the bits view says
    why it has no bits."""
    import ipywidgets as W

    from fpexplore.userformat import _forget

    fpx.format(5, 4, subnormals=False, name="t_app_nosub")
    try:
        app = fpx.explorer(op="sum", n=1000, format="t_app_nosub")
        app._c.presets["sequential vs pairwise"].click()
        assert app.state.view == "A vs B" and app.message.value == "", app.message.value
        assert app.comparison is not None and len(app.comparison.table) == 2
        find(app, W.ToggleButtons, description="view").value = "bits"
        assert "format 't_app_nosub' (fpx.format) has no IEEE bit layout" in html.unescape(
            app.message.value
        )
    finally:
        _forget("t_app_nosub")


def test_builder_puts_fma_next_to_separate_and_a_vs_b_reads_them():
    import ipywidgets as W

    app = fpx.explorer(op="dot", n=1000, seed=4, variants=["pairwise"])
    _builder_add(app, "sequential")
    _builder_add(app, "sequential", fma=True)
    _builder_add(app, "tree", block=32, rounding="tf32", acc="float64")
    assert app.variants.value == (
        "pairwise",
        "sequential",
        "sequential+fma",
        "tree(block=32)+tf32@float64",
    )
    t = app.comparison.table.set_index("variant")
    direct = fpx.compare("dot", n=1000, seed=4, variants=list(app.variants.value))
    assert _same_table(app.comparison.table, direct.table)
    assert t.loc["sequential+fma", "value"] != t.loc["sequential", "value"]  # 1 ulp apart
    # the A-vs-B view: B against A, read on the displayed widgets
    find(app, W.ToggleButtons, description="view").value = "A vs B"
    find(app, W.Dropdown, description="A").label = "sequential (emulated)"
    find(app, W.Dropdown, description="B").label = "sequential+fma (emulated)"
    assert app.pick_b.value == ("sequential+fma", "emulated")  # the result's key
    shown = _html_table(app.view_out.value)
    assert list(shown.columns) == ["index", "a", "b", "ulps", "a_bits", "b_bits"]
    assert (
        int(shown.loc[0, "ulps"])
        == int(
            fpx.ulp_distance(
                app.comparison.results[("sequential", "emulated")],
                app.comparison.results[("sequential+fma", "emulated")],
            )
        )
        != 0
    )
    assert "cmp.diff('sequential (emulated)', 'sequential+fma (emulated)').plot()" in (
        app.snippet.value
    )
    # the bits view: A next to the exact answer
    app.view.value = "bits"
    assert "against <b>exact (reference)</b>" in app.view_out.value and app.figure.axes
    # remove: the built spec leaves the list and the table
    app.variants.value = ("sequential+fma",)
    find(app, W.Button, description="remove selected").click()
    assert "sequential+fma" not in app.variants.options and app.comparison is None
    assert "choose at least one variant" in app.message.value


def test_builder_refuses_what_does_not_apply():
    app = fpx.explorer(op="sum", n=100)
    _builder_add(app, "pairwise", fma=True)
    assert "not sum" in app.message.value and "pairwise+fma" not in app.variants.options


def test_presets_answer_in_one_click():
    import ipywidgets as W

    app = fpx.explorer(n=1000)
    find(app, W.Button, description="FMA vs separate multiply-add").click()
    assert app.op.value == "matmul" and app.variants.value == ("sequential", "sequential+fma")
    assert app.view.value == "A vs B" and "largest difference" in app.view_out.value
    d = app.comparison.diff("sequential", "sequential+fma")
    assert 0 < d.summary["equal_share"] < 1 and d.summary["max_abs_ulp"] >= 1
    assert app.figure.axes[0].images  # the heatmap of ulp differences
    find(app, W.Button, description="accumulator precision").click()
    assert app.op.value == "matmul" and app.variants.value == (
        "sequential@float16",
        "sequential@float32",
        "sequential@float64",
    )
    find(app, W.Button, description="CPU library vs GPU orders").click()
    assert app.op.value == "sum" and set(app.variants.value) == {
        "numpy",
        "tree",
        "cub",
        "cupy-kernel",
        "exact",
    }
    assert "numpy" in app.backends.value and app.view.value == "errors"
    find(app, W.Button, description="sequential vs pairwise").click()
    assert app.variants.value == ("sequential", "pairwise") and app.message.value == ""


def test_sweep_view_draws_median_and_band_for_every_variant():
    import ipywidgets as W

    app = fpx.explorer(n=1000, variants=["sequential", "kahan", "exact"])
    find(app, W.ToggleButtons, description="view").value = "sweep"
    ax = app.figure.axes[0]
    labels = [ln.get_label() for ln in ax.get_lines()]
    for v in ("np.sum (numpy)", "sequential (emulated)", "kahan (emulated)", "exact (emulated)"):
        assert v in labels
    assert "no error (0), drawn at this floor" in labels  # exact is drawn, not lost
    assert len(ax.collections) == 4  # a 10-90% band per result
    assert "seeds=5), unit='ulps')" in app.snippet.value


def test_views_say_their_unit_and_the_sweep_is_in_ulps_first():
    """The sweep draws max |error| in ulps of the format by default (the y label says so)
    and absolute error on a switch; A vs B and bits say their unit above the figure."""
    import ipywidgets as W

    app = fpx.explorer(n=1000, variants=["sequential"], backends=("emulated",))
    find(app, W.ToggleButtons, description="view").value = "sweep"
    unit = find(app, W.ToggleButtons, description="error in")
    assert unit.value == "ulps" and unit.layout.display != "none"
    ax = app.figure.axes[0]
    assert ax.get_ylabel().startswith("max |error| in ulps of float32")
    sw = fpx.sweep(
        "sum",
        sizes=[10, 100, 1000],
        variants=["sequential"],
        seeds=5,
        backends=("emulated",),
        progress=False,
    )
    med = sw.table.groupby("n")["max_abs_ulp"].median().to_numpy(dtype=float)
    line = next(ln for ln in ax.get_lines() if ln.get_label() == "sequential (emulated)")
    assert np.allclose(line.get_ydata()[med > 0], med[med > 0])
    unit.value = "abs"
    ax = app.figure.axes[0]
    assert ax.get_ylabel().startswith("absolute error")
    line = next(ln for ln in ax.get_lines() if ln.get_label() == "sequential (emulated)")
    med = sw.table.groupby("n")["abs_error"].median().to_numpy(dtype=float)
    assert np.allclose(line.get_ydata()[med > 0], med[med > 0])
    assert app.snippet.value.endswith("seeds=5).plot()")
    app.view.value = "A vs B"
    assert unit.layout.display == "none"
    assert "unit: ulps of float32, from A to B" in app.view_out.value
    app.view.value = "bits"
    assert "unit: the bits of float32" in app.view_out.value
    assert "ulps of float32 from the exact value" in app.view_out.value


@pytest.mark.parametrize(
    "kwargs, error, match",
    [
        (dict(foo=1), TypeError, "unexpected keyword argument 'foo'"),
        (dict(inputs=(1, 2)), TypeError, "unexpected keyword argument .inputs."),
        (dict(seed=2**40), ValueError, "seed must be from 0 to 4294967295"),  # was clamped
        (dict(seed=-1), ValueError, "seed must be from 0"),  # was 0
        (dict(n=10**12), ValueError, "the largest size the app offers"),  # was 3e7
        (dict(n=-5), ValueError, "n must be >= 1"),  # was 10
        (dict(op="cumsum"), ValueError, "valid: sum, dot, matmul"),  # was a TraitError
        (dict(format="float8"), ValueError, "valid: float16, bfloat16"),
        (dict(backends=("tpu",)), ValueError, "unknown backend 'tpu'"),
    ],
)
def test_explorer_refuses_what_it_would_change(kwargs, error, match):
    with pytest.raises(error, match=match):
        fpx.explorer(**kwargs)


def test_explorer_takes_the_size_it_is_given():
    app = fpx.explorer(op="dot", n=2000)  # between the slider's steps: it was snapped to 3000
    assert app.n.value == 2000 and app.comparison.n == 2000


def test_explorer_takes_one_name_where_a_list_is_expected():
    app = fpx.explorer(variants="sequential", backends="emulated")
    assert app.variants.value == ("sequential",) and app.backends.value == ("emulated",)
    assert set(app.comparison.table["variant"]) == {"sequential"}  # not 's', 'e', 'q', ...


def test_an_invalid_op_from_code_is_a_message_and_the_app_recovers():
    app = fpx.explorer()
    app.op.value = None  # reachable from code: it raised out of the observer, then kept raising
    assert "fpx-error" in app.message.value
    app.format.value = "float64"  # still an error message, never an exception
    app.op.value = "dot"
    assert app.message.value == "" and app.comparison.op == "dot"


def _tf32(x):
    return np.asarray(fpx.as_format(fpx.as_format(x, "tf32"), "float32"))


def test_builder_offers_the_gpu_tensor_cores_with_an_arch():
    import ipywidgets as W

    app = fpx.explorer(op="matmul", n=30, seed=2, variants=["sequential"])
    build = find(app, W.Dropdown, description="build")
    assert ("GPU tensor cores", "tensor-core") in build.options  # float32: with +tf32
    build.value = "tensor-core"
    arch = find(app, W.Dropdown, description="arch")  # displayed in the builder's row
    assert not arch.disabled and app.b_fma.disabled and app.b_acc.disabled
    # every modelled GPU, NVIDIA and AMD (fpx.gpus())
    assert [v for _, v in arch.options] == list(dict.fromkeys(fpx.gpus()["arch"]))
    arch.value = "mi300"
    assert arch.tooltip.startswith("MI300 / MI300A / MI300X (CDNA3): model only (MI300MC.m")
    arch.value = "a100"
    assert app.b_rounding.value == "tf32"  # float32 data reach the tensor cores as tf32
    assert arch.tooltip == (
        "A100 (Ampere): hardware rows matched: every published A100 row (fp16 float32 and "
        "float16 out, bf16, tf32; 5,000 each, tests/data/tensor_cores/published) "
        "(docs/tensor_cores.md)"
    )
    find(app, W.Button, description="add").click()
    spec = "tensor-core(arch=a100)+tf32"
    assert app.variants.value == ("sequential", spec) and app.message.value == ""
    direct = fpx.compare("matmul", n=30, seed=2, variants=["sequential", spec])
    assert _same_table(app.comparison.table, direct.table)
    A, B = app.comparison.inputs["A"], app.comparison.inputs["B"]
    want = fpx.mma(_tf32(A), _tf32(B), 0.0, arch="a100", inputs="tf32")
    assert np.array_equal(app.comparison.results[(spec, "emulated")], want)
    # float16 data go in as they are, the result is float32
    app.format.value = "float16"
    build.value = "tensor-core"
    arch.value = "v100"
    app.b_rounding.value = ""
    find(app, W.Button, description="add").click()
    got = app.comparison.results[("tensor-core(arch=v100)", "emulated")]
    A, B = app.comparison.inputs["A"], app.comparison.inputs["B"]
    assert np.array_equal(got, fpx.mma(A, B, 0.0, arch="v100", inputs="float16"))
    # other orders: the arch control does not apply
    build.value = "tree"
    assert arch.disabled and not app.b_block.disabled


def test_preset_tensor_cores_vs_cpu():
    import ipywidgets as W

    app = fpx.explorer(op="sum", format="float16", n=1000, backends=("emulated",))
    find(app, W.Button, description="tensor cores vs CPU").click()
    assert (app.op.value, app.format.value) == ("matmul", "float32")
    specs = ("sequential", "tensor-core(arch=a100)+tf32", "tensor-core(arch=h100)+tf32")
    assert app.variants.value == specs and "numpy" in app.backends.value
    assert app.message.value == "" and app.view.value == "errors"
    t = app.comparison.table
    assert list(t["variant"]) == ["np.matmul", *specs]
    A, B = app.comparison.inputs["A"], app.comparison.inputs["B"]
    for arch in ("a100", "h100"):
        want = fpx.mma(_tf32(A), _tf32(B), 0.0, arch=arch, inputs="tf32")
        got = app.comparison.results[(f"tensor-core(arch={arch})+tf32", "emulated")]
        assert np.array_equal(fpx.to_bits(got), fpx.to_bits(want))
    assert np.array_equal(app.comparison.results[("np.matmul", "numpy")], A @ B)


def test_the_app_says_its_answer_and_its_units():
    """The one-line verdict is computed from the comparison; each table row says its unit,
    and a result in another format than the inputs is flagged (np.matmul of bfloat16 gives
    float32); A and B show only in the views that use them; a built spec is on top of the
    list and the FMA box is clear again after add."""
    import ipywidgets as W

    app = fpx.explorer(n=100_000)
    t = app.comparison.table.set_index("variant")
    k = int(t.loc["sequential", "ulp_error"])
    assert k < 0 and f"sequential is {-k} ulps below the exact sum" in app.verdict.value
    assert "np.sum is exact" in app.verdict.value and "(ulps of float32)" in app.verdict.value
    assert set(_html_table(app.table.value)["unit"]) == {"ulps of float32"}
    assert app.pick_a.layout.display == "none"  # errors view: no A and B
    app.view.value = "A vs B"
    assert app.pick_a.layout.display == app.pick_b.layout.display == "flex"
    app = fpx.explorer(op="matmul", format="bfloat16", n=20, variants=["sequential"])
    units = _html_table(app.table.value).set_index("variant")["unit"]
    assert units["np.matmul"] == "float32 result: ulps of float32"
    assert units["sequential"] == "ulps of bfloat16"
    k = int(app.comparison.table.set_index("variant").loc["np.matmul", "max_abs_ulp"])
    said = f"np.matmul is up to {k} ulp{'' if k == 1 else 's'} of float32 off"
    assert said in app.verdict.value and "ulps of bfloat16 off" in app.verdict.value
    app = fpx.explorer(op="dot", n=100, variants=["pairwise"])
    _builder_add(app, "sequential", fma=True)
    assert app.variants.options[0] == "sequential+fma" and not app.b_fma.value
    assert find(app, W.Checkbox, description="FMA").value is False


def test_the_app_shows_progress_per_result_and_cancel_keeps_the_last_view():
    """Work over a second says what it is computing ("computing pairwise (3 of 6)…"); cancel
    stops between results and leaves the last finished view, with a message (issue 22: a
    bfloat16 matmul froze the app for minutes with nothing on screen)."""
    app = fpx.explorer()  # sum, float32, n = 1e5: np.sum and five variants
    shown = []
    app.progress.observe(lambda change: shown.append(change["new"]), names="value")
    app.seed.value = 1
    assert any("computing np.sum (1 of 6)" in v for v in shown), shown
    assert any("computing kahan (6 of 6)" in v for v in shown), shown
    assert app.progress.value == "" and app.comparison.table["seed"].iloc[0] == 1
    before = app.comparison
    # cancel: clicked while the third result is computed
    original = app._runner._compute

    def click_cancel(change):
        if "(3 of" in change["new"]:
            app.cancel.click()

    def cancel_during(args, generation, stop, loop):
        app.progress.observe(click_cancel, names="value")
        try:
            original(args, generation, stop, loop)
        finally:
            app.progress.unobserve(click_cancel, names="value")

    app._runner._compute = cancel_during
    app.seed.value = 2
    assert "cancelled" in app.message.value and app.comparison is before
    assert app.progress.value == ""
    app._runner._compute = original
    app.seed.value = 3  # usable again
    assert app.message.value == "" and app.comparison.table["seed"].iloc[0] == 3


# ----------------------------------------------------------------------------- your data


def test_your_arrays_by_name_with_an_observed_result_and_its_explanation():
    """The data source "your arrays": the inputs chosen by variable name from a namespace
    (IPython's user namespace in a kernel), compared as compare(op, inputs=...) compares
    them, with n, distribution and seed hidden; an observed result (a GPU's) is a row next
    to the emulations, and fpx.explain's verdict on it is on screen; wrong dtypes and shapes
    say which input and which variable."""
    import ipywidgets as W

    rng = np.random.default_rng(7)
    xs = rng.random(2000, dtype=np.float32)
    gpu = np.float32(np.sum(xs.astype(np.float64)))  # a correctly rounded "GPU" sum
    ns = {
        "xs": xs,
        "gpu": gpu,
        "counts": np.arange(10),
        "u": rng.random(50, dtype=np.float32),
        "w": rng.random(60, dtype=np.float32),
        "M": rng.random((8, 12), dtype=np.float32),
        "_hidden": xs,
        "text": "not an array",
    }
    app = fpx.explorer(namespace=ns, n=1000, variants=["sequential", "pairwise"])
    find(app, W.Dropdown, description="data from").value = "arrays"
    for w in (app.n, app.distribution, app.seed):
        assert w.layout.display == "none"  # generated data's controls
    pick = find(app, W.Dropdown, description="input x")
    assert [v for _, v in pick.options] == ["", "xs", "gpu", "counts", "u", "w", "M"]
    assert "choose an array for x" in app.message.value
    pick.value = "xs"
    assert app.message.value == ""
    direct = fpx.compare(
        "sum", inputs={"x": xs}, variants=["sequential", "pairwise"], backends=app.backends.value
    )
    assert _same_table(app.comparison.table, direct.table)
    assert set(app.comparison.table["distribution"]) == {"user data"}
    assert "inputs = {'x': xs}" in app.snippet.value
    find(app, W.SelectMultiple, description="observed").value = ("gpu",)
    shown = _html_table(app.table.value).set_index("variant")
    assert shown.loc["gpu", "backend"] == "observed"
    assert shown.loc["gpu", "value"] == fpx.shortest_repr(gpu)
    assert shown.loc["gpu", "ulp_error"] == "0" and shown.loc["gpu", "unit"] == "ulps of float32"
    expl = fpx.explain("sum", {"x": xs}, {"gpu": gpu, "np.sum (numpy)": np.sum(xs)})
    said = [w.value for w in displayed(app) if isinstance(w, W.HTML) and "fpx-explain" in w.value]
    assert said == [app.explained.value] and expl.verdict.split(".")[0] in said[0]
    assert "fpx.explain('sum', inputs, {'gpu': gpu" in app.snippet.value
    # the format is your arrays': another one is refused and the control goes back
    app.format.value = "float64"
    assert "your arrays are float32, and the format is theirs" in app.message.value
    assert app.format.value == "float32" and app.state.format == "float32"
    # wrong dtype, wrong shapes: which input, which variable
    pick.value = "counts"
    assert "x = counts is int64" in app.message.value and app.comparison is None
    pick.value = "M"
    assert "x must be 1-D; x = M has shape (8, 12)" in app.message.value
    app.op.value = "dot"
    find(app, W.Dropdown, description="input a").value = "u"
    find(app, W.Dropdown, description="input b").value = "w"
    assert "dot takes a, b of one shape; a = u has shape (50,), b = w has shape (60,)" in (
        app.message.value
    )
    app.op.value = "matmul"
    find(app, W.Dropdown, description="input A").value = "M"
    find(app, W.Dropdown, description="input B").value = "M"
    assert "A's columns must be B's rows" in html.unescape(app.message.value)
    # back to generated data: its controls again, nothing of yours
    app.source.value = "generated"
    assert app.n.layout.display is None and app.message.value == ""
    assert app.comparison.table["distribution"].iloc[0] == "uniform"


def test_two_uploaded_results_lead_the_verdict_the_explanation_and_the_table():
    """Your two results, uploaded as .npy files (a CPU loop's and a GPU's, made here by plain
    NumPy: a sequential float32 sum and the correctly rounded one), are what the app
    explains: fpx.explain of the two alone (NumPy's row is context, not a result it judges),
    a headline naming both that agrees with it, and their rows first in the table."""
    import datetime
    import io

    import ipywidgets as W

    xs = np.random.default_rng(1).random(2000, dtype=np.float32)
    cpu = np.add.accumulate(xs)[-1]  # one float32 addition after another
    gpu = np.float32(np.sum(xs.astype(np.float64)))  # float64 sum of float32: exact, rounded once
    app = fpx.explorer(namespace={"xs": xs}, variants=["pairwise"])
    find(app, W.Dropdown, description="data from").value = "arrays"
    find(app, W.Dropdown, description="input x").value = "xs"
    files = []
    for name, value in (("cpu.npy", cpu), ("gpu.npy", gpu)):
        buf = io.BytesIO()
        np.save(buf, value)
        data = buf.getvalue()
        files.append({"name": name, "type": "", "size": len(data), "content": memoryview(data),
                      "last_modified": datetime.datetime.now()})  # fmt: skip
    find(app, W.FileUpload).value = tuple(files)
    find(app, W.SelectMultiple, description="observed").value = ("cpu.npy", "gpu.npy")
    assert app.message.value == ""
    assert set(app.explanation.results) == {"cpu.npy", "gpu.npy"}
    direct = fpx.explain("sum", {"x": xs}, {"cpu.npy": cpu, "gpu.npy": gpu})
    assert direct.verdict in html.unescape(app.explained.value)
    assert "gpu.npy is closer" in direct.verdict
    head = html.unescape(app.verdict.value)
    exact = sum(Fraction(float(v)) for v in xs)  # the oracle: exact rationals
    assert Fraction(float(gpu)) == Fraction(float(np.float32(float(exact))))
    k = abs(int(fpx.ulp_distance(cpu, gpu)))  # gpu is the exact sum rounded: ulps from it
    side = "below" if Fraction(float(cpu)) < exact else "above"
    want = f"cpu.npy is {k} ulp{'s' if k > 1 else ''} {side} the exact sum; gpu.npy is exact"
    assert want in head and "np.sum" not in head and "pairwise" not in head
    shown = _html_table(app.table.value)
    assert list(shown["variant"][:2]) == ["cpu.npy", "gpu.npy"]
    assert list(shown["backend"][:2]) == ["observed", "observed"]


def test_an_uploaded_file_is_your_data():
    import datetime
    import io

    import ipywidgets as W

    rng = np.random.default_rng(3)
    A, B = rng.random((6, 9), dtype=np.float32), rng.random((9, 4), dtype=np.float32)
    buf = io.BytesIO()
    np.savez(buf, A=A, B=B)
    app = fpx.explorer(namespace={}, op="matmul", n=10, variants=["sequential"])
    app.source.value = "arrays"
    assert "no arrays yet" in app.data_note.value
    upload = find(app, W.FileUpload)
    upload.value = (
        {
            "name": "m.npz",
            "type": "",
            "size": len(buf.getvalue()),
            "content": memoryview(buf.getvalue()),
            "last_modified": datetime.datetime.now(),
        },
    )
    find(app, W.Dropdown, description="input A").value = "m.npz[A]"
    find(app, W.Dropdown, description="input B").value = "m.npz[B]"
    assert app.message.value == "" and app.comparison.n == 9
    direct = fpx.compare(
        "matmul", inputs=(A, B), variants=["sequential"], backends=app.backends.value
    )
    assert _same_table(app.comparison.table, direct.table)
    assert "inputs = {'A': np.load('m.npz')['A'], 'B': np.load('m.npz')['B']}" in app.snippet.value
    from fpexplore.app.yourdata import read_upload

    csv = read_upload("v.csv", b"x\n1.5\n2.25\n")
    assert csv["v.csv"][0].tolist() == [1.5, 2.25]


def test_the_explorer_checks_its_namespace():
    with pytest.raises(TypeError, match="namespace must be a dict"):
        fpx.explorer(namespace=[1, 2])


def test_observed_results_are_in_the_csv_and_in_a_and_b():
    """Your own results (observed, shown as rows next to the emulations) are rows of the CSV
    export too, and A and B offer them: A vs B of an observed result and an emulated one is
    fpx.diff of the two."""
    import base64
    import io

    import ipywidgets as W
    import pandas as pd

    rng = np.random.default_rng(11)
    xs = rng.random(3000, dtype=np.float32)
    gpu = np.float32(np.sum(xs.astype(np.float64)))
    app = fpx.explorer(namespace={"xs": xs, "gpu": gpu}, variants=["sequential", "pairwise"])
    find(app, W.Dropdown, description="data from").value = "arrays"
    find(app, W.Dropdown, description="input x").value = "xs"
    find(app, W.SelectMultiple, description="observed").value = ("gpu",)
    assert app.message.value == ""
    find(app, W.Button, description="Export CSV").click()
    link = app.export_out.value
    csv = base64.b64decode(link.split("base64,")[1].split('"')[0]).decode()
    table = pd.read_csv(io.StringIO(csv))
    assert len(table) == len(app.comparison.table) + 1
    row = table.iloc[-1]
    assert (row["variant"], row["backend"], row["format"]) == ("gpu", "observed", "float32")
    assert row["ulp_error"] == 0 and row["value_hex"] == fpx.hex_string(gpu)
    assert list(table.columns) == list(app.comparison.table.columns)
    # A and B offer the observed result, by its key
    find(app, W.ToggleButtons, description="view").value = "A vs B"
    a, b = find(app, W.Dropdown, description="A"), find(app, W.Dropdown, description="B")
    assert ("gpu (observed)", ("gpu", "observed")) in a.options
    a.value = ("gpu", "observed")
    b.value = ("sequential", "emulated")
    seq = app.comparison.results[("sequential", "emulated")]
    want = fpx.diff(gpu, seq)
    shown = _html_table(app.view_out.value)
    assert int(shown.loc[0, "ulps"]) == int(want.table.loc[0, "ulps"]) != 0
    assert "fpx.diff(gpu, cmp.results[('sequential', 'emulated')]).plot()" in app.snippet.value
    app.view.value = "bits"  # the bits of the observed result next to the exact one
    assert "A is 0 ulps of float32 from the exact value" in app.view_out.value
    # without observed results, the CSV is the comparison's table
    find(app, W.SelectMultiple, description="observed").value = ()
    assert len(app.export("CSV").decode().splitlines()) == 1 + len(app.comparison.table)


def test_a_nan_observed_result_is_shown_as_nan_and_called_a_likely_bug():
    """A GPU result that went NaN (what people bring): the table shows its row (ulp error
    "nan", relative error "inf", never the sentinel -2^63 or 0), the figure is drawn, and the
    explanation says no rounding gives NaN here: the float32 sum of 2000 values in [0, 1)
    cannot reach float32's largest value in any order."""
    import ipywidgets as W

    xs = np.random.default_rng(8).random(2000, dtype=np.float32)
    ns = {"xs": xs, "gpu": np.float32("nan")}
    app = fpx.explorer(namespace=ns, n=1000, variants=["sequential", "pairwise"])
    find(app, W.Dropdown, description="data from").value = "arrays"
    find(app, W.Dropdown, description="input x").value = "xs"
    find(app, W.SelectMultiple, description="observed").value = ("gpu",)
    assert app.message.value == ""
    shown = _html_table(app.table.value).set_index("variant")
    assert shown.loc["gpu", "value"] == "nan"
    assert (shown.loc["gpu", "ulp_error"], shown.loc["gpu", "rel_error"]) == ("nan", "inf")
    assert app.figure.axes and app.figure.axes[0].patches  # the error bars are drawn
    said = [w.value for w in displayed(app) if isinstance(w, W.HTML) and "fpx-explain" in w.value]
    assert len(said) == 1 and "likely bug" in said[0] and "overflow" not in said[0].lower()
    e = fpx.explain("sum", xs, {"gpu": np.float32("nan"), "numpy": np.sum(xs)})
    assert len(e.causes) == 0 and "Not explained by rounding: a likely bug" in e.verdict


def test_adding_a_control_is_one_row(monkeypatch):
    """A row added to the control table (fpexplore.app.state.CONTROLS) is a keyword of
    fpx.explorer(), checked there; a widget in the controls' column that shows its value;
    a value of the state that a change sets (redrawing, not recomputing: the row says so)."""
    import ipywidgets as W

    from fpexplore import checks
    from fpexplore.app import state as S

    row = S.Control(
        "digits",
        3,
        "BoundedIntText",
        "digits shown",
        lambda v: checks.integer("digits", v, 1),
        recompute=False,
        widget_args=(("min", 1), ("max", 17)),
    )
    monkeypatch.setitem(S.CONTROLS, "digits", row)
    app = fpx.explorer(n=100, variants=["sequential"], backends=("emulated",), digits=5)
    shown = find(app, W.BoundedIntText, description="digits shown")
    assert shown.value == 5 and app.state.digits == 5 and app.digits is shown
    side = next(w for w in displayed(app) if "fpx-side" in getattr(w, "_dom_classes", ()))
    assert shown in side.children
    before = app.comparison
    shown.value = 7
    assert app.state.digits == 7 and app.comparison is before  # redrawn, not recomputed
    assert "digits" not in app.arguments()  # compare() does not take it: the row says so
    with pytest.raises(ValueError, match="digits must be >= 1"):
        fpx.explorer(n=100, backends=("emulated",), digits=0)


def test_op_parameters_are_checked_without_running_compare(monkeypatch):
    """explorer(block=...) checked its op parameters by running a whole compare() on 10
    values; now the variants' specs check them (nothing computed), with the same errors."""
    import fpexplore.app.widget as widget

    def refuse(*args, **kwargs):
        raise AssertionError("compare() ran to check the op parameters")

    monkeypatch.setattr(widget, "compare", refuse, raising=False)
    app = fpx.explorer(n=100, variants=["sequential", "blocked"], backends=("emulated",), block=64)
    assert app.op_params == {"block": 64} and app.comparison.params["block"] == 64
    with pytest.raises(ValueError, match="block must be from 1 to 1073741824, got 0"):
        fpx.explorer(n=100, variants=["blocked"], block=0)
    with pytest.raises(TypeError, match="unexpected keyword argument 'blok'"):
        fpx.explorer(n=100, blok=64)
    with pytest.raises(TypeError, match="unexpected keyword argument 'block'"):
        fpx.explorer(op="mean", n=100, block=64)  # no mean variant takes one
    with pytest.raises(ValueError, match="unknown accumulator 'float8'"):
        fpx.explorer(n=100, accumulate="float8")
    assert fpx.explorer(op="variance", n=100, ddof=1).op_params == {"ddof": 1}  # the op's own
    app = fpx.explorer(n=100, variants=["tree"], block=64)
    app.op.value = "dot"  # another op: its parameters go, and .op_params says so (pass 14)
    assert app.state.op_params == () and app.op_params == {}


def test_pass_19_presets_links_and_your_arrays():
    """Pass 19: with fma=True typed, the FMA preset's plain 'sequential' was FMA too and the
    view called the two bitwise identical (now the view says why it cannot show them); a
    NumPy scalar op parameter (block=np.int64(64)) made "Link to this view" fail with a
    bare TypeError outside the app; a link opened with another op kept the link's n and
    format (a matmul of n=100000, FP8 data for matmul); a bool array was left out of your
    arrays ("choose an array for x"); a typed op parameter changed a chosen variant under its
    plain name without a word (the banner says what each computes as)."""
    import ipywidgets as W

    from fpexplore.app.links import link_of

    app = fpx.explorer(op="dot", n=1000, seed=4, fma=True)
    app.apply_preset("FMA vs separate multiply-add")
    said = html.unescape(app.message.value)
    assert app.comparison is None and "fma=True makes 'sequential' and 'sequential+fma'" in said
    app = fpx.explorer(op="dot", n=1000, seed=4, fma=True, variants=["sequential"])
    inputs = app.comparison.inputs
    want = fpx.dot(inputs["a"], inputs["b"], "sequential", fma=True)
    assert app.comparison.results[("sequential", "emulated")] == want  # (FMA: the banner says)
    said = html.unescape(app.banner.value)
    assert "sequential computes as sequential+fma: fma=True applies to every variant" in said
    app = fpx.explorer(op="sum", n=100, block=np.int64(64), variants=["tree"])
    assert app.op_params == {"block": 64} and type(app.op_params["block"]) is int
    assert "tree computes as tree(block=64)" in html.unescape(app.banner.value)
    find(app, W.Button, description="Link to this view").click()
    code = html.unescape(app.export_out.value).split("<code>")[1].split("</code>")[0]
    assert fpx.explorer(link=code).comparison.params["block"] == 64
    big = link_of(fpx.explorer(op="sum", n=100000, variants=["pairwise"]).state)
    fp8 = link_of(fpx.explorer(op="sum", n=1000, format="float8_e4m3").state)
    for link, fmt in ((big, "float32"), (fp8, "float8_e4m3")):  # (cdist takes FP8: issue 38)
        app = fpx.explorer(link=link, op="cdist")
        assert app.comparison is not None and app.message.value == ""
        assert (app.state.n, app.state.format) == (100, fmt)
    for op in ("dot", "matmul"):  # they take FP8 data: the link's format stays
        app = fpx.explorer(link=fp8, op=op)
        assert app.state.format == "float8_e4m3" and app.comparison is not None
    app = fpx.explorer(source="arrays", namespace={"x": np.ones(4, bool)})
    assert "x = x is bool; sum's formats are" in html.unescape(app.message.value)


def test_pass_20_a_typed_accumulator_makes_an_order_fit_fp8_data():
    """Pass 20: compare runs kahan and tree on float8_e5m2 data with accumulate="float16";
    the explorer refused them (and add_variant), asking for the accumulate= already given."""
    kw = {"op": "sum", "format": "float8_e5m2", "n": 100, "accumulate": "float16"}
    app = fpx.explorer(**kw, variants=["kahan", "tree"])
    want = fpx.compare(**kw, variants=["kahan", "tree"])
    assert app.message.value == "" and _same_table(app.comparison.table, want.table)
    app = fpx.explorer(**kw)
    app.add_variant("kahan")
    assert "kahan" in [str(v) for v in app.state.variants] and app.message.value == ""


def test_a_link_to_this_view_opens_the_same_view():
    """ "Link to this view" gives a code; fpx.explorer(link=code) opens the same op, format,
    n, variants, view and op parameters (the comparison is the same, bit for bit); a damaged
    code is a clear error naming the link."""
    import ipywidgets as W

    app = fpx.explorer(
        op="dot", format="float64", n=777, variants=["sequential", "blocked"], block=64
    )
    app.view.value = app.view.options[-1]
    find(app, W.Button, description="Link to this view").click()
    said = html.unescape(app.export_out.value)
    code = said.split("<code>")[1].split("</code>")[0]
    assert f'fpx.explorer(link="{code}")' in said and f"?link={code}" in said
    again = fpx.explorer(link=code)
    for name in ("op", "format", "n", "view", "variants"):
        assert getattr(again.state, name) == getattr(app.state, name), name
    assert again.op_params == {"block": 64}
    assert _same_table(again.comparison.table, app.comparison.table)
    assert fpx.explorer(link=code, n=500).state.n == 500  # a keyword beside it wins
    with pytest.raises(ValueError, match="link 'abc' is not a view of this app"):
        fpx.explorer(link="abc")
    with pytest.raises(TypeError, match="link must be the text"):
        fpx.explorer(link=5)


def test_large_type_scales_the_figure_too():
    """ "large type" (teaching on a projector) draws the figure again with larger fonts, as
    well as the table and verdict (a CSS class); off again, the sizes come back."""
    import ipywidgets as W

    app = fpx.explorer(n=1000, variants=["sequential", "pairwise"])

    def sizes():
        ax = app.figure.axes[0]
        return [t.get_fontsize() for t in (*ax.get_xticklabels(), ax.xaxis.label)]

    before = sizes()
    find(app, W.ToggleButton, description="large type").value = True
    assert "fpx-large" in app._dom_classes
    bigger = sizes()
    assert min(bigger) > max(before), (before, bigger)
    find(app, W.ToggleButton, description="large type").value = False
    assert sizes() == before and "fpx-large" not in app._dom_classes


def test_threads_and_crafted_links():
    """threads=3 (a count the list does not offer) is shown, not a traitlets error; a link
    code that is too deep, too large or carries backends (a link never does) is refused."""
    import base64
    import json
    import zlib

    app = fpx.explorer(threads=3, n=1000, variants=["sequential"])
    assert app.threads.value == 3 and app.state.threads == 3

    def code(text: str) -> str:
        return base64.urlsafe_b64encode(zlib.compress(text.encode())).decode()

    deep = '{"variants":' + "[" * 100_000 + "]" * 100_000 + "}"
    for text in (deep, json.dumps({"backends": ["cupy"]}), json.dumps({"zzz": "a" * 100_000})):
        with pytest.raises(ValueError, match="is not a view of this app"):
            fpx.explorer(link=code(text))


def _shown_scales(view_html: str) -> tuple[list, float | None]:
    """The block scales (and NVFP4's tensor scale) the quantize view writes under its figure."""
    said = html.unescape(view_html).split('class="fpx-scales">')[1].split("</p>")[0]
    scales, _, tensor = said.split(": ", 1)[1].partition("; tensor scale ")
    return [float(t) for t in scales.split(", ")], float(tensor) if tensor else None


def test_the_quantize_view_shows_blocks_scales_and_errors_as_fpx_quantize():
    """The quantize view (issue 38 item 5): the comparison's first input vector in the
    chosen block-scaled format, its first 128 values; the dequantized values, errors in ulps
    of their blocks, block scales and largest errors shown equal fpx.quantize's of the whole
    vector, recomputed here; a scheme is a redraw, never a compare(); an op without a vector
    (linspace) and data a scheme refuses (nvfp4 of float64) say so in the view."""
    import ipywidgets as W

    from fpexplore.quantize import SCHEMES

    app = fpx.explorer(n=1000, variants=["sequential"], backends=("emulated",))
    scheme = find(app, W.Dropdown, description="scheme")
    assert scheme.layout.display == "none"  # only where it matters
    before = app.comparison
    find(app, W.ToggleButtons, description="view").value = "quantize"
    assert scheme.layout.display != "none" and app.message.value == ""
    x = before.inputs["x"]
    for name, s in SCHEMES.items():
        scheme.value = name
        assert app.comparison is before and app.message.value == ""  # redrawn, not recomputed
        q = fpx.quantize(x, name)  # the whole vector, independently
        k = 128 // s.block
        top, bottom = app.figure.axes
        values, deq = (ln.get_ydata() for ln in top.get_lines())
        assert np.array_equal(values, x[:128].astype(np.float64))
        assert np.array_equal(deq, q.dequantize()[:128]), name
        err = q.error_ulps()[:128]
        drawn = [seg[1][1] for seg in bottom.collections[0].get_segments()]
        assert np.array_equal(drawn, np.where(np.isfinite(err), err, 0.0)), name
        assert top.get_title().startswith(f"{name}: first {k} blocks of {s.block} of 1,000 ")
        assert [t.get_text() for t in top.texts] == [
            f"2^{int(np.log2(v))}" if s.scale == "float8_e8m0" else f"{v:.4g}" for v in q.scales[:k]
        ]
        scales, tensor = _shown_scales(app.view_out.value)
        assert scales == q.scales[:k].tolist(), name
        assert tensor == (q.tensor_scale if s.tensor_scale else None)
        row = html.unescape(app.view_out.value).split(f"<td>{name}</td>")[1].split("</tr>")[0]
        assert f"<td>{np.nanmax(np.abs(err)):.3g}</td>" in row, (name, row)
        assert f"fpx.quantize(cmp.inputs['x'].ravel(), {name!r})" in app.snippet.value
    ns = {}
    exec(app.snippet.value, ns)  # the code shown draws the same view
    assert ns["q"].scales[:8].tolist() == scales and ns["q"].tensor_scale == tensor
    app.format.value = "float64"  # nvfp4's recipe computes in float32: refused, said
    assert "float32 or narrower" in app.view_out.value and app.message.value == ""
    scheme.value = "mxfp8_e4m3"
    assert (
        _shown_scales(app.view_out.value)[0]
        == fpx.quantize(app.comparison.inputs["x"], "mxfp8_e4m3").scales[:4].tolist()
    )
    assert "refused: " in app.view_out.value  # nvfp4's row in the table
    app.op.value = "matmul"
    assert "values of A (flattened)" in app.figure.axes[0].get_title()
    app.op.value = "linspace"
    said = html.unescape(app.view_out.value)
    assert "linspace's inputs (start, stop, num) hold no vector" in said
    assert app.message.value == "" and "hold no vector" in app.snippet.value
    assert fpx.explorer(n=100, backends=("emulated",), scheme="nvfp4").state.scheme == "nvfp4"
    with pytest.raises(ValueError, match="unknown scheme 'fp3'"):
        fpx.explorer(n=100, backends=("emulated",), scheme="fp3")


def test_the_quantize_view_works_for_every_op_format_and_scheme():
    """Every op x format (each scheme and distribution in turn) draws the quantize view or
    says why not in it: linspace has no input vector; nvfp4 computes in float32 (float64
    data is refused, by quantize's own message). Nothing escapes."""
    from types import SimpleNamespace

    from matplotlib.figure import Figure

    from fpexplore.app import render
    from fpexplore.data import DISTRIBUTIONS
    from fpexplore.ops.opspec import Params
    from fpexplore.ops.registry import get, ops
    from fpexplore.quantize import SCHEMES

    fig, said = Figure(), {}
    cases = [(op, fmt) for op in ops() for fmt in fpx.FORMATS]
    for i, (op, fmt) in enumerate(cases):
        scheme, dist = list(SCHEMES)[i % 6], list(DISTRIBUTIONS)[i % 4]
        cmp = SimpleNamespace(op=op, inputs=get(op).inputs(200, fmt, dist, 0, Params()))
        view = SimpleNamespace(view="quantize", scheme=scheme)
        out = html.unescape(render.draw(fig, cmp, None, view))
        if op == "linspace":
            assert "hold no vector to quantize" in out and len(fig.axes) == 1
        elif scheme == "nvfp4" and fmt == "float64":
            assert "must be float32 or narrower" in out
        else:
            assert "fpx-scales" in out and len(fig.axes) == 2, (op, fmt, scheme, out)
            said[op, fmt] = scheme
    assert len(said) >= len(cases) - 10 and len(set(said.values())) == 6, said


def test_a_csv_keeps_every_number_and_skips_only_a_header():
    """A first row "Infinity" or "-Infinity,1" is numbers (adversarial pass 12: it was taken
    for a header and lost); "a" is a header; "0x1p-3", which np.loadtxt cannot read, is said."""
    from fpexplore.app.yourdata import read_upload

    def read(b):
        return read_upload("f.csv", b)["f.csv"][0].tolist()

    assert read(b"Infinity\n1\n2\n") == [np.inf, 1.0, 2.0]
    assert read(b"-Infinity,1\n2,3") == [[-np.inf, 1.0], [2.0, 3.0]]
    assert read(b"a\n1\n2") == [1.0, 2.0] and read(b"x,y\n1,2\n3,4") == [[1.0, 2.0], [3.0, 4.0]]
    with pytest.raises(ValueError, match="cannot read f.csv: could not convert string '0x1p-3'"):
        read(b"0x1p-3\n1")


def test_pass_20_links_keep_picks_and_a_choice_equal_to_defaults():
    """Pass 20: "Link to this view" lost results A and B; a selection the user chose that
    equals FP8's defaults was replaced by float32's five after float32 -> FP8 -> float32 (it
    was taken for FP8's defaults, untouched); a link's input_rounding='tf32' opened with
    format="float16" (where tf32 holds every value) was refused: it is not applied, the
    banner says so, and the view shows (typed beside format="float16" it is still refused)."""
    from fpexplore.app.links import link_of

    app = fpx.explorer(
        op="sum", n=1000, variants=["sequential", "pairwise", "kahan"], view="A vs B"
    )
    app.pick_a.value, app.pick_b.value = ("kahan", "emulated"), ("pairwise", "emulated")
    again = fpx.explorer(link=link_of(app.state))
    assert (again.pick_a.value, again.pick_b.value) == (
        ("kahan", "emulated"),
        ("pairwise", "emulated"),
    )
    assert (again.state.pick_a, again.state.pick_b) == (app.state.pick_a, app.state.pick_b)
    fp8 = [str(v) for v in fpx.explorer(op="sum", n=100, format="float8_e4m3").state.variants]
    app = fpx.explorer(op="sum", n=100)
    five = [str(v) for v in app.state.variants]
    assert len(five) == 5 and fp8 == five[:2]
    app.format.value = "float8_e4m3"
    app.format.value = "float32"  # the defaults, untouched: float32's own again
    assert [str(v) for v in app.state.variants] == five
    app.variants.value = tuple(fp8)  # the user's choice (equal to FP8's defaults): kept
    app.format.value = "float8_e4m3"
    app.format.value = "float32"
    assert [str(v) for v in app.state.variants] == fp8
    code = link_of(fpx.explorer(op="dot", n=30, input_rounding="tf32").state)
    app = fpx.explorer(link=code, format="float16")
    assert app.comparison is not None and app.message.value == ""
    assert "input_rounding" not in app.comparison.params and app.op_params == {
        "input_rounding": "tf32"
    }
    said = html.unescape(app.banner.value)
    assert "tf32 holds every float16 value; input_rounding= is not applied" in said
    app.format.value = "float32"  # applied again
    assert app.comparison.params["input_rounding"] == "tf32"
    with pytest.raises(ValueError, match="input_rounding='tf32' for sequential on float16 data"):
        fpx.explorer(op="dot", n=30, format="float16", input_rounding="tf32")


def test_pass_21_the_sweep_view_at_the_last_seeds():
    """Pass 21: the sweep view ran seeds=5 from the view's seed, and at seed=MAX_SEED (which
    the seed control takes) it failed on 'seeds=5', which nobody gave: it runs the last five
    seeds, the view's among them, as fpx.sweep does with seed=MAX_SEED - 4."""
    from fpexplore import checks

    app = fpx.explorer(n=100, seed=checks.MAX_SEED, variants=["sequential"])
    app.view.value = "sweep"
    assert app.message.value == "" and app.state.seed == checks.MAX_SEED
    said = app.snippet.value
    assert f"seed={checks.MAX_SEED - 4}," in said and said.endswith("seeds=5), unit='ulps')")
    labels = [ln.get_label() for ln in app.figure.axes[0].get_lines()]
    assert "sequential (emulated)" in labels


def test_pass_21_a_preset_that_moves_the_format_says_so():
    """Pass 21: a preset that needs matmul moved FP8 data to float32 without a word (matmul
    took no FP8 data then), as "tensor cores vs CPU" moved float16 to float32: the banner
    says so; a preset that keeps the format adds nothing. Matmul takes FP8 data now (it
    leaves out +fma, saying why), not a format of fpx.format whose products float64 does
    not hold."""
    from fpexplore.userformat import _forget

    app = fpx.explorer(op="sum", n=100, format="float8_e4m3")
    app.apply_preset("FMA vs separate multiply-add")
    said = html.unescape(app.banner.value)
    assert (app.state.op, app.state.format) == ("matmul", "float8_e4m3")
    assert "leaves out sequential+fma on float8_e4m3 data: fma=True with 'float8_e4m3'" in said
    fpx.format(27, 15, name="t_p21_wide")
    try:
        app = fpx.explorer(op="sum", n=100, format="t_p21_wide")
        app.apply_preset("FMA vs separate multiply-add")
        said = html.unescape(app.banner.value)
        assert (app.state.op, app.state.format) == ("matmul", "float32")
        assert "moves the data from t_p21_wide to float32: matmul does not take t_p21" in said
    finally:
        _forget("t_p21_wide")
    app = fpx.explorer(op="dot", n=100, format="float16")
    app.apply_preset("tensor cores vs CPU")
    said = html.unescape(app.banner.value)
    assert "moves the data from float16 to float32: it needs float32 data" in said
    app = fpx.explorer(op="sum", n=100)
    app.apply_preset("sequential vs pairwise")
    assert app.banner.value == ""


def test_pass_22_the_app_without_emulation_names_and_links():
    """Pass 22: with the emulated backend off, a preset showed np.sum against itself ('100%
    equal'): it turns the backend on, and the banner says when the variants chosen are not
    run; a name no variable has ('x-data', 'class') was written as code ('x-data' read
    x - data): the snippet reads namespace['x-data'] and runs; a hand-edited link's
    parameter no variant takes (bolck=64) was kept without a word: refused, naming it; the
    seed box clamped -5 to 0 without a word: a message naming seed, the state unchanged."""
    import base64
    import json
    import zlib

    from fpexplore.app.links import link_of

    app = fpx.explorer(op="sum", n=100, backends=["numpy"], variants=["kahan"])
    said = html.unescape(app.banner.value)
    assert list(app.comparison.results) == [("np.sum", "numpy")]
    assert "the emulated backend is off: the variants chosen are not run" in said
    app.apply_preset("sequential vs pairwise")
    assert "emulated" in app.state.backends
    assert (app.state.pick_a, app.state.pick_b) == (
        ("sequential", "emulated"),
        ("pairwise", "emulated"),
    )
    x = np.random.default_rng(0).random(50).astype(np.float32)
    ns = {"x-data": x, "my gpu": np.float32(x.sum()), "x": x + 1, "data": x}
    app = fpx.explorer(namespace=ns, source="arrays")
    app.input_picks["x"].value, app.observed.value = "x-data", ("my gpu",)
    code = app.snippet.value
    assert "{'x': namespace['x-data']}" in code and "namespace['my gpu']" in code
    scope = {"namespace": ns}
    exec(code, scope)  # the plain script: the same comparison, from the same array
    assert _same_table(scope["cmp"].table, app.comparison.table)
    doc = json.loads(
        zlib.decompress(
            base64.urlsafe_b64decode(link_of(fpx.explorer(op="sum", n=10).state) + "===")
        )
    )
    doc["bolck"] = 64
    bad = base64.urlsafe_b64encode(zlib.compress(json.dumps(doc).encode())).decode()
    with pytest.raises(ValueError, match="holds bolck=64, which no variant of sum takes"):
        fpx.explorer(link=bad)
    app = fpx.explorer(n=100, variants=["sequential"], seed=3)
    app.seed.value = -5
    assert app.state.seed == 3 == app.seed.value and "seed must be from 0 to" in app.message.value


def test_pass_23_a_link_to_an_empty_selection_opens_it_again():
    """Pass 23: a link made after the user cleared every variant held "variants": [] and
    opened with the format's five defaults (and a table): it opens the same empty,
    refused selection; a link's variants that another format refuses still give that
    format's defaults."""
    from fpexplore.app.links import link_of

    app = fpx.explorer(op="sum", n=300)
    app.variants.value = ()
    assert app.state.variants == () and app.state.chosen
    again = fpx.explorer(link=link_of(app.state))
    assert again.state.variants == () and again.state.chosen, again.state.variants
    assert "choose at least one variant" in again.message.value
    assert again.comparison is None
    code = link_of(fpx.explorer(op="sum", n=300, variants=["kahan"]).state)
    fp8 = fpx.explorer(link=code, format="float8_e4m3")  # kahan does not add in FP8
    assert [str(v) for v in fp8.state.variants] == [
        str(v) for v in fpx.explorer(op="sum", n=300, format="float8_e4m3").state.variants
    ]
    assert not fp8.state.chosen


def test_pass_24_bits_of_a_narrower_observed_result_and_b_equal_to_a():
    """Pass 24: the bits view of an observed float16 sum of float32 data said "the
    comparison holds no float16 reference" (the table measured it), and after the next
    recompute the app stayed blank in every view; its snippet's cmp.reference_of failed
    the same way: the reference is the one the table measured against, explain's exact sum
    rounded once to float16 (Fraction, tests/explain_cases.round_fraction). B picked equal
    to A was swapped for another result at the next seed, without a word: it stays."""
    from fractions import Fraction

    import explain_cases as ec

    xs = np.random.default_rng(3).standard_normal(500).astype(np.float32)
    exact16 = ec.round_fraction(sum(map(Fraction, xs.tolist())), "float16")
    ns = dict(xs=xs, xs2=xs[::-1].copy(), gpu16=np.float16(exact16))
    app = fpx.explorer(namespace=ns, source="arrays")
    app.input_picks["x"].value = "xs"
    app.observed.value = ("gpu16",)
    app.view.value = "bits"
    app.pick_a.value = ("gpu16", "observed")
    assert app.message.value == "" and app.comparison is not None
    said = app.snippet.value  # it runs, and its reference is the exact sum rounded once
    assert "fpx.diff(fpx.explain(cmp.op, cmp.inputs, {'A': gpu16, 'B': " in said, said
    assert ".reference['A'], gpu16).plot('bits')  # exact and A" in said, said
    exec(said, {"xs": xs, "gpu16": ns["gpu16"]})
    cmp = app.comparison
    got = fpx.explain(cmp.op, cmp.inputs, {"A": ns["gpu16"], "B": ns["gpu16"]}).reference["A"]
    assert got.dtype == np.float16 and float(got) == exact16
    assert app._out.observed.refs["gpu16"] == got
    app.input_picks["x"].value = "xs2"
    assert app.message.value == "" and app.comparison is not None
    app.view.value = "errors"
    assert app.message.value == "" and app.comparison is not None
    app = fpx.explorer(n=1000, view="A vs B")
    app.pick_a.value = app.pick_b.value = ("kahan", "emulated")
    app.seed.value = 3
    assert app.pick_b.value == ("kahan", "emulated") == app.state.pick_b
    assert "cmp.diff('kahan (emulated)', 'kahan (emulated)')" in app.snippet.value


def test_pass_24_an_infinite_observed_result_is_said_to_be_infinite():
    """Pass 24: an observed float32 inf beside a sum whose exact value is 27.497 read
    "ginf is 1,034,159,410 ulps above the exact sum" (0x7f800000 - 0x41dbface): true of
    the bits, silent about the inf; a NaN there has its own words, and now so has an inf."""
    xs = np.random.default_rng(3).standard_normal(500).astype(np.float32)
    ns = dict(xs=xs, ginf=np.float32(np.inf), gneg=np.float32(-np.inf))
    app = fpx.explorer(namespace=ns, source="arrays")
    app.input_picks["x"].value = "xs"
    app.observed.value = ("ginf", "gneg")
    said = html.unescape(app.verdict.value)
    assert "ginf is inf where the exact sum is not" in said, said
    assert "gneg is -inf where the exact sum is not" in said and "ulps above" not in said


def test_an_observed_distance_past_the_ulp_cap_is_shown_as_a_bound():
    """Pass 26: a float64 result 1.0 beside float32 data whose exact sum is negative is
    9,230,940,870,982,631,424 float64 ulps away (bit patterns of both magnitudes added: the
    oracle below); ulp_distance saturates at 2**63 - 1, and the app showed that cap as the
    count. It shows "≥9223372036854775807"."""
    import struct

    f = np.random.default_rng(0).normal(size=500).astype(np.float32)
    exact = float(sum(Fraction(float(v)) for v in f))  # correctly rounded: 2 of 500 digits
    assert exact < 0

    def key(x):
        return struct.unpack("<q", struct.pack("<d", abs(x)))[0]

    assert key(1.0) + key(exact) > 2**63 - 1
    app = fpx.explorer(namespace={"f": f, "rr": np.float64(1.0)}, source="arrays")
    app.input_picks["x"].value = "f"
    app.observed.value = ("rr",)
    (row,) = app._out.observed.rows
    assert row["ulp_error"] == row["max_abs_ulp"] == "≥9223372036854775807"


def test_the_code_without_the_emulated_backend_runs_and_names_no_variants():
    """Pass 27: with only the numpy backend ticked, the code box listed the format's default
    variants (not the user's pick) and raised "the emulated backend runs the variants, and
    it is not among backends". It names no variants there, and its table is the app's."""
    app = fpx.explorer(n=1000, variants=["kahan"], backends=("numpy",))
    code = app.snippet.value
    assert "variants=" not in code and "backends=('numpy',)" in code
    ns: dict = {}
    exec(code.replace("cmp.plot()", ""), ns)  # (the public API only: fpx.compare)
    assert _same_table(ns["cmp"].table, app.comparison.table)


def test_variants_a_format_left_out_come_back_with_one_that_offers_them():
    """Pass 34: float32 to FP8 and back lost the chosen tree, kahan and built specs (the
    banner said FP8 left them out; back on float32 they were gone). They are set aside and
    come back; a selection the user changes meanwhile is theirs (nothing comes back)."""
    app = fpx.explorer(op="matmul", format="float32", n=4)
    for s in ["sequential+fma", "tree(block=2)"]:
        app.add_variant(s)
    chosen = [str(v) for v in app.state.variants]
    assert {"tree", "kahan", "sequential+fma", "tree(block=2)"} <= set(chosen)
    app.format.value = "float8_e4m3"
    assert [str(v) for v in app.state.variants] == ["sequential", "pairwise"]
    assert "tree is left out on float8_e4m3 data" in html.unescape(app.banner.value)
    app.format.value = "float32"
    assert [str(v) for v in app.state.variants] == chosen
    assert app.comparison is not None and set(app.comparison.specs) == set(chosen)
    app.format.value = "float8_e4m3"
    app.variants.value = ("sequential",)  # the user's own choice on FP8
    app.format.value = "float32"
    assert [str(v) for v in app.state.variants] == ["sequential"]
