"""Every error case in tests/errors/ fails with its expected codes and its pinned message, and the
error catalogue docs/errors.md covers every code the package can raise."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest
from helpers import GOLDEN, check_golden, load_tool

from archcost.compiler.cli import main
from archcost.dsl.codes import CHECK_ONLY, PAGE_ONLY
from archcost.dsl.errors import CODES

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent


errors_doc = load_tool("errors_doc")
CASES = errors_doc.cases()


@pytest.mark.parametrize("case", CASES, ids=[p.stem for p in CASES])
def test_error_case(case: Path, capsys, update_golden, monkeypatch):
    monkeypatch.chdir(HERE)  # relative paths in messages keep the goldens machine-independent
    for module in errors_doc.hidden_modules(case):  # a library the case runs without: `import` raises ImportError
        monkeypatch.setitem(sys.modules, module, None)
    code = main(errors_doc.case_command(case))
    captured = capsys.readouterr()
    assert code == 2, captured.out + captured.err
    assert "Traceback" not in captured.err
    assert re.findall(r"error\[(E\d{3})\]", captured.err) == errors_doc.expected_codes(case)
    check_golden(GOLDEN / "errors" / f"{case.stem}.err", captured.err, update_golden)


def test_every_code_raised_is_catalogued_and_has_an_example():
    """Every `"Exxx"` literal in the package is in CODES, and every code in CODES is raised somewhere
    and has a case here that produces it, so docs/errors.md shows each one happening."""
    raised = {code for folder in ("dsl", "compiler") for path in (ROOT / folder).rglob("*.py")
              if path.name != "codes.py" for code in re.findall(r'"(E\d{3})"', path.read_text())}
    assert raised == set(CODES)
    shown = {code for case in CASES for code in errors_doc.expected_codes(case)}
    apart = set(PAGE_ONLY) | set(CHECK_ONLY)  # page codes: test_playground_api.py; the check's: test_modeling_code.py
    assert shown | apart == set(CODES) and not shown & apart


def test_every_code_has_a_fix():
    for code, kind in CODES.items():
        assert re.fullmatch(r"E[1-5]\d\d", code)
        assert kind.title and len(kind.fix) > 20, code


def test_catalogue_is_current(update_golden):
    """docs/errors.md is exactly what tools/errors_doc.py writes (regenerate with that tool)."""
    check_golden(ROOT / "docs" / "errors.md", errors_doc.render(), update_golden)
