"""Closed forms as plain data: built from sympy once, then evaluated exactly without importing it.

A form is a tree of lists, ints and letter names (JSON as it stands), so a compiled model's formulas can be cached
on disk and read back by a process that never imports sympy. Trees read from a file are checked node by node
(`check`) first; evaluators are closures built node by node from a checked tree: nothing is executed as code.

Nodes: an int; a letter (B, S, P, G, or X, a request's history in its decode sums); ["free", name] a name the
spec left unbound (no number where one is needed; a branch that never needs it has one); ["q", p, q] the
rational p/q; ["+", a, ...]; ["*", a, ...]; ["^", a, n] (n ≥ 1); ["pow", a, b] (a to a computed whole power b:
(1 − k/E)^B); ["inv", a] (1/a); ["exact", a, D] (a/D exactly); ["fdiv", a, D] and ["cdiv", a, D] (floor and
ceiling of a/D); ["floor", a]; ["ceil", a]; ["min", a, ...]; ["max", a, ...]; ["mod", a, b]; ["pw", [value,
condition], ...]; conditions ["<", a, b], ["<=", a, b], ["==", a, b], ["!=", a, b], ["and", c, ...], ["or", c,
...], ["not", c], ["true"], ["false"].
"""

from __future__ import annotations

import math
import operator
from fractions import Fraction
from functools import reduce

LETTERS = ("B", "S", "P", "G", "X")
ARITY = {"free": (1, 1), "q": (2, 2), "+": (1, None), "*": (1, None), "^": (2, 2), "pow": (2, 2), "inv": (1, 1),
         "exact": (2, 2),
         "fdiv": (2, 2), "cdiv": (2, 2), "floor": (1, 1), "ceil": (1, 1), "min": (1, None), "max": (1, None),
         "mod": (2, 2), "pw": (1, None), "<": (2, 2), "<=": (2, 2), "==": (2, 2), "!=": (2, 2),
         "and": (1, None), "or": (1, None), "not": (1, 1), "true": (0, 0), "false": (0, 0)}
INTEGER_ARGUMENTS = {"q": (0, 1), "^": (1,), "exact": (1,), "fdiv": (1,), "cdiv": (1,)}
MAX_DEPTH = 60          # Python's compiler refuses deeper nesting; sympy's forms are far shallower
MAX_NODES = 2_000_000   # a form larger than this is refused, never built
MAX_INT = 10**4000      # Python prints no longer integer
MAX_EXACT_POWER = 100_000  # a power with a larger computed exponent is taken in floating point


class NotPlain(Exception):
    """The expression holds something a form cannot say (an unbound name, a function of its own)."""


# ---------------------------------------------------------------------------------------------- checking

def check(tree, depth: int = 0, budget: list | None = None) -> bool:
    """True when `tree` is a well-formed form (exact types, known tags, arities, bounded size and depth)."""
    budget = budget if budget is not None else [MAX_NODES]
    budget[0] -= 1
    if budget[0] < 0 or depth > MAX_DEPTH:
        return False
    if type(tree) is int:
        return abs(tree) <= MAX_INT
    if type(tree) is str:
        return tree in LETTERS
    if type(tree) is not list or not tree or type(tree[0]) is not str or tree[0] not in ARITY:
        return False
    tag, arguments = tree[0], tree[1:]
    if tag == "free":
        return len(arguments) == 1 and type(arguments[0]) is str and arguments[0].isidentifier() \
            and len(arguments[0]) <= 100
    low, high = ARITY[tag]
    if len(arguments) < low or (high is not None and len(arguments) > high):
        return False
    integers = INTEGER_ARGUMENTS.get(tag, ())
    for index, argument in enumerate(arguments):
        if index in integers:
            lowest = None if (tag, index) == ("q", 0) else 1
            if type(argument) is not int or (lowest is not None and argument < lowest) or abs(argument) > MAX_INT:
                return False
        elif tag == "pw":
            if type(argument) is not list or len(argument) != 2 or not all(check(a, depth + 1, budget)
                                                                            for a in argument):
                return False
        elif not check(argument, depth + 1, budget):
            return False
    return True


INTEGRAL = frozenset({"+", "*", "^", "fdiv", "cdiv", "floor", "ceil", "min", "max", "mod"})


def integral(tree) -> bool:
    """True when the form's value is a Python integer whenever B, S, P, G and X are: only sums, products,
    whole powers, floor and ceiling divisions, minima, maxima and remainders of integers."""
    if type(tree) is int or type(tree) is str:
        return True
    return tree[0] in INTEGRAL and all(integral(a) for a in tree[1:])


# ---------------------------------------------------------------------------------------------- code

def _exact(numerator, denominator: int):
    if type(numerator) is int:
        quotient, remainder = divmod(numerator, denominator)
        return quotient if not remainder else Fraction(numerator, denominator)
    return numerator / denominator


def _inverse(value):
    return Fraction(1, value) if type(value) is int else 1 / value


def _power(base, exponent):
    """base ** exponent: exact for a whole exponent up to MAX_EXACT_POWER, in floating point beyond it."""
    if type(exponent) is Fraction and exponent.denominator == 1:
        exponent = int(exponent)
    if type(exponent) is not int:
        raise ValueError("a power whose exponent is not a whole number")
    if abs(exponent) > MAX_EXACT_POWER:
        return float(base) ** exponent
    return Fraction(base) ** exponent if type(base) in (int, Fraction) else base ** exponent


def _unbound(name: str):
    raise ValueError(f"`{name}` has no value")


def _undefined():
    raise ValueError("no piece of a piecewise form holds")


HELPERS = {"_F": Fraction, "_exact": _exact, "_inv": _inverse, "_pow": _power, "_floor": math.floor, "_ceil": math.ceil,
           "_min": min, "_max": max, "_and": lambda *c: all(c), "_or": lambda *c: any(c),
           "_not": lambda c: not c, "_select": None}
_RELATIONS = {"<": operator.lt, "<=": operator.le, "==": operator.eq, "!=": operator.ne}


def function(trees: list, helpers: dict | None = None, vector: bool = False):
    """One function (B, S, P, G, X=0) → a tuple of the values of every checked form of `trees`: exact on
    Python integers, or element by element on numpy arrays with `vector` and numpy's `helpers`. Each form is
    turned into nested closures, node by node: nothing is parsed or executed as code."""
    ops = {**HELPERS, **(helpers or {})}
    keys: dict[int, tuple] = {}  # id of a subtree → its structure, so equal subtrees are one
    uses: dict[tuple, int] = {}
    for tree in trees:
        _count(tree, keys, uses)
    built: dict[tuple, object] = {}  # structure → its closure: a subtree many forms share is built once
    cells: list[list] = []           # the remembered values, forgotten after each call on arrays
    parts = [_closure(tree, ops, vector, (built, keys, uses, cells)) for tree in trees]
    evaluators = [part if callable(part) else (lambda e, value=part[0]: value) for part in parts]

    def forms(B, S, P, G, X=0):
        env = (B, S, P, G, X)
        values = tuple([evaluate(env) for evaluate in evaluators])
        if vector:  # a chunk's arrays are not kept alive by the closures once its values are out
            for cell in cells:
                cell[0] = FORGOTTEN
        return values
    return forms


FORGOTTEN = (None, None)
SHARED_SIZE = 3  # a subtree of at least this many nodes, met more than once, is computed once a call


def _count(tree, keys: dict, uses: dict):
    """The structure of `tree` as nested tuples (memoized by identity), counting how often each compound
    subtree occurs among the forms."""
    if type(tree) is not list:
        return tree
    if id(tree) not in keys:
        keys[id(tree)] = tuple(_count(part, keys, uses) for part in tree)
    key = keys[id(tree)]
    uses[key] = uses.get(key, 0) + 1
    return key


def _size(key, limit: int) -> int:
    """Nodes of a structure, counted up to `limit`."""
    if type(key) is not tuple:
        return 1
    total = 1
    for part in key[1:]:
        total += _size(part, limit - total)
        if total >= limit:
            break
    return total


def _closure(tree, ops: dict, vector: bool, built: tuple):
    """A closure of the environment (B, S, P, G, X), or a 1-tuple holding a constant (folded as it is built).
    A subtree met more than once keeps its last value for the environment it was computed in, so one call
    computes it once however many forms hold it."""
    if type(tree) is int:
        return (tree,)
    if type(tree) is str:
        return operator.itemgetter(LETTERS.index(tree))
    closures, keys, uses, cells = built
    key = keys[id(tree)]
    if key not in closures:
        node = _node(tree, ops, vector, built)
        shared = callable(node) and uses[key] > 1 and _size(key, SHARED_SIZE) >= SHARED_SIZE
        closures[key] = _remembered(node, cells) if shared else node
    return closures[key]


def _remembered(inner, cells: list):
    last = [FORGOTTEN]  # (environment, value), replaced whole: a reader never sees half of it
    cells.append(last)

    def remembered(e):
        seen, value = last[0]
        if seen is e:
            return value
        value = inner(e)
        last[0] = (e, value)
        return value
    return remembered


def _node(tree: list, ops: dict, vector: bool, built: tuple):
    tag, arguments = tree[0], tree[1:]
    if tag == "free":
        return lambda e, name=arguments[0]: _unbound(name)
    if tag == "q":
        return (ops["_F"](arguments[0], arguments[1]),)
    if tag in ("true", "false"):
        return (tag == "true",)
    if tag in ("+", "*"):
        return _sum_or_product(tag, [_closure(a, ops, vector, built) for a in arguments])
    if tag == "pw":
        pairs = [(_closure(v, ops, vector, built), _closure(c, ops, vector, built)) for v, c in arguments]
        return _piecewise(pairs, ops, vector)
    first = _callable(_closure(arguments[0], ops, vector, built))
    if tag in ("^", "exact", "fdiv", "cdiv"):
        return _with_integer(tag, first, arguments[1], ops)
    if tag in ("inv", "floor", "ceil", "not"):
        helper = ops[{"inv": "_inv", "floor": "_floor", "ceil": "_ceil", "not": "_not"}[tag]]
        return lambda e: helper(first(e))
    rest = [_callable(_closure(a, ops, vector, built)) for a in arguments[1:]]
    if tag == "pow":
        power, exponent = ops["_pow"], rest[0]
        return lambda e: power(first(e), exponent(e))
    if tag in _RELATIONS or tag == "mod":
        compare, second = _RELATIONS.get(tag, operator.mod), rest[0]
        return lambda e: compare(first(e), second(e))
    if tag in ("and", "or") and not vector:
        every = [first, *rest]
        return (lambda e: all(f(e) for f in every)) if tag == "and" else (lambda e: any(f(e) for f in every))
    helper, every = ops[f"_{tag}"], [first, *rest]  # min, max; and, or on arrays
    return first if len(every) == 1 else lambda e: helper(*[f(e) for f in every])


def _callable(part):
    return part if callable(part) else (lambda e, value=part[0]: value)


def _sum_or_product(tag: str, parts: list):
    combine = operator.add if tag == "+" else operator.mul
    constant = reduce(combine, (p[0] for p in parts if not callable(p)), 0 if tag == "+" else 1)
    varying = [p for p in parts if callable(p)]
    if not varying:
        return (constant,)
    if constant != (0 if tag == "+" else 1):
        varying.append(lambda e, value=constant: value)
    if len(varying) == 1:
        return varying[0]
    if len(varying) == 2:
        left, right = varying
        return lambda e: combine(left(e), right(e))
    first, rest = varying[0], varying[1:]

    def combined(e):
        value = first(e)
        for part in rest:
            value = combine(value, part(e))
        return value
    return combined


def _with_integer(tag: str, first, number: int, ops: dict):
    if tag == "^":
        return lambda e: first(e) ** number
    if tag == "exact":
        exact = ops["_exact"]
        return lambda e: exact(first(e), number)
    if tag == "fdiv":
        return lambda e: first(e) // number
    return lambda e: -((-first(e)) // number)


def _piecewise(pairs: list, ops: dict, vector: bool):
    pairs = [(_callable(value), _callable(condition)) for value, condition in pairs]
    if vector:
        select = ops["_select"]
        return lambda e: select([c(e) for _, c in pairs], [v(e) for v, _ in pairs])

    def piece(e):
        for value, condition in pairs:
            if condition(e):
                return value(e)
        return _undefined()
    return piece
