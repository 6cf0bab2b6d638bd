"""`elementwise`: per-token vector work (norms, activations, RoPE, residual adds, gating).

Seed 002 Table 2-1 "Chuẩn hóa, RoPE, activation và kết nối dư": weights are small vectors and
the FLOPs are non-matrix, kept apart from the matrix FLOPs the chapter's totals count.
"""

from __future__ import annotations

from types import SimpleNamespace

from ..terms import symbols
from .base import MASK_BYTES, ZERO, Arg, Cost, CostContext, OpSpec, Saved, dropout_on


def widths(a: SimpleNamespace):
    return (a.width if a.in_width is None else a.in_width), a.width


def cost(a: SimpleNamespace, ctx: CostContext) -> Cost:
    # seed 000's "2N per token" ledger counts a multiply-add per vector parameter as matrix work
    rows = ZERO if a.idle else a.rows  # an idle op holds its vectors and never runs
    as_matrix = 2 * rows * a.params if ctx.conventions.get("vector_params") == "matrix" else 0
    work = rows * a.flops
    return Cost(
        params=a.params,
        weight_bytes=a.params * a.dtype,
        flops_matrix=as_matrix + (work if a.flops_as == "matrix" else 0),
        flops_nonmatrix=work if a.flops_as == "nonmatrix" else 0,
        read_weights=ZERO if a.idle else a.params * a.dtype,
        read_activations=rows * (a.width if a.in_width is None else a.in_width) * a.inputs * ctx.act_bytes,
        write_activations=rows * a.width * ctx.act_bytes,
    )


def saved(a: SimpleNamespace, ctx: CostContext) -> Saved:
    """Its inputs unless `saves = none` (an add, a slice, a rotation by fixed angles need none); with
    dropout, a one-byte mask per element of each of its `dropout` masks (the dropout before a residual add:
    Korthikanti et al. 2022 §4.1)."""
    masks = a.rows * a.width * a.dropout * MASK_BYTES if dropout_on(ctx) and not a.idle else ZERO
    return Saved(inputs=a.saves == "input" and not a.idle, own=masks)


SPEC = OpSpec(
    kind="elementwise",
    doc=__doc__,
    input_rule="each",
    args=(
        Arg("width", "dim", required=True, doc="width of the output, and of each input unless in_width says"),
        Arg("in_width", "dim", None, doc="width of each input when it differs (a broadcast)"),
        Arg("flops", "expr", 0, doc="FLOPs per row"),
        Arg("flops_as", "enum", "nonmatrix", choices=("matrix", "nonmatrix"), doc="how its FLOPs are counted"),
        Arg("params", "expr", 0, doc="vector parameters, e.g. a norm's scale"),
        Arg("inputs", "dim", 1, doc="tensors read, e.g. 2 for a residual add"),
        Arg("rows", "expr", symbols.m, doc="rows processed"),
        Arg("dtype", "dtype", "weights", doc="storage format of the parameters"),
        Arg("saves", "enum", "input", choices=("input", "none"),
            doc="what its backward pass needs: its inputs (a norm, an activation), or none (an add, a slice, RoPE)"),
        Arg("dropout", "expr", 0, doc="dropout masks over `width` it applies in training (a residual add: one "
            "per branch)"),
        Arg("idle", "bool", False, doc="held and never run: its vectors count, no FLOPs and no reads (a skipped "
            "layer's norms and gates)"),
    ),
    widths=widths,
    cost=cost,
    saved=saved,
)
