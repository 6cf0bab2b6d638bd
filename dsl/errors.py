"""User-facing diagnostics: one error type carrying coded, located messages with carets."""

from __future__ import annotations

import difflib
from collections.abc import Iterable

from pydantic import BaseModel, ConfigDict

# Every code the toolchain can raise, with a one-line title. Issue 8 turns this into docs.
CODES: dict[str, str] = {
    "E100": "syntax error",
    "E101": "unreadable source file",
    "E102": "`use` of a missing file",
    "E103": "cyclic `use`",
    "E104": "no model in file",
    "E105": "more than one model in file",
    "E106": "input too large or too deeply nested",
    "E107": "`use` outside the spec's folder",
    "E200": "unknown block",
    "E201": "unknown operation argument",
    "E202": "missing argument",
    "E203": "too many positional arguments",
    "E204": "argument given twice",
    "E205": "unknown op kind",
    "E206": "ambiguous block name",
    "E207": "unknown tensor name",
    "E208": "reserved name",
    "E209": "unknown component class",
    "E210": "unknown precision format",
    "E211": "bad argument value",
    "E212": "duplicate block definition",
    "E213": "recursive block",
    "E300": "width mismatch",
    "E301": "non-positive dimension",
    "E302": "repeat count is not a positive integer",
    "E303": "repeat body changes the width",
    "E304": "condition is not a known boolean",
    "E305": "select counts do not add up to the stack",
    "E306": "select outside a repeat",
    "E307": "option inside a block",
    "E308": "unknown option",
    "E400": "unbound symbol in evaluation",
    "E401": "bad scenario value",
}


class Span(BaseModel):
    """Where a piece of source text lives: 1-based line and column, end exclusive."""

    model_config = ConfigDict(frozen=True)

    file: str
    line: int
    column: int
    end_line: int
    end_column: int


class Diagnostic(BaseModel):
    """One located problem, rendered by `render` only when a person is about to read it."""

    model_config = ConfigDict(frozen=True)

    code: str
    message: str
    span: Span | None = None
    source_line: str | None = None
    hint: str | None = None

    def render(self) -> str:
        where = f"{self.span.file}:{self.span.line}:{self.span.column}: " if self.span else ""
        lines = [f"{where}error[{self.code}]: {self.message}"]
        if self.span is not None and self.source_line is not None:
            lines += _caret_lines(self.span, self.source_line)
        if self.hint:
            lines.append(f"hint: {self.hint}")
        return "\n".join(lines)


def _caret_lines(span: Span, source_line: str) -> list[str]:
    gutter = str(span.line)
    text = source_line.rstrip("\n").expandtabs(1)
    end = span.end_column if span.end_line == span.line else len(text) + 1
    width = max(1, min(end, len(text) + 1) - span.column)
    pad = " " * len(gutter)
    return [f" {gutter} | {text}", f" {pad} | {' ' * (span.column - 1)}{'^' * width}"]


class ArchError(Exception):
    """The one exception the public API raises for bad user input; holds sorted diagnostics."""

    def __init__(self, diagnostics: Iterable[Diagnostic]):
        self.diagnostics = sorted(diagnostics, key=_position)
        super().__init__(self.render())

    @property
    def codes(self) -> list[str]:
        return [d.code for d in self.diagnostics]

    def render(self) -> str:
        return "\n\n".join(d.render() for d in self.diagnostics)


def _position(diag: Diagnostic) -> tuple:
    if diag.span is None:
        return ("", 0, 0)
    return (diag.span.file, diag.span.line, diag.span.column)


def did_you_mean(name: str, candidates: Iterable[str]) -> str | None:
    """A `hint:` text naming the closest candidate, or None when nothing is close."""
    close = difflib.get_close_matches(name, sorted(set(candidates)), n=1, cutoff=0.6)
    return f"did you mean `{close[0]}`?" if close else None


class Sources:
    """The text of every file read so far, so diagnostics can quote the offending line."""

    def __init__(self) -> None:
        self._texts: dict[str, str] = {}

    def add(self, file: str, text: str) -> None:
        self._texts[file] = text

    def text(self, file: str) -> str:
        return self._texts.get(file, "")

    def line(self, span: Span | None) -> str | None:
        if span is None or span.file not in self._texts:
            return None
        lines = self._texts[span.file].splitlines()
        return lines[span.line - 1] if 0 < span.line <= len(lines) else None

    def diagnostic(self, code: str, message: str, span: Span | None, hint: str | None = None) -> Diagnostic:
        assert code in CODES, code
        return Diagnostic(code=code, message=message, span=span, source_line=self.line(span), hint=hint)
