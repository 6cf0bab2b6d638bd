"""Grids of request shapes evaluated at once: the compiled formulas turned into numpy functions."""

from __future__ import annotations

import csv
import io
import itertools
import json
from pathlib import Path

import numpy as np
import sympy as sp

from archcost.dsl.errors import ArchError, Diagnostic

from .pipeline import Compiled
from .quantities import LEVELS, SWEPT
from .scenario import at_phase
from .symbols import B, G, P, S

QUANTITIES = tuple(q.name for q in SWEPT)
LETTERS = (B, S, P, G)


def grid(text: str, letter: str) -> list[int]:
    """`1,8,64` or `0:8192:1024` (start:stop:step, stop included when reached) → values."""
    values: list[int] = []
    for part in text.split(","):
        bounds = part.split(":")
        try:
            numbers = [int(b.replace("_", "")) for b in bounds]
        except ValueError:
            raise ArchError([Diagnostic(code="E401", message=f"--{letter} {text}: write numbers like 1,8,64 "
                                        "or start:stop:step")]) from None
        if len(numbers) == 1:
            values.append(numbers[0])
        else:
            start, stop, step = (numbers + [1])[:3]
            values.extend(range(start, stop + 1, max(step, 1)))
    return values


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
    return int(value) if float(value).is_integer() else float(value)
