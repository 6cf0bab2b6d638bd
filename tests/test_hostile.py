"""Hostile input is cheap to reject: size, nesting and `use` limits, symbolic repeat counts, folder
confinement, no code execution, atomic outputs, and byte-identical outputs for every spec.

Timings of these limits are measured in tools/bench.py, not asserted here."""

from __future__ import annotations

import ast as python_ast
import os
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import ROOT, SPECS

from archcost.compiler.cli import main
from archcost.compiler.compilation import compile_file, compile_text
from archcost.compiler.numbers.evaluate import evaluate
from archcost.compiler.terms.scenario import Scenario
from archcost.dsl.errors import ArchError
from archcost.dsl.loader import load_file

SMALL_MODEL = 'model "Small" {\n  lookup embed: 1000 -> 64\n}\n'


def codes_of(call) -> list[str]:
    with pytest.raises(ArchError) as caught:
        call()
    return caught.value.codes


def test_ten_megabyte_spec_is_refused_before_parsing(tmp_path):
    spec = tmp_path / "huge.arch"
    spec.write_text(SMALL_MODEL + "# padding\n" * 1_100_000)
    assert codes_of(lambda: compile_file(spec)) == ["E106"]
    assert codes_of(lambda: compile_text(spec.read_text())) == ["E106"]


def test_too_many_lines_is_refused():
    assert codes_of(lambda: compile_text(SMALL_MODEL + "x = 1\n" * 100_001)) == ["E106"]


def test_expression_nested_ten_thousand_deep_is_refused():
    deep = "(" * 10_000 + "64" + ")" * 10_000
    text = f'model "Deep" {{\n  d = {deep}\n  lookup embed: 1000 -> d\n}}\n'
    with pytest.raises(ArchError) as caught:
        compile_text(text)
    assert caught.value.codes == ["E106"]
    assert caught.value.diagnostics[0].span.line == 2  # points at the expression, not the file's start


def test_long_operator_chains_are_refused_at_their_line_or_fine():
    """Nesting without brackets: a 10,000-long `- - - 64` and a 10,000-term sum are refused at their
    line; a 100-term sum is an ordinary expression."""
    for long in ("- " * 10_000 + "64", " + ".join(["1"] * 10_000)):
        with pytest.raises(ArchError) as caught:
            compile_text(f'model "M" {{\n  d = {long}\n  lookup embed: 1000 -> 64\n}}\n')
        assert caught.value.codes == ["E106"] and caught.value.diagnostics[0].span.line == 2
    terms = " + ".join(["1"] * 100)
    compiled = compile_text(f'model "Sum" {{\n  d = {terms}\n  lookup embed: 1000 -> d\n}}\n')
    assert evaluate(compiled, "decode", Scenario()).params == 1000 * 100


def test_thousand_file_use_chain_stops_at_the_depth_limit(tmp_path):
    for index in range(1_000):
        (tmp_path / f"f{index}.arch").write_text(f'use "f{index + 1}.arch"\n' if index < 999 else "")
    (tmp_path / "spec.arch").write_text('use "f0.arch"\n' + SMALL_MODEL)
    with pytest.raises(ArchError) as caught:
        compile_file(tmp_path / "spec.arch")
    assert caught.value.codes == ["E106"] and "deeper than 64" in caught.value.diagnostics[0].message


def test_use_cycle_is_named(tmp_path):
    (tmp_path / "a.arch").write_text('use "b.arch"\n')
    (tmp_path / "b.arch").write_text('use "a.arch"\n')
    (tmp_path / "spec.arch").write_text('use "a.arch"\n' + SMALL_MODEL)
    assert codes_of(lambda: compile_file(tmp_path / "spec.arch")) == ["E103"]


def test_repeat_counts_are_symbolic_multiplicities():
    """`repeat 10^12` costs one body times 10^12: no loop, no unrolled graph."""
    compiled = compile_text('model "Tall" {\n  lookup embed: 1000 -> 64\n'
                            '  repeat 10^12 as layers {\n    linear up: 64 -> 64\n  }\n}\n')
    assert len(compiled.graph) == 2
    assert evaluate(compiled, "decode", Scenario()).params == 64_000 + 64 * 64 * 10**12


@pytest.mark.parametrize("value, code", [("0", "E302"), ("-3", "E302"), ("2.5", "E302"), ("10^300", "E214"),
                                         ("9" * 50, "E214")])
def test_absurd_repeat_counts_are_refused(value, code):
    text = (f'model "Bad" {{\n  lookup embed: 1000 -> 64\n  repeat {value} as layers {{\n'
            f'    linear up: 64 -> 64\n  }}\n}}\n')
    assert codes_of(lambda: compile_text(text)) == [code]


@pytest.mark.parametrize("binding, code", [("heads = -4", "E301"), ("heads = 0", "E301"), ("heads = 2.5", "E301"),
                                           ("heads = 1 / 0", "E217"), ("heads = true", "E215")])
def test_absurd_dimensions_are_refused(binding, code):
    text = ('use std.attention.gqa\nmodel "Bad" {\n  ' + binding + '\n  lookup embed: 1000 -> 512\n'
            '  gqa(512, q_heads = heads, kv_heads = heads, head_dim = 64)\n}\n')
    assert code in codes_of(lambda: compile_text(text))


@pytest.mark.parametrize("scenario", [dict(S=-1), dict(B=0), dict(P=0), dict(G=0)])
def test_absurd_scenario_values_are_refused(scenario):
    compiled = compile_file(SPECS / "qwen3-8b.arch")
    assert codes_of(lambda: evaluate(compiled, "request", Scenario(**scenario))) == ["E401"]


def test_use_outside_the_spec_folder_needs_the_flag(tmp_path):
    outside = tmp_path / "lib.arch"
    outside.write_text('block thing(d) {\n  linear up: d -> d\n}\n')
    folder = tmp_path / "specs"
    folder.mkdir()
    (folder / "spec.arch").write_text('use "../lib.arch"\nmodel "M" {\n  lookup embed: 10 -> 8\n  thing(8)\n}\n')
    assert codes_of(lambda: load_file(folder / "spec.arch")) == ["E107"]
    assert load_file(folder / "spec.arch", allow_outside=True).entry.models


def test_block_that_calls_itself_is_refused():
    text = 'block again(d) {\n  again(d)\n}\nmodel "M" {\n  lookup embed: 10 -> 8\n  again(8)\n}\n'
    assert codes_of(lambda: compile_text(text)) == ["E213"]


def test_failed_output_leaves_the_old_file_alone(tmp_path, capsys):
    good = tmp_path / "model.dot"
    good.write_text("the good diagram")
    broken = tmp_path / "broken.arch"
    broken.write_text('model "Broken" {\n  linear q: 8 -> \n}\n')
    assert main(["diagram", str(broken), "-o", str(good)]) == 2
    assert good.read_text() == "the good diagram"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["broken.arch", "model.dot"]  # no temporaries left


def test_atomic_write_keeps_the_old_file_when_the_writer_fails(tmp_path):
    from archcost.compiler.outputs import atomic_write

    target = tmp_path / "out.json"
    target.write_text("old")

    def half_then_fail(path: Path) -> None:
        path.write_text("{half")
        raise OSError("disk full")

    with pytest.raises(OSError):
        atomic_write(target, half_then_fail)
    assert target.read_text() == "old" and [p.name for p in tmp_path.iterdir()] == ["out.json"]


FORBIDDEN_CALLS = {"eval", "exec", "compile", "sympify", "parse_expr", "__import__", "system", "popen", "getenv",
                   "expandvars", "expanduser", "urlopen"}


def test_no_code_execution_on_user_data():
    """No eval/exec/sympify/parse_expr/pickle/environment expansion/network anywhere in the language
    and compiler packages; lambdify is used only on compiled formulas (symbolic.py, sweep.py)."""
    found = []
    for folder in ("dsl", "compiler"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            tree = python_ast.parse(path.read_text())
            for node in python_ast.walk(tree):
                if isinstance(node, python_ast.Import | python_ast.ImportFrom):
                    names = [alias.name for alias in node.names] + [getattr(node, "module", None) or ""]
                    found += [f"{path.name}: import {n}" for n in names
                              if n.split(".")[0] in {"pickle", "marshal", "shelve", "urllib", "socket", "http"}]
                if isinstance(node, python_ast.Call):
                    name = getattr(node.func, "id", None) or getattr(node.func, "attr", None)
                    if name in FORBIDDEN_CALLS and not _allowed(path, node):
                        found.append(f"{path.name}:{node.lineno}: {name}(...)")
                    if name == "lambdify" and path.name not in {"symbolic.py", "sweep.py"}:
                        found.append(f"{path.name}:{node.lineno}: lambdify outside evaluation")
    assert not found, found


def _allowed(path: Path, node: python_ast.Call) -> bool:
    # json.loads / yaml safe loads are not on user specs; re.compile is not code execution
    owner = getattr(getattr(node.func, "value", None), "id", None)
    return owner in {"json", "re"}


DETERMINISM_SCRIPT = """
import sys
from archcost.compiler.cli import main
for spec in sys.argv[1:]:
    if spec.endswith(".json"):
        commands = (["import", spec],)
    else:
        commands = (["formula", spec], ["eval", spec, "--phase", "request", "--P", "128", "--G", "4", "--json"],
                    ["diagram", spec, "-o", "-"], ["check", spec, "--emit", "graph"], ["fmt", spec])
    for command in commands:
        print("==", *command, flush=True)
        assert main(command) == 0, command
"""


# The default run: the chapter's five specs (windows, compressed caches, selection, MoE, Engram, replay stages),
# DeepSeek-V3 (MLA) and the configs of those two names; the long run (.ci/run): every spec and every config.
SAMPLED = ("deepseek-v4.1-flash", "qwen3-8b", "qwen3.6-35b-a3b", "deepseek-v4-flash", "kimi-k3", "deepseek-v3")


@pytest.mark.parametrize("every", [False, pytest.param(True, marks=pytest.mark.long)], ids=["sampled", "every"])
def test_every_spec_gives_byte_identical_outputs_across_runs_and_hash_seeds(every):
    """Two runs, each its own process with its own hash seed: whatever varies from run to run (string hashes,
    set order, object addresses) differs between them. The first writes the formula cache and the second
    reads it where it can, so cold and warm outputs are compared too."""
    paths = sorted(SPECS.glob("*.arch")) + sorted((ROOT / "tests" / "configs").glob("*.json"))
    specs = [os.path.relpath(p, ROOT) for p in paths if every or p.stem in SAMPLED]
    outputs = []
    for seed in ("0", "12345"):  # one after the other: the second run finds the first one's cache
        run = subprocess.run([sys.executable, "-c", DETERMINISM_SCRIPT, *specs], cwd=ROOT, text=True,
                             capture_output=True, env={**os.environ, "PYTHONHASHSEED": seed})
        assert run.returncode == 0, run.stderr
        outputs.append(run.stdout)
    assert outputs[0].count("== diagram") + outputs[0].count("== import") == len(specs) >= len(SAMPLED) + 2
    assert "digraph" in outputs[0]
    assert outputs[0] == outputs[1], "two runs (hash seeds 0 and 12345) give different outputs"


def test_state_must_name_a_cache():
    """Found by the fuzzer: `state = q_up` named a linear op and crashed the attend cost."""
    text = ('model "M" {\n  lookup embed: 10 -> 64\n  linear q: 64 -> 64\n'
            '  cache kv: per_token, width = 64\n  attend: heads = 1, qk = 64, v = 64, state = q, from = q\n}\n')
    with pytest.raises(ArchError) as caught:
        compile_text(text)
    assert caught.value.codes == ["E207"] and "a `linear` op, not a cache" in caught.value.diagnostics[0].message


def test_symbolic_exponent_is_refused_before_it_can_hang():
    """Found by the fuzzer: `f = 10^10^H` compiled, then evaluation at H = 8192 never finished."""
    text = 'model "M" {\n  lookup embed: 10 -> 8\n  linear up: 8 -> 10^10^H\n}\n'
    with pytest.raises(ArchError) as caught:
        compile_text(text)
    assert caught.value.codes == ["E218"] and "exponent must be a number" in caught.value.diagnostics[0].message


def test_request_sizes_in_dimensions_are_refused():
    """Found by the fuzzer: `head_dim = H^40` in Qwen3.6 compiled, then summing a request's decodes
    asked sympy's assumptions about a degree-80 polynomial under min/max for minutes. Architecture
    sizes cannot depend on the request (E301), and no argument may grow faster than a low power of it."""
    for line, code, words in [("linear up: 8 -> H", "E301", "depends on the request (H)"),
                              ("linear up: 8 -> 8, rows = B * H^4", "E214", "grows like a power above 4"),
                              ("elementwise e: width = 8, flops = (S + P)^2 * G^2 * B", "E214", "power above 4")]:
        with pytest.raises(ArchError) as caught:
            compile_text(f'model "M" {{\n  lookup embed: 10 -> 8\n  {line}\n}}\n')
        assert caught.value.codes == [code] and words in caught.value.diagnostics[0].message
    allowed = compile_text('model "M" {\n  lookup embed: 10 -> 8\n  linear up: 8 -> 8, rows = B * H\n}\n')
    assert evaluate(allowed, "request", Scenario(P=4, G=3)).flops_matrix > 0
    spec = (ROOT / "tests" / "fuzz_corpus" / "fixed-hang-request-power-head-dim.arch").read_text()
    with pytest.raises(ArchError) as caught:
        compile_text(spec, base=ROOT / "specs")
    assert "E214" in caught.value.codes  # with the errors that follow from it (E207, E300, E303)
