"""Σ of a form over a run of histories X (a request's decodes), exactly, in time independent of their number.

A decode's cost is a polynomial in its history X between the points where a window or a cap takes over
(min, max), except for floors of X/c (compressed blocks), which make it a polynomial on each residue class
of X modulo their common period L. So the sum splits at those points into runs; a long run is L sums of a
polynomial, each taken from d + 1 samples by Newton's forward differences. What the analysis cannot vouch
for (a piecewise condition on X, two growing arguments of one min) is summed step by step instead.
"""

from __future__ import annotations

import math
from fractions import Fraction

ROUNDING = ("fdiv", "cdiv", "floor", "ceil", "mod")
MAX_SLOPES = 64    # branches of minima and maxima a linear form may combine before the analysis gives up
LONG_PERIOD = 256  # a floor of X/p with p above this is cut at its steps, not summed per residue class
RELATIONS = ("<", "<=")  # conditions on X the analysis follows (one turn each); == and != it does not


class Unsummable(Exception):
    """The form's shape in X is beyond this analysis: sum it step by step."""


def children(tree) -> list:
    """A node's operands: a piecewise node's values and conditions in turn."""
    if tree[0] == "pw":
        return [part for pair in tree[1:] for part in pair]
    return tree[1:]


def depends(tree) -> bool:
    if type(tree) is str:
        return tree == "X"
    return type(tree) is list and any(depends(a) for a in children(tree))


def value(tree, env: dict):
    """A form's exact value (a small interpreter for the analysis; evaluators are generated code)."""
    if type(tree) is int:
        return tree
    if type(tree) is str:
        return env[tree]
    tag, args = tree[0], tree[1:]
    if tag == "q":
        return Fraction(args[0], args[1])
    if tag == "+":
        return sum(value(a, env) for a in args)
    if tag == "*":
        return math.prod(value(a, env) for a in args)
    if tag == "^":
        return value(args[0], env) ** args[1]
    if tag == "pow":
        from .forms import _power

        return _power(value(args[0], env), value(args[1], env))
    if tag == "inv":
        return 1 / Fraction(value(args[0], env))
    if tag in ("exact", "fdiv", "cdiv"):
        quotient = Fraction(value(args[0], env), args[1])
        return quotient if tag == "exact" else math.floor(quotient) if tag == "fdiv" else math.ceil(quotient)
    if tag in ("floor", "ceil"):
        return (math.floor if tag == "floor" else math.ceil)(value(args[0], env))
    if tag in ("min", "max"):
        return (min if tag == "min" else max)(value(a, env) for a in args)
    if tag == "mod":
        return value(args[0], env) % value(args[1], env)
    if tag == "pw":
        return next(value(v, env) for v, condition in args if truth(condition, env))
    raise Unsummable(tag)


def truth(tree, env: dict) -> bool:
    tag, args = tree[0], tree[1:]
    if tag in ("true", "false"):
        return tag == "true"
    if tag in ("and", "or"):
        return (all if tag == "and" else any)(truth(a, env) for a in args)
    if tag == "not":
        return not truth(args[0], env)
    left, right = value(args[0], env), value(args[1], env)
    return {"<": left < right, "<=": left <= right, "==": left == right, "!=": left != right}[tag]


def degree(tree) -> int:
    """The degree in X of the polynomial the form is on each run and residue class."""
    if not depends(tree):
        return 0
    if tree == "X":
        return 1
    tag, args = tree[0], tree[1:]
    if tag == "*":
        return sum(degree(a) for a in args)
    if tag == "^":
        return degree(args[0]) * args[1]
    if tag in ("+", "min", "max", "exact"):
        return max(degree(a) for a in args)
    if tag == "pw":
        return max(degree(v) for v, _ in args)
    if tag in ROUNDING:
        if degree(args[0]) > 1 or (tag == "mod" and depends(args[1])):
            raise Unsummable(tag)
        return 1
    raise Unsummable(tag)


def slopes(tree, env: dict) -> set:
    """The slopes in X a form linear in X can take (one per branch of its minima and maxima)."""
    if not depends(tree):
        return {0}
    if tree == "X":
        return {1}
    tag, args = tree[0], tree[1:]
    if tag == "+":
        found = {0}
        for a in args:
            found = {s + t for s in found for t in slopes(a, env)}
            if len(found) > MAX_SLOPES:
                raise Unsummable("slopes")
        return found
    if tag == "*":
        growing = [a for a in args if depends(a)]
        if len(growing) != 1:
            raise Unsummable("product")
        factor = math.prod(value(a, env) for a in args if not depends(a))
        return {factor * s for s in slopes(growing[0], env)}
    if tag in ("exact", "fdiv", "cdiv"):
        return {Fraction(s) / args[1] for s in slopes(args[0], env)}
    if tag in ("floor", "ceil", "mod"):
        return slopes(args[0], env)
    if tag in ("min", "max"):
        return set().union(*(slopes(a, env) for a in args))
    if tag == "pw":
        return set().union(*(slopes(v, env) for v, _ in args))
    raise Unsummable(tag)


def period(tree, env: dict) -> int:
    """The least L with every floor's argument moving by a whole number when X moves by L (floors with a long
    period of their own excepted: the sum is cut at their steps instead, see `steps`)."""
    if not depends(tree) or type(tree) is not list:
        return 1
    tag, args = tree[0], tree[1:]
    inner = math.lcm(1, *(period(a, env) for a in children(tree) if type(a) is list or a == "X"))
    if tag not in ROUNDING or _long_step(tree, env) is not None:
        return inner
    divisor = args[1] if tag in ("fdiv", "cdiv") else value(args[1], env) if tag == "mod" else 1
    own = [Fraction(s) / divisor for s in slopes(args[0], env)]
    return math.lcm(inner, *(s.denominator for s in own))


def _long_step(tree, env: dict) -> tuple[int, int] | None:
    """(p, shift) for floor((X + y)/p) and its kin with p > LONG_PERIOD and a straight argument: it steps
    where X + floor(y) is a multiple of p (a ceiling one later)."""
    if tree[0] not in ("fdiv", "cdiv", "floor", "ceil") or degree(tree[1]) != 1 or _rounds(tree[1]):
        return None
    divisor = tree[2] if tree[0] in ("fdiv", "cdiv") else 1
    (slope,) = slopes(tree[1], env)
    slope = Fraction(slope) / divisor
    if slope.numerator != 1 or slope.denominator <= LONG_PERIOD:
        return None
    offset = Fraction(value(tree[1], {**env, "X": 0})) / divisor
    return slope.denominator, math.floor(offset * slope.denominator)


def steps(tree, env: dict, low: int, high: int) -> set[int]:
    """Every X in (low, high) where a floor with a long period steps."""
    found: set[int] = set()
    if type(tree) is not list or not depends(tree):
        return found
    for a in children(tree):
        found |= steps(a, env, low, high)
    step = _long_step(tree, env)
    if step is not None:
        length, shift = step
        for first in (-shift, 1 - shift):
            start = low + 1 + (first - low - 1) % length
            found.update(range(start, high, length))
    return found


def direction(tree, env: dict) -> int | None:
    """+1 (non-decreasing in X), −1, 0 (constant), or None when the form is not monotone."""
    if not depends(tree):
        return 0
    if tree == "X":
        return 1
    tag, args = tree[0], tree[1:]
    if tag in ("+", "min", "max"):
        seen = {direction(a, env) for a in args} - {0}
        return seen.pop() if len(seen) == 1 and None not in seen else None
    if tag == "*":
        growing = [a for a in args if depends(a)]
        if len(growing) != 1:
            return None
        factor, inner = math.prod(value(a, env) for a in args if not depends(a)), direction(growing[0], env)
        return None if inner is None else inner * (factor > 0) - inner * (factor < 0)
    if tag in ("exact", "fdiv", "cdiv", "floor", "ceil"):
        return direction(args[0], env)
    return None


def switches(tree, env: dict, low: int, high: int) -> set[int]:
    """Every X in (low, high) where a min or max of the form hands over to another argument."""
    found: set[int] = set()
    if type(tree) is not list or not depends(tree):
        return found
    for a in children(tree):
        found |= switches(a, env, low, high) if type(a) is list else set()
    if tree[0] in RELATIONS or tree[0] in ("==", "!="):
        found |= _turns(tree, env, low, high)
    if tree[0] in ("min", "max"):
        growing = [a for a in tree[1:] if depends(a)]
        straight = len(tree) == 3 and all(degree(a) <= 1 and not _rounds(a) for a in tree[1:])
        if not straight and (len(growing) != 1 or direction(growing[0], env) is None):
            raise Unsummable("switch")
        pick = min if tree[0] == "min" else max

        def winner(x: int) -> int:
            here = {**env, "X": x}
            values = [value(a, here) for a in tree[1:]]
            return values.index(pick(values))

        first, last = winner(low), winner(high - 1)
        if first != last:
            lo, hi = low, high - 1  # winner(lo) == first, winner(hi) != first
            while hi - lo > 1:
                middle = (lo + hi) // 2
                lo, hi = (middle, hi) if winner(middle) == first else (lo, middle)
            found.add(hi)
    return found


def _turns(relation, env: dict, low: int, high: int) -> set[int]:
    """Where a condition on X turns: once, for `<` or `<=` between a monotone side and a constant one."""
    left, right = relation[1], relation[2]
    growing = [a for a in (left, right) if depends(a)]
    if relation[0] not in RELATIONS or len(growing) != 1 or direction(growing[0], env) is None:
        raise Unsummable("condition")

    def holds(x: int) -> bool:
        return truth(relation, {**env, "X": x})

    first = holds(low)
    if holds(high - 1) == first:
        return set()
    lo, hi = low, high - 1
    while hi - lo > 1:
        middle = (lo + hi) // 2
        lo, hi = (middle, hi) if holds(middle) == first else (lo, middle)
    return {hi}


def _rounds(tree) -> bool:
    return type(tree) is list and (
        tree[0] in ROUNDING + ("min", "max", "pw") or any(_rounds(a) for a in children(tree))
    )


def run_sum(step, low: int, high: int, length: int, order: int):
    """Σ step(X) for low ≤ X < high, where step is a polynomial of degree ≤ order on each residue class."""
    count = high - low
    if count <= length * (order + 2):
        return sum(step(x) for x in range(low, high))
    total = 0
    for residue in range(length):
        start = low + residue
        terms = (high - start + length - 1) // length
        total += newton_sum([step(start + i * length) for i in range(order + 1)], terms)
    return total


def newton_sum(samples: list, terms: int):
    """Σ_{i<terms} p(i) for the polynomial p with p(0..d) = samples: Σ_k Δ^k p(0) · C(terms, k + 1)."""
    total, row = 0, list(samples)
    for k in range(len(samples)):
        total += row[0] * math.comb(terms, k + 1)
        row = [b - a for a, b in zip(row, row[1:])]
    return total


def form_sum(tree, step, env: dict, low: int, high: int, power: int = 0):
    """Σ X^power · tree(X) for low ≤ X < high; `step(x)` evaluates tree at X = x. Unsummable when the
    form's shape is beyond the analysis."""
    term = (lambda x: x ** power * step(x)) if power else step
    if high <= low:
        return 0
    if not depends(tree):
        return step(low) * run_sum(lambda x: x ** power, low, high, 1, power)
    order, length = degree(tree) + power, period(tree, env)
    cuts = sorted(switches(tree, env, low, high) | steps(tree, env, low, high))
    edges = [low, *cuts, high]
    return sum(run_sum(term, a, b, length, order) for a, b in zip(edges, edges[1:]) if b > a)
