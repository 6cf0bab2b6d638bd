"""`lookup`: gather one row of an `entries × width` table per token (embeddings, positions).

Seed 002 §2.1.2, Table 2-1: the table counts as params, a lookup costs no matrix FLOPs; §2.2.2
Example 2-2: rows are read per token, not the whole table per batch.
"""

from __future__ import annotations

from types import SimpleNamespace

from ..terms import symbols
from .base import Arg, Cost, CostContext, OpSpec, Saved, stored_values


def widths(a: SimpleNamespace):
    return None, a.signature[1] * a.per_token  # reads token ids, not a feature tensor


def shape(a: SimpleNamespace, show) -> str:
    return f"{show(a.signature[0])}×{show(a.signature[1])}"


def diagram_shape(a: SimpleNamespace, show) -> str:
    return f"{show(a.signature[0])} × {show(a.signature[1])}"


def cost(a: SimpleNamespace, ctx: CostContext) -> Cost:
    entries, width = a.signature
    gathered = 0 if a.idle else a.rows * a.per_token  # an idle table is held and never read
    params = 0 if a.tied else entries * width  # a tied table belongs to another lookup
    return Cost(
        params=stored_values(params, a.dtype, ctx),
        params_row_read=params,  # published "active" counts differ on whether these count (gpt-oss: not)
        weight_bytes=params * a.dtype,
        read_lookups=gathered * (width * a.dtype),     # whole rows, per token
        write_activations=gathered * width * ctx.act_bytes,
    )


def saved(a: SimpleNamespace, ctx: CostContext) -> Saved:
    """Nothing: its backward scatters the rows' gradients by the token ids, which are not activations."""
    return Saved()


SPEC = OpSpec(
    kind="lookup",
    shards=("replicated", "vocab"),
    doc=__doc__,
    positional=("signature",),
    args=(
        Arg("signature", "signature", required=True, doc="table entries -> row width"),
        Arg("rows", "expr", symbols.m, doc="tokens looking rows up"),
        Arg("per_token", "dim", 1, doc="rows each token gathers (Engram: one per hash bucket)"),
        Arg("tied", "bool", False, doc="the table of another lookup (MTP's shared embedding): no params"),
        Arg("idle", "bool", False, doc="held and never looked up: its params count, no reads (a draft model's "
            "table, held for the head tied to it while its input is its target's embedding)"),
        Arg("dtype", "dtype", "weights", doc="storage format of the table"),
    ),
    widths=widths,
    cost=cost,
    saved=saved,
    token_input=True,
    shape=shape,
    diagram_shape=diagram_shape,
    formula="params = entries·width; F = 0; R = rows·per_token·width·bytes (rows gathered, not the table)",
)
