"""A compiled model: its IR, its cost graph and the conventions it was costed under (the graph stage's product)."""

from __future__ import annotations

from dataclasses import dataclass, field

import networkx as nx
import sympy as sp

from archcost.dsl.loader import Program

from ..terms.scenario import Conventions
from . import costs
from .ir import ModelIR


@dataclass
class Compiled:
    """A model's cost graph with the conventions it was costed under."""

    ir: ModelIR
    graph: nx.DiGraph
    conventions: Conventions
    program: Program | None = None  # every source it was compiled from, to compile again along another path
    keep: frozenset[str] = frozenset()
    # closed forms and their exact evaluators, built once and reused by every scenario (evaluate.py)
    memo: dict = field(default_factory=dict, repr=False, compare=False)

    @property
    def name(self) -> str:
        return self.ir.name

    def files_read(self) -> list:
        """Every file this model was compiled from (spec, `use`d files, stdlib): no output may land on one."""
        from archcost.dsl.files import source_file

        return [source_file(name) for name in self.program.modules] if self.program is not None else []

    def conventions_named(self) -> dict[str, str]:
        """The run-wide counting conventions these numbers were computed with (flags, API keywords)."""
        named = self.conventions.model_dump(exclude={"paths", "weights", "kv", "scales"})
        if self.conventions.weights:
            named["weights"] = self.conventions.weights
        if self.conventions.kv:
            named["kv"] = self.conventions.kv
        if self.conventions.scales != "logical":  # named only when chosen: every default report stays as it was
            named["scales"] = self.conventions.scales
        return named

    def execution_paths(self) -> dict[str, str]:
        """The word each of the spec's own `option`s took (`--option NAME=WORD`)."""
        return dict(self.ir.paths)

    def options_named(self) -> dict[str, str]:
        """Both together: the counting conventions, then the execution paths (the report's `options`)."""
        return {**self.conventions_named(), **self.execution_paths()}

    def total(self, field: str, keep=None) -> sp.Expr:
        """Σ over the graph of one cost field (of the ops `keep` accepts); the whole total is built once."""
        if keep is not None:
            return costs.total(self.graph, field, keep, self.memo)
        if ("total", field) not in self.memo:
            self.memo["total", field] = costs.total(self.graph, field, memo=self.memo)
        return self.memo["total", field]
