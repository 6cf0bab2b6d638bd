"""A parsed config.json with the text it came from: errors located at a field's line."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
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
    start: int = 0  # where this object begins in `text`: a nested `text_config` is located inside its parent

    def section(self, name: str) -> Config:
        """The object under `name` (a multimodal config's `text_config`), located inside this file."""
        match = re.search(r'"' + re.escape(name) + r'"\s*:', self.text[self.start:])
        return Config(values=self.values[name], text=self.text, file=self.file,
                      start=self.start + (match.end() if match else 0))

    def error(self, code: str, message: str, name: str | None = None, hint: str | None = None,
              occurrence: int = 0) -> ArchError:
        span, line = self._locate(name, occurrence) if name else (Span(file=self.file, line=1, column=1, end_line=1,
                                                                       end_column=2), self._line(1))
        return ArchError([Diagnostic(code=code, message=message, span=span, source_line=line, hint=hint)])

    def _locate(self, name: str, occurrence: int = 0) -> tuple[Span, str]:
        matches = list(re.finditer(r'"' + re.escape(name) + r'"\s*:', self.text[self.start:]))
        match = matches[occurrence] if matches else None
        offset = self.start + match.start() if match else self.start
        line = self.text.count("\n", 0, offset) + 1
        column = offset - (self.text.rfind("\n", 0, offset) + 1) + 1
        width = len(name) + 2 if match else 1
        return (Span(file=self.file, line=line, column=column, end_line=line, end_column=column + width),
                self._line(line))

    def _line(self, number: int) -> str:
        lines = self.text.split("\n")
        return lines[number - 1] if 0 < number <= len(lines) else ""



def spec_title(config: Config, name: str | None, fallback: str) -> str:
    """The spec's model name: `name`, else the checkpoint's own (`_name_or_path`, `name_or_path`: its last part),
    else the file's stem, else `fallback`; printable, and without the characters a spec string cannot hold."""
    title = name or _default_name(config) or fallback
    return "".join(c for c in title if c.isprintable() and c not in '"\\').strip() or "imported"


def _default_name(config: Config) -> str | None:
    for field in ("_name_or_path", "name_or_path"):
        path = config.values.get(field)
        if isinstance(path, str) and path.strip("/ "):
            return path.rstrip("/").split("/")[-1]
    return None if config.file.startswith("<") else Path(config.file).stem


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
            "E500",
            f"`{duplicate.key}` is given twice; which value is meant?",
            duplicate.key,
            occurrence=-1,
            hint="keep one of them",
        ) from None
    except (ValueError, RecursionError) as error:  # JSONDecodeError, or a number of more than 4,300 digits
        line, column = getattr(error, "lineno", 1), getattr(error, "colno", 1)
        lines = text.split("\n")
        span = Span(file=file, line=line, column=column, end_line=line, end_column=column + 1)
        raise ArchError(
            [
                Diagnostic(
                    code="E500",
                    message=f"not valid JSON: {getattr(error, 'msg', error)}",
                    span=span,
                    source_line=lines[line - 1] if 0 < line <= len(lines) else "",
                )
            ]
        ) from None
    if not isinstance(values, dict):
        raise ArchError([Diagnostic(code="E500", message="a config.json holds one JSON object `{...}`",
                                    span=Span(file=file, line=1, column=1, end_line=1, end_column=2),
                                    source_line=text.split("\n")[0] if text.strip() else "")])
    return Config(values=values, text=text, file=file)
