"""`index`: an indexer scan that scores stored index entries before selection (CSA, CSA2).

Seed 002 §2.3.3, Table 2-4: 2·heads·dim FLOPs per scanned entry, I = the entries the queries scan;
each query scans every completed entry (causal), or, in the reference indexer, every query scores
all ⌊H/r⌋ entries of the call (the rectangle); `limit` caps it to a candidate pool (§2.3.6).
The head-weighted sum of the scores, 2·heads per entry, is reduced inside the kernel (DeepSeek-V3.2's
fp8_index: relu(q·k)·w summed over the heads) or run as a matrix product of the weights and the scores
(transformers' DeepseekV32Indexer: `torch.matmul(weights, scores)`), which counts as matrix work.
"""

from __future__ import annotations

from types import SimpleNamespace

import sympy as sp

from ..terms.symbols import B, H, Max, Min, P, S, m
from .base import ZERO, Arg, Cost, CostContext, OpSpec, Saved
from .cache import entry_bytes

TOP_K_FLOPS_PER_ENTRY = 2  # head-weighted sum of scores, then a comparison in the top-k selection


def widths(a: SimpleNamespace):
    return a.heads * a.dim, None


def floor_sum(n, r):
    """Σ_{t=1..n} ⌊t/r⌋: the completed entries the first n positions of a request see in total."""
    q = sp.floor(n / r)
    return r * q * (q - 1) / 2 + q * (n - q * r + 1)


def capped_floor_sum(n, r, k):
    """Σ_{t=1..n} min(k, ⌊t/r⌋): entries the first n queries see when each sees at most k."""
    return floor_sum(Min(n, k * r - 1), r) + k * Max(0, n - k * r + 1)


def stored(a: SimpleNamespace, history):
    """Entries one query can scan after `history` positions, within the candidate pool if any."""
    entries = sp.floor(history / a.ratio)
    return entries if a.limit is None else Min(a.limit, entries)


def with_args(a: SimpleNamespace, **changes) -> SimpleNamespace:
    return SimpleNamespace(**{**vars(a), **changes})


def scanned(a: SimpleNamespace):
    """I: query-entry pairs the scan scores in this call."""
    if a.over == "rectangle":
        return B * P * stored(a, H)
    if a.over == "sequential":  # the reference rectangle on a fresh prompt; after a history, a token at a time
        fresh = with_args(a, over="rectangle")
        return sp.Piecewise((scanned(with_args(a, over="causal")), S > 0), (scanned(fresh), True))
    if a.limit is None:
        return B * (floor_sum(S + P, a.ratio) - floor_sum(S, a.ratio))
    return B * (capped_floor_sum(S + P, a.ratio, a.limit) - capped_floor_sum(S, a.ratio, a.limit))


def diagram_shape(a: SimpleNamespace, show) -> str:
    return f"{show(a.heads)} heads × {show(a.dim)} · one per {show(a.ratio)} · {a.over}"


def per_entry(a: SimpleNamespace):
    return 2 * a.heads * a.dim, "scanned entry"


def saved(a: SimpleNamespace, ctx: CostContext) -> Saved:
    """Its queries and weights, and one score per head and scanned entry (before the head sum), what selective
    recomputation drops."""
    return Saved(inputs=True, scores=a.heads * scanned(a) * ctx.act_bytes)


def cost(a: SimpleNamespace, ctx: CostContext) -> Cost:
    pairs = scanned(a)
    dot_products = 2 * a.heads * a.dim * pairs
    head_sum = 2 * a.heads * pairs
    matrix = dot_products + (head_sum if a.head_sum == "matmul" else ZERO)
    return Cost(
        flops_matrix=matrix,
        context_flops=matrix,
        flops_nonmatrix=TOP_K_FLOPS_PER_ENTRY * pairs + (ZERO if a.head_sum == "matmul" else head_sum),
        read_state=sum((B * stored(a, H) * entry_bytes(s) for s in ctx.states), ZERO),
        read_activations=m * a.heads * a.dim * ctx.act_bytes,
    )


SPEC = OpSpec(
    kind="index",
    doc=__doc__,
    produces=True,
    args=(
        Arg("heads", "dim", required=True, doc="index heads"),
        Arg("dim", "dim", required=True, doc="index key width per head"),
        Arg("ratio", "dim", required=True, doc="one index entry per `ratio` positions"),
        Arg("over", "enum", "causal", choices=("causal", "rectangle", "sequential"),
            doc="causal: each query scans the entries before it; rectangle: the reference indexer; sequential: "
                "the rectangle on a fresh prompt, causal when a prompt continues a history one token at a time"),
        Arg("head_sum", "enum", "reduce", choices=("reduce", "matmul"),
            doc="the head-weighted sum of the scores: reduced in the kernel (non-matrix), or a matrix product of "
                "the weights and the scores (transformers' eager indexer)"),
        Arg("limit", "dim", None, doc="a candidate pool: each query scans at most this many entries (CSA2 Reindex)"),
        Arg("state", "state", None, doc="the index cache; default: the last cache in scope"),
    ),
    widths=widths,
    cost=cost,
    saved=saved,
    diagram_shape=diagram_shape,
    unit_cost=per_entry,
    formula="F = 2·heads·dim·I, I = the entries scanned (⌊t/ratio⌋ per query t, capped at `limit`); "
            "R = the index entries",
)
