"""`attend`: the query-context interaction QKᵀ and AV of `heads` heads over a cache.

Seed 002 §2.1.3: F_attn = 2·heads·(qk + v)·N_pair with causal pairs N_pair = B(PS + P(P+1)/2),
or B·P·(S+P) pairs when the full rectangle is scored and masked afterwards; §2.3.6: each layer
reads its cached entries once per step, shared by the query heads of a group.
"""

from __future__ import annotations

from types import SimpleNamespace

from .. import symbols
from .base import ZERO, Arg, Cost, CostContext, OpSpec
from .cache import entry_bytes

SOFTMAX_FLOPS_PER_SCORE = 5  # scale, max, subtract, exp, normalise: a convention, not a measurement


def widths(a: SimpleNamespace):
    return a.heads * a.qk, a.heads * a.v


def cost(a: SimpleNamespace, ctx: CostContext) -> Cost:
    over = ctx.options.get("attention") or a.over           # a run-wide override, named in outputs
    pairs = {"rectangle": symbols.N_rect, "half_rectangle": symbols.N_rect / 2}.get(over, symbols.N_pair)
    interaction = 2 * a.heads * (a.qk + a.v) * pairs       # QKᵀ: 2·qk, AV: 2·v per head and pair
    old_entries = symbols.B * symbols.S                    # the cache as it was before this call
    return Cost(
        flops_matrix=interaction,
        context_flops=interaction,
        flops_nonmatrix=SOFTMAX_FLOPS_PER_SCORE * a.heads * pairs,
        read_state=sum((old_entries * entry_bytes(s) for s in ctx.states), ZERO),
        read_activations=symbols.m * a.heads * a.qk * ctx.act_bytes,
        write_activations=symbols.m * a.heads * a.v * ctx.act_bytes,
    )


SPEC = OpSpec(
    kind="attend",
    doc=__doc__,
    args=(
        Arg("heads", "dim", required=True, doc="query heads"),
        Arg("qk", "dim", required=True, doc="query-key dot-product width per head"),
        Arg("v", "dim", required=True, doc="value width per head"),
        Arg("over", "enum", "causal", choices=("causal", "rectangle", "half_rectangle"),
            doc="which pairs are computed"),
        Arg("state", "state", None, doc="the cache read; default: the last cache in scope"),
    ),
    widths=widths,
    cost=cost,
)
