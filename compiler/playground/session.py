"""What the page asks for, answered from the Python API: compile, evaluate, formulas, diagram, layouts,
compare, plots and import. Each answer is JSON-ready data; a spec's problem is an answer too (its
diagnostics, as the CLI prints them, with the spans the editor marks).

A `Workspace` keeps the last compiled models by their text and conventions, so moving a slider evaluates
the compiled plain forms again and never recompiles (issue 30)."""

from __future__ import annotations

import json
from collections import OrderedDict
from pathlib import Path

import archcost
from archcost.compiler.render.blocks import BLOCK_NODE
from archcost.dsl.errors import ArchError, Diagnostic

from . import diagram, plots
from .requests import Scenario, Settings, SpecText

MODELS_KEPT = 16  # compiled models a page session keeps: a few specs side by side, and the one being edited


def problem(error: ArchError, file: str) -> dict:
    """An ArchError as the page shows it: the CLI's text, and each diagnostic with its span."""
    return {"error": error.render(), "diagnostics": [_diagnostic(d, file) for d in error.diagnostics]}


def _diagnostic(diagnostic: Diagnostic, file: str) -> dict:
    span = diagnostic.span
    here = span is not None and span.file == file
    return {"code": diagnostic.code, "message": diagnostic.message, "hint": diagnostic.hint,
            "note": diagnostic.note, "rendered": diagnostic.render(), "in_editor": here,
            "span": span.model_dump() if span is not None else None}


class Workspace:
    """The compiled models of one server, the latest used last."""

    def __init__(self) -> None:
        self._models: OrderedDict[str, archcost.Model] = OrderedDict()

    def model(self, spec: SpecText, settings: Settings) -> archcost.Model:
        key = json.dumps([spec.text, spec.file, settings.model_dump()], sort_keys=True)
        if key in self._models:
            self._models.move_to_end(key)
            return self._models[key]
        model = archcost.load(text=spec.text, file=spec.file, **settings.load_arguments())
        self._models[key] = model
        while len(self._models) > MODELS_KEPT:
            self._models.popitem(last=False)
        return model

    def summary(self, spec: SpecText, settings: Settings) -> dict:
        """The model's name, its parameter count and the options it offers (each with its words)."""
        model = self.model(spec, settings)
        compiled = model.compiled
        head = model.evaluate("decode", S=0).data
        return {"name": compiled.name, "params": head["params"], "params_active": head["params_active"],
                "options": compiled.ir.path_choices, "chosen": compiled.ir.paths,
                "files": sorted(str(f) for f in compiled.files_read())}

    def evaluate(self, spec: SpecText, settings: Settings, scenario: Scenario) -> dict:
        """Every quantity for one request shape: the report's data (`archcost eval --json`), its table as
        the CLI prints it."""
        result = self.model(spec, settings).evaluate(scenario.phase, **scenario.shape())
        table = result.table()
        return {"data": result.data, "text": str(result), "title": table.title, "header": table.header,
                "rows": table.cells}

    def node(self, spec: SpecText, settings: Settings, scenario: Scenario, node: str) -> dict:
        """A diagram node for the page's panel, at the scenario: an op's row of `eval --by-op`, or for a
        block (`block layers.attn`) the rows of the ops inside it."""
        result = self.model(spec, settings).evaluate(scenario.phase, ops=True, **scenario.shape())
        block = node.startswith(BLOCK_NODE)
        inside = node.removeprefix(BLOCK_NODE) + "."
        found = [op.model_dump() for op in result.ops if op.op == node or (block and op.op.startswith(inside))]
        if not found:
            raise ArchError([Diagnostic(code="E111", message=f"this model has no op or block `{node}`")])
        return {"ops": found} if block else found[0]

    def formulas(self, spec: SpecText, settings: Settings, phase: str) -> dict:
        formula = self.model(spec, settings).formula(phase=phase)
        return {"latex": formula.latex(), "text": str(formula)}

    def diagram(self, spec: SpecText, settings: Settings, blocks: bool, layout: str | None) -> dict:
        """The graph as SVG, and for each drawn node its op: kind, label, shapes and the span it came from."""
        model = self.model(spec, settings)
        drawn = model.diagram(blocks=blocks, layout=layout or None)
        return {"svg": drawn.svg(), "nodes": diagram.nodes(model.compiled, spec.shown)}

    def layout(self, spec: SpecText, settings: Settings, scenario: Scenario, degrees: str,
               device: str | None, link: str | None) -> dict:
        from archcost.compiler.render.layouts import cards_table, layout_text

        model = self.model(spec, settings)
        report = model.layout(degrees, scenario.phase, device=device or None, link=link or None, **scenario.shape())
        cards = cards_table(report)
        return {"text": layout_text(report) + _capacity(model.compiled, report, device or None),
                "report": json.loads(report.model_dump_json()),
                "header": cards.header, "rows": cards.cells,
                "diagram": self.diagram(spec, settings, False, degrees)["svg"]}

    def compare(self, specs: list[SpecText], settings: Settings, table: str, scenario: Scenario) -> dict:
        models = [self.model(spec, settings) for spec in specs]
        shape = scenario.shape() if table == "summary" else {}
        result = models[0].compare(*models[1:], table=table, **({"phase": scenario.phase, **shape} if shape else {}))
        return {"title": result.title, "header": result.header, "rows": result.cells, "notes": result.notes,
                "text": result.text(), "text_columns": result.text_columns}

    def plots(self, spec: SpecText, settings: Settings, device: str, scenario: Scenario) -> dict:
        return plots.plots(self.model(spec, settings).compiled, device, scenario)


def _capacity(compiled, report, device: str | None) -> str:
    """What `archcost layout` prints under a layout on a device: the requests its cards hold."""
    if device is None:
        return ""
    from archcost.compiler.cards.fleet import held_at
    from archcost.compiler.front.hardware import device as device_sheet
    from archcost.compiler.render.layouts import capacity_text

    return capacity_text(held_at(compiled, report, device_sheet(device)))


def import_config(text: str, file: str) -> dict:
    """A config.json dropped on the page: the spec `archcost import` writes for it, and what it passed over."""
    from archcost.compiler.importer import import_spec
    from archcost.compiler.importer.config import parse_config

    name = Path(file).name or "config.json"
    spec, passed_over, checked = import_spec(parse_config(text, name))
    return {"text": spec, "passed_over": list(passed_over), "checked": list(checked)}
