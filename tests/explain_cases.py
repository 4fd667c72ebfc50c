"""Held-out cases for ``fpx.explain``: discrepancies built by ONE known mechanism each.

Every result here is computed with plain NumPy, ml_dtypes, ``fractions.Fraction`` and Python,
never with fpexplore, so the cases do not share the blind spots of the code they test. Each
case holds the inputs, two or more results (label -> result), the mechanism that made them
differ (one of explain's eight factors, or ``"identical"`` or ``"bug"``), optionally the
function ``fn`` that produced one of the results, and the set of labels nearest the exact
answer, computed here exactly (fractions; for a matrix product by the normwise error
||R - X||_F, compared exactly).

The arithmetic model: every ``+`` and ``*`` is one IEEE operation rounded to nearest-even in
the stated format. NumPy's float16 and ml_dtypes' bfloat16 operations compute in float32 and
round once, which is correctly rounded for ``+`` and ``*`` (float32 has at least 2p + 2 bits);
tests/test_explain_heldout.py checks that, and that the vectorized orders below equal plain
scalar loops. Conversions from float64 are rounded by ``round_to`` (our own, checked against
exact rounding of fractions), never by a chain of casts (float64 -> float32 -> bfloat16 would
round twice).

``build_cases("ci")`` is a deterministic subset (about 140 cases) of ``build_cases("all")``
(several hundred). A case's data depend only on its name and the seed; only the few cases with
``uses_blas`` call NumPy's BLAS (np.dot / np.matmul), and those are built so that their
mechanism holds whatever loop the BLAS runs (the same call on both sides).
"""

from __future__ import annotations

import math
import struct
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from fractions import Fraction

import ml_dtypes
import numpy as np

FACTORS = (
    "order",
    "accumulator",
    "cast",
    "input_rounding",
    "fma",
    "tensor_core",
    "nondeterminism",
    "overflow",
)
MECHANISMS = FACTORS + ("identical", "bug")

BF16 = np.dtype(ml_dtypes.bfloat16)
DTYPES = {
    "float16": np.dtype(np.float16),
    "bfloat16": BF16,
    "float32": np.dtype(np.float32),
    "float64": np.dtype(np.float64),
    "tf32": np.dtype(np.float32),  # tf32 values are held in float32
}
# precision p (the implicit bit included), smallest and largest normal exponent
FORMATS = {
    "float16": (11, -14, 15),
    "bfloat16": (8, -126, 127),
    "tf32": (11, -126, 127),
    "float32": (24, -126, 127),
    "float64": (53, -1022, 1023),
}
MAXVAL = {f: math.ldexp(2.0 - 2.0 ** (1 - p), emax) for f, (p, _, emax) in FORMATS.items()}
UNIT = {f: 2.0**-p for f, (p, _, _) in FORMATS.items()}  # unit roundoff


@dataclass
class Case:
    name: str
    op: str  # "sum", "mean", "dot", "matmul"
    inputs: object  # x, (a, b) or (A, B)
    results: dict  # label -> result (NumPy scalar, or an (m, n) array for matmul)
    mechanism: str  # one of MECHANISMS
    fn: Callable | None = None  # a function of the inputs that produced one of the results
    fn_label: str | None = None  # the label fn produced (None: a nondeterministic fn)
    fns: dict = field(default_factory=dict)  # label -> the function that made it, where known
    closer: set = field(default_factory=set)  # labels nearest the exact answer (ties: all)
    uses_blas: bool = False  # a result came from np.dot / np.matmul (the host's BLAS)
    note: str = ""  # how the results were made


def fmt_of(a) -> str:
    return np.asarray(a).dtype.name


# ----------------------------------------------------------------------------- correct rounding


def round_fraction(q: Fraction, fmt: str) -> float:
    """The exact rational q rounded to nearest-even in fmt (subnormals, overflow to inf)."""
    if q == 0:
        return 0.0
    p, emin, _ = FORMATS[fmt]
    a = abs(q)
    num, den = a.numerator, a.denominator
    e = num.bit_length() - den.bit_length()  # 2^e <= a < 2^(e+1), or one below
    if (num << max(0, -e)) < (den << max(0, e)):
        e -= 1
    scale = max(e, emin) - (p - 1)  # the exponent of the ulp
    n_, d_ = (num, den << scale) if scale >= 0 else (num << -scale, den)
    m, r = divmod(n_, d_)
    if 2 * r > d_ or (2 * r == d_ and m & 1):
        m += 1
    val = math.ldexp(m, scale) if m else 0.0
    if val > MAXVAL[fmt]:
        val = math.inf
    return math.copysign(val, q)


def round_float(v: float, fmt: str) -> float:
    """A Python float rounded once to nearest-even in fmt (fast twin of round_fraction)."""
    if v == 0.0 or not math.isfinite(v) or fmt == "float64":
        return v
    p, emin, _ = FORMATS[fmt]
    q = max(math.frexp(v)[1] - 1, emin) - (p - 1)
    r = math.ldexp(round(math.ldexp(v, -q)), q)  # round(): nearest, ties to even
    if abs(r) > MAXVAL[fmt]:
        r = math.inf
    return math.copysign(r, v)


def round_to(x, fmt: str) -> np.ndarray:
    """float64 values (any array-like) rounded once to nearest-even in fmt, as fmt's dtype.

    tf32 is returned in float32. Exact: x * 2^-q and back are exact power-of-two scalings and
    np.rint rounds ties to even; the final astype only converts exactly representable values.
    """
    x = np.asarray(x, dtype=np.float64)
    if fmt == "float64":
        return x.copy()
    p, emin, _ = FORMATS[fmt]
    with np.errstate(all="ignore"):
        e = np.frexp(x)[1].astype(np.int64) - 1
        q = np.maximum(e, emin) - (p - 1)
        r = np.ldexp(np.rint(np.ldexp(x, -q)), q)
        r = np.where(np.abs(r) > MAXVAL[fmt], np.inf, np.abs(r))
        r = np.where(np.isfinite(x), np.copysign(r, x), x)
    return r.astype(DTYPES[fmt])


def tf32(x) -> np.ndarray:
    """float32 values rounded to tf32 (10 explicit mantissa bits), nearest-even, on the bits."""
    x = np.asarray(x, dtype=np.float32)
    bits = x.view(np.uint32)
    rounded = (bits + np.uint32(0xFFF) + ((bits >> np.uint32(13)) & np.uint32(1))) & np.uint32(
        0xFFFFE000
    )
    return np.where(np.isfinite(x), rounded, bits).astype(np.uint32).view(np.float32)


def bf16_round(x) -> np.ndarray:
    """float32 values rounded to bfloat16 (ml_dtypes, nearest-even) and back to float32."""
    return np.asarray(x, dtype=np.float32).astype(BF16).astype(np.float32)


# ----------------------------------------------------------------------------- exact values


def exact_sum(terms) -> Fraction:
    """The exact sum of float values, as a Fraction.

    math.fsum rounds the exact sum correctly to float64; subtracting each rounded part and
    summing again peels the exact value off as a short expansion of floats.
    """
    terms = np.ravel(np.asarray(terms, dtype=np.float64)).tolist()
    parts: list[float] = []
    while True:
        s = math.fsum(terms + [-p for p in parts])
        if s == 0.0:
            return sum((Fraction(p) for p in parts), Fraction(0))
        parts.append(s)


def _two_prod(a, b):
    """a * b = p + err exactly (Dekker's product without fma; float64 arrays, no over/underflow)."""
    p = a * b
    c = 134217729.0  # 2^27 + 1
    ah = c * a
    ah = ah - (ah - a)
    al = a - ah
    bh = c * b
    bh = bh - (bh - b)
    bl = b - bh
    err = ((ah * bh - p) + ah * bl + al * bh) + al * bl
    return p, err


def _exact_products(a, b):
    """float64 arrays whose (element-wise) sum is a * b exactly."""
    a64, b64 = np.asarray(a, np.float64), np.asarray(b, np.float64)
    if fmt_of(a) != "float64" and fmt_of(b) != "float64":
        return [a64 * b64]  # at most 24 + 24 bits: exact in float64
    return list(_two_prod(a64, b64))


def exact_value(op: str, inputs):
    """The exact result: a Fraction, or for matmul an (m, n) object array of Fractions."""
    if op in ("sum", "mean"):
        s = exact_sum(inputs)
        return s / len(inputs) if op == "mean" else s
    a, b = inputs
    if op == "dot":
        return exact_sum(np.concatenate(_exact_products(a, b)))
    parts = _exact_products(a.T[:, :, None], b[:, None, :])  # each (k, m, n)
    k, m, n = parts[0].shape
    flat = np.concatenate(parts).reshape(len(parts) * k, m * n).T
    out = np.empty(m * n, dtype=object)
    for i, row in enumerate(flat):
        out[i] = exact_sum(row)
    return out.reshape(m, n)


def closer_labels(op: str, inputs, results: dict, exact=None) -> set:
    """The labels nearest the exact answer: |r - x| for a scalar, ||R - X||_F for a matrix
    (the same denominator ||X||_F for all, so the numerators decide); ties are all kept."""
    x = exact_value(op, inputs) if exact is None else exact
    err = {}
    for label, r in results.items():
        r = np.asarray(r, dtype=np.float64)
        if not np.all(np.isfinite(r)):
            err[label] = None
        elif op == "matmul":
            d = [Fraction(v) - xv for v, xv in zip(r.ravel().tolist(), x.ravel())]
            err[label] = sum((t * t for t in d), Fraction(0))
        else:
            err[label] = abs(Fraction(float(r)) - x)
    best = min(e for e in err.values() if e is not None)
    return {k for k, e in err.items() if e == best}


# ----------------------------------------------------------------------------- evaluation orders
# Each order reduces an array of terms along axis 0 (shape (n,) or (k, m, n)), every addition
# in the terms' dtype.


def o_seq(t):
    """((t0 + t1) + t2) + ...: np.cumsum is the sequential loop (checked in the tests)."""
    return np.cumsum(t, axis=0, dtype=t.dtype)[-1]


def o_pairwise(t):
    """Recursive halving: pw(t) = pw(t[:n//2]) + pw(t[n//2:]), pw of one term is the term.

    Computed level by level: the segments are split top-down, then summed bottom-up.
    """
    levels = [(np.array([0]), np.array([t.shape[0]]))]
    while True:
        start, length = levels[-1]
        split = length >= 2
        if not split.any():
            break
        half = length[split] // 2
        levels.append(
            (
                np.stack([start[split], start[split] + half], 1).ravel(),
                np.stack([half, length[split] - half], 1).ravel(),
            )
        )
    vals = t[levels[-1][0]]
    for start, length in reversed(levels[:-1]):
        split = length >= 2
        out = np.empty((len(start),) + t.shape[1:], dtype=t.dtype)
        out[~split] = t[start[~split]]
        out[split] = vals[0::2] + vals[1::2]
        vals = out
    return vals[0]


def o_blocked(t, b: int):
    """Each block of b terms summed in turn (sequentially), then the block sums in turn."""
    nb = t.shape[0] // b
    sums = []
    if nb:
        sums.append(o_seq(np.moveaxis(t[: nb * b].reshape((nb, b) + t.shape[1:]), 1, 0)))
    if t.shape[0] % b:
        sums.append(o_seq(t[nb * b :])[None])
    return o_seq(np.concatenate(sums))


def _tree_blocks(t, block: int):
    """GPU-style block sums: each block of `block` terms zero-padded, s[i] += s[i + k] for
    k = 1, 2, 4, ... (i a multiple of 2k); returns the block sums, shape (blocks, ...)."""
    nb = -(-t.shape[0] // block)
    x = np.zeros((nb * block,) + t.shape[1:], dtype=t.dtype)
    x[: t.shape[0]] = t
    x = x.reshape((nb, block) + t.shape[1:])
    k = 1
    while k < block:
        x[:, 0 :: 2 * k] += x[:, k :: 2 * k]
        k *= 2
    return x[:, 0]


def o_tree(t, block: int):
    """GPU tree per block, the block sums then added in order onto 0."""
    return o_seq(np.concatenate([np.zeros((1,) + t.shape[1:], t.dtype), _tree_blocks(t, block)]))


def o_shuffled(t, rng):
    """The terms added sequentially in a random order (another on every run)."""
    return o_seq(t[rng.permutation(t.shape[0])])


def o_atomic(t, block: int, rng):
    """GPU tree per block, the block sums added onto 0 in a random order (atomicAdd), each
    output element in its own order."""
    sums = _tree_blocks(t, block)
    idx = np.argsort(rng.random(sums.shape), axis=0, kind="stable")
    sums = np.take_along_axis(sums, idx, axis=0)
    return o_seq(np.concatenate([np.zeros((1,) + t.shape[1:], t.dtype), sums]))


def reduce(t, order: str, rng=None):
    """Reduce terms along axis 0 in a named order."""
    if order == "seq":
        return o_seq(t)
    if order == "reverse":
        return o_seq(t[::-1])
    if order == "pairwise":
        return o_pairwise(t)
    if order == "numpy":  # NumPy's own pairwise sum (1-D float32 / float64)
        return np.sum(t)
    if order == "shuffled":
        return o_shuffled(t, rng)
    for name, f in (("blocked", o_blocked), ("tree", o_tree)):
        if order.startswith(name):
            return f(t, int(order[len(name) :]))
    if order.startswith("atomic"):
        return o_atomic(t, int(order[6:]), rng)
    raise ValueError(order)


# ----------------------------------------------------------------------------- one computation


def _pre(a, pre: str | None):
    if pre is None:
        return a
    if pre == "tf32":
        return tf32(a)
    if pre == "bfloat16" and a.dtype == np.float32:
        return a.astype(BF16)  # ml_dtypes: nearest-even (checked in the tests)
    return round_to(a, pre)


def _terms(op, arrays, acc):
    if op in ("sum", "mean"):
        return arrays[0].astype(acc)
    a, b = (v.astype(acc) for v in arrays)
    if op == "dot":
        return a * b
    return a.T[:, :, None] * b[:, None, :]  # (k, m, n)


def fma_round(acc, x, y, fmt):
    """fma(x, y, acc) rounded once, correctly, to fmt (x, y, acc float64 arrays or floats
    holding values of at most float32 precision).

    x * y is exact in float64; TwoSum gives acc + x*y = s + err exactly; s moved to its
    neighbour toward err when s is even (round to odd) rounds correctly to any format of at
    most 51 bits (tests/test_explain_heldout.py checks it against fractions).
    """
    p = x * y
    s = acc + p
    z = s - acc
    err = (acc - (s - z)) + (p - z)
    if np.ndim(s) == 0:
        if (
            err != 0.0
            and math.isfinite(err)
            and not struct.unpack("<q", struct.pack("<d", s))[0] & 1
        ):
            s = math.nextafter(s, math.copysign(math.inf, err))
        return round_float(s, fmt)
    even = (s.view(np.int64) & 1) == 0
    move = (err != 0) & np.isfinite(err) & even
    s = np.where(move, np.nextafter(s, np.copysign(np.inf, err)), s)
    return round_to(s, fmt).astype(np.float64)


def _fma_seq(op, arrays, fmt):
    """acc = fma(a_i, b_i, acc) in turn from acc = 0, each step rounded once to fmt."""
    a, b = (np.asarray(v, np.float64) for v in arrays)
    if op == "dot":
        acc = 0.0
        for x, y in zip(a.tolist(), b.tolist()):
            acc = fma_round(acc, x, y, fmt)
        return acc
    acc = np.zeros((a.shape[0], b.shape[1]))
    for kk in range(a.shape[1]):
        acc = fma_round(acc, a[:, kk, None], b[None, kk, :], fmt)
    return acc


def compute(op, inputs, order="seq", acc=None, pre=None, out=None, fma=False, rng=None):
    """One evaluation of op on inputs.

    pre: the inputs rounded first ("tf32", "bfloat16", "float16", ...); acc: the format of the
    products and the additions (default: the inputs' format after pre); order: the order of
    the additions (see reduce); fma: a sequential loop with a fused multiply-add per step;
    out: the result's format (default: the inputs' format), reached by one rounding (a mean:
    the correctly rounded quotient of the sum by n).
    """
    arrays = (inputs,) if op in ("sum", "mean") else tuple(inputs)
    out = out or fmt_of(arrays[0])
    with np.errstate(all="ignore"):
        arrays = tuple(_pre(np.asarray(a), pre) for a in arrays)
        acc = acc or fmt_of(arrays[0])
        if fma:
            s = _fma_seq(op, arrays, acc)
        else:
            s = reduce(_terms(op, arrays, DTYPES[acc]), order, rng)
        if op == "mean":
            s = float(s)
            n = len(arrays[0])
            v = round_fraction(Fraction(s) / n, out) if math.isfinite(s) else s / n
            return np.asarray(v, dtype=DTYPES[out])[()]
        r = round_to(s, out)
    return r if op == "matmul" else r[()]


def evaluator(op, **config) -> Callable:
    """fn(x), fn(a, b) or fn(A, B): compute(op, inputs, **config), for explain's fn=."""

    def fn(*args):
        return compute(op, args[0] if len(args) == 1 else args, **config)

    fn.__name__ = f"{op}_" + "_".join(f"{k}_{v}" for k, v in config.items() if k != "rng")
    return fn


def nondeterministic(op, order, seed) -> Callable:
    """A function that adds in another random order on every call (its own RNG)."""
    rng = np.random.default_rng(seed)

    def fn(*args):
        return compute(op, args[0] if len(args) == 1 else args, order=order, rng=rng)

    fn.__name__ = f"{op}_{order}_nondeterministic"
    return fn


# ----------------------------------------------------------------------------- data


def _few_bits(rng, shape, fmt, lo=-2, hi=2):
    """Values with few significant bits (products exact in fmt), exponents in [lo, hi]."""
    bits = {"float16": 5, "bfloat16": 4, "float32": 12, "float64": 26}[fmt]
    m = rng.integers(2 ** (bits - 1), 2**bits, shape).astype(np.float64)
    e = rng.integers(lo, hi + 1, shape)
    sign = rng.choice([-1.0, 1.0], shape)
    return round_to(sign * np.ldexp(m, e - bits + 1), fmt)


def _draw(rng, shape, dist, fmt, range_fmt=None):
    """float64 draws of a distribution (before rounding). range_fmt: the narrowest format the
    values must fit (wide data spans 2^+-20, or 2^+-6 where float16 is involved)."""
    if dist == "uniform":
        return rng.random(shape)
    if dist == "normal":
        return rng.standard_normal(shape)
    if dist == "wide":
        w = 6 if "float16" in (fmt, range_fmt) else 20
        return rng.standard_normal(shape) * 2.0 ** rng.uniform(-w, w, shape)
    raise ValueError(dist)


def _cancelling(rng, n):
    """x and -x*(1 + d), d in [0, 1e-3): the exact sum is tiny against sum |x|."""
    h = n // 2
    y = rng.standard_normal(h)
    return y, -y * (1 + 1e-3 * rng.random(h)), 1e-3 * rng.standard_normal(n - 2 * h)


def make_inputs(rng, op, size, dist, fmt, range_fmt=None):
    """The inputs of op (x, (a, b) or (A, B)) in fmt, drawn from dist, one rounding."""
    if op in ("sum", "mean"):
        if dist == "cancel":
            v = np.concatenate(_cancelling(rng, size))[rng.permutation(size)]
        else:
            v = _draw(rng, size, dist, fmt, range_fmt)
        return round_to(v, fmt)
    if op == "dot":
        if dist == "few":
            return _few_bits(rng, size, fmt), _few_bits(rng, size, fmt)
        if dist == "cancel":  # products in cancelling pairs
            y, z, r = _cancelling(rng, size)
            w = rng.standard_normal(len(y))
            a = np.concatenate([y, z, r])
            b = np.concatenate([w, w, rng.standard_normal(len(r))])
            perm = rng.permutation(size)
            return round_to(a[perm], fmt), round_to(b[perm], fmt)
        return tuple(round_to(_draw(rng, size, dist, fmt, range_fmt), fmt) for _ in range(2))
    m, k, n = size
    if dist == "few":
        return _few_bits(rng, (m, k), fmt), _few_bits(rng, (k, n), fmt)
    if dist == "cancel":  # A = [Y, -Y(1 + D), r], B = [W; W; r'] over k, k permuted
        h = k // 2
        y = rng.standard_normal((m, h))
        a = np.hstack(
            [y, -y * (1 + 1e-3 * rng.random((m, h))), rng.standard_normal((m, k - 2 * h))]
        )
        w = rng.standard_normal((h, n))
        b = np.vstack([w, w, 1e-3 * rng.standard_normal((k - 2 * h, n))])
        perm = rng.permutation(k)
        return round_to(a[:, perm], fmt), round_to(b[perm], fmt)
    return (
        round_to(_draw(rng, (m, k), dist, fmt, range_fmt), fmt),
        round_to(_draw(rng, (k, n), dist, fmt, range_fmt), fmt),
    )


def overflow_inputs(rng, op, size):
    """float16 inputs whose running sum passes 65504 and comes back: a float16 accumulator
    overflows, a float32 one does not, the exact result is small.

    Four big terms (2^14 * {1.5, 1.75} times factors in [1, 2): at least 98304 in all,
    each product exact in float16) come early, and the same four negated later, among small
    values; for matmul in row 0 of A, with the rows of B they meet duplicated. A blocked order
    whose blocks hold the positives and the negatives apart gets inf - inf: NaN (docs/explain.md:
    "infinite (or NaN)").
    """
    big = np.ldexp(rng.integers(6, 8, 4).astype(np.float64), 12)  # 2^14 * {1.5, 1.75}
    if op in ("sum", "mean"):
        n = size
        x = rng.standard_normal(n)
        start = rng.integers(0, max(1, n // 2 - 8))
        pos = start + np.arange(8)
        x[pos[:4]], x[pos[4:]] = big, -big
        return round_to(x, "float16")
    fac = rng.integers(4, 8, 4) / 4.0  # {1, 1.25, 1.5, 1.75}
    if op == "dot":
        a, b = (_few_bits(rng, size, "float16") for _ in range(2))
        start = rng.integers(0, max(1, size // 2 - 8))
        pos = start + np.arange(8)
        a[pos] = np.concatenate([big, -big]).astype(np.float16)
        b[pos] = np.concatenate([fac, fac]).astype(np.float16)
        return a, b
    m, k, n = size
    a, b = _few_bits(rng, (m, k), "float16"), _few_bits(rng, (k, n), "float16")
    a[0, :8] = np.concatenate([big, -big]).astype(np.float16)
    f = rng.integers(4, 8, (4, n)) / 4.0
    b[:8] = np.vstack([f, f]).astype(np.float16)
    return a, b


# ----------------------------------------------------------------------------- the mechanisms
# Each builder returns the inputs and one function per result (None where a result is made
# otherwise), or None when this draw does not give a valid case (another draw is tried).


def _args(op, inputs):
    return (inputs,) if op in ("sum", "mean") else tuple(inputs)


def _b_order(s, rng):
    o1, o2 = s.variant.replace("kloop", "seq").split("-vs-")
    inputs = make_inputs(rng, s.op, s.size, s.dist, s.fmt)
    return {"inputs": inputs, "fns": [evaluator(s.op, order=o1), evaluator(s.op, order=o2)]}


def _b_accumulator(s, rng):
    acc, order = s.variant.replace("kloop", "seq").split("acc-")
    inputs = make_inputs(rng, s.op, s.size, s.dist, s.fmt)
    return {
        "inputs": inputs,
        "fns": [evaluator(s.op, order=order), evaluator(s.op, order=order, acc=acc)],
    }


def _b_cast(s, rng):
    data, out = s.fmt.split("->")
    acc = s.variant.split("-")[1][: -len("acc")]
    inputs = make_inputs(rng, s.op, s.size, s.dist, data, range_fmt=out)
    first = evaluator(s.op, pre=out, acc=acc, out=out)  # every input rounded to out first
    return {"inputs": inputs, "fns": [first, evaluator(s.op, out=out)]}  # the result rounded


def _b_input_rounding(s, rng):
    rounding, order = s.variant.split("-")
    inputs = make_inputs(rng, s.op, s.size, s.dist, s.fmt)
    if order == "blas":  # the host's BLAS on both sides: the same loop, whatever it is
        rnd = tf32 if rounding == "tf32" else bf16_round
        return {
            "inputs": inputs,
            "fns": [np.matmul, lambda a, b: np.matmul(rnd(a), rnd(b))],
            "uses_blas": True,
        }
    order = order.replace("kloop", "seq")
    fns = [evaluator(s.op, order=order, acc="float32")]
    fns.append(evaluator(s.op, order=order, pre=rounding, acc="float32"))
    return {"inputs": inputs, "fns": fns}


def _b_fma(s, rng):
    inputs = make_inputs(rng, s.op, s.size, s.dist, s.fmt)
    return {"inputs": inputs, "fns": [evaluator(s.op), evaluator(s.op, fma=True)]}


def _key(r):
    r = np.asarray(r)
    return r.dtype.name, r.tobytes()


def _b_nondeterminism(s, rng):
    model, kind = s.variant.rsplit("-", 1)
    inputs = make_inputs(rng, s.op, s.size, s.dist, s.fmt)
    want = 2 if kind == "fn" else int(kind[1:])
    runs, seen = [], set()
    for _ in range(400):  # runs of the same random-order loop; the first `want` distinct
        r = compute(s.op, inputs, order=model, rng=rng)
        if _key(r) not in seen:
            seen.add(_key(r))
            runs.append(r)
        if len(runs) == want:
            break
    else:
        return None
    out = {"inputs": inputs, "results": runs, "fns": [None] * want}
    if s.with_fn:  # its own RNG; two calls in a row on these inputs differ (first 12 checked)
        for _ in range(10):
            seed = int(rng.integers(2**63))
            probe = nondeterministic(s.op, model, seed)
            vals = [_key(probe(*_args(s.op, inputs))) for _ in range(12)]
            if all(u != v for u, v in zip(vals, vals[1:])):
                out["nondet_fn"] = nondeterministic(s.op, model, seed)
                return out
        return None
    return out


def _b_overflow(s, rng):
    order = s.variant.split("acc-")[1].replace("kloop", "seq")
    inputs = overflow_inputs(rng, s.op, s.size)
    fns = [evaluator(s.op, order=order), evaluator(s.op, order=order, acc="float32")]
    return {"inputs": inputs, "fns": fns}


def _b_identical(s, rng):
    how = s.variant.split("-")[0]
    inputs = make_inputs(rng, s.op, s.size, s.dist, s.fmt)
    numpy_fn = {"sum": np.sum, "mean": np.mean, "dot": np.dot, "matmul": np.matmul}[s.op]
    f = numpy_fn if how in ("numpy", "blas") else evaluator(s.op, order=how)
    return {"inputs": inputs, "fns": [f, f], "uses_blas": how == "blas"}


def _gamma(n, u):
    return n * u / (1 - n * u) if n * u < 1 else math.inf


def _bound(op, inputs, exact, fmt):
    """A sequential evaluation's worst-case error bound in fmt (Higham's gamma_n S), plus the
    final rounding; elementwise for matmul."""
    u = UNIT[fmt]
    if op == "matmul":
        a, b = (np.abs(np.asarray(v, np.float64)) for v in inputs)
        s = (a[:, :, None] * b[None]).sum(axis=1)
        x = np.abs(np.vectorize(float)(exact))
        return _gamma(a.shape[1], u) * s + u * x
    x64 = np.asarray(inputs if op in ("sum", "mean") else inputs[0], np.float64)
    terms = np.abs(x64 if op in ("sum", "mean") else x64 * np.asarray(inputs[1], np.float64))
    b = _gamma(len(terms), u) * math.fsum(terms.tolist())
    return b / len(terms) + 2 * u * abs(float(exact)) if op == "mean" else b + u * abs(float(exact))


def _dropped(op, inputs, keep, order, n):
    """The result with the terms outside `keep` missing (a mean still divides by n)."""
    if op == "dot":
        return compute("dot", (inputs[0][keep], inputs[1][keep]), order=order)
    s = float(compute("sum", inputs[keep], order=order))
    if op == "sum":
        return np.asarray(s, inputs.dtype)[()]
    return np.asarray(round_fraction(Fraction(s) / n, fmt_of(inputs)), inputs.dtype)[()]


def _bug_scalar(s, rng, kind, order, inputs, good, exact):
    """A dropped term, a dropped block (the smallest power-of-two block that is clearly outside
    the bound) or the result times 1.001; None if it stays inside 8 times the bound."""
    fmt, n = s.fmt, len(_args(s.op, inputs)[0])
    bound = _bound(s.op, inputs, exact, fmt)
    terms = np.abs(np.asarray(_args(s.op, inputs)[0], np.float64))
    if s.op == "dot":
        terms = terms * np.abs(np.asarray(inputs[1], np.float64))
    keep = np.ones(n, bool)

    def far(r):
        return abs(Fraction(float(r)) - exact) > 8 * Fraction(bound)

    if kind == "scale":
        v = round_fraction(Fraction(float(good)) * Fraction(1001, 1000), fmt)
        bug = np.asarray(v, DTYPES[fmt])[()]
        return (bug, "the result times 1.001") if far(bug) else None
    if kind == "drop-term":
        i = int(np.argmax(terms))
        keep[i] = False
        bug = _dropped(s.op, inputs, keep, order, n)
        return (bug, f"term {i} dropped") if far(bug) else None
    b = 32
    while b <= n // 4:
        sums = np.add.reduceat(terms, np.arange(0, n, b))
        j = int(np.argmax(sums[:-1])) if len(sums) > 1 else 0
        keep = np.ones(n, bool)
        keep[j * b : (j + 1) * b] = False
        bug = _dropped(s.op, inputs, keep, order, n)
        if far(bug):
            return bug, f"block {j} of {b} terms dropped"
        b *= 2
    return None


def _bug_matmul(s, kind, inputs, good, exact, order):
    a, b = inputs
    bound = _bound("matmul", inputs, exact, s.fmt)
    x = np.vectorize(float)(exact)
    bug = good.copy()
    if "scale" in kind:  # the element largest against its bound
        i, j = np.unravel_index(np.argmax(np.abs(x) / bound), x.shape)
        v = Fraction(float(good[i, j])) * Fraction(1001, 1000)
        bug[i, j] = round_fraction(v, s.fmt)
        note = f"element ({i}, {j}) times 1.001"
    else:  # the largest product against its element's bound
        p = np.abs(a.astype(np.float64)[:, :, None] * b.astype(np.float64)[None])
        i, j = np.unravel_index(np.argmax(p.max(axis=1) / bound), x.shape)
        kk = int(np.argmax(p[i, :, j]))
        keep = np.arange(a.shape[1]) != kk
        bug[i, j] = compute("dot", (a[i, keep], b[keep, j]), order=order)
        note = f"element ({i}, {j}) without its term k={kk}"
    if abs(Fraction(float(bug[i, j])) - exact[i, j]) <= 8 * Fraction(float(bound[i, j])):
        return None
    return bug, note


def _b_bug(s, rng):
    kind, order = s.variant.rsplit("-", 1)
    inputs = make_inputs(rng, s.op, s.size, s.dist, s.fmt)
    blas = order == "blas"
    correct = np.matmul if blas else evaluator(s.op, order=order.replace("kloop", "seq"))
    good = correct(*_args(s.op, inputs))
    exact = exact_value(s.op, inputs)
    if s.op == "matmul":
        got = _bug_matmul(s, kind, inputs, good, exact, order.replace("kloop", "seq"))
    else:
        got = _bug_scalar(s, rng, kind, order, inputs, good, exact)
    if got is None:
        return None
    return {
        "inputs": inputs,
        "results": [good, got[0]],
        "fns": [correct, None],
        "note": got[1],
        "uses_blas": blas,
        "exact": exact,
    }


BUILDERS = {
    "order": _b_order,
    "accumulator": _b_accumulator,
    "cast": _b_cast,
    "input_rounding": _b_input_rounding,
    "fma": _b_fma,
    "nondeterminism": _b_nondeterminism,
    "overflow": _b_overflow,
    "identical": _b_identical,
    "bug": _b_bug,
}


# ----------------------------------------------------------------------------- the case list

PAIRS = (
    ("cpu", "gpu"),
    ("numpy", "loop"),
    ("mine", "reference"),
    ("laptop", "server"),
    ("old", "new"),
    ("torch", "numpy"),
    ("cuda", "cpu"),
    ("v1", "v2"),
    ("result", "expected"),
    ("a", "b"),
)
RUNS = (("run1", "run2", "run3", "run4"), ("gpu1", "gpu2", "gpu3", "gpu4"), ("a", "b", "c", "d"))


@dataclass(frozen=True)
class Spec:
    mechanism: str
    op: str
    variant: str
    fmt: str  # the data's format; for cast "data->result"
    dist: str
    size: object  # n, or (m, k, n) for matmul
    with_fn: bool

    @property
    def name(self) -> str:
        size = f"n={self.size}" if self.op != "matmul" else "{0}x{1}@{1}x{2}".format(*self.size)
        return f"{self.mechanism}/{self.op}/{self.variant}/{self.fmt}/{self.dist}/{size}"

    @property
    def band(self) -> str:
        k = self.size[1] if self.op == "matmul" else self.size
        small, large = (32, 512) if self.op == "matmul" else (100, 100_000)
        return "small" if k <= small else "large" if k >= large else "medium"


def _valid(mechanism, results) -> bool:
    finite = [bool(np.all(np.isfinite(np.asarray(r, np.float64)))) for r in results]
    if mechanism == "overflow":
        if finite != [False, True]:
            return False
    elif not all(finite):
        return False
    keys = [_key(r) for r in results]
    if mechanism == "identical":
        return len(set(keys)) == 1
    return len(set(keys)) == len(keys)


def build_case(spec: Spec, seed: int = 0) -> Case:
    """One case: its data drawn from a generator seeded by the seed and the case's name, drawn
    again (up to 25 times) until the mechanism gives a valid case."""
    rng = np.random.default_rng([seed, zlib.crc32(spec.name.encode())])
    for _ in range(25):
        got = BUILDERS[spec.mechanism](spec, rng)
        if got is None:
            continue
        args = _args(spec.op, got["inputs"])
        results = got.get("results") or [f(*args) for f in got["fns"]]
        if _valid(spec.mechanism, results):
            break
    else:
        raise RuntimeError(f"no valid draw for {spec.name}")
    pool = RUNS if len(results) > 2 else PAIRS
    names = list(pool[rng.integers(len(pool))][: len(results)])
    perm = rng.permutation(len(results))  # which label each result gets
    labels = [names[p] for p in perm]
    case = Case(
        name=spec.name,
        op=spec.op,
        inputs=got["inputs"],
        results={label: results[i] for i, label in sorted(enumerate(labels), key=lambda t: t[1])},
        mechanism=spec.mechanism,
        uses_blas=got.get("uses_blas", False),
        note=got.get("note", ""),
    )
    if spec.with_fn and "nondet_fn" in got:
        case.fn = got["nondet_fn"]
        case.fns = {label: case.fn for label in labels}  # the same code made every run
    elif spec.with_fn:
        sides = [i for i, f in enumerate(got["fns"]) if f is not None]
        i = sides[rng.integers(len(sides))]
        case.fn, case.fn_label = got["fns"][i], labels[i]
        case.fns = {labels[j]: got["fns"][j] for j in sides}
        for j in sides:  # each function gives its result
            assert _key(got["fns"][j](*args)) == _key(results[j]), spec.name
    case.closer = closer_labels(spec.op, case.inputs, case.results, got.get("exact"))
    return case


SUM_NS = (10, 100, 1_000, 10_000, 100_000)
SHAPES = ((4, 10, 4), (8, 32, 8), (16, 64, 16), (32, 128, 32), (64, 512, 64))
DISTS = ("uniform", "normal", "cancel", "wide")


def _dists(fmt, n, op, count, start):
    """`count` distributions, rotating from `start`. Narrow formats at large n get no uniform
    data (all-positive sums stagnate in a float16/bfloat16 accumulator), and float16 dots at
    large n no wide data (their sums would overflow)."""
    pool = list(DISTS)
    narrow_n = {"float16": 1000, "bfloat16": 100}.get(fmt, 10**9)
    if n > narrow_n:
        pool.remove("uniform")
    if fmt in ("float16", "bfloat16") and op in ("dot", "matmul") and n >= 1000:
        pool.remove("wide")
    return [pool[(start + i) % len(pool)] for i in range(count)]


def _order_pairs(op, n, fmt):
    """The pairs of orders an order case can compare at n terms."""
    if op == "matmul":
        pairs = ["kloop-vs-pairwise"]
        pairs += [f"kloop-vs-blocked{b}" for b in (4, 8, 16, 32, 64, 128) if 2 * b <= n]
        return pairs + [f"pairwise-vs-blocked{b}" for b in (4, 16, 64) if 2 * b <= n][:1]
    pairs = ["seq-vs-reverse", "seq-vs-pairwise", "seq-vs-tree128", "seq-vs-tree256"]
    pairs += [f"seq-vs-blocked{b}" for b in (32, 64, 100, 128, 256) if n > b]
    pairs += ["pairwise-vs-reverse"] + (["tree256-vs-blocked128"] if n > 256 else [])
    if fmt in ("float32", "float64") and op != "matmul":
        pairs += ["seq-vs-numpy", "numpy-vs-tree256", "numpy-vs-reverse"]
    return pairs


def _specs_order(out):
    i = 0
    for op, fmts, per in (
        ("sum", ("float32", "float64", "float16", "bfloat16"), 2),
        ("mean", ("float32", "float16", "float64"), 1),
        ("dot", ("float32", "float16", "bfloat16", "float64"), 1),
        ("matmul", ("float32", "float16", "bfloat16", "float64"), 1),
    ):
        for n in SHAPES if op == "matmul" else SUM_NS:
            k = n[1] if op == "matmul" else n
            for fmt in fmts:
                for dist in _dists(fmt, k, op, per, i):
                    pairs = _order_pairs(op, k, fmt)
                    out.append(Spec("order", op, pairs[i % len(pairs)], fmt, dist, n, i % 2 == 0))
                    i += 1


def _specs_accumulator(out):
    i = 0
    sum_orders = ("seq", "pairwise", "blocked64", "tree256")
    for op, combos in (
        ("sum", (("float16", "float32"), ("bfloat16", "float32"), ("float32", "float64"))),
        ("mean", (("float16", "float32"), ("float32", "float64"))),
        ("dot", (("float16", "float32"), ("bfloat16", "float32"), ("float32", "float64"))),
        ("matmul", (("float16", "float32"), ("bfloat16", "float32"), ("float32", "float64"))),
    ):
        for n in SHAPES if op == "matmul" else SUM_NS:
            k = n[1] if op == "matmul" else n
            for fmt, acc in combos:
                if op == "matmul" and fmt == "float32" and k not in (32, 128):
                    continue
                if op == "matmul":
                    order, dist = ("kloop", "pairwise")[i % 2], "few"
                else:  # products exact in the data's format: only the accumulator differs
                    order = sum_orders[i % 4] if k > 64 else ("seq", "pairwise")[i % 2]
                    dist = "few" if op == "dot" else _dists(fmt, k, op, 1, i)[0]
                out.append(Spec("accumulator", op, f"{acc}acc-{order}", fmt, dist, n, i % 2 == 1))
                i += 1


def _specs_cast(out):
    i = 0
    combos = (
        ("float64", "float16"),
        ("float32", "bfloat16"),
        ("float32", "float16"),
        ("float64", "float32"),
    )
    for op, which, sizes in (
        ("sum", combos, SUM_NS),
        ("mean", combos[:2], SUM_NS),
        ("dot", combos[:2], SUM_NS),
        ("matmul", combos[1:3], SHAPES[:4]),
    ):
        for n in sizes:
            k = n[1] if op == "matmul" else n
            for data, res in which:
                accs = [data] + (["float32"] if data == "float64" and res != "float32" else [])
                if k <= {"float16": 1000, "bfloat16": 100}.get(res, 10**9):
                    accs.append(res)  # summed in the result's narrow format
                acc = accs[i % len(accs)]
                dist = ("normal", "uniform", "wide", "cancel")[i % 4]
                if dist == "uniform" and res == "bfloat16" and k >= 1000:
                    dist = "normal"  # a positive sum's few bfloat16 bits hide the cast
                spec = Spec(
                    "cast", op, f"first-{acc}acc-vs-last", f"{data}->{res}", dist, n, i % 2 == 1
                )
                out.append(spec)
                i += 1


def _specs_input_rounding(out):
    i = 0
    for n in SUM_NS:
        for rounding in ("tf32", "bfloat16"):
            for dist in ("normal", "uniform") if n <= 1000 else ("wide",):
                order = ("seq", "pairwise", "blocked64", "numpy")[i % 4]
                out.append(
                    Spec(
                        "input_rounding",
                        "dot",
                        f"{rounding}-{order}",
                        "float32",
                        dist,
                        n,
                        i % 2 == 0,
                    )
                )
                i += 1
    for shape in SHAPES:
        for rounding in ("tf32", "bfloat16"):
            order = ("kloop", "pairwise")[i % 2]
            dist = ("normal", "uniform", "wide", "cancel")[i % 4]
            out.append(
                Spec(
                    "input_rounding",
                    "matmul",
                    f"{rounding}-{order}",
                    "float32",
                    dist,
                    shape,
                    i % 2 == 0,
                )
            )
            i += 1
    for j, shape in enumerate(SHAPES[:4]):
        rounding = ("tf32", "bfloat16")[j % 2]
        out.append(
            Spec(
                "input_rounding",
                "matmul",
                f"{rounding}-blas",
                "float32",
                "normal",
                shape,
                j % 2 == 0,
            )
        )


def _specs_fma(out):
    # the fma loop is a Python loop (a Fraction where float64 is not exact): at most 10^4 terms
    # for a case with fn (explain calls fn 10-50 times), 10^5 without; matmul up to k = 128
    # with fn, k = 512 without
    i = 0
    for n in SUM_NS:
        for fmt in ("float32", "float16", "bfloat16"):
            if n == 100_000 and fmt != "float32":
                continue
            for dist in _dists(fmt, n, "dot", 2 if fmt == "float32" else 1, i):
                with_fn = i % 2 == 0 and n <= 10_000
                out.append(Spec("fma", "dot", "mul-add-vs-fma", fmt, dist, n, with_fn))
                i += 1
    for shape in SHAPES:
        for fmt in ("float32", "float16", "bfloat16"):
            if shape[1] == 512 and fmt != "float32":
                continue
            dist = _dists(fmt, shape[1], "matmul", 1, i)[0]
            with_fn = i % 2 == 0 and shape[1] <= 128
            out.append(Spec("fma", "matmul", "mul-add-vs-fma", fmt, dist, shape, with_fn))
            i += 1


def _atomic(k):
    """A random-order model with at least 4 blocks (shuffled terms for small k)."""
    if k <= 100:
        return "shuffled"
    return f"atomic{min(256, 2 ** int(math.log2(k // 8)))}"


def _specs_nondeterminism(out):
    i = 0
    for op, fmts in (
        ("sum", ("float32", "float16", "float64")),
        ("mean", ("float32",)),
        ("dot", ("float32", "float16")),
        ("matmul", ("float32",)),
    ):
        for n in SHAPES if op == "matmul" else SUM_NS:
            k = n[1] if op == "matmul" else n
            for fmt in fmts:
                if fmt == "float64" and k == 10:
                    continue  # ten float64 terms rarely give three different sums
                dist = _dists(fmt, k, op, 1, i)[0]
                model = _atomic(k) if op != "matmul" else f"atomic{max(2, k // 8)}"
                runs = f"x{3 + i % 2}"
                with_fn = i % 3 == 0 and k >= 1000  # a small sum repeats its value too often
                out.append(Spec("nondeterminism", op, f"{model}-{runs}", fmt, dist, n, with_fn))
                i += 1
    # two results and the nondeterministic function itself (large enough that two calls in a
    # row rarely agree)
    for op, sizes, fmts in (
        ("sum", (1_000, 10_000, 100_000), ("float32", "float64")),
        ("dot", (1_000, 10_000, 100_000), ("float32",)),
        ("mean", (10_000,), ("float32",)),
        ("matmul", SHAPES[2:4], ("float32",)),
    ):
        for n in sizes:
            k = n[1] if op == "matmul" else n
            for fmt in fmts:
                model = _atomic(k) if op != "matmul" else f"atomic{max(2, k // 8)}"
                dist = _dists(fmt, k, op, 1, i)[0]
                out.append(Spec("nondeterminism", op, f"{model}-fn", fmt, dist, n, True))
                i += 1


def _specs_overflow(out):
    i = 0
    for op in ("sum", "mean", "dot", "matmul"):
        for n in SHAPES if op == "matmul" else SUM_NS:
            k = n[1] if op == "matmul" else n
            order = ("kloop" if op == "matmul" else "seq") if i % 3 else "blocked4"
            if k > 64 and op != "matmul":
                order = ("seq", "blocked64", "seq")[i % 3]
            out.append(Spec("overflow", op, f"float32acc-{order}", "float16", "big", n, i % 2 == 0))
            i += 1


def _specs_identical(out):
    rows = [
        ("sum", "numpy-twice", "float32", "normal", 10),
        ("sum", "seq-twice", "float16", "uniform", 1_000),
        ("sum", "numpy-twice", "float64", "wide", 100_000),
        ("sum", "pairwise-twice", "bfloat16", "normal", 100),
        ("sum", "tree256-twice", "float32", "cancel", 10_000),
        ("mean", "numpy-twice", "float32", "uniform", 100),
        ("mean", "seq-twice", "float16", "normal", 10_000),
        ("mean", "numpy-twice", "float64", "normal", 100_000),
        ("dot", "seq-twice", "float32", "normal", 10),
        ("dot", "blas-twice", "float32", "uniform", 1_000),
        ("dot", "pairwise-twice", "float16", "normal", 100_000),
        ("dot", "blas-twice", "float64", "wide", 10_000),
        ("matmul", "blas-twice", "float32", "normal", SHAPES[0]),
        ("matmul", "seq-twice", "float16", "uniform", SHAPES[2]),
        ("matmul", "blas-twice", "float64", "normal", SHAPES[4]),
        ("matmul", "pairwise-twice", "bfloat16", "normal", SHAPES[3]),
    ]
    for i, (op, variant, fmt, dist, n) in enumerate(rows):
        out.append(Spec("identical", op, variant, fmt, dist, n, i % 2 == 1))


def _specs_bug(out):
    # where a dropped term or 0.1% is outside 8x the rounding bound of a sequential loop in
    # the result's format (float32 at large n: only a large block missing is)
    rows = [
        ("sum", "drop-term-seq", "float32", "normal", 10),
        ("sum", "drop-term-numpy", "float32", "uniform", 100),
        ("sum", "scale-pairwise", "float32", "normal", 100),
        ("sum", "drop-block-seq", "float32", "uniform", 1_000),
        ("sum", "drop-block-numpy", "float32", "uniform", 10_000),
        ("sum", "drop-block-tree256", "float32", "uniform", 100_000),
        ("sum", "drop-term-seq", "float16", "uniform", 10),
        ("sum", "scale-seq", "float64", "normal", 10),
        ("sum", "drop-term-seq", "float64", "cancel", 1_000),
        ("sum", "scale-numpy", "float64", "normal", 10_000),
        ("sum", "drop-term-pairwise", "float64", "wide", 100_000),
        ("sum", "drop-block-numpy", "float64", "normal", 100_000),
        ("mean", "drop-term-seq", "float32", "normal", 10),
        ("mean", "drop-term-numpy", "float64", "uniform", 100),
        ("mean", "drop-block-pairwise", "float32", "uniform", 1_000),
        ("mean", "drop-block-seq", "float32", "uniform", 10_000),
        ("mean", "scale-numpy", "float64", "normal", 100_000),
        ("dot", "drop-term-seq", "float32", "normal", 10),
        ("dot", "drop-term-pairwise", "float32", "uniform", 100),
        ("dot", "scale-seq", "float64", "normal", 100),
        ("dot", "drop-block-seq", "float32", "uniform", 1_000),
        ("dot", "drop-block-numpy", "float32", "uniform", 10_000),
        ("dot", "scale-seq", "float64", "cancel", 10_000),
        ("dot", "drop-block-blocked64", "float32", "uniform", 100_000),
        ("dot", "drop-term-seq", "float64", "normal", 100_000),
        ("dot", "drop-term-seq", "float16", "uniform", 10),
        ("matmul", "drop-k-term-kloop", "float32", "normal", SHAPES[0]),
        ("matmul", "scale-element-kloop", "float32", "uniform", SHAPES[1]),
        ("matmul", "drop-k-term-pairwise", "float64", "normal", SHAPES[2]),
        ("matmul", "drop-k-term-kloop", "float32", "uniform", SHAPES[3]),
        ("matmul", "scale-element-pairwise", "float32", "uniform", SHAPES[4]),
        ("matmul", "scale-element-blas", "float32", "uniform", SHAPES[1]),
        ("matmul", "scale-element-blas", "float64", "normal", SHAPES[3]),
        ("matmul", "drop-k-term-kloop", "float64", "wide", SHAPES[4]),
    ]
    for i, (op, variant, fmt, dist, n) in enumerate(rows):
        out.append(Spec("bug", op, variant, fmt, dist, n, i % 2 == 0))


def all_specs() -> list[Spec]:
    out: list[Spec] = []
    for f in (
        _specs_order,
        _specs_accumulator,
        _specs_cast,
        _specs_input_rounding,
        _specs_fma,
        _specs_nondeterminism,
        _specs_overflow,
        _specs_identical,
        _specs_bug,
    ):
        f(out)
    seen: dict[str, int] = {}
    unique = []
    for s in out:  # the same name twice (another fn choice): the second gets "#2"
        seen[s.name] = seen.get(s.name, 0) + 1
        if seen[s.name] > 1:
            s = Spec(s.mechanism, s.op, f"{s.variant}#{seen[s.name]}", *tuple(vars(s).values())[3:])
        unique.append(s)
    return unique


def ci_specs() -> list[Spec]:
    """A deterministic subset: from each (mechanism, op, size band) group its first spec and
    the one in the middle (one only for identical and overflow), every factor, op and band."""
    groups: dict[tuple, list[Spec]] = {}
    for s in all_specs():
        groups.setdefault((s.mechanism, s.op, s.band), []).append(s)
    out = []
    for (mech, _, _), specs in groups.items():
        out.append(specs[0])
        if mech in ("identical", "overflow") or len(specs) < 3:
            continue
        # the middle one, or the next after it whose fn differs from the first's
        later = specs[len(specs) // 2 :]
        out.append(next((s for s in later if s.with_fn != specs[0].with_fn), later[0]))
    return out


def build_cases(kind: str = "all", seed: int = 0) -> list[Case]:
    """The held-out cases: "all" (several hundred) or "ci" (a subset of about 140)."""
    specs = {"all": all_specs, "ci": ci_specs}[kind]()
    return [build_case(s, seed) for s in specs]
