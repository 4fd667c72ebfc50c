"""The lessons' exercises, a summation traced step by step, and bit patterns taken apart.

Pure: NumPy and fpexplore's core (no widgets, no figures); the widgets of
:mod:`fpexplore.lessons` show what this package computes.

- :func:`exercises` lists the :class:`Exercise` objects of the lessons (notebooks 01-05); each
  computes its answer from the exact core and the orders when asked (never typed in) and grades
  an answer exactly (bits, ulps, integers, a choice) unless its question names a tolerance.
  ``seed=k`` gives a variant with other numbers (the answer follows them).
- :func:`sum_steps` traces ``fpx.sum(x, order)`` one addition at a time, bit for bit, with the
  exact sum of what each partial sum covers.
- :func:`bit_fields` / :func:`bits_of` take a bit pattern of a format (float16, bfloat16, tf32,
  float32, float64 and the FP8 roundings) apart, and give the pattern of a value.
- :class:`AnswerBook` keeps one student's attempts at a lesson in a JSON file written on every
  check; :func:`read_attempts` and :func:`tally` read a class's files back.
- :func:`handout_text` / :func:`answer_key_text`: a lesson's exercises on paper (a blank for
  each answer) and its answer key; :func:`exercise_markdown` / :func:`exercise_html` one
  exercise as text.

Modules: ``exercise`` (the Exercise class, the registry, what the exercise modules share),
``lesson01_bits``, ``lesson02_sums``, ``lesson03_fma``, ``lesson04_tolerances``,
``lesson05_gpu`` (each lesson's exercises; importing them registers them, in lesson order),
``numbers`` (typed numbers read exactly, values as text), ``bits`` (bit patterns),
``sum_trace`` (the traced sum), ``answers`` (answers files: kept, read, tallied),
``sheets`` (exercises as Markdown and HTML: handouts, answer keys).
"""

from __future__ import annotations

from . import (  # noqa: F401  (importing a lesson's module registers its exercises)
    lesson01_bits,
    lesson02_sums,
    lesson03_fma,
    lesson04_tolerances,
    lesson05_gpu,
)
from .answers import AnswerBook, attempt, lesson_number, read_attempts, remembered_student, tally
from .bits import BIT_FORMATS, bit_fields, bit_formats, bits_of
from .exercise import KINDS, LESSONS, Exercise, exercises, get
from .numbers import exact_text, parse_number
from .sheets import answer_key_text, exercise_html, exercise_markdown, handout_text
from .sum_trace import MAX_STEP_TERMS, STEP_ORDERS, SumStep, SumTrace, sum_steps

__all__ = [
    "AnswerBook",
    "BIT_FORMATS",
    "bit_formats",
    "KINDS",
    "LESSONS",
    "MAX_STEP_TERMS",
    "STEP_ORDERS",
    "Exercise",
    "SumStep",
    "SumTrace",
    "answer_key_text",
    "attempt",
    "bit_fields",
    "bits_of",
    "exact_text",
    "exercise_html",
    "exercise_markdown",
    "exercises",
    "get",
    "handout_text",
    "lesson_number",
    "parse_number",
    "read_attempts",
    "remembered_student",
    "sum_steps",
    "tally",
]
