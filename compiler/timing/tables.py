"""Efficiency tables: published measurements of single kernels on one device, as data.

A table is TOML (stdlib/efficiency/DEVICE.toml, or a user's file given with `--efficiency-table`): `device = NAME`
and arrays of points, one array per kernel kind, each point its shape, what was measured (a time or a bandwidth)
and its `source` (a sweep writes one measured series as lists: `m = [1, 16, 64]`, `latency_us = [...]`, one source
for all its points). Nothing is fitted: fractions.py turns each point into the fraction of its own roofline the kernel
reached, and interpolates between points by shape. A point without a source, with a value out of range, or that
claims a kernel faster than the device's roofline is refused at its line (E412)."""

from __future__ import annotations

import math
import tomllib
from importlib import resources
from pathlib import Path

from pydantic import BaseModel, PrivateAttr

from archcost.dsl.errors import ArchError, Diagnostic, Span

# each kind: the fields a point gives (besides `source`), whole numbers first, then measured values
KINDS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "gemm": (("m", "n", "k"), ("latency_us",)),
    "grouped_gemm": (("tokens", "hidden", "inter", "topk", "experts"), ("latency_us",)),
    "attention_prefill": (("batch", "seq", "heads", "kv_heads", "head_dim"), ("latency_us",)),
    "attention_decode": (("batch", "kv_len", "heads", "kv_heads", "head_dim"), ("latency_us",)),
    # FlashAttention's own benchmark (benchmarks/benchmark_flash_attention.py): one attention forward, and one
    # forward and backward, of MHA heads, measured as TFLOPs/s in its convention (4·b·s²·h·d forward FLOPs,
    # halved when causal; the backward 2.5 × that, so forward and backward 3.5 ×)
    "attention_fwd": (("batch", "seq", "heads", "head_dim"), ("tflops",)),
    "attention_fwd_bwd": (("batch", "seq", "heads", "head_dim"), ("tflops",)),
    "memcopy": ((), ("gbps",)),
    "allreduce": (("bytes", "ranks"), ("latency_us",)),
    "allgather": (("bytes", "ranks"), ("latency_us",)),
    "reducescatter": (("bytes", "ranks"), ("latency_us",)),
    "alltoall": (("bytes", "ranks"), ("latency_us",)),
}
# kinds whose points name a format
FORMATTED = ("gemm", "grouped_gemm", "attention_prefill", "attention_decode", "attention_fwd", "attention_fwd_bwd")
MAX_POINTS = 100_000


class Point(BaseModel):
    """One measured kernel: its kind, number format (where it has one), shape and measurement, and where it
    was read."""

    kind: str
    format: str | None = None
    shape: dict[str, int | bool]
    measured: dict[str, float]
    source: str
    line: int = 0


class Table(BaseModel):
    device: str
    file: str
    points: list[Point]

    _memo: dict = PrivateAttr(default_factory=dict)

    def of(self, kind: str) -> list[Point]:
        key = ("of", kind)
        if key not in self._memo:
            self._memo[key] = [p for p in self.points if p.kind == kind]
        return self._memo[key]

    def memo(self) -> dict:
        """What is found from this table once and asked again (fractions.py's interpolations)."""
        return self._memo


def shipped_file(device: str) -> Path | None:
    folder = Path(str(resources.files("archcost.stdlib"))) / "efficiency"
    path = folder / f"{device}.toml"
    return path if path.is_file() else None


def shipped(device: str) -> Table | None:
    """The table archcost ships for a device sheet, or None."""
    path = shipped_file(device)
    return read(path, shown=f"std/efficiency/{path.name}") if path is not None else None


def read(path: Path, shown: str | None = None) -> Table:
    """A table from its file, every point checked (E412 at the point's line)."""
    name = shown or str(path)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise ArchError([Diagnostic(code="E101", message=f"cannot read `{name}`: {error}")]) from None
    return parse(text, name)


def parse(text: str, name: str) -> Table:
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        line, column = _position(str(error))
        raise _refused(name, text, line, column, f"not a TOML table: {str(error).split(' (at')[0]}") from None
    device = data.get("device")
    if not isinstance(device, str):
        raise _refused(name, text, 1, 1, "the table names no `device = \"NAME\"` (a device sheet's name)")
    lines = _headers(text)
    points = []
    for kind, rows in data.items():
        if kind == "device":
            continue
        if kind not in KINDS or not isinstance(rows, list):
            raise _refused(name, text, _line_of(text, kind), 1, f"`{kind}` is not a kernel kind of an efficiency "
                           f"table ({', '.join(KINDS)})")
        for index, row in enumerate(rows):
            line = lines.get((kind, index), 1)
            points.extend(_point(kind, one, name, text, line) for one in _swept(kind, row, name, text, line))
    if len(points) > MAX_POINTS:
        raise _refused(name, text, 1, 1, f"more than {MAX_POINTS:,} points")
    return Table(device=device, file=name, points=points)


def _swept(kind: str, row, name: str, text: str, line: int) -> list:
    """A point, or a sweep: one measured series along one shape field (`m = [1, 16, ...]` beside `latency_us =
    [...]`, the same length), every other field and its source shared; each of its values is a point."""
    if not isinstance(row, dict):
        return [row]
    whole, measured = KINDS[kind]
    along = [field for field in whole if isinstance(row.get(field), list)]
    if not along:
        return [row]
    lengths = {len(row[field]) for field in along + [f for f in measured if isinstance(row.get(f), list)]}
    if len(along) > 1 or len(lengths) != 1 or not all(isinstance(row.get(f), list) for f in measured) or not \
            0 < next(iter(lengths)) <= MAX_POINTS:
        raise _refused(name, text, line, 1, f"a `{kind}` sweep lists one shape field and its measurements, each a "
                       "list of the same length", "e.g. m = [1, 16], latency_us = [10.5, 11.2]")
    return [{**row, **{field: row[field][index] for field in along + list(measured)}}
            for index in range(next(iter(lengths)))]


def _point(kind: str, row, name: str, text: str, line: int) -> Point:
    if not isinstance(row, dict):
        raise _refused(name, text, line, 1, f"a `[[{kind}]]` point is a table of fields")
    whole, measured = KINDS[kind]
    known = {*whole, *measured, "source", "format", "causal"}
    stray = sorted(set(row) - known)
    if stray:
        raise _refused(name, text, line, 1, f"a `{kind}` point takes no field `{stray[0]}`",
                       f"its fields: {', '.join(sorted(known))}")
    source = row.get("source")
    if not isinstance(source, str) or len(source.strip()) < 10:
        raise _refused(name, text, line, 1, f"a `{kind}` point names no `source` (where the measurement was read: "
                       "repository, commit, file and row, or a paper's table)")
    fmt = row.get("format")
    if kind in FORMATTED and not isinstance(fmt, str):
        raise _refused(name, text, line, 1, f"a `{kind}` point names no number `format` (bf16, fp8, ...)")
    shape: dict[str, int | bool] = {}
    for field in whole:
        value = row.get(field)
        if type(value) is not int or not 0 < value < 2**62:
            raise _refused(name, text, line, 1, f"`{field}` of a `{kind}` point is a positive whole number, not "
                           f"{value!r}"[:200])
        shape[field] = value
    if "causal" in row:
        if type(row["causal"]) is not bool:
            raise _refused(name, text, line, 1, "`causal` is true or false")
        shape["causal"] = row["causal"]
    values: dict[str, float] = {}
    for field in measured:
        value = row.get(field)
        if type(value) not in (int, float) or not (math.isfinite(value) and value > 0):
            raise _refused(name, text, line, 1, f"`{field}` of a `{kind}` point is a positive number, not {value!r}"
                           [:200])
        values[field] = float(value)
    return Point(kind=kind, format=fmt if isinstance(fmt, str) else None, shape=shape, measured=values,
                 source=source, line=line)


def _headers(text: str) -> dict[tuple[str, int], int]:
    """(kind, index) → the line of that point's `[[kind]]` header."""
    found: dict[tuple[str, int], int] = {}
    counts: dict[str, int] = {}
    for number, raw in enumerate(text.splitlines(), start=1):
        stripped = raw.strip()
        if stripped.startswith("[[") and stripped.endswith("]]"):
            kind = stripped[2:-2].strip()
            found[(kind, counts.get(kind, 0))] = number
            counts[kind] = counts.get(kind, 0) + 1
    return found


def _line_of(text: str, key: str) -> int:
    for number, raw in enumerate(text.splitlines(), start=1):
        if raw.strip().startswith((f"[[{key}]]", f"[{key}]", f"{key} =", f"{key}=")):
            return number
    return 1


def _position(message: str) -> tuple[int, int]:
    import re

    found = re.search(r"line (\d+), column (\d+)", message)
    return (int(found.group(1)), int(found.group(2))) if found else (1, 1)


def _refused(name: str, text: str, line: int, column: int, message: str, hint: str | None = None) -> ArchError:
    lines = text.splitlines() or [""]
    source_line = lines[min(max(line, 1), len(lines)) - 1]
    span = Span(file=name, line=line, column=column, end_line=line, end_column=max(column + 1, len(source_line) + 1))
    return ArchError([Diagnostic(code="E412", message=message, span=span, source_line=source_line, hint=hint)])


def refused_point(table: Table, point: Point, message: str, text: str | None = None) -> ArchError:
    return ArchError([Diagnostic(code="E412", message=message,
                                 span=Span(file=table.file, line=point.line or 1, column=1, end_line=point.line or 1,
                                           end_column=2 + len(point.kind) + 3),
                                 source_line=f"[[{point.kind}]]",
                                 hint="a point faster than the device's roofline was measured on another device or "
                                      "with another shape: check its fields against its source")])
