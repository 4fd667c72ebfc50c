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

Modules: ``exercise`` (the Exercise class, the registry, what the exercise modules share),
``lesson01_bits``, ``lesson02_sums``, ``lesson03_fma``, ``lesson04_tolerances``,
``lesson05_gpu`` (each lesson's exercises; importing them registers them, in lesson order),
``numbers`` (typed numbers read exactly, values as text), ``bits`` (bit patterns),
``sum_trace`` (the traced sum).
"""

from __future__ import annotations

from . import (  # noqa: F401  (importing a lesson's module registers its exercises)
    lesson01_bits,
    lesson02_sums,
    lesson03_fma,
    lesson04_tolerances,
    lesson05_gpu,
)
from .bits import BIT_FORMATS, bit_fields, bits_of
from .exercise import KINDS, LESSONS, Exercise, exercises, get
from .numbers import parse_number
from .sum_trace import MAX_STEP_TERMS, STEP_ORDERS, SumStep, SumTrace, sum_steps

__all__ = [
    "BIT_FORMATS",
    "KINDS",
    "LESSONS",
    "MAX_STEP_TERMS",
    "STEP_ORDERS",
    "Exercise",
    "SumStep",
    "SumTrace",
    "bit_fields",
    "bits_of",
    "exercises",
    "get",
    "parse_number",
    "sum_steps",
]
