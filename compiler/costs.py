"""The cost pass and its sums: each node gets its op's Cost; totals multiply by multiplicity."""

from __future__ import annotations

from collections.abc import Callable

import networkx as nx
import sympy as sp

from .ops import REGISTRY, Cost, CostContext
from .symbols import B, N_pair, N_rect, P, S, S_w, Min, causal_pairs, m, rectangle_pairs
from .ir import OpNode


def annotate(graph: nx.DiGraph, options: dict[str, str], act_format) -> nx.DiGraph:
    """Attach `cost` (per instance, per call) to every node, from what the graph says of it: the caches on
    its state edges and its stage; the graph is otherwise unchanged."""
    for node_id, data in graph.nodes(data=True):
        op: OpNode = data["op"]
        states = tuple(graph.nodes[s]["op"].args for s in states_read(graph, node_id))
        context = CostContext(act_bytes=act_format, states=states, options=options)
        cost = REGISTRY[op.kind].cost(op.args, context)
        data["cost"] = cost.map(lambda e, subs=_stage(data["tail"]): e.xreplace(subs))
    return graph


def _stage(tail) -> dict:
    """What `replay N` does to an op's call: it runs on the last q = min(P, N) new positions, after
    S + P − q others; its window, rebuilt from the replayed positions, looks back on nothing in a
    prefill longer than N (seed 002 §2.3.6 tail-window replay; shared/reference/conventions.md)."""
    if tail is None:
        return {S_w: S}
    q = Min(P, tail)
    before = S + P - q
    return {m: B * q, N_pair: causal_pairs(B, before, q), N_rect: rectangle_pairs(B, before, q),
            P: q, S: before, S_w: sp.Piecewise((S, P <= tail), (0, True))}


def ops(graph: nx.DiGraph) -> list[OpNode]:
    return [data["op"] for _, data in graph.nodes(data=True)]


def total(graph: nx.DiGraph, field: str, keep: Callable[[OpNode], bool] = lambda op: True) -> sp.Expr:
    """Σ multiplicity · cost over the ops `keep` accepts."""
    return sp.Add(*(data["op"].multiplicity * getattr(data["cost"], field)
                    for _, data in graph.nodes(data=True) if keep(data["op"])))


def by(graph: nx.DiGraph, field: str, key: Callable[[OpNode], str], names: tuple[str, ...] = ()) -> dict[str, sp.Expr]:
    """Totals of one field grouped by `key`; `names` fixes the order and keeps empty groups."""
    groups: dict[str, sp.Expr] = {name: sp.Integer(0) for name in names}
    for _, data in graph.nodes(data=True):
        name = key(data["op"])
        groups[name] = groups.get(name, sp.Integer(0)) + data["op"].multiplicity * getattr(data["cost"], field)
    return groups


def by_fields(graph: nx.DiGraph, fields: tuple[str, ...], key: Callable[[OpNode], str],
              names: tuple[str, ...] = ()) -> dict[str, sp.Expr]:
    """`by` for the sum of several fields (matrix and non-matrix FLOPs per component)."""
    groups = [by(graph, field, key, names) for field in fields]
    return {name: sp.Add(*(group[name] for group in groups)) for name in groups[0]}


def component_of(op: OpNode) -> str:
    return op.component


def state_kind_of(graph: nx.DiGraph, op: OpNode) -> str:
    """The class of state an op's state quantities count under: its own, or that of the first cache it reads."""
    states = states_read(graph, op.id)
    holder = graph.nodes[states[0]]["op"] if states else op
    kind_of = REGISTRY[holder.kind].state_kind
    return kind_of(holder.args) if kind_of else "kv"


def states_read(graph: nx.DiGraph, node_id: str) -> tuple[str, ...]:
    """The caches an op reads (`state = ...`), in the order it names them: its state edges."""
    edges = [(data["order"], source) for source, _, data in graph.in_edges(node_id, data=True)
             if data["kind"] == "state"]
    return tuple(source for _, source in sorted(edges))


def grouped(graph: nx.DiGraph, field: str) -> sp.Expr:
    """The total written as Σ multiplicity·(inner sum), the chapter's 36(... ) + ... form, unevaluated."""
    inner: dict[sp.Expr, sp.Expr] = {}
    for _, data in graph.nodes(data=True):
        value = getattr(data["cost"], field)
        if value != 0:
            multiplicity = data["op"].multiplicity
            inner[multiplicity] = inner.get(multiplicity, sp.Integer(0)) + value
    terms = [term for mult, body in sorted(inner.items(), key=lambda kv: sp.default_sort_key(kv[0]), reverse=True)
             for term in _terms(mult, sp.expand(body))]
    return sp.Add(*terms, evaluate=False) if terms else sp.Integer(0)


def _terms(multiplicity: sp.Expr, body: sp.Expr) -> list[sp.Expr]:
    """The chapter's L·(...) for a stack; a single op's terms stand on their own."""
    if multiplicity == 1:
        return list(sp.Add.make_args(body))
    return [sp.Mul(multiplicity, body, evaluate=False)]


def node_cost(graph: nx.DiGraph, node_id: str) -> Cost:
    return graph.nodes[node_id]["cost"]
