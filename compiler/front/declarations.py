"""What a program declares before any statement runs: the blocks each file can call, and number formats."""

from __future__ import annotations

from dataclasses import dataclass

import sympy as sp

from archcost.dsl import ast
from archcost.dsl.errors import Diagnostic, did_you_mean
from archcost.dsl.loader import Program

from .arguments import match_args
from .expr import Env, Problem, to_sympy
from .precision import Format

PRELUDE_NAME = "std/formats.arch"
FORMAT_ARGS = ("bits", "scale_bits", "block", "align", "parts")


@dataclass(frozen=True)
class Declarations:
    blocks: dict[str, dict[str, ast.BlockDef]]  # module path -> every block that module can call
    formats: dict[str, Format]                   # every format of every loaded file, the prelude's first
    owners: dict[int, str]                       # id(block definition) -> the module that defines it

    def module_of(self, block: ast.BlockDef) -> str:
        return self.owners[id(block)]

    def any_block(self, name: str) -> ast.BlockDef | None:
        """A block of that name in any loaded file (one handed in as an argument, `norm = layernorm`)."""
        return next((self.blocks[path][name] for path in sorted(self.blocks) if name in self.blocks[path]), None)


def declare(program: Program, problem, problems: list[Diagnostic]) -> Declarations:
    """Index blocks and formats; what is wrong with them joins `problems`."""
    defined = {path: _own_blocks(module, program, problems) for path, module in program.modules.items()}
    owners = {id(block): path for path, blocks in defined.items() for block in blocks.values()}
    reported: list[Diagnostic] = []
    visible = {path: _visible(program, path, defined, reported) for path in program.modules}
    problems += list(dict.fromkeys(reported))  # the same clash seen from several files is one problem
    return Declarations(visible, _formats(program, problem, problems), owners)


def _own_blocks(module: ast.Module, program: Program, problems: list[Diagnostic]) -> dict[str, ast.BlockDef]:
    own: dict[str, ast.BlockDef] = {}
    for block in module.blocks:
        if block.name in own:
            problems.append(program.sources.diagnostic(
                "E212", f"block `{block.name}` is defined twice in this file", block.span))
        names = [param.name for param in block.params]
        for index, param in enumerate(block.params):
            if param.name in names[:index]:  # the second would silently take the first one's argument
                problems.append(program.sources.diagnostic(
                    "E212", f"parameter `{param.name}` is named twice in block `{block.name}`", param.span,
                    hint="give each parameter its own name"))
        own[block.name] = block
    return own


def _visible(program: Program, path: str, defined: dict[str, dict[str, ast.BlockDef]],
             problems: list[Diagnostic]) -> dict[str, ast.BlockDef]:
    """A file's own blocks and those of every file it uses; a name two used files define is E212 (which one
    a call meant would depend on the order of the `use` lines)."""
    used: dict[str, ast.BlockDef] = {}
    for other in program.visible_modules(path)[1:]:
        for name, block in defined[other].items():
            if name in used and used[name] is not block:
                problems.append(program.sources.diagnostic(
                    "E212", f"block `{name}` is defined in two files this one uses: {used[name].span.file} and "
                    f"{block.span.file}", block.span, hint="rename one of them"))
            used.setdefault(name, block)
    return {**used, **defined[path]}  # a file's own blocks shadow the ones it uses


def _formats(program: Program, problem, problems: list[Diagnostic]) -> dict[str, Format]:
    """Every `format` declared in any loaded file, the stdlib's prelude first."""
    formats: dict[str, Format] = {}
    for module in sorted(program.modules.values(), key=lambda mod: mod.path != PRELUDE_NAME):
        for definition in module.formats:
            if definition.name in formats:
                problems.append(program.sources.diagnostic(
                    "E212", f"format `{definition.name}` is defined twice", definition.span,
                    hint="give the new format a name of its own; the stdlib's formats cannot be redefined"))
                continue
            try:
                formats[definition.name] = format_of(definition, formats, problem)
            except Problem as error:
                problems.append(error.diagnostic)
    return formats


def format_of(definition: ast.FormatDef, known: dict[str, Format], problem) -> Format:
    """A `format NAME { ... }`: plain bits with block scales, or `parts` made of formats declared before it."""
    given = match_args(definition.args, list(FORMAT_ARGS), f"format `{definition.name}`", problem, ())
    env = Env({}, problem, {})
    values = {k: _format_number(definition.name, k, v, env, problem) for k, v in given.items() if k != "parts"}
    if "parts" not in given:
        return Format(definition.name, **values)
    parts = []
    for symbol, count in to_sympy(given["parts"], env).as_coefficients_dict().items():
        if not isinstance(symbol, sp.Symbol) or symbol.name not in known:
            raise problem("E210", f"`parts` of format `{definition.name}` names an unknown format",
                          given["parts"].span, hint=did_you_mean(str(symbol), known))
        parts.append((known[symbol.name], count))
    return Format(definition.name, parts=tuple(sorted(parts, key=lambda p: p[0].name)),
                  **{k: v for k, v in values.items() if k == "align"})


LOWEST = {"bits": 1, "scale_bits": 0, "block": 1, "align": 1}


def _format_number(name: str, key: str, expr: ast.Expr, env: Env, problem) -> sp.Expr:
    """A format's bits, scale bits, block or alignment: a number known when the spec compiles, not below its
    least (`block` and `align` whole numbers)."""
    value = to_sympy(expr, env)
    if not (isinstance(value, sp.Expr) and value.is_number):
        raise problem("E218", f"`{key}` of format `{name}` must be a number known when the spec compiles",
                      expr.span)
    if value < LOWEST[key] or (key in ("block", "align") and not value.is_integer):
        least = "a whole number of at least 1" if key in ("block", "align") else f"{LOWEST[key]} or more"
        raise problem("E214", f"`{key}` of format `{name}` is {value}; it must be {least}", expr.span)
    return value


def expanded_size(body: list[ast.Stmt], module: str, declarations: Declarations,
                  memo: dict[int, int] | None = None, open_calls: frozenset[int] = frozenset()) -> int:
    """An upper bound on the ops a body expands to, from the syntax tree alone (both branches of an `if`,
    a repeat's body once): how big resolving would get, known before any of it is done."""
    memo = {} if memo is None else memo
    total = 0
    for stmt in body:
        match stmt:
            case ast.Op():
                total += 1
            case ast.BlockCall():
                total += _call_size(stmt.name, module, declarations, memo, open_calls)
            case ast.Repeat():
                total += expanded_size(stmt.body, module, declarations, memo, open_calls)
            case ast.Select():
                total += sum(expanded_size(arm.body, module, declarations, memo, open_calls) for arm in stmt.arms)
            case ast.If():
                total += sum(expanded_size(b, module, declarations, memo, open_calls) for b in (stmt.body, stmt.orelse))
    return total


def _call_size(name: str, module: str, declarations: Declarations, memo: dict[int, int],
               open_calls: frozenset[int]) -> int:
    block = declarations.blocks[module].get(name)
    if block is None or id(block) in open_calls:  # a block handed in as an argument, or a cycle (E213 later)
        return 1
    if id(block) not in memo:
        memo[id(block)] = expanded_size(block.body, declarations.module_of(block), declarations, memo,
                                        open_calls | {id(block)})
    return memo[id(block)]
