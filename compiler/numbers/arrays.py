"""Closed forms over numpy arrays: a sympy expression of some letters evaluated at many values of them at once
(the layout search's screen evaluates each op's share of a card, a function of TP and EP, over every layout).
Float64 throughout: a screen, never a printed number."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import sympy as sp


class NotAnArray(ValueError):
    """An expression with a letter not given, an irrational number, or a function this evaluator lacks."""


def evaluator(letters: dict) -> Callable:
    """A function of an expression of `letters` ({symbol: array}, all one shape): its values there, numbers
    broadcast to that shape, each expression evaluated once."""
    seen: dict = {}
    size = next(iter(letters.values())).shape

    def value(expr) -> np.ndarray:
        if expr not in seen:
            tree = expr if isinstance(expr, sp.Basic) else sp.Integer(expr)  # a share may be a plain int
            seen[expr] = np.broadcast_to(np.asarray(_array(tree, letters), dtype=np.float64), size)
        return seen[expr]
    return value


FUNCTIONS = {"Min": lambda *a: np.minimum.reduce(np.broadcast_arrays(*a)),
             "Max": lambda *a: np.maximum.reduce(np.broadcast_arrays(*a)),
             "ceiling": np.ceil, "floor": np.floor}


def _array(expr, letters: dict):
    if expr.is_Number:
        if not expr.is_Rational:
            raise NotAnArray(str(expr))
        return float(expr.p) / float(expr.q)
    if expr.is_Symbol:
        if expr not in letters:
            raise NotAnArray(str(expr))
        return letters[expr]
    args = [_array(a, letters) for a in expr.args]
    if expr.is_Add:
        return sum(args[1:], args[0])
    if expr.is_Mul:
        out = args[0]
        for a in args[1:]:
            out = out * a
        return out
    if expr.is_Pow:
        return np.power(np.asarray(args[0], dtype=np.float64), args[1])
    name = type(expr).__name__
    if name not in FUNCTIONS:
        raise NotAnArray(name)
    return FUNCTIONS[name](*args)
