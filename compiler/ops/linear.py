"""`linear`: `count` matrix products [rows, in] × [in, out] (÷ groups for block-diagonal ones).

Seed 002 §2.1.2: N_W = k·n weights, F = 2·m·k·n FLOPs, M_W = b_W·k·n bytes; Table 2-1 rows.
"""

from __future__ import annotations

from dataclasses import replace
from types import SimpleNamespace

from ..terms import symbols
from .base import ZERO, Arg, Cost, CostContext, OpSpec, Saved, stored_values
from .sharding import Share, share


def widths(a: SimpleNamespace):
    width_in, width_out = a.signature
    return width_in * a.count, width_out * a.count


def shape(a: SimpleNamespace, show) -> str:
    matrix = f"{show(a.signature[0])}×{show(a.signature[1])}"
    return matrix if a.count == 1 else f"{show(a.count)} × {matrix}"


def diagram_shape(a: SimpleNamespace, show) -> str:
    count = f" ×{show(a.count)}" if a.count != 1 else ""
    return f"{show(a.signature[0])} → {show(a.signature[1])}{count}"


def cost(a: SimpleNamespace, ctx: CostContext) -> Cost:
    width_in, width_out = a.signature
    matrix_weights = width_in * width_out * a.count / a.groups
    bias_weights = width_out * a.count if a.bias else ZERO
    weights = matrix_weights + bias_weights
    held = bias_weights if a.tied else weights  # a tied head reuses the embedding table, not its own bias (CTRL)
    bias_as_matrix = ctx.conventions.get("vector_params") == "matrix"
    rows = ZERO if a.idle else a.rows  # an idle matrix is held and never run: no rows, no reads
    return Cost(
        params=stored_values(held, a.dtype, ctx),
        weight_bytes=held * a.dtype,
        # a multiply and an add per MAC; seed 000's ledger also counts 2 per bias weight
        flops_matrix=2 * rows * (matrix_weights + (bias_weights if bias_as_matrix else ZERO)),
        flops_nonmatrix=ZERO if bias_as_matrix else rows * bias_weights,  # one add per output
        read_weights=ZERO if a.idle else weights * a.dtype,   # every weight once per call
        read_activations=rows * width_in * a.count * ctx.act_bytes,
        write_activations=rows * width_out * a.count * ctx.act_bytes,
    )


def saved(a: SimpleNamespace, ctx: CostContext) -> Saved:
    """Its input, for the weight gradient dW = xᵀ·dy (Korthikanti et al. 2022 §4.1: "inputs of the two
    linear layers"); an idle one runs no rows and saves nothing."""
    return Saved(inputs=not a.idle)


def shard(word: str, heads, tp, ep, args=None) -> Share:
    """A linear split by heads or by vocabulary rows splits its output columns: like `column`, it reads the
    whole input and writes its slice. A linear of one matrix per head (`count` = the heads it is split by:
    MLA's absorbed K and restored V, DeepSeek-V3 §2.1.1) reads only its heads' part of its input: a split
    input stays split, with no all-gather."""
    if word == "vocab":
        return share("column", heads, tp, ep)
    given = share(word, heads, tp, ep)
    if word == "heads" and args is not None and heads is not None and args.count == heads:
        return replace(given, needs="same")
    return replace(given, needs="R") if word == "heads" else given


def timing(a: SimpleNamespace, phase: str):
    """A GEMM of rows × in × (count · out / groups): the count matrices side by side, as grouped kernels run them."""
    width_in, width_out = a.signature
    return "gemm", a.dtype.name, {"m": ZERO if a.idle else a.rows, "n": width_out * a.count / a.groups,
                                  "k": width_in}


def card_shape(shape: dict[str, float], word: str, work: float, positions: float) -> dict[str, float]:
    """The GEMM one card runs (Shoeybi et al. 2019 §3): a column, head or vocabulary split gives it its part of
    the output columns (n), a row split its part of the input rows (k); context parallelism its part of the
    positions (m)."""
    split = "k" if word == "row" else "n" if word in ("column", "heads", "vocab") else None
    tensor = work * positions  # the part of the op's width the card holds
    found = {**shape, "m": shape["m"] / positions}
    return {**found, split: shape[split] * tensor} if split and tensor < 1 else found


SPEC = OpSpec(
    kind="linear",
    shards=("replicated", "column", "row", "heads", "vocab"),
    doc=__doc__,
    positional=("signature",),
    args=(
        Arg("signature", "signature", required=True, doc="input width -> output width of one matrix"),
        Arg("count", "dim", 1, doc="independent matrices of this shape, e.g. 96 per-head projections"),
        Arg("groups", "dim", 1, doc="block-diagonal groups: in·out/groups weights"),
        Arg("bias", "bool", False, doc="adds `out` bias weights per matrix"),
        Arg("rows", "expr", symbols.m, doc="rows through the matrix: m, or m_out for the vocabulary head"),
        Arg("tied", "bool", False, doc="weights shared with a lookup table: no params but a bias, still read"),
        Arg("dtype", "dtype", "weights", doc="storage format of the weights"),
        Arg("idle", "bool", False, doc="held and never run: its parameters count, no FLOPs and no reads (a layer "
            "transformers skips, as Mllama's cross-attention layers on a text-only request)"),
    ),
    widths=widths,
    cost=cost,
    saved=saved,
    quantizable=True,
    shard=shard,
    shape=shape,
    diagram_shape=diagram_shape,
    formula="params = count·in·out/groups (+ count·out bias); F = 2·rows·params",
    timing=timing,
    card_shape=card_shape,
)
