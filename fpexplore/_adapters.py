"""Transitional: the op specs (fpexplore/ops, one per op, listed by ops/registry.py) under the
interface experiment, widgets and warmup still call. To be removed once they use the specs."""

from __future__ import annotations

from .ops.registry import OPS
from .ops.registry import get as _get
from .spec import parse_spec


class Adapter:
    """An op spec, with variant specs parsed before they run."""

    def __init__(self, spec):
        self._spec = spec

    def __getattr__(self, name):
        return getattr(self._spec, name)

    def resolve_variants(self, variants, fmt: str | None = None) -> list[str]:
        if variants is None:
            return self._spec.defaults_for(fmt)
        if isinstance(variants, str) or not hasattr(variants, "__iter__"):
            variants = [variants]
        return [str(parse_spec(v, self._spec.name)) for v in variants]

    def run(self, variant, inputs, params):
        return self._spec.run(parse_spec(variant, self._spec.name), inputs, params)

    @property
    def gpu(self):
        if self._spec.gpu_args is None:
            return None

        def gpu(inputs, params):
            from .backends import cupy as g

            return g.library(self._spec.name, *self._spec.gpu_args(inputs, params))

        return gpu

    def reference_for(self, inputs, out, params, cache):
        return self._spec.reference_for(inputs, out, params, cache)


_ADAPTERS = {name: Adapter(spec) for name, spec in OPS.items()}


def get(op: str) -> Adapter:
    _get(op)  # ValueError listing the ops
    return _ADAPTERS[op]


def names() -> list[str]:
    return list(OPS)
