"""A model split over cards: the per-card M, F, R, traffic and time bounds of a call on a layout (degrees.py)."""

from __future__ import annotations

from typing import NamedTuple

from pydantic import BaseModel

from ..front.hardware import Device, Link
from ..numbers.assemble import plain
from ..numbers.plain import PlainEvaluator
from ..terms.scenario import Scenario
from .card import stage_cost
from .degrees import Layout, on_device, refused
from .expected import kernel_ratio
from .figures import card_figures
from .flows import Flow, Traffic, card_flows, exact, flow_figures, flow_uses, traffic
from .nccl import Use, collective_seconds, seconds
from .pipeline import layers_on_stage, stage_keys
from .placement import Placement, placed
from .symbolic import SymbolicLayout, degrees_of
from .values import CARD_FIELDS, READS, WRITES, Symbolic

Number = int | float  # exact integers, or a float where a spec's sizes make a fraction


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


class Times(BaseModel):
    """Lower bounds of one call's time (seconds): one micro-batch on the slowest stage's card (every stage runs
    every micro-batch, so the pipeline waits for it), and the step of all micro-batches through the pipeline:
    (micro_batches + pp − 1) stage times for a call that fills and drains it, max(micro_batches, pp) for a
    decode step in the steady state (pipeline_slots)."""

    device: str
    link: str
    compute_format: str         # the device peak the matrix products run at (`--compute`)
    compute: float              # one micro-batch on one stage
    memory: float
    communication: float
    no_overlap: float           # the step: its stage times × (compute + memory + communication)
    full_overlap: float         # the step: its stage times × the largest of the three
    bubble: float               # the idle part of the step: (stage times − m) / stage times
    stage: str = "whole"        # the stage whose card paces the step: the longest without overlap
    # expected (compiler/timing): the card's compute-or-memory bound times the kernel mix's measured ratio, then
    # the collectives at their measured bus bandwidth, one after the other (a layer waits for its all-reduce)
    expected: float | None = None
    expected_communication: float | None = None
    efficiency_table: str | None = None


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


def layout_report(compiled, layout: Layout, phase: str, scenario: Scenario, device: Device | None = None,
                  link: Link | None = None, peak_format: str | None = None,
                  network: Link | None = None, table=None) -> LayoutReport:
    """One card of each pipeline position of `layout` in a call of `phase`; with a device and a link (and a
    network link for traffic between servers, by default the same link) the call's time bounds, at the
    device's peak for `peak_format` (default: compute_format)."""
    found = layout_cards(compiled, layout, phase, scenario, device, link, peak_format, network, table)
    layout, evaluate, degrees, placement = found.layout, found.evaluate, found.degrees, found.placement
    whole = evaluate(compiled.total("params"), "params")
    every = _every_card_params(compiled, degrees, layout, evaluate, {card.stage: card.params for card in found.cards})
    return LayoutReport(model=compiled.name, layout=layout, phase=phase, scenario=scenario, cards=found.cards,
                        busiest=found.busiest.stage, whole_params=whole, replicated_params=every - whole,
                        traffic=list(traffic(compiled, degrees, placement, evaluate)),
                        stage_layers=list(placement.stage_layers), times=found.times)


class LayoutCards(NamedTuple):
    """What a layout search reads of a report (fleet.fit), and the layout it is of (degrees.on_device)."""

    layout: Layout
    cards: list[Card]
    busiest: Card
    times: Times | None
    evaluate: PlainEvaluator
    degrees: SymbolicLayout
    placement: Placement


def layout_cards(compiled, layout: Layout, phase: str, scenario: Scenario, device: Device | None = None,
                 link: Link | None = None, peak_format: str | None = None,
                 network: Link | None = None, table=None) -> LayoutCards:
    """layout_report's cards and time bounds, without the whole model's traffic and parameter totals."""
    layout = on_device(layout, device)
    _check_splits(layout, phase, scenario)
    degrees = degrees_of(compiled, layout)
    placement = placed(compiled, degrees)
    replica = scenario.model_copy(update={"B": -(-scenario.B // layout.dp)})  # requests one replica serves
    evaluate = PlainEvaluator(compiled, phase, replica)
    stages = stage_keys(placement, layout.pp)
    timed = device is not None and link is not None
    uses: dict[str, list[Use]] = {stage: [] for stage in stages}  # what NCCL's model reads: only for the times
    cards = [_card(compiled, placement, degrees, stage, evaluate, uses[stage] if timed else None) for stage in stages]
    busiest = max(cards, key=lambda card: (card.memory, card.flops_matrix))
    times = None
    if timed:
        micro = scenario.model_copy(update={"B": -(-replica.B // layout.micro_batches)})
        fmt = peak_format or compute_format(compiled, device)
        priced: dict[Use, float] = {}  # the stages' cards wait for mostly the same collectives: each priced once

        def bounds_of(waits: list[Use]) -> list[float]:  # NCCL's model of each: the bound and the floor
            priced.update((use, seconds(use, link, network or link)) for use in waits if use not in priced)
            return [priced[use] for use in waits]

        bounds = {stage: bounds_of(waits) for stage, waits in uses.items()}
        card = _slowest(cards, bounds, layout, device, link, fmt, phase == "decode")
        waits = uses[card.stage]
        if micro.B != replica.B:  # one micro-batch's share of the replica's requests
            waits = []
            card = _card(compiled, placement, degrees, card.stage, PlainEvaluator(compiled, phase, micro), waits)
            bounds[card.stage] = bounds_of(waits)
        times = _times(card, bounds[card.stage], layout, device, link, fmt, steady=phase == "decode")
        if table is not None:
            times = _expected(times, waits, bounds[card.stage], layout, device, link, network or link, table,
                              kernel_ratio(compiled, device, phase, micro, fmt, table, degrees=degrees),
                              phase == "decode")
    return LayoutCards(layout, cards, busiest, times, evaluate, degrees, placement)


def _slowest(cards: list[Card], bounds: dict, layout: Layout, device: Device, link: Link, fmt: str,
             steady: bool) -> Card:
    """The card whose stage paces the step: the longest stage time without overlap (then with it), the first of
    equals kept. A pipeline's last stage runs the output head, its first the embedding's lookup."""
    if len(cards) == 1:
        return cards[0]
    paces = [(found.no_overlap, found.full_overlap) for found in
             (_times(card, bounds[card.stage], layout, device, link, fmt, steady) for card in cards)]
    return cards[paces.index(max(paces))]


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


def _card(compiled, placement: Placement, degrees: SymbolicLayout, stage: str, evaluate,
          uses: list | None = None) -> Card:
    """One card of `stage` at the evaluator's call: from each op's numbers (figures.py), or, where a share is
    not a number there, from the symbolic card."""
    try:
        values = card_figures(compiled, placement, degrees, stage, evaluate.phase, evaluate.scenario)
        flows = flow_figures(compiled, placement, degrees, stage, evaluate.phase, evaluate.scenario)
        sent, steps = [plain(f.sent) for f in flows], [plain(f.steps) for f in flows]
    except Symbolic:
        flows = card_flows(compiled, placement, degrees, stage)
        values, sent, steps = _symbolic_card(compiled, degrees, stage, evaluate, flows)
    return _card_of(stage, values, flows, sent, steps, uses)


def _symbolic_card(compiled, degrees: SymbolicLayout, stage: str, evaluate, flows: list[Flow]) -> tuple:
    """The card's fields and its collectives' bytes and steps, from the symbolic card's sums."""
    fields = CARD_FIELDS + READS + WRITES

    def items():
        cost = stage_cost(compiled, degrees, stage)
        return [(getattr(cost, name), name) for name in fields] + [
            (exact(expr), "flops_matrix") for expr in [f.sent for f in flows] + [f.steps for f in flows]]
    found = evaluate.many(("card", degrees, stage), items)  # exact: a size may be a fraction
    return dict(zip(fields, found)), found[len(fields):len(fields) + len(flows)], found[len(fields) + len(flows):]


def _card_of(stage: str, values: dict, flows: list[Flow], sent: list, steps: list, uses: list | None) -> Card:
    numbers = {name: values[name] for name in CARD_FIELDS}
    read, write = (sum(values[name] for name in names) for names in (READS, WRITES))
    if uses is not None:  # the collectives as NCCL's model reads them, for the call's times
        uses.extend(flow_uses(flows, sent, steps))
    sent, steps = [int(round(v)) for v in sent], [int(round(v)) for v in steps]
    return Card(stage=stage, read_bytes=read, write_bytes=write, sent_bytes=sum(sent), steps=sum(steps),
                network_bytes=sum(int(round(b * flow.network)) for b, flow in zip(sent, flows) if flow.network),
                network_steps=sum(int(round(n * flow.network)) for n, flow in zip(steps, flows) if flow.network),
                **numbers)


def _every_card_params(compiled, degrees: SymbolicLayout, layout: Layout, evaluate, known: dict) -> int:
    """Σ over all cards of the parameters each holds: every pipeline position's cards, every replica (stages
    of the same layers counted once); `known`: the parameters of the stages the report has cards of."""
    placement = placed(compiled, degrees)

    def params(stage: str):
        if stage in known:
            return known[stage]
        try:
            return card_figures(compiled, placement, degrees, stage, evaluate.phase, evaluate.scenario,
                                ("params",))["params"]
        except Symbolic:
            return evaluate(stage_cost(compiled, degrees, stage).params, "params")
    if layout.pp == 1:
        return params("whole") * layout.tp * layout.dp * layout.cp
    total = sum(params(stage) * count for stage, count in _stage_kinds(compiled, degrees, placement, layout.pp))
    total *= layout.tp * layout.dp * layout.cp
    return int(total) if float(total).is_integer() else total


def _stage_kinds(compiled, degrees: SymbolicLayout, placement: Placement, pp: int) -> list[tuple[str, int]]:
    """One stage of each kind with the number of stages like it: stages alike in position (first, middle,
    last) and in the layers of each stack they hold hold the same ops. Found once per layout."""
    key = ("stage kinds", degrees)
    if key not in compiled.memo:
        spans = sorted(set(placement.spans.values()))
        kinds: dict[tuple, list] = {}
        for index in range(pp):
            stage = "first" if index == 0 else "last" if index == pp - 1 else f"stage {index}"
            signature = (min(index, 1) if index < pp - 1 else 2, _layer_ranges(placement, index, spans))
            kinds.setdefault(signature, [stage, 0])[1] += 1
        compiled.memo[key] = [tuple(kind) for kind in kinds.values()]
    return compiled.memo[key]


def _layer_ranges(placement: Placement, index: int, spans: list) -> tuple:
    """What a stage holds of each stack, as (stack, layers on it): stages alike in it hold the same ops."""
    sizes = placement.stage_layers
    if not sizes:
        return ()
    return tuple(sorted({(int(span[0]), layers_on_stage(sizes, index, span)) for span in spans}))


def pipeline_slots(micro_batches: int, pp: int, steady: bool) -> int:
    """Stage times a step takes. A call fills and drains the pipeline: m + p − 1. Decode steps follow each
    other: in the steady state every stage works on some micro-batch's next token, and each micro-batch waits
    for its own previous token to leave the last stage, so all m advance one token in max(m, p) stage times
    (Narayanan et al. 2021 §2.2's bubble is the fill and drain of one batch, not of every decode step)."""
    return max(micro_batches, pp) if steady else micro_batches + pp - 1


def _expected(times: Times, uses: list[Use], bounds: list[float], layout: Layout, device: Device, link: Link,
              network: Link, table, kernels: float, steady: bool) -> Times:
    """The bounds with the expected step beside them: never below the full-overlap bound (kernels ≥ 1, each
    collective at least its NCCL cost, `bounds`)."""
    communication = sum(collective_seconds(use, link, network, table, device, bound)
                        for use, bound in zip(uses, bounds))
    slots = pipeline_slots(layout.micro_batches, layout.pp, steady)
    step = max(slots * (max(times.compute, times.memory) * kernels + communication), times.full_overlap)
    return times.model_copy(update={"expected": step, "expected_communication": communication,
                                    "efficiency_table": table.file})


def _times(card: Card, bounds: list[float], layout: Layout, device: Device, link: Link, peak_format: str,
           steady: bool = False) -> Times:
    compute = (card.flops_matrix + card.flops_nonmatrix) / device.peak_for(peak_format)
    memory = (card.read_bytes + card.write_bytes) / device.bandwidth
    communication = sum(bounds)  # one after another, each as NCCL would run it
    slots = pipeline_slots(layout.micro_batches, layout.pp, steady)
    return Times(device=device.name, link=link.name, compute_format=peak_format, compute=compute, memory=memory,
                 communication=communication,
                 no_overlap=slots * (compute + memory + communication),
                 full_overlap=slots * max(compute, memory, communication),
                 bubble=(slots - layout.micro_batches) / slots, stage=card.stage)
