"""The exercises' core: :class:`Exercise` (a question, its computed answer, exact grading,
hint, explanation and figure), the registry (:func:`registered`, :func:`get`,
:func:`exercises`) and what the lessons' exercise modules share (seeded choices, figures)."""

from __future__ import annotations

import math
import re
import zlib
from dataclasses import dataclass, field
from decimal import Decimal
from fractions import Fraction

import numpy as np

from .. import checks
from ..bits import hex_string, to_bits
from ..formats import as_format, format_info, next_down, next_up
from ..orders import sum as order_sum
from .bits import bit_fields, bits_of, ordered
from .numbers import exact_text, parse_number, rounded, same, text_of

__all__ = [
    "KINDS",
    "LESSONS",
    "Exercise",
    "atomic_runs",
    "bars",
    "bits_figure",
    "closer",
    "decimal",
    "exercises",
    "get",
    "number_line",
    "pick",
    "registered",
    "round_decimal",
]

#: the lessons (notebooks/NN_*.ipynb) the exercises belong to
LESSONS = {
    "01": "bits and ulps",
    "02": "summation orders",
    "03": "fused multiply-add",
    "04": "tolerances and testing",
    "05": "GPU arithmetic",
}
#: how an answer is graded
KINDS = {
    "value": "a number, rounded to the question's format: right when it rounds to the answer",
    "exact": "a number equal to the answer exactly (the format's values are short binary "
    "fractions: type every digit, or a power of two like 2**-20)",
    "hex": "a bit pattern in hexadecimal, equal to the answer's",
    "integer": "a whole number, equal to the answer",
    "choice": "one of the choices",
    "approx": "a number within the relative tolerance the question names",
}


@dataclass(eq=False)
class Exercise:
    """One exercise of a lesson.

    Attributes
    ----------
    id, lesson : str
        A stable name (``"ulp-float32"``) and the lesson number (``"01"`` .. ``"05"``).
    question, hint : str
    kind : str
        How the answer is graded, one of :data:`KINDS`.
    fmt : str or None
        The format a ``value``/``exact``/``hex`` answer is graded in.
    choices : tuple of str or None
        The choices of a multiple-choice question (None otherwise).
    tolerance : float or None
        The relative tolerance an ``approx`` question names (None otherwise).
    seed : int or None
        None: the lesson's own numbers; an integer: a variant with other numbers.
    """

    id: str
    lesson: str
    title: str
    question: str
    kind: str
    compute: object = field(repr=False)  # () -> dict with "answer" and the explanation's numbers
    hint: str = ""
    explanation_template: str = field(default="", repr=False)
    fmt: str | None = None
    choices: tuple | None = None
    tolerance: float | None = None
    seed: int | None = None
    figure_spec: object = field(default=None, repr=False)  # (facts) -> dict for the figure
    _facts: dict | None = field(default=None, repr=False)

    def facts(self) -> dict:
        """The computed answer and the numbers the explanation and figure show (cached)."""
        if self._facts is None:
            self._facts = dict(self.compute())
        return self._facts

    def answer(self):
        """The answer, computed (a NumPy scalar of ``fmt``, an int, a float or a choice)."""
        return self.facts()["answer"]

    def answer_text(self) -> str:
        """The answer as one would type it."""
        a = self.answer()
        if self.kind == "hex":
            return hex_string(a)
        if self.kind == "exact":
            return exact_text(a)
        if self.kind == "approx":
            return f"{float(a):.3g}"
        if self.kind in ("integer", "choice"):
            return str(a)
        return text_of(a)

    @property
    def explanation(self) -> str:
        """Why the answer is what it is, with the computed numbers."""
        return self.explanation_template.format(**{**self.facts(), "answer": self.answer_text()})

    def figure(self) -> dict | None:
        """What the explanation's small figure shows: ``{"kind": "bars" | "curve" |
        "bits" | "numberline", ...}`` (drawn by fpexplore.lessons)."""
        return None if self.figure_spec is None else self.figure_spec(self.facts())

    def grade(self, answer) -> tuple[bool, str]:
        """(right, a sentence for the student). Never raises for a typed answer: text where
        a number is asked or an empty box is a friendly sentence."""
        try:
            return self._grade(answer)
        except ValueError as e:
            return False, str(e)

    def check(self, answer) -> bool:
        """True when ``answer`` is right (graded as :attr:`kind` says)."""
        return self.grade(answer)[0]

    def _grade(self, given) -> tuple[bool, str]:
        a = self.answer()
        if self.kind == "choice":
            text = _typed(given).strip().lower()
            if not text:
                raise ValueError("pick one of the choices first")
            names = {c.lower(): c for c in self.choices}
            if text not in names:
                raise ValueError(
                    f"{checks.shown(given, 40)} is not one of: " + ", ".join(self.choices)
                )
            ok = names[text] == a
            return ok, "Correct!" if ok else f"Not yet: it is not {names[text]}."
        if self.kind == "hex":
            return self._grade_hex(given, a)
        if self.kind == "integer":
            v = _unsigned_zero(parse_number(given))
            if isinstance(v, float) or v.denominator != 1:
                raise ValueError(f"{checks.shown(given, 40)} is not a whole number")
            ok = int(v) == int(a)
            shown = str(int(v)) if abs(v) < 10**30 else _short(v)
            too = f"Not yet: {shown} is too {'low' if v < a else 'high'}."
            return ok, "Correct!" if ok else too + _sign_note(v, a)
        v = parse_number(given)
        if self.kind == "approx":
            v = _unsigned_zero(v)
            if isinstance(v, float):
                raise ValueError("type a finite number")
            ref = Fraction(float(a))
            ok = abs(v - ref) <= Fraction(self.tolerance) * abs(ref)
            if ok:
                return True, f"Correct! (within {self.tolerance:.0%}; the answer is {float(a):.4g})"
            too = f"Not yet: {_short(v)} is too {'low' if v < ref else 'high'}."
            return False, too + _sign_note(v, ref)
        mine = rounded(v, self.fmt)
        if self.kind == "exact":
            if (
                same(v, a)
                if isinstance(v, float)
                else (math.isfinite(float(a)) and v == Fraction(float(a)))
            ):
                return True, "Correct!"
            if same(mine, a):
                return False, (
                    f"Close: that rounds to the answer in {self.fmt}, but type its exact value "
                    "(every digit, or a form like 3*2**-10)."
                )
            return False, self._off_by(mine, a, v)
        ok = same(mine, a)
        return ok, "Correct!" if ok else self._off_by(mine, a, v)

    def _off_by(self, mine, a, typed) -> str:
        if math.isnan(float(mine)) and not math.isnan(float(a)):
            info, nan = format_info(self.fmt), isinstance(typed, float) and math.isnan(typed)
            if nan and info.saturates:  # (FP6, FP4: pass 26 said "in float4_e2m1 that is NaN")
                return f"Not yet: NaN is no number, and {self.fmt} has no NaN (nor infinity)."
            past = (  # (pass 26: -inf was "past its largest value")
                f" (beyond ±{info.finite_max:g}, its largest magnitude: {self.fmt} has no infinity)"
                if info.finite_max is not None and not nan
                else ""
            )
            return f"Not yet: in {self.fmt} that is NaN{past}."
        if math.isnan(float(mine)) or math.isnan(float(a)):
            return "Not yet."
        if float(mine) == 0 == float(a):  # (not the same: the zeros of the two signs)
            return (
                f"Not yet: that is {text_of(mine)}, the zero of the other sign: the answer is "
                f"{text_of(a)} (its sign bit is {int(math.copysign(1, float(a)) < 0)})."
            )
        d = ordered(bits_of(mine, self.fmt), self.fmt) - ordered(bits_of(a, self.fmt), self.fmt)
        where = "above" if d > 0 else "below"
        return (
            f"Not yet: that is {abs(d)} {self.fmt} ulp{'s' * (abs(d) != 1)} {where} the answer."
            + _sign_note(mine, a)
        )

    def _grade_hex(self, given, a) -> tuple[bool, str]:
        if isinstance(given, np.generic) and given.dtype == np.asarray(a).dtype:
            given = hex_string(given)  # the answer as a value of the format: its bits
        width = 4 * (len(hex_string(a)) - 2)
        if isinstance(given, (int, np.integer)) and not isinstance(given, (bool, np.bool_)):
            given = int(given)  # the pattern itself, not its decimal digits read as hex
            if not 0 <= given < 2**width:
                said = checks.shown(given, 40)
                raise ValueError(f"{said} is not a {self.fmt} bit pattern (0 to 2**{width} - 1)")
            given = hex(given)
        text = _typed(given).strip().lower().replace(" ", "").replace("_", "")  # (0.0: pass 20)
        if not text:
            raise ValueError("the box is empty: type the bits in hexadecimal, e.g. 0x3c00")
        digits = text[2:] if text.startswith("0x") else text
        if not re.fullmatch(r"[0-9a-f]+", digits):
            raise ValueError(f"{checks.shown(given, 40)} is not hexadecimal: e.g. 0x3c00")
        bits = int(digits, 16)
        if bits >= 2**width:  # (as a number typed: not a pattern of the format)
            raise ValueError(
                f"{checks.shown(given, 40)} is not a {self.fmt} bit pattern ({width} bits: "
                f"0x0 to {hex(2**width - 1)})"
            )
        want = int(to_bits(a))
        if bits == want:
            return True, "Correct!"
        diff = bin(bits ^ want).count("1")
        bits_differ = f"{diff} bit{'s' * (diff != 1)} differ{'s' * (diff == 1)}"
        return False, f"Not yet: {bits_differ} from the answer."

    def __repr__(self) -> str:
        return f"Exercise({self.id!r}, lesson {self.lesson}: {self.title})"


def _unsigned_zero(v):
    """A typed -0 as the number 0 (integers and approximate answers have no sign of zero)."""
    return Fraction(0) if isinstance(v, float) and v == 0 else v


def _sign_note(given, answer) -> str:
    """A word about the sign where a typed number and the answer have opposite signs."""
    g, a = _sign(given), _sign(answer)
    if g == 0 or a == 0 or g == a:
        return ""
    return f" Check the sign: the answer is {'negative' if a < 0 else 'positive'}."


def _sign(v) -> int:
    """-1, 0 or 1 (0 for zero and NaN), exactly: a typed 1e400 is a Fraction no float holds."""
    try:
        return int(v > 0) - int(v < 0)
    except (TypeError, ArithmeticError):
        return 0


def _short(v) -> str:
    """A typed number in a sentence: three digits, however large it is."""
    try:
        f = float(v)
    except OverflowError:
        return "a number beyond 1.8e308" if v > 0 else "a number below -1.8e308"
    if f == 0 != v:  # (a typed 1e-400: no float64 is that small)
        return "a positive number below 5e-324" if v > 0 else "a negative number above -5e-324"
    return f"{f:.3g}"


_DEFS: dict[str, tuple[str, object]] = {}


def registered(id: str, lesson: str):
    def register(fn):
        _DEFS[id] = (lesson, fn)
        return fn

    return register


def _rng(id: str, seed):
    """None for the lesson's own numbers, else a generator of the seed (and the id, so that
    two exercises with one seed differ)."""
    return None if seed is None else np.random.default_rng([seed, zlib.crc32(id.encode())])


def get(id: str, seed=None) -> Exercise:
    """The exercise ``id`` (its numbers from ``seed``; None: the lesson's own)."""
    checks.choice("exercise", id, tuple(_DEFS))
    if seed is not None:
        seed = checks.seed(seed)
    lesson, fn = _DEFS[id]
    ex = fn(_rng(id, seed))
    ex.id, ex.lesson, ex.seed = id, lesson, seed
    return ex


def lesson_number(lesson) -> str:
    """``"01"`` .. ``"05"`` from ``"01"``, ``"1"``, 1 or NumPy's 1 (a clear error naming
    ``lesson``): where a lesson enters, parsed once."""
    if isinstance(lesson, (bool, np.bool_)):
        raise TypeError(f"lesson must be a lesson number such as '01', got {lesson!r}")
    if isinstance(lesson, (int, np.integer)) or (
        isinstance(lesson, str) and lesson.strip().isdigit()
    ):
        lesson = f"{int(lesson):02d}"
    return checks.choice("lesson", lesson, tuple(LESSONS))


def exercises(lesson: str | int | None = None, seed: int | None = None) -> list[Exercise]:
    """The lessons' exercises, in lesson order.

    Parameters
    ----------
    lesson : str or int, optional
        Only this lesson's (``"01"`` .. ``"05"``, or 1 .. 5).
    seed : int, optional
        A variant with other numbers for every exercise (None: the lessons' own numbers).

    Returns
    -------
    list of Exercise
        Each with id, lesson, question, hint, choices, answer(), check(answer), explanation.
    """
    if lesson is not None:
        lesson = lesson_number(lesson)
    return [get(i, seed) for i, (les, _) in _DEFS.items() if lesson in (None, les)]


def pick(rng, options, default):
    return default if rng is None else options[int(rng.integers(len(options)))]


def decimal(rng, lo: float, hi: float, digits: int, default: str) -> str:
    """A decimal with ``digits`` significant digits, log-uniform in [lo, hi)."""
    if rng is None:
        return default
    v = math.exp(rng.uniform(math.log(lo), math.log(hi)))
    return f"{float(f'{v:.{digits - 1}e}'):.{digits}g}"


def round_decimal(text: str, fmt: str):
    return as_format(Decimal(text), fmt)


def number_line(fmt: str, center, marks: dict, n: int = 3) -> dict:
    """A number line of ``fmt`` around ``center``: its neighbours and the labelled marks."""
    c = np.asarray(center).astype(format_info(fmt).dtype)[()]
    ticks = [float(c)]
    up = down = c
    for _ in range(n):
        up, down = next_up(up), next_down(down)
        ticks += [float(up), float(down)]
    return {
        "kind": "numberline",
        "ticks": sorted(t for t in ticks if math.isfinite(t)),
        "marks": {k: float(v) for k, v in marks.items()},
        "title": f"neighbouring {fmt} values",
    }


def bars(labels, values, ylabel: str, title: str = "", highlight=None) -> dict:
    return {
        "kind": "bars",
        "labels": list(labels),
        "values": [float(v) for v in values],
        "ylabel": ylabel,
        "title": title,
        "highlight": highlight,
    }


def bits_figure(v, fmt: str, title: str = "") -> dict:
    bits = bit_fields(bits_of(v, fmt), fmt)
    return {
        "kind": "bits",
        "bits": bits["bit_string"],
        "ebits": bits["exponent_bits"],
        "title": title or f"{fmt} bits: sign, exponent, fraction",
    }


def closer(d: str, fmts: tuple) -> tuple:
    """Which of two formats holds the decimal ``d`` closer: (the answer, the two values as
    text, the two absolute errors as floats; inf where a value overflows)."""
    exact = Fraction(Decimal(d))
    values, errors = [], []
    for fmt in fmts:
        v = float(round_decimal(d, fmt))
        values.append(text_of(v))
        errors.append(abs(Fraction(v) - exact) if math.isfinite(v) else math.inf)
    a, b = errors
    answer = "equally close" if a == b else (fmts[0] if a < b else fmts[1])
    return answer, tuple(values), (float(a), float(b))


def atomic_runs(x, runs: int = 20) -> list:
    return [order_sum(x, "tree", combine="atomic", seed=r) for r in range(runs)]


def _typed(given) -> str:
    """An answer as text: "" for none (0.0 is no empty box, pass 20), an int past Python's
    digits limit by its size (grade(10**5000) answered with Python's own message)."""
    if given is None:
        return ""
    return checks.shown(given) if isinstance(given, int) else str(given)
