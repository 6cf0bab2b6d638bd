"""User-facing diagnostics: one error type carrying coded, located messages with carets."""

from __future__ import annotations

import difflib
from collections.abc import Iterable

from pydantic import BaseModel, ConfigDict

from .codes import CODES, SPLIT, ErrorKind  # noqa: F401  (re-exported: the catalogue)


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
    note: str | None = None  # where it was reached from, when the problem lies in a library file

    def render(self) -> str:
        where = f"{printable(self.span.file)}:{self.span.line}:{self.span.column}: " if self.span else ""
        lines = [f"{where}error[{self.code}]: {shortened(printable(self.message))}"]
        if self.span is not None and self.source_line is not None:
            lines += _caret_lines(self.span, self.source_line)
        if self.hint:  # archcost's own words, never cut (a message may quote a user's value at length)
            lines.append(f"hint: {printable(self.hint)}")
        if self.note:
            lines.append(f"note: {shortened(printable(self.note))}")
        return "\n".join(lines)


MAX_MESSAGE = 400  # characters of a message or hint: a value pasted whole is the user's own file, not news


def printable(text: str) -> str:
    """Text safe to print on a terminal: control characters, lone surrogates and the like as escapes."""
    return "".join(c if c.isprintable() or c == " " else c.encode("unicode_escape", "backslashreplace").decode()
                   for c in text)


def shortened(text: str) -> str:
    return text if len(text) <= MAX_MESSAGE else text[:MAX_MESSAGE - 1] + "…"


def _shown_line(line: str) -> str:
    """A source line above a caret: each unprintable character one `·`, so the caret stays under its column."""
    return "".join(c if c.isprintable() or c == "\t" else "·" for c in line)


def _caret_lines(span: Span, source_line: str) -> list[str]:
    gutter = str(span.line)
    text = _shown_line(source_line.rstrip("\n")).expandtabs(1)
    end = span.end_column if span.end_line == span.line else len(text) + 1
    column = span.column
    width = max(1, min(end, len(text) + 1) - column)
    if len(text) > MAX_QUOTED:  # quote a window around the caret, not a whole generated line
        start = max(0, min(column - 1 - MAX_QUOTED // 2, len(text) - MAX_QUOTED))
        text = ("…" if start else "") + text[start:start + MAX_QUOTED] + ("…" if start + MAX_QUOTED < len(text) else "")
        column = column - start + (1 if start else 0)
        width = max(1, min(width, MAX_QUOTED - (column - 1) + 1))
    pad = " " * len(gutter)
    return [f" {gutter} | {text}", f" {pad} | {' ' * (column - 1)}{'^' * width}"]


MAX_QUOTED = 120  # characters of a source line shown above a caret


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
        self._split: dict[str, list[str]] = {}

    def add(self, file: str, text: str) -> None:
        self._texts[file] = text
        self._split.pop(file, None)

    def text(self, file: str) -> str:
        return self._texts.get(file, "")

    def line(self, span: Span | None) -> str | None:
        if span is None or span.file not in self._texts:
            return None
        lines = self._lines(span.file)
        return lines[span.line - 1] if 0 < span.line <= len(lines) else None

    def _lines(self, file: str) -> list[str]:
        """A file's lines, split once (a line ends in LF only, as lark counts lines)."""
        if file not in self._split:
            self._split[file] = self._texts[file].split("\n")
        return self._split[file]

    def diagnostic(self, code: str, message: str, span: Span | None, hint: str | None = None) -> Diagnostic:
        assert code in CODES, code
        return Diagnostic(code=code, message=message, span=span, source_line=self.line(span), hint=hint)
