"""What every primitive op declares: its arguments, its widths, and a cost function."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any

import sympy as sp

from ..terms.cost import COST_FIELDS, ZERO, Cost  # noqa: F401  (re-exported: the ops write Costs)
from ..terms.symbols import S

SOFTMAX_FLOPS_PER_SCORE = 5  # scale, max, subtract, exp, normalise: a convention, not a measurement
# a dropout mask keeps one byte per element (Korthikanti et al. 2022 §4.1: "the dropout masks which only
# require a single byte per element")
MASK_BYTES = 1


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
    conventions: dict[str, str] = field(default_factory=dict)
    # positions a window looks back on before the call: S, or in a replay stage the letter S_w its stage
    # substitution gives a value (graph.costs._stage)
    window_history: sp.Expr = S


def stored_values(count, fmt, ctx: CostContext):
    """A weight tensor's parameter count under the `scales` convention: its `count` values, and with
    `--scales stored` its block scales too, as a checkpoint's safetensors total counts them (issue 25:
    MiniMax-M2's published 228,703,644,928 is its logical count plus 62 × 223,872 FP8 tile scales). Its
    bytes are the format's either way: they always hold the scales."""
    return count + fmt.scale_count(count) if ctx.conventions.get("scales") == "stored" else count


@dataclass(frozen=True)
class Saved:
    """What one call of an op keeps for its backward pass, in bytes per call (the scenario's letters).

    `inputs`: it keeps the tensors it reads (a linear needs its input for the weight gradient); a tensor
    several ops keep is held once. `scores`: tensors of one entry per query-key pair (softmax output,
    dropout mask and output), what selective recomputation drops and recomputes (Korthikanti et al. 2022
    §5). `own`: other tensors it makes and keeps (dropout masks, the permuted rows of routed experts).
    """

    inputs: bool = False
    scores: sp.Expr = ZERO
    own: sp.Expr = ZERO


def dropout_on(ctx: CostContext) -> bool:
    """Whether a training step runs with dropout (`--dropout on`): its masks are kept for the backward pass."""
    return ctx.conventions.get("dropout") == "on"


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
    # what one call keeps for its backward pass (a training step, compiler/train): every op says
    saved: Callable[[SimpleNamespace, CostContext], Saved] | None = None
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
    # the kernel one call runs, for its expected time (compiler/timing): (kind of an efficiency table's points,
    # the number format it computes in or None, its shape in the scenario's letters) at a phase; None: a
    # memory-bound kernel, timed at the device's measured copy bandwidth
    timing: Callable[[SimpleNamespace, str], tuple[str, str | None, dict[str, sp.Expr]]] | None = None
    # the shape one card's kernel runs when a `shard` word gives it `work` of the op over a tensor-parallel group
    # whose positions split over `positions` cards (context parallelism): (the timing shape's numbers, the word,
    # work, positions) → its numbers (a column split's products are tp × narrower)
    card_shape: Callable[[dict[str, float], str, float, float], dict[str, float]] | None = None
    # a training step's kernels where they run unfused (`--attention-kernel eager`): (the forward's matrix FLOPs
    # as those kernels compute them, the bytes their forward and backward write and read between them, the
    # GEMM shape their products run as)
    unfused: Callable[[SimpleNamespace, CostContext], tuple[sp.Expr, sp.Expr, dict[str, sp.Expr]]] | None = None

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
    from ..terms.symbols import B

    held = B * per_request
    return {"state_bytes": held, "state_fixed": per_request, "read_state": held, "write_state": held}


Term = tuple[str, tuple[sp.Expr, ...]]  # a mode term: `window(128)` -> ("window", (128,))


def describe_terms(terms: tuple[Term, ...]) -> str:
    """`window(128) + top(512)` as a person wrote it."""
    return " + ".join(name if not args else f"{name}({', '.join(sp.sstr(a) for a in args)})" for name, args in terms)
