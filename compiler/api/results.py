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
