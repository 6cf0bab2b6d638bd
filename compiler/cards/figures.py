"""A card's figures as numbers: each op's cost evaluated once per call shape, then scaled by its share as a number.

The symbolic card (card.py) is one sympy sum per layout and stage of every op's cost times its share; it is what
a formula with a kept degree shows (`archcost layout --keep tp`). A layout search evaluates thousands of layouts
at one shape, and building and evaluating those sums was nearly all its time. A card's figure is linear in the
shares, so it is Σ over the card's ops of the op's value at the shape times its share: the values come from one
evaluator per model and phase (an expert layer whose EP group gathers other cards' tokens has its own, per
ratio: card.group_rows), and once a layout's degrees are numbers every share is a fraction. Exact throughout:
the products are summed as integers over each share's denominator. tests/test_card_figures.py checks these
numbers against the symbolic card's for every spec. The values themselves are values.py's; where a share or
a value is not a number there (`Symbolic`), the caller evaluates the symbolic card.
"""

from __future__ import annotations

from fractions import Fraction
from functools import lru_cache
from math import gcd

from ..graph.topology import topology
from ..numbers.assemble import plain
from ..ops.sharding import HELD
from .card import group_rows, on_card, op_group
from .pipeline import stage_fraction
from .values import (
    COLUMN_NAMES,
    FIELDS,
    REMEMBERED_SHAPES,
    Symbolic,
    as_fraction,
    table_of,
    values_at,
)

COLUMNS = {name: (index,) for index, name in enumerate(FIELDS)}
COLUMNS["read_activations"] = (FIELDS.index("read_activations"), len(FIELDS))  # its own and its edges'
# each column's multiplier: 0 the op's hold, 1 its work, 2 its work on every position's card, 3 its cache's hold
MULTIPLIERS = tuple(0 if name in HELD else 2 if name == "read_weights" else 3 if name == "read_state" else 1
                    for name in COLUMN_NAMES)
PHASES = ("call", "prefill", "decode")  # a request's decodes are summed: Σ share × cost is not a product there


def card_figures(compiled, placement, degrees, stage: str, phase: str, scenario, fields=FIELDS) -> dict:
    """The card's `fields` at the call, exact (plain: integers, or floats where a size makes a fraction).

    A card's ops come in groups whose copies on it are one part of their layers: the ops before the layers,
    those after them, each stack's (card.on_card's `parts`). Each group's Σ value × share × layers depends on
    the split over a stage's cards and the call alone, so it is summed once for every layout that shares
    them, and a layout's card is a few groups times their part of the stage (a search of 4,096 cards has a
    few dozen splits and hundreds of layouts). Where a value is a float its products are rounded as
    floats, so the card is summed op by op as ever (the order of those roundings is its printed figure's)."""
    positions = positions_at(phase, scenario)
    shape = (scenario.B, scenario.S, scenario.P, scenario.G)
    groups = _groups_on_card(compiled, placement, degrees, stage)
    fields = tuple(fields)
    sums = [_group_sums(compiled, placement, degrees, phase, positions, shape, group, fields) for group, _ in groups]
    if any(found is None for found in sums):
        return _card_by_op(compiled, placement, degrees, stage, phase, positions, shape, fields)
    figures = {}
    for column, name in enumerate(fields):
        parts: dict[int, int] = {}
        for (_, (part, of)), found in zip(groups, sums):
            top, bottom = found[column]
            if top:
                parts[bottom * of] = parts.get(bottom * of, 0) + top * part
        figures[name] = _total(parts)
    return figures


def _card_by_op(compiled, placement, degrees, stage: str, phase: str, positions: int, shape: tuple,
                fields) -> dict:
    """card_figures op by op: Σ over each share's denominator of value × numerator."""
    plan = _plan(compiled, placement, degrees, stage, phase, positions)
    wanted = [COLUMNS[name] for name in fields]
    sums: list[dict] = [{} for _ in wanted]
    for table_key, indices, factors in plan:
        values = values_at(compiled, table_key, shape)
        for parts, columns in zip(sums, wanted):
            for column in columns:
                value = values[indices[column]]
                numerator, denominator = factors[column]
                if value and numerator:
                    parts[denominator] = parts.get(denominator, 0) + value * numerator
    return {name: _total(parts) for name, parts in zip(fields, sums)}


def _groups_on_card(compiled, placement, degrees, stage: str) -> list[tuple]:
    """(group, its part of the stage as (numerator, denominator)) of each group of ops one card of `stage` holds
    (on_card's parts: where an op sits and, when pp splits the layers, its stack's span), the groups with no
    copies left out; found once per pipeline split and stage."""
    key = ("card groups", placement.stage_layers, degrees.pp, stage)
    if key not in compiled.memo:
        found = {}
        for node_id, group in op_groups(compiled, placement).items():
            if group not in found and (stage == "whole" or group[0] in ("stack", stage)):
                found[group] = _share(compiled, stage_part(compiled, placement, degrees, stage, node_id), 1)
        compiled.memo[key] = [(group, part) for group, part in found.items() if part[0] != 0]
    return compiled.memo[key]


def op_groups(compiled, placement) -> dict[str, tuple]:
    """Each op's group (card.op_group), found once per model and whether pp splits its layers."""
    key = ("op groups", bool(placement.stage_layers))
    if key not in compiled.memo:
        compiled.memo[key] = {node_id: op_group(placement, node_id) for node_id in placement.stages}
    return compiled.memo[key]


def stage_part(compiled, placement, degrees, stage: str, node_id: str):
    """The part of its layers' copies an op has on a card of `stage` (pipeline.stage_fraction), found once per
    pipeline split, stage and group of ops: the ops of a group share it."""
    key = ("stage part", placement.stage_layers, degrees.pp, stage, op_groups(compiled, placement)[node_id])
    if key not in compiled.memo:
        compiled.memo[key] = stage_fraction(placement, node_id, degrees, stage)
    return compiled.memo[key]


def _members(compiled, placement) -> dict[tuple, list[str]]:
    """The ops of each group (op_groups), in the graph's order."""
    key = ("group members", bool(placement.stage_layers))
    if key not in compiled.memo:
        found: dict[tuple, list[str]] = {}
        for node_id, group in op_groups(compiled, placement).items():
            found.setdefault(group, []).append(node_id)
        compiled.memo[key] = found
    return compiled.memo[key]


def _group_sums(compiled, placement, degrees, phase: str, positions: int, shape: tuple, group: tuple,
                fields: tuple):
    """Σ over a group's ops of value × share × layers, each of `fields` as (numerator, denominator) in lowest
    terms, at the call; None where a value is not exact (a float). Kept per split over a stage's cards and call."""
    key = ("group sums", degrees.within_a_stage(), phase, positions, group, fields)
    if key not in compiled.memo:
        compiled.memo[key] = (_group_plan(compiled, placement, degrees, phase, positions, group, fields), {})
    plan, remembered = compiled.memo[key]
    if shape not in remembered:
        if len(remembered) >= REMEMBERED_SHAPES:
            remembered.clear()
        remembered[shape] = _summed(compiled, plan, shape, len(fields))
    return remembered[shape]


def _group_plan(compiled, placement, degrees, phase: str, positions: int, group: tuple, fields: tuple) -> list:
    """The group's ops as (their table, [(field, where the value is, numerator, denominator)] of each nonzero
    multiplier: share × layers), so that a call's sum is one pass of multiplications."""
    plan = []
    wanted = _wanted(fields)
    for node_id in _members(compiled, placement)[group]:
        table_key, where, unit = _unit(compiled, placement, degrees, node_id, phase, positions)
        layers = _share(compiled, compiled.graph.nodes[node_id]["op"].multiplicity, 1)
        choices = [_times(part, layers) for part in unit]
        plan.append((table_key, [(index, where[column], *choices[kind]) for index, column, kind in wanted
                                 if choices[kind][0]]))
    return plan


@lru_cache(maxsize=16)
def _wanted(fields: tuple) -> tuple[tuple[int, int, int], ...]:
    """(the field's index, a column it sums, that column's multiplier) for every column of `fields`, in order."""
    return tuple((index, column, MULTIPLIERS[column]) for index, name in enumerate(fields) for column in COLUMNS[name])


def _summed(compiled, plan: list, shape: tuple, count: int):
    sums: list[dict] = [{} for _ in range(count)]
    for table_key, terms in plan:
        values = values_at(compiled, table_key, shape)
        for index, where, numerator, denominator in terms:
            value = values[where]
            if type(value) is Fraction:  # exact still (an expert's weights read a fraction of the time)
                value, denominator = value.numerator, denominator * value.denominator
            elif type(value) is not int:
                return None
            if value:
                parts = sums[index]
                parts[denominator] = parts.get(denominator, 0) + value * numerator
    return tuple(_lowest(parts) for parts in sums)


def _lowest(parts: dict) -> tuple[int, int]:
    """Σ numerator/denominator over the parts of an integer sum, as (numerator, denominator) in lowest terms."""
    numerator, denominator = 0, 1
    for part_denominator, part in parts.items():
        numerator, denominator = numerator * part_denominator + part * denominator, denominator * part_denominator
    common = gcd(numerator, denominator)
    return numerator // common, denominator // common


def positions_at(phase: str, scenario) -> int:
    """What a share's `P` is at the call (at_phase: one new position in a decode)."""
    if phase not in PHASES:
        raise Symbolic(phase)
    return 1 if phase == "decode" else scenario.P


def _plan(compiled, placement, degrees, stage: str, phase: str, positions: int) -> list[tuple]:
    """The card's ops as (table, where each of COLUMN_NAMES' values is in it, the multiplier of each): built
    once per layout, stage and call, so a report's numbers are one pass of multiplications."""
    key = ("card plan", degrees, stage, phase, positions)
    memo = compiled.memo
    if key not in memo:
        plan = []
        for node_id, copies in copies_on_card(compiled, placement, degrees, stage):
            table_key, where, unit = _unit(compiled, placement, degrees, node_id, phase, positions)
            choices = unit if copies == (1, 1) else [_times(part, copies) for part in unit]
            plan.append((table_key, where, tuple(choices[kind] for kind in MULTIPLIERS)))
        memo[key] = plan
    return memo[key]


def _unit(compiled, placement, degrees, node_id: str, phase: str, positions: int) -> tuple:
    """An op's table, where its values are in it, and its multipliers for one copy (card._scaled's shares, as
    fractions): its hold, its work, its work on every position's card (weight reads), the part of the cache it
    reads (its work where it reads none). All of it follows from the placement's split over one stage's cards,
    so it is kept for every layout that differs in pp and dp alone (a search of 4,096 cards meets a few dozen
    splits in hundreds of layouts)."""
    units = compiled.memo.setdefault(("card units", degrees.within_a_stage(), phase, positions), {})
    if node_id not in units:
        given = placement.shares[node_id]
        table_key, where = table_of(compiled, phase, node_id, group_rows(given, degrees))
        cache = _cache_of(compiled, node_id)
        held = _share(compiled, given.hold, positions)
        worked = _share(compiled, given.work, positions)
        weights = _times(worked, _share(compiled, given.positions, positions))
        state = worked if cache is None else _share(compiled, placement.shares[cache].hold, positions)
        units[node_id] = table_key, where, (held, worked, weights, state)
    return units[node_id]


def copies_on_card(compiled, placement, degrees, stage: str) -> list[tuple[str, tuple[int, int]]]:
    """card.on_card's (op id, copies) as (numerator, denominator), found once per pipeline split and stage:
    the copies depend on a layout through its stages' layers alone (pipeline.stage_fraction)."""
    key = ("copies on card", placement.stage_layers, degrees.pp, stage)
    if key not in compiled.memo:
        compiled.memo[key] = [(node_id, _share(compiled, copies, 1))
                              for node_id, copies in on_card(compiled.graph, placement, degrees, stage)]
    return compiled.memo[key]


def _times(a: tuple[int, int], b: tuple[int, int]) -> tuple[int, int]:
    """The product of two fractions as (numerator, denominator) in lowest terms (Fraction's own arithmetic
    costs more than the rest of a layout's card)."""
    numerator, denominator = a[0] * b[0], a[1] * b[1]
    common = gcd(numerator, denominator)
    return numerator // common, denominator // common


def _cache_of(compiled, node_id: str) -> str | None:
    """The op whose state an op reads (its state edge's source), or None."""
    return topology(compiled.graph, compiled.memo).caches.get(node_id)


def _share(compiled, share, positions: int) -> tuple[int, int]:
    """A share as (numerator, denominator), found once per expression and P."""
    key = ("share fraction", share, positions)
    if key not in compiled.memo:
        found = as_fraction(share, positions)
        compiled.memo[key] = (found.numerator, found.denominator)
    return compiled.memo[key]


def _total(parts: dict):
    """Σ numerator/denominator over the parts of a sum, plain (integers summed as integers)."""
    if any(type(part) is not int for part in parts.values()):  # a fractional value in the sum: Fraction's arithmetic
        return plain(sum((Fraction(n, d) for d, n in parts.items()), Fraction(0)))
    numerator, denominator = _lowest(parts)
    return numerator if denominator == 1 else plain(Fraction(numerator, denominator))
