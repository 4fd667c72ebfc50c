"""Exercises on paper: each exercise as plain Markdown or HTML (its question and a blank for
the answer), a lesson's printable handout and its answer key. Pure text; writing the files is
:mod:`fpexplore.classroom`'s."""

from __future__ import annotations

import html
import re

from .exercise import LESSONS, Exercise, exercises

__all__ = ["BLANK", "answer_key_text", "exercise_html", "exercise_markdown", "handout_text"]

#: the line left for an answer on paper
BLANK = "Answer: " + "_" * 32


def _escape(text: str) -> str:
    """Text as Markdown shows it literally (``2**-14`` stays ``2**-14``)."""
    return re.sub(r"([\\`*_\[\]<>#|])", r"\\\1", text)


def _heading(ex: Exercise) -> str:
    seed = "" if ex.seed is None else f", variant {ex.seed}"
    return f"Exercise {ex.id} (lesson {ex.lesson}{seed})"


def exercise_markdown(ex: Exercise, answer: bool = False, escape: bool = True) -> str:
    """One exercise as Markdown: its heading, question, choices and a blank for the answer
    (``answer=True``: the answer and the explanation instead of the blank; ``escape=False``:
    plain text to print, its ``*`` and ``_`` left as typed)."""
    _md = _escape if escape else str
    lines = [f"**{_md(_heading(ex))}**: {_md(ex.title)}", "", _md(ex.question), ""]
    if ex.choices:
        lines += [f"- [ ] {_md(c)}" for c in ex.choices] + [""]
    if answer:
        lines += [f"Answer: `{ex.answer_text()}`", "", _md(ex.explanation), ""]
    else:
        lines += [_md(BLANK), ""]
    return "\n".join(lines)


def exercise_html(ex: Exercise, answer: bool = False) -> str:
    """One exercise as HTML (the same content as :func:`exercise_markdown`), in a
    ``<div class="fpx-print">``."""
    e = html.escape
    parts = [
        f"<p><b>{e(_heading(ex))}</b>: {e(ex.title)}</p>",
        f'<p class="fpx-print-question">{e(ex.question)}</p>',
    ]
    if ex.choices:
        parts.append("<ul>" + "".join(f"<li>&#9744; {e(c)}</li>" for c in ex.choices) + "</ul>")
    if answer:
        parts.append(f"<p>Answer: <code>{e(ex.answer_text())}</code></p>")
        parts.append(f"<p>{e(ex.explanation)}</p>")
    else:
        parts.append(f'<p class="fpx-blank">{e(BLANK)}</p>')
    return '<div class="fpx-print">' + "".join(parts) + "</div>"


def _title(lesson: str, what: str) -> str:
    return f"Lesson {lesson}: {LESSONS[lesson]} ({what})"


def handout_text(lesson: str, seed=None, fmt: str = "markdown") -> str:
    """The printable sheet of a lesson's exercises: a line for the name, then each question
    with a blank for its answer, as ``"markdown"`` or ``"html"`` (a whole page)."""
    exs = exercises(lesson, seed=seed)
    lesson = exs[0].lesson
    if fmt == "markdown":
        body = "\n".join(f"{i}. {exercise_markdown(ex)}" for i, ex in enumerate(exs, 1))
        return f"# {_title(lesson, 'exercises')}\n\nName: {_escape('_' * 32)}\n\n{body}"
    if fmt != "html":
        raise ValueError(f"fmt must be 'markdown' or 'html', got {fmt!r}")
    title = html.escape(_title(lesson, "exercises"))
    items = "".join(f"<li>{exercise_html(ex)}</li>" for ex in exs)
    return (
        f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><title>{title}</title>'
        "<style>body{font-family:sans-serif;max-width:46em;margin:2em auto;line-height:1.4}"
        "li{margin-bottom:1.6em;break-inside:avoid}.fpx-blank{margin-top:1.2em}</style>"
        f"</head><body><h1>{title}</h1><p>Name: {'_' * 32}</p><ol>{items}</ol></body></html>\n"
    )


def answer_key_text(lesson: str, seed=None) -> str:
    """Every question of a lesson with its answer and explanation, as plain text to print."""
    exs = exercises(lesson, seed=seed)
    body = "\n".join(
        f"{i}. {exercise_markdown(ex, answer=True, escape=False)}" for i, ex in enumerate(exs, 1)
    )
    return f"{_title(exs[0].lesson, 'answer key')}\n\n{body}"
