"""One set of weights run many times: `loop N { ... }` (a looped or recurrent-depth model's passes) and calls
that `shares NAME` (a block called at several depths: Zamba's). Their oracles are specs written without them:
the same layers repeated (the work, reads and state) and the same layers once (the weights)."""

from __future__ import annotations

import json

import pytest

from archcost.compiler.cards.degrees import parse_layout
from archcost.compiler.cards.fleet import ranked
from archcost.compiler.cards.layout import layout_cards
from archcost.compiler.cli import main
from archcost.compiler.compilation import compile_text
from archcost.compiler.front.hardware import device, own_link
from archcost.compiler.numbers.evaluate import evaluate
from archcost.compiler.terms.scenario import Scenario
from archcost.dsl.errors import ArchError
from archcost.dsl.printer import canonical

SPEC = """use std.embedding
use std.attention.gqa
use std.ffn.moe

model "Looped" {{
  d = 512
  embedding(8000, d)
  gqa(d, q_heads = 8, kv_heads = 2, head_dim = 64) as first
  {word} {passes} as passes {{
    repeat {core} as core {{
      gqa(d, q_heads = 8, kv_heads = 2, head_dim = 64, window = 128) as attn
      moe(d, experts = 8, top = 2, f = 256) as ffn
    }}
  }}
  rmsnorm(d) as final_norm
  lm_head(d, 8000)
}}
"""
H100 = device("h100_sxm")


def spec(word: str, passes: int, core: int = 3) -> str:
    return SPEC.format(word=word, passes=passes, core=core)


@pytest.mark.parametrize("phase, scenario", [("prefill", Scenario(B=2, P=300)), ("decode", Scenario(B=4, S=1000)),
                                             ("request", Scenario(B=1, P=50, G=20))])
def test_a_loop_holds_its_weights_once_and_runs_every_pass(phase, scenario):
    looped, unrolled, once = (evaluate(compile_text(text), phase, scenario) for text in
                              (spec("loop", 4), spec("repeat", 4), spec("repeat", 1)))
    for name in ("params", "params_active", "weight_bytes"):
        assert getattr(looped, name) == getattr(once, name) != getattr(unrolled, name), name
    for name in ("flops_matrix", "flops_nonmatrix", "state_bytes"):  # each pass keeps its own window
        assert getattr(looped, name) == getattr(unrolled, name) != getattr(once, name), name
    assert looped.read_bytes == unrolled.read_bytes  # every pass reads its weights again


def test_a_loop_prints_as_written_and_draws_as_one_set_of_weights():
    text = spec("loop", 4)
    assert canonical(text) == text
    cluster = next(c for c in compile_text(text).ir.clusters.values() if c.label == "passes")
    assert (cluster.kind, cluster.times) == ("loop", 4)


def test_a_layout_splits_a_loop_over_tp_and_ep_but_refuses_pipeline_stages():
    looped, once = compile_text(spec("loop", 4)), compile_text(spec("repeat", 1))
    wire = own_link(H100.name)
    cards = [layout_cards(model, parse_layout("tp=2,ep=2"), "decode", Scenario(B=8, S=500), H100, wire).busiest
             for model in (looped, once)]
    assert cards[0].weight_bytes == cards[1].weight_bytes and cards[0].state_bytes > cards[1].state_bytes
    with pytest.raises(ArchError) as refused:
        layout_cards(looped, parse_layout("pp=2"), "decode", Scenario(B=8, S=500), H100, wire)
    assert refused.value.codes == ["E405"] and "loop" in refused.value.diagnostics[0].message
    assert all(fit.layout.pp == 1 for fit in ranked(looped, 8, H100, wire, 2048, 8))  # the search skips them


def test_a_loop_count_is_a_positive_integer():
    with pytest.raises(ArchError) as refused:
        compile_text(spec("loop", 0))
    assert refused.value.codes == ["E302"] and "loop count" in refused.value.diagnostics[0].message


def test_a_looped_model_trains_one_set_of_weights_over_every_pass(tmp_path, capsys):
    """Gradients and optimizer state are the weights' (once); activations and FLOPs every pass's."""
    trained_once_over_every_pass(tmp_path, capsys, spec("loop", 4), spec("repeat", 4), spec("repeat", 1))


def trained_once_over_every_pass(tmp_path, capsys, one_set: str, unrolled: str, once: str) -> None:
    """`train`'s card: the weights, gradients and optimizer state of `one_set` are `once`'s, its activations
    and FLOPs `unrolled`'s."""
    found = {}
    for name, text in {"one_set": one_set, "unrolled": unrolled, "once": once}.items():
        path = tmp_path / f"{name}.arch"
        path.write_text(text)
        assert main(["train", str(path), "--layout", "dp=8", "--device", "h100-sxm", "--seq", "2048",
                     "--global-batch", "64", "--json"]) == 0
        found[name] = json.loads(capsys.readouterr().out)["cards"][0]
    for key in ("params", "weight_bytes", "gradient_bytes", "optimizer_bytes"):
        assert found["one_set"][key] == found["once"][key] != found["unrolled"][key], key
    for key in ("activation_bytes", "flops_matrix"):
        assert found["one_set"][key] == found["unrolled"][key] != found["once"][key], key


# the looped spec's layers once, then three more times with the same weights: `shares` at two places, one of
# them repeated
SHARED = """use std.embedding
use std.attention.gqa
use std.ffn.moe

model "Shared" {
  d = 512
  embedding(8000, d)
  gqa(d, q_heads = 8, kv_heads = 2, head_dim = 64) as first
  gqa(d, q_heads = 8, kv_heads = 2, head_dim = 64, window = 128) as attn shares attention
  moe(d, experts = 8, top = 2, f = 256) as ffn shares experts
  repeat 3 as again {
    gqa(d, q_heads = 8, kv_heads = 2, head_dim = 64, window = 128) as attn shares attention
    moe(d, experts = 8, top = 2, f = 256) as ffn shares experts
  }
  rmsnorm(d) as final_norm
  lm_head(d, 8000)
}
"""


@pytest.mark.parametrize("phase, scenario", [("prefill", Scenario(B=2, P=300)), ("decode", Scenario(B=4, S=1000)),
                                             ("request", Scenario(B=1, P=50, G=20))])
def test_calls_that_share_weights_hold_them_once_and_each_does_its_own_work(phase, scenario):
    shared, unrolled, once = (evaluate(compile_text(text), phase, scenario) for text in
                              (SHARED, spec("repeat", 4, core=1), spec("repeat", 1, core=1)))
    for name in ("params", "params_active", "weight_bytes"):
        assert getattr(shared, name) == getattr(once, name) != getattr(unrolled, name), name
    for name in ("flops_matrix", "flops_nonmatrix", "state_bytes", "read_bytes"):
        assert getattr(shared, name) == getattr(unrolled, name) != getattr(once, name), name


def test_the_first_call_sharing_weights_holds_them_wherever_it_stands():
    """The set's first call may stand in a repeat: its copies hold the weights once between them."""
    first_repeated = SHARED.replace("  gqa(d, q_heads = 8, kv_heads = 2, head_dim = 64, window = 128) as attn shares "
                                    "attention\n  moe(d, experts = 8, top = 2, f = 256) as ffn shares experts\n", "")
    first_repeated = first_repeated.replace("repeat 3 as again", "repeat 4 as again")
    figures = [evaluate(compile_text(text), "decode", Scenario(B=4, S=1000)).model_dump(exclude={"experts", "by_op"})
               for text in (SHARED, first_repeated)]  # the same totals; the ops are named apart
    assert figures[0] == figures[1]


def test_calls_that_share_weights_print_as_written_and_draw_their_set():
    assert canonical(SHARED) == SHARED
    titles = [c.label for c in compile_text(SHARED).ir.clusters.values() if c.kind == "block"]
    assert titles.count("attn: gqa · shares attention") == 2 and titles.count("ffn: moe · shares experts") == 2


def test_calls_that_share_weights_refuse_pipeline_stages_and_a_call_that_differs():
    model = compile_text(SHARED)
    with pytest.raises(ArchError) as refused:
        layout_cards(model, parse_layout("pp=2"), "decode", Scenario(B=8, S=500), H100, own_link(H100.name))
    assert refused.value.codes == ["E405"] and "shares attention" in refused.value.diagnostics[0].message
    with pytest.raises(ArchError) as refused:
        compile_text(SHARED.replace("moe(d, experts = 8, top = 2, f = 256) as ffn shares experts\n  }",
                                    "moe(d, experts = 8, top = 2, f = 512) as ffn shares experts\n  }"))
    assert refused.value.codes == ["E221"] and "f = 256 (here 512)" in refused.value.diagnostics[0].message


def test_a_model_that_shares_weights_trains_them_once(tmp_path, capsys):
    trained_once_over_every_pass(tmp_path, capsys, SHARED, spec("repeat", 4, core=1), spec("repeat", 1, core=1))


def test_a_set_named_through_a_blocks_parameter_is_one_set_and_a_differing_call_names_the_specs_line():
    """std.shared_transformer_input's inner call `shares weights`, the caller's word naming the set: two layers
    naming one set hold its weights once; a third giving another width is refused at its own call, the message
    pointing at the spec's first call (not the library's line)."""
    layer = ("  shared_transformer_input(d, q_heads = 4, kv_heads = 4, head_dim = 16, f = {f}, weights = {set}, "
             "from = (previous, embedding)) as hybrid{i}\n")
    text = ('use std.embedding\nuse std.shared_transformer\nmodel "m" {{\n  d = 64\n  embedding(500, d)\n'
            '{layers}  lm_head(d, 500)\n}}\n')
    one, two = (compile_text(text.format(layers="".join(layer.format(f=96, set=name, i=i)
                                                         for i, name in enumerate(names))))
                for names in (("a", "a"), ("a", "b")))
    ones, twos = (evaluate(model, "decode", Scenario(S=10)) for model in (one, two))
    assert twos.params > ones.params and twos.flops_matrix == ones.flops_matrix
    # the diagram titles the inner call's box with the set's word, not the parameter that carried it
    assert sorted(c.label for c in two.ir.clusters.values() if "shares" in c.label) == [
        "transformer: shared_transformer · shares a", "transformer: shared_transformer · shares b"]
    with pytest.raises(ArchError) as refused:
        compile_text(text.format(layers=layer.format(f=96, set="a", i=1) + layer.format(f=128, set="a", i=2)))
    assert refused.value.codes == ["E221"]
    assert "the call at line 6, which gives f = 96 (here 128)" in refused.value.diagnostics[0].message
