"""A model on the cards of a layout: each op's share of one card, each tensor's layout, the collectives on edges.

Tensors are whole on every card of a tensor-parallel group (R), split (S), or partial sums (P). An op's
`shard` word (ops/sharding.py) says what it needs and what it gives; where an edge's producer gives what
its consumer cannot take, the edge carries a collective: P → R an all-reduce (after a row-parallel linear:
two per transformer layer, Shoeybi et al. 2019), S → R an all-gather, P → S a reduce-scatter; an expert
layer's input and output edges carry its all-to-all dispatch and combine. With sequence parallelism an
all-reduce is a reduce-scatter and an all-gather of the same bytes. Pipeline stages split the repeated
layers; the ops before them sit on the first stage, those after on the last.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import networkx as nx
import sympy as sp

from .collectives import Collective
from .ir import OpNode
from .ops import REGISTRY, Cost
from .ops.base import COST_FIELDS
from .ops.sharding import HELD, ONE, Share, share

DEGREES = ("tp", "ep", "pp", "dp")


@dataclass(frozen=True)
class Degrees:
    """The layout's parallel degrees: numbers, or symbols when a formula keeps them (`--keep tp`)."""

    tp: sp.Expr = ONE
    ep: sp.Expr = ONE
    pp: sp.Expr = ONE
    dp: sp.Expr = ONE
    sequence_parallel: bool = False

    @property
    def cards(self) -> sp.Expr:
        """Cards of one model replica's group and its replicas: TP × PP × DP (EP spans the TP·DP cards)."""
        return self.tp * self.pp * self.dp


@dataclass
class Placement:
    shares: dict[str, Share] = field(default_factory=dict)
    layouts: dict[str, tuple[str, sp.Expr]] = field(default_factory=dict)  # op id -> (R/S/P, part)
    collectives: list[Collective] = field(default_factory=list)
    stages: dict[str, str] = field(default_factory=dict)                    # op id -> first, stack, last
    converted: set = field(default_factory=set)                             # (producer, layout) done


def place(graph: nx.DiGraph, degrees: Degrees) -> Placement:
    placement = Placement()
    for node_id in nx.topological_sort(graph):
        op: OpNode = graph.nodes[node_id]["op"]
        _place_op(graph, node_id, op, degrees, placement)
    placement.stages = _stages(graph)
    placement.collectives += _stage_sends(graph, placement, degrees)
    return placement


def _stage_sends(graph: nx.DiGraph, placement: Placement, degrees: Degrees) -> list[Collective]:
    """Between pipeline stages the residual stream goes on: one send of the tensor entering the layers."""
    if degrees.pp == 1:
        return []
    for source, target, edge in graph.edges(data=True):
        if edge["kind"] == "tensor" and placement.stages[target] == "stack" and placement.stages[source] != "stack" \
                and edge.get("tensor_bytes") is not None:
            return [Collective("send", (target, target), "pp", degrees.pp, edge["tensor_bytes"], ONE)]
    return []


def _place_op(graph: nx.DiGraph, node_id: str, op: OpNode, degrees: Degrees, placement: Placement) -> None:
    word, heads = op.shard
    rule = REGISTRY[op.kind].shard or share
    given = rule(word, heads, degrees.tp, degrees.ep)
    inputs = [(source, edge) for source, _, edge in graph.in_edges(node_id, data=True) if edge["kind"] == "tensor"]
    laid = [placement.layouts[source] for source, _ in inputs] or [("R", ONE)]
    need = given.needs
    if need == "same":  # an op on each feature alone keeps a split input split
        need = "S" if all(kind == "S" for kind, _ in laid) else "R"
    for (source, edge), (kind, _) in zip(inputs, laid):
        if (source, need) not in placement.converted:  # a tensor is reduced or gathered once for all its readers
            placement.converted.add((source, need))
            producer = graph.nodes[source]["op"]
            placement.collectives += _converted(kind, need, (source, node_id), edge, producer, degrees)
    if given.output == "same":
        part = max((p for _, p in laid), key=sp.default_sort_key) if need == "S" else ONE
        given = Share(hold=given.hold, work=part if need == "S" else ONE, output=need, needs=need)
    placement.shares[node_id] = given
    placement.layouts[node_id] = (given.output, given.work if given.output == "S" else ONE)
    if given.group == "ep" and degrees.ep != 1:
        placement.collectives += _expert_traffic(graph, node_id, op, inputs, degrees)


def _converted(kind: str, need: str, edge_ids: tuple[str, str], edge: dict, producer: OpNode,
               degrees: Degrees) -> list[Collective]:
    """The collectives that turn a tensor laid out as `kind` into `need`, once per copy of its producer."""
    size = edge.get("tensor_bytes")
    if size is None or kind == need or (kind == "R" and need == "S"):  # R → S: each card takes its slice
        return []
    kinds = {("P", "R"): ("reduce_scatter", "all_gather") if degrees.sequence_parallel else ("all_reduce",),
             ("S", "R"): ("all_gather",), ("P", "S"): ("reduce_scatter",)}[kind, need]
    return [Collective(name, edge_ids, "tp", degrees.tp, size, producer.multiplicity) for name in kinds]


def _expert_traffic(graph: nx.DiGraph, node_id: str, op: OpNode, inputs: list, degrees: Degrees) -> list[Collective]:
    """All-to-all dispatch of each token to the cards of its `top` experts, and the combine back: the tp cards
    of a replica share its tokens, so each card sends 1/tp of them, `top` copies each (uniform routing)."""
    top = getattr(op.args, "top", ONE)
    out = []
    for source, edge in inputs:
        if edge.get("tensor_bytes") is None:
            continue
        size = edge["tensor_bytes"] * top / degrees.tp
        out += [Collective("all_to_all", (source, node_id), "ep", degrees.ep, size, op.multiplicity),
                Collective("all_to_all", (node_id, node_id), "ep", degrees.ep, size, op.multiplicity)]
    return out


def _stages(graph: nx.DiGraph) -> dict[str, str]:
    """Which pipeline stage holds each op: the repeated layers are split over the stages; what comes
    before them sits on the first, what comes after on the last."""
    order = list(nx.topological_sort(graph))
    stacked = {node_id for node_id in order if graph.nodes[node_id]["op"].multiplicity != 1}
    first = next((i for i, node_id in enumerate(order) if node_id in stacked), len(order))
    return {node_id: "stack" if node_id in stacked else ("first" if i < first else "last")
            for i, node_id in enumerate(order)}


def card_cost(graph: nx.DiGraph, placement: Placement, degrees: Degrees, stage: str) -> Cost:
    """Σ over the ops one card of `stage` (first, last, or whole when pp = 1) holds, each scaled by its share."""
    total = Cost()
    for node_id, data in graph.nodes(data=True):
        where = placement.stages[node_id]
        if stage != "whole" and where not in ("stack", stage):
            continue
        layers = degrees.pp if where == "stack" and stage != "whole" else ONE
        total = total + _scaled(graph, node_id, data, placement).scaled(data["op"].multiplicity / layers)
    return total


def _scaled(graph: nx.DiGraph, node_id: str, data: dict, placement: Placement) -> Cost:
    given = placement.shares[node_id]
    cost: Cost = data["cost"]
    values = {name: getattr(cost, name) * (given.hold if name in HELD else given.work) for name in COST_FIELDS}
    caches = [source for source, _, edge in graph.in_edges(node_id, data=True) if edge["kind"] == "state"]
    if caches:  # a card reads the part of a cache it holds
        values["read_state"] = cost.read_state * placement.shares[caches[0]].hold
    reads = [edge["cost"]["read_activations"] for _, _, edge in graph.in_edges(node_id, data=True) if "cost" in edge]
    values["read_activations"] += sp.Add(*reads) * given.work
    return Cost(**values)
