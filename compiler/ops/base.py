"""What every primitive op declares: its arguments, its widths, and a cost function."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, fields
from types import SimpleNamespace
from typing import Any

import sympy as sp

ZERO = sp.Integer(0)


def _field(letter: str, unit: str, meaning: str, level: bool = False):
    """A cost field with what it means: `letter` places it under M, F or R in printed formulas; a `level`
    is held at the end of a phase (a request keeps its last value), the others are flows summed over calls."""
    return field(default=ZERO, metadata={"letter": letter, "unit": unit, "meaning": meaning, "level": level})


@dataclass(frozen=True)
class Cost:
    """Per-instance costs of one call, in the scenario's letters; zero unless an op says otherwise."""

    params: sp.Expr = _field("M", "parameters", "parameters", level=True)
    params_active: sp.Expr = _field("", "parameters", "parameters one token's forward pass multiplies (top-k of "
                                    "the routed experts)", level=True)
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
        if self.params_active is ZERO and self.params is not ZERO:  # every parameter is active, unless said
            object.__setattr__(self, "params_active", self.params)

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


Show = Callable[[Any], str]  # how a caller prints an expression inside a shape text


@dataclass(frozen=True)
class Figures:
    """Extra figures an op adds to a report under `key`: one `model` row per op instance."""

    key: str
    model: type
    rows: Callable[..., Any]  # (node, cost, options) -> {figure: (expr, field whose rule evaluates it) or a word}
    doc: str = ""


@dataclass(frozen=True)
class OpSpec:
    """A primitive op kind, defined once: arguments, cost rule, and everything else that asks about it.

    Resolver, renderers, evaluator, the language reference and error hints read these fields; none of
    them names an op kind.
    """

    kind: str
    doc: str
    args: tuple[Arg, ...]
    widths: Callable[[SimpleNamespace], tuple[sp.Expr | None, sp.Expr | None]]
    cost: Callable[[SimpleNamespace, CostContext], Cost]
    positional: tuple[str, ...] = ()
    produces: bool = True          # False for sinks such as `cache`
    input_rule: str = "concat"     # concat: sources side by side; each: every source has the width
    state_kind: Callable[[SimpleNamespace], str] | None = None  # class in state_by_kind, for stateful ops
    stores_state: bool = False     # holds context state that others read with `state = NAME`
    token_input: bool = False      # with nothing feeding it, it reads the token ids (the embedding)
    quantizable: bool = False      # its matrix weights follow a run's `--weights` format (seed 002 §2.6.2)
    shards: tuple[str, ...] = ("replicated",)  # the `shard` words it accepts (ops/sharding.py)
    shard: Callable[..., Any] | None = None    # its own sharding rule, when the words' standard one does not fit
    shape: Callable[[SimpleNamespace, Show], str] | None = None  # as the chapter's tables write it
    diagram_shape: Callable[[SimpleNamespace, Show], str] | None = None  # the diagram's second line
    unit_cost: Callable[[SimpleNamespace], tuple[sp.Expr, str]] | None = None  # (FLOPs, "pair"): F per unit
    drawn_as: str = "box"          # the diagram node's shape: box, cylinder (state) or hexagon
    figures: Figures | None = None
    formula: str = ""              # the cost rule in one line, for docs/language.md
    # what must hold between its arguments: (argument, message) for each violation a resolved call shows
    check: Callable[[SimpleNamespace], list[tuple[str, str]]] | None = None

    def arg(self, name: str) -> Arg | None:
        return next((a for a in self.args if a.name == name), None)

    @property
    def summary(self) -> str:
        """The first line of the docstring: what the op models."""
        return self.doc.strip().splitlines()[0] if self.doc.strip() else self.kind


def unequal_groups(heads, shared) -> bool:
    """Whether `heads` cannot share `shared` heads in equal groups (known only when both are numbers)."""
    groups = heads / shared
    return bool(groups.is_number and not (groups.is_integer and groups >= 1))


def fixed_state(per_request: sp.Expr) -> dict[str, sp.Expr]:
    """State of a fixed size per request, read and written back whole once per call (§2.3.4)."""
    from ..symbols import B

    held = B * per_request
    return {"state_bytes": held, "state_fixed": per_request, "read_state": held, "write_state": held}


Term = tuple[str, tuple[sp.Expr, ...]]  # a mode term: `window(128)` -> ("window", (128,))


def describe_terms(terms: tuple[Term, ...]) -> str:
    """`window(128) + top(512)` as a person wrote it."""
    return " + ".join(name if not args else f"{name}({', '.join(sp.sstr(a) for a in args)})" for name, args in terms)
