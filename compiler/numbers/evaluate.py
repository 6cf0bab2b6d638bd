"""Numbers for one phase and request shape: every quantity in base units, as a pydantic report."""

from __future__ import annotations

import math
from fractions import Fraction

import sympy as sp
from pydantic import BaseModel
from sympy.core.function import AppliedUndef

from archcost.dsl.errors import ArchError, Diagnostic

from ..graph import costs
from ..graph.compiled import Compiled
from ..terms.letters import LOWEST
from ..terms.quantities import LEVELS, MOVED
from ..terms.scenario import Scenario, at_phase, call_form
from ..terms.symbols import B, G, H, P, S
from .assemble import Evaluator, Fallback, Numbers, assemble
from .leaves import leaves, phase_forms
from .report import Report, report_model

Number = int | float
class WholeScenario(ArchError):
    """A refusal that concerns the scenario as a whole, not one op of the spec: never located at an op."""


MAX_DECODE_STEPS = 1_000_000  # decodes whose steps change form (floors, windows) are summed one by one


def evaluate(compiled: Compiled, phase: str, scenario: Scenario) -> Report:
    """Evaluate every quantity; ArchError (E400) names any dimension the spec left unbound."""
    _check(scenario)
    return report_model()(**report_data(compiled, phase, scenario))


def report_data(compiled: Compiled, phase: str, scenario: Scenario) -> dict:
    """The report as data: numbers from the generated evaluators of the phase's forms, or, when one of them
    cannot be vouched for, from the symbolic path, which says what went wrong and where."""
    built = leaves(compiled, phase)
    shape = scenario.model_dump()
    evaluator = fast_evaluator(compiled, phase)
    if evaluator is not None:
        try:
            return assemble(head(compiled), built.plan, phase, shape, Numbers(evaluator(**shape)))
        except Fallback:
            pass
    return assemble(head(compiled), built.plan, phase, shape, _SymbolicNumbers(compiled, built.leaves, scenario))


def head(compiled: Compiled) -> dict:
    return {"model": compiled.name, "options": compiled.options_named(), "conventions": compiled.conventions(),
            "paths": compiled.execution_paths()}


def fast_evaluator(compiled: Compiled, phase: str) -> Evaluator | None:
    """The phase's generated evaluator, built once per compiled model (None when a leaf is not plain)."""
    key = ("evaluator", phase)
    if key not in compiled.memo:
        plain = phase_forms(compiled, phase)
        compiled.memo[key] = Evaluator(plain) if plain is not None else None
    return compiled.memo[key]


class _SymbolicNumbers:
    """Leaf values from the closed forms with sympy: slower, and the one that locates what went wrong."""

    def __init__(self, compiled: Compiled, found: dict, scenario: Scenario):
        self.compiled, self.found, self.scenario = compiled, found, scenario

    def total(self, key: str):
        leaf = self.found[key]
        return _Evaluator(self.compiled, leaf.phase, self.scenario).total(leaf.field)

    def leaf(self, key: str):
        leaf = self.found[key]
        return _Evaluator(self.compiled, leaf.phase, self.scenario)(leaf.expr, leaf.field)


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


def number_of(compiled: Compiled, value: sp.Expr) -> Number:
    """A scenario-free expression as a number, or the ArchError that says why it is not one."""
    return _Evaluator(compiled, "decode", Scenario())._number(sp.Integer(value) if isinstance(value, int) else value)


def state_bytes_at(compiled: Compiled, history: int, batch: int = 1) -> Number:
    """Context state held by `batch` requests of `history` positions each (the chapter's M(H))."""
    value = substituted(compiled.total("state_bytes"), {H: sp.Integer(history), B: sp.Integer(batch)})
    return _Evaluator(compiled, "decode", Scenario(B=batch, S=history))._number(value)


def attention_crossover(compiled: Compiled) -> float:
    """The prefill length n (B = 1, S = 0) at which query-context FLOPs equal all other matrix FLOPs."""
    attention = at_phase(compiled.total("context_flops"), "prefill", compiled.options)
    rest = at_phase(compiled.total("flops_matrix"), "prefill", compiled.options) - attention
    balance = sp.expand((attention - rest).xreplace({B: 1, S: 0}))
    roots = [r for r in sp.Poly(balance, P).nroots(n=30) if r.is_real and r > 0] if balance.has(P) else []
    if not roots:
        raise ArchError([Diagnostic(code="E407", message="query-context FLOPs never catch up with the "
                                    "other matrix FLOPs in this model")])
    return float(min(roots))


def _check(scenario: Scenario) -> None:
    bad = [(k, getattr(scenario, k), low) for k, low in LOWEST.items() if getattr(scenario, k) < low]
    if bad:
        raise ArchError([Diagnostic(code="E401", message=f"`{k}` = {v}; it must be at least {low}")
                         for k, v, low in bad])


class _Evaluator:
    """Turns per-call expressions into numbers for one phase and request shape."""

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
        closed = at_phase(expr, self.phase, self.compiled.options, level=level)
        values = {B: sp.Integer(sc.B), S: sp.Integer(sc.S), P: sp.Integer(sc.P), G: sp.Integer(sc.G)}
        return self._number(substituted(closed, values))

    def _exact(self, expr: sp.Expr, level: bool):
        """The phase's closed form of `expr` as an exact function of (B, S, P, G), built once per compiled model
        and reused by every scenario; None when the form needs more than those letters (an unbound name)."""
        key = ("exact", expr, self.phase, level)
        memo = self.compiled.memo
        if key not in memo:
            closed = at_phase(sp.Integer(expr) if isinstance(expr, int) else expr, self.phase,
                              self.compiled.options, level=level)
            plain = not (closed.free_symbols - {B, S, P, G}) and not closed.atoms(AppliedUndef)
            memo[key] = exact_function(closed, B, S, P, G) if plain else None  # else the symbolic path says why
        return memo[key]

    def _request_flow(self, expr: sp.Expr) -> Number:
        """Prefill, then the G − 1 decodes, decode j seeing S + P + j cached positions: summed in closed
        form when a decode is polynomial in j, else step by step, exactly (floors, windows, replay)."""
        sc = self.scenario
        call = substituted(call_form(expr, self.compiled.options), {B: sp.Integer(sc.B)})
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


class OpCost(BaseModel):
    """One op of the graph evaluated for the call: its shape, and its costs per instance and in all layers."""

    op: str
    kind: str
    component: str
    layers: Number
    shape: str
    params: Number
    flops_matrix: Number
    flops_nonmatrix: Number
    flops_matrix_all_layers: Number
    bytes_moved_all_layers: Number  # weights and rows read, context read and written (the roofline's R)


def by_op(compiled: Compiled, phase: str, scenario: Scenario) -> list[OpCost]:
    """Every op with its shape and costs, for `archcost eval --by-op` (Tables 2-1 to 2-6 row by row)."""
    from ..ops import shape_text

    _check(scenario)
    value = _Evaluator(compiled, phase, scenario)
    rows = []
    for node_id, data in compiled.graph.nodes(data=True):
        op, cost = data["op"], data["cost"]
        matrix = value(cost.flops_matrix, "flops_matrix")
        moved = sum(value(getattr(cost, f), f) for f in MOVED)
        layers = value(op.multiplicity, "params")
        rows.append(OpCost(op=node_id, kind=op.kind, component=op.component, layers=layers,
                           shape=shape_text(op), params=value(cost.params, "params"), flops_matrix=matrix,
                           flops_nonmatrix=value(cost.flops_nonmatrix, "flops_nonmatrix"),
                           flops_matrix_all_layers=layers * matrix, bytes_moved_all_layers=layers * moved))
    return rows
