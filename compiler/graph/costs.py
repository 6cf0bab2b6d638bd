"""The cost pass and its sums: each node gets its op's Cost; totals multiply by multiplicity."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from functools import lru_cache

import networkx as nx
import sympy as sp

from ..ops import REGISTRY, Cost, CostContext
from ..terms.symbols import B, Min, N_pair, N_rect, P, S, S_w, causal_pairs, m, rectangle_pairs
from .ir import OpNode

# Cost fields the edges carry: a tensor read by its consumer (seed 002 §2.2.2: activations written once, read
# by every op that consumes them). The many-devices layouts put a tensor's communication on the same edges.
EDGE_FIELDS = ("read_activations",)
# The fields of what an op holds as weights: a `loop`'s passes share one set, so each of an op's copies there
# holds 1/passes of them, and multiplicity × cost counts them once; its work, reads and state stay per pass.
# Calls that `share` a set: the first holds it once (its copies divide it as passes do), the others none.
WEIGHT_FIELDS = ("params", "params_active", "params_row_read", "weight_bytes")


def annotate(graph: nx.DiGraph, conventions: dict[str, str], act_format) -> nx.DiGraph:
    """Attach `cost` (per instance, per call) to every node, from what the graph says of it: the caches on
    its state edges and its stage; the graph is otherwise unchanged."""
    staged: dict[tuple, sp.Expr] = {}  # (expression, stage) → the expression in that stage, built once

    def in_stage(expr: sp.Expr, tail) -> sp.Expr:
        if (expr, tail) not in staged:  # the layers of a stage repeat the same few costs
            staged[expr, tail] = expr.xreplace(_stage(tail))
        return staged[expr, tail]

    priced: dict[tuple, Cost] = {}  # an op's kind, arguments, caches and stage → its cost, one object for all
    read = states_read_by_op(graph)

    for node_id, data in graph.nodes(data=True):
        op: OpNode = data["op"]
        states = tuple(graph.nodes[s]["op"].args for s in read.get(node_id, ()))
        tail = data["tail"]
        key = (op.kind, _arguments(op.args), tuple(_arguments(s) for s in states), tail, op.reuse, op.held_by is None)
        if key not in priced:  # a spec written out layer by layer repeats the same few ops hundreds of times
            history = S if tail is None else S_w
            context = CostContext(act_bytes=act_format, states=states, conventions=conventions, window_history=history)
            cost = REGISTRY[op.kind].cost(op.args, context)
            cost = cost if op.reuse == 1 else replace(cost, **{f: getattr(cost, f) / op.reuse for f in WEIGHT_FIELDS})
            if op.held_by is not None:  # `shares NAME`: the first call sharing NAME holds the weights it runs
                cost = replace(cost, **dict.fromkeys(WEIGHT_FIELDS, sp.Integer(0)))
            priced[key] = cost if tail is None else cost.map(lambda e, tail=tail: in_stage(e, tail))
        data["cost"] = priced[key]
    sizes: dict[tuple, sp.Expr | None] = {}  # (rows, width, format, stage) → a tensor's bytes
    cleared: dict[int, tuple] = {}            # id of a shared Cost → (it, it with its reads on the edges)
    for node_id in graph.nodes:
        _onto_edges(graph, node_id, sizes, cleared)
    return graph


def _arguments(args) -> tuple:
    """An op's arguments as a key: what its cost rule reads (every argument's value is hashable)."""
    return tuple(sorted(vars(args).items()))


def _onto_edges(graph: nx.DiGraph, node_id: str, sizes: dict, cleared: dict) -> None:
    """Activation traffic on the edges: each tensor edge gets the tensor's size (`tensor_bytes`, rows × width ×
    format, in the consumer's stage) and carries its consumer's read of it; the producer's write stays on the
    producer, once however many read it. A node's read rule is shared evenly by the tensors it reads (the arms
    of a `select` are alternatives, each supplying its share); an op that reads only token ids keeps its own."""
    data = graph.nodes[node_id]
    edges = [edge for _, _, edge in graph.in_edges(node_id, data=True) if edge["kind"] == "tensor"]
    for edge in edges:
        key = (edge["rows"], edge["width"], edge["format"], data["tail"])
        if key not in sizes:
            size = None if edge["width"] is None else edge["rows"] * edge["width"] * edge["format"]
            sizes[key] = None if size is None else (sp.Integer(1) * size).xreplace(_stage(data["tail"]))
        edge["tensor_bytes"] = sizes[key]
        edge["cost"] = {"read_activations": data["cost"].read_activations / len(edges)}
    if edges:
        cost = data["cost"]
        if id(cost) not in cleared:  # the Cost object many ops share (annotate); kept, so its id stays its own
            cleared[id(cost)] = (cost, replace(cost, read_activations=sp.Integer(0)))
        data["cost"] = cleared[id(cost)][1]


def every_op(op: OpNode) -> bool:
    return True


def no_group(op: OpNode) -> str:
    return ""


def _edge_terms(graph: nx.DiGraph, field: str, keep: Callable[[OpNode], bool] = every_op, memo: dict | None = None):
    """(consumer op, value) of every edge that carries `field`; the edges that carry costs are listed once per
    `memo` (a compiled model's: every total reads them)."""
    if field not in EDGE_FIELDS:
        return []
    costed = None if memo is None else memo.get(("costed edges",))
    if costed is None:
        costed = [(graph.nodes[target]["op"], data["cost"]) for _, target, data in graph.edges(data=True)
                  if "cost" in data]
        if memo is not None:
            memo["costed edges",] = costed
    return [(op, cost[field]) for op, cost in costed if keep(op)]


def staged(expr: sp.Expr, tail) -> sp.Expr:
    """A per-call expression as an op of a `replay` stage runs it (unchanged outside one)."""
    return expr if tail is None else expr.xreplace(_stage(tail))


@lru_cache(maxsize=64)
def _stage(tail) -> dict:
    """What `replay N` does to an op's call: it runs on the last q = min(P, N) new positions, after
    S + P − q others; its window, rebuilt from the replayed positions, looks back on nothing in a
    prefill longer than N (seed 002 §2.3.6 tail-window replay; shared/reference/conventions.md). Built once
    per N: sympy's Min and Piecewise cost more to build than the rest of an op's cost pass. Read only."""
    if tail is None:
        return {}
    q = Min(P, tail)
    before = S + P - q
    return {m: B * q, N_pair: causal_pairs(B, before, q), N_rect: rectangle_pairs(B, before, q),
            P: q, S: before, S_w: sp.Piecewise((S, tail >= P), (0, True))}


def ops(graph: nx.DiGraph) -> list[OpNode]:
    return [data["op"] for _, data in graph.nodes(data=True)]


def total(graph: nx.DiGraph, field: str, keep: Callable[[OpNode], bool] = every_op,
          memo: dict | None = None) -> sp.Expr:
    """Σ multiplicity · cost over the ops `keep` accepts and the edges into them (`memo`: see _tally)."""
    terms = [(op.multiplicity, getattr(cost, field), count) for _, op, cost, count in _tally(graph, keep, memo=memo)]
    return _summed(terms + [(op.multiplicity, value, 1) for op, value in _edge_terms(graph, field, keep, memo)])


def by(graph: nx.DiGraph, field: str, key: Callable[[OpNode], str], names: tuple[str, ...] = (),
       memo: dict | None = None) -> dict[str, sp.Expr]:
    """Totals of one field grouped by `key`; `names` fixes the order and keeps empty groups."""
    groups: dict[str, list] = {name: [] for name in names}
    for group, op, cost, count in _tally(graph, key=key, memo=memo):
        groups.setdefault(group, []).append((op.multiplicity, getattr(cost, field), count))
    for op, value in _edge_terms(graph, field, memo=memo):
        groups.setdefault(key(op), []).append((op.multiplicity, value, 1))
    return {name: _summed(parts) for name, parts in groups.items()}


def _tally(graph: nx.DiGraph, keep: Callable[[OpNode], bool] = every_op,
           key: Callable[[OpNode], str] = no_group, memo: dict | None = None) -> list[tuple[str, OpNode, Cost, int]]:
    """The ops `keep` accepts, as (their `key`, one of them, its cost, how many): ops of one key sharing a
    multiplicity and a Cost object (annotate gives equal ops one) are counted, not summed one by one, for every
    field (a spec written out layer by layer repeats the same ops hundreds of times). With a `memo` (a compiled
    model's, its graph annotated) the tally of every op by `key` is kept, under the function itself (the memo
    holds it, so its identity names no other): each field's total reads it."""
    if memo is not None and keep is every_op:
        if ("tally", key) not in memo:
            memo["tally", key] = _tally(graph, keep, key)
        return memo["tally", key]
    same: dict[tuple, list] = {}
    for _, data in graph.nodes(data=True):
        op = data["op"]
        if keep(op):
            group = key(op)
            entry = same.setdefault((group, id(op.multiplicity), id(data["cost"])), [group, op, data["cost"], 0])
            entry[3] += 1
    return [tuple(entry) for entry in same.values()]


def _summed(terms: list[tuple[sp.Expr, sp.Expr, int]]) -> sp.Expr:
    """Σ count · multiplicity · value over the triples, in one Add (sympy flattens once), equal pairs counted
    and multiplied once."""
    same: dict[tuple[int, int], list] = {}  # the same objects first (cheap), then equal ones
    for multiplicity, value, count in terms:
        seen = same.setdefault((id(multiplicity), id(value)), [multiplicity, value, 0])
        seen[2] += count
    counted: dict[tuple, int] = {}
    for multiplicity, value, count in same.values():
        counted[multiplicity, value] = counted.get((multiplicity, value), 0) + count
    return sp.Add(*(count * multiplicity * value for (multiplicity, value), count in counted.items()))


def by_fields(graph: nx.DiGraph, fields: tuple[str, ...], key: Callable[[OpNode], str],
              names: tuple[str, ...] = (), memo: dict | None = None) -> dict[str, sp.Expr]:
    """`by` for the sum of several fields (matrix and non-matrix FLOPs per component)."""
    groups = [by(graph, field, key, names, memo) for field in fields]
    return {name: sp.Add(*(group[name] for group in groups)) for name in groups[0]}


def component_of(op: OpNode) -> str:
    return op.component


def state_kind_of(graph: nx.DiGraph, op: OpNode, read: dict[str, tuple[str, ...]]) -> str:
    """The class of state an op's state quantities count under: its own, or that of the first cache it reads
    (`read`: states_read_by_op)."""
    states = read.get(op.id, ())
    holder = graph.nodes[states[0]]["op"] if states else op
    kind_of = REGISTRY[holder.kind].state_kind
    return kind_of(holder.args) if kind_of else "kv"


def states_read_by_op(graph: nx.DiGraph) -> dict[str, tuple[str, ...]]:
    """The caches each op reads (`state = ...`), in the order it names them (its state edges' `order`), for
    every op that reads one: one pass over the edges (a query per op builds a networkx view)."""
    found: dict[str, list] = {}
    for source, target, data in graph.edges(data=True):
        if data["kind"] == "state":
            found.setdefault(target, []).append((data["order"], source))
    return {target: tuple(source for _, source in sorted(edges)) for target, edges in found.items()}


def grouped(graph: nx.DiGraph, field: str) -> sp.Expr:
    """The total written as Σ multiplicity·(inner sum), the chapter's 36(... ) + ... form, unevaluated; a
    `loop`'s weights as the layers that hold them (4·(...), not 12 copies of a third)."""
    inner: dict[sp.Expr, sp.Expr] = {}
    terms = [(data["op"], getattr(data["cost"], field)) for _, data in graph.nodes(data=True)]
    held = field in WEIGHT_FIELDS
    for op, value in terms + _edge_terms(graph, field):
        if value != 0:
            times, value = (op.multiplicity / op.reuse, value * op.reuse) if held else (op.multiplicity, value)
            inner[times] = inner.get(times, sp.Integer(0)) + value
    terms = [term for mult, body in sorted(inner.items(), key=lambda kv: sp.default_sort_key(kv[0]), reverse=True)
             for term in _terms(mult, sp.expand(body))]
    return sp.Add(*terms, evaluate=False) if terms else sp.Integer(0)


def _terms(multiplicity: sp.Expr, body: sp.Expr) -> list[sp.Expr]:
    """The chapter's L·(...) for a stack; a single op's terms stand on their own."""
    if multiplicity == 1:
        return list(sp.Add.make_args(body))
    return [sp.Mul(multiplicity, body, evaluate=False)]

