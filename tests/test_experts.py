"""Experts: granularity (§2.5.1), routing as a scenario input (§2.4.2, Example 2-4), hash routing."""

from __future__ import annotations

import math

import pytest
from helpers import compiled

from archcost.compiler.compilation import compile_text
from archcost.compiler.numbers.evaluate import by_op, evaluate
from archcost.compiler.terms.scenario import Conventions, Scenario
from archcost.dsl.errors import ArchError

GRANULARITIES = {  # §2.5.1: the same expert parameters and work, cut into different shapes
    "128 × 1536, top 8": "experts = 128, top = 8, f = 1536",
    "64 × 3072, top 4": "experts = 64, top = 4, f = 3072",
    "256 × 768, top 16": "experts = 256, top = 16, f = 768",
}


def _variant(shape: str):
    return compiled("qwen3-235b-a22b", (("experts = 128, top = 8, f = 1536", GRANULARITIES[shape]),))


def test_granularity_keeps_expert_params_and_flops_but_not_the_router():
    reports = {s: evaluate(_variant(s), "prefill", Scenario(P=16)) for s in GRANULARITIES}
    routed = {r.params_by_component["routed_experts"] for r in reports.values()}
    # matrix work of the experts: 2·(m·k)·3·d·f is the same when k·f is (the k-way weighted sum of
    # expert outputs is non-matrix work and does grow with k)
    expert_flops = {sum(o.flops_matrix_all_layers for o in by_op(_variant(s), "prefill", Scenario(P=16))
                        if o.kind == "experts") for s in GRANULARITIES}
    assert len(routed) == 1 and expert_flops == {454_192_791_552}
    # the router is d × E: 94 layers × 4096 × E
    others = {s: r.params_by_component["other"] for s, r in reports.items()}
    assert others["256 × 768, top 16"] - others["128 × 1536, top 8"] == 94 * 4096 * 128
    assert others["128 × 1536, top 8"] - others["64 × 3072, top 4"] == 94 * 4096 * 64


MOE = """
use std.ffn.moe
model "Toy MoE" {{
  lookup tokens: 1000 -> 64
  moe(64, experts = 16, top = 2, f = 32, router = {router})
}}
"""


def test_hash_routing_has_no_router_matrix():
    scored = evaluate(compile_text(MOE.format(router="score")), "prefill", Scenario(P=10))
    hashed = evaluate(compile_text(MOE.format(router="hash")), "prefill", Scenario(P=10))
    # the router is 64 × 16: 2·10·64·16 matrix FLOPs and 1,024 parameters, gone under hash routing
    assert scored.flops_matrix - hashed.flops_matrix == 2 * 10 * 64 * 16
    assert scored.params - hashed.params == 64 * 16


@pytest.mark.parametrize("batch", [1, 4, 64])
def test_random_routing_expects_distinct_experts(batch):
    model = compile_text(MOE.format(router="score"), conventions=Conventions(routing="random"))
    use = evaluate(model, "decode", Scenario(B=batch, S=10)).experts[0]
    # E·(1 − (1 − k/E)^m) for m = B independent tokens
    assert use.distinct_experts == pytest.approx(16 * (1 - (1 - 2 / 16) ** batch))
    assert use.read_bytes_per_layer == pytest.approx(use.distinct_experts * 3 * 64 * 32 * 2)
    assert math.isclose(use.routed_rows, 2 * batch)


def test_precision_role_of_a_component_sets_the_format_of_its_matrices():
    """`precision routed_experts = mxfp4`: gpt-oss's checkpoint stores its experts in MXFP4 (4.25 bits a value)
    and every other matrix in bf16; a role naming a component the model lacks is a misspelling (E210)."""
    spec = ('use std.embedding\nuse std.ffn.moe\nmodel "m" {{\n  precision weights = bf16, {role}\n'
            '  embedding(1000, 64)\n  moe(64, experts = 4, top = 2, f = 128)\n  lm_head(64, 1000)\n}}\n')
    bf16 = evaluate(compile_text(spec.format(role="kv = bf16")), "decode", Scenario()).weight_bytes
    mxfp4 = evaluate(compile_text(spec.format(role="routed_experts = mxfp4")), "decode", Scenario()).weight_bytes
    experts = 4 * 3 * 64 * 128
    assert bf16 - mxfp4 == 2 * experts - experts * (4 + 8 / 32) / 8
    with pytest.raises(ArchError) as caught:
        compile_text(spec.format(role="dense_ffn = mxfp4"))
    assert caught.value.codes == ["E210"]
