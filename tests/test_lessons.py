"""The lessons' widgets without a kernel: answer an exercise as a student would (walking the
displayed widget tree), watch a sum step by step, click bits."""

from __future__ import annotations

import html

import numpy as np
import pytest

import fpexplore as fpx
from fpexplore import teaching

from widget_tree import displayed, find

W = pytest.importorskip("ipywidgets")


def _feedback(app) -> str:
    return " ".join(w.value for w in displayed(app) if isinstance(w, W.HTML) and w.value)


def _shown_images(app):
    return [
        w for w in displayed(app) if isinstance(w, W.Image) and w.value and not w.layout.display
    ]


def test_a_student_answers_an_exercise_end_to_end():
    app = fpx.exercise("ulp-float32")
    assert "ulp(x)" in _feedback(app) and not _shown_images(app)
    box = find(app, W.Text)
    check = find(app, W.Button, description="check")
    for typed, says in [
        ("", "the box is empty"),
        ("one thousand", "is not a number"),
        ("0.0001", "Not yet"),
    ]:
        box.value = typed
        check.click()
        text = _feedback(app)
        assert says in text and "Traceback" not in text, (typed, text)
        assert "Correct" not in text and not _shown_images(app)
    find(app, W.Button, description="hint").click()
    assert "Hint:" in _feedback(app)
    box.value = "2**-14"
    check.click()
    text = _feedback(app)
    assert "Correct!" in text and "2**-14" in text  # and the explanation
    (image,) = _shown_images(app)
    assert bytes(image.value).startswith(b"\x89PNG")


def test_choices_and_show_answer():
    app = fpx.exercise("bfloat16-or-float16", seed=3)
    ex = app.exercise
    assert ex.seed == 3 and "variant 3" in _feedback(app)
    choices = find(app, W.ToggleButtons)
    assert tuple(choices.options) == ex.choices and choices.value is None
    check = find(app, W.Button, description="check")
    check.click()
    assert "pick one of the choices" in _feedback(app)
    choices.value = next(c for c in ex.choices if c != ex.answer())
    check.click()
    assert "Not yet" in _feedback(app) and not _shown_images(app)
    find(app, W.Button, description="show answer").click()
    assert ex.answer_text() in _feedback(app) and _shown_images(app)
    choices.value = ex.answer()
    check.click()
    assert "Correct!" in _feedback(app)


@pytest.mark.parametrize("id", [e.id for e in fpx.exercises()])
def test_every_exercise_widget_reveals_its_figure(id):
    app = fpx.exercise(id, seed=4)
    entry = app.entry
    entry.value = app.exercise.answer_text()
    app.check_button.click()
    assert "Correct!" in app.feedback.value, (id, app.feedback.value)
    assert _shown_images(app) and html.escape(app.exercise.explanation) in app.explanation.value


def test_exercise_refuses_unknown_ids():
    with pytest.raises(ValueError, match="unknown exercise"):
        fpx.exercise("no-such-exercise")


# ----------------------------------------------------------------------------- step_sum


def test_step_sum_starts_at_step_1_with_its_numbers_beside_the_figure():
    """A projector shows the first addition (the class predicts the next) and the numbers
    beside the figure: one row that wraps only where the page is too narrow for both."""
    import io

    from PIL import Image

    x = fpx.generate("normal", 20, "float16", seed=2)
    app = fpx.lessons.step_sum(x, "sequential")
    slider = find(app, W.IntSlider, description="step")
    assert slider.value == 1 and slider.max == 19  # 20 terms added in turn: 19 additions
    assert "(of 2 terms, x[0..1])" in app.table.value
    row = next(b for b in app.children if isinstance(b, W.HBox) and app.figure in b.children)
    assert list(row.children) == [app.figure, app.table]
    assert row.layout.flex_flow == "row wrap"
    width = Image.open(io.BytesIO(app.figure.value)).size[0]
    assert app.figure.layout.width == f"{width}px" and width <= 520  # 520 + the table's 300
    app.order.value = "pairwise"  # another order: its first step again
    assert slider.value == 1 and "(of 2 terms" in app.table.value
    slider.value = slider.max
    assert "(of 20 terms" in app.table.value


def test_step_sum_last_step_is_the_order_bit_for_bit():
    x = fpx.generate("normal", 20, "float16", seed=2)
    app = fpx.lessons.step_sum(x, "sequential")
    order = find(app, W.Dropdown, description="order")
    slider = find(app, W.IntSlider, description="step")
    for name in order.options:
        order.value = name
        assert slider.value == 1 and slider.max == len(app.trace.steps)
        slider.value = slider.max
        assert f"(of {x.size} terms" in app.table.value
        params = {"block": app.block.value} if name == "tree" else {}
        want = fpx.sum(x, name, **params)
        assert fpx.to_bits(app.trace.result) == fpx.to_bits(want), name
        assert (
            fpx.shortest_repr(want) in app.table.value
            and html.escape(app.call()) in app.table.value
        )
    order.value = "tree"
    find(app, W.Dropdown, description="block").value = 4
    assert fpx.to_bits(app.trace.result) == fpx.to_bits(fpx.sum(x, "tree", block=4))
    before = app.figure.value
    slider.value = 3
    assert app.figure.value != before and "ulps" in app.table.value


def test_step_sum_error_panel_shows_the_steps_done_only():
    """The error panel under the tree shows the steps done so far (the later ones would give
    the story away) on an axis that holds every step, so it stays put as the slider moves;
    the errors drawn are sum_steps' own for those steps."""
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib.figure import Figure

    from fpexplore.lessons import draw_steps

    x = fpx.generate("normal", 20, "float16", seed=2)
    trace = fpx.teaching.sum_steps(x, "sequential")
    limits = set()
    for upto in (1, 7, len(trace.steps)):
        fig = Figure()
        draw_steps(trace, upto, fig)
        errs = fig.axes[1]
        bars = [p.get_height() for p in errs.patches]
        (line,) = [ln for ln in errs.get_lines() if ln.get_label() == "vs exact"]
        assert bars == [s.rounding_ulps for s in trace.steps[:upto]], upto
        assert list(line.get_ydata()) == [s.error_ulps for s in trace.steps[:upto]], upto
        limits.add((errs.get_xlim(), errs.get_ylim()))
    assert len(limits) == 1  # the same axis at every step


def test_step_sum_keeps_the_sum_shown_when_an_order_is_refused():
    """Pairwise, then sequential (whose partial sums overflow float16): the dropdown and
    call() said sequential while the trace, figure and table stayed pairwise's (pass 14). The
    controls go back to the sum shown, the message says which, and the next order works."""
    x = np.array([3e4, 3e4, 3e4, -3e4], np.float16)
    w = fpx.lessons.step_sum(x, "pairwise")
    shown = (w.trace, w.figure.value, w.table.value)
    w.order.value = "sequential"
    assert w.order.value == "pairwise" and w.call() == "fpx.sum(x, 'pairwise')"
    assert (w.trace, w.figure.value, w.table.value) == shown
    said = html.unescape(w.message.value)
    assert "gives inf in float16" in said and "(still showing fpx.sum(x, 'pairwise'))" in said
    w.order.value = "numpy"
    assert w.message.value == "" and w.trace.result == fpx.sum(x, "numpy")


def test_step_sum_checks_its_arguments():
    with pytest.raises(ValueError, match="unknown order"):
        fpx.lessons.step_sum(np.ones(4, np.float32), "kahan")
    with pytest.raises(ValueError, match="power of two"):
        fpx.lessons.step_sum(np.ones(4, np.float32), "tree", block=6)
    with pytest.raises(TypeError):
        fpx.lessons.step_sum(np.ones(4, np.float32), blok=4)


# ----------------------------------------------------------------------------- bit inspector


@pytest.mark.parametrize("fmt", teaching.BIT_FORMATS)
def test_bit_inspector_clicks_and_typing(fmt):
    app = fpx.lessons.bit_inspector("0.1", fmt)
    assert app.bits == teaching.bits_of("0.1", fmt)
    buttons = [w for w in displayed(app) if isinstance(w, W.ToggleButton)]
    assert len(buttons) == teaching.bit_fields(0, fmt)["width"]
    # clicking bits: the value is the one fpx.from_bits gives for the pattern
    buttons[-1].value = not buttons[-1].value
    buttons[2].value = not buttons[2].value
    bits = int("".join("1" if b.value else "0" for b in buttons), 2)
    assert app.bits == bits and app.hex_box.value == teaching.bit_fields(bits, fmt)["hex"]
    if fmt in fpx.FORMATS:
        want = fpx.from_bits(np.uint64(bits), fmt)
        assert fpx.to_bits(app.value) == fpx.to_bits(want)
        if np.isfinite(want):
            assert app.value_box.value == fpx.shortest_repr(want)
    # typing a value: the bits fpx.as_format gives
    app.value_box.value = "-3.3"
    if fmt in fpx.FORMATS:
        assert app.bits == int(fpx.to_bits(fpx.as_format(-3.3, fmt)))
    assert app.bits == teaching.bits_of(-3.3, fmt)
    got, want = float(app.value), float(fpx.as_format(-3.3, fmt))  # E8M0: NaN (no sign)
    assert got == want or (np.isnan(got) and np.isnan(want))
    # the hex field is the state: pasting it elsewhere gives the same bits
    other = fpx.lessons.bit_inspector("1", fmt)
    other.hex_box.value = app.hex_box.value
    assert other.bits == app.bits
    # wrong input: a message, the bits stay
    app.value_box.value = "pi"
    assert "is not a number" in app.message.value and app.bits == teaching.bits_of(-3.3, fmt)
    app.hex_box.value = "0xZZ"
    assert "hexadecimal" in app.message.value


def test_bit_inspector_keeps_the_value_across_formats():
    app = fpx.lessons.bit_inspector("1.5", "float32")
    app.format.value = "bfloat16"
    assert app.hex_box.value == "0x3fc0" and len(app.bit_buttons) == 16
    app.format.value = "float8_e4m3"
    assert app.hex_box.value == "0x3c" and "1.5" in app.info.value


def test_bit_inspector_from_nan_to_a_format_without_nan_shows_zero_and_says_why():
    """65504 in float16 to E4M3 is NaN; then FP4 (no NaN): the buttons were FP4's, all off,
    while the hex box said 0x7f, the value nan, and .fields E4M3's (pass 14). Now every part
    shows FP4's +0 and the message says why."""
    app = fpx.lessons.bit_inspector("65504", "float16")
    app.format.value = "float8_e4m3"
    assert app.hex_box.value == "0x7f" and app.value_box.value == "nan"
    app.format.value = "float4_e2m1"
    assert len(app.bit_buttons) == 4 and app.bits == 0 and app.hex_box.value == "0x0"
    assert app.value_box.value == "0.0" and app.fields["width"] == 4 and app.value == 0
    assert "float4_e2m1 has no NaN" in app.message.value and "+0 is shown" in app.message.value
    app.value_box.value = "1.5"  # it works on, the message gone
    assert app.hex_box.value == "0x3" and not app.message.value


def test_bit_inspector_names_what_it_refuses():
    """A list or a 1-element array raised NumPy's "only 0-dimensional arrays can be
    converted"; an fpx.format format without IEEE's layout was "unknown format" where the
    package has its reason (pass 14)."""
    from fpexplore.userformat import _forget

    for value in ([1.0], np.array([1.0])):
        with pytest.raises(TypeError, match="value must be one number"):
            fpx.lessons.bit_inspector(value)
    assert fpx.lessons.bit_inspector(np.array(1.5)).hex_box.value == "0x3fc00000"  # (0-d)
    fpx.format(11, 15, subnormals=False, name="nosub_t")
    try:
        with pytest.raises(ValueError, match="'nosub_t' .* has no IEEE bit layout"):
            fpx.lessons.bit_inspector("1", "nosub_t")
    finally:
        _forget("nosub_t")


def test_bit_inspector_shows_the_value_in_full_and_keeps_exact_typing():
    """float16(0.1) is 0.0999755859375, not "0.1"; a typed 65504 stays 65504 (not 6.55e+04)
    where the format holds it exactly; an inexact one shows what the bits hold."""
    app = fpx.lessons.bit_inspector("0.1", "float16")
    assert "0.0999755859375" in app.info.value
    for typed in ("65504", "2**-24", "-1.5"):
        app.value_box.value = typed
        assert app.value_box.value == typed and app.bits == teaching.bits_of(typed, "float16")
    app.value_box.value = "65505"  # rounds to 65504: the box shows what the bits hold
    assert app.value_box.value == fpx.shortest_repr(np.float16(65504))
    assert "65504 (normal)" in app.info.value


def test_bit_inspector_holds_a_format_of_your_own_in_float64():
    """A format of fpx.format wider than float32 (precision 30, emax 511): its value, its
    neighbours and its ulp in float64, which holds it (adversarial pass 12: through float32,
    1e100 was inf and next up of 0.1 read 0.1)."""
    import warnings

    from fpexplore.userformat import _forget

    fpx.format(30, 511, name="wide30_t")
    try:
        b = fpx.lessons.bit_inspector("0.1", "wide30_t")
        want = fpx.as_format(0.1, "wide30_t")
        assert b.value == want and b.value.dtype == np.float64
        assert repr(float(fpx.next_up(want, "wide30_t"))) in b.info.value  # 0.10000000009313226
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            b.value_box.value = "1e100"
        assert b.value == fpx.as_format(1e100, "wide30_t") and np.isfinite(b.value)
    finally:
        _forget("wide30_t")


def test_bit_inspector_takes_what_fpx_format_returns():
    """fpx.format's FormatInfo is its format, as fpx.as_format takes it (pass 13: "unknown
    format FormatInfo(...)", its own name among the valid ones)."""
    from fpexplore.userformat import _forget

    f = fpx.format(11, 15, name="half2_t")
    try:
        b = fpx.lessons.bit_inspector("0.1", f)
        assert b.format.value == "half2_t" and b.hex_box.value == "0x2e66"  # float16's bits
    finally:
        _forget("half2_t")


def test_bit_fields_ulp_of_the_least_e8m0_scale():
    """Pass 25: the bit inspector gave 2^-126 as the ulp of E8M0's least value 2^-127 (its
    exponent clamped at float32's least normal one, -126; E8M0 has no subnormals and its
    exponent 0 is 2^-127). Oracle: the gap to the next value, 2^-126 - 2^-127, for every
    pattern the ulp of 2^e is 2^e (E8M0 holds powers of two only)."""
    from fpexplore.teaching.bits import bit_fields

    for b in range(255):
        f = bit_fields(b, "float8_e8m0")
        assert f["value"] == 2.0 ** (b - 127) and f["ulp"] == 2.0 ** (b - 127), b
