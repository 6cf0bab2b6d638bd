"""The tree shows the stages: each stage package of compiler/ imports only the stages below it.

The order is the compile's own: terms (letters, symbols, the Cost record, the quantity table) → ops → graph →
front (resolve) → numbers → cards → serving and train → importer → render → cli and api. An import from a lower
stage into a higher one fails with the two module names; so does a circle between modules of one package.
"""

from __future__ import annotations

import ast
from functools import cache
from pathlib import Path

import networkx as nx
from helpers import ROOT

COMPILER = ROOT / "compiler"
# floor of each stage package (and of the top-level modules beside them): a module may import its own floor or lower
FLOORS = {"outputs": 0, "terms": 0, "ops": 1, "graph": 2, "front": 3, "compilation": 4, "numbers": 4, "timing": 0,
          "cards": 5, "serving": 6, "train": 6, "importer": 7, "render": 8, "cli": 9, "api": 9, "playground": 9,
          "__init__": 0}
MAX_TOP_LEVEL_MODULES = 4


def _module(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(["archcost", *parts])


def _imports(path: Path) -> set[str]:
    """Every archcost.compiler module `path` imports (relative imports made absolute; `from P import m` as P.m)."""
    here = _module(path).split(".")
    package = here if path.name == "__init__.py" else here[:-1]
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            base = package[:len(package) - node.level + 1] if node.level else []
            module = ".".join(base + ([node.module] if node.module else [])) if node.level else node.module
            found.add(module)
            found.update(f"{module}.{alias.name}" for alias in node.names)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    known = {_module(p) for p in COMPILER.rglob("*.py")}
    ancestors = {".".join(here[:n]) for n in range(1, len(here) + 1)}  # imported before any module inside them
    return {m for m in found if m in known and m not in ancestors}


def _stage(module: str) -> str:
    parts = module.split(".")
    return parts[2] if len(parts) > 2 else "__init__"


@cache  # read once a session: every test here only reads it
def _graph() -> nx.DiGraph:
    graph = nx.DiGraph()
    for path in sorted(COMPILER.rglob("*.py")):
        graph.add_node(_module(path))
        graph.add_edges_from((_module(path), target) for target in _imports(path))
    return graph


def test_every_stage_has_a_floor():
    stages = {_stage(m) for m in _graph()}
    assert stages <= set(FLOORS), f"a stage without a floor: {sorted(stages - set(FLOORS))}"


def test_no_stage_imports_a_higher_one():
    climbing = [f"{a} imports {b}" for a, b in _graph().edges
                if FLOORS[_stage(b)] > FLOORS[_stage(a)]]
    assert climbing == []


def test_only_the_outputs_import_render_or_cli():
    """render/ is imported by the three outputs (the CLI, the API and the page's server); cli/ by none but itself."""
    reaching = [f"{a} imports {b}" for a, b in _graph().edges
                if (_stage(b) == "render" and _stage(a) not in ("render", "cli", "api", "playground"))
                or (_stage(b) == "cli" and _stage(a) != "cli")]
    assert reaching == []


def test_no_import_circles():
    assert list(nx.simple_cycles(_graph())) == []


def test_stage_chain_is_short():
    stages = nx.DiGraph((_stage(a), _stage(b)) for a, b in _graph().edges if _stage(a) != _stage(b))
    assert nx.is_directed_acyclic_graph(stages)
    assert nx.dag_longest_path_length(stages) + 1 <= 9, nx.dag_longest_path(stages)


def test_few_modules_beside_the_packages():
    top = sorted(p.name for p in COMPILER.glob("*.py"))
    assert len(top) <= MAX_TOP_LEVEL_MODULES, top


def _package(module: str) -> str:
    path = COMPILER.parent / Path(*module.split(".")[1:])
    return module if (path / "__init__.py").exists() else module.rsplit(".", 1)[0]


def test_no_two_packages_import_each_other():
    """Packages inside a stage too (importer/ over its recognisers/ over its reading/): imports run one way."""
    packages = nx.DiGraph((_package(a), _package(b)) for a, b in _graph().edges if _package(a) != _package(b))
    both = sorted(f"{a} <-> {b}" for a, b in packages.edges if a < b and packages.has_edge(b, a))
    assert both == []
