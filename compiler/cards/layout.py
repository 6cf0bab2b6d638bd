"""A model split over cards: the layout as data, and the per-card M, F, R, traffic and time bounds of a call."""

from __future__ import annotations

import re
from collections.abc import Iterator
from fractions import Fraction

import sympy as sp
from pydantic import BaseModel, ConfigDict, Field, model_validator

from archcost.dsl.errors import ArchError, Diagnostic, did_you_mean

from ..front.hardware import Device, Link
from ..numbers.plain import PlainEvaluator
from ..terms.scenario import Scenario
from .placement import Placement, SymbolicLayout, placed, stage_cost

Degree = Field(1, ge=1, le=100_000)
Number = int | float  # exact integers, or a float where a spec's sizes make a fraction


class Layout(BaseModel):
    """Parallel degrees: tensor (TP), expert (EP), pipeline (PP), context (CP) and data (DP) parallel. A model
    replica spans TP × PP × CP cards; DP replicas serve B/DP requests each; EP groups are built from the
    TP × DP cards of a pipeline stage (DeepSeek-V3's layout: attention data parallel, experts over EP)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    tp: int = Degree
    ep: int = Degree
    pp: int = Degree
    dp: int = Degree
    cp: int = Degree
    sequence_parallel: bool = False   # Megatron-SP: each all-reduce as a reduce-scatter and an all-gather
    micro_batches: int = Field(1, ge=1, le=100_000)
    node: int = Field(8, ge=1, le=100_000)           # cards per server
    limit: int | None = Field(None, ge=1, le=100_000)  # servers a token is sent to at most (node-limited routing)
    dispatch: str | None = None       # the format tokens travel to their experts in, e.g. fp8
    imbalance: float = Field(1.0, ge=1.0, le=100_000)  # tokens of the busiest expert card over the average

    @model_validator(mode="after")
    def _expert_groups(self) -> Layout:
        if (self.tp * self.dp) % self.ep:
            raise ValueError(f"ep = {self.ep} does not divide the tp × dp = {self.tp * self.dp} cards of a "
                             "pipeline stage")
        if self.limit is not None and self.ep > self.node and self.ep % self.node:
            raise ValueError(f"ep = {self.ep} is not a whole number of servers of {self.node} cards")
        return self

    @property
    def cards(self) -> int:
        return self.tp * self.pp * self.cp * self.dp

    def degrees(self, keep: frozenset[str] = frozenset(), formats: dict | None = None) -> SymbolicLayout:
        """The degrees as sympy values; those in `keep` stay symbols (`--keep tp,ep`)."""
        def value(name: str):
            return sp.Symbol(name, positive=True, integer=True) if name in keep else sp.Integer(getattr(self, name))
        dispatch = None
        if self.dispatch is not None:
            if self.dispatch not in (formats or {}):
                raise ArchError([Diagnostic(code="E405", message=f"layout: unknown dispatch format `{self.dispatch}`",
                                            hint=did_you_mean(self.dispatch, formats or {}) or "e.g. fp8, bf16")])
            dispatch = formats[self.dispatch]
        return SymbolicLayout(tp=value("tp"), ep=value("ep"), pp=value("pp"), dp=value("dp"), cp=value("cp"),
                       sequence_parallel=self.sequence_parallel, node_cards=sp.Integer(self.node),
                       node_limit=None if self.limit is None else sp.Integer(self.limit), dispatch=dispatch,
                       imbalance=sp.Rational(*Fraction(repr(self.imbalance)).as_integer_ratio()),
                       expert_parallel=self.ep > 1)

    def text(self) -> str:
        extra = "".join(f", {word}" for word, on in (("SP", self.sequence_parallel), (f"CP {self.cp}", self.cp > 1),
                                                      (f"≤ {self.limit} servers a token", self.limit)) if on)
        cards = f"{self.cards} card" + ("s" if self.cards != 1 else "")
        return f"TP {self.tp} × EP {self.ep} × PP {self.pp} × DP {self.dp}{extra} ({cards})"


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
    step of all micro-batches through the pipeline, (micro_batches + pp − 1) stage times."""

    device: str
    link: str
    compute_format: str         # the device peak the matrix products run at (`--compute`)
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
    whole_params: Number
    replicated_params: Number   # Σ over every card of its parameters, minus the model's
    traffic: list[Traffic]
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
    stages = ("whole",) if layout.pp == 1 else ("first", "last")
    cards = [_card(compiled, placement, degrees, stage, evaluate) for stage in stages]
    busiest = max(cards, key=lambda card: (card.memory, card.flops_matrix))
    whole = evaluate(compiled.total("params"), "params")
    every = _every_card_params(compiled, degrees, layout, evaluate)
    report = LayoutReport(model=compiled.name, layout=layout, phase=phase, scenario=scenario, cards=cards,
                          busiest=busiest.stage, whole_params=whole, replicated_params=every - whole,
                          traffic=list(_traffic(compiled, degrees, placement, evaluate)))
    if device is not None and link is not None:
        micro = scenario.model_copy(update={"B": -(-replica.B // layout.micro_batches)})
        card = busiest if micro.B == replica.B else _card(compiled, placement, degrees, busiest.stage,
                                                          PlainEvaluator(compiled, phase, micro))
        report.times = _times(card, layout, device, link, network or link,
                              peak_format or compute_format(compiled, device))
    return report


def compute_format(compiled, device: Device) -> str:
    """The format a layout's matrix products run in unless `--compute` says: the one the spec's activations
    are stored in, where the device's sheet gives its peak; else the capacity tools' preference."""
    stored = getattr(compiled.ir.act_format, "name", None)
    return stored if stored in device.peak else device.preferred_peak()


def _check_splits(layout: Layout, phase: str, scenario: Scenario) -> None:
    """Micro-batches split a replica's requests, context parallelism a call's positions over cp cards: each
    micro-batch needs a request, each card a position (the new positions of a prefill, the history at a decode)."""
    requests = -(-scenario.B // layout.dp)
    if layout.micro_batches > requests:
        raise _refused(f"mb = {layout.micro_batches} micro-batches of the {requests:,} request"
                       f"{'s' if requests != 1 else ''} a replica serves: a micro-batch would hold none",
                       "choose mb no larger than the requests of a replica, B / dp")
    positions = scenario.S + 1 if phase == "decode" else scenario.P
    if layout.cp > positions:
        raise _refused(f"cp = {layout.cp} splits {positions:,} position{'s' if positions != 1 else ''} of this "
                       f"{phase}: a card would hold none", "choose cp no larger than the positions split")


def _card(compiled, placement: Placement, degrees: SymbolicLayout, stage: str, evaluate) -> Card:
    cost = stage_cost(compiled, degrees, stage)
    numbers = {name: evaluate(getattr(cost, name), name) for name in CARD_FIELDS}  # exact: a size may be a fraction
    read = sum(evaluate(getattr(cost, name), name) for name in READS)
    write = sum(evaluate(getattr(cost, name), name) for name in WRITES)
    flows = _card_flows(compiled, placement, degrees, stage)
    sent, steps = ([_flow(evaluate, flow[index]) for flow in flows] for index in (0, 1))
    return Card(stage=stage, read_bytes=read, write_bytes=write, sent_bytes=sum(sent), steps=sum(steps),
                network_bytes=sum(int(round(b * flow[2])) for b, flow in zip(sent, flows)),
                network_steps=sum(int(round(n * flow[2])) for n, flow in zip(steps, flows)), **numbers)


def _card_flows(compiled, placement: Placement, degrees: SymbolicLayout, stage: str) -> list[tuple]:
    """(bytes sent, steps waited, share between servers) of each collective one card of `stage` takes part in,
    built once per layout and stage (sympy's arithmetic on them costs more than their numbers)."""
    key = ("card flows", degrees, stage)
    if key not in compiled.memo:
        held = [c for c in placement.collectives if _on_stage(c, placement, stage)]
        compiled.memo[key] = [(c.sent / _layers(c, placement, degrees, stage),
                               c.steps / _layers(c, placement, degrees, stage), _fraction(c.network)) for c in held]
    return compiled.memo[key]


def _on_stage(collective, placement: Placement, stage: str) -> bool:
    where = placement.stages[collective.edge[0]]
    return stage == "whole" or where in ("stack", stage)


def _layers(collective, placement: Placement, degrees: SymbolicLayout, stage: str):
    """A stage's cards hold 1/pp of the repeated layers, and so of their collectives (not the stage send)."""
    stacked = placement.stages[collective.edge[0]] == "stack" and collective.group != "pp"
    return degrees.pp if stage != "whole" and stacked else 1


def _flow(evaluate, expr) -> int:
    return int(round(evaluate(sp.nsimplify(expr) if not isinstance(expr, sp.Basic) else expr, "flops_matrix")))


def _fraction(share: sp.Expr) -> Fraction:
    """A share between servers as an exact Python fraction (rounded the same way, half to even)."""
    share = sp.Rational(share)
    return Fraction(int(share.p), int(share.q))


def _traffic(compiled, degrees: SymbolicLayout, placement: Placement, evaluate) -> Iterator[Traffic]:
    for (kind, group), found in _traffic_groups(compiled, degrees, placement):
        count = sum(_flow(evaluate, times) for times, _ in found)
        yield Traffic(kind=kind, group=group, count=count, sent_bytes=sum(_flow(evaluate, sent) for _, sent in found))


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
    """Σ over all cards of the parameters each holds: every pipeline position's cards, every replica."""
    def params(stage: str) -> int:
        return evaluate(stage_cost(compiled, degrees, stage).params, "params")

    positions = (
        params("whole") if layout.pp == 1 else params("first") + params("last") + (layout.pp - 2) * params("middle")
    )
    return positions * layout.tp * layout.dp * layout.cp


def _times(card: Card, layout: Layout, device: Device, link: Link, network: Link, peak_format: str) -> Times:
    compute = (card.flops_matrix + card.flops_nonmatrix) / device.peak_for(peak_format)
    memory = (card.read_bytes + card.write_bytes) / device.bandwidth
    inside, steps = card.sent_bytes - card.network_bytes, card.steps - card.network_steps
    communication = (inside / link.bandwidth + steps * link.latency
                     + card.network_bytes / network.bandwidth + card.network_steps * network.latency)
    slots = layout.micro_batches + layout.pp - 1  # stage times one step takes: the pipeline fills and drains
    return Times(device=device.name, link=link.name, compute_format=peak_format, compute=compute, memory=memory,
                 communication=communication,
                 no_overlap=slots * (compute + memory + communication),
                 full_overlap=slots * max(compute, memory, communication), bubble=(layout.pp - 1) / slots)


WORDS = {"mb": "micro_batches", "imb": "imbalance", "sp": "sequence_parallel"}


SWITCH = {"": True, "1": True, "true": True, "on": True, "0": False, "false": False, "off": False}


def _refused(message: str, hint: str | None = None) -> ArchError:
    return ArchError([Diagnostic(code="E405", message=message, hint=hint)])


def _word_value(name: str, value: str, part: str):
    """One word's value: ASCII digits only (`²` passes str.isdigit), a switch from its words, a format's name."""
    if name == "sequence_parallel":
        if value not in SWITCH:
            raise _refused(f"layout `{part}`: sp is on or off", "write sp, sp=on or sp=off")
        return SWITCH[value]
    if name == "dispatch":
        return value
    if name == "imbalance" and re.fullmatch(r"[0-9]{1,6}(\.[0-9]{1,6})?", value):
        return float(value)
    if re.fullmatch(r"[0-9]{1,6}", value):
        return int(value)
    raise _refused(f"layout `{part}`: give NAME=whole number, e.g. tp=8")


def parse_layout(text: str) -> Layout:
    """`tp=8,ep=8,pp=2` (or spaces) as a Layout; never evaluated: whole numbers, `imb` a decimal, `dispatch`
    a format's name, `sp` a switch."""
    values: dict[str, object] = {}
    for part in text.replace(",", " ").split():
        written, _, value = part.partition("=")
        name = WORDS.get(written, written)
        if name in values:  # `tp=2,tp=4`: which one was meant is not ours to guess
            raise _refused(f"layout `{text}` gives `{written}` twice")
        values[name] = _word_value(name, value, part)
    try:
        return Layout(**values)
    except ValueError as error:
        first = error.errors()[0] if hasattr(error, "errors") else {"msg": str(error), "loc": ()}
        where = ".".join(str(p) for p in first["loc"])
        raise ArchError([Diagnostic(code="E405", message=f"layout {where + ': ' if where else ''}{first['msg']}",
                                    hint="degrees: tp, ep, pp, dp, cp; mb (micro-batches), sp (sequence parallel), "
                                         "node (cards per server), limit (servers per token), dispatch (a format), "
                                         "imb (expert load imbalance)")]) from None
