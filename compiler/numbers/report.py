"""The report of one evaluation: a pydantic model whose fields are the quantity table and the ops' figures."""

from __future__ import annotations

from functools import lru_cache

from pydantic import BaseModel, create_model

from ..ops import REGISTRY
from ..terms.quantities import QUANTITIES, Quantity

Number = int | float


class PhaseTotals(BaseModel):
    """The flows of one part of a request (its prefill, or all of its decodes together)."""

    flops: Number
    flops_matrix: Number
    context_flops: Number
    read_bytes_state: Number
    write_bytes_state: Number


class ReportHead(BaseModel):
    """What was evaluated: the model, the phase, the request shape and every option the numbers used."""

    model: str
    phase: str
    scenario: dict[str, int]
    options: dict[str, str]       # conventions and paths together (the key every earlier output had)
    conventions: dict[str, str]   # run-wide counting conventions: --attention, --logits, --ledger, ...
    paths: dict[str, str]         # the spec's own execution paths: its `option`s, --option NAME=WORD


REQUEST_PARTS = {  # request phase only (§2.2.3): its prefill and its G − 1 decodes apart
    "prefill": (PhaseTotals | None, None),
    "decode": (PhaseTotals | None, None),
    "decode_steps": (int | None, None),
    "context_token_reads": (Number | None, None),
    "positions_retained": (int | None, None),
}


def _annotation(quantity: Quantity):
    return dict[str, Number] if quantity.by in ("component", "kind", "parts") else Number


@lru_cache(maxsize=8)
def _model_for(figure_keys: tuple[str, ...]) -> type[BaseModel]:
    figures = {spec.figures.key: (list[spec.figures.model], []) for spec in REGISTRY.values()
               if spec.figures and spec.figures.key in figure_keys}
    return create_model("Report", __base__=ReportHead, __doc__="Every quantity of the table for one phase; base "
                        "units (FLOPs, bytes, params).", **{q.name: (_annotation(q), ...) for q in QUANTITIES},
                        **figures, **REQUEST_PARTS)


def report_model() -> type[BaseModel]:
    """The Report class for the ops registered now: one field per quantity, one list per op's figures."""
    return _model_for(tuple(spec.figures.key for spec in REGISTRY.values() if spec.figures))


Report = report_model()
