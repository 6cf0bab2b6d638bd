"""Helpers the tests share: spec paths, a compile cache, golden files."""

from __future__ import annotations

import importlib.util
import sys
from functools import cache
from pathlib import Path

import pytest

from archcost.compiler.compilation import Compiled, compile_file, compile_text
from archcost.compiler.terms.scenario import Conventions

ROOT = Path(__file__).resolve().parents[1]
SPECS = ROOT / "specs"
STDLIB = ROOT / "stdlib"
GOLDEN = Path(__file__).resolve().parent / "golden"


def published_configs() -> list[Path]:
    """Published config.json files, as downloaded: tests/configs/published/, and those of this year's checkpoints
    (tests/configs/next/) whose model type the importer reads."""
    import json

    from archcost.compiler.importer import SUPPORTED

    configs = ROOT / "tests" / "configs"
    this_year = [path for path in sorted((configs / "next").glob("*.json"))
                 if json.loads(path.read_text(encoding="utf-8")).get("model_type") in SUPPORTED]
    return sorted((configs / "published").glob("*.json")) + this_year


def facts_file(path: Path):
    """A table of facts (YAML), read with libyaml where PyYAML has it: the pure-Python reader took a tenth of a
    second per file, in every worker that collects the tests."""
    import yaml

    return yaml.load(path.read_text(), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))


def load_tool(name: str):
    """A script of tools/ as a module (registered under its name, so its worker processes find it)."""
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, ROOT / "tools" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def spec_path(name: str) -> Path:
    return SPECS / f"{name}.arch"


@cache
def compiled(name: str, edits: tuple[tuple[str, str], ...] = (), conventions: Conventions = Conventions()) -> Compiled:
    """A spec compiled once per test session; `edits` rewrite its text first (what-if variants)."""
    path = spec_path(name)
    if not edits:
        return compile_file(path, conventions=conventions)
    text = path.read_text()
    for old, new in edits:
        assert old in text, f"edit target {old!r} not in {path.name}"
        text = text.replace(old, new)
    return compile_text(text, conventions=conventions, name=str(path), base=path.parent)


def check_golden(path: Path, actual: str, update: bool) -> None:
    """Compare with a reviewed golden file, or rewrite it under --update-golden."""
    if update or not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(actual)
        if not update:
            pytest.fail(f"golden file {path.name} was missing and has been written; review and commit it")
        return
    assert actual == path.read_text(), (
        f"output differs from {path.name}; rerun with --update-golden and review the diff"
    )


def run_cli(*argv: str) -> tuple[int, str, str]:
    """`archcost ARGV…` in this process: its exit status, stdout and stderr."""
    import contextlib
    import io

    from archcost.compiler.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(argv))
    return code, out.getvalue(), err.getvalue()
