"""The one bridge from expression AST to sympy: `to_sympy(expr, env)`; never eval or sympify."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from functools import lru_cache

import sympy as sp

from archcost.dsl import ast
from archcost.dsl.errors import Diagnostic, did_you_mean
from archcost.dsl.text import format_expr

from ..terms import symbols

MAX_DEPTH = 200
MAX_DIGITS = 40          # integers beyond 10^40 are typos or attacks, not model dimensions
MAX_EXPONENT = 256

FUNCTIONS: dict[str, tuple[Callable[..., sp.Expr], int | None]] = {
    "min": (symbols.Min, None),
    "max": (symbols.Max, None),
    "floor": (sp.floor, 1),
    "ceil": (sp.ceiling, 1),
}


@lru_cache(maxsize=1)
def mode_words() -> tuple[str, ...]:
    """Words with arguments that name how state grows or which entries an attention reads (`window(128)`):
    every `mode` argument's calls, from the op definitions. They stay unevaluated until that argument reads them."""
    from ..ops import REGISTRY

    calls = (choice.partition("/")[0] for spec in REGISTRY.values() for arg in spec.args if arg.kind == "mode"
             for choice in arg.choices if "/" in choice)
    return tuple(dict.fromkeys(calls))


class Problem(Exception):
    """A user error found while resolving; carries its diagnostic until it is collected."""

    def __init__(self, diagnostic: Diagnostic):
        super().__init__(diagnostic.message)
        self.diagnostic = diagnostic


class Env:
    """Names visible in one scope; unbound names become dimension symbols, remembered with their span."""

    def __init__(self, values: Mapping[str, sp.Basic], problem: Callable[..., Problem], first_use: dict,
                 nearby: dict | None = None):
        self.values = dict(values)
        self.problem = problem
        self.first_use = first_use
        self.nearby = {} if nearby is None else nearby  # unbound symbol -> names its scope had, for hints

    def child(self, values: Mapping[str, sp.Basic]) -> Env:
        return Env(values, self.problem, self.first_use, self.nearby)

    def lookup(self, name: ast.Name) -> sp.Basic:
        if name.id in self.values:
            return self.values[name.id]
        if name.id.lower() in ("true", "false"):  # `True`: Python's spelling, not the language's
            raise self.problem("E215", f"`{name.id}` is not a value of the language", name.span,
                               hint=f"booleans are written `{name.id.lower()}`")
        if name.id in symbols.SCENARIO:
            return symbols.SCENARIO[name.id]
        symbol = symbols.dimension(name.id)
        self.first_use.setdefault(symbol, name.span)
        self.nearby.setdefault(symbol, tuple(self.values))
        return symbol


def to_sympy(expr: ast.Expr, env: Env, depth: int = 0) -> sp.Basic:
    """Convert an expression to sympy in `env`; raise Problem for what cannot be a value."""
    if depth > MAX_DEPTH:
        raise env.problem("E106", f"expression nested deeper than {MAX_DEPTH} levels", expr.span)
    match expr:
        case ast.Num():
            return _number(expr, env)
        case ast.Bool():
            return sp.true if expr.value else sp.false
        case ast.Name():
            return env.lookup(expr)
        case ast.Neg():
            return -_numeric(expr.operand, env, depth)
        case ast.BinOp():
            return _binop(expr, env, depth)
        case ast.Call():
            return _call(expr, env, depth)
        case ast.Tuple():
            raise env.problem("E215", "a tuple is not a number", expr.span)
    raise AssertionError(expr)


def _number(expr: ast.Num, env: Env) -> sp.Rational:
    if len(expr.text.split(".")[0]) > MAX_DIGITS:
        raise env.problem("E214", f"number longer than {MAX_DIGITS} digits", expr.span)
    return sp.Rational(expr.text)  # exact: "0.5" -> 1/2, never a float


def _numeric(expr: ast.Expr, env: Env, depth: int) -> sp.Expr:
    value = to_sympy(expr, env, depth + 1)
    if isinstance(value, sp.logic.boolalg.BooleanAtom):
        raise env.problem("E215", "a boolean is not a number", expr.span)
    return value


def _binop(expr: ast.BinOp, env: Env, depth: int) -> sp.Expr:
    if expr.op in ("==", "!="):
        return _compare(expr, env, depth)
    if expr.op in ("<", "<=", ">", ">="):
        return _order(expr, env, depth)
    left = _numeric(expr.left, env, depth)
    right = _numeric(expr.right, env, depth)
    if expr.op in ("/", "//") and right == 0:
        raise env.problem("E217", "division by zero", expr.right.span)
    match expr.op:
        case "+":
            return left + right
        case "-":
            return left - right
        case "*":
            return left * right
        case "/":
            return left / right
        case "//":
            return sp.floor(left / right)
        case "^":
            if not right.is_number:  # 10^10^H would be evaluated at H = 10^6: refuse it here, not hang then
                raise env.problem("E218", "an exponent must be a number known when the spec compiles",
                                  expr.right.span)
            if abs(right) > MAX_EXPONENT:
                raise env.problem("E214", f"exponent larger than {MAX_EXPONENT}", expr.right.span)
            power = left**right
            # a fractional exponent is exact only where the power is a fraction (4 ^ 0.5 = 2): 10 ^ 1.5 is
            # irrational, and no exact evaluator (nor a cache entry) could hold it (a fuzzer find)
            if not right.is_integer and not (power.is_number and power.is_rational):
                raise env.problem("E220", f"`{format_expr(expr)}` is not a whole number or a fraction",
                                  expr.span, hint="write the value, or a whole exponent")
            return power
    raise AssertionError(expr.op)


def _compare(expr: ast.BinOp, env: Env, depth: int) -> sp.Basic:
    """`a == b` between two numbers, two booleans or two words; undecidable symbols are an error."""
    left, right = to_sympy(expr.left, env, depth + 1), to_sympy(expr.right, env, depth + 1)
    if isinstance(left, sp.Symbol) and isinstance(right, sp.Symbol):
        for side in (left, right):
            env.first_use.pop(side, None)  # words compared, not dimensions
        same = left.name == right.name
    else:
        difference = sp.expand(left - right) if not _is_bool(left) and not _is_bool(right) else None
        if difference is None:
            same = left == right
        elif difference.is_number:
            same = difference == 0
        else:
            raise env.problem("E304", f"cannot decide `{sp.sstr(left)} {expr.op} {sp.sstr(right)}`: "
                              "bind the names it uses", expr.span)
    return sp.true if same == (expr.op == "==") else sp.false


def _order(expr: ast.BinOp, env: Env, depth: int) -> sp.Basic:
    """`a < b` and the like between numbers known when the spec compiles (the layer index of a pattern)."""
    left, right = _numeric(expr.left, env, depth), _numeric(expr.right, env, depth)
    difference = sp.expand(left - right)
    if not difference.is_number:
        raise env.problem("E304", f"cannot decide `{sp.sstr(left)} {expr.op} {sp.sstr(right)}`: bind the names it "
                          "uses", expr.span)
    held = {"<": difference < 0, "<=": difference <= 0, ">": difference > 0, ">=": difference >= 0}[expr.op]
    return sp.true if held else sp.false


def _is_bool(value) -> bool:
    return isinstance(value, sp.logic.boolalg.BooleanAtom)


def _call(expr: ast.Call, env: Env, depth: int) -> sp.Expr:
    modes = mode_words()
    if expr.func in modes:
        return sp.Function(expr.func)(*(_numeric(a, env, depth) for a in expr.args))
    if expr.func not in FUNCTIONS:
        known = f"functions: {', '.join(sorted(FUNCTIONS))}; mode words: {', '.join(sorted(modes))}"
        raise env.problem("E216", f"unknown function `{expr.func}`", expr.span,
                          hint=did_you_mean(expr.func, [*FUNCTIONS, *modes]) or known)
    func, arity = FUNCTIONS[expr.func]
    if arity is not None and len(expr.args) != arity or not expr.args:
        raise env.problem("E216", f"`{expr.func}` takes {arity or 'one or more'} argument(s)", expr.span)
    return func(*(_numeric(a, env, depth) for a in expr.args))
