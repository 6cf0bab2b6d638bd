"""Table 2-D: a prefill's matrix FLOPs by stage (the model-level stacks), one column per model and path."""

from __future__ import annotations

from archcost.dsl.errors import ArchError, did_you_mean

from ..compilation import Compiled, with_path
from ..graph.ir import outermost
from ..terms.scenario import Scenario
from .table import Table


def _stage_of(graph, node_id: str) -> str:
    """A prefill's stage: the model-level stack an op sits in, or the embedding, head and norms."""
    top = outermost(graph.graph["clusters"], graph.nodes[node_id]["cluster"])
    return top.id if top is not None and top.kind in ("repeat", "loop") else "embedding, head and norms"


def _every_position(model: Compiled) -> list[str]:
    """Ops of a replaying stack that are not replayed themselves."""
    graph, clusters = model.graph, model.graph.graph["clusters"]
    top = {node_id: outermost(clusters, data["cluster"]) for node_id, data in graph.nodes(data=True)}
    replaying = {top[node_id] for node_id, data in graph.nodes(data=True) if data["tail"] is not None}
    return [node_id for node_id, data in graph.nodes(data=True) if data["tail"] is None and top[node_id] in replaying]


def stages_table(models: list[Compiled], tokens: int = 8192, across: str | None = None) -> Table:
    """Table 2-D: a B = 1 prefill's matrix TFLOPs by stage, one column per model and execution path."""
    from ..numbers.evaluate import by_op

    variants = []
    for model in models:
        if across and across not in model.ir.path_choices:
            raise ArchError([model.ir.sources.diagnostic(
                "E308", f"`{model.name}` has no option `{across}`", None,
                hint=did_you_mean(across, model.ir.path_choices)
                or f"its options: {', '.join(model.ir.path_choices) or 'none'}")])
        words = model.ir.path_choices.get(across, [None]) if across else [None]
        variants += [(model.name if word is None else f"{model.name} · {across} = {word}",
                      model if word is None else with_path(model, across, word)) for word in words]
    # ops that keep running on every position inside a replaying stage (a global KV source) get a row
    # of their own, in every column, so the paths compare stage by stage
    apart = {node_id for _, variant in variants for node_id in _every_position(variant)}
    columns: list[tuple[str, dict[str, float]]] = []
    for name, variant in variants:
        split: dict[str, float] = {}
        for op in by_op(variant, "prefill", Scenario(P=tokens)):
            stage = _stage_of(variant.graph, op.op)
            stage = f"{stage}: every position" if op.op in apart else stage
            split[stage] = split.get(stage, 0) + op.flops_matrix_all_layers
        split["total"] = sum(split.values())
        columns.append((name, split))
    order = list(dict.fromkeys(stage for _, split in columns for stage in split if stage != "total"))
    header = ["stage", *(name for name, _ in columns)]
    rows = [[stage, *(f"{split[stage] / 1e12:,.3f}" if stage in split else "—" for _, split in columns)]
            for stage in [*order, "total"]]
    return Table(f"Table 2-D: a {tokens:,}-token prefill by stage (TFLOPs, B = 1, head on the last token)",
                 header, rows, ["`every position`: a replaying stage's ops that still run on all P positions "
                                "(its global KV source)"])
