"""Numbers for one phase and request shape: every quantity in base units, as a pydantic report."""

from __future__ import annotations

import math
from fractions import Fraction

import sympy as sp
from sympy.printing.pycode import PythonCodePrinter
from pydantic import BaseModel

from archcost.dsl.errors import ArchError, Diagnostic

from . import costs
from .ops import REGISTRY
from .ops.cache import KINDS
from .pipeline import Compiled
from .resolve import COMPONENTS
from .scenario import LEVELS, Scenario, at_phase, call_form
from .symbols import B, G, H, P, S

Number = int | float
PART_FLOWS = ("flops_matrix", "flops_nonmatrix", "context_flops", "read_state", "write_state")


class ExpertUse(BaseModel):
    """One MoE op under the run's routing (seed 002 §2.4.2, Example 2-4), per layer and call."""

    op: str
    layers: Number
    experts: Number              # E
    top: Number                  # k
    routed_rows: Number          # Σ t_e = m·k
    rows_per_expert: Number      # t_e when rows spread evenly: m·k / E
    distinct_experts: Number     # U under the routing option
    read_bytes_per_layer: Number  # U · N_e · bytes


class PhaseTotals(BaseModel):
    """The flows of one part of a request (its prefill, or all of its decodes together)."""

    flops: Number
    flops_matrix: Number
    context_flops: Number
    read_bytes_state: Number
    write_bytes_state: Number


class Report(BaseModel):
    """Every quantity of DESIGN.md's vocabulary for one phase; base units (FLOPs, bytes, params)."""

    model: str
    phase: str
    scenario: dict[str, int]
    options: dict[str, str]
    params: Number
    params_by_component: dict[str, Number]
    weight_bytes: Number
    flops: Number
    flops_matrix: Number
    flops_nonmatrix: Number
    flops_by_component: dict[str, Number]
    context_flops: Number
    state_bytes: Number
    state_by_kind: dict[str, Number]
    state_fixed_bytes: Number        # one request's state that does not grow with context (M_fixed)
    kv_bytes_per_token: Number       # one request's state growth per position (c_state)
    temp_bytes_peak: Number          # the largest temporary any one op holds during the call
    selected_expert_bytes: Number    # routed-expert weights one token selects, all layers (Table 2-C)
    read_bytes: dict[str, Number]
    write_bytes: dict[str, Number]
    state_read_by_kind: dict[str, Number]   # read_bytes.state split like state_by_kind
    state_write_by_kind: dict[str, Number]
    experts: list[ExpertUse] = []
    # request phase only (§2.2.3): its prefill and its G − 1 decodes apart
    prefill: PhaseTotals | None = None
    decode: PhaseTotals | None = None
    decode_steps: int | None = None
    context_token_reads: Number | None = None
    positions_retained: int | None = None


def evaluate(compiled: Compiled, phase: str, scenario: Scenario) -> Report:
    """Evaluate every quantity; ArchError (E400) names any dimension the spec left unbound."""
    _check(scenario)
    value = _Evaluator(compiled, phase, scenario)
    read = {k: value.total(f"read_{k}") for k in ("weights", "lookups", "state", "activations")}
    write = {k: value.total(f"write_{k}") for k in ("state", "activations")}
    flops_matrix, flops_nonmatrix = value.total("flops_matrix"), value.total("flops_nonmatrix")
    report = Report(
        model=compiled.name, phase=phase, scenario=_shape(scenario, phase),
        options=compiled.options_named(),
        params=value.total("params"),
        params_by_component=value.each(costs.by(compiled.graph, "params", _component, COMPONENTS), "params"),
        weight_bytes=value.total("weight_bytes"),
        flops=flops_matrix + flops_nonmatrix, flops_matrix=flops_matrix, flops_nonmatrix=flops_nonmatrix,
        flops_by_component=value.each(_flops_by_component(compiled), "flops"),
        context_flops=value.total("context_flops"),
        state_bytes=value.total("state_bytes"),
        state_by_kind=value.each(_by_kind(compiled, "state_bytes"), "state_bytes"),
        state_fixed_bytes=value.total("state_fixed"),
        kv_bytes_per_token=value.total("state_per_token"),
        temp_bytes_peak=_temp_peak(compiled, phase, scenario),
        selected_expert_bytes=value.total("selected_expert_bytes"),
        read_bytes={**read, "total": sum(read.values())},
        write_bytes={**write, "total": sum(write.values())},
        state_read_by_kind=value.each(_by_kind(compiled, "read_state"), "read_state"),
        state_write_by_kind=value.each(_by_kind(compiled, "write_state"), "write_state"),
        experts=_expert_uses(compiled, phase, scenario),
    )
    return _with_request_parts(report, compiled, scenario) if phase == "request" else report


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


def _temp_peak(compiled: Compiled, phase: str, scenario: Scenario) -> Number:
    """Temporaries are freed op by op: the peak is the largest one, in a request's prefill."""
    value = _Evaluator(compiled, "prefill" if phase == "request" else phase, scenario)
    return max((value(data["cost"].temp_bytes, "temp_bytes") for _, data in compiled.graph.nodes(data=True)),
               default=0)


def _expert_uses(compiled: Compiled, phase: str, scenario: Scenario) -> list[ExpertUse]:
    """How each MoE op's rows land on its experts in one call (a request's prefill for `request`)."""
    from .ops.experts import distinct_experts
    from .symbols import m

    value = _Evaluator(compiled, "prefill" if phase == "request" else phase, scenario)
    routing = compiled.options.routing
    uses = []
    for node_id, data in compiled.graph.nodes(data=True):
        op = data["op"]
        if op.kind != "experts":
            continue
        a = op.args
        uses.append(ExpertUse(
            op=node_id, layers=value(op.multiplicity, "rows"), experts=value(a.count, "rows"), top=value(a.top, "rows"),
            routed_rows=value(m * a.top, "rows"), rows_per_expert=value(m * a.top / a.count, "rows"),
            distinct_experts=value(distinct_experts(a, routing), "rows"),
            read_bytes_per_layer=value(data["cost"].read_weights, "read_weights")))
    return uses


def _component(op) -> str:
    return op.component


def _flops_by_component(compiled: Compiled) -> dict[str, sp.Expr]:
    matrix = costs.by(compiled.graph, "flops_matrix", _component, COMPONENTS)
    nonmatrix = costs.by(compiled.graph, "flops_nonmatrix", _component, COMPONENTS)
    return {k: matrix[k] + nonmatrix[k] for k in matrix}


def _state_kind(op) -> str:
    kind_of = REGISTRY[op.kind].state_kind
    return kind_of(op.args) if kind_of else "kv"


def _by_kind(compiled: Compiled, field: str) -> dict[str, sp.Expr]:
    """A state quantity split into kv, latent, window, ..., recurrent, conv, buffer (attend reads
    count as the kind of the cache they read; compressor buffers are their own kind)."""
    kind_of = lambda op: _state_kind(compiled.graph.nodes[op.states[0]]["op"]) if op.states else _state_kind(op)  # noqa: E731
    by_kind = costs.by(compiled.graph, field, kind_of, KINDS)
    if field == "state_bytes":
        buffers = costs.by(compiled.graph, "state_buffer", kind_of, KINDS)
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
    lowest = {"B": 1, "S": 0, "P": 1, "G": 1}
    bad = [(k, getattr(scenario, k), low) for k, low in lowest.items() if getattr(scenario, k) < low]
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
        try:
            return self(self.compiled.total(field), field)
        except ArchError as error:
            raise self._locate(field) or error from None

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
        closed = at_phase(expr, self.phase, self.compiled.options, level=level)
        sc = self.scenario
        values = {B: sp.Integer(sc.B), S: sp.Integer(sc.S), P: sp.Integer(sc.P), G: sp.Integer(sc.G)}
        return self._number(substituted(closed, values))

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
            raise ArchError([Diagnostic(code="E401", message=f"this scenario gives `{sp.sstr(value)}`, not a number: "
                                        "a size divides by zero or turns negative here")])
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
        moved = sum(value(getattr(cost, f), f) for f in ("read_weights", "read_lookups", "read_state", "write_state"))
        layers = value(op.multiplicity, "params")
        rows.append(OpCost(op=node_id, kind=op.kind, component=op.component, layers=layers,
                           shape=shape_text(op), params=value(cost.params, "params"), flops_matrix=matrix,
                           flops_nonmatrix=value(cost.flops_nonmatrix, "flops_nonmatrix"),
                           flops_matrix_all_layers=layers * matrix, bytes_moved_all_layers=layers * moved))
    return rows
