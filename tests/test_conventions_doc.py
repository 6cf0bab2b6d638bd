"""docs/conventions.md: every counting choice of the specs, with the figures it moves, generated and pinned."""

from __future__ import annotations

from helpers import ROOT, check_golden, load_tool

conventions_doc = load_tool("conventions_doc")


def test_conventions_doc_is_current(update_golden):
    """docs/conventions.md is exactly what tools/conventions_doc.py writes (regenerate with that tool)."""
    check_golden(ROOT / "docs" / "conventions.md", conventions_doc.render(), update_golden)


def test_every_option_has_its_reason():
    assert {option for _, option, _ in conventions_doc.spec_options()} <= set(conventions_doc.REASONS)
