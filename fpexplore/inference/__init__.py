"""The inference engine behind :func:`fpexplore.explain`, the detective and the budget: one
hypothesis space, one distance, one scorer.

- ``space``     the configurations tried (:class:`Config`, :func:`candidates`, :func:`configs`,
                from the order registry), their results (:func:`evaluate`, :func:`run`,
                :class:`Known`), the exact references, :func:`distance`, each configuration's
                factors and prior cost in bits
- ``evidence``  :func:`search`: which configurations reproduce each result, grouped by what
                they compute on probes (one hypothesis per computation), the chance of a match
- ``scoring``   :func:`score`: the causes of a difference weighed over every hypothesis, and
                whether the evidence decides them
- ``measure``   each result against the exact answer: the normwise relative error, the closer
                results (ties as ties), worst-case bounds, results beyond any rounding
- ``probe``     :func:`probe`: the function that made a result, called and probed
- ``texts``     a cause's evidence in words, for the causes table

docs/explain.md describes the scoring, the "cannot tell" contract and the probes.
"""

from .evidence import Evidence, search
from .probe import Probed, probe
from .scoring import Cause, Scores, score
from .space import (
    Config,
    Known,
    candidates,
    configs,
    cost,
    distance,
    evaluate,
    factors,
    order_op,
    reference,
    run,
)

__all__ = [
    "Cause",
    "Config",
    "Evidence",
    "Known",
    "Probed",
    "Scores",
    "candidates",
    "configs",
    "cost",
    "distance",
    "evaluate",
    "factors",
    "order_op",
    "probe",
    "reference",
    "run",
    "score",
    "search",
]
