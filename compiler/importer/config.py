"""A parsed config.json: typed reads of its fields, each remembered as used, and errors located at a field."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path

from archcost.dsl.errors import ArchError, Diagnostic, Span
from archcost.dsl.loader import MAX_FILE_BYTES, read_source

MAX_LAYERS = 10_000  # the deepest published decoders have a few hundred; more is a typo, refused cheaply
MAX_SIZE = 10**12    # no width, head count or vocabulary comes near; larger is a typo, refused at its field


@dataclass
class Config:
    """A parsed config.json with the text it came from, so errors can point at a field."""

    values: dict
    text: str
    file: str
    used: set[str] = field(default_factory=set)

    def get(self, name: str, default=None, *aliases: str):
        for key in (name, *aliases):
            if key in self.values:
                self.used.add(key)
                return self.values[key]
        return default

    def require(self, name: str, *aliases: str):
        value = self.get(name, None, *aliases)
        if value is None:
            raise self.error("E502", f"`{name}` is missing; the importer needs it for model_type "
                                     f"`{self.values.get('model_type')}`", name)
        return value

    def integer(self, name: str, default=None, *aliases: str) -> int:
        value = self.get(name, default, *aliases) if default is not None else self.require(name, *aliases)
        if isinstance(value, bool) or not isinstance(value, int) or not 0 < value <= MAX_SIZE:
            raise self.error("E503", f"`{name}` must be a positive integer up to {MAX_SIZE:.0e}, not "
                                     f"{shown(value)}", name)
        return value

    def layers(self) -> int:
        count = self.integer("num_hidden_layers")
        if count > MAX_LAYERS:
            raise self.error("E503", f"`num_hidden_layers` = {count:,} is more than {MAX_LAYERS:,} layers",
                             "num_hidden_layers", hint="the importer writes layer patterns out; check the value")
        return count

    def count(self, name: str, default: int = 0, *aliases: str) -> int:
        """A non-negative integer (0 allowed: no shared experts, no dense layers)."""
        value = self.get(name, default, *aliases)
        value = default if value is None else value
        if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_SIZE:
            raise self.error("E503", f"`{name}` must be 0 or a positive integer up to {MAX_SIZE:.0e}, not "
                                     f"{shown(value)}", name)
        return value

    def flag(self, name: str, default: bool) -> bool:
        value = self.get(name, default)
        if not isinstance(value, bool):
            raise self.error("E503", f"`{name}` must be true or false, not {shown(value)}", name)
        return value

    def expect(self, name: str, allowed, default=None, why: str = "") -> None:
        """Fail unless the field is absent or one of `allowed` (values this importer can cost)."""
        value = self.get(name, default)
        if value not in allowed:
            allowed_text = ", ".join(json.dumps(a) for a in allowed)
            raise self.error("E503", f"`{name}` = {shown(value)} is not supported (supported: {allowed_text})"
                                     + (f"; {why}" if why else ""), name)

    def error(self, code: str, message: str, name: str | None = None, hint: str | None = None,
              occurrence: int = 0) -> ArchError:
        span, line = self._locate(name, occurrence) if name else (Span(file=self.file, line=1, column=1, end_line=1,
                                                                       end_column=2), self._line(1))
        return ArchError([Diagnostic(code=code, message=message, span=span, source_line=line, hint=hint)])

    def _locate(self, name: str, occurrence: int = 0) -> tuple[Span, str]:
        matches = list(re.finditer(r'"' + re.escape(name) + r'"\s*:', self.text))
        match = matches[occurrence] if matches else None
        offset = match.start() if match else 0
        line = self.text.count("\n", 0, offset) + 1
        column = offset - (self.text.rfind("\n", 0, offset) + 1) + 1
        width = len(name) + 2 if match else 1
        return (Span(file=self.file, line=line, column=column, end_line=line, end_column=column + width),
                self._line(line))

    def _line(self, number: int) -> str:
        lines = self.text.split("\n")
        return lines[number - 1] if 0 < number <= len(lines) else ""



def read_config(path: str | Path) -> Config:
    return parse_config(read_source(Path(path)), str(path))  # refused before reading if over the size limit


def shown(value, most: int = 60) -> str:
    """A config value as JSON, cut to `most` characters: a message quotes a value, not a whole array."""
    text = json.dumps(value)
    return text if len(text) <= most else text[:most - 1] + "…"


class _Duplicate(Exception):
    def __init__(self, key: str):
        super().__init__(key)
        self.key = key


def _no_duplicates(pairs: list[tuple[str, object]]) -> dict:
    """A JSON object whose keys are all different: json.loads would keep the last of two silently."""
    values: dict = {}
    for key, value in pairs:
        if key in values:
            raise _Duplicate(key)
        values[key] = value
    return values


def parse_config(text: str, file: str = "<config>") -> Config:
    if len(text) > MAX_FILE_BYTES:
        raise ArchError([Diagnostic(code="E106", message=f"`{file}` is larger than {MAX_FILE_BYTES:,} bytes; "
                                                         "a config.json is a few KB")])
    try:
        values = json.loads(text, object_pairs_hook=_no_duplicates)
    except _Duplicate as duplicate:
        raise Config(values={}, text=text, file=file).error(
            "E500", f"`{duplicate.key}` is given twice; which value is meant?", duplicate.key, occurrence=-1,
            hint="keep one of them") from None
    except (ValueError, RecursionError) as error:  # JSONDecodeError, or a number of more than 4,300 digits
        line, column = getattr(error, "lineno", 1), getattr(error, "colno", 1)
        lines = text.split("\n")
        span = Span(file=file, line=line, column=column, end_line=line, end_column=column + 1)
        raise ArchError([Diagnostic(code="E500", message=f"not valid JSON: {getattr(error, 'msg', error)}",
                                    span=span, source_line=lines[line - 1] if 0 < line <= len(lines) else "")]) from None
    if not isinstance(values, dict):
        raise ArchError([Diagnostic(code="E500", message="a config.json holds one JSON object `{...}`",
                                    span=Span(file=file, line=1, column=1, end_line=1, end_column=2),
                                    source_line=text.split("\n")[0] if text.strip() else "")])
    return Config(values=values, text=text, file=file)
