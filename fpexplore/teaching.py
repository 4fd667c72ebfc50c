"""The lessons' exercises, a summation traced step by step, and bit patterns taken apart.

Pure: NumPy and fpexplore's core (no widgets, no figures); the widgets of
:mod:`fpexplore.lessons` show what this module computes.

- :func:`exercises` lists the :class:`Exercise` objects of the lessons (notebooks 01-05); each
  computes its answer from the exact core and the orders when asked (never typed in) and grades
  an answer exactly (bits, ulps, integers, a choice) unless its question names a tolerance.
  ``seed=k`` gives a variant with other numbers (the answer follows them).
- :func:`sum_steps` traces ``fpx.sum(x, order)`` one addition at a time, bit for bit, with the
  exact sum of what each partial sum covers.
- :func:`bit_fields` / :func:`bits_of` take a bit pattern of a format (float16, bfloat16, tf32,
  float32, float64 and the FP8 roundings) apart, and give the pattern of a value.
"""

from __future__ import annotations

import math
import re
import zlib
from dataclasses import dataclass, field
from decimal import Decimal
from fractions import Fraction

import numpy as np

from . import checks
from .data import generate
from .exact import exact_dot, exact_sum, fma
from .formats import (
    as_format,
    format_info,
    hex_string,
    next_down,
    next_up,
    to_bits,
    ulp,
    ulp_distance,
)
from .orders import dot
from .orders import sum as order_sum

__all__ = [
    "BIT_FORMATS",
    "KINDS",
    "LESSONS",
    "STEP_ORDERS",
    "Exercise",
    "SumStep",
    "bit_fields",
    "bits_of",
    "exercises",
    "get",
    "parse_number",
    "sum_steps",
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


# ----------------------------------------------------------------------------- parsing

_POWER = re.compile(
    r"^([+-]?)\s*(?:(\d+(?:\.\d*)?|\.\d+)\s*\*\s*)?2\s*(?:\*\*|\^)\s*\(?\s*([+-]?\d+)\s*\)?$"
)
_NUMBER_HELP = "type e.g. 0.1, 1e-3, 3/4 or 2**-20"


def parse_number(text) -> Fraction | float:
    """A typed number as an exact :class:`~fractions.Fraction` (``inf`` and ``nan`` as floats).

    Accepts decimals (``0.1``, ``-1e-3``), ratios (``3/4``), powers of two (``2**-20``,
    ``2^-20``, ``3*2**-24``), hexadecimal floats (``0x1.8p-3``), ints and floats. ValueError
    with a friendly message for anything else (an empty box, words).
    """
    if isinstance(text, (bool, np.bool_)):
        raise ValueError(f"{checks.shown(text)} is not a number: {_NUMBER_HELP}")
    if isinstance(text, (int, np.integer)):
        return Fraction(int(text))
    if isinstance(text, (float, np.floating)):
        v = float(text)
        return Fraction(v) if math.isfinite(v) else v
    if isinstance(text, (Fraction, Decimal)):
        return Fraction(text)
    if not isinstance(text, str):
        raise ValueError(f"{checks.shown(text)} is not a number: {_NUMBER_HELP}")
    s = text.strip().replace("\u2212", "-").replace("_", "")
    if not s:
        raise ValueError(f"the box is empty: {_NUMBER_HELP}")
    if len(s) > 400:
        raise ValueError("that is too long to be a number")
    low = s.lower().lstrip("+")
    if low in ("inf", "-inf", "infinity", "-infinity", "nan", "-nan"):
        return float(low.replace("infinity", "inf"))
    m = _POWER.match(s)
    if m:
        sign, mult, exp = m.groups()
        if abs(int(exp)) > 20000:
            raise ValueError("that exponent is too large")
        v = Fraction(mult or 1) * Fraction(2) ** int(exp)
        return -v if sign == "-" else v
    if low.lstrip("-").startswith("0x") and "p" in low:
        try:
            return Fraction(float.fromhex(s))
        except (ValueError, OverflowError):
            pass
    try:
        return Fraction(s.replace(" ", ""))
    except (ValueError, ZeroDivisionError):
        raise ValueError(f"{checks.shown(text, 40)} is not a number: {_NUMBER_HELP}") from None


def _exact(v) -> Fraction | float:
    f = float(v)
    return Fraction(f) if math.isfinite(f) else f


def _rounded(v, fmt: str):
    """A parsed number rounded to ``fmt`` (a NumPy scalar)."""
    if isinstance(v, float):
        return as_format(v, fmt)
    return as_format(np.array([v], dtype=object), fmt)[0]


def _same(a, b) -> bool:
    fa, fb = float(a), float(b)
    if math.isnan(fa) or math.isnan(fb):
        return math.isnan(fa) and math.isnan(fb)
    return fa == fb and math.copysign(1, fa) == math.copysign(1, fb)


def _text(v) -> str:
    """A value as text to type back: the shortest decimal that reads back exactly in float64
    (every value of the lessons' formats is a float64)."""
    f = float(v)
    if not math.isfinite(f):
        return str(f)
    if f == int(f) and abs(f) < 1e16:
        return str(int(f)) if f or math.copysign(1, f) > 0 else "-0.0"
    return repr(f)


def _exact_text(v) -> str:
    """Every digit of a binary value (finite decimal), e.g. 0.000030517578125."""
    f = float(v)
    if not math.isfinite(f):
        return str(f)
    d = Decimal(f)
    text = format(d, "f")
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    if len(text) > 40:  # tiny or huge: a power-of-two form reads better
        num, den = Fraction(f).as_integer_ratio()
        if den & (den - 1) == 0 and num:
            return (
                f"{num}*2**-{den.bit_length() - 1}"
                if abs(num) != 1
                else (f"{'-' if num < 0 else ''}2**-{den.bit_length() - 1}")
            )
    return text


# ----------------------------------------------------------------------------- exercises


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
            return _exact_text(a)
        if self.kind == "approx":
            return f"{float(a):.3g}"
        if self.kind in ("integer", "choice"):
            return str(a)
        return _text(a)

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
            text = str(given).strip().lower() if given is not None else ""
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
            v = parse_number(given)
            if isinstance(v, float) or v.denominator != 1:
                raise ValueError(f"{checks.shown(given, 40)} is not a whole number")
            ok = int(v) == int(a)
            return (
                ok,
                "Correct!" if ok else f"Not yet: {int(v)} is too {'low' if v < a else 'high'}.",
            )
        v = parse_number(given)
        if self.kind == "approx":
            if isinstance(v, float):
                raise ValueError("type a finite number")
            ref = Fraction(float(a))
            ok = abs(v - ref) <= Fraction(self.tolerance) * abs(ref)
            if ok:
                return True, f"Correct! (within {self.tolerance:.0%}; the answer is {float(a):.4g})"
            return False, f"Not yet: {float(v):.3g} is too {'low' if v < ref else 'high'}."
        mine = _rounded(v, self.fmt)
        if self.kind == "exact":
            if (
                _same(v, a)
                if isinstance(v, float)
                else (math.isfinite(float(a)) and v == Fraction(float(a)))
            ):
                return True, "Correct!"
            if _same(mine, a):
                return False, (
                    f"Close: that rounds to the answer in {self.fmt}, but type its exact value "
                    "(every digit, or a form like 3*2**-10)."
                )
            return False, self._off_by(mine, a)
        ok = _same(mine, a)
        return ok, "Correct!" if ok else self._off_by(mine, a)

    def _off_by(self, mine, a) -> str:
        if math.isnan(float(mine)) or math.isnan(float(a)):
            return "Not yet."
        d = _ordered(bits_of(mine, self.fmt), self.fmt) - _ordered(bits_of(a, self.fmt), self.fmt)
        where = "above" if d > 0 else "below"
        return f"Not yet: that is {abs(d)} {self.fmt} ulp{'s' * (abs(d) != 1)} {where} the answer."

    def _grade_hex(self, given, a) -> tuple[bool, str]:
        text = str(given).strip().lower().replace(" ", "").replace("_", "") if given else ""
        if not text:
            raise ValueError("the box is empty: type the bits in hexadecimal, e.g. 0x3c00")
        digits = text[2:] if text.startswith("0x") else text
        if not re.fullmatch(r"[0-9a-f]+", digits):
            raise ValueError(f"{checks.shown(given, 40)} is not hexadecimal: e.g. 0x3c00")
        bits = int(digits, 16)
        want = int(to_bits(a))
        if bits == want:
            return True, "Correct!"
        diff = bin(bits ^ want).count("1")
        return False, f"Not yet: {diff} bit{'s' * (diff != 1)} differ from the answer."

    def __repr__(self) -> str:
        return f"Exercise({self.id!r}, lesson {self.lesson}: {self.title})"


_DEFS: dict[str, tuple[str, object]] = {}


def _exercise(id: str, lesson: str):
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


def exercises(lesson=None, seed=None) -> list[Exercise]:
    """The lessons' exercises as a list of :class:`Exercise` (id, lesson, question, hint,
    choices, answer(), check(answer), explanation), in lesson order.

    Parameters
    ----------
    lesson : str or int, optional
        Only this lesson's (``"01"`` .. ``"05"``, or 1 .. 5).
    seed : int, optional
        A variant with other numbers for every exercise (None: the lessons' own numbers).
    """
    if lesson is not None:
        if isinstance(lesson, (int, np.integer)) and not isinstance(lesson, bool):
            lesson = f"{int(lesson):02d}"
        checks.choice("lesson", lesson, tuple(LESSONS))
    return [get(i, seed) for i, (les, _) in _DEFS.items() if lesson in (None, les)]


def _pick(rng, options, default):
    return default if rng is None else options[int(rng.integers(len(options)))]


def _decimal(rng, lo: float, hi: float, digits: int, default: str) -> str:
    """A decimal with ``digits`` significant digits, log-uniform in [lo, hi)."""
    if rng is None:
        return default
    v = math.exp(rng.uniform(math.log(lo), math.log(hi)))
    return f"{float(f'{v:.{digits - 1}e}'):.{digits}g}"


def _round_dec(text: str, fmt: str):
    return as_format(Decimal(text), fmt)


def _line(fmt: str, center, marks: dict, n: int = 3) -> dict:
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


def _bars(labels, values, ylabel: str, title: str = "", highlight=None) -> dict:
    return {
        "kind": "bars",
        "labels": list(labels),
        "values": [float(v) for v in values],
        "ylabel": ylabel,
        "title": title,
        "highlight": highlight,
    }


def _bits_fig(v, fmt: str, title: str = "") -> dict:
    bits = bit_fields(bits_of(v, fmt), fmt)
    return {
        "kind": "bits",
        "bits": bits["bit_string"],
        "ebits": bits["exponent_bits"],
        "title": title or f"{fmt} bits: sign, exponent, fraction",
    }


# --- lesson 01: bits and ulps ---------------------------------------------------------------


@_exercise("ulp-float32", "01")
def _ulp_float32(rng):
    if rng is None:
        v = np.float32(1000.0)
    else:
        v = np.float32(rng.uniform(1, 2) * 2.0 ** int(rng.integers(-12, 24)))
    text = repr(float(v)) if float(v) != int(v) else str(int(v))

    def compute():
        u = ulp(v)
        e = math.frexp(float(v))[1] - 1
        return {"answer": u, "e": e, "q": int(math.log2(float(u))), "x": text}

    return Exercise(
        "",
        "",
        "the gap after a float32 number",
        f"What is ulp(x), the gap from the float32 number x = {text} to the next one? "
        "Type it exactly (a power of two such as 2**-10, or all its digits).",
        "exact",
        compute,
        fmt="float32",
        hint="Find the power of two 2**e just below x: float32 has 24 significant bits, so "
        "numbers in [2**e, 2**(e+1)) are 2**(e-23) apart.",
        explanation_template="{x} lies in [2**{e}, 2**({e}+1)), where float32 numbers are "
        "2**({e}-23) apart: ulp(x) = 2**{q} = {answer}. The gap doubles at every power of two, "
        "so an ulp is a relative measure of error.",
        figure_spec=lambda f: _line("float32", v, {"x": v}),
    )


@_exercise("bits-float16", "01")
def _bits_float16(rng):
    d = "0.1" if rng is None else f"{rng.uniform(-100, 100):.3f}".rstrip("0").rstrip(".")

    def compute():
        v = _round_dec(d, "float16")
        b = bit_fields(bits_of(v, "float16"), "float16")
        return {
            "answer": v,
            "d": d,
            "bits": b["bit_string"],
            "E": b["exponent_field"],
            "e": b["exponent"],
            "F": b["fraction_field"],
            "value": _text(v),
        }

    return Exercise(
        "",
        "",
        "the bits of a float16",
        f"Type the bit pattern of float16({d}), the float16 number nearest to {d}, in "
        "hexadecimal (as fpx.hex_string shows it; 1.0 is 0x3c00).",
        "hex",
        compute,
        fmt="float16",
        hint="float16 = 1 sign bit, 5 exponent bits (bias 15), 10 fraction bits. Write |x| "
        "as 1.f * 2**e, then the fields; the bit inspector (fpx.lessons.bit_inspector) helps.",
        explanation_template="float16({d}) = {value}: sign, exponent field {E} (2**{e}), "
        "fraction field {F}: {bits} = {answer}.",
        figure_spec=lambda f: _bits_fig(f["answer"], "float16"),
    )


@_exercise("next-up-float16", "01")
def _next_up_float16(rng):
    v = np.float16(1.0) if rng is None else as_format(rng.uniform(0.01, 3000), "float16")
    text = _text(v)

    def compute():
        up = next_up(v)
        return {"answer": up, "x": text, "gap": _text(ulp(v))}

    return Exercise(
        "",
        "",
        "the next float16",
        f"What is the next float16 number after x = {text} (fpx.next_up(x))? Any decimal that "
        "rounds to it in float16 counts.",
        "value",
        compute,
        fmt="float16",
        hint="float16 has 11 significant bits: in [2**e, 2**(e+1)) the gap is 2**(e-10).",
        explanation_template="The gap after {x} is ulp(x) = {gap}, so the next float16 is "
        "{answer}.",
        figure_spec=lambda f: _line("float16", v, {"x": v, "next_up": f["answer"]}),
    )


@_exercise("round-bfloat16", "01")
def _round_bfloat16(rng):
    d = _decimal(rng, 0.01, 1000, 5, "3.14159")

    def compute():
        v = _round_dec(d, "bfloat16")
        err = Fraction(float(v)) - Fraction(Decimal(d))
        return {
            "answer": v,
            "d": d,
            "gap": _exact_text(ulp(v)),
            "err": float(err),
            "rel": float(abs(err) / Fraction(Decimal(d))),
        }

    return Exercise(
        "",
        "",
        "rounding to bfloat16",
        f"Round {d} to bfloat16 (8 significant bits, to nearest, ties to even). Type the "
        "result exactly: it has a short exact decimal.",
        "exact",
        compute,
        fmt="bfloat16",
        hint="Find the gap between bfloat16 numbers near it (2**(e-7) in [2**e, 2**(e+1))) and "
        "take the nearest multiple of the gap.",
        explanation_template="Near {d} bfloat16 numbers are {gap} apart; the nearest is "
        "{answer}, off by {err:.3g} ({rel:.2e} relative: bfloat16 keeps about 2-3 digits).",
        figure_spec=lambda f: _line("bfloat16", f["answer"], {d: float(Decimal(d))}, n=2),
    )


@_exercise("subnormal-steps", "01")
def _subnormal_steps(rng):
    k = 17 if rng is None else int(rng.integers(2, 1024))
    v = np.float16(k * 2.0**-24)

    def compute():
        return {
            "answer": int(ulp_distance(np.float16(0), v)),
            "x": str(v),
            "tiny": _text(ulp(np.float16(0))),
        }

    return Exercise(
        "",
        "",
        "counting subnormals",
        f"x = np.float16({str(v)}) is subnormal (below 2**-14 = 6.1e-05, the smallest normal "
        "float16). How many float16 steps is it from zero, fpx.ulp_distance(np.float16(0), x)?",
        "integer",
        compute,
        hint="Below 2**-14 float16 numbers are evenly spaced, 2**-24 = 5.96e-08 apart.",
        explanation_template="Subnormal float16 numbers are multiples of 2**-24 = {tiny}: "
        "x = {answer} * 2**-24, so it is {answer} steps from zero.",
        figure_spec=lambda f: _bars(["x / 2**-24"], [float(v) / 2.0**-24], "steps from 0"),
    )


def _closer(d: str, fmts: tuple) -> tuple:
    """Which of two formats holds the decimal ``d`` closer: (the answer, the two values as
    text, the two absolute errors as floats; inf where a value overflows)."""
    exact = Fraction(Decimal(d))
    values, errors = [], []
    for fmt in fmts:
        v = float(_round_dec(d, fmt))
        values.append(_text(v))
        errors.append(abs(Fraction(v) - exact) if math.isfinite(v) else math.inf)
    a, b = errors
    answer = "equally close" if a == b else (fmts[0] if a < b else fmts[1])
    return answer, tuple(values), (float(a), float(b))


@_exercise("bfloat16-or-float16", "01")
def _bf16_or_f16(rng):
    d = _pick(rng, ["70000", "0.1", "3.0e-6", "1.0e-8", "300000", "12.34", "0.7"], "70000")
    if rng is not None and rng.random() < 0.5:
        d = _decimal(rng, 1e-9, 1e6, 3, d)

    def compute():
        answer, (f16, bf16), (a, b) = _closer(d, ("float16", "bfloat16"))
        return {"answer": answer, "d": d, "f16": f16, "bf16": bf16, "e16": a, "eb16": b}

    return Exercise(
        "",
        "",
        "bfloat16 or float16",
        f"Which format holds {d} more accurately: float16 (11 significant bits, largest "
        "65504) or bfloat16 (8 significant bits, float32's range)?",
        "choice",
        compute,
        choices=("float16", "bfloat16", "equally close"),
        hint="float16 has more digits but a small range (overflow above 65504, subnormals "
        "below 6.1e-05); bfloat16 has fewer digits and a huge range.",
        explanation_template="float16 gives {f16} (error {e16:.3g}), bfloat16 gives {bf16} "
        "(error {eb16:.3g}): {answer}.",
        figure_spec=lambda f: _bars(
            ["float16", "bfloat16"],
            [min(f["e16"], 1e300), f["eb16"]],
            "absolute error",
            "rounding error of each format",
        ),
    )


# --- lesson 02: summation orders ------------------------------------------------------------


@_exercise("absorbed", "02")
def _absorbed(rng):
    k = 25 if rng is None else int(rng.integers(24, 31))
    small = 1 if rng is None else int(rng.integers(1, 4 * 2 ** (k - 23)))
    x = np.array([2.0**k, small, -(2.0**k)], dtype=np.float32)
    shown = f"[2**{k}, {small}, -2**{k}]"

    def compute():
        seq = order_sum(x, "sequential")
        labels = ["sequential", "reverse", "pairwise", "exact"]
        vals = [order_sum(x, o) for o in labels]
        return {
            "answer": seq,
            "u": _text(ulp(np.float32(2.0**k))),
            "small": small,
            "vals": vals,
            "labels": labels,
        }

    return Exercise(
        "",
        "",
        "a small number absorbed",
        f"x = np.array({shown}, dtype=np.float32) summed left to right, "
        "fpx.sum(x, 'sequential'): what is the result?",
        "value",
        compute,
        fmt="float32",
        hint=f"Near 2**{k} float32 numbers are 2**{k - 23} apart: what is 2**{k} + {small} "
        "rounded to that grid?",
        explanation_template="2**{k} + {small} is rounded to a multiple of ulp(2**{k}) = {u} "
        "before -2**{k} cancels the big part: the sum is {answer} where the exact sum is "
        "{small}.".replace("{k}", str(k)),
        figure_spec=lambda f: _bars(f["labels"], f["vals"], "result", "the same three numbers"),
    )


def _float16_run(rng, default_n, default_inc):
    if rng is None:
        return default_n, default_inc
    inc = _pick(rng, [0.25, 0.5, 1.0, 2.0], 1.0)
    return int(rng.integers(1500, 6000)), inc


def _partial_curve(n: int, inc: float) -> dict:
    acc, ys = np.float16(0), []
    step = max(1, n // 200)
    for i in range(n):
        acc = np.float16(acc + np.float16(inc))
        if i % step == 0 or i == n - 1:
            ys.append((i + 1, float(acc)))
    return {
        "kind": "curve",
        "x": [p[0] for p in ys],
        "y": {"float16 loop": [p[1] for p in ys], "exact": [p[0] * inc for p in ys]},
        "xlabel": "terms added",
        "ylabel": "partial sum",
        "title": "a float16 accumulator stagnates",
    }


@_exercise("float16-stagnation", "02")
def _stagnation(rng):
    n, inc = _float16_run(rng, 3000, 1.0)

    def compute():
        x = np.full(n, inc, dtype=np.float16)
        return {"answer": order_sum(x, "sequential"), "exact": _text(n * inc)}

    return Exercise(
        "",
        "",
        "a float16 sum that stops growing",
        f"x = np.full({n}, {inc}, dtype=np.float16). What does the float16 loop "
        "fpx.sum(x, 'sequential') return?",
        "value",
        compute,
        fmt="float16",
        hint=f"Once the partial sum s has ulp(s) = 2 * {inc}, s + {inc} is a tie and rounds "
        "back to s (ties to even).",
        explanation_template="The exact sum is {exact}; the float16 loop stops growing where "
        "the step is half an ulp of the partial sum: {answer}.",
        figure_spec=lambda f: _partial_curve(n, inc),
    )


@_exercise("numpy-float16", "02")
def _numpy_float16(rng):
    n, inc = _float16_run(rng, 5000, 0.5)

    def compute():
        x = np.full(n, inc, dtype=np.float16)
        return {
            "answer": order_sum(x, "numpy"),
            "seq": _text(order_sum(x, "sequential")),
            "exact": _text(n * inc),
        }

    return Exercise(
        "",
        "",
        "np.sum of float16",
        f"x = np.full({n}, {inc}, dtype=np.float16). What does np.sum(x) return (NumPy's "
        "order, fpx.sum(x, 'numpy'))?",
        "value",
        compute,
        fmt="float16",
        hint="NumPy adds float16 in float32 accumulators (8 of them, pairwise) and rounds to "
        "float16 once at the end.",
        explanation_template="np.sum accumulates in float32, which holds {exact} exactly, and "
        "rounds once: {answer} (the float16 loop gives {seq}).",
        figure_spec=lambda f: _bars(
            ["loop (float16)", "np.sum", "exact"],
            [float(f["seq"]), float(f["answer"]), float(f["exact"])],
            "result",
        ),
    )


_ORDER_BARS = ("sequential", "pairwise", "numpy", "tree", "kahan")


def _order_errors(x) -> dict:
    ex = exact_sum(x)
    return {o: int(ulp_distance(ex, order_sum(x, o))) for o in _ORDER_BARS}


@_exercise("sequential-or-pairwise", "02")
def _seq_or_pair(rng):
    n = 10**4 if rng is None else int(rng.integers(2000, 50000))
    s = 0 if rng is None else int(rng.integers(1, 1000))
    dist = "uniform" if rng is None else _pick(rng, ["uniform", "normal"], "uniform")

    def compute():
        x = generate(dist, n, "float32", seed=s)
        errs = _order_errors(x)
        a, b = abs(errs["sequential"]), abs(errs["pairwise"])
        ans = "equally close" if a == b else ("sequential" if a < b else "pairwise")
        return {"answer": ans, "errs": errs, "seq": errs["sequential"], "pair": errs["pairwise"]}

    return Exercise(
        "",
        "",
        "which order is closer",
        f"x = fpx.generate('{dist}', {n}, 'float32', seed={s}). Which sum is closer to the "
        "exact sum: fpx.sum(x, 'sequential') or fpx.sum(x, 'pairwise')?",
        "choice",
        compute,
        choices=("sequential", "pairwise", "equally close"),
        hint="Sequential error grows with n, pairwise with log2(n).",
        explanation_template="sequential is {seq:+d} ulps from the exact sum, pairwise "
        "{pair:+d}: {answer}.",
        figure_spec=lambda f: _bars(
            list(f["errs"]), list(f["errs"].values()), "ulps from the exact sum"
        ),
    )


@_exercise("sequential-ulps", "02")
def _seq_ulps(rng):
    n = 10**5 if rng is None else int(rng.integers(10**4, 2 * 10**5))
    s = 0 if rng is None else int(rng.integers(1, 1000))

    def compute():
        x = generate("normal", n, "float32", seed=s)
        errs = _order_errors(x)
        return {"answer": errs["sequential"], "errs": errs}

    return Exercise(
        "",
        "",
        "the error of a loop",
        f"x = fpx.generate('normal', {n}, 'float32', seed={s}). How many ulps is the "
        "sequential sum from the exact one, fpx.ulp_distance(fpx.exact_sum(x), "
        "fpx.sum(x, 'sequential'))? (Compute it.)",
        "integer",
        compute,
        hint="fpx.ulp_distance(a, b) counts the float32 numbers from a to b (negative when b "
        "is below a).",
        explanation_template="The loop is {answer} ulps from the exact sum; the other orders "
        "are in the figure.",
        figure_spec=lambda f: _bars(
            list(f["errs"]), list(f["errs"].values()), "ulps from the exact sum"
        ),
    )


def _atomic_runs(x, runs: int = 20) -> list:
    return [order_sum(x, "tree", combine="atomic", seed=r) for r in range(runs)]


@_exercise("atomic-runs", "02")
def _atomic(rng):
    n = 10**4 if rng is None else int(rng.integers(5000, 40000))
    s = 0 if rng is None else int(rng.integers(1, 1000))

    def compute():
        x = generate("normal", n, "float32", seed=s)
        runs = _atomic_runs(x)
        ex = exact_sum(x)
        dist = [int(ulp_distance(ex, r)) for r in runs]
        values, counts = np.unique(dist, return_counts=True)
        return {"answer": len(values), "values": values, "counts": counts}

    return Exercise(
        "",
        "",
        "atomics: one answer per run",
        f"x = fpx.generate('normal', {n}, 'float32', seed={s}). A GPU tree adds its block sums "
        "with atomics, in a different order each run: fpx.sum(x, 'tree', combine='atomic', "
        "seed=r). How many distinct results do the 20 runs r = 0, ..., 19 give?",
        "integer",
        compute,
        hint="len(set(...)) of the 20 results; each seed is one run's order of the atomic adds.",
        explanation_template="{answer} distinct results in 20 runs: the same data, the same "
        "kernel, and a different order of the atomic additions each time.",
        figure_spec=lambda f: _bars(
            [f"{v:+d}" for v in f["values"]], f["counts"], "runs", "ulps from the exact sum"
        ),
    )


@_exercise("numpy-versions", "02")
def _numpy_versions(rng):
    n = 100_003 if rng is None else int(rng.integers(4000, 60000))
    s = 3 if rng is None else int(rng.integers(1, 1000))

    def compute():
        x = generate("normal", n, "float32", seed=s)
        new, old = order_sum(x, "numpy"), order_sum(x, "numpy-chunked")
        ex = exact_sum(x)
        return {
            "answer": "same" if _same(new, old) else "different",
            "new": _text(new),
            "old": _text(old),
            "errs": [int(ulp_distance(ex, new)), int(ulp_distance(ex, old))],
        }

    return Exercise(
        "",
        "",
        "NumPy 2.3 changed np.sum",
        f"x = fpx.generate('normal', {n}, 'float32', seed={s}). Do np.sum of NumPy >= 2.3 "
        "(order 'numpy') and of NumPy < 2.3 ('numpy-chunked', 8192-element chunks added in "
        "turn) give the same value?",
        "choice",
        compute,
        choices=("same", "different"),
        hint="Up to 8192 elements both orders are one pairwise pass; above, the old one adds "
        "the chunk sums one after another.",
        explanation_template="NumPy >= 2.3 gives {new}, NumPy < 2.3 gives {old}: {answer}.",
        figure_spec=lambda f: _bars(
            ["numpy >= 2.3", "numpy < 2.3"], f["errs"], "ulps from the exact sum"
        ),
    )


# --- lesson 03: FMA ---------------------------------------------------------------------------


def _fma_pair(rng, default):
    k = default if rng is None else int(rng.integers(12, 21))
    a = np.float32(1 + 2.0**-k)
    b = np.float32(1 + 2.0 ** (1 - k))
    return k, a, b


@_exercise("fma-residual", "03")
def _fma_residual(rng):
    k, a, b = _fma_pair(rng, 12)

    def compute():
        fused = fma(a, a, -b)
        separate = dot(np.array([a, -b]), np.array([a, 1], dtype=np.float32), "sequential")
        return {"answer": fused, "sep": _text(separate), "k2": 2 * k}

    return Exercise(
        "",
        "",
        "what FMA keeps",
        f"a = np.float32(1 + 2**-{k}), b = np.float32(1 + 2**-{k - 1}). What is "
        "fpx.fma(a, a, -b), a*a - b rounded once?",
        "value",
        compute,
        fmt="float32",
        hint=f"(1 + 2**-{k})**2 = 1 + 2**-{k - 1} + 2**-{2 * k} exactly.",
        explanation_template="a*a - b = 2**-{k2} exactly, and FMA rounds only that: {answer}. "
        "Without FMA, a*a is rounded first and 2**-{k2} is lost: {sep}.",
        figure_spec=lambda f: _bars(
            ["fma", "separate", "exact"],
            [float(f["answer"]), float(f["sep"]), 2.0 ** -(2 * k)],
            "a*a - b",
        ),
    )


@_exercise("separate-residual", "03")
def _separate_residual(rng):
    k, a, b = _fma_pair(rng, 13)

    def compute():
        separate = dot(np.array([a, -b]), np.array([a, 1], dtype=np.float32), "sequential")
        return {"answer": separate, "k2": 2 * k, "fused": _text(fma(a, a, -b))}

    return Exercise(
        "",
        "",
        "two roundings",
        f"a = np.float32(1 + 2**-{k}), b = np.float32(1 + 2**-{k - 1}). Without FMA, "
        "np.float32(a * a) - b: what is the result?",
        "value",
        compute,
        fmt="float32",
        hint="a*a needs more than 24 significant bits: which bit does rounding to float32 drop?",
        explanation_template="a*a rounds to 1 + 2**-{k_1} (the 2**-{k2} is below half an ulp), "
        "so the difference is {answer}; FMA keeps it: {fused}.".replace("{k_1}", str(k - 1)),
        figure_spec=lambda f: _bars(
            ["separate", "fma"], [float(f["answer"]), float(f["fused"])], "a*a - b"
        ),
    )


@_exercise("cancellation", "03")
def _cancellation(rng):
    d = _decimal(rng, 1e-7, 1e-3, 3, "1e-6")

    def compute():
        d32 = _round_dec(d, "float32")
        s = order_sum(np.array([1, d32], dtype=np.float32), "sequential")
        y = order_sum(np.array([s, -1], dtype=np.float32), "sequential")
        rel = abs(Fraction(float(y)) - Fraction(float(d32))) / Fraction(float(d32))
        return {"answer": float(rel), "y": _text(y), "d32": _text(d32)}

    return Exercise(
        "",
        "",
        "catastrophic cancellation",
        f"With d = np.float32({d}), compute y = (np.float32(1) + d) - np.float32(1) in float32. "
        "What is the relative error |y - d| / d? Two significant digits are enough (within 5%).",
        "approx",
        compute,
        tolerance=0.05,
        hint="1 + d is rounded to a multiple of ulp(1) = 2**-23 = 1.19e-07; the subtraction is "
        "then exact.",
        explanation_template="1 + d rounds to a multiple of 2**-23, so y = {y} instead of "
        "{d32}: a relative error of {answer}. The subtraction was exact; it only revealed the "
        "earlier rounding.",
        figure_spec=lambda f: _bars(["d", "y"], [float(f["d32"]), float(f["y"])], "value"),
    )


_WHITEPAPER = (
    [1.907607, -0.7862027, 1.147311, 0.9604002],
    [-0.9355000, -0.6915108, 1.724470, -0.7097529],
)


@_exercise("dot-ulps", "03")
def _dot_ulps(rng):
    if rng is None:
        a, b = (np.array(v, dtype=np.float32) for v in _WHITEPAPER)
    else:
        a = np.float32(rng.normal(size=4))
        b = np.float32(rng.normal(size=4))
    shown = [str(list(map(str, v))).replace("'", "") for v in (a, b)]

    def compute():
        ex = exact_dot(a, b)
        vals = {
            "serial": dot(a, b, "sequential"),
            "serial, FMA": dot(a, b, "sequential", fma=True),
            "pairwise": dot(a, b, "pairwise"),
        }
        errs = {k: int(ulp_distance(ex, v)) for k, v in vals.items()}
        return {"answer": errs["serial"], "errs": errs, "exact": _text(ex)}

    return Exercise(
        "",
        "",
        "a 4-element dot product",
        f"a = np.array({shown[0]}, dtype=np.float32), b = np.array({shown[1]}, "
        "dtype=np.float32). How many ulps from the exact dot product (fpx.exact_dot) is the "
        "serial one without FMA, fpx.dot(a, b, 'sequential')?",
        "integer",
        compute,
        hint="fpx.ulp_distance(fpx.exact_dot(a, b), fpx.dot(a, b, 'sequential')).",
        explanation_template="The exact dot is {exact}; serial without FMA is {answer} ulps off. "
        "The other orders are in the figure: each rounds at other places.",
        figure_spec=lambda f: _bars(list(f["errs"]), list(f["errs"].values()), "ulps from exact"),
    )


@_exercise("fma-or-not", "03")
def _fma_or_not(rng):
    s = 0 if rng is None else int(rng.integers(1, 1000))
    n = 1000

    def compute():
        a = generate("ill-conditioned", n, "float32", seed=s)
        b = generate("uniform", n, "float32", seed=s)
        ex = exact_dot(a, b)
        with_f = int(ulp_distance(ex, dot(a, b, "sequential", fma=True)))
        without = int(ulp_distance(ex, dot(a, b, "sequential")))
        ans = (
            "equally close"
            if abs(with_f) == abs(without)
            else "with FMA"
            if abs(with_f) < abs(without)
            else "without FMA"
        )
        return {"answer": ans, "w": with_f, "wo": without}

    return Exercise(
        "",
        "",
        "FMA in a long dot product",
        f"a = fpx.generate('ill-conditioned', {n}, 'float32', seed={s}), "
        f"b = fpx.generate('uniform', {n}, 'float32', seed={s}). Which sequential dot product "
        "is closer to the exact one: fpx.dot(a, b, 'sequential', fma=True) or without FMA?",
        "choice",
        compute,
        choices=("with FMA", "without FMA", "equally close"),
        hint="FMA saves one rounding per term, but the order of the additions stays the same; "
        "on ill-conditioned data the additions' errors dominate.",
        explanation_template="with FMA: {w:+d} ulps, without: {wo:+d} ulps: {answer}. FMA is "
        "usually, not always, closer: a different rounding is not always a smaller one.",
        figure_spec=lambda f: _bars(
            ["with FMA", "without FMA"], [f["w"], f["wo"]], "ulps from exact"
        ),
    )


# --- lesson 04: tolerances and testing ------------------------------------------------------


def _moved(v, k: int):
    out = v
    for _ in range(k):
        out = next_up(out)
    return out


@_exercise("allclose-ulps", "04")
def _allclose_ulps(rng):
    if rng is None:
        v, k = np.float32(100.0), 150
    else:
        v = np.float32(rng.uniform(1, 10) * 10.0 ** int(rng.integers(-3, 4)))
        k = int(rng.integers(1, 400))
    text = _text(v)

    def compute():
        b = _moved(v, k)
        passes = bool(np.isclose(v, b))  # NumPy's own test, defaults rtol=1e-05, atol=1e-08
        allowed = (1e-8 + 1e-5 * abs(float(b))) / float(ulp(v))
        return {"answer": "passes" if passes else "fails", "allowed": allowed}

    return Exercise(
        "",
        "",
        "what allclose allows",
        f"a = np.float32({text}) and b is a moved {k} float32 ulps up (fpx.next_up {k} times). "
        "Does np.allclose(a, b) pass, with its defaults rtol=1e-05, atol=1e-08?",
        "choice",
        compute,
        choices=("passes", "fails"),
        hint="allclose allows atol + rtol * |b|; one float32 ulp of a is fpx.ulp(a).",
        explanation_template="The defaults allow {allowed:.1f} ulps here, and b is {k} ulps "
        "away: it {answer}. rtol=1e-05 is about 84 float32 ulps near 1, but 168 just below 2: "
        "ulps and relative tolerances are not the same ruler.".replace("{k}", str(k)),
        figure_spec=lambda f: _bars(
            ["distance", "allowed"], [k, f["allowed"]], "float32 ulps of a"
        ),
    )


@_exercise("ulps-across-a-power", "04")
def _ulps_across(rng):
    if rng is None:
        k, i, j = 0, 2, 1
    else:
        k, i, j = int(rng.integers(-5, 10)), int(rng.integers(1, 30)), int(rng.integers(1, 30))
    p = np.float32(2.0**k)
    a = p
    for _ in range(i):
        a = next_down(a)
    b = _moved(p, j)
    ta, tb = _text(a), _text(b)

    def compute():
        return {
            "answer": int(ulp_distance(a, b)),
            "i": i,
            "j": j,
            "below": _text(ulp(next_down(p))),
            "above": _text(ulp(p)),
        }

    return Exercise(
        "",
        "",
        "counting ulps across a power of two",
        f"How many float32 ulps apart are a = np.float32({ta}) and b = np.float32({tb}), "
        "fpx.ulp_distance(a, b)?",
        "integer",
        compute,
        hint=f"They straddle 2**{k}: below it the gap is half as big as above it. Count the "
        "steps on each side.",
        explanation_template="a is {i} steps of {below} below 2**K and b is {j} steps of "
        "{above} above it: {answer} ulps. fpx.ulp_distance counts representable numbers, which "
        "is why it is the right ruler for a test.".replace("K", str(k)),
        figure_spec=lambda f: _line("float32", p, {"a": a, "b": b, f"2**{k}": p}, n=max(i, j)),
    )


@_exercise("rtol-for-ulps", "04")
def _rtol_for_ulps(rng):
    k = 4 if rng is None else int(rng.integers(2, 64))

    def compute():
        return {"answer": k * float(ulp(np.float32(1))), "u": _text(ulp(np.float32(1)))}

    return Exercise(
        "",
        "",
        "from ulps to rtol",
        f"A float32 GPU kernel may differ from the CPU by up to {k} ulps. What is the smallest "
        f"rtol that lets {k} ulps pass for every value in [1, 2)? Two significant digits are "
        "enough (within 5%).",
        "approx",
        compute,
        tolerance=0.05,
        hint="In [1, 2) one float32 ulp is 2**-23; relative to the value, it is largest at 1.",
        explanation_template="{k} ulps of 1.0 are {k} * {u} = {answer}; that is the relative "
        "size of {k} ulps at 1, the worst place in the binade.".replace("{k}", str(k)),
        figure_spec=lambda f: {
            "kind": "curve",
            "x": [1 + i / 64 for i in range(65)],
            "y": {f"{k} ulps / x": [k * 2.0**-23 / (1 + i / 64) for i in range(65)]},
            "xlabel": "x",
            "ylabel": "relative size",
            "title": "the same ulps, relative to x",
        },
    )


@_exercise("gpu-test-ulps", "04")
def _gpu_test_ulps(rng):
    n = 10**5 if rng is None else int(rng.integers(2 * 10**4, 2 * 10**5))
    s = 0 if rng is None else int(rng.integers(1, 1000))

    def compute():
        x = generate("normal", n, "float32", seed=s)
        cpu = order_sum(x, "numpy")
        d = [int(ulp_distance(cpu, r)) for r in _atomic_runs(x)]
        return {"answer": max(abs(v) for v in d), "d": d}

    return Exercise(
        "",
        "",
        "the tolerance a GPU test needs",
        f"x = fpx.generate('normal', {n}, 'float32', seed={s}). A test compares the GPU's "
        "fpx.sum(x, 'tree', combine='atomic', seed=r) with np.sum (fpx.sum(x, 'numpy')) for "
        "runs r = 0, ..., 19. What is the smallest max-ulp tolerance that passes all 20 runs?",
        "integer",
        compute,
        hint="max over r of abs(fpx.ulp_distance(cpu, gpu_r)).",
        explanation_template="The runs are up to {answer} ulps from np.sum: a test needs at "
        "least that, and a margin (fpx.suggest_tolerance suggests one) because other data "
        "will differ more.",
        figure_spec=lambda f: _bars(
            [str(r) for r in range(len(f["d"]))], f["d"], "ulps from np.sum", "each run"
        ),
    )


@_exercise("allclose-near-zero", "04")
def _near_zero(rng):
    if rng is None:
        tiny, atol = "1e-9", 0.0
    else:
        tiny = _decimal(rng, 1e-10, 1e-4, 2, "1e-9")
        atol = _pick(rng, [0.0, 1e-6, 1e-8], 0.0)

    def compute():
        passes = bool(np.isclose(float(tiny), 0.0, rtol=1e-6, atol=atol))
        return {"answer": "passes" if passes else "fails", "allowed": atol}

    return Exercise(
        "",
        "",
        "a relative tolerance at zero",
        f"np.testing.assert_allclose(actual, desired, rtol=1e-6, atol={atol!r}) with "
        f"desired = 0.0 and actual = {tiny}: does it pass?",
        "choice",
        compute,
        choices=("passes", "fails"),
        hint="The test is |actual - desired| <= atol + rtol * |desired|.",
        explanation_template="rtol * |desired| is 0 at desired = 0, so only atol = {allowed!r} "
        "is allowed: it {answer}. A result that should be zero needs an atol.",
        figure_spec=lambda f: _bars(["|actual|", "allowed"], [float(tiny), atol], "size"),
    )


# --- lesson 05: GPU arithmetic --------------------------------------------------------------


@_exercise("tree-float16", "05")
def _tree_float16(rng):
    n = 3000 if rng is None else int(rng.integers(2100, 9000))
    block = 256 if rng is None else _pick(rng, [64, 128, 256], 256)

    def compute():
        x = np.ones(n, dtype=np.float16)
        return {
            "answer": order_sum(x, "tree", block=block),
            "seq": _text(order_sum(x, "sequential")),
        }

    return Exercise(
        "",
        "",
        "a GPU tree on float16",
        f"x = np.ones({n}, dtype=np.float16). What does a GPU block tree in float16 give, "
        f"fpx.sum(x, 'tree', block={block})?",
        "value",
        compute,
        fmt="float16",
        hint=f"Each block of {block} ones sums exactly to {block}; then the block sums are "
        "added in order: where does float16 start rounding multiples of the block size?",
        explanation_template="The tree never adds 1 to a large partial sum: it gives {answer} "
        "where the float16 loop stagnates at {seq}.",
        figure_spec=lambda f: _bars(
            ["loop", "tree", "exact"], [float(f["seq"]), float(f["answer"]), n], "result"
        ),
    )


@_exercise("tf32-round", "05")
def _tf32_round(rng):
    d = _decimal(rng, 0.01, 1000, 6, "1.1")

    def compute():
        x = _round_dec(d, "float32")
        t = as_format(x, "tf32")
        return {
            "answer": t,
            "x": _text(x),
            "rel": float(abs(Fraction(float(t)) - Fraction(float(x))) / Fraction(float(x))),
        }

    return Exercise(
        "",
        "",
        "TF32 inputs",
        f"x = np.float32({d}). Tensor cores in TF32 mode keep 10 fraction bits (11 significant): "
        "what is fpx.as_format(x, 'tf32') (ties away from zero)? Type it exactly.",
        "exact",
        compute,
        fmt="tf32",
        hint="Near x TF32 numbers are 2**(e-10) apart for x in [2**e, 2**(e+1)): take the "
        "nearest multiple.",
        explanation_template="x = {x} becomes {answer} in TF32: a relative error of {rel:.1e}, "
        "about 1000 times float32's.",
        figure_spec=lambda f: _bits_fig(
            f["answer"], "tf32", "TF32: the 13 low fraction bits are gone"
        ),
    )


@_exercise("fp8-e4m3", "05")
def _fp8_e4m3(rng):
    d = _decimal(rng, 0.02, 400, 3, "0.3")

    def compute():
        v = _round_dec(d, "float8_e4m3")
        return {"answer": v, "d": d, "gap": _exact_text(ulp(v, "float8_e4m3"))}

    return Exercise(
        "",
        "",
        "FP8 e4m3",
        f"What does {d} become in FP8 e4m3 (3 fraction bits, 4 exponent bits), "
        f"fpx.as_format({d}, 'float8_e4m3')? Type it exactly.",
        "exact",
        compute,
        fmt="float8_e4m3",
        hint="With 4 significant bits, [2**e, 2**(e+1)) holds only 8 numbers, 2**(e-3) apart.",
        explanation_template="Near {d} e4m3 numbers are {gap} apart: {d} becomes {answer}.",
        figure_spec=lambda f: _bits_fig(f["answer"], "float8_e4m3"),
    )


@_exercise("fp8-which", "05")
def _fp8_which(rng):
    d = _pick(rng, ["0.3", "500", "3.5", "0.0004", "100.5", "7e-6"], "500")
    if rng is not None and rng.random() < 0.5:
        d = _decimal(rng, 1e-6, 5e4, 3, d)

    def compute():
        ans, (e4, e5), (a, b) = _closer(d, ("float8_e4m3", "float8_e5m2"))
        return {"answer": ans, "e4": e4, "e5": e5, "err": [min(a, 1e300), min(b, 1e300)]}

    return Exercise(
        "",
        "",
        "which FP8",
        f"Which FP8 format holds {d} more accurately: float8_e4m3 (3 fraction bits, largest "
        "448, no infinity) or float8_e5m2 (2 fraction bits, largest 57344)?",
        "choice",
        compute,
        choices=("float8_e4m3", "float8_e5m2", "equally close"),
        hint="e4m3 has one more digit, e5m2 a wider range (and subnormals down to 2**-16).",
        explanation_template="e4m3 gives {e4}, e5m2 gives {e5}: {answer}.",
        figure_spec=lambda f: _bars(["e4m3", "e5m2"], f["err"], "absolute error"),
    )


@_exercise("tensor-core-ulps", "05")
def _tensor_core_ulps(rng):
    n = 256 if rng is None else int(_pick(rng, [64, 128, 256, 512, 1024], 256))
    s = 0 if rng is None else int(rng.integers(1, 1000))

    def compute():
        a = generate("normal", n, "float32", seed=s)
        b = generate("normal", n, "float32", seed=s + 1)
        ex = exact_dot(a, b)
        tc = dot(a, b, "tensor-core", arch="a100", input_rounding="tf32")
        cuda = dot(a, b, "tree", fma=True)
        return {"answer": int(ulp_distance(ex, tc)), "cuda": int(ulp_distance(ex, cuda))}

    return Exercise(
        "",
        "",
        "TF32 tensor cores",
        f"a = fpx.generate('normal', {n}, 'float32', seed={s}), b = fpx.generate('normal', "
        f"{n}, 'float32', seed={s + 1}). How many float32 ulps from the exact dot product "
        "(fpx.exact_dot) is the A100's TF32 tensor-core result, fpx.dot(a, b, 'tensor-core', "
        "arch='a100', input_rounding='tf32')?",
        "integer",
        compute,
        hint="fpx.ulp_distance(fpx.exact_dot(a, b), tc). Rounding every input to 11 bits "
        "costs far more than the additions.",
        explanation_template="The TF32 tensor cores are {answer} ulps off; the CUDA cores' "
        "float32 tree with FMA is {cuda} ulps off. The inputs' rounding to TF32 dominates.",
        figure_spec=lambda f: _bars(
            ["TF32 tensor cores", "float32 tree + FMA"], [f["answer"], f["cuda"]], "ulps from exact"
        ),
    )


# ----------------------------------------------------------------------------- bit patterns

#: the formats :func:`bit_fields` and :func:`bits_of` take apart
BIT_FORMATS = ("float16", "bfloat16", "tf32", "float32", "float64", "float8_e4m3", "float8_e5m2")


def _layout(fmt: str) -> tuple[int, int, int, int, bool]:
    """(total bits, exponent bits, fraction bits, bias, IEEE specials) of ``fmt``."""
    checks.choice("format", fmt, BIT_FORMATS)
    info = format_info(fmt)
    fbits = info.precision - 1
    ebits = {"tf32": 8, "float8_e4m3": 4, "float8_e5m2": 5}.get(fmt, info.exponent_bits)
    return 1 + ebits + fbits, ebits, fbits, 1 - info.emin, fmt != "float8_e4m3"


def _decode(bits: int, fmt: str) -> float:
    total, ebits, fbits, bias, ieee = _layout(fmt)
    s, E, F = bits >> (total - 1), (bits >> fbits) & ((1 << ebits) - 1), bits & ((1 << fbits) - 1)
    top = (1 << ebits) - 1
    sign = -1.0 if s else 1.0
    if E == top and (ieee or F == (1 << fbits) - 1):
        return sign * math.inf if ieee and F == 0 else math.nan
    if E == 0:
        return sign * math.ldexp(F, 1 - bias - fbits)
    return sign * math.ldexp((1 << fbits) + F, E - bias - fbits)


def bits_of(value, fmt: str) -> int:
    """The bit pattern (an int) of ``value`` rounded to ``fmt`` with ``fpx.as_format``; typed
    text is read exactly (:func:`parse_number`)."""
    total, ebits, fbits, bias, ieee = _layout(fmt)
    if isinstance(value, (str, Fraction, Decimal, int)) and not isinstance(value, bool):
        v = float(_rounded(parse_number(value), fmt))
    else:
        v = float(as_format(value, fmt))
    s = 1 if math.copysign(1.0, v) < 0 else 0
    top = (1 << ebits) - 1
    if math.isnan(v):
        return (
            (s << (total - 1))
            | (top << fbits)
            | ((1 << fbits) - 1 if not ieee else 1 << (fbits - 1))
        )
    a = abs(v)
    if math.isinf(a):
        return (s << (total - 1)) | (top << fbits)
    if a == 0:
        return s << (total - 1)
    e = math.frexp(a)[1] - 1
    if e < 1 - bias:
        E, F = 0, int(a / math.ldexp(1.0, 1 - bias - fbits))
    else:
        E, F = e + bias, int(math.ldexp(a, fbits - e)) - (1 << fbits)
    return (s << (total - 1)) | (E << fbits) | F


def _ordered(bits: int, fmt: str) -> int:
    """Bit patterns as integers that count the values in order (both zeros at 0)."""
    sign = 1 << (_layout(fmt)[0] - 1)
    return -(bits & ~sign) if bits & sign else bits


def _neighbour(bits: int, fmt: str, up: bool) -> float | None:
    total = _layout(fmt)[0]
    v = _decode(bits, fmt)
    if math.isnan(v) or (math.isinf(v) and (v > 0) == up):
        return None
    sign = 1 << (total - 1)
    if v == 0:
        nb = 1 if up else sign | 1
    elif (v > 0) == up:
        nb = bits + 1
    else:
        nb = bits - 1
    out = _decode(nb, fmt)
    return None if math.isnan(out) else out


def bit_fields(bits, fmt: str) -> dict:
    """A bit pattern of ``fmt`` taken apart: value, sign, exponent, significand, class,
    neighbours, ulp, hex and the bit string (sign, exponent and fraction separated by spaces).

    ``bits`` is an int in [0, 2**width); tf32 is 19 bits (1 + 8 + 10), the FP8 formats 8.
    """
    total, ebits, fbits, bias, ieee = _layout(fmt)
    b = checks.integer("bits", bits, 0, (1 << total) - 1)
    v = _decode(b, fmt)
    s, E, F = b >> (total - 1), (b >> fbits) & ((1 << ebits) - 1), b & ((1 << fbits) - 1)
    if math.isnan(v):
        kind = "NaN"
    elif math.isinf(v):
        kind = "infinity"
    elif v == 0:
        kind = "zero"
    else:
        kind = "subnormal" if E == 0 else "normal"
    e = (1 - bias) if E == 0 else E - bias
    significand = (F / (1 << fbits)) + (0 if E == 0 else 1)
    if math.isfinite(v):
        q = max(math.frexp(abs(v))[1] - 1 if v else 1 - bias, 1 - bias) - fbits
        gap = math.ldexp(1.0, q)
    else:
        gap = math.nan
    string = format(b, f"0{total}b")
    return {
        "format": fmt,
        "bits": b,
        "width": total,
        "hex": f"0x{b:0{(total + 3) // 4}x}",
        "bit_string": f"{string[0]} {string[1 : 1 + ebits]} {string[1 + ebits :]}",
        "value": v,
        "class": kind,
        "sign": s,
        "exponent_field": E,
        "exponent": e,
        "fraction_field": F,
        "significand": significand,
        "exponent_bits": ebits,
        "fraction_bits": fbits,
        "next_up": _neighbour(b, fmt, True),
        "next_down": _neighbour(b, fmt, False),
        "ulp": gap,
    }


# ----------------------------------------------------------------------------- a traced sum

#: the orders :func:`sum_steps` traces
STEP_ORDERS = ("sequential", "pairwise", "tree", "numpy")
MAX_STEP_TERMS = 512


@dataclass(frozen=True)
class SumStep:
    """One operation of a traced sum.

    ``node`` is the index of its result in :attr:`SumTrace.nodes`, ``left``/``right`` those
    of its operands (``right`` is None for a rounding to the output format). ``value`` is the
    rounded result, ``exact`` the exact sum of the terms it covers, ``rounding_ulps`` the
    rounding error of this one operation and ``error_ulps`` the error of the partial sum
    against ``exact``, both in ulps of the accumulator format at the result.
    """

    node: int
    left: int
    right: int | None
    value: object
    exact: Fraction
    covers: tuple
    rounding_ulps: float
    error_ulps: float


@dataclass
class SumTrace:
    """The nodes (leaves: the terms, padding zeros and start values; then one node per
    operation) and the steps of a traced sum."""

    order: str
    params: dict
    fmt: str
    accumulator: str
    nodes: list = field(default_factory=list)  # dicts: label, value, children, level, covers
    steps: list = field(default_factory=list)
    exact_total: object = None

    @property
    def result(self):
        """The last step's value in x's format: fpx.sum(x, order, **params) bit for bit."""
        v = self.nodes[-1]["value"]
        return np.asarray(v).astype(format_info(self.fmt).dtype)[()]


def _ulps(diff: Fraction, value, acc: str) -> float:
    return float(diff / Fraction(float(ulp(np.asarray(value, format_info(acc).dtype)))))


def sum_steps(x, order: str = "pairwise", **params) -> SumTrace:
    """Trace ``fpx.sum(x, order, **params)`` one operation at a time, bit for bit.

    Parameters
    ----------
    x : 1-D array of float16, bfloat16, float32 or float64, 2 to 512 terms
    order : one of :data:`STEP_ORDERS`: ``"sequential"``, ``"pairwise"`` (textbook halving),
        ``"tree"`` (a GPU block tree; ``block=`` its size, a power of two, default 128) or
        ``"numpy"`` (np.sum of NumPy >= 2.3: 8 accumulators per block of up to 128, pairwise
        above; float16 accumulated in float32)

    Returns
    -------
    SumTrace: ``steps`` (SumStep each) and ``nodes``; ``result`` equals fpx.sum(x, order).
    """
    from .formats import coerce, refuse_masked

    refuse_masked(x, "sum_steps")
    checks.choice("order", order, STEP_ORDERS)
    checks.refuse_unknown("sum_steps", params, ("block",) if order == "tree" else ())
    (x,), info = coerce(x, what="sum_steps")
    x = np.ravel(x)
    if not 2 <= x.size <= MAX_STEP_TERMS:
        raise ValueError(f"sum_steps traces 2 to {MAX_STEP_TERMS} terms, got {x.size}")
    if not np.all(np.isfinite(x.astype(np.float64))):
        raise ValueError("sum_steps traces finite terms only")
    block = 128
    if order == "tree":
        block = checks.integer("block", params.get("block", 128), 2, 1 << 12)
        if block & (block - 1):
            raise ValueError(f"block must be a power of two, got {block}")
        params = {"block": block}
    acc = "float32" if (order == "numpy" and info.name == "float16") else info.name
    dt = format_info(acc).dtype
    tr = SumTrace(order, dict(params), info.name, acc)
    terms = [Fraction(float(v)) for v in x]

    def leaf(label, value, covers=()):
        tr.nodes.append(
            {
                "label": label,
                "value": np.asarray(value, dt)[()],
                "children": (),
                "level": 0,
                "covers": tuple(covers),
            }
        )
        return len(tr.nodes) - 1

    def exact_of(node):
        return sum((terms[i] for i in tr.nodes[node]["covers"]), Fraction(0))

    def add(a, b):
        na, nb = tr.nodes[a], tr.nodes[b]
        true = Fraction(float(na["value"])) + Fraction(float(nb["value"]))
        value = np.asarray(as_format(np.array([true], dtype=object), acc)[0], dt)[()]
        if true == 0:  # IEEE: an exact zero sum is -0 only when both operands are -0
            neg = np.signbit(na["value"]) and np.signbit(nb["value"])
            value = np.asarray(-0.0 if neg else 0.0, dt)[()]
        covers = tuple(sorted(na["covers"] + nb["covers"]))
        tr.nodes.append(
            {
                "label": "+",
                "value": value,
                "children": (a, b),
                "level": max(na["level"], nb["level"]) + 1,
                "covers": covers,
            }
        )
        node = len(tr.nodes) - 1
        ex = exact_of(node)
        tr.steps.append(
            SumStep(
                node,
                a,
                b,
                value,
                ex,
                covers,
                _ulps(Fraction(float(value)) - true, value, acc),
                _ulps(Fraction(float(value)) - ex, value, acc),
            )
        )
        return node

    leaves = [leaf(f"x[{i}]", v, (i,)) for i, v in enumerate(x)]

    def pairwise(ids):
        if len(ids) == 1:
            return ids[0]
        h = len(ids) // 2
        return add(pairwise(ids[:h]), pairwise(ids[h:]))

    def numpy_block(ids):
        if len(ids) < 8:
            res = leaf("-0.0", -0.0)
            for i in ids:
                res = add(res, i)
            return res
        r = list(ids[:8])
        end = len(ids) - len(ids) % 8
        for lo in range(8, end, 8):
            r = [add(r[j], ids[lo + j]) for j in range(8)]
        res = add(add(add(r[0], r[1]), add(r[2], r[3])), add(add(r[4], r[5]), add(r[6], r[7])))
        for i in ids[end:]:
            res = add(res, i)
        return res

    def numpy_pairwise(ids):
        if len(ids) <= 128:
            return numpy_block(ids)
        h = (len(ids) // 2) // 8 * 8
        return add(numpy_pairwise(ids[:h]), numpy_pairwise(ids[h:]))

    if order == "sequential":
        res = leaves[0]
        for i in leaves[1:]:
            res = add(res, i)
    elif order == "pairwise":
        res = pairwise(leaves)
    elif order == "tree":
        res = leaf("0", 0.0)
        for lo in range(0, len(leaves), block):
            s = leaves[lo : lo + block]
            s = s + [leaf("pad", 0.0) for _ in range(block - len(s))]
            k = 1
            while k < block:
                for i in range(0, block, 2 * k):
                    s[i] = add(s[i], s[i + k])
                k *= 2
            res = add(res, s[0])
    else:
        if info.name == "bfloat16":  # NumPy has no bfloat16 loop: ml_dtypes adds in turn
            res = leaf("0", 0.0)
            for i in leaves:
                res = add(res, i)
        else:
            res = add(leaf("0", 0.0), numpy_pairwise(leaves))
            if acc != info.name:  # float16: rounded to the output format at the end
                v = tr.nodes[res]["value"]
                out = np.asarray(as_format(v, info.name), dt)[()]
                tr.nodes.append(
                    {
                        "label": info.name,
                        "value": out,
                        "children": (res,),
                        "level": tr.nodes[res]["level"] + 1,
                        "covers": tr.nodes[res]["covers"],
                    }
                )
                node = len(tr.nodes) - 1
                ex = exact_of(node)
                f = Fraction(float(out))
                tr.steps.append(
                    SumStep(
                        node,
                        res,
                        None,
                        out,
                        ex,
                        tr.nodes[node]["covers"],
                        _ulps(f - Fraction(float(v)), out, info.name),
                        _ulps(f - ex, out, info.name),
                    )
                )
    tr.exact_total = exact_sum(x)
    return tr
