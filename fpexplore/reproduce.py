"""A standalone script that reproduces a divergence found with :func:`fpexplore.compare`.

:func:`reproducer` writes Python code (NumPy only; CuPy where present) that rebuilds the
inputs, evaluates NumPy's function and the chosen order written out in a few lines, and
asserts they agree within a tolerance calibrated by :func:`fpexplore.suggest_tolerance`.
"""

from __future__ import annotations

import numpy as np

from .formats import format_info
from .tolerance import suggest_tolerance

__all__ = ["reproducer"]


def _sources() -> dict[str, str]:
    """order name -> its plain-Python order_sum(t, T) (the registry's ``source``)."""
    from .orders.registry import SUM_ORDERS

    return {name: spec.source for name, spec in SUM_ORDERS.items() if spec.source}


def reproducer(comparison, variant: str | None = None) -> str:
    """A standalone Python script that reproduces a divergence found by ``compare``.

    The script needs only NumPy (ml_dtypes for bfloat16): it rebuilds the inputs from the same
    seed, computes NumPy's own result and the chosen emulated variant's result with a plain
    Python transcription of that order, prints both and the exact result recorded here,
    checks that they differ as observed, and asserts they agree within the tolerance that
    :func:`fpexplore.suggest_tolerance` calibrates. Where CuPy and a GPU are present it also
    prints the GPU's own result. Supported: ops sum and dot with the orders sequential,
    reverse, pairwise, blocked and tree (the ones a few lines of Python can state exactly).
    """
    cmp = comparison
    if cmp.op not in ("sum", "dot"):
        raise ValueError(f"reproducer supports sum and dot comparisons, not {cmp.op!r}")
    if cmp.format == "bfloat16":
        raise ValueError(
            "reproducer: bfloat16 needs a correctly rounding conversion that "
            "plain NumPy/ml_dtypes lacks (their float64 -> bfloat16 rounds twice)"
        )
    extra = sorted(set(cmp.params) - {"variants", "distribution", "seed", "block"})
    if extra:
        raise ValueError(f"reproducer: comparisons with {', '.join(extra)} are not supported")
    sources = _sources()
    emulated = [k for k in cmp.results if k[1] == "emulated" and k[0] in sources]
    if variant is not None:
        emulated = [k for k in emulated if k[0] == variant]
    if not emulated:
        raise ValueError(
            f"no emulated variant among {', '.join(sources)} in this comparison"
            + (f" named {variant!r}" if variant else "")
        )
    key = emulated[0]
    got = cmp.results[key]
    numpy_key = next((k for k in cmp.results if k[1] == "numpy"), None)
    if numpy_key is None:
        raise ValueError("the comparison has no numpy backend result to compare with")
    expected = cmp.results[numpy_key]
    tol = suggest_tolerance(np.asarray([got]), np.asarray([expected]), margin=4.0)
    rtol = max(tol.rtol, 4 * format_info(cmp.format).eps)
    block = cmp.params.get("block", 128)
    dist = cmp.params.get("distribution", "uniform")
    seed = cmp.params.get("seed", 0)
    fmt = cmp.format
    dtype = "ml_dtypes.bfloat16" if fmt == "bfloat16" else f"np.{fmt}"
    gen = {
        "uniform": "rng.random(n)",
        "normal": "rng.standard_normal(n)",
        "wide": f"np.ldexp(1.0 + rng.random(n), rng.integers(-{9 if fmt == 'float16' else 40}, "
        f"{9 if fmt == 'float16' else 40}, n)) * rng.choice([-1.0, 1.0], n)",
        "ill-conditioned": None,
    }[dist]
    if gen is None:
        gen_code = (
            "half = (n + 1) // 2\n"
            "    v = rng.standard_normal(half)\n"
            "    w = -v * (1 + 1e-3 * rng.standard_normal(half))\n"
            "    x = np.concatenate([v, w])[:n]\n"
            "    return x[rng.permutation(n)]"
        )
    else:
        gen_code = f"return {gen}"
    if cmp.op == "dot" and dist == "ill-conditioned":
        raise ValueError("reproducer: dot with ill-conditioned data is not supported yet")
    exact = cmp.reference
    lines = [
        '"""Reproduces an fpexplore comparison without fpexplore.',
        "",
        f"op={cmp.op!r}, format={fmt!r}, n={cmp.n}, distribution={dist!r}, seed={seed}:",
        f"NumPy's {numpy_key[0]} gives {float(expected)!r}; the order {key[0]!r} gives "
        f"{float(got)!r};",
        f"the correctly rounded exact result is {float(exact)!r}.",
        '"""',
        "",
        "import numpy as np",
    ]
    if fmt == "bfloat16":
        lines.append("import ml_dtypes")
    lines += [
        "",
        f"T = {dtype}",
        f"n = {cmp.n}",
        "",
        "",
        "def draw(rng, n):",
        f"    {gen_code}",
        "",
        "",
        "def data(seed):",
        "    x = draw(np.random.default_rng(seed), n)",
        "    return x.astype(T)  # float64 -> format: one correct rounding",
        "",
    ]
    if cmp.op == "dot":
        lines += [
            f"a = data({seed})",
            f"b = data({seed + 1})",
            "with np.errstate(all='ignore'):",
            "    terms = [T(p) for p in (a * b)]  # products rounded to the format",
            "expected = np.dot(a, b)",
        ]
    else:
        lines += [f"x = data({seed})", "terms = [T(v) for v in x]", "expected = np.sum(x)"]
    lines += sources[key[0]].format(block=block).splitlines()
    lines += [
        "",
        "got = order_sum(terms, T)",
        "print('NumPy   ', repr(float(expected)))",
        f"print({key[0]!r:10}, repr(float(got)))",
        f"print('exact   ', {float(exact)!r})",
        "try:  # the real GPU, where there is one",
        "    import cupy",
        "",
        f"    gpu = cupy.{'sum' if cmp.op == 'sum' else 'dot'}("
        + ("cupy.asarray(x)" if cmp.op == "sum" else "cupy.asarray(a), cupy.asarray(b)")
        + ")",
        "    print('cupy    ', repr(float(gpu)))",
        "except Exception as e:  # no CuPy, no driver, no device",
        "    print('cupy     not available:', type(e).__name__)",
        "",
        f"assert float(got) == {float(got)!r}, 'the emulated order should give this value'",
        f"if float(expected) != {float(expected)!r}:",
        "    print('note: this NumPy (or BLAS) computed another value than when recorded')",
        f"np.testing.assert_allclose(float(got), float(expected), rtol={rtol:.3g}, atol=0)",
        "print('reproduced: different bits, within the calibrated tolerance')",
    ]
    return "\n".join(lines) + "\n"
