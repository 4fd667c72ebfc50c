"""The order registry: names, one-line descriptions, parameters and their validation."""

from __future__ import annotations

import numbers
from collections.abc import Callable
from dataclasses import dataclass, field

# kinds of order
DEFINITION = "definition"  # a textbook order, defined in docs/orders.md
LIBRARY = "library"  # what a real library does, verified against it on this machine
HYPOTHESIS = "hypothesis"  # a GPU library's order as read from source, not yet confirmed on a GPU
EXACT = "exact"


def _int(name: str, *, lo: int = 1, hi: int = 1 << 30, pow2: bool = False) -> Callable:
    def check(v):
        if isinstance(v, bool) or not isinstance(v, numbers.Integral):
            raise ValueError(f"{name} must be an integer, got {v!r}")
        v = int(v)
        if not lo <= v <= hi:
            raise ValueError(f"{name} must be between {lo} and {hi}, got {v}")
        if pow2 and v & (v - 1):
            raise ValueError(f"{name} must be a power of two (2, 4, ..., 1024, ...), got {v}")
        return v

    return check


def _choice(name: str, options: tuple) -> Callable:
    def check(v):
        if v not in options:
            raise ValueError(f"{name} must be one of {', '.join(map(repr, options))}, got {v!r}")
        return v

    return check


def _seed(v):
    if isinstance(v, bool) or not isinstance(v, numbers.Integral) or v < 0:
        raise ValueError(f"seed must be a non-negative integer, got {v!r}")
    return int(v)


def _bool(name: str) -> Callable:
    def check(v):
        if v is None or isinstance(v, bool):
            return v
        raise ValueError(f"{name} must be True or False, got {v!r}")

    return check


@dataclass(frozen=True)
class OrderSpec:
    """One evaluation order: its description, kind, parameters (defaults and checks), and
    whether ``fma=True`` changes it (only orders where a product feeds an accumulator)."""

    name: str
    description: str
    kind: str = DEFINITION
    params: dict = field(default_factory=dict)  # name -> (default, check)
    fma: bool = False
    float16_accumulate: str | None = None  # default accumulator for float16 data

    def validate(self, given: dict) -> dict:
        unknown = set(given) - set(self.params)
        if unknown:
            allowed = ", ".join(sorted(self.params)) or "none"
            raise ValueError(
                f"order {self.name!r} has no parameter {', '.join(sorted(unknown))}; "
                f"its parameters: {allowed}"
            )
        out = {}
        for key, (default, check) in self.params.items():
            out[key] = check(given[key]) if key in given else default
        return out


TREE_PARAMS = {
    "block": (128, _int("block", lo=2, hi=1 << 16, pow2=True)),
    "combine": ("sequential", _choice("combine", ("sequential", "atomic"))),
    "seed": (0, _seed),
}

SUM_ORDERS = {
    s.name: s
    for s in [
        OrderSpec("sequential", "acc = x[0]; acc = acc + x[i] for i = 1..n-1", fma=True),
        OrderSpec("reverse", "sequential from the last element to the first", fma=True),
        OrderSpec("pairwise", "recursive halving: S(x[:n//2]) + S(x[n//2:])"),
        OrderSpec(
            "numpy",
            "np.sum of NumPy >= 2.3: blocked pairwise (128, 8 accumulators) on +0.0",
            LIBRARY,
            float16_accumulate="float32",
        ),
        OrderSpec(
            "numpy-chunked",
            "np.sum of NumPy < 2.3: the same pairwise per 8192-element chunk, chunks in turn",
            LIBRARY,
            params={"chunk": (8192, _int("chunk", lo=1))},
            float16_accumulate="float32",
        ),
        OrderSpec(
            "blocked",
            "sequential within blocks of `block`, then sequential over block sums",
            params={"block": (128, _int("block", lo=1))},
            fma=True,
        ),
        OrderSpec(
            "tree",
            "GPU shared-memory tree per block (interleaved addressing), blocks combined in order "
            "or (combine='atomic') in a seeded order, float32 flushing subnormals like atomicAdd",
            params=TREE_PARAMS,
            fma=True,
        ),
        OrderSpec(
            "tree-strided",
            "GPU shared-memory tree per block (sequential addressing), blocks combined in order "
            "or (combine='atomic') in a seeded order, float32 flushing subnormals like atomicAdd",
            params=TREE_PARAMS,
            fma=True,
        ),
        OrderSpec(
            "cupy-kernel",
            "CuPy's own reduction kernel (one 512-thread block, strided lanes, tree)",
            HYPOTHESIS,
            params={
                "block_size": (512, _int("block_size", lo=32, hi=1024, pow2=True)),
                "ftz": (None, _bool("ftz")),
            },
            fma=True,
            float16_accumulate="float32",
        ),
        OrderSpec(
            "cub",
            "CUB DeviceReduce::Sum (cupy.sum default): 4096-element tiles, warp shuffles",
            HYPOTHESIS,
            params={
                "threads": (256, _int("threads", lo=32, hi=1024, pow2=True)),
                "items": (None, _int("items", lo=1, hi=64)),
                "vector": (4, _int("vector", lo=1, hi=4, pow2=True)),
                "aligned": (True, _bool("aligned")),
                "thread_reduce": (None, _choice("thread_reduce", (None, "tree", "sequential"))),
                "max_blocks": (5280, _int("max_blocks", lo=1)),
            },
        ),
        OrderSpec(
            "shuffled",
            "sequential over a seeded random permutation (models atomics)",
            params={"seed": (0, _seed)},
            fma=True,
        ),
        OrderSpec("kahan", "Kahan compensated summation", fma=True),
        OrderSpec("neumaier", "Neumaier (Kahan-Babuska) compensated summation"),
        OrderSpec("exact", "the correctly rounded exact sum", EXACT),
    ]
}

MATMUL_ORDERS = {
    name: SUM_ORDERS[name]
    for name in (
        "sequential",
        "reverse",
        "pairwise",
        "blocked",
        "tree",
        "tree-strided",
        "kahan",
        "neumaier",
        "exact",
    )
}

OPS = {"sum": SUM_ORDERS, "dot": SUM_ORDERS, "matmul": MATMUL_ORDERS}


def lookup(op: str, order: str) -> OrderSpec:
    table = OPS.get(op)
    if table is None:
        raise ValueError(f"unknown op {op!r}; ops with orders: {', '.join(OPS)}")
    spec = table.get(order)
    if spec is None:
        raise ValueError(f"unknown order {order!r} for {op}; valid orders: {', '.join(table)}")
    return spec


def orders(op: str = "sum") -> dict[str, str]:
    """The orders available for ``op`` ("sum", "dot" or "matmul"): name -> one-line description.

    Descriptions of orders that emulate a GPU library from its source (not yet confirmed on a
    GPU) end with "[hypothesis]"; orders reproducing a library verified here with "[library]".
    """
    if op not in OPS:
        raise ValueError(f"unknown op {op!r}; ops with orders: {', '.join(OPS)}")
    tag = {LIBRARY: " [library]", HYPOTHESIS: " [hypothesis]"}
    return {name: spec.description + tag.get(spec.kind, "") for name, spec in OPS[op].items()}
