"""ZAYA1 (transformers' ZayaForCausalLM): Compressed Convolutional Attention (ZayaAttention with its
ZayaCCAProjection and ZayaQKNorm; std.attention.cca's cca), an MoE routed by a small MLP with a skip class
(ZayaSparseMoeBlock; std.ffn.moe's mlp_routed_moe), residual adds that shift and scale both sides
(ZayaResidualScaling; std.norm's residual `affine`) and the embeddings shifted and scaled before the layers."""

from __future__ import annotations

from ..reading.modules import Found, Linear, Where, children, linear, own
from ..reading.spec import call
from . import Recogniser, word

CCA = {"q_proj", "k_proj", "v_proj_current", "v_proj_delayed", "conv_qk_depthwise", "conv_qk_grouped"}
TAPS = 2  # cca's convolutions: ZAYA1's cca_time0 and cca_time1


def cca_attention(module, at: Where) -> Found | None:
    parts = children(module)
    if set(parts) != {"o_proj", "qkv_proj", "qk_norm"} or own(module) or set(children(parts["qkv_proj"])) != CCA:
        return None
    q_heads, kv_heads = getattr(module, "num_attention_heads", 0), getattr(module, "num_key_value_heads", 0)
    head_dim, inner = getattr(module, "head_dim", 0), children(parts["qkv_proj"])
    qw, kw = q_heads * head_dim, kv_heads * head_dim
    widths = {"q_proj": qw, "k_proj": kw, "v_proj_current": kw // 2, "v_proj_delayed": kw // 2}
    if not (q_heads and kv_heads and head_dim) or kw % 2 or own(parts["qkv_proj"]) \
            or any(linear(inner[name]) != Linear(at.d, width, False) for name, width in widths.items()) \
            or not _conv(inner["conv_qk_depthwise"], qw + kw, qw + kw) \
            or not _conv(inner["conv_qk_grouped"], qw + kw, q_heads + kv_heads) \
            or own(parts["qk_norm"]) != {"temp": (kv_heads,)} or linear(parts["o_proj"]) != Linear(qw, at.d, False):
        return None
    return Found(call("cca", "d", q_heads=q_heads, kv_heads=kv_heads, head_dim=head_dim,
                      rotary=_rotary(at.config, getattr(module, "layer_type", None), head_dim),
                      window=getattr(module, "sliding_window", None) or None), mixer=True, post_norm=False)


def _conv(conv, channels: int, groups: int) -> bool:
    """A Conv1d over `channels` of TAPS taps, with a bias, in `groups` groups."""
    return getattr(conv, "groups", None) == groups and own(conv) == {
        "weight": (channels, channels // groups, TAPS), "bias": (channels,)}


def _rotary(config, layer_type, head_dim: int) -> int | None:
    """The channels RoPE turns: ZAYA's rope_parameters hold a partial_rotary_factor per layer type."""
    factor = ((getattr(config, "rope_parameters", None) or {}).get(layer_type) or {}).get("partial_rotary_factor", 1)
    turned = head_dim * factor
    return None if factor == 1 or not float(turned).is_integer() else int(turned)


RECOGNISER = Recogniser("cca", "sublayer", cca_attention, writes=("cca",), attention=True, kind_words=word("cca"))
