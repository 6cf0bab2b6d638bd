"""A card's figures from each op's numbers (cards/figures.py) against the symbolic card they replace (card.py's
sums, evaluated): the same report, number for number and type for type, for every spec and many layouts.

The oracle is the path the layout reports took before issue 28 moved them onto numbers: one sympy sum per
layout and stage of every op's cost times its share, evaluated exactly by the report's forms.
"""

from __future__ import annotations

import pytest
from helpers import ROOT, compiled

from archcost.compiler.cards import fleet, flows, layout
from archcost.compiler.cards.degrees import parse_layout
from archcost.compiler.cards.values import Symbolic
from archcost.compiler.front.hardware import device, link
from archcost.compiler.terms.scenario import Scenario
from archcost.dsl.errors import ArchError

SPECS = sorted(p.stem for p in (ROOT / "specs").glob("*.arch"))
QUICK = ["qwen3-235b-a22b", "deepseek-v3", "deepseek-v4.1-flash", "gemma-3-27b", "qwen3.5-397b-a17b",
         "gemma-4-26b-a4b", "jamba-1.5-mini", "deepseek-v3.2", "longcat-flash", "llama-3.1-8b"]
LAYOUTS = ["tp=1", "tp=2", "tp=4,sp", "tp=8,ep=8", "tp=2,ep=4,dp=2,imb=1.25", "tp=2,pp=3", "pp=4,first=2,last=1",
           "tp=2,cp=2", "tp=1,dp=16,ep=16,node=8,limit=2,dispatch=fp8", "tp=2,dp=2,mb=2", "tp=4,ep=2,etp=2",
           "tp=3"]
SHAPES = [("decode", Scenario(B=3, S=8191)), ("prefill", Scenario(B=2, S=100, P=4097))]


def _symbolic(*_, **__):
    raise Symbolic("the oracle: the symbolic card")


def _reports(name: str, words: str, phase: str, shape: Scenario):
    model = compiled(name)
    try:
        report = layout.layout_report(model, parse_layout(words), phase, shape, device("h100-sxm"), link("nvlink4"))
        held = fleet.capacity_on(model, report.layout, device("h100-sxm"), 8192, 4)
    except ArchError as refused:
        return refused.codes
    return report.model_dump(), held.model_dump()


def _compare(monkeypatch, name: str):
    made = 0
    for words in LAYOUTS:
        for phase, shape in SHAPES:
            numeric = _reports(name, words, phase, shape)
            with monkeypatch.context() as patched:
                for module, function in ((layout, "card_figures"), (flows, "positions_at"), (fleet, "card_figures")):
                    patched.setattr(module, function, _symbolic)
                symbolic = _reports(name, words, phase, shape)
            assert numeric == symbolic, (name, words, phase)
            assert repr(numeric) == repr(symbolic), (name, words, phase)  # types too: an int stays an int
            made += isinstance(numeric, tuple)
    assert made >= 8, f"only {made} of the layouts split {name} evenly"


@pytest.mark.parametrize("name", QUICK)
def test_card_figures_equal_the_symbolic_card(monkeypatch, name):
    _compare(monkeypatch, name)


@pytest.mark.long
@pytest.mark.parametrize("name", sorted(set(SPECS) - set(QUICK)))
def test_card_figures_equal_the_symbolic_card_for_every_spec(monkeypatch, name):
    _compare(monkeypatch, name)
