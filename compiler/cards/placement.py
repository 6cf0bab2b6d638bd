"""A model on the cards of a layout: each op's share of one card, each tensor's layout, the collectives on edges.

Tensors are whole on every card of a tensor-parallel group (R), split (S), or partial sums (P). An op's
`shard` word (ops/sharding.py) says what it needs and what it gives; where an edge's producer gives what
its consumer cannot take, the edge carries a collective: P → R an all-reduce (after a row-parallel linear:
two per transformer layer, Shoeybi et al. 2019), S → R an all-gather, P → S a reduce-scatter; an expert
layer's input and output edges carry its all-to-all dispatch and combine (with sequence parallelism an
all-reduce is a reduce-scatter and an all-gather). Pipeline stages split the repeated layers, in order.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import networkx as nx
import sympy as sp

from archcost.dsl.errors import ArchError

from ..graph.ir import OpNode
from ..graph.topology import Topology, topology
from ..ops import REGISTRY
from ..ops.sharding import ONE, Share, share
from ..terms.symbols import Min, P
from .collectives import Collective, network_share
from .pipeline import as_number, refuse_split_loops, spans_of, stage_split
from .symbolic import SymbolicLayout

DEGREES = ("tp", "ep", "pp", "dp", "cp")


@dataclass
class Placement:
    shares: dict[str, Share] = field(default_factory=dict)
    layouts: dict[str, tuple[str, sp.Expr]] = field(default_factory=dict)  # op id -> (R/S/P, part)
    collectives: list[Collective] = field(default_factory=list)
    stages: dict[str, str] = field(default_factory=dict)                    # op id -> first, stack, last
    converted: set = field(default_factory=set)                             # (producer, layout) done
    problems: list[tuple[OpNode, str]] = field(default_factory=list)        # splits no card layout can make
    stage_layers: tuple[int, ...] = ()  # layers of each pipeline stage, in order (empty: pp = 1 or a letter)
    spans: dict = field(default_factory=dict)  # stacked op id -> (its stack's first layer, the stack's layers)


def placed(compiled, degrees: SymbolicLayout) -> Placement:
    """`place` once per layout, kept with the model; a layout splitting an op unevenly is E405 at the op's line."""
    placement = _kept(compiled, degrees)
    if placement.problems:
        raise ArchError([compiled.ir.sources.diagnostic("E405", f"`{op.id}`: {message}", op.span, hint=(
            "give pp no more than the layers, and first/last that leave every stage a layer" if "stages" in message
            else "choose degrees that divide the model's heads and experts"))
            for op, message in placement.problems[:3]])
    return placement


def splits_evenly(compiled, degrees: SymbolicLayout) -> bool:
    """Whether `placed` places this layout rather than refusing it (E405): a search skips the layouts it would
    refuse without building their diagnostics (a third of the layouts of 4,096 cards)."""
    return not _kept(compiled, degrees).problems


def _kept(compiled, degrees: SymbolicLayout) -> Placement:
    key = ("placement", degrees)
    if key not in compiled.memo:
        refuse_split_loops(compiled, degrees)
        compiled.memo[key] = place(compiled.graph, degrees, compiled.memo)
    return compiled.memo[key]


def place(graph: nx.DiGraph, degrees: SymbolicLayout, memo: dict | None = None) -> Placement:
    """Each op's share, each tensor's layout and the collectives; a layout that splits an op unevenly is only
    its problems, found before anything is placed (a layout search refuses most of the layouts it tries).
    With a `memo` (the compiled model's), layouts alike within a stage share its split (within_a_stage)."""
    memo = {} if memo is None else memo
    inner = degrees.within_a_stage()
    if ("stage split", inner) not in memo:
        memo["stage split", inner] = _split(graph, inner, topology(graph, memo))
    split_over_stage, logits = memo["stage split", inner]
    if split_over_stage.problems:
        return split_over_stage
    stages, spans, layers = graph_stages(graph, memo)
    split = stage_split(layers, degrees)
    if isinstance(split, str):
        return Placement(problems=[(graph.nodes[next(iter(stages))]["op"], split)])
    placement = Placement(shares=split_over_stage.shares, layouts=split_over_stage.layouts, stages=stages,
                          stage_layers=split, spans=spans)
    collectives = split_over_stage.collectives + stage_sends(graph, placement, degrees) + logits
    placement.collectives = [c if (share := network_share(c, degrees)) == c.network else replace(c, network=share)
                             for c in collectives]
    return placement


def graph_stages(graph: nx.DiGraph, memo: dict) -> tuple[dict, dict, int]:
    """(op → first, stack or last; stacked op → its span; the model's layers), found once per model."""
    if ("graph stages",) not in memo:
        memo["graph stages",] = (stages := _stages(graph), *spans_of(graph, stages))
    return memo["graph stages",]


def _split(graph: nx.DiGraph, degrees: SymbolicLayout, topology: Topology) -> tuple[Placement, list[Collective]]:
    """Each op's share of a card of its stage, each tensor's layout, the collectives among a stage's cards,
    and apart from them the gather of the logits (after the stage sends in a placement's list)."""
    order = topology.order
    problems = [(graph.nodes[n]["op"], message) for n in order for message in _uneven(graph.nodes[n]["op"], degrees)]
    if problems:
        return Placement(problems=problems), []
    placement = Placement()
    for node_id in order:
        _place_op(graph, topology, node_id, graph.nodes[node_id]["op"], degrees, placement)
    return placement, _logits_gather(graph, topology, placement, degrees)


def _logits_gather(graph: nx.DiGraph, topology: Topology, placement: Placement,
                   degrees: SymbolicLayout) -> list[Collective]:
    """A head split over the tp cards by vocabulary leaves each card a slice of every logits row; sampling a
    token needs the whole row, so the slices are gathered (vLLM's LogitsProcessor gathers the vocab-parallel
    logits before sampling). A training step's cross-entropy works on the slices and gathers none."""
    if degrees.tp == 1:
        return []
    found = []
    for node_id in graph.nodes:
        op = graph.nodes[node_id]["op"]
        inputs = topology.inputs[node_id]
        if topology.readers[node_id] or not inputs or op.out_width is None or placement.layouts[node_id][0] != "S":
            continue
        size = op.rows * op.out_width * inputs[0][1]["format"]
        found.append(Collective("all_gather", (node_id, node_id), "sampling", degrees.tp,
                                size / context_split(degrees), op.multiplicity, sampling=True))
    return found


def stage_sends(graph: nx.DiGraph, placement: Placement, degrees: SymbolicLayout) -> list[Collective]:
    """Between pipeline stages the residual stream goes on: one send of the tensor entering the layers, a card
    sending its part: its positions' under cp, with sp its 1/tp slice of them (Megatron-Core's schedules.py
    get_tensor_shapes: seq_length // cp, then // tp under sequence_parallel; Korthikanti et al. 2022 §4.2.2)."""
    if degrees.pp == 1:
        return []
    split = context_split(degrees) * (degrees.tp if degrees.sequence_parallel else ONE)
    for source, target, edge in graph.edges(data=True):
        if edge["kind"] == "tensor" and placement.stages[target] == "stack" and placement.stages[source] != "stack" \
                and edge.get("tensor_bytes") is not None:
            return [Collective("send", (target, target), "pp", degrees.pp, edge["tensor_bytes"] / split, ONE)]
    return []


def _place_op(graph: nx.DiGraph, topology: Topology, node_id: str, op: OpNode, degrees: SymbolicLayout,
              placement: Placement) -> None:
    inputs = topology.inputs[node_id]
    laid = [placement.layouts[source] for source, _ in inputs] or [("R", ONE)]
    given = _expert_share(_given(op, laid, degrees), op, degrees)
    for (source, edge), (kind, _) in zip(inputs, laid):
        if (source, given.needs) not in placement.converted:  # reduced or gathered once for all its readers
            placement.converted.add((source, given.needs))
            producer = graph.nodes[source]["op"]
            placement.collectives += _converted(kind, given.needs, (source, node_id), edge, producer, degrees)
    placement.layouts[node_id] = (given.output, given.work if given.output == "S" else ONE)
    stores = REGISTRY[op.kind].stores_state
    placement.shares[node_id] = _per_card(given, stores, node_id in topology.caches, degrees)
    if stores and degrees.cp != 1:  # ring attention: every card sees every other card's new K and V
        placement.collectives.append(Collective("all_gather", (node_id, node_id), "cp", degrees.cp,
                                                graph.nodes[node_id]["cost"].write_state, op.multiplicity))
    if given.group == "ep" and degrees.ep != 1:
        placement.collectives += _expert_traffic(topology, node_id, op, inputs, degrees)


def _uneven(op: OpNode, degrees: SymbolicLayout) -> list[str]:
    """Splits no layout makes: heads over TP cards (a whole number of heads per card, or of cards per head),
    experts over EP cards. A head count is a whole number ≥ 1 here: the front refuses any other where the shard
    word is read (E301). Layers over pipeline stages are `stage_split`'s."""
    word, heads = op.shard
    tp, ep = (as_number(d) for d in (degrees.tp, degrees.ep))
    heads = as_number(heads)
    if (word == "heads" and type(heads) is int and type(tp) is int
            and (heads % tp if tp <= heads else tp % heads) != 0):
        return [f"{heads} heads cannot be split evenly over tp = {tp} cards"]
    count = as_number(getattr(op.args, "count", None))
    held = count + int(degrees.redundant) if type(count) is int else count
    if word == "ep" and type(ep) is int and type(held) is int and held % ep:
        extra = f" and {int(degrees.redundant)} redundant copies" if degrees.redundant else ""
        return [f"{count} experts{extra} cannot be split evenly over ep = {ep} cards"]
    return []


def _given(op: OpNode, laid: list[tuple[str, sp.Expr]], degrees: SymbolicLayout) -> Share:
    """The op's share by its shard word, with what it needs settled: an op on each feature alone keeps a
    split input split (and does that slice of the work)."""
    word, heads = op.shard
    ep = degrees.ep if degrees.expert_parallel else ONE
    own = REGISTRY[op.kind].shard
    given = own(word, heads, degrees.tp, ep, op.args) if own else share(word, heads, degrees.tp, ep)
    if given.needs != "same":
        return given
    need = "S" if all(kind == "S" for kind, _ in laid) else "R"
    part = max((p for _, p in laid), key=sp.default_sort_key) if need == "S" else ONE
    output = need if given.output == "same" else given.output
    return Share(hold=given.hold, work=part if given.output == "same" else given.work, output=output, needs=need)


def _expert_share(given: Share, op: OpNode, degrees: SymbolicLayout) -> Share:
    """An EP card's share of an expert layer: with expert tensor parallelism each expert's matrices split over
    the etp cards of its EP rank (1/(ep·etp) of the weights and the group's work a card); with redundant
    experts a card holds (E + R)/ep experts, R of them copies of others, the tokens still spread evenly."""
    count = getattr(op.args, "count", None)
    if given.group != "ep" or count is None or not degrees.expert_parallel:
        return given
    copies = (count + degrees.redundant) / count
    return replace(given, hold=given.hold * copies / degrees.etp, work=given.work / degrees.etp)


def context_split(degrees: SymbolicLayout) -> sp.Expr:
    """The cards of a context-parallel group a call's new positions are split over: cp, but no more than the
    positions there are (a decode step's one new token is all on one card: Liu et al. 2023's ring attention
    passes the keys and values around, not the queries)."""
    return degrees.cp if degrees.cp == 1 else sp.Min(degrees.cp, P)


def _per_card(given: Share, stores: bool, reads_cache: bool, degrees: SymbolicLayout) -> Share:
    """The share on one card once context parallelism splits the positions and the busiest expert card takes
    `imbalance` times its tokens. Each card holds its positions' part of every cache, and an op reading a cache
    does that part of the work (its queries meet each card's keys there); any other op does the work of its
    card's new positions. Weight reads are not split: each card reads its weights for its positions."""
    positions = degrees.cp if reads_cache else context_split(degrees)
    work = given.work / positions * (degrees.imbalance if given.group == "ep" else ONE)
    return replace(given, work=work, hold=given.hold / degrees.cp if stores else given.hold, positions=positions)


def _converted(kind: str, need: str, edge_ids: tuple[str, str], edge: dict, producer: OpNode,
               degrees: SymbolicLayout) -> list[Collective]:
    """The collectives that turn a tensor laid out as `kind` into `need`, once per copy of its producer."""
    size = edge.get("tensor_bytes")
    if size is None or degrees.tp == 1 or kind == need or (kind == "R" and need == "S"):  # R → S: a local slice
        return []
    kinds = {("P", "R"): ("reduce_scatter", "all_gather") if degrees.sequence_parallel else ("all_reduce",),
             ("S", "R"): ("all_gather",), ("P", "S"): ("reduce_scatter",)}[kind, need]
    return [Collective(name, edge_ids, "tp", degrees.tp, size / context_split(degrees), producer.multiplicity)
            for name in kinds]


def _expert_traffic(topology: Topology, node_id: str, op: OpNode, inputs: list,
                    degrees: SymbolicLayout) -> list[Collective]:
    """All-to-all dispatch of each token to the cards of its `top` experts, and the combine back: the tp cards
    of a replica share its tokens, so each card sends 1/tp of them, `top` copies each (uniform routing; the
    busiest card `imbalance` times the average). An EP group wider than a server crosses the network: a
    token goes once to each of at most `node_limit` servers and is copied to its experts inside them."""
    # identity experts (zero-computation, LongCat-Flash) stay on the token's card: only ffn_top picks travel
    weighted = getattr(op.args, "ffn_top", None)
    top = weighted if weighted is not None else getattr(op.args, "top", ONE)
    out = []
    for source, edge in inputs:
        if edge.get("tensor_bytes") is None:
            continue
        rows = edge["tensor_bytes"] * degrees.imbalance / (degrees.tp * context_split(degrees))
        sent = rows * _dispatch_ratio(edge, degrees)
        after = topology.readers[node_id]
        times, ids = op.multiplicity, ((source, node_id), (node_id, after[0] if after else node_id))
        nodes = degrees.ep / degrees.node_cards if degrees.node_cards is not None else ONE
        if degrees.node_limit is not None and nodes != 1:
            copies = Min(top, degrees.node_limit)
            out += [Collective("all_to_all", ids[0], "nodes", nodes, sent * copies, times),
                    Collective("all_to_all", ids[1], "nodes", nodes, rows * copies, times)]
            cards = degrees.node_cards  # forwarded to the experts inside each server
        else:
            cards = degrees.ep
        out += [Collective("all_to_all", ids[0], "ep", cards, sent * top, times),
                Collective("all_to_all", ids[1], "ep", cards, rows * top, times)]
        if degrees.etp != 1:  # each etp card of a rank needs its rank's tokens, and adds its partial sums back
            out += [Collective("all_gather", ids[0], "etp", degrees.etp, sent * top * degrees.etp, times),
                    Collective("reduce_scatter", ids[1], "etp", degrees.etp, rows * top * degrees.etp, times)]
    return out


def _dispatch_ratio(edge: dict, degrees: SymbolicLayout) -> sp.Expr:
    """Bytes of a dispatched row over bytes of the activation row (fp8 dispatch: about half of bf16)."""
    if degrees.dispatch is None or edge.get("width") is None:
        return ONE
    return sp.nsimplify(edge["width"] * degrees.dispatch) / (edge["width"] * edge["format"])


def _stages(graph: nx.DiGraph) -> dict[str, str]:
    """Which pipeline stage holds each op: the repeated layers are split over the stages; what comes
    before them sits on the first, what comes after on the last."""
    order = list(nx.topological_sort(graph))
    stacked = {node_id for node_id in order if graph.nodes[node_id]["op"].multiplicity != 1}
    first = next((i for i, node_id in enumerate(order) if node_id in stacked), len(order))
    return {node_id: "stack" if node_id in stacked else ("first" if i < first else "last")
            for i, node_id in enumerate(order)}
