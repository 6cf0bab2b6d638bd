"""pytest options: `--update-golden` rewrites golden files for review."""

from __future__ import annotations

import pytest


def pytest_addoption(parser):
    parser.addoption("--update-golden", action="store_true", help="rewrite golden files from current output")


@pytest.fixture
def update_golden(request) -> bool:
    return request.config.getoption("--update-golden")
