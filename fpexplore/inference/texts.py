"""The evidence of a cause in words, for the causes table of :func:`fpexplore.explain`: what
each result's configuration does in the factor that sets them apart."""

from __future__ import annotations

from ..formats import format_info
from .scoring import CHANCE, COMPENSATED, Cause
from .space import FIXED, Config, factors

_NEAREST = " (nearest configurations: no exact match)"


def evidence_text(factor: str, cause: Cause, la: str, lb: str, in_fmt: str, evidence) -> str:
    """How the configurations ``cause.a`` and ``cause.b`` of results ``la`` and ``lb``
    differ in ``factor`` ("" where one is unknown), said to rest on the nearest
    configurations where it is not an exact match (``evidence``: label -> Evidence)."""
    ca, cb = cause.a, cause.b
    known = ca is not None and cb is not None
    reads = [(k, evidence[k].rounded_reads) for k in (la, lb) if evidence[k].rounded_reads]
    if factor == "input_rounding" and reads and not (known and _reads_differ(ca, cb, in_fmt)):
        k, rs = reads[0]
        if copies := [(r, o) for r, o in rs if o is not None]:  # (a guess that says what it
            r, o = copies[0]  # rests on: the search tries no sum on rounded inputs)
            return (
                f"{k} is what the order {o} gives on the inputs read as {r}, bit for bit (a "
                "guess: the search tries no order on rounded inputs)"
            )
        return (
            f"{k} lies beyond the worst-case error bound of every order on the inputs as "
            f"they are, within it for the inputs read as {' or '.join(r for r, _ in rs)} (a "
            "guess: no order is tried on rounded inputs here)"
        )
    acc = [factors(c, in_fmt)["accumulator"] for c in (ca, cb)] if known else []
    if factor == "accumulator" and known and acc[0] == acc[1]:  # (COMPENSATED)
        (lc, cc), (lo, _) = ((la, ca), (lb, cb))[:: 1 if ca.spec.name in COMPENSATED else -1]
        return (  # (a guess that says what it rests on)
            f"{lc} is also what {in_fmt} products added in a wider accumulator give, rounded "
            f"once (a loop not tried here: its value is {cc.spec.name}'s), {lo} accumulates "
            f"in {acc[0]}"
        )
    said = _differing(factor, ca, cb, la, lb, in_fmt) if known else ""
    return said + ("" if cause.exact else _NEAREST)


def _reads_differ(ca: Config, cb: Config, in_fmt: str) -> bool:
    return factors(ca, in_fmt)["input_rounding"] != factors(cb, in_fmt)["input_rounding"]


def _differing(factor: str, ca: Config, cb: Config, la: str, lb: str, in_fmt: str) -> str:
    fa, fb = factors(ca, in_fmt), factors(cb, in_fmt)
    if factor == "order":
        return f"{la} adds in the order {ca.spec.name}, {lb} in {cb.spec.name}"
    if factor == "accumulator":  # (a library call's own, FIXED: named by the call)
        acc_a, acc_b = (
            f"{c.spec.name}'s own" if f["accumulator"] == FIXED else f["accumulator"]
            for c, f in ((ca, fa), (cb, fb))
        )
        return f"{la} accumulates in {acc_a}, {lb} in {acc_b}"
    if factor == "input_rounding":
        return (
            f"{la} reads the inputs {_as_read(fa['input_rounding'])}, "
            f"{lb} {_as_read(fb['input_rounding'])}"
        )
    if factor == "fma":
        fused = la if fa["fma"] else lb
        return f"{fused} fuses each product into the addition (one rounding instead of two)"
    if factor == "tensor_core":
        tc, other = (la, lb) if fa["tensor_core"] else (lb, la)
        cfg = ca if fa["tensor_core"] else cb
        return (
            f"{tc} is reproduced by NVIDIA tensor cores ({cfg}: each block of products "
            f"aligned and added exactly, rounded once), {other} is not"
        )
    if factor == "cast":
        return f"{_cast_text(ca, la, in_fmt)}; {_cast_text(cb, lb, in_fmt)}"
    if factor == "nondeterminism":
        if None in (fa["nondeterminism"], fb["nondeterminism"]):  # (it read "seed None")
            (ls, cs), (lf, cf) = ((la, ca), (lb, cb))[:: 1 if fb["nondeterminism"] is None else -1]
            return (
                f"{ls} is a draw of a run-to-run order ({cs}), {lf} the result of a fixed "
                f"one ({cf}): one code gives both only where its order changes from run to run"
            )
        seeds = f"{la}: seed {fa['nondeterminism']}, {lb}: seed {fb['nondeterminism']}"
        return (
            f"the results differ only in the seeded order of the block sums ({ca.spec.name}, "
            f"{seeds}): atomicAdd lands in any order, so the same code gives another result "
            "on every run"
        )
    return ""


def examples(pair: tuple, evidence: dict) -> str:
    """Where a named order is one possibility among several for its result: say so (the
    cause may be decided while the exact orders are not)."""
    notes = []
    for k in pair:
        ev = evidence[k]
        if ev.fact:
            continue
        if len(ev.groups) > 1:
            notes.append(f"{len(ev.groups)} computations tried give the value of {k}")
        elif ev.chance_bits < CHANCE:
            notes.append(f"an order not tried could give the value of {k} too")
    if not notes:
        return ""
    return f" (the orders named are examples: {'; '.join(notes)})"


def _cast_text(cfg: Config, label: str, in_fmt: str) -> str:
    if not cfg.cast:  # (an accumulator of its own: pass 25, np.sum of float16 "in float16")
        acc = factors(cfg, in_fmt)["accumulator"]
        own = acc not in (in_fmt, FIXED)
        inner = f" in a {acc} accumulator, rounded to {in_fmt}" if own else ""
        return f"{label} sums the {in_fmt} inputs as they are{inner}"
    if cfg.where == "before":
        wider = format_info(cfg.cast_format).precision > format_info(in_fmt).precision
        how = "widens" if wider else "rounds"
        return (
            f"{label} {how} the {in_fmt} inputs to {cfg.cast_format} first, then sums "
            "(NumPy's np.sum(x, dtype=...))"
        )
    return (
        f"{label} sums in {in_fmt} and rounds the sum to {cfg.cast_format} (CuPy: cupy issue 9029)"
    )


def _as_read(rounding) -> str:
    return f"as {rounding}" if rounding else "as they are"
