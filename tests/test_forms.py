"""Plain-data forms (compiler/numbers/forms.py) and their decode sums (compiler/numbers/sums.py): the generated
evaluators equal sympy, a sum over histories equals the step-by-step sum, and a malformed form is refused before any
code."""

from __future__ import annotations

import functools
from pathlib import Path

import pytest
import sympy as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from archcost.compiler.compilation import compile_file
from archcost.compiler.numbers import building, forms, sums
from archcost.compiler.numbers.assemble import Numbers, assemble
from archcost.compiler.numbers.evaluate import fast_evaluator, head
from archcost.compiler.numbers.leaves import leaves
from archcost.compiler.numbers.symbolic import _SymbolicNumbers
from archcost.compiler.terms.scenario import Scenario

ROOT = Path(__file__).resolve().parents[1]
SPECS = sorted((ROOT / "specs").glob("*.arch"))
X = sp.Symbol("X", nonnegative=True, integer=True)
B = sp.Symbol("B", positive=True, integer=True)


# ------------------------------------------------------------------------------------------ X-forms, brute force

def x_forms():
    """Forms in X of the shapes decode costs take: floors of X/c, windows, caps, conditions, their products."""
    linear = st.builds(lambda a, b: a * X + b, st.integers(1, 3), st.integers(-5, 5))
    floor = st.builds(lambda u, c: sp.floor(u / c), linear, st.integers(1, 600))
    window = st.builds(lambda u, w: sp.Min(w, u), linear | floor, st.integers(0, 300))
    lower = st.builds(lambda u, k: sp.Max(0, u - k), linear | floor, st.integers(0, 300))
    condition = st.builds(lambda u, k, v: sp.Piecewise((u, k < X), (v, True)), linear | floor,
                          st.integers(0, 200), st.integers(0, 9))
    atom = linear | floor | window | lower | condition
    return st.builds(lambda a, b, k: a * b * B ** k, atom, atom | st.just(sp.Integer(1)), st.integers(0, 1))


@settings(max_examples=150, deadline=None)
@given(x_forms(), st.integers(0, 3000), st.integers(0, 2500), st.integers(1, 3), st.integers(0, 2))
def test_a_sum_over_histories_equals_the_step_by_step_sum(expr, low, count, batch, power):
    tree = building.from_sympy(expr, {X: "X", B: "B"})
    function = forms.function([tree])
    env = {"B": batch, "S": 0, "P": 1, "G": 1}
    step = lambda x: function(batch, 0, 1, 1, x)[0]  # noqa: E731
    try:
        fast = sums.form_sum(tree, step, env, low, low + count, power)
    except sums.Unsummable:
        return  # the evaluator then sums step by step: nothing to compare
    assert fast == sum(x ** power * step(x) for x in range(low, low + count))


def test_long_periods_are_cut_at_their_steps():
    """Llama 4's chunks of 8192: a million histories in a few hundred samples, equal to the brute force."""
    tree = building.from_sympy(X - 8192 * sp.floor(X / 8192) + sp.floor((X + 3) / 4), {X: "X"})
    function = forms.function([tree])
    step = lambda x: function(1, 0, 1, 1, x)[0]  # noqa: E731
    calls = []
    counted = lambda x: calls.append(x) or step(x)  # noqa: E731
    fast = sums.form_sum(tree, counted, {"B": 1, "S": 0, "P": 1, "G": 1}, 8000, 1_008_000)
    assert fast == sum(step(x) for x in range(8000, 1_008_000))
    assert len(calls) < 5_000


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 40), st.integers(0, 300), st.integers(0, 300), st.integers(1, 9), st.integers(1, 9))
def test_generated_evaluators_equal_sympy(c, s, p, b, g):
    S, P, G = (sp.Symbol(n, integer=True, nonnegative=True) for n in "SPG")
    expr = (sp.Rational(3, c) * B * S + sp.floor((S + P) / c) * G + sp.Min(c, P) * sp.ceiling(S / (c + 1))
            + sp.Max(0, S - c) ** 2 + sp.Mod(S + P, c) + sp.Piecewise((P, c < S), (2 * P, True)))
    tree = building.from_sympy(expr, {B: "B", S: "S", P: "P", G: "G"})
    assert forms.check(tree)
    assert forms.function([tree])(b, s, p, g)[0] == expr.subs({B: b, S: s, P: p, G: g})


# ------------------------------------------------------------------------------------------ every spec

@pytest.mark.parametrize("spec", SPECS, ids=lambda p: p.stem)
@pytest.mark.parametrize("shape", [dict(B=1, S=0, P=5, G=7), dict(B=3, S=2040, P=9, G=13)])
def test_fast_numbers_equal_the_symbolic_path(spec, shape):
    """Every report number of every spec and phase, from the generated evaluators and from sympy (a request's
    decodes summed step by step), equal."""
    compiled = _compiled(spec)
    scenario = Scenario(**shape)
    for phase in ("prefill", "decode", "request"):
        built = leaves(compiled, phase)
        evaluator = fast_evaluator(compiled, phase)
        assert evaluator is not None, f"{spec.stem} {phase}: a leaf is not a plain form"
        fast = assemble(head(compiled), built.plan, phase, shape, Numbers(evaluator(**shape)))
        slow = assemble(head(compiled), built.plan, phase, shape, _SymbolicNumbers(compiled, built.leaves, scenario))
        assert fast == slow, f"{spec.stem} {phase}"


@functools.cache
def _compiled(spec: Path):
    """One compile a spec for both shapes (its evaluators are pure: what one shape builds the other reuses)."""
    return compile_file(spec)


# ------------------------------------------------------------------------------------------ hostile forms

@pytest.mark.parametrize("tree", [
    "__import__", "os", True, 1.5, None, {}, [], ["exec", 1], ["+"], ["q", 1, 0], ["q", 1, "B"], ["^", "B", -1],
    ["^", "B", True], ["fdiv", "B", 0], ["pw", [1]], ["pw", 1], ["+", 1, ["+", 1, "__builtins__"]],
    ["+", 10 ** 5000], ["*", "B", [None]],
])
def test_a_malformed_form_is_refused(tree):
    assert not forms.check(tree)


def test_a_form_nested_too_deep_is_refused():
    tree = "B"
    for _ in range(forms.MAX_DEPTH + 2):
        tree = ["+", tree, 1]
    assert not forms.check(tree)
