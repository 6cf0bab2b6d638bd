"""Decoders that mix layer kinds: Gemma 2/3 (banded and full), Qwen3-Next, Jamba, Mamba-2 and MiniMax."""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import Field

from archcost.dsl import ast

from .common import Decoder, Stack, decoder, gqa, heads, layer_kinds, on, swiglu
from .heads import embed_scale
from .moe import SharedExpert, ffn_layers, rotary, routing, sparse_layers
from .reading.spec import Layer, Spec, call, number, op, times
from .recognisers.gated_deltanet import linear_kernels_option
from .schema import Count, Fraction, Gelu, Layers, Scale, Silu, Size

BANDED = ("sliding_attention", "full_attention")


class Gemma2(Decoder):
    num_key_value_heads: Size | None = 4
    hidden_size: Size = 2304
    num_hidden_layers: Layers = 26
    vocab_size: Size = 256_000
    num_attention_heads: Size = 8
    intermediate_size: Size = 9216
    hidden_activation: Gelu = "gelu_pytorch_tanh"
    hidden_act: Gelu | None = None
    attention_bias: Literal[False] = False
    head_dim: Size | None = 256
    sliding_window: Size = 4096
    sliding_window_size: Size | None = None   # an older name of sliding_window: must agree
    layer_types: list[str] | None = None
    attn_logit_softcapping: Scale | None = 50.0
    final_logit_softcapping: Scale | None = 30.0
    tie_word_embeddings: bool = True
    NEUTRAL: ClassVar[dict[str, str]] = {"query_pre_attn_scalar": "the score scale: a number, no shape"}


def gemma2(cfg: Gemma2, period: int = 2, qk_norm: bool = False) -> Spec:
    h, count = heads(cfg), cfg.num_hidden_layers
    if cfg.sliding_window_size not in (None, cfg.sliding_window):
        raise cfg.refuse("sliding_window_size", "`sliding_window_size` differs from `sliding_window`: which is meant?")
    kinds = layer_kinds(cfg, "layer_types", BANDED, count,
                        ["full_attention" if (i + 1) % period == 0 else "sliding_attention" for i in range(count)])
    softcap = number(cfg.attn_logit_softcapping) if cfg.attn_logit_softcapping else None
    note = h.note + ", " + cfg.cite("sliding_window", "attn_logit_softcapping") + "; norms after each sublayer too"
    ffn = call("geglu", "d", f=cfg.intermediate_size, post_norm=True, label="ffn", note=cfg.cite("intermediate_size"))

    def layer(kind: str) -> Layer:
        window = cfg.sliding_window if kind == "sliding_attention" else None
        attention = gqa(h, window=window, softcap=softcap, qk_norm=on(qk_norm), post_norm=True, note=note)
        return Layer(kind.replace("_attention", "_layers"), (attention, ffn))
    spec = decoder(cfg, [layer(kind) for kind in kinds], before=[embed_scale()], stack_note=cfg.cite("layer_types"),
                   header=["Gemma 2/3: banded (sliding) and full attention layers, sandwich norms, a GeGLU MLP."])
    if cfg.final_logit_softcapping:
        spec.after.append(logit_softcap(cfg.cite("final_logit_softcapping")))
    return spec


def logit_softcap(cited: str, width: str | int = "vocab") -> ast.Op:
    """tanh(logits / c)·c on every logit of the rows the head scores (Gemma 2); `width`: the logits a row (the
    vocabulary, or a head's own count where it scores fewer than the embedding holds)."""
    return op("elementwise", "logit_softcap", cited + ": tanh(logits / c)·c on every logit", width=width,
              flops=times(3, width), rows="m_out")


class Gemma3Text(Gemma2):
    vocab_size: Size = 262_208
    NEUTRAL: ClassVar[dict[str, str]] = {**Gemma2.NEUTRAL, "rope_local_base_freq": "RoPE frequencies"}
    sliding_window_pattern: Size = Field(6, alias="_sliding_window_pattern")
    attn_logit_softcapping: Scale | None = None
    final_logit_softcapping: Scale | None = None


def gemma3_text(cfg: Gemma3Text) -> Spec:
    return gemma2(cfg, period=cfg.sliding_window_pattern, qk_norm=True)


class QwenNext(Decoder, SharedExpert):
    head_dim: Size | None = 256
    ROTARY: ClassVar[float] = 0.25  # partial_rotary_factor when the config leaves it out
    num_key_value_heads: Size | None = 2
    hidden_size: Size = 2048
    num_hidden_layers: Layers = 48
    vocab_size: Size = 151_936
    num_attention_heads: Size = 16
    intermediate_size: Size = 5632
    hidden_act: Silu = "silu"
    attention_bias: Literal[False] = False
    use_sliding_window: Literal[False] = False
    sliding_window: Size | None = None   # read only when use_sliding_window is true
    partial_rotary_factor: Fraction | None = None
    rope_parameters: dict | None = None
    layer_types: list[str] | None = None
    full_attention_interval: Size = 4
    linear_key_head_dim: Size = 128
    linear_value_head_dim: Size = 128
    linear_num_key_heads: Size = 16
    linear_num_value_heads: Size = 32
    linear_conv_kernel_dim: Size = 4
    num_experts: Size = 512
    num_experts_per_tok: Size = 10
    moe_intermediate_size: Size = 512
    shared_expert_intermediate_size: Count = 512


def qwen3_next(cfg: QwenNext) -> Spec:
    h, count = heads(cfg), cfg.num_hidden_layers
    kinds = layer_kinds(cfg, "layer_types", ("linear_attention", "full_attention"), count,
                        ["full_attention" if (i + 1) % cfg.full_attention_interval == 0 else "linear_attention"
                         for i in range(count)])
    if cfg.linear_num_value_heads % cfg.linear_num_key_heads:
        raise cfg.refuse("linear_num_value_heads", f"linear_num_value_heads {cfg.linear_num_value_heads} is not a "
                                                   f"multiple of linear_num_key_heads {cfg.linear_num_key_heads}")
    if cfg.linear_value_head_dim != cfg.linear_key_head_dim:
        raise cfg.refuse("linear_value_head_dim", "`linear_value_head_dim` different from `linear_key_head_dim` is "
                                                  "not supported")
    linear = call("gated_deltanet", "d", qk_heads=cfg.linear_num_key_heads, v_heads=cfg.linear_num_value_heads,
                  head_dim=cfg.linear_key_head_dim, conv_kernel=cfg.linear_conv_kernel_dim, kernels="linear_kernels",
                  label="attn", note=cfg.cite("linear_num_key_heads", "linear_num_value_heads", "linear_key_head_dim",
                                              "linear_conv_kernel_dim"))
    full = call("gated_attention", "d", q_heads=h.heads, kv_heads=h.kv_heads, head_dim=h.head_dim,
                rotary=rotary(cfg, h.head_dim), label="attn", note=h.note + ", " + cfg.cite("partial_rotary_factor"))
    dense = swiglu(cfg)
    layers = [Layer(kind.replace("_attention", "_layers" if layer.kind == "moe_layers" else "_dense_layers"),
                    (linear if kind == "linear_attention" else full, layer.stmts[1]))
              for kind, layer in zip(kinds, ffn_layers(full, dense, cfg.moe(), sparse_layers(cfg)))]
    return decoder(cfg, layers, options=[linear_kernels_option()],
                   stack_note=cfg.cite("layer_types", "full_attention_interval"),
                   header=["Qwen3-Next: Gated DeltaNet linear attention with gated full attention, MoE."])


class Jamba(Decoder):
    num_key_value_heads: Size | None = 8
    hidden_size: Size = 4096
    num_hidden_layers: Layers = 32
    vocab_size: Size = 65_536
    num_attention_heads: Size = 32
    intermediate_size: Size = 14_336
    NEUTRAL: ClassVar[dict[str, str]] = dict.fromkeys(
        ("use_mamba_kernels", "use_associative_scan", "use_mambapy"), "which kernel runs the scan: the same work")
    hidden_act: Silu = "silu"
    num_experts: Size = 16
    num_experts_per_tok: Size = 2
    expert_layer_period: Size = 2
    expert_layer_offset: Count = 1
    attn_layer_period: Size = 8
    attn_layer_offset: Count = 4
    mamba_d_state: Size = 16
    mamba_d_conv: Size = 4
    mamba_expand: Size = 2
    mamba_dt_rank: Size | Literal["auto"] = "auto"
    mamba_conv_bias: bool = True
    mamba_proj_bias: bool = False
    num_logits_to_keep: Count | None = None   # how many logits a call returns: m_out, set per run
    # Jamba-1.5-Mini publishes "sliding_window": null (no window, every attention layer global); a window
    # would change the attention layers' cost, and no published Jamba sets one: refused, not guessed
    sliding_window: None = None


def jamba(cfg: Jamba) -> Spec:
    h, d = heads(cfg), cfg.hidden_size
    rank = -(-d // 16) if cfg.mamba_dt_rank == "auto" else cfg.mamba_dt_rank
    mixer = call("mamba", "d", state=cfg.mamba_d_state, expand=cfg.mamba_expand, conv_kernel=cfg.mamba_d_conv,
                 dt_rank=rank, conv_bias=cfg.mamba_conv_bias, proj_bias=cfg.mamba_proj_bias, inner_norms=True,
                 label="mixer", note=cfg.cite("mamba_d_state", "mamba_expand", "mamba_d_conv", "mamba_dt_rank"))
    attention = gqa(h, rope=False, note=h.note + "; no positions of its own")
    dense = swiglu(cfg)
    moe = call("moe", "d", **routing(cfg, "num_experts"), f=cfg.intermediate_size, label="experts",
               note=cfg.cite("num_experts", "num_experts_per_tok"))
    layers = []
    for i in range(cfg.num_hidden_layers):
        is_attention = i % cfg.attn_layer_period == cfg.attn_layer_offset
        is_moe = i % cfg.expert_layer_period == cfg.expert_layer_offset
        kind = ("attn" if is_attention else "mamba") + ("_moe_layers" if is_moe else "_layers")
        layers.append(Layer(kind, (attention if is_attention else mixer, moe if is_moe else dense)))
    return decoder(cfg, layers, stack_note=cfg.cite("attn_layer_period", "attn_layer_offset", "expert_layer_period",
                                                    "expert_layer_offset"),
                   header=["Jamba: Mamba layers with an attention layer every attn_layer_period, MoE every "
                           "expert_layer_period."])


class Mamba2(Stack):
    hidden_size: Size = 4096
    num_hidden_layers: Layers = 64
    vocab_size: Size = 32_768
    NEUTRAL: ClassVar[dict[str, str]] = {
        **dict.fromkeys(("time_step_min", "time_step_max", "time_step_floor", "time_step_limit"),
                        "the range of the learned step: numbers, no shape"),
        "time_step_rank": "unused by the Mamba-2 mixer (no low-rank step projection)",
        "rescale_prenorm_residual": "initialisation", "residual_in_fp32": "the residual's dtype in registers",
        "norm_before_gate": "the order of the gated norm: the same work"}
    hidden_act: Silu = "silu"
    num_heads: Size = 128
    head_dim: Size = 64
    state_size: Size = 128
    n_groups: Size = 8
    expand: Size = 2
    conv_kernel: Size = 4
    chunk_size: Size = 256
    use_bias: bool = False
    use_conv_bias: bool = True


def mamba2(cfg: Mamba2) -> Spec:
    if cfg.num_heads * cfg.head_dim != cfg.expand * cfg.hidden_size:
        raise cfg.refuse("num_heads", f"num_heads {cfg.num_heads} × head_dim {cfg.head_dim} ≠ expand {cfg.expand} × "
                                      f"hidden_size {cfg.hidden_size}: the mixer's inner width is ambiguous")
    if cfg.num_heads % cfg.n_groups:
        raise cfg.refuse("n_groups", f"num_heads {cfg.num_heads} is not a multiple of n_groups {cfg.n_groups}")
    mixer = call("mamba2", "d", heads=cfg.num_heads, head_dim=cfg.head_dim, state=cfg.state_size, groups=cfg.n_groups,
                 conv_kernel=cfg.conv_kernel, chunk=cfg.chunk_size, bias=on(cfg.use_bias),
                 conv_bias=None if cfg.use_conv_bias else False, label="mixer",
                 note=cfg.cite("num_heads", "head_dim", "state_size", "n_groups", "chunk_size"))
    return decoder(cfg, [Layer("layers", (mixer,))] * cfg.num_hidden_layers,
                   header=["Mamba-2: state-space mixers only, no attention and no MLP."])


class MiniMax(Decoder):
    ROTARY: ClassVar[float] = 1.0
    num_key_value_heads: Size | None = 8
    hidden_size: Size = 4096
    num_hidden_layers: Layers = 32
    vocab_size: Size = 32_000
    num_attention_heads: Size = 32
    intermediate_size: Size = 14_336
    NEUTRAL: ClassVar[dict[str, str]] = dict.fromkeys(
        ("full_attn_alpha_factor", "full_attn_beta_factor", "linear_attn_alpha_factor", "linear_attn_beta_factor",
         "mlp_alpha_factor", "mlp_beta_factor", "postnorm"), "DeepNorm's residual scalars: no parameters, no matrix")
    hidden_act: Silu = "silu"
    num_local_experts: Size = 8
    num_experts_per_tok: Size = 2
    block_size: Size = 256
    layer_types: list[str] | None = None
    sliding_window: None = None
    partial_rotary_factor: Fraction | None = None
    rope_parameters: dict | None = None


def minimax(cfg: MiniMax) -> Spec:
    h, count = heads(cfg), cfg.num_hidden_layers
    kinds = layer_kinds(cfg, "layer_types", ("linear_attention", "full_attention"), count,
                        ["full_attention" if (i + 1) % 2 else "linear_attention" for i in range(count)])
    lightning = call("lightning", "d", heads=h.heads, head_dim=h.head_dim, block_size=cfg.block_size, label="attn",
                     note=cfg.cite("num_attention_heads", "head_dim", "block_size"))
    full = gqa(h, rotary=rotary(cfg, h.head_dim), label="attn")
    moe = call("moe", "d", **routing(cfg, "num_local_experts"), f=cfg.intermediate_size, label="ffn",
               note=cfg.cite("num_local_experts", "num_experts_per_tok", "intermediate_size"))
    layers = [Layer("lightning_layers" if kind == "linear_attention" else "softmax_layers",
                    (lightning if kind == "linear_attention" else full, moe)) for kind in kinds]
    return decoder(cfg, layers, stack_note=cfg.cite("layer_types"),
                   header=["MiniMax: lightning (linear) attention layers with a softmax attention layer among them, "
                           "MoE in every layer."])


__all__ = ["Gemma2", "Gemma3Text", "Jamba", "Mamba2", "MiniMax", "QwenNext", "gemma2", "gemma3_text", "jamba",
           "mamba2", "minimax", "qwen3_next"]
