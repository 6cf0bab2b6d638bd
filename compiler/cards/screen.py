"""The layout search's screen: every layout of a search costed at once, vectorised over its degrees.

`archcost layouts --top N` prints N layouts of the hundreds a card count allows (819 of Qwen3-235B-A22B on
4,096 cards). Each printed row is the exact `fleet.fit` of its layout; which rows those are is settled here,
from the sort key of every layout (whether its busiest card fits, the decode step's no-overlap bound) in
float64 arrays: the busiest card's fields are Σ over its ops of the op's value at the call × its share of
the card × the copies the stage holds (figures.py's sum), and the shares are sympy expressions of TP and EP
taken once from a placement with those degrees as letters (`layout --keep tp,ep`), evaluated over the
layouts' degrees at once; the stages' copies follow from each layout's PP (pipeline.stage_split), the
collectives' times from nccl.py's model applied to arrays.

The screen decides nothing the printed rows show: fleet.ranked evaluates exactly every layout whose key the
screen puts at or near the N-th, checks each against its screened key, and searches exactly instead when one
differs (tests/test_layout_screen.py holds the screen equal to the exact keys for every spec).
"""

from __future__ import annotations

from collections.abc import Callable
from types import SimpleNamespace

import numpy as np
import sympy as sp

from ..numbers.arrays import evaluator
from ..terms.scenario import Scenario
from ..terms.symbols import P
from .figures import MULTIPLIERS, _cache_of
from .flows import collective_seconds
from .pipeline import stage_fraction, stage_keys, stage_split
from .placement import _uneven, graph_stages, placed
from .values import COLUMN_NAMES, EDGE_READS, READS, WRITES, table_of, values_at

TOLERANCE = 1e-9  # a screened key and the exact one differ by rounding alone: relative error ~1e-15 a sum


class Unscreened(Exception):
    """The screen cannot cost this search (a share or a size that is not a number at the call): search exactly."""


def screen(compiled, candidates: list, device, link, context: int, batch: int, workspace: int,
           peak: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(refused, free, step_no_overlap) of every candidate layout of a decode search at `context` positions
    and `batch` requests: refused where the exact search refuses the layout (uneven heads, experts or
    stages), else the bytes its busiest card leaves free (fleet.Fit.free_bytes, negative: it does not fit)
    and its decode step's no-overlap bound in seconds (its slowest stage's card's)."""
    count = len(candidates)
    tp = np.array([c.tp for c in candidates], dtype=np.float64)
    ep = np.array([c.ep for c in candidates], dtype=np.float64)
    pp = [c.pp for c in candidates]
    refused = np.array([_refused(compiled, c) for c in candidates])
    free = np.full(count, -np.inf)
    step = np.full(count, np.inf)
    # layouts alike in what their placement's structure depends on: whether experts split over EP, and the
    # requests a replica serves (the op values' shape)
    groups: dict[tuple, list[int]] = {}
    for index, layout in enumerate(candidates):
        if not refused[index]:
            groups.setdefault((layout.ep > 1, -(-batch // layout.dp)), []).append(index)
    for (split_experts, requests), members in groups.items():
        rows = np.array(members)
        found = _costed(compiled, [candidates[i] for i in members], tp[rows], ep[rows], [pp[i] for i in members],
                        split_experts, Scenario(B=requests, S=context - 1, P=1), device, link, peak)
        memory, seconds = found
        free[rows] = device.memory - memory - workspace
        step[rows] = seconds
    return refused, free, step


def _refused(compiled, layout) -> bool:
    """What placement.placed refuses before placing (E405): heads or experts split unevenly over (tp, ep), or
    layers that cannot fill pp stages."""
    split_key, stages_key = ("screen uneven", layout.tp, layout.ep), ("screen stages", layout.pp)
    memo = compiled.memo
    if split_key not in memo:
        degrees = SimpleNamespace(tp=layout.tp, ep=layout.ep, redundant=layout.redundant)
        memo[split_key] = any(_uneven(op, degrees) for op in _distinct_splits(compiled))
    if stages_key not in memo:
        memo[stages_key] = isinstance(stage_split(_graph_stages(compiled)[2], _stages_of(layout.pp)), str)
    return memo[split_key] or memo[stages_key]


def _distinct_splits(compiled) -> list:
    """One op of each way the model's ops split (shard word, heads, experts): what placement._uneven reads."""
    if ("screen splits",) not in compiled.memo:
        ops = {}
        for node_id in compiled.graph.nodes:
            op = compiled.graph.nodes[node_id]["op"]
            ops.setdefault((op.shard, str(getattr(op.args, "count", None))), op)
        compiled.memo["screen splits",] = list(ops.values())
    return compiled.memo["screen splits",]


def _stages_of(pp: int) -> SimpleNamespace:
    """What pipeline.stage_split reads of a layout's degrees."""
    return SimpleNamespace(pp=pp, first_layers=None, last_layers=None)


def _graph_stages(compiled) -> tuple:
    return graph_stages(compiled.graph, compiled.memo)


def _letters(compiled, candidate, split_experts: bool):
    """A placement of the model with TP (and EP where experts split) as letters, and its degrees."""
    keep = frozenset({"tp", "ep"} if split_experts else {"tp"})
    degrees = candidate.model_copy(update={"pp": 1, "dp": 1, "first": None, "last": None}).degrees(
        keep, compiled.ir.formats)  # its experts split over EP as the candidate's do (ep > 1)
    return degrees, placed(compiled, degrees)


def _costed(compiled, layouts: list, tp: np.ndarray, ep: np.ndarray, pp: list[int], split_experts: bool,
            scenario: Scenario, device, link, peak: float) -> tuple[np.ndarray, np.ndarray]:
    """(memory of the busiest card, the decode step's no-overlap bound: its slowest stage's) of layouts alike in
    structure. A card's figures are linear in its ops' copies, and the copies of every op of one stack (or of the
    ops before or after the layers) are the same part of its multiplicity: each such group's Σ value × share ×
    multiplicity is taken once, then each pipeline position takes its part of every group."""
    degrees, placement = _letters(compiled, layouts[0], split_experts)
    letters = {sp.Symbol("tp", positive=True, integer=True): tp, sp.Symbol("ep", positive=True, integer=True): ep,
               P: np.ones_like(tp)}
    value = evaluator(letters)
    stages, spans, total = _graph_stages(compiled)
    depths = sorted(set(pp))  # the stage copies depend on a layout through its pp alone: a row per pp
    row = np.array([depths.index(n) for n in pp])
    splits = [stage_split(total, _stages_of(n)) for n in depths]
    shape = (scenario.B, scenario.S, scenario.P, scenario.G)
    groups = _group_sums(compiled, placement, degrees, value, shape, layouts)
    representatives = {_position_of(stages, spans, node_id): node_id for node_id in compiled.graph.nodes}
    waits = [(None if source is None else _position_of(stages, spans, source), seconds)
             for source, seconds in collective_seconds(compiled, placement, degrees, layouts, tp, ep, value, shape,
                                                       link)]
    best = (np.full(len(layouts), -np.inf), np.full(len(layouts), -np.inf), np.zeros(len(layouts)))
    slowest = np.full(len(layouts), -np.inf)  # the step waits for its slowest stage (layout._slowest)
    slots = np.array(pp, dtype=np.float64)  # a decode step's pipeline slots: max(micro-batches, pp), mb = 1
    pipelined = np.array([bool(split) for split in splits])[row]
    stage_names = [_stage_names(split) for split in splits]
    for index in range(max(len(s) if s else 1 for s in splits)):
        names = [named[index] if index < len(named) else None for named in stage_names]
        present = np.array([name is not None for name in names])[row]
        if present.any():
            part = _Parts(compiled, splits, names, row, representatives)
            memory, flops, step = _position(groups, waits, part, pipelined & present, tp, device, peak)
            best = _heavier(best, present, memory, flops, slots * step)
            slowest = np.where(present, np.maximum(slowest, slots * step), slowest)
    return best[0], slowest


class _Parts(dict):
    """Each position group's part of a pipeline position (`names`: its stage's name for each pp), an array over
    the layouts, found when asked from one op of the group."""

    def __init__(self, compiled, splits: list, names: list, row: np.ndarray, representatives: dict):
        super().__init__()
        self.compiled, self.splits, self.names, self.row, self.representatives = \
            compiled, splits, names, row, representatives

    def __missing__(self, where: tuple) -> np.ndarray:
        node_id = self.representatives[where]
        self[where] = np.array([_on_position(self.compiled, split, name, node_id)
                                for split, name in zip(self.splits, self.names)])[self.row]
        return self[where]


def _position(groups: dict, waits: list, part: _Parts, sends: np.ndarray, tp: np.ndarray, device, peak: float):
    """(memory, matrix FLOPs, one stage's time without overlap) of a card of one pipeline position."""
    columns = sum(part[where] * sums for where, sums in groups.items())  # (columns, layouts)
    fields = dict(zip(COLUMN_NAMES, columns))
    compute = (fields["flops_matrix"] + fields["flops_nonmatrix"]) / peak
    traffic = sum(fields[name] for name in READS) + fields[EDGE_READS] + sum(fields[name] for name in WRITES)
    communication = np.zeros_like(tp)
    for where, seconds in waits:  # a send between stages (None): every stage's own, once a step
        communication = communication + (np.where(sends, seconds, 0.0) if where is None else part[where] * seconds)
    return fields["weight_bytes"] + fields["state_bytes"], fields["flops_matrix"], \
        compute + traffic / device.bandwidth + communication


def _heavier(best: tuple, present: np.ndarray, memory: np.ndarray, flops: np.ndarray, step: np.ndarray) -> tuple:
    """fleet's busiest card: the most memory, then the most matrix FLOPs, the first of equals kept."""
    held, most, _ = best
    heavier = present & ((memory > held * (1 + TOLERANCE))
                         | ((np.abs(memory - held) <= np.abs(memory) * TOLERANCE) & (flops > most * (1 + TOLERANCE))))
    return tuple(np.where(heavier, new, old) for new, old in zip((memory, flops, step), best))


def _position_of(stages: dict, spans: dict, node_id: str) -> tuple:
    """What an op's part of a pipeline position depends on: where it sits (first, stack, last) and its span."""
    where = stages[node_id]
    return (where, spans.get(node_id)) if where == "stack" else (where, None)


def _stage_names(split: tuple) -> list:
    """The report's name of each pipeline position of stages of `split` layers, None where it shows none
    (pipeline.stage_keys: the first, the last, a middle stage heavier than both)."""
    if not split:
        return ["whole"]
    shown = set(stage_keys(SimpleNamespace(stage_layers=split), len(split)))
    names = ["first" if i == 0 else "last" if i == len(split) - 1 else f"stage {i}" for i in range(len(split))]
    return [name if name in shown else None for name in names]


def _on_position(compiled, split: tuple, name: str | None, node_id: str) -> float:
    """An op's copies on a card of stage `name` over its multiplicity (card.on_card, pipeline.stage_fraction)."""
    stages, spans, _ = _graph_stages(compiled)
    if name is None or (name != "whole" and stages[node_id] not in ("stack", name)):
        return 0.0
    held = SimpleNamespace(stages=stages, stage_layers=split, spans=spans)
    return float(stage_fraction(held, node_id, SimpleNamespace(pp=sp.Integer(len(split) or 1)), name))


def _group_sums(compiled, placement, degrees, value: Callable, shape: tuple, layouts: list) -> dict:
    """Σ over the ops of each position group of value × share × multiplicity: an array of figures.py's columns
    by layouts."""
    stages, spans, _ = _graph_stages(compiled)
    values = _op_values(compiled, placement, degrees, shape, layouts)
    groups: dict = {}
    for node_id, data in compiled.graph.nodes(data=True):
        given = placement.shares[node_id]
        cache = _cache_of(compiled, node_id)
        cache_hold = None if cache is None else placement.shares[cache].hold
        held, worked = value(given.hold), value(given.work)
        factors = np.stack((held, worked, worked * value(given.positions),
                            worked if cache_hold is None else value(cache_hold)))[list(MULTIPLIERS)]
        where = _position_of(stages, spans, node_id)
        groups[where] = groups.get(where, 0.0) + values[node_id] * factors * float(data["op"].multiplicity)
    return groups


def _op_values(compiled, placement, degrees, shape: tuple, layouts: list) -> dict[str, np.ndarray]:
    """Each op's value of each column at the call, per layout: an expert layer's at its EP group's rows, the
    tokens ep·etp/tp replicas' cards gather (card.group_rows scales its rows m = B·P and its B by that ratio:
    its value at B × ratio requests), every other op's the same for all layouts."""
    ratios = [(lay.ep * lay.etp) / lay.tp if lay.ep > 1 and lay.ep * lay.etp != lay.tp else 1.0 for lay in layouts]
    distinct = sorted(set(ratios))
    which = np.array([distinct.index(r) for r in ratios])
    found = {}
    for node_id in compiled.graph.nodes:
        given = placement.shares[node_id]
        expert = given.group == "ep" and degrees.expert_parallel
        key, where = table_of(compiled, "decode", node_id, {})
        table, own = [], values_at(compiled, key, shape)
        for ratio in (distinct if expert else [1.0]):
            numbers = own if ratio == 1.0 else _values_at(compiled, key, shape[0] * ratio, shape)
            # the reads over its input edges stay the replica's own (figures._table scales the op's fields only)
            table.append([float((own if name == EDGE_READS else numbers)[where[i]])
                          for i, name in enumerate(COLUMN_NAMES)])
        table = np.array(table)  # (ratios, columns)
        found[node_id] = table[which].T if expert else np.repeat(table[0][:, None], len(layouts), axis=1)
    return found


def _values_at(compiled, key: tuple, requests: float, shape: tuple) -> tuple:
    """A table's values at a fractional number of requests (an EP group's share of a replica's)."""
    try:
        return compiled.memo[key][0].function(requests, *shape[1:])
    except (ZeroDivisionError, ValueError, TypeError, OverflowError) as error:
        raise Unscreened(str(error)) from None
