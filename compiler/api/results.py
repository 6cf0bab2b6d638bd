"""What the API's calls return: formulas, one evaluation, tables and diagrams (renderers imported when used)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from archcost import checks


@dataclass
class Formula:
    """Closed forms; `str()` is the CLI's text, Jupyter shows LaTeX."""

    compiled: object  # graph.compiled.Compiled
    quantities: list[str]
    phase: str

    def __str__(self) -> str:
        from archcost.compiler.render import formula

        return formula.render(self.compiled, self.quantities, self.phase)

    def latex(self) -> str:
        from archcost.compiler.render import formula

        return formula.latex(self.compiled, self.quantities, self.phase)

    def markdown(self) -> str:
        from archcost.compiler.render import formula

        return formula.markdown(self.compiled, self.quantities, self.phase)

    def expressions(self) -> dict:
        """{field: sympy expression} for the chosen quantities."""
        from archcost.compiler.render import formula

        return {name: expr for q in self.quantities for name, _, expr in formula.formulas(self.compiled, q, self.phase)}

    def _repr_latex_(self) -> str:
        return "$$" + self.latex() + "$$"

    def _repr_markdown_(self) -> str:
        return self.markdown()


@dataclass
class Result:
    """One evaluation: index it by quantity (`result["flops_matrix"]`), or print it as a table."""

    data: dict  # the report as JSON shows it (`archcost eval --json`), from the compiled forms or the cache
    ops: list | None = None

    @property
    def report(self):
        """The report as its pydantic model (the quantity table's fields)."""
        from archcost.compiler.numbers.report import report_model

        return report_model()(**self.data)

    def __getitem__(self, key: str):
        return self.to_dict()[key]

    def to_dict(self) -> dict:
        data = dict(self.data)
        if self.ops is not None:
            data["by_op"] = [op.model_dump() for op in self.ops]
        return data

    def json(self) -> str:
        return json.dumps(self.to_dict(), indent=2)

    def table(self):
        from archcost.compiler.render.evaluation import report_table

        return report_table(self.data)

    def csv(self) -> str:
        from archcost.compiler.render.evaluation import report_table

        return report_table(self.data, plain=True).csv()

    def markdown(self) -> str:
        return self.table().markdown()

    def __str__(self) -> str:
        from archcost.compiler.render.evaluation import report_text

        return report_text(self.data)

    def _repr_markdown_(self) -> str:
        return self.markdown()


@dataclass
class Diagram:
    """The graph as DOT; Jupyter shows it as SVG, laid out by the Graphviz bundled with pygraphviz."""

    dot: str

    def svg(self) -> str:
        from archcost.compiler.render.dot import render

        return render(self.dot, "svg").decode("utf-8")

    def save(self, path: str | Path) -> Path:
        """Write .dot, .svg or .png (atomically, as the CLI does)."""
        from archcost.compiler.render.dot import write_source

        target = checks.path("path", path)
        write_source(self.dot, target)
        return target

    def __str__(self) -> str:
        return self.dot

    def _repr_svg_(self) -> str:
        return self.svg()


@dataclass
class Report:
    """A command's answer as the API returns it (capacity, roofline, state, request, layouts, throughput, a
    training step): its fields by attribute or key, the command's own text when printed, Markdown in a notebook,
    `to_dict`/`json`, and `to_pandas` (one row, or one per item of a list)."""

    value: object              # the pydantic result (or a list of them) the CLI prints with --json
    text: str                  # what the CLI prints

    def __getattr__(self, name: str):
        if name.startswith("_"):
            raise AttributeError(name)
        return getattr(self.value, name)

    def __getitem__(self, key):
        data = self.to_dict()
        return data[key]

    def __dir__(self):
        fields = [] if isinstance(self.value, list) else list(type(self.value).model_fields)
        return sorted({*super().__dir__(), *fields})

    def to_dict(self):
        if isinstance(self.value, list):
            return [item.model_dump() for item in self.value]
        return self.value.model_dump()

    def json(self) -> str:
        return json.dumps(self.to_dict(), indent=2)

    def to_pandas(self):
        """A frame: one row per item (a list), or one row of the result's numbers and words (nested fields
        flattened with dots)."""
        from archcost.compiler.render.table import pandas

        data = self.to_dict()
        rows = data if isinstance(data, list) else [data]
        return pandas().DataFrame([_flat(row) for row in rows])

    def __str__(self) -> str:
        return self.text

    def __repr__(self) -> str:
        first = self.text.strip().splitlines()[0] if self.text.strip() else type(self.value).__name__
        return f"<archcost.Report: {first}>"

    def _repr_markdown_(self) -> str:
        return "```\n" + self.text.rstrip("\n") + "\n```\n"


def _flat(data: dict, prefix: str = "") -> dict:
    """Nested fields as `outer.inner` columns; lists of numbers kept whole, lists of records as their count."""
    out = {}
    for key, value in data.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict):
            out.update(_flat(value, f"{name}."))
        elif isinstance(value, list) and value and isinstance(value[0], dict):
            out[name] = len(value)
        else:
            out[name] = value
    return out


@dataclass
class Sweep:
    """A grid of request shapes evaluated at once (as `archcost sweep`): columns of numbers, B, S, P, G and
    every swept quantity, each a numpy array of one value per point."""

    phase: str
    columns: dict

    def __len__(self) -> int:
        return len(self.columns["B"])

    def __getitem__(self, name: str):
        return self.columns[name]

    @property
    def names(self) -> list[str]:
        return list(self.columns)

    def to_pandas(self):
        from archcost.compiler.render.table import pandas

        return pandas().DataFrame(self.columns)

    def __repr__(self) -> str:
        return f"<archcost.Sweep: {self.phase}, {len(self):,} points × {len(self.columns) - 4} quantities>"

    def _repr_markdown_(self) -> str:
        shown = min(len(self), 8)
        head = "| " + " | ".join(self.columns) + " |"
        rule = "|" + "|".join("---:" for _ in self.columns) + "|"
        rows = ["| " + " | ".join(f"{self.columns[c][i]:,.6g}" for c in self.columns) + " |" for i in range(shown)]
        more = ["", f"{len(self) - shown:,} more points"] if len(self) > shown else []
        return "\n".join([f"**sweep, {self.phase}: {len(self):,} points**", "", head, rule, *rows, *more]) + "\n"
