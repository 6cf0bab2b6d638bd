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
from ..terms.scenario import at_phase, call_form
from ..terms.symbols import B, G, P, S
from . import forms
from .assemble import PART_FLOWS
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


def leaves(compiled: Compiled, phase: str) -> Leaves:
    """The leaves of `phase` and the plan that assembles a report from them, built once per model."""
    key = ("leaves", phase)
    if key not in compiled.memo:
        compiled.memo[key] = _build(compiled, phase)
    return compiled.memo[key]


def _build(compiled: Compiled, phase: str) -> Leaves:
    found: dict[str, Leaf] = {}
    call_phase = "prefill" if phase == "request" else phase  # a request's peak and figures: its prefill
    plan: list = []
    for field in sorted({f for q in QUANTITIES for f in q.fields + q.less}):
        found[f"total:{field}"] = Leaf(compiled.total(field), phase, field)
    for quantity in QUANTITIES:
        first = quantity.fields[0]
        if quantity.by in ("component", "kind"):
            groups = _groups(compiled, quantity)
            keys = [[name, f"{quantity.by}:{quantity.name}:{name}"] for name in groups]
            found.update({leaf_key: Leaf(groups[name], phase, first) for name, leaf_key in keys})
            plan.append(["each", quantity.name, keys])
        elif quantity.by == "peak":
            keys = []
            for index, (_, data) in enumerate(compiled.graph.nodes(data=True)):
                keys.append(f"peak:{first}:{index}")
                found[keys[-1]] = Leaf(getattr(data["cost"], first), call_phase, first)
            plan.append(["peak", quantity.name, keys])
        elif quantity.by == "parts":
            plan.append(["parts", quantity.name, [list(part) for part in quantity.parts]])
        else:
            plan.append(["sum", quantity.name, list(quantity.fields), list(quantity.less)])
            if quantity.less_class:  # a class's share of the same fields, subtracted
                share = costs.by_fields(compiled.graph, quantity.fields, costs.component_of, COMPONENTS)
                found[f"class:{quantity.name}"] = Leaf(share[quantity.less_class], phase, first)
                plan[-1].append(f"class:{quantity.name}")
    plan += _figures(compiled, call_phase, found)
    if phase == "request":
        found.update({f"prefill:{f}": Leaf(compiled.total(f), "prefill", f) for f in PART_FLOWS})
    return Leaves(found, plan)


def _groups(compiled: Compiled, quantity) -> dict[str, sp.Expr]:
    graph, first = compiled.graph, quantity.fields[0]
    if quantity.by == "component":
        return costs.by_fields(graph, quantity.fields, costs.component_of, COMPONENTS)
    by_kind = costs.by(graph, first, lambda op: costs.state_kind_of(graph, op), STATE_KINDS)
    if first == "state_bytes":  # compressor buffers are their own kind
        buffers = costs.by(graph, "state_buffer", lambda op: costs.state_kind_of(graph, op), STATE_KINDS)
        by_kind = {k: v - buffers[k] for k, v in by_kind.items()}
        by_kind["buffer"] = sp.Add(*buffers.values())
    return {k: v for k, v in by_kind.items() if v != 0} or {"kv": sp.Integer(0)}


def _figures(compiled: Compiled, phase: str, found: dict[str, Leaf]) -> list:
    """One plan entry per kind of figure: a row of leaf keys per op that adds one."""
    options = compiled.options.cost_options()
    entries = {spec.figures.key: ["figures", spec.figures.key, [], _excluded(spec.figures.model)]
               for spec in REGISTRY.values() if spec.figures}
    for index, (_, data) in enumerate(compiled.graph.nodes(data=True)):
        figures = REGISTRY[data["op"].kind].figures
        if figures is None:
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

def phase_forms(compiled: Compiled, phase: str) -> dict | None:
    """The phase's leaves as plain data: {"leaves", "requests", "atoms", "plan"}; None when a leaf is not
    a plain closed form in B, S, P, G (an unbound name: the symbolic path says which)."""
    key = ("forms", phase)
    if key not in compiled.memo:
        try:
            compiled.memo[key] = _plain(compiled, phase)
        except forms.NotPlain:
            compiled.memo[key] = None
    return compiled.memo[key]


def _plain(compiled: Compiled, phase: str) -> dict:
    built = leaves(compiled, phase)
    return {**forms_of(compiled, built.leaves), "plan": built.plan}


def forms_of(compiled: Compiled, found: dict[str, Leaf]) -> dict:
    """Leaves as plain data: {"leaves", "requests", "atoms"}; forms.NotPlain when one holds an unbound name."""
    plain: dict[str, object] = {}
    requests: dict[str, dict] = {}
    atoms: dict[sp.Expr, int] = {}
    for leaf_key, leaf in found.items():
        expr = sp.Integer(leaf.expr) if isinstance(leaf.expr, int) else leaf.expr
        level = leaf.field in LEVELS
        if leaf.phase == "request" and not level:
            requests[leaf_key] = _request_form(expr, compiled, atoms)
        else:
            plain[leaf_key] = from_sympy(at_phase(expr, leaf.phase, compiled.options, level=level), NAMES, free=True)
    atom_forms = [from_sympy(atom, NAMES, free=True) for atom in atoms]
    return {"leaves": plain, "requests": requests, "atoms": atom_forms}


def _request_form(expr: sp.Expr, compiled: Compiled, atoms: dict) -> dict:
    """A request flow: its first call in (B, S, P), and its decode at history X as Σ coefficient(B) · X^k ·
    atom(X), each atom (a floor, a window, ...) summed once for every flow that holds it."""
    call = call_form(expr, compiled.options)
    step = sp.expand(call.xreplace({S: X, P: 1}))
    groups: dict[tuple[sp.Expr, int], list] = {}
    for term in sp.Add.make_args(step):
        coefficient, power, atom = [], 0, []
        for factor in sp.Mul.make_args(term):
            base, exponent = factor.as_base_exp()
            if not factor.has(X):
                coefficient.append(factor)
            elif base == X and exponent.is_Integer:
                power += int(exponent)
            else:
                atom.append(factor)
        groups.setdefault((sp.Mul(*atom), power), []).append(sp.Mul(*coefficient))
    decode = []
    for (atom, power), coefficients in groups.items():
        index = atoms.setdefault(atom, len(atoms))
        decode.append([index, power, from_sympy(sp.Add(*coefficients), NAMES, free=True)])
    return {"call": from_sympy(call, NAMES, free=True), "decode": decode}
