"""The resolved graph as text, one op per line: what `archcost check --emit graph` prints."""

from __future__ import annotations

import json

from archcost.dsl.loader import Program

from ..compilation import Compiled
from ..ops import shape_text, shown  # noqa: F401  (shape_text: re-exported for the renderers)


def graph_listing(compiled: Compiled) -> str:
    graph = compiled.graph
    rows = [("op", "kind", "×", "in → out", "reads", "params", "F per instance")]
    for node_id, data in graph.nodes(data=True):
        op, cost = data["op"], data["cost"]
        flops = cost.flops_matrix if cost.flops_matrix != 0 else cost.flops_nonmatrix
        rows.append((node_id, op.kind, _text(op.multiplicity), f"{_text(op.in_width)} → {_text(op.out_width)}",
                     ", ".join(graph.predecessors(node_id)) or "tokens", _text(cost.params), _text(flops)))
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    lines = ["  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip() for row in rows]
    header = f"{compiled.name}: {len(compiled.ir.nodes)} ops, {len(compiled.ir.clusters)} clusters"
    return "\n".join([header, "", *lines]) + "\n"


def ast_listing(program: Program) -> str:
    return json.dumps(program.entry.model_dump(), indent=1) + "\n"


def _text(value) -> str:
    return shown(value)
