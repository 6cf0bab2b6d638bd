"""One model, one number (issue 45): a config imported with its defaults costs the model as the hand-written spec of
the same model does — parameters, prefill and decode FLOPs, state — because both default to the serving engines'
execution paths (absorbed MLA, fused kernels, routed experts); the import's check names the option words under
which it met transformers' eager code. Before, DeepSeek-V3 imported decoded B = 8 at S = 32K in 538 TFLOPs and
specs/deepseek-v3.arch in 5.04."""

from __future__ import annotations

import re

import pytest
from helpers import ROOT, compiled

from archcost.compiler.compilation import compile_text
from archcost.compiler.importer import import_config, read_config
from archcost.compiler.importer.reading.paths import TRANSFORMERS_PATHS
from archcost.compiler.numbers.evaluate import evaluate
from archcost.compiler.terms.scenario import Scenario

CONFIGS = ROOT / "tests" / "configs"
# config → the hand-written spec of the same model
BY_SCHEMA = {
    "qwen3-8b.json": "qwen3-8b", "llama-3.1-8b.json": "llama-3.1-8b", "mistral-7b-v0.3.json": "mistral-7b-v0.3",
    "qwen3-30b-a3b.json": "qwen3-30b-a3b", "deepseek-v3.json": "deepseek-v3",
    "published/deepseek-v3.json": "deepseek-v3", "published/gemma-2-9b-it.json": "gemma-2-9b",
    "published/gemma-3-27b-it.json": "gemma-3-27b", "published/gpt-oss-120b.json": "gpt-oss-120b",
    "published/gpt-oss-20b.json": "gpt-oss-20b", "published/llama-2-7b-hf.json": "llama-2-7b",
    "published/llama-4-scout-17b-16e-instruct.json": "llama-4-scout-17b-16e",
    "published/llama-4-maverick-17b-128e-instruct.json": "llama-4-maverick-17b-128e",
    "published/mixtral-8x7b-v0.1.json": "mixtral-8x7b", "published/mixtral-8x22b-v0.1.json": "mixtral-8x22b",
    "next/Kimi-K2-Instruct.json": "kimi-k2",
    "published/qwen2.5-1.5b.json": "qwen2.5-1.5b", "published/qwen2.5-7b.json": "qwen2.5-7b",
    "published/qwen3-235b-a22b.json": "qwen3-235b-a22b", "published/qwen3-32b-fp8.json": "qwen3-32b",
}
BY_MODELING_CODE = {
    "next/DeepSeek-V3.2.json": "deepseek-v3.2", "next/GLM-5.json": "glm-5", "next/LFM2-1.2B.json": "lfm2-1.2b",
    "next/MiMo-V2-Flash.json": "mimo-v2-flash", "next/MiniMax-M2.json": "minimax-m2",
    "next/NVIDIA-Nemotron-3-Nano-30B-A3B-BF16.json": "nemotron-3-nano-30b-a3b", "next/Qwen3.5-27B.json": "qwen3.5-27b",
    "next/Qwen3.5-397B-A17B.json": "qwen3.5-397b-a17b", "next/gemma-4-26B-A4B.json": "gemma-4-26b-a4b",
    "next/DeepSeek-V4-Flash.json": "deepseek-v4-flash",
}
# Differences each said where they arise, not silent:
# - the routers' score-correction bias, a buffer in transformers (the imported spec's header says so); the
#   hand-written specs count the checkpoint's tensor (router_bias = true): E values a scored MoE layer;
# - DeepSeek-V4-Flash's spec is the chapter's ledger, which counts SwiGLU's non-matrix work as 5 FLOPs a value;
#   the import counts V4's clamped SwiGLU (swiglu_limit: two clamps, 9 a value), as its modeling code computes.
ROUTER_BIAS = {"next/MiniMax-M2.json": 62 * 256, "next/DeepSeek-V4-Flash.json": 40 * 256}
CLAMPED_SWIGLU = {"next/DeepSeek-V4-Flash.json": 4}
SHAPES = [("prefill", Scenario(B=2, P=1000)), ("decode", Scenario(B=8, S=32_768))]


def pairs() -> list:
    by_schema = [pytest.param(config, spec, id=spec + "-" + config.split("/")[0].removesuffix(".json"))
                 for config, spec in BY_SCHEMA.items()]
    return by_schema + [pytest.param(config, spec, id=spec, marks=pytest.mark.long)  # transformers builds each
                        for config, spec in BY_MODELING_CODE.items()]


@pytest.mark.parametrize(("config", "spec"), pairs())
def test_an_import_costs_the_model_as_its_hand_written_spec_does(config, spec):
    text = import_config(read_config(CONFIGS / config))
    imported, written = compile_text(text), compiled(spec)
    for phase, scenario in SHAPES:
        ours, theirs = evaluate(imported, phase, scenario), evaluate(written, phase, scenario)
        assert ours.params + ROUTER_BIAS.get(config, 0) == theirs.params, phase
        assert ours.flops_matrix == theirs.flops_matrix, phase
        assert ours.state_bytes == theirs.state_bytes, phase
        clamps = CLAMPED_SWIGLU.get(config, 0) * _routed_expert_values(written, phase, scenario)
        assert ours.flops_nonmatrix == theirs.flops_nonmatrix + clamps, phase
    if config in ROUTER_BIAS:
        assert f"e_score_correction_bias, {ROUTER_BIAS[config]:,} values" in text.replace("\n# ", " ")


def _routed_expert_values(compiled_spec, phase: str, scenario: Scenario) -> int:
    """The activation values the routed experts compute in a call: rows × top × f, summed over the MoE layers."""
    from archcost.compiler.numbers.evaluate import by_op

    return sum(op.flops_matrix_all_layers // 6 // int(re.search(r"(\d+)×(\d+)", op.shape).group(1))
               for op in by_op(compiled_spec, phase, scenario) if op.kind == "experts" and "routed" in op.op)


@pytest.mark.long
@pytest.mark.parametrize("config", list(BY_MODELING_CODE))
def test_the_check_names_the_words_it_met_transformers_under(config):
    text = import_config(read_config(CONFIGS / config))
    header = " ".join(line.removeprefix("# ") for line in text.splitlines() if line.startswith("#"))
    checked = re.search(r"Checked against that model with --attention rectangle((?: --option \S+=\S+)*)", header)
    assert checked, header
    declared = {name for name in re.findall(r"^\s*option (\w+) =", text, re.M) if name in TRANSFORMERS_PATHS}
    assert set(re.findall(r"--option (\w+)=", checked.group(1))) == declared
    for name in declared:  # the default is the serving engines' word, never transformers'
        default = re.search(rf"^\s*option {name} = (\w+)", text, re.M).group(1)
        assert default != TRANSFORMERS_PATHS[name], name
