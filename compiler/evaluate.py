"""Numbers for one phase and request shape: every quantity in base units, as a pydantic report."""

from __future__ import annotations

import sympy as sp
from pydantic import BaseModel

from archcost.dsl.errors import ArchError

from . import costs
from .ops.cache import KINDS
from .pipeline import Compiled
from .resolve import COMPONENTS
from .scenario import Scenario, at_phase, call_form
from .symbols import B, P, S

Number = int | float


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
    kv_bytes_per_token: Number
    read_bytes: dict[str, Number]
    write_bytes: dict[str, Number]
    prefill: PhaseTotals | None = None
    decode: PhaseTotals | None = None
    context_token_reads: Number | None = None
    positions_retained: int | None = None


def evaluate(compiled: Compiled, phase: str, scenario: Scenario) -> Report:
    """Evaluate every quantity; ArchError (E400) names any dimension the spec left unbound."""
    _check(scenario, phase)
    value = _Evaluator(compiled, phase, scenario)
    total = lambda field: value(compiled.total(field), field)  # noqa: E731
    read = {k: total(f"read_{k}") for k in ("weights", "lookups", "state", "activations")}
    write = {k: total(f"write_{k}") for k in ("state", "activations")}
    flops_matrix, flops_nonmatrix = total("flops_matrix"), total("flops_nonmatrix")
    report = Report(
        model=compiled.name, phase=phase, scenario=_shape(scenario, phase),
        options=compiled.options.model_dump(),
        params=total("params"),
        params_by_component=value.each(costs.by(compiled.graph, "params", _component, COMPONENTS), "params"),
        weight_bytes=total("weight_bytes"),
        flops=flops_matrix + flops_nonmatrix, flops_matrix=flops_matrix, flops_nonmatrix=flops_nonmatrix,
        flops_by_component=value.each(_flops_by_component(compiled), "flops"),
        context_flops=total("context_flops"),
        state_bytes=total("state_bytes"),
        state_by_kind=value.each(_state_by_kind(compiled), "state_bytes"),
        kv_bytes_per_token=total("state_per_token"),
        read_bytes={**read, "total": sum(read.values())},
        write_bytes={**write, "total": sum(write.values())},
    )
    if phase == "request":
        report = _with_request_parts(report, compiled, scenario)
    return report


def _component(op) -> str:
    return op.component


def _flops_by_component(compiled: Compiled) -> dict[str, sp.Expr]:
    matrix = costs.by(compiled.graph, "flops_matrix", _component, COMPONENTS)
    nonmatrix = costs.by(compiled.graph, "flops_nonmatrix", _component, COMPONENTS)
    return {k: matrix[k] + nonmatrix[k] for k in matrix}


def _state_by_kind(compiled: Compiled) -> dict[str, sp.Expr]:
    by_kind = costs.by(compiled.graph, "state_bytes", lambda op: getattr(op.args, "kind", "kv"), KINDS)
    return {k: v for k, v in by_kind.items() if v != 0} or {"kv": sp.Integer(0)}


def _with_request_parts(report: Report, compiled: Compiled, scenario: Scenario) -> Report:
    prefill = _Evaluator(compiled, "prefill", scenario)
    whole = _Evaluator(compiled, "request", scenario)
    parts = {}
    for name in ("flops_matrix", "flops_nonmatrix", "context_flops", "read_state", "write_state"):
        expr = compiled.total(name)
        first = prefill(expr, name)
        parts[name] = (first, whole(expr, name) - first)
    prefill_part, decode_part = ({
        "flops": parts["flops_matrix"][i] + parts["flops_nonmatrix"][i],
        "flops_matrix": parts["flops_matrix"][i], "context_flops": parts["context_flops"][i],
        "read_bytes_state": parts["read_state"][i], "write_bytes_state": parts["write_state"][i],
    } for i in (0, 1))
    per_token = report.kv_bytes_per_token * scenario.B
    token_reads = report.read_bytes["state"] / per_token if per_token else None
    return report.model_copy(update={
        "prefill": PhaseTotals(**prefill_part), "decode": PhaseTotals(**decode_part),
        "context_token_reads": _plain(sp.nsimplify(token_reads)) if token_reads is not None else None,
        "positions_retained": scenario.S + scenario.P + scenario.G - 1,
    })


def _check(scenario: Scenario, phase: str) -> None:
    from archcost.dsl.errors import Diagnostic

    bad = [(k, v, low) for k, v, low in (("B", scenario.B, 1), ("S", scenario.S, 0), ("P", scenario.P, 1),
                                           ("G", scenario.G, 1)) if v < low]
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
    """Turns a per-call expression into a number for one phase and shape."""

    def __init__(self, compiled: Compiled, phase: str, scenario: Scenario):
        self.compiled, self.phase, self.scenario = compiled, phase, scenario

    def __call__(self, expr: sp.Expr, field: str) -> Number:
        level = field in ("params", "weight_bytes", "state_bytes", "state_per_token")
        values = self.scenario.model_dump()
        if self.phase == "request" and not level:
            return self._request(expr)
        closed = at_phase(expr, self.phase, self.compiled.options, level=level)
        return self._number(closed.xreplace({B: values["B"], S: values["S"], P: values["P"],
                                             **_g(self.scenario)}))

    def each(self, exprs: dict[str, sp.Expr], field: str) -> dict[str, Number]:
        return {k: self(v, field) for k, v in exprs.items()}

    def _request(self, expr: sp.Expr) -> Number:
        """Prefill, then the G − 1 decodes, decode j seeing S + P + j cached positions."""
        sc = self.scenario
        call = call_form(expr, self.compiled.options).xreplace({B: sc.B})
        first = self._number(call.xreplace({S: sc.S, P: sc.P}))
        steps = sc.G - 1
        if steps == 0:
            return first
        j = sp.Symbol("j", nonnegative=True, integer=True)
        step = sp.expand(call.xreplace({S: sc.S + sc.P + j, P: 1}))
        return first + self._number(sp.summation(step, (j, 0, steps - 1)))

    def _number(self, value: sp.Expr) -> Number:
        if value.free_symbols:
            raise self._unbound(value.free_symbols)
        return _plain(value)

    def _unbound(self, free: set[sp.Symbol]) -> ArchError:
        ir = self.compiled.ir
        names = sorted(free, key=lambda s: s.name)
        return ArchError([ir.sources.diagnostic(
            "E400", f"cannot evaluate: `{s.name}` has no value", ir.first_use.get(s),
            hint=f"bind it in the model, e.g. `{s.name} = ...`") for s in names])


def _g(scenario: Scenario) -> dict:
    from .symbols import G

    return {G: scenario.G}


def _plain(value) -> Number:
    value = sp.nsimplify(value) if not isinstance(value, sp.Basic) else value
    if value.is_Integer:
        return int(value)
    if value.is_Rational or value.is_number:
        return float(value)
    raise AssertionError(value)


def state_bytes_at(compiled: Compiled, history: int, batch: int = 1) -> Number:
    """Context state held by `batch` requests of `history` positions each (the chapter's M(H))."""
    from .symbols import H

    return _plain(compiled.total("state_bytes").xreplace({H: history, B: batch}))


def attention_crossover(compiled: Compiled) -> float:
    """The prefill length n (B = 1, S = 0) at which query-context FLOPs equal all other matrix FLOPs."""
    attention = at_phase(compiled.total("context_flops"), "prefill", compiled.options)
    rest = at_phase(compiled.total("flops_matrix"), "prefill", compiled.options) - attention
    balance = sp.expand((attention - rest).xreplace({B: 1, S: 0}))
    roots = [r for r in sp.Poly(balance, P).nroots(n=30) if r.is_real and r > 0]
    if not roots:
        raise ArchError([compiled.ir.sources.diagnostic(
            "E401", "query-context FLOPs never catch up with the other matrix FLOPs", None)])
    return float(min(roots))
