"""One request's context state against context length: fixed part, growth, crossover, budget."""

from __future__ import annotations

from pydantic import BaseModel

from ..graph.compiled import Compiled
from ..numbers.evaluate import number_of, state_bytes_at

LONGEST_CONTEXT = 2**40  # positions searched when a budget is given: far beyond any model


class StateProfile(BaseModel):
    """Seed 002 §2.3.5: M_state(H) = M_fixed + c_state·H and the crossover H* = M_fixed / c_state."""

    model: str
    state_fixed_bytes: int
    kv_bytes_per_token: int | float
    crossover_tokens: float | None          # where the growing part equals the fixed part
    state_at: dict[int, int]                # exact state of one request after H positions
    budget_bytes: int | None = None
    max_context: int | None = None          # the longest context whose state fits the budget
    budget_note: str | None = None


def profile(compiled: Compiled, lengths: list[int], budget: int | None = None) -> StateProfile:
    fixed = int(number_of(compiled, compiled.total("state_fixed")))
    growth = number_of(compiled, compiled.total("kv_bytes_per_token"))
    result = StateProfile(
        model=compiled.name, state_fixed_bytes=fixed, kv_bytes_per_token=growth,
        crossover_tokens=(fixed / growth) if growth else None,
        state_at={n: int(state_bytes_at(compiled, n)) for n in lengths},
    )
    if budget is not None:
        result = result.model_copy(update=dict(budget_bytes=budget, **_fit(compiled, budget, fixed)))
    return result


def _fit(compiled: Compiled, budget: int, fixed: int) -> dict:
    """The longest H with state(H) ≤ budget; state only grows with H, so bisection is exact."""
    at = lambda n: state_bytes_at(compiled, n)  # noqa: E731
    if at(0) > budget:
        return {"max_context": None, "budget_note": f"the state that does not depend on context ({fixed:,} B) "
                                                    f"already exceeds the budget: no context length fits"}
    if at(LONGEST_CONTEXT) <= budget:
        return {"max_context": None, "budget_note": "the state stops growing below the budget: any length fits"}
    low, high = 0, LONGEST_CONTEXT  # at(low) fits, at(high) does not
    while high - low > 1:
        middle = (low + high) // 2
        low, high = (middle, high) if at(middle) <= budget else (low, middle)
    return {"max_context": low, "budget_note": None}
