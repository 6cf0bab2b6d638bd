"""Dense decoders: Llama, Mistral, Qwen2, Qwen3, Granite, Gemma and OPT, one schema and one builder each."""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import Field

from archcost.dsl import ast

from .common import Decoder, gqa, heads, on, swiglu, uniform
from .heads import embed_scale
from .reading.spec import Spec, binding, call, op, plus, value
from .schema import Count, Gelu, Layers, Silu, Size


class Llama(Decoder):
    hidden_size: Size = 4096
    num_hidden_layers: Layers = 32
    vocab_size: Size = 32_000
    num_attention_heads: Size = 32
    intermediate_size: Size = 11_008
    hidden_act: Silu = "silu"
    attention_bias: bool = False   # biases on Q, K, V and O
    mlp_bias: bool = False


def llama(cfg: Llama) -> Spec:
    h = heads(cfg)
    bias = on(cfg.attention_bias)
    attention = gqa(h, qkv_bias=bias, o_bias=bias, cited=cfg.cite("attention_bias"))
    ffn = swiglu(cfg, on(cfg.mlp_bias), "intermediate_size", "mlp_bias")
    return uniform(cfg, attention, ffn)


class Granite(Llama):
    NEUTRAL: ClassVar[dict[str, str]] = dict.fromkeys(
        ("embedding_multiplier", "residual_multiplier", "attention_multiplier", "logits_scaling"),
        "a scalar on activations already computed: the multiply is a norm-sized elementwise op, no matrix")


def granite(cfg: Granite) -> Spec:
    spec = llama(cfg)
    spec.header.append("Granite: Llama's layers with scalar multipliers on the embedding, residuals, scores and "
                       "logits (counted as free).")
    return spec


class Olmo2(Llama):
    vocab_size: Size = 50_304
    mlp_bias: Literal[False] = False


def olmo2(cfg: Olmo2) -> Spec:
    h = heads(cfg)
    bias = on(cfg.attention_bias)
    attention = gqa(h, qkv_bias=bias, o_bias=bias, qk_norm=True, qk_norm_heads=False,
                    cited=cfg.cite("attention_bias") + "; one norm over each whole Q and K")
    ffn = swiglu(cfg)
    spec = uniform(cfg, attention, ffn)
    spec.header.append("OLMo 2: the norms follow each sublayer (the same parameters and work as before it); "
                       "Q and K are normalised over their whole width.")
    return spec


class Mistral(Decoder):
    num_key_value_heads: Size | None = 8
    hidden_size: Size = 4096
    num_hidden_layers: Layers = 32
    vocab_size: Size = 32_000
    num_attention_heads: Size = 32
    intermediate_size: Size = 14_336
    hidden_act: Silu = "silu"
    sliding_window: Size | None = 4096


def mistral(cfg: Mistral) -> Spec:
    h = heads(cfg)
    attention = gqa(h, window=cfg.sliding_window, cited=cfg.cite("sliding_window"))
    ffn = swiglu(cfg)
    return uniform(cfg, attention, ffn)


class Qwen2(Decoder):
    hidden_size: Size = 4096
    num_hidden_layers: Layers = 32
    vocab_size: Size = 151_936
    num_attention_heads: Size = 32
    intermediate_size: Size = 22_016
    hidden_act: Silu = "silu"
    use_sliding_window: Literal[False] = False        # true (windows in the upper layers only) is not modelled
    sliding_window: Count | None = None               # read only when use_sliding_window is true
    max_window_layers: Count = 28                     # the same
    layer_types: list[Literal["full_attention"]] | None = None


def qwen2(cfg: Qwen2) -> Spec:
    h = heads(cfg)
    # Qwen2 puts biases on Q, K and V (not O) whatever the config says: no field switches them
    attention = gqa(h, qkv_bias=True, note=h.note + "; Q, K, V biased (Qwen2 always)")
    ffn = swiglu(cfg)
    return uniform(cfg, attention, ffn)


class Qwen3(Qwen2):
    attention_bias: bool = False


def qwen3(cfg: Qwen3) -> Spec:
    h = heads(cfg)
    bias = on(cfg.attention_bias)
    attention = gqa(h, qk_norm=True, qkv_bias=bias, o_bias=bias, cited=cfg.cite("attention_bias"))
    ffn = swiglu(cfg)
    return uniform(cfg, attention, ffn)


class Gemma(Decoder):
    hidden_size: Size = 3072
    num_hidden_layers: Layers = 28
    vocab_size: Size = 256_000
    num_attention_heads: Size = 16
    intermediate_size: Size = 24_576
    hidden_act: Gelu | None = "gelu_pytorch_tanh"
    hidden_activation: Gelu | None = None
    attention_bias: Literal[False] = False
    tie_word_embeddings: bool = True
    head_dim: Size | None = 256


def gemma(cfg: Gemma) -> Spec:
    h = heads(cfg)
    attention = gqa(h)
    ffn = call("geglu", "d", f=cfg.intermediate_size, label="ffn", note=cfg.cite("intermediate_size", "hidden_act"))
    return uniform(cfg, attention, ffn, before=[embed_scale()],
                   header=["Gemma: a GeGLU MLP and the embedding scaled by √d."])


def signature(source: str, target: str) -> ast.Signature:
    return ast.Signature(source=value(source), target=value(target))


class Opt(Decoder):
    hidden_size: Size = 768
    num_hidden_layers: Layers = 12
    vocab_size: Size = 50_272
    num_attention_heads: Size = 12
    ffn_dim: Size = 3072
    max_position_embeddings: Size = 2048   # OPT's positions are a learned table: its rows are weights
    activation_function: Literal["relu", "gelu"] = "relu"
    enable_bias: bool = True
    layer_norm_elementwise_affine: Literal[True] = True
    word_embed_proj_dim: Size | None = None  # narrower than hidden_size: project_in and project_out
    do_layer_norm_before: bool = True
    remove_final_layer_norm: bool = Field(False, alias="_remove_final_layer_norm")
    tie_word_embeddings: bool = True


def opt(cfg: Opt) -> Spec:
    d, count = cfg.hidden_size, cfg.num_attention_heads
    if d % count:
        raise cfg.refuse("num_attention_heads", f"hidden_size {d} is not a multiple of num_attention_heads {count}")
    bias = cfg.enable_bias
    attention = call("gqa", "d", q_heads=count, kv_heads=count, head_dim=d // count, qkv_bias=on(bias),
                     o_bias=on(bias), rope=False, norm="layernorm", label="attn",
                     note=cfg.cite("num_attention_heads", "enable_bias"))
    ffn = call("gelu_mlp", "d", f=cfg.ffn_dim, bias=bias, act=cfg.activation_function, label="ffn",
               note=cfg.cite("ffn_dim", "activation_function"))
    positions = call("learned_positions", plus(cfg.max_position_embeddings, 2), "d", label="positions",
                     note=cfg.cite("max_position_embeddings") + ": OPT's table has two more rows")
    spec = uniform(cfg, attention, ffn, before=[positions],
                   norm="layernorm", header=["OPT: learned positions, LayerNorm, a two-matrix MLP."])
    if not cfg.do_layer_norm_before:
        spec.header.append("do_layer_norm_before = false: the norms follow each sublayer (same cost); no final norm.")
    if not cfg.do_layer_norm_before or cfg.remove_final_layer_norm:
        spec.after = spec.after[1:]
    if cfg.word_embed_proj_dim not in (None, d):
        _projected(cfg, spec)
    return spec


def _projected(cfg: Opt, spec: Spec) -> None:
    """An embedding narrower than the model (opt-350m): the table and the head are `word_embed_proj_dim`
    wide, with a matrix into the model's width after the table and one back before the head."""
    note = cfg.cite("word_embed_proj_dim") + ": the table's width"
    spec.bindings.insert(1, binding("e", cfg.word_embed_proj_dim, note))
    spec.before[0] = call("embedding", "vocab", "e")
    spec.before.insert(1, op("linear", "project_in", signature=signature("e", "d")))
    head = spec.after[-1]
    spec.after[-1:] = [op("linear", "project_out", signature=signature("d", "e")),
                       head.model_copy(update={"args": [ast.Positional(value=value("e")), *head.args[1:]]})]


__all__ = [
    "Gemma",
    "Granite",
    "Llama",
    "Mistral",
    "Olmo2",
    "Opt",
    "olmo2",
    "Qwen2",
    "Qwen3",
    "embed_scale",
    "gemma",
    "granite",
    "llama",
    "mistral",
    "opt",
    "qwen2",
    "qwen3",
]
