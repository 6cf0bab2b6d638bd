"""ZAYA1 (transformers' ZayaForCausalLM): Compressed Convolutional Attention (ZayaAttention with its
ZayaCCAProjection and ZayaQKNorm; std.attention.cca's cca), an MoE routed by a small MLP with a skip class
(ZayaSparseMoeBlock; std.ffn.moe's mlp_routed_moe), residual adds that shift and scale both sides
(ZayaResidualScaling; std.norm's residual `affine`) and the embeddings shifted and scaled before the layers."""

from __future__ import annotations

from archcost.dsl import ast

from .modules import Found, Linear, Norm, Where, activation, children, linear, norm, own
from .spec import call, op, times, with_keyword

CCA = {"q_proj", "k_proj", "v_proj_current", "v_proj_delayed", "conv_qk_depthwise", "conv_qk_grouped"}
TAPS = 2  # cca's convolutions: ZAYA1's cca_time0 and cca_time1
AFFINE = ("post_attention_residual_scale", "post_mlp_residual_scale")  # a layer's residuals, in order
AFFINE_PARTS = ("hidden_states_scale", "hidden_states_bias", "residual_scale", "residual_bias")
INPUT_AFFINE = ("input_hidden_states_scale", "input_hidden_states_bias")  # the base model's own
EXPERTS = "experts"  # ZayaSparseMoeBlock's child holding the expert tensors (a module name, not the op kind)


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


def mlp_routed_moe(module, at: Where) -> Found | None:
    parts = children(module)
    if set(parts) != {"gate", EXPERTS} or own(module) \
            or set(children(parts["gate"])) != {"down_proj", "router_mlp"}:
        return None
    gate, experts = children(parts["gate"]), own(parts[EXPERTS])
    down = linear(gate["down_proj"])
    width = down.width_out if down is not None else 0
    mlp, eda = children(gate["router_mlp"]), own(parts["gate"]) == {"router_states_scale": (width,)}
    count, f2, _ = experts.get("gate_up_proj", (0, 0, 0))
    if down != Linear(at.d, width, True) or (own(parts["gate"]) and not eda) \
            or set(mlp) != {"norm", "fc1", "fc2", "out_proj"} or norm(mlp["norm"]) != Norm("rmsnorm", width) \
            or any(linear(mlp[name]) != Linear(width, width, True) for name in ("fc1", "fc2")) \
            or linear(mlp["out_proj"]) != Linear(width, count + 1, False) or f2 % 2 \
            or experts != {"gate_up_proj": (count, f2, at.d), "down_proj": (count, at.d, f2 // 2)} \
            or activation(parts[EXPERTS]) != "silu" or not isinstance(getattr(parts["gate"], "top_k", None), int):
        return None
    return Found(call("mlp_routed_moe", "d", experts=count, top=parts["gate"].top_k, f=f2 // 2, router_width=width,
                      eda=None if eda else False), mixer=False, post_norm=False)


def residual_affines(layer, d: int) -> tuple[str, ...]:
    """The layer's ZayaResidualScaling children (AFFINE), or () for a layer without them."""
    parts = dict(layer.named_children())
    found = all(name in parts and own(parts[name]) == {part: (d,) for part in AFFINE_PARTS}
                and not children(parts[name]) for name in AFFINE)
    return AFFINE if found else ()


def with_affine_residuals(calls: tuple[ast.BlockCall, ...]) -> tuple[ast.BlockCall, ...] | None:
    """The sublayer calls with `residual_affine = true`; None unless they are one affine block per residual."""
    return with_keyword(calls, "residual_affine", True) if len(calls) == len(AFFINE) else None


def input_affine(base, d: int) -> list[ast.Op]:
    """ZayaModel's (embeddings + bias) · scale before the layers, or nothing for another base model."""
    if own(base) != {name: (d,) for name in INPUT_AFFINE}:
        return []
    return [op("elementwise", "input_affine", "ZAYA shifts and scales the embeddings (input_hidden_states_*)",
               width="d", params=times(2, "d"), flops=times(2, "d"))]
