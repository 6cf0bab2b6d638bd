"""End to end: the `archcost` command as a person runs it, exit codes, determinism."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from archcost.compiler.cli import main
from helpers import ROOT, SPECS

QWEN = str(SPECS / "qwen3-8b.arch")


def run(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "archcost.compiler.cli", *args], capture_output=True, text=True,
                          cwd=ROOT, env={**os.environ, **(env or {})})


def test_eval_json_prefill(capsys):
    assert main(["eval", QWEN, "--phase", "prefill", "--P", "8192", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["flops_matrix"] == 133594323353600   # Table 2-C: 133.59 TFLOPs
    assert report["params"] == 8190735360
    assert set(report) >= {"params", "params_by_component", "weight_bytes", "flops", "flops_matrix",
                           "flops_nonmatrix", "context_flops", "state_bytes", "kv_bytes_per_token",
                           "read_bytes", "write_bytes"}


def test_compare_prints_one_row_per_model(capsys):
    specs = [str(p) for p in sorted(SPECS.glob("*.arch"))]
    assert main(["compare", *specs]) == 0
    out = capsys.readouterr().out
    assert "Qwen3-8B" in out and "133.59" in out and "OPT-13B" in out
    assert main(["compare", QWEN, "--table", "params", "--format", "csv"]) == 0
    assert capsys.readouterr().out.splitlines()[1].startswith("Qwen3-8B,8.191,1.245,1.510,5.436")


def test_formula_latex_and_keep(capsys):
    assert main(["formula", QWEN, "--quantity", "F", "--latex"]) == 0
    assert "N_{pair}" in capsys.readouterr().out
    assert main(["formula", QWEN, "--quantity", "M", "--keep", "d,vocab"]) == 0
    assert "vocab" in capsys.readouterr().out


def test_user_error_exits_2_without_traceback(tmp_path):
    spec = tmp_path / "bad.arch"
    spec.write_text('model "X" {\n  linear q: d ->\n}\n')
    result = run("check", str(spec))
    assert result.returncode == 2
    assert "error[E100]" in result.stderr and "Traceback" not in result.stderr


def test_missing_file_is_a_user_error():
    result = run("check", "no/such/spec.arch")
    assert result.returncode == 2 and "error[E101]" in result.stderr


@pytest.mark.parametrize("suffix", ["svg", "png", "dot"])
def test_diagram_renders(tmp_path, suffix):
    out = tmp_path / f"q.{suffix}"
    result = run("diagram", QWEN, "-o", str(out))
    assert result.returncode == 0, result.stderr
    data = out.read_bytes()
    assert {"svg": b"<svg", "png": b"\x89PNG", "dot": b"digraph"}[suffix] in data[:400]


def test_outputs_are_byte_identical_across_runs_and_hash_seeds(tmp_path):
    commands = [("formula", QWEN), ("eval", QWEN, "--phase", "request", "--P", "128", "--G", "4", "--json"),
                ("diagram", QWEN, "-o", "/dev/stdout")]
    for command in commands:
        outputs = {run(*command, env={"PYTHONHASHSEED": seed}).stdout for seed in ("0", "1", "12345")}
        assert len(outputs) == 1, command


def test_every_python_package_is_installed():
    """pyproject lists packages one by one (they live in mapped folders); none may be forgotten."""
    import tomllib

    listed = set(tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"])
    on_disk = {"archcost." + str(p.parent.relative_to(ROOT)).replace("/", ".")
               for top in ("dsl", "compiler", "stdlib", "specs") for p in (ROOT / top).rglob("__init__.py")}
    assert on_disk == listed


def test_unknown_option_is_named(capsys):
    code = main(["eval", str(SPECS / "kimi-k3.arch"), "--phase", "decode", "--option", "mla_cach=expanded"])
    err = capsys.readouterr().err
    assert code == 2 and "error[E308]" in err and "did you mean `mla_cache`?" in err


def test_option_changes_the_path_and_is_named(capsys):
    spec = str(SPECS / "kimi-k3.arch")
    assert main(["eval", spec, "--phase", "decode", "--S", "8191", "--json", "--option", "mla_cache=expanded"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["options"]["mla_cache"] == "expanded"
    assert report["kv_bytes_per_token"] == 1474560   # §2.3.6: the expanded reference path


def test_state_command_answers_the_budget_question(capsys):
    specs = [str(SPECS / n) for n in ("qwen3.6-35b-a3b.arch", "kimi-k3.arch")]
    assert main(["state", *specs, "--budget", "256MiB"]) == 0
    out = capsys.readouterr().out
    assert "9,939" in out and "none fits" in out and "3,168" in out and "16,437" in out


@pytest.mark.parametrize("suffix", ["png", "svg"])
def test_state_plot_renders(tmp_path, suffix):
    out = tmp_path / f"state.{suffix}"
    specs = [str(SPECS / n) for n in ("qwen3-8b.arch", "qwen3.6-35b-a3b.arch", "kimi-k3.arch")]
    assert main(["plot", "state", *specs, "-o", str(out)]) == 0
    assert {"svg": b"<svg", "png": b"\x89PNG"}[suffix] in out.read_bytes()[:400]
