"""Numbers of single closed forms from their plain forms: the engine behind by-op rows, per-card figures and M(H).

A report's numbers come from its phase's forms all at once (leaves.py, assemble.py); the other outputs ask for
one expression at a time (an op's FLOPs, a card's bytes), and get it here the same way: the expression at the
phase as a plain form, built once per compiled model and evaluated exactly. When the form cannot vouch for a
number, the symbolic path (symbolic.py) says why; it never supplies one.
"""

from __future__ import annotations

from ..graph.compiled import Compiled
from ..terms.conventions import Scenario
from ..terms.quantities import LEVELS
from . import forms
from .assemble import Evaluator, Fallback
from .leaves import Leaf, forms_of

Number = int | float


class PlainEvaluator:
    """Closed forms (per call, in the scenario's letters) as exact numbers at one phase and request shape."""

    def __init__(self, compiled: Compiled, phase: str, scenario: Scenario):
        self.compiled, self.phase, self.scenario = compiled, phase, scenario
        self.shape = scenario.model_dump()

    def __call__(self, expr, field: str) -> Number:
        evaluator = self._evaluator(expr, field)
        if evaluator is not None:
            try:
                return evaluator(**self.shape)["value"]
            except Fallback:
                pass
        from .symbolic import failure

        raise failure(self.compiled, self.phase, self.scenario, expr, field)

    def _evaluator(self, expr, field: str) -> Evaluator | None:
        """The expression's evaluator at this phase under `field`'s rule (a level or a flow), built once per
        compiled model; None when it holds a name the scenario does not bind."""
        key = ("plain", expr, self.phase, field in LEVELS)
        memo = self.compiled.memo
        if key not in memo:
            try:
                memo[key] = Evaluator(forms_of(self.compiled, {"value": Leaf(expr, self.phase, field)}))
            except forms.NotPlain:
                memo[key] = None
        return memo[key]

    def many(self, name: tuple, items) -> list[Number]:
        """The values of several closed forms at once, `items` (expression, field) pairs that `name` stands
        for (a card of a layout: every figure it reports): one evaluator built once per model and phase, so
        equal parts are computed once; where it cannot vouch for a number, each is asked alone (and the
        symbolic path says why)."""
        key = ("plain many", name, self.phase)
        memo = self.compiled.memo
        if key not in memo:
            pairs = list(items() if callable(items) else items)
            found = {str(index): Leaf(expr, self.phase, field) for index, (expr, field) in enumerate(pairs)}
            try:
                memo[key] = (pairs, Evaluator(forms_of(self.compiled, found)))
            except forms.NotPlain:
                memo[key] = (pairs, None)
        pairs, evaluator = memo[key]
        if evaluator is not None:
            try:
                values = evaluator(**self.shape)
                return [values[str(index)] for index in range(len(pairs))]
            except Fallback:
                pass
        return [self(expr, field) for expr, field in pairs]
