"""A compiled model as the chapter's tables read it: its name, options, architecture facts, reports, state."""

from __future__ import annotations

from collections import Counter

import sympy as sp

from ..graph.compiled import Compiled
from ..graph.ir import Cluster
from ..numbers import forms
from ..numbers.building import from_sympy
from ..numbers.evaluate import report_data, report_read, state_bytes_at
from ..numbers.leaves import NAMES
from ..ops import REGISTRY
from ..terms.quantities import EXPERT_FIGURES
from ..terms.scenario import Scenario
from ..terms.symbols import H, S

FFN = ("dense_ffn", "routed_experts")


class CompiledView:
    """Tables read models through views: this one compiles and evaluates; warm.CachedView reads the cache.

    A view told what its tables read (`reads`, quantities.reading; the architecture facts' `experts` with it)
    builds the forms of those quantities alone: the chapter's tables print ten of the report's quantities."""

    def __init__(self, compiled: Compiled, reads: tuple[str, ...] | None = None):
        self.compiled, self.name, self.phases, self.reads = compiled, compiled.name, set(), reads
        self.model_name = compiled.name  # the spec's own, before `compare` tells two of a name apart
        self.conventions, self.paths = compiled.conventions_named(), compiled.execution_paths()

    def report(self, phase: str, **shape) -> dict:
        self.phases.add(phase)
        return {**report_read(self.compiled, phase, Scenario(**shape), self.reads), "model": self.name}

    def state_at(self, history: int):
        """M(H): the state a decode leaves when it brings the history to `history` — the decode report's
        state_bytes, from the evaluator the tables already built for the phase."""
        if history < 1:
            return state_bytes_at(self.compiled, history)
        return self.report("decode", S=history - 1)["state_bytes"]

    @property
    def facts(self) -> dict:
        return architecture_facts(self.compiled, self.reads)


def architecture_facts(compiled: Compiled, reads: tuple[str, ...] | None = None) -> dict:
    """Table 2-A's words for a model: layers and their composition, width, experts, depth connection (its
    experts from the decode report of every quantity, or of those `reads` names, which must hold `experts`)."""
    clusters = compiled.ir.clusters
    layers, attention = _composition(_outermost(clusters, ("attention",)), clusters, compiled.graph)
    _, ffn = _composition(_outermost(clusters, FFN), clusters, compiled.graph)
    routed = report_data(compiled, "decode", Scenario(), reads)[EXPERT_FIGURES]
    first = routed[0] if routed else None
    depth = sorted({c.block for c in clusters.values() if c.block in ("attn_res", "mhc")}) or ["residual"]
    return {
        "layers": str(layers),
        "width": sp.sstr(_model_width(compiled)),
        "attention": attention,
        "ffn": ffn,
        "routed": None if first is None else [str(first[k]) for k in ("experts", "top", "width", "hidden")],
        "depth": ", ".join(depth),
    }


def state_form(compiled: Compiled):
    """M(H) for one request as a form in S (standing for H), or None when it is not plain."""
    try:
        return from_sympy(sp.Add(compiled.total("state_bytes")).xreplace({H: S}), NAMES)
    except forms.NotPlain:
        return None


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


def _composition(blocks: list[Cluster], clusters: dict[str, Cluster], graph) -> tuple[int, str]:
    """`2 swa + 4 full + 4 reindex + 30 reuse`: layers by `select` arm where there is one, else by block; a block
    called in different forms (a window, a chunk, or none) is split by form, each named where it first stands:
    `36 chunked_layers + 12 global_attn`."""
    named = [(_arm(cluster, clusters) or cluster.block, cluster) for cluster in blocks]
    forms = {name: {_form(c, graph) for n, c in named if n == name} for name, _ in named}
    counts: Counter[str] = Counter()
    first_place: dict[tuple, str] = {}
    for name, cluster in named:
        if len(forms[name]) > 1 and _arm(cluster, clusters) is None:
            name = first_place.setdefault((name, _form(cluster, graph)), _place(cluster, clusters))
        counts[name] += int(cluster.multiplicity)
    return sum(counts.values()), " + ".join(f"{n} {name}" for name, n in counts.items()) or "—"


def _arm(cluster: Cluster, clusters: dict[str, Cluster]) -> str | None:
    parent = clusters.get(cluster.parent) if cluster.parent else None
    return parent.id.rsplit(".", 1)[-1].removesuffix("_layers") if parent and parent.kind == "select" else None


def _form(cluster: Cluster, graph) -> tuple:
    """What a block instance holds: its ops' kinds and shapes, each under its name inside the block."""
    from ..ops import shape_text

    inside = cluster.id + "."
    return tuple(sorted((node_id.removeprefix(inside), data["op"].kind, shape_text(data["op"]))
                        for node_id, data in graph.nodes(data=True) if node_id.startswith(inside)))


def _place(cluster: Cluster, clusters: dict[str, Cluster]) -> str:
    """The name a reader knows a layer by: its own stack when that is nested in another, else its label."""
    parent = clusters.get(cluster.parent) if cluster.parent else None
    grandparent = clusters.get(parent.parent) if parent and parent.parent else None
    if parent and parent.kind in ("repeat", "loop") and grandparent and grandparent.kind in ("repeat", "loop"):
        return parent.label
    return cluster.id.rsplit(".", 1)[-1]


def _model_width(model: Compiled):
    """d: the width of the first op that reads the token ids (the embedding)."""
    return next((data["op"].out_width for _, data in model.graph.nodes(data=True)
                 if REGISTRY[data["op"].kind].token_input), "—")


def view_of(model):
    """A model as the tables read it: a view passes through, a compiled model is wrapped."""
    if hasattr(model, "report"):
        return model
    return CompiledView(model)
