"""Every number a report of one phase holds, as closed forms and as plain-data forms, built once per model.

A leaf is one number of the report before any sum of the table is taken: a field's total over the graph, a
class's share of it, one op's temporaries, one figure of an op. `plan` says how the report is assembled from
the leaves (assemble.py, which needs no sympy); `phase_forms` turns every leaf into a form (forms.py).
"""

from __future__ import annotations

from typing import NamedTuple

import sympy as sp

from ..graph import costs
from ..graph.compiled import Compiled
from ..ops import REGISTRY
from ..terms.quantities import COMPONENTS, LEVELS, QUANTITIES, STATE_KINDS
from ..terms.scenario import call_form, call_letters, phase_letters
from ..terms.symbols import SCENARIO, B, G, P, S
from . import forms, polynomial
from .assemble import PART_FLOWS, total_key
from .building import from_sympy

X = sp.Symbol("X", nonnegative=True, integer=True)  # a decode's history, in a request's decode sums
NAMES = {B: "B", S: "S", P: "P", G: "G", X: "X"}


class Leaf(NamedTuple):
    """One number of a report: `expr` per call, evaluated at `phase` under `field`'s rule (level or flow)."""

    expr: sp.Expr
    phase: str
    field: str


class Leaves(NamedTuple):
    leaves: dict[str, Leaf]
    plan: list


def leaves(compiled: Compiled, phase: str, reads: tuple[str, ...] | None = None) -> Leaves:
    """The leaves of `phase` and the plan that assembles a report from them, built once per model: of every
    quantity and figure, or only of those `reads` names (quantities.reading)."""
    reads = _for_phase(phase, reads)
    key = ("leaves", phase, reads)
    if key not in compiled.memo:
        compiled.memo[key] = _build(compiled, phase, reads)
    return compiled.memo[key]


def _for_phase(phase: str, reads: tuple[str, ...] | None) -> tuple[str, ...] | None:
    """A request's report reads its parts from most of the quantities (assemble._request_parts): all of them."""
    return None if phase == "request" else reads


def _build(compiled: Compiled, phase: str, reads: tuple[str, ...] | None) -> Leaves:
    found: dict[str, Leaf] = {}
    call_phase = "prefill" if phase == "request" else phase  # a request's peak and figures: its prefill
    plan: list = []
    quantities = QUANTITIES if reads is None else tuple(q for q in QUANTITIES if q.name in reads)
    for field in sorted({f for q in quantities for f in q.fields + q.less}):
        found[total_key(field)] = Leaf(compiled.total(field), phase, field)
    for quantity in quantities:
        first = quantity.fields[0]
        if quantity.by in ("component", "kind"):
            groups = _groups(compiled, quantity)
            keys = [[name, f"{quantity.by}:{quantity.name}:{name}"] for name in groups]
            found.update({leaf_key: Leaf(groups[name], phase, first) for name, leaf_key in keys})
            plan.append(["each", quantity.name, keys])
        elif quantity.by == "peak":
            # the largest of the ops' values: one leaf per distinct expression (a spec written out layer by
            # layer has thousands of ops and a few distinct temporaries; most ops have none)
            keys, seen = [], set()
            for index, (_, data) in enumerate(compiled.graph.nodes(data=True)):
                value = getattr(data["cost"], first)
                if value not in seen:
                    seen.add(value)
                    keys.append(f"peak:{first}:{index}")
                    found[keys[-1]] = Leaf(value, call_phase, first)
            plan.append(["peak", quantity.name, keys])
        elif quantity.by == "parts":
            plan.append(["parts", quantity.name, [[part, total_key(field)] for part, field in quantity.parts]])
        else:
            plan.append(["sum", quantity.name, [total_key(f) for f in quantity.fields],
                         [total_key(f) for f in quantity.less]])
            if quantity.less_class:  # a class's share of the same fields, subtracted
                share = costs.by_fields(compiled.graph, quantity.fields, costs.component_of, COMPONENTS,
                                        compiled.memo)
                found[f"class:{quantity.name}"] = Leaf(share[quantity.less_class], phase, first)
                plan[-1].append(f"class:{quantity.name}")
    plan += _figures(compiled, call_phase, found, reads)
    if phase == "request":
        found.update({f"prefill:{f}": Leaf(compiled.total(f), "prefill", f) for f in PART_FLOWS})
    return Leaves(found, plan)


def _groups(compiled: Compiled, quantity) -> dict[str, sp.Expr]:
    """A quantity's totals by component or by kind of state, the same in every phase: built once."""
    key = ("groups", quantity.name)
    if key not in compiled.memo:
        compiled.memo[key] = _grouped(compiled, quantity)
    return compiled.memo[key]


def _grouped(compiled: Compiled, quantity) -> dict[str, sp.Expr]:
    graph, first = compiled.graph, quantity.fields[0]
    if quantity.by == "component":
        return costs.by_fields(graph, quantity.fields, costs.component_of, COMPONENTS, compiled.memo)
    kind_of = _state_kind_of(compiled)
    by_kind = costs.by(graph, first, kind_of, STATE_KINDS, compiled.memo)
    if first == "state_bytes":  # compressor buffers are their own kind
        buffers = costs.by(graph, "state_buffer", kind_of, STATE_KINDS, compiled.memo)
        by_kind = {k: v - buffers[k] for k, v in by_kind.items()}
        by_kind["buffer"] = sp.Add(*buffers.values())
    return {k: v for k, v in by_kind.items() if v != 0} or {"kv": sp.Integer(0)}


def _state_kind_of(compiled: Compiled):
    """An op → its kind of state, one function per model: the totals by kind share one tally of the ops
    (costs._tally keeps it per key function)."""
    if "state kind of" not in compiled.memo:
        kinds = _state_kinds(compiled)
        compiled.memo["state kind of"] = lambda op: kinds[op.id]
    return compiled.memo["state kind of"]


def _state_kinds(compiled: Compiled) -> dict[str, str]:
    """Each op's kind of state (costs.state_kind_of), found once per model: every kind-grouped quantity reads it."""
    if "state kinds" not in compiled.memo:
        graph = compiled.graph
        read = costs.states_read_by_op(graph)
        compiled.memo["state kinds"] = {node: costs.state_kind_of(graph, data["op"], read)
                                        for node, data in graph.nodes(data=True)}
    return compiled.memo["state kinds"]


def _figures(compiled: Compiled, phase: str, found: dict[str, Leaf], reads: tuple[str, ...] | None) -> list:
    """One plan entry per kind of figure (of those `reads` names): a row of leaf keys per op that adds one."""
    options = compiled.conventions.cost_conventions()
    entries = {spec.figures.key: ["figures", spec.figures.key, [], _excluded(spec.figures.model)]
               for spec in REGISTRY.values() if spec.figures and (reads is None or spec.figures.key in reads)}
    for index, (_, data) in enumerate(compiled.graph.nodes(data=True)):
        figures = REGISTRY[data["op"].kind].figures
        if figures is None or figures.key not in entries:
            continue
        row = []
        for name, item in figures.rows(data["op"], data["cost"], options).items():
            if isinstance(item, str):
                row.append([name, item, None])
                continue
            leaf_key = f"figure:{figures.key}:{index}:{name}"
            found[leaf_key] = Leaf(item[0], phase, item[1])
            row.append([name, None, leaf_key])
        entries[figures.key][2].append(row)
    return list(entries.values())


def _excluded(model) -> list[str]:
    return [name for name, info in model.model_fields.items() if info.exclude]


# ---------------------------------------------------------------------------------------------- forms

def phase_forms(compiled: Compiled, phase: str, reads: tuple[str, ...] | None = None) -> dict | None:
    """The phase's leaves (all, or those `reads` names) as plain data: {"leaves", "requests", "atoms", "plan"};
    None when a leaf is not a plain closed form in B, S, P, G (an unbound name: the symbolic path says which)."""
    reads = _for_phase(phase, reads)
    key = ("forms", phase, reads)
    if key not in compiled.memo:
        try:
            compiled.memo[key] = _plain(compiled, phase, reads)
        except forms.NotPlain:
            compiled.memo[key] = None
    return compiled.memo[key]


def _plain(compiled: Compiled, phase: str, reads: tuple[str, ...] | None) -> dict:
    built = leaves(compiled, phase, reads)
    return {**forms_of(compiled, built.leaves), "plan": built.plan}


def forms_of(compiled: Compiled, found: dict[str, Leaf]) -> dict:
    """Leaves as plain data: {"leaves", "requests", "atoms"}; forms.NotPlain when one holds an unbound name."""
    plain: dict[str, object] = {}
    requests: dict[str, dict] = {}
    atoms: dict[str, tuple[int, object]] = {}  # atom key → (index, form), in the order first met
    for leaf_key, leaf in found.items():
        expr = sp.Integer(leaf.expr) if isinstance(leaf.expr, int) else leaf.expr
        level = leaf.field in LEVELS
        if leaf.phase == "request" and not level:
            requests[leaf_key] = _request_form(expr, compiled, atoms)
        else:
            plain[leaf_key] = _at_phase(expr, compiled, phase_letters(leaf.phase, level))
    return {"leaves": plain, "requests": requests, "atoms": [form for _, form in atoms.values()]}


LETTER_SYMBOLS = frozenset(SCENARIO.values())
AT_HISTORY = {S: X, P: sp.Integer(1)}  # a request's decode at history X


def _at_phase(expr: sp.Expr, compiled: Compiled, letters: dict[sp.Symbol, sp.Expr]):
    """`expr` per call as a form once the per-call letters and then `letters` are put in: on the tree (cheap),
    or, where the spec left a name unbound, by sympy, whose substitution may cancel it where a tree's would not."""
    if _in_letters(compiled, expr):
        return from_sympy(expr, NAMES, bound=_bound(compiled, tuple(letters.items())))
    return from_sympy(call_form(expr, compiled.conventions).xreplace(letters), NAMES, free=True)


def _in_letters(compiled: Compiled, expr: sp.Expr) -> bool:
    """Whether `expr` holds only scenario letters: asked once per expression (sympy walks the whole tree for
    its free symbols each time, and every phase asks of the same totals)."""
    key = ("in letters", expr)
    if key not in compiled.memo:
        compiled.memo[key] = expr.free_symbols <= LETTER_SYMBOLS
    return compiled.memo[key]


def _bound(compiled: Compiled, letters: tuple) -> dict:
    """Every scenario letter as its form, the per-call ones (m, H, N_pair, ...) built on `letters`."""
    key = ("bound", letters)
    if key not in compiled.memo:
        trees = {symbol: from_sympy(value, NAMES) for symbol, value in letters}
        per_call = {symbol: from_sympy(value, NAMES, bound=trees)
                    for symbol, value in call_letters(compiled.conventions).items()}
        compiled.memo[key] = {**trees, **per_call}
    return compiled.memo[key]


def _request_form(expr: sp.Expr, compiled: Compiled, atoms: dict) -> dict:
    """A request flow: its first call in (B, S, P), and its decode at history X as Σ coefficient(B) · X^k ·
    atom(X), each atom (a floor, a window, ...) summed once for every flow that holds it."""
    terms, found = polynomial.in_history(_at_phase(expr, compiled, AT_HISTORY))
    decode = []
    for (atom, power), coefficient in terms.items():
        if atom not in atoms:
            atoms[atom] = (len(atoms), found[atom])
        decode.append([atoms[atom][0], power, coefficient])
    return {"call": _at_phase(expr, compiled, {}), "decode": decode}
