"""The cost graph as Graphviz DOT: blocks as clusters, stacks shown once with ×N, shapes on edges."""

from __future__ import annotations

import contextlib
import os
import sys
import tempfile
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

import graphviz
import networkx as nx
import sympy as sp

from ..compilation import Compiled
from ..graph.ir import Cluster, OpNode, ancestors, steered_ids
from ..ops import REGISTRY
from ..outputs import atomic_write, unknown_format
from .patterns import runs
from .readable import readable
from .units import grouped

COLORS = {
    "embedding_output": "#fff2cc",
    "attention": "#dae8fc",
    "dense_ffn": "#d5e8d4",
    "routed_experts": "#e1d5e7",
    "engram": "#f8cecc",
    "other": "#f5f5f5",
}
FONT = "Helvetica"


def to_dot(compiled: Compiled, marks: LayoutMarks | None = None) -> str:
    """DOT source; byte-identical for the same spec. `marks`, a layout's: the collective an edge carries
    (`all_reduce over tp`), drawn in red on that edge, and the part of each split op a card holds."""
    graph = compiled.graph
    clusters: dict[str, Cluster] = graph.graph["clusters"]
    members = _members(graph)
    children = _children(clusters)
    collapsed = {cid for cid in clusters if len(members[cid]) == 1 and not children[cid]}
    folded = runs(graph, clusters, children)

    dot = graphviz.Digraph(name=_identifier(compiled.name), graph_attr={
        "label": f"{compiled.name}", "labelloc": "t", "fontname": FONT, "fontsize": "18", "rankdir": "TB",
        "nodesep": "0.35", "ranksep": "0.45", "compound": "true"},
        node_attr={"shape": "box", "style": "rounded,filled", "fontname": FONT, "fontsize": "10"},
        edge_attr={"fontname": FONT, "fontsize": "9", "color": "#555555"})
    dot.node("tokens", "tokens", shape="plaintext", style="", fontsize="11")
    _fill(dot, None, graph, clusters, members, children, (collapsed, folded, marks.cards if marks else {}))
    drawn = set()
    for source, target, data in graph.edges(data=True):
        if folded.passes.get(source, 0) != folded.passes.get(target, 0) and source in folded.passes \
                and target in folded.passes:
            continue  # from one pass of a folded run to the next: the ×N says it
        ends = (folded.stands_for.get(source, source), folded.stands_for.get(target, target))
        if ends[0] != ends[1] and ends not in drawn:
            drawn.add(ends)
            style = edge_style(data, marks, (source, target))
            dot.edge(_node_name(ends[0]), _node_name(ends[1]), **style)
    for node_id, data in graph.nodes(data=True):
        if REGISTRY[data["op"].kind].token_input and not graph.in_degree(node_id):
            dot.edge("tokens", _node_name(node_id), label=" m ids")
    for source, target in steering(graph):
        ends = (folded.stands_for.get(source, source), folded.stands_for.get(target, target))
        if ends[0] != ends[1] and ends not in drawn:
            drawn.add(ends)
            dot.edge(_node_name(ends[0]), _node_name(ends[1]), **STEERS)
    return dot.source


def edge_style(data: dict, marks: LayoutMarks | None, edge: tuple[str, str]) -> dict[str, str]:
    """An edge's look: what flows along it, and in red the collective a layout puts on it."""
    style = _edge_style(data)
    if marks is None or edge not in marks.edges:
        return style
    return {**style, "label": f"{style['label']}\n{marks.edges[edge]}", "color": "#c0392b", "fontcolor": "#c0392b",
            "penwidth": "1.6"}


STEERS = {"label": " steers", "style": "dashed", "color": "#7f8c8d", "fontcolor": "#7f8c8d", "arrowhead": "odot"}


def steering(graph: nx.DiGraph) -> list[tuple[str, str]]:
    """(steering op, the op it steers) of every op's `steers`: a router's choice, a gate, sinks."""
    return [(node_id, target) for node_id, data in graph.nodes(data=True) for target in steered_ids(data["op"])
            if target in graph]


def _members(graph: nx.DiGraph) -> dict[str | None, list[str]]:
    members: dict[str | None, list[str]] = defaultdict(list)
    for node_id, data in graph.nodes(data=True):
        members[data["op"].cluster].append(node_id)
    return members


def _children(clusters: dict[str, Cluster]) -> dict[str | None, list[str]]:
    children: dict[str | None, list[str]] = defaultdict(list)
    for cluster in clusters.values():
        children[cluster.parent].append(cluster.id)
    return children


def _fill(dot, parent, graph, clusters, members, children, folding) -> None:
    collapsed, folded, cards = folding
    for node_id in members[parent]:
        owner = clusters.get(parent) if parent in collapsed else None
        label = _node_label(graph, node_id, owner) + (f"\n{cards[node_id]}" if node_id in cards else "")
        dot.node(_node_name(node_id), label, **_node_style(graph.nodes[node_id]["op"]))
    first, passes = folded.first.get(parent, ((), 0))
    for cluster_id in children[parent]:
        if cluster_id in folded.hidden or (cluster_id in first and cluster_id != first[0]):
            continue
        if cluster_id in first:  # a run of block calls written out: its first pass, once, with ×N
            with dot.subgraph(name=f"cluster_{_identifier(cluster_id)}_run") as run:
                run.attr(label=f"×{passes}", style="rounded,bold", color="#333333", fontsize="14", labeljust="l")
                for member in first:
                    _cluster(run, member, graph, clusters, members, children, folding)
            continue
        _cluster(dot, cluster_id, graph, clusters, members, children, folding)


def _cluster(dot, cluster_id, graph, clusters, members, children, folding) -> None:
    if cluster_id in folding[0]:
        _fill(dot, cluster_id, graph, clusters, members, children, folding)
        return
    with dot.subgraph(name=f"cluster_{_identifier(cluster_id)}") as sub:
        sub.attr(**_cluster_style(clusters[cluster_id], _replay(graph, cluster_id)))
        _fill(sub, cluster_id, graph, clusters, members, children, folding)


def _replay(graph: nx.DiGraph, cluster_id: str):
    """The replay window of a stage: the tail its ops share, if any."""
    clusters = graph.graph["clusters"]
    tails = {data["tail"] for _, data in graph.nodes(data=True)
             if data["tail"] is not None and cluster_id in ancestors(clusters, data["cluster"])}
    return next(iter(tails)) if len(tails) == 1 else None


def _cluster_style(cluster: Cluster, replay) -> dict[str, str]:
    if cluster.kind in ("repeat", "loop"):
        label = f"{cluster.label} ×{readable(cluster.times)}" + (" · one set of weights" if cluster.kind == "loop"
                                                                   else "")
        if replay is not None:
            label += f" · replays the last min(P, {readable(replay)}) positions"
        return {"label": label, "style": "rounded,bold", "color": "#333333", "fontsize": "14", "labeljust": "l"}
    return {"label": cluster.label, "style": "rounded,dashed", "color": "#888888", "fontsize": "11",
            "labeljust": "l"}


def _node_style(op: OpNode) -> dict[str, str]:
    style = {"fillcolor": COLORS.get(op.component, "#ffffff")}
    drawn_as = REGISTRY[op.kind].drawn_as
    if drawn_as != "box":
        style.update(shape=drawn_as, style="filled")
    return style


def _node_label(graph: nx.DiGraph, node_id: str, owner: Cluster | None) -> str:
    op: OpNode = graph.nodes[node_id]["op"]
    cost = graph.nodes[node_id]["cost"]
    title = f"{owner.label}" if owner is not None else op.label
    lines = [title, f"{op.kind} {_shape(op)}"]
    if cost.params != 0:
        lines.append(f"{_number(cost.params)} params")
    unit_cost = REGISTRY[op.kind].unit_cost
    if unit_cost is not None:  # the chapter's form: FLOPs per pair or per scanned entry (Table 2-4)
        flops, unit = unit_cost(op.args)
        lines.append(f"F = {_expr(flops)} per {unit}")
    elif cost.flops_matrix != 0:
        lines.append(f"F = {_expr(cost.flops_matrix)}")
    elif cost.flops_nonmatrix != 0:
        lines.append(f"F (non-matrix) = {_expr(cost.flops_nonmatrix)}")
    if cost.kv_bytes_per_token != 0:
        lines.append(f"{_expr(cost.kv_bytes_per_token)} B per token")
    return "\n".join(lines)


def _shape(op: OpNode) -> str:
    shape = REGISTRY[op.kind].diagram_shape
    return shape(op.args, _expr) if shape else f"width {_expr(op.out_width)}"


def _edge_style(data: dict) -> dict[str, str]:
    if data["kind"] == "state":
        return {"style": "dashed", "label": " state", "color": "#999999"}
    return {"label": f" {_expr(data['rows'])}×{_expr(data['width'])}"}


def _number(value: sp.Expr) -> str:
    return grouped(int(value)) if value.is_Integer else _expr(value)


def _expr(value) -> str:
    return readable(value)


def _node_name(node_id: str) -> str:
    return node_id


def _identifier(text: str) -> str:
    return "".join(c if c.isalnum() else "_" for c in text)


@dataclass(frozen=True)
class LayoutMarks:
    """What a layout (`tp=8,ep=8`) draws on a diagram: the collective each edge carries, and the part of each
    split op one card holds (`1/8 of it on a card`), so a card's widths are read, not the unsplit ones."""

    edges: dict
    cards: dict


def layout_marks(compiled: Compiled, layout_text: str) -> LayoutMarks:
    from ..cards.degrees import parse_layout
    from ..cards.placement import placed

    layout = parse_layout(layout_text)
    placement = placed(compiled, layout.degrees(formats=compiled.ir.formats))
    edges: dict[tuple[str, str], str] = {}
    for collective in placement.collectives:
        name = f"{collective.kind.replace('_', '-')} over {collective.group}"
        edges[collective.edge] = f"{edges[collective.edge]}, {name}" if collective.edge in edges else name
    cards = {node_id: f"a card: {readable(given.hold)} of it ({given.group})"
             for node_id, given in placement.shares.items() if given.hold != 1}
    return LayoutMarks(edges, cards)


def write(compiled: Compiled, path: Path, marks: LayoutMarks | None = None) -> None:
    """Write DOT, SVG or PNG by the file's suffix; SVG/PNG are laid out by the bundled Graphviz."""
    write_source(to_dot(compiled, marks), path)


def drawable(path: Path) -> str:
    """The format a diagram file's suffix asks for: dot, svg or png (anything else is E109)."""
    suffix = Path(path).suffix.lower().lstrip(".")
    if suffix not in ("dot", "svg", "png"):
        raise unknown_format(path, (".dot", ".svg", ".png"))
    return suffix


def write_source(source: str, path: Path) -> None:
    """Write DOT text, or its SVG/PNG layout, atomically."""
    suffix = drawable(path)
    if suffix == "dot":
        atomic_write(path, lambda target: target.write_text(source))
    else:
        image = render(source, suffix)
        atomic_write(path, lambda target: target.write_bytes(image))


def render(source: str, image_format: str) -> bytes:
    """DOT laid out by the Graphviz bundled with pygraphviz, as SVG or PNG bytes."""
    import pygraphviz

    with _native_stderr_filtered("Fontconfig warning"):
        return pygraphviz.AGraph(string=source).draw(format=image_format, prog="dot")


@contextlib.contextmanager
def _native_stderr_filtered(noise: str):
    """Drop one known harmless line that the bundled Graphviz's fontconfig prints from C; keep the rest."""
    sys.stderr.flush()
    saved = os.dup(2)
    with tempfile.TemporaryFile() as capture:
        os.dup2(capture.fileno(), 2)
        try:
            yield
        finally:
            os.dup2(saved, 2)
            os.close(saved)
            capture.seek(0)
            kept = [line for line in capture.read().decode(errors="replace").splitlines() if noise not in line]
            if kept:
                print("\n".join(kept), file=sys.stderr)
