"""Each primitive's cost rule against arithmetic done by hand (the comment shows the sum)."""

from __future__ import annotations

from archcost.compiler.compilation import compile_text
from archcost.compiler.numbers.evaluate import evaluate, state_bytes_at
from archcost.compiler.terms.scenario import Scenario

WINDOW = """
model "Window" {
  linear q: 64 -> 64
  linear kv_in: 64 -> 128, from = q
  cache kv: window(4), width = 128, kind = window, from = kv_in
  attend: heads = 1, qk = 64, v = 64, over = window(4), from = q
}
"""


def test_window_pairs_and_reads():
    model = compile_text(WINDOW)
    # prefill of 6 tokens: queries see 1, 2, 3, 4, 4, 4 positions = 18 pairs; 2·(64 + 64) FLOPs each
    assert evaluate(model, "prefill", Scenario(P=6)).context_flops == 18 * 2 * 128
    # a decode after 10 cached positions sees the 4 positions of its window and reads 4 old entries
    decode = evaluate(model, "decode", Scenario(S=10))
    assert decode.context_flops == 4 * 256
    assert decode.read_bytes["state"] == 4 * 128 * 2          # min(S, w) entries of 128 bf16 values
    assert state_bytes_at(model, 3) == 3 * 256 and state_bytes_at(model, 1000) == 4 * 256
    assert decode.state_fixed_bytes == 4 * 256 and decode.kv_bytes_per_token == 0


BLOCKS = """
model "Blocks" {
  linear q: 64 -> 64
  cache compressed: per_block(4), width = 64, kind = compressed, buffer = 250, from = q
  attend: heads = 2, qk = 32, v = 32, over = all(10), from = q
}
"""


def test_per_block_entries_buffer_and_writes():
    model = compile_text(BLOCKS)
    # ⌊H/4⌋ complete entries of 64 bf16 values, plus the incomplete block's buffer of 250 fp32 values
    assert state_bytes_at(model, 11) == 2 * 128 + 1000
    # a decode at S = 7 completes the block 4..7: one entry written; at S = 8 none
    assert evaluate(model, "decode", Scenario(S=7)).write_bytes["state"] == 128
    assert evaluate(model, "decode", Scenario(S=8)).write_bytes["state"] == 0
    report = evaluate(model, "decode", Scenario(S=8))
    assert report.kv_bytes_per_token == 32           # 128 bytes per 4 positions
    assert report.context_flops == 10 * 2 * 2 * 64   # all(10): every query reads 10 entries


RECURRENT = """
model "Delta" {
  precision state = fp32
  linear qkv: 64 -> 3 * 4 * 8
  recurrent delta: heads = 4, dk = 8, dv = 8, prefill = gated_delta, chunk = 16
}
"""


def test_recurrent_step_chunk_and_temporaries():
    model = compile_text(RECURRENT)
    decode = evaluate(model, "decode", Scenario(S=100))
    # one step: 6·dk·dv per head = 6·64·4
    assert decode.flops_matrix - 2 * 64 * 96 == 6 * 64 * 4
    # state 4 heads × 8×8 fp32, read and written once per call
    assert decode.state_fixed_bytes == 4 * 64 * 4 == decode.read_bytes["state"] == decode.write_bytes["state"]
    prefill = evaluate(model, "prefill", Scenario(P=40))
    # chunked: 6·dk·dv + 4·C·dk + 2·C·dv = 384 + 512 + 256 per head per token, 40 tokens, 4 heads
    assert prefill.flops_matrix - 40 * 2 * 64 * 96 == 40 * 4 * (384 + 512 + 256)
    # temporaries: ⌈40/16⌉ = 3 chunk states of 8×8 fp32 and 40 rows of 16 bf16 scores, per head
    assert prefill.temp_bytes_peak == 4 * (3 * 64 * 4 + 40 * 16 * 2)


def test_an_idle_table_is_held_and_never_read():
    # a 1000 × 64 table: 64,000 parameters either way; looked up, 5 tokens read 5 rows of 64 bf16 values
    read = evaluate(compile_text('model "A" {\n  lookup table: 1000 -> 64\n}\n'), "prefill", Scenario(P=5))
    idle = evaluate(compile_text('model "A" {\n  lookup table: 1000 -> 64, idle = true\n}\n'), "prefill",
                    Scenario(P=5))
    assert read.params == idle.params == 64_000
    assert read.read_bytes["lookups"] == 5 * 64 * 2 and idle.read_bytes["lookups"] == 0
