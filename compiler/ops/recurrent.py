"""`recurrent`: a fixed-size state of `heads` dk×dv matrices updated every token (linear attention).

Seed 002 §2.3.4: the state never grows; a decode step reads and writes all of it and costs
`update`·dk·dv FLOPs per head (the delta rule: read with k, outer-product update, read with q);
prefill may run a chunked algorithm whose per-token cost depends on the chunk size C.
"""

from __future__ import annotations

from types import SimpleNamespace

import sympy as sp

from ..terms.symbols import B, P, S, m
from .base import ZERO, Arg, Cost, CostContext, OpSpec, Saved, fixed_state, unequal_groups


def widths(a: SimpleNamespace):
    key_heads = a.heads if a.key_heads is None else a.key_heads
    return 2 * key_heads * a.dk + a.heads * a.dv + a.controls, a.heads * a.dv


def chunk_flops(a: SimpleNamespace) -> sp.Expr:
    """Matrix FLOPs per head per token of the chunked prefill algorithm (shared/reference conventions)."""
    dk, dv, C = a.dk, a.dv, a.chunk
    if a.prefill == "gated_delta":
        # transformers' chunked gated delta rule: K_β·Kᵀ, Q·Kᵀ, W·S, Q·S, attn·v_new, Kᵀ·v_new, all dense C×C
        return 6 * dk * dv + 4 * C * dk + 2 * C * dv
    if a.prefill in ("lightning", "kda_torch"):
        return one_chunk(a, C) / C
    # flash-linear-attention's chunked KDA, valid triangles only, with the forward-substitution solve
    return 6 * dk * dv + (C - 1) * (2 * dk + dv) + (C + 1) * (dk + dv)


def one_chunk(a: SimpleNamespace, c) -> sp.Expr:
    """Matrix FLOPs per head of one chunk of c positions, evaluated at its own size (its triangles c(c ± 1)/2
    for KDA, its c×c products for the gated delta rule and lightning attention); c = C gives C × chunk_flops."""
    dk, dv = a.dk, a.dv
    if a.prefill == "gated_delta":
        return 4 * c**2 * dk + 2 * c**2 * dv + 6 * c * dk * dv
    if a.prefill == "lightning":
        # MiniMax-01 (arXiv:2501.08313 §2.2.2): intra-block Q·Kᵀ and its decayed product with V over the whole
        # c×c block, inter-block Q·kv and the block's Kᵀ·V into the state. The mLSTM's chunkwise form (Beck et
        # al. 2024, arXiv:2405.04517 §A; transformers' mlstm_chunkwise_recurrent_fw_C and _parallel_fw_H) runs
        # the same four products: Kᵀ·V into C, Q·Kᵀ masked to its causal part after the product, its product
        # with V, and Q·C
        return 2 * c**2 * (dk + dv) + 4 * c * dk * dv
    if a.prefill == "kda_torch":
        # transformers' torch reference of chunked KDA (chunk_kimi_delta_attention): its K_β·Kᵀ and Q·Kᵀ carry a
        # per-channel decay, so they are elementwise products summed, not matrix products; what is matrix is
        # attn·V_β and attn·K_β (C×C), the inter-chunk Q·S and W·S, attn·v_new (C×C) and Kᵀ·v_new
        return 2 * c**2 * dk + 4 * c**2 * dv + 6 * c * dk * dv
    return c * (c - 1) * (2 * dk + dv) + c * (c + 1) * (dk + dv) + 6 * c * dk * dv


def state_space_duality(a: SimpleNamespace) -> sp.Expr:
    """Matrix FLOPs per head of Mamba-2's chunked scan (Dao & Gu 2024, arXiv:2405.21060 §6; transformers'
    torch path): the P positions padded to n = ⌈P/C⌉ whole chunks; C·Bᵀ and its product with x inside each
    chunk (2·C·dk and 2·C·dv a position), the chunk states and their read-out (2·dk·dv each), and the states
    passed between the n chunks and the initial state as one (n+1)×(n+1) decay product (2·(n+1)²·dk·dv)."""
    chunks = sp.ceiling(P / a.chunk)
    padded = chunks * a.chunk
    return B * (padded * (2 * a.chunk * (a.dk + a.dv) + 4 * a.dk * a.dv) + 2 * (chunks + 1) ** 2 * a.dk * a.dv)


def chunked(a: SimpleNamespace) -> sp.Expr:
    """Matrix FLOPs per head of a chunked prefill of P positions per request, its last chunk of
    r = P mod C positions counted as `chunk_tail` says: `average`, each of the P positions at the per-position
    cost of a whole chunk; `pad`, ⌈P/C⌉ whole chunks (transformers' torch reference pads the sequence; the
    book's calculator for Gated DeltaNet); `exact`, ⌊P/C⌋ whole chunks and one chunk of r (the calculator's
    KDA block algorithm, kda_math.work); `step`, ⌊P/C⌋ whole chunks and the r left run the recurrent step one by
    one (transformers' and mlstm_kernels' wrap_chunkwise_arbitrary_sequence_length for the mLSTM)."""
    C = a.chunk
    if a.prefill == "ssd":
        return state_space_duality(a)
    if a.chunk_tail == "step":
        whole = sp.floor(P / C)
        return B * (whole * one_chunk(a, C) + (P - C * whole) * a.update * a.dk * a.dv)
    if a.chunk_tail == "pad":
        return B * sp.ceiling(P / C) * one_chunk(a, C)
    if a.chunk_tail == "exact":
        whole = sp.floor(P / C)
        return B * (whole * one_chunk(a, C) + one_chunk(a, P - C * whole))
    return m * chunk_flops(a)


def diagram_shape(a: SimpleNamespace, show) -> str:
    return f"{show(a.heads)} × {show(a.dk)}×{show(a.dv)} state · prefill {a.prefill}"


def cost(a: SimpleNamespace, ctx: CostContext) -> Cost:
    state = a.heads * a.dk * a.dv * a.dtype
    step = m * a.heads * a.update * a.dk * a.dv
    decode_as_matrix = a.update_as == "matrix"
    if a.prefill == "stepwise":
        matrix, nonmatrix, temp = (step, ZERO, ZERO) if decode_as_matrix else (ZERO, step, ZERO)
    else:
        chunked_flops = a.heads * chunked(a)
        # one new token after a history runs the recurrent step; a one-token prompt with no history runs
        # the step too, or (first_token = chunk) the chunked algorithm on one padded chunk; with
        # first_token = history every prompt after a history runs step by step (MiniMax's lightning layers)
        decode = {"step": sp.Eq(P, 1), "chunk": sp.And(sp.Eq(P, 1), S > 0), "history": S > 0}[a.first_token]
        matrix = sp.Piecewise((step if decode_as_matrix else ZERO, decode), (chunked_flops, True))
        nonmatrix = sp.Piecewise((ZERO if decode_as_matrix else step, decode), (ZERO, True))
        # chunk-boundary states of every chunk plus the C×C intra-chunk scores of every row
        temp = sp.Piecewise((ZERO, decode), (B * a.heads * (sp.ceiling(P / a.chunk) * a.dk * a.dv * a.dtype
                                                          + P * a.chunk * ctx.act_bytes), True))
    return Cost(
        flops_matrix=matrix,
        flops_nonmatrix=nonmatrix,
        **fixed_state(state),
        temp_bytes=temp,
    )


def check(a: SimpleNamespace) -> list[tuple[str, str]]:
    """Value heads share the query/key heads (Mamba-2's groups of B and C) in equal groups."""
    if a.key_heads is not None and unequal_groups(a.heads, a.key_heads):
        return [("key_heads", f"{a.heads} heads cannot share {a.key_heads} query/key heads in equal groups")]
    return []


def saved(a: SimpleNamespace, ctx: CostContext) -> Saved:
    """Its inputs (q, k, v and the controls): a chunked scan's backward recomputes the chunk states from
    them (mamba_chunk_scan_combined and fla's chunk kernels save their inputs, not the states)."""
    return Saved(inputs=True)


SPEC = OpSpec(
    kind="recurrent",
    shards=("replicated", "heads"),
    doc=__doc__,
    state_kind=lambda a: "recurrent",
    args=(
        Arg("heads", "dim", required=True, doc="state matrices (value heads)"),
        Arg("dk", "dim", required=True, doc="key width per head"),
        Arg("dv", "dim", required=True, doc="value width per head"),
        Arg("key_heads", "dim", None, doc="query/key heads, shared across value heads (default: heads)"),
        Arg("controls", "dim", 0, doc="width of the per-token controls read beside q, k and v (Mamba-2's dt)"),
        Arg("dtype", "dtype", "state", doc="storage format of the state (fp32 in the chapter)"),
        Arg("update", "expr", 6, doc="FLOPs per head per token of one step, in units of dk·dv"),
        Arg("update_as", "enum", "matrix", choices=("matrix", "nonmatrix"),
            doc="count the step as matrix or as scalar (non-matrix) work"),
        Arg("prefill", "enum", "stepwise", choices=("stepwise", "gated_delta", "kda", "kda_torch", "ssd",
                                                                   "lightning"),
            doc="prefill algorithm: the step per token, or a chunked algorithm (ssd: Mamba-2's, whole chunks; "
                "lightning: MiniMax's blocks, and the xLSTM's chunkwise mLSTM; kda_torch: transformers' torch "
                "reference of KDA)"),
        Arg("chunk", "dim", 64, doc="chunk size C of a chunked prefill"),
        Arg("chunk_tail", "enum", "average", choices=("average", "pad", "exact", "step"),
            doc="a partial last chunk: each position at a whole chunk's per-position cost, padded to a whole "
                "chunk, a chunk of its own size, or its positions through the recurrent step"),
        Arg("first_token", "enum", "step", choices=("step", "chunk", "history"),
            doc="what a one-token prompt with no history runs: the recurrent step or the chunked algorithm; "
                "history: the step for every prompt after a history, the chunked algorithm for any without"),
    ),
    widths=widths,
    cost=cost,
    saved=saved,
    check=check,
    diagram_shape=diagram_shape,
    drawn_as="cylinder",
    formula="M = B·heads·dk·dv·bytes, read and written every call; F = m·heads·update·dk·dv per step, "
            "or the chunked ledger of `prefill`",
)
