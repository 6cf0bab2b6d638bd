"""The source chapter's comparison tables (seed 002 §2.6.1): 2-A, 2-B, 2-C and 2-E for any specs."""

from __future__ import annotations

from collections import Counter

import sympy as sp

from archcost.dsl.errors import ArchError, did_you_mean

from ..evaluate import evaluate, state_bytes_at
from ..ir import Cluster, outermost
from ..ops import REGISTRY
from ..pipeline import Compiled, with_path
from ..scenario import Scenario
from .tables import Table, params_table

GiB = 2**30
FFN = ("dense_ffn", "routed_experts")


def _outermost(clusters: dict[str, Cluster], components: tuple[str, ...]) -> list[Cluster]:
    """Block instances of these components that no other such instance contains."""
    chosen = [c for c in clusters.values() if c.kind == "block" and c.component in components]
    ids = {c.id for c in chosen}

    def nested(cluster: Cluster) -> bool:
        parent = cluster.parent
        while parent is not None:
            if parent in ids:
                return True
            parent = clusters[parent].parent
        return False

    return [c for c in chosen if not nested(c)]


def _composition(blocks: list[Cluster], clusters: dict[str, Cluster]) -> tuple[int, str]:
    """`2 swa + 4 full + 4 reindex + 30 reuse`: layers by `select` arm where there is one, else by block."""
    counts: Counter[str] = Counter()
    for cluster in blocks:
        parent = clusters.get(cluster.parent) if cluster.parent else None
        name = parent.id.rsplit(".", 1)[-1].removesuffix("_layers") if parent and parent.kind == "select" \
            else cluster.block
        counts[name] += int(cluster.multiplicity)
    return sum(counts.values()), " + ".join(f"{n} {name}" for name, n in counts.items()) or "—"


def _model_width(model: Compiled):
    """d: the width of the first op that reads the token ids (the embedding)."""
    return next((data["op"].out_width for _, data in model.graph.nodes(data=True)
                 if REGISTRY[data["op"].kind].token_input), "—")


def architecture_table(models: list[Compiled]) -> Table:
    """Table 2-A: layers, width, attention and feed-forward composition, experts, depth connection."""
    header = ["model", "params (B)", "active (B)", "w/o lookups", "layers L", "width d", "attention", "feed-forward",
              "experts E", "top k", "expert width in", "expert f", "depth connection"]
    rows = []
    for model in models:
        report = evaluate(model, "decode", Scenario())
        clusters = model.ir.clusters
        layers, attention = _composition(_outermost(clusters, ("attention",)), clusters)
        _, ffn = _composition(_outermost(clusters, FFN), clusters)
        first = report.experts[0] if report.experts else None
        depth = sorted({c.block for c in clusters.values() if c.block in ("attn_res", "mhc")}) or ["residual"]
        rows.append([model.name, f"{report.params / 1e9:,.2f}", f"{report.params_active / 1e9:,.2f}",
                     f"{report.params_active_no_embedding / 1e9:,.2f}", str(layers), sp.sstr(_model_width(model)),
                     attention, ffn, *(["—"] * 4 if first is None else
                                       [str(first.experts), str(first.top), str(first.width), str(first.hidden)]),
                     ", ".join(depth)])
    return Table("Table 2-A: architecture", header, rows, ["active: what one token's forward pass multiplies, top "
                                                            "k of E routed experts, with the tables tokens only "
                                                            "read rows of (embedding, Engram) and without them: "
                                                            "Llama 4 publishes the first, gpt-oss the second",
                                                            "layers count attention blocks; a composition names "
                                                            "each layer by its `select` arm, else by its block"])


def prefill_table(models: list[Compiled], tokens: int = 8192) -> Table:
    """Table 2-C: matrix TFLOPs of a B = 1 prefill, and routed-expert weights one token selects."""
    header = ["model", f"prefill {tokens:,} (TFLOPs)", "selected routed experts per token (GiB, bf16 as stored)"]
    rows = []
    for model in models:
        report = evaluate(model, "prefill", Scenario(P=tokens))
        selected = "—" if not report.selected_expert_bytes else f"{report.selected_expert_bytes / GiB:,.3f}"
        rows.append([model.name, f"{report.flops_matrix / 1e12:,.2f}", selected])
    return Table("Table 2-C: prefill and selected expert weights (B = 1, S = 0, head on the last token)", header,
                 rows, _option_notes(models))


def _option_notes(models: list[Compiled]) -> list[str]:
    """The run's conventions once, then each model's own execution paths."""
    shared = models[0].conventions()
    notes = [f"options: {', '.join(f'{k} = {v}' for k, v in shared.items())}"]
    notes += [f"{m.name}: {', '.join(f'{k} = {v}' for k, v in m.ir.paths.items())}" for m in models if m.ir.paths]
    return notes


def long_context_table(models: list[Compiled], short: int = 8192, long: int = 1_048_575) -> Table:
    """Table 2-E: query-context FLOPs of one decode, and state before the call, at 8K and 1M history."""
    header = ["model", "context 8K (GFLOPs)", "context 1M (GFLOPs)", "state 8K (GiB)", "state 1M (GiB)"]
    rows = []
    for model in models:
        near, far = (evaluate(model, "decode", Scenario(S=s)).context_flops for s in (short, long))
        rows.append([model.name, f"{near / 1e9:,.2f}", f"{far / 1e9:,.2f}",
                     f"{state_bytes_at(model, short) / GiB:,.3f}", f"{state_bytes_at(model, long) / GiB:,.3f}"])
    return Table("Table 2-E: query-context FLOPs and state under long context (one request, one new token)",
                 header, rows, [f"8K = {short:,} history positions, 1M = {long:,}; state counts the history "
                                "before the call", *_option_notes(models)])


def _stage_of(graph, node_id: str) -> str:
    """A prefill's stage: the model-level stack an op sits in, or the embedding, head and norms."""
    top = outermost(graph.graph["clusters"], graph.nodes[node_id]["cluster"])
    return top.id if top is not None and top.kind == "repeat" else "embedding, head and norms"


def _every_position(model: Compiled) -> list[str]:
    """Ops of a replaying stack that are not replayed themselves."""
    graph, clusters = model.graph, model.graph.graph["clusters"]
    top = {node_id: outermost(clusters, data["cluster"]) for node_id, data in graph.nodes(data=True)}
    replaying = {top[node_id] for node_id, data in graph.nodes(data=True) if data["tail"] is not None}
    return [node_id for node_id, data in graph.nodes(data=True) if data["tail"] is None and top[node_id] in replaying]


def stages_table(models: list[Compiled], tokens: int = 8192, across: str | None = None) -> Table:
    """Table 2-D: a B = 1 prefill's matrix TFLOPs by stage, one column per model and execution path."""
    from ..evaluate import by_op

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


def request_table(models: list[Compiled], prompt: int = 128, returned: int = 4) -> Table:
    """§2.6.3: one request of P new tokens returning G, the matrix work of its prefill and G − 1 decodes."""
    header = ["model", "execution path", "request (TFLOPs)", "positions kept"]
    rows = []
    for model in models:
        report = evaluate(model, "request", Scenario(P=prompt, G=returned))
        paths = ", ".join(f"{k} = {v}" for k, v in model.ir.paths.items()) or "as written"
        rows.append([model.name, paths, f"{report.flops_matrix / 1e12:,.2f}", f"{report.positions_retained:,}"])
    return Table(f"§2.6.3: one request, S = 0, P = {prompt}, G = {returned}, B = 1 (a prefill and {returned - 1} "
                 "decodes)", header, rows, _option_notes(models)[:1], text_columns=2)


CHAPTER_TABLES = {"architecture": architecture_table, "params": None, "prefill": prefill_table,
                  "long-context": long_context_table, "stages": stages_table, "request": request_table}


def chapter_table(name: str, models: list[Compiled], across: str | None = None) -> Table:
    if name == "params":
        return params_table([evaluate(m, "decode", Scenario()) for m in models])
    if name == "stages":
        return stages_table(models, across=across)
    return CHAPTER_TABLES[name](models)
