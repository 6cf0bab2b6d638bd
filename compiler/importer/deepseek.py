"""DeepSeek-V2 and V3: multi-head latent attention over routed and shared experts, the first layers dense."""

from __future__ import annotations

from typing import ClassVar, Literal

from .common import Stack, decoder, swiglu
from .moe import MTP, ffn_layers, routing, sparse_layers
from .reading.spec import Spec, call
from .recognisers.mla import mla_cache_option
from .schema import Count, Layers, Silu, Size


class DeepseekV3(Stack):
    hidden_size: Size = 7168
    num_hidden_layers: Layers = 61
    vocab_size: Size = 129_280
    num_attention_heads: Size = 128
    intermediate_size: Size = 18_432
    NEUTRAL: ClassVar[dict[str, str]] = {
        **MTP, "num_key_value_heads": "MLA: every head reads the shared latent; no K, V heads of their own",
        "head_dim": "MLA: the head widths are qk_nope_head_dim, qk_rope_head_dim and v_head_dim",
        "qk_head_dim": "the same: qk_nope_head_dim + qk_rope_head_dim", "ep_size": "an expert-parallel layout"}
    hidden_act: Silu = "silu"
    attention_bias: Literal[False] = False
    q_lora_rank: Size | None = 1536
    kv_lora_rank: Size = 512
    qk_nope_head_dim: Size = 128
    qk_rope_head_dim: Size = 64
    v_head_dim: Size = 128
    n_routed_experts: Size = 256
    num_experts_per_tok: Size = 8
    moe_intermediate_size: Size = 2048
    n_shared_experts: Count = 1
    first_k_dense_replace: Count = 3
    moe_layer_freq: Literal[1] = 1


class DeepseekV2(DeepseekV3):
    hidden_size: Size = 4096
    num_hidden_layers: Layers = 32
    vocab_size: Size = 102_400
    num_attention_heads: Size = 32
    intermediate_size: Size = 11_008
    mlp_bias: Literal[False] = False
    q_lora_rank: Size | None = 1536
    n_routed_experts: Size = 64
    num_experts_per_tok: Size
    moe_intermediate_size: Size = 1407
    n_shared_experts: Count = 2
    first_k_dense_replace: Count = 0


class KimiK2(DeepseekV3):
    """Kimi K2 (moonshotai/Kimi-K2-*): a remote-code checkpoint (`model_type` kimi_k2, its `auto_map` DeepSeek-V3's
    own modeling_deepseek.py): DeepSeek-V3's layers with its own sizes. No transformers code reads this type, so
    a field the schema does not know stops the import (E502)."""

    moe_layer_freq: Literal[1] = 1   # modeling_deepseek: MoE on every layer from first_k_dense_replace


def deepseek(cfg: DeepseekV3) -> Spec:
    mla = call("mla", "d", heads=cfg.num_attention_heads, q_rank=cfg.q_lora_rank or 0, kv_rank=cfg.kv_lora_rank,
               nope_dim=cfg.qk_nope_head_dim, rope_dim=cfg.qk_rope_head_dim, v_dim=cfg.v_head_dim, cache="mla_cache",
               label="attn", note=cfg.cite("num_attention_heads", "q_lora_rank", "kv_lora_rank", "qk_nope_head_dim",
                                           "qk_rope_head_dim", "v_head_dim"))
    f_expert, shared = cfg.moe_intermediate_size, cfg.n_shared_experts
    moe = call("moe", "d", **routing(cfg, "n_routed_experts"), f=f_expert, shared_f=shared * f_expert or None,
               label="ffn", note=cfg.cite("n_routed_experts", "num_experts_per_tok", "moe_intermediate_size",
                                          "n_shared_experts"))
    dense = swiglu(cfg)
    paths = mla_cache_option()
    return decoder(cfg, ffn_layers(mla, dense, moe, sparse_layers(cfg, cfg.first_k_dense_replace)), options=[paths],
                   stack_note=cfg.cite("num_hidden_layers", "first_k_dense_replace"))


