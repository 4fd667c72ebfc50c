"""A standalone script that reproduces a divergence found with :func:`fpexplore.compare`.

:func:`reproducer` writes Python code (NumPy only; CuPy where present) that rebuilds the
inputs, evaluates NumPy's function and the chosen order written out in a few lines, and
asserts they agree within a tolerance calibrated by :func:`fpexplore.suggest_tolerance`.
"""

from __future__ import annotations

import inspect
from typing import TYPE_CHECKING

import numpy as np

from . import checks
from ._registry import SMALL_DTYPES
from .data import draw, wide_span
from .formats import format_info
from .ops.reductions import dot_second_distribution
from .orders.registry import lookup, orders_of
from .spec import parse_spec
from .tolerance import suggest_tolerance

if TYPE_CHECKING:
    from .results import Comparison

__all__ = ["reproducer"]


def _sources() -> dict[str, str]:
    """order name -> its plain-Python order_sum(t, T) (the registry's ``source``)."""
    return {name: spec.source for name, spec in orders_of("sum").items() if spec.source}


def _literal(value) -> str:
    """Python source for a float value, exact and valid for inf and NaN too."""
    v = float(value)
    if v != v or v in (float("inf"), float("-inf")):
        return f"float({str(v)!r})"
    return repr(v)


def reproducer(comparison: Comparison, variant: str | None = None) -> str:
    """A standalone Python script that reproduces a divergence found by ``compare``.

    The script needs only NumPy: it draws the same inputs (with a copy of
    :func:`fpexplore.data.draw`, the function ``generate`` draws with), computes NumPy's own
    result and the chosen emulated variant's result with a plain Python transcription of that
    order, prints both and the exact result recorded here, and checks the variant's value
    bit for bit. Where the two results have the same bits it says so; where they differ it
    asserts they agree within the tolerance (``rtol`` and ``atol``) that
    :func:`fpexplore.suggest_tolerance` calibrates, unless one is inf or NaN (an overflow,
    which no tolerance bridges: it says so). Where CuPy and a GPU are present it also prints
    the GPU's own result. Supported: ops sum and dot (not bfloat16) with the orders
    sequential, reverse, pairwise, blocked and tree (the ones a few lines of Python can state
    exactly), on every distribution.

    Parameters
    ----------
    comparison : Comparison
        From ``fpx.compare``, with a numpy backend result.
    variant : str, optional
        The emulated variant, by its spec (``"tree(block=256)"``) or by its order (``"tree"``);
        its spec may set nothing but the block size. None: the first such variant.

    Returns
    -------
    str
        The script's source.

    Raises
    ------
    TypeError
        A ``comparison`` that is not a Comparison.
    ValueError
        An op or format not supported, a comparison with other parameters than variants,
        distribution, seed, block and backends, no emulated variant that qualifies (or
        several of the order ``variant`` names), or no numpy backend result.
    """
    cmp, key, numpy_key, source = _chosen(comparison, variant)
    got, expected = cmp.results[key], cmp.results[numpy_key]
    tol = rtol = None
    if np.isfinite(float(got)) and np.isfinite(float(expected)):
        tol = suggest_tolerance(np.asarray([got]), np.asarray([expected]), margin=4.0)
        rtol = max(tol.rtol, 4 * format_info(cmp.format).eps)
    lines = _preamble(cmp, key, numpy_key, got, expected)
    lines += source.splitlines()
    lines += _ending(cmp, key, got, expected)
    if tol is None:
        lines += [
            "else:  # an overflow: no tolerance bridges inf and NaN",
            "    print('reproduced: different non-finite results (overflow)')",
        ]
    else:
        lines += [
            "else:",
            f"    np.testing.assert_allclose(float(got), float(expected), rtol={rtol!r}, "
            f"atol={float(tol.atol)!r})",
            "    print('reproduced: different bits, within the calibrated tolerance')",
        ]
    return "\n".join(lines) + "\n"


def _spelled(variant, op: str) -> str:
    """``variant`` in its canonical spelling, as the comparison's keys hold it (pass 21:
    "tree(block = 8)" was refused where compare took it); a text no spec parses as given."""
    if not isinstance(variant, str):
        raise TypeError(f"variant must be a variant spec (a string), got {checks.shown(variant)}")
    try:
        return str(parse_spec(variant, op))
    except (TypeError, ValueError):  # (named below with the variants there are)
        return variant


def _chosen(comparison, variant) -> tuple:
    """(the comparison, the emulated variant's key, NumPy's key, its order's source with its
    block size), the comparison checked. A variant qualifies where its order has a source and
    its spec sets nothing but the block size ("tree(block=256)"); ``variant`` names it by its
    spec or by its order ("tree")."""
    if not hasattr(comparison, "results") or not hasattr(comparison, "op"):
        raise TypeError(
            f"reproducer needs a Comparison from fpx.compare, got {type(comparison).__name__}"
        )
    cmp = comparison
    if cmp.op not in ("sum", "dot"):
        raise ValueError(f"reproducer supports sum and dot comparisons, not {checks.shown(cmp.op)}")
    if cmp.format == "bfloat16":
        raise ValueError(
            "reproducer: bfloat16 needs a correctly rounding conversion that "
            "plain NumPy/ml_dtypes lacks (their float64 -> bfloat16 rounds twice)"
        )
    if cmp.format in SMALL_DTYPES:  # (the scripts' orders add in the data's NumPy type)
        raise ValueError(
            f"reproducer: {cmp.format} data: the script's orders add in NumPy's float16, "
            "float32 and float64; each addition rounded to an FP8, FP6 or FP4 format needs "
            "fpexplore (fpx.sum(x, order) on the ml_dtypes array)"
        )
    if format_info(cmp.format).user_defined:  # (checked first: it has no NumPy row either)
        raise ValueError(
            f"reproducer: {cmp.format} data (a format of fpx.format): the script's orders add "
            "in NumPy's float16, float32 and float64, and NumPy has no type for it; "
            "cmp.snippet() reproduces the comparison with fpexplore"
        )
    # (other backends may be there: the script compares NumPy's result with one variant's)
    extra = sorted(set(cmp.params) - {"variants", "distribution", "seed", "block", "backends"})
    if extra:
        raise ValueError(f"reproducer: comparisons with {', '.join(extra)} are not supported")
    sources = _sources()
    specs = {k: cmp.specs[k[0]] for k in cmp.results if k[1] == "emulated"}
    emulated = [
        k
        for k, s in specs.items()
        if s.name in sources
        and not (s.fma or s.accumulate or s.input_rounding)
        and set(dict(s.params)) <= {"block"}
    ]
    plain = list(emulated)
    if variant is not None:
        variant = _spelled(variant, cmp.op)
        named = [k for k in emulated if k[0] == variant]
        emulated = named or [k for k in emulated if specs[k].name == variant]
        if len(emulated) > 1:
            raise ValueError(
                f"several variants of order {variant!r} in this comparison: "
                f"{', '.join(k[0] for k in emulated)}; name one"
            )
    if not emulated and variant is not None and specs.get((variant, "emulated")) is not None:
        if (name := specs[(variant, "emulated")].name) not in sources:
            raise ValueError(
                f"variant {variant!r}: the reproducer writes the orders {', '.join(sources)} "
                f"in plain NumPy, not {name}; such variants here: "
                f"{', '.join(k[0] for k in plain) or 'none'}"
            )
        raise ValueError(
            f"variant {variant!r} sets more than the block size (an accumulator, fma, an input "
            "rounding or another parameter): the reproducer writes an order with no setting "
            f"but the block size; such variants here: {', '.join(k[0] for k in plain) or 'none'}"
        )
    if not emulated:
        raise ValueError(
            f"no emulated variant of the orders {', '.join(sources)} (with no setting but "
            f"the block size) in this comparison"
            + (f" named {variant!r}" if variant else "")
            + f"; its emulated variants: {', '.join(k[0] for k in specs) or 'none'}"
        )
    numpy_key = next((k for k in cmp.results if k[1] == "numpy"), None)
    if numpy_key is None:
        raise ValueError("the comparison has no numpy backend result to compare with")
    key = emulated[0]
    order = lookup(cmp.op, specs[key].name)
    block = dict(specs[key].params).get("block", cmp.params.get("block"))
    if block is None and "block" in order.params:
        block = order.params["block"][0]
    return cmp, key, numpy_key, sources[specs[key].name].format(block=block)


def _preamble(cmp, key, numpy_key, got, expected) -> list[str]:
    """The script's docstring, imports, the copy of ``draw`` and its inputs and terms."""
    dist = cmp.params.get("distribution", "uniform")
    seed = cmp.params.get("seed", 0)
    fmt = cmp.format
    lines = [
        '"""Reproduces an fpexplore comparison without fpexplore.',
        "",
        f"op={cmp.op!r}, format={fmt!r}, n={cmp.n}, distribution={dist!r}, seed={seed}:",
        f"NumPy's {numpy_key[0]} gives {float(expected)!r}; the order {key[0]!r} gives "
        f"{float(got)!r};",
        f"the correctly rounded exact result is {float(cmp.reference)!r}.",
        '"""',
        "",
        "import numpy as np",
        "",
        f"T = np.{fmt}",
        f"n = {cmp.n}",
        "",
        "",
        *inspect.getsource(draw).splitlines(),
        "",
        "",
        "def data(distribution, seed):",
        f"    x = draw(np.random.default_rng(seed), distribution, n, {wide_span(fmt)})",
        "    return x.astype(T)  # float64 -> format: one correct rounding",
        "",
        "",
        "def same(u, v):  # the same value, NaN included",
        "    return u == v or (u != u and v != v)",
        "",
        "",
    ]
    if cmp.op == "dot":
        return lines + [
            f"a = data({dist!r}, {seed})",
            f"b = data({dot_second_distribution(dist)!r}, {seed + 1})",
            "with np.errstate(all='ignore'):",
            "    terms = [T(p) for p in (a * b)]  # products rounded to the format",
            "expected = np.dot(a, b)",
        ]
    return lines + [
        f"x = data({dist!r}, {seed})",
        "terms = [T(v) for v in x]",
        "expected = np.sum(x)",
    ]


def _ending(cmp, key, got, expected) -> list[str]:
    """The script's run of the order, its prints (CuPy's too) and its bit-for-bit check."""
    return [
        "",
        "got = order_sum(terms, T)",
        "print('NumPy   ', repr(float(expected)))",
        f"print({key[0]!r:10}, repr(float(got)))",
        f"print('exact   ', {_literal(cmp.reference)})",
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
        f"assert same(float(got), {_literal(got)}), 'the emulated order should give this value'",
        f"if not same(float(expected), {_literal(expected)}):",
        "    print('note: this NumPy (or BLAS) computed another value than when recorded')",
        "if same(float(got), float(expected)):",
        "    print('reproduced: the same bits as NumPy')",
    ]
