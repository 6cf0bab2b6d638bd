"""Pipeline stages: which of the model's repeated layers each stage holds, in order.

A stack is the outermost repeated cluster around an op; the model's layers are its stacks' iterations one
after another. Stages take them in order (Megatron-LM assigns layers to stages in order), so a stage may hold
part of two stacks (DeepSeek-V3's first stage: its 3 dense layers and 12 of the MoE ones).
"""

from __future__ import annotations

import networkx as nx
import sympy as sp

from archcost.dsl.errors import ArchError

from ..graph.ir import ancestors

ONE = sp.Integer(1)


def as_number(value):
    """A sympy integer as a Python one (the layout checks are arithmetic on numbers); anything else as it is."""
    return int(value) if getattr(value, "is_Integer", False) else value


def spans_of(graph: nx.DiGraph, stages: dict[str, str]) -> tuple[dict[str, tuple], int]:
    """Each repeated op's layers as (first layer, layers) in the model's order, and the model's layers. A stack
    is the outermost repeated cluster around the op; an arm of a `select` inside it runs its own layers of the
    stack, after the arms written before it (DeepSeek-V3: 3 dense layers, then 58 MoE ones)."""
    clusters, spans, offsets, start = graph.graph["clusters"], {}, {}, 0
    for node_id in nx.topological_sort(graph):
        if stages[node_id] != "stack":
            continue
        chain = [clusters[c] for c in reversed(ancestors(clusters, graph.nodes[node_id]["op"].cluster))]
        stack = next((c for c in chain if c.times != 1), None)
        if stack is None:
            continue
        if stack.id not in offsets:
            offsets[stack.id] = start
            start = start + stack.times
        arm = next((c for c in chain[chain.index(stack) + 1:] if c.kind == "select"), None)
        spans[node_id] = (offsets[stack.id], stack.times) if arm is None else (
            offsets[stack.id] + _arm_offset(clusters, arm), arm.times)
    return spans, start


def _arm_offset(clusters: dict, arm) -> sp.Expr:
    """The layers the arms written before `arm` in its `select` run."""
    siblings = [c for c in clusters.values() if c.kind == "select" and c.parent == arm.parent]
    return sp.Add(*(c.times for c in siblings[:siblings.index(arm)]))


def stage_split(total, degrees) -> tuple[int, ...] | str:
    """Layers of each pipeline stage, assigned in order: `first` and `last` when the layout gives them
    (Megatron's first- and last-stage counts; Llama 3 puts one fewer layer on each, §3.3.2), the rest as evenly
    as the count allows, the extra layers on the later stages (the first holds the embedding and, under
    1F1B, the most micro-batches). A message where no split exists; empty with one stage or a kept letter."""
    pp = as_number(degrees.pp)
    if type(pp) is not int or pp == 1 or not getattr(sp.Integer(1) * total, "is_Integer", False):
        return ()
    total, ends = int(total), [n for n in (degrees.first_layers, degrees.last_layers) if n is not None]
    rest, middle = total - sum(ends), pp - len(ends)
    if pp > total or rest < middle or (middle == 0 and rest != 0) or (middle > 0 and rest <= 0):
        return f"{total} repeated layers cannot be split over pp = {pp} stages of at least one layer each" + (
            f" with first = {degrees.first_layers} and last = {degrees.last_layers}" if ends else "")
    base, extra = divmod(rest, middle) if middle else (0, 0)
    inner = [base] * (middle - extra) + [base + 1] * extra
    first = [degrees.first_layers] if degrees.first_layers is not None else []
    last = [degrees.last_layers] if degrees.last_layers is not None else []
    return tuple(first + inner + last)


def stage_index(stage: str, pp: int) -> int:
    """The position of a stage in the pipeline: first 0, last pp − 1, `stage i` i, `middle` 1."""
    return {"whole": 0, "first": 0, "last": pp - 1, "middle": 1}.get(stage) if not stage.startswith("stage ") \
        else int(stage.split()[1])


def stage_fraction(placement, node_id: str, degrees, stage: str) -> sp.Expr:
    """The part of a repeated op's copies one card of `stage` holds: its stack's layers on that stage over the
    stack's layers (1/pp of every stack when the layers split evenly or pp stays a letter); 1 for the rest."""
    if stage == "whole" or placement.stages[node_id] != "stack":
        return ONE
    if not placement.stage_layers or node_id not in placement.spans:
        return 1 / degrees.pp
    offset, layers = placement.spans[node_id]
    index = stage_index(stage, len(placement.stage_layers))
    return sp.Integer(layers_on_stage(placement.stage_layers, index, (offset, layers))) / layers


def layers_on_stage(sizes: tuple[int, ...], index: int, span: tuple) -> int:
    """How many of a span's layers (first layer, layers) stage `index` of stages of `sizes` holds."""
    begin = sum(sizes[:index])
    offset, layers = (int(n) for n in span)
    return max(0, min(begin + sizes[index], offset + layers) - max(begin, offset))


def stage_keys(placement, pp: int) -> tuple[str, ...]:
    """The pipeline positions a report shows: the first and the last stage, and any middle stage holding more
    layers than both (it may be the busiest)."""
    if pp == 1:
        return ("whole",)
    sizes = placement.stage_layers
    heavier = [i for i in range(1, pp - 1) if sizes and sizes[i] > max(sizes[0], sizes[-1])
               and sizes[i] != sizes[i - 1]]
    return ("first", *(f"stage {i}" for i in heavier), "last")


def refuse_split_loops(compiled, degrees) -> None:
    """E405 for a layout whose pipeline stages would split a `loop`: its passes run one set of weights, which a
    stage holding some of them would need too; archcost counts them held once (graph/costs.py), so it does not
    place them over pp > 1 rather than give a stage's memory without them."""
    pp = as_number(degrees.pp)
    if pp == 1:
        return
    if ("looped op",) not in compiled.memo:  # found once per model: a search asks for every layout
        compiled.memo["looped op",] = next((data["op"] for _, data in compiled.graph.nodes(data=True)
                                            if data["op"].reuse != 1 or data["op"].shares is not None), None)
    looped = compiled.memo["looped op",]
    if looped:
        runs = f"is in a call that `shares {looped.shares}`, whose calls run" if looped.shares else \
            "runs in a `loop` whose passes share"
        raise ArchError([compiled.ir.sources.diagnostic(
            "E405", f"`{looped.id}` {runs} one set of weights: a layout of pp = {pp} "
            "would split its passes, and a stage's copy of the weights is not modelled",
            looped.call_site or looped.span,  # the spec's own call in the loop, not the library's op
            hint="lay the model out with pp = 1 (tp, ep and dp split a loop as they split any layer)")])
