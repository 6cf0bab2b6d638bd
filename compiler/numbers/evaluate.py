"""Numbers for one phase and request shape: every quantity in base units, as a pydantic report, from the plain
forms (the one numeric engine); sympy only to find a prefill crossover's root and, on failure, to say why."""

from __future__ import annotations

import sympy as sp
from pydantic import BaseModel

from archcost.dsl.errors import ArchError, Diagnostic

from ..graph.compiled import Compiled
from ..terms.letters import LOWEST
from ..terms.quantities import MOVED
from ..terms.scenario import Scenario, at_phase
from ..terms.symbols import B, P, S
from .assemble import Evaluator, Fallback, Numbers, assemble, dumped, excluded_of
from .leaves import leaves, phase_forms
from .plain import PlainEvaluator
from .report import Report, report_model

Number = int | float


def evaluate(compiled: Compiled, phase: str, scenario: Scenario) -> Report:
    """Evaluate every quantity; ArchError (E400) names any dimension the spec left unbound."""
    _check(scenario)
    return report_model()(**report_data(compiled, phase, scenario))


def report_read(compiled: Compiled, phase: str, scenario: Scenario, reads: tuple[str, ...] | None = None) -> dict:
    """The report as JSON shows it (Report.model_dump(exclude_none=True), as the formula cache gives it), of every
    quantity or of only those `reads` names: what a table prints, without the leaves of everything else."""
    _check(scenario)
    data = report_data(compiled, phase, scenario, reads)
    return dumped(data, excluded_of(leaves(compiled, phase, reads).plan))


def report_data(compiled: Compiled, phase: str, scenario: Scenario, reads: tuple[str, ...] | None = None) -> dict:
    """The report as data (of every quantity and figure, or of those `reads` names), its numbers from the
    evaluators of the phase's plain forms; when one of them cannot be vouched for, the symbolic path says what
    went wrong and where."""
    built = leaves(compiled, phase, reads)
    shape = scenario.model_dump()
    evaluator = fast_evaluator(compiled, phase, reads)
    if evaluator is not None:
        try:
            return assemble(head(compiled), built.plan, phase, shape, Numbers(evaluator(**shape)))
        except Fallback:
            pass
    from .symbolic import report_failure

    raise report_failure(compiled, built.leaves, built.plan, head(compiled), phase, scenario)


def head(compiled: Compiled) -> dict:
    """What every report of the model says it evaluated (the assembly copies it into each): built once."""
    if "head" not in compiled.memo:
        compiled.memo["head"] = {"model": compiled.name, "options": compiled.options_named(),
                                 "conventions": compiled.conventions_named(), "paths": compiled.execution_paths()}
    return compiled.memo["head"]


def fast_evaluator(compiled: Compiled, phase: str, reads: tuple[str, ...] | None = None) -> Evaluator | None:
    """The phase's generated evaluator (of the leaves `reads` names), built once per compiled model (None when a
    leaf is not plain)."""
    key = ("evaluator", phase, reads)
    if key not in compiled.memo:
        plain = phase_forms(compiled, phase, reads)
        compiled.memo[key] = Evaluator(plain) if plain is not None else None
    return compiled.memo[key]


def number_of(compiled: Compiled, value) -> Number:
    """A scenario-free expression as a number, or the ArchError that says why it is not one."""
    return PlainEvaluator(compiled, "decode", Scenario())(value, "params")


def state_bytes_at(compiled: Compiled, history: int, batch: int = 1, state=None) -> Number:
    """Context state held by `batch` requests of `history` positions each (the chapter's M(H)): the state a
    decode leaves when it brings the history to `history`; `state` is another state expression (one card's)."""
    at = Scenario(B=batch, S=history - 1, P=1)
    held = compiled.total("state_bytes") if state is None else state
    return PlainEvaluator(compiled, "decode", at)(held, "state_bytes")


def attention_crossover(compiled: Compiled) -> float:
    """The prefill length n (B = 1, S = 0) at which query-context FLOPs equal all other matrix FLOPs."""
    attention = at_phase(compiled.total("context_flops"), "prefill", compiled.conventions)
    rest = at_phase(compiled.total("flops_matrix"), "prefill", compiled.conventions) - attention
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
    value = PlainEvaluator(compiled, phase, scenario)
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
