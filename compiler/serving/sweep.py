"""Grids of request shapes evaluated at once: the phase's forms as numpy functions, in chunks, streamed to a file.

The grid is never built whole: each chunk of 2^17 points is unravelled from flat indices, evaluated, turned into
text column by column and written, so memory stays flat however many points there are (up to MAX_POINTS).
"""

from __future__ import annotations

import functools
import math
import sys
from pathlib import Path

import numpy as np

from ..numbers import forms
from ..numbers.assemble import total_key
from ..terms.letters import LOWEST, MAX_COUNT, bad_value
from ..terms.quantities import SWEPT

QUANTITIES = tuple(q.name for q in SWEPT)
MAX_POINTS = 10_000_000  # streamed in chunks: time grows with the grid, memory does not
CHUNK = 2**17
EXACT_BELOW = 2**53      # an integral float below this is printed as the integer it holds


class _TextBytes:
    """Bytes written to a text stream that has no byte buffer under it (a captured stdout)."""

    def __init__(self, text):
        self.text = text

    def write(self, data: bytes) -> None:
        self.text.write(data.decode())

    def flush(self) -> None:
        self.text.flush()


def stdout_bytes():
    """Where bytes for stdout go: its byte buffer, or the text stream itself when it has none."""
    return getattr(sys.stdout, "buffer", None) or _TextBytes(sys.stdout)


def grid(text: str, letter: str) -> range | list[int]:
    """`1,8,64` or `0:8192:1024` (start:stop:step, stop included when reached) → values, each within the
    letter's range; refused before anything is built when it holds more than MAX_POINTS."""
    parts = [_part(part, text, letter) for part in text.split(",")]
    if sum(len(part) for part in parts) > MAX_POINTS:
        raise _bad(letter, text, f"more than {MAX_POINTS:,} values")
    return parts[0] if len(parts) == 1 else [value for part in parts for value in part]


def _part(part: str, text: str, letter: str) -> range:
    bounds = part.split(":")
    if not 1 <= len(bounds) <= 3 or not all(b.strip().replace("_", "").isdigit() and len(b) <= 16 for b in bounds):
        raise _bad(letter, text, "write numbers like 1,8,64 or start:stop:step")
    numbers = [int(b.replace("_", "")) for b in bounds]
    start, stop, step = (
        numbers[0],
        numbers[1] if len(numbers) > 1 else numbers[0],
        numbers[2] if len(numbers) > 2 else 1,
    )
    if not LOWEST[letter] <= start <= stop <= MAX_COUNT or step < 1:
        raise _bad(letter, text, f"values run from {LOWEST[letter]} to {MAX_COUNT:,}, each range upward with a "
                                 "step of at least 1")
    return range(start, stop + 1, step)


def _bad(letter: str, text: str, why: str):
    return bad_value(f"--{letter} {text}: {why}")


def check_axes(values: dict[str, list[int]], phase: str) -> None:
    """A letter the phase does not read cannot vary: a decode's P is 1, only a request has G (else every row
    would be written once for each of their values)."""
    if phase == "decode" and list(values["P"]) != [1]:
        raise bad_value("--P: a decode step takes one new token per request (P = 1)",
                        hint="leave --P out, or sweep --phase prefill or call")
    if phase != "request" and list(values["G"]) != [1]:
        raise bad_value("--G: only a request returns tokens", hint="leave --G out, or sweep --phase request")


def check_size(values: dict[str, list[int]]) -> None:
    """The grid's points, B × S × P × G, at most MAX_POINTS."""
    points = math.prod(len(values[letter]) for letter in "BSPG")
    if points > MAX_POINTS:
        from archcost.dsl.errors import ArchError, Diagnostic

        raise ArchError([Diagnostic(code="E404", message=f"the grid has {points:,} points; the most a sweep "
                                    f"evaluates is {MAX_POINTS:,}", hint="sweep a coarser grid, or in parts")])


# ---------------------------------------------------------------------------------------------- functions

def _select(conditions: list, values: list):
    return np.select([np.asarray(c, dtype=bool) for c in conditions], values, default=np.nan)


VECTOR = {"_F": lambda p, q: p / q, "_exact": lambda a, d: a / d, "_inv": lambda a: 1 / a, "_pow": np.power,
          "_floor": np.floor,
          "_ceil": np.ceil, "_min": lambda *a: functools.reduce(np.minimum, a),
          "_max": lambda *a: functools.reduce(np.maximum, a), "_and": lambda *a: functools.reduce(np.logical_and, a),
          "_or": lambda *a: functools.reduce(np.logical_or, a), "_not": np.logical_not, "_select": _select}


def swept_forms(phase_forms: dict) -> list | None:
    """The sweep's columns as forms (sums of field totals), or None for a request's, which need decode sums."""
    leaves = phase_forms["leaves"]
    keys = [[total_key(f) for f in quantity.fields] for quantity in SWEPT]
    if not all(key in leaves for row in keys for key in row):
        return None
    return [["+", *(leaves[key] for key in row)] for row in keys]


def functions(phase_forms: dict):
    """(B, S, P, G) arrays → one float array per column of the sweep."""
    trees = swept_forms(phase_forms)
    if trees is not None:
        vector = forms.function(trees, VECTOR, vector=True)
        return lambda b, s, p, g: [np.broadcast_to(np.asarray(c, dtype=np.float64), b.shape)
                                   for c in vector(b, s, p, g)]
    from .request_sweep import request_columns  # a request: its decodes summed on the arrays

    return request_columns(phase_forms, VECTOR)


def evaluator(compiled, phase: str):
    """A function (B, S, P, G) → {quantity: value} for repeated single scenarios (floats, not exact)."""
    columns = functions(_forms_of(compiled, phase))
    return lambda b, s, p, g: {name: float(column[0]) for name, column in zip(
        QUANTITIES, columns(*(np.array([v], dtype=np.float64) for v in (b, s, p, g))), strict=True)}


def _forms_of(compiled, phase: str) -> dict:
    """The phase's forms, or the E400 that names a dimension the spec left unbound."""
    from ..numbers.leaves import phase_forms

    found = phase_forms(compiled, phase)
    if found is None:
        from archcost.dsl.errors import ArchError, Diagnostic

        from ..numbers.evaluate import evaluate
        from ..terms.scenario import Scenario

        evaluate(compiled, phase, Scenario())  # names the unbound dimension, where it is used
        raise ArchError([Diagnostic(code="E400", message="cannot sweep: a dimension of this model has no value")])
    return found


# ---------------------------------------------------------------------------------------------- the grid

def chunks(values: dict[str, list[int]], phase: str):
    """The grid in chunks of (B, S, P, G) float arrays, in the order of itertools.product over B, S, P, G."""
    axes = [np.asarray(list(values[k]), dtype=np.float64) for k in "BSPG"]
    shape = tuple(len(axis) for axis in axes)
    total = math.prod(shape)
    for start in range(0, total, CHUNK):
        indices = np.unravel_index(np.arange(start, min(start + CHUNK, total)), shape)
        columns = [axis[index] for axis, index in zip(axes, indices, strict=True)]
        if phase == "decode":
            columns[2] = np.ones_like(columns[2])
        yield columns


def sweep(compiled, phase: str, values: dict[str, list[int]]) -> dict[str, np.ndarray]:
    """The whole grid as columns (for the API and small grids; `archcost sweep` streams instead)."""
    columns = functions(_forms_of(compiled, phase))
    parts = [[*grid_part, *columns(*grid_part)] for grid_part in chunks(values, phase)]
    names = [*"BSPG", *QUANTITIES]
    return {name: np.concatenate([part[i] for part in parts]) for i, name in enumerate(names)}


# ---------------------------------------------------------------------------------------------- writing

def _whole(columns: list[np.ndarray]) -> bool:
    """Every value a non-negative integer below 2^53: the chunk's text can be made without Python numbers."""
    return all(bool(np.all((c >= 0) & (c < EXACT_BELOW) & (c == np.floor(c)))) for c in columns)


def _digits(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Decimal digits of non-negative integers as a byte matrix, right-aligned, and which cells hold a digit."""
    width = len(str(int(values.max()))) if values.size else 1
    powers = 10 ** np.arange(width - 1, -1, -1, dtype=np.int64)
    digits = (values[:, None] // powers) % 10 + 48
    length = np.maximum((values[:, None] >= powers).sum(axis=1), 1)
    return digits.astype(np.uint8), np.arange(width)[None, :] >= (width - length)[:, None]


def _rows(pieces: list[str], columns: list[np.ndarray]) -> bytes:
    """Rows of `pieces[0] v0 pieces[1] v1 ... pieces[n]`, every value printed as the integer it holds."""
    count = len(columns[0])
    blocks = []
    for index, piece in enumerate(pieces):
        fixed = np.frombuffer(piece.encode(), dtype=np.uint8)
        blocks.append((np.broadcast_to(fixed, (count, len(fixed))), np.ones((count, len(fixed)), dtype=bool)))
        if index < len(columns):
            blocks.append(_digits(columns[index].astype(np.int64)))
    chars = np.concatenate([chars for chars, _ in blocks], axis=1)
    keep = np.concatenate([keep for _, keep in blocks], axis=1)
    return chars[keep].tobytes()


def column_text(column: np.ndarray) -> list[str]:
    """A column as its file shows it: an integer where the float holds one below 2^53, else the float's repr;
    infinity or NaN never reach a file."""
    whole = (column == np.floor(column)) & (np.abs(column) < EXACT_BELOW)
    return [str(int(v)) if w else repr(float(v)) for v, w in zip(column.tolist(), whole.tolist(), strict=True)]


def _chunk_text(columns: list[np.ndarray], pieces: list[str]) -> bytes:
    if not all(bool(np.all(np.isfinite(c))) for c in columns):
        from archcost.dsl.errors import ArchError, Diagnostic

        raise ArchError([Diagnostic(code="E404", message="a value of this grid is too large to compute")])
    if _whole(columns):
        return _rows(pieces, columns)
    template = "%s".join(piece.replace("%", "%%") for piece in pieces)
    return "".join(template % cells for cells in zip(*map(column_text, columns))).encode()


def write(compiled, phase: str, values: dict[str, list[int]], path: Path | None) -> int:
    """Stream the grid to `path` (CSV, or JSON for a .json name) or to standard output; the number of points."""
    return write_forms(_forms_of(compiled, phase), phase, values, path)


def write_forms(phase_forms: dict, phase: str, values: dict[str, list[int]], path: Path | None, out=None) -> int:
    """`write` from the phase's forms (a compiled model's, or the formula cache's); `out` a binary stream
    standing in for standard output."""
    columns = functions(phase_forms)
    names = [*"BSPG", *QUANTITIES]
    as_json = path is not None and path.suffix.lower() == ".json"
    total = math.prod(len(values[k]) for k in "BSPG")
    # one row: JSON as `json.dumps(rows, indent=1)` prints it (each row after ",\n"), or a CSV line
    pieces = ([',\n {\n  "' + names[0] + '": '] + [f',\n  "{name}": ' for name in names[1:]] + ["\n }"]
              if as_json else [""] + [","] * (len(names) - 1) + ["\n"])

    def stream(out) -> None:
        from tqdm import tqdm

        bar = tqdm(total=total, unit=" points", delay=1, disable=None, file=sys.stderr, leave=False)
        out.write(b"[" if as_json else (",".join(names) + "\n").encode())
        for index, part in enumerate(chunks(values, phase)):
            text = _chunk_text([*part, *columns(*part)], pieces)
            out.write(text[1:] if as_json and index == 0 else text)  # the first row follows "[" with no comma
            bar.update(len(part[0]))
        out.write(b"\n]" if as_json else b"")
        bar.close()

    if path is None and out is not None:
        stream(out)
    elif path is None:
        sys.stdout.flush()
        stream(stdout_bytes())
        sys.stdout.flush()
    else:
        from ..outputs import atomic_write

        def fill(target: Path) -> None:
            with open(target, "wb") as handle:
                stream(handle)
        atomic_write(path, fill)
    return total


SUFFIXES = (".csv", ".json")


def check_output_format(path) -> None:
    """A sweep writes CSV or JSON, named by the file's suffix; any other name is refused (E109) rather than
    written as CSV under a name that says otherwise."""
    from archcost.compiler.outputs import unknown_format

    if path is not None and path.suffix.lower() not in SUFFIXES:
        raise unknown_format(path, SUFFIXES, verb="write")
