"""The explorer app without a kernel: set controls, compare with direct API calls; fuzz."""

from __future__ import annotations

import importlib

import numpy as np
import pytest

import fpexplore as fpx

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
    assert set(app.variants.options) == set(fpx.variants("matmul"))
    assert app.comparison.op == "matmul" and app.comparison.n == 10
    assert app.figure.axes[0].images  # a heatmap
    app.variants.value = ("pairwise",)
    assert list(app.comparison.table["variant"]) == ["np.matmul", "pairwise"]


def _displayed(widget):
    """Every widget a person sees: the app and its children, recursively."""
    yield widget
    for child in getattr(widget, "children", ()):
        yield from _displayed(child)


def _find(app, cls, **traits):
    found = [
        w
        for w in _displayed(app)
        if isinstance(w, cls) and all(getattr(w, k) == v for k, v in traits.items())
    ]
    assert len(found) == 1, f"expected one displayed {cls.__name__} with {traits}: {found}"
    return found[0]


def test_detective_button_is_displayed_and_answers():
    import ipywidgets as W

    app = fpx.explorer(n=10_000)
    button = _find(app, W.Button, description="Which order did NumPy use?")
    assert not button.disabled
    shown = {id(w) for w in _displayed(app)}
    button.click()
    answers = [w for w in _displayed(app) if isinstance(w, W.HTML) and "fpx-detective" in w.value]
    assert len(answers) == 1 and id(answers[0]) in shown
    # np.sum of a contiguous float32 array is the 'numpy' order, bit for bit, on any machine
    first_row = answers[0].value.split("<tbody>")[1].split("</tr>")[0]
    assert "<td>numpy</td>" in first_row and "<td>True</td>" in first_row
    assert "np.sum" in answers[0].value and "one candidate reproduces" in answers[0].value
    # the button shows what the public function returns
    df = fpx.explain_numpy("sum", app.comparison.inputs)
    assert df.iloc[0]["variant"] == "numpy" and df.attrs["function"] == "np.sum"
    assert df.attrs["note"] == "one candidate reproduces every observation"
    _find(app, W.Dropdown, description="op").value = "linspace"
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


def test_errors_stay_inside_the_app():
    app = fpx.explorer(op="matmul", n=10)
    app.n.value = 3000  # beyond matmul's limit
    assert app.comparison is None
    assert "fpx-error" in app.message.value and "limit is 1024" in app.message.value
    app.n.value = 10
    assert app.message.value == "" and app.comparison is not None
    app.backends.value = ()
    assert "at least one backend" in app.message.value


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
        for fmt in fpx.FORMATS:
            app.format.value = fmt
            offered = set(app.variants.options)
            missing = set(fpx.variants(op)) - offered
            # only documented gaps: linspace's library variants have no bfloat16
            assert not missing or (op, fmt) == ("linspace", "bfloat16"), (op, fmt, missing)
            for variant in app.variants.options:
                app.variants.value = (variant,)
                if app.comparison is None:
                    failures.append((op, fmt, variant, app.message.value))
                else:
                    assert app.comparison.op == op and app.comparison.format == fmt
                    assert app.figure.axes, (op, fmt, variant)
    assert failures == []


def test_image_fallback_without_ipympl(monkeypatch):
    import ipywidgets as W

    from fpexplore import widgets

    def no_ipympl():
        from matplotlib.figure import Figure

        return Figure(), W.Image(format="png")

    monkeypatch.setattr(widgets, "_canvas", no_ipympl)
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
    assert (first <= 10 * np.maximum(warm, 0.2)).all(), (first, warm)


def test_export_buttons_and_copy_are_displayed_and_produce_files():
    import base64

    import ipywidgets as W

    app = fpx.explorer(n=1000)
    for kind, magic in (("CSV", b"op,format,n,"), ("PNG", b"\x89PNG"), ("SVG", b"<?xml")):
        _find(app, W.Button, description=f"Export {kind}").click()
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
    copy = [w for w in _displayed(app) if isinstance(w, W.HTML) and "fpx-copy" in w.value]
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
