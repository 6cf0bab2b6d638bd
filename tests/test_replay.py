"""Block calls made from the first call alike (compiler/front/replay.py) give the graph a full resolve gives:
the same ops with the same arguments, inputs, caches and clusters, the same edges, and the same first uses of
free names (where an unbound dimension is reported), for the shipped specs and a model written out layer by
layer. The oracle is the resolve with replays switched off."""

from __future__ import annotations

from pathlib import Path

import pytest

from archcost.compiler.compilation import compile_text
from archcost.compiler.front import replay
from archcost.compiler.numbers.evaluate import evaluate
from archcost.compiler.terms.scenario import Scenario

ROOT = Path(__file__).resolve().parents[1]
LAYER = ("  gqa(d, q_heads = 32, kv_heads = 8, head_dim = 128, qk_norm = true, norm = {norm}) as attn{i}\n"
         "  swiglu(d, f = 12_288) as ffn{i}\n")


def tall(layers: int, written: bool, norm: str = "rmsnorm") -> str:
    head = ('use std.embedding\nuse std.attention.gqa\nuse std.ffn.swiglu\nuse std.norm\n\nmodel "Tall" {\n'
            '  d = 4096\n  vocab = 151_936\n  precision weights = bf16, kv = bf16\n  embedding(vocab, d)\n')
    body = "".join(LAYER.format(i=i, norm=norm) for i in range(layers)) if written else \
        f"  repeat {layers} as layers {{\n" + LAYER.format(i="", norm=norm) + "  }\n"
    return head + body + "  rmsnorm(d) as final_norm\n  lm_head(d, vocab)\n}\n"


def _graph(compiled) -> dict:
    g = compiled.graph
    return {
        "nodes": [(n, d["op"].kind, d["op"].inputs, d["op"].states, d["op"].cluster, d["op"].label,
                   d["op"].component, str(d["op"].multiplicity), d["op"].span, sorted(vars(d["op"].args).items()),
                   d["op"].shard, d["op"].tail, str(d["cost"])) for n, d in g.nodes(data=True)],
        "edges": [(a, b, sorted((k, str(v)) for k, v in e.items())) for a, b, e in g.edges(data=True)],
        "clusters": list(compiled.ir.clusters.items()),
        "first_use": list(compiled.ir.first_use.items()),
        "nearby": sorted(compiled.ir.nearby.items(), key=str),
    }


def _without_replays(monkeypatch, text: str, name: str):
    with monkeypatch.context() as patched:
        patched.setattr(replay, "key", lambda *args: None)
        return compile_text(text, name=name)


CASES = {path.stem: path for path in sorted((ROOT / "specs").glob("*.arch"))
         if path.stem in ("longcat-flash", "deepseek-v4.1-flash", "qwen3.5-27b", "gemma-4-26b-a4b", "lfm2-1.2b",
                          "kimi-k3", "jamba-1.5-mini", "nemotron-3-nano-30b-a3b", "mimo-v2-flash", "gemma-3-27b")}


@pytest.mark.parametrize("name", sorted(CASES))
def test_a_shipped_spec_resolves_alike_with_and_without_replays(name, monkeypatch):
    text = CASES[name].read_text()
    assert _graph(compile_text(text, name=str(CASES[name]))) == _graph(_without_replays(monkeypatch, text,
                                                                                          str(CASES[name])))


@pytest.mark.parametrize("norm", ["rmsnorm", "layernorm"])
def test_a_model_written_out_layer_by_layer_resolves_alike(norm, monkeypatch):
    text = tall(12, written=True, norm=norm)
    assert _graph(compile_text(text, name="tall.arch")) == _graph(_without_replays(monkeypatch, text, "tall.arch"))


def test_written_out_and_repeated_cost_the_same():
    """Twelve layers written out, their calls made from the first, cost what `repeat 12` of them costs."""
    written, repeated = (compile_text(tall(12, written=w), name="tall.arch") for w in (True, False))
    for phase, scenario in (("prefill", Scenario(B=2, P=300)), ("decode", Scenario(B=3, S=1000))):
        ours, theirs = (evaluate(c, phase, scenario).model_dump() for c in (written, repeated))
        for field in ("params", "flops_matrix", "flops_nonmatrix", "kv_bytes_per_token", "state_bytes", "read_bytes",
                      "write_bytes", "weight_bytes"):
            assert ours[field] == theirs[field], (phase, field)


def test_a_free_name_in_a_replayed_call_is_reported_where_a_full_resolve_reports_it(monkeypatch):
    """A dimension left unbound inside the calls is first used where the full resolve says (E400's span)."""
    text = tall(4, written=True).replace("f = 12_288", "f = width")
    replayed, full = compile_text(text, name="tall.arch"), _without_replays(monkeypatch, text, "tall.arch")
    assert list(replayed.ir.first_use.items()) == list(full.ir.first_use.items())
    assert any(str(symbol) == "width" for symbol in replayed.ir.first_use)
