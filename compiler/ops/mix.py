"""`mix`: per row, a weighted sum of `candidates` vectors of `width` (depth connections).

Seed 002 §2.5.2 and Table 2-5 "Kết nối độ sâu": Attention Residuals mix block representations
along depth, 2·width FLOPs per candidate per row; mHC mixes residual streams. The candidates are
representations kept for the whole forward pass, not context state across calls.
"""

from __future__ import annotations

from types import SimpleNamespace

from ..terms.symbols import B, P, m
from .base import SOFTMAX_FLOPS_PER_SCORE, ZERO, Arg, Cost, CostContext, OpSpec, Saved


def widths(a: SimpleNamespace):
    return a.width, a.width


def cost(a: SimpleNamespace, ctx: CostContext) -> Cost:
    weighted_sums = 2 * m * a.width * a.candidates            # a multiply-add per candidate value
    # a softmax over candidates scored by a learned query: a dot product and softmax per candidate
    scores = m * a.candidates * (2 * a.width + SOFTMAX_FLOPS_PER_SCORE) if a.scored else ZERO
    as_matrix = a.flops_as == "matrix"
    return Cost(
        params=a.params,
        weight_bytes=a.params * a.dtype,
        flops_matrix=weighted_sums if as_matrix else ZERO,
        flops_nonmatrix=scores + (ZERO if as_matrix else weighted_sums),
        read_weights=a.params * a.dtype,
        temp_bytes=B * P * a.kept * a.width * ctx.act_bytes,  # the kept representations of every token
        read_activations=m * a.candidates * a.width * ctx.act_bytes,
        write_activations=m * a.width * ctx.act_bytes,
    )


def saved(a: SimpleNamespace, ctx: CostContext) -> Saved:
    """The candidates it weighs, for the weights' gradient."""
    return Saved(inputs=True)


SPEC = OpSpec(
    kind="mix",
    doc=__doc__,
    args=(
        Arg("width", "dim", required=True, doc="width of each mixed vector"),
        Arg("candidates", "expr", required=True, doc="vectors summed per row (a total over all mixes)"),
        Arg("scored", "bool", False, doc="weights come from a softmax over learned-query scores"),
        Arg("flops_as", "enum", "matrix", choices=("matrix", "nonmatrix"), doc="how the weighted sums count"),
        Arg("params", "expr", 0, doc="learned vectors (pseudo-queries, mixing weights)"),
        Arg("kept", "expr", 0, doc="representations per token kept for the forward pass"),
        Arg("dtype", "dtype", "weights", doc="storage format of the parameters"),
    ),
    widths=widths,
    cost=cost,
    saved=saved,
)
