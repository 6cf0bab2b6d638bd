"""Round three of hostile use: nothing the compile read is written over, no stale number from the cache, no
silently wrong figure, no traceback, no silent acceptance. Each test failed before its fix."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from archcost.compiler.cli import main
from archcost.compiler.cli.cached import served

BLOCK_A = "block tiny(d) {\n  linear up: d -> d\n}\n"
BLOCK_B = "block tiny(d) {\n  linear up: d -> 2 * d\n  linear down: 2 * d -> d\n}\n"
SPEC = 'use "blk.arch"\nmodel "Tiny" {\n  lookup embed: 1000 -> 64\n  tiny(64)\n}\n'
PARAMS_A, PARAMS_B = 1000 * 64 + 64 * 64, 1000 * 64 + 2 * 64 * 128


@pytest.fixture
def folder(tmp_path, monkeypatch) -> Path:
    """A spec that `use`s a block file, in the working folder, with a cache of its own."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.delenv("ARCHCOST_NO_CACHE", raising=False)
    (tmp_path / "a.arch").write_text(BLOCK_A)
    (tmp_path / "b.arch").write_text(BLOCK_B)
    (tmp_path / "tiny.arch").write_text(SPEC)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def params(capsys, *argv: str, warm: bool = False) -> int:
    import json

    capsys.readouterr()
    assert (served(list(argv)) if warm else main(list(argv))) == 0
    return json.loads(capsys.readouterr().out)["params"]


@pytest.mark.parametrize("how", ["symlink", "hard link"])
def test_an_output_never_lands_on_a_file_the_spec_uses(folder, how, capsys):
    """`sweep -o out.csv` where out.csv is a link to the block file tiny.arch uses: refused (E108), cold and
    warm, and the block file keeps its bytes."""
    (folder / "blk.arch").write_text(BLOCK_A)
    if how == "symlink":
        (folder / "out.csv").symlink_to("blk.arch")
    else:
        os.link(folder / "blk.arch", folder / "out.csv")
    argv = ["sweep", "tiny.arch", "--phase", "decode", "--S", "1:3", "-o", "out.csv"]
    assert main(argv) == 2 and "E108" in capsys.readouterr().err
    assert main(["sweep", "tiny.arch", "--phase", "decode", "--S", "1:3", "-o", "fine.csv"]) == 0  # warms the cache
    assert served(argv) is None  # the cache path refuses too, and hands over to the compiler, which says why
    assert main(argv) == 2 and "E108" in capsys.readouterr().err
    assert (folder / "blk.arch").read_text() == BLOCK_A
    drawn = folder / "drawn.dot"
    drawn.symlink_to("blk.arch") if how == "symlink" else os.link(folder / "blk.arch", drawn)
    assert main(["diagram", "tiny.arch", "-o", "drawn.dot"]) == 2
    assert (folder / "blk.arch").read_text() == BLOCK_A


def test_a_repointed_use_is_never_served_stale(folder, capsys):
    """The cache records each `use` as written and the file it reached: re-pointing a symlinked block file or
    folder, or putting a file where the link was, gives the new numbers."""
    (folder / "blk.arch").symlink_to("a.arch")
    argv = ["eval", "tiny.arch", "--phase", "decode", "--json"]
    assert params(capsys, *argv) == PARAMS_A
    assert params(capsys, *argv, warm=True) == PARAMS_A
    (folder / "blk.arch").unlink()
    (folder / "blk.arch").symlink_to("b.arch")
    assert served(argv) is None
    assert params(capsys, *argv) == PARAMS_B
    (folder / "blk.arch").unlink()
    (folder / "blk.arch").write_text(BLOCK_A)
    assert served(argv) is None
    assert params(capsys, *argv) == PARAMS_A


def test_a_repointed_folder_is_never_served_stale(folder, capsys):
    for name, text in (("one", BLOCK_A), ("two", BLOCK_B)):
        (folder / name).mkdir()
        (folder / name / "blk.arch").write_text(text)
    (folder / "lib").symlink_to("one")
    (folder / "tiny.arch").write_text(SPEC.replace('"blk.arch"', '"lib/blk.arch"'))
    argv = ["eval", "tiny.arch", "--phase", "decode", "--json"]
    assert params(capsys, *argv) == PARAMS_A
    (folder / "lib").unlink()
    (folder / "lib").symlink_to("two")
    assert served(argv) is None
    assert params(capsys, *argv) == PARAMS_B


def test_an_entry_copied_over_another_specs_is_never_served(folder, capsys):
    (folder / "blk.arch").write_text(BLOCK_A)
    (folder / "other.arch").write_text(SPEC.replace('"Tiny"', '"Other"').replace("1000", "2000"))
    one, other = (["eval", name, "--phase", "decode", "--json"] for name in ("tiny.arch", "other.arch"))
    assert params(capsys, *one) == PARAMS_A and params(capsys, *other) == PARAMS_A + 1000 * 64
    entries = folder / "cache" / "archcost" / "forms"
    by_model = {("Other" in path.read_text()): path for path in entries.glob("*.json")}
    by_model[True].write_bytes(by_model[False].read_bytes())  # Tiny's entry under Other's name
    assert served(other) is None
    assert params(capsys, *other) == PARAMS_A + 1000 * 64


def test_a_broken_pipe_ends_quietly_on_the_cache_path(folder, tmp_path):
    """`eval --json | head -1` once the answer comes from the cache: no BrokenPipeError traceback (a report
    longer than the pipe holds: DeepSeek V4.1 Flash's prefill)."""
    spec = Path(__file__).resolve().parents[1] / "specs" / "deepseek-v4.1-flash.arch"
    command = [sys.executable, "-m", "archcost.compiler.cli", "eval", str(spec), "--phase", "prefill", "--json"]
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache")}
    for _ in range(2):  # cold, then warm
        run = subprocess.run(f"{' '.join(command)} | head -1", shell=True, cwd=folder, env=env,
                             capture_output=True, text=True)
        assert run.stdout == "{\n" and "Traceback" not in run.stderr and "Error" not in run.stderr


QWEN = str(Path(__file__).resolve().parents[1] / "specs" / "qwen3-8b.arch")


@pytest.mark.parametrize("words, says", [
    ("tp=²", "whole number"), ("tp=2,ep=³", "whole number"),  # both pass str.isdigit, neither is ASCII
    ("tp=2,tp=4", "gives `tp` twice"), ("sp=yes", "sp is on or off"), ("imb=1e400", "whole number"),
])
def test_layout_words_are_ascii_and_said_once(words, says, capsys):
    import archcost

    for argv in (["layout", QWEN, "--layout", words], ["diagram", QWEN, "-o", "-", "--layout", words]):
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert "E405" in err and says in err and "Traceback" not in err
    with pytest.raises(archcost.ArchError) as caught:
        archcost.load(QWEN).layout(words)
    assert caught.value.codes == ["E405"]


def test_context_parallelism_leaves_every_card_a_position(capsys):
    assert main(["layout", QWEN, "--layout", "tp=2,cp=4096", "--phase", "prefill", "--P", "512"]) == 2
    assert "cp = 4096 splits 512 positions" in capsys.readouterr().err
    assert main(["layout", QWEN, "--layout", "tp=2,cp=4", "--phase", "prefill", "--P", "512"]) == 0


def test_the_card_limit_is_named(capsys):
    assert main(["layouts", QWEN, "--devices", "8192xh100-sxm", "--context", "1024"]) == 2
    assert "4,096 cards" in capsys.readouterr().err


@pytest.mark.parametrize("arguments, says", [
    ("window = -4", "`window >= 0`"), ("chunk = -8", "`chunk >= 0`"), ("softcap = -30", "`softcap >= 0`"),
    ("window = 4, chunk = 8", "not both"),
])
def test_gqa_refuses_what_would_silently_mean_something_else(arguments, says):
    """A negative window or cap used to mean none; a window beside a chunk dropped the chunk (E309)."""
    from archcost.compiler.compilation import compile_text
    from archcost.dsl.errors import ArchError

    spec = ('use std.attention.gqa\nmodel "G" {\n  lookup embed: 1000 -> 64\n'
            f'  gqa(64, q_heads = 4, kv_heads = 4, head_dim = 16, {arguments})\n}}\n')
    with pytest.raises(ArchError) as caught:
        compile_text(spec)
    assert caught.value.codes == ["E309"] and says in caught.value.diagnostics[0].message


# ---------------------------------------------------------------------------------------------- importer

PUBLISHED = Path(__file__).resolve().parent / "configs" / "published"


def _imported_weight_bytes(config: dict) -> tuple[str, int]:
    import json

    from archcost.compiler.compilation import compile_text
    from archcost.compiler.importer import import_config, parse_config
    from archcost.compiler.numbers.evaluate import evaluate
    from archcost.compiler.terms.scenario import Scenario

    text = import_config(parse_config(json.dumps(config, indent=2), "config.json"))
    return text, evaluate(compile_text(text), "decode", Scenario()).weight_bytes


def test_a_quantization_config_inside_text_config_is_honoured():
    """Gemma 3's multimodal wrapper puts the text model's fields under text_config; a quantization_config
    there used to be ignored (the spec stayed bf16)."""
    import json

    config = json.loads((PUBLISHED / "gemma-3-4b-it.json").read_text())
    _, plain = _imported_weight_bytes(config)
    config["text_config"]["quantization_config"] = {"quant_method": "fp8", "weight_block_size": [128, 128]}
    text, quantized = _imported_weight_bytes(config)
    assert "attention = fp8_b128x128" in text and "dense_ffn = fp8_b128x128" in text
    assert quantized < 0.7 * plain


def test_a_pattern_that_keeps_part_of_the_experts_is_refused():
    """`model.layers.*.mlp.experts.*.down_proj` keeps one matrix of three unquantized: it used to keep every
    routed expert in bf16 (twice the bytes); a format per component cannot say it, so the import stops."""
    import json

    from archcost.dsl.errors import ArchError

    config = json.loads((PUBLISHED / "qwen3-30b-a3b-fp8.json").read_text())
    config["quantization_config"]["modules_to_not_convert"].append("model.layers.*.mlp.experts.*.down_proj")
    with pytest.raises(ArchError) as caught:
        _imported_weight_bytes(config)
    assert caught.value.codes == ["E503"] and "part of routed_experts" in caught.value.diagnostics[0].message
    config["quantization_config"]["modules_to_not_convert"][-1] = "model.layers.*.mlp.experts"
    text, _ = _imported_weight_bytes(config)  # every expert kept: that a format per component can say
    assert "routed_experts" not in text.split("precision")[1].split("\n")[0]


def _small(**quantization) -> dict:
    return {"model_type": "llama", "hidden_size": 64, "intermediate_size": 128, "num_hidden_layers": 2,
            "num_attention_heads": 4, "vocab_size": 1000, "torch_dtype": "float16", "quantization_config": quantization}


def test_gptq_quantizes_only_the_modules_it_lists():
    listed = [["self_attn.q_proj", "self_attn.k_proj", "self_attn.v_proj"], ["self_attn.o_proj"]]
    text, _ = _imported_weight_bytes(_small(quant_method="gptq", bits=4, group_size=128,
                                            modules_in_block_to_quantize=listed))
    line = text.split("precision")[1].split("\n")[0]
    assert "attention = int4_g128_zp" in line and "dense_ffn" not in line


def test_awq_without_zero_points_stores_only_scales():
    with_zeros, zp = _imported_weight_bytes(_small(quant_method="awq", bits=4, group_size=64, zero_point=True))
    without, no_zp = _imported_weight_bytes(_small(quant_method="awq", bits=4, group_size=64, zero_point=False))
    assert "int4_g64_zp" in with_zeros and "int4_g64," in without.replace("int4_g64\n", "int4_g64,")
    matrices = 2 * (4 * 64 * 64 + 3 * 64 * 128)  # two layers of attention and MLP
    assert zp - no_zp == matrices // 64 * 4 // 8  # a 4-bit zero point per group of 64 fewer


# ---------------------------------------------------------------------------------------------- layouts

MOE = str(Path(__file__).resolve().parents[1] / "specs" / "qwen3-30b-a3b.arch")


def _layout(spec: str, words: str, phase: str = "decode", **shape):
    from archcost.compiler.cards.degrees import parse_layout
    from archcost.compiler.cards.layout import layout_report
    from archcost.compiler.compilation import compile_file
    from archcost.compiler.terms.scenario import Scenario

    return layout_report(compile_file(spec), parse_layout(words), phase, Scenario(**shape))


@pytest.mark.parametrize("words", ["ep=2,dp=2", "ep=4,dp=4", "ep=2,dp=4", "tp=2,ep=4,dp=2", "tp=4,ep=2"])
def test_expert_parallelism_across_replicas_does_the_experts_work_once(words):
    """Qwen3-30B-A3B decode: an EP group that spans data-parallel replicas gathers their tokens; expert work
    used to be divided by dp a second time (ep=2,dp=2: 17.4 GFLOPs over both cards against 24.7 on one). The
    cards together do the single card's matrix FLOPs, plus the router each tp card runs on its copy."""
    single = _layout(MOE, "tp=1", B=8, S=100).cards[0].flops_matrix
    report = _layout(MOE, words, B=8, S=100)
    layout = report.layout
    together = report.cards[0].flops_matrix * layout.tp * layout.dp
    if layout.tp == 1:
        assert together == single
    else:
        assert single < together < single * 1.02


@pytest.mark.parametrize("words, kept", [("tp=4", "tp,ep"), ("tp=2,ep=8,dp=4", "tp,ep,dp"), ("ep=4,dp=4", "dp"),
                                         ("tp=2,ep=2", "ep")])
def test_kept_degree_formulas_equal_the_numbers(words, kept, capsys):
    """`layout --keep` prints per-card formulas; at the layout's own degrees they give its numbers (at tp = 4,
    ep = 1 the params formula divided the experts by ep: 29.39 B where the number is 7.64 B; with dp kept, B
    stood for the requests of one replica)."""
    import re

    import sympy as sp

    shape = {"B": 8, "S": 100}
    argv = ["layout", MOE, "--layout", words, "--keep", kept, "--phase", "decode", "--B", "8", "--S", "100"]
    assert main(argv) == 0
    printed = dict(re.findall(r"^  (\w+) = (.+)$", capsys.readouterr().out, re.M))
    card = _layout(MOE, words, **shape).cards[0]
    layout = _layout(MOE, words, **shape).layout
    letters = {sp.Symbol(k, positive=True, integer=True): getattr(layout, k) for k in ("tp", "ep", "dp", "pp")}
    names = {**{str(k): k for k in letters}, "B": sp.Symbol("B"), "S": sp.Symbol("S")}
    values = {**letters, names["B"]: 8, names["S"]: 100}
    for name in ("params", "weight_bytes", "state_bytes", "flops_matrix"):
        formula = sp.parse_expr(printed[name], local_dict=names)  # the test reads our own printed formula back
        assert formula.xreplace(values) == getattr(card, name), name


def test_more_micro_batches_than_requests_are_refused(capsys):
    assert main(["layout", QWEN, "--layout", "pp=2,mb=8", "--phase", "decode"]) == 2
    assert "mb = 8 micro-batches of the 1 request" in capsys.readouterr().err


# ---------------------------------------------------------------------------------------------- a new user's try

def test_state_names_the_name_on_took_over():
    """`on = latent` takes the name over; `state = latent` then names the op that did, and the message says so
    (it used to name `scale` as if the spec had written it)."""
    from archcost.compiler.compilation import compile_text
    from archcost.dsl.errors import ArchError

    spec = ('model "On" {\n  lookup embed: 1000 -> 64\n  linear down: 64 -> 32\n  cache latent: per_token, width = 32\n'
            '  elementwise scale: width = 32, flops = 32, on = latent\n'
            '  attend: heads = 1, qk = 32, v = 32, state = latent\n}\n')
    with pytest.raises(ArchError) as caught:
        compile_text(spec)
    diagnostic = caught.value.diagnostics[0]
    assert diagnostic.code == "E207" and "`state = latent` names `scale`" in diagnostic.message
    assert "took the name `latent` over with `on = latent`" in diagnostic.message and diagnostic.span.column == 39


def test_a_step_plot_says_which_models_do_not_fit(tmp_path, capsys):
    kimi = str(Path(__file__).resolve().parents[1] / "specs" / "kimi-k3.arch")
    assert main(["plot", "step", QWEN, kimi, "--device", "h100-sxm", "-o", str(tmp_path / "step.png")]) == 0
    err = capsys.readouterr().err
    assert "Kimi-K3 does not fit one h100" in err and "Qwen3-8B" not in err


def test_the_chapter_tables_are_labelled_and_reserve_says_its_default(capsys):
    assert main(["compare", "--table", "chapter", QWEN]) == 0
    out = capsys.readouterr().out
    assert all(f"Table 2-{letter}:" in out for letter in "ABCE")
    with pytest.raises(SystemExit):
        main(["capacity", "--help"])
    assert "default 0" in capsys.readouterr().out


def test_a_repeat_count_cannot_depend_on_the_request():
    """`repeat B as layers` compiled: the model's depth changed with the batch (the fuzzer's cards_sum oracle
    found it: a data-parallel replica's B made a shallower model)."""
    from archcost.compiler.compilation import compile_text
    from archcost.dsl.errors import ArchError

    with pytest.raises(ArchError) as caught:
        compile_text('model "M" {\n  lookup embed: 10 -> 8\n  repeat B as layers {\n    linear up: 8 -> 8\n  }\n}\n')
    assert caught.value.codes == ["E302"] and "depends on the request (B)" in caught.value.diagnostics[0].message


def test_a_name_without_a_value_is_unbound_even_where_the_scenario_hides_it(tmp_path, capsys):
    """Fuzz find: `min(S, x)` with `x` never bound is 0 at S = 0 for sympy (x ≥ 0), not for the plain forms,
    which gave an internal error. A figure that depends on a name with no value is E400 wherever the name is
    left in its closed form (a decode's m − m_out = 0 takes it out of the form itself)."""
    spec = tmp_path / "hidden.arch"
    spec.write_text('use std.embedding\nmodel "t" {\n  d = 64\n  vocab = 100\n  r = m_out + min(S, x) * (m - m_out)\n'
                    '  embedding(vocab, d)\n  lm_head(d, vocab, rows = r)\n}\n')
    for phase in (["--phase", "prefill", "--P", "3"], ["--phase", "request", "--P", "3", "--G", "4"]):
        assert main(["eval", str(spec), *phase]) == 2
        err = capsys.readouterr().err
        assert "error[E400]: cannot evaluate: `x` has no value" in err and "internal error" not in err
