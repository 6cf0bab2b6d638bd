"""The SLO search (`archcost layouts --isl --osl --ttft --tpot`, issue 46): layouts × batches that meet both
targets, ranked by goodput a card; refusals that name targets some layout meets."""

from __future__ import annotations

import json
import re

import pytest
from helpers import ROOT, compiled

from archcost.compiler.cards.expected import table_for
from archcost.compiler.cli import main
from archcost.compiler.front.hardware import device, own_link
from archcost.compiler.serving.engines import preset
from archcost.compiler.serving.slo import search
from archcost.compiler.serving.steady import Serving, point_at

SPEC = str(ROOT / "specs" / "qwen3-8b.arch")
H100 = device("h100_sxm")


def serving(spec="qwen3-8b", isl=1024, osl=1024):
    wire = own_link(H100.name)
    return Serving(compiled(spec), H100, wire, wire, preset("vllm", H100.memory, False), table_for(H100), None, isl,
                   osl)


def test_every_choice_meets_both_targets_and_the_next_batch_would_not():
    setting = serving()
    found = search(setting, 8, ttft=0.5, tpot=0.028)
    assert found.choices
    per_card = [c.output_tokens_per_second_per_card for c in found.choices]
    assert per_card == sorted(per_card, reverse=True)
    for choice in found.choices:
        assert choice.ttft_seconds <= 0.5 and choice.tpot_seconds <= 0.028
        if choice.binds == "TPOT target":
            assert point_at(setting, choice.replica, choice.batch + 1).tpot > 0.028


def test_goodput_a_card_is_the_same_on_more_cards():
    """Data-parallel copies beyond a layout's own group serve alike: 8 and 64 cards rank the same tensor-parallel
    layouts at the same tokens a card."""
    few, many = (search(serving(), cards, ttft=0.5, tpot=0.03) for cards in (8, 64))
    rate = {c.replica: c.output_tokens_per_second_per_card for c in few.choices}
    for choice in many.choices:
        if choice.replica in rate:
            assert choice.output_tokens_per_second_per_card == pytest.approx(rate[choice.replica])


def test_targets_no_layout_meets_are_refused_with_targets_one_does(capsys):
    argv = ["layouts", SPEC, "--devices", "8xh100-sxm", "--isl", "1024", "--osl", "1024"]
    assert main([*argv, "--ttft", "0.001", "--tpot", "0.001"]) == 2
    err = capsys.readouterr().err
    assert "error[E413]" in err and "no layout of 8 × h100-sxm meets" in err
    ttft, tpot = re.search(r"--ttft ([0-9.]+) --tpot ([0-9.]+)", err).groups()
    assert main([*argv, "--ttft", ttft, "--tpot", tpot, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["choices"]


def test_disaggregated_sides_meet_their_targets_and_add_up():
    found = search(serving(), 16, ttft=0.3, tpot=0.025, split=True)
    split = found.split
    assert split.ttft_seconds <= 0.3 and split.tpot_seconds <= 0.025
    d, p = split.decode.requests_per_second_per_card, split.prefill.requests_per_second_per_card
    assert split.output_tokens_per_second_per_card == pytest.approx(1024 / (1 / d + 1 / p))
    assert split.times["ttft_expected"] >= split.times["ttft_bound"]


@pytest.mark.parametrize(("flags", "says"), [
    (["--isl", "1024", "--ttft", "1"], "give --osl, --tpot"),
    (["--context", "4096", "--mtp", "1", "--acceptance", "0.5"], "belong to the SLO search"),
    ([], "needs `--context H`"),
    (["--isl", "1024", "--osl", "1024", "--ttft", "1", "--tpot", "0.1", "--context", "9"], "leave them out"),
])
def test_the_two_searches_take_their_own_words(flags, says, capsys):
    assert main(["layouts", SPEC, "--devices", "8xh100-sxm", *flags]) == 2
    err = capsys.readouterr().err
    assert "error[E401]" in err and says in err


def test_the_command_prints_the_ranking(capsys):
    argv = ["layouts", SPEC, "--devices", "8xh100-sxm", "--isl", "1024", "--osl", "1024", "--ttft", "0.5", "--tpot",
            "0.03", "--top", "3", "--disaggregated"]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "TTFT ≤ 500.0 ms, TPOT ≤ 30.00 ms" in out and "tokens/s a card" in out and "Disaggregated:" in out
    assert main([*argv, "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert len(data["choices"]) == 3 and data["split"]["tpot_seconds"] <= 0.03


def test_the_readme_worked_search_is_what_the_command_prints(capsys, monkeypatch):
    """README's worked SLO search: every line it shows (but the `...`) is a line the command prints."""
    readme = (ROOT / "README.md").read_text()
    block = readme[readme.index("$ archcost layouts specs/qwen3-235b-a22b.arch"):]
    block = block[:block.index("```")]
    command, *shown = block.strip().splitlines()
    monkeypatch.chdir(ROOT)
    assert main(command.split()[2:]) == 0
    printed = capsys.readouterr().out.splitlines()
    wanted = [line for line in shown if line.strip() not in ("...", "")]
    assert wanted == [line for line in printed if line in wanted]
