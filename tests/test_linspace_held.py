"""linspace between FP8, FP6 and FP4 ends (ml_dtypes' OCP types) and in the formats of
``fpx.format``, against the formulas written here in Fractions, each operation rounded
through ml_dtypes' enumeration of the format's values (test_small_data's ``rnd``; a zero's
sign is not compared); the float16 twin against float16's own lerp, fma and exact."""

from __future__ import annotations

from fractions import Fraction

import ml_dtypes
import numpy as np
import pytest
from test_elementwise_held import every_value
from test_small_data import OCP, rnd

import fpexplore as fpx
from fpexplore.ops import linspace as L

import oracle

pytestmark = pytest.mark.usefixtures("clean_formats")


def oracle_linspace(a: float, b: float, num: int, endpoint: bool, variant: str, name: str):
    def r(q) -> float:
        return rnd(Fraction(q), name) if q else 0.0

    div = num - 1 if endpoint else num
    fa, fb = Fraction(a), Fraction(b)
    out = []
    for i in range(num):
        if variant == "exact":
            y = r(fa + i * (fb - fa) / div) if div > 0 else a
            y = a if i == 0 else y
        elif div <= 0:
            y = r(r(0 * r(fb - fa)) + fa)
        elif variant == "lerp":
            t = r(Fraction(r(i)) / Fraction(r(div)))
            y = r(Fraction(r(fa * Fraction(r(1 - Fraction(t))))) + Fraction(r(fb * Fraction(t))))
        else:  # fma
            step = r(Fraction(r(fb - fa)) / Fraction(r(div)))
            y = r(Fraction(r(i)) * Fraction(step) + fa)
        out.append(y)
    if endpoint and num > 1:
        out[-1] = b
    return out


@pytest.mark.parametrize("name", list(OCP))
def test_lerp_fma_and_exact_round_each_step_to_the_format(name):
    rng = np.random.default_rng(len(name) + 3)
    values = every_value(name)
    values = values[np.isfinite(values.astype(np.float64))]
    for num in (0, 1, 2, 5, 33):
        for endpoint in (True, False):
            a, b = rng.choice(values, 2)
            for variant in ("lerp", "fma", "exact"):
                got = fpx.linspace(a, b, num, variant=variant, endpoint=endpoint)
                assert got.dtype == OCP[name] and got.shape == (num,)
                want = oracle_linspace(float(a), float(b), num, endpoint, variant, name)
                oracle.CHECKED["cases"] += num
                assert got.astype(np.float64).tolist() == want, (variant, a, b, num, endpoint)


TWIN = "twin_half_ls"


def test_the_float16_twin_gives_float16s_values():
    fpx.format(11, 15, name=TWIN)
    rng = np.random.default_rng(11)
    ends = rng.standard_normal((12, 2)).astype(np.float16) * np.float16(30)
    for (a, b), num in zip(ends, (1, 2, 3, 7, 50, 100, 1000, 2049, 9, 5000, 4, 300)):
        for variant in ("lerp", "fma", "exact"):
            for endpoint in (True, False):
                want = fpx.linspace(a, b, num, variant=variant, endpoint=endpoint)
                got = L.linspace_held(float(a), float(b), num, TWIN, variant, endpoint=endpoint)
                assert got.dtype == np.float64
                assert got.tolist() == want.astype(np.float64).tolist(), (variant, a, b, num)


def test_what_has_no_such_semantics_is_refused():
    a, b = (np.array(v, ml_dtypes.float8_e4m3fn) for v in (1.0, 2.0))
    with pytest.raises(ValueError, match="linspace variant 'numpy2' has no float8_e4m3 sem"):
        fpx.linspace(a, b, 5)  # (numpy2: the default)
    with pytest.raises(TypeError, match="dtype=<class 'numpy.float32'> with float8_e4m3 end"):
        fpx.linspace(a, b, 5, variant="exact", dtype=np.float32)
    assert fpx.linspace(a, 3.0, 3, variant="lerp").tolist() == [1.0, 2.0, 3.0]  # (adopted)
    fpx.format(30, 15, name="t_ls30")
    with pytest.raises(ValueError, match="linspace: t_ls30 .precision 30, emax 15. is not"):
        L.linspace_held(1.0, 2.0, 3, "t_ls30", "exact")
    with pytest.raises(ValueError, match="format 't_ls30': linspace takes no t_ls30 data"):
        fpx.compare("linspace", format="t_ls30", n=4)


def test_ends_of_any_shape_broadcast_along_an_axis():
    a = np.array([[0.5, 1.0]], ml_dtypes.float8_e5m2)
    b = np.array([[3.0], [-2.0]], ml_dtypes.float8_e5m2)
    got = fpx.linspace(a, b, 4, variant="fma", axis=-1)
    assert got.shape == (2, 2, 4) and got.dtype == OCP["float8_e5m2"]
    for j, k in np.ndindex(2, 2):
        s, e = float(a[0, k]), float(b[j, 0])
        want = oracle_linspace(s, e, 4, True, "fma", "float8_e5m2")
        assert got[j, k].astype(np.float64).tolist() == want


@pytest.mark.parametrize("fmt", ["float8_e4m3", "float4_e2m1", TWIN])
def test_compare_draws_the_format_and_its_rows_are_linspaces(fmt):
    fpx.format(11, 15, name=TWIN)
    cmp = fpx.compare("linspace", format=fmt, n=40, seed=5)
    s, e = cmp.inputs["start"], cmp.inputs["stop"]

    def run(variant):
        if fmt == TWIN:
            return L.linspace_held(s, e, 40, fmt, variant)
        return fpx.linspace(s, e, 40, variant=variant)

    assert [k[0] for k in cmp.results if k[1] == "emulated"] == ["lerp", "fma"]
    for variant in ("lerp", "fma"):
        assert cmp.results[(variant, "emulated")].tobytes() == run(variant).tobytes()
    assert np.asarray(cmp.reference).tobytes() == run("exact").tobytes()
