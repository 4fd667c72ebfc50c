"""The lessons' exercises, the traced sum and the bit codec (issue 27)."""

from __future__ import annotations

import math
import re
from collections import Counter
from decimal import Decimal
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

import fpexplore as fpx
from fpexplore import teaching

from oracle import ML_TYPES

IDS = [e.id for e in fpx.exercises()]


def test_at_least_twenty_exercises_four_per_lesson():
    exs = fpx.exercises()
    assert len(exs) >= 20 and len(set(IDS)) == len(IDS)
    per = Counter(e.lesson for e in exs)
    assert set(per) == set(teaching.LESSONS) and min(per.values()) >= 4, per
    for e in exs:
        assert e.question and e.hint and e.kind in teaching.KINDS
        assert (e.choices is not None) == (e.kind == "choice")
        assert (e.tolerance is not None) == (e.kind == "approx")
        if e.kind == "approx":  # a tolerance only where the question names it
            assert f"{e.tolerance:.0%}" in e.question
    assert [e.id for e in fpx.exercises(lesson=2)] == [e.id for e in exs if e.lesson == "02"]
    # a lesson is read alike everywhere: "2" was refused here while answer_key took it, and
    # NumPy's 2 the other way round (pass 14)
    for same in ("2", " 2", np.int64(2), "02"):
        assert [e.id for e in fpx.exercises(lesson=same)] == [e.id for e in fpx.exercises(lesson=2)]
        assert teaching.lesson_number(same) == "02"
    with pytest.raises(TypeError, match="lesson must be a lesson number"):
        fpx.exercises(lesson=np.True_)
    with pytest.raises(ValueError, match="unknown lesson"):
        fpx.exercises(lesson="07")
    with pytest.raises(TypeError):
        fpx.exercises(seed=1.5)


def _wrong(ex) -> list:
    """Answers one step off: an ulp off (value, exact), one bit off (hex), +-1 (integer),
    the other choices, twice the tolerance (approx)."""
    a = ex.answer()
    if ex.kind == "choice":
        return [c for c in ex.choices if c != a]
    if ex.kind == "integer":
        return [str(a + 1), str(a - 1)]
    if ex.kind == "approx":
        return [repr(float(a) * (1 + 2 * ex.tolerance)), repr(float(a) * (1 - 2 * ex.tolerance))]
    if ex.kind == "hex":
        b = int(fpx.to_bits(a))
        return [hex(b ^ 1), hex(b ^ (1 << 9))]
    f = teaching.bit_fields(teaching.bits_of(a, ex.fmt), ex.fmt)
    return [repr(v) for v in (f["next_up"], f["next_down"]) if v is not None]


@pytest.mark.parametrize("seed", [None, 1, 2])
@pytest.mark.parametrize("id", IDS)
def test_each_exercise_accepts_its_answer_and_refuses_wrong_ones(id, seed):
    ex = teaching.get(id, seed)
    assert ex.check(ex.answer_text()), (ex.question, ex.answer_text(), ex.grade(ex.answer_text()))
    assert ex.check(ex.answer()), (ex.question, ex.answer(), ex.grade(ex.answer()))  # both forms
    if ex.kind == "choice":
        assert ex.answer() in ex.choices
    for wrong in _wrong(ex):
        ok, message = ex.grade(wrong)
        assert not ok and "correct" not in message.lower(), (id, wrong, message)
    for junk in ("", "   ", "banana", "1/0", "0x", None, "2**-99999"):
        ok, message = ex.grade(junk)
        assert not ok and message, (id, junk)
    assert ex.answer_text() in ex.explanation
    spec = ex.figure()
    assert spec is None or spec["kind"] in ("bars", "curve", "numberline", "bits")


@pytest.mark.parametrize("id", IDS)
def test_absurd_numbers_get_the_lessons_words_at_once(id):
    """Typed numbers far out of range: an answer in the lesson's words within a second, never
    an exception, Python's int-digits message or minutes of building 10**99999999."""
    import time

    ex = teaching.get(id)
    for typed in ("1e400", "-1e400", "1e19999", "1e99999999", "1e-99999999", "9" * 400):
        t0 = time.perf_counter()
        ok, message = ex.grade(typed)
        assert time.perf_counter() - t0 < 5, (id, typed)  # (a hang took minutes)
        assert not ok and message and "digits" not in message, (id, typed, message)
        assert "Exceeds" not in message and "OverflowError" not in message, (id, typed)


def test_answers_are_computed_by_the_library():
    """Spot checks against direct calls of the public API."""
    ex = teaching.get("ulp-float32")
    assert ex.answer() == fpx.ulp(np.float32(1000.0)) and ex.check("2**-14")
    ex = teaching.get("bits-float16")
    assert ex.answer_text() == fpx.hex_string(fpx.as_format(0.1, "float16")) == "0x2e66"
    assert ex.check("2E66") and not ex.check("0x2e67")
    ex = teaching.get("next-up-float16")
    assert ex.check(repr(float(fpx.next_up(np.float16(1))))) and not ex.check("1")
    ex = teaching.get("round-bfloat16")
    assert ex.answer() == fpx.as_format(3.14159, "bfloat16")
    ok, message = ex.grade("3.1406")  # rounds to the answer but is not it: told so
    assert not ok and "exact value" in message
    ex = teaching.get("float16-stagnation")
    assert ex.answer() == fpx.sum(np.ones(3000, np.float16), "sequential") == 2048
    ex = teaching.get("tensor-core-ulps")
    a = fpx.generate("normal", 256, "float32", seed=0)
    b = fpx.generate("normal", 256, "float32", seed=1)
    tc = fpx.dot(a, b, "tensor-core", arch="a100", input_rounding="tf32")
    assert ex.answer() == fpx.ulp_distance(fpx.exact_dot(a, b), tc)
    ex = teaching.get("fp8-e4m3")
    assert ex.answer() == fpx.as_format(0.3, "float8_e4m3") and ex.check("0.3125")
    assert ex.check("5/16") and ex.check("5*2**-4")


@pytest.mark.parametrize("id", IDS)
def test_seeded_variants_differ(id):
    base, one, two = (teaching.get(id, s) for s in (None, 1, 2))
    assert len({base.question, one.question, two.question}) == 3, (base.question, one.question)
    again = teaching.get(id, 1)
    assert again.question == one.question and again.answer_text() == one.answer_text()


def test_parse_number():
    p = teaching.parse_number
    assert p("0.1") == Fraction(1, 10) and p("-1e-3") == Fraction(-1, 1000)
    assert p("2**-20") == p("2^-20") == Fraction(1, 2**20) and p("3*2**-2") == Fraction(3, 4)
    assert p("3/4") == Fraction(3, 4) and p("0x1.8p-1") == Fraction(3, 4)
    assert math.isinf(p("-inf")) and math.isnan(p("nan"))
    for bad in ("", "abc", "1.2.3", "2**"):
        with pytest.raises(ValueError):
            p(bad)


def test_hexadecimal_floats_are_read_exactly():
    """Pass 5 (issue 36): a typed hex float went through float.fromhex, so bits beyond float64
    were dropped (0x1.00000000000001p0 read as 1, 0x1p-1080 as 0; 0x1p2000 was "not a
    number"), and an exact exercise graded a wrong value right. The oracle: the digits as an
    integer times a power of two."""
    p = teaching.parse_number
    cases = {
        "0x1p-1080": Fraction(1, 2**1080),
        "0x1.00000000000001p0": 1 + Fraction(1, 2**56),
        "0x1p2000": Fraction(2) ** 2000,
        "-0x.8p1": Fraction(-1),
        "0X1A.8P+3": Fraction(0x1A8, 16) * 8,
        "0x1.8p-3": Fraction(3, 16),
    }
    for text, want in cases.items():
        assert p(text) == want, text
    assert math.copysign(1, p("-0x0p0")) == -1
    for bad in ("0x3e00", "0xp3", "0x1.8p"):  # (a bit pattern is no number)
        with pytest.raises(ValueError, match="is not a number"):
            p(bad)
    with pytest.raises(ValueError, match="exponent is too large"):
        p("0x1p99999")
    ex = teaching.get("round-bfloat16")
    digits, exp = float(Fraction(ex.answer_text())).hex().split("p")  # 0x1.92p+1: 3.140625
    assert ex.check(f"{digits}p{exp}")
    assert not ex.check(f"{digits}000000000000000001p{exp}")  # 3.140625 + 2**-115


def test_parse_number_of_decimals_and_long_doubles():
    """Decimal('Infinity') raised OverflowError out of grade() ("never raises"), and a NumPy
    long double was rounded to float64 first (np.longdouble(1)/3 read as float64(1/3))."""
    p = teaching.parse_number
    assert p(Decimal("Infinity")) == math.inf and p(Decimal("-Infinity")) == -math.inf
    assert math.isnan(p(Decimal("NaN")))
    third = np.longdouble(1) / 3
    if np.finfo(np.longdouble).nmant > 52:  # a platform where it is wider than float64
        assert p(third) == Fraction(*third.as_integer_ratio()) != Fraction(float(third))
    assert not teaching.get("ulp-float32", 0).grade(Decimal("Infinity"))[0]


# ----------------------------------------------------------------------------- bit patterns


def _fp8(fmt):
    """ml_dtypes' type of one of the small formats (FP8, FP6, FP4, E8M0): the oracle."""
    return ML_TYPES[fmt]


def _reference_value(bits: int, fmt: str) -> float:
    if fmt in fpx.FORMATS:
        return float(fpx.from_bits(np.uint64(bits), fmt))
    if fmt == "tf32":
        return float(fpx.from_bits(np.uint32(bits << 13), "float32"))
    return float(np.uint8(bits).view(_fp8(fmt)))


def _reference_bits(value, fmt: str) -> int:
    r = fpx.as_format(value, fmt)
    if fmt in fpx.FORMATS:
        return int(fpx.to_bits(r))
    if fmt == "tf32":
        return int(fpx.to_bits(r)) >> 13
    return int(np.asarray(r).astype(_fp8(fmt)).view(np.uint8))


@pytest.mark.parametrize("fmt", teaching.BIT_FORMATS)
def test_bit_fields_match_from_bits_and_bits_of_matches_as_format(fmt):
    width = teaching.bit_fields(0, fmt)["width"]
    rng = np.random.default_rng(5)
    patterns = {0, 1, (1 << width) - 1, 1 << (width - 1), (1 << (width - 1)) - 1}
    patterns |= {int(b) for b in rng.integers(0, 1 << min(width, 62), 300, dtype=np.int64)}
    if width == 64:
        patterns |= {int(b) << 2 for b in rng.integers(0, 1 << 62, 100, dtype=np.int64)}
    for b in sorted(patterns):
        got, want = teaching.bit_fields(b, fmt)["value"], _reference_value(b, fmt)
        assert (math.isnan(got) and math.isnan(want)) or (
            got == want and math.copysign(1, got) == math.copysign(1, want)
        ), (fmt, hex(b), got, want)
        if not math.isnan(want):
            assert teaching.bits_of(want, fmt) == b, (fmt, hex(b))
    for v in (0.1, -2.5, 1e-7, 3.0e38, 70000.0, 448.0, 500.0, 1e-300, -0.0, "0.1", "2**-20"):
        want = _reference_bits(teaching.parse_number(v) if isinstance(v, str) else v, fmt)
        assert teaching.bits_of(v, fmt) == want, (fmt, v)


def test_every_pattern_of_the_small_formats_and_their_neighbours():
    """FP8, FP6, FP4 and E8M0: every bit pattern's value is ml_dtypes' (NaN where it says
    NaN), bits_of gives the pattern back, and next_up / next_down are the neighbours in the
    sorted list of every value (None past the ends); NaN has no pattern in FP6 and FP4."""
    for fmt in ("float8_e4m3fnuz", "float8_e5m2", "float6_e2m3", "float6_e3m2", "float4_e2m1",
                "float8_e8m0"):  # fmt: skip
        width = teaching.bit_fields(0, fmt)["width"]
        values = {b: _reference_value(b, fmt) for b in range(1 << width)}
        numbers = sorted({v for v in values.values() if not math.isnan(v)})
        for b, want in values.items():
            f = teaching.bit_fields(b, fmt)
            got = f["value"]
            assert (math.isnan(got) and math.isnan(want)) or (
                got == want and math.copysign(1, got) == math.copysign(1, want)
            ), (fmt, b)
            if math.isnan(want) or math.isinf(want):
                continue
            assert teaching.bits_of(want, fmt) == b or want == 0, (fmt, b)
            k = numbers.index(want)
            up = numbers[k + 1] if k + 1 < len(numbers) else None
            down = numbers[k - 1] if k > 0 else None
            assert f["next_up"] == up and f["next_down"] == down, (fmt, b, f)
    with pytest.raises(ValueError, match="float4_e2m1 has no NaN"):
        teaching.bits_of(math.nan, "float4_e2m1")
    scale = teaching.bit_fields(0x7F, "float8_e8m0")
    assert scale["value"] == 1.0 and scale["bit_string"] == "01111111" and scale["ulp"] == 1.0
    assert teaching.bit_fields(0xFF, "float8_e8m0")["class"] == "NaN"
    four = teaching.bit_fields(0b0111, "float4_e2m1")
    assert four["value"] == 6.0 and four["bit_string"] == "0 11 1" and four["next_up"] is None


def test_bit_fields_of_one():
    f = teaching.bit_fields(0x3C00, "float16")
    assert f["value"] == 1.0 and f["exponent"] == 0 and f["significand"] == 1.0
    assert f["next_up"] == 1.0009765625 and f["next_down"] == 0.99951171875
    assert (
        f["ulp"] == 2.0**-10 and f["class"] == "normal" and f["bit_string"] == "0 01111 0000000000"
    )
    top = teaching.bit_fields(0x7E, "float8_e4m3")
    assert top["value"] == 448.0 and top["next_up"] is None  # e4m3 has no infinity


# ----------------------------------------------------------------------------- a traced sum


@pytest.mark.parametrize("fmt", ["float16", "bfloat16", "float32", "float64"])
@pytest.mark.parametrize("n", [2, 5, 8, 13, 64, 130, 300])
def test_sum_steps_reproduce_the_orders_bit_for_bit(fmt, n):
    x = fpx.generate("wide", n, fmt, seed=n)
    cases = [
        ("sequential", {}),
        ("pairwise", {}),
        ("numpy", {}),
        ("tree", {"block": 8}),
        ("tree", {"block": 2}),
        ("tree", {}),
    ]
    for order, params in cases:
        tr = teaching.sum_steps(x, order, **params)
        want = fpx.sum(x, order, **params)
        assert fpx.to_bits(tr.result) == fpx.to_bits(want), (order, params, tr.result, want)
        last = tr.steps[-1].value  # (float16 in NumPy's order: the rounding to float16)
        assert fpx.to_bits(np.asarray(last).astype(want.dtype)[()]) == fpx.to_bits(want)
        exact = sum((Fraction(float(v)) for v in x), Fraction(0))
        assert all(
            s.exact == sum((Fraction(float(x[i])) for i in s.covers), Fraction(0))
            for s in tr.steps[-3:]
        )
        assert tr.steps[-1].exact == exact  # (the tree's padding zeros cover no term)
        assert tr.exact_total == fpx.exact_sum(x)


def test_sum_steps_counts_and_errors():
    x = np.array([1.0, 2.0**-24, 2.0**-24, 2.0**-24], dtype=np.float32)
    tr = teaching.sum_steps(x, "sequential")
    assert len(tr.steps) == 3
    assert tr.steps[0].rounding_ulps == -0.5  # 1 + 2**-24: a tie, rounded down to even
    assert tr.steps[-1].error_ulps == -1.5  # 1.0 where 1 + 3 * 2**-24 is exact
    pw = teaching.sum_steps(x, "pairwise")
    assert float(pw.result) == 1.0 + 2.0**-23
    with pytest.raises(ValueError, match="2 to 512 terms"):
        teaching.sum_steps(np.ones(1000, np.float32))
    with pytest.raises(ValueError, match="unknown order"):
        teaching.sum_steps(x, "kahan")
    with pytest.raises(TypeError, match="block"):
        teaching.sum_steps(x, "pairwise", block=4)
    with pytest.raises(TypeError, match="masked"):
        teaching.sum_steps(np.ma.masked_array(x, mask=[0, 1, 0, 0]))


def test_lesson_02s_numpy_versions_differ_on_its_data():
    """Lesson 02's "NumPy's own sum changed in 2.3" cell: on its data the orders of NumPy >= 2.3
    and < 2.3 (both emulated, deterministic) give different float32 sums."""
    x = fpx.generate("normal", 100_003, "float32", seed=3)
    new, old = fpx.sum(x, "numpy"), fpx.sum(x, "numpy-chunked")
    assert new != old and fpx.ulp_distance(old, new) == -8
    assert teaching.get("numpy-versions").answer() == "different"
    nb = (
        Path(__file__).resolve().parents[1] / "notebooks" / "02_summation_orders.ipynb"
    ).read_text()
    assert 'fpx.generate(\\"normal\\", 100_003, \\"float32\\", seed=3)' in nb


def test_the_teachers_guide_names_every_exercise_and_lesson():
    root = Path(__file__).resolve().parents[1]
    guide = (root / "docs" / "teaching.md").read_text()
    for e in fpx.exercises():
        assert f"`{e.id}`" in guide, e.id
    for nb in sorted((root / "notebooks").glob("0[1-5]_*.ipynb")):
        text = nb.read_text()
        ids = {e.id for e in fpx.exercises(lesson=nb.name[:2])}
        posed = {i for i in ids if f'fpx.exercise(\\"{i}\\"' in text}
        assert len(posed) >= 4 and posed == ids, (nb.name, ids - posed)
    readme = (root / "README.md").read_text()
    assert "04_tolerances_and_testing" in readme and "05_gpu_arithmetic" in readme
    assert "docs/teaching.md" in readme


@pytest.mark.parametrize("minutes", [60, 50])
def test_the_guides_session_plans_fill_their_time(minutes):
    """Each plan's rows follow each other from 0 to its length; the 50-minute plan still
    gives every exercise a place (in the class or as homework)."""
    root = Path(__file__).resolve().parents[1]
    guide = (root / "docs" / "teaching.md").read_text()
    head = f"## A {minutes}-minute session"
    assert head in guide, head
    plan = guide.split(head, 1)[1].split("\n## ", 1)[0]
    spans = [tuple(map(int, m)) for m in re.findall(r"^\| (\d+)-(\d+) \|", plan, re.M)]
    assert spans[0][0] == 0 and spans[-1][1] == minutes, spans
    assert all(a[1] == b[0] for a, b in zip(spans, spans[1:])), spans
    if minutes == 50:
        missing = [e.id for e in fpx.exercises() if f"`{e.id}`" not in plan]
        assert not missing, missing


def test_feedback_mentions_a_wrong_sign():
    """Answering 25 where the answer is -25 says more than "too high"."""
    ex = teaching.get("dot-ulps")
    assert int(ex.answer()) < 0
    ok, says = ex.grade(str(-int(ex.answer())))
    assert not ok and "the answer is negative" in says
    ok, says = ex.grade(str(int(ex.answer()) + 1))
    assert not ok and "sign" not in says
    ok, says = teaching.get("next-up-float16").grade("-1.0009765625")
    assert not ok and "the answer is positive" in says


def test_hex_exercise_reads_an_integer_as_the_bit_pattern():
    """An int (or NumPy integer) answer is the pattern itself, not its decimal digits read as
    hexadecimal: 51580 == 0xc97c was 'wrong', and 5614 passed for 0x5614 (== 22036)."""
    for seed in (0, 16):
        ex = teaching.get("bits-float16", seed)
        bits = int(fpx.to_bits(ex.answer()))
        assert ex.answer_text() == hex(bits)  # the premise: the answer in lowercase hex
        for right in (bits, np.uint16(bits), np.int64(bits)):
            assert ex.grade(right) == (True, "Correct!"), right
        for wrong in (bits ^ 1, 0):
            assert not ex.check(wrong), wrong
        ok, says = ex.grade(0)
        assert not ok and "empty" not in says
    assert hex(bits) == "0x5614" and not ex.check(5614)  # decimal 5614 is 0x15ee
    ok, says = ex.grade(-1)
    assert not ok and "not a float16 bit pattern" in says


@pytest.mark.parametrize(
    ("x", "order"),
    [
        (np.array([60000, 60000, -60000], np.float16), "sequential"),  # 60000 + 60000: inf
        (np.array([60000, 60000], np.float16), "numpy"),  # 120000 in float32, inf in float16
        (np.array([3e38, 3e38, -3e38, 1], np.float32), "pairwise"),
    ],
)
def test_sum_steps_names_a_partial_sum_that_overflows(x, order):
    """Issue 36: finite terms whose partial sum overflows the accumulator (or the output
    format) made sum_steps, and the lesson's step_sum widget, raise Python's "cannot convert
    Infinity to integer ratio". Now a ValueError that names x, the step and fpx.sum's value."""
    want = fpx.sum(x, order)
    assert not np.isfinite(want)  # the oracle: the order itself overflows
    with pytest.raises(ValueError, match=r"x's partial sum overflows at step") as e:
        teaching.sum_steps(x, order)
    assert f"fpx.sum(x, {order!r}) gives {float(want)!r}" in str(e.value)
    with pytest.raises(ValueError, match="overflows"):
        fpx.lessons.step_sum(x, order)


def test_a_typed_negative_zero_keeps_its_sign():
    """Issue 36: parse_number read "-0" and "-0.0" as the Fraction 0, so the bit inspector
    showed +0's bits (sign bit 0) beside a typed "-0", and the absorbed exercise (answer
    +0.0) called "-0.0" correct but "-1e-300" (-0.0 in float32) "0 float32 ulps below the
    answer". The oracle: the sign bit of -0.0 in each format (np.signbit of the dtype)."""
    p = teaching.parse_number
    for text in (
        "-0",
        "-0.0",
        " -0e5",
        "\u22120",
        "-0x0p0",
        Decimal("-0"),
        -0.0,
        np.float32(-0.0),
        fpx.as_format(-0.0, "bfloat16"),  # an ml_dtypes scalar, not an np.floating
    ):
        v = p(text)
        assert v == 0 and math.copysign(1, v) < 0, text
    assert p("0") == 0 and isinstance(p("0"), Fraction) and isinstance(p("+0.0"), Fraction)
    assert teaching.bits_of("-0", "float32") == int(np.float32(-0.0).view(np.uint32)) == 1 << 31
    assert teaching.bits_of("-0.0", "float16") == 1 << 15
    assert teaching.bits_of("-0", "float8_e4m3fnuz") == 0  # no negative zero there
    app = fpx.lessons.bit_inspector("-0", "float32")
    assert app.bits == 1 << 31 and app.bit_buttons[0].value
    ex = teaching.get("absorbed")
    assert float(ex.answer()) == 0 and not np.signbit(ex.answer())
    assert ex.check("0") and ex.check("0.0")
    for typed in ("-0", "-0.0", "-1e-300"):  # all three are -0.0 in float32
        right, msg = ex.grade(typed)
        assert not right and "zero of the other sign" in msg, (typed, msg)
    whole = next(e for e in teaching.exercises() if e.kind == "integer")
    assert whole.grade("-0")[0] == (int(whole.answer()) == 0)
    assert "whole number" not in whole.grade("-0")[1]


def test_a_bit_pattern_one_bit_off_is_told_so_in_the_singular():
    ex = teaching.get("bits-float16")
    want = int(ex.answer_text(), 16)
    assert ex.grade(f"0x{want ^ 1:04x}") == (False, "Not yet: 1 bit differs from the answer.")
    assert ex.grade(f"0x{want ^ 3:04x}") == (False, "Not yet: 2 bits differ from the answer.")


def test_tiny_numbers_nan_in_fp8_and_wide_hex_are_told_what_they_are():
    """Adversarial pass 11: a typed 1e-400 was "0 is too low" (float64 underflow), 1000 in
    E4M3 only "Not yet." (it becomes NaN: E4M3 has no infinity), and a hex string wider than
    the format "13 bits differ" while the same number as an int was refused."""
    ex = {e.id: e for e in fpx.exercises()}
    ok, says = ex["rtol-for-ulps"].grade("1e-400")
    assert not ok and says == "Not yet: a positive number below 5e-324 is too low."
    ok, says = ex["fp8-e4m3"].grade("1000")
    assert not ok and "that is NaN (beyond ±448, its largest magnitude: float8_e4m3 has no" in says
    ok, says = ex["fp8-e4m3"].grade("-inf")  # (pass 26: "past its largest value" of -inf)
    assert not ok and "that is NaN (beyond ±448, its largest magnitude" in says
    said = "Not yet: NaN is no number, and float4_e2m1 has no NaN (nor infinity)."
    assert ex["fp4-value"].grade("nan") == (False, said)  # (pass 26: "that is NaN")
    assert ex["fp8-e4m3"].grade("nan") == (False, "Not yet: in float8_e4m3 that is NaN.")
    ok, says = ex["bits-float16"].grade("0x3c00ab")
    assert not ok and says.endswith("is not a float16 bit pattern (16 bits: 0x0 to 0xffff)")
    assert len(fpx.exercises()) == 31  # as README.md and docs/explorer.md say
    for doc in ("README.md", "docs/explorer.md"):
        text = (Path(__file__).parents[1] / doc).read_text()
        assert "`fpx.exercises()` lists them (31," in " ".join(text.split())


def test_a_complex_answer_is_not_a_number():
    """Pass 19: np.complex128(3+5j) was graded right for "ulps-across-a-power" (answer 3),
    the imaginary part dropped (a Python complex was refused)."""
    by_id = {e.id: e for e in fpx.exercises()}
    for ex_id, given in (
        ("ulps-across-a-power", np.complex128(3 + 5j)),
        ("ulps-across-a-power", np.complex64(3)),
        ("absorbed", np.complex128(5j)),
    ):
        ok, said = by_id[ex_id].grade(given)
        assert not ok and "is not a number" in said, said
    assert by_id["ulps-across-a-power"].check(by_id["ulps-across-a-power"].answer())


def test_a_decimal_with_a_huge_exponent_is_answered_at_once():
    """Pass 20: grade(Decimal("1e100000000")) and as_format of it built 10**100000000 (a hang
    of minutes); a typed "1e100000000" was already "that exponent is too large". Past every
    format's range a Decimal rounds as any number there does: inf, or 0 (the least subnormal
    rounding up)."""
    ex = next(e for e in fpx.exercises() if e.kind == "exact")
    assert ex.grade(Decimal("1e100000000")) == (False, "that exponent is too large")
    assert fpx.as_format(Decimal("1e100000000"), "float32") == np.inf
    assert fpx.as_format(Decimal("-1e100000000"), "float16") == -np.inf
    tiny = fpx.as_format(Decimal("-1e-100000000"), "float32")
    assert tiny == 0 and np.signbit(tiny)
    up = fpx.as_format(Decimal("1e-100000000"), "float32", rounding="up")
    assert up == np.float32(2.0**-149)


def test_a_zero_and_a_huge_integer_get_their_own_message():
    """Pass 20: a hex exercise answered 0.0 (or -0.0, np.False_) said "the box is empty";
    grade(10**5000) on a hex or choice exercise answered with Python's own "Exceeds the
    limit (4300 digits) for integer string conversion"."""
    by_kind = {e.kind: e for e in fpx.exercises()}
    hx, ch = by_kind["hex"], by_kind["choice"]
    for zero in (0.0, -0.0, np.False_):
        ok, said = hx.grade(zero)
        assert not ok and "is not hexadecimal" in said, said
    assert hx.grade("") == hx.grade(None) and "the box is empty" in hx.grade(None)[1]
    for ex in (hx, ch):
        ok, said = ex.grade(10**5000)
        assert not ok and said.startswith("an integer of about 5001 digits is not"), said
    assert hx.check(hx.answer()) and ch.check(ch.answer())
