"""The API's classes: Model (load, formula, evaluate, compare, diagram) and what they return."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from archcost.compiler import pipeline
from archcost.compiler.numbers.evaluate import by_op, evaluate
from archcost.compiler.render import formula as formula_render
from archcost.compiler.render import tables
from archcost.compiler.render.tables import Table as _Table
from archcost.compiler.terms.letters import LEDGERS, PHASES
from archcost.compiler.terms.scenario import Options, Scenario, counting
from archcost.dsl.errors import ArchError

from archcost import checks

__all__ = ["ArchError", "Diagram", "Formula", "Model", "Result", "Table", "load"]

QUANTITIES = ("M", "F", "R")


def load(source: str | Path, *, name: str | None = None, ledger: str = "chapter", logits: str = "last",
         attention: str | None = None, vector_params: str | None = None, routing: str = "uniform",
         weights: str | None = None, options: dict[str, str] | None = None,
         allow_use_outside: bool = False) -> Model:
    """A model from a spec file, spec text, or a Hugging Face config.json (imported on the way).

    `source` is a path when it names a file, else spec text when it holds a `{`. The keyword arguments are
    the counting conventions of the CLI's flags (`--ledger`, `--logits`, `--attention`, ...); `options`
    chooses the spec's own execution paths, e.g. {"mla_cache": "expanded"}. Every argument is checked:
    a wrong one is an ArchError, as on the command line."""
    chosen = counting(checks.word("ledger", ledger, tuple(LEDGERS)),
                      checks.word("attention", attention, CONVENTIONS["attention"], optional=True),
                      checks.word("vector_params", vector_params, CONVENTIONS["vector_params"], optional=True),
                      logits=checks.word("logits", logits, CONVENTIONS["logits"]),
                      routing=checks.word("routing", routing, CONVENTIONS["routing"]),
                      weights=_optional_text("weights", weights),
                      paths=tuple(sorted(checks.words_by_name("options", options).items())))
    text, path = _source(source, _optional_text("name", name))
    return Model(_Source(text=text, path=path, allow_outside=bool(allow_use_outside)), chosen)


CONVENTIONS = {"attention": ("as_written", "causal", "rectangle", "half_rectangle"), "logits": ("last", "all"),
               "vector_params": ("nonmatrix", "matrix"), "routing": ("uniform", "concentrated", "random")}


def _optional_text(name: str, value) -> str | None:
    if value is not None and not isinstance(value, str):
        raise checks.bad_value(f"`{name}` takes text, not {type(value).__name__}")
    return value


def _source(source: str | Path, name: str | None) -> tuple[str | None, Path | None]:
    text, path = checks.source(source)
    if text is not None:
        return text, None
    if path.suffix == ".json":
        from archcost.compiler.importer import import_config, read_config

        return import_config(read_config(path), name), None
    return None, path


@dataclass(frozen=True)
class _Source:
    text: str | None
    path: Path | None
    allow_outside: bool = False

    def build(self, options: Options, keep: frozenset[str] = frozenset()) -> pipeline.Compiled:
        if self.path is not None:
            return pipeline.compile_file(self.path, options, keep, self.allow_outside)
        return pipeline.compile_text(self.text, options, keep)


class Model:
    """A compiled spec: `formula`, `evaluate` (also spelled `eval`), `compare`, `layout`, `diagram`; shows a
    summary in a notebook."""

    def __init__(self, source: _Source, options: Options):
        self._source = source
        self.options = options
        self.compiled = source.build(options)

    @property
    def name(self) -> str:
        return self.compiled.name

    def __repr__(self) -> str:
        return f"<archcost.Model {self.name!r}: {self.evaluate('decode')['params']:,} parameters>"

    def _repr_markdown_(self) -> str:
        return self.evaluate("decode", S=0).table().markdown()

    def formula(self, quantity: str | list[str] | None = None, phase: str = "call",
                keep: list[str] | tuple[str, ...] = ()) -> Formula:
        """Closed forms of M, F and R (or the ones named) for a phase; `keep` leaves dimensions symbolic."""
        chosen = [quantity] if isinstance(quantity, str) else quantity or QUANTITIES
        if not isinstance(chosen, (list, tuple)):
            raise checks.bad_value("`quantity` is M, F, R or a list of them")
        quantities = [checks.word("quantity", q, QUANTITIES) for q in chosen]
        phase = checks.word("phase", phase, PHASES)
        kept = checks.names("keep", keep)
        unknown = sorted(set(kept) - _dimension_names(self.compiled))
        if unknown:
            raise checks.bad_value(f"`keep`: this model binds no dimension `{unknown[0]}`")
        compiled = self._source.build(self.options, frozenset(kept)) if kept else self.compiled
        return Formula(compiled, quantities, phase)

    def evaluate(self, phase: str = "prefill", *, B: int = 1, S: int = 0, P: int | None = None, G: int = 1,
             ops: bool = False) -> Result:
        """Every quantity for one request shape (P defaults to 1 for decode, 8192 otherwise)."""
        phase = checks.word("phase", phase, PHASES)
        P = (1 if phase == "decode" else 8192) if P is None else P
        scenario = Scenario(B=checks.count("B", B, 1), S=checks.count("S", S, 0), P=checks.count("P", P, 1),
                            G=checks.count("G", G, 1))
        report = evaluate(self.compiled, phase, scenario)
        return Result(report, by_op(self.compiled, phase, scenario) if ops else None)

    eval = evaluate  # the CLI's word; no call to the builtin of that name anywhere in the package

    def compare(self, *others: Model | str | Path, table: str = "summary", phase: str = "prefill",
                B: int = 1, S: int = 0, P: int = 8192, G: int = 1) -> Table:
        """This model beside others (models, spec paths or texts), one row each; `table` is `summary` or
        one of the chapter's tables (architecture, params, prefill, long-context, request)."""
        from archcost.compiler.render.chapter import CHAPTER_TABLES, chapter_table

        models = [self] + [m if isinstance(m, Model) else load(m) for m in others]
        table = checks.word("table", table, ("summary", "params", *CHAPTER_TABLES))
        if table == "summary":
            scenario = Scenario(B=checks.count("B", B, 1), S=checks.count("S", S, 0), P=checks.count("P", P, 1),
                                G=checks.count("G", G, 1))
            phase = checks.word("phase", phase, PHASES)
            return Table(tables.summary_table([evaluate(m.compiled, phase, scenario) for m in models]))
        return Table(chapter_table(table, [m.compiled for m in models]))

    def layout(self, layout: str | None = None, phase: str = "decode", *, B: int = 1, S: int = 0, P: int | None = None,
               G: int = 1, device: str | None = None, link: str | None = None):
        """One card of the model split over cards (`"tp=8,ep=8"`, docs/layouts.md): its M, F, R, the
        collectives on the graph's edges and, with a device and a link, the call's time bounds."""
        from archcost.compiler.cards.layout import layout_report, parse_layout
        from archcost.compiler.front.hardware import device as device_sheet
        from archcost.compiler.front.hardware import link as link_sheet

        if not isinstance(layout, str):  # missing or not text: the API's own error, never a TypeError
            raise checks.bad_value("`layout` is text such as \"tp=8,ep=8\"")
        phase = checks.word("phase", phase, PHASES)
        P = (1 if phase == "decode" else 8192) if P is None else P
        scenario = Scenario(B=checks.count("B", B, 1), S=checks.count("S", S, 0), P=checks.count("P", P, 1),
                            G=checks.count("G", G, 1))
        if (device is None) != (link is None):
            raise checks.bad_value("time bounds need both `device` and `link`")
        sheets = (device_sheet(device), link_sheet(link)) if device is not None else (None, None)
        return layout_report(self.compiled, parse_layout(layout), phase, scenario, *sheets)

    def diagram(self) -> Diagram:
        """The computation graph: blocks as clusters, stacks with their multiplicity."""
        from archcost.compiler.render import dot

        return Diagram(dot.to_dot(self.compiled))


def _dimension_names(compiled: pipeline.Compiled) -> set[str]:
    """Names a spec binds at model level: what `keep` may leave symbolic."""
    from archcost.dsl import ast

    body = compiled.program.entry.models[0].body if compiled.program else []
    return {stmt.name for stmt in body if isinstance(stmt, ast.Binding)}


@dataclass
class Formula:
    """Closed forms; `str()` is the CLI's text, Jupyter shows LaTeX."""

    compiled: pipeline.Compiled
    quantities: list[str]
    phase: str

    def __str__(self) -> str:
        return formula_render.render(self.compiled, self.quantities, self.phase)

    def latex(self) -> str:
        return formula_render.latex(self.compiled, self.quantities, self.phase)

    def markdown(self) -> str:
        return formula_render.markdown(self.compiled, self.quantities, self.phase)

    def expressions(self) -> dict:
        """{field: sympy expression} for the chosen quantities."""
        return {name: expr for q in self.quantities
                for name, _, expr in formula_render.formulas(self.compiled, q, self.phase)}

    def _repr_latex_(self) -> str:
        return "$$" + self.latex() + "$$"

    def _repr_markdown_(self) -> str:
        return self.markdown()


@dataclass
class Result:
    """One evaluation: index it by quantity (`result["flops_matrix"]`), or print it as a table."""

    report: object
    ops: list | None = None

    def __getitem__(self, key: str):
        return self.to_dict()[key]

    def to_dict(self) -> dict:
        data = self.report.model_dump(exclude_none=True)
        if self.ops is not None:
            data["by_op"] = [op.model_dump() for op in self.ops]
        return data

    def json(self) -> str:
        return json.dumps(self.to_dict(), indent=2)

    def table(self) -> Table:
        return Table(tables.report_table(self.report))

    def csv(self) -> str:
        return tables.report_table(self.report, plain=True).csv()

    def markdown(self) -> str:
        return self.table().markdown()

    def __str__(self) -> str:
        return tables.report_text(self.report)

    def _repr_markdown_(self) -> str:
        return self.markdown()


@dataclass
class Table:
    """A table of rows; text, Markdown (Jupyter's view) or CSV."""

    table: _Table = field(repr=False)

    def text(self) -> str:
        return self.table.text()

    def markdown(self) -> str:
        return self.table.markdown()

    def csv(self) -> str:
        return self.table.csv()

    def rows(self) -> list[dict[str, str]]:
        return [dict(zip(self.table.header, row, strict=True)) for row in self.table.rows]

    def __str__(self) -> str:
        return self.text()

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
