"""A sum traced one operation at a time, bit for bit: :func:`sum_steps` gives a
:class:`SumTrace` of :class:`SumStep` records (each rounding's error and the partial sum's
error against the exact sum of the terms it covers)."""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction

import numpy as np

from .. import checks
from ..exact import exact_sum
from ..formats import as_format, coerce, format_info, refuse_masked, ulp

__all__ = ["MAX_STEP_TERMS", "STEP_ORDERS", "SumStep", "SumTrace", "sum_steps"]

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
    x, info, block, params = _checked(x, order, params)
    acc = "float32" if (order == "numpy" and info.name == "float16") else info.name
    t = _Tracer(SumTrace(order, dict(params), info.name, acc), x)
    leaves = [t.leaf(f"x[{i}]", v, (i,)) for i, v in enumerate(x)]
    if order == "sequential":
        t.in_turn(leaves[0], leaves[1:])
    elif order == "pairwise":
        t.pairwise(leaves)
    elif order == "tree":
        t.tree(leaves, block)
    elif info.name == "bfloat16":  # NumPy has no bfloat16 loop: ml_dtypes adds in turn
        t.in_turn(t.leaf("0", 0.0), leaves)
    else:
        res = t.add(t.leaf("0", 0.0), t.numpy_pairwise(leaves))
        if acc != info.name:  # float16: rounded to the output format at the end
            t.rounded(res, info.name)
    t.trace.exact_total = exact_sum(x)
    return t.trace


def _checked(x, order: str, params: dict) -> tuple:
    """(x as a 1-D array, its FormatInfo, the tree's block, the parameters), checked."""
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
    return x, info, block, params


class _Tracer:
    """Builds a :class:`SumTrace`: leaves, additions rounded to the accumulator, and the
    orders' shapes made of them (each method returns the index of its result's node)."""

    def __init__(self, trace: SumTrace, x):
        self.trace = trace
        self.dt = format_info(trace.accumulator).dtype
        self.terms = [Fraction(float(v)) for v in x]

    def _node(self, label, value, children, level, covers) -> int:
        self.trace.nodes.append(
            {
                "label": label,
                "value": value,
                "children": children,
                "level": level,
                "covers": covers,
            }
        )
        return len(self.trace.nodes) - 1

    def leaf(self, label, value, covers=()) -> int:
        return self._node(label, np.asarray(value, self.dt)[()], (), 0, tuple(covers))

    def exact_of(self, node) -> Fraction:
        return sum((self.terms[i] for i in self.trace.nodes[node]["covers"]), Fraction(0))

    def add(self, a, b) -> int:
        acc, dt = self.trace.accumulator, self.dt
        na, nb = self.trace.nodes[a], self.trace.nodes[b]
        true = Fraction(float(na["value"])) + Fraction(float(nb["value"]))
        value = np.asarray(as_format(np.array([true], dtype=object), acc)[0], dt)[()]
        self._finite(value, f"{na['value']!r} + {nb['value']!r}", acc)
        if true == 0:  # IEEE: an exact zero sum is -0 only when both operands are -0
            neg = np.signbit(na["value"]) and np.signbit(nb["value"])
            value = np.asarray(-0.0 if neg else 0.0, dt)[()]
        covers = tuple(sorted(na["covers"] + nb["covers"]))
        level = max(na["level"], nb["level"]) + 1
        node = self._node("+", value, (a, b), level, covers)
        return self._step(node, a, b, true, acc)

    def rounded(self, res, fmt: str) -> int:
        """The node ``res`` rounded to the output format ``fmt`` (a step with no right)."""
        v = self.trace.nodes[res]["value"]
        out = np.asarray(as_format(v, fmt), self.dt)[()]
        self._finite(out, f"{v!r} rounded to {fmt}", fmt)
        covers = self.trace.nodes[res]["covers"]
        node = self._node(fmt, out, (res,), self.trace.nodes[res]["level"] + 1, covers)
        return self._step(node, res, None, Fraction(float(v)), fmt)

    def _finite(self, value, what: str, fmt: str) -> None:
        """A ValueError naming x where a step's result overflows (finite terms, an infinite
        partial sum: no exact error to trace)."""
        if np.isfinite(value):
            return
        from ..orders.summation import sum as order_sum

        tr = self.trace
        x = np.asarray([float(t) for t in self.terms], format_info(tr.fmt).dtype)
        got = order_sum(x, tr.order, **tr.params)
        call = ", ".join([repr(tr.order)] + [f"{k}={v!r}" for k, v in tr.params.items()])
        raise ValueError(
            f"sum_steps: x's partial sum overflows at step {len(tr.steps) + 1} ({what} gives "
            f"{float(value)!r} in {fmt}); sum_steps traces sums whose partial sums stay "
            f"finite: fpx.sum(x, {call}) gives {float(got)!r}"
        )

    def _step(self, node: int, left: int, right, unrounded: Fraction, fmt: str) -> int:
        """Record the step that made ``node`` from ``left`` (and ``right``): its rounding
        error (from the ``unrounded`` value of this one operation) and its error against the
        exact sum of the terms it covers, in ulps of ``fmt``."""
        value = self.trace.nodes[node]["value"]
        covers = self.trace.nodes[node]["covers"]
        ex = self.exact_of(node)
        f = Fraction(float(value))
        step = SumStep(
            node,
            left,
            right,
            value,
            ex,
            covers,
            _ulps(f - unrounded, value, fmt),
            _ulps(f - ex, value, fmt),
        )
        self.trace.steps.append(step)
        return node

    def in_turn(self, res, ids) -> int:
        for i in ids:
            res = self.add(res, i)
        return res

    def pairwise(self, ids) -> int:
        if len(ids) == 1:
            return ids[0]
        h = len(ids) // 2
        return self.add(self.pairwise(ids[:h]), self.pairwise(ids[h:]))

    def tree(self, leaves, block: int) -> int:
        res = self.leaf("0", 0.0)
        for lo in range(0, len(leaves), block):
            s = leaves[lo : lo + block]
            s = s + [self.leaf("pad", 0.0) for _ in range(block - len(s))]
            k = 1
            while k < block:
                for i in range(0, block, 2 * k):
                    s[i] = self.add(s[i], s[i + k])
                k *= 2
            res = self.add(res, s[0])
        return res

    def numpy_block(self, ids) -> int:
        if len(ids) < 8:
            return self.in_turn(self.leaf("-0.0", -0.0), ids)
        r = list(ids[:8])
        end = len(ids) - len(ids) % 8
        for lo in range(8, end, 8):
            r = [self.add(r[j], ids[lo + j]) for j in range(8)]
        add = self.add
        res = add(add(add(r[0], r[1]), add(r[2], r[3])), add(add(r[4], r[5]), add(r[6], r[7])))
        return self.in_turn(res, ids[end:])

    def numpy_pairwise(self, ids) -> int:
        if len(ids) <= 128:
            return self.numpy_block(ids)
        h = (len(ids) // 2) // 8 * 8
        return self.add(self.numpy_pairwise(ids[:h]), self.numpy_pairwise(ids[h:]))
