"""Grids of request shapes evaluated at once: the compiled formulas turned into numpy functions."""

from __future__ import annotations

import csv
import io
import itertools
import json
import math
from pathlib import Path

import numpy as np
import sympy as sp

from archcost.dsl.errors import ArchError, Diagnostic

from .pipeline import Compiled
from .quantities import LEVELS, SWEPT
from .scenario import LOWEST, MAX_COUNT, at_phase, bad_value
from .symbols import B, G, P, S

QUANTITIES = tuple(q.name for q in SWEPT)
LETTERS = (B, S, P, G)


MAX_POINTS = 2_000_000  # a grid is built in memory (about 5 s a million points): its size is checked first


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
    start, stop, step = numbers[0], numbers[1] if len(numbers) > 1 else numbers[0], numbers[2] if len(numbers) > 2 else 1
    if not LOWEST[letter] <= start <= stop <= MAX_COUNT or step < 1:
        raise _bad(letter, text, f"values run from {LOWEST[letter]} to {MAX_COUNT:,}, each range upward with a "
                                 "step of at least 1")
    return range(start, stop + 1, step)


def _bad(letter: str, text: str, why: str) -> ArchError:
    return bad_value(f"--{letter} {text}: {why}")


def check_size(values: dict[str, list[int]]) -> None:
    """The grid's points, B × S × P × G, at most MAX_POINTS."""
    points = 1
    for letter in "BSPG":
        points *= len(values[letter])
    if points > MAX_POINTS:
        raise ArchError([Diagnostic(code="E401", message=f"the grid has {points:,} points; the most a sweep "
                                    f"evaluates is {MAX_POINTS:,}", hint="sweep a coarser grid, or in parts")])


def functions(compiled: Compiled, phase: str, modules: str = "numpy") -> dict:
    """One function of (B, S, P, G) per quantity: vectorised over numpy arrays, or on plain numbers
    with modules = "math" (the fastest way to evaluate one scenario again and again)."""
    made = {}
    for quantity in SWEPT:
        name, fields = quantity.name, quantity.fields
        expr = sp.Add(*(at_phase(compiled.total(f), phase, compiled.options, f in LEVELS) for f in fields))
        free = expr.free_symbols - set(LETTERS)
        if free:
            raise ArchError([Diagnostic(code="E400", message=f"cannot sweep: `{sorted(map(str, free))[0]}` "
                                        "has no value")])
        made[name] = sp.lambdify(LETTERS, expr, modules=modules)  # code from the compiled formula, not user text
    return made


def evaluator(compiled: Compiled, phase: str):
    """A function (B, S, P, G) → {quantity: value} for repeated single scenarios (floats, not exact)."""
    made = functions(compiled, phase, modules="math")
    return lambda b, s, p, g: {name: function(b, s, p, g) for name, function in made.items()}


def sweep(compiled: Compiled, phase: str, values: dict[str, list[int]]) -> dict[str, np.ndarray]:
    points = np.array(list(itertools.product(*(values[k] for k in "BSPG"))), dtype=np.float64).T
    table = dict(zip("BSPG", points, strict=True))
    if phase == "decode":
        table["P"] = np.ones_like(table["P"])
    for name, function in functions(compiled, phase).items():
        table[name] = np.broadcast_to(np.asarray(function(*points), dtype=np.float64), points[0].shape)
    return table


def write(table: dict[str, np.ndarray], path: Path | None) -> str:
    columns = list(table)
    rows = zip(*(table[c] for c in columns), strict=True)
    if path is not None and path.suffix.lower() == ".json":
        text = json.dumps([{c: _plain(v) for c, v in zip(columns, row, strict=True)} for row in rows], indent=1)
    else:
        buffer = io.StringIO()
        writer = csv.writer(buffer, lineterminator="\n")
        writer.writerow(columns)
        writer.writerows([_plain(v) for v in row] for row in rows)
        text = buffer.getvalue()
    if path is not None:
        from .render.files import atomic_write

        atomic_write(path, lambda target: target.write_text(text))
    return text


def _plain(value: float):
    """A value as its file shows it: an integer when the float holds one exactly (below 2^53), else the float
    itself; infinity or NaN never reach a file."""
    value = float(value)
    if not math.isfinite(value):
        raise ArchError([Diagnostic(code="E401", message="a value of this grid is too large to compute")])
    return int(value) if value.is_integer() and abs(value) < 2**53 else value
