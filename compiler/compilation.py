"""Spec to cost graph in one call: load → resolve → lower → costs."""

from __future__ import annotations

from pathlib import Path

from archcost.dsl import ast
from archcost.dsl.errors import ArchError
from archcost.dsl.loader import Program, load_file, load_text

from .front.resolve import resolve
from .graph import costs
from .graph.compiled import Compiled
from .graph.lower import lower
from .ops import REGISTRY
from .terms.scenario import Conventions


def compile_file(path: str | Path, conventions: Conventions = Conventions(), keep: frozenset[str] = frozenset(),
                 allow_outside: bool = False) -> Compiled:
    return _compile(load_file(path, allow_outside), conventions, keep)


def with_path(compiled: Compiled, option: str, word: str) -> Compiled:
    """The same spec compiled again, from the sources it was read from, with one `option` set to `word`."""
    paths = tuple((k, v) for k, v in compiled.conventions.paths if k != option) + ((option, word),)
    conventions = compiled.conventions.model_copy(update={"paths": paths})
    return _compile(compiled.program, conventions, compiled.keep)


def compile_text(text: str, conventions: Conventions = Conventions(), keep: frozenset[str] = frozenset(),
                 name: str = "<text>", base: Path | None = None) -> Compiled:
    return _compile(load_text(text, name=name, base=base), conventions, keep)


def check_library(path: str | Path, allow_outside: bool = False) -> ast.Module | None:
    """Check a file without a model (blocks, formats, devices): each block is compiled inside a small
    probe model that calls it with 64 for every argument without a default. None when the file holds
    a model."""
    file = Path(path)
    program = load_file(file, allow_outside)
    if program.entry.models:
        return None
    for block in program.entry.blocks:
        probe_that_compiles(block, lambda probe, name: _compile(
            load_text(f'use "{file.name}"\n' + probe, name=name, base=file.parent.resolve(),
                      allow_outside=allow_outside), Conventions(), frozenset()))
    return program.entry


# a block that reads side inputs (`input.2`, …) is probed with them as wide as one, two or three of its
# 64-valued arguments multiplied: per_layer_input reads a slice of its layers·width per-layer inputs
SIDE_WIDTHS = (64, 64**2, 64**3)


def probe_that_compiles(block: ast.BlockDef, compile_probe) -> str:
    """The first probe model of `block` that `compile_probe(text, name)` accepts; the first one's error
    when none is."""
    name = f"<probe of {block.name}>"
    widths = SIDE_WIDTHS if _inputs_read(block) > 1 else SIDE_WIDTHS[:1]
    first = None
    for width in widths:
        text = probe_model(block, width)
        try:
            compile_probe(text, name)
            return text
        except ArchError as error:
            first = first or error
    raise first


def probe_model(block: ast.BlockDef, side_width: int = 64) -> str:
    """A model that calls `block` once on width 64, with 64 for every argument without a default, and
    each side input it reads (`input.2`, …) from a lookup of `side_width`."""
    required = ", ".join("64" for param in block.params if param.default is None)
    table = next(kind for kind, spec in REGISTRY.items() if spec.token_input)  # tokens to width 64
    sides = [f"side{i}" for i in range(2, _inputs_read(block) + 1)]
    lookups = "".join(f"  {table} {side}: 1000 -> {side_width}\n" for side in sides)
    source = f"{', ' if required else ''}from = (embed, {', '.join(sides)})" if sides else ""
    return (f'model "probe of {block.name}" {{\n  {table} embed: 1000 -> 64\n{lookups}'
            f'  {block.name}({required}{source})\n}}\n')


def _inputs_read(node) -> int:
    """The largest N of an `input.N` the node reads (0 for none)."""
    if isinstance(node, ast.Name):
        head, _, index = node.id.partition(".")
        return int(index) if head == "input" and index.isdigit() else 0
    if isinstance(node, list):
        return max(map(_inputs_read, node), default=0)
    if isinstance(node, ast.Node):
        return max((_inputs_read(getattr(node, name)) for name in type(node).model_fields), default=0)
    return 0


def _compile(program: Program, conventions: Conventions, keep: frozenset[str]) -> Compiled:
    ir = resolve(program, keep, conventions.paths, conventions.weights, conventions.kv)
    graph = costs.annotate(lower(ir), conventions.cost_conventions(), ir.act_format)
    return Compiled(ir=ir, graph=graph, conventions=conventions, program=program, keep=keep)
