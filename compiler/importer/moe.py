"""Mixture-of-experts decoders: Mixtral, Qwen2/3-MoE, Phi-MoE, gpt-oss, GLM-4-MoE, ERNIE-4.5-MoE (DeepSeek in
deepseek.py, Llama 4 in llama4.py)."""

from __future__ import annotations

from typing import ClassVar, Literal

from archcost.dsl import ast

from .common import Decoder, decoder, gqa, heads, layer_kinds, on, swiglu, uniform
from .dense import Mistral, Qwen2
from .reading.spec import Layer, Spec, call
from .schema import Count, Fraction, Layers, Schema, Silu, Size

MTP = {"num_nextn_predict_layers": "multi-token-prediction layers ship with the checkpoint but are not part of "
                                   "the model transformers builds; left out"}

def routing(cfg: Schema, experts_field: str, top_field: str = "num_experts_per_tok",
            default: int | None = None) -> dict[str, int]:
    experts, top = getattr(cfg, experts_field) or default, getattr(cfg, top_field)
    if experts is None:  # `"num_experts": null` and no other field that names the count (found by tools/fuzz.py)
        raise cfg.refuse(experts_field, f"`{experts_field}` names no number of experts for a mixture-of-experts "
                                        "model")
    if top > experts:
        raise cfg.refuse(top_field, f"`{top_field}` = {top} routes each token to more experts than the {experts} "
                                    "there are")
    return {"experts": experts, "top": top}


def sparse_layers(cfg: Schema, first_dense: int = 0) -> list[bool]:
    """Which layers are MoE: after the first `first_dense`, every `decoder_sparse_step`-th, not in
    `mlp_only_layers`."""
    step = getattr(cfg, "decoder_sparse_step", 1)
    only_mlp = set(getattr(cfg, "mlp_only_layers", None) or ())
    return [i >= first_dense and i not in only_mlp and (i + 1) % step == 0 for i in range(cfg.num_hidden_layers)]


def ffn_layers(attention: ast.BlockCall, dense: ast.BlockCall, moe: ast.BlockCall, sparse: list[bool]) -> list[Layer]:
    return [Layer("moe_layers", (attention, moe)) if is_moe else Layer("dense_layers", (attention, dense))
            for is_moe in sparse]


class Mixtral(Mistral):
    sliding_window: Size | None = None
    num_local_experts: Size = 8
    num_experts_per_tok: Size = 2


def mixtral(cfg: Mixtral) -> Spec:
    h = heads(cfg)
    attention = gqa(h, window=cfg.sliding_window, cited=cfg.cite("sliding_window"))
    moe = call("moe", "d", **routing(cfg, "num_local_experts"), f=cfg.intermediate_size, label="ffn",
               note=cfg.cite("num_local_experts", "num_experts_per_tok", "intermediate_size"))
    return uniform(cfg, attention, moe)


class SparseLayers(Schema):
    """Qwen's MoE layers: every `decoder_sparse_step`-th, except those `mlp_only_layers` lists."""

    decoder_sparse_step: Size = 1
    mlp_only_layers: list[Count] = []

    def stack_note(self) -> str:
        return self.cite("num_hidden_layers", "decoder_sparse_step", "mlp_only_layers")


class SharedExpert(SparseLayers):
    """Qwen's MoE with one gated shared expert beside the routed ones (Qwen2-MoE, Qwen3-Next)."""

    num_experts: Size = 60
    num_experts_per_tok: Size = 4
    moe_intermediate_size: Size = 1408
    shared_expert_intermediate_size: Count = 5632

    def moe(self) -> ast.BlockCall:
        shared = self.shared_expert_intermediate_size
        return call("moe", "d", **routing(self, "num_experts"), f=self.moe_intermediate_size,
                    shared_f=shared or None, shared_gate=on(bool(shared)), label="ffn",
                    note=self.cite("num_experts", "num_experts_per_tok", "moe_intermediate_size",
                                   "shared_expert_intermediate_size"))


class Qwen2Moe(Qwen2, SharedExpert):
    sliding_window: Count | None = 0      # read only when use_sliding_window is true
    hidden_size: Size = 2048
    num_hidden_layers: Layers = 24
    vocab_size: Size = 151_936
    num_attention_heads: Size = 16
    intermediate_size: Size = 5632
    qkv_bias: bool = True


def qwen2_moe(cfg: Qwen2Moe) -> Spec:
    h = heads(cfg)
    attention = gqa(h, qkv_bias=on(cfg.qkv_bias), cited=cfg.cite("qkv_bias"))
    dense = swiglu(cfg)
    return decoder(cfg, ffn_layers(attention, dense, cfg.moe(), sparse_layers(cfg)), stack_note=cfg.stack_note())


class Qwen3Moe(Qwen2, SparseLayers):
    num_key_value_heads: Size | None = 4
    hidden_size: Size = 2048
    num_hidden_layers: Layers = 24
    vocab_size: Size = 151_936
    num_attention_heads: Size = 32
    intermediate_size: Size = 6144
    attention_bias: bool = False
    num_experts: Size | None = None         # the published configs' name
    num_local_experts: Size = 128           # transformers 5's name for the same count
    num_experts_per_tok: Size = 8
    moe_intermediate_size: Size = 768


def qwen3_moe(cfg: Qwen3Moe) -> Spec:
    h = heads(cfg)
    names = [name for name in ("num_experts", "num_local_experts") if cfg.given(name)]
    if len({getattr(cfg, name) for name in names}) > 1:
        raise cfg.refuse("num_local_experts", "`num_experts` and `num_local_experts` differ: which is meant?")
    experts = names[0] if names else "num_local_experts"
    bias = on(cfg.attention_bias)
    attention = gqa(h, qk_norm=True, qkv_bias=bias, o_bias=bias, cited=cfg.cite("attention_bias"))
    moe = call("moe", "d", **routing(cfg, experts), f=cfg.moe_intermediate_size, label="ffn",
               note=cfg.cite(experts, "num_experts_per_tok", "moe_intermediate_size"))
    dense = swiglu(cfg)
    return decoder(cfg, ffn_layers(attention, dense, moe, sparse_layers(cfg)), stack_note=cfg.stack_note())


class PhiMoe(Mixtral):
    vocab_size: Size = 32_064
    intermediate_size: Size = 6400
    num_local_experts: Size = 16
    attention_bias: bool = False
    lm_head_bias: bool = False


def phimoe(cfg: PhiMoe) -> Spec:
    h = heads(cfg)
    bias = on(cfg.attention_bias)
    attention = gqa(h, qkv_bias=bias, o_bias=bias, norm="layernorm", window=cfg.sliding_window,
                    cited=cfg.cite("attention_bias", "sliding_window"))
    moe = call("moe", "d", **routing(cfg, "num_local_experts"), f=cfg.intermediate_size, norm="layernorm",
               label="ffn", note=cfg.cite("num_local_experts", "num_experts_per_tok", "intermediate_size"))
    return uniform(cfg, attention, moe, norm="layernorm",
                   head_bias=cfg.lm_head_bias, header=["Phi-MoE: LayerNorm throughout, biased attention."])


class GptOss(Decoder):
    num_key_value_heads: Size | None = 8
    hidden_size: Size = 2880
    num_hidden_layers: Layers = 36
    vocab_size: Size = 201_088
    num_attention_heads: Size = 64
    intermediate_size: Size = 2880
    NEUTRAL: ClassVar[dict[str, str]] = {
        "swiglu_limit": "the clamp of the gated activation: counted in act_flops", "swiglu_alpha": "the same",
        "initial_context_length": "the context of pretraining: a RoPE detail"}
    hidden_act: Silu = "silu"
    num_local_experts: Size = 128
    num_experts_per_tok: Size = 4
    experts_per_token: Size | None = None   # the original name of num_experts_per_tok: must agree
    attention_bias: Literal[True] = True
    sliding_window: Size = 128
    head_dim: Size | None = 64
    layer_types: list[str] | None = None


def gpt_oss(cfg: GptOss) -> Spec:
    h = heads(cfg)
    if cfg.experts_per_token not in (None, cfg.num_experts_per_tok):
        raise cfg.refuse("experts_per_token", "`experts_per_token` and `num_experts_per_tok` differ: which is meant?")
    count = cfg.num_hidden_layers
    kinds = layer_kinds(cfg, "layer_types", ("sliding_attention", "full_attention"), count,
                        ["sliding_attention" if i % 2 == 0 else "full_attention" for i in range(count)])
    note = h.note + ", " + cfg.cite("sliding_window") + "; biased, with a learned sink logit per head"
    moe = call("moe", "d", **routing(cfg, "num_local_experts"), f=cfg.intermediate_size, router_bias=True,
               expert_bias=True, act_flops=9, label="ffn",
               note=cfg.cite("num_local_experts", "num_experts_per_tok", "intermediate_size")
               + "; a clamped SwiGLU (9 FLOPs a value)")

    def layer(kind: str) -> Layer:
        window = cfg.sliding_window if kind == "sliding_attention" else None
        attention = gqa(h, qkv_bias=True, o_bias=True, window=window, sinks=True, note=note)
        return Layer(kind.replace("_attention", "_layers"), (attention, moe))
    return decoder(cfg, [layer(kind) for kind in kinds], stack_note=cfg.cite("layer_types"),
                   header=["gpt-oss: alternating banded and full attention with sinks, biased experts."])


class Glm4Moe(Decoder):
    ROTARY: ClassVar[float] = 0.5  # partial_rotary_factor when the config leaves it out
    num_key_value_heads: Size | None = 8
    hidden_size: Size = 4096
    num_hidden_layers: Layers = 46
    vocab_size: Size = 151_552
    num_attention_heads: Size = 96
    intermediate_size: Size = 10_944
    NEUTRAL: ClassVar[dict[str, str]] = MTP
    hidden_act: Silu = "silu"
    attention_bias: bool = False     # biases on Q, K and V (not O)
    use_qk_norm: bool = False
    partial_rotary_factor: Fraction | None = None
    rope_parameters: dict | None = None
    n_routed_experts: Size = 128
    num_experts_per_tok: Size = 8
    moe_intermediate_size: Size = 1408
    n_shared_experts: Count = 1
    first_k_dense_replace: Count = 1


def rotary(cfg: Schema, head_dim: int) -> int | None:
    """Channels RoPE rotates: head_dim × partial_rotary_factor (top level, or inside rope_parameters)."""
    factor = cfg.partial_rotary_factor
    if factor is None:
        factor = (cfg.rope_parameters or {}).get("partial_rotary_factor", type(cfg).ROTARY)
    if isinstance(factor, bool) or not isinstance(factor, int | float) or not 0 < factor <= 1 \
            or not float(head_dim * factor).is_integer():
        raise cfg.refuse("partial_rotary_factor" if cfg.partial_rotary_factor is not None else "rope_parameters",
                         f"partial_rotary_factor {factor} must be in (0, 1] and give a whole number of rotated "
                         f"channels of head_dim {head_dim}")
    return None if factor == 1 else int(head_dim * factor)


def glm4_moe(cfg: Glm4Moe) -> Spec:
    h = heads(cfg)
    attention = gqa(h, qkv_bias=on(cfg.attention_bias), qk_norm=on(cfg.use_qk_norm),
                    rotary=rotary(cfg, h.head_dim),
                    cited=cfg.cite("attention_bias", "use_qk_norm", "partial_rotary_factor"))
    f_expert, shared = cfg.moe_intermediate_size, cfg.n_shared_experts
    moe = call("moe", "d", **routing(cfg, "n_routed_experts"), f=f_expert, shared_f=shared * f_expert or None,
               label="ffn", note=cfg.cite("n_routed_experts", "num_experts_per_tok", "moe_intermediate_size",
                                          "n_shared_experts"))
    dense = swiglu(cfg)
    return decoder(cfg, ffn_layers(attention, dense, moe, sparse_layers(cfg, cfg.first_k_dense_replace)),
                   stack_note=cfg.cite("num_hidden_layers", "first_k_dense_replace"))


class Ernie45Moe(Decoder):
    num_key_value_heads: Size | None = 4
    hidden_size: Size = 2560
    num_hidden_layers: Layers = 28
    vocab_size: Size = 103_424
    num_attention_heads: Size = 20
    intermediate_size: Size = 12_288
    NEUTRAL: ClassVar[dict[str, str]] = {"moe_norm_min": "a floor of the routing weights' normalisation: a number",
                                         **MTP}
    hidden_act: Silu = "silu"
    use_bias: bool = False                # biases on Q, K, V, O, the dense MLPs and the head
    moe_num_experts: Size = 64
    moe_k: Size = 6
    moe_intermediate_size: Size = 1536
    moe_num_shared_experts: Count = 2
    moe_layer_start_index: Count = 1
    moe_layer_end_index: Count = 27
    moe_layer_interval: Size = 1
    tie_word_embeddings: bool = True


def ernie4_5_moe(cfg: Ernie45Moe) -> Spec:
    h = heads(cfg)
    shared = cfg.moe_num_shared_experts * cfg.moe_intermediate_size
    if cfg.use_bias and shared:
        raise cfg.refuse("use_bias", "`use_bias` = true with shared experts (biased shared experts) is not supported")
    bias = on(cfg.use_bias)
    attention = gqa(h, qkv_bias=bias, o_bias=bias, cited=cfg.cite("use_bias"))
    # the router's score correction (e_score_correction_bias) is a parameter here, one per expert
    moe = call("moe", "d", **routing(cfg, "moe_num_experts", "moe_k"), f=cfg.moe_intermediate_size,
               shared_f=shared or None, router_bias=True, label="ffn",
               note=cfg.cite("moe_num_experts", "moe_k", "moe_intermediate_size", "moe_num_shared_experts"))
    dense = swiglu(cfg, bias)
    sparse = [(i + 1) % cfg.moe_layer_interval == 0 and cfg.moe_layer_start_index <= i <= cfg.moe_layer_end_index
              for i in range(cfg.num_hidden_layers)]
    return decoder(cfg, ffn_layers(attention, dense, moe, sparse), head_bias=cfg.use_bias,
                   stack_note=cfg.cite("moe_layer_start_index", "moe_layer_end_index", "moe_layer_interval"))


__all__ = [
    "Ernie45Moe",
    "ernie4_5_moe",
    "Glm4Moe",
    "GptOss",
    "Mixtral",
    "PhiMoe",
    "Qwen2Moe",
    "Qwen3Moe",
    "glm4_moe",
    "gpt_oss",
    "mixtral",
    "phimoe",
    "qwen2_moe",
    "qwen3_moe",
]
