"""Spec to cost graph in one call: load → resolve → lower → costs."""

from __future__ import annotations

from pathlib import Path

from archcost.dsl import ast
from archcost.dsl.loader import Program, load_file, load_text

from .front.resolve import resolve
from .graph import costs
from .graph.compiled import Compiled
from .graph.lower import lower
from .ops import REGISTRY
from .terms.scenario import Conventions


def compile_file(path: str | Path, options: Conventions = Conventions(), keep: frozenset[str] = frozenset(),
                 allow_outside: bool = False) -> Compiled:
    return _compile(load_file(path, allow_outside), options, keep)


def with_path(compiled: Compiled, option: str, word: str) -> Compiled:
    """The same spec compiled again, from the sources it was read from, with one `option` set to `word`."""
    paths = tuple((k, v) for k, v in compiled.options.paths if k != option) + ((option, word),)
    options = compiled.options.model_copy(update={"paths": paths})
    return _compile(compiled.program, options, compiled.keep)


def compile_text(text: str, options: Conventions = Conventions(), keep: frozenset[str] = frozenset(),
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
                           allow_outside=allow_outside), Conventions(), frozenset())
    return program.entry


def probe_model(block: ast.BlockDef) -> str:
    """A model that calls `block` once on width 64, with 64 for every argument without a default."""
    required = ", ".join("64" for param in block.params if param.default is None)
    table = next(kind for kind, spec in REGISTRY.items() if spec.token_input)  # tokens to width 64
    return f'model "probe of {block.name}" {{\n  {table} embed: 1000 -> 64\n  {block.name}({required})\n}}\n'


def _compile(program: Program, options: Conventions, keep: frozenset[str]) -> Compiled:
    ir = resolve(program, keep, options.paths, options.weights)
    graph = costs.annotate(lower(ir), options.cost_options(), ir.act_format)
    return Compiled(ir=ir, graph=graph, options=options, program=program, keep=keep)
