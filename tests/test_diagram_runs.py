"""Diagrams (issue 13): block calls written out one after another in the same form are drawn once with ×N,
a call of another form (a window) stays apart, and the flow leaves the folded run from its drawn pass."""

from __future__ import annotations

import re

import pytest
from helpers import SPECS, compiled

from archcost.compiler.pipeline import compile_text
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
    assert main(["diagram", str(SPECS / "qwen3.6-35b-a3b.arch"), "--blocks", "--layout", "tp=2", "-o", "-"]) == 2
