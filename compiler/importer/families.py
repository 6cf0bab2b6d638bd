"""The model types: one function per Hugging Face `model_type`, from its config to the parts of a spec."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass

from .config import Config
from .writing import Draft, Layer, call, number


@dataclass
class Attention:
    """The attention dimensions every decoder-only type states the same way."""

    d: int
    heads: int
    kv_heads: int
    head_dim: int
    notes: list[str]


def _attention(config: Config) -> Attention:
    d = config.integer("hidden_size")
    heads = config.integer("num_attention_heads")
    notes = []
    if config.get("num_key_value_heads") is None:
        kv_heads = heads
        notes.append("# `num_key_value_heads` absent: multi-head attention (every query head has its own K, V).")
    else:
        kv_heads = config.integer("num_key_value_heads")
    head_dim = config.get("head_dim")
    if head_dim is None:
        if d % heads:
            raise config.error("E503", f"hidden_size {d} is not a multiple of num_attention_heads {heads} and "
                                       "`head_dim` is not given", "num_attention_heads")
        head_dim = d // heads
    else:
        head_dim = config.integer("head_dim")
        if head_dim * heads != d:
            notes.append(f"# head_dim {head_dim} × {heads} heads = {head_dim * heads} ≠ hidden_size {d}.")
    if heads % kv_heads:
        raise config.error("E503", f"num_attention_heads {heads} is not a multiple of num_key_value_heads "
                                   f"{kv_heads}", "num_key_value_heads")
    return Attention(d, heads, kv_heads, head_dim, notes)


def _head(config: Config, tied_default: bool) -> list[str]:
    """The output head; a tied head reads the embedding table and adds no parameters."""
    return [call("lm_head", "d", "vocab", tied=config.flag("tie_word_embeddings", tied_default) or None)]


def _silu(config: Config, name: str = "hidden_act") -> None:
    config.expect(name, ("silu", "swish"), "silu", "the gated MLP of this type is SwiGLU")


def _full_layers(config: Config, count: int) -> None:
    """Fail if `layer_types` asks for anything but full attention in every layer."""
    types = config.get("layer_types")
    if types is not None and (not isinstance(types, list) or len(types) != count
                              or any(kind != "full_attention" for kind in types)):
        raise config.error("E503", "`layer_types` other than full attention in every layer is not supported "
                                   "for this model type", "layer_types")


def _window(config: Config, switch: str | None) -> int | None:
    """The sliding window every layer uses, or None. Qwen2/Qwen3 turn it on with `use_sliding_window`."""
    window = config.get("sliding_window")
    if switch is not None:
        if not config.flag(switch, False):
            config.get("max_window_layers")
            return None
        raise config.error("E503", f"`{switch}` = true (sliding window in the lower layers only) is not supported",
                           switch)
    return None if window is None else config.integer("sliding_window")


def _dense_family(config: Config, *, qkv_bias_field: str | None = None, o_bias_field: bool = False,
                  qkv_always_bias: bool = False, qk_norm: bool = False, window_switch: str | None = None,
                  mlp_bias_field: bool = False) -> Draft:
    """Llama, Mistral, Qwen2, Qwen3: pre-norm GQA (optionally biased, QK-normed or windowed) + SwiGLU."""
    a = _attention(config)
    layers = config.layers()
    vocab = config.integer("vocab_size")
    f = config.integer("intermediate_size")
    _silu(config)
    bias = config.flag(qkv_bias_field, False) if qkv_bias_field else False
    qkv_bias = bias or qkv_always_bias
    o_bias = bias and o_bias_field
    mlp_bias = config.flag("mlp_bias", False) if mlp_bias_field else False
    window = _window(config, window_switch)
    _full_layers(config, layers)
    head = _head(config, False)
    if window is not None and (qkv_bias or o_bias or mlp_bias):
        raise config.error("E503", "sliding-window attention with biases is not supported", "sliding_window")
    attention = _gqa_line(a, window, qk_norm=qk_norm or None, qkv_bias=qkv_bias or None, o_bias=o_bias or None)
    ffn = call("swiglu", "d", f=f, bias=mlp_bias or None, label="ffn")
    uses = ["std.embedding", "std.attention.swa" if window else "std.attention.gqa", "std.ffn.swiglu"]
    return Draft(uses=uses, header=a.notes, bindings=[f"d = {number(a.d)}", f"vocab = {number(vocab)}"],
                 before=["embedding(vocab, d)"],
                 layers=[Layer("layers", (attention, ffn))] * layers,
                 after=["rmsnorm(d) as final_norm", *head])


def _gqa_line(a: Attention, window: int | None, **extra) -> str:
    if window is not None:
        return call("swa", "d", q_heads=a.heads, kv_heads=a.kv_heads, head_dim=a.head_dim, window=window,
                    qk_norm=extra.get("qk_norm"), label="attn")
    return call("gqa", "d", q_heads=a.heads, kv_heads=a.kv_heads, head_dim=a.head_dim, label="attn", **extra)


def _llama(config: Config) -> Draft:
    return _dense_family(config, qkv_bias_field="attention_bias", o_bias_field=True, mlp_bias_field=True)


def _mistral(config: Config) -> Draft:
    return _dense_family(config)


def _qwen2(config: Config) -> Draft:
    # Qwen2 puts biases on Q, K and V (not O) whatever the config says; there is no field for them
    return _dense_family(config, qkv_always_bias=True, window_switch="use_sliding_window")


def _qwen3(config: Config) -> Draft:
    return _dense_family(config, qkv_bias_field="attention_bias", o_bias_field=True, qk_norm=True,
                         window_switch="use_sliding_window")


def _routing(config: Config, experts_field: str, *aliases: str) -> dict[str, int]:
    """Experts and the experts each token is routed to: never more of the second than of the first."""
    experts = config.integer(experts_field, None, *aliases)
    top = config.integer("num_experts_per_tok")
    if top > experts:
        raise config.error("E503", f"`num_experts_per_tok` = {top} routes each token to more experts than the "
                                   f"{experts} there are", "num_experts_per_tok")
    return {"experts": experts, "top": top}


def _moe_layers(config: Config, dense_line: str, moe_line: str, first_dense: int = 0) -> list[Layer]:
    """Which layers are MoE: all but `mlp_only_layers`, every `decoder_sparse_step`-th, after the first
    `first_dense` (DeepSeek's `first_k_dense_replace`)."""
    count = config.layers()
    only_mlp = config.get("mlp_only_layers", [])
    step = config.integer("decoder_sparse_step", 1) if "decoder_sparse_step" in config.values else 1
    if not isinstance(only_mlp, list) or not all(isinstance(i, int) and not isinstance(i, bool) for i in only_mlp):
        raise config.error("E503", "`mlp_only_layers` must be a list of layer numbers", "mlp_only_layers")
    kinds = []
    for i in range(count):
        sparse = i >= first_dense and i not in only_mlp and (i + 1) % step == 0
        kinds.append(("moe_layers", moe_line) if sparse else ("dense_layers", dense_line))
    return [Layer(kind, (line,)) for kind, line in kinds]


def _with_attention(attention: str, ffn_layers: list[Layer]) -> list[Layer]:
    return [Layer(layer.kind, (attention, *layer.lines)) for layer in ffn_layers]


def _mixtral(config: Config) -> Draft:
    a = _attention(config)
    layers = config.layers()
    vocab = config.integer("vocab_size")
    _silu(config)
    window = _window(config, None)
    moe = call("moe", "d", **_routing(config, "num_local_experts", "num_experts"),
               f=config.integer("intermediate_size"), label="ffn")
    head = _head(config, False)
    return Draft(uses=["std.embedding", "std.attention.swa" if window else "std.attention.gqa", "std.ffn.moe"],
                 header=a.notes, bindings=[f"d = {number(a.d)}", f"vocab = {number(vocab)}"],
                 before=["embedding(vocab, d)"],
                 layers=[Layer("layers", (_gqa_line(a, window), moe))] * layers,
                 after=["rmsnorm(d) as final_norm", *head])


def _qwen3_moe(config: Config) -> Draft:
    a = _attention(config)
    vocab = config.integer("vocab_size")
    _silu(config)
    _window(config, "use_sliding_window")
    _full_layers(config, config.layers())
    bias = config.flag("attention_bias", False)
    attention = _gqa_line(a, None, qk_norm=True, qkv_bias=bias or None, o_bias=bias or None)
    dense = call("swiglu", "d", f=config.integer("intermediate_size"), label="ffn")
    moe = call("moe", "d", **_routing(config, "num_experts", "num_local_experts"),
               f=config.integer("moe_intermediate_size"), label="ffn")
    layers = _with_attention(attention, _moe_layers(config, dense, moe))
    head = _head(config, False)
    uses = ["std.embedding", "std.attention.gqa", "std.ffn.moe"]
    if any(layer.kind == "dense_layers" for layer in layers):
        uses.append("std.ffn.swiglu")
    return Draft(uses=uses, header=a.notes, bindings=[f"d = {number(a.d)}", f"vocab = {number(vocab)}"],
                 before=["embedding(vocab, d)"], layers=layers,
                 after=["rmsnorm(d) as final_norm", *head])


def _deepseek_v3(config: Config) -> Draft:
    d = config.integer("hidden_size")
    vocab = config.integer("vocab_size")
    _silu(config)
    config.expect("attention_bias", (False,), False, "the MLA block has no biases")
    config.get("num_key_value_heads")  # MLA: every head reads the shared latent; the field is unused
    config.get("head_dim")
    config.get("qk_head_dim")
    if config.get("q_lora_rank") is None:
        raise config.error("E503", "`q_lora_rank` = null (queries without a low-rank projection) is not supported",
                           "q_lora_rank" if "q_lora_rank" in config.values else None)
    config.expect("moe_layer_freq", (1,), 1, "every layer after the first dense ones is MoE")
    config.expect("ep_size", (1,), 1)
    mtp = config.count("num_nextn_predict_layers")
    mla = call("mla", "d", heads=config.integer("num_attention_heads"), q_rank=config.integer("q_lora_rank"),
               kv_rank=config.integer("kv_lora_rank"), nope_dim=config.integer("qk_nope_head_dim"),
               rope_dim=config.integer("qk_rope_head_dim"), v_dim=config.integer("v_head_dim"),
               cache="mla_cache", label="attn")
    f_expert = config.integer("moe_intermediate_size")
    shared = config.count("n_shared_experts")
    dense = call("swiglu", "d", f=config.integer("intermediate_size"), label="ffn")
    moe = call("moe", "d", **_routing(config, "n_routed_experts"), f=f_expert, shared_f=shared * f_expert or None,
               label="ffn")
    first = config.count("first_k_dense_replace")
    layers = _with_attention(mla, _moe_layers(config, dense, moe, first_dense=first))
    head = _head(config, False)
    header = ["# MLA as transformers 5 runs it (mla_cache = reexpand, the default here) caches the latent and",
              "# rebuilds every cached position's K and V each call; `compressed` absorbs the up-projections",
              "# (the chapter's count), `expanded` caches per-head K and V (transformers 4)."]
    if mtp:
        header.append(f"# The checkpoint's {mtp} multi-token-prediction layer(s) are not part of the model "
                      "transformers builds and are left out.")
    return Draft(uses=["std.embedding", "std.attention.mla", "std.ffn.swiglu", "std.ffn.moe"], header=header,
                 bindings=[f"d = {number(d)}", f"vocab = {number(vocab)}", "option mla_cache = reexpand | compressed | expanded"],
                 before=["embedding(vocab, d)"], layers=layers,
                 after=["rmsnorm(d) as final_norm", *head])


def _gemma2(config: Config) -> Draft:
    a = _attention(config)
    count = config.layers()
    vocab = config.integer("vocab_size")
    config.expect("hidden_activation", ("gelu_pytorch_tanh",), "gelu_pytorch_tanh")
    config.expect("hidden_act", ("gelu_pytorch_tanh", None), None)
    config.expect("attention_bias", (False,), False)
    if config.get("sliding_window_size") not in (None, config.values.get("sliding_window", 4096)):
        raise config.error("E503", "`sliding_window_size` differs from `sliding_window`; which window is meant?",
                           "sliding_window_size")
    window = config.integer("sliding_window", 4096) if "sliding_window" in config.values else 4096
    types = config.get("layer_types")
    if types is None:
        types = ["sliding_attention" if i % 2 == 0 else "full_attention" for i in range(count)]
    if not isinstance(types, list) or len(types) != count or any(kind not in ("sliding_attention", "full_attention")
                                                                 for kind in types):
        raise config.error("E503", "`layer_types` must list sliding_attention or full_attention for every layer",
                           "layer_types")
    softcaps = [name for name in ("attn_logit_softcapping", "final_logit_softcapping") if config.get(name) is not None]
    f = config.integer("intermediate_size")
    post = ("rmsnorm(d) as post_attn_norm", call("geglu", "d", f=f, label="ffn"), "rmsnorm(d) as post_ffn_norm")
    sliding = Layer("sliding_layers", (_gqa_line(a, window), *post))
    full = Layer("full_layers", (_gqa_line(a, None), *post))
    head = _head(config, True)
    header = [*a.notes, "# Gemma 2: sandwich norms (a second RMSNorm after attention and after the MLP), the",
              "# embedding scaled by √d, a GeGLU MLP."]
    if softcaps:
        header.append(f"# Soft-capping ({', '.join(softcaps)}): a tanh on scores or logits, a few non-matrix "
                      "FLOPs per value, not counted here.")
    return Draft(uses=["std.embedding", "std.attention.gqa", "std.attention.swa", "std.ffn.swiglu"], header=header,
                 bindings=[f"d = {number(a.d)}", f"vocab = {number(vocab)}"],
                 before=["embedding(vocab, d)"],
                 layers=[sliding if kind == "sliding_attention" else full for kind in types],
                 after=["rmsnorm(d) as final_norm", *head])


def _opt(config: Config) -> Draft:
    d = config.integer("hidden_size")
    heads = config.integer("num_attention_heads")
    count = config.layers()
    vocab = config.integer("vocab_size")
    positions = config.integer("max_position_embeddings")
    if d % heads:
        raise config.error("E503", f"hidden_size {d} is not a multiple of num_attention_heads {heads}",
                           "num_attention_heads")
    act = config.get("activation_function", "relu")
    if act not in ("relu", "gelu"):
        raise config.error("E503", f"`activation_function` = {json.dumps(act)} is not supported (relu, gelu)",
                           "activation_function")
    bias = config.flag("enable_bias", True)
    config.expect("layer_norm_elementwise_affine", (True,), True, "layer norms without scale and shift")
    config.expect("word_embed_proj_dim", (d, None), None, "an embedding narrower than the model needs project_in/out")
    before_norm = config.flag("do_layer_norm_before", True)
    final = before_norm and not config.flag("_remove_final_layer_norm", False)
    attention = call("gqa", "d", q_heads=heads, kv_heads=heads, head_dim=d // heads, qkv_bias=bias or None,
                     o_bias=bias or None, rope=False, norm="layernorm", label="attn")
    ffn = call("gelu_mlp", "d", f=config.integer("ffn_dim"), bias=bias, act=act, label="ffn")
    head = _head(config, True)
    header = ["# OPT: learned positions (a table of max_position_embeddings + 2 rows), LayerNorm, a two-matrix MLP."]
    if not before_norm:
        header.append("# do_layer_norm_before = false: the norms follow each sublayer (same cost); no final norm.")
    return Draft(uses=["std.embedding", "std.attention.gqa", "std.ffn.mlp"], header=header,
                 bindings=[f"d = {number(d)}", f"vocab = {number(vocab)}"],
                 before=["embedding(vocab, d)",
                         f"learned_positions({number(positions)} + 2, d) as positions"],
                 layers=[Layer("layers", (attention, ffn))] * count,
                 after=(["layernorm(d) as final_norm"] if final else []) + head)


def _rotary(config: Config, head_dim: int) -> int:
    """Channels RoPE rotates: head_dim × partial_rotary_factor (top level, or inside rope_parameters)."""
    rope = config.get("rope_parameters")
    field_name = "partial_rotary_factor" if "partial_rotary_factor" in config.values else "rope_parameters"
    factor = config.get("partial_rotary_factor")
    if factor is None:
        factor = rope.get("partial_rotary_factor", 1) if isinstance(rope, dict) else 1
    if isinstance(factor, bool) or not isinstance(factor, int | float) or not 0 < factor <= 1 \
            or not float(head_dim * factor).is_integer():
        raise config.error("E503", f"partial_rotary_factor {json.dumps(factor)} must be in (0, 1] and give a whole "
                                   f"number of rotated channels of head_dim {head_dim}", field_name)
    return int(head_dim * factor)


def _hybrid_types(config: Config, count: int) -> list[str]:
    """`layer_types` of Qwen3-Next, or every `full_attention_interval`-th layer full, the others linear."""
    types = config.get("layer_types")
    if types is None:
        interval = config.integer("full_attention_interval", 4)
        types = ["full_attention" if (i + 1) % interval == 0 else "linear_attention" for i in range(count)]
    else:
        config.get("full_attention_interval")
    if not isinstance(types, list) or len(types) != count or any(kind not in ("linear_attention", "full_attention")
                                                                 for kind in types):
        raise config.error("E503", "`layer_types` must list linear_attention or full_attention for every layer",
                           "layer_types")
    return types


def _qwen3_next(config: Config) -> Draft:
    a = _attention(config)
    count = config.layers()
    vocab = config.integer("vocab_size")
    _silu(config)
    config.expect("attention_bias", (False,), False)
    _window(config, "use_sliding_window")  # published configs say false (and sliding_window null): no window
    rotary = _rotary(config, a.head_dim)
    types = _hybrid_types(config, count)
    key_dim = config.integer("linear_key_head_dim")
    if config.integer("linear_value_head_dim") != key_dim:
        raise config.error("E503", "`linear_value_head_dim` different from `linear_key_head_dim` is not supported",
                           "linear_value_head_dim")
    linear = call("gated_deltanet", "d", qk_heads=config.integer("linear_num_key_heads"),
                  v_heads=config.integer("linear_num_value_heads"), head_dim=key_dim,
                  conv_kernel=config.integer("linear_conv_kernel_dim"), kernels="linear_kernels", label="attn")
    full = call("gated_attention", "d", q_heads=a.heads, kv_heads=a.kv_heads, head_dim=a.head_dim,
                rotary=rotary if rotary != a.head_dim else None, label="attn")
    shared = config.count("shared_expert_intermediate_size")
    dense = call("swiglu", "d", f=config.integer("intermediate_size"), label="ffn")
    moe = call("moe", "d", **_routing(config, "num_experts", "num_local_experts"),
               f=config.integer("moe_intermediate_size"), shared_f=shared or None,
               shared_gate=True if shared else None, label="ffn")
    ffn_layers = _moe_layers(config, dense, moe)
    layers = [Layer(kind.replace("_attention", "_layers" if layer.kind == "moe_layers" else "_dense_layers"),
                    (linear if kind == "linear_attention" else full, *layer.lines))
              for kind, layer in zip(types, ffn_layers)]
    head = _head(config, False)
    return Draft(uses=["std.embedding", "std.attention.gated_attention", "std.attention.gated_deltanet",
                       "std.ffn.moe", "std.ffn.swiglu"],
                 header=[*a.notes, "# Qwen3-Next: Gated DeltaNet linear attention with gated full attention, MoE.",
                         "# linear_kernels = torch counts transformers' torch reference of the linear attention",
                         "# (chunks padded, the step as elementwise work); fused, the default, the kernels' own work."],
                 bindings=[f"d = {number(a.d)}", f"vocab = {number(vocab)}", "option linear_kernels = fused | torch"],
                 before=["embedding(vocab, d)"], layers=layers,
                 after=["rmsnorm(d) as final_norm", *head])


IMPORTERS: dict[str, Callable[[Config], Draft]] = {
    "llama": _llama, "mistral": _mistral, "mixtral": _mixtral, "qwen2": _qwen2, "qwen3": _qwen3,
    "qwen3_moe": _qwen3_moe, "deepseek_v3": _deepseek_v3, "gemma2": _gemma2, "opt": _opt,
    "qwen3_next": _qwen3_next,
}
