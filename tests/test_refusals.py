"""What a careful user met in issue 45, each refused with a clear error instead of an impossible figure, a
misleading word or a silent guess. Each test failed before its fix."""

from __future__ import annotations

from pathlib import Path

import pytest

import archcost
from archcost.compiler.cli import main

ROOT = Path(__file__).resolve().parents[1]
QWEN = str(ROOT / "specs" / "qwen3-8b.arch")
TRAIN = ["train", QWEN, "--seq", "4096", "--global-batch", "8", "--device", "h100-sxm", "--link", "nvlink4"]


def said(capsys, *argv: str) -> tuple[int, str]:
    code = main(list(argv))
    return code, capsys.readouterr().err


def test_a_measured_step_below_the_bound_is_refused_with_both_times(capsys):
    """Qwen3-8B on one H100 with a 1 s step printed an MFU of 162 %; the bound is 1.626 s."""
    for step in ("1", "1e-6"):
        code, err = said(capsys, *TRAIN, "--step-time", step)
        assert code == 2 and "error[E410]" in err and "lower bound, 1.626 s" in err and "MFU" not in err
    code, _ = said(capsys, *TRAIN, "--step-time", "1.7")
    assert code == 0


def test_a_step_time_and_an_efficiency_together_are_refused(capsys):
    code, err = said(capsys, *TRAIN, "--step-time", "3", "--efficiency", "0.5")
    assert code == 2 and "error[E411]" in err
    code, err = said(capsys, "train", QWEN, "--seq", "4096", "--global-batch", "8", "--step-time", "3")
    assert code == 2 and "error[E411]" in err and "device" in err
    with pytest.raises(archcost.ArchError) as caught:
        archcost.load(QWEN).train(seq=4096, global_batch=8, device="h100-sxm", link="nvlink4", step_time=3.0,
                                  efficiency=0.5)
    assert caught.value.diagnostics[0].code == "E411"


@pytest.mark.parametrize("value", ["inf", "nan", "-1", "0"])
def test_a_step_time_that_is_not_a_time_is_refused(value, capsys):
    code, err = said(capsys, *TRAIN, "--step-time", value)
    assert code == 2 and "error[E401]" in err and "--step-time" in err


@pytest.mark.parametrize(("layout", "says"), [
    ("tp=1000000000", "1,000,000,000 is more than a degree may be"),
    ("=2", "a degree's name is missing before `=`"),
    ("tq=2", "`tq` is not a degree"),
])
def test_a_layout_word_is_refused_in_its_own_terms(layout, says, capsys):
    """`tp=1000000000` said "give a whole number"; `=2` printed pydantic's "Extra inputs are not permitted"."""
    code, err = said(capsys, "layout", QWEN, "--layout", layout)
    assert code == 2 and "error[E405]" in err and says in err and "Extra inputs" not in err


def test_a_sweep_to_a_name_that_is_not_csv_or_json_is_refused(tmp_path, capsys):
    """`sweep -o out.txt` wrote CSV under a .txt name without a word."""
    code, err = said(capsys, "sweep", QWEN, "--B", "1,2", "-o", str(tmp_path / "out.txt"))
    assert code == 2 and "error[E109]" in err and ".csv or .json" in err and not list(tmp_path.iterdir())


@pytest.mark.parametrize("ops", ["yes", 1, None])
def test_a_switch_of_the_api_takes_true_or_false_only(ops):
    """`evaluate(ops="yes")` was accepted."""
    with pytest.raises(archcost.ArchError) as caught:
        archcost.load(QWEN).evaluate("decode", ops=ops)
    assert caught.value.diagnostics[0].code == "E401" and "`ops`" in caught.value.render()
