"""The revealer: ``fpx.reveal(fn, n)`` finds the accumulation tree of any black-box function.

FPRev's method (Xie, Gao, Wang and Xue, "Revealing Floating-Point Accumulation Orders in
Software/Hardware Implementations", USENIX ATC 2025): an input of ones with ``+M`` at term i
and ``-M`` at term j, ``M`` so large that every partial sum of ones added to it is absorbed.
The ones that reach ``+M`` or ``-M`` before they meet vanish; ``+M - M`` is exact; the ones
added after are counted exactly. So ``n - result`` is the number of terms under the lowest
common ancestor of i and j, and those sizes give the tree. The queries are the refined form
(a pivot's sizes split its subtree into the sibling subtrees along its path to the root,
recursively; a seeded random pivot keeps a chain at about 2n queries, a balanced tree at
n log2 n); each calls ``fn`` once, on one input.

Beyond FPRev (whose ones times one cannot see them): a probe of the accumulator's precision (a
sum of three terms exact in a wide accumulator and not in a narrow one) and of fused products
(per addition with a product operand: a product whose rounding the fused addition skips).
docs/reveal.md gives the masks, the probes and the limits.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

import numpy as np

from . import checks
from ._registry import INFO
from .formats import FORMATS, as_format, format_info, format_name
from .orders import dot as fdot
from .orders import matmul as fmatmul
from .orders import sum as fsum
from .orders import trees
from .orders.arith import ORDER_OPS
from .spec import VariantSpec, check_spec

if TYPE_CHECKING:
    from collections.abc import Callable

__all__ = ["Reveal", "reveal"]
MAX_N = 100_000
CHECKS = 16  # inputs of each kind (normal, wide, cancelling, absorbing) a tree is checked on
WIDEST = 256  # the most terms one node of a tree adds at once (a tensor core's block: 32)


@dataclass(frozen=True, repr=False)
class Reveal:
    """What :func:`reveal` found.

    ``str()``: the tree as text; ``plot()``; ``as_order()``: a variant spec computing the
    tree; ``code``: its portable encoding.

    Attributes
    ----------
    op : "sum", "dot" or "matmul"
    n : the number of terms
    format : the inputs' format
    tree : nested tuples of leaf indices, children sorted by their smallest leaf; a node of
        three or more children is one multi-term addition
    fused : the terms whose product is fused into the addition that consumes it (a frozenset)
    fma : True, False, or None where products cannot show it (a sum, or products exact in the
        accumulator)
    accumulator : the narrowest format whose precision holds the accumulator's, or None where
        the data cannot tell
    reproduces : the tree gives fn's result bit for bit on random inputs: always True, as
        :func:`reveal` refuses a tree that does not
    queries : calls of fn
    """

    op: str
    n: int
    format: str
    tree: object
    fused: frozenset
    fma: bool | None
    accumulator: str | None
    reproduces: bool
    queries: int

    def __str__(self) -> str:
        return trees.text(self.tree)

    def __repr__(self) -> str:
        shown = str(self)
        if len(shown) > 200:
            shown = shown[:190] + "... (" + str(len(shown)) + " chars)"
        return (
            f"Reveal({self.op}, n={self.n}, {self.format}): {shown}\n"
            f"  fma: {self.fma}, accumulator: {self.accumulator}, reproduces fn on random "
            f"data: {self.reproduces}, {self.queries} calls of fn\n  as_order(): {self.as_order()}"
        )

    @property
    def code(self) -> str:
        """The tree's code (``revealed(tree=CODE)``), valid in any process."""
        return trees.encode(self.tree, self.fused if self.fma else frozenset())

    def as_order(self) -> str:
        """A variant spec (``revealed(tree=...)[+fma][@ACC]``) that computes this tree on any
        data of n terms, for ``fpx.compare(op, variants=[...])``, ``fpx.match_orders`` and the
        other functions taking specs. A long tree's code is remembered in this process under a
        short key; ``code`` carries it elsewhere."""
        return str(self.as_spec())

    def as_spec(self) -> VariantSpec:
        """:meth:`as_order` as a :class:`~fpexplore.spec.VariantSpec` (no string to parse)."""
        code = self.code
        key = code if len(code) <= trees.MAX_INLINE else trees.remember(code)
        acc = self.accumulator if self.accumulator not in (None, self.format) else None
        return VariantSpec("revealed", (("tree", key),), bool(self.fma), None, acc)

    def plot(self, ax=None):
        """The tree drawn, leaves at the bottom (a matplotlib Figure)."""
        from . import plots

        return plots.reveal_plot(self, ax=ax)


# ----------------------------------------------------------------------------- calling fn


class _Caller:
    """Inputs for ``fn`` (one per query) and its result as a float."""

    def __init__(self, fn, n: int, op: str, fmt: str):
        self.fn, self.n, self.op, self.info = fn, n, op, format_info(fmt)
        self.calls = 0
        self.ones = np.ones(n, self.info.dtype)

    def __call__(self, a, b=None) -> float:
        """fn on the terms a (sum) or the products a*b (b: ones where None)."""
        dt = self.info.dtype
        if a.dtype != dt:
            a = np.asarray(as_format(a, self.info.name))
        if b is None:
            b = self.ones
        elif b.dtype != dt:
            b = np.asarray(as_format(b, self.info.name))
        if self.op == "sum":
            args = (a,)
        elif self.op == "dot":
            args = (a, b)
        else:  # every row of A is a, every column of B is b: each element is the same dot
            args = (np.tile(a, (self.n, 1)), np.tile(b[:, None], (1, self.n)))
        self.calls += 1
        try:
            with np.errstate(all="ignore"):
                got = self.fn(*args)
        except Exception as e:  # the user's own error, with how reveal called fn (3.11+)
            if hasattr(e, "add_note"):
                shapes = " and ".join(str(x.shape) for x in args)
                what = f"{shapes} {self.info.name} arrays (op={self.op!r})"
                e.add_note(f"fpx.reveal called fn with {what}")
            raise
        r = np.asarray(got)
        if r.ndim == 2 and self.op == "matmul":
            r = r[0, 0]
        if r.ndim != 0 or r.dtype.kind not in "fiu" and r.dtype.name not in FORMATS:
            raise TypeError(
                "fn must return a number (matmul: also the product matrix, whose element "
                "[0, 0] is read), got "
                + (f"an array of shape {np.shape(got)}" if np.ndim(got) else checks.shown(got))
            )
        return float(r)


def _masks(info, n: int) -> tuple[float, float]:
    """(unit, M): every partial sum of at most n units is absorbed by M in accumulators up to
    float64 (float16: M / unit = 2**39, accumulators up to float32; units subnormal)."""
    if info.name == "float16":
        return 2.0**-24, 2.0**15
    return 1.0, 2.0 ** (info.emax - 2)


# ----------------------------------------------------------------------------- the tree


def _lca_sizes(call, n: int, unit: float, big: float):
    base = np.asarray(as_format(np.full(n, unit), call.info.name))

    def size(i: int, j: int) -> int:
        x = base.copy()
        x[i], x[j] = big, -big
        r = call(x)
        count = r / unit
        if not (math.isfinite(count) and count == int(count) and 0 <= count <= n - 2):
            raise ValueError(
                f"fn returned {r!r} for ones with +{big:g} at term {i} and -{big:g} at term "
                f"{j} (a tree of additions returns a whole number of ones, 0 to {n - 2}): fn "
                "does not add its terms in a tree of rounded additions (a compensated sum, a "
                "data-dependent order, an accumulator wider than float64)"
            )
        return n - int(count)

    return size


def _build(leaves: list, size, rng):
    """(node, measured size of its top): node a leaf, or a list of children; a size other
    than len(leaves) means the leaves are some children of a larger multi-term node."""
    if len(leaves) == 1:
        return leaves[0], 1
    pivot = leaves[int(rng.integers(len(leaves)))]
    groups: dict = {}
    for q in leaves:
        if q != pivot:
            groups.setdefault(size(pivot, q), []).append(q)
    if len(leaves) > WIDEST and list(groups) == [max(groups)] and max(groups) >= len(leaves):
        raise ValueError(  # (one node of them all: built a child at a time, n deep)
            f"fn adds {len(leaves)} or more terms at one node (every pair of them meets at "
            f"the same addition; a tree of additions adds at most {WIDEST} at once): fn does "
            "not add its terms in a tree of rounded additions (it may sort or otherwise "
            "reorder them by value, or add them all in an accumulator wider than float64)"
        )
    cur, top = pivot, 1
    for s in sorted(groups):
        sub, sub_top = _build(groups[s], size, rng)
        if sub_top == len(groups[s]):
            cur = [cur, sub]  # the sibling subtree of this ancestor
        else:
            cur = sub + [cur]  # siblings of one multi-term node
        top = s
    return cur, top


# ----------------------------------------------------------------------------- the probes


def _accumulator(call, tree, info, n: int):
    """The narrowest format whose precision holds the accumulator's: M + t - M with t lost
    where the precision is at most log2(M / t) bits. None where the data cannot tell."""
    inner = next((c for c in tree if not isinstance(c, int)), None) if n >= 3 else None
    if inner is None:
        return None
    a, b = trees.leaves(inner[0])[0], trees.leaves(inner[1])[0]
    under = set(trees.leaves(inner))
    c = next(v for v in range(n) if v not in under)
    for fmt in sorted(FORMATS, key=lambda f: format_info(f).precision):
        g = format_info(fmt).precision
        e = 0 if g <= info.emax - 1 else info.emax - 1 - g
        if e < info.emin:
            return None  # the data's range cannot hold a gap this wide
        x = np.zeros(n)
        x[a], x[b], x[c] = 2.0 ** (e + g), 2.0**e, -(2.0 ** (e + g))
        if call(x) != 2.0**e:
            return fmt
    return None


def _fused(call, tree, info, acc: str, n: int):
    """The leaves whose product is fused into its addition, or None where products cannot show
    it: a*a = 1 + 2**-(q-1) + 2**-2q with 2q >= the accumulator's precision loses its last
    term when rounded; added fused to -(1 + 2**-(q-1)) it is the result."""
    p_acc = format_info(acc).precision
    q = (p_acc + 1) // 2
    if q > info.precision - 1:
        return None  # the products are exact in the accumulator
    fused = set()
    nodes, stack = [], [tree]
    while stack:
        t = stack.pop()
        if not isinstance(t, int):
            nodes.append(t)
            stack.extend(t)
    for node in nodes:
        if len(node) != 2:
            continue
        for me, other in ((node[0], node[1]), (node[1], node[0])):
            if not isinstance(me, int):
                continue
            a, b = np.zeros(n), np.ones(n)
            a[me] = b[me] = 1 + 2.0**-q
            a[trees.leaves(other)[0]] = -(1 + 2.0 ** -(q - 1))
            if call(a, b) == 2.0 ** (-2 * q):
                fused.add(me)
    return fused


def _check_data(rng, kind: str, n: int, info) -> np.ndarray:
    """Random terms of one kind: standard normal; "wide", with exponents spread over
    2^-s..2^s (s = 6 for the 16-bit formats, 20 for the others); "cancelling", wide terms
    whose last term nearly cancels the others' sum (a compensated sum shows there);
    "absorbing", ones and one 2^precision at a random place, which absorbs each one added
    to it alone (a compensated sum keeps them)."""
    if kind == "absorbing":
        x = np.ones(n)
        x[rng.integers(n)] = 2.0**info.precision
        return np.asarray(as_format(x, info.name))
    x = rng.standard_normal(n)
    if kind != "normal":
        s = 6 if info.bits <= 16 else 20
        x = x * np.exp2(rng.integers(-s, s + 1, n))
    if kind == "cancelling" and n > 1:
        x[-1] = -math.fsum(x[:-1]) * (1 + rng.standard_normal() * 2.0 ** -(info.precision // 2))
    return np.asarray(as_format(x, info.name))


def _reproduces(call, rev: Reveal, info, seed: int = 12345) -> bool:
    """The tree's result equals fn's, bit for bit, on CHECKS random inputs of each kind
    (normal, wide, cancelling; else a ValueError: fn is not that tree of additions)."""
    rng = np.random.default_rng(seed)
    s = check_spec(rev.as_spec(), rev.op)
    for kind in ("normal", "wide", "cancelling") * CHECKS + ("absorbing",) * CHECKS:
        a = _check_data(rng, kind, rev.n, info)
        if kind == "absorbing":  # (a dot's products: the terms themselves)
            b = np.asarray(as_format(np.ones(rev.n), info.name))
        else:
            b = _check_data(rng, "normal" if kind == "normal" else "wide", rev.n, info)
        got = call(a, None if rev.op == "sum" else b)
        with np.errstate(all="ignore"):
            if rev.op == "sum":
                mine = fsum(a, s.name, **s.kwargs())
            elif rev.op == "dot":
                mine = fdot(a, b, s.name, **s.kwargs())
            else:
                mine = fmatmul(a[None, :], b[:, None], s.name, **s.kwargs())[0, 0]
        if not (got == float(mine) or (math.isnan(got) and math.isnan(float(mine)))):
            shown = str(rev) if len(str(rev)) <= 80 else str(rev)[:70] + "..."
            raise ValueError(
                f"fn is not a tree of rounded additions in one accumulator: the tree its masks "
                f"suggest, {shown}, gives {float(mine)!r} on random {kind} data where fn gives "
                f"{got!r} (fn may add some terms in another format, as OpenBLAS's dot adds its "
                "tail past the SIMD blocks in float64; or return a constant, sort or otherwise "
                "reorder by value, rescale, or compensate its rounding errors)"
            )
    return True


# ----------------------------------------------------------------------------- reveal


def reveal(fn: Callable, n: int, *, op: str = "sum", format: str = "float32") -> Reveal:  # noqa: A002
    """The accumulation tree of a black-box ``fn`` on ``n`` terms (FPRev's method, plus FMA
    and accumulator probes).

    Parameters
    ----------
    fn : callable
        ``op="sum"``: ``fn(x)`` (e.g. ``np.sum``); ``"dot"``: ``fn(a, b)`` (e.g. ``np.dot``;
        the probes go in ``a``, ``b`` holds ones or the FMA probe's factors); ``"matmul"``:
        ``fn(A, B)`` with n x n matrices whose rows of A are all the probe and columns of B
        all ones (or the factors), so that every element is the same dot product: the tree
        is that of element ``[0, 0]`` where fn returns the product matrix, of the element fn
        returns where it returns a number (``lambda A, B: (A @ B)[0, 32]``).
        Called once per query, on one input.
    n : int
        The number of terms, 2 to 100,000 (float16: 2,048; bfloat16: 256, the counts the
        format holds exactly).
    op : "sum", "dot" or "matmul"
    format : one of ``fpx.FORMATS``: the inputs' format

    Returns
    -------
    Reveal
        ``str()`` the tree as ``((0+1)+(2+3))``, ``tree``, ``fused``, ``fma``, ``accumulator``,
        ``reproduces``, ``queries``, ``plot()``, ``as_order()``, ``code``.

    Raises
    ------
    ValueError
        Where fn's results are not those of a tree of additions, or where the tree they suggest
        does not compute fn on random inputs (a function returning a constant, one that sorts
        first, a compensated sum): no invented tree is returned.
    """
    if not callable(fn):
        raise TypeError(f"fn must be callable (e.g. np.sum), got {checks.shown(fn)}")
    checks.choice("op", op, ORDER_OPS)
    fmt = format_name(format)  # (a NumPy type or dtype: its name)
    if isinstance(fmt, str) and fmt in INFO and fmt not in FORMATS:  # (pass 34: "unknown")
        raise ValueError(f"reveal: format={fmt!r}: reveal takes {', '.join(FORMATS)}")
    checks.choice("format", fmt, FORMATS, "reveal takes")
    info = format_info(fmt)
    limit = min(MAX_N, 2 ** min(info.precision, 30))
    n = checks.integer("n", n, 2, limit)
    call = _Caller(fn, n, op, info.name)
    unit, big = _masks(info, n)
    size = _lca_sizes(call, n, unit, big)
    root, top = _build(list(range(n)), size, np.random.default_rng(0))
    if top != n or isinstance(root, int):
        raise ValueError("fn's results do not form one tree over the n terms")
    tree = trees.canonical(root)
    acc = _accumulator(call, tree, info, n)
    # two terms: no inner node for the accumulator probe; the FMA probe still runs, in the
    # data's format (a wider accumulator shows as fused, and the random checks then refuse)
    probe = acc if acc is not None or n != 2 else info.name
    fused = None if op == "sum" or probe is None else _fused(call, tree, info, probe, n)
    fma = None if fused is None else bool(fused)
    rev = Reveal(op, n, info.name, tree, frozenset(fused or ()), fma, acc, False, 0)
    ok = _reproduces(call, rev, info)
    return replace(rev, reproduces=ok, queries=call.calls)
