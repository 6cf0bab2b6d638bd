"""Diagrams (issue 13): block calls written out one after another in the same form are drawn once with ×N,
a call of another form (a window) stays apart, and the flow leaves the folded run from its drawn pass."""

from __future__ import annotations

import re

import pytest
from helpers import SPECS, compiled

from archcost.compiler.compilation import compile_text
from archcost.compiler.render.dot import to_dot

NAMES = sorted(p.stem for p in SPECS.glob("*.arch"))

WRITTEN_OUT = """use std.embedding
use std.attention.gqa
use std.ffn.swiglu

model "Written out" {
  d = 64
  embedding(100, d)
""" + "".join(f"""  gqa(d, q_heads = 4, kv_heads = 2, head_dim = 16) as attn{i}
  swiglu(d, f = 128) as ffn{i}
""" for i in range(3)) + """  gqa(d, q_heads = 4, kv_heads = 2, head_dim = 16, window = 8) as local
  swiglu(d, f = 128) as last_ffn
  lm_head(d, 100)
}
"""


def test_a_written_out_run_is_drawn_once_with_its_count():
    dot = to_dot(compile_text(WRITTEN_OUT))
    assert 'label="×3"' in dot
    assert '"attn0.q"' in dot and '"attn1.q"' not in dot and '"attn2.q"' not in dot
    assert '"local.kv"' in dot and '"last_ffn.up"' in dot  # another form: drawn on its own
    assert '"ffn0.residual.add" -> "local.pre_norm.norm"' in dot  # the run's output, from its drawn pass
    assert '"ffn0.residual.add" -> "attn0.pre_norm.norm"' not in dot  # no pass-to-pass loop


def test_calls_of_different_forms_are_not_folded():
    text = WRITTEN_OUT.replace(
        "gqa(d, q_heads = 4, kv_heads = 2, head_dim = 16) as attn1",
        "gqa(d, q_heads = 4, kv_heads = 2, head_dim = 16, qk_norm = true) as attn1")
    dot = to_dot(compile_text(text))
    assert '"attn1.q"' in dot


RAW_SYMPY = re.compile(r"Piecewise\(|Eq\(|Ne\(|Max\(|Min\(|ceiling\(|floor\(|\*\*")


@pytest.mark.parametrize("name", NAMES)
def test_no_label_shows_sympys_raw_forms(name):
    """Issue 25: a diagram's formulas read as a person writes them (min, max, ⌊x⌋, cases), never sympy's
    `Piecewise((…))`, `Eq(…)` or `Max(…)`."""
    assert not RAW_SYMPY.search(to_dot(compiled(name)))


def test_a_piecewise_form_reads_as_its_cases():
    from sympy import Eq, Max, Piecewise, ceiling, symbols

    from archcost.compiler.render.readable import readable

    P, S = symbols("P S")
    form = Piecewise((2, Eq(P, 1) & (S > 0)), (7 + P, S > 0), (3 + Max(4, P), True)) * ceiling(P / 64) ** 2
    assert readable(form) == "⌈P/64⌉^2·{2 if P = 1 and S > 0; 7 + P if S > 0; else 3 + max(4, P)}"


@pytest.mark.parametrize("name", NAMES)
def test_the_block_view_fits_every_model_on_one_screen(name):
    """Issue 25: `diagram --blocks` draws each block call as one node, the stacks as boxes with ×N: at most a
    few dozen nodes for any shipped spec, in readable formulas, the same text every time."""
    from archcost.compiler.render.blocks import to_block_dot

    model = compiled(name)
    source = to_block_dot(model)
    nodes = re.findall(r'^\t+"[^"]+" \[label=', source, re.M)
    assert 3 <= len(nodes) <= 40 and source == to_block_dot(model)
    assert not RAW_SYMPY.search(source)


def test_the_block_view_of_qwen3_6_names_its_blocks(capsys):
    from archcost.compiler.cli import main

    assert main(["diagram", str(SPECS / "qwen3.6-35b-a3b.arch"), "--blocks", "-o", "-"]) == 0
    source = capsys.readouterr().out
    titles = re.findall(r'^\t+"[^"]+" \[label="([^"\n]+)', source, re.M)
    assert titles == ["embedding", "attn: gated_deltanet", "ffn: moe", "attn: gated_attention", "ffn: moe",
                      "final_norm: rmsnorm", "lm_head", "rope_tables"]
    assert main(["diagram", str(SPECS / "qwen3.6-35b-a3b.arch"), "--blocks", "--layout", "tp=2", "-o", "-"]) == 0
    assert "all-reduce over tp" in capsys.readouterr().out


@pytest.mark.long
@pytest.mark.parametrize("name", NAMES)
def test_every_block_view_fits_a_page(name):
    """Issue 47: V4-Flash's block view was 3,050 pt wide (five-line piecewise formulas in its nodes). Every
    shipped spec's block view, laid out by Graphviz, fits a 1,200-pt-wide page; the closed forms are in the
    nodes' tooltips."""
    from archcost.compiler.render.blocks import to_block_dot
    from archcost.compiler.render.dot import render

    source = to_block_dot(compiled(name))
    width = float(re.search(rb'<svg width="([0-9.]+)pt"', render(source, "svg")).group(1))
    assert width <= 1200, width
    assert "F per call = " in source or "FLOPs" not in source


# ops whose output no op of the graph reads, by design: the model's outputs, and model-level tables that ops in
# other blocks read (RoPE's cos/sin tables, Engram's token history)
OUTPUTS_AND_TABLES = ("logits", "logit_softcap", "rope_tables", "history")


@pytest.mark.parametrize("name", NAMES)
def test_no_op_is_a_dead_end_but_the_outputs(name):
    """Issue 47: in every MoE diagram the router's top_k led nowhere (and a shared expert's gate, attention sinks,
    an indexer's scan): each steering op now says what it steers (`steers = routed`), drawn as a dashed edge."""
    from archcost.compiler.render.dot import steering, to_dot

    graph = compiled(name).graph
    steers = {source for source, _ in steering(graph)}
    ends = [n for n in graph if graph.out_degree(n) == 0 and n not in steers
            and graph.nodes[n]["op"].label not in OUTPUTS_AND_TABLES]
    assert ends == []
    if steers:
        assert " steers" in to_dot(compiled(name))


def test_a_router_steers_the_experts_in_both_views():
    from archcost.compiler.render.blocks import to_block_dot
    from archcost.compiler.render.dot import to_dot

    source = to_dot(compiled("qwen3-30b-a3b"))
    assert re.search(r'"layers\.ffn\.top_k" -> "layers\.ffn\.routed" \[label=" steers"', source)
    assert "steers" not in to_block_dot(compiled("qwen3-30b-a3b"))  # inside one block node


def test_a_steers_that_names_no_op_is_refused():
    from archcost.dsl.errors import ArchError

    text = ('model "M" {\n  d = 64\n  lookup embed: 100 -> d\n  elementwise g: width = d, steers = nowhere\n'
            '  linear up: d -> d, from = embed\n}\n')
    with pytest.raises(ArchError) as refused:
        compile_text(text)
    assert refused.value.codes == ["E207"] and "steers `nowhere`" in refused.value.diagnostics[0].message


def test_a_users_own_block_is_opened_like_a_stack():
    """A user's block wrapping mamba2 and moe was one grey node: it is a box around their nodes now."""
    from archcost.compiler.render.blocks import to_block_dot

    text = ("use std.embedding\nuse std.attention.mamba2\nuse std.ffn.moe\n\nblock hybrid(d) {\n"
            "  mamba2(d, heads = 16, head_dim = 64, state = 64, groups = 1) as mixer\n"
            "  moe(d, experts = 8, top = 2, f = 512) as ffn\n}\n\nmodel \"Hybrid\" {\n  d = 1024\n"
            "  embedding(1000, d)\n  repeat 2 as layers {\n    hybrid(d) as layer\n  }\n"
            "  lm_head(d, 1000)\n}\n")
    source = to_block_dot(compile_text(text))
    assert "subgraph cluster_layers_layer" in source
    assert '"block layers.layer.mixer"' in source and '"block layers.layer.ffn"' in source


def test_a_layout_draws_a_cards_part_and_the_collectives_in_the_block_view(capsys):
    from archcost.compiler.cli import main

    spec = str(SPECS / "qwen3-235b-a22b.arch")
    assert main(["diagram", spec, "--layout", "tp=8,ep=8", "-o", "-"]) == 0
    assert "a card: 1/8 of it (tp)" in capsys.readouterr().out
    assert main(["diagram", spec, "--blocks", "--layout", "tp=8,ep=8", "-o", "-"]) == 0
    blocks = capsys.readouterr().out
    assert "⇄ all-to-all over ep" in blocks and "⇄ all-reduce over tp" in blocks


def test_the_block_view_gives_flops_at_the_shape_asked(capsys):
    from archcost.compiler.cli import main
    from archcost.compiler.numbers.plain import PlainEvaluator
    from archcost.compiler.render.units import human_flops
    from archcost.compiler.terms.scenario import Scenario

    model = compiled("qwen3-8b")
    graph = model.graph
    ops = [n for n in graph if n.startswith("layers.attn.")]
    import sympy as sp

    flops = PlainEvaluator(model, "prefill", Scenario(P=1024))(
        sp.Add(*(graph.nodes[n]["cost"].flops_matrix for n in ops)), "flops_matrix")
    assert main(["diagram", str(SPECS / "qwen3-8b.arch"), "--blocks", "--P", "1024", "-o", "-"]) == 0
    assert f"{human_flops(flops)} a call" in capsys.readouterr().out
