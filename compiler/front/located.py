"""Where a problem inside a library block is the user's: the argument of their call the library line names."""

from __future__ import annotations

import re


def named(source_line: str | None, span) -> list[str]:
    """The names a library line's flagged text uses, in order (the arguments that may have caused it)."""
    if not source_line:
        return []
    end = span.end_column if span.end_line == span.line else len(source_line) + 1
    return re.findall(r"[A-Za-z_][A-Za-z0-9_]*", source_line[span.column - 1:end - 1])


def argument_span(site, call: str, names: list[str]):
    """The span of `name = value` in the user's call line for the first of `names` the call gives."""
    from archcost.dsl.errors import Span

    for name in names:
        found = re.search(rf"\b{re.escape(name)}\s*=\s*[^,()]+", call[site.column - 1:])
        if found:
            start = site.column + found.start()
            text = found.group(0).rstrip()
            return Span(file=site.file, line=site.line, column=start, end_line=site.line, end_column=start + len(text))
    return None
