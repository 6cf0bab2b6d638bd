"""DeepSeek Sparse Attention (issue 25): causal top-k selection and the lightning indexer, against sums over
positions.

DeepSeek-V3.2's config (tests/configs/next/DeepSeek-V3.2.json): 61 MLA layers of 128 heads reading the latent
cache (QKᵀ over 512 + 64, AV over 512: 2·128·(576 + 512) FLOPs a selected key), each query selecting
index_topk = 2,048 of the positions up to itself; the indexer's 64 heads of 128 score every causal pair
(2·64·128 FLOPs a pair). Issue 25 measured the old count (every prompt query at min(k, S + P) keys) 35.6
TFLOPs above the causal one at an 8K prompt.
"""

from __future__ import annotations

from functools import cache

from helpers import compiled
from hypothesis import given, settings
from hypothesis import strategies as st

from archcost.compiler.numbers.evaluate import evaluate
from archcost.compiler.terms.scenario import Conventions, Scenario

LAYERS, TOP_K = 61, 2048
PER_SELECTED_KEY = 2 * 128 * (576 + 512)
PER_SCORED_PAIR = 2 * 64 * 128


@cache
def v32(attention: str = "as_written"):
    return compiled("deepseek-v3.2", conventions=Conventions(attention=attention))


def context_flops(cached: int, new: int, batch: int = 1) -> int:
    """The per-position sum: the query at position t (1-based, counting the cached ones) selects min(k, t)
    keys and its indexer scores all t."""
    positions = range(cached + 1, cached + new + 1)
    selected = sum(min(TOP_K, t) for t in positions)
    scored = sum(positions)
    return batch * LAYERS * (PER_SELECTED_KEY * selected + PER_SCORED_PAIR * scored)


@settings(max_examples=25, deadline=None)
@given(cached=st.integers(0, 6000), new=st.integers(1, 5000), batch=st.integers(1, 3))
def test_prefill_counts_each_querys_causal_selection(cached, new, batch):
    phase = "decode" if new == 1 and cached else "prefill"
    report = evaluate(v32(), phase, Scenario(B=batch, S=cached, P=new))
    assert report.context_flops == context_flops(cached, new, batch)


def test_an_8k_prompt_counts_min_2048_i_keys_per_query():
    assert evaluate(v32(), "prefill", Scenario(P=8192)).context_flops == context_flops(0, 8192)


def test_a_decode_after_8k_reads_2048_keys():
    decode = evaluate(v32(), "decode", Scenario(S=8192)).context_flops
    assert decode == LAYERS * (PER_SELECTED_KEY * 2048 + PER_SCORED_PAIR * 8193)


def test_the_rectangle_scores_every_held_key_as_the_eager_kernel_does():
    """`--attention rectangle` is transformers' eager kernel: every query scores all S + P keys it holds, then
    masks all but the k best (issue 45; before, each query was counted at min(k, S + P) keys, 35.6 TFLOPs above
    the causal selection at P = 8,192): 890.8 TFLOPs above it, every pair of the square less the selection."""
    causal = evaluate(v32(), "prefill", Scenario(P=8192)).flops_matrix
    rectangle = evaluate(v32("rectangle"), "prefill", Scenario(P=8192)).flops_matrix
    selected = sum(min(TOP_K, t) for t in range(1, 8193))
    assert rectangle - causal == LAYERS * PER_SELECTED_KEY * (8192 * 8192 - selected)
    assert round((rectangle - causal) / 1e12, 1) == 890.8
    step = evaluate(v32("rectangle"), "decode", Scenario(S=2048)).flops_matrix
    assert step - evaluate(v32(), "decode", Scenario(S=2048)).flops_matrix == LAYERS * PER_SELECTED_KEY  # 2,049


def test_the_index_keys_are_cached_in_fp8_with_a_scale_per_128():
    """Per token and layer: the latent and the key branch in BF16, 2·(512 + 64) B, and the index key in FP8
    with one FP32 scale, 128 + 4 B (DeepSeek-V3.2-Exp's inference/model.py)."""
    assert evaluate(v32(), "decode", Scenario(S=1)).kv_bytes_per_token == LAYERS * (2 * 576 + 132)


TOP_OR_CAUSAL = """use std.embedding
use std.attention.gqa
model "m" {{
  embedding(100, 64)
  gqa(64, q_heads = 4, kv_heads = 2, head_dim = 16, over = {over})
}}
"""


@given(cached=st.integers(0, 40), new=st.integers(1, 40), batch=st.integers(1, 3))
@settings(max_examples=40, deadline=None)
def test_an_eager_kernel_scores_every_held_position_before_it_masks_the_top_k(cached, new, batch):
    """Issue 45: under `--attention rectangle` (transformers' eager DeepseekV32 and GLM-5 attention, which
    scores every key it holds and masks all but the k best) a decode at S = 2,048 counted top(2048) positions
    where the kernel scores 2,049: V3.2 came out 4,997,120 FLOPs short. Oracle: the rectangle of a causal layer."""
    from archcost.compiler.compilation import compile_text

    rectangle = Conventions(attention="rectangle")
    phase = "decode" if new == 1 and cached else "prefill"
    figures = [evaluate(compile_text(TOP_OR_CAUSAL.format(over=over), conventions=rectangle), phase,
                        Scenario(B=batch, S=cached, P=new)).flops_matrix for over in ("top(8)", "causal")]
    assert figures[0] == figures[1]
