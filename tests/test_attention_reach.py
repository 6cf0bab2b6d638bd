"""Chunked local attention and per-score costs (issue 13): closed forms equal a position-by-position sum."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from archcost.compiler.compilation import compile_text
from archcost.compiler.numbers.evaluate import evaluate, state_bytes_at
from archcost.compiler.terms.scenario import Conventions, Scenario

SPEC = """model "Chunked" {{
  lookup embed: 100 -> 64
  cache kv: chunk({chunk}), width = 64
  lookup q: 100 -> 32, from = tokens
  attend: heads = 2, qk = 16, v = 16, over = chunk({chunk}), score_flops = {score}, state = kv
}}
"""


def seen(position: int, chunk: int) -> int:
    """Keys a query at 0-based `position` sees: its own block, up to itself."""
    return position % chunk + 1


@settings(max_examples=60, deadline=None)
@given(chunk=st.integers(1, 9), cached=st.integers(0, 30), new=st.integers(1, 30), batch=st.integers(1, 3),
       score=st.integers(0, 3))
def test_chunked_pairs_are_the_per_position_sum(chunk, cached, new, batch, score):
    model = compile_text(SPEC.format(chunk=chunk, score=score))
    report = evaluate(model, "prefill", Scenario(B=batch, S=cached, P=new))
    pairs = batch * sum(seen(t, chunk) for t in range(cached, cached + new))
    assert report.context_flops == 2 * 2 * (16 + 16) * pairs            # QKᵀ and AV of 2 heads per pair
    assert report.flops_nonmatrix == (5 + score) * 2 * pairs            # softmax and the soft-cap, per score
    assert report.read_bytes["state"] == batch * (cached % chunk) * 64 * 2  # the block held before the call
    assert state_bytes_at(model, cached + new, batch) == batch * ((cached + new) % chunk) * 64 * 2


def test_a_decode_restarts_at_the_chunk_boundary():
    """Llama 4's 8,192-position chunks: the query at 8,191 sees 8,192 keys, the one at 8,192 only itself."""
    model = compile_text(SPEC.format(chunk=8192, score=0))
    seen_keys = [evaluate(model, "decode", Scenario(S=s)).context_flops // (2 * 2 * 32) for s in (8191, 8192, 8193)]
    assert seen_keys == [8192, 1, 2]


def test_llama_4_scout_restarts_its_chunks_at_8192():
    """The spec itself: 36 chunked layers and 12 global ones, 40 query heads of 128 (2·40·(128 + 128) FLOPs a
    key). From S = 8,191 to 8,192 the chunked layers fall from 8,192 keys to 1, the global ones gain one; from
    8,192 to 8,193 every layer gains one key."""
    from helpers import compiled

    scout = compiled("llama-4-scout-17b-16e")
    flops = [evaluate(scout, "decode", Scenario(S=s)).context_flops for s in (8191, 8192, 8193)]
    per_key = 2 * 40 * (128 + 128)
    assert flops[1] - flops[0] == per_key * (12 * 1 - 36 * 8191)
    assert flops[2] - flops[1] == per_key * 48
    assert flops[1] == per_key * (36 * 1 + 12 * 8193)


GQA = """use std.embedding
use std.attention.gqa
model "W" {{
  embedding(100, 64)
  gqa(64, q_heads = 4, kv_heads = 2, head_dim = 16, window = {window}, chunk = {chunk}, sinks = {sinks},
      softcap = {softcap}) as attn
}}
"""


def keys_seen(position: int, window: int, chunk: int) -> int:
    """Keys the query at 0-based `position` scores: the last `window`, its own chunk, or everything before."""
    if window:
        return min(position + 1, window)
    return position % chunk + 1 if chunk else position + 1


@settings(max_examples=60, deadline=None)
@given(mechanism=st.sampled_from(["window", "chunk", "causal"]), size=st.integers(1, 9), sinks=st.booleans(),
       softcap=st.sampled_from([0, 30]), cached=st.integers(0, 25), new=st.integers(1, 25), batch=st.integers(1, 3))
def test_windows_chunks_sinks_and_soft_caps_are_the_per_position_sum(mechanism, size, sinks, softcap, cached, new,
                                                                     batch):
    """gqa's mechanisms against a sum over positions: pairs by window or chunk, a soft-cap's 3 FLOPs on every
    score, a sink's 5 per query and head (gpt-oss) and its one logit per head."""
    window, chunk = (size if mechanism == "window" else 0), (size if mechanism == "chunk" else 0)
    shape = Scenario(B=batch, S=cached, P=new)
    built = compile_text(GQA.format(window=window, chunk=chunk, sinks=str(sinks).lower(), softcap=softcap))
    plain = compile_text(GQA.format(window=window, chunk=chunk, sinks="false", softcap=0))
    report, base = evaluate(built, "prefill", shape), evaluate(plain, "prefill", shape)
    pairs = batch * sum(keys_seen(t, window, chunk) for t in range(cached, cached + new))
    assert report.context_flops == 2 * 4 * (16 + 16) * pairs
    assert report.flops_nonmatrix - base.flops_nonmatrix == (3 * 4 * pairs if softcap else 0) + \
        (5 * 4 * batch * new if sinks else 0)
    assert report.params - base.params == (4 if sinks else 0)


def test_the_eager_rectangle_scores_what_the_cache_holds():
    """Under the rectangle convention (transformers' eager kernel), a decode scores min(S, c − 1) + 1 keys."""
    model = compile_text(SPEC.format(chunk=8, score=0), conventions=Conventions(attention="rectangle"))
    assert [evaluate(model, "decode", Scenario(S=s)).context_flops // 128 for s in (3, 20)] == [4, 8]


def test_if_compares_numbers_known_when_the_spec_compiles():
    text = """model "C" {{
  d = {d}
  lookup t: 10 -> d
  if d >= 64 {{
    elementwise wide: width = d, params = 1
  }} else {{
    elementwise narrow: width = d, params = 2
  }}
}}
"""
    assert [evaluate(compile_text(text.format(d=d)), "decode", Scenario()).params - 10 * d for d in (64, 32)] == [1, 2]


def test_an_embedding_and_a_head_both_tied_is_refused():
    import pytest

    from archcost.dsl.errors import ArchError

    text = 'use std.embedding\nmodel "T" {\n  embedding(100, 64, tied = true)\n  lm_head(64, 100, tied = true)\n}\n'
    with pytest.raises(ArchError) as refused:
        compile_text(text)
    assert refused.value.codes == ["E219"] and "no op owns" in str(refused.value)


def test_active_parameters_count_k_of_e_experts():
    """Qwen3-30B-A3B: 48 layers of 128 experts, 8 routed per token, each 3·2048·768."""
    from helpers import compiled

    report = evaluate(compiled("qwen3-30b-a3b"), "decode", Scenario())
    per_expert = 3 * 2048 * 768
    assert report.params - report.params_active == 48 * (128 - 8) * per_expert


def test_llama_4_scout_decodes_show_the_chunk_restart():
    """36 chunked layers see their own chunk of 8,192 (8,192, 1, 2 keys at S = 8,191, 8,192, 8,193); the 12
    global layers see every position: 2·40·(128 + 128) FLOPs per key and head."""
    from helpers import compiled

    model = compiled("llama-4-scout-17b-16e")
    per_key = 2 * 40 * 256
    for history, chunked in ((8191, 8192), (8192, 1), (8193, 2)):
        context = evaluate(model, "decode", Scenario(S=history)).context_flops
        assert context == per_key * (36 * chunked + 12 * (history + 1))
