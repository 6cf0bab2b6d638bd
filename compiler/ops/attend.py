"""`attend`: the query-context interaction QKᵀ and AV of `heads` heads over the entries of a cache.

Seed 002 §2.1.3: F = 2·heads·(qk + v) per pair, causal pairs N_pair = B(PS + P(P+1)/2) or the full
rectangle B·P·(S+P); §2.3.3: a window reads min(i+1, w) positions (under the rectangle option every new
query scores the w − 1 kept and all P new ones, as an eager kernel does; the compressed entries of `blocks(r)`
and `top(k, r)` likewise: every new query scores every entry held after the call), `all(n)` every one of n entries,
`top(k)` k selected ones, causally: the i-th new query after S cached positions sees min(k, S + i) of
them (DeepSeek-V3.2-Exp's sparse attention selects its 2,048 among the positions up to the query itself);
§2.3.6: each layer reads its entries once per step, shared by the heads.
"""

from __future__ import annotations

from types import SimpleNamespace

import sympy as sp

from ..terms.symbols import B, H, Max, Min, N_pair, N_rect, P, S, m
from .base import (
    MASK_BYTES,
    SOFTMAX_FLOPS_PER_SCORE,
    ZERO,
    Arg,
    Cost,
    CostContext,
    OpSpec,
    Saved,
    describe_terms,
    dropout_on,
    unequal_groups,
)
from .cache import entry_bytes
from .index import capped_floor_sum, floor_sum

LSE_BYTES = 4  # FlashAttention's softmax statistics: one FP32 log-sum-exp per query row and head

FULL = ("causal", "rectangle", "half_rectangle")


def widths(a: SimpleNamespace):
    return a.heads * a.qk, a.heads * a.v


def window_sum(n, w):
    """Σ_{t=1..n} min(t, w): the positions the first n queries of a request see through a window."""
    inside = Min(n, w)
    return inside * (inside + 1) / 2 + Max(n - w, 0) * w


def chunk_sum(n, c):
    """Σ_{t=0..n−1} ((t mod c) + 1): the positions the first n queries see when each sees only its own block
    of c positions, up to itself (chunked local attention)."""
    whole = sp.floor(n / c)
    rest = n - c * whole
    return whole * c * (c + 1) / 2 + rest * (rest + 1) / 2


def chunk_held(history, c):
    """Positions of the current block a request holds after `history` positions: the block restarts at every
    multiple of c."""
    return history - c * sp.floor(history / c)


def pairs_and_reads(term, override: str | None, S_w: sp.Expr = S):
    """(query-entry pairs of this call, entries read per request) for one `over` term; a window looks back
    on S_w positions before the call (CostContext.window_history)."""
    name, args = term
    if name in FULL:
        name = override or name  # a run-wide choice between the full-attention countings
        pairs = {"causal": N_pair, "rectangle": N_rect, "half_rectangle": N_rect / 2}[name]
        return pairs, S
    if name == "window":
        (w,) = args
        if override == "rectangle":  # an eager kernel: every new query against all it holds (w − 1 cached)
            return B * P * (Min(S_w, w - 1) + P), Min(S_w, w)
        return B * (window_sum(S_w + P, w) - window_sum(S_w, w)), Min(S_w, w)
    if name == "chunk":
        (c,) = args
        if override == "rectangle":  # an eager kernel: every new query against all it holds, as for a window
            return B * P * (Min(S_w, c - 1) + P), chunk_held(S_w, c)
        return B * (chunk_sum(S_w + P, c) - chunk_sum(S_w, c)), chunk_held(S_w, c)
    if name == "blocks":        # every completed entry of ratio r (HCA)
        (r,) = args
        if override == "rectangle":  # an eager kernel: every new query against every entry the call completes
            return m * sp.floor(H / r), sp.floor(H / r)
        return B * (floor_sum(S + P, r) - floor_sum(S, r)), sp.floor(H / r)
    if name == "top" and len(args) == 2:  # the k best of the completed entries of ratio r (CSA)
        k, r = args
        if override == "rectangle":  # as for blocks: transformers' eager DeepseekV4Attention masks after scoring
            return m * Min(k, sp.floor(H / r)), Min(k, sp.floor(H / r))
        return B * (capped_floor_sum(S + P, r, k) - capped_floor_sum(S, r, k)), Min(k, sp.floor(H / r))
    (n,) = args
    if name == "top" and override == "rectangle":
        # an eager kernel scores every position it holds and masks all but the k best (transformers'
        # DeepseekV32 and GLM-5 attention: at S = 2,048 a decode scores 2,049 positions, not 2,048)
        return m * H, H
    if name == "top":  # the i-th new query selects among the S + i positions up to itself: Σ min(k, t)
        return B * (window_sum(S + P, n) - window_sum(S, n)), Min(n, H)
    return m * n, n  # all(n): every query reads all n entries


def _reads(term, states) -> tuple:
    """The caches a term reads: a window term its window cache, a ratio-r term the per_block(r) one."""
    name, args = term
    def growth(s):
        return s.growth[0]
    if name in ("window", "chunk"):
        chosen = [s for s in states if growth(s)[0] == name]
    elif name == "blocks" or (name == "top" and len(args) == 2):
        chosen = [s for s in states if growth(s)[0] == "per_block" and growth(s)[1][0] == args[-1]]
    else:
        chosen = [s for s in states if growth(s)[0] == "per_token"]
    return tuple(chosen or states[:1])


def shape(a: SimpleNamespace, show) -> str:
    return f"{show(a.heads)} heads · qk {show(a.qk)} · v {show(a.v)} · {describe_terms(a.over)}"


def per_pair(a: SimpleNamespace):
    """The chapter's form of the cost: FLOPs per query-entry pair (Table 2-4: 4·64·512·A)."""
    return 2 * a.heads * (a.qk + a.v), "pair"


def cost(a: SimpleNamespace, ctx: CostContext) -> Cost:
    override = ctx.conventions.get("attention")
    terms = [(term, *pairs_and_reads(term, override, ctx.window_history)) for term in a.over]
    pairs = sp.Add(*(p for _, p, _ in terms))
    interaction = 2 * a.heads * (a.qk + a.v) * pairs       # QKᵀ: 2·qk, AV: 2·v per head and pair
    scored = (SOFTMAX_FLOPS_PER_SCORE + a.score_flops) * a.heads * pairs  # softmax, and a soft-cap on each score
    read = sp.Add(*(B * entries * entry_bytes(s) for term, _, entries in terms for s in _reads(term, ctx.states)))
    return Cost(
        flops_matrix=interaction,
        context_flops=interaction,
        flops_nonmatrix=scored,
        read_state=read if ctx.states else ZERO,
        read_activations=m * a.heads * a.qk * ctx.act_bytes,
        write_activations=m * a.heads * a.v * ctx.act_bytes,
    )


def saved(a: SimpleNamespace, ctx: CostContext) -> Saved:
    """Its queries (the keys and values are their cache's), and under an eager kernel (`--attention-kernel
    eager`), per head and scored pair the softmax output; with dropout also the dropout's mask and output
    (Korthikanti et al. 2022 §4.1: 2·as²b + as²b + 2·as²b with 16-bit activations). The pairs are the ones its
    FLOPs count: `--attention rectangle` for the full square an eager kernel stores; selective recomputation
    drops these and runs the interaction again. FlashAttention (the default) keeps no scores."""
    if ctx.conventions.get("attention_kernel", "flash") == "flash":
        # FlashAttention keeps each query row's softmax statistics, one FP32 log-sum-exp a head (Dao 2023 §3.1,
        # `softmax_lse`), and draws the dropout mask again from its seed in the backward
        return Saved(inputs=True, own=a.heads * m * LSE_BYTES)
    override = ctx.conventions.get("attention")
    pairs = sp.Add(*(pairs_and_reads(term, override, ctx.window_history)[0] for term in a.over))
    scores = a.heads * pairs
    dropped = scores * MASK_BYTES + scores * ctx.act_bytes if dropout_on(ctx) else ZERO
    return Saved(inputs=True, scores=scores * ctx.act_bytes + dropped)


# An eager kernel's score-sized tensors, each written once and read by the next kernel, in bytes per score of
# 16-bit activations (a) and of the dropout's one-byte mask: Megatron's CoreAttention (megatron/model/
# transformer.py, 2022, the kernel of Korthikanti et al. 2022's runs): forward, QKᵀ's baddbmm writes the raw
# scores (a), the fused scale-mask-softmax reads them and writes the probabilities (2a), AV's bmm reads them (a);
# backward, dV = Pᵀ·dO reads the probabilities (a), dP = dO·Vᵀ writes its gradient (a), the softmax's backward
# reads it and the probabilities and writes dS (3a), dQ = dS·K and dK = dSᵀ·Q read dS each (2a). Dropout adds
# its kernel on each side: forward it reads the probabilities and writes the mask and its output, backward it
# reads dP and the mask and writes its gradient (2a + 1 each).
EAGER_PASSES = {"forward": 4, "backward": 7}
EAGER_DROPOUT = 2


def unfused(a: SimpleNamespace, ctx: CostContext) -> tuple[sp.Expr, sp.Expr, dict[str, sp.Expr]]:
    """(QKᵀ and AV's FLOPs, the score tensors' bytes, the GEMM their batched products make) of a training step's
    eager attention: its products score every pair the call holds, the mask applied after scoring (the full
    square of a causal prefill: `--attention rectangle`, as `saved` counts what it keeps), and each score
    passes through memory between its kernels (EAGER_PASSES). The B·heads products of a batch run as one GEMM
    of their stacked rows against the S + P keys, qk wide."""
    pairs = sp.Add(*(pairs_and_reads(term, "rectangle", ctx.window_history)[0] for term in a.over))
    scores = a.heads * pairs
    per_score = sum(EAGER_PASSES.values()) * ctx.act_bytes
    if dropout_on(ctx):
        per_score += 2 * (EAGER_DROPOUT * ctx.act_bytes + MASK_BYTES)
    return 2 * a.heads * (a.qk + a.v) * pairs, scores * per_score, {"m": B * P * a.heads, "n": S + P, "k": a.qk}


def check(a: SimpleNamespace) -> list[tuple[str, str]]:
    """Query heads share key/value heads in equal groups."""
    if a.kv_heads is not None and unequal_groups(a.heads, a.kv_heads):
        return [("kv_heads", f"{a.heads} query heads cannot share {a.kv_heads} key/value heads in equal groups")]
    return []


def timing(a: SimpleNamespace, phase: str):
    """A decode step reads the context (FlashAttention's decode kernels, FlashMLA): timed by the keys read, B·H;
    a prefill or a chunk of new positions computes the scores: timed by the new positions P."""
    if phase == "decode":
        return "attention_decode", "bf16", {"kv_read": B * H, "head_dim": a.qk}
    return "attention_prefill", "bf16", {"seq": P, "head_dim": a.qk}


SPEC = OpSpec(
    kind="attend",
    shards=("replicated", "heads"),
    doc=__doc__,
    args=(
        Arg("heads", "dim", required=True, doc="query heads"),
        Arg("qk", "dim", required=True, doc="query-key dot-product width per head"),
        Arg("v", "dim", required=True, doc="value width per head"),
        Arg("over", "mode", (("causal", ()),), sums=True,
            choices=("causal", "rectangle", "half_rectangle", "window/1", "chunk/1", "all/1", "top/1", "top/2",
                     "blocks/1"),
            doc="which entries each query sees; terms add: window(128) + top(512, 4); chunk(c): its own block of c"),
        Arg("state", "state", None, doc="the caches read, e.g. (window, compressed); default: the last cache"),
        Arg("kv_heads", "dim", None, doc="key/value heads the query heads share in groups (GQA); must divide heads"),
        Arg("score_flops", "expr", 0, doc="non-matrix FLOPs on every score before the softmax (Gemma 2's soft-cap "
            "tanh(x/c)·c: 3)"),
    ),
    widths=widths,
    cost=cost,
    saved=saved,
    shape=shape,
    diagram_shape=shape,
    unit_cost=per_pair,
    check=check,
    drawn_as="hexagon",
    formula="F = 2·heads·(qk + v)·pairs (+ 5·heads·pairs softmax); R = the entries of the caches it reads",
    timing=timing,
    unfused=unfused,
)
