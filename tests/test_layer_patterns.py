"""How the import writes a stack of layers (compiler/importer/reading/spec.py): runs of equal layers as repeats,
a repeating pattern as `repeat n as groups`, also where it starts after a few layers of its own. Its oracle is
the same layers written out one by one: the written stack must cost exactly what they cost, and be no longer
than its runs."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from archcost.compiler.compilation import compile_text
from archcost.compiler.importer.reading.spec import Layer, Spec, _runs, binding, call, render
from archcost.compiler.numbers.evaluate import evaluate
from archcost.compiler.terms.scenario import Scenario
from archcost.dsl import ast
from archcost.dsl.parser import parse

# three kinds of layer a hybrid stack mixes: full attention, sliding attention, a Mamba-2 mixer
KINDS = {
    "full": Layer("full_layers", (call("gqa", "d", q_heads=4, kv_heads=2, head_dim=16, label="attn"),
                                  call("swiglu", "d", f=96, label="ffn"))),
    "sliding": Layer("sliding_layers", (call("gqa", "d", q_heads=4, kv_heads=2, head_dim=16, window=8,
                                             label="attn"), call("swiglu", "d", f=96, label="ffn"))),
    "mamba": Layer("mamba_layers", (call("mamba2", "d", heads=4, head_dim=16, state=8, label="mixer"),)),
}
PRECISION = ast.Precision(settings=[ast.Setting(role="weights", format="bf16"), ast.Setting(role="kv", format="bf16")])


def written(layers: list[Layer]) -> str:
    spec = Spec(header=[], bindings=[binding("d", 64), binding("vocab", 500)],
                before=[call("embedding", "vocab", "d")], layers=layers,
                after=[call("rmsnorm", "d", label="final_norm"), call("lm_head", "d", "vocab")], note="the layers")
    return render(spec, "stack", "a test", PRECISION)


def one_by_one(layers: list[Layer]) -> str:
    """The same model, each layer written out as a call of a block of its own."""
    blocks = "".join(f"block layer_{name}(d) {{\n" + "".join(f"  {line}\n" for line in _call_lines(layer)) + "}\n"
                     for name, layer in KINDS.items())
    names = {layer: name for name, layer in KINDS.items()}
    body = "".join(f"  layer_{names[layer]}(d) as layer{i}\n" for i, layer in enumerate(layers))
    return ("use std.embedding\nuse std.attention.gqa\nuse std.attention.mamba2\nuse std.ffn.swiglu\n" + blocks
            + 'model "stack" {\n  d = 64\n  vocab = 500\n  precision weights = bf16, kv = bf16\n'
            + "  embedding(vocab, d)\n" + body + "  rmsnorm(d) as final_norm\n  lm_head(d, vocab)\n}\n")


def _call_lines(layer: Layer) -> list[str]:
    from archcost.dsl.printer import format_module

    model = ast.ModelDef(name="x", body=list(layer.stmts))
    text = format_module(ast.Module(path="<x>", models=[model]))
    return [line.strip() for line in text.splitlines()[1:-1]]


@settings(max_examples=25, deadline=None)
@given(st.lists(st.sampled_from(sorted(KINDS)), min_size=2, max_size=16))
def test_a_written_stack_costs_its_layers_one_by_one_and_is_never_longer(names):
    layers = [KINDS[name] for name in names]
    text = written(layers)
    shape = Scenario(B=2, S=20, P=3)
    ours, theirs = (evaluate(compile_text(t), "call", shape) for t in (text, one_by_one(layers)))
    for field in ("params", "flops_matrix", "flops_nonmatrix", "state_bytes", "read_bytes"):
        assert getattr(ours, field) == getattr(theirs, field), field
    statements = len(parse(text, "<stack>").models[0].body)  # d, vocab, precision, embedding, norm, head and
    assert statements <= 6 + len(_runs(layers, "", None))   # the stack


def test_a_pattern_after_a_few_layers_of_their_own_is_written_as_groups():
    """Zamba2's stack: six Mamba layers and a hybrid one, five and one six times more, then four, three, two."""
    m, f = KINDS["mamba"], KINDS["full"]
    layers = [m] * 6 + [f] + ([m] * 5 + [f]) * 6 + [m] * 4 + [f] + [m] * 3 + [f] + [m] * 2
    text = written(layers)
    assert "  repeat 7 as groups {\n    repeat 5 as mamba_layers {" in text
    assert text.count("repeat") == 5  # the groups, the runs of five in them, and the tail's runs of 4, 3 and 2
