"""A training step's collectives on one card: the model-parallel ones of every micro-batch's forward, backward
and recomputed forward, and the data-parallel gradient sync once a step.

Each collective of a forward pass (placement.py: TP all-reduces, SP's reduce-scatters and all-gathers, CP's
key/value gathers, EP's dispatch and combine) has a mirror of the same bytes in the backward pass, for the
gradients of the same tensors (Narayanan et al. 2021 §3.2: "all-reduced ... twice each in the forward and
backward pass"); full recomputation runs the forward's collectives again; a pipeline stage sends activations
forward and gradients back, once each per micro-batch. The data-parallel replicas all-reduce their gradients
(ZeRO 0), or reduce-scatter them and all-gather the updated weights (ZeRO 1 and 2, the same bytes), and ZeRO 3
all-gathers the weights again in the forward and the backward pass (Rajbhandari et al. 2019 §7: 1.5 × the
all-reduce). Expert weights sync over the cards holding the same experts.
"""

from __future__ import annotations

from pydantic import BaseModel

from ..cards.collectives import ring_steps, sent_bytes
from ..cards.layout import card_flows


class Traffic(BaseModel):
    """One group's collectives on one card over the step."""

    group: str                 # tp, cp, ep, nodes, pp, dp, dp_experts
    sent_bytes: int
    steps: int
    network_bytes: int = 0     # the part that goes between servers
    network_steps: int = 0


def step_traffic(compiled, placement, degrees, layout, setup, stage: str, count: int, states,
                 micro) -> list[Traffic]:
    """Every collective one card of `stage` takes part in over a step of `count` micro-batches."""
    flows = card_flows(compiled, placement, degrees, stage)
    values = micro.many(("train flows", degrees, stage), [(e, "flops_matrix") for f in flows for e in f[:2]])
    groups: dict[str, list] = {}
    for index, (_, _, network, group) in enumerate(flows):
        # a stage sends once forward and once back per chunk it holds (Narayanan et al. 2021 §2.2.2: the
        # interleaved schedule's communication "increases by v")
        passes = 2 * layout.vp if group == "pp" else 2 + (setup.recompute == "full")
        sent, steps = (values[2 * index + k] * passes * count for k in (0, 1))
        totals = groups.setdefault(group, [0, 0, 0, 0])
        for k, value in enumerate((sent, steps, sent * network, steps * network)):
            totals[k] += value
    out = [Traffic(group=g, sent_bytes=round(t[0]), steps=round(t[1]), network_bytes=round(t[2]),
                   network_steps=round(t[3])) for g, t in sorted(groups.items())]
    replicas = layout.tp * layout.dp // layout.ep if layout.ep > 1 else layout.dp
    out += [sync for sync in (
        _gradient_sync("dp", layout.dp, states.dense_gradient_bytes, states.dense_weight_bytes, setup.zero,
                       _crosses(layout, layout.tp * layout.cp * layout.dp)),
        _gradient_sync("dp_experts", replicas, states.expert_gradient_bytes, states.expert_weight_bytes,
                       setup.zero, _crosses(layout, layout.tp * layout.cp * layout.dp))) if sync is not None]
    return out


def _crosses(layout, extent: int) -> bool:
    """A ring over more cards than a server holds runs at the speed of its hops between servers."""
    return extent > layout.node


def _gradient_sync(group: str, cards: int, gradient_bytes, weight_bytes, zero: int, network: bool):
    if cards == 1 or gradient_bytes == 0:
        return None
    if zero == 0:
        parts = [("all_reduce", gradient_bytes)]
    else:
        # the updated weights gathered after the step, or under ZeRO 3 before each pass that needs them
        gathers = 2 if zero == 3 else 1
        parts = [("reduce_scatter", gradient_bytes)] + [("all_gather", weight_bytes)] * gathers
    sent = sum(float(sent_bytes(kind, size, cards)) for kind, size in parts)
    steps = sum(int(ring_steps(kind, cards)) for kind, _ in parts)
    return Traffic(group=group, sent_bytes=round(sent), steps=steps, network_bytes=round(sent) if network else 0,
                   network_steps=steps if network else 0)
