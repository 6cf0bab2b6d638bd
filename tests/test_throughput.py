"""`archcost throughput` (issue 46): continuous batching's steady state from the expected times, an engine's
documented defaults, and refusals that name the nearest choice that runs."""

from __future__ import annotations

import json

import pytest
from helpers import ROOT, compiled

from archcost.compiler.cards.degrees import parse_layout
from archcost.compiler.cards.expected import table_for
from archcost.compiler.cards.fleet import heaviest_card
from archcost.compiler.cli import main
from archcost.compiler.front.hardware import device, own_link
from archcost.compiler.serving.engines import preset
from archcost.compiler.serving.throughput import throughput

SPEC = str(ROOT / "specs" / "llama-3.1-8b.arch")
H100 = device("h100_sxm")


def served(engine="vllm", layout="tp=1", concurrency=None, isl=1000, osl=1000, spec="llama-3.1-8b"):
    wire = own_link(H100.name)
    return throughput(compiled(spec), parse_layout(layout), H100, wire, wire, preset(engine, H100.memory, False),
                      isl, osl, concurrency, table=table_for(H100))


@pytest.mark.parametrize("engine", ["vllm", "sglang", "trtllm"])
def test_the_steady_state_adds_up(engine):
    result = served(engine)
    assert result.tpot_seconds >= result.step_bound_seconds > 0
    assert result.output_tokens_per_second == pytest.approx(result.batch / result.tpot_seconds)
    assert result.batch <= result.kv_requests_max and result.batch_limit == "KV cache"
    assert result.ttft_seconds >= result.tpot_seconds


def test_the_kv_budget_is_the_engines_rule():
    """vLLM: 0.9 of the card less weights and the peak step; TensorRT-LLM: 0.9 of what they leave."""
    weights, state = heaviest_card(compiled("llama-3.1-8b"), parse_layout("tp=1"))
    vllm, trtllm = served("vllm"), served("trtllm")
    assert vllm.kv_budget_bytes == pytest.approx(0.9 * H100.memory - weights, rel=1e-3)
    assert trtllm.kv_budget_bytes == pytest.approx(0.9 * (H100.memory - weights), rel=1e-3)
    pages = -(-2000 // 16) * 16
    assert vllm.kv_requests_max == int(vllm.kv_budget_bytes // state(1, pages))


def test_concurrency_caps_the_batch_and_more_of_it_serves_more():
    few, more = served(concurrency=8), served(concurrency=64)
    assert (few.batch, few.batch_limit, more.batch) == (8, "concurrency", 64)
    assert more.output_tokens_per_second > few.output_tokens_per_second
    assert more.tpot_seconds >= few.tpot_seconds


def test_the_command_prints_and_returns_the_same(capsys):
    args = ["throughput", SPEC, "--device", "h100-sxm", "--isl", "1000", "--osl", "1000", "--engine", "trtllm",
            "--weights", "fp8", "--kv", "fp8", "--compute", "fp8", "--price-per-hour", "2"]
    assert main([*args, "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["times"]["expected"] >= data["times"]["bound"]
    assert data["cost_per_million_output_tokens"] == pytest.approx(2 / 3600 / data["output_tokens_per_second"] * 1e6)
    assert main(args) == 0
    assert f"{data['output_tokens_per_second']:,.0f} output tokens/s" in capsys.readouterr().out


@pytest.mark.parametrize(("flags", "code", "says"), [
    (["--concurrency", "0"], "E401", "at least 1"),
    (["--device", "h20"], "E413", "no kernel measurements for `h20`"),
    (["--cached-fraction", "1"], "E401", "--cached-fraction"),
    (["--max-num-tokens", "100", "--isl", "100000"], "E413", "cannot prefill"),
])
def test_bad_input_is_a_located_refusal(flags, code, says, capsys):
    argv = ["throughput", SPEC, "--device", "h100-sxm", "--isl", "1000", "--osl", "1000", *flags]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert f"error[{code}]" in err and says in err


def test_an_unknown_engine_is_refused_with_the_choices(capsys):
    with pytest.raises(SystemExit) as stop:
        main(["throughput", SPEC, "--device", "h100-sxm", "--isl", "8", "--osl", "8", "--engine", "tgi"])
    assert stop.value.code == 2 and "choose from 'vllm', 'sglang', 'trtllm'" in capsys.readouterr().err


def test_a_request_rate_keeps_the_concurrency_littles_law_gives():
    """C = rate · (TTFT + (OSL − 1) · TPOT): the batch found is the smallest that holds what the rate keeps."""
    wire = own_link(H100.name)
    result = throughput(compiled("llama-3.1-8b"), parse_layout("tp=1"), H100, wire, wire,
                        preset("trtllm", H100.memory, False), 467, 256, table=table_for(H100), request_rate=8)
    kept = 8 * (result.ttft_seconds + 255 * result.tpot_seconds)
    assert result.batch_limit == "request rate" and result.batch - 1 < kept <= result.batch
    assert result.requests_per_second >= 8


def test_a_rate_beyond_the_layout_is_refused_with_what_it_serves(capsys):
    argv = ["throughput", SPEC, "--device", "h100-sxm", "--isl", "1000", "--osl", "1000", "--request-rate", "1000"]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "error[E413]" in err and "more than TP 1" in err and "ask for --request-rate" in err


def test_drafts_yield_the_expected_tokens_a_step_and_need_a_drafter(capsys):
    """Multi-token prediction: (1 − A^(K+1)) / (1 − A) tokens a step (seed 002 §2.5.3); a spec without an `mtp`
    stage is refused, and --mtp goes with --acceptance."""
    dsv4 = str(ROOT / "specs" / "deepseek-v4-flash.arch")
    argv = ["throughput", dsv4, "--device", "h200", "--layout", "tp=8", "--isl", "1024", "--osl", "1024", "--json"]
    assert main([*argv, "--option", "mtp=on", "--mtp", "2", "--acceptance", "0.8"]) == 0
    drafted = json.loads(capsys.readouterr().out)
    assert drafted["tokens_per_step"] == pytest.approx((1 - 0.8**3) / (1 - 0.8))
    assert drafted["tpot_seconds"] == pytest.approx(drafted["step_seconds"] / drafted["tokens_per_step"])
    assert main([*argv, "--option", "mtp=on"]) == 0
    plain = json.loads(capsys.readouterr().out)
    assert drafted["step_seconds"] > plain["step_seconds"] and drafted["tpot_seconds"] < plain["tpot_seconds"]
    assert main([*argv, "--mtp", "2", "--acceptance", "0.8"]) == 2
    assert "no `mtp` stage" in capsys.readouterr().err
    assert main([*argv, "--option", "mtp=on", "--mtp", "2"]) == 2
    assert "go together" in capsys.readouterr().err


def test_the_first_token_waits_half_a_step_then_rides_a_step():
    result = served()
    assert result.ttft_seconds >= 1.5 * result.step_seconds - 1e-12


def test_a_pipeline_keeps_a_micro_batch_on_every_stage():
    """pp = 2 with a micro-batch a stage serves as many tokens a card as the same cards in tensor parallel do, to
    within the pipeline's own costs: not half of them, as one batch walking both stages would."""
    pipeline, tensor = served(layout="pp=2", concurrency=256), served(layout="tp=2", concurrency=256)
    assert pipeline.output_tokens_per_second > 0.6 * tensor.output_tokens_per_second


def test_a_model_that_keeps_no_state_is_bound_by_the_engine_not_a_kv_figure(tmp_path, capsys):
    """A spec without a cache (a draft model reading its target's): no KV figure is printed as if it bound
    anything, and JSON says null."""
    spec = tmp_path / "stateless.arch"
    spec.write_text('use std.embedding\nuse std.ffn.swiglu\nmodel "Stateless" {\n  d = 1024\n'
                    '  embedding(32000, d)\n  swiglu(d, f = 4096)\n  lm_head(d, 32000)\n}\n')
    assert main(["throughput", str(spec), "--layout", "tp=1", "--device", "h100-sxm", "--isl", "1000", "--osl",
                 "100", "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["kv_requests_max"] is None and result["batch_limit"] != "KV cache"
    assert main(["throughput", str(spec), "--layout", "tp=1", "--device", "h100-sxm", "--isl", "1000", "--osl",
                 "100"]) == 0
    assert "a request keeps no state: the KV cache bounds no batch" in capsys.readouterr().out


@pytest.mark.parametrize("engine, overlap, field", [
    ("vllm", False, "async_scheduling False"),            # vLLM 0.11's V1 engine core steps synchronously
    ("sglang", True, "disable_overlap_schedule False"),   # SGLang's event_loop_overlap, on by default
    ("trtllm", True, "disable_overlap_scheduler False"),  # TensorRT-LLM's PyExecutor overlap, on by default
])
def test_each_preset_says_whether_its_scheduler_runs_a_step_ahead(engine, overlap, field):
    chosen = preset(engine, H100.memory, False)
    assert chosen.overlap is overlap and field in chosen.source


def test_an_overlap_scheduler_admits_a_request_one_step_later(capsys):
    """A scheduler that launches the next step while one runs admits an arrival to the step after it: the same
    steady state, its TTFT one expected step longer, its TPOT and throughput the same."""
    argv = ["throughput", SPEC, "--device", "h100-sxm", "--isl", "467", "--osl", "256", "--engine", "sglang",
            "--concurrency", "16", "--json"]
    assert main(argv) == 0
    ahead = json.loads(capsys.readouterr().out)
    assert main([*argv, "--overlap-scheduler", "off"]) == 0
    synchronous = json.loads(capsys.readouterr().out)
    assert (ahead["overlap"], synchronous["overlap"]) == (True, False)
    assert ahead["ttft_seconds"] == pytest.approx(synchronous["ttft_seconds"] + synchronous["step_seconds"])
    assert ahead["tpot_seconds"] == synchronous["tpot_seconds"]
    assert ahead["output_tokens_per_second"] == synchronous["output_tokens_per_second"]
    assert main(argv[:-1]) == 0 and "a step more as the overlap scheduler admits it" in capsys.readouterr().out


def test_the_api_takes_the_overlap_scheduler_as_the_cli_does(capsys):
    """Model.throughput(overlap_scheduler = "off") is `--overlap-scheduler off`; another word is refused."""
    import archcost
    from archcost.dsl.errors import ArchError

    model = archcost.load(SPEC)
    assert main(["throughput", SPEC, "--device", "h100-sxm", "--isl", "467", "--osl", "256", "--engine", "sglang",
                 "--concurrency", "16", "--overlap-scheduler", "off", "--json"]) == 0
    cli = json.loads(capsys.readouterr().out)
    api = model.throughput("h100-sxm", isl=467, osl=256, engine="sglang", concurrency=16, overlap_scheduler="off")
    assert (api.ttft_seconds, api["overlap"]) == (cli["ttft_seconds"], False)
    with pytest.raises(ArchError, match="`overlap_scheduler` is one of on, off"):
        model.throughput("h100-sxm", isl=467, osl=256, overlap_scheduler="yes")
