"""The shape of the code: each op defined in one place, small functions and files, a generated language
reference, and a new primitive that reaches every output through its definition alone."""

from __future__ import annotations

import ast
from pathlib import Path
from types import SimpleNamespace

import pytest
from helpers import ROOT, check_golden, load_tool

from archcost.compiler.compilation import compile_text, with_path
from archcost.compiler.numbers.evaluate import by_op, evaluate
from archcost.compiler.ops import REGISTRY, Arg, Cost, CostContext, OpSpec, registered
from archcost.compiler.render import dot, listing
from archcost.compiler.terms import symbols
from archcost.compiler.terms.scenario import Scenario
from archcost.dsl.errors import ArchError

language_doc = load_tool("language_doc")
code_size = load_tool("code_size")


def test_language_reference_is_current(update_golden):
    """docs/language.md is exactly what tools/language_doc.py writes (regenerate with that tool)."""
    check_golden(ROOT / "docs" / "language.md", language_doc.render(), update_golden)


def test_language_reference_lists_every_op_and_block():
    text = language_doc.render()
    for kind, spec in REGISTRY.items():
        assert f"### `{kind}`" in text
        assert all(f"| `{arg.name}` |" in text for arg in spec.args)
    for _, signature, _ in language_doc.stdlib_blocks():
        assert f"- `{signature}`" in text


def test_functions_and_files_stay_small():
    print(code_size.report())
    assert code_size.too_long() == []


def _names_an_op_kind(node: ast.AST, kinds: set[str]) -> bool:
    """A comparison with an op kind, a `case "kind":`, or a registry lookup by a literal kind."""
    def literal(value) -> bool:
        if isinstance(value, ast.Constant):
            return value.value in kinds
        return isinstance(value, (ast.Tuple, ast.List, ast.Set)) and any(literal(v) for v in value.elts)
    if isinstance(node, ast.Compare):
        return any(literal(side) for side in (node.left, *node.comparators))
    if isinstance(node, ast.MatchValue):
        return literal(node.value)
    if isinstance(node, ast.Subscript):
        return literal(node.slice)
    return False


# modules whose loading of data can run code, and lark's own cache (Lark(..., cache=...) pickles its tables into a
# file and loads them back)
# multiprocessing among them: its spawn start pickles the process object and unpickles it in the child, and its
# pipes and queues unpickle every message
CODE_LOADERS = {"pickle", "_pickle", "cPickle", "marshal", "shelve", "dill", "cloudpickle", "joblib", "multiprocessing"}


def test_nothing_the_package_reads_can_execute():
    """Issue 45: lark's grammar cache was a pickle in the user's cache folder. No module of dsl/ or compiler/
    imports a deserialiser that can run code or multiprocessing, no Lark is built with a cache, and no pipe or queue
    is read by an unpickling call (the playground's compiler process is `python -I -m` speaking JSON lines); what
    the package keeps on disk is JSON (dsl/cachedir.py), checked by tests/test_parser.py's planted pickles and
    tests/test_warm.py's forgeries."""
    found = []
    for package in ("compiler", "dsl"):
        for path in sorted((ROOT / package).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text())):
                names = ([alias.name for alias in node.names] if isinstance(node, ast.Import)
                         else [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
                if any(name.split(".")[0] in CODE_LOADERS for name in names):
                    found.append(f"{path.relative_to(ROOT)}:{node.lineno} imports {names}")
                if isinstance(node, ast.Call) and getattr(node.func, "id", getattr(node.func, "attr", "")) == "Lark" \
                        and any(k.arg == "cache" for k in node.keywords):
                    found.append(f"{path.relative_to(ROOT)}:{node.lineno} builds a Lark with a cache")
                # multiprocessing's Connection.recv and its queues unpickle what comes through them
                if isinstance(node, ast.Call) and getattr(node.func, "attr", "") in ("recv", "get_nowait") \
                        or isinstance(node, ast.Attribute) and node.attr in ("Queue", "SimpleQueue", "JoinableQueue"):
                    found.append(f"{path.relative_to(ROOT)}:{node.lineno} unpickles what a pipe or queue brings")
    assert found == []


def test_no_command_unpickles_at_run_time(monkeypatch, tmp_path, capsys):
    """The static check above cannot see a library that unpickles on the package's behalf: run the daily
    commands, cold and then warm from the cache folder, with every unpickling entry point refusing to run."""
    import pickle

    from archcost.compiler.cli import main

    def refuse(*_args, **_kwargs):
        raise AssertionError("something unpickled")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    for name in ("load", "loads", "Unpickler"):
        monkeypatch.setattr(pickle, name, refuse)
    spec = str(ROOT / "specs" / "qwen3-8b.arch")
    for argv in (["eval", spec, "--phase", "prefill", "--P", "1024"],
                 ["eval", spec, "--phase", "prefill", "--P", "1024"],  # warm: the formula cache read back
                 ["compare", spec, spec],
                 ["throughput", spec, "--device", "h100-sxm", "--isl", "512", "--osl", "128"],
                 ["train", spec, "--seq", "2048", "--global-batch", "8", "--layout", "tp=2,dp=4", "--device",
                  "h100-sxm", "--link", "nvlink4"]):
        assert main(argv) == 0, argv
    assert list((tmp_path / "cache").rglob("*.json"))  # the warm runs did read the cache
    capsys.readouterr()


def test_no_op_kind_is_named_outside_its_module():
    """Resolver, renderers, evaluator and docs ask the op definitions; none of them tests for a kind."""
    kinds = set(REGISTRY)
    found = [f"{path.relative_to(ROOT)}:{node.lineno}"
             for package in ("compiler", "dsl") for path in sorted((ROOT / package).rglob("*.py"))
             if "ops" not in path.relative_to(ROOT).parts
             for node in ast.walk(ast.parse(path.read_text())) if _names_an_op_kind(node, kinds)]
    assert found == []


# A primitive defined here only: a gather of `count` rows per token from a pooled memory of `slots`.
def _pool_cost(a: SimpleNamespace, ctx: CostContext) -> Cost:
    return Cost(params=a.slots * a.width, flops_matrix=2 * symbols.m * a.count * a.width,
                read_weights=a.slots * a.width * a.dtype)


POOL = OpSpec(
    kind="pool_read", doc="`pool_read`: each token reads `count` rows of a learned pool of `slots` rows.",
    args=(Arg("width", "dim", required=True, doc="row width"), Arg("slots", "dim", required=True, doc="rows"),
          Arg("count", "dim", 1, doc="rows read per token"), Arg("dtype", "dtype", "weights", doc="format")),
    widths=lambda a: (a.width, a.width), cost=_pool_cost,
    shape=lambda a, show: f"pool {show(a.slots)}×{show(a.width)}, {show(a.count)} per token",
    diagram_shape=lambda a, show: f"{show(a.count)} of {show(a.slots)} rows",
    unit_cost=lambda a: (2 * a.count * a.width, "token"), formula="F = 2·m·count·width",
)
POOL_SPEC = """model "Pool" {
  lookup embed: 1000 -> 64
  pool_read memory: width = 64, slots = 4096, count = 2
}
"""


def test_a_new_primitive_reaches_every_output_from_its_definition():
    with registered(POOL):
        model = compile_text(POOL_SPEC)
        report = evaluate(model, "prefill", Scenario(P=10))
        assert report.params == 1000 * 64 + 4096 * 64
        assert report.flops_matrix == 2 * 10 * 2 * 64          # 2·m·count·width, m = 10
        shapes = {row.op: row.shape for row in by_op(model, "prefill", Scenario(P=10))}
        assert shapes["memory"] == "pool 4096×64, 2 per token"
        drawn = dot.to_dot(model)
        assert "pool_read 2 of 4096 rows" in drawn and "F = 256 per token" in drawn
        assert "memory  pool_read" in listing.graph_listing(model)
        assert "### `pool_read`" in language_doc.render()
        with pytest.raises(ArchError) as typo:
            compile_text(POOL_SPEC.replace("pool_read memory", "pool_raed memory"))
        assert typo.value.diagnostics[0].hint == "did you mean `pool_read`?"
    with pytest.raises(ArchError) as gone:
        compile_text(POOL_SPEC)
    assert gone.value.codes == ["E205"] and "pool_read" not in (gone.value.diagnostics[0].hint or "")


def test_a_spec_compiled_from_text_evaluates_along_another_path():
    """with_path recompiles from the program's own sources, not by re-reading the first node's file."""
    text = (ROOT / "specs" / "deepseek-v3.arch").read_text()
    model = compile_text(text, name="v3-from-text", base=Path.cwd())
    expanded = with_path(model, "mla_cache", "expanded")
    assert expanded.ir.paths["mla_cache"] == "expanded"
    compressed, other = (evaluate(m, "decode", Scenario(S=100)) for m in (model, expanded))
    assert other.state_bytes > compressed.state_bytes


def test_activation_reads_live_on_the_edges():
    """Each tensor edge carries its size and its consumer's read of it; R's activation reads sum the edges
    (plus ops that read only token ids), the writes stay on their producers, once each."""
    from helpers import compiled

    from archcost.compiler.graph import costs

    graph = compiled("qwen3-8b").graph
    tensors = [(u, v, e) for u, v, e in graph.edges(data=True) if e["kind"] == "tensor"]
    assert all(e["tensor_bytes"] == e["rows"] * e["width"] * 2 for _, _, e in tensors)  # bf16 activations
    on_edges = sum(graph.nodes[v]["op"].multiplicity * e["cost"]["read_activations"] for _, v, e in tensors)
    on_nodes = sum(d["op"].multiplicity * d["cost"].read_activations for _, d in graph.nodes(data=True))
    assert on_nodes == 0  # every op of this model reads a tensor another op wrote
    assert costs.total(graph, "read_activations") == on_edges
