"""A card's model states on a layout: its dense parameters and its experts, each sharded by ZeRO over the cards
that hold the same parameters (dp replicas; for experts, the tp·dp/ep cards of a stage holding the same ones)."""

from __future__ import annotations

import sympy as sp
from pydantic import BaseModel

from ..cards.card import on_card, stage_cost
from .optimizer import model_states

Number = int | float


class CardStates(BaseModel):
    """One card's model states, and the gradients and weights its data-parallel sync moves."""

    params: Number
    weight_bytes: Number
    gradient_bytes: Number
    optimizer_bytes: Number
    dense_gradient_bytes: Number       # before ZeRO: what the data-parallel sync moves
    expert_gradient_bytes: Number
    dense_weight_bytes: Number
    expert_weight_bytes: Number

    @property
    def total(self) -> Number:
        return self.weight_bytes + self.gradient_bytes + self.optimizer_bytes


def card_states(compiled, placement, degrees, layout, setup, stage: str, micro) -> CardStates:
    """The card's weights, gradients and optimizer states: its dense parameters sharded by ZeRO over dp,
    its experts over the cards that hold the same experts (tp·dp/ep of a stage)."""
    graph = compiled.graph
    expert = [(n, c) for n, c in on_card(graph, placement, degrees, stage) if placement.shares[n].group == "ep"]
    cost = stage_cost(compiled, degrees, stage)
    expert_params = sp.Add(*(graph.nodes[n]["cost"].params * placement.shares[n].hold * c for n, c in expert))
    expert_bytes = sp.Add(*(graph.nodes[n]["cost"].weight_bytes * placement.shares[n].hold * c for n, c in expert))
    params, weights, e_params, e_weights = micro.many(("train states", degrees, stage), [
        (cost.params, "params"), (cost.weight_bytes, "params"), (expert_params, "params"),
        (expert_bytes, "params")])
    replicas = layout.tp * layout.dp // (layout.ep * layout.etp) if layout.ep > 1 else layout.dp
    dense = model_states(params - e_params, weights - e_weights, layout.dp, setup.zero, setup.optimizer,
                         setup.grad_format)
    experts = model_states(e_params, e_weights, replicas, setup.zero, setup.optimizer, setup.grad_format)
    whole = model_states(params - e_params, weights - e_weights, 1, 0, setup.optimizer, setup.grad_format)
    whole_experts = model_states(e_params, e_weights, 1, 0, setup.optimizer, setup.grad_format)
    return CardStates(params=params, weight_bytes=dense.weight_bytes + experts.weight_bytes,
                   gradient_bytes=dense.gradient_bytes + experts.gradient_bytes,
                   optimizer_bytes=dense.optimizer_bytes + experts.optimizer_bytes,
                   dense_gradient_bytes=whole.gradient_bytes, expert_gradient_bytes=whole_experts.gradient_bytes,
                   dense_weight_bytes=weights - e_weights, expert_weight_bytes=e_weights)
