"""What every primitive op declares: its arguments, its widths, and a cost function."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, fields
from types import SimpleNamespace
from typing import Any

import sympy as sp

ZERO = sp.Integer(0)


@dataclass(frozen=True)
class Cost:
    """Per-instance costs of one call, in the scenario's letters; zero unless an op says otherwise."""

    params: sp.Expr = ZERO
    weight_bytes: sp.Expr = ZERO
    flops_matrix: sp.Expr = ZERO
    flops_nonmatrix: sp.Expr = ZERO
    context_flops: sp.Expr = ZERO          # part of flops_matrix: query-context interaction
    state_bytes: sp.Expr = ZERO            # held after the call, all requests of the batch
    state_per_token: sp.Expr = ZERO        # growth of one request's state per position (c_state)
    state_fixed: sp.Expr = ZERO            # one request's state that does not grow with H (M_fixed)
    state_buffer: sp.Expr = ZERO           # the part of state_bytes held in raw buffers (kind `buffer`)
    temp_bytes: sp.Expr = ZERO             # temporaries of one instance during the call, freed after
    selected_expert_bytes: sp.Expr = ZERO  # weights of the experts one token is routed to
    read_weights: sp.Expr = ZERO           # shared weights, read once per call
    read_lookups: sp.Expr = ZERO           # table rows gathered per token
    read_state: sp.Expr = ZERO
    read_activations: sp.Expr = ZERO
    write_state: sp.Expr = ZERO
    write_activations: sp.Expr = ZERO

    def __post_init__(self) -> None:
        for name in COST_FIELDS:  # a cost rule may write a plain 0; every field is a sympy value after this
            value = getattr(self, name)
            if isinstance(value, int):
                object.__setattr__(self, name, sp.Integer(value))

    def __add__(self, other: "Cost") -> "Cost":
        return Cost(**{f: getattr(self, f) + getattr(other, f) for f in COST_FIELDS})

    def scaled(self, factor: sp.Expr) -> "Cost":
        return Cost(**{f: getattr(self, f) * factor for f in COST_FIELDS})

    def map(self, fn: Callable[[sp.Expr], sp.Expr]) -> "Cost":
        return Cost(**{f: fn(getattr(self, f)) for f in COST_FIELDS})


COST_FIELDS: tuple[str, ...] = tuple(f.name for f in fields(Cost))


@dataclass(frozen=True)
class Arg:
    """One argument an op accepts. kind: signature | dim | expr | bool | enum | mode | dtype | state.

    A `mode` is a word or a call such as `window(128)`; `choices` lists them as `name/arity`, and
    `sums` lets terms be added (`window(128) + top(512)`).
    """

    name: str
    kind: str
    default: Any = None
    required: bool = False
    choices: tuple[str, ...] = ()
    doc: str = ""
    sums: bool = False


@dataclass(frozen=True)
class CostContext:
    """What a cost function may know beyond its own arguments."""

    act_bytes: sp.Expr
    states: tuple[SimpleNamespace, ...] = ()  # arguments of the caches an `attend` reads
    options: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class OpSpec:
    """A primitive op kind: the only place where a cost rule lives."""

    kind: str
    doc: str
    args: tuple[Arg, ...]
    widths: Callable[[SimpleNamespace], tuple[sp.Expr | None, sp.Expr | None]]
    cost: Callable[[SimpleNamespace, CostContext], Cost]
    positional: tuple[str, ...] = ()
    produces: bool = True          # False for sinks such as `cache`
    input_rule: str = "concat"     # concat: sources side by side; each: every source has the width
    state_kind: Callable[[SimpleNamespace], str] | None = None  # class in state_by_kind, for stateful ops

    def arg(self, name: str) -> Arg | None:
        return next((a for a in self.args if a.name == name), None)



def fixed_state(per_request: sp.Expr) -> dict[str, sp.Expr]:
    """State of a fixed size per request, read and written back whole once per call (§2.3.4)."""
    from ..symbols import B

    held = B * per_request
    return {"state_bytes": held, "state_fixed": per_request, "read_state": held, "write_state": held}


Term = tuple[str, tuple[sp.Expr, ...]]  # a mode term: `window(128)` -> ("window", (128,))


def describe_terms(terms: tuple[Term, ...]) -> str:
    """`window(128) + top(512)` as a person wrote it."""
    return " + ".join(name if not args else f"{name}({', '.join(sp.sstr(a) for a in args)})" for name, args in terms)
