"""fpx.linspace: NumPy 1/2 variants against real NumPy (recorded and live), CuPy variants and
the formulas against slow definitions, exact against Fractions, cupy/cupy#8724's numbers."""

from __future__ import annotations

import gzip
import json
import math
import warnings
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

import fpexplore as fpx

import oracle
from linspace_grid import cases, decode_input, matches

DATA = Path(__file__).parent / "data"


def _recording(name):
    with gzip.open(DATA / name, "rt") as f:
        return json.load(f)


@pytest.mark.parametrize(
    "name,variant",
    [("linspace_numpy-1.26.4.json.gz", "numpy1"), ("linspace_numpy-2.2.6.json.gz", "numpy2")],
)
def test_numpy_variants_equal_recorded_numpy(name, variant):
    """21,150 calls recorded under the real NumPy (tests/data/record_linspace.py)."""
    doc = _recording(name)
    assert doc["numpy_version"] == name.split("-")[1][: -len(".json.gz")]
    bad = []
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        for c in doc["cases"]:
            s, e = decode_input(c["start"]), decode_input(c["stop"])
            y = fpx.linspace(
                s,
                e,
                c["num"],
                variant=variant,
                endpoint=c["endpoint"],
                dtype=c["dtype"],
                axis=c["axis"],
            )
            if not matches(c["out"], y):
                bad.append(c["id"])
    oracle.CHECKED["cases"] += len(doc["cases"])
    assert len(doc["cases"]) == 21150 and bad == []


def test_numpy2_equals_installed_np_linspace():
    if int(np.__version__.split(".")[0]) < 2:
        pytest.skip("numpy2 models NumPy >= 2")
    n = 0
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        for meta, s, e in cases():
            if meta["num"] > 50:
                continue  # the recording covers the big ones; keep this test quick
            kw = dict(endpoint=meta["endpoint"], dtype=meta["dtype"], axis=meta["axis"])
            want = np.linspace(s, e, meta["num"], **kw)
            got = fpx.linspace(s, e, meta["num"], variant="numpy2", **kw)
            assert got.dtype == want.dtype and got.shape == want.shape
            assert np.array_equal(
                got.view(f"u{got.dtype.itemsize}"), want.view(f"u{want.dtype.itemsize}")
            ), meta
            n += 1
    oracle.CHECKED["cases"] += n


def test_cupy_issue_8724_numbers():
    """cupy/cupy#8724: the reporter's script, its numbers, and what NumPy 2 makes of it."""
    chirp = np.array(50e-6, dtype=np.float32)
    # NumPy 1.x evaluated the script's arithmetic in float64 (0-d arrays were promoted)
    f_if_max = 1e9 / np.float64(chirp) * 2 * 150 / 3e8
    num1 = int(np.float64(chirp) / (1 / f_if_max / 2))
    assert num1 == 2000
    y1 = fpx.linspace(0, chirp, num1, variant="numpy1", dtype=np.float64)
    assert y1[5] == 1.2506252810628754e-07  # NumPy 1.26.4 (reported)
    y2 = fpx.linspace(0, chirp, num1, variant="cupy-array", dtype=np.float64)
    assert y2[5] == 1.2506252744515223e-07  # CuPy (reported)
    assert fpx.linspace(0, chirp, num1, variant="numpy2", dtype=np.float64)[5] == y2[5]
    # NumPy 2 (NEP 50) keeps the script's own arithmetic in float32: num becomes 1999
    f32 = 1e9 / chirp * 2 * 150 / 3e8
    num2 = int(chirp / (1 / f32 / 2))
    assert num2 == 1999
    y3 = fpx.linspace(0, chirp, num2, variant="numpy2", dtype=np.float64)
    assert y3[5] == 1.251251262601727e-07
    # closer to the truth (5 * stop / 1999 for the float32 stop, rounded to float64): NumPy 1
    exact = fpx.linspace(0.0, float(chirp), num1, variant="exact")
    assert exact.dtype == np.float64
    assert abs(fpx.ulp_distance(exact[5], y1[5])) <= 1
    assert abs(fpx.ulp_distance(exact[5], y2[5])) > 10**7  # float32 arithmetic: ~1e-8 relative
    # the exact variant in the inputs' float32 rounds to CuPy's float32 value
    assert fpx.linspace(0, chirp, num1, variant="exact")[5] == np.float32(y2[5])


# ----------------------------------------------------------------------------- formulas


def _dt(start, stop):
    return np.result_type(start, stop, 1.0)


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
@pytest.mark.parametrize("endpoint", [True, False])
def test_lerp_fma_exact_match_definitions(dtype, endpoint):
    rng = np.random.default_rng(3)
    fmt = np.dtype(dtype).name
    for _ in range(8):
        s, e = (rng.standard_normal(2) * 10).astype(dtype)
        for num in (0, 1, 2, 5, 33):
            div = num - 1 if endpoint else num
            lerp = fpx.linspace(s, e, num, variant="lerp", endpoint=endpoint)
            fma = fpx.linspace(s, e, num, variant="fma", endpoint=endpoint)
            exact = fpx.linspace(s, e, num, variant="exact", endpoint=endpoint)
            assert lerp.dtype == fma.dtype == exact.dtype == dtype
            T = np.dtype(dtype).type
            for i in range(num):
                last = endpoint and i == num - 1 and num > 1
                if div <= 0:
                    want_l = want_f = T(s + T(0) * T(e - s))
                else:
                    t = T(T(i) / T(div))
                    want_l = T(T(s * T(T(1) - t)) + T(e * t))
                    step = T(T(e - s) / T(div))
                    want_f = T(oracle.fma(float(T(i)), float(step), float(s), fmt))
                q = Fraction(float(s)) + i * (Fraction(float(e)) - Fraction(float(s))) / max(div, 1)
                want_x = T(oracle.round_fraction(q, fmt)) if div > 0 else T(s)
                if last:
                    want_l = want_f = want_x = e
                assert oracle.same(lerp[i], T(want_l)), ("lerp", s, e, num, i)
                assert oracle.same(fma[i], T(want_f)), ("fma", s, e, num, i)
                assert oracle.same(exact[i], T(want_x)), ("exact", s, e, num, i)
                oracle.CHECKED["cases"] += 3


def test_exact_is_never_further_than_numpy():
    """Correct rounding: no variant is closer to the exact value than `exact` itself."""
    for s, e, num in ((0.1, 2.7, 50), (-1.3, 1e-3, 1000), (np.float32(0.0), np.float32(1.7), 777)):
        x = fpx.linspace(s, e, num, variant="exact")
        for v in ("numpy2", "lerp", "fma"):
            y = fpx.linspace(s, e, num, variant=v)
            qs = [
                Fraction(float(s)) + i * (Fraction(float(e)) - Fraction(float(s))) / (num - 1)
                for i in range(num)
            ]
            ex = [abs(Fraction(float(a)) - q) for a, q in zip(x, qs)]
            ey = [abs(Fraction(float(a)) - q) for a, q in zip(y, qs)]
            assert all(a <= b for a, b in zip(ex, ey)), v


def test_cupy_scalar_path_definition():
    """Source-derived: float64 kernel fma(i, step, start), step = float(stop-start)/div on the
    host, rounded once to the result dtype, last element = stop."""
    for s, e, num in ((0.1, 2.7, 50), (np.float32(0.5), np.float32(3.25), 17), (-2, 7, 10)):
        y = fpx.linspace(s, e, num, variant="cupy-scalar")
        dt = np.result_type(s, e, 1.0) if type(s) is not int else np.dtype(np.float64)
        assert y.dtype == dt
        step = float(e - s) / (num - 1)
        for i in range(num - 1):
            want = np.asarray(oracle.fma(float(i), step, float(s), "float64")).astype(dt)
            assert oracle.same(y[i], want[()]), (s, e, i)
        assert y[-1] == e
    # it differs from NumPy in 11 of 50 elements for linspace(0.1, 2.7, 50)
    d = fpx.linspace(0.1, 2.7, 50, variant="cupy-scalar") != np.linspace(0.1, 2.7, 50)
    assert np.flatnonzero(d).tolist() == [7, 11, 14, 18, 23, 24, 29, 30, 31, 39, 46]
    with pytest.raises(ValueError, match="both be scalars"):
        fpx.linspace(np.zeros(2), 1.0, 5, variant="cupy-scalar")


def test_cupy_array_path_flushes_float32_subnormals():
    s, e = np.array(0.0, np.float32), np.array(1e-44, np.float32)  # a subnormal stop
    a = fpx.linspace(s, e, 7, variant="cupy-array")
    b = fpx.linspace(s, e, 7, variant="numpy2")
    assert a.dtype == b.dtype == np.float32
    assert np.all(a[:-1] == 0) and np.any(b[:-1] != 0)  # -ftz=true flushes the tiny steps
    x = np.array([0.1, 0.2], np.float32)
    assert np.array_equal(fpx.linspace(x, 2 * x, 9, variant="cupy"), np.linspace(x, 2 * x, 9))


def test_linspace_errors():
    with pytest.raises(ValueError, match="num must be >= 0"):
        fpx.linspace(0.0, 1.0, -1)
    with pytest.raises(TypeError, match="num must be an integer"):
        fpx.linspace(0.0, 1.0, 2.5)
    # a num no memory holds: named (it was NumPy's MemoryError, or minutes of the exact
    # variant before it) (issue 36)
    for variant in ("numpy2", "exact"):
        with pytest.raises(ValueError, match=r"^linspace: num=1000000000000000 needs about"):
            fpx.linspace(0.0, 1.0, 10**15, variant=variant)
    with pytest.raises(ValueError, match="valid variants: numpy1, numpy2"):
        fpx.linspace(0.0, 1.0, 5, variant="numpy3")
    with pytest.raises(TypeError, match="complex"):
        fpx.linspace(0.0, 1j, 5)
    with pytest.raises(TypeError, match="real numbers"):
        fpx.linspace("a", 1.0, 5)
    for v in fpx.variants("linspace"):
        assert fpx.linspace(0.0, 1.0, 0, variant=v).shape == (0,)
        assert fpx.linspace(0.5, 1.0, 1, variant=v).tolist() == [0.5]
    assert math.isnan(float(fpx.linspace(-np.inf, np.inf, 3, variant="exact")[1]))


def test_compare_takes_your_start_and_stop_in_every_form():
    """compare("linspace", inputs=...) with Python floats, NumPy scalars, 0-d arrays or a
    tuple (it always failed: "cupy-scalar: start and stop must both be scalars", the 0-d
    arrays reaching CuPy's scalar path); every form gives one table, its reference the
    correctly rounded start + i (stop - start) / (num - 1) (Fraction), np.linspace's row
    np.linspace itself; an array where a scalar belongs is refused by name."""
    start, stop, num = np.float32(0.1), np.float32(7.3), 9
    forms = [
        {"start": start, "stop": stop, "num": num},
        {"start": np.array(start), "stop": np.array(stop), "num": num},
        (start, stop, num),
    ]
    tables = [fpx.compare("linspace", inputs=f) for f in forms]
    step = (Fraction(float(stop)) - Fraction(float(start))) / (num - 1)
    want = [oracle.round_fraction(Fraction(float(start)) + i * step, "float32") for i in range(num)]
    for cmp in tables:
        assert cmp.format == "float32" and cmp.n == num
        assert [float(v) for v in cmp.reference] == want
        np_row = cmp.results[("np.linspace", "numpy")]
        assert np_row.tobytes() == np.linspace(start, stop, num).tobytes()
        assert cmp.table.drop(columns=["time_ms", "compile_ms"]).equals(
            tables[0].table.drop(columns=["time_ms", "compile_ms"])
        )
    py = fpx.compare("linspace", inputs={"start": 0.0, "stop": 1.0, "num": 5})
    assert py.format == "float64" and list(py.reference) == [0.0, 0.25, 0.5, 0.75, 1.0]
    with pytest.raises(ValueError, match="linspace's input start must be a scalar, got shape"):
        fpx.compare("linspace", inputs={"start": [0.0, 1.0], "stop": 1.0, "num": 5})


def test_linspace_dtype_and_axis_errors_name_the_argument():
    with pytest.raises(TypeError, match="^linspace: dtype: data type 'float33'"):
        fpx.linspace(0.0, 1.0, 5, dtype="float33")
    with pytest.raises(ValueError, match="^linspace: axis 3 is out of bounds for a 2-D result"):
        fpx.linspace(np.zeros(2), np.ones(2), 5, axis=3)
    with pytest.raises(ValueError, match="axis -3"):
        fpx.linspace(np.zeros(2), np.ones(2), 5, axis=-3)
    with pytest.raises(TypeError, match="^axis must be an integer"):
        fpx.linspace(0.0, 1.0, 5, axis="a")
    # the bounds NumPy accepts stay accepted, with NumPy's values
    for axis in (0, 1, -1, -2):
        got = fpx.linspace(np.zeros(2), np.ones(2), 3, axis=axis)
        assert np.array_equal(got, np.linspace(np.zeros(2), np.ones(2), 3, axis=axis))


def test_linspace_refuses_what_it_would_use_quietly():
    """A masked start or stop (the masked value was used), a bool num (True was 1), and, for
    the exact variant, an int float64 cannot hold (2**53 + 1 was rounded to 2**53 on the way
    in): clear errors naming the argument. NumPy's own variants keep NumPy's behaviour."""
    with pytest.raises(TypeError, match="linspace: start: masked arrays are not supported"):
        fpx.linspace(np.ma.array([0.0, 1.0], mask=[0, 1]), 2.0, 3)
    with pytest.raises(TypeError, match="linspace: num must be an integer, got True"):
        fpx.linspace(0.0, 1.0, True)
    with pytest.raises(ValueError, match=r"stop=9007199254740993 is not exact in float64"):
        fpx.linspace(1, 2**53 + 1, 3, variant="exact")
    with pytest.raises(ValueError, match=r"start=1152921504606846977 is not exact"):
        fpx.linspace(np.array([2**60 + 1]), 0, 3, variant="exact")
    # what float64 holds is taken; the NumPy variant rounds as np.linspace does
    mid = fpx.linspace(1, 2**53, 3, variant="exact")[1]
    assert mid == (1 + 2**53) / 2  # Python divides ints with one correct rounding
    assert np.array_equal(fpx.linspace(1, 2**53 + 1, 3), np.linspace(1, 2**53 + 1, 3))


def test_start_and_stop_that_do_not_broadcast_are_named():
    """Pass 5 (issue 36): NumPy's "operands could not be broadcast together" named neither."""
    with pytest.raises(ValueError, match=r"start of shape \(2,\) and stop of shape \(3,\) do not"):
        fpx.linspace(np.zeros(2), np.ones(3), 4)
    assert fpx.linspace(np.zeros(2), np.ones((3, 1)), 2).shape == (2, 3, 2)  # as np.linspace


def test_a_big_endian_start_is_read_as_its_values():
    """A 0-d big-endian start beside a Python stop: numpy2 and cupy-array passed its
    byte-ordered dtype to a ufunc (NumPy's TypeError) and exact called it an unknown format
    (pass 13). Every variant now reads its values; numpy2 equals np.linspace itself."""
    for dt in (">f4", ">f8"):
        s = np.array(1.5, dt)
        here = s.astype(s.dtype.newbyteorder("="))
        np.testing.assert_array_equal(fpx.linspace(s, 7.25, 5), np.linspace(s, 7.25, 5))
        for v in ("numpy2", "cupy-array", "exact", "numpy1", "lerp", "fma"):
            got, want = fpx.linspace(s, 7.25, 5, variant=v), fpx.linspace(here, 7.25, 5, variant=v)
            assert got.dtype == want.dtype and got.tobytes() == want.tobytes(), (dt, v)


def test_compare_takes_numpy_integer_num_in_its_inputs():
    """Pass 32: compare('linspace', inputs={..., 'num': np.int64(5)}) raised "'numpy.int64'
    object has no attribute 'bit_length'" (or an OverflowError) from the exact reference for
    some start and stop. num is read as Python's int; the reference is the exact value of
    start + k (stop - start) / (num - 1) rounded once (Fraction, NumPy's float32)."""
    from oracle import round_fraction

    for s, e, num in ((0.6369617, 0.26978672, 5), (1e-20, 7e-20, 9)):
        s, e = np.float32(s), np.float32(e)
        cmp = fpx.compare("linspace", inputs={"start": s, "stop": e, "num": np.int64(num)})
        assert type(cmp.inputs["num"]) is int
        fs, fe = Fraction(float(s)), Fraction(float(e))
        want = [round_fraction(fs + k * (fe - fs) / (num - 1), "float32") for k in range(num)]
        assert cmp.reference.tolist() == want


def test_the_exact_values_of_a_span_past_float64s_range():
    """Pass 33: linspace(-max, max, 2, variant="exact") raised OverflowError converting the
    step (2 max) to a float; the values are start + k (stop - start) / (num - 1), exactly,
    rounded once (Fraction, NumPy's float64 rounding of a rational)."""
    from oracle import round_fraction

    M = float(np.finfo(np.float64).max)
    for s, e, num in ((-M, M, 2), (M, -M, 2), (-M, M, 3), (-M, M / 2, 4)):
        fs, fe = Fraction(s), Fraction(e)
        want = [round_fraction(fs + k * (fe - fs) / (num - 1), "float64") for k in range(num)]
        assert fpx.linspace(s, e, num, variant="exact").tolist() == want
        cmp = fpx.compare("linspace", inputs={"start": s, "stop": e, "num": num})
        assert cmp.reference.tolist() == want


def test_an_exact_rational_start_is_named_with_what_to_do():
    """Pass 34: linspace(Fraction(1, 3), 2, 5) said "got object"."""
    with pytest.raises(TypeError, match=r"got Fraction\(1, 3\) \(exact rationals: round them"):
        fpx.linspace(Fraction(1, 3), 2, 5)
