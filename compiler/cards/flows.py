"""The collectives one card of a layout takes part in: their bytes and steps at a call, and the whole model's
traffic by kind and group. placement.py puts the collectives on the graph's edges and collectives.py has the
ring formulas; here each collective becomes a plan (its ring share and copies as a fraction, its buffer's
primitive part evaluated once per shape in figures.py's way), and the symbolic sums serve where a share is not
a number (a kept degree, a request's decodes)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, replace
from fractions import Fraction
from types import SimpleNamespace

import sympy as sp
from pydantic import BaseModel

from ..numbers.assemble import plain
from ..numbers.leaves import Leaf
from ..terms.scenario import Scenario
from .collectives import ring_steps, sent_bytes, servers_spanned
from .figures import positions_at, stage_part
from .nccl import Use
from .placement import Placement
from .symbolic import SymbolicLayout
from .values import Symbolic, as_fraction, table, values_at


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


class Traffic(BaseModel):
    kind: str                   # all_reduce, all_gather, reduce_scatter, all_to_all, send
    group: str                  # tp, ep, pp
    count: int                  # collectives of this kind in one call (every layer)
    sent_bytes: int             # per card


def flow_uses(flows: list[Flow], sent: list, steps: list) -> list[Use]:
    """Each collective of `card_flows` with its evaluated bytes and steps, as NCCL's model reads it: copies of
    one collective (its steps over one copy's), each sending its share of the bytes."""
    uses = []
    for flow, total, waited in zip(flows, sent, steps):
        copies = float(waited) / float(ring_steps(flow.kind, flow.cards)) if flow.cards > 1 else 0.0
        uses.append(Use(kind=flow.kind, cards=flow.cards, servers=flow.servers, copies=copies,
                        sent=float(total) / copies if copies else 0.0, network=float(flow.network)))
    return uses


def flow_figures(compiled, placement: Placement, degrees: SymbolicLayout, stage: str, phase: str,
                  scenario: Scenario) -> list[Flow]:
    """The collectives of one card of `stage` with their bytes and steps as exact numbers at the call."""
    positions = positions_at(phase, scenario)
    key = ("flow plan", degrees, stage, phase, positions)
    if key not in compiled.memo:
        compiled.memo[key] = [(c, int(c.cards), servers, as_fraction(c.network),
                               *collective_plan(compiled, c, part, phase, positions))
                              for c, part, servers in held_flows(compiled, placement, degrees, stage)]
    return [Flow(sent * buffer_value(compiled, table, scenario), steps, network, c.group, c.kind, cards,
                 servers, c.sampling) for c, cards, servers, network, sent, table, steps in compiled.memo[key]]


def held_flows(compiled, placement: Placement, degrees: SymbolicLayout, stage: str) -> list[tuple]:
    """(collective, the part of its copies the card takes part in, servers it spans) of every collective one
    card of `stage` takes part in."""
    key = ("held flows", degrees, stage)
    if key not in compiled.memo:
        held = [(c, _on_card(compiled, c, placement, degrees, stage)) for c in placement.collectives
                if _on_stage(c, placement, stage)]
        compiled.memo[key] = [(c, part, servers_spanned(c, degrees)) for c, part in held
                              if part is not sp.S.Zero]  # sympy's one zero (its == with an int sympifies)
    return compiled.memo[key]


def card_flows(compiled, placement: Placement, degrees: SymbolicLayout, stage: str) -> list[Flow]:
    """Each collective one card of `stage` takes part in, built once per layout and stage (sympy's arithmetic on
    them costs more than their numbers)."""
    key = ("card flows", degrees, stage)
    if key not in compiled.memo:
        compiled.memo[key] = [Flow(c.sent * part, c.steps * part, as_fraction(c.network), c.group, c.kind,
                                   int(c.cards), servers, c.sampling)
                              for c, part, servers in held_flows(compiled, placement, degrees, stage)]
    return compiled.memo[key]


def _on_stage(collective, placement: Placement, stage: str) -> bool:
    where = placement.stages[collective.edge[0]]
    return stage == "whole" or where in ("stack", stage)


def _on_card(compiled, collective, placement: Placement, degrees: SymbolicLayout, stage: str):
    """The part of a collective's copies one card of `stage` takes part in: its layers' part of a repeated
    layer's collectives (the stage send is every stage's own): its first op's (figures.stage_part)."""
    if collective.group == "pp":
        return sp.Integer(1)
    return stage_part(compiled, placement, degrees, stage, collective.edge[0])


def exact(expr) -> sp.Expr:
    """A collective's figure as an exact sympy value (a plain Python number where the degrees make one)."""
    return sp.nsimplify(expr) if not isinstance(expr, sp.Basic) else expr


def traffic(compiled, degrees: SymbolicLayout, placement: Placement, evaluate) -> Iterator[Traffic]:
    groups = traffic_groups(compiled, degrees, placement)
    try:
        positions = positions_at(evaluate.phase, evaluate.scenario)
        key = ("traffic plan", degrees, evaluate.phase, positions)
        if key not in compiled.memo:
            compiled.memo[key] = [(as_fraction(c.times),
                                   *collective_plan(compiled, c, sp.S.One, evaluate.phase, positions)[:2])
                                  for _, found in groups for c in found]
        numbers = [plain(v) for times, sent, table in compiled.memo[key]
                   for v in (times, sent * buffer_value(compiled, table, evaluate.scenario))]
    except Symbolic:
        numbers = evaluate.many(("traffic", degrees), lambda: [
            (exact(expr), "flops_matrix") for _, found in groups for c in found for expr in (c.times, c.sent)])
    values = iter(int(round(v)) for v in numbers)
    for (kind, group), found in groups:
        pairs = [(next(values), next(values)) for _ in found]
        yield Traffic(kind=kind, group=group, count=sum(times for times, _ in pairs),
                      sent_bytes=sum(sent for _, sent in pairs))


def traffic_groups(compiled, degrees: SymbolicLayout, placement: Placement) -> list:
    """The collectives by kind and group: built once per layout."""
    key = ("traffic", degrees)
    if key not in compiled.memo:
        groups: dict[tuple[str, str], list] = {}
        for collective in placement.collectives:
            groups.setdefault((collective.kind, collective.group), []).append(collective)
        compiled.memo[key] = sorted(groups.items())
    return compiled.memo[key]


def buffer_value(compiled, table: tuple | None, scenario):
    """A buffer's primitive part at the call (collective_plan's table; None: 1)."""
    return values_at(compiled, table, (scenario.B, scenario.S, scenario.P, scenario.G))[0] if table else 1


def collective_plan(compiled, collective, part, phase: str, positions: int) -> tuple:
    """A collective as (bytes sent over its buffer's primitive part, that part's table or None when it is 1,
    steps): the ring formulas of collectives.py as fractions, the buffer's rational content taken out of it,
    so the layouts that share a buffer's primitive part share its value at a shape. Found once per
    collective's kind, cards, buffer and copies (layouts that differ elsewhere share them), then taken for
    the `part` of its copies a card holds."""
    key = ("collective plan", collective.kind, collective.cards, collective.size, collective.times, phase, positions)
    if key not in compiled.memo:
        compiled.memo[key] = _collective_plan(compiled, collective, phase, positions)
    if part is sp.S.One:  # sympy's one, by identity (an == with it sympifies the other side)
        return compiled.memo[key]
    sent, buffer, steps = compiled.memo[key]
    share = _part(compiled, part, positions)
    return _whole(sent * share), buffer, _whole(steps * share)


def _whole(value: Fraction) -> Fraction | int:
    """A whole number as an int (its products with a buffer's value are an int's, not Fraction's, arithmetic)."""
    return value.numerator if value.denominator == 1 else value


def _part(compiled, part, positions: int) -> Fraction:
    key = ("collective part", part, positions)
    if key not in compiled.memo:
        compiled.memo[key] = as_fraction(part, positions)
    return compiled.memo[key]


def _collective_plan(compiled, collective, phase: str, positions: int) -> tuple:
    n = as_fraction(collective.cards, positions)
    if n.denominator != 1:
        raise Symbolic(str(collective.cards))
    times = as_fraction(collective.times, positions)
    cards = sp.Integer(int(n))
    share = as_fraction(sent_bytes(collective.kind, sp.Integer(1), cards))  # collectives.py's, for one byte
    steps = as_fraction(ring_steps(collective.kind, cards)) * times
    content, table = _size_plan(compiled, collective.size, phase, positions)
    return _whole(times * share * content), table, _whole(steps)


def _size_plan(compiled, expr, phase: str, positions: int) -> tuple[Fraction, tuple | None]:
    """A buffer as its rational content and the table of its primitive part (None: the part is a number)."""
    key = ("content", expr)
    if key not in compiled.memo:
        compiled.memo[key] = (sp.Integer(expr) if isinstance(expr, int) else expr).as_content_primitive()
    content, base = compiled.memo[key]
    content = Fraction(int(content.p), int(content.q))
    if base.is_Number:
        return content * as_fraction(base, positions), None
    key = ("size table", base, phase)
    table(compiled, key, lambda: ({"0": Leaf(base, phase, "flops_matrix")}, None))
    return content, key


# ------------------------------------------------------------------ the layout search's screen, over arrays

def collective_seconds(compiled, placement, degrees, layouts: list, tp, ep, value, shape: tuple,
                       link) -> list[tuple]:
    """The layout search's screen (screen.py): each collective of a placement with TP and EP as letters, and a
    send between stages, as (its first op, or None for the send; NCCL's time of all its copies in the model,
    an array over `layouts`): flow_uses' copies and bytes, nccl.seconds over arrays. `value` evaluates an
    expression of the degrees over the layouts."""
    import numpy as np

    from ..numbers.arrays import NotAnArray
    from .collectives import group_extent
    from .nccl import seconds_of_arrays
    from .placement import stage_sends

    node = np.array([lay.node for lay in layouts], dtype=np.float64)
    found = []
    pipelined = replace(degrees, pp=sp.Integer(2))  # a send's bytes, whatever the pp
    stages = np.array([lay.pp for lay in layouts], dtype=np.float64)
    numbered = SimpleNamespace(tp=tp, cp=1, dp=np.array([lay.dp for lay in layouts], dtype=np.float64), pp=stages)
    for collective in list(placement.collectives) + stage_sends(compiled.graph, placement, pipelined):
        if collective.group not in ("tp", "sampling", "ep", "pp"):
            raise NotAnArray(collective.group)  # the search's layouts have no cp, etp or node-limited groups
        cards = stages if collective.group == "pp" else value(collective.cards)
        buffer = value(_decode_size(compiled, collective.size, shape))
        copies = float(collective.times) * np.where(cards > 1, 1.0, 0.0)  # flows.flow_uses: steps over one's
        each = sent_bytes(collective.kind, buffer, cards)  # what one copy sends from a card
        extent = group_extent(collective, numbered)
        extent = value(extent) if isinstance(extent, sp.Basic) else extent
        servers = np.where(extent <= node, 1.0, np.minimum(cards, np.ceil(extent / node)))
        network = np.where(extent <= node, 0.0,
                           (extent - node) / np.maximum(extent - 1, 1) if collective.kind == "all_to_all" else 1.0)
        seconds = seconds_of_arrays(collective.kind, cards, servers, copies, each, network, link, link)
        found.append((None if collective.group == "pp" else collective.edge[0], seconds))
    return found


def _decode_size(compiled, size, shape: tuple):
    """A collective's buffer at the decode call (its letters m, H, ... as the numbers path reads them), as an
    expression of the degrees alone."""
    from ..terms.scenario import at_phase

    key = ("decode size", size, shape)
    if key not in compiled.memo:
        compiled.memo[key] = at_phase(exact(size), "decode", compiled.conventions).xreplace(_shape(shape))
    return compiled.memo[key]


def _shape(shape: tuple) -> dict:
    from ..terms.symbols import B, G, P, S

    return {B: shape[0], S: shape[1], P: shape[2], G: shape[3]}
