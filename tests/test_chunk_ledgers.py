"""Chunked prefill ledgers at chunk boundaries: every closed form equals a chunk-by-chunk sum, so a prompt that
crosses a boundary changes the total by exactly the ledger's per-chunk terms (issue 15)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from archcost.compiler.compilation import compile_text
from archcost.compiler.numbers.evaluate import evaluate
from archcost.compiler.terms.scenario import Scenario

SPEC = """model "chunks" {{
  lookup embed: 100 -> {width}
  recurrent state: heads = 3, dk = {dk}, dv = {dv}, prefill = {algorithm}, chunk = {chunk}, chunk_tail = {tail},
      update_as = nonmatrix
}}
"""


def chunk_by_hand(algorithm: str, c: int, dk: int, dv: int) -> int:
    """One head, one chunk of c positions, written out product by product (shared/reference/conventions.md)."""
    if algorithm == "gated_delta":  # K_β·Kᵀ, Q·Kᵀ (c×c×dk each), W·S, Q·S, Kᵀ·v_new (c·dk·dv), attn·v_new (c×c×dv)
        return 2 * c * c * dk * 2 + 2 * c * c * dv + 3 * 2 * c * dk * dv
    lower, causal = c * (c - 1) // 2, c * (c + 1) // 2  # KDA: valid triangles only, with the solve
    return 2 * lower * dk + 2 * lower * (dk + dv) + 3 * 2 * c * dk * dv + 2 * causal * dk + 2 * causal * dv


def sizes(prompt: int, chunk: int, tail: str) -> list[int]:
    """The chunks a ledger costs, position by position: whole chunks, then the rest as the ledger says."""
    chunks = [chunk] * (prompt // chunk)
    rest = prompt % chunk
    if rest and tail == "pad":
        chunks.append(chunk)
    elif rest and tail == "exact":
        chunks.append(rest)
    return chunks


def brute_force(algorithm: str, prompt: int, chunk: int, tail: str, dk: int, dv: int, batch: int) -> int:
    heads = 3
    if tail == "average":  # every position at a whole chunk's cost per position
        return batch * heads * prompt * chunk_by_hand(algorithm, chunk, dk, dv) // chunk
    return batch * heads * sum(chunk_by_hand(algorithm, c, dk, dv) for c in sizes(prompt, chunk, tail))


@settings(max_examples=60, deadline=None)
@given(algorithm=st.sampled_from(["gated_delta", "kda"]), tail=st.sampled_from(["average", "pad", "exact"]),
       chunk=st.integers(1, 9), prompt=st.integers(2, 40), dk=st.sampled_from([2, 4]), dv=st.sampled_from([2, 8]),
       batch=st.integers(1, 3))
def test_closed_form_is_the_chunk_by_chunk_sum(algorithm, tail, chunk, prompt, dk, dv, batch):
    width = 2 * 3 * dk + 3 * dv  # what the recurrent op reads: Q and K of 3 heads, V of 3 heads
    model = compile_text(SPEC.format(algorithm=algorithm, tail=tail, chunk=chunk, dk=dk, dv=dv, width=width))
    flops = evaluate(model, "prefill", Scenario(B=batch, P=prompt)).flops_matrix
    assert flops == brute_force(algorithm, prompt, chunk, tail, dk, dv, batch)


def test_crossing_a_boundary_adds_the_ledgers_per_chunk_terms():
    """At C = 64, dk = dv = 128 (one head): the 65th position costs a whole padded chunk, a chunk of one, or
    a whole chunk's per-position share, as `pad`, `exact` and `average` say."""
    def prefill(algorithm, tail, prompt):
        text = SPEC.format(algorithm=algorithm, tail=tail, chunk=64, dk=128, dv=128, width=9 * 128)
        return evaluate(compile_text(text), "prefill", Scenario(P=prompt)).flops_matrix // 3
    for algorithm in ("gated_delta", "kda"):
        whole = chunk_by_hand(algorithm, 64, 128, 128)
        assert prefill(algorithm, "pad", 65) - prefill(algorithm, "pad", 64) == whole
        assert prefill(algorithm, "exact", 65) - prefill(algorithm, "exact", 64) == chunk_by_hand(
            algorithm, 1, 128, 128
        )
        assert prefill(algorithm, "average", 65) - prefill(algorithm, "average", 64) == whole // 64
    assert chunk_by_hand("kda", 64, 128, 128) == 64 * 139_136        # conventions.md: 139,136 per token
    assert chunk_by_hand("gated_delta", 64, 128, 128) == 64 * 147_456  # and 147,456 for the gated delta rule
