"""The source chapter's comparison tables (seed 002 §2.6.1): 2-A, 2-B, 2-C and 2-E for any specs.

Each table reads its models through views (name, options, architecture facts, reports, state at a length):
compiled models (views.CompiledView) or the formula cache (warm.CachedView) alike.
"""

from __future__ import annotations

from ..terms.quantities import EXPERT_FIGURES, reading
from .tables import Table, option_notes, params_table

GiB = 2**30


def view_of(model):
    """A model as the tables read it: a view (the formula cache's, or serving.views's) passes through, a compiled
    model is wrapped (imported then: a warm `compare` reads only cache entries, without sympy or networkx)."""
    if hasattr(model, "report"):
        return model
    from ..serving.views import view_of as compiled_view

    return compiled_view(model)


def architecture_table(models: list) -> Table:
    """Table 2-A: layers, width, attention and feed-forward composition, experts, depth connection."""
    header = ["model", "params (B)", "active (B)", "w/o lookups", "w/o vocab", "L", "d", "attention", "ffn", "E", "k",
              "in", "f", "depth"]
    rows = []
    for view in map(view_of, models):
        report, facts = view.report("decode"), view.facts
        rows.append([view.name, f"{report['params'] / 1e9:,.2f}", f"{report['params_active'] / 1e9:,.2f}",
                     f"{report['params_active_no_embedding'] / 1e9:,.2f}",
                     f"{report['params_active_no_vocabulary'] / 1e9:,.2f}", facts["layers"], facts["width"],
                     facts["attention"], facts["ffn"], *(facts["routed"] or ["—"] * 4), facts["depth"]])
    return Table("Table 2-A: architecture", header, rows, ["active: what one token's forward pass multiplies, top "
                                                            "k of E routed experts; w/o lookups: without the tables "
                                                            "tokens only read rows of (embedding, Engram); w/o "
                                                            "vocab: without the embedding and the head. Llama 4 "
                                                            "publishes the first, gpt-oss the second, MiniMax the "
                                                            "third",
                                                            "L: layers (attention blocks), d: their width; a "
                                                            "composition names each layer by its `select` arm, else "
                                                            "by its block; E routed experts, k of them a token, each "
                                                            "in → f → in; depth: how a layer's output reaches the "
                                                            "next (residual, hyper-connections, attention "
                                                            "residuals)"])


def prefill_table(models: list, tokens: int = 8192) -> Table:
    """Table 2-C: matrix TFLOPs of a B = 1 prefill, and routed-expert weights one token selects."""
    header = ["model", f"prefill {tokens:,} (TFLOPs)", "selected routed experts per token (GiB, bf16 as stored)"]
    rows = []
    views = list(map(view_of, models))
    for view in views:
        report = view.report("prefill", P=tokens)
        selected = "—" if not report["selected_expert_bytes"] else f"{report['selected_expert_bytes'] / GiB:,.3f}"
        rows.append([view.name, f"{report['flops_matrix'] / 1e12:,.2f}", selected])
    return Table("Table 2-C: prefill and selected expert weights (B = 1, S = 0, head on the last token)", header,
                 rows, _option_notes(views))


def _option_notes(views: list) -> list[str]:
    return option_notes(views[0].conventions, [(v.name, v.paths) for v in views])


def long_context_table(models: list, short: int = 8192, long: int = 1_048_575) -> Table:
    """Table 2-E: query-context FLOPs of one decode, and state before the call, at 8K and 1M history."""
    header = ["model", "context 8K (GFLOPs)", "context 1M (GFLOPs)", "state 8K (GiB)", "state 1M (GiB)"]
    rows = []
    views = list(map(view_of, models))
    for view in views:
        near, far = (view.report("decode", S=s)["context_flops"] for s in (short, long))
        rows.append([view.name, f"{near / 1e9:,.2f}", f"{far / 1e9:,.2f}",
                     f"{view.state_at(short) / GiB:,.3f}", f"{view.state_at(long) / GiB:,.3f}"])
    return Table("Table 2-E: query-context FLOPs and state under long context (one request, one new token)",
                 header, rows, [f"8K = {short:,} history positions, 1M = {long:,}; state counts the history "
                                "before the call", *_option_notes(views)])


def request_table(models: list, prompt: int = 128, returned: int = 4) -> Table:
    """§2.6.3: one request of P new tokens returning G, the matrix work of its prefill and G − 1 decodes."""
    header = ["model", "execution path", "request (TFLOPs)", "positions kept"]
    rows = []
    views = list(map(view_of, models))
    for view in views:
        paths = ", ".join(f"{k} = {v}" for k, v in view.paths.items()) or "as written"
        rows.append([view.name, paths, f"{_request_flops(view, prompt, returned) / 1e12:,.2f}",
                     f"{prompt + returned - 1:,}"])
    return Table(f"§2.6.3: one request, S = 0, P = {prompt}, G = {returned}, B = 1 (a prefill and {returned - 1} "
                 "decodes)", header, rows, _option_notes(views)[:1], text_columns=2)


def _request_flops(view, prompt: int, returned: int):
    """The request's matrix FLOPs as the section counts them: its prefill, then a decode at each history the
    returned tokens reach (the `request` phase's closed form gives the same for any G; four calls need no
    sum over decodes)."""
    first = view.report("prefill", P=prompt)["flops_matrix"]
    return first + sum(view.report("decode", S=prompt + step)["flops_matrix"] for step in range(returned - 1))


def stages_table(models: list, tokens: int = 8192, across: str | None = None) -> Table:
    """Table 2-D (compiled models only: it reads the graph op by op)."""
    from .stages import stages_table as by_stage

    return by_stage(models, tokens, across)


CHAPTER_TABLES = {"architecture": architecture_table, "params": None, "prefill": prefill_table,
                  "long-context": long_context_table, "stages": stages_table, "request": request_table}


# What each table reads of a model's reports (`stages` reads the graph op by op); the architecture facts,
# which `compare` also keeps in the formula cache, read the decode report's `experts`: reads_of adds them
READS = {"architecture": ("params", "params_active", "params_active_no_embedding", "params_active_no_vocabulary"),
         "params": ("params", "params_by_component"), "prefill": ("flops_matrix", "selected_expert_bytes"),
         "long-context": ("context_flops", "state_bytes"), "stages": (), "request": ("flops_matrix",)}


def reads_of(names) -> tuple[str, ...]:
    """What printing these tables reads of each model (quantities.reading), the facts' experts with it."""
    return reading([EXPERT_FIGURES, *(quantity for name in names for quantity in READS[name])])


def chapter_table(name: str, models: list, across: str | None = None) -> Table:
    if name == "params":
        return params_table([view_of(m).report("decode") for m in models])
    if name == "stages":
        return stages_table(models, across=across)
    return CHAPTER_TABLES[name](models)
