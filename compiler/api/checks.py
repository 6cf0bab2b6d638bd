"""The API's arguments checked where they enter: a wrong type or value is an ArchError with the CLI's codes."""

from __future__ import annotations

from pathlib import Path

from archcost.compiler.terms.letters import MAX_COUNT, bad_value
from archcost.dsl.errors import did_you_mean


def word(name: str, value, choices, optional: bool = False):
    """One of `choices` (a phase, a ledger, a table, ...), spelled exactly."""
    if value is None and optional:
        return None
    if not isinstance(value, str) or value not in choices:
        shown = value if isinstance(value, str) else type(value).__name__
        raise bad_value(f"`{name}` is one of {', '.join(choices)}, not `{shown}`",
                     did_you_mean(value, choices) if isinstance(value, str) else None)
    return value


def count(name: str, value, low: int, optional: bool = False):
    """A whole number from `low` to MAX_COUNT; a bool, a float or a string is refused, not converted."""
    if value is None and optional:
        return None
    if isinstance(value, float) and value.is_integer():
        value = int(value)  # 2.0 is the whole number 2; 1.5 and True are not
    if isinstance(value, bool) or not isinstance(value, int):
        raise bad_value(f"`{name}` takes a whole number, not {type(value).__name__} `{value!r}`"[:200])
    if not low <= value <= MAX_COUNT:
        raise bad_value(f"`{name}` = {value} is out of range: {low} to {MAX_COUNT:,}"[:200])
    return value


def names(name: str, value) -> tuple[str, ...]:
    """A list or tuple of names (a single string would be read letter by letter)."""
    if isinstance(value, str) or not isinstance(value, (list, tuple)) or not all(isinstance(v, str) for v in value):
        raise bad_value(f"`{name}` takes a list of names, e.g. [\"d\", \"vocab\"]")
    return tuple(value)


def words_by_name(name: str, value) -> dict[str, str]:
    """A {name: word} mapping (the spec's execution paths)."""
    if value is None:
        return {}
    if not isinstance(value, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in value.items()):
        raise bad_value(f"`{name}` takes a mapping of names to words, e.g. {{\"mla_cache\": \"expanded\"}}")
    return value


def scenario(phase: str, B, S, P, G):
    """A request shape of the API's letters, each checked as the CLI's flags are; P as `new_tokens` gives it."""
    from archcost.compiler.terms.conventions import Scenario

    return Scenario(B=count("B", B, 1), S=count("S", S, 0), P=count("P", new_tokens(phase, P), 1), G=count("G", G, 1))


def new_tokens(phase: str, P: int | None) -> int:
    """P when given, else the API's default: one new token for a decode step, an 8,192-token prompt otherwise."""
    return (1 if phase == "decode" else 8192) if P is None else P


def path(name: str, value) -> Path:
    if not isinstance(value, (str, Path)):
        raise bad_value(f"`{name}` takes a file path, not {type(value).__name__}")
    return Path(value)


def source(value) -> tuple[str | None, Path | None]:
    """(spec text, None) or (None, path): an existing file is read as a file, even with a `{` in its name;
    text with a `{` that names no file is spec text."""
    if not isinstance(value, (str, Path)):
        raise bad_value(f"`source` takes a path or spec text, not {type(value).__name__}",
                     "decode bytes first, e.g. data.decode()" if isinstance(value, bytes) else None)
    if isinstance(value, str) and ("\n" in value or "{" in value) and not _is_file(value):
        return value, None
    return None, Path(value)


def _is_file(text: str) -> bool:
    try:
        return len(text) < 4096 and "\n" not in text and Path(text).is_file()
    except (OSError, ValueError):
        return False


def switch(name: str, value) -> bool:
    if not isinstance(value, bool):
        raise bad_value(f"`{name}` is True or False")
    return value


def positive(name: str, value, most: float | None = None) -> float | None:
    """An optional positive number (at most `most`), never a bool or text."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 < value <= (most or float("inf")):
        raise bad_value(f"`{name}` is a number above 0{f' and at most {most:g}' if most else ''}")
    return float(value)


def text(name: str, value) -> str | None:
    if value is not None and not isinstance(value, str):
        raise bad_value(f"`{name}` takes text, not {type(value).__name__}")
    return value
