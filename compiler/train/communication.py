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

from dataclasses import replace

from pydantic import BaseModel

from ..cards.collectives import ring_steps, sent_bytes, servers_for
from ..cards.flows import card_flows, flow_uses
from ..cards.nccl import Use, collective_seconds, seconds


class Traffic(BaseModel):
    """One group's collectives on one card over the step."""

    group: str                 # tp, cp, ep, nodes, pp, dp, dp_experts
    sent_bytes: int
    steps: int
    network_bytes: int = 0     # the part that goes between servers
    network_steps: int = 0
    seconds: float | None = None  # with link sheets: each collective at NCCL's fastest protocol (cards/nccl.py)
    # with the device's efficiency table too: each at the bus bandwidth nccl-tests measured for its kind and size
    # (nccl.collective_seconds, as a layout's expected step counts them), never below `seconds`
    expected_seconds: float | None = None


def step_traffic(compiled, placement, degrees, layout, setup, stage: str, count: int, states, micro,
                 sheets=None, table=None) -> list[Traffic]:
    """Every collective one card of `stage` takes part in over a step of `count` micro-batches; with sheets
    (device, link, network) each group's time, and with the device's efficiency table its expected time."""
    flows = [f for f in card_flows(compiled, placement, degrees, stage) if not f.sampling]  # none in training
    values = micro.many(("train flows", degrees, stage),
                        [(e, "flops_matrix") for f in flows for e in (f.sent, f.steps)])
    uses = flow_uses(flows, values[0::2], values[1::2])
    groups: dict[str, list] = {}
    for flow, use in zip(flows, uses):
        group = flow.group
        # a stage sends once forward and once back per chunk it holds (Narayanan et al. 2021 §2.2.2: the
        # interleaved schedule's communication "increases by v")
        passes = (2 * layout.vp if group == "pp" else 2 + (setup.recompute == "full")) * count
        _add(groups, group, replace(use, copies=use.copies * passes), sheets, table)
    for group, cards, gradients, weights in (
            ("dp", layout.dp, states.dense_gradient_bytes, states.dense_weight_bytes),
            ("dp_experts", layout.tp * layout.dp // (layout.ep * layout.etp) if layout.ep > 1 else layout.dp,
             states.expert_gradient_bytes, states.expert_weight_bytes)):
        servers = servers_for(layout.tp * layout.cp * cards, cards, layout.node)  # members tp·cp cards apart
        for use in _gradient_sync(cards, servers, gradients, weights, setup.zero):
            _add(groups, group, use, sheets, table)
    return [Traffic(group=g, sent_bytes=round(t[0]), steps=round(t[1]), network_bytes=round(t[2]),
                    network_steps=round(t[3]), seconds=t[4] if sheets else None,
                    expected_seconds=t[5] if sheets and table is not None else None) for g, t in groups.items()]


def _add(groups: dict, group: str, use: Use, sheets, table=None) -> None:
    if use.copies == 0 or use.cards == 1:
        return
    totals = groups.setdefault(group, [0, 0, 0, 0, 0.0, 0.0])
    sent, steps = use.sent * use.copies, use.copies * ring_steps(use.kind, use.cards)
    for k, value in enumerate((sent, steps, sent * use.network, steps * use.network)):
        totals[k] += float(value)
    if sheets is not None:
        totals[4] += seconds(use, sheets[1], sheets[2])
        if table is not None:
            totals[5] += collective_seconds(use, sheets[1], sheets[2], table, sheets[0])


def _gradient_sync(cards: int, servers: int, gradient_bytes, weight_bytes, zero: int) -> list[Use]:
    if cards == 1 or gradient_bytes == 0:
        return []
    if zero == 0:
        parts = [("all_reduce", gradient_bytes)]
    else:
        # the updated weights gathered after the step, or under ZeRO 3 before each pass that needs them
        gathers = 2 if zero == 3 else 1
        parts = [("reduce_scatter", gradient_bytes)] + [("all_gather", weight_bytes)] * gathers
    network = 1.0 if servers > 1 else 0.0
    return [Use(kind=kind, cards=cards, servers=servers, copies=1, sent=float(sent_bytes(kind, size, cards)),
                network=network) for kind, size in parts]
