"""Closed forms as a reader writes them, for the diagram's labels: min and max as the language spells them,
⌊x⌋ and ⌈x⌉, powers as x^2, products with a centred dot, and a piecewise form as its cases,
`{2 if P = 1 and S > 0; 7 + P if S > 0; else 3 + max(4, P)}`, never sympy's `Piecewise((…), …)`, `Eq(…)` or
`Max(…)` (issue 25)."""

from __future__ import annotations

import sympy as sp
from sympy.printing.str import StrPrinter


class _Readable(StrPrinter):
    def _function(self, name: str, expr) -> str:
        return f"{name}({', '.join(self._print(a) for a in expr.args)})"

    def _print_Min(self, expr):
        return self._function("min", expr)

    def _print_Max(self, expr):
        return self._function("max", expr)

    def _print_floor(self, expr):
        return f"⌊{self._print(expr.args[0])}⌋"

    def _print_ceiling(self, expr):
        return f"⌈{self._print(expr.args[0])}⌉"

    def _print_Equality(self, expr):
        return f"{self._print(expr.lhs)} = {self._print(expr.rhs)}"

    def _print_Unequality(self, expr):
        return f"{self._print(expr.lhs)} ≠ {self._print(expr.rhs)}"

    def _print_And(self, expr):
        return " and ".join(self._print(a) for a in expr.args)

    def _print_Or(self, expr):
        return " or ".join(f"({self._print(a)})" if isinstance(a, sp.And) else self._print(a) for a in expr.args)

    def _print_Piecewise(self, expr):
        cases = [self._print(value) if condition is sp.true else f"{self._print(value)} if {self._print(condition)}"
                 for value, condition in expr.args]
        if expr.args[-1][1] is sp.true and len(cases) > 1:
            cases[-1] = f"else {cases[-1]}"
        return "{" + "; ".join(cases) + "}"


def readable(value) -> str:
    """`value` (a sympy expression or a number) as a label shows it."""
    if not isinstance(value, sp.Basic):  # a plain int: nothing to print but its digits
        return str(value)
    text = _Readable({"order": "none"}).doprint(value)
    return text.replace("**", "^").replace("*", "·")


__all__ = ["readable"]
