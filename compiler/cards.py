"""A model split over cards: the layout as data, and the per-card M, F, R, traffic and time bounds of a call."""

from __future__ import annotations

from collections.abc import Iterator

import sympy as sp
from pydantic import BaseModel, ConfigDict, Field, model_validator

from archcost.dsl.errors import ArchError, Diagnostic

from .evaluate import _Evaluator
from .hardware import Device, Link
from .placement import Degrees, Placement, card_cost, place
from .scenario import Scenario

Degree = Field(1, ge=1, le=100_000)


class Layout(BaseModel):
    """Parallel degrees: tensor (TP), expert (EP), pipeline (PP) and data (DP) parallel. A model replica
    spans TP × PP cards; DP replicas serve B/DP requests each; EP groups are built from the TP × DP cards
    of a pipeline stage (DeepSeek-V3's layout: attention data parallel, experts over EP)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    tp: int = Degree
    ep: int = Degree
    pp: int = Degree
    dp: int = Degree
    sequence_parallel: bool = False   # Megatron-SP: each all-reduce as a reduce-scatter and an all-gather
    micro_batches: int = Field(1, ge=1, le=100_000)

    @model_validator(mode="after")
    def _expert_groups(self) -> "Layout":
        if (self.tp * self.dp) % self.ep:
            raise ValueError(f"ep = {self.ep} does not divide the tp × dp = {self.tp * self.dp} cards of a "
                             "pipeline stage")
        return self

    @property
    def cards(self) -> int:
        return self.tp * self.pp * self.dp

    def degrees(self, keep: frozenset[str] = frozenset()) -> Degrees:
        """The degrees as sympy values; those in `keep` stay symbols (`--keep tp,ep`)."""
        def value(name: str):
            return sp.Symbol(name, positive=True, integer=True) if name in keep else sp.Integer(getattr(self, name))
        return Degrees(tp=value("tp"), ep=value("ep"), pp=value("pp"), dp=value("dp"),
                       sequence_parallel=self.sequence_parallel)

    def text(self) -> str:
        sp_flag = ", SP" if self.sequence_parallel else ""
        return f"TP {self.tp} × EP {self.ep} × PP {self.pp} × DP {self.dp}{sp_flag} ({self.cards} cards)"


class Card(BaseModel):
    """What one card of a pipeline stage holds and does in one call."""

    stage: str                  # first, last, or whole (pp = 1)
    params: int
    weight_bytes: int
    state_bytes: int
    flops_matrix: int
    flops_nonmatrix: int
    read_bytes: int
    write_bytes: int
    sent_bytes: int             # by this card, every collective of the call
    steps: int                  # collective steps this card waits

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
    step of all micro-batches through the pipeline, (micro_batches + pp − 1) stage times."""

    device: str
    link: str
    compute: float              # one micro-batch on one stage
    memory: float
    communication: float
    no_overlap: float           # the step: (m + p − 1) × (compute + memory + communication)
    full_overlap: float         # the step: (m + p − 1) × the largest of the three
    bubble: float               # the idle part of the step: (p − 1) / (m + p − 1)


class LayoutReport(BaseModel):
    model: str
    layout: Layout
    phase: str
    scenario: Scenario
    cards: list[Card]           # one per pipeline position that differs (first and last stage)
    busiest: str                # the stage of the most loaded card
    whole_params: int
    replicated_params: int      # Σ over every card of its parameters, minus the model's
    traffic: list[Traffic]
    times: Times | None = None


CARD_FIELDS = ("params", "weight_bytes", "state_bytes", "flops_matrix", "flops_nonmatrix")
READS = ("read_weights", "read_lookups", "read_state", "read_activations")
WRITES = ("write_state", "write_activations")


def layout_report(compiled, layout: Layout, phase: str, scenario: Scenario, device: Device | None = None,
                  link: Link | None = None, peak_format: str = "bf16") -> LayoutReport:
    degrees = layout.degrees()
    placement = place(compiled.graph, degrees)
    replica = scenario.model_copy(update={"B": -(-scenario.B // layout.dp)})  # requests one replica serves
    evaluate = _Evaluator(compiled, phase, replica)
    stages = ("whole",) if layout.pp == 1 else ("first", "last")
    cards = [_card(compiled, placement, degrees, stage, evaluate) for stage in stages]
    busiest = max(cards, key=lambda card: (card.memory, card.flops_matrix))
    whole = evaluate(compiled.total("params"), "params")
    every = _every_card_params(compiled, placement, degrees, layout, evaluate)
    report = LayoutReport(model=compiled.name, layout=layout, phase=phase, scenario=scenario, cards=cards,
                          busiest=busiest.stage, whole_params=whole, replicated_params=every - whole,
                          traffic=list(_traffic(placement, evaluate)))
    if device is not None and link is not None:
        micro = scenario.model_copy(update={"B": -(-replica.B // layout.micro_batches)})
        card = busiest if micro.B == replica.B else _card(compiled, placement, degrees, busiest.stage,
                                                          _Evaluator(compiled, phase, micro))
        report.times = _times(card, layout, device, link, peak_format)
    return report


def _card(compiled, placement: Placement, degrees: Degrees, stage: str, evaluate) -> Card:
    cost = card_cost(compiled.graph, placement, degrees, stage)
    numbers = {name: int(evaluate(getattr(cost, name), name)) for name in CARD_FIELDS}
    read = sum(int(evaluate(getattr(cost, name), name)) for name in READS)
    write = sum(int(evaluate(getattr(cost, name), name)) for name in WRITES)
    held = [c for c in placement.collectives if _on_stage(c, placement, stage)]
    sent = sum(_flow(evaluate, c.sent / _layers(c, placement, degrees, stage)) for c in held)
    steps = sum(_flow(evaluate, c.steps / _layers(c, placement, degrees, stage)) for c in held)
    return Card(stage=stage, read_bytes=read, write_bytes=write, sent_bytes=sent, steps=steps, **numbers)


def _on_stage(collective, placement: Placement, stage: str) -> bool:
    where = placement.stages[collective.edge[0]]
    return stage == "whole" or where in ("stack", stage)


def _layers(collective, placement: Placement, degrees: Degrees, stage: str):
    """A stage's cards hold 1/pp of the repeated layers, and so of their collectives (not the stage send)."""
    stacked = placement.stages[collective.edge[0]] == "stack" and collective.group != "pp"
    return degrees.pp if stage != "whole" and stacked else 1


def _flow(evaluate, expr) -> int:
    return int(round(evaluate(sp.nsimplify(expr) if not isinstance(expr, sp.Basic) else expr, "flops_matrix")))


def _traffic(placement: Placement, evaluate) -> Iterator[Traffic]:
    groups: dict[tuple[str, str], list] = {}
    for collective in placement.collectives:
        groups.setdefault((collective.kind, collective.group), []).append(collective)
    for (kind, group), found in sorted(groups.items()):
        count = sum(_flow(evaluate, c.times) for c in found)
        yield Traffic(kind=kind, group=group, count=count, sent_bytes=sum(_flow(evaluate, c.sent) for c in found))


def _every_card_params(compiled, placement: Placement, degrees: Degrees, layout: Layout, evaluate) -> int:
    """Σ over all cards of the parameters each holds: every stage's cards, every replica."""
    per_stage = {stage: int(evaluate(card_cost(compiled.graph, placement, degrees, stage).params, "params"))
                 for stage in ("whole", "first", "last")}
    if layout.pp == 1:
        return per_stage["whole"] * layout.tp * layout.dp
    middle = int(evaluate(card_cost(compiled.graph, placement, degrees, "middle").params, "params"))
    return (per_stage["first"] + per_stage["last"] + (layout.pp - 2) * middle) * layout.tp * layout.dp


def _times(card: Card, layout: Layout, device: Device, link: Link, peak_format: str) -> Times:
    compute = (card.flops_matrix + card.flops_nonmatrix) / device.peak_for(peak_format)
    memory = (card.read_bytes + card.write_bytes) / device.bandwidth
    communication = card.sent_bytes / link.bandwidth + card.steps * link.latency
    slots = layout.micro_batches + layout.pp - 1  # stage times one step takes: the pipeline fills and drains
    return Times(device=device.name, link=link.name, compute=compute, memory=memory, communication=communication,
                 no_overlap=slots * (compute + memory + communication),
                 full_overlap=slots * max(compute, memory, communication), bubble=(layout.pp - 1) / slots)


def parse_layout(text: str) -> Layout:
    """`tp=8,ep=8,pp=2` (or spaces) as a Layout; never evaluated, each value a whole number."""
    values: dict[str, object] = {}
    for part in text.replace(",", " ").split():
        name, _, value = part.partition("=")
        if name == "sp":
            values["sequence_parallel"] = value in ("", "1", "true", "on")
            continue
        if not value.isdigit() or len(value) > 6:
            raise ArchError([Diagnostic(code="E401", message=f"layout `{part}`: give NAME=whole number, e.g. tp=8")])
        values["micro_batches" if name == "mb" else name] = int(value)
    try:
        return Layout(**values)
    except ValueError as error:
        first = error.errors()[0] if hasattr(error, "errors") else {"msg": str(error), "loc": ()}
        where = ".".join(str(p) for p in first["loc"])
        raise ArchError([Diagnostic(code="E401", message=f"layout {where + ': ' if where else ''}{first['msg']}",
                                    hint="degrees: tp, ep, pp, dp, mb (micro-batches), sp (sequence parallel)")]) from None
