"""What the page shows when a diagram node is clicked: for each node the diagram draws, its op (or its
block), its shape and the line of the spec it came from.

An op written in a standard-library block has its own span in that library file; the line the page
highlights is the spec's own statement that brought it in — the innermost block call, `repeat` or arm
written in the spec (a diagram node's name is its op id, or `block <cluster>` in the block view)."""

from __future__ import annotations

from archcost.compiler.graph.ir import ancestors
from archcost.compiler.ops import shape_text
from archcost.compiler.render.blocks import block_node


def nodes(compiled, spec_file: str) -> dict[str, dict]:
    """{diagram node name: {kind, label, shape, component, span, defined}} for ops and block calls."""
    clusters = compiled.graph.graph["clusters"]
    found = {}
    for node_id, data in compiled.graph.nodes(data=True):
        op = data["op"]
        found[node_id] = {"kind": op.kind, "label": op.label, "shape": shape_text(op), "component": op.component,
                          "op": node_id, "span": _spec_span(op.span, op.cluster, clusters, spec_file),
                          "defined": _where(op.span)}
    for cluster_id, cluster in clusters.items():
        if cluster.kind == "block":
            found[block_node(cluster_id)] = {"kind": "block", "label": cluster.label, "shape": cluster.block,
                                            "component": cluster.component, "op": None,
                                            "span": _spec_span(cluster.span, cluster.parent, clusters, spec_file),
                                            "defined": _where(cluster.span)}
    return found


def _spec_span(span, cluster_id: str | None, clusters: dict, spec_file: str) -> dict | None:
    """The span itself when it lies in the spec, else the innermost enclosing statement that does."""
    for candidate in [span, *(clusters[c].span for c in ancestors(clusters, cluster_id))]:
        if candidate is not None and candidate.file == spec_file:
            return candidate.model_dump()
    return None


def _where(span) -> dict | None:
    return None if span is None else {"file": span.file, "line": span.line}
