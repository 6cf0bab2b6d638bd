"""Closed forms (sympy) as plain-data forms (forms.py): the one place the two meet, when a model compiles."""

from __future__ import annotations

import math
from functools import reduce

from .forms import LETTERS, NotPlain


def from_sympy(expr, names: dict | None = None, free: bool = False, bound: dict | None = None):
    """A sympy expression as a form; a symbol other than the letters (or `names`) is NotPlain, or with `free`
    a ["free", name] node that fails only where a number needs it (a piecewise branch never taken does not).
    A symbol in `bound` becomes the form it is bound to: a substitution made on the tree, which costs nothing
    next to sympy rebuilding (and re-simplifying) every Min and Max the symbol sits in."""
    names, bound = names or {}, bound or {}

    def walk(e):
        if isinstance(e, int) and not isinstance(e, bool):
            return e
        if e.is_Integer:
            return int(e)
        if e.is_Rational:
            return ["q", int(e.p), int(e.q)]
        if e.is_Symbol:
            if e in bound:
                return bound[e]
            name = names.get(e, e.name)
            if name not in LETTERS:
                if free:
                    return ["free", e.name]
                raise NotPlain(e.name)
            return name
        return _compound(e, walk)

    return walk(expr)


def _compound(e, walk):
    import sympy as sp

    if e.is_Add:
        return _ratio_sum([term.as_coeff_Mul() for term in e.args], walk)
    if e.is_Mul:
        coefficient, rest = e.as_coeff_Mul()
        factors = [walk(f) for f in sp.Mul.make_args(rest)]
        if coefficient.is_Integer:
            return ["*", int(coefficient), *factors] if coefficient != 1 else _product(factors)
        return ["exact", ["*", int(coefficient.p), *factors], int(coefficient.q)]
    if e.is_Pow and e.exp.is_Integer:
        base = walk(e.base)
        return ["^", base, int(e.exp)] if e.exp > 0 else ["^", ["inv", base], -int(e.exp)]
    if e.is_Pow:
        return ["pow", walk(e.base), walk(e.exp)]
    if isinstance(e, sp.floor | sp.ceiling):
        return _rounded("fdiv" if isinstance(e, sp.floor) else "cdiv", e.args[0], walk)
    if isinstance(e, sp.Min | sp.Max):
        return ["min" if isinstance(e, sp.Min) else "max", *(walk(a) for a in e.args)]
    if isinstance(e, sp.Mod):
        return ["mod", walk(e.args[0]), walk(e.args[1])]
    if isinstance(e, sp.Piecewise):
        return ["pw", *([walk(value), walk(condition)] for value, condition in e.args)]
    if e is sp.true or e is sp.false:
        return ["true"] if e is sp.true else ["false"]
    if isinstance(e, sp.core.relational.Relational):
        return _relation(e, walk)
    if isinstance(e, sp.And | sp.Or | sp.Not):
        return [type(e).__name__.lower(), *(walk(a) for a in e.args)]
    raise NotPlain(type(e).__name__)


def _product(factors: list):
    return factors[0] if len(factors) == 1 else ["*", *factors]


def _ratio_sum(terms: list, walk):
    """Σ (p/q)·t as one integer sum over the common denominator, divided exactly once."""
    denominator = reduce(math.lcm, (int(c.q) for c, _ in terms), 1)
    parts = []
    for coefficient, rest in terms:
        scale = int(coefficient.p) * (denominator // int(coefficient.q))
        if rest == 1:
            parts.append(scale)
        else:
            parts.append(walk(rest) if scale == 1 else ["*", scale, walk(rest)])
    total = ["+", *parts]
    return total if denominator == 1 else ["exact", total, denominator]


def _rounded(tag: str, argument, walk):
    """floor(a/D) and ceiling(a/D) as integer divisions when a's denominators are plain integers."""
    tree = walk(argument)
    if isinstance(tree, list) and tree[0] == "exact":
        return [tag, tree[1], tree[2]]
    return [tag, tree, 1]


def _relation(e, walk):
    import sympy as sp

    left, right = walk(e.lhs), walk(e.rhs)
    table = {sp.StrictLessThan: "<", sp.LessThan: "<=", sp.Equality: "==", sp.Unequality: "!="}
    for kind, tag in table.items():
        if isinstance(e, kind):
            return [tag, left, right]
    flipped = {sp.StrictGreaterThan: "<", sp.GreaterThan: "<="}
    for kind, tag in flipped.items():
        if isinstance(e, kind):
            return [tag, right, left]
    raise NotPlain(type(e).__name__)
