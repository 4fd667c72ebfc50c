"""The classroom around the exercises (issue 37): answers kept in a file and shown again by a
new kernel, output held back until an exercise is answered, a class's summary, answer keys,
handouts and each exercise's plain form."""

from __future__ import annotations

import json

import pytest

import fpexplore as fpx
from fpexplore import classroom, teaching

W = pytest.importorskip("ipywidgets")


@pytest.fixture(autouse=True)
def _fresh_kernel():
    """Each test starts as a new kernel would: no answers box, no exercise answered."""
    classroom._SHEETS.clear()
    classroom._DONE.clear()
    yield
    classroom._SHEETS.clear()
    classroom._DONE.clear()


def _answer(widget, text):
    widget.entry.value = text
    widget.check_button.click()


def test_answers_survive_a_kernel_restart(tmp_path):
    folder = tmp_path / "answers"
    sheet = fpx.lessons.answers("01", folder=folder)
    assert sheet.book is None and not folder.exists()  # nothing written before a name
    ulp, which = fpx.exercise("ulp-float32"), fpx.exercise("bfloat16-or-float16")
    _answer(ulp, "0.001")  # wrong first
    _answer(ulp, "2**-14")
    sheet.name.value = "Ada Lovelace"  # named after answering: the attempts are kept
    _answer(which, "bfloat16")
    path = folder / "01-Ada_Lovelace.json"
    data = json.loads(path.read_text())
    assert data["student"] == "Ada Lovelace" and data["lesson"] == "01"
    assert [(a["exercise"], a["answer"], a["right"]) for a in data["attempts"]] == [
        ("ulp-float32", "0.001", False),
        ("ulp-float32", "2**-14", True),
        ("bfloat16-or-float16", "bfloat16", True),
    ]
    assert all(a["time"] for a in data["attempts"])

    # a kernel restart: the notebook runs again, the name is remembered for this folder
    classroom._SHEETS.clear()
    classroom._DONE.clear()
    again = fpx.lessons.answers(1, folder=folder)
    assert again.name.value == "Ada Lovelace"
    ulp2, which2 = fpx.exercise("ulp-float32"), fpx.exercise("bfloat16-or-float16")
    other = fpx.exercise("bits-float16")
    assert ulp2.solved and ulp2.entry.value == "2**-14" and "Correct!" in ulp2.feedback.value
    assert which2.solved and which2.entry.value == "bfloat16"
    assert "Correct!" in which2.feedback.value and which2.figure.layout.display is None
    assert not other.solved and other.entry.value == "" and not other.feedback.value
    assert len(json.loads(path.read_text())["attempts"]) == 3  # restoring writes nothing

    # the class summary counts them
    s = fpx.lessons.summary(folder)
    rows = s.table.set_index("exercise")
    assert rows.loc["ulp-float32", "attempts"] == 2 and not rows.loc["ulp-float32", "first_try"]
    assert rows.loc["bfloat16-or-float16", "first_try"]
    per = s.exercises.set_index("exercise")
    assert per.loc["ulp-float32", "first_try_rate"] == 0.0
    assert per.loc["bfloat16-or-float16", "first_try_rate"] == 1.0
    assert s.figure.axes and "<img" in s._repr_html_()


def test_a_class_of_files_and_a_changed_name(tmp_path):
    folder = tmp_path / "class"
    for name, typed in [("Ann", "2**-14"), ("Bob", "1"), ("Cy", "2**-14")]:
        classroom._SHEETS.clear()
        sheet = fpx.lessons.answers("01", folder=folder / name, student=name)
        ex = fpx.exercise("ulp-float32")
        _answer(ex, typed)
        if name == "Bob":
            ex.show_button.click()
        assert sheet.book.path.parent == (folder / name).resolve()
    (folder / "notes.json").write_text("{}")  # not an answers file: passed over
    s = fpx.lessons.summary(folder)
    assert sorted(s.table["student"]) == ["Ann", "Bob", "Cy"]
    per = s.exercises.set_index("exercise")
    assert per.loc["ulp-float32", "students"] == 3 and per.loc["ulp-float32", "shown"] == 1
    assert per.loc["ulp-float32", "first_try_rate"] == pytest.approx(2 / 3)
    # another student at the same machine: the widgets show that student's answers
    sheet = fpx.lessons.answers("01", folder=folder / "Ann")
    ex = fpx.exercise("ulp-float32")
    assert ex.solved
    sheet.name.value = "Dee"
    assert not ex.solved and ex.entry.value == ""


def test_an_exercise_at_another_seed_is_another_question(tmp_path):
    """Ada answered ulp-float32 in class and again as homework (seed=7), Bob in class,
    wrongly: the summary said 2 students, 2 right, a first-try rate of 1.0 for one row, as
    it grouped by exercise and counted Ada's two rows (pass 14). Each (exercise, seed) is a
    row: in class 2 students, 1 right; the homework 1 of 1."""
    for name, seeds in (("Ada", (None, 7)), ("Bob", (None,))):
        classroom._SHEETS.clear()
        fpx.lessons.answers("01", folder=tmp_path / name, student=name)
        for seed in seeds:
            ex = fpx.exercise("ulp-float32", seed=seed)
            _answer(ex, ex.exercise.answer_text() if name == "Ada" else "1")
    s = fpx.lessons.summary(tmp_path)
    per = s.exercises
    assert per["seed"].isna().tolist() == [True, False] and per["seed"][1] == 7
    assert per[["students", "right", "first_try"]].values.tolist() == [[2, 1, 1], [1, 1, 1]]
    assert per["first_try_rate"].tolist() == [0.5, 1.0]
    assert s.table["seed"].dtype.name == "Int64"  # (7, not 7.0)
    ticks = [t.get_text() for t in s.figure.axes[0].get_xticklabels()]
    assert ticks == ["ulp-float32", "ulp-float32 (seed 7)"]


def test_summary_says_when_the_answer_was_shown_before_any(tmp_path):
    """A student who pressed "show answer" and checked nothing has no answer of their own:
    the summary says so in words (it showed NaN); one who checked after looking keeps what
    they typed."""
    for name, typed in [("Eve", None), ("Fay", "2**-14")]:
        classroom._SHEETS.clear()
        fpx.lessons.answers("01", folder=tmp_path / name, student=name)
        ex = fpx.exercise("ulp-float32")
        ex.show_button.click()
        if typed is not None:
            _answer(ex, typed)
    rows = fpx.lessons.summary(tmp_path).table.set_index("student")
    assert rows.loc["Eve", "answer"] == "none (answer shown)"
    assert rows.loc["Eve", "shown"] and rows.loc["Eve", "attempts"] == 0
    assert rows.loc["Fay", "answer"] == "2**-14" and rows.loc["Fay", "right"]


def test_answers_check_their_arguments(tmp_path):
    with pytest.raises(ValueError, match="lesson"):
        fpx.lessons.answers("07", folder=tmp_path)
    with pytest.raises(TypeError, match="folder"):
        fpx.lessons.answers("01", folder=3)
    with pytest.raises(TypeError, match="student"):
        fpx.lessons.answers("01", folder=tmp_path, student=7)
    with pytest.raises(ValueError, match="student must be a name, got '   '"):
        fpx.lessons.answers("01", folder=tmp_path, student="   ")  # (pass 14: a blank status)
    with pytest.raises(ValueError, match="no answers files"):
        fpx.lessons.summary(tmp_path)
    with pytest.raises(ValueError, match="not a folder"):
        fpx.lessons.summary(tmp_path / "missing")
    with pytest.raises(ValueError, match="unknown exercise"):
        fpx.lessons.reveal("no-such-exercise")
    with pytest.raises(ValueError, match=r"\.html or \.md"):
        fpx.lessons.handout("01", tmp_path / "sheet.pdf")


def test_without_an_answers_box_nothing_is_written(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    ex = fpx.exercise("ulp-float32")
    _answer(ex, "2**-14")
    assert ex.solved and list(tmp_path.iterdir()) == []


def test_reveal_holds_output_back_until_answered():
    r = fpx.lessons.reveal("round-bfloat16", "bfloat16-or-float16")
    assert not r.revealed and r.output.layout.display == "none"
    assert "round-bfloat16" in r.note.value
    a, b = fpx.exercise("round-bfloat16"), fpx.exercise("bfloat16-or-float16")
    _answer(a, a.exercise.answer_text())
    assert not r.revealed  # both are needed
    b.show_button.click()
    assert r.revealed and r.output.layout.display is None and r.note.layout.display == "none"
    later = fpx.lessons.reveal("round-bfloat16")  # a cell run again after answering
    assert later.revealed


def test_reveal_does_not_swallow_errors():
    with pytest.raises(ZeroDivisionError):
        with fpx.lessons.reveal("ulp-float32"):
            raise ZeroDivisionError("in the block")


@pytest.mark.parametrize("ex", fpx.exercises(), ids=lambda e: e.id)
def test_every_exercise_has_a_plain_form(ex):
    widget = fpx.exercise(ex.id)
    bundle = classroom.print_form(widget.exercise)
    import html

    assert html.escape(ex.question) in bundle["text/html"]
    assert ex.question in bundle["text/plain"] and "Answer: ___" in bundle["text/plain"]
    assert "fpx-exercise" in bundle["text/html"]  # hidden where the live widget renders
    assert "Answer: `" not in bundle["text/plain"] and ex.explanation not in bundle["text/plain"]
    assert widget._repr_markdown_() == bundle["text/markdown"]


def test_answer_key_and_handout(tmp_path, capsys):
    fpx.lessons.answer_key("01")
    key = capsys.readouterr().out
    for ex in fpx.exercises(lesson=1):
        assert ex.question in key and ex.answer_text() in key and ex.explanation in key
    page = fpx.lessons.handout(1, tmp_path / "sheet.html")
    md = fpx.lessons.handout("05", tmp_path / "sheet.md", seed=3)
    text = page.read_text()
    assert text.startswith("<!DOCTYPE html>") and text.count('class="fpx-blank"') == 6
    assert all(
        ex.answer_text() not in text for ex in fpx.exercises(lesson=1) if ex.kind != "choice"
    )
    assert "variant 3" in md.read_text() and "Name:" in md.read_text()
    assert teaching.handout_text("02").count("Answer:") == len(fpx.exercises(lesson=2))


def _visible_text(page: str) -> str:
    """What a reader of an HTML page sees: scripts and styles (widget state) left out."""
    import html
    import re

    page = re.sub(r"<(script|style)\b.*?</\1>", " ", page, flags=re.S | re.I)
    return html.unescape(re.sub(r"<[^>]+>", " ", page))


def test_lesson_01_exported_to_html_shows_every_question_and_no_answer(tmp_path):
    """Lesson 01 run top to bottom, then exported by nbconvert: every question is on the page
    (the exercises' plain form), no answer is (the cells that give them away are held back),
    and the output held back is in the widget state, hidden."""
    nbconvert = pytest.importorskip("nbconvert")
    from test_notebooks import NOTEBOOKS, run_notebook, widget_states

    nb = run_notebook(next(p for p in NOTEBOOKS if p.name.startswith("01_")), tmp_path)
    page, _ = nbconvert.HTMLExporter().from_notebook_node(nb)
    text = " ".join(_visible_text(page).split())
    for ex in fpx.exercises(lesson=1):
        assert " ".join(ex.question.split()) in text, ex.id
        if ex.kind in ("hex", "exact"):
            assert ex.answer_text() not in text, ex.id
    assert "0 01011 1001100110" not in text  # float16(0.1)'s bits, printed by a held cell
    held = [s for s in widget_states(nb).values() if s.get("outputs")]
    assert any("0 01011 1001100110" in json.dumps(s["outputs"]) for s in held)


@pytest.mark.parametrize(
    ("one", "two"), [("Zoë", "Zo"), ("李雷", "韩梅梅"), ("Ann Lee", "Ann_Lee")]
)
def test_two_names_that_spell_one_file_name_keep_their_own_answers(tmp_path, one, two):
    """Names the file name spells alike ("Zoë" and "Zo": 01-Zo.json; every name in another
    script: 01-student.json) shared one file: the second student was shown the first one's
    answers, and the summary counted them as the second's."""
    ex = teaching.get("ulp-float32")
    first = teaching.AnswerBook(tmp_path, "01", one)
    first.record(ex, "2**-14", True)
    second = teaching.AnswerBook(tmp_path, "01", two)
    assert second.attempts == [] and second.path != first.path
    second.record(ex, "1", False)
    rows = teaching.tally(teaching.read_attempts(tmp_path))
    assert sorted((r["student"], r["answer"], r["right"]) for r in rows) == sorted(
        [(one, "2**-14", True), (two, "1", False)]
    )
    assert teaching.AnswerBook(tmp_path, "01", one).attempts == first.attempts  # found again


def test_summary_names_the_answers_files_it_cannot_read(tmp_path):
    """Issue 36: a damaged answers file (cut off, edited by hand) was passed over without a
    word: its student vanished from the summary, and a folder of only such files "holds no
    answers files". The summary warns, naming them; the error says so too."""
    classroom._SHEETS.clear()
    fpx.lessons.answers("01", folder=tmp_path / "Gil", student="Gil")
    _answer(fpx.exercise("ulp-float32"), "2**-14")
    (tmp_path / "Hal").mkdir()
    (tmp_path / "Hal" / "01-hal.json").write_text('{"format": ', encoding="utf-8")
    (tmp_path / "notes.json").write_text("[]", encoding="utf-8")  # not named as one: quiet
    with pytest.warns(UserWarning, match=r"1 file\(s\) named as answers files.*01-hal\.json"):
        s = fpx.lessons.summary(tmp_path)
    assert list(s.table["student"].unique()) == ["Gil"]
    with pytest.raises(ValueError, match=r"holds no answers files: 1 file\(s\).*01-hal\.json"):
        fpx.lessons.summary(tmp_path / "Hal")


@pytest.mark.parametrize(
    "edit",
    [
        {"seed": [1]},  # a list: unhashable, the summary raised TypeError
        {"exercise": {"a": 1}},
        {"right": "false"},  # a string: bool("false") counted it right
        {"right": 1},
        {"event": "peek"},
        {"answer": 3},
    ],
)
def test_a_hand_edited_attempt_of_another_kind_is_a_damaged_file(tmp_path, edit):
    """Pass 26: an answers file edited by hand whose attempt held a list seed or a dict
    exercise stopped the class summary with "unhashable type"; ``"right": "false"`` counted
    as right. Such a file is damaged: the summary warns, naming it, and leaves it out; the
    other student's row is as it was."""
    classroom._SHEETS.clear()
    fpx.lessons.answers("01", folder=tmp_path / "Gil", student="Gil")
    _answer(fpx.exercise("ulp-float32"), "2**-14")
    good = {"exercise": "ulp-float32", "seed": None, "event": "check", "answer": "3"}
    bad = {"format": teaching.answers.FILE_FORMAT, "lesson": "01", "student": "Cat"}
    bad["attempts"] = [{**good, "right": False, **edit}]
    (tmp_path / "01-cat.json").write_text(json.dumps(bad), encoding="utf-8")
    with pytest.warns(UserWarning, match=r"1 file\(s\) named as answers files.*01-cat\.json"):
        s = fpx.lessons.summary(tmp_path)
    assert list(s.table["student"].unique()) == ["Gil"]
    bad["attempts"] = [{**good, "right": False}]  # the same file, unedited: read
    (tmp_path / "01-cat.json").write_text(json.dumps(bad), encoding="utf-8")
    s = fpx.lessons.summary(tmp_path)
    cat = s.table[s.table["student"] == "Cat"]
    assert len(cat) == 1 and not cat["right"].any()


@pytest.mark.parametrize("missing", ["student", "lesson"])
def test_an_answers_file_without_its_student_or_lesson_is_damaged(tmp_path, missing):
    """Pass 26: a file without "student" showed a student "None"."""
    classroom._SHEETS.clear()
    fpx.lessons.answers("01", folder=tmp_path / "Gil", student="Gil")
    _answer(fpx.exercise("ulp-float32"), "2**-14")
    bad = {"format": teaching.answers.FILE_FORMAT, "lesson": "01", "student": "Cat"}
    bad["attempts"] = [{"exercise": "ulp-float32", "seed": None, "answer": "3", "right": False}]
    del bad[missing]
    (tmp_path / "01-cat.json").write_text(json.dumps(bad), encoding="utf-8")
    with pytest.warns(UserWarning, match=r"01-cat\.json"):
        s = fpx.lessons.summary(tmp_path)
    assert list(s.table["student"].unique()) == ["Gil"]
