"""`experts`: E feed-forward experts of `matrices` d×f matrices each, k of them routed per token.

Seed 002 §2.4.1: params E·N_e; Σ t_e = m·k rows, so F = 2·N_e·m·k whatever the routing; §2.4.2 and
Example 2-4: the weight bytes a batch reads are U·N_e·b, U the distinct experts its tokens touch.
Zero-computation experts (LongCat-Flash, arXiv:2509.01322 §2.1): the router picks its k among E weighted
experts and `zero` identity experts, which return their input; `ffn_top` of the k picks land on weighted
experts (the rest cost a scale and an add per value), so a token's compute and active parameters vary with it.
`out_norm`: each expert normalises its routed rows' outputs with an RMS norm of its own scale (Ergo's
ErgoExpertNorm, one vector of `width` an expert): an expert's weights grow by that vector, and each routed row
costs the norm's 4 FLOPs a value (std.norm's rmsnorm).
"""

from __future__ import annotations

from types import SimpleNamespace

import sympy as sp
from pydantic import BaseModel, Field

from ..terms.symbols import Min, m
from .base import Arg, Cost, CostContext, Figures, OpSpec, Saved, stored_values
from .sharding import Share, share

Number = int | float
NORM_FLOPS = 4  # an RMS norm's FLOPs a value: square, sum, scale by the inverse root, the learned scale (std.norm)


def widths(a: SimpleNamespace):
    width, hidden = a.signature
    return {"map": (width, a.top * hidden), "reduce": (a.top * hidden, width)}.get(a.half, (width, width))


def row_widths(a: SimpleNamespace):
    """(read, written) per routed row: the token's width in and out, or one side an expert's f (half of one)."""
    width, hidden = a.signature
    return {"map": (width, hidden), "reduce": (hidden, width)}.get(a.half, (width, width))


def ffn_top(a: SimpleNamespace):
    """The picks per token that land on weighted experts: all k unless some experts are identities."""
    return a.top if a.ffn_top is None else a.ffn_top


def distinct_experts(a: SimpleNamespace, routing: str) -> sp.Expr:
    """U: experts a call's m·k routed rows touch, under the routing the scenario assumes."""
    E, k = a.count, ffn_top(a)
    if routing == "concentrated":   # every token picks the same k experts
        return Min(E, k)
    if routing == "random":         # expected distinct experts for m independent tokens
        return E * (1 - (1 - k / E) ** m)
    return Min(E, m * k)         # uniform: rows spread evenly, one expert per row until all are used


def shape(a: SimpleNamespace, show) -> str:
    matrix = f"{show(a.signature[0])}×{show(a.signature[1])}"
    return f"{show(a.count)} experts × {show(a.matrices)} matrices {matrix}, top {show(a.top)}"


def diagram_shape(a: SimpleNamespace, show) -> str:
    """`E = 16, k = 1, 5120 → 8192`: experts, top-k and an expert's widths, what a diagram's reader asks first."""
    return f"E = {show(a.count)}, k = {show(a.top)}, {show(a.signature[0])} → {show(a.signature[1])}"


def cost(a: SimpleNamespace, ctx: CostContext) -> Cost:
    width, hidden = a.signature
    # biases: one per output of each matrix but the last (f each) and of the last (width)
    bias = ((a.matrices - 1) * hidden + width) if a.bias else 0
    norm = width if a.out_norm else 0                          # the expert's own RMS norm scale on its output
    matrices = a.matrices * width * hidden
    per_expert = matrices + bias + norm
    weighted = ffn_top(a)
    routed_rows = m * weighted                                # Σ t_e = m·k
    touched = distinct_experts(a, ctx.conventions.get("routing", "uniform"))
    identities = 2 * width * m * (a.top - weighted)           # an identity pick: its gate's scale and the add
    read, written = row_widths(a)
    # the activation between the matrices, the gate's scale and the weighted sum (none yet after a map half)
    combined = {"map": 0, "reduce": 2 * width}.get(a.half, a.act_flops * hidden + 2 * width)
    return Cost(
        params=stored_values(a.count * per_expert, a.dtype, ctx),
        params_active=stored_values(weighted * per_expert, a.dtype, ctx),  # the k experts a token is routed to
        weight_bytes=a.count * per_expert * a.dtype,
        flops_matrix=2 * (m * a.count if a.dense else routed_rows) * matrices,  # a multiply-add per weight used
        # the activation, the weighted sum, and an add per bias
        flops_nonmatrix=routed_rows * (combined + bias + NORM_FLOPS * norm) + identities,
        read_weights=touched * per_expert * a.dtype,
        selected_expert_bytes=weighted * per_expert * a.dtype,  # Table 2-C: k experts per token
        read_activations=routed_rows * read * ctx.act_bytes,
        write_activations=routed_rows * written * ctx.act_bytes,
    )


def saved(a: SimpleNamespace, ctx: CostContext) -> Saved:
    """Per routed row: the token's copy the grouped products read and one hidden vector per matrix (gated:
    the gate's and the up projection's outputs and the activation's, the down product's input; two
    matrices: the first's output and the activation's), and with `out_norm` the norm's input. The router's linear
    keeps the rows it scores."""
    width, hidden = a.signature
    rows = m * a.count if a.dense else m * ffn_top(a)
    if a.half != "both":  # half an expert keeps the rows it multiplies: its input per pick
        return Saved(own=rows * row_widths(a)[0] * ctx.act_bytes)
    return Saved(own=rows * (width + a.matrices * hidden + (width if a.out_norm else 0)) * ctx.act_bytes)


class ExpertUse(BaseModel):
    """One MoE op under the run's routing (seed 002 §2.4.2, Example 2-4), per layer and call."""

    op: str
    layers: Number
    experts: Number              # E
    top: Number                  # k
    routed_rows: Number          # Σ t_e = m·k
    rows_per_expert: Number      # t_e when rows spread evenly: m·k / E
    distinct_experts: Number     # U under the routing option
    read_bytes_per_layer: Number  # U · N_e · bytes
    width: Number = Field(exclude=True)   # expert input width (Table 2-A "expert width in")
    hidden: Number = Field(exclude=True)  # expert hidden width f


def expert_use(node, cost: Cost, options) -> dict:
    """How one MoE op's rows land on its experts in one call: each figure's expression and the field whose rule
    evaluates it."""
    a = node.args
    return dict(
        op=node.id, layers=(node.multiplicity, "rows"), experts=(a.count, "rows"), top=(ffn_top(a), "rows"),
        routed_rows=(m * ffn_top(a), "rows"), rows_per_expert=(m * ffn_top(a) / a.count, "rows"),
        distinct_experts=(distinct_experts(a, options.get("routing", "uniform")), "rows"),
        read_bytes_per_layer=(cost.read_weights, "read_weights"),
        width=(a.signature[0], "rows"), hidden=(a.signature[1], "rows"))


def check(a: SimpleNamespace) -> list[tuple[str, str]]:
    """Each token is routed to `top` different experts: there must be that many, weighted and identities; of
    them `ffn_top`, from none to all, land on weighted experts."""
    if a.half != "both" and (a.matrices != 1 or a.zero or a.ffn_top is not None or a.dense):
        return [("half", f"half an expert (`half = {a.half}`) is one matrix (`matrices = 1`), every pick weighted")]
    if (a.top - a.count - a.zero).is_positive:
        return [("top", f"`top` = {a.top} routes each token to more experts than the {a.count + a.zero} there are")]
    weighted = ffn_top(a)
    if weighted.is_negative or (weighted - a.top).is_positive or (weighted - a.count).is_positive:
        return [("ffn_top", f"`ffn_top` = {weighted}: from 0 to top = {a.top} of the picks land on the "
                            f"{a.count} weighted experts")]
    if (weighted - a.top).is_negative and not a.zero:
        return [("ffn_top", f"`ffn_top` = {weighted} leaves picks for identity experts: give `zero`")]
    return []


def shard(word: str, heads, tp, ep, args=None) -> Share:
    """Experts over an expert-parallel group hold experts/ep each and take their tokens by all-to-all; with
    ep = 1 and tp cards, every expert's matrices are split over the tp cards (column then row parallel) and
    their partial sums are added by an all-reduce."""
    if word == "ep" and ep == 1:
        return Share(1 / tp, 1 / tp, "P", "R")
    return share(word, heads, tp, ep)


def timing(a: SimpleNamespace, phase: str):
    """A grouped GEMM over the experts: the rows each expert receives on average, m·k / E, in E groups (a
    measured series of other experts at the same widths reaches another part of the peak: at 5,120 × 8,192 on
    the H200, AIConfigurator's 16 experts reach 0.11–0.18 of it where its 128 reach 0.44–0.90)."""
    width_in, width_out = a.signature
    return "grouped_gemm", a.dtype.name, {"tokens_per_expert": m * a.top / a.count, "hidden": width_in,
                                          "inter": width_out, "experts": a.count}


def card_shape(shape: dict[str, float], word: str, work: float, positions: float) -> dict[str, float]:
    """The grouped GEMM one card of a tensor-parallel group runs when experts are split over tp rather than ep
    (`shard`: every expert's gate and up column-parallel, its down row-parallel, Shoeybi et al. 2019 §3): each
    expert's hidden width `inter` is the card's part of it, the tokens per expert those of its positions (a
    context-parallel card's part). An expert-parallel card runs whole experts: cards/expected.py passes no split."""
    tensor = work * positions  # the part of each expert's width the card holds
    found = {**shape, "tokens_per_expert": shape["tokens_per_expert"] / positions}
    return {**found, "inter": shape["inter"] * tensor} if tensor < 1 else found


SPEC = OpSpec(
    kind="experts",
    shards=("replicated", "ep"),
    shard=shard,
    doc=__doc__,
    positional=("signature",),
    args=(
        Arg("signature", "signature", required=True, doc="model width -> expert hidden width"),
        Arg("count", "dim", required=True, doc="experts E"),
        Arg("top", "dim", required=True, doc="experts k each token is routed to"),
        Arg("zero", "expr", 0, doc="zero-computation experts: identities the router may pick beside the weighted "
            "ones (LongCat-Flash)"),
        Arg("ffn_top", "expr", None, doc="picks per token that land on weighted experts (default: all `top`); the "
            "others are identities"),
        Arg("matrices", "dim", 3, doc="matrices per expert: 3 for SwiGLU (gate, up, down); 1 for half an expert"),
        Arg("half", "enum", "both", choices=("both", "map", "reduce"), doc="map: each expert's in → f matrix "
            "alone, the k picks' outputs side by side; reduce: its f → in matrix, the k outputs weighted and added "
            "(JetMoE's attention experts)"),
        Arg("bias", "bool", False, doc="a bias on every output of every expert matrix (gpt-oss)"),
        Arg("out_norm", "bool", False, doc="an RMS norm of its own scale on each expert's output (Ergo)"),
        Arg("dense", "bool", False, doc="every token runs through every expert, the unrouted weighted 0 (as "
            "transformers' Llama4TextExperts computes)"),
        Arg("act_flops", "expr", 0, doc="non-matrix FLOPs of the activation per hidden value (5 for "
            "SiLU(gate)·up, 9 for GELU(gate)·up)"),
        Arg("dtype", "dtype", "weights", doc="storage format of the expert weights"),
    ),
    widths=widths,
    cost=cost,
    saved=saved,
    quantizable=True,
    check=check,
    shape=shape,
    diagram_shape=diagram_shape,
    figures=Figures("experts", ExpertUse, expert_use, doc="per MoE op: E, k, routed rows, distinct experts U, "
                    "bytes read per layer"),
    formula="params = E·(matrices·in·f + biases + norm); F = 2·m·k·matrices·in·f (Σ t_e = m·k); "
            "R = U·matrices·in·f·bytes, U the distinct experts the call touches",
    timing=timing,
    card_shape=card_shape,
)
