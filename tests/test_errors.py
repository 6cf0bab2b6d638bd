"""Every error case in tests/errors/ fails with its expected codes and its pinned message."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from archcost.compiler.cli import main
from helpers import GOLDEN, check_golden

HERE = Path(__file__).resolve().parent
CASES = sorted(p for p in (HERE / "errors").glob("*.arch") if p.read_text().startswith("# expect"))


def _expected_codes(path: Path) -> list[str]:
    return re.findall(r"E\d{3}", path.read_text().splitlines()[0])


@pytest.mark.parametrize("case", CASES, ids=[p.stem for p in CASES])
def test_error_case(case: Path, capsys, update_golden, monkeypatch):
    monkeypatch.chdir(HERE)  # relative paths in messages keep the goldens machine-independent
    relative = os.path.relpath(case, HERE)
    code = main(["eval", relative, "--phase", "prefill", "--P", "8"])
    captured = capsys.readouterr()
    assert code == 2, captured.out + captured.err
    assert "Traceback" not in captured.err
    assert re.findall(r"error\[(E\d{3})\]", captured.err) == _expected_codes(case)
    check_golden(GOLDEN / "errors" / f"{case.stem}.err", captured.err, update_golden)


def test_error_codes_are_catalogued():
    from archcost.dsl.errors import CODES

    for case in CASES:
        for code in _expected_codes(case):
            assert code in CODES
