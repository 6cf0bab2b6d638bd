"""A card's figures as numbers: each op's cost evaluated once per call shape, then scaled by its share as a number.

The symbolic card (card.py) is one sympy sum per layout and stage of every op's cost times its share; it is what
a formula with a kept degree shows (`archcost layout --keep tp`). A layout search evaluates thousands of layouts
at one shape, and building and evaluating those sums was nearly all its time. A card's figure is linear in the
shares, so it is Σ over the card's ops of the op's value at the shape times its share: the values come from one
evaluator per model and phase (an expert layer whose EP group gathers other cards' tokens has its own, per
ratio: card.group_rows), and once a layout's degrees are numbers every share is a fraction. Exact throughout:
the products are summed as integers over each share's denominator. tests/test_card_figures.py checks these
numbers against the symbolic card's for every spec.

`Symbolic` says the numbers cannot be had this way (a degree kept as a letter, a request's decodes, whose sum
is not a product of sums, a value the fast forms do not vouch for); the caller then evaluates the symbolic card.
"""

from __future__ import annotations

from fractions import Fraction
from math import gcd

import sympy as sp

from ..numbers import forms
from ..numbers.assemble import Evaluator, plain
from ..numbers.evaluate import state_bytes_at
from ..numbers.leaves import Leaf, forms_of
from ..ops.sharding import HELD
from ..terms.quantities import LEVELS
from ..terms.symbols import P
from .card import group_rows, on_card, stage_cost

CARD_FIELDS = ("params", "weight_bytes", "state_bytes", "flops_matrix", "flops_nonmatrix")
READS = ("read_weights", "read_lookups", "read_state", "read_activations")
WRITES = ("write_state", "write_activations")
FIELDS = CARD_FIELDS + READS + WRITES
EDGE_READS = "edge reads"   # the activations an op reads over its input edges (the graph keeps them on edges)
COLUMN_NAMES = FIELDS + (EDGE_READS,)  # an op's values in a card's plan, in this order
COLUMNS = {name: (index,) for index, name in enumerate(FIELDS)}
COLUMNS["read_activations"] = (FIELDS.index("read_activations"), len(FIELDS))  # its own and its edges'
# each column's multiplier: 0 the op's hold, 1 its work, 2 its work on every position's card, 3 its cache's hold
MULTIPLIERS = tuple(0 if name in HELD else 2 if name == "read_weights" else 3 if name == "read_state" else 1
                    for name in COLUMN_NAMES)
PHASES = ("call", "prefill", "decode")  # a request's decodes are summed: Σ share × cost is not a product there
REMEMBERED_SHAPES = 4096    # op values kept per model, shapes beyond this many forget the older ones


class Symbolic(Exception):
    """The figures need the symbolic card: a share or a value that is not a number at this call."""


def card_figures(compiled, placement, degrees, stage: str, phase: str, scenario, fields=FIELDS) -> dict:
    """The card's `fields` at the call, exact (plain: integers, or floats where a size makes a fraction)."""
    plan = _plan(compiled, placement, degrees, stage, phase, positions_at(phase, scenario))
    shape = (scenario.B, scenario.S, scenario.P, scenario.G)
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
            rows = group_rows(placement.shares[node_id], degrees)
            table_key, where = _table_of(compiled, phase, node_id, rows)
            plan.append((table_key, where, _factors(compiled, placement, node_id, copies, positions)))
        memo[key] = plan
    return memo[key]


def copies_on_card(compiled, placement, degrees, stage: str) -> list[tuple[str, tuple[int, int]]]:
    """card.on_card's (op id, copies) as (numerator, denominator), found once per layout and stage."""
    key = ("copies on card", degrees, stage)
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


def _factors(compiled, placement, node_id: str, copies: tuple[int, int], positions: int) -> tuple:
    """Each column's multiplier for an op on the card (card._scaled's, as fractions): held fields by its
    hold, flows by its work, weight reads by its work on every position's card, cache reads by the part of
    the cache it reads (its work where it reads none), its input edges' reads by its work."""
    given = placement.shares[node_id]
    cache = _cache_of(compiled, node_id)
    cache_hold = None if cache is None else placement.shares[cache].hold
    key = ("card factors", given.hold, given.work, given.positions, cache_hold, copies, positions)
    if key not in compiled.memo:
        compiled.memo[key] = _multipliers(compiled, given, cache_hold, copies, positions)
    return compiled.memo[key]


def _multipliers(compiled, given, cache_hold, copies: tuple[int, int], positions: int) -> tuple:
    held = _times(_share(compiled, given.hold, positions), copies)
    worked = _times(_share(compiled, given.work, positions), copies)
    weights = _times(worked, _share(compiled, given.positions, positions))
    state = worked if cache_hold is None else _times(_share(compiled, cache_hold, positions), copies)
    choices = (held, worked, weights, state)
    return tuple(choices[kind] for kind in MULTIPLIERS)


def _cache_of(compiled, node_id: str) -> str | None:
    """The op whose state an op reads (its state edge's source), or None."""
    if ("caches read",) not in compiled.memo:
        found = {}
        for source, target, edge in compiled.graph.edges(data=True):
            if edge["kind"] == "state":
                found.setdefault(target, source)
        compiled.memo["caches read",] = found
    return compiled.memo["caches read",].get(node_id)


def _share(compiled, share, positions: int) -> tuple[int, int]:
    """A share as (numerator, denominator), found once per expression and P."""
    key = ("share fraction", share, positions)
    if key not in compiled.memo:
        found = as_fraction(share, positions)
        compiled.memo[key] = (found.numerator, found.denominator)
    return compiled.memo[key]


def as_fraction(share, positions: int = 1) -> Fraction:
    """A share as an exact fraction: a number once the layout's degrees and the call's P are."""
    if not isinstance(share, sp.Basic):
        share = sp.nsimplify(share)
    if not share.is_Rational:
        share = share.xreplace({P: sp.Integer(positions)})
        if not share.is_Rational:
            raise Symbolic(str(share))
    return Fraction(int(share.p), int(share.q))


def _table_of(compiled, phase: str, node_id: str, rows: dict) -> tuple[tuple, dict]:
    """The table holding an op's values (every op's at the phase; an expert layer's own at its EP group's
    rows) and where the op's are in it."""
    ratio = rows and next(iter(rows.values())) / next(iter(rows))
    key = ("card table", phase, FIELDS) + ((node_id, ratio) if rows else ())
    _, where = _table(compiled, key, phase, [node_id] if rows else list(compiled.graph.nodes), rows, FIELDS)
    return key, where[node_id]


def values_at(compiled, key: tuple, shape: tuple[int, int, int, int]) -> tuple:
    """A table's values at a shape (B, S, P, G), remembered for the next layout at the same shape."""
    remembered = compiled.memo.setdefault(("values at", key), {})
    if shape not in remembered:
        if len(remembered) >= REMEMBERED_SHAPES:
            remembered.clear()
        try:
            remembered[shape] = compiled.memo[key][0].function(*shape)
        except (ZeroDivisionError, ValueError, TypeError, OverflowError) as error:
            raise Symbolic(str(error)) from None
    return remembered[shape]


def _table(compiled, key: tuple, phase: str, node_ids: list, rows: dict, fields: tuple) -> tuple:
    """One evaluator of every distinct (expression, rule) among the ops' fields, and where each op's are."""
    def build():
        leaves, seen, where = {}, {}, {}
        for node_id in node_ids:
            cost = compiled.graph.nodes[node_id]["cost"]
            exprs = {name: getattr(cost, name) for name in fields}
            if rows:
                exprs = {name: e if name in HELD else e.xreplace(rows) for name, e in exprs.items()}
            if "read_activations" in fields:
                exprs[EDGE_READS] = sp.Add(*(edge["cost"]["read_activations"] for _, _, edge
                                             in compiled.graph.in_edges(node_id, data=True) if "cost" in edge))
            where[node_id] = []
            for name, expr in exprs.items():
                field = "read_activations" if name == EDGE_READS else name
                leaf = (expr, field in LEVELS)
                if leaf not in seen:
                    seen[leaf] = len(seen)
                    leaves[str(seen[leaf])] = Leaf(expr, phase, field)
                where[node_id].append(seen[leaf])
        return leaves, where
    return table(compiled, key, build)


def table(compiled, key: tuple, build) -> tuple:
    """(evaluator, extra) of the leaves `build()` gives with its extra, built once per model under `key` (what
    values_at evaluates); Symbolic when a leaf holds a name the scenario does not bind."""
    if key not in compiled.memo:
        leaves, extra = build()
        try:
            compiled.memo[key] = (Evaluator(forms_of(compiled, leaves)), extra)
        except forms.NotPlain:
            compiled.memo[key] = None
    if compiled.memo[key] is None:
        raise Symbolic("a name the scenario does not bind")
    return compiled.memo[key]


def state_on_card(compiled, placement, degrees, stage: str):
    """The card's context state as a function of (requests, positions each): what a decode leaves when it
    brings the history to `positions` (numbers.evaluate.state_bytes_at), Σ over the card's ops of their state
    there times their hold; one small table of the ops' state, evaluated once per (requests, positions)."""
    key = ("card table", "decode", ("state_bytes",))
    _, where = _table(compiled, key, "decode", list(compiled.graph.nodes), {}, ("state_bytes",))
    terms = [(where[node_id][0], *_times(_share(compiled, placement.shares[node_id].hold, 1), copies))
             for node_id, copies in copies_on_card(compiled, placement, degrees, stage)
             if compiled.graph.nodes[node_id]["cost"].state_bytes != 0]

    def state(requests: int, positions: int):
        try:
            values = values_at(compiled, key, (requests, positions - 1, 1, 1))
        except Symbolic:  # the symbolic card says why there is no number
            return state_bytes_at(compiled, positions, requests, stage_cost(compiled, degrees, stage).state_bytes)
        parts: dict[int, object] = {}
        for index, numerator, denominator in terms:
            if numerator and values[index]:
                parts[denominator] = parts.get(denominator, 0) + values[index] * numerator
        return _total(parts)
    return state


def _total(parts: dict):
    """Σ numerator/denominator over the parts of a sum, plain (integers summed as integers)."""
    numerator, denominator = 0, 1
    for part_denominator, part in parts.items():
        if type(part) is not int:  # a fractional value somewhere in the sum: Fraction's arithmetic
            return plain(sum((Fraction(n, d) for d, n in parts.items()), Fraction(0)))
        numerator, denominator = numerator * part_denominator + part * denominator, denominator * part_denominator
    common = gcd(numerator, denominator)
    numerator, denominator = numerator // common, denominator // common
    return numerator if denominator == 1 else plain(Fraction(numerator, denominator))
