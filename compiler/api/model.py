"""The API's classes: Model (load, formula, evaluate, compare, diagram) and what they return."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from archcost import checks
from archcost.compiler.numbers import cache
from archcost.compiler.render.table import Table
from archcost.compiler.terms.conventions import Conventions, counting
from archcost.compiler.terms.letters import LEDGERS, PHASES
from archcost.dsl.errors import ArchError

from .questions import Questions
from .results import Diagram, Formula, Report, Result, Sweep

__all__ = ["ArchError", "Diagram", "Formula", "Model", "Report", "Result", "Sweep", "Table", "load"]

QUANTITIES = ("M", "F", "R")


def load(source: str | Path | None = None, *, text: str | None = None, name: str | None = None,
         ledger: str = "chapter", logits: str = "last",
         attention: str | None = None, vector_params: str | None = None, routing: str = "uniform",
         weights: str | None = None, kv: str | None = None, options: dict[str, str] | None = None,
         allow_use_outside: bool = False, file: str | Path | None = None, scales: str = "logical") -> Model:
    """A model from a spec file, spec text, or a Hugging Face config.json (imported on the way).

    `source` is a path when it names a file, else spec text when it holds a `{`; `text=` is always spec text,
    never a path (what a server passes on: a buffer must not open the file it names). The keyword arguments are
    the counting conventions of the CLI's flags (`--ledger`, `--logits`, `--attention`, ...); `options`
    chooses the spec's own execution paths, e.g. {"mla_cache": "expanded"}; `file` is the path spec text
    stands for (an editor's buffer): its `use` lines are read from that file's folder and its errors name
    it. Every argument is checked: a wrong one is an ArchError, as on the command line."""
    chosen = counting(checks.word("ledger", ledger, tuple(LEDGERS)),
                      checks.word("attention", attention, CONVENTIONS["attention"], optional=True),
                      checks.word("vector_params", vector_params, CONVENTIONS["vector_params"], optional=True),
                      logits=checks.word("logits", logits, CONVENTIONS["logits"]),
                      routing=checks.word("routing", routing, CONVENTIONS["routing"]),
                      scales=checks.word("scales", scales, CONVENTIONS["scales"]),
                      weights=checks.text("weights", weights), kv=checks.text("kv", kv),
                      paths=tuple(sorted(checks.words_by_name("options", options).items())))
    text, path = _source(source, text, checks.text("name", name))
    stands_for = None if file is None or text is None else checks.path("file", file)
    return Model(_Source(text=text, path=path, allow_outside=bool(allow_use_outside), stands_for=stands_for), chosen)


CONVENTIONS = {"attention": ("as_written", "causal", "rectangle", "half_rectangle"), "logits": ("last", "all"),
               "vector_params": ("nonmatrix", "matrix"), "routing": ("uniform", "concentrated", "random"),
               "scales": ("logical", "stored")}


def _source(source: str | Path | None, text: str | None, name: str | None) -> tuple[str | None, Path | None]:
    if (source is None) == (text is None):
        raise checks.bad_value("give `load` either a source (a path or spec text) or `text=`, one of the two")
    if text is not None:
        if not isinstance(text, str):
            raise checks.bad_value(f"`text` takes spec text, not {type(text).__name__}")
        return text, None
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
    stands_for: Path | None = None  # the file spec text is the buffer of: its folder and its name in errors

    def build(self, conventions: Conventions, keep: frozenset[str] = frozenset()):
        from archcost.compiler import compilation

        if self.path is not None:
            return compilation.compile_file(self.path, conventions, keep, self.allow_outside)
        if self.stands_for is None:
            return compilation.compile_text(self.text, conventions, keep)
        return compilation.compile_text(self.text, conventions, keep, name=self.stands_for.name,
                                     base=self.stands_for.parent.resolve())

    def key(self, conventions: Conventions) -> dict | None:
        """The formula cache's key for this source (the CLI's, for the same file and flags); None for text."""
        if self.path is None or not cache.enabled():
            return None
        return cache.key(self.path, conventions.model_dump(), self.allow_outside)


class Model(Questions):
    """A compiled spec: `formula`, `evaluate` (also spelled `eval`), `sweep`, `compare`, `layout`, `layouts`,
    `capacity`, `roofline`, `state`, `request`, `throughput`, `train`, `diagram`; shows a summary in a notebook.
    A spec file whose forms the formula cache holds is compiled only when something beyond those forms is
    asked for."""

    def __init__(self, source: _Source, conventions: Conventions):
        self._source = source
        self.conventions = conventions
        self._key = source.key(conventions)
        self._entry = cache.load(self._key) if self._key is not None else None
        self._built: dict = {}  # each phase's evaluator from the cached forms, built on first use
        self._remembered: set[str] = set()  # phases this model has put in the formula cache
        self._compiled = None if self._entry is not None else source.build(conventions)

    @property
    def compiled(self):
        """The compiled model (graph.compiled.Compiled), compiled on first use."""
        if self._compiled is None:
            self._compiled = self._source.build(self.conventions)
        return self._compiled

    @property
    def name(self) -> str:
        return self._entry["head"]["model"] if self._compiled is None else self._compiled.name

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
        compiled = self._source.build(self.conventions, frozenset(kept)) if kept else self.compiled
        return Formula(compiled, quantities, phase)

    def evaluate(self, phase: str | None = None, *, B: int = 1, S: int = 0, P: int | None = None, G: int = 1,
                 ops: bool = False) -> Result:
        """Every quantity for one request shape of a phase (prefill, decode, call or request: named, as `archcost
        eval --phase` asks); P defaults to 1 for decode, 8192 otherwise."""
        if phase is None:
            raise checks.bad_value(f"`evaluate` needs a phase: one of {', '.join(PHASES)}, e.g. "
                                   "model.evaluate(\"prefill\", P=8192)")
        phase = checks.word("phase", phase, PHASES)
        ops = checks.switch("ops", ops)
        scenario = checks.scenario(phase, B, S, P, G)
        if self._entry is not None and not ops:
            data = cache.report(self._entry, phase, scenario.model_dump(), built=self._built)
            if data is not None:
                return Result(data)
        from archcost.compiler.numbers.evaluate import by_op, evaluate

        report = evaluate(self.compiled, phase, scenario)
        if phase not in self._remembered:  # the next call from the forms: kept in the cache, or in memory
            self._remembered.add(phase)
            if self._key is not None:
                cache.remember(self._key, self.compiled, [phase])
            self._entry = (cache.load(self._key) if self._key is not None else None) or \
                cache.held(self.compiled, phase, self._entry)
        return Result(report.model_dump(exclude_none=True), by_op(self.compiled, phase, scenario) if ops else None)

    eval = evaluate  # the CLI's word; no call to the builtin of that name anywhere in the package

    def compare(self, *others: Model | str | Path, table: str = "summary", phase: str = "prefill",
                B: int = 1, S: int = 0, P: int = 8192, G: int = 1) -> Table:
        """This model beside others (models, spec paths or texts), one row each; `table` is `summary` or
        one of the chapter's tables (architecture, params, prefill, long-context, request)."""
        from archcost.compiler.render.chapter import CHAPTER_TABLES, chapter_table

        models = [self] + [m if isinstance(m, Model) else load(m) for m in others]
        table = checks.word("table", table, ("summary", "params", *CHAPTER_TABLES))
        if table == "summary":
            phase = checks.word("phase", phase, PHASES)
            scenario = checks.scenario(phase, B, S, P, G)
            from archcost.compiler.render import tables

            return tables.summary_table([m.evaluate(phase, **scenario.model_dump()).data for m in models])
        return chapter_table(table, [m.compiled for m in models])

    def layout(self, layout: str | None = None, phase: str = "decode", *, B: int = 1, S: int = 0, P: int | None = None,
               G: int = 1, device: str | None = None, link: str | None = None, memory: str = "reported"):
        """One card of the model split over cards (`"tp=8,ep=8"`, docs/layouts.md): its M, F, R, the
        collectives on the graph's edges and, with a device and a link, the call's time bounds (`memory`:
        the device's capacity as it reports it, or `"nominal"`, the vendor's figure)."""
        from archcost.compiler.cards.degrees import parse_layout
        from archcost.compiler.cards.layout import layout_report
        from archcost.compiler.front.hardware import device as device_sheet

        if not isinstance(layout, str):  # missing or not text: the API's own error, never a TypeError
            raise checks.bad_value("`layout` is text such as \"tp=8,ep=8\"")
        phase = checks.word("phase", phase, PHASES)
        scenario = checks.scenario(phase, B, S, P, G)
        device, link = checks.text("device", device), checks.text("link", link)  # names, never numbers
        if device is None and link is not None:
            raise checks.bad_value("`link` prices the collectives on a device: give `device` too")
        memory = checks.word("memory", memory, ("reported", "nominal"))
        sheets = (None, None)
        if device is not None:  # inside one server the device's own link, as the CLI takes it
            from archcost.compiler.front.hardware import server_link

            sheet = device_sheet(device, memory)
            sheets = (sheet, server_link(sheet, link))
        from archcost.compiler.cards.expected import table_for

        table = table_for(sheets[0]) if sheets[0] is not None else None  # the CLI's expected step, beside the bounds
        return layout_report(self.compiled, parse_layout(layout), phase, scenario, *sheets, table=table)

    def diagram(self, blocks: bool = False, layout: str | None = None, phase: str = "prefill", *, B: int = 1,
                S: int = 0, P: int | None = None, G: int = 1) -> Diagram:
        """The computation graph: blocks as clusters, stacks with their multiplicity; `blocks` draws each
        block as one node (its FLOPs a call at the shape given), `layout` ("tp=8,ep=8") marks the collectives
        it puts on the edges and the part of each split op a card holds."""
        from archcost.compiler.render import dot

        marks = None if layout is None else dot.layout_marks(self.compiled, checks.text("layout", layout))
        if checks.switch("blocks", blocks):
            from archcost.compiler.render.blocks import to_block_dot

            phase = checks.word("phase", phase, PHASES)
            return Diagram(to_block_dot(self.compiled, phase, checks.scenario(phase, B, S, P, G), marks))
        return Diagram(dot.to_dot(self.compiled, marks))


def _dimension_names(compiled) -> set[str]:
    """Names a spec binds at model level: what `keep` may leave symbolic."""
    from archcost.dsl import ast

    body = compiled.program.entry.models[0].body if compiled.program else []
    return {stmt.name for stmt in body if isinstance(stmt, ast.Binding)}
