"""The cost graph as Graphviz DOT: blocks as clusters, stacks shown once with ×N, shapes on edges."""

from __future__ import annotations

import contextlib
import os
import sys
import tempfile
from collections import defaultdict
from pathlib import Path

import graphviz
import networkx as nx
import sympy as sp

from archcost.dsl.errors import ArchError, Diagnostic

from ..ir import Cluster, OpNode
from ..ops.base import describe_terms
from ..pipeline import Compiled
from .files import atomic_write
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


def to_dot(compiled: Compiled) -> str:
    """DOT source; byte-identical for the same spec."""
    graph = compiled.graph
    clusters: dict[str, Cluster] = graph.graph["clusters"]
    members = _members(graph)
    children = _children(clusters)
    collapsed = {cid for cid in clusters if len(members[cid]) == 1 and not children[cid]}

    dot = graphviz.Digraph(name=_identifier(compiled.name), graph_attr={
        "label": f"{compiled.name}", "labelloc": "t", "fontname": FONT, "fontsize": "18", "rankdir": "TB",
        "nodesep": "0.35", "ranksep": "0.45", "compound": "true"},
        node_attr={"shape": "box", "style": "rounded,filled", "fontname": FONT, "fontsize": "10"},
        edge_attr={"fontname": FONT, "fontsize": "9", "color": "#555555"})
    dot.node("tokens", "tokens", shape="plaintext", style="", fontsize="11")
    _fill(dot, None, graph, clusters, members, children, collapsed)
    for source, target, data in graph.edges(data=True):
        dot.edge(_node_name(source), _node_name(target), **_edge_style(data))
    for node_id, data in graph.nodes(data=True):
        if data["op"].kind == "lookup" and not data["op"].inputs:
            dot.edge("tokens", _node_name(node_id), label=" m ids")
    return dot.source


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


def _fill(dot, parent, graph, clusters, members, children, collapsed) -> None:
    for node_id in members[parent]:
        owner = clusters.get(parent) if parent in collapsed else None
        dot.node(_node_name(node_id), _node_label(graph, node_id, owner), **_node_style(graph.nodes[node_id]["op"]))
    for cluster_id in children[parent]:
        if cluster_id in collapsed:
            _fill(dot, cluster_id, graph, clusters, members, children, collapsed)
            continue
        with dot.subgraph(name=f"cluster_{_identifier(cluster_id)}") as sub:
            sub.attr(**_cluster_style(clusters[cluster_id], _replay(graph, cluster_id)))
            _fill(sub, cluster_id, graph, clusters, members, children, collapsed)


def _replay(graph: nx.DiGraph, cluster_id: str):
    """The replay window of a stage: the tail its ops share, if any."""
    tails = {data["op"].tail for _, data in graph.nodes(data=True)
             if data["op"].id.startswith(cluster_id + ".") and data["op"].tail is not None}
    return next(iter(tails)) if len(tails) == 1 else None


def _cluster_style(cluster: Cluster, replay) -> dict[str, str]:
    if cluster.kind == "repeat":
        label = f"{cluster.label} ×{sp.sstr(cluster.times)}"
        if replay is not None:
            label += f" · replays the last min(P, {sp.sstr(replay)}) positions"
        return {"label": label, "style": "rounded,bold", "color": "#333333", "fontsize": "14", "labeljust": "l"}
    return {"label": cluster.label, "style": "rounded,dashed", "color": "#888888", "fontsize": "11",
            "labeljust": "l"}


def _node_style(op: OpNode) -> dict[str, str]:
    style = {"fillcolor": COLORS.get(op.component, "#ffffff")}
    if op.kind in ("cache", "recurrent", "conv"):
        style.update(shape="cylinder", style="filled")
    if op.kind == "attend":
        style.update(shape="hexagon", style="filled")
    return style


def _node_label(graph: nx.DiGraph, node_id: str, owner: Cluster | None) -> str:
    op: OpNode = graph.nodes[node_id]["op"]
    cost = graph.nodes[node_id]["cost"]
    title = f"{owner.label}" if owner is not None else op.label
    lines = [title, f"{op.kind} {_shape(op)}"]
    if cost.params != 0:
        lines.append(f"{_number(cost.params)} params")
    if op.kind == "attend":  # the chapter's form: FLOPs per query-entry pair (Table 2-4: 4·64·512·A)
        lines.append(f"F = {_expr(2 * op.args.heads * (op.args.qk + op.args.v))} per pair")
    elif op.kind == "index":
        lines.append(f"F = {_expr(2 * op.args.heads * op.args.dim)} per scanned entry")
    elif cost.flops_matrix != 0:
        lines.append(f"F = {_expr(cost.flops_matrix)}")
    elif cost.flops_nonmatrix != 0:
        lines.append(f"F (non-matrix) = {_expr(cost.flops_nonmatrix)}")
    if cost.state_per_token != 0:
        lines.append(f"{_expr(cost.state_per_token)} B per token")
    return "\n".join(lines)


def _shape(op: OpNode) -> str:
    a = op.args
    match op.kind:
        case "linear":
            count = f" ×{_expr(a.count)}" if a.count != 1 else ""
            return f"{_expr(a.signature[0])} → {_expr(a.signature[1])}{count}"
        case "lookup":
            return f"{_expr(a.signature[0])} × {_expr(a.signature[1])}"
        case "attend":
            return f"{_expr(a.heads)} heads · qk {_expr(a.qk)} · v {_expr(a.v)} · {describe_terms(a.over)}"
        case "cache":
            return f"{describe_terms(a.growth)} · width {_expr(a.width)}"
        case "index":
            return f"{_expr(a.heads)} heads × {_expr(a.dim)} · one per {_expr(a.ratio)} · {a.over}"
        case "recurrent":
            return f"{_expr(a.heads)} × {_expr(a.dk)}×{_expr(a.dv)} state · prefill {a.prefill}"
        case "conv":
            return f"{_expr(a.channels)} channels × {_expr(a.kernel)} taps"
    return f"width {_expr(op.out_width)}"


def _edge_style(data: dict) -> dict[str, str]:
    if data["kind"] == "state":
        return {"style": "dashed", "label": " state", "color": "#999999"}
    return {"label": f" {_expr(data['rows'])}×{_expr(data['width'])}"}


def _number(value: sp.Expr) -> str:
    return grouped(int(value)) if value.is_Integer else _expr(value)


def _expr(value) -> str:
    return sp.sstr(value, order="none").replace("*", "·")


def _node_name(node_id: str) -> str:
    return node_id


def _identifier(text: str) -> str:
    return "".join(c if c.isalnum() else "_" for c in text)


def write(compiled: Compiled, path: Path) -> None:
    """Write DOT, SVG or PNG by the file's suffix; SVG/PNG are laid out by the bundled Graphviz."""
    write_source(to_dot(compiled), path)


def drawable(path: Path) -> str:
    """The format a diagram file's suffix asks for: dot, svg or png (anything else is E401)."""
    suffix = Path(path).suffix.lower().lstrip(".")
    if suffix not in ("dot", "svg", "png"):
        raise ArchError([Diagnostic(code="E401", message=f"cannot draw `{path}`: use .dot, .svg or .png")])
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
