"""One card's cost on a layout: every op it holds, each cost field scaled by the op's share of it (placement.py).

A card of a pipeline stage holds its stage's ops (the repeated layers 1/pp of them); each op's weights and state
by its `hold`, its work and traffic by its `work`, an expert layer's tokens as its EP group gathers them.
"""

from __future__ import annotations

import networkx as nx
import sympy as sp

from ..ops import Cost
from ..ops.base import COST_FIELDS
from ..ops.sharding import HELD, Share
from ..terms.symbols import B, m
from .pipeline import stage_fraction
from .placement import Placement, placed
from .symbolic import SymbolicLayout


def stage_cost(compiled, degrees: SymbolicLayout, stage: str) -> Cost:
    """`card_cost` of a compiled model's placement, built once per layout and stage."""
    key = ("card", degrees, stage)
    if key not in compiled.memo:
        compiled.memo[key] = card_cost(compiled.graph, placed(compiled, degrees), degrees, stage, compiled.memo)
    return compiled.memo[key]


def group_rows(given: Share, degrees: SymbolicLayout) -> dict:
    """What an expert layer's rows become as its EP group makes its call: the tokens of ep/tp replicas' worth of
    cards (a replica's tp cards share its m rows; an EP group of ep of the tp·dp cards of a stage gathers ep/tp
    of them), of which each card does 1/ep. Its costs are not linear in the rows (the distinct experts a batch
    touches), so the rows change before the share is taken; per card that is m/tp rows, whatever ep spans.
    Empty for any other op."""
    group = degrees.ep * degrees.etp  # an EP group of ep ranks, each etp cards (expert tensor parallel)
    if given.group != "ep" or not degrees.expert_parallel or group == degrees.tp:
        return {}
    ratio = group / degrees.tp  # tokens are m = B·P rows, or B·min(P, q) in a replay stage: scale both
    return {m: m * ratio, B: B * ratio}


def _group_tokens(cost: Cost, given: Share, degrees: SymbolicLayout) -> Cost:
    """An expert layer's call as its EP group makes it (group_rows); its held fields unchanged."""
    rows = group_rows(given, degrees)
    if not rows:
        return cost
    return Cost(**{name: getattr(cost, name) if name in HELD else getattr(cost, name).xreplace(rows)
                   for name in COST_FIELDS})


def on_card(graph: nx.DiGraph, placement: Placement, degrees: SymbolicLayout, stage: str):
    """(op id, copies) of every op one card of `stage` (whole when pp = 1; first, last, `stage i`) holds: of the
    repeated layers, those of the stage's layers (placement.stage_fraction)."""
    parts: dict = {}  # stage_fraction depends on a repeated op only through its group: found once a group
    for node_id, data in graph.nodes(data=True):
        group = op_group(placement, node_id)
        if stage != "whole" and group[0] not in ("stack", stage):
            continue
        if group not in parts:
            parts[group] = stage_fraction(placement, node_id, degrees, stage)
        copies = data["op"].multiplicity * parts[group]
        if copies != 0:
            yield node_id, copies


def op_group(placement: Placement, node_id: str) -> tuple:
    """What an op's copies on a card of a stage depend on: where it sits (first, stack, last) and, when pp splits
    the layers, its stack's span; the ops of one group have the same part of their layers on every card."""
    where = placement.stages[node_id]
    return where, placement.spans.get(node_id) if where == "stack" and placement.stage_layers else None


def card_cost(graph: nx.DiGraph, placement: Placement, degrees: SymbolicLayout, stage: str,
              memo: dict | None = None) -> Cost:
    """Σ over the ops one card of `stage` (first, last, or whole when pp = 1) holds, each scaled by its share;
    with a `memo` (the compiled model's), an op's scaled cost is kept for every layout that gives it the same
    share, tokens and copies (a layout search meets each many times: most ops depend on tp or ep, not both)."""
    terms: dict[str, list] = {name: [] for name in COST_FIELDS}
    memo = {} if memo is None else memo
    for node_id, copies in on_card(graph, placement, degrees, stage):
        key = ("scaled", node_id, *_scaling(graph, node_id, placement, degrees), copies)
        if key not in memo:
            memo[key] = _scaled(graph, node_id, graph.nodes[node_id], placement, degrees, copies)
        for name, value in memo[key].items():
            terms[name].append(value)
    return Cost(**{name: sp.Add(*parts) for name, parts in terms.items()})  # one Add a field: flattened once


def _scaling(graph: nx.DiGraph, node_id: str, placement: Placement, degrees: SymbolicLayout) -> tuple:
    """Everything of a layout an op's scaled cost depends on, besides its copies: its share, the share of the
    cache it reads, and, for an expert layer, the tokens its EP group gathers."""
    given = placement.shares[node_id]
    caches = [source for source, _, edge in graph.in_edges(node_id, data=True) if edge["kind"] == "state"]
    tokens = (degrees.expert_parallel, degrees.ep, degrees.tp) if given.group == "ep" else None
    return given, placement.shares[caches[0]].hold if caches else None, tokens


def _scaled(graph: nx.DiGraph, node_id: str, data: dict, placement: Placement, degrees: SymbolicLayout,
            copies: sp.Expr) -> dict[str, sp.Expr]:
    """An op's cost fields on one card: its share of each, for the `copies` of it the card holds (each
    expression multiplied once, by one factor: sympy distributes a number over a sum term by term)."""
    given = placement.shares[node_id]
    cost: Cost = _group_tokens(data["cost"], given, degrees)
    hold, work = given.hold * copies, given.work * copies
    values = {name: getattr(cost, name) * (hold if name in HELD else work) for name in COST_FIELDS}
    values["read_weights"] = cost.read_weights * (work * given.positions)  # every position's card reads them
    caches = [source for source, _, edge in graph.in_edges(node_id, data=True) if edge["kind"] == "state"]
    if caches:  # a card reads the part of a cache it holds
        values["read_state"] = cost.read_state * (placement.shares[caches[0]].hold * copies)
    reads = [edge["cost"]["read_activations"] for _, _, edge in graph.in_edges(node_id, data=True) if "cost" in edge]
    values["read_activations"] += sp.Add(*reads) * work
    return values
