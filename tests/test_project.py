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


def _layout_block() -> str:
    readme = (ROOT / "README.md").read_text()
    return re.search(r"## Layout\n\n```\n(.+?)\n```", readme, re.S).group(1)


def test_the_readmes_layout_names_every_part_of_the_tree():
    """README's layout is checked against the tree: every stage package and module of compiler/, every primitive
    op's module (ops/ finds them by discovery, so the list must follow), every tool and every stdlib file."""
    block = _layout_block()
    words = set(re.findall(r"[\w.]+", block))
    compiler = ROOT / "compiler"
    wanted = {f"{p.name}/" for p in compiler.iterdir() if p.is_dir() and (p / "__init__.py").exists()}
    wanted |= {p.name for p in compiler.glob("*.py") if p.name != "__init__.py"}
    missing = sorted(name for name in wanted if name not in block)
    from archcost.compiler.ops import REGISTRY

    missing += sorted(f"op {kind}" for kind in REGISTRY if kind not in words)
    missing += sorted(f"tools/{p.name}" for p in (ROOT / "tools").glob("*.py") if p.name not in words)
    stdlib = ROOT / "stdlib"
    missing += sorted(f"stdlib/{p.relative_to(stdlib)}" for p in stdlib.rglob("*.arch") if p.stem not in words)
    assert not missing, f"README's layout leaves out: {', '.join(missing)}"
