"""The Cost record: one op instance's costs in one call, field by field, each with its letter, unit and meaning.

The ground floor's record: ops write it, the graph sums it, the quantity table reads its fields.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, fields

import sympy as sp

ZERO = sp.Integer(0)


def _field(letter: str, unit: str, meaning: str, level: bool = False, default=ZERO):
    """A cost field with what it means: `letter` places it under M, F or R in printed formulas; a `level`
    is held at the end of a phase (a request keeps its last value), the others are flows summed over calls."""
    return field(default=default, metadata={"letter": letter, "unit": unit, "meaning": meaning, "level": level})


@dataclass(frozen=True)
class Cost:
    """Per-instance costs of one call, in the scenario's letters; zero unless an op says otherwise."""

    params: sp.Expr = _field("M", "parameters", "parameters", level=True)
    # None: not said, so every parameter is active (a rule may say 0: routed experts a token can skip)
    params_active: sp.Expr | None = _field("", "parameters", "parameters one token's forward pass multiplies "
                                           "(top-k of the routed experts)", level=True, default=None)
    params_row_read: sp.Expr = _field("", "parameters", "parameters of tables a token only reads rows of "
                                      "(embeddings): multiplied by nothing", level=True)
    weight_bytes: sp.Expr = _field("M", "bytes", "bytes of weights", level=True)
    flops_matrix: sp.Expr = _field("F", "FLOPs", "matrix FLOPs")
    flops_nonmatrix: sp.Expr = _field("F", "FLOPs", "non-matrix FLOPs")
    context_flops: sp.Expr = _field("F", "FLOPs", "query-context FLOPs (part of the matrix FLOPs)")
    state_bytes: sp.Expr = _field("M", "bytes", "bytes of context state held after the call (B requests, "
                                  "H = S + P)", level=True)
    kv_bytes_per_token: sp.Expr = _field("M", "bytes", "bytes of state per position per request (c_state)",
                                         level=True)
    state_fixed: sp.Expr = _field("", "bytes", "one request's state that does not grow with H (M_fixed)",
                                  level=True)
    state_buffer: sp.Expr = _field("", "bytes", "the part of state_bytes held in raw buffers (kind `buffer`)",
                                   level=True)
    temp_bytes: sp.Expr = _field("", "bytes", "temporaries of one instance during the call, freed after",
                                 level=True)
    selected_expert_bytes: sp.Expr = _field("", "bytes", "weights of the experts one token is routed to",
                                            level=True)
    read_weights: sp.Expr = _field("R", "bytes", "bytes of shared weights read")  # once per call
    read_lookups: sp.Expr = _field("R", "bytes", "bytes of table rows gathered")  # per token
    read_state: sp.Expr = _field("R", "bytes", "bytes of context state read")
    read_activations: sp.Expr = _field("R", "bytes", "bytes of activations read")
    write_state: sp.Expr = _field("R", "bytes", "bytes of context state written")
    write_activations: sp.Expr = _field("R", "bytes", "bytes of activations written")

    def __post_init__(self) -> None:
        for name in COST_FIELDS:  # a cost rule may write a plain 0; every field is a sympy value after this
            value = getattr(self, name)
            if isinstance(value, int):
                object.__setattr__(self, name, sp.Integer(value))
        if self.params_active is None:  # every parameter is active, unless the rule says otherwise
            object.__setattr__(self, "params_active", self.params)

    def __add__(self, other: Cost) -> Cost:
        return Cost(**{f: getattr(self, f) + getattr(other, f) for f in COST_FIELDS})

    def scaled(self, factor: sp.Expr) -> Cost:
        return Cost(**{f: getattr(self, f) * factor for f in COST_FIELDS})

    def map(self, fn: Callable[[sp.Expr], sp.Expr]) -> Cost:
        return Cost(**{f: fn(getattr(self, f)) for f in COST_FIELDS})


COST_FIELDS: tuple[str, ...] = tuple(f.name for f in fields(Cost))
