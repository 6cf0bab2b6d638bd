"""Kimi Delta Attention recognised in a transformers layer (Kimi Linear's KimiLinearDeltaAttention, Ling-2.5's
BailingHybridDeltaAttention): Q, K and V of heads·head_dim, a short conv over them, a forget gate of one
value per channel (low-rank or one matrix, with A_log per head and dt_bias per channel), β per head, an
output gate (low-rank or one matrix) into a sigmoid-gated RMSNorm of head_dim, the output projection
(std.attention.kda, its torch reference path: the import checks against transformers' torch code)."""

from __future__ import annotations

from ..reading.modules import Found, Linear, Where, children, linear, own
from ..reading.spec import call
from . import Recogniser, word
from .gated_deltanet import linear_kernels_option


def kda(module, at: Where) -> Found | None:
    parts = children(module)
    heads, head_dim = getattr(module, "num_heads", None), getattr(module, "head_dim", None)
    gates = {"g_proj"} if "g_proj" in parts else {"g_a_proj", "g_b_proj"}
    if set(parts) != {"q_proj", "k_proj", "v_proj", "conv1d", "forget_gate", "b_proj", "o_norm", "o_proj", *gates} \
            or own(module) or not isinstance(heads, int) or not isinstance(head_dim, int):
        return None
    width = heads * head_dim
    square = Linear(at.d, width, False)
    if any(linear(parts[name]) != square for name in ("q_proj", "k_proj", "v_proj")) \
            or linear(parts["b_proj"]) != Linear(at.d, heads, False) or linear(parts["o_proj"]) != Linear(
            width, at.d, False) or own(parts["conv1d"]).get("weight", ())[:2] != (3 * width, 1) \
            or "bias" in own(parts["conv1d"]) or not _gated_norm(parts["o_norm"], head_dim):
        return None
    decay_rank, gate_rank = _rank(parts["forget_gate"], ("f_proj", "f_a_proj", "f_b_proj"), at.d, width), \
        _rank(module, ("g_proj", "g_a_proj", "g_b_proj"), at.d, width)
    decay = own(parts["forget_gate"])
    if None in (decay_rank, gate_rank) or set(decay) != {"A_log", "dt_bias"} or decay["dt_bias"] != (width,) \
            or _count(decay["A_log"]) != heads:
        return None
    return Found(call("kda", "d", heads=heads, head_dim=head_dim, decay_rank=decay_rank, gate_rank=gate_rank or None,
                      conv_kernel=own(parts["conv1d"])["weight"][-1], kernels="linear_kernels"),
                 mixer=True, post_norm=False)


def _rank(module, names: tuple[str, str, str], d: int, width: int) -> int | None:
    """0 for one d → width matrix `names[0]`, r for a d → r → width pair, None for anything else."""
    parts = children(module)
    whole, down, up = names
    if set(parts) & {whole, down, up} == {whole}:
        return 0 if linear(parts[whole]) == Linear(d, width, False) else None
    if set(parts) & {whole, down, up} != {down, up} or linear(parts[down]) is None:
        return None
    rank = linear(parts[down]).width_out
    fits = linear(parts[down]) == Linear(d, rank, False) and linear(parts[up]) == Linear(rank, width, False)
    return rank if fits else None


def _gated_norm(module, width: int) -> bool:
    """An RMS norm of each head scaled by a gate (KimiLinearRMSNormGated): one scale vector of head_dim."""
    return type(module).__name__.endswith("RMSNormGated") and own(module) == {"weight": (width,)}


def _count(shape: tuple[int, ...]) -> int:
    total = 1
    for size in shape:
        total *= size
    return total


RECOGNISER = Recogniser("kda", "sublayer", kda, writes=("kda",), kind_words=word("kda"),
                        options=lambda _calls: [linear_kernels_option()])
