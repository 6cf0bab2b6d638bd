"""Numbers for one phase and request shape: every quantity in base units, as a pydantic report."""

from __future__ import annotations

import math
from fractions import Fraction

import sympy as sp
from sympy.core.function import AppliedUndef
from sympy.printing.pycode import PythonCodePrinter
from pydantic import BaseModel

from archcost.dsl.errors import ArchError, Diagnostic

from . import costs
from .ops import REGISTRY
from .pipeline import Compiled
from .quantities import COMPONENTS, LEVELS, MOVED, QUANTITIES, STATE_KINDS, Quantity
from .report import PhaseTotals, Report, report_model
from .scenario import LOWEST, Scenario, at_phase, call_form
from .symbols import B, G, H, P, S

Number = int | float
class WholeScenario(ArchError):
    """A refusal that concerns the scenario as a whole, not one op of the spec: never located at an op."""


MAX_DECODE_STEPS = 1_000_000  # decodes whose steps change form (floors, windows) are summed one by one
PART_FLOWS = ("flops_matrix", "flops_nonmatrix", "context_flops", "read_state", "write_state")


def evaluate(compiled: Compiled, phase: str, scenario: Scenario) -> Report:
    """Evaluate every quantity; ArchError (E400) names any dimension the spec left unbound."""
    _check(scenario)
    value = _Evaluator(compiled, phase, scenario)
    numbers = {q.name: _quantity(q, compiled, value) for q in QUANTITIES}
    report = report_model()(model=compiled.name, phase=phase, scenario=_shape(scenario, phase),
                            options=compiled.options_named(), conventions=compiled.conventions(),
                            paths=compiled.execution_paths(), **numbers, **_figures(compiled, phase, scenario))
    return _with_request_parts(report, compiled, scenario) if phase == "request" else report


def _quantity(quantity: Quantity, compiled: Compiled, value: "_Evaluator"):
    """One quantity of the table, summed from the graph as its `by` says."""
    first = quantity.fields[0]
    if quantity.by == "parts":
        parts = {key: value.total(field) for key, field in quantity.parts}
        return {**parts, "total": sum(parts.values())}
    if quantity.by == "component":
        return value.each(_memo(compiled, ("component", quantity.fields), lambda: costs.by_fields(
            compiled.graph, quantity.fields, costs.component_of, COMPONENTS)), first)
    if quantity.by == "kind":
        return value.each(_memo(compiled, ("kind", first), lambda: _by_kind(compiled, first)), first)
    if quantity.by == "peak":
        return _peak(compiled, first, value)
    return sum(value.total(field) for field in quantity.fields) - sum(value.total(field) for field in quantity.less)


def substituted(expr: sp.Expr, values: dict) -> sp.Expr:
    """`expr` with values put in for its letters. A value that makes a min, max or floor divide by
    zero is the scenario's fault: an E401, never a sympy exception."""
    if not isinstance(expr, sp.Basic):  # a cost that came out as a plain Python number
        expr = sp.Integer(expr) if isinstance(expr, int) else sp.Rational(expr)
    try:
        return expr.xreplace(values)
    except (ValueError, TypeError, ZeroDivisionError):
        shown = ", ".join(f"{k} = {v}" for k, v in sorted(values.items(), key=lambda kv: str(kv[0])))
        raise ArchError([Diagnostic(code="E401", message=f"at {shown} a size of this model divides by zero")]) from None


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
        raise ArchError([Diagnostic(code="E401", message="query-context FLOPs never catch up with the "
                                    "other matrix FLOPs in this model")])
    return float(min(roots))


def _memo(compiled: Compiled, key, build):
    """A grouping of the graph's costs, built once per compiled model."""
    if key not in compiled.memo:
        compiled.memo[key] = build()
    return compiled.memo[key]


def _peak(compiled: Compiled, field: str, value: "_Evaluator") -> Number:
    """Temporaries are freed op by op: the peak is the largest one, in a request's prefill."""
    if value.phase == "request":
        value = _Evaluator(compiled, "prefill", value.scenario)
    return max((value(getattr(data["cost"], field), field) for _, data in compiled.graph.nodes(data=True)),
               default=0)


def _figures(compiled: Compiled, phase: str, scenario: Scenario) -> dict[str, list]:
    """The extra figures op definitions add (the experts' routing), for one call (a request's prefill)."""
    value = _Evaluator(compiled, "prefill" if phase == "request" else phase, scenario)
    options = compiled.options.cost_options()
    found: dict[str, list] = {spec.figures.key: [] for spec in REGISTRY.values() if spec.figures}
    for _, data in compiled.graph.nodes(data=True):
        figures = REGISTRY[data["op"].kind].figures
        if figures is not None:
            found[figures.key].append(figures.rows(data["op"], data["cost"], value, options))
    return found


def _by_kind(compiled: Compiled, field: str) -> dict[str, sp.Expr]:
    """A state quantity split into kv, latent, window, ..., recurrent, conv, buffer (attend reads
    count as the kind of the cache they read; compressor buffers are their own kind)."""
    graph = compiled.graph
    by_kind = costs.by(graph, field, lambda op: costs.state_kind_of(graph, op), STATE_KINDS)
    if field == "state_bytes":
        buffers = costs.by(graph, "state_buffer", lambda op: costs.state_kind_of(graph, op), STATE_KINDS)
        by_kind = {k: v - buffers[k] for k, v in by_kind.items()}
        by_kind["buffer"] = sp.Add(*buffers.values())
    return {k: v for k, v in by_kind.items() if v != 0} or {"kv": sp.Integer(0)}


def _with_request_parts(report: Report, compiled: Compiled, scenario: Scenario) -> Report:
    """Split a request's flows into its prefill and its decodes (Example 2-3 reads them apart)."""
    prefill = _Evaluator(compiled, "prefill", scenario)
    first = {f: prefill.total(f) for f in PART_FLOWS}
    whole = {f: getattr(report, f, None) for f in PART_FLOWS}
    whole.update(read_state=report.read_bytes["state"], write_state=report.write_bytes["state"])
    decodes = {f: whole[f] - first[f] for f in PART_FLOWS}
    growth = report.kv_bytes_per_token * scenario.B
    token_reads = Fraction(report.read_bytes["state"]) / growth if growth else None
    return report.model_copy(update={
        "prefill": _part(first), "decode": _part(decodes),
        "decode_steps": scenario.G - 1,
        "context_token_reads": _plain(token_reads) if token_reads is not None else None,
        "positions_retained": scenario.S + scenario.P + scenario.G - 1,
    })


def _part(flows: dict[str, Number]) -> PhaseTotals:
    return PhaseTotals(flops=flows["flops_matrix"] + flows["flops_nonmatrix"], flops_matrix=flows["flops_matrix"],
                       context_flops=flows["context_flops"], read_bytes_state=flows["read_state"],
                       write_bytes_state=flows["write_state"])


def _check(scenario: Scenario) -> None:
    bad = [(k, getattr(scenario, k), low) for k, low in LOWEST.items() if getattr(scenario, k) < low]
    if bad:
        raise ArchError([Diagnostic(code="E401", message=f"`{k}` = {v}; it must be at least {low}")
                         for k, v, low in bad])


def _shape(scenario: Scenario, phase: str) -> dict[str, int]:
    shape = scenario.model_dump()
    if phase == "decode":
        shape["P"] = 1
    if phase != "request":
        shape.pop("G")
    return shape


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
                return ArchError([self.compiled.ir.sources.diagnostic("E401", message, op.span)])
        return ArchError([Diagnostic(code="E401", message=f"{field} comes out negative in this scenario")])

    def _locate(self, field: str) -> ArchError | None:
        """The first op whose own `field` fails to evaluate, as an error pointing at its line."""
        for op in costs.ops(self.compiled.graph):
            try:
                self(self.compiled.total(field, lambda other, op=op: other is op), field)
            except ArchError as error:
                if error.codes == ["E401"]:
                    message = f"`{op.label}`: {error.diagnostics[0].message}"
                    return ArchError([self.compiled.ir.sources.diagnostic("E401", message, op.span)])
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
            raise WholeScenario([Diagnostic(code="E401", message=f"G = {sc.G:,}: this model's decode steps are summed one "
                                        f"by one, at most {MAX_DECODE_STEPS:,} of them",
                                        hint="a request of that length is better split into turns")])
        decode = exact_function(step, j)
        try:
            return first + _plain(sum((decode(k) for k in range(sc.G - 1)), Fraction(0)))
        except (ZeroDivisionError, ValueError, TypeError):
            raise ArchError([Diagnostic(code="E401", message="a decode step of this request divides by "
                                        "zero")]) from None

    def _number(self, value: sp.Expr) -> Number:
        if value.free_symbols:
            raise self._unbound(value.free_symbols)
        if not (value.is_number and value.is_finite and value.is_real):
            raise ArchError([Diagnostic(code="E401", message="this scenario gives no finite number: a size "
                                        "divides by zero here")])
        return _plain(value)

    def _unbound(self, free: set[sp.Symbol]) -> ArchError:
        ir = self.compiled.ir
        return ArchError([ir.sources.diagnostic(
            "E400", f"cannot evaluate: `{s.name}` has no value", ir.first_use.get(s),
            hint=f"bind it in the model, e.g. `{s.name} = ...`") for s in sorted(free, key=lambda s: s.name)])


class _ExactPrinter(PythonCodePrinter):
    """Rationals as Fractions, so a compiled step computes exactly with Python ints."""

    def _print_Rational(self, expr):
        return f"Fraction({expr.p}, {expr.q})"

    def _print_Half(self, expr):
        return "Fraction(1, 2)"


def exact_function(expr: sp.Expr, *symbols_in):
    """`expr` as a Python function of integers with exact rational arithmetic (generated from the
    compiled formula, never from user text)."""
    names = {"Fraction": Fraction, "math": math, "floor": math.floor, "ceiling": math.ceil, "Min": min, "Max": max}
    return sp.lambdify(symbols_in, expr, modules=[names, "math"], printer=_ExactPrinter)


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
    from .render.listing import shape_text

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
