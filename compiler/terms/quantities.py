"""One table of the quantities every output reports: name, unit, meaning, and how each sums from the graph."""

from __future__ import annotations

from dataclasses import dataclass, fields
from functools import cache

from .letters import COMPONENTS, STATE_KINDS  # noqa: F401  (the classes; the op modules read them here)


@dataclass(frozen=True)
class Field:
    """A per-op cost field, as `Cost` declares it: summed Σ multiplicity·value over the graph's nodes."""

    name: str
    letter: str   # M, F or R in printed formulas; "" for the fields only reports use
    unit: str
    meaning: str
    level: bool   # held at the end of a phase (a request keeps its last value), else a flow summed over calls


@cache
def cost_fields() -> dict[str, Field]:
    """The fields `Cost` declares, read when first asked: the table itself imports no op (nor sympy)."""
    from .cost import Cost

    return {f.name: Field(f.name, **f.metadata) for f in fields(Cost)}


def __getattr__(name: str):
    """FIELDS and LEVELS, built from `Cost` on first use."""
    if name == "FIELDS":
        return cost_fields()
    if name == "LEVELS":
        return frozenset(field for field, f in cost_fields().items() if f.level)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


@dataclass(frozen=True)
class Quantity:
    """A reported quantity. `by` says how it sums: "" one total of `sources` over every node and edge;
    "component" or "kind" a total per class; "parts" one total per (key, field) of `parts` and their sum;
    "peak" the largest single op instance."""

    name: str
    unit: str
    meaning: str
    sources: tuple[str, ...] = ()
    by: str = ""
    parts: tuple[tuple[str, str], ...] = ()
    less: tuple[str, ...] = ()   # fields subtracted from the total of `sources`
    less_class: str = ""         # and the total of `sources` over the ops of this class (Table 2-B)

    @property
    def fields(self) -> tuple[str, ...]:
        return tuple(f for _, f in self.parts) if self.by == "parts" else self.sources

    @property
    def level(self) -> bool:
        return cost_fields()[self.fields[0]].level


READ_PARTS = (("weights", "read_weights"), ("lookups", "read_lookups"), ("state", "read_state"),
              ("activations", "read_activations"))
WRITE_PARTS = (("state", "write_state"), ("activations", "write_activations"))

QUANTITIES: tuple[Quantity, ...] = (
    Quantity("params", "parameters", "parameters stored", ("params",)),
    Quantity("params_by_component", "parameters", "parameters per class of Table 2-B", ("params",), "component"),
    Quantity(
        "params_active",
        "parameters",
        "what one token's forward pass multiplies: all but the routed experts, plus top-k of them",
        ("params_active",),
    ),
    Quantity(
        "params_active_no_embedding",
        "parameters",
        "params_active less the tables tokens only read rows "
        "of (embeddings, Engram; a tied head's table goes with them), as gpt-oss counts active",
        ("params_active",),
        less=("params_row_read",),
    ),
    Quantity(
        "params_active_no_vocabulary",
        "parameters",
        "params_active less the embedding_output class, the embedding and the head, as MiniMax counts active",
        ("params_active",),
        less_class="embedding_output",
    ),
    Quantity(
        "params_active_by_component",
        "parameters",
        "params_active per class (embedding_output holds the embedding and the head)",
        ("params_active",),
        "component",
    ),
    Quantity("weight_bytes", "bytes", "bytes of weights in their storage formats", ("weight_bytes",)),
    Quantity("flops", "FLOPs", "matrix and non-matrix FLOPs of the phase", ("flops_matrix", "flops_nonmatrix")),
    Quantity("flops_matrix", "FLOPs", "matrix FLOPs, 2 per multiply-add", ("flops_matrix",)),
    Quantity("flops_nonmatrix", "FLOPs", "norms, activations, softmax, routing, mixing", ("flops_nonmatrix",)),
    Quantity(
        "flops_by_component",
        "FLOPs",
        "all FLOPs per class of Table 2-B",
        ("flops_matrix", "flops_nonmatrix"),
        "component",
    ),
    Quantity(
        "context_flops", "FLOPs", "query-context interaction and index scans (part of flops_matrix)", ("context_flops",)
    ),
    Quantity("state_bytes", "bytes", "context state the batch holds after the phase", ("state_bytes",)),
    Quantity("state_by_kind", "bytes", "state_bytes per kind of state", ("state_bytes",), "kind"),
    Quantity(
        "state_fixed_bytes", "bytes", "one request's state that does not grow with context (M_fixed)", ("state_fixed",)
    ),
    Quantity(
        "kv_bytes_per_token", "bytes", "one request's state growth per position (c_state)", ("kv_bytes_per_token",)
    ),
    Quantity(
        "temp_bytes_peak", "bytes", "the largest temporary any one op holds during the call", ("temp_bytes",), "peak"
    ),
    Quantity(
        "selected_expert_bytes",
        "bytes",
        "routed-expert weights one token selects, all layers (Table 2-C)",
        ("selected_expert_bytes",),
    ),
    Quantity(
        "read_bytes",
        "bytes",
        "bytes read: weights once per call, table rows, context state, activations",
        by="parts",
        parts=READ_PARTS,
    ),
    Quantity("write_bytes", "bytes", "bytes written: context state, activations", by="parts", parts=WRITE_PARTS),
    Quantity("state_read_by_kind", "bytes", "read_bytes.state per kind of state", ("read_state",), "kind"),
    Quantity("state_write_by_kind", "bytes", "write_bytes.state per kind of state", ("write_state",), "kind"),
)
BY_NAME: dict[str, Quantity] = {q.name: q for q in QUANTITIES}


def reading(names) -> tuple[str, ...]:
    """What a command reads of a report, as one key: the quantities of `names` in the table's order, then the
    op figures it names (`experts`). Leaves, forms and evaluators are built for these alone; a quantity name
    this table lacks is taken for a figure's key (the report model has one field per key, report.py)."""
    chosen = set(names)
    return (*(q.name for q in QUANTITIES if q.name in chosen), *sorted(chosen - set(BY_NAME)))
# the columns of `archcost sweep`, in its order
SWEPT: tuple[Quantity, ...] = tuple(BY_NAME[name] for name in ("flops", "flops_matrix", "context_flops",
                                                               "read_bytes", "write_bytes", "state_bytes"))

# What a call must move through memory on the roofline (seed 000 §02): weights, rows gathered, context read
# and written; activations only when asked, since fused kernels keep most of them on chip.
MOVED = ("read_weights", "read_lookups", "read_state", "write_state")
ACTIVATION_TRAFFIC = ("read_activations", "write_activations")


def moved_bytes(values: dict[str, float], activations: bool = False) -> float:
    """Bytes moved, from the evaluated fields of one op or one whole call."""
    return sum(values[f] for f in MOVED + (ACTIVATION_TRAFFIC if activations else ()))


def report_fields(report) -> dict[str, float]:
    """A report's parts back under their field names (`read_bytes["weights"]` as `read_weights`)."""
    return {field: getattr(report, q.name)[key] for q in QUANTITIES if q.by == "parts" for key, field in q.parts}


EXPERT_FIGURES = "experts"  # the rows the MoE op adds to a report (ops/experts.py, ExpertUse)
