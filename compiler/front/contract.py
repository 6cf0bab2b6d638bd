"""The contract between the dispatcher and the statement resolvers (calls.py, structure.py): what they ask
of the model being resolved.

resolve.Resolution is the one implementation; the resolvers see it through this interface, so the
dispatcher imports them and they never import it back.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    import sympy as sp

    from archcost.dsl import ast
    from archcost.dsl.errors import Span

    from ..graph.ir import Cluster, OpNode
    from .declarations import Declarations
    from .expr import Problem
    from .scope import Scope


class Resolving(Protocol):
    """A model being resolved: its declarations, what it has produced so far, and how it reports problems."""

    declarations: Declarations
    clusters: dict[str, Cluster]
    kinds: dict[str, str]
    labels: dict[str, str]
    nodes: list[OpNode]
    problems: list
    roles_set: dict
    first_use: dict
    nearby: dict
    recordings: dict
    weight_sets: dict

    def problem(self, code: str, message: str, span: Span | None, hint: str | None = None) -> Problem: ...

    def body(self, body: list[ast.Stmt], scope: Scope, model_level: bool = False) -> None: ...

    def check_component(self, name: str, span) -> str: ...

    def check_positive(self, value, expr, what: str = "count") -> sp.Expr: ...

    def add_node(self, node: OpNode, span) -> None: ...
