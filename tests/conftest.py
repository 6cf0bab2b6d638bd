"""pytest options: `--update-golden` rewrites golden files for review."""

from __future__ import annotations

import os
import tempfile

import pytest

# The grammar tables and the formula cache go to a folder of this run, not the user's cache
os.environ["XDG_CACHE_HOME"] = tempfile.mkdtemp(prefix="archcost-test-cache-")


def pytest_addoption(parser):
    parser.addoption("--update-golden", action="store_true", help="rewrite golden files from current output")
    parser.addoption("--screenshots", default=None, metavar="DIR",
                     help="save the playground's screenshots there (tests/test_page.py; docs/playground)")


@pytest.fixture
def update_golden(request) -> bool:
    return request.config.getoption("--update-golden")
