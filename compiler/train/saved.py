"""What a training step keeps for its backward pass, op by op and on one card of a layout.

Each op says what one call keeps (`Saved`, its definition in compiler/ops): its inputs, score-sized tensors,
tensors of its own. A tensor that several ops keep is held once: it is counted on its producer, at the size
and layout the producer gives it. On a card of a layout a kept tensor is its part of that layout (a split
tensor 1/tp, a whole one all of it; with sequence parallelism a whole one is split by positions over the tp
cards, as Megatron keeps it: Korthikanti et al. 2022 §4.2.2), and what an op keeps of its own follows its
share of the work. Under full recomputation each layer keeps only its input (Korthikanti et al. 2022 §5,
"2sbhL"), and the layer being recomputed holds its whole set again while its backward runs.
"""

from __future__ import annotations

from dataclasses import dataclass

import networkx as nx
import sympy as sp

from ..cards.card import group_rows, on_card
from ..cards.placement import Placement
from ..cards.symbolic import SymbolicLayout
from ..graph.costs import staged, states_read_by_op
from ..graph.ir import outermost
from ..ops import REGISTRY, CostContext
from ..ops.base import Saved
from ..terms.symbols import S, S_w

ZERO, ONE = sp.Integer(0), sp.Integer(1)
OUTSIDE_LAYERS = "embedding_output"
FP32_BYTES = 4  # the component of the embedding and the head: not recomputed


@dataclass(frozen=True)
class Kept:
    """One op's part of a training step's activations, per call on one card (the scenario's letters)."""

    tensors: sp.Expr = ZERO  # its output, when an op reading it keeps its input
    tensors_outside: sp.Expr = ZERO  # the same, when a reader outside the layers keeps it (full recomputation)
    scores: sp.Expr = ZERO   # score-sized tensors: selective recomputation drops them
    own: sp.Expr = ZERO      # other tensors it keeps
    layer_input: sp.Expr = ZERO  # the tensor a layer starting here keeps under full recomputation
    boundary: sp.Expr = ZERO     # what a pipeline stage keeps of the tensors between stages, all copies at once

    @property
    def whole(self) -> sp.Expr:
        return self.tensors + self.scores + self.own


def step_conventions(dropout: bool, kernel: str) -> dict[str, str]:
    """What a training step tells the ops' rules beside the spec's conventions: dropout, and the attention kernel."""
    return {"dropout": "on" if dropout else "off", "attention_kernel": kernel}


def saved_rules(compiled, dropout: bool, kernel: str = "flash") -> dict[str, Saved]:
    """Every op's `Saved` for one call, in the stage (replay window) it runs in; `kernel` the attention kernel
    the step runs (flash: scores never leave the chip; eager: they are kept for the backward)."""
    key = ("saved", dropout, kernel)
    if key in compiled.memo:
        return compiled.memo[key]
    graph = compiled.graph
    conventions = {**compiled.conventions.cost_conventions(), **step_conventions(dropout, kernel)}
    rules = {}
    read = states_read_by_op(graph)
    for node_id, data in graph.nodes(data=True):
        op, tail = data["op"], data["tail"]
        states = tuple(graph.nodes[s]["op"].args for s in read.get(node_id, ()))
        context = CostContext(act_bytes=compiled.ir.act_format, states=states, conventions=conventions,
                              window_history=S if tail is None else S_w)
        rule = REGISTRY[op.kind].saved(op.args, context)
        rules[node_id] = Saved(inputs=rule.inputs, scores=staged(ONE * rule.scores, tail),
                               own=staged(ONE * rule.own, tail))
    compiled.memo[key] = rules
    return rules


def kept_outputs(graph: nx.DiGraph, rules: dict[str, Saved], outside_only: bool = False) -> dict[str, sp.Expr]:
    """The bytes of each op's output that some reader keeps (once, whoever else keeps it); `outside_only`: a
    reader outside the layers (under full recomputation a layer keeps only its input)."""
    kept = {}
    for source, target, edge in graph.edges(data=True):
        if edge["kind"] == "tensor" and rules[target].inputs and edge.get("tensor_bytes") is not None \
                and not (outside_only and in_layers(graph, target)):
            kept.setdefault(source, edge["tensor_bytes"])
    return kept


def loss_logits(graph: nx.DiGraph) -> dict[str, sp.Expr]:
    """The cross-entropy the step ends with keeps its logits in FP32 for the backward of the softmax
    (Korthikanti et al. 2022 §4.3: "4sbv"): the head's every row and vocabulary entry, 4 bytes each. The
    head is an op of the embedding and head that no op reads."""
    found = {}
    for node_id, data in graph.nodes(data=True):
        op = data["op"]
        readers = [t for _, t, e in graph.out_edges(node_id, data=True) if e["kind"] == "tensor"]
        if op.component == OUTSIDE_LAYERS and not readers and REGISTRY[op.kind].produces and op.out_width is not None:
            found[node_id] = staged(op.rows * op.out_width * FP32_BYTES, data["tail"])
    return found


def layer_inputs(graph: nx.DiGraph) -> dict[str, sp.Expr]:
    """Per op that a layer's input enters, the bytes of that input: each tensor from outside a model-level
    block or stack into it, once per reader's copy (a stack of L layers keeps L of them)."""
    clusters = graph.graph["clusters"]
    found: dict[str, sp.Expr] = {}
    seen = set()
    for source, target, edge in graph.edges(data=True):
        if edge["kind"] != "tensor" or edge.get("tensor_bytes") is None or not in_layers(graph, target):
            continue
        layer = outermost(clusters, graph.nodes[target]["op"].cluster)
        if outermost(clusters, graph.nodes[source]["op"].cluster) is layer or (source, layer.id) in seen:
            continue
        seen.add((source, layer.id))
        found[target] = found.get(target, ZERO) + edge["tensor_bytes"]
    return found


def in_layers(graph: nx.DiGraph, node_id: str) -> bool:
    """Whether full recomputation runs this op again: any op of a layer, not the embedding or the head."""
    op = graph.nodes[node_id]["op"]
    return op.component != OUTSIDE_LAYERS and outermost(graph.graph["clusters"], op.cluster) is not None


def on_one_card(compiled, placement: Placement, degrees: SymbolicLayout, stage: str,
                dropout: bool, kernel: str = "flash") -> list[tuple[str, sp.Expr, Kept]]:
    """(op id, copies, what it keeps per call on one card of `stage`) for every op the card holds."""
    graph, rules = compiled.graph, saved_rules(compiled, dropout, kernel)
    kept, inputs, logits = kept_outputs(graph, rules), layer_inputs(graph), loss_logits(graph)
    outside = kept_outputs(graph, rules, outside_only=True)
    shift = stage_boundary(graph, placement, stage)
    out = []
    for node_id, copies in on_card(graph, placement, degrees, stage):
        given = placement.shares[node_id]
        rows = group_rows(given, degrees)
        work = given.work * _sequence_split(placement, node_id, degrees)
        whole_part = _tensor_part(placement, node_id, degrees)
        rule = rules[node_id]
        own = rule.own + logits.get(node_id, ZERO)
        out.append((node_id, copies, Kept(
            tensors=kept.get(node_id, ZERO) * whole_part,
            tensors_outside=outside.get(node_id, ZERO) * whole_part,
            boundary=kept.get(node_id, ZERO) * whole_part * shift.get(node_id, ZERO),
            scores=rule.scores.xreplace(rows) * work,
            own=own.xreplace(rows) * work,
            layer_input=inputs.get(node_id, ZERO) * _stream_part(placement, node_id, degrees))))
    return out


def stage_boundary(graph: nx.DiGraph, placement: Placement, stage: str) -> dict[str, sp.Expr]:
    """Copies of the stack's last tensor a stage keeps beyond its share of the stack: a stage keeps the input of
    each of its layers, so the tensor it sends on is kept by the next stage (the first stage keeps one fewer of
    its own) and the one it receives by itself (the last stage keeps one more; a middle stage both)."""
    if stage == "whole":
        return {}
    exits = {source for source, target, edge in graph.edges(data=True) if edge["kind"] == "tensor"
             and placement.stages[source] == "stack" and placement.stages[target] != "stack"}
    delta = {"first": -ONE, "last": ONE}.get(stage, ZERO)
    return {node_id: delta for node_id in exits}


def _sequence_split(placement: Placement, node_id: str, degrees: SymbolicLayout, kinds: str = "R") -> sp.Expr:
    """With sequence parallelism an op on whole tensors (`kinds`: R; for a kept output also P, partial sums
    reduce-scattered by positions) works on its card's positions: 1/tp of them."""
    whole = placement.layouts[node_id][0] in kinds
    return 1 / degrees.tp if degrees.sequence_parallel and whole else ONE


def _tensor_part(placement: Placement, node_id: str, degrees: SymbolicLayout) -> sp.Expr:
    """The part of an op's output one card keeps: a split tensor its slice; a whole one (or partial sums, kept
    once reduced) all of it, or its positions under sequence parallelism; a card's own positions under CP."""
    kind, part = placement.layouts[node_id]
    given = placement.shares[node_id]
    return (part if kind == "S" else ONE) * _sequence_split(placement, node_id, degrees, "RP") / given.positions


def _stream_part(placement: Placement, node_id: str, degrees: SymbolicLayout) -> sp.Expr:
    """The part of a layer's input one card keeps: the residual stream is whole on a TP group (its positions
    with sequence parallelism), and a card's positions under CP."""
    split = 1 / degrees.tp if degrees.sequence_parallel else ONE
    return split / placement.shares[node_id].positions

