"""The block-level diagram (`archcost diagram --blocks`): every block a model calls drawn as one node, the
repeated stacks as boxes with ×N, so a whole model fits one screen (issue 25: Qwen3-Next's op-level diagram
is 1061 × 5019 px). A node says the block, its parameters and its matrix FLOPs per call; an edge, what
flows between two blocks."""

from __future__ import annotations

from collections import defaultdict

import graphviz
import networkx as nx
import sympy as sp

from ..graph.ir import Cluster, ancestors
from ..ops import REGISTRY
from ..pipeline import Compiled
from .dot import COLORS, FONT, _edge_style, _identifier, _node_label, _node_name, _node_style, _number
from .readable import readable


def to_block_dot(compiled: Compiled) -> str:
    """DOT source of the block-level view; byte-identical for the same spec."""
    graph = compiled.graph
    clusters: dict[str, Cluster] = graph.graph["clusters"]
    owner = {node_id: _outer_block(clusters, data["op"].cluster) for node_id, data in graph.nodes(data=True)}
    dot = graphviz.Digraph(name=_identifier(compiled.name), graph_attr={
        "label": f"{compiled.name} (blocks)", "labelloc": "t", "fontname": FONT, "fontsize": "18",
        "rankdir": "TB", "nodesep": "0.3", "ranksep": "0.35"},
        node_attr={"shape": "box", "style": "rounded,filled", "fontname": FONT, "fontsize": "10"},
        edge_attr={"fontname": FONT, "fontsize": "9", "color": "#555555"})
    dot.node("tokens", "tokens", shape="plaintext", style="", fontsize="11")
    _place(dot, None, graph, clusters, owner)
    drawn = set()
    for source, target, data in graph.edges(data=True):
        ends = (owner[source] or source, owner[target] or target)
        if ends[0] != ends[1] and ends not in drawn:
            drawn.add(ends)
            dot.edge(*(_name(end, clusters) for end in ends), **_edge_style(data))
    for node_id, data in graph.nodes(data=True):
        if REGISTRY[data["op"].kind].token_input and not graph.in_degree(node_id):
            dot.edge("tokens", _name(owner[node_id] or node_id, clusters), label=" m ids")
    return dot.source


def _outer_block(clusters: dict[str, Cluster], cluster_id: str | None) -> str | None:
    """The outermost block call an op sits in (None for an op written at model or stack level)."""
    blocks = [c for c in ancestors(clusters, cluster_id) if clusters[c].kind == "block"]
    return blocks[-1] if blocks else None


BLOCK_NODE = "block "  # a block call's node in the block view: `block layers.attn` (the page finds it so)


def block_node(cluster_id: str) -> str:
    return BLOCK_NODE + cluster_id


def _name(end: str, clusters: dict[str, Cluster]) -> str:
    return block_node(end) if end in clusters else _node_name(end)


def _place(dot, parent: str | None, graph: nx.DiGraph, clusters: dict[str, Cluster], owner: dict) -> None:
    """The ops written at this level, the blocks called here as single nodes, the stacks as boxes."""
    for node_id, data in graph.nodes(data=True):
        if data["op"].cluster == parent and owner[node_id] is None:
            dot.node(_node_name(node_id), _node_label(graph, node_id, None), **_node_style(data["op"]))
    members = defaultdict(list)
    for node_id, block in owner.items():
        if block is not None:
            members[block].append(node_id)
    for cluster in (c for c in clusters.values() if c.parent == parent):
        if cluster.kind == "block":
            dot.node(_name(cluster.id, clusters), _block_label(graph, cluster, members[cluster.id]),
                     fillcolor=COLORS.get(cluster.component or "other", "#ffffff"))
            continue
        with dot.subgraph(name=f"cluster_{_identifier(cluster.id)}") as sub:
            sub.attr(label=f"{cluster.label} ×{readable(cluster.times)}" if cluster.kind == "repeat"
                     else cluster.label, style="rounded,bold", color="#333333", fontsize="13", labeljust="l")
            _place(sub, cluster.id, graph, clusters, owner)


def _block_label(graph: nx.DiGraph, cluster: Cluster, nodes: list[str]) -> str:
    """`attn: gqa`, its parameters and its matrix FLOPs per call (the ops inside it, once each)."""
    costs = [graph.nodes[n]["cost"] for n in nodes]
    params = sp.Add(*(c.params for c in costs))
    flops = sp.Add(*(c.flops_matrix for c in costs))
    lines = [cluster.label, f"{len(nodes)} op{'s' if len(nodes) != 1 else ''}"]  # the label names the block
    if params != 0:
        lines.append(f"{_number(params)} params")
    if flops != 0:
        lines += _wrapped(f"F = {readable(flops)}")
    return "\n".join(lines)


WIDTH, LINES = 72, 4  # a label's formula: wrapped at its terms, and cut after a few lines (`archcost formula`)


def _terms(text: str) -> list[str]:
    """The text split at its outermost ` + `: never inside a bracket or a case list."""
    terms, depth, start = [], 0, 0
    for i, char in enumerate(text):
        if char in "([{⌊⌈":
            depth += 1
        elif char in ")]}⌋⌉":
            depth -= 1
        if depth == 0 and text.startswith(" + ", i):
            terms.append(text[start:i])
            start = i + 3
    return [*terms, text[start:]]


def _wrapped(text: str) -> list[str]:
    """The formula in lines of about WIDTH characters, broken between terms; past LINES lines, a `+ …`."""
    lines = [""]
    for term in _terms(text):
        piece = term if not lines[-1] else f" + {term}"
        if lines[-1] and len(lines[-1]) + len(piece) > WIDTH:
            lines.append(f"+ {term}")
        else:
            lines[-1] += piece
    return lines if len(lines) <= LINES else [*lines[:LINES], "+ … (archcost formula)"]


__all__ = ["to_block_dot"]
