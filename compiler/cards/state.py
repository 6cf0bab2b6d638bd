"""A card's context state as a function of (requests, positions each): what the capacity searches ask (the
longest context, the requests a card holds) many times a layout, so it is one small table and a few products."""

from __future__ import annotations

from ..numbers.evaluate import state_bytes_at
from .card import stage_cost
from .figures import _share, _times, _total, copies_on_card
from .values import Symbolic, op_table, values_at


def state_on_card(compiled, placement, degrees, stage: str):
    """The card's context state as a function of (requests, positions each): what a decode leaves when it
    brings the history to `positions` (numbers.evaluate.state_bytes_at), Σ over the card's ops of their state
    there times their hold; one small table of the ops' state, evaluated once per (requests, positions)."""
    key = ("card table", "decode", ("state_bytes",))
    _, where = op_table(compiled, key, "decode", list(compiled.graph.nodes), {}, ("state_bytes",))
    held = _state_copies(compiled, placement, degrees, stage)
    terms = [(where[node_id][0], *_times(_share(compiled, placement.shares[node_id].hold, 1), copies))
             for node_id, copies in held]

    def state(requests: int, positions: int):
        try:
            values = values_at(compiled, key, (requests, positions - 1, 1, 1))
        except Symbolic:  # the symbolic card says why there is no number
            return state_bytes_at(compiled, positions, requests, stage_cost(compiled, degrees, stage).state_bytes)
        parts: dict[int, object] = {}
        for index, numerator, denominator in terms:
            if numerator and values[index]:
                parts[denominator] = parts.get(denominator, 0) + values[index] * numerator
        return _total(parts)
    return state


def _state_copies(compiled, placement, degrees, stage: str) -> list[tuple[str, tuple[int, int]]]:
    """copies_on_card's ops that hold a state, in its order: found once per pipeline split and stage."""
    key = ("state copies", placement.stage_layers, degrees.pp, stage)
    if key not in compiled.memo:
        compiled.memo[key] = [(node_id, copies)
                              for node_id, copies in copies_on_card(compiled, placement, degrees, stage)
                              if compiled.graph.nodes[node_id]["cost"].state_bytes != 0]
    return compiled.memo[key]
