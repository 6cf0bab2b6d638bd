"""The block-level diagram (`archcost diagram --blocks`): every block a model calls drawn as one node, the
repeated stacks as boxes with ×N, so a whole model fits one screen (issue 25: Qwen3-Next's op-level diagram
is 1061 × 5019 px). A node says the block, its parameters and its matrix FLOPs per call as a number at the
request shape the user asks for (issue 47: V4-Flash's expanded piecewise forms made the view 3,050 pt
wide), the whole closed form one hover away (the node's tooltip, an SVG title); an edge, what flows between
two blocks."""

from __future__ import annotations

from collections import defaultdict

import graphviz
import networkx as nx
import sympy as sp

from ..compilation import Compiled
from ..graph.ir import Cluster, ancestors
from ..numbers.plain import PlainEvaluator
from ..ops import REGISTRY
from ..terms.scenario import Scenario
from .dot import (
    COLORS,
    FONT,
    STEERS,
    LayoutMarks,
    _identifier,
    _node_label,
    _node_name,
    _node_style,
    edge_style,
    steering,
)
from .readable import readable
from .units import human_count, human_flops


def to_block_dot(compiled: Compiled, phase: str = "prefill", scenario: Scenario | None = None,
                 marks: LayoutMarks | None = None) -> str:
    """DOT source of the block-level view, FLOPs at `phase` and `scenario` (default: a prefill of 8,192 tokens);
    with a layout's `marks`, the collectives on the edges between blocks and, for those inside a block, in
    its node; byte-identical for the same spec."""
    shape = (phase, scenario or Scenario(P=8192))
    graph = compiled.graph
    clusters: dict[str, Cluster] = graph.graph["clusters"]
    owner = {node_id: _outer_block(clusters, data["op"].cluster) for node_id, data in graph.nodes(data=True)}
    dot = graphviz.Digraph(name=_identifier(compiled.name), graph_attr={
        "label": f"{compiled.name} (blocks)", "labelloc": "t", "fontname": FONT, "fontsize": "18",
        "rankdir": "TB", "nodesep": "0.3", "ranksep": "0.35"},
        node_attr={"shape": "box", "style": "rounded,filled", "fontname": FONT, "fontsize": "10"},
        edge_attr={"fontname": FONT, "fontsize": "9", "color": "#555555"})
    dot.node("tokens", "tokens", shape="plaintext", style="", fontsize="11")
    inside = _inside(graph, owner, marks)
    _place(dot, None, compiled, clusters, owner, (*shape, inside))
    drawn = set()
    for source, target, data in graph.edges(data=True):
        ends = (owner[source] or source, owner[target] or target)
        if ends[0] != ends[1] and ends not in drawn:
            drawn.add(ends)
            dot.edge(*(_name(end, clusters) for end in ends), **edge_style(data, marks, (source, target)))
    for node_id, data in graph.nodes(data=True):
        if REGISTRY[data["op"].kind].token_input and not graph.in_degree(node_id):
            dot.edge("tokens", _name(owner[node_id] or node_id, clusters), label=" m ids")
    for source, target in steering(graph):
        ends = (owner[source] or source, owner[target] or target)
        if ends[0] != ends[1] and ends not in drawn:
            drawn.add(ends)
            dot.edge(*(_name(end, clusters) for end in ends), **STEERS)
    return dot.source


def _inside(graph: nx.DiGraph, owner: dict, marks: LayoutMarks | None) -> dict[str, list[str]]:
    """The collectives a layout puts on edges inside one block, by block (drawn in its node)."""
    found: dict[str, list[str]] = defaultdict(list)
    for (source, target), name in (marks.edges.items() if marks else ()):
        block = owner.get(source)
        if block is not None and block == owner.get(target) and name not in found[block]:
            found[block].append(name)
    return found


def _outer_block(clusters: dict[str, Cluster], cluster_id: str | None) -> str | None:
    """The outermost block call an op sits in that is drawn as one node (None for an op written at model or
    stack level): a user's own block that calls other blocks is opened, a box around them, as a stack is."""
    blocks = [c for c in ancestors(clusters, cluster_id) if clusters[c].kind == "block" and not _opened(clusters, c)]
    return blocks[-1] if blocks else None


def _opened(clusters: dict[str, Cluster], cluster_id: str) -> bool:
    cluster = clusters[cluster_id]
    return not cluster.library and any(c.parent == cluster_id and c.kind == "block" for c in clusters.values())


BLOCK_NODE = "block "  # a block call's node in the block view: `block layers.attn` (the page finds it so)


def block_node(cluster_id: str) -> str:
    return BLOCK_NODE + cluster_id


def _name(end: str, clusters: dict[str, Cluster]) -> str:
    return block_node(end) if end in clusters else _node_name(end)


def _place(dot, parent: str | None, compiled: Compiled, clusters: dict[str, Cluster], owner: dict,
           shape: tuple) -> None:
    """The ops written at this level, the blocks called here as single nodes, the stacks as boxes."""
    graph = compiled.graph
    for node_id, data in graph.nodes(data=True):
        if data["op"].cluster == parent and owner[node_id] is None:
            dot.node(_node_name(node_id), _node_label(graph, node_id, None), **_node_style(data["op"]))
    members = defaultdict(list)
    for node_id, block in owner.items():
        if block is not None:
            members[block].append(node_id)
    for cluster in (c for c in clusters.values() if c.parent == parent):
        if cluster.kind == "block" and not _opened(clusters, cluster.id):
            label, formula = _block_label(compiled, cluster, members[cluster.id], shape)
            dot.node(_name(cluster.id, clusters), label, tooltip=formula,
                     fillcolor=COLORS.get(cluster.component or "other", "#ffffff"))
            continue
        with dot.subgraph(name=f"cluster_{_identifier(cluster.id)}") as sub:
            sub.attr(label=f"{cluster.label} ×{readable(cluster.times)}" if cluster.kind in ("repeat", "loop")
                     else cluster.label, style="rounded,dashed" if cluster.kind == "block" else "rounded,bold",
                     color="#333333", fontsize="13", labeljust="l")
            _place(sub, cluster.id, compiled, clusters, owner, shape)


def _block_label(compiled: Compiled, cluster: Cluster, nodes: list[str], shape: tuple) -> tuple[str, str]:
    """(`attn: gqa`, its op count, its parameters and its matrix FLOPs per call at the shape; the closed form of
    those FLOPs, for the tooltip)."""
    graph = compiled.graph
    costs = [graph.nodes[n]["cost"] for n in nodes]
    params = sp.Add(*(c.params for c in costs))
    flops = sp.Add(*(c.flops_matrix for c in costs))
    lines = [cluster.label, f"{len(nodes)} op{'s' if len(nodes) != 1 else ''}"]  # the label names the block
    if params != 0:
        lines.append(f"{_short(params)} params")
    formula = ""
    phase, scenario, inside = shape
    if flops != 0:
        lines.append(f"{human_flops(PlainEvaluator(compiled, phase, scenario)(flops, 'flops_matrix'))} a call")
        formula = f"F per call = {readable(flops)}"
    lines += [f"⇄ {name}" for name in inside.get(cluster.id, ())]
    return "\n".join(lines), formula


def _short(value: sp.Expr) -> str:
    """A count in a few digits (6.08 B), or its formula where it is not a number."""
    return human_count(int(value)) if value.is_Integer else readable(value)


__all__ = ["to_block_dot"]
