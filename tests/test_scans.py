"""The state-space and linear-attention scans (issue 13): each prefill ledger of `recurrent` against a loop over
its blocks and positions, P and S crossing block boundaries (Mamba-1's step per token, Mamba-2's padded SSD
chunks, MiniMax's lightning blocks)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from archcost.compiler.compilation import compile_text
from archcost.compiler.numbers.evaluate import evaluate
from archcost.compiler.terms.scenario import Scenario

SCAN = """model "Scan" {{
  lookup t: 10 -> {width}
  recurrent r: heads = {heads}, dk = {dk}, dv = {dv}, update = {update}, update_as = matrix, prefill = {prefill},
      chunk = {chunk}, chunk_tail = {tail}, first_token = {first}
}}
"""
LEDGERS = {"mamba": ("stepwise", "average", "step", 2), "mamba2": ("ssd", "pad", "chunk", 2),
           "lightning": ("lightning", "exact", "history", 4)}


def looped(ledger: str, heads: int, dk: int, dv: int, chunk: int, batch: int, cached: int, new: int) -> int:
    """Matrix FLOPs of one call, block by block and position by position."""
    prefill, _, _, update = LEDGERS[ledger]
    step = heads * update * dk * dv  # one token through the recurrent step
    if prefill == "stepwise" or (prefill == "ssd" and new == 1 and cached) or (prefill == "lightning" and cached):
        return batch * new * step
    total = 0
    if prefill == "ssd":  # whole chunks, the last padded; then the (n+1)² state passing
        blocks = 0
        for _ in range(0, new, chunk):
            blocks += 1
            total += chunk * heads * (2 * chunk * (dk + dv) + 4 * dk * dv)
        total += heads * 2 * (blocks + 1) ** 2 * dk * dv
    else:  # lightning: blocks of `chunk`, the last at its own size
        for start in range(0, new, chunk):
            size = min(chunk, new - start)
            total += heads * (2 * size * size * (dk + dv) + 4 * size * dk * dv)
    return batch * total


@settings(max_examples=120, deadline=None)
@given(ledger=st.sampled_from(sorted(LEDGERS)), heads=st.integers(1, 3), dk=st.integers(1, 4), dv=st.integers(1, 4),
       chunk=st.integers(1, 8), batch=st.integers(1, 2), cached=st.integers(0, 20), new=st.integers(1, 20))
def test_scan_ledgers_equal_a_loop_over_blocks(ledger, heads, dk, dv, chunk, batch, cached, new):
    prefill, tail, first, update = LEDGERS[ledger]
    text = SCAN.format(width=2 * heads * dk + heads * dv, heads=heads, dk=dk, dv=dv, update=update,
                       prefill=prefill, chunk=chunk, tail=tail, first=first)
    report = evaluate(compile_text(text), "prefill", Scenario(B=batch, S=cached, P=new))
    assert report.flops_matrix == looped(ledger, heads, dk, dv, chunk, batch, cached, new)
    assert report.state_bytes == batch * heads * dk * dv * 4  # fixed: fp32 state, whatever the history


def test_a_request_of_a_scan_sums_its_decodes():
    """A request's decodes (the step per token) add to its prefill exactly, the chunked prefill not repeated."""
    text = SCAN.format(width=2 * 2 * 3 + 2 * 3, heads=2, dk=3, dv=3, update=2, prefill="ssd", chunk=4, tail="pad",
                       first="chunk")
    model = compile_text(text)
    request = evaluate(model, "request", Scenario(P=9, G=6)).flops_matrix
    prefill = evaluate(model, "prefill", Scenario(P=9)).flops_matrix
    assert request == prefill + 5 * 2 * 2 * 3 * 3 and prefill == looped("mamba2", 2, 3, 3, 4, 1, 0, 9)
