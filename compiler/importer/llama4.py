"""Llama 4's text model: chunked local attention with RoPE, global layers without, MoE with a shared expert."""

from __future__ import annotations

from typing import ClassVar, Literal

from archcost.dsl import ast

from .common import Decoder, Heads, decoder, gqa, heads, layer_kinds, on, swiglu
from .moe import routing
from .reading.spec import Layer, Spec, call
from .recognisers.moe import dense_experts_option
from .schema import Count, Layers, Silu, Size


class Llama4Text(Decoder):
    num_key_value_heads: Size | None = 8
    hidden_size: Size = 5120
    num_hidden_layers: Layers = 48
    vocab_size: Size = 202_048
    num_attention_heads: Size = 40
    NEUTRAL: ClassVar[dict[str, str]] = {
        "attn_scale": "the temperature's scale: a number, no shape", "floor_scale": "the same",
        "no_rope_layer_interval": "read through no_rope_layers, which transformers derives from it"}
    intermediate_size: Size = 8192
    intermediate_size_mlp: Size = 16384
    hidden_act: Silu = "silu"
    num_local_experts: Size = 16
    num_experts_per_tok: Size = 1
    moe_layers: list[Count] | None = None
    interleave_moe_layer_step: Size = 1
    use_qk_norm: bool = True
    no_rope_layers: list[Literal[0, 1]] | None = None
    attention_chunk_size: Size | None = 8192
    layer_types: list[str] | None = None
    attn_temperature_tuning: bool = True
    attention_bias: Literal[False] = False
    head_dim: Size | None = 128


def llama4(cfg: Llama4Text) -> Spec:
    h, count = heads(cfg), cfg.num_hidden_layers
    ropes = cfg.no_rope_layers or [int((i + 1) % 4 != 0) for i in range(count)]
    if len(ropes) != count:
        raise cfg.refuse("no_rope_layers", f"`no_rope_layers` must give 0 or 1 for each of the {count} layers")
    step = cfg.interleave_moe_layer_step
    moe_layers = set(cfg.moe_layers if cfg.moe_layers is not None else range(step - 1, count, step))
    chunked = [rope and cfg.attention_chunk_size is not None for rope in ropes]
    kinds = layer_kinds(cfg, "layer_types", ("chunked_attention", "full_attention"), count,
                        ["chunked_attention" if c else "full_attention" for c in chunked])
    moe = call("moe", "d", **routing(cfg, "num_local_experts"), f=cfg.intermediate_size, shared_f=cfg.intermediate_size,
               dense_experts="dense", label="ffn",
               note=cfg.cite("num_local_experts", "num_experts_per_tok", "intermediate_size") + "; one shared expert")
    dense = swiglu(cfg, width="intermediate_size_mlp")
    layers = [Layer(_llama4_kind(kind, rope, i in moe_layers),
                    (_llama4_attention(cfg, h, kind, rope), moe if i in moe_layers else dense))
              for i, (kind, rope) in enumerate(zip(kinds, ropes))]
    paths = dense_experts_option()
    return decoder(cfg, layers, options=paths, stack_note=cfg.cite("layer_types", "no_rope_layers", "moe_layers"),
                   header=["Llama 4 (the text model; a multimodal checkpoint's vision tower is not counted): chunked "
                           "local attention with RoPE, global layers without, a shared expert beside the routed."])


def _llama4_kind(kind: str, rope: int, moe: bool) -> str:
    base = "chunked" if kind == "chunked_attention" else ("global" if not rope else "full")
    return f"{base}_layers" if moe else f"{base}_dense_layers"


def _llama4_attention(cfg: Llama4Text, h: Heads, kind: str, rope: int) -> ast.BlockCall:
    chunk = cfg.attention_chunk_size if kind == "chunked_attention" else None
    return gqa(
        h,
        qk_norm=on(cfg.use_qk_norm and bool(rope)),
        qk_norm_weights=False if cfg.use_qk_norm and rope else None,
        rope=None if rope else False,
        temperature=on(cfg.attn_temperature_tuning and not rope),
        chunk=chunk,
        cited=cfg.cite("attention_chunk_size", "use_qk_norm", "attn_temperature_tuning"),
    )
