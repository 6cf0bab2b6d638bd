"""Issue 47's traps, each stated as a user met it: a post-norm silently dropped, errors reached through a stdlib
block pointing into the stdlib, a hint cut short, flags that differ between commands, no --version."""

from __future__ import annotations

import pytest
from helpers import ROOT

from archcost.compiler.cli import main
from archcost.compiler.compilation import compile_text
from archcost.dsl.errors import ArchError, Diagnostic

POST_ONLY = """use std.embedding
use std.attention.gqa
use std.ffn.swiglu

model "Post-norm only" {{
  d = 1024
  vocab = 1000
  precision weights = bf16, kv = bf16
  embedding(vocab, d)
  repeat 4 as layers {{
    gqa(d, q_heads = 8, kv_heads = 8, head_dim = 128, norm = none, post_norm = true{kind}) as attn
    swiglu(d, f = 4096, norm = none, post_norm = true{kind}) as ffn
  }}
  rmsnorm(d) as final_norm
  lm_head(d, vocab)
}}
"""


def _params(text: str) -> int:
    from archcost.compiler.numbers.evaluate import evaluate
    from archcost.compiler.terms.scenario import Scenario

    return evaluate(compile_text(text), "prefill", Scenario()).params


def test_a_post_norm_without_a_pre_norm_is_refused_with_its_fix_not_dropped():
    """Olmo-3-32B written as `norm = none, post_norm = true` came out 655,360 parameters short (its 64 layers' two
    post-norms of 5,120): now the call is refused at the user's line, and with the fix the norms are there."""
    with pytest.raises(ArchError) as refused:
        compile_text(POST_ONLY.format(kind=""))
    first = refused.value.diagnostics[0]
    assert first.code == "E309" and "post_norm_kind = rmsnorm" in first.message
    assert first.span.file == "<text>" and first.span.line == 11 and first.note.startswith("in std/")
    kept = _params(POST_ONLY.format(kind=", post_norm_kind = rmsnorm"))
    without = _params(POST_ONLY.format(kind="").replace(", post_norm = true", ""))
    assert kept - without == 4 * 2 * 1024


MOE = """use std.embedding
use std.attention.gqa
use std.ffn.moe

model "Too many" {
  d = 1024
  vocab = 1000
  precision weights = bf16, kv = bf16
  embedding(vocab, d)
  repeat 4 as layers {
    gqa(d, q_heads = 8, kv_heads = 8, head_dim = 128) as attn
    moe(d, experts = 72, top = 100, f = 512) as ffn
  }
  rmsnorm(d) as final_norm
  lm_head(d, vocab)
}
"""


def test_an_error_reached_through_a_stdlib_block_is_the_users_once():
    """`moe(d, experts = 72, top = 100, …)` was reported at std/ffn/moe.arch five times: now once, under the
    user's `top = 100`, the library's line a note."""
    with pytest.raises(ArchError) as refused:
        compile_text(MOE)
    (only,) = refused.value.diagnostics
    assert (only.span.file, only.span.line) == ("<text>", 12)
    shown = only.render().splitlines()
    assert shown[2].strip().startswith("|") and shown[1][shown[2].index("^"):].startswith("top = 100")
    assert only.note.startswith("in std/ffn/moe.arch:")


def test_a_tied_embedding_alone_is_refused_at_the_users_call():
    text = ('use std.embedding\n\nmodel "Tied" {\n  d = 64\n  vocab = 100\n  precision weights = bf16, kv = bf16\n'
            '  embedding(vocab, d, tied = true)\n  lm_head(d, vocab)\n}\n')
    with pytest.raises(ArchError) as refused:
        compile_text(text)
    (only,) = refused.value.diagnostics
    assert only.code == "E219" and only.span.line == 7 and "tied = true" in only.source_line[only.span.column - 1:]


def test_a_hint_is_never_cut():
    """E501's hint ended `pip install "archco…` at 400 characters: archcost's own words are printed whole."""
    hint = "install the extra: " + "x" * 500 + ' pip install "archcost[import]"'
    assert Diagnostic(code="E501", message="m", hint=hint).render().endswith('pip install "archcost[import]"')


def test_version(capsys):
    with pytest.raises(SystemExit) as stop:
        main(["--version"])
    assert stop.value.code == 0 and capsys.readouterr().out.startswith("archcost ")


def test_roofline_takes_compute_as_layout_and_train_do(capsys):
    spec = str(ROOT / "specs" / "qwen3-8b.arch")
    assert main(["roofline", spec, "--device", "h100-sxm", "--compute", "fp8"]) == 0
    assert "peak fp8" in capsys.readouterr().out


def test_train_on_one_server_takes_the_devices_own_link(capsys):
    """`train` refused a one-server layout without --link where `layouts` picks the device's own."""
    spec = str(ROOT / "specs" / "qwen3-8b.arch")
    assert main(["train", spec, "--seq", "4096", "--global-batch", "8", "--layout", "tp=8", "--device",
                 "h100-sxm"]) == 0
    assert "with nvlink4" in capsys.readouterr().out


def test_evaluate_asks_for_a_phase_as_eval_does():
    """`evaluate` defaulted to prefill where `archcost eval` demands a phase: now both ask for it."""
    import archcost

    model = archcost.load(str(ROOT / "specs" / "qwen3-8b.arch"))
    for call in (lambda: model.evaluate(P=8192), lambda: model.sweep(B=[1, 2])):
        with pytest.raises(ArchError) as refused:
            call()
        assert "needs a phase" in refused.value.diagnostics[0].message
    assert model.evaluate("prefill", P=8192)["flops_matrix"] > 0


def test_one_server_takes_the_devices_own_link_everywhere(capsys):
    """`layout`, `layouts` and `disaggregate` take the device's own link inside a server, as `train`,
    `throughput` and the SLO search do: an A100 server is NVLink 3, not the NVLink 4 every card once got."""
    spec = str(ROOT / "specs" / "qwen3-8b.arch")
    assert main(["layout", spec, "--layout", "tp=8", "--device", "a100"]) == 0
    assert "nvlink3" in capsys.readouterr().out
    assert main(["layouts", spec, "--devices", "8xa100", "--context", "4096"]) == 0
    assert "(nvlink3)" in capsys.readouterr().out
    assert main(["disaggregate", spec, "--prefill", "tp=1", "--decode", "tp=1", "--device", "a100", "--json"]) == 0
    assert '"link": "nvlink3"' in capsys.readouterr().out
    assert main(["layout", spec, "--layout", "tp=8", "--link", "nvlink4"]) == 2


def test_a_device_is_named_as_it_was_typed(capsys):
    """Outputs printed `h100_sxm` for the `h100-sxm` typed: the name as the user wrote it, either spelling."""
    spec = str(ROOT / "specs" / "qwen3-8b.arch")
    for typed in ("h100-sxm", "h100_sxm"):
        assert main(["throughput", spec, "--device", typed, "--isl", "100", "--osl", "100"]) == 0
        assert f"({typed}, nvlink4)" in capsys.readouterr().out


def test_the_main_jobs_tables_fit_120_columns(capsys):
    """The README's main job printed a 250-column Table 2-A: every line of it now fits 120 columns."""
    from test_project import _readme_commands as readme_commands

    main_job = next(c for c in readme_commands() if "compare --table chapter" in c)
    argv = main_job.split(".venv/bin/archcost ", 1)[1].split()
    import os

    here = os.getcwd()
    os.chdir(ROOT)
    try:
        assert main(argv) == 0
    finally:
        os.chdir(here)
    lines = capsys.readouterr().out.splitlines()
    assert max(len(line) for line in lines) <= 120 and any(line.startswith("Table 2-A") for line in lines)


def test_every_command_that_takes_weights_takes_kv():
    """`--kv FORMAT` existed nowhere (the KV format could only be changed by editing the spec)."""
    from archcost.compiler.cli.commands import parser

    top = parser()
    commands = next(a for a in top._actions if a.__class__.__name__ == "_SubParsersAction").choices
    taking = {name: {o for a in sub._actions for o in a.option_strings} for name, sub in commands.items()}
    with_weights = [name for name, options in taking.items() if "--weights" in options]
    assert len(with_weights) >= 5 and all("--kv" in taking[name] for name in with_weights)
