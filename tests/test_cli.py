"""End to end: the `archcost` command as a person runs it, exit codes, determinism."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from helpers import ROOT, SPECS

from archcost.compiler.cli import main

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


def test_compare_names_every_models_execution_paths(capsys):
    """Issue 25: the footer said only the first spec's options; each model's own paths follow the run's."""
    specs = [str(SPECS / f"{name}.arch") for name in ("qwen3-8b", "deepseek-v3", "deepseek-v3.2")]
    assert main(["compare", *specs, "--phase", "decode", "--S", "8192"]) == 0
    notes = capsys.readouterr().out.splitlines()[-3:]
    assert notes == ["options: logits = last, attention = as_written, vector_params = nonmatrix, routing = uniform",
                     "DeepSeek-V3: mla_cache = compressed",
                     "DeepSeek-V3.2: mla_cache = compressed, index_kernel = fused, mtp = off"]


def test_check_takes_an_execution_path(capsys):
    """`check --option`: the summary follows the chosen path (DeepSeek-V3's per-head cache: 61 × 128 heads ×
    (192 + 128) × 2 B a token)."""
    spec = str(SPECS / "deepseek-v3.arch")
    assert main(["check", spec, "--option", "mla_cache=expanded"]) == 0
    assert "4,997,120" in capsys.readouterr().out and 61 * 128 * 320 * 2 == 4_997_120
    assert main(["check", spec]) == 0
    assert "70,272" in capsys.readouterr().out


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


def test_every_python_package_is_installed():
    """pyproject lists packages one by one (they live in mapped folders); none may be forgotten."""
    import tomllib

    setup = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    folders = {folder: name for name, folder in setup["package-dir"].items()}
    on_disk = set()
    for init in ROOT.glob("*/**/__init__.py"):
        folder = init.parent.relative_to(ROOT).as_posix()
        mapped = max((f for f in folders if folder == f or folder.startswith(f + "/")), key=len, default=None)
        if mapped is not None and not folder.startswith(("tests", "tools", "build")):
            on_disk.add(folders[mapped] + folder[len(mapped):].replace("/", "."))
    assert on_disk == set(setup["packages"])


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


def test_capacity_command(capsys):
    # §2.6.2: Qwen3-8B on an RTX 4090 with 2 GiB of workspace, 8K per request
    assert main(["capacity", QWEN, "--device", "rtx-4090", "--context", "8192", "--workspace", "2GiB",
                 "--batch", "4", "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["max_batch"] == 4 and result["crossover_batch"] == 13
    assert round(result["max_params"] / 1e9, 2) == 8.51


def test_capacity_with_quantized_weights(capsys):
    spec = str(SPECS / "deepseek-r1-distill-llama-70b.arch")
    assert main(["capacity", spec, "--device", "h100-sxm", "--context", "8192", "--workspace", "2GiB",
                 "--weights", "int4_g128", "--memory", "nominal"]) == 0  # the seed's 80 GB
    assert "max_batch            14" in capsys.readouterr().out
    assert main(["capacity", spec, "--device", "h100-sxm", "--context", "8192", "--workspace", "2GiB",
                 "--weights", "int4_g128"]) == 0  # 81,559 MiB, as the card reports it: 5.5 GB more
    assert "max_batch            16" in capsys.readouterr().out


def test_unknown_device_is_named(capsys):
    assert main(["capacity", QWEN, "--device", "rtx-4900", "--context", "8192"]) == 2
    assert "did you mean `rtx-4090`?" in capsys.readouterr().err


def test_roofline_request_speculate_and_sweep(capsys, tmp_path):
    assert main(["roofline", str(SPECS / "qwen2.5-1.5b.arch"), "--device", "rtx-2080-ti", "--B", "64",
                 "--S", "1024", "--json"]) == 0
    assert round(json.loads(capsys.readouterr().out)["intensity"]) == 42        # seed 000 §02
    assert main(["request", QWEN, "--S", "1392", "--P", "51", "--G", "128"]) == 0
    assert "969,528 causal pairs" in capsys.readouterr().out                    # Exercise 2-8
    assert main(["request", QWEN, "--turns", "512:128,64:256"]) == 0
    assert "a conversation of 2 turns" in capsys.readouterr().out
    assert main(["speculate", "--k", "4", "--alpha", "0.8", "--json"]) == 0
    assert round(json.loads(capsys.readouterr().out)["tokens_per_round"], 1) == 3.4  # seed 000 §08
    out = tmp_path / "grid.csv"
    assert main(["sweep", QWEN, "--B", "1,8", "--S", "0:8192:4096", "-o", str(out)]) == 0
    rows = out.read_text().splitlines()
    assert rows[0].startswith("B,S,P,G,flops") and len(rows) == 1 + 2 * 3
    assert rows[3].split(",")[5] == "19968622592"  # decode at 8K: the §2.1.4 20.0 GFLOPs


@pytest.mark.parametrize("kind", ["flops", "step", "roofline", "capacity"])
def test_other_plots_render(tmp_path, kind):
    out = tmp_path / f"{kind}.png"
    assert main(["plot", kind, QWEN, "-o", str(out)]) == 0
    assert out.read_bytes()[:4] == b"\x89PNG"


def test_speculate_with_mtp_as_the_drafter(capsys):
    spec = str(SPECS / "deepseek-v4-flash.arch")
    assert main(["speculate", spec, "--device", "h100-sxm", "--option", "mtp=on", "--k", "1", "--alpha", "0.8",
                 "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    # one drafted token accepted with 0.8: 1.8 tokens per round; the round costs more than a decode step
    assert result["tokens_per_round"] == pytest.approx(1.8)
    assert result["round_seconds"] > result["decode_seconds"] > 0
    assert main(["speculate", QWEN, "--device", "h100-sxm", "--k", "1", "--alpha", "0.8"]) == 2


def test_check_validates_a_library_of_blocks(capsys, tmp_path):
    assert main(["check", str(ROOT / "stdlib" / "norm.arch"), str(ROOT / "stdlib" / "formats.arch")]) == 0
    out = capsys.readouterr().out
    assert ("std/norm.arch: ok, 8 blocks (rmsnorm, layernorm, layernorm_unbiased, rmsnorm_unscaled, "
            "layernorm_unscaled, none, gated_rmsnorm, residual)") in out and "std/formats.arch: ok," in out
    broken = tmp_path / "lib.arch"
    broken.write_text("block wide(d) {\n  linear up: d -> 2 * d\n  linaer down: 2 * d -> d\n}\n")
    assert main(["check", str(broken)]) == 2
    err = capsys.readouterr().err
    assert "lib.arch:3:3: error[E205]" in err and "did you mean `linear`?" in err


def test_eval_formats(capsys):
    """One evaluation as JSON, a Markdown table and CSV: the same numbers in each."""
    base = ["eval", str(SPECS / "qwen3-8b.arch"), "--phase", "prefill", "--P", "8192"]
    assert main([*base, "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert main([*base, "--format", "markdown"]) == 0
    markdown = capsys.readouterr().out
    assert f"| flops_matrix | {data['flops_matrix']:,} | 133.59 TFLOPs |" in markdown
    assert main([*base, "--format", "csv"]) == 0
    rows = dict(line.split(",")[:2] for line in capsys.readouterr().out.splitlines()[1:])
    assert int(rows["flops_matrix"]) == data["flops_matrix"] and int(rows["params"]) == 8_190_735_360


def test_formula_markdown(capsys):
    assert main(["formula", str(SPECS / "qwen3-8b.arch"), "--quantity", "F", "--phase", "decode",
                 "--format", "markdown"]) == 0
    assert "$$ 65536 \\cdot B \\cdot \\left(230969 + 9 \\cdot S\\right) $$" in capsys.readouterr().out


def test_a_new_output_file_gets_the_mode_new_files_get(tmp_path):
    """Written through a temporary file, yet readable as any new file is (umask 022: 0644), not mkstemp's 0600."""
    import os

    previous = os.umask(0o022)
    try:
        out = tmp_path / "grid.csv"
        assert main(["sweep", QWEN, "--B", "1,8", "-o", str(out)]) == 0
        assert out.stat().st_mode & 0o777 == 0o644
    finally:
        os.umask(previous)


def test_sweep_to_a_captured_stdout(capsys, monkeypatch):
    """A fuzzer find: sweep wrote its bytes to sys.stdout.buffer, which a captured stdout (a notebook's, a
    test's) does not have."""
    import io

    monkeypatch.setattr("sys.stdout", io.StringIO())
    assert main(["sweep", str(ROOT / "specs" / "qwen3-8b.arch"), "--B", "1,2", "--no-cache"]) == 0
    assert sys.stdout.getvalue().count("\n") == 3  # the header and two rows


def test_each_command_is_found_in_the_module_the_parser_table_names():
    """cli/commands.COMMAND_MODULES lets a run build its own command's flags alone: it must name every command
    the modules define, each at its module, or a command would answer `invalid choice`."""
    import importlib

    from archcost.compiler.cli import commands

    defined = {command.name: module for module in commands.MODULES
               for command in importlib.import_module(f"archcost.compiler.cli.{module}").COMMANDS}
    assert defined == commands.COMMAND_MODULES


@pytest.mark.parametrize("argv", [["eval", "--help"], ["--help"], ["layouts", "--help"], ["--allow-use-outside", "fmt",
                                                                                           "--help"]])
def test_a_run_with_its_own_command_alone_prints_what_the_whole_parser_prints(argv, capsys):
    from archcost.compiler.cli import commands

    outputs = []
    for built in (commands.parser(), commands.parser_for(argv)):
        with pytest.raises(SystemExit):
            built.parse_args(argv)
        outputs.append(capsys.readouterr().out)
    assert outputs[0] == outputs[1] and outputs[0]
