"""Closed forms: the chapter's Qwen3-8B formula, request sums, and the algebra of repeats."""

from __future__ import annotations

import pytest
import sympy as sp
from helpers import compiled, spec_path
from hypothesis import given, settings
from hypothesis import strategies as st

from archcost.compiler.compilation import compile_file, compile_text
from archcost.compiler.numbers.evaluate import evaluate
from archcost.compiler.render import formula
from archcost.compiler.terms.scenario import Conventions, Scenario, at_phase
from archcost.compiler.terms.symbols import B, G, N_pair, P, S, m, m_out


def test_qwen3_8b_matrix_flops_is_the_chapters_formula():
    # seed 002 §2.1.4: F = 36(385,875,968·m + 16,384·N_pair) + 2·m_out·4096·151936
    chapter = 36 * (385875968 * m + 16384 * N_pair) + 2 * m_out * 4096 * 151936
    printed = dict((f, e) for f, _, e in formula.formulas(compiled("qwen3-8b"), "F"))["flops_matrix"]
    assert sp.expand(printed.doit() - chapter) == 0


def test_keep_leaves_dimensions_symbolic():
    keep = compile_file(spec_path("qwen3-8b"), keep=frozenset({"d", "vocab"}))
    params = keep.total("params")
    d, vocab = sp.Symbol("d", positive=True, integer=True), sp.Symbol("vocab", positive=True, integer=True)
    assert {d, vocab} <= params.free_symbols
    assert params.xreplace({d: 4096, vocab: 151936}) == 8190735360


def test_request_closed_form_equals_stepping():
    model = compiled("qwen3-8b")
    closed = at_phase(model.total("flops_matrix"), "request", model.conventions)
    for shape in (Scenario(B=1, S=0, P=128, G=4), Scenario(B=3, S=100, P=7, G=9), Scenario(B=2, S=5, P=1, G=1)):
        stepped = evaluate(model, "request", shape).flops_matrix
        assert closed.xreplace({B: shape.B, S: shape.S, P: shape.P, G: shape.G}) == stepped


def test_request_is_prefill_plus_decodes():
    # §2.2.3: a request is one prefill and G − 1 decodes, decode j seeing H + j positions
    model = compiled("qwen3-8b")
    request = evaluate(model, "request", Scenario(B=1, S=0, P=128, G=4)).flops_matrix
    parts = evaluate(model, "prefill", Scenario(P=128)).flops_matrix + sum(
        evaluate(model, "decode", Scenario(S=128 + j)).flops_matrix for j in range(3))
    assert request == parts


BODY = """
model "Toy" {{
  repeat {n} {{
    linear up: {d} -> {f}
    linear down: {f} -> {d}
    cache kv: per_token, width = {d}
    attend: heads = 2, qk = {half}, v = {half}, from = down
  }}
}}
"""


@settings(max_examples=25, deadline=None)
@given(n=st.integers(1, 200), d=st.integers(1, 64), f=st.integers(1, 64))
def test_repeat_multiplies_costs(n, d, f):
    # cost(repeat n {b}) == n·cost(b), with no unrolling
    once = compile_text(BODY.format(n=1, d=2 * d, f=f, half=d))
    many = compile_text(BODY.format(n=n, d=2 * d, f=f, half=d))
    for field in ("params", "flops_matrix", "state_bytes", "read_state", "write_activations"):
        assert sp.expand(many.total(field) - n * once.total(field)) == 0
    assert len(many.ir.nodes) == len(once.ir.nodes)


@settings(max_examples=25, deadline=None)
@given(b=st.integers(1, 64), s=st.integers(0, 10_000), p=st.integers(1, 4096), g=st.integers(1, 64))
def test_quantities_are_non_negative(b, s, p, g):
    report = evaluate(compiled("llama-2-7b"), "request", Scenario(B=b, S=s, P=p, G=g))
    numbers = [v for v in report.model_dump().values() if isinstance(v, (int, float))]
    numbers += [v for d in (report.read_bytes, report.write_bytes, report.params_by_component) for v in d.values()]
    assert all(v >= 0 for v in numbers)


def test_rectangle_option_counts_more_pairs():
    causal = compiled("qwen3-8b")
    rectangle = compiled("qwen3-8b", (), Conventions(attention="rectangle"))
    shape = Scenario(P=8192)
    a, b = evaluate(causal, "prefill", shape), evaluate(rectangle, "prefill", shape)
    # B·P·(S+P) vs B(PS + P(P+1)/2) pairs, 36 layers × 16,384 FLOPs per pair
    assert b.context_flops - a.context_flops == 36 * 16384 * (8192 * 8192 - 8192 * 8193 // 2)
    assert b.options["attention"] == "rectangle"


def test_all_logits_option_runs_the_head_on_every_token():
    last = evaluate(compiled("qwen3-8b"), "prefill", Scenario(P=16))
    every = evaluate(compiled("qwen3-8b", (), Conventions(logits="all")), "prefill", Scenario(P=16))
    assert every.flops_matrix - last.flops_matrix == 15 * 2 * 4096 * 151936


def test_fast_paths_agree_with_exact_evaluation():
    """The math and numpy functions behind `sweep` give the exact evaluator's numbers (floats)."""
    import numpy as np

    from archcost.compiler.serving.sweep import evaluator, sweep

    for name in ("qwen3-8b", "deepseek-v4.1-flash", "qwen3.6-35b-a3b"):
        model = compiled(name)
        for phase, shape in (("decode", Scenario(B=3, S=8191)), ("prefill", Scenario(B=2, S=100, P=300))):
            exact = evaluate(model, phase, shape)
            fast = evaluator(model, phase)(shape.B, shape.S, shape.P, shape.G)
            grid = sweep(model, phase, {"B": [shape.B], "S": [shape.S], "P": [shape.P], "G": [1]})
            for key, value in (("flops_matrix", exact.flops_matrix), ("state_bytes", exact.state_bytes),
                               ("context_flops", exact.context_flops)):
                assert fast[key] == pytest.approx(value, rel=1e-12), (name, phase, key)
                assert float(np.asarray(grid[key])[0]) == pytest.approx(value, rel=1e-12), (name, phase, key)


@pytest.mark.parametrize("name", ["qwen3-8b", "deepseek-v4-flash", "gemma-2-9b", "mamba-codestral-7b"])
def test_a_request_sweep_is_the_exact_request_at_every_point(name):
    """`sweep --phase request` sums the decodes on arrays (closed power sums) or point by point (windows,
    compressed blocks): every column at every point is the exact evaluator's request, long histories and
    thousands of decodes included."""
    import itertools

    from archcost.compiler.numbers.assemble import Evaluator, total_key
    from archcost.compiler.numbers.leaves import phase_forms
    from archcost.compiler.serving.sweep import sweep
    from archcost.compiler.terms.quantities import SWEPT

    model = compiled(name)
    grid = {"B": [1, 3], "S": [0, 77, 999_999], "P": [1, 300], "G": [1, 2, 4097]}
    columns = sweep(model, "request", grid)
    exact = Evaluator(phase_forms(model, "request"))
    for index, shape in enumerate(itertools.product(*(grid[k] for k in "BSPG"))):
        row = exact(*shape)
        for quantity in SWEPT:
            want = sum(row[total_key(field)] for field in quantity.fields)
            assert float(columns[quantity.name][index]) == pytest.approx(want, rel=1e-12, abs=1e-9), (shape, quantity)


def test_stepped_request_equals_its_calls():
    """Block-compressed caches and replay make a decode piecewise in S: the request is summed step by
    step, exactly, and must equal its prefill plus each decode evaluated on its own."""
    model = compiled("deepseek-v4.1-flash")
    shape = Scenario(B=1, S=5, P=300, G=9)
    request = evaluate(model, "request", shape)
    parts = [evaluate(model, "prefill", Scenario(S=5, P=300))] + [
        evaluate(model, "decode", Scenario(S=305 + j)) for j in range(8)]
    for field in ("flops_matrix", "context_flops"):
        assert getattr(request, field) == sum(getattr(p, field) for p in parts)
    assert request.read_bytes["state"] == sum(p.read_bytes["state"] for p in parts)
