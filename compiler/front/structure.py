"""The structure of a stack: `repeat` (a body with a multiplicity), `select` (arms sharing a repeat's layers)
and `if` (a branch chosen when the spec compiles)."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

import sympy as sp

from archcost.dsl import ast
from archcost.dsl.text import format_expr

from ..graph.ir import Cluster, Tensor
from .arguments import REQUEST_SYMBOLS
from .expr import to_sympy
from .scope import Scope, differs

if TYPE_CHECKING:
    from .contract import Resolving


def resolve_structure(res: Resolving, stmt: ast.Repeat | ast.Select | ast.If, scope: Scope) -> None:
    match stmt:
        case ast.Repeat():
            repeat(res, stmt, scope)
        case ast.Select():
            select(res, stmt, scope)
        case ast.If():
            branch(res, stmt, scope)


def repeat(res: Resolving, stmt: ast.Repeat, scope: Scope) -> None:
    """`repeat N as label { ... }`: one body standing for N layers; it must end at the width it began with.
    `loop N` (stmt.shared): the body's layers run N times over with one set of weights (a looped model's
    passes, Dory's recurrent block, HRM's cycles): its ops do N times the work and keep N times the state, and
    hold their weights once (graph/costs.py)."""
    word = "loop" if stmt.shared else "repeat"
    count = res.check_positive(to_sympy(stmt.count, scope.env), stmt.count, f"{word} count")
    letters = sorted(str(s) for s in getattr(count, "free_symbols", set()) & REQUEST_SYMBOLS)
    if letters:  # a model's depth is its own, not the request's (`repeat B` changed with every batch)
        raise res.problem("E302", f"{word} count `{count}` depends on the request ({', '.join(letters)})",
                          stmt.count.span, hint="a layer count is a number, or a name bound to one in the spec")
    label = scope.unique(stmt.label or ("passes" if stmt.shared else "layers"))
    cluster_id = scope.qualify(label)
    res.clusters[cluster_id] = Cluster(cluster_id, label, word, scope.cluster, count, span=stmt.span)
    inner = scope.child(label, cluster_id, times=count, stack=count, passes=count if stmt.shared else sp.Integer(1))
    res.body(stmt.body, inner)
    before, after = scope.current.width, inner.current.width
    if before is not None and after is not None and differs(before, after):
        raise res.problem("E303", f"repeated body turns width {before} into {after}; "
                          "layer i+1 could not read layer i", stmt.span)
    scope.current = inner.current
    scope.tensors[label] = inner.current


def select(res: Resolving, stmt: ast.Select, scope: Scope) -> None:
    """`select { n as arm { ... } ... }`: the layers of the enclosing repeat divided among alternatives."""
    if scope.stack is None:
        raise res.problem("E306", "`select` divides the layers of a `repeat`, and there is none around it",
                          stmt.span)
    counts = [res.check_positive(to_sympy(arm.count, scope.env), arm.count, "arm count") for arm in stmt.arms]
    total = sp.Add(*counts)
    if differs(total, scope.stack):
        raise res.problem("E305", f"the arms of `select` run in {total} layers, the stack has {scope.stack}",
                          stmt.span)
    outputs = [_arm(res, arm, count, scope) for arm, count in zip(stmt.arms, counts, strict=True)]
    widths = {o.width for o in outputs if o.width is not None}
    if len(widths) > 1 and any(differs(a, b) for a in widths for b in widths):
        raise res.problem("E303", f"the arms of `select` end in different widths: "
                          f"{', '.join(sorted(map(str, widths)))}", stmt.span)
    producers = tuple(p for o in outputs for p in o.producers)
    scope.current = replace(outputs[0], producer=producers[0] if producers else None, also=producers[1:])


def _arm(res: Resolving, arm: ast.Arm, count: sp.Expr, scope: Scope) -> Tensor:
    label = scope.unique(arm.label)
    cluster_id = scope.qualify(label)
    res.clusters[cluster_id] = Cluster(cluster_id, f"{label} ({count} of {scope.stack})", "select",
                                       scope.cluster, count, span=arm.span)
    inner = scope.child(label, cluster_id, times=count / scope.stack, stack=count)
    res.body(arm.body, inner)
    return inner.current


def require(res: Resolving, stmt: ast.Require, scope: Scope) -> None:
    """A block's check of its arguments: a condition false at this call is an error at the `require` line,
    with the call that led there (E309)."""
    condition = to_sympy(stmt.condition, scope.env)
    if condition not in (sp.true, sp.false):
        raise res.problem("E304", f"condition `{condition}` is not true or false", stmt.condition.span)
    if condition == sp.false:
        raise res.problem("E309", f"{stmt.message}: `{format_expr(stmt.condition)}` does not hold at this call",
                          stmt.span)


def branch(res: Resolving, stmt: ast.If, scope: Scope) -> None:
    condition = to_sympy(stmt.condition, scope.env)
    if condition not in (sp.true, sp.false):
        raise res.problem("E304", f"condition `{condition}` is not true or false", stmt.condition.span)
    res.body(stmt.body if condition == sp.true else stmt.orelse, scope)
