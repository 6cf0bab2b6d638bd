"""A model split over cards: the per-card M, F, R, traffic and time bounds of a call on a layout (degrees.py)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from fractions import Fraction

import sympy as sp
from pydantic import BaseModel

from ..front.hardware import Device, Link
from ..numbers.plain import PlainEvaluator
from ..terms.scenario import Scenario
from .card import stage_cost
from .collectives import servers_spanned
from .degrees import Layout, refused
from .nccl import Use, seconds
from .pipeline import layers_on_stage, stage_fraction, stage_keys
from .placement import Placement, SymbolicLayout, placed

Number = int | float  # exact integers, or a float where a spec's sizes make a fraction


@dataclass(frozen=True)
class Flow:
    """One collective as one card of a stage takes part in it: its bytes and steps (in the scenario's letters),
    the share of them between servers, and what NCCL's model reads of it."""

    sent: sp.Expr
    steps: sp.Expr
    network: Fraction
    group: str
    kind: str
    cards: int
    servers: int
    sampling: bool


class Card(BaseModel):
    """What one card of a pipeline stage holds and does in one call."""

    stage: str                  # first, last, or whole (pp = 1)
    params: Number
    weight_bytes: Number
    state_bytes: Number
    flops_matrix: Number
    flops_nonmatrix: Number
    read_bytes: Number
    write_bytes: Number
    sent_bytes: int             # by this card, every collective of the call
    steps: int                  # collective steps this card waits
    network_bytes: int = 0      # the part of sent_bytes that goes between servers (placement.network_share)
    network_steps: int = 0

    @property
    def memory(self) -> int:
        return self.weight_bytes + self.state_bytes


class Traffic(BaseModel):
    kind: str                   # all_reduce, all_gather, reduce_scatter, all_to_all, send
    group: str                  # tp, ep, pp
    count: int                  # collectives of this kind in one call (every layer)
    sent_bytes: int             # per card


class Times(BaseModel):
    """Lower bounds of one call's time (seconds): one micro-batch on the most loaded stage's card, and the
    step of all micro-batches through the pipeline: (micro_batches + pp − 1) stage times for a call that
    fills and drains it, max(micro_batches, pp) for a decode step in the steady state (pipeline_slots)."""

    device: str
    link: str
    compute_format: str         # the device peak the matrix products run at (`--compute`)
    compute: float              # one micro-batch on one stage
    memory: float
    communication: float
    no_overlap: float           # the step: its stage times × (compute + memory + communication)
    full_overlap: float         # the step: its stage times × the largest of the three
    bubble: float               # the idle part of the step: (stage times − m) / stage times


class LayoutReport(BaseModel):
    model: str
    layout: Layout
    phase: str
    scenario: Scenario
    cards: list[Card]           # one per pipeline position that differs (first and last stage)
    busiest: str                # the stage of the most loaded card
    whole_params: Number
    replicated_params: Number   # Σ over every card of its parameters, minus the model's
    traffic: list[Traffic]
    stage_layers: list[int] = []  # layers of each pipeline stage, in order (stage_split)
    times: Times | None = None


CARD_FIELDS = ("params", "weight_bytes", "state_bytes", "flops_matrix", "flops_nonmatrix")
READS = ("read_weights", "read_lookups", "read_state", "read_activations")
WRITES = ("write_state", "write_activations")


def layout_report(compiled, layout: Layout, phase: str, scenario: Scenario, device: Device | None = None,
                  link: Link | None = None, peak_format: str | None = None,
                  network: Link | None = None) -> LayoutReport:
    """One card of each pipeline position of `layout` in a call of `phase`; with a device and a link (and a
    network link for traffic between servers, by default the same link) the call's time bounds, at the
    device's peak for `peak_format` (default: compute_format)."""
    _check_splits(layout, phase, scenario)
    degrees = layout.degrees(formats=compiled.ir.formats)
    placement = placed(compiled, degrees)
    replica = scenario.model_copy(update={"B": -(-scenario.B // layout.dp)})  # requests one replica serves
    evaluate = PlainEvaluator(compiled, phase, replica)
    stages = stage_keys(placement, layout.pp)
    cards = [_card(compiled, placement, degrees, stage, evaluate) for stage in stages]
    busiest = max(cards, key=lambda card: (card.memory, card.flops_matrix))
    whole = evaluate(compiled.total("params"), "params")
    every = _every_card_params(compiled, degrees, layout, evaluate)
    report = LayoutReport(model=compiled.name, layout=layout, phase=phase, scenario=scenario, cards=cards,
                          busiest=busiest.stage, whole_params=whole, replicated_params=every - whole,
                          traffic=list(_traffic(compiled, degrees, placement, evaluate)),
                          stage_layers=list(placement.stage_layers))
    if device is not None and link is not None:
        micro = scenario.model_copy(update={"B": -(-replica.B // layout.micro_batches)})
        uses: list[Use] = []
        card = _card(compiled, placement, degrees, busiest.stage,
                     evaluate if micro.B == replica.B else PlainEvaluator(compiled, phase, micro), uses)
        report.times = _times(card, uses, layout, device, link, network or link,
                              peak_format or compute_format(compiled, device), steady=phase == "decode")
    return report


def compute_format(compiled, device: Device) -> str:
    """The format a layout's matrix products run in unless `--compute` says: the one the spec's activations
    are stored in, where the device's sheet gives its peak; else the capacity tools' preference."""
    stored = getattr(compiled.ir.act_format, "name", None)
    return stored if stored in device.peak else device.preferred_peak()


def _check_splits(layout: Layout, phase: str, scenario: Scenario) -> None:
    """Micro-batches split a replica's requests, context parallelism a call's positions over cp cards: each
    micro-batch needs a request, each card a position (the new positions of a prefill, the history at a decode)."""
    if layout.vp > 1:
        raise refused(f"vp = {layout.vp}: model chunks interleave a training step's pipeline",
                      "`archcost train SPEC --layout ...,vp=N`; a serving layout has one chunk per card")
    requests = -(-scenario.B // layout.dp)
    if layout.micro_batches > requests:
        raise refused(f"mb = {layout.micro_batches} micro-batches of the {requests:,} request"
                       f"{'s' if requests != 1 else ''} a replica serves: a micro-batch would hold none",
                       "choose mb no larger than the requests of a replica, B / dp")
    positions = scenario.S + 1 if phase == "decode" else scenario.P
    if layout.cp > positions:
        raise refused(f"cp = {layout.cp} splits {positions:,} position{'s' if positions != 1 else ''} of this "
                       f"{phase}: a card would hold none", "choose cp no larger than the positions split")


def flow_uses(flows: list[Flow], sent: list, steps: list) -> list[Use]:
    """Each collective of `card_flows` with its evaluated bytes and steps, as NCCL's model reads it: copies of
    one collective (its steps over one copy's), each sending its share of the bytes."""
    from .collectives import ring_steps

    uses = []
    for flow, total, waited in zip(flows, sent, steps):
        copies = float(waited) / float(ring_steps(flow.kind, flow.cards)) if flow.cards > 1 else 0.0
        uses.append(Use(kind=flow.kind, cards=flow.cards, servers=flow.servers, copies=copies,
                        sent=float(total) / copies if copies else 0.0, network=float(flow.network)))
    return uses


def _card(compiled, placement: Placement, degrees: SymbolicLayout, stage: str, evaluate,
          uses: list | None = None) -> Card:
    uses = [] if uses is None else uses
    flows = card_flows(compiled, placement, degrees, stage)
    fields = CARD_FIELDS + READS + WRITES

    def items():
        cost = stage_cost(compiled, degrees, stage)
        return [(getattr(cost, name), name) for name in fields] + [
            (_exact(expr), "flops_matrix") for expr in [f.sent for f in flows] + [f.steps for f in flows]]
    found = evaluate.many(("card", degrees, stage), items)  # exact: a size may be a fraction
    values, counts = dict(zip(fields, found)), [int(round(v)) for v in found[len(fields):]]
    numbers = {name: values[name] for name in CARD_FIELDS}
    read, write = (sum(values[name] for name in names) for names in (READS, WRITES))
    sent, steps = counts[:len(flows)], counts[len(flows):]
    uses.extend(flow_uses(flows, found[len(fields):len(fields) + len(flows)], found[len(fields) + len(flows):]))
    return Card(stage=stage, read_bytes=read, write_bytes=write, sent_bytes=sum(sent), steps=sum(steps),
                network_bytes=sum(int(round(b * flow.network)) for b, flow in zip(sent, flows)),
                network_steps=sum(int(round(n * flow.network)) for n, flow in zip(steps, flows)), **numbers)


def card_flows(compiled, placement: Placement, degrees: SymbolicLayout, stage: str) -> list[Flow]:
    """Each collective one card of `stage` takes part in, built once per layout and stage (sympy's arithmetic on
    them costs more than their numbers)."""
    key = ("card flows", degrees, stage)
    if key not in compiled.memo:
        held = [(c, _on_card(c, placement, degrees, stage)) for c in placement.collectives
                if _on_stage(c, placement, stage)]
        compiled.memo[key] = [Flow(c.sent * part, c.steps * part, _fraction(c.network), c.group, c.kind,
                                   int(c.cards), servers_spanned(c, degrees), c.sampling)
                              for c, part in held if part != 0]
    return compiled.memo[key]


def _on_stage(collective, placement: Placement, stage: str) -> bool:
    where = placement.stages[collective.edge[0]]
    return stage == "whole" or where in ("stack", stage)


def _on_card(collective, placement: Placement, degrees: SymbolicLayout, stage: str):
    """The part of a collective's copies one card of `stage` takes part in: its layers' part of a repeated
    layer's collectives (the stage send is every stage's own)."""
    if collective.group == "pp":
        return sp.Integer(1)
    return stage_fraction(placement, collective.edge[0], degrees, stage)


def _exact(expr) -> sp.Expr:
    """A collective's figure as an exact sympy value (a plain Python number where the degrees make one)."""
    return sp.nsimplify(expr) if not isinstance(expr, sp.Basic) else expr


def _fraction(share: sp.Expr) -> Fraction:
    """A share between servers as an exact Python fraction (rounded the same way, half to even)."""
    share = sp.Rational(share)
    return Fraction(int(share.p), int(share.q))


def _traffic(compiled, degrees: SymbolicLayout, placement: Placement, evaluate) -> Iterator[Traffic]:
    groups = _traffic_groups(compiled, degrees, placement)
    values = iter(int(round(v)) for v in evaluate.many(("traffic", degrees), lambda: [
        (_exact(expr), "flops_matrix") for _, found in groups for pair in found for expr in pair]))
    for (kind, group), found in groups:
        pairs = [(next(values), next(values)) for _ in found]
        yield Traffic(kind=kind, group=group, count=sum(times for times, _ in pairs),
                      sent_bytes=sum(sent for _, sent in pairs))


def _traffic_groups(compiled, degrees: SymbolicLayout, placement: Placement) -> list:
    """The collectives by kind and group, as (copies, bytes sent) of each: built once per layout."""
    key = ("traffic", degrees)
    if key not in compiled.memo:
        groups: dict[tuple[str, str], list] = {}
        for collective in placement.collectives:
            groups.setdefault((collective.kind, collective.group), []).append((collective.times, collective.sent))
        compiled.memo[key] = sorted(groups.items())
    return compiled.memo[key]


def _every_card_params(compiled, degrees: SymbolicLayout, layout: Layout, evaluate) -> int:
    """Σ over all cards of the parameters each holds: every pipeline position's cards, every replica (stages
    of the same layers counted once)."""
    placement = placed(compiled, degrees)
    if layout.pp == 1:
        return evaluate(stage_cost(compiled, degrees, "whole").params, "params") * layout.tp * layout.dp * layout.cp
    by_layers: dict[tuple, int] = {}
    for index in range(layout.pp):
        stage = "first" if index == 0 else "last" if index == layout.pp - 1 else f"stage {index}"
        signature = (min(index, 1) if index < layout.pp - 1 else 2, _layer_ranges(placement, index))
        if signature not in by_layers:
            by_layers[signature] = [evaluate(stage_cost(compiled, degrees, stage).params, "params"), 0]
        by_layers[signature][1] += 1
    total = sum(p * n for p, n in by_layers.values()) * layout.tp * layout.dp * layout.cp
    return int(total) if float(total).is_integer() else total


def _layer_ranges(placement: Placement, index: int) -> tuple:
    """What a stage holds of each stack, as (stack, layers on it): stages alike in it hold the same ops."""
    sizes = placement.stage_layers
    if not sizes:
        return ()
    return tuple(sorted({(int(span[0]), layers_on_stage(sizes, index, span)) for span in placement.spans.values()}))


def pipeline_slots(micro_batches: int, pp: int, steady: bool) -> int:
    """Stage times a step takes. A call fills and drains the pipeline: m + p − 1. Decode steps follow each
    other: in the steady state every stage works on some micro-batch's next token, and each micro-batch waits
    for its own previous token to leave the last stage, so all m advance one token in max(m, p) stage times
    (Narayanan et al. 2021 §2.2's bubble is the fill and drain of one batch, not of every decode step)."""
    return max(micro_batches, pp) if steady else micro_batches + pp - 1


def _times(card: Card, uses: list[Use], layout: Layout, device: Device, link: Link, network: Link,
           peak_format: str, steady: bool = False) -> Times:
    compute = (card.flops_matrix + card.flops_nonmatrix) / device.peak_for(peak_format)
    memory = (card.read_bytes + card.write_bytes) / device.bandwidth
    communication = sum(seconds(use, link, network) for use in uses)  # one after another, each as NCCL would
    slots = pipeline_slots(layout.micro_batches, layout.pp, steady)
    return Times(device=device.name, link=link.name, compute_format=peak_format, compute=compute, memory=memory,
                 communication=communication,
                 no_overlap=slots * (compute + memory + communication),
                 full_overlap=slots * max(compute, memory, communication),
                 bubble=(slots - layout.micro_batches) / slots)
