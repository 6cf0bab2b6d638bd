"""The layout search's screen (issue 49): every layout's key from the per-card forms at once, equal to the key
each layout's exact `fit` gives; `ranked(top=N)` the same rows, byte for byte, as the first N of the exact
search; and a screen that errs sends the search back to the exact path rather than printing a wrong row."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import ROOT, compiled
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from archcost.compiler.cards import fleet, screen
from archcost.compiler.cards.expected import table_for
from archcost.compiler.cards.layout import compute_format
from archcost.compiler.front.hardware import device, link
from archcost.compiler.terms.scenario import Conventions
from archcost.dsl.errors import ArchError

SPECS = sorted(p.stem for p in (ROOT / "specs").glob("*.arch"))
# a sample of the mechanisms for the default run: dense GQA, MoE with shared experts, MLA with dense first
# layers, sliding windows, DeepSeek-V4's compressed attention, a hybrid with linear attention
SAMPLE = ["qwen3-8b", "qwen3-235b-a22b", "deepseek-v3", "gpt-oss-120b", "deepseek-v4.1-flash", "qwen3.6-35b-a3b"]


def exact_keys(model, candidates, sheet, wire, context, batch, workspace=0):
    """(refused, fits, step) of each layout by fleet.fit, the exact search's own evaluation."""
    found = []
    for layout in candidates:
        try:
            exact = fleet.fit(model, layout, sheet, wire, context, batch, workspace)
        except ArchError as refused:
            assert set(refused.codes) == {"E405"}
            found.append((True, None, None))
            continue
        found.append((False, exact.fits, exact.step_no_overlap))
    return found


def check_screen(model, cards, sheet, wire, context, batch, workspace=0):
    experts = any(data["op"].shard[0] == "ep" for _, data in model.graph.nodes(data=True))
    candidates = list(fleet.layouts(cards, experts))
    with np.errstate(all="ignore"):
        refused, free, step = screen.screen(model, candidates, sheet, wire, context, batch, workspace,
                                            sheet.peak_for(compute_format(model, sheet)))
    for layout, (was_refused, fits, seconds), r, f, s in zip(
            candidates, exact_keys(model, candidates, sheet, wire, context, batch, workspace), refused, free, step):
        assert bool(r) == was_refused, layout
        if not was_refused:
            assert fits == (f >= 0) or abs(f) <= 1, (layout, fits, f)
            assert s == pytest.approx(seconds, rel=screen.TOLERANCE), layout


@pytest.mark.parametrize("name", SAMPLE)
def test_the_screen_gives_every_layout_the_key_its_exact_fit_gives(name):
    check_screen(compiled(name), 16, device("h100-sxm"), link("nvlink4"), 8192, 1)


@pytest.mark.long
@pytest.mark.parametrize("name", SPECS)
@pytest.mark.parametrize("cards,batch,sheet", [(8, 1, "h100-sxm"), (64, 8, "h100-sxm"), (32, 3, "b200")])
def test_the_screen_gives_every_layout_its_exact_key_long(name, cards, batch, sheet):
    check_screen(compiled(name), cards, device(sheet), link("nvlink4"), 4096, batch, workspace=2**30)


def test_a_screen_of_4096_cards_keys_every_layout_as_the_exact_search():
    """Qwen3-235B-A22B on 4,096 cards (issue 49's benchmark): 819 layouts, the keys equal."""
    check_screen(compiled(QWEN := "qwen3-235b-a22b"), 4096, device("h100-sxm"), link("nvlink4"), 8192, 1)
    assert QWEN in SAMPLE


def dumps(fits):
    return [f.model_dump_json() for f in fits]


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(name=st.sampled_from(SAMPLE), cards=st.sampled_from([8, 16, 64]), batch=st.sampled_from([1, 4, 32]),
       top=st.integers(1, 12), context=st.sampled_from([1, 4096, 131_072]))
def test_the_best_n_are_the_first_n_of_the_exact_search(name, cards, batch, top, context):
    sheet, wire = device("h100-sxm"), link("nvlink4")
    fast = fleet.ranked(compiled(name, conventions=Conventions(kv="fp8")), cards, sheet, wire, context, batch,
                        table=table_for(sheet), top=top)
    every = fleet.ranked(compiled(name, conventions=Conventions(kv="fp8")), cards, sheet, wire, context, batch,
                         table=table_for(sheet))
    assert dumps(fast) == dumps(every[:top])


def test_a_screen_that_errs_sends_the_search_to_the_exact_path(monkeypatch):
    """A screened key that differs from its layout's exact one is caught on the rows evaluated exactly, and the
    search answers from every layout's exact fit: the printed rows never come from the screen."""
    model, sheet, wire = compiled("qwen3-235b-a22b"), device("h100-sxm"), link("nvlink4")
    every = fleet.ranked(model, 64, sheet, wire, 8192, 1)
    real = screen.screen

    def wrong(*args):
        refused, free, step = real(*args)
        return refused, free, step[::-1].copy()  # every key belongs to another layout
    monkeypatch.setattr(screen, "screen", wrong)
    exact_calls = []
    monkeypatch.setattr(fleet, "_every", lambda *a: exact_calls.append(1) or every)
    assert dumps(fleet.ranked(model, 64, sheet, wire, 8192, 1, top=5)) == dumps(every[:5])
    assert exact_calls, "the screen's wrong keys were not caught"


def test_the_cli_prints_the_same_rows_with_and_without_top(capsys):
    from archcost.compiler.cli import main

    spec = str(ROOT / "specs" / "deepseek-v3.arch")
    assert main(["layouts", spec, "--devices", "64xh100-sxm", "--context", "8192", "--json"]) == 0
    every = capsys.readouterr().out
    assert main(["layouts", spec, "--devices", "64xh100-sxm", "--context", "8192", "--top", "7", "--json"]) == 0
    import json

    assert json.loads(capsys.readouterr().out) == json.loads(every)[:7]


@pytest.mark.parametrize("top", [[], ["--top", "3"]])
def test_a_spec_whose_card_holds_a_fraction_of_a_byte_is_searched(top, capsys):
    """A spec whose sizes split into fractions of a byte a card (the fuzzer's find) was an internal error of
    `layouts` (Fit took whole bytes alone); its rows print, with and without the screen."""
    from archcost.compiler.cli import main

    spec = str(ROOT / "tests" / "fuzz_corpus" / "fixed-layout-fractional-params-moe.arch")
    assert main(["layouts", spec, "--devices", "8xh100-sxm", "--context", "4096", *top]) == 0
    assert "TP 8" in capsys.readouterr().out
