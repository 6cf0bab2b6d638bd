"""Sublayers side by side on one norm and one residual (issue 25): GPT-J's and Phi-2's attention beside the
MLP, Falcon-H1's attention beside Mamba-2. The oracle is the same layer written one after the other: the
matrices and the cache are the same, the side-by-side layer has one norm fewer and adds both sublayers into
the stream with two adds an element."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from archcost.compiler.compilation import compile_text
from archcost.compiler.numbers.evaluate import evaluate
from archcost.compiler.render.dot import to_dot
from archcost.compiler.terms.scenario import Scenario
from archcost.dsl.errors import ArchError

D, F, LAYERS = 64, 256, 3

SIDE_BY_SIDE = """use std.embedding
use std.attention.gqa
use std.attention.mamba2
use std.ffn.mlp

block parallel(d) {
  layernorm(d) as pre_norm
  gqa(d, q_heads = 4, kv_heads = 2, head_dim = 16, norm = none, residual_add = false) as attn
  SECOND
  residual(d, inputs = 3, from = (input, attn, second))
}

model "Side by side" {
  d = 64
  embedding(100, d)
  repeat 3 as layers {
    parallel(d) as layer
  }
  layernorm(d) as final_norm
  lm_head(d, 100)
}
"""
IN_TURN = """use std.embedding
use std.attention.gqa
use std.attention.mamba2
use std.ffn.mlp

model "In turn" {
  d = 64
  embedding(100, d)
  repeat 3 as layers {
    gqa(d, q_heads = 4, kv_heads = 2, head_dim = 16, norm = layernorm) as attn
    SECOND
  }
  layernorm(d) as final_norm
  lm_head(d, 100)
}
"""
SECONDS = {
    "mlp": ("gelu_mlp(d, f = 256, norm = none, residual_add = false, from = pre_norm) as second",
            "gelu_mlp(d, f = 256) as second"),
    "mamba2": ("mamba2(d, heads = 4, head_dim = 16, state = 16, norm = none, residual_add = false, "
               "from = pre_norm) as second",
               "mamba2(d, heads = 4, head_dim = 16, state = 16, norm = layernorm) as second"),
}
LAYERNORM_FLOPS = 7  # per element (std.norm)


def both(second: str):
    beside, in_turn = SECONDS[second]
    return (compile_text(SIDE_BY_SIDE.replace("SECOND", beside)),
            compile_text(IN_TURN.replace("SECOND", in_turn)))


@settings(max_examples=20, deadline=None)
@given(second=st.sampled_from(sorted(SECONDS)), batch=st.integers(1, 3), cached=st.integers(0, 40),
       new=st.integers(1, 40))
def test_side_by_side_costs_the_layer_in_turn_less_one_norm(second, batch, cached, new):
    beside, in_turn = both(second)
    phase = "decode" if new == 1 and cached else "prefill"
    scenario = Scenario(B=batch, S=cached, P=new)
    a, b = evaluate(beside, phase, scenario), evaluate(in_turn, phase, scenario)
    assert a.params == b.params - LAYERS * 2 * D                     # one LayerNorm (scale and shift) fewer
    assert a.flops_matrix == b.flops_matrix and a.state_bytes == b.state_bytes
    # one norm fewer; the adds are the same count: x + a + b is two adds, as two residuals are
    assert a.flops_nonmatrix == b.flops_nonmatrix - LAYERS * LAYERNORM_FLOPS * D * batch * new


def test_the_diagram_draws_both_sublayers_reading_the_one_norm():
    beside, _ = both("mamba2")
    dot = to_dot(beside)
    assert '"layers.layer.pre_norm.norm" -> "layers.layer.attn.q"' in dot
    assert '"layers.layer.pre_norm.norm" -> "layers.layer.second.in_proj"' in dot
    for source in ("embedding.table", "layers.layer.attn.o", "layers.layer.second.out_proj"):
        assert f'"{source}" -> "layers.layer.residual.add"' in dot


def test_a_residual_adds_at_least_one_sublayer():
    text = SIDE_BY_SIDE.replace("SECOND", SECONDS["mlp"][0]).replace("inputs = 3", "inputs = 1")
    with pytest.raises(ArchError) as refused:
        compile_text(text)
    assert "at least one sublayer" in refused.value.diagnostics[0].message


def test_a_called_blocks_tensor_is_named_from_outside():
    """Issue 25: a tensor inside a called block could not be named from outside (E100), so LongCat-Flash's
    shortcut-connected MoE had to be written op by op. `attn.o` names the attention's output projection."""
    from archcost.compiler.compilation import compile_text
    from archcost.dsl.errors import ArchError

    spec = ('use std.embedding\nuse std.attention.gqa\nmodel "Dotted" {\n  embedding(1000, 64)\n'
            '  gqa(64, q_heads = 4, kv_heads = 4, head_dim = 16) as attn\n  linear probe: 64 -> 8, from = attn.o\n}\n')
    model = compile_text(spec)
    assert list(model.graph.predecessors("probe")) == ["attn.o"]
    with pytest.raises(ArchError) as caught:
        compile_text(spec.replace("attn.o", "attn.zz"))
    assert caught.value.codes == ["E207"] and "attn.v" in caught.value.diagnostics[0].hint
