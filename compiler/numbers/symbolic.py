"""The symbolic path: closed forms evaluated with sympy, only to locate why the plain forms gave no number.

Every printed number comes from the plain forms (plain.py, assemble.py). When they cannot vouch for one (a
division by zero, a negative total, a decode sum past its limit, a letter left unbound), this path evaluates the
same closed forms with sympy and raises the ArchError that names the letter or the op and its line.
"""

from __future__ import annotations

import math
from fractions import Fraction

import sympy as sp
from sympy.core.function import AppliedUndef

from archcost.dsl.errors import ArchError, Diagnostic

from ..graph import costs
from ..graph.compiled import Compiled
from ..terms.quantities import LEVELS
from ..terms.scenario import Scenario, at_phase, call_form
from ..terms.symbols import B, G, P, S
from .assemble import MAX_DECODE_STEPS, assemble

Number = int | float


class WholeScenario(ArchError):
    """A refusal that concerns the scenario as a whole, not one op of the spec: never located at an op."""


def failure(compiled: Compiled, phase: str, scenario: Scenario, expr, field: str) -> Exception:
    """Why `expr` has no plain number at this scenario: the ArchError the symbolic path raises, or an internal
    error when it finds a number the plain forms could not (the two engines disagree: a bug of ours)."""
    try:
        value = SymbolicEvaluator(compiled, phase, scenario)(expr, field)
    except ArchError as error:
        return error
    return RuntimeError(f"the plain forms gave no {field} where sympy gives {value}")


def report_failure(compiled: Compiled, found: dict, plan: list, head: dict, phase: str,
                   scenario: Scenario) -> Exception:
    """Why a report has no plain numbers at this scenario (as `failure`, for every leaf of the report)."""
    try:
        assemble(head, plan, phase, scenario.model_dump(), _SymbolicNumbers(compiled, found, scenario))
    except ArchError as error:
        return error
    return RuntimeError(f"the plain forms of {compiled.name} gave no {phase} report where sympy gives one")


class _SymbolicNumbers:
    """Leaf values from the closed forms with sympy: slower, and the one that locates what went wrong."""

    def __init__(self, compiled: Compiled, found: dict, scenario: Scenario):
        self.compiled, self.found, self.scenario = compiled, found, scenario

    def total(self, key: str):
        leaf = self.found[key]
        return SymbolicEvaluator(self.compiled, leaf.phase, self.scenario).total(leaf.field)

    def leaf(self, key: str):
        leaf = self.found[key]
        return SymbolicEvaluator(self.compiled, leaf.phase, self.scenario)(leaf.expr, leaf.field)


def substituted(expr: sp.Expr, values: dict) -> sp.Expr:
    """`expr` with values put in for its letters. A value that makes a min, max or floor divide by
    zero is the scenario's fault: an E401, never a sympy exception."""
    if not isinstance(expr, sp.Basic):  # a cost that came out as a plain Python number
        expr = sp.Integer(expr) if isinstance(expr, int) else sp.Rational(expr)
    try:
        return expr.xreplace(values)
    except (ValueError, TypeError, ZeroDivisionError):
        shown = ", ".join(f"{k} = {v}" for k, v in sorted(values.items(), key=lambda kv: str(kv[0])))
        raise ArchError([Diagnostic(code="E402", message=f"at {shown} a size of this model divides by zero")]) from None


class SymbolicEvaluator:
    """Per-call expressions evaluated with sympy at one phase and request shape: slow, and the path that says
    why a number cannot be had (which letter is unbound, which op divides by zero or goes negative). No
    printed number comes from here (numbers/plain.py): it runs only once the plain forms have failed."""

    def __init__(self, compiled: Compiled, phase: str, scenario: Scenario):
        self.compiled, self.phase, self.scenario = compiled, phase, scenario

    def total(self, field: str) -> Number:
        """Σ over the graph of a cost field, which is never negative: an op that makes it so is named."""
        try:
            value = self(self.compiled.total(field), field)
        except WholeScenario:
            raise
        except ArchError as error:
            raise self._locate(field) or error from None
        if value < 0:
            raise self._negative(field)
        return value

    def _negative(self, field: str) -> ArchError:
        for op in costs.ops(self.compiled.graph):
            own = self(self.compiled.total(field, lambda other, op=op: other is op), field)
            if own < 0:
                message = f"`{op.label}` gives {own:,} for {field} in this scenario; costs cannot be negative"
                return ArchError([self.compiled.ir.sources.diagnostic("E403", message, op.span)])
        return ArchError([Diagnostic(code="E403", message=f"{field} comes out negative in this scenario")])

    def _locate(self, field: str) -> ArchError | None:
        """The first op whose own `field` fails to evaluate, as an error pointing at its line."""
        for op in costs.ops(self.compiled.graph):
            try:
                self(self.compiled.total(field, lambda other, op=op: other is op), field)
            except ArchError as error:
                if error.codes == ["E402"]:
                    message = f"`{op.label}`: {error.diagnostics[0].message}"
                    return ArchError([self.compiled.ir.sources.diagnostic("E402", message, op.span)])
        return None

    def each(self, exprs: dict[str, sp.Expr], field: str) -> dict[str, Number]:
        return {k: self(v, field) for k, v in exprs.items()}

    def __call__(self, expr: sp.Expr, field: str) -> Number:
        level = field in LEVELS
        if self.phase == "request" and not level:
            return self._request_flow(expr)
        exact = self._exact(expr, level)
        sc = self.scenario
        if exact is not None:
            try:
                return _plain(exact(sc.B, sc.S, sc.P, sc.G))
            except (ZeroDivisionError, ValueError, TypeError, OverflowError):
                pass  # the symbolic path below says what went wrong, and where
        closed = at_phase(expr, self.phase, self.compiled.conventions, level=level)
        if closed.free_symbols - {B, S, P, G}:  # a name with no value, even where this scenario hides it (min(0, x))
            raise self._unbound(closed.free_symbols - {B, S, P, G})
        values = {B: sp.Integer(sc.B), S: sp.Integer(sc.S), P: sp.Integer(sc.P), G: sp.Integer(sc.G)}
        return self._number(substituted(closed, values))

    def _exact(self, expr: sp.Expr, level: bool):
        """The phase's closed form of `expr` as an exact function of (B, S, P, G), built once per compiled model
        and reused by every scenario; None when the form needs more than those letters (an unbound name)."""
        key = ("exact", expr, self.phase, level)
        memo = self.compiled.memo
        if key not in memo:
            closed = at_phase(sp.Integer(expr) if isinstance(expr, int) else expr, self.phase,
                              self.compiled.conventions, level=level)
            plain = not (closed.free_symbols - {B, S, P, G}) and not closed.atoms(AppliedUndef)
            memo[key] = exact_function(closed, B, S, P, G) if plain else None  # else the symbolic path says why
        return memo[key]

    def _request_flow(self, expr: sp.Expr) -> Number:
        """Prefill, then the G − 1 decodes, decode j seeing S + P + j cached positions: summed in closed
        form when a decode is polynomial in j, else step by step, exactly (floors, windows, replay)."""
        sc = self.scenario
        call = substituted(call_form(expr, self.compiled.conventions), {B: sp.Integer(sc.B)})
        if call.free_symbols - {S, P}:
            raise self._unbound(call.free_symbols - {S, P})
        first = self._number(substituted(call, {S: sp.Integer(sc.S), P: sp.Integer(sc.P)}))
        if sc.G == 1:
            return first
        j = sp.Symbol("j", nonnegative=True, integer=True)
        step = sp.expand(substituted(call, {S: sc.S + sc.P + j, P: sp.Integer(1)}))
        if step.free_symbols - {j}:
            raise self._unbound(step.free_symbols - {j})
        if step.is_polynomial(j):
            return first + self._number(sp.summation(step, (j, 0, sc.G - 2)))
        if sc.G - 1 > MAX_DECODE_STEPS:
            raise WholeScenario(
                [
                    Diagnostic(
                        code="E404",
                        message=f"G = {sc.G:,}: this model's decode steps are summed one "
                        f"by one, at most {MAX_DECODE_STEPS:,} of them",
                        hint="a request of that length is better split into turns",
                    )
                ]
            )
        decode = exact_function(step, j)
        try:
            return first + _plain(sum((decode(k) for k in range(sc.G - 1)), Fraction(0)))
        except (ZeroDivisionError, ValueError, TypeError):
            raise ArchError([Diagnostic(code="E402", message="a decode step of this request divides by "
                                        "zero")]) from None

    def _number(self, value: sp.Expr) -> Number:
        if value.free_symbols:
            raise self._unbound(value.free_symbols)
        if not (value.is_number and value.is_finite and value.is_real):
            raise ArchError([Diagnostic(code="E402", message="this scenario gives no finite number: a size "
                                        "divides by zero here")])
        return _plain(value)

    def _unbound(self, free: set[sp.Symbol]) -> ArchError:
        ir = self.compiled.ir
        return ArchError([ir.sources.diagnostic(
            "E400", f"cannot evaluate: `{s.name}` has no value", ir.first_use.get(s),
            hint=_unbound_hint(s.name, ir.nearby.get(s, ()))) for s in sorted(free, key=lambda s: s.name)])


def _unbound_hint(name: str, nearby: tuple[str, ...]) -> str:
    """The nearest name of the scope it was used in (a misspelled parameter), else how to bind it."""
    from archcost.dsl.errors import did_you_mean

    return did_you_mean(name, nearby) or f"bind it in the model, e.g. `{name} = ...`"


def exact_function(expr: sp.Expr, *symbols_in):
    """`expr` as a Python function of integers with exact rational arithmetic (generated from the
    compiled formula, never from user text)."""
    from sympy.printing.pycode import PythonCodePrinter  # the symbolic path only: its import is not free

    class ExactPrinter(PythonCodePrinter):
        """Rationals as Fractions, so a compiled step computes exactly with Python ints."""

        def _print_Rational(self, expr):
            return f"Fraction({expr.p}, {expr.q})"

        def _print_Half(self, expr):
            return "Fraction(1, 2)"

    names = {"Fraction": Fraction, "math": math, "floor": math.floor, "ceiling": math.ceil, "Min": min, "Max": max}
    return sp.lambdify(symbols_in, expr, modules=[names, "math"], printer=ExactPrinter)


def _plain(value) -> Number:
    """Exact integers stay integers; anything fractional becomes a float for JSON."""
    if isinstance(value, Fraction):
        return int(value) if value.denominator == 1 else float(value)
    if isinstance(value, int | float):
        return value
    if value.is_Integer:
        return int(value)
    return float(value)
