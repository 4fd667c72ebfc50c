"""Lesson 01's exercises, bits and ulps: the gap after a number, bit patterns, the next value,
rounding to bfloat16, subnormals, which format holds a number closer."""

from __future__ import annotations

import math
from decimal import Decimal
from fractions import Fraction

import numpy as np

from ..formats import as_format, next_up, ulp, ulp_distance
from .bits import bit_fields, bits_of
from .exercise import (
    Exercise,
    bars,
    bits_figure,
    closer,
    decimal,
    number_line,
    pick,
    registered,
    round_decimal,
)
from .numbers import exact_text, text_of


@registered("ulp-float32", "01")
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
        figure_spec=lambda f: number_line("float32", v, {"x": v}),
    )


@registered("bits-float16", "01")
def _bits_float16(rng):
    d = "0.1" if rng is None else f"{rng.uniform(-100, 100):.3f}".rstrip("0").rstrip(".")

    def compute():
        v = round_decimal(d, "float16")
        b = bit_fields(bits_of(v, "float16"), "float16")
        return {
            "answer": v,
            "d": d,
            "bits": b["bit_string"],
            "E": b["exponent_field"],
            "e": b["exponent"],
            "F": b["fraction_field"],
            "value": text_of(v),
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
        figure_spec=lambda f: bits_figure(f["answer"], "float16"),
    )


@registered("next-up-float16", "01")
def _next_up_float16(rng):
    v = np.float16(1.0) if rng is None else as_format(rng.uniform(0.01, 3000), "float16")
    text = text_of(v)

    def compute():
        up = next_up(v)
        return {"answer": up, "x": text, "gap": text_of(ulp(v))}

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
        figure_spec=lambda f: number_line("float16", v, {"x": v, "next_up": f["answer"]}),
    )


@registered("round-bfloat16", "01")
def _round_bfloat16(rng):
    d = decimal(rng, 0.01, 1000, 5, "3.14159")

    def compute():
        v = round_decimal(d, "bfloat16")
        err = Fraction(float(v)) - Fraction(Decimal(d))
        return {
            "answer": v,
            "d": d,
            "gap": exact_text(ulp(v)),
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
        figure_spec=lambda f: number_line("bfloat16", f["answer"], {d: float(Decimal(d))}, n=2),
    )


@registered("subnormal-steps", "01")
def _subnormal_steps(rng):
    k = 17 if rng is None else int(rng.integers(2, 1024))
    v = np.float16(k * 2.0**-24)

    def compute():
        return {
            "answer": int(ulp_distance(np.float16(0), v)),
            "x": str(v),
            "tiny": text_of(ulp(np.float16(0))),
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
        figure_spec=lambda f: bars(["x / 2**-24"], [float(v) / 2.0**-24], "steps from 0"),
    )


@registered("bfloat16-or-float16", "01")
def _bf16_or_f16(rng):
    d = pick(rng, ["70000", "0.1", "3.0e-6", "1.0e-8", "300000", "12.34", "0.7"], "70000")
    if rng is not None and rng.random() < 0.5:
        d = decimal(rng, 1e-9, 1e6, 3, d)

    def compute():
        answer, (f16, bf16), (a, b) = closer(d, ("float16", "bfloat16"))
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
        figure_spec=lambda f: bars(
            ["float16", "bfloat16"],
            [min(f["e16"], 1e300), f["eb16"]],
            "absolute error",
            "rounding error of each format",
        ),
    )
