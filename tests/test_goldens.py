"""Every spec's printed formulas, DOT and prefill numbers, pinned as reviewed golden files."""

from __future__ import annotations

import json

import pytest
from helpers import GOLDEN, SPECS, check_golden, compiled

from archcost.compiler.numbers.evaluate import evaluate
from archcost.compiler.render import dot, formula
from archcost.compiler.terms.scenario import Scenario

NAMES = sorted(p.stem for p in SPECS.glob("*.arch"))


@pytest.mark.parametrize("name", NAMES)
def test_formula_golden(name, update_golden):
    text = formula.render(compiled(name), ["M", "F", "R"], "call")
    check_golden(GOLDEN / "specs" / f"{name}.formula.txt", text, update_golden)


@pytest.mark.parametrize("name", NAMES)
def test_dot_golden(name, update_golden):
    check_golden(GOLDEN / "specs" / f"{name}.dot", dot.to_dot(compiled(name)), update_golden)


@pytest.mark.parametrize("name", NAMES)
def test_prefill_8k_golden(name, update_golden):
    report = evaluate(compiled(name), "prefill", Scenario(B=1, S=0, P=8192))
    text = json.dumps(report.model_dump(exclude_none=True), indent=2) + "\n"
    check_golden(GOLDEN / "specs" / f"{name}.prefill-8k.json", text, update_golden)


@pytest.mark.parametrize("name", NAMES)
def test_graph_listing_golden(name, update_golden):
    from archcost.compiler.render import listing

    check_golden(GOLDEN / "specs" / f"{name}.graph.txt", listing.graph_listing(compiled(name)), update_golden)


@pytest.mark.parametrize("table", ["architecture", "params", "prefill", "long-context"])
def test_chapter_table_golden(table, update_golden):
    from archcost.compiler.render.chapter import chapter_table

    models = [compiled(name) for name in NAMES]
    check_golden(GOLDEN / "tables" / f"{table}.txt", chapter_table(table, models).text(), update_golden)


def test_stages_table_golden(update_golden):
    """Table 2-D: V4.1 Flash's 8K prefill by stage, CED and the reference path side by side."""
    from archcost.compiler.render.chapter import stages_table

    table = stages_table([compiled("deepseek-v4.1-flash")], across="execution")
    check_golden(GOLDEN / "tables" / "stages-v4.1.txt", table.text(), update_golden)


def test_request_table_golden(update_golden):
    """§2.6.3's request table over the chapter's five models."""
    from archcost.compiler.render.chapter import request_table

    five = ["deepseek-v4.1-flash", "qwen3-8b", "qwen3.6-35b-a3b", "deepseek-v4-flash", "kimi-k3"]
    check_golden(GOLDEN / "tables" / "request.txt", request_table([compiled(n) for n in five]).text(), update_golden)
