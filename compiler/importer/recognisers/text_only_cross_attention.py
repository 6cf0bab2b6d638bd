"""A cross-attention decoder layer of a vision-language text model (Llama 3.2 Vision's
MllamaCrossAttentionDecoderLayer), read for the text-only path transformers runs without image features:
the layer is skipped, its weights held (std.attention.cross_attention)."""

from __future__ import annotations

from archcost.dsl import ast

from ..reading.modules import Linear, Norm, Where, children, linear, norm, own
from ..reading.spec import call
from . import Recogniser, word

GATES = {"cross_attn_attn_gate": (1,), "cross_attn_mlp_gate": (1,)}


def text_only_cross_attention(layer, at: Where) -> ast.BlockCall | None:
    parts, d = children(layer), at.d
    if own(layer) != GATES or set(parts) != {"cross_attn", "input_layernorm", "mlp", "post_attention_layernorm"} \
            or any(norm(parts[name]) != Norm("rmsnorm", d) for name in ("input_layernorm", "post_attention_layernorm")):
        return None
    attention, mlp = children(parts["cross_attn"]), children(parts["mlp"])
    if set(attention) != {"q_proj", "k_proj", "v_proj", "o_proj", "q_norm", "k_norm"} \
            or set(mlp) != {"gate_proj", "up_proj", "down_proj"} or own(parts["cross_attn"]) or own(parts["mlp"]):
        return None
    q, k, v, o = (linear(attention[name]) for name in ("q_proj", "k_proj", "v_proj", "o_proj"))
    head_dim = norm(attention["q_norm"]).width if norm(attention["q_norm"]) else None
    gate, up, down = (linear(mlp[name]) for name in ("gate_proj", "up_proj", "down_proj"))
    if not head_dim or None in (q, k, v, o, gate, up, down) or k != v or o != Linear(q.width_out, d, False) \
            or norm(attention["k_norm"]) != Norm("rmsnorm", head_dim) or q != Linear(d, q.width_out, False) \
            or k != Linear(d, k.width_out, False) or gate != up or gate != Linear(d, gate.width_out, False) \
            or down != Linear(gate.width_out, d, False):
        return None
    return call("text_only_cross_attention", "d", q.width_out // head_dim, k.width_out // head_dim, head_dim,
                gate.width_out, label="cross_attention",
                note=f"{type(layer).__name__}: skipped without image features, its weights held")


RECOGNISER = Recogniser("text_only_cross_attention", "layer", text_only_cross_attention,
                        writes=("text_only_cross_attention",), kind_words=word("cross"))
