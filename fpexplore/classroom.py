"""The classroom around the lessons' exercises: answers that last, predict before reveal, paper.

- :func:`answers` (``fpx.lessons.answers(lesson, folder="answers")``): the box where a student
  types their name once; from then on every check of that lesson's exercises is kept in
  ``<folder>/<lesson>-<name>.json`` (:class:`fpexplore.teaching.AnswerBook`), and a new kernel
  running the notebook again shows the exercises answered as they were. Nothing is written
  before a name is given and an answer checked; the folder is the one named (relative to the
  notebook's folder), never a default in the home folder.
- :func:`reveal` (``with fpx.lessons.reveal("bits-float16"): ...``): what the block prints or
  displays stays hidden until the exercises named are answered right or their answer shown,
  also under Run All.
- :func:`summary`: a class's answers files as a pandas table and a matplotlib figure (who
  answered what, first-try rate per exercise); :func:`answer_key` prints a lesson's questions
  with their answers and explanations; :func:`handout` writes a printable sheet.
- :func:`print_form`: an exercise's plain form (question, blank) that HTML export, PDF export
  and Voila show where the widget does not render.

The exercise widgets (:mod:`fpexplore.lessons`) report here; the answers files, the tallies
and the sheets' text are :mod:`fpexplore.teaching`'s.
"""

from __future__ import annotations

import base64
import html
import io
import os
import warnings
import weakref
from dataclasses import dataclass
from pathlib import Path

import ipywidgets as W
import traitlets

from .teaching import (
    AnswerBook,
    answer_key_text,
    attempt,
    exercise_html,
    exercise_markdown,
    exercises,
    get,
    handout_text,
    lesson_number,
    read_attempts,
    remembered_student,
    tally,
)

__all__ = [
    "AnswerSheet",
    "ClassSummary",
    "Reveal",
    "answer_key",
    "answers",
    "handout",
    "print_form",
    "reveal",
    "summary",
]

NOTE, BAD = "#0072B2", "#D55E00"


def _box(text: str, color: str, cls: str) -> str:
    return (
        f'<div class="{cls}" style="padding:4px 10px;border-left:4px solid {color};'
        f'margin:4px 0">{text}</div>'
    )


# ----------------------------------------------------------------------------- who answered


class _Done(traitlets.HasTraits):
    """Whether an exercise is answered (right, or its answer shown) in this kernel."""

    answered = traitlets.Bool(False)


_DONE: dict[str, _Done] = {}
_SHEETS: dict[str, AnswerSheet] = {}


def done(id: str) -> _Done:
    """The flag the exercise ``id`` raises once answered (what :class:`Reveal` watches)."""
    return _DONE.setdefault(id, _Done())


def sheet_for(lesson: str) -> AnswerSheet | None:
    """The answers box of ``lesson`` shown last in this kernel (None: answers not kept)."""
    return _SHEETS.get(lesson)


class AnswerSheet(W.VBox):
    """Where a lesson's answers are kept (see :func:`answers`). Attributes: ``name`` (the
    Text box for the student's name), ``status`` (where the answers go), ``book`` (the
    :class:`fpexplore.teaching.AnswerBook`, None until a name is given), ``folder``,
    ``lesson``."""

    def __init__(self, lesson: str, folder: Path, student: str | None):
        self.lesson, self.folder, self.book = lesson, folder, None
        self._pending: list[dict] = []  # attempts made before a name was given
        self._widgets: list[weakref.ref] = []
        self.name = W.Text(
            placeholder="your name", description="your name", continuous_update=False
        )
        self.status = W.HTML()
        super().__init__([self.name, self.status])
        self.add_class("fpx-answers")
        self.name.observe(self._named, names="value")
        self.name.value = student or ""
        if not self.name.value:
            self._say()

    def _say(self) -> None:
        if self.book is None:
            text = (
                "Type your name and press Enter: your answers are then kept in "
                f"<code>{html.escape(str(self.folder))}</code>, one file per lesson and name."
            )
        else:
            n = len(self.book.attempts)
            text = (
                f"Answers of <b>{html.escape(self.book.student)}</b> kept in "
                f"<code>{html.escape(str(self.book.path))}</code> ({n} so far), written "
                "on every check."
            )
        self.status.value = _box(text, NOTE, "fpx-answers-status")

    def _named(self, change) -> None:
        name = " ".join(str(change["new"]).split())
        if not name:
            return
        try:
            book = AnswerBook(self.folder, self.lesson, name)
        except (ValueError, TypeError, OSError) as e:
            self.status.value = _box(html.escape(str(e)), BAD, "fpx-error")
            return
        book.attempts.extend(self._pending)
        if self._pending:
            book.save()
        self._pending, self.book = [], book
        for w in self.attached():
            w.restore(book.of(w.exercise))
        self._say()

    def attach(self, widget) -> None:
        """Keep ``widget``'s (an ExerciseWidget's) checks here, and show it answered as kept."""
        self._widgets.append(weakref.ref(widget))
        if self.book is not None:
            widget.restore(self.book.of(widget.exercise))

    def attached(self) -> list:
        """The exercise widgets of this lesson alive in this kernel."""
        alive = [w() for w in self._widgets]
        return [w for w in alive if w is not None]

    def record(self, exercise, answer, right: bool, event: str = "check") -> None:
        """Keep an attempt (written at once where a name is given, else when it is)."""
        if self.book is None:
            self._pending.append(attempt(exercise, answer, right, event))
            return
        try:
            self.book.record(exercise, answer, right, event)
        except OSError as e:
            text = f"Could not keep the answer: {html.escape(str(e))}"
            self.status.value = _box(text, BAD, "fpx-error")
            return
        self._say()


def answers(
    lesson: str | int, folder: str | os.PathLike = "answers", student: str | None = None
) -> AnswerSheet:
    """Keep a student's answers to a lesson's exercises in a file, written on every check.

    Parameters
    ----------
    lesson : str or int
        The lesson (``"01"`` .. ``"05"`` or 1 .. 5) whose exercises (``fpx.exercise``
        widgets made after this call) are kept.
    folder : str or path-like
        Where the files go, relative to the current folder (a notebook's own folder): one
        file ``<lesson>-<name>.json`` per student, made on the first check. Give another
        folder to keep them elsewhere; nothing is ever written anywhere else.
    student : str, optional
        The student's name; None: the box asks for it, filled with the name typed last for
        this folder (so that a kernel restart and Run All show the answers as they were).

    Returns
    -------
    AnswerSheet
        The name box. Once it has a name, the exercise widgets show the attempts kept.
    """
    lesson = lesson_number(lesson)
    if not isinstance(folder, (str, os.PathLike)) or not str(folder).strip():
        raise TypeError(f"folder must be a folder's path (str or Path), got {folder!r}")
    if student is not None and not isinstance(student, str):
        raise TypeError(f"student must be a name (str) or None, got {student!r}")
    if student is not None and not student.strip():  # (no file, and no box asking either)
        raise ValueError(f"student must be a name, got {student!r}; None: the box asks for it")
    path = Path(folder).expanduser().resolve()
    sheet = AnswerSheet(lesson, path, student or remembered_student(path))
    _SHEETS[lesson] = sheet
    return sheet


# ----------------------------------------------------------------------------- reveal


class Reveal(W.VBox):
    """Output held back until exercises are answered (see :func:`reveal`). Attributes:
    ``ids``, ``note`` (what to do first), ``output`` (the held-back output), ``revealed``."""

    def __init__(self, ids: tuple):
        self.ids = ids
        self.note = W.HTML()
        self.output = W.Output()
        self.revealed = False
        super().__init__([self.note, self.output])
        self.add_class("fpx-reveal")
        names = ", ".join(f"<b>{html.escape(i)}</b>" for i in ids)
        self.note.value = _box(
            f"Answer exercise {names} above (or press its <i>show answer</i>) to see what "
            "this cell shows.",
            NOTE,
            "fpx-reveal-note",
        )
        for i in ids:
            done(i).observe(self._update, names="answered")
        self._update()

    def _update(self, _change=None) -> None:
        self.revealed = all(done(i).answered for i in self.ids)
        self.output.layout.display = None if self.revealed else "none"
        self.note.layout.display = "none" if self.revealed else None

    def __enter__(self):
        from IPython.display import display

        display(self)
        self.output.__enter__()
        return self

    def __exit__(self, etype, evalue, tb):
        self.output.__exit__(None, None, None)
        return False  # an error in the block is the cell's, shown, never swallowed


def reveal(*ids: str) -> Reveal:
    """Hold back what a ``with`` block prints or displays until the exercises ``ids`` are
    answered right or their answer shown (in this kernel, or kept by :func:`answers`).

    ``with fpx.lessons.reveal("bits-float16"): print(...)`` shows a note in place of the
    output; the output appears when the exercise is answered. Inside the block, show tables
    and figures with ``display(...)``.
    """
    if not ids:
        raise ValueError("reveal needs at least one exercise id")
    for i in ids:
        get(i)  # a clear error for an unknown id
    return Reveal(tuple(ids))


# ----------------------------------------------------------------------------- paper


_HIDE_WHEN_LIVE = (
    "<style>.jp-OutputArea:has(.fpx-exercise) .fpx-print-form,"
    ".output:has(.fpx-exercise) .fpx-print-form{display:none}</style>"
)


def print_form(ex) -> dict:
    """The plain form of an exercise (its question, a blank for the answer) as a display
    bundle: HTML (hidden where the live widget beside it renders), Markdown and text."""
    md = exercise_markdown(ex)
    return {
        "text/html": f'<div class="fpx-print-form">{_HIDE_WHEN_LIVE}{exercise_html(ex)}</div>',
        "text/markdown": md,
        "text/plain": exercise_markdown(ex, escape=False),
    }


def answer_key(lesson: str | int, seed: int | None = None) -> None:
    """Print every question of ``lesson`` with its answer and explanation (``seed``: the
    variant's numbers, None: the lesson's own)."""
    print(answer_key_text(lesson_number(lesson), seed=seed))


def handout(
    lesson: str | int, path: str | os.PathLike | None = None, seed: int | None = None
) -> Path:
    """Write a printable sheet of ``lesson``'s exercises (a blank for each answer).

    Parameters
    ----------
    lesson : str or int
        ``"01"`` .. ``"05"`` or 1 .. 5.
    path : str or path-like, optional
        The file to write: ``.html`` (a page to print) or ``.md`` (Markdown); default
        ``handout-<lesson>.html`` in the current folder.
    seed : int, optional
        The variant's numbers (None: the lesson's own).

    Returns
    -------
    Path
        The file written.
    """
    lesson = lesson_number(lesson)
    if path is None:
        path = f"handout-{lesson}.html"
    if not isinstance(path, (str, os.PathLike)) or not str(path).strip():
        raise TypeError(f"path must be a file's path (str or Path) or None, got {path!r}")
    out = Path(path).expanduser()
    suffix = out.suffix.lower()
    if suffix not in (".html", ".htm", ".md"):
        raise ValueError(f"path must end in .html or .md, got {str(path)!r}")
    text = handout_text(lesson, seed=seed, fmt="markdown" if suffix == ".md" else "html")
    out.write_text(text, encoding="utf-8")
    return out.resolve()


# ----------------------------------------------------------------------------- the class


@dataclass
class ClassSummary:
    """A class's answers (see :func:`summary`). Attributes: ``table`` (one row per student
    and exercise: attempts, right, first_try, shown, answer), ``exercises`` (one row per
    exercise: students who tried, right, first-try rate, answers shown) and ``figure``."""

    table: object
    exercises: object
    figure: object

    def _repr_html_(self) -> str:
        buf = io.BytesIO()
        self.figure.savefig(buf, format="png", dpi=80)
        png = base64.b64encode(buf.getvalue()).decode()
        return self.exercises.to_html(index=False) + f'<img src="data:image/png;base64,{png}">'


_STATES = ("first try", "right later", "answer shown", "not yet right")
_STATE_COLORS = ("#009E73", "#56B4E9", "#E69F00", "#D55E00")


def _state(row) -> int:
    if row["first_try"]:
        return 0
    if row["right"]:
        return 1
    return 2 if row["shown"] else 3


def summary(folder: str | os.PathLike = "answers") -> ClassSummary:
    """A class's answers: every answers file under ``folder`` (subfolders too: collect the
    students' ``answers`` folders into one) as tables and a figure.

    Parameters
    ----------
    folder : str or path-like
        The folder holding the ``<lesson>-<name>.json`` files.

    Returns
    -------
    ClassSummary
        ``table`` (pandas, a row per student, exercise and seed: attempts, right, first_try,
        shown, the last answer), ``exercises`` (a row per exercise and seed, another seed
        being another question: students, right, first-try rate, shown) and ``figure`` (who
        answered what, and the first-try rate per question).
    """
    from ._optional import require

    pd = require("pandas", "fpx.lessons.summary")
    Figure = require("matplotlib.figure", "fpx.lessons.summary").Figure
    skipped: list = []
    rows = tally(read_attempts(folder, skipped))
    damaged = (
        f"{len(skipped)} file(s) named as answers files could not be read (damaged, or not "
        f"fpexplore's), e.g. {str(skipped[0])!r}"
        if skipped
        else ""
    )
    if not rows:
        raise ValueError(
            f"folder {str(folder)!r} holds no answers files" + f": {damaged}" * bool(damaged)
        )
    if skipped:  # a student left out of the tables without a word would read as not trying
        warnings.warn(f"fpx.lessons.summary: {damaged}; left out of the summary", stacklevel=2)
    order = {e.id: k for k, e in enumerate(exercises())}
    table = pd.DataFrame(rows)
    table["seed"] = pd.array([r["seed"] for r in rows], dtype="Int64")  # (None: NA, not NaN)
    table["_order"] = table["exercise"].map(order).fillna(len(order))
    table = table.sort_values(["_order", "seed", "student"], kind="stable", na_position="first")
    table = table.drop(columns="_order").reset_index(drop=True)
    # an exercise at another seed is another question (homework): one row each, so a
    # student who answered both counts once in each (they were counted twice in one)
    per = table.groupby(["lesson", "exercise", "seed"], sort=False, dropna=False).agg(
        students=("student", "nunique"),
        right=("right", "sum"),
        first_try=("first_try", "sum"),
        shown=("shown", "sum"),
    )
    per["first_try_rate"] = per["first_try"] / per["students"]
    per = per.reset_index()
    fig = Figure(figsize=(8.0, 3.2 + 0.22 * table["student"].nunique()), layout="constrained")
    _draw_summary(fig, table, per)
    return ClassSummary(table, per, fig)


def _question(row) -> tuple:
    """(exercise, seed: an int or None) of a row of the summary's tables."""
    try:
        return row["exercise"], int(row["seed"])
    except (TypeError, ValueError):  # (pandas' NA, None)
        return row["exercise"], None


def _draw_summary(fig, table, per) -> None:
    from matplotlib.colors import ListedColormap

    grid, bars = fig.subplots(1, 2, width_ratios=[3, 2])
    students = sorted(table["student"].unique())
    keys = [_question(r) for _, r in per.iterrows()]
    ids = [e if s is None else f"{e} (seed {s})" for e, s in keys]
    cells = [[float("nan")] * len(ids) for _ in students]
    for _, r in table.iterrows():
        cells[students.index(r["student"])][keys.index(_question(r))] = _state(r)
    grid.imshow(cells, cmap=ListedColormap(_STATE_COLORS), vmin=-0.5, vmax=3.5, aspect="auto")
    grid.set_xticks(range(len(ids)), ids, rotation=60, ha="right", fontsize=7)
    grid.set_yticks(range(len(students)), students, fontsize=7)
    grid.set_title("who answered what (blank: not tried)", fontsize=9)
    for state, color in zip(_STATES, _STATE_COLORS):
        grid.plot([], [], "s", color=color, label=state)
    fig.legend(fontsize=7, loc="outside lower center", ncol=4, frameon=False)
    bars.barh(range(len(ids)), per["first_try_rate"], color=_STATE_COLORS[0])
    bars.set_yticks(range(len(ids)), ids, fontsize=7)
    bars.invert_yaxis()
    bars.set_xlim(0, 1)
    bars.set_xlabel("first-try rate (of the students who tried)", fontsize=8)
    bars.set_title("right at the first try", fontsize=9)
