"""AST back to text in one canonical layout (for `fmt` and the print→parse round trip)."""

from __future__ import annotations

import re
import textwrap
from typing import NamedTuple

from . import ast
from .text import WIDTH, format_arg, format_expr, wrap_args, wrap_terms

INDENT = "  "
def format_stmt(stmt: ast.Stmt, depth: int) -> list[str]:
    """A statement's canonical lines, without comments."""
    return _Layout([]).stmt(stmt, depth)


def format_module(module: ast.Module) -> str:
    """The canonical text of a module, without comments: items in source order."""
    return _Layout([]).module(module)


def canonical(text: str, file: str = "<text>") -> str:
    """`text` in canonical layout with its comments kept: each comment stays before the statement it
    preceded or at the end of the line it ended, and a run of blank lines becomes one."""
    from .parser import parse

    module = parse(text, file)
    return _Layout(comments(text), text.split("\n")).module(module)


class Comment(NamedTuple):
    line: int
    text: str        # from `#` to the end of the line
    trailing: bool   # after code on its line


def comments(text: str) -> list[Comment]:
    """Every `#` comment of a source, with its line; a `#` inside a string is not one."""
    found = []
    for number, line in enumerate(text.split("\n"), start=1):
        inside = False
        for column, char in enumerate(line):
            if char == '"':
                inside = not inside
            elif char == "#" and not inside:
                found.append(Comment(number, line[column:].rstrip(), bool(line[:column].strip())))
                break
    return found




class _Layout:
    """Prints statements in canonical layout, placing the source's comments and paragraph breaks."""

    def __init__(self, notes: list[Comment], lines: list[str] | None = None):
        self.pending = list(notes)
        self.lines = lines or []

    # comments ------------------------------------------------------------------------------------
    def _notes_above(self, line: int, depth: int) -> list[str]:
        """The own-line comments before source line `line`; a blank line above one is kept as one."""
        out = []
        while self.pending and self.pending[0].line < line:
            note = self.pending.pop(0)
            if self._blank_above(note.line):
                out.append("")
            out.append(INDENT * depth + note.text)
        return out

    def _before(self, line: int | None, depth: int) -> list[str]:
        """What goes above a statement: its comments, and one blank line if the source had one."""
        if line is None:
            return []
        out = self._notes_above(line, depth)
        if self._blank_above(line) and (not out or out[-1] != ""):
            out.append("")
        return out

    def _blank_above(self, line: int) -> bool:
        return 1 < line <= len(self.lines) + 1 and not self.lines[line - 2].strip()

    def _trailing(self, line: int | None) -> str:
        if line is not None and self.pending and self.pending[0].line == line and self.pending[0].trailing:
            return "  " + self.pending.pop(0).text
        return ""

    def _opening(self, first: int | None, body: list, last: int | None) -> str:
        """The comment ending a `{` header (which may be wrapped over several lines), unless a statement
        of the body shares its line (then the comment is that statement's)."""
        if first is None:
            return ""
        end = _line(body[0]) - 1 if body else (last - 1 if last is not None and last > first else first)
        for index, note in enumerate(self.pending):
            if note.line > end:
                break
            if note.line >= first and note.trailing:
                return "  " + self.pending.pop(index).text
        return ""

    def _close(self, line: int | None, depth: int) -> list[str]:
        """Comments left inside a body before its closing brace."""
        return [] if line is None else _drop_leading_blank(self._notes_above(line, depth + 1))

    # statements ----------------------------------------------------------------------------------
    def body(self, body: list[ast.Stmt], depth: int, end: int | None) -> list[str]:
        out = []
        for index, stmt in enumerate(body):
            lead = self._before(_line(stmt), depth + 1)
            if index == 0 or not out:
                lead = _drop_leading_blank(lead)
            out += lead
            out += _noted(stmt, self.stmt(stmt, depth + 1), INDENT * (depth + 1))
        return out + self._close(end, depth)

    def stmt(self, stmt: ast.Stmt, depth: int) -> list[str]:
        pad = INDENT * depth
        first, last = _line(stmt), _end(stmt)
        match stmt:
            case ast.Binding():
                return wrap_terms(f"{pad}{stmt.name} = ", stmt.value, self._trailing(last))
            case ast.Option():
                return [
                    f"{pad}option {stmt.name} = {' | '.join([stmt.value, *stmt.alternatives])}{self._trailing(last)}"
                ]
            case ast.Precision():
                settings = ", ".join(f"{s.role} = {s.format}" for s in stmt.settings)
                return [f"{pad}precision {settings}{self._trailing(last)}"]
            case ast.Component():
                return [f"{pad}component {stmt.name}{self._trailing(last)}"]
            case ast.Replay():
                return [f"{pad}replay {format_expr(stmt.tail)}{self._trailing(last)}"]
            case ast.Require():
                return [f'{pad}require {format_expr(stmt.condition)}, "{stmt.message}"{self._trailing(last)}']
            case ast.Select():
                return self._select(stmt, depth)
            case ast.Repeat():
                label = f" as {stmt.label}" if stmt.label else ""
                word = "loop" if stmt.shared else "repeat"
                head = f"{pad}{word} {format_expr(stmt.count)}{label} {{{self._opening(first, stmt.body, last)}"
                return [head, *self.body(stmt.body, depth, last), f"{pad}}}{self._trailing(last)}"]
            case ast.If():
                return self._if(stmt, depth)
            case ast.BlockCall():
                label = f" as {stmt.label}" if stmt.label else ""
                label += f" shares {stmt.shares}" if stmt.shares else ""
                return wrap_args(f"{pad}{stmt.name}(", [format_arg(a) for a in stmt.args], f"){label}",
                                  self._trailing(last), align=True)
            case ast.Op():
                head = f"{stmt.op} {stmt.label}" if stmt.label else stmt.op
                return wrap_args(f"{pad}{head}: ", [format_arg(a) for a in stmt.args], "", self._trailing(last),
                                  align=False, pad=pad)
        raise AssertionError(stmt)

    def _else_line(self, stmt: ast.If, first_else: int | None) -> int | None:
        """The source line of `else`: comments above it close the `if` branch, those below it open the `else`
        branch (the syntax tree keeps no span for the keyword, the source does)."""
        start = _end(stmt.body[-1]) if stmt.body else _line(stmt)
        if start is None or first_else is None:
            return first_else
        for number in range(start, min(first_else, len(self.lines)) + 1):
            code = self.lines[number - 1].split("#", 1)[0]
            if re.search(r"\belse\b", code):
                return number
        return first_else

    def _select(self, stmt: ast.Select, depth: int) -> list[str]:
        pad, first, last = INDENT * depth, _line(stmt), _end(stmt)
        lines = [f"{pad}select {{{self._opening(first, stmt.arms, last)}"]
        for index, arm in enumerate(stmt.arms):
            lead = self._before(_line(arm), depth + 1)
            lines += _drop_leading_blank(lead) if index == 0 else lead
            note = self._opening(_line(arm), arm.body, _end(arm))
            lines.append(f"{pad}{INDENT}{format_expr(arm.count)} as {arm.label} {{{note}")
            lines += self.body(arm.body, depth + 1, _end(arm))
            lines.append(f"{pad}{INDENT}}}{self._trailing(_end(arm))}")
        return [*lines, *self._close(last, depth), f"{pad}}}{self._trailing(last)}"]

    def _if(self, stmt: ast.If, depth: int) -> list[str]:
        pad, first, last = INDENT * depth, _line(stmt), _end(stmt)
        lines = [f"{pad}if {format_expr(stmt.condition)} {{{self._opening(first, stmt.body, last)}"]
        if stmt.orelse:
            split = self._else_line(stmt, _line(stmt.orelse[0]))
            lines += self.body(stmt.body, depth, split)
            lines += [f"{pad}}} else {{", *self.body(stmt.orelse, depth, last)]
        else:
            lines += self.body(stmt.body, depth, last)
        return [*lines, f"{pad}}}{self._trailing(last)}"]

    # items ---------------------------------------------------------------------------------------
    def module(self, module: ast.Module) -> str:
        items = [*module.uses, *module.formats, *module.devices, *module.links, *module.blocks, *module.models]
        if all(_line(item) is not None for item in items):
            items.sort(key=_line)
        out: list[str] = []
        previous = None
        for item in items:
            lead = self._before(_line(item), 0)
            if out and not self.lines and not (previous is ast.Use and isinstance(item, ast.Use)):
                lead = ["", *lead]  # no source to follow: a blank line between items
            out += _drop_leading_blank(lead) if not out else lead
            out += _noted(item, self.item(item), "", above=True)
            previous = type(item)
        out += [note.text for note in self.pending]  # comments after the last item
        self.pending = []
        return "\n".join(out).rstrip("\n") + "\n"

    def item(self, item) -> list[str]:
        first, last = _line(item), _end(item)
        match item:
            case ast.Use():
                target = f'"{item.target}"' if item.is_path else item.target
                return [f"use {target}{self._trailing(first)}"]
            case ast.FormatDef() | ast.DeviceDef() | ast.LinkDef():
                kind = {ast.FormatDef: "format", ast.DeviceDef: "device", ast.LinkDef: "link"}[type(item)]
                return wrap_args(f"{kind} {item.name} {{ ", [format_arg(a) for a in item.args], " }",
                                  self._trailing(last), align=True)
            case ast.BlockDef():
                params = [p.name if p.default is None else f"{p.name} = {format_expr(p.default)}" for p in item.params]
                note = self._opening(first, item.body, last)
                head = wrap_args(f"block {item.name}(", params, ") {", note, align=True)
                return [*head, *self.body(item.body, 0, last), "}" + self._trailing(last)]
            case ast.ModelDef():
                return [
                    f'model "{item.name}" {{{self._opening(first, item.body, last)}',
                    *self.body(item.body, 0, last),
                    "}" + self._trailing(last),
                ]
        raise AssertionError(item)


def _line(node) -> int | None:
    return node.span.line if node.span is not None else None


def _end(node) -> int | None:
    return node.span.end_line if node.span is not None else None


def _noted(node, lines: list[str], pad: str, above: bool = False) -> list[str]:
    """A generated node's note: at the end of its line when it fits there, else as comment lines above it."""
    if not node.note:
        return lines
    notes = [line for note in node.note.split("\n")
             for line in textwrap.wrap(note, WIDTH - len(pad) - 2, break_on_hyphens=False) or [""]]
    if not above and len(lines) == 1 and len(notes) == 1 and len(lines[0]) + 4 + len(notes[0]) <= WIDTH:
        return [f"{lines[0]}  # {notes[0]}"]
    return [*(f"{pad}# {note}" for note in notes), *lines]


def _drop_leading_blank(lines: list[str]) -> list[str]:
    return lines[1:] if lines and lines[0] == "" else lines
