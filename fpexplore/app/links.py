"""How the explorer opens: :func:`fpexplore.explorer`'s keywords and a view's link ("Link to
this view") to its first :class:`~.state.State`, pure (no widgets)."""

from __future__ import annotations

import base64
import functools
import json
import zlib
from dataclasses import replace

from .. import checks
from ..experiment import canonical_params, taken_keywords
from ..formats import format_name
from ..ops.registry import get as get_op
from ..ops.registry import ops as op_names
from ..spec import VariantSpec, parse_spec
from .fit import unfit
from .state import CONTROLS, State, builder_names, initial

#: controls a link never holds: the data source and the backends belong to the machine
_UNLINKED = frozenset({"source", "backends"})
#: a link's results A and B: two keys, (variant, backend) or (name, "observed")
_PICKS = "picks"


def link_of(state: State) -> str:
    """The view as a short code ("Link to this view"): every control but :data:`_UNLINKED`,
    the variants where they are chosen (else the format's defaults: a link opened with
    another format takes that one's), results A and B (pass 20: lost) and the op parameters;
    ``fpx.explorer(link=...)`` opens it again."""
    kept = {k: v for k, v in state.settings if k not in _UNLINKED}
    if state.chosen:
        kept["variants"] = [str(v) for v in state.variants]
    if state.pick_a is not None and state.pick_b is not None:
        kept[_PICKS] = [list(state.pick_a), list(state.pick_b)]
    doc = {**kept, **dict(state.op_params)}
    raw = json.dumps(doc, sort_keys=True, separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(zlib.compress(raw, 9)).decode().rstrip("=")


def keywords_of_link(code) -> dict:
    """fpx.explorer()'s keywords from a code :func:`link_of` made (a clear error else)."""
    if not isinstance(code, str):
        raise TypeError(f"link must be the text 'Link to this view' gave, got {checks.shown(code)}")
    try:  # a view is a few hundred bytes: more is not one (nor deep nesting)
        d = zlib.decompressobj()
        raw = d.decompress(base64.urlsafe_b64decode(code + "=" * (-len(code) % 4)), 1 << 16)
        doc = None if d.unconsumed_tail else json.loads(raw)
    except (ValueError, zlib.error, RecursionError):
        doc = None
    picks = doc.get(_PICKS, []) if isinstance(doc, dict) else None
    if not isinstance(doc, dict) or _UNLINKED & set(doc) or not _two_keys(picks):
        raise ValueError(
            f"link {checks.shown(code)} is not a view of this app: copy the whole text "
            "'Link to this view' shows"
        )
    return doc


def _two_keys(picks) -> bool:
    """Whether a link's picks are none or two result keys (each two strings)."""
    return picks == [] or (
        isinstance(picks, list)
        and len(picks) == 2
        and all(isinstance(p, list) and len(p) == 2 for p in picks)
        and all(isinstance(t, str) for p in picks for t in p)
    )


def from_keywords(keywords: dict, variants, installed: tuple, gpu: bool) -> State:
    """The first state from :func:`fpexplore.explorer`'s keywords: the rows of :data:`CONTROLS`
    (backends: numpy, emulated, and cupy with a ``gpu``), the rest compare()'s op parameters
    (``op_params``); ``link``: a view's code, under the keywords given beside it (another op:
    without the link's variants, op parameters and size, and its format where the op does
    not take it, as :func:`set_op` resets them; another
    format: without the variants it refuses, as :func:`set_format` drops them)."""
    picks = ()
    if keywords.get("link") is not None:
        linked = keywords_of_link(keywords["link"])
        picks = tuple(tuple(p) for p in linked.pop(_PICKS, ()))
        if (op := keywords.get("op")) not in (None, linked.get("op")):  # (pass 19: n, format)
            drop = {"n"} | ({"format"} if linked.get("format") not in _formats_of(op) else set())
            linked = {k: v for k, v in linked.items() if k in CONTROLS and k not in drop}
            picks = ()  # (another op's results)
        listed = linked.pop("variants", None)
        fmt, op = keywords.get("format"), linked.get("op", CONTROLS["op"].default)
        _refuse_unknown_params(keywords["link"], op, linked)
        if listed and fmt not in (None, linked.get("format")) and fmt in get_op(op).formats():
            fit = [s for s in (parse_spec(t, op) for t in listed) if not unfit(op, fmt, s)]
            listed = fit or None  # (none left: the format's defaults, as set_format gives)
        # (a link's empty selection is the user's: pass 23 reopened it with the defaults)
        variants = listed if variants is None else variants
        # (a keyword None beside a link keeps the link's: pass 18, n=None gave the default)
        keywords = {
            **linked,
            **{k: v for k, v in keywords.items() if v is not None or k not in linked},
        }
    keywords = {k: v for k, v in keywords.items() if k != "link"}
    values = {k: v for k, v in keywords.items() if k in CONTROLS}
    if "format" in values:  # (a dtype or type by its name: ml_dtypes.float8_e4m3fn, pass 20)
        values["format"] = format_name(values["format"])
    op_params = canonical_params({k: v for k, v in keywords.items() if k not in CONTROLS})
    if "inputs" in op_params:  # compare's own data argument: not an op parameter here
        raise TypeError("fpx.explorer() got an unexpected keyword argument 'inputs'")
    if values.get("backends") is None:  # the real GPU side by side wherever there is one
        values["backends"] = ("numpy", "emulated", *(("cupy",) if gpu else ()))
    state = initial(variants, installed, tuple(op_params.items()), **values)
    return replace(state, want_picks=picks)


def _refuse_unknown_params(code, op, linked: dict) -> None:
    """ValueError for a link's op parameter that no variant of ``op`` takes, in any format
    (pass 22: a hand-edited link's bolck=64 was kept, never given, never said)."""
    if op not in op_names():
        return  # (named by initial)
    known = _op_keywords(op)
    for k in linked:
        if k not in CONTROLS and k not in known:
            raise ValueError(
                f"link {checks.shown(code)} holds {k}={checks.shown(linked[k])}, which no "
                f"variant of {op} takes ({', '.join(sorted(known)) or 'none'}): copy the whole "
                "text 'Link to this view' shows"
            )


@functools.cache
def _op_keywords(op: str) -> frozenset:
    """Every op parameter a variant of ``op`` takes, in any format the op takes."""
    names = {n for f in get_op(op).formats() for _, n in builder_names(op, f)}
    return frozenset(taken_keywords(op, [VariantSpec(n) for n in names]))


def _formats_of(op) -> tuple:
    """The formats ``op`` takes (none for a name that is no op: refused later, named)."""
    return get_op(op).formats() if op in op_names() else ()
