"""Variant specs: one small grammar for an evaluation setting.

A *variant spec* names an order (sum, dot, matmul) or a formula variant (the other ops) together
with its settings, in one string that ``fpx.compare``, ``fpx.sweep``, ``fpx.difference_budget``
and the explorer accept wherever a plain variant name is accepted, and that the order detective
(``fpx.match_orders``) writes in its ``variant`` column, ready to paste::

    ORDER[(k=v, ...)][+fma][+tf32|+bfloat16][@ACCUMULATOR]

    "pairwise"                              a plain name is a spec
    "tree(block=256)"                       an order parameter
    "tree(block=64, combine=atomic, seed=3)"
    "sequential+fma"                        each product fused into the accumulation
    "pairwise+tf32"                         inputs rounded to tf32 first (tensor-core inputs)
    "sequential@float32"                    accumulate in float32 (e.g. float16 data)
    "blocked(block=64)+fma+tf32@float64"
    "tree(block=32, split_k=4)"             matmul: split-K over 4 slices of k
    "tensor-core(arch=a100)+tf32"           dot, matmul: A100 tensor cores on tf32 inputs
    "cupy-kernel(block_size=512, ftz=True)"
    "expanded(order=blocked, block=64)+fma@float32"   cdist's expanded formula
    "two-pass(order=pairwise)@float64"      variance
    "div-then-mul(moments=mul-add)"         adam_step

The parts:

- ``ORDER``: an order of ``fpx.orders(op)`` for sum, dot and matmul, else a variant of
  ``fpx.variants(op)``. (adam_step's variant ``div-then-mul+fma`` is spelled as it is named.)
- ``(k=v, ...)``: the order's parameters (``fpx.sum``'s ``**params``: ``block``, ``combine``,
  ``seed``, ``chunk``, ``block_size``, ``ftz``, ...); for matmul also ``split_k``; for a formula
  variant its keywords: ``order`` (the order of its reductions) with that order's parameters
  (cdist), ``clamp`` (cdist expanded), ``moments`` (adam_step). Values: integers, floats,
  ``True``/``False``/``None``, bare words (``combine=atomic``) or quoted strings.
- ``+fma``: ``fma=True`` (dot, matmul and cdist's expanded formula, in orders where a product
  feeds an accumulator).
- ``+tf32`` / ``+bfloat16`` (or ``+tf32-rne``, ``+tf32-truncate``, ``+bfloat16-truncate``,
  ``+float8_e4m3``, ``+float8_e5m2``): the inputs rounded to that format first, keeping their
  storage format (dot and matmul: their ``input_rounding=``); for ``tensor-core`` also the
  format the tensor cores read (float32 data needs one).
- ``@ACCUMULATOR``: ``accumulate=`` one of ``fpx.FORMATS``, or the name of a format of
  ``fpx.format`` (sum's sequential, reverse, pairwise and blocked take it).

Canonical spelling (``str(spec)``): the name, then the parameters as ``k=v`` joined by
``", "`` (``order`` first, the others sorted by name; integers in decimal, floats as Python's
``repr``, ``True``/``False``/``None``, strings bare where they read back as the same string,
else quoted), then ``+fma``, then ``+tf32`` or ``+bfloat16``, then ``@ACCUMULATOR``. Parsing
ignores spaces between the parts and takes the ``+`` parts in any order and case;
``parse_spec(str(s), op) == s`` for every valid spec ``s``. A parameter written at its default
stays in the spec (``"tree(block=128)"`` is not ``"tree"``: it pins the block size where
``compare(..., block=256)`` passes ``block`` to every variant): in ``compare`` a spec's own
settings take precedence over the op's keyword arguments.

:func:`parse_spec` with an ``op`` also checks that the spec applies: an unknown name lists the
op's orders or variants, an unknown parameter lists the parameters with their defaults, an
unknown accumulator lists the formats, a syntax error shows the grammar, and a setting that
does not apply says why (``"sequential+fma"`` for sum: "fma applies where a product feeds an
accumulator: dot and matmul, not sum"). Value checks that need the data (``split_k`` at most
k, ``np.var``'s accumulator at least as wide as the data) happen when the spec runs.

This module is pure Python over the registries (``import`` loads neither numba nor pandas).
"""

from __future__ import annotations

import ast
import dataclasses
import numbers
import re
from dataclasses import dataclass

from . import checks
from ._registry import SMALL_DTYPES, rounding_mode
from .formats import FORMATS, format_info, format_name
from .formats import INPUT_ROUNDINGS as _INPUT_ROUNDINGS
from .orders.arith import (
    ORDER_OPS,
    accumulator_format,
    check_accumulate,
    check_combine,
    check_fma,
    check_input_rounding,
    check_rounding,
    check_split_k,
    held_accumulators,
    order_keywords,
    rounded_accumulator,
    rounded_only,
    split_k_applies,
)
from .orders.registry import fusable, lookup, orders_for, orders_of, roundable
from .userformat import user_names

__all__ = ["GRAMMAR", "INPUT_ROUNDINGS", "VariantSpec", "parse_spec"]

GRAMMAR = "ORDER[(k=v, ...)][+fma][+tf32|+bfloat16][@ACCUMULATOR]"
INPUT_ROUNDINGS = _INPUT_ROUNDINGS  # "tf32", "bfloat16", then the others
MODIFIERS = ("fma",) + INPUT_ROUNDINGS
EXAMPLES = "e.g. 'tree(block=256)', 'sequential+fma', 'pairwise+tf32', 'sequential@float32'"

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_.\-]*")
_VARIANT_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_.\-]*(\+fma)?")  # adam's "div-then-mul+fma"
_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_INT = re.compile(r"[+-]?[0-9]+")
_FLOAT = re.compile(r"[+-]?(?:(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?|inf|nan)")
_WORD = re.compile(r"[A-Za-z0-9_]+(?:-[A-Za-z0-9_]+)*")  # +tf32-truncate
_RESERVED = ("True", "False", "None")


@dataclass(frozen=True)
class VariantSpec:
    """An evaluation setting: an order or formula variant with its settings.

    ``str(spec)`` is the canonical spelling (see :mod:`fpexplore.spec`); :func:`parse_spec`
    reads it back. Build one with :func:`parse_spec` to have it checked against an op; the
    constructor checks the parts alone.

    Parameters
    ----------
    name : str
        The order or formula variant (a word like ``"tree"`` or ``"two-pass"``).
    params : tuple of ``(key, value)`` pairs, or dict
        Values: integers, floats, True/False/None or strings (NumPy scalars become Python
        values).
    fma : bool
    input_rounding : "tf32", "bfloat16" (or another of ``INPUT_ROUNDINGS``), or None
    accumulate : a format name, or None

    Attributes
    ----------
    name, fma, input_rounding, accumulate : as given
    params : tuple
        The ``(key, value)`` pairs, sorted: ``order`` first, the others by name.
    param_dict : dict
        ``params`` as a dict.

    Raises
    ------
    ValueError
        A ``name`` that is not a word, a parameter name that is not an identifier, a value of
        another type, a parameter given twice, an unknown ``input_rounding`` or accumulator.
    TypeError
        An ``fma`` other than True or False.

    Examples
    --------
    >>> str(VariantSpec("tree", {"block": 256}, True, "tf32", "float64"))
    'tree(block=256)+fma+tf32@float64'
    """

    name: str
    params: tuple = ()
    fma: bool = False
    input_rounding: str | None = None
    accumulate: str | None = None

    def __post_init__(self):
        if not isinstance(self.name, str) or not _VARIANT_NAME.fullmatch(self.name):
            raise ValueError(
                f"a variant name is a word like 'tree' or 'two-pass', got {checks.shown(self.name)}"
            )
        items = list(self.params.items()) if isinstance(self.params, dict) else list(self.params)
        clean = []
        for item in items:
            k, v = item
            if not isinstance(k, str) or not _KEY.fullmatch(k):
                raise ValueError(f"a parameter name is an identifier, got {checks.shown(k)}")
            if hasattr(v, "item") and not isinstance(v, (str, bytes)):
                v = v.item()  # NumPy scalars -> Python values
            if isinstance(v, numbers.Integral) and not isinstance(v, bool):
                v = int(v)
            elif isinstance(v, numbers.Real) and not isinstance(v, bool):
                v = float(v)
            elif v is not None and not isinstance(v, (bool, str)):
                raise ValueError(
                    f"parameter {k}: a value is an integer, float, True/False/None or a string, "
                    f"got {checks.shown(v)}"
                )
            clean.append((k, v))
        keys = [k for k, _ in clean]
        dup = sorted({k for k in keys if keys.count(k) > 1})
        if dup:
            raise ValueError(f"parameter {', '.join(dup)} given twice")
        object.__setattr__(self, "params", tuple(sorted(clean, key=_param_key)))
        checks.boolean("fma", self.fma)
        # a dtype or type is its format's name (pass 26: accumulate=np.dtype("float64") in
        # a budget's dict was dropped from the spec; str() of one raised a TypeError)
        object.__setattr__(self, "input_rounding", check_input_rounding(self.input_rounding))
        object.__setattr__(self, "accumulate", format_name(self.accumulate))
        if self.accumulate is not None:
            _check_accumulator(self.accumulate)

    def __str__(self) -> str:
        base, _, own = self.name.partition("+")  # adam_step's "div-then-mul+fma"
        s = base
        if self.params:
            s += "(" + ", ".join(f"{k}={_format_value(v)}" for k, v in self.params) + ")"
        if own:
            s += "+" + own
        if self.fma:
            s += "+fma"
        if self.input_rounding:
            s += "+" + self.input_rounding
        if self.accumulate:
            s += "@" + self.accumulate
        return s

    @property
    def param_dict(self) -> dict:
        return dict(self.params)

    def kwargs(self) -> dict:
        """The settings as keyword arguments: the parameters, then ``fma=True``,
        ``accumulate=`` and ``input_rounding=`` where set (the name goes separately).

        ``fpx.dot`` and ``fpx.matmul`` take all of them, ``fpx.sum`` all but
        ``input_rounding`` (the spec refuses it there); a formula function
        (``fpx.cdist(x, y, variant=spec.name, **spec.kwargs())``) takes what its spec allows.
        """
        kw = dict(self.params)
        if self.fma:
            kw["fma"] = True
        if self.accumulate:
            kw["accumulate"] = self.accumulate
        if self.input_rounding:
            kw["input_rounding"] = self.input_rounding
        return kw


# ----------------------------------------------------------------------------- values


def _param_key(kv) -> tuple:
    """Canonical order of parameters: ``order`` first (a formula's reduction order), then by
    name."""
    return (kv[0] != "order", kv[0])


def _format_value(v) -> str:
    if v is None or isinstance(v, bool):
        return repr(v)
    if isinstance(v, numbers.Integral):
        return str(int(v))
    if isinstance(v, numbers.Real):
        return repr(float(v))
    if _bare(v):
        return v
    return repr(v)


def _bare(s: str) -> bool:
    """Whether a string may be written without quotes and still read back as itself."""
    return bool(_NAME.fullmatch(s)) and s not in _RESERVED and not _FLOAT.fullmatch(s)


def _parse_value(token: str, text: str):
    t = token.strip()
    if not t:
        raise _syntax(text, "a parameter has no value")
    if t[0] in "'\"":
        try:
            v = ast.literal_eval(t)
        except (ValueError, SyntaxError):
            v = None
        if not isinstance(v, str):
            raise _syntax(text, f"cannot read the string {t}")
        return v
    if t in _RESERVED:
        return {"True": True, "False": False, "None": None}[t]
    if _INT.fullmatch(t):
        return int(t)
    if _FLOAT.fullmatch(t):
        return float(t)
    if _NAME.fullmatch(t):
        return t
    raise _syntax(text, f"cannot read the value {checks.shown(t)}")


# ----------------------------------------------------------------------------- parsing


def _syntax(text, detail: str) -> ValueError:
    return ValueError(
        f"cannot read variant spec {text!r}: {detail}; a spec is {GRAMMAR}, {EXAMPLES}"
    )


def _check_accumulator(acc: str) -> None:
    if acc in FORMATS or acc in user_names():  # (fpx.format's: where the order takes it)
        return
    if acc in held_accumulators():  # OCP FP8/FP6/FP4: likewise
        return
    if acc in INPUT_ROUNDINGS or acc == "tf32":
        raise ValueError(
            f"{acc} is an input rounding (write +{acc}), not an accumulator format; "
            f"accumulator formats: {', '.join((*FORMATS, *held_accumulators()))}"
        )
    if acc in SMALL_DTYPES:  # AMD's FNUZ FP8, E8M0: the call's own refusal (no -0, no zero)
        accumulator_format(acc, None)
    yours = f" and yours (fpx.format): {', '.join(user_names())}" if user_names() else ""
    raise ValueError(
        f"unknown accumulator {checks.shown(acc)}; accumulator formats: "
        f"{', '.join((*FORMATS, *held_accumulators()))}" + yours
    )


def _split_params(s: str, pos: int, text: str) -> tuple[list[str], int]:
    """The comma-separated items from s[pos] (just after "(") to the closing ")"."""
    items, cur, quote = [], [], None
    i = pos
    while i < len(s):
        c = s[i]
        if quote:
            cur.append(c)
            if c == "\\" and i + 1 < len(s):
                cur.append(s[i + 1])
                i += 1
            elif c == quote:
                quote = None
        elif c in "'\"":
            quote = c
            cur.append(c)
        elif c == ",":
            items.append("".join(cur))
            cur = []
        elif c == ")":
            items.append("".join(cur))
            if len(items) == 1 and not items[0].strip():
                items = []
            return items, i + 1
        elif c == "(":
            raise _syntax(text, "parentheses do not nest")
        else:
            cur.append(c)
        i += 1
    raise _syntax(text, "a '(' is not closed")


MAX_SPEC_LENGTH = 500  # a longer text is refused whole: an error never echoes kilobytes


def _parse(text: str) -> VariantSpec:
    if not isinstance(text, str):
        raise TypeError(f"a variant spec is a string (or a VariantSpec), got {type(text).__name__}")
    if len(text) > MAX_SPEC_LENGTH:
        raise ValueError(
            f"a variant spec of {len(text)} characters ({text[:40]!r}...) is too long to be one "
            f"(at most {MAX_SPEC_LENGTH}); {EXAMPLES}"
        )
    s = text.strip()
    m = _NAME.match(s)
    if not m:
        raise _syntax(text, "it must start with an order or variant name")
    name, pos = m.group(), m.end()
    params: list = []

    def skip(p):
        while p < len(s) and s[p].isspace():
            p += 1
        return p

    pos = skip(pos)
    if pos < len(s) and s[pos] == "(":
        items, pos = _split_params(s, pos + 1, text)
        for item in items:
            key, eq, value = item.partition("=")
            key = key.strip()
            if not eq or not _KEY.fullmatch(key):
                raise _syntax(text, f"a parameter is written key=value, got {item.strip()!r}")
            params.append((key, _parse_value(value, text)))
        keys = [k for k, _ in params]
        dup = sorted({k for k in keys if keys.count(k) > 1})
        if dup:
            raise _syntax(text, f"parameter {', '.join(dup)} given twice")
    mods: list[str] = []
    acc = None
    pos = skip(pos)
    while pos < len(s):
        c = s[pos]
        w = _WORD.match(s, skip(pos + 1))
        if c not in "+@" or not w:
            raise _syntax(text, f"unexpected {s[pos:]!r}")
        word = w.group().lower()
        pos = skip(w.end())
        if c == "@":
            if pos < len(s):
                raise _syntax(text, f"the @ACCUMULATOR comes last, found {s[pos:]!r} after it")
            word = w.group() if w.group() in user_names() else word  # (named as defined)
            try:
                _check_accumulator(word)
            except (TypeError, ValueError) as e:
                raise ValueError(f"{checks.shown(text)}: {e}") from None
            acc = word
            break
        if word not in MODIFIERS:
            raise ValueError(
                f"unknown modifier +{w.group()} in {checks.shown(text)}; modifiers: "
                + ", ".join("+" + x for x in MODIFIERS)
                + f" (and @ACCUMULATOR with one of {', '.join(FORMATS)}); a spec is {GRAMMAR}"
            )
        if word in mods:
            raise _syntax(text, f"+{word} given twice")
        mods.append(word)
    rounding = [x for x in mods if x in INPUT_ROUNDINGS]
    if len(rounding) > 1:
        raise ValueError(
            f"{checks.shown(text)}: one input rounding at most, +tf32 or +bfloat16, not both"
        )
    return VariantSpec(name, tuple(params), "fma" in mods, rounding[0] if rounding else None, acc)


def parse_spec(text: str | VariantSpec, op: str | None = None) -> VariantSpec:
    """Read a variant spec (``ORDER[(k=v, ...)][+fma][+tf32|+bfloat16][@ACCUMULATOR]``).

    Parameters
    ----------
    text : str or VariantSpec
    op : an op of ``fpx.ops()``, optional
        With it, check that the spec applies to the op (name, parameters and their values,
        fma, input rounding, accumulator); without it, only the syntax and the accumulator
        format are checked.

    Returns
    -------
    VariantSpec
        ``str()`` of it is the canonical spelling.

    Raises
    ------
    ValueError
        A spec not valid; the message names the valid parts.

    Examples
    --------
    >>> str(parse_spec("blocked( block=64 )+tf32+fma@float64", "dot"))
    'blocked(block=64)+fma+tf32@float64'
    """
    spec = text if isinstance(text, VariantSpec) else _parse(text)
    return spec if op is None else check_spec(spec, op)


def check_spec(spec: VariantSpec, op: str) -> VariantSpec:
    """``spec`` checked against ``op`` (name, parameters and their values, fma, input
    rounding, accumulator), as :func:`parse_spec` checks what it reads: a setting built in
    code is checked here, not written out and read back."""
    if op in ORDER_OPS:
        _check_order(spec, op)
        return spec
    return _check_formula(spec, op)


def _check_held(spec: VariantSpec, op: str, table: dict, order: str | None) -> None:
    """An FP8, FP6, FP4 or ``fpx.format`` accumulator of a formula variant: one that computes
    in it (Settings.held: variance's two-pass and one-pass), of precision <= 25, its sums in
    an order that rounds each addition to it (pass 40: 'welford@f8' was read, then refused
    when run; 'naive@myh' on softmax was read)."""
    from .ops.formula import HELD_PRECISION

    acc, f = format_info(spec.accumulate), table[spec.name]
    takes = [v for v, g in table.items() if g.held]
    where = f"{op}'s " + ", ".join(map(repr, takes)) + " do" if takes else f"no {op} variant does"
    if not f.held:
        raise ValueError(
            f"{str(spec)!r}: {op} variant {spec.name!r} does not compute in {acc.name} (FP8, "
            f"FP6, FP4 and fpx.format's formats); {where}"
        )
    if acc.precision > HELD_PRECISION:
        raise ValueError(
            f"{str(spec)!r}: {acc.name} has precision {acc.precision}: {op} emulates its "
            f"arithmetic in float64, correctly rounded up to precision {HELD_PRECISION}"
        )
    if spec.fma:  # (cdist's expanded: fpx.matmul refuses it when run)
        raise ValueError(
            f"{str(spec)!r}: +fma with {acc.name} accumulation is not emulated: its products "
            "are rounded to it, then added"
        )
    order_name = lookup(f.order_of, order or "sequential").name
    rounding = [n for n in orders_for(f.order_of, acc.name) if n != "exact"]
    if order_name not in rounding:
        raise ValueError(
            f"{str(spec)!r}: order {order_name!r} does not round each addition to "
            f"{acc.name}; the orders that do: {', '.join(rounding)}"
        )


def without_defaults(spec: VariantSpec, op: str) -> VariantSpec:
    """``spec`` without the parameters it sets to their defaults: two spellings of one
    setting are one spec (pass 40: "two-pass(order=sequential)" beside "two-pass" made two
    rows of one computation). ``spec`` is one of ``op``'s, checked."""
    given = spec.param_dict
    if op in ORDER_OPS:
        params = dict(lookup(op, spec.name).params)
    else:
        from .ops.registry import get
        from .ops.variant import Settings

        f = get(op).settings.get(spec.name, Settings())
        params = dict(f.params)
        if f.order_of and f.order_params:
            params.update(lookup(f.order_of, given.get("order", "sequential")).params)
    kept = tuple((k, v) for k, v in spec.params if not (k in params and params[k][0] == v))
    return dataclasses.replace(spec, params=kept)


def keywords_of(spec: VariantSpec, op: str, order: str | None = None) -> set:
    """compare()'s op parameters (``block=``, ``accumulate=``) that variant ``spec`` of ``op``
    takes as settings of its spec: an order's (:func:`~fpexplore.orders.arith.order_keywords`),
    or what a formula variant's :class:`~fpexplore.ops.variant.Settings` allow (with the
    parameters of its ``order``: the spec's, else ``order``, else "sequential")."""
    if op in ORDER_OPS:
        return order_keywords(op, lookup(op, spec.name))
    from .ops.registry import get
    from .ops.variant import Settings

    f = get(op).settings.get(spec.name, Settings())
    keys = set(f.params) | {k for k, on in (("accumulate", f.accumulate), ("fma", f.fma)) if on}
    if f.order_of:
        keys.add("order")
        name = spec.param_dict.get("order", order or "sequential")
        order = orders_of(f.order_of).get(name) if isinstance(name, str) else None
        if f.order_params and order is not None:  # (an unknown order: parse_spec says so)
            keys |= set(order.params)
    return keys


def taken_params(spec: VariantSpec, op: str, op_params: dict) -> dict:
    """The op parameters of ``op_params`` that ``spec`` takes (:func:`keywords_of`; their
    ``order`` names the order of its parts where the spec names none)."""
    keys = keywords_of(spec, op, op_params.get("order"))
    return {k: v for k, v in op_params.items() if k in keys}


def applied_params(spec: VariantSpec, op: str, op_params: dict) -> dict:
    """The op parameters that change ``spec``: those it takes (:func:`taken_params`) that
    it does not set itself (its own settings win)."""
    own = spec.kwargs()
    return {k: v for k, v in taken_params(spec, op, op_params).items() if k not in own}


def with_keywords(spec: VariantSpec, keywords: dict) -> VariantSpec:
    """``spec`` with op parameters as its settings, as compare passes them to its variant
    (the spec's own settings win): ``fma``, ``accumulate`` and ``input_rounding`` as its
    modifiers, the others as its parameters; unchecked (:func:`check_spec` checks it)."""
    own = spec.kwargs()
    kw = {k: v for k, v in keywords.items() if k not in own}
    parts = {k: kw.pop(k) for k in ("fma", "accumulate", "input_rounding") if k in kw}
    return dataclasses.replace(spec, params={**spec.param_dict, **kw}, **parts)


# ----------------------------------------------------------------------------- sum, dot, matmul


# the parameters of a sum order whose additions take a rounding mode (fpx.sum's rounding=)
ROUNDING_PARAMS = {
    "rounding": ("nearest_even", rounding_mode),
    "seed": (None, checks.seed),
}


def _describe_params(params: dict) -> str:
    own = {k: v for k, v in params.items() if v is not ROUNDING_PARAMS.get(k)}
    shown = ", ".join(f"{k}={_format_value(d)}" for k, (d, _) in own.items())
    said = f"its parameters (defaults): {shown}" if own else "it takes no parameters"
    if len(own) == len(params):
        return said
    return (
        f"{said}{' of its own' if not own else ''}; the rounding of its additions: "
        "rounding=nearest_even (seed=None, for rounding=stochastic)"
    )


def _order_params(op: str, name: str) -> dict:
    order = lookup(op, name)
    params = dict(order.params)
    if split_k_applies(op, order):
        params["split_k"] = (None, lambda v: check_split_k(op, order, v))
    return params


def _check_params(spec: VariantSpec, allowed: dict, what: str, extra_hint=None) -> None:
    for k, v in spec.params:
        if k not in allowed:
            hint = extra_hint(k) if extra_hint else None
            raise ValueError(
                hint or f"{what} has no parameter {checks.shown(k)}; {_describe_params(allowed)}"
            )
        check = allowed[k][1]
        try:
            check(v)
        except (TypeError, ValueError) as e:
            raise ValueError(f"{str(spec)!r}: {e}") from None


def _check_order(spec: VariantSpec, op: str) -> None:
    table = orders_of(op)
    if spec.name not in table:
        raise ValueError(
            f"unknown variant {spec.name!r} for {op}; valid variants: "
            f"{', '.join(table)} "
            f"(a variant spec: {GRAMMAR})"
        )
    order = table[spec.name]

    def hint(k):
        if k == "rounding":
            return (
                f"order {spec.name!r} of {op} takes no rounding=: its additions round to "
                f"nearest-even; the orders that take one (sum's): {', '.join(roundable())}"
            )
        if k != "split_k":
            return None
        try:
            check_split_k(op, order, 1)
        except ValueError as e:
            return str(e)
        return None

    allowed = _order_params(op, spec.name)
    if op == "sum" and order.run_rounded is not None:  # sum's rounding= and its seed
        allowed.update(ROUNDING_PARAMS)
    _check_params(spec, allowed, f"order {spec.name!r} of {op}", hint)
    if "rounding" in allowed:
        given = spec.param_dict
        check_rounding(
            order, op, given.get("rounding", "nearest_even"), given, written=repr(str(spec))
        )
    check_combine(op, spec.param_dict.get("combine", "sequential"), f"{str(spec)!r}: ")
    try:
        order.check_applies(spec.param_dict)
    except ValueError as e:
        raise ValueError(f"{str(spec)!r}: {e}") from None
    check_fma(order, spec.fma, op, fusable(op), written="+fma")
    check_input_rounding(spec.input_rounding, op, written=f"+{spec.input_rounding}")
    check_accumulate(order, spec.accumulate, f"an accumulator (@{spec.accumulate})")
    try:  # a format of fpx.format: the orders and settings that take it
        rounded_accumulator(spec.accumulate, order, op, spec.fma)
    except ValueError as e:
        raise ValueError(f"{str(spec)!r}: {e}") from None


# ----------------------------------------------------------------------------- formula variants


def _check_formula(spec: VariantSpec, op: str) -> VariantSpec:
    from .ops.registry import variants

    valid = list(variants(op))  # ValueError listing the ops for an unknown op
    if spec.fma and spec.name + "+fma" in valid:  # adam_step's "div-then-mul+fma"
        spec = dataclasses.replace(spec, name=spec.name + "+fma", fma=False)
    if spec.name not in valid:
        raise ValueError(
            f"unknown variant {spec.name!r} for {op}; valid variants: "
            f"{', '.join(valid)} "
            f"(a variant spec: {GRAMMAR})"
        )
    from .ops.registry import get
    from .ops.variant import Settings

    table = get(op).settings
    f = table.get(spec.name, Settings())
    label = f"{op} variant {spec.name!r}"
    allowed = dict(f.params)
    order = None
    if f.order_of:
        order = spec.param_dict.get("order", "sequential")
        if "order" in spec.param_dict:
            try:
                allowed["order"][1](order)
            except (TypeError, ValueError) as e:
                raise ValueError(f"{str(spec)!r}: {e}") from None
        if f.order_params:
            allowed.update(_order_params(f.order_of, order))
            allowed.pop("split_k", None)

    def hint(k):
        if not f.params:
            return f"{label} takes no parameters" + (
                f" (nor does any {op} variant)" if not table else ""
            )
        return None

    _check_params(spec, allowed, label, hint)
    if order is not None:
        check_combine(
            f.order_of,
            spec.param_dict.get("combine", "sequential"),
            f"{str(spec)!r}: {op} reduces with {f.order_of}, and ",
        )
    if spec.fma:
        if not f.fma:
            where = [v for v, g in table.items() if g.fma]
            reason = f.why_no_fma or (
                f"it applies to {op} " + ", ".join(map(repr, where))
                if where
                else f"{op} has no product feeding an accumulator"
            )
            raise ValueError(f"fma does not apply to {label}: {reason}")
        if order is not None:
            check_fma(
                lookup(f.order_of, order),
                True,
                f.order_of,
                fusable(f.order_of),
                written="+fma",
                of=label,
            )
    check_input_rounding(spec.input_rounding, op, written=f"+{spec.input_rounding}")
    if spec.accumulate and f.accumulate and rounded_only(format_info(spec.accumulate)):
        _check_held(spec, op, table, order)
    if spec.accumulate and not f.accumulate:
        where = [v for v, g in table.items() if g.accumulate]
        raise ValueError(
            f"an accumulator (@{spec.accumulate}) does not apply to {label}; "
            + (
                f"it applies to {op} " + ", ".join(map(repr, where))
                if where
                else f"{op} has no accumulator setting"
            )
        )
    return spec
