"""Accumulation trees as data: the ``revealed`` order's parameter (``fpx.reveal`` finds them).

A tree over the terms ``0 .. n-1`` is a leaf (an ``int``) or a node: a tuple of two or more
subtrees, each addition rounded once to the accumulator (a node of three or more children is
one multi-term addition, correctly rounded). Children are kept sorted by their smallest leaf:
addition is commutative, so that order carries no information. A product may be *fused* into
the addition that consumes it (``fma(a_i, b_i, other)``); the fused leaves are a set beside the
tree.

The code of a tree (``revealed(tree=CODE)``) is its postfix program, leaves as differences from
the previous leaf (``f`` marks a fused one), additions as ``+`` (``+k`` for k children),
deflated and written in URL-safe base64 after a ``z``: repeated shapes (a sequential chain,
pairwise halves, SIMD lanes) compress to a few dozen characters. A code too long for a variant
spec is remembered in this process under a key ``h`` + 16 hex digits (:func:`remember`).
"""

from __future__ import annotations

import base64
import functools
import hashlib
import zlib
from dataclasses import dataclass

import numpy as np

__all__ = [
    "MAX_INLINE",
    "Parsed",
    "canonical",
    "check_code",
    "decode",
    "encode",
    "evaluate",
    "leaves",
    "nodes_postorder",
    "parse",
    "recall",
    "remember",
    "text",
]

MAX_INLINE = 400  # longest code written into a spec; longer ones are remembered by key
_KNOWN: dict[str, str] = {}  # key -> code, this process's long trees


def nodes_postorder(tree):
    """Every subtree, children before their parent (iterative: chains are n deep)."""
    out, stack = [], [(tree, False)]
    while stack:
        t, done = stack.pop()
        if done or isinstance(t, (int, np.integer)):
            out.append(t)
        else:
            stack.append((t, True))
            stack.extend((c, False) for c in reversed(t))
    return out


def canonical(tree):
    """The tree with every node's children sorted by their smallest leaf (ints and tuples;
    a node may be any sequence)."""
    done: dict = {}  # id(subtree) -> (canonical subtree, smallest leaf)
    for t in nodes_postorder(tree):
        if isinstance(t, (int, np.integer)):
            done[id(t)] = (int(t), int(t))
            continue
        if len(t) < 2:
            raise ValueError(f"a node adds two or more subtrees, got {len(t)}")
        kids = sorted((done[id(c)] for c in t), key=lambda v: v[1])
        done[id(t)] = (tuple(k for k, _ in kids), kids[0][1])
    return done[id(tree)][0]


def leaves(tree) -> list:
    """The leaves of a tree, left to right."""
    return [t for t in nodes_postorder(tree) if isinstance(t, int)]


def text(tree) -> str:
    """Nested parentheses of leaf indices: ``((0+1)+(2+3))``."""
    out = []
    for tok in _postfix(tree, frozenset()):
        if tok[0] == "L":
            out.append(str(tok[1]))
        else:
            k = tok[1]
            out[-k:] = ["(" + "+".join(out[-k:]) + ")"]
    return out[0]


def _postfix(tree, fused) -> list:
    """Tokens: ("L", index, fused) and ("A", k), children first (iterative)."""
    out, stack = [], [(tree, False)]
    while stack:
        t, done = stack.pop()
        if isinstance(t, int):
            out.append(("L", t, t in fused))
        elif done:
            out.append(("A", len(t)))
        else:
            stack.append((t, True))
            stack.extend((c, False) for c in reversed(t))
    return out


def encode(tree, fused=frozenset()) -> str:
    """The code of a canonical tree (see the module docstring)."""
    words, prev = [], -1
    for tok in _postfix(tree, frozenset(fused)):
        if tok[0] == "L":
            words.append(f"{tok[1] - prev}{'f' if tok[2] else ''}")
            prev = tok[1]
        else:
            words.append("+" if tok[1] == 2 else f"+{tok[1]}")
    raw = zlib.compress(",".join(words).encode(), 9)
    return "z" + base64.urlsafe_b64encode(raw).decode().rstrip("=")


def remember(code: str) -> str:
    """A short key for ``code``, known to :func:`decode` in this process."""
    key = "h" + hashlib.sha256(code.encode()).hexdigest()[:16]
    _KNOWN[key] = code
    return key


def recall(key: str) -> str:
    """The code remembered under ``key`` (ValueError if this process has not seen it)."""
    if key not in _KNOWN:
        raise ValueError(
            f"tree {key!r} is a key of a long revealed tree, remembered only in the process "
            "that revealed it; use Reveal.code there (tree='z...') to carry it elsewhere"
        )
    return _KNOWN[key]


@dataclass(frozen=True)
class Parsed:
    """A decoded tree: ``tree``, ``fused`` leaves, ``n`` terms, its postfix ``program`` for
    the kernel (leaf i: i, fused leaf: i + n, addition of two: -1, of k: -k), ``depth``."""

    tree: object
    fused: frozenset
    n: int
    program: np.ndarray
    depth: int
    multiway: bool


def decode(code: str):
    """(tree, fused leaves) of a code or a remembered key; ValueError for anything else."""
    p = parse(code)
    return p.tree, p.fused


def check_code(v):
    """The ``tree`` parameter's check: a code that decodes to a tree."""
    if v is None:
        return None
    if not isinstance(v, str):
        raise ValueError(f"tree must be a revealed tree's code (a string), got {v!r}")
    parse(v)
    return v


@functools.lru_cache(maxsize=64)
def parse(code: str) -> Parsed:
    """The decoded tree of ``code`` (cached)."""
    if code.startswith("h"):
        code = recall(code)
    bad = ValueError(f"tree={code[:40]!r}... is not the code of a revealed tree (Reveal.code)")
    if not code.startswith("z"):
        raise bad
    try:
        body = code[1:]
        raw = zlib.decompress(base64.urlsafe_b64decode(body + "=" * (-len(body) % 4)))
        words = raw.decode().split(",")
    except (ValueError, zlib.error, UnicodeDecodeError):
        raise bad from None
    stack: list = []
    fused, seen, prog_l, prev, depth, lows = set(), [], [], -1, [], []
    for w in words:
        if w.startswith("+"):
            k = int(w[1:]) if len(w) > 1 and w[1:].isdigit() else 2 if w == "+" else 0
            if k < 2 or len(stack) < k or lows[-k:] != sorted(lows[-k:]):
                raise bad  # (children in canonical order: by their smallest leaf)
            kids = tuple(stack[-k:])
            d, low = 1 + max(depth[-k:]), lows[-k]
            del stack[-k:], depth[-k:], lows[-k:]
            stack.append(kids)
            depth.append(d)
            lows.append(low)
            prog_l.append(("A", k))
        else:
            f = w.endswith("f")
            try:
                i = prev + int(w[:-1] if f else w)
            except ValueError:
                raise bad from None
            prev = i
            stack.append(i)
            depth.append(0)
            lows.append(i)
            seen.append(i)
            if f:
                fused.add(i)
            prog_l.append(("L", i, f))
    n = len(seen)
    if len(stack) != 1 or sorted(seen) != list(range(n)):
        raise bad
    tree = stack[0]
    program = np.array(
        [(t[1] + n if t[2] else t[1]) if t[0] == "L" else -t[1] for t in prog_l], dtype=np.int64
    )
    return Parsed(tree, frozenset(fused), n, program, depth[0], bool(np.any(program < -2)))


def evaluate(parsed: Parsed, X, Y, fused: bool, ar):
    """The tree on terms X (products X*Y with Y), each addition correctly rounded to the
    accumulator of ``ar`` (a multi-term node: its exact sum, rounded once), in exact rationals:
    the path of trees with multi-term nodes, and the slow definition of the others."""
    from fractions import Fraction

    from ..formats import as_format

    acc = ar.info.name
    n = parsed.n

    def rnd(q):
        return Fraction(float(as_format(q, acc)))

    def exact(i):
        return Fraction(float(X[i])) * (Fraction(float(Y[i])) if Y is not None else 1)

    stack = []  # (value, fused leaf or -1)
    for t in parsed.program:
        t = int(t)
        if t >= 0:
            i = t - n if t >= n else t
            v = exact(i) if Y is None else rnd(exact(i))
            stack.append((v, i if (t >= n and fused and Y is not None) else -1))
            continue
        k = -t
        kids = stack[-k:]
        del stack[-k:]
        if k == 2 and kids[0][1] >= 0:
            v = rnd(exact(kids[0][1]) + kids[1][0])
        elif k == 2 and kids[1][1] >= 0:
            v = rnd(exact(kids[1][1]) + kids[0][0])
        else:
            v = rnd(sum((c[0] for c in kids), Fraction(0)))
        stack.append((v, -1))
    return type(ar.z)(float(stack[0][0]))
