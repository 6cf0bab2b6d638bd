"""Per-layer inputs (std.per_layer, Gemma 4's Per-Layer Embeddings) and the side input a block reads as
`input.2`. The oracle is the same model written op by op in the model's own scope, where every tensor is
in reach: the two must cost the same at every request shape. transformers' own Gemma 4 is the other
reference: the enumeration of the import from the modeling code checks gemma4 and gemma4_text against it
(tests/test_modeling_code.py)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from archcost.compiler.compilation import compile_text
from archcost.compiler.numbers.evaluate import evaluate
from archcost.compiler.terms.scenario import Scenario
from archcost.dsl.errors import ArchError

WITH_BLOCKS = """use std.embedding
use std.per_layer
use std.ffn.swiglu

model "Per-layer inputs" {
  d = 64
  embedding(1000, d)
  per_layer_inputs(1000, 3, 16, d) as per_layer
  repeat 3 as layers {
    swiglu(d, f = 128) as ffn
    per_layer_input(d, 16, 3, from = (previous, per_layer.inputs))
  }
  lm_head(d, 1000)
}
"""

OP_BY_OP = """use std.embedding
use std.norm
use std.activation
use std.tensor
use std.ffn.swiglu

model "Per-layer inputs, op by op" {
  d = 64
  embedding(1000, d)
  lookup table: 1000 -> 48, from = tokens, component = embedding_output
  linear projection: d -> 48, from = embedding, component = other
  rmsnorm(16, heads = 3) as projection_norm
  elementwise inputs: width = 48, flops = 192, inputs = 2, from = (projection_norm, table), component = other
  none(d, from = embedding)
  repeat 3 as layers {
    swiglu(d, f = 128) as ffn
    linear gate: d -> 16, component = other
    gelu(16) as gate_activation
    slice(48, 16, from = inputs) as own_input
    elementwise gated: width = 16, flops = 16, inputs = 2, from = (gate_activation, own_input), component = other
    linear back: 16 -> d, component = other
    rmsnorm(d) as post_norm
    residual(d, from = (ffn, previous))
  }
  lm_head(d, 1000)
}
"""

FIELDS = ("params", "params_by_component", "params_active_no_embedding", "flops_matrix", "flops_nonmatrix",
          "state_bytes", "read_bytes", "write_bytes")


@pytest.fixture(scope="module")
def models():
    return compile_text(WITH_BLOCKS, name="blocks"), compile_text(OP_BY_OP, name="ops")


@settings(max_examples=25, deadline=None)
@given(batch=st.integers(1, 8), cached=st.integers(0, 4096), new=st.integers(1, 512))
def test_blocks_cost_what_the_ops_cost(models, batch, cached, new):
    blocks, ops = models
    for phase in ("prefill", "decode"):
        scenario = Scenario(B=batch, S=cached, P=1 if phase == "decode" else new)
        mine, theirs = evaluate(blocks, phase, scenario), evaluate(ops, phase, scenario)
        for field in FIELDS:
            assert getattr(mine, field) == getattr(theirs, field), (phase, field)


def test_the_per_layer_matrices_are_counted_once_a_layer(models):
    blocks, _ = models
    plain = compile_text(WITH_BLOCKS.replace("    per_layer_input(d, 16, 3, from = (previous, per_layer.inputs))\n", "")
                         .replace("  per_layer_inputs(1000, 3, 16, d) as per_layer\n", ""), name="plain")
    added = evaluate(blocks, "prefill", Scenario(P=1)).params - evaluate(plain, "prefill", Scenario(P=1)).params
    # the table 1000·48, the projection 64·48, its norm 16; per layer the gate and back 2·64·16, the norm 64
    assert added == 1000 * 48 + 64 * 48 + 16 + 3 * (2 * 64 * 16 + 64)


def test_a_side_input_the_call_does_not_pass_is_named():
    text = WITH_BLOCKS.replace("from = (previous, per_layer.inputs)", "from = previous")
    with pytest.raises(ArchError) as raised:
        compile_text(text, name="one input")
    first = raised.value.diagnostics[0]
    assert first.code == "E207" and "input.2" in first.message
