"""What a fuzzing pass over the public API found (issue 22), kept as tests so the next
regression is caught: calls that quietly did something else, and states a user could not get
out of. Each case gives the right answer or a clear refusal."""

from __future__ import annotations

import inspect
import warnings

import numpy as np
import pytest

import fpexplore as fpx

MASKED = np.ma.masked_array([1, 1e30, 2], mask=[0, 1, 0], dtype=np.float32)
MASKED_2D = np.ma.masked_array(np.ones((2, 2), np.float32), mask=[[0, 1], [0, 0]])

# every public function that takes an array, called with a masked one (np.sum gives 3 for
# MASKED; the functions used the hidden 1e30)
ARRAY_CALLS = {
    "sum": lambda m, M: fpx.sum(m),
    "dot": lambda m, M: fpx.dot(m, m),
    "matmul": lambda m, M: fpx.matmul(M, M),
    "exact_sum": lambda m, M: fpx.exact_sum(m),
    "exact_dot": lambda m, M: fpx.exact_dot(m, m),
    "exact_matmul": lambda m, M: fpx.exact_matmul(M, M),
    "fma": lambda m, M: fpx.fma(m, m, m),
    "mean": lambda m, M: fpx.mean(m),
    "variance": lambda m, M: fpx.variance(m),
    "softmax": lambda m, M: fpx.softmax(m),
    "logsumexp": lambda m, M: fpx.logsumexp(m),
    "exp": lambda m, M: fpx.exp(m),
    "log": lambda m, M: fpx.log(m),
    "sin": lambda m, M: fpx.sin(m),
    "tanh": lambda m, M: fpx.tanh(m),
    "sqrt": lambda m, M: fpx.sqrt(m),
    "pow": lambda m, M: fpx.pow(m, m),
    "ulp_error": lambda m, M: fpx.ulp_error("exp", m),
    "cdist": lambda m, M: fpx.cdist(M, M),
    "adam_step": lambda m, M: fpx.adam_step(
        m, m, m, m, 1, lr=1e-3, beta1=0.9, beta2=0.999, eps=1e-8
    ),
    "as_format": lambda m, M: fpx.as_format(m, "bfloat16"),
    "quantize": lambda m, M: fpx.quantize(m, "mxfp4"),
    "to_bits": lambda m, M: fpx.to_bits(m),
    "fields": lambda m, M: fpx.fields(m),
    "bit_string": lambda m, M: fpx.bit_string(m),
    "hex_string": lambda m, M: fpx.hex_string(m),
    "shortest_repr": lambda m, M: fpx.shortest_repr(m),
    "ulp": lambda m, M: fpx.ulp(m),
    "next_up": lambda m, M: fpx.next_up(m),
    "next_down": lambda m, M: fpx.next_down(m),
    "ulp_distance": lambda m, M: fpx.ulp_distance(m, m),
    "format_of": lambda m, M: fpx.format_of(m),
    "match_orders": lambda m, M: fpx.match_orders(m, np.float32(3), "sum"),
    "explain_numpy": lambda m, M: fpx.explain_numpy("sum", {"x": m}),
    "suggest_tolerance": lambda m, M: fpx.suggest_tolerance(m, m),
    "difference_budget": lambda m, M: fpx.difference_budget(m, "sequential", "pairwise", "sum"),
    "from_bits": lambda m, M: fpx.from_bits(
        np.ma.masked_array([1], mask=[1], dtype=np.uint32), "float32"
    ),
    "pass_rate": lambda m, M: fpx.pass_rate(m, m),
    "adam_run": lambda m, M: list(fpx.adam_run(m, [m], lr=1e-3, beta1=0.9, beta2=0.999, eps=1e-8)),
    "adam_pass_rates": lambda m, M: fpx.adam_pass_rates(
        m, [m], lr=1e-3, beta1=0.9, beta2=0.999, eps=1e-8
    ),
    "mma": lambda m, M: fpx.mma(M, M, M, arch="h100", inputs="tf32"),
    "mma (scale_a, scale_b)": lambda m, M: fpx.mma(
        np.ones((2, 32)),
        np.ones((32, 2)),
        0.0,
        arch="b200",
        inputs="float8_e4m3",
        scale_a=M,
        scale_b=M,
        scale_format="float8_e8m0",
    ),
    "compare": lambda m, M: fpx.compare("sum", inputs=m),
    "diff": lambda m, M: fpx.diff(m, m),
    "explain": lambda m, M: fpx.explain("sum", m, {"a": np.float32(1), "b": np.float32(2)}),
}


@pytest.mark.parametrize("name", sorted(ARRAY_CALLS))
def test_masked_arrays_are_refused_everywhere(name):
    with pytest.raises(TypeError, match="masked arrays are not supported"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ARRAY_CALLS[name](MASKED, MASKED_2D)


@pytest.mark.parametrize("name", sorted(set(ARRAY_CALLS) - {"from_bits"}))
def test_ragged_lists_are_refused_by_name_everywhere(name):
    """A ragged nested list is no array: quantize, format_of and difference_budget let
    NumPy's "setting an array element with a sequence" through, naming no argument."""
    with pytest.raises((TypeError, ValueError)) as err:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ARRAY_CALLS[name]([[1.0], [1.0, 2.0]], [[1.0, 2.0], [3.0]])
    assert "inhomogeneous" not in str(err.value) and "not iterable" not in str(err.value)


@pytest.mark.parametrize("name", sorted(set(ARRAY_CALLS) - {"from_bits"}))
def test_lists_mixing_booleans_with_numbers_are_refused_everywhere(name):
    """Pass 5 (issue 36): [True, 0.5] read as [1.0, 0.5] (fpx.sum([True, 2.5]) was 3.5)
    while True alone, or a list of booleans, was refused. (match_orders reads a list as
    one input per observation: its observation is that list here.)"""
    call = ARRAY_CALLS[name]
    if name == "match_orders":
        call = lambda m, M: fpx.match_orders([m], [np.float32(3)], "sum")  # noqa: E731
    with pytest.raises(TypeError, match="boolean"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            call([True, 0.5, 2.0], [[1.0, False], [0.5, 2.0]])


def test_every_public_array_function_is_in_the_masked_list():
    """A public function that takes arrays and is not listed above would escape the test."""
    takes_arrays = {"a", "b", "x", "A", "B", "param", "bits", "inputs", "values", "observed"}
    missing = []
    for name in fpx.__all__:
        obj = getattr(fpx, name)
        if not inspect.isfunction(obj):
            continue
        params = set(inspect.signature(obj).parameters)
        if params & takes_arrays and name not in ARRAY_CALLS:
            missing.append(name)
    assert not missing, f"add these to ARRAY_CALLS: {missing}"


# the public functions that take **keywords (passed on to an order or a variant): a valid call
# to which the test adds one unknown keyword
KEYWORD_CALLS = {
    "sum": lambda **kw: fpx.sum(np.ones(8, np.float32), "tree", **kw),
    "dot": lambda **kw: fpx.dot(np.ones(8, np.float32), np.ones(8, np.float32), **kw),
    "matmul": lambda **kw: fpx.matmul(
        np.ones((2, 2), np.float32), np.ones((2, 2), np.float32), **kw
    ),
    "cdist": lambda **kw: fpx.cdist(np.ones((2, 2), np.float32), np.ones((2, 2), np.float32), **kw),
    "compare": lambda **kw: fpx.compare("sum", n=10, **kw),
    "sweep": lambda **kw: fpx.sweep("sum", sizes=[10], seeds=1, progress=False, **kw),
    "explorer": lambda **kw: fpx.explorer(**kw),
    "reveal": lambda **kw: fpx.reveal(np.sum, 8, **kw),
    "on_gpu": lambda **kw: fpx.on_gpu("sum", np.ones(8, np.float32), order="tree", **kw),
}


@pytest.mark.parametrize("name", sorted(set(fpx.__all__)))
def test_every_public_function_refuses_unknown_keywords(name):
    """A keyword nobody uses is a TypeError naming it (it vanished into **params: blok=64 ran
    block=128 and the snippet still showed blok=64)."""
    obj = getattr(fpx, name)
    if not callable(obj) or inspect.isclass(obj):
        pytest.skip(f"{name} is not a function")
    try:
        params = inspect.signature(obj).parameters.values()
        takes_any = any(p.kind is p.VAR_KEYWORD for p in params)
    except (TypeError, ValueError):
        takes_any = True
    if takes_any and name not in KEYWORD_CALLS and name not in ("ops", "orders", "backends"):
        raise AssertionError(f"{name} takes **keywords: add a valid call to KEYWORD_CALLS")
    call = KEYWORD_CALLS.get(name, lambda **kw: obj(**kw))
    with pytest.raises(TypeError, match="blok"):
        call(blok=64)


def test_none_is_not_a_format():
    x32 = np.ones(3, np.float32)
    with pytest.raises(TypeError, match="a format is needed, got None"):
        fpx.as_format(x32, None)  # was float64
    with pytest.raises(TypeError, match="a format is needed, got None"):
        fpx.format_info(None)


def test_run_elsewhere_ignores_the_callers_folder(tmp_path, monkeypatch):
    """A json.py in the working folder ran in the child (python -c puts the folder first on
    its import path); the child now starts isolated from it."""
    (tmp_path / "json.py").write_text("raise SystemExit('the working folder was imported')\n")
    (tmp_path / "numpy.py").write_text("raise SystemExit('the working folder was imported')\n")
    monkeypatch.chdir(tmp_path)
    x = np.arange(5, dtype=np.float32)
    out, info = fpx.machine.run_elsewhere("np.sum", x)
    assert out == np.float32(10)


@pytest.mark.parametrize(
    "kwargs, error",
    [
        (dict(threads=0), ValueError),
        (dict(threads=-1), ValueError),
        (dict(threads=2.7), TypeError),
        (dict(env={"X": None}), TypeError),
        (dict(timeout="x"), TypeError),
    ],
)
def test_run_elsewhere_checks_its_arguments(kwargs, error):
    with pytest.raises(error):
        fpx.machine.run_elsewhere("np.sum", np.ones(3, np.float32), **kwargs)


def test_recordings_go_to_a_user_folder_and_bad_files_are_named(tmp_path, monkeypatch):
    from fpexplore import record
    from fpexplore.backends import replay

    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "share"))
    assert replay.user_folder() == tmp_path / "share" / "fpexplore" / "recordings"
    assert not str(replay.user_folder()).startswith(str(replay.DATA))
    assert str(replay.user_folder()) in record.__doc__ or "user_folder" in record.__doc__
    bad = replay.user_folder()
    bad.mkdir(parents=True)
    (bad / "gpu_broken.json.gz").write_bytes(b"not gzip at all")
    assert bad / "gpu_broken.json.gz" in replay.recordings()  # read beside the shipped ones
    with pytest.raises(ValueError, match="gpu_broken.json.gz: not a readable"):
        replay.load(bad / "gpu_broken.json.gz")


def test_a_damaged_kernel_cache_is_named_and_repaired_by_the_warmup(tmp_path):
    """Damaged cache files (a full disk, a copied cache) made every compare and the warm-up
    fail with numba's raw UnpicklingError/EOFError until the folder was deleted by hand."""
    import os
    import subprocess
    import sys

    cache = tmp_path / "numba-cache"
    env = {**os.environ, "NUMBA_CACHE_DIR": str(cache)}
    warm = (
        "import warnings, fpexplore.warmup as w\n"
        "warnings.simplefilter('always')\n"
        "w.warmup(formats=['float32'], ops=['sum'], progress=False)\n"
        "import fpexplore as fpx, numpy as np\n"
        "print(fpx.sum(np.arange(100, dtype=np.float32), 'pairwise'))\n"
    )

    def run():
        return subprocess.run(
            [sys.executable, "-c", warm], env=env, capture_output=True, text=True, timeout=600
        )

    first = run()
    assert first.returncode == 0, first.stderr
    files = sorted(cache.rglob("*.nb[ic]"))
    assert files, "nothing was cached"
    for path in files:  # truncated data files, garbage index files
        path.write_bytes(
            path.read_bytes()[: len(path.read_bytes()) // 3]
            if path.suffix == ".nbc"
            else b"\x80\x04garbage"
        )
    repaired = run()
    assert repaired.returncode == 0, repaired.stderr[-2000:]
    assert "had a damaged entry" in repaired.stderr and str(cache) in repaired.stderr
    assert repaired.stdout == first.stdout  # the same numbers from the recompiled kernels
    again = run()
    assert again.returncode == 0 and "damaged" not in again.stderr, again.stderr[-2000:]


def test_the_memory_guard_sees_the_process_limit():
    """Under ulimit -v (or a container's cgroup limit, as on Binder) a float64 sum of 10^8
    was not refused and died in NumPy's allocator; the guard now reads RLIMIT_AS too."""
    import subprocess
    import sys

    code = (
        "import resource, os\n"
        "import fpexplore as fpx\n"
        "from fpexplore import machine\n"
        "size = int(open('/proc/self/statm').read().split()[0]) * os.sysconf('SC_PAGE_SIZE')\n"
        "hard = resource.getrlimit(resource.RLIMIT_AS)[1]\n"
        "resource.setrlimit(resource.RLIMIT_AS, (size + (600 << 20), hard))\n"
        "left = machine.available_memory()\n"
        "assert left <= 600 << 20, left\n"
        "try:\n"
        "    fpx.compare('sum', format='float64', n=10**8)\n"
        "except ValueError as e:\n"
        "    print('refused:', e)\n"
    )
    if not sys.platform.startswith("linux"):
        pytest.skip("RLIMIT_AS and /proc/self/statm: Linux")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    assert "refused: n=100000000 needs about" in out.stdout, out.stdout


@pytest.mark.parametrize(
    "call, error, match",
    [
        # huge seeds reached numba (OverflowError, TypingError: non-precise type pyobject)
        (
            lambda: fpx.sum(np.ones(8, np.float32), "shuffled", seed=2**70),
            ValueError,
            "seed must be from 0 to 4294967295",
        ),
        (
            lambda: fpx.parse_spec("shuffled(seed=99999999999999999999)", "sum"),
            ValueError,
            "seed must be from 0 to 4294967295",
        ),
        (
            lambda: fpx.sum(np.ones(8, np.float32), "shuffled", seed=1.5),
            TypeError,
            "seed must be an integer",
        ),
        (lambda: fpx.compare("adam_step", n=10, seed=None), TypeError, "seed must be an integer"),
        (lambda: fpx.bit_string(np.float32(1), sep=None), TypeError, "sep must be a string"),
        (
            lambda: fpx.match_orders(
                np.ones(4, np.float32), np.float32(4), "sum", candidates_=["foo"]
            ),
            ValueError,
            "unknown variant 'foo'",
        ),
        (
            lambda: fpx.fma(np.ones(3, np.float32), np.ones(4, np.float32), np.float32(1)),
            ValueError,
            r"fma: shapes \(3,\) and \(4,\)",
        ),
        (
            lambda: fpx.ulp_distance(np.ones(3, np.float32), np.ones(4, np.float32)),
            ValueError,
            "ulp_distance: shapes",
        ),
        (
            lambda: fpx.pow(np.ones(3, np.float32), np.ones(4, np.float32)),
            ValueError,
            "pow: shapes",
        ),
        (
            lambda: fpx.suggest_tolerance(np.ones(3, np.float32), np.ones(4, np.float32)),
            ValueError,
            "suggest_tolerance: shapes",
        ),
        (lambda: fpx.parse_spec("x" * 50_000, "sum"), ValueError, "50000 characters"),
        (
            lambda: fpx.adam_run(
                np.ones(3, np.float32), None, lr=1e-3, beta1=0.9, beta2=0.999, eps=1e-8
            ),
            TypeError,
            "grads must be",
        ),  # (failed when iterated)
        (
            lambda: fpx.generate("uniform", 10, shape=(3, 4)),
            ValueError,
            r"shape \(3, 4\) holds 12 values, not n=10",
        ),  # n was ignored
    ],
)
def test_unclear_errors_are_clear(call, error, match):
    with pytest.raises(error, match=match) as info:
        call()
    assert len(str(info.value)) < 400  # never an echo of kilobytes


def test_match_orders_takes_specs_as_text_and_a_single_one():
    x = fpx.generate("normal", 1000, "float32", 3)
    got = fpx.sum(x, "pairwise")
    df = fpx.match_orders(x, got, "sum", candidates_="pairwise")
    assert list(df["variant"]) == ["pairwise"] and bool(df["exact"].iloc[0])


def test_adam_pass_rates_of_an_iterator_equal_those_of_a_list():
    """An iterator is streamed to both runs (it was read whole into a list first): the rates
    are the same as for the list of the same gradients."""
    p = fpx.generate("normal", 100, "float32", 1)

    def grads():
        for k in range(5):
            yield fpx.generate("normal", 100, "float32", 10 + k)

    rates = fpx.adam_pass_rates(p, grads(), lr=1e-3, beta1=0.9, beta2=0.999, eps=1e-8)
    same = fpx.adam_pass_rates(p, list(grads()), lr=1e-3, beta1=0.9, beta2=0.999, eps=1e-8)
    assert len(rates) == 5 and np.array_equal(rates, same)


# a signalling NaN of each format, as from_bits or .view() makes it (issue 36): NaN results,
# and no NumPy / ml_dtypes "invalid value encountered" warning on the way
SIGNALLING = {"bfloat16": 0x7F81, "float32": 0x7F800001, "float16": 0x7C01}
PRECISION = {"bfloat16": 8, "float32": 24, "float16": 11}


def _snan_diff(x, ones, fmt):
    assert fpx.diff(x, ones).summary["nan_mismatches"] == 1  # [NaN, 1, 2, 4] against 1s
    assert fpx.diff(x, ones).summary["bitwise_equal"] == 1
    assert fpx.diff(x, x).summary["bitwise_equal"] == 4
    quiet = fpx.from_bits(SIGNALLING[fmt] | 1 << (PRECISION[fmt] - 2), fmt)
    return fpx.diff(x[:1], np.array([quiet])).summary["bitwise_equal"] == 0  # bits kept


def _snan_explain(x, ones, fmt):
    e = fpx.explain("sum", ones, {"gpu": x[0], "cpu": ones.dtype.type(4)})
    return e.table.loc["gpu", "rel_error"] == np.inf and e.table.loc["cpu", "rel_error"] == 0


SNAN_CALLS = {
    "exact_sum": lambda x, ones, fmt: np.isnan(fpx.exact_sum(x)),
    "exact_dot": lambda x, ones, fmt: np.isnan(fpx.exact_dot(x, ones)),
    "diff": _snan_diff,
    # 2 to 1 is 2**(p - 1) values down (one binade), 4 to 1 two binades
    "ulp_distance": lambda x, ones, fmt: (
        fpx.ulp_distance(x, ones, nan="sentinel").tolist()
        == [fpx.ULP_NAN, 0, -(2 ** (PRECISION[fmt] - 1)), -(2 ** PRECISION[fmt])]
    ),
    "suggest_tolerance": lambda x, ones, fmt: (
        (t := fpx.suggest_tolerance(x[:2], x[:2])).both_nan == 1
        and fpx.suggest_tolerance(x, ones).both_nan == 0
        and (t.rtol, t.atol, t.coverage) == (0.0, 0.0, 1.0)
    ),
    "compare": lambda x, ones, fmt: fpx.compare("sum", inputs=x).table["value"].isna().all(),
    "explain": _snan_explain,
}


@pytest.mark.parametrize("fmt", sorted(SIGNALLING))
@pytest.mark.parametrize("name", sorted(SNAN_CALLS))
def test_signalling_nans_give_nan_without_warnings(name, fmt):
    x = np.array([fpx.from_bits(SIGNALLING[fmt], fmt), 1, 2, 4], fpx.format_info(fmt).dtype)
    ones = np.ones(4, x.dtype)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert SNAN_CALLS[name](x, ones, fmt)


def test_generate_takes_a_shape_as_numpy_does_or_names_it():
    # shape=6 was "'int' object is not iterable"; (2, -3) "shape (2, -3) holds -6 values"
    a = fpx.generate("normal", 6, "float16", 3, shape=6)
    assert a.shape == (6,) and np.array_equal(a, fpx.generate("normal", 6, "float16", 3))
    assert fpx.generate("uniform", 6, shape=np.int64(6)).shape == (6,)
    with pytest.raises(ValueError, match="shape must be >= 0, got -3"):
        fpx.generate("uniform", 6, shape=(2, -3))
    with pytest.raises(TypeError, match="shape must be an integer, got 2.0"):
        fpx.generate("uniform", 6, shape=(2.0, 3))
    with pytest.raises(TypeError, match="shape must be a tuple of sizes, got 'ab'"):
        fpx.generate("uniform", 6, shape="ab")


def test_messages_name_what_they_are_about_round_two():
    """The round-two pass's findings: compare's backends in another order is the default
    comparison (its snippet and reproducer take it); from_bits takes ml_dtypes' type (it was
    refused, then read as the format); difference_budget says whether start or end is
    wrong."""
    import ml_dtypes

    cmp = fpx.compare("sum", n=100, backends=["emulated", "numpy"])
    assert "backends" not in cmp.params and "backends" not in cmp.snippet()
    assert "Reproduces" in fpx.reproducer(cmp)
    assert "Reproduces" in fpx.reproducer(
        fpx.compare("sum", n=100, backends=["emulated", "numpy", "replay"])
    )
    got = fpx.from_bits(1, ml_dtypes.float8_e4m3fn)  # ml_dtypes' type: the E4M3 pattern 1
    assert got.dtype == ml_dtypes.float8_e4m3fn and float(got) == 2.0**-9
    x = np.ones(10, np.float32)
    with pytest.raises(ValueError, match="difference_budget: end: unknown variant 'sequentail'"):
        fpx.difference_budget(x, "sequential", "sequentail", "sum")
    with pytest.raises(ValueError, match="difference_budget: start: .*no parameter 'blok'"):
        fpx.difference_budget(x, "blocked(blok=3)", "sequential", "sum")
    # a dot given one array of 100: "takes two arrays as inputs, got 100" (pass 14)
    with pytest.raises(ValueError, match=r"difference_budget\('dot'\) takes two arrays .* got 1$"):
        fpx.difference_budget(np.ones(100, np.float32), "sequential", "pairwise", "dot")


def test_a_custom_accumulator_dot_of_inf_and_zero_warns_nothing():
    """inf * 0 in a dot accumulated in an fpx.format format is NaN, the dot's own answer; it
    also leaked NumPy's "invalid value encountered in multiply" (pass 14)."""
    from fpexplore.userformat import _forget

    fpx.format(3, 2, name="tiny_p14")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            got = fpx.dot(
                np.array([100.0, 0.0]), np.array([0.0, 1.0]), "sequential", accumulate="tiny_p14"
            )
    finally:
        _forget("tiny_p14")
    assert np.isnan(got)  # 100 overflows tiny_p14 (max 7) to inf; inf * 0 is NaN


def test_generate_names_n_when_the_values_do_not_fit_in_memory():
    """10**13 values (80 TB of float64): a MemoryError naming n, not NumPy's own."""
    with pytest.raises(MemoryError, match=r"generate: n=10,000,000,000,000 values do not fit"):
        fpx.generate("uniform", 10**13)


_X8 = np.ones(8, np.float32)
_OP_TAKERS = {
    "orders": lambda op: fpx.orders(op),
    "variants": lambda op: fpx.variants(op),
    "compare": lambda op: fpx.compare(op, n=8),
    "sweep": lambda op: fpx.sweep(op, sizes=[8]),
    "difference_budget": lambda op: fpx.difference_budget(_X8, "pairwise", "sequential", op),
    "match_orders": lambda op: fpx.match_orders(_X8, np.float32(8), op),
    "explain": lambda op: fpx.explain(op, _X8, {"a": np.float32(8), "b": np.float32(8)}),
    "reveal": lambda op: fpx.reveal(np.sum, 8, op=op),
    "explain_numpy": lambda op: fpx.explain_numpy(op, 8),
}


@pytest.mark.parametrize("name", _OP_TAKERS)
@pytest.mark.parametrize("op", [_X8, ["sum"], {"sum": 1}], ids=["array", "list", "dict"])
def test_an_op_that_is_no_name_is_refused_by_name(name, op):
    """Pass 5 (issue 36): an array, list or dict given as ``op`` (arguments out of place, as
    difference_budget(op, start, end, x) for (x, start, end, op)) raised NumPy's "truth
    value of an array is ambiguous" or "unhashable type" without naming op."""
    with pytest.raises((TypeError, ValueError), match=r"^(op must be one of|unknown op) "):
        _OP_TAKERS[name](op)


def test_every_diff_checks_top_by_name():
    """Pass 6 (issue 36): Comparison.diff coerced top with int() (-1 listed nothing, "2"
    listed two, None a bare int() error) where fpx.diff refused them by name."""
    a, b = np.float32([1, 2, 3]), np.float32([1, 2.5, 4])
    c = fpx.compare("sum", inputs=a, variants=["sequential", "pairwise"])
    both = (lambda t: fpx.diff(a, b, top=t), lambda t: c.diff("sequential", "pairwise", top=t))
    for diff in both:
        with pytest.raises(ValueError, match="top must be >= 0, got -1"):
            diff(-1)
        for bad in (1.5, "2", None):
            with pytest.raises(TypeError, match="top must be an integer"):
                diff(bad)
    assert len(fpx.diff(a, b, top=1).table) == 1
    with pytest.raises(ValueError, match=r"'exact' is not a result here \(the exact answer is "):
        c.diff("exact", "pairwise")  # (pass 6: the key that works was only in the list)
    assert c.diff("exact (reference)", "pairwise").equal.all()
    nan = repr(fpx.diff(np.float32([1, np.nan]), np.float32([1, 2])))  # (pass 7)
    assert "largest difference of the 1 counted 0 ulps" in nan  # (pass 27: "of the counted")
    assert "1 NaN mismatch(es) (NaN against a number) not counted in these" in nan


def test_a_diff_says_its_largest_difference_is_of_the_counted_elements():
    """Pass 27: three float64 pairs 2**62 or more ulps apart (a sign flip, 0 against inf,
    1e-300 against 1e300) read "largest difference 0 ulps" while every element differed; and
    a mixed-format refusal did not name the argument (b). Oracle: the bit patterns' keys."""
    import math
    import struct

    import ml_dtypes

    a, b = np.array([1.0, 0.0, 1e-300]), np.array([-1.0, np.inf, 1e300])

    def key(x):
        k = struct.unpack("<q", struct.pack("<d", abs(x)))[0]
        return -k if math.copysign(1.0, x) < 0 else k

    assert all(abs(key(y) - key(x)) >= 2**62 for x, y in zip(a, b))
    d = fpx.diff(a, b)
    assert d.summary["saturated"] == 3 and d.summary["bitwise_equal"] == 0
    said = repr(d)
    assert "largest difference of the 0 counted 0 ulps" in said
    assert "3 element(s) 2**62 or more ulps apart" in said
    assert "largest difference 1 ulps" in repr(fpx.diff([1.0], [np.nextafter(1.0, 2.0)]))
    with pytest.raises(TypeError, match=r"^fpx.diff: b: integer input"):
        fpx.diff(np.float32([1.0]), np.int32([1]))
    with pytest.raises(TypeError, match=r"^fpx.diff: b: float8_e4m3 arrays"):
        fpx.diff(np.float32([1.0]), np.array([1.0], ml_dtypes.float8_e4m3fn))


def test_the_reproducer_says_why_a_variant_with_settings_is_not_written():
    """Pass 7 (issue 36): it said there was no variant named 'pairwise@float8_e4m3', then
    listed that very variant among the comparison's."""
    c = fpx.compare("sum", n=1000, variants=["sequential", "pairwise@float8_e4m3"])
    words = "variant 'pairwise@float8_e4m3' sets more than the block size .* here: sequential$"
    with pytest.raises(ValueError, match=words):
        fpx.reproducer(c, "pairwise@float8_e4m3")
    with pytest.raises(ValueError, match="accumulator formats: float16, .*, float4_e2m1"):
        fpx.parse_spec("sequential@float8_e4m3fnuz", "sum")


def test_pass_15_ops_findings():
    """Pass 15: an op setting no chosen variant takes was taken and ignored by compare
    (variance's order= with welford; softmax's order= with exact; cdist's fma= and clamp=
    with direct; adam's moments= with exact), and by adam_step(variant="exact"); a huge int
    hyperparameter was Python's OverflowError; a ragged start was NumPy's error; E8M0 data
    came back half NaN."""
    for op, kw, variant in (
        ("variance", {"order": "pairwise"}, "welford"),
        ("variance", {"accumulate": "float64"}, "exact"),
        ("softmax", {"order": "kahan"}, "exact"),
        ("cdist", {"fma": True}, "direct"),
        ("cdist", {"clamp": False}, "direct"),
        ("adam_step", {"moments": "mul-add"}, "exact"),
    ):
        (key,) = kw
        with pytest.raises(TypeError, match=f"unexpected keyword argument '{key}'"):
            fpx.compare(op, n=8, variants=[variant], **kw)
    # where a chosen variant takes it, it is taken (and the op's own, ddof=, always)
    assert fpx.compare("variance", n=8, order="pairwise", variants=["two-pass"]).results
    assert fpx.compare("variance", n=8, ddof=1, variants=["welford"]).results
    p = np.ones(4, np.float32)
    hyper = {"lr": 1e-3, "beta1": 0.9, "beta2": 0.999, "eps": 1e-8}
    with pytest.raises(ValueError, match="the variant 'exact' takes no moments="):
        fpx.adam_step(p, p / 10, 0 * p, 0 * p, 3, variant="exact", moments="mul-add", **hyper)
    with pytest.raises(ValueError, match="lr must be finite, got 1000"):
        fpx.adam_step(p, p / 10, 0 * p, 0 * p, 3, **{**hyper, "lr": 10**400})
    with pytest.raises(ValueError, match="linspace: start: a nested list whose rows"):
        fpx.linspace([0.0, [1.0]], 2.0, 3)
    with pytest.raises(ValueError, match="generate: float8_e8m0 has no sign and no zero"):
        fpx.generate("normal", 10, "float8_e8m0")


def test_pass_28_arguments_are_named_and_nothing_is_dropped():
    """Pass 28: compare(variants={"pairwise": 1}) ran the keys and dropped the values;
    Explanation.diff("cpu", "nope") raised a bare KeyError and diff("cpu") of the nearest
    compared it with itself; match_orders of one array for a dot said "got 1000" inputs;
    compare(inputs=x, seed=3) said "(n comes from their size)"; next_up(x, "float32") read as
    if float32 were a format of fpx.format."""
    x = np.float32([1, 2, 3.5, 1e-3])
    with pytest.raises(TypeError, match="variants must be a name or a list of names, got a dict"):
        fpx.compare("sum", n=10, variants={"pairwise": 1})
    e = fpx.explain("sum", x, {"cpu": np.float32(6.501), "gpu": np.float32(6.5009995)})
    with pytest.raises(ValueError, match=r"b='nope' is not a result here; the results: 'cpu'"):
        e.diff("cpu", "nope")
    assert {e.diff(e.pair[0]).a, e.diff(e.pair[0]).b} == set(e.pair)
    with pytest.raises(TypeError, match=r"dot takes a pair \(a, b\) of input arrays per obs"):
        fpx.match_orders(np.ones(1000, np.float32), np.float32(1000), "dot")
    with pytest.raises(
        ValueError, match=r"seed is for generated data; with inputs= the data are yours$"
    ):
        fpx.compare("sum", inputs=x, seed=3)
    with pytest.raises(ValueError, match=r"fmt='float32': fmt takes only a format of fpx.format"):
        fpx.next_up(np.float32(1), "float32")


def test_pass_35_small_findings_name_their_argument():
    """Pass 35: adam_run(first_step=0) said "step must be ..."; a gradient of another shape
    did not say which; difference_budget took a factor twice (a second step of no change);
    fpx.format(name='exact') made 'sequential@exact' a spec."""
    hyper = dict(lr=1e-3, beta1=0.9, beta2=0.999, eps=1e-8)
    p = np.ones(3, np.float32)
    with pytest.raises(ValueError, match=r"^first_step must be"):
        fpx.adam_run(p, [p], first_step=0, **hyper)
    run = fpx.adam_run(p, [p, p, np.ones(4, np.float32)], **hyper)
    with pytest.raises(ValueError, match=r"grads\[2\] has shape \(4,\), param \(3,\)"):
        list(run)
    with pytest.raises(ValueError, match="factors lists 'order' more than once"):
        fpx.difference_budget(p, "sequential", "pairwise", "sum", factors=["order", "order"])
    with pytest.raises(ValueError, match="name 'exact' names the exact reference"):
        fpx.format(8, 7, name="exact")
    assert np.isnan(fpx.adam_pass_rates(p[:0], [p[:0]], **hyper)).all()  # (documented)


def test_pass_38_arguments_are_used_as_given_or_refused_by_name():
    """Pass 38: bit_string(x, "float16") took the format for the separator; ulp_error measured
    NumPy's exp for any function named exp; an edited FormatInfo was read by its name by
    some functions and by its fields by others; np.var's inf for ddof >= n came without
    np.var's warning; a backend or candidate listed twice was dropped or gave two rows;
    variants(details="yes") was taken; format_of's and the bit readers' messages began
    "fpexplore:"; cdist(metric=...) said "order 'sequential' has no parameter"; compare's
    np.sum row of a float16 Series was NumPy's on its array without a word (pass 37)."""
    import dataclasses

    x = np.float32([1, 2, 3.25, -0.5])
    with pytest.raises(ValueError, match=r"sep='float16' holds letters or digits.*fmt="):
        fpx.bit_string(np.float32(1), "float16")
    assert fpx.bit_string(np.float32(1), "|") == "0|01111111|" + "0" * 23

    def exp(v):
        return v * 0

    with pytest.raises(ValueError, match=r"is not fpexplore's exp: ulp_error measures"):
        fpx.ulp_error(exp, x)
    assert (fpx.ulp_error(fpx.exp, x) == fpx.ulp_error("exp", x)).all()
    f5 = dataclasses.replace(fpx.format_info("float16"), precision=5)
    with pytest.raises(ValueError, match="'float16' is not a registered format with these"):
        fpx.as_format(np.float32(1.1), f5)
    with pytest.warns(RuntimeWarning, match=r"n - ddof = -6 <= 0 .*np.var's value"):
        assert fpx.variance(x, ddof=10) == np.float32(np.inf)
    with pytest.raises(ValueError, match="backends lists 'numpy' more than once"):
        fpx.compare("sum", n=10, backends=("numpy", "numpy", "emulated"))
    with pytest.raises(ValueError, match="candidates_ lists 'pairwise' more than once"):
        fpx.match_orders(x, fpx.sum(x, "pairwise"), "sum", ["pairwise", "pairwise"])
    with pytest.raises(TypeError, match="details must be True or False"):
        fpx.variants("sum", details="yes")
    with pytest.raises(TypeError, match="^format_of: x: expected floats"):
        fpx.format_of(None)
    with pytest.raises(TypeError, match="^ulp: x: masked arrays"):
        fpx.ulp(np.ma.array([1.0], mask=[1]))
    with pytest.raises(TypeError, match=r"cdist got unknown keyword\(s\) metric"):
        fpx.cdist(np.ones((2, 3), np.float32), np.ones((2, 3), np.float32), metric="euclidean")
    pd = pytest.importorskip("pandas")
    s = pd.Series(np.float16([0.1, 0.2, 0.3]))
    (note,) = fpx.compare("sum", inputs=s).messages
    assert note.startswith("the np.sum row is NumPy's on the values of your pandas inputs")


def test_pass_40_held_formats_are_refused_where_they_are_read():
    """Pass 40: the explorer's message for mean's numpy variant on FP6 data was "''" (a
    kernel named ""); parse_spec read 'welford@myh', 'naive@myh' (softmax), a precision-30
    accumulator and order=kahan with FP8, each refused only when run, or never; compare's
    accumulate='float8_e4m3' failed on welford, a default, when run; the explorer took
    variance's welford on FP8 data and showed nothing; 'two-pass(order=sequential)' beside
    'two-pass' made two rows; variance's unknown order was "for sum"."""
    from fpexplore.orders.registry import kernel_needs

    assert kernel_needs("sum", "numpy", fpx.format_info("float6_e2m3")) == []
    fpx.format(11, 15, name="t_p40h")
    fpx.format(30, 15, name="t_p40w")
    try:
        for spec, op, match in (
            ("welford@t_p40h", "variance", "variant 'welford' does not compute in t_p40h"),
            ("naive@t_p40w", "softmax", "precision 30: softmax emulates"),
            ("two-pass@t_p40w", "variance", "precision 30: variance emulates"),
            ("two-pass(order=kahan)@float8_e4m3", "variance", "order 'kahan' does not round"),
        ):
            with pytest.raises(ValueError, match=match):
                fpx.parse_spec(spec, op)
        assert str(fpx.parse_spec("one-pass(order=pairwise)@t_p40h", "variance"))
        assert str(fpx.parse_spec("naive@t_p40h", "softmax"))  # (issue 38: it computes in it)
    finally:
        from fpexplore.userformat import _forget

        _forget("t_p40h")
        _forget("t_p40w")
    with pytest.raises(ValueError, match=r"accumulate='float8_e4m3' on 'welford'"):
        fpx.compare("variance", n=50, accumulate="float8_e4m3")
    c = fpx.compare("variance", n=50, accumulate="float8_e4m3", variants=["two-pass"])
    assert c.results[("two-pass", "emulated")] == fpx.variance(
        c.inputs["x"], variant="two-pass", accumulate="float8_e4m3"
    )
    with pytest.raises(ValueError, match="variance variant 'welford' does not take float8_e4m3"):
        fpx.explorer(op="variance", format="float8_e4m3", variants=["welford"], n=100)
    with pytest.raises(ValueError, match="are one computation .*default"):
        fpx.compare("variance", n=50, variants=["two-pass(order=sequential)", "two-pass"])
    with pytest.raises(ValueError, match="unknown order 'Pairwise' for variance"):
        fpx.variance(np.float32([1, 2]), variant="two-pass", order="Pairwise")
    with pytest.raises(ValueError, match="^func: unknown function"):
        fpx.ulp_error(np.sinc, np.float32([1, 2]))
    c = fpx.compare("sum", n=100, accumulate="float64", variants=["numpy", "kahan", "pairwise"])
    assert c.messages == [  # (the rows "numpy" and "kahan" computed in float64, unsaid)
        "the op's keywords apply to every variant that takes them: 'numpy' computes "
        "'numpy@float64', 'kahan' computes 'kahan@float64', 'pairwise' computes "
        "'pairwise@float64'"
    ]
    for call in (fpx.bit_string, fpx.hex_string, fpx.shortest_repr, fpx.ulp, fpx.as_format):
        with pytest.raises(ValueError, match=rf"^{call.__name__}: fmt: unknown format 'FLOAT32'"):
            call(np.float32(1), fmt="FLOAT32")
    import ml_dtypes  # (mma said "A is float8_e4m3 ..., another format" of an e4m3 A)

    A, B = np.ones((16, 32), ml_dtypes.float8_e4m3fn), np.ones((32, 8), ml_dtypes.float8_e5m2)
    with pytest.raises(ValueError, match=r"a pair of formats \(A's, B's\) is block-scaled mma's"):
        fpx.mma(
            A, B, np.zeros((16, 8), np.float32), arch="h100", inputs=("float8_e4m3", "float8_e5m2")
        )


def test_pass_41_the_openblas_row_and_the_typical_desired_value(monkeypatch):
    """Pass 41: compare's 'openblas' row (the Haswell kernel, its default) differed from
    np.dot on an AVX-512 machine (SkylakeX) without a word; suggest_tolerance's typical
    |desired| of 1e308 and 1.5e308 was inf (np.median's mean of the two overflowed). The
    machine is a stand-in here: no test depends on the host's BLAS kernel."""
    from fpexplore import machine

    real = machine.machine_info()

    def on(arch):
        monkeypatch.setattr(
            machine,
            "machine_info",
            lambda: {**real, "blas": {**real["blas"], "architecture": arch}},
        )
        return fpx.compare("dot", n=100, variants=["openblas", "sequential"]).messages

    (note,) = on("SkylakeX")
    assert note.endswith("runs OpenBLAS's SkylakeX: openblas(kernel=skylakex) is np.dot here")
    assert on("Haswell") == [] and on(machine.UNKNOWN_BLAS) == []
    assert on("Zen")[0].endswith("runs OpenBLAS's Zen: it has no such kernel")
    monkeypatch.setattr(
        machine,
        "machine_info",
        lambda: {**real, "blas": {**real["blas"], "architecture": "SkylakeX"}},
    )
    assert fpx.compare("dot", n=100, variants=["openblas(kernel=skylakex)"]).messages == []
    with pytest.raises(ValueError, match="not float16: the inputs are float16; convert them"):
        fpx.sum(np.float16([1, 2]), "einsum")
    t = fpx.suggest_tolerance(np.float64([1e308, 1e308]), np.float64([1e308, 1.5e308]))
    assert t.median_abs_desired == 1.25e308


def test_pass_42_zero_gap_verdict_share_and_budget_factors():
    """Pass 42: the verdict printed 99.995% as "100% exact" beside "up to 1 ulp off";
    difference_budget named tensor_core among the factors left out of sequential ->
    pairwise@float64. (Its ulp(0) in a format without subnormals, the quantum
    2**(emin - p + 1), is kept: tests/test_custom_format.py; the docstring now says so.)"""
    from fpexplore.app.render import _percent

    assert [_percent(s) for s in (1.0, 0.99995, 0.9999, 0.5, 1 - 1e-10)] == [
        "100", "99.995", "99.99", "50", ">99.9999"
    ]  # fmt: skip
    x = np.float32([1e8, 1, -1e8, 1, 3, 7, 0.5])
    with pytest.raises(ValueError, match=r"also differ in accumulate and order, which"):
        fpx.difference_budget(x, "sequential", "pairwise@float64", "sum", factors=())
