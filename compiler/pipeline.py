"""Spec to cost graph in one call: load → resolve → lower → costs."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import networkx as nx
import sympy as sp

from archcost.dsl import ast
from archcost.dsl.loader import Program, load_file, load_text

from . import costs
from .ir import ModelIR
from .lower import lower
from .ops import REGISTRY
from .resolve import resolve
from .scenario import Options


@dataclass
class Compiled:
    """A model's cost graph with the options it was costed under."""

    ir: ModelIR
    graph: nx.DiGraph
    options: Options
    program: Program | None = None  # every source it was compiled from, to compile again along another path
    keep: frozenset[str] = frozenset()
    # closed forms and their exact evaluators, built once and reused by every scenario (evaluate.py)
    memo: dict = field(default_factory=dict, repr=False, compare=False)

    @property
    def name(self) -> str:
        return self.ir.name

    def conventions(self) -> dict[str, str]:
        """The run-wide counting conventions these numbers were computed with (flags, API keywords)."""
        named = self.options.model_dump(exclude={"paths", "weights"})
        if self.options.weights:
            named["weights"] = self.options.weights
        return named

    def execution_paths(self) -> dict[str, str]:
        """The word each of the spec's own `option`s took (`--option NAME=WORD`)."""
        return dict(self.ir.paths)

    def options_named(self) -> dict[str, str]:
        """Both together: the counting conventions, then the execution paths (the report's `options`)."""
        return {**self.conventions(), **self.execution_paths()}

    def total(self, field: str, keep=None) -> sp.Expr:
        """Σ over the graph of one cost field (of the ops `keep` accepts); the whole total is built once."""
        if keep is not None:
            return costs.total(self.graph, field, keep)
        if ("total", field) not in self.memo:
            self.memo["total", field] = costs.total(self.graph, field)
        return self.memo["total", field]


def compile_file(path: str | Path, options: Options = Options(), keep: frozenset[str] = frozenset(),
                 allow_outside: bool = False) -> Compiled:
    return _compile(load_file(path, allow_outside), options, keep)


def with_path(compiled: Compiled, option: str, word: str) -> Compiled:
    """The same spec compiled again, from the sources it was read from, with one `option` set to `word`."""
    paths = tuple((k, v) for k, v in compiled.options.paths if k != option) + ((option, word),)
    options = compiled.options.model_copy(update={"paths": paths})
    return _compile(compiled.program, options, compiled.keep)


def compile_text(text: str, options: Options = Options(), keep: frozenset[str] = frozenset(),
                 name: str = "<text>", base: Path | None = None) -> Compiled:
    return _compile(load_text(text, name=name, base=base), options, keep)


def check_library(path: str | Path, allow_outside: bool = False) -> ast.Module | None:
    """Check a file without a model (blocks, formats, devices): each block is compiled inside a small
    probe model that calls it with 64 for every argument without a default. None when the file holds
    a model."""
    file = Path(path)
    program = load_file(file, allow_outside)
    if program.entry.models:
        return None
    for block in program.entry.blocks:
        probe = f'use "{file.name}"\n' + probe_model(block)
        _compile(load_text(probe, name=f"<probe of {block.name}>", base=file.parent.resolve(),
                           allow_outside=allow_outside), Options(), frozenset())
    return program.entry


def probe_model(block: ast.BlockDef) -> str:
    """A model that calls `block` once on width 64, with 64 for every argument without a default."""
    required = ", ".join("64" for param in block.params if param.default is None)
    table = next(kind for kind, spec in REGISTRY.items() if spec.token_input)  # tokens to width 64
    return f'model "probe of {block.name}" {{\n  {table} embed: 1000 -> 64\n  {block.name}({required})\n}}\n'


def _compile(program: Program, options: Options, keep: frozenset[str]) -> Compiled:
    ir = resolve(program, keep, options.paths, options.weights)
    graph = costs.annotate(lower(ir), options.cost_options(), ir.act_format)
    return Compiled(ir=ir, graph=graph, options=options, program=program, keep=keep)
