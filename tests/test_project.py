"""The README's two commands are the ones CI runs."""

from __future__ import annotations

import re

from helpers import ROOT


def _readme_commands() -> list[str]:
    return re.findall(r"```sh\n(.+?)\n```", (ROOT / "README.md").read_text())


def test_readme_shows_exactly_two_commands():
    commands = _readme_commands()
    assert len(commands) == 2
    assert "archcost compare" in commands[0] and "pytest" in commands[1]
    for model in ("deepseek-v4.1-flash", "qwen3-8b", "qwen3.6-35b-a3b", "deepseek-v4-flash", "kimi-k3"):
        assert f"specs/{model}.arch" in commands[0]  # the chapter's five models


def test_ci_runs_the_readme_commands():
    ci_lines = (ROOT / ".ci" / "run").read_text().splitlines()
    for command in _readme_commands():
        assert command in ci_lines
