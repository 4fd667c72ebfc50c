"""Answers that last: one student's attempts at one lesson's exercises, kept in a small JSON
file (``<folder>/<lesson>-<student>.json``) written on every check, read back by a new kernel
and tallied for the class.

Pure: the standard library only (json, pathlib); the widgets and the class summary's table and
figure are :mod:`fpexplore.classroom`'s.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from datetime import datetime, timezone
from pathlib import Path

from .. import checks
from .exercise import lesson_number

__all__ = [
    "FILE_FORMAT",
    "NO_ANSWER_SHOWN",
    "AnswerBook",
    "attempt",
    "lesson_number",
    "read_attempts",
    "remembered_student",
    "tally",
]

#: a tally's ``answer`` where the student pressed "show answer" and checked no answer
NO_ANSWER_SHOWN = "none (answer shown)"
#: the ``format`` field of an answers file
FILE_FORMAT = "fpexplore answers 1"
#: the file in an answers folder that remembers the last student name typed there
STUDENT_FILE = "student.txt"


def _folder(folder) -> Path:
    if not isinstance(folder, (str, os.PathLike)) or not str(folder).strip():
        raise TypeError(f"folder must be a folder's path (str or Path), got {folder!r}")
    return Path(folder).expanduser().resolve()


def _student(student) -> str:
    if not isinstance(student, str):
        raise TypeError(f"student must be a name (str), got {student!r}")
    name = " ".join(student.split())
    if not name:
        raise ValueError("student must be a name, got an empty one")
    if len(name) > 80:
        raise ValueError(f"student must be a name of at most 80 characters, got {len(name)}")
    return name


def _slug(name: str) -> str:
    slug = re.sub(r"[^A-Za-z0-9_.-]+", "_", name).strip("._")
    return slug or "student"


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def attempt(exercise, answer, right: bool, event: str = "check") -> dict:
    """One attempt at ``exercise`` as an answers file keeps it, timed now (UTC)."""
    checks.choice("event", event, ("check", "show"))
    return {
        "exercise": exercise.id,
        "seed": exercise.seed,
        "event": event,
        "answer": None if answer is None else str(answer),
        "right": bool(right),
        "time": _now(),
    }


class AnswerBook:
    """One student's attempts at one lesson, kept in ``<folder>/<lesson>-<student>.json``
    (``...-<student>-<hash of the name>.json`` where that file holds another name spelt the
    same in a file name, as "Zoë" and "Zo", or two names in another script).

    Each :meth:`record` appends an attempt (``exercise``, ``seed``, ``event``: ``"check"`` or
    ``"show"``, ``answer``, ``right``, ``time``) and rewrites the file at once (atomically),
    so a kernel restart loses nothing. Nothing is written before the first attempt.
    """

    def __init__(self, folder, lesson, student: str):
        self.folder = _folder(folder)
        self.lesson = lesson_number(lesson)
        self.student = _student(student)
        self.path = self.folder / f"{self.lesson}-{_slug(self.student)}.json"
        self.attempts: list[dict] = []
        data = self._load()
        if data is not None and data.get("student") != self.student:
            # another name with the same file name ("Zoe" and "Zoë"): a file of this name's own
            tag = hashlib.sha256(self.student.encode()).hexdigest()[:10]
            self.path = self.path.with_name(f"{self.path.stem}-{tag}.json")
            data = self._load()
        if data is not None:
            self.attempts = list(data["attempts"])

    def _load(self) -> dict | None:
        if not self.path.is_file():
            return None
        data = _read(self.path)
        if data is None:
            raise ValueError(f"{self.path} is not an fpexplore answers file")
        return data

    def record(self, exercise, answer, right: bool, event: str = "check") -> dict:
        """Keep an attempt at ``exercise`` (an :class:`Exercise`) and write the file."""
        a = attempt(exercise, answer, right, event)
        self.attempts.append(a)
        self.save()
        return a

    def of(self, exercise) -> list[dict]:
        """The attempts at ``exercise`` (same id and seed), oldest first."""
        return [
            a
            for a in self.attempts
            if a["exercise"] == exercise.id and a.get("seed") == exercise.seed
        ]

    def save(self) -> Path:
        """Write the file (the folder is made if missing); return its path."""
        self.folder.mkdir(parents=True, exist_ok=True)
        data = {
            "format": FILE_FORMAT,
            "lesson": self.lesson,
            "student": self.student,
            "attempts": self.attempts,
        }
        tmp = self.path.with_suffix(".json.tmp")
        tmp.write_text(json.dumps(data, indent=1), encoding="utf-8")
        os.replace(tmp, self.path)
        (self.folder / STUDENT_FILE).write_text(self.student + "\n", encoding="utf-8")
        return self.path

    def __repr__(self) -> str:
        return f"AnswerBook({str(self.path)!r}, {len(self.attempts)} attempts)"


def _read(path: Path) -> dict | None:
    """An answers file's content, or None where the file is not one."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return None
    if not isinstance(data, dict) or data.get("format") != FILE_FORMAT:
        return None
    if not isinstance(data.get("attempts"), list):
        return None
    # a hand-edited file is damaged where a field is not of its kind (pass 26: a list seed
    # stopped the class summary; "right": "false" counted as right)
    if not all(isinstance(data.get(k), str) for k in ("student", "lesson")):
        return None
    return data if all(map(_attempt_kept, data["attempts"])) else None


def _attempt_kept(a) -> bool:
    """An attempt as :func:`attempt` writes it: each field of its kind."""
    seed = a.get("seed") if isinstance(a, dict) else None
    return (
        isinstance(a, dict)
        and isinstance(a.get("exercise"), str)
        and (seed is None or (isinstance(seed, int) and not isinstance(seed, bool)))
        and a.get("event", "check") in ("check", "show")
        and isinstance(a.get("answer"), (str, type(None)))
        and isinstance(a.get("right"), bool)
    )


def remembered_student(folder) -> str | None:
    """The student name last typed for the answers kept in ``folder`` (None if none)."""
    path = _folder(folder) / STUDENT_FILE
    try:
        name = path.read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError):
        return None
    return name or None


def read_attempts(folder, skipped: list | None = None) -> list[dict]:
    """Every attempt kept in the answers files under ``folder`` (subfolders included), one
    dict per attempt with its file's ``student`` and ``lesson``; files that are not answers
    files are passed over, and those named as one (``<lesson>-<name>.json``: damaged,
    unreadable) appended to ``skipped`` where given."""
    root = _folder(folder)
    if not root.is_dir():
        raise ValueError(f"folder {str(folder)!r} is not a folder")
    rows = []
    for path in sorted(root.rglob("*.json")):
        data = _read(path)
        if data is None:
            if skipped is not None and re.match(r"\d\d-.+\.json\Z", path.name):
                skipped.append(path)
            continue
        rows += [
            {"student": data["student"], "lesson": data["lesson"], **a} for a in data["attempts"]
        ]
    return rows


def tally(rows: list[dict]) -> list[dict]:
    """Per student and exercise (in the order first seen): ``attempts`` (checks), ``right``
    (ever answered right), ``first_try`` (the first check right, no answer shown before it),
    ``shown`` ("show answer" pressed), ``answer`` (the last checked answer; where none was
    checked, :data:`NO_ANSWER_SHOWN`)."""
    out: dict[tuple, dict] = {}
    for r in rows:
        key = (r["student"], r["lesson"], r["exercise"], r.get("seed"))
        t = out.setdefault(
            key,
            {
                "student": r["student"],
                "lesson": r["lesson"],
                "exercise": r["exercise"],
                "seed": r.get("seed"),
                "attempts": 0,
                "right": False,
                "first_try": False,
                "shown": False,
                "answer": None,
            },
        )
        if r.get("event") == "show":
            t["shown"] = True
            continue
        if t["attempts"] == 0 and not t["shown"]:
            t["first_try"] = bool(r.get("right"))
        t["attempts"] += 1
        t["right"] = t["right"] or bool(r.get("right"))
        t["answer"] = r.get("answer")
    for t in out.values():
        if t["attempts"] == 0:  # "show answer" pressed, nothing checked: said, not left blank
            t["answer"] = NO_ANSWER_SHOWN
    return list(out.values())
