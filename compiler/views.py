"""A compiled model as the chapter's tables read it: its name, options, architecture facts, reports, state."""

from __future__ import annotations

from collections import Counter

import sympy as sp

from . import forms
from .evaluate import evaluate, state_bytes_at
from .ir import Cluster
from .leaves import NAMES
from .ops import REGISTRY
from .pipeline import Compiled
from .scenario import Scenario
from .symbols import H, S

FFN = ("dense_ffn", "routed_experts")


class CompiledView:
    """Tables read models through views: this one compiles and evaluates; warm.CachedView reads the cache."""

    def __init__(self, compiled: Compiled):
        self.compiled, self.name, self.phases = compiled, compiled.name, set()
        self.model_name = compiled.name  # the spec's own, before `compare` tells two of a name apart
        self.conventions, self.paths = compiled.conventions(), compiled.execution_paths()

    def report(self, phase: str, **shape) -> dict:
        self.phases.add(phase)
        data = evaluate(self.compiled, phase, Scenario(**shape)).model_dump(exclude_none=True)
        return {**data, "model": self.name}

    def state_at(self, history: int):
        return state_bytes_at(self.compiled, history)

    @property
    def facts(self) -> dict:
        return architecture_facts(self.compiled)


def architecture_facts(compiled: Compiled) -> dict:
    """Table 2-A's words for a model: layers and their composition, width, experts, depth connection."""
    clusters = compiled.ir.clusters
    layers, attention = _composition(_outermost(clusters, ("attention",)), clusters)
    _, ffn = _composition(_outermost(clusters, FFN), clusters)
    routed = evaluate(compiled, "decode", Scenario()).experts
    first = routed[0] if routed else None
    depth = sorted({c.block for c in clusters.values() if c.block in ("attn_res", "mhc")}) or ["residual"]
    return {"layers": str(layers), "width": sp.sstr(_model_width(compiled)), "attention": attention, "ffn": ffn,
            "routed": None if first is None else [str(v) for v in (first.experts, first.top, first.width, first.hidden)],
            "depth": ", ".join(depth)}


def state_form(compiled: Compiled):
    """M(H) for one request as a form in S (standing for H), or None when it is not plain."""
    try:
        return forms.from_sympy(sp.Add(compiled.total("state_bytes")).xreplace({H: S}), NAMES)
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
