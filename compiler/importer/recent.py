"""This year's families whose modeling code is an older family's with other defaults: Qwen3-VL's text models
(Qwen3 and Qwen3-MoE; the vision tower is not counted), Hunyuan's dense models (Qwen3: RMS norms on Q and K per
head), Phi-3 and Phi-4 (Mistral: fused QKV and gate-up matrices, the same shapes; a window when configured) and
SmolLM3 (Llama: some layers skip RoPE, which rotates and adds no shape).

Each schema gives every field its own transformers config class's default, since a published config leaves out
the fields equal to it; tests/test_import_families.py checks them against the installed classes, and
tests/test_parity.py each family's model on the meta device.
"""

from __future__ import annotations

from typing import ClassVar, Literal

from .common import decoder, gqa, heads, swiglu, uniform
from .dense import Llama, Mistral, Qwen3, qwen3
from .moe import Qwen3Moe, qwen3_moe, rotary
from .reading.spec import Layer, Spec
from .schema import Count, Fraction, Layers, Size


class Qwen3VlText(Qwen3):
    """Qwen3-VL's text model (`Qwen3VLTextModel`): Qwen3's layers; the deepstack adds visual features to the first
    layers' hidden states only when an image is given."""

    num_key_value_heads: Size | None = 32
    head_dim: Size | None = 128


class Qwen3VlMoeText(Qwen3Moe):
    """Qwen3-VL-MoE's text model: Qwen3-MoE's layers, with its own class's defaults."""

    hidden_size: Size = 2048
    num_attention_heads: Size = 16
    num_key_value_heads: Size | None = 16
    intermediate_size: Size = 5632
    num_experts: Size | None = 60
    num_local_experts: Size = 60           # not a field of this class: num_experts is its name for the count
    num_experts_per_tok: Size = 4
    moe_intermediate_size: Size = 1408
    mlp_only_layers: list[Count] | None = None
    tie_word_embeddings: bool = True       # the class default; the wrapper's value replaces it (WRAPPER_TIES)


class HunyuanDense(Qwen3):
    """Hunyuan's dense models (`HunYuanDenseV1ForCausalLM`): Qwen3's layers (its query_layernorm and
    key_layernorm are Qwen3's per-head RMS norms), with its class's defaults."""

    NEUTRAL: ClassVar[dict[str, str]] = {"eod_token_id": "a token id"}
    vocab_size: Size = 290_943
    intermediate_size: Size = 11_008


class Phi3(Mistral):
    """Phi-3 and Phi-4 (`Phi3ForCausalLM`): one fused QKV matrix and one fused gate-up matrix, the shapes of the
    separate ones; a sliding window on every layer when `sliding_window` is set."""

    num_key_value_heads: Size | None = None
    hidden_size: Size = 3072
    vocab_size: Size = 32_064
    intermediate_size: Size = 8192
    sliding_window: Size | None = None
    partial_rotary_factor: Fraction | None = None  # Phi-4-mini rotates 3/4 of each head
    rope_parameters: dict | None = None


def phi3(cfg: Phi3) -> Spec:
    h = heads(cfg)
    attention = gqa(h, window=cfg.sliding_window, rotary=rotary(cfg, h.head_dim),
                    cited=cfg.cite("sliding_window", "partial_rotary_factor"))
    return uniform(cfg, attention, swiglu(cfg))


class SmolLM3(Llama):
    """SmolLM3 (`SmolLM3ForCausalLM`): Llama's layers; every `no_rope_layer_interval`-th layer skips RoPE (its
    rotation's non-matrix FLOPs), unless `no_rope_layers` lists which layers turn (1) and which do not (0)."""

    no_rope_layers: list[Literal[0, 1]] | None = None
    no_rope_layer_interval: Size = 4
    hidden_size: Size = 2048
    num_hidden_layers: Layers = 36
    vocab_size: Size = 128_256
    num_attention_heads: Size = 16
    num_key_value_heads: Size | None = 4
    tie_word_embeddings: bool = True
    use_sliding_window: Literal[False] = False   # true (windows on chosen layers) is not modelled yet
    sliding_window: Count | None = None           # read only when use_sliding_window is true
    layer_types: list[Literal["full_attention"]] | None = None


def smollm3(cfg: SmolLM3) -> Spec:
    h, count = heads(cfg), cfg.num_hidden_layers
    ropes = cfg.no_rope_layers or [int((i + 1) % cfg.no_rope_layer_interval != 0) for i in range(count)]
    if len(ropes) < count:  # transformers reads one entry per layer (a longer list's tail is unread)
        raise cfg.refuse("no_rope_layers", f"`no_rope_layers` must give 0 or 1 for each of the {count} layers")
    ffn = swiglu(cfg)

    def layer(rope: int) -> Layer:
        attention = gqa(h, rope=None if rope else False, cited=cfg.cite("no_rope_layers", "no_rope_layer_interval"))
        return Layer("rope_layers" if rope else "nope_layers", (attention, ffn))
    return decoder(cfg, [layer(rope) for rope in ropes[:count]], stack_note=cfg.cite("no_rope_layers"))


FAMILIES = {"qwen3_vl_text": (Qwen3VlText, qwen3), "qwen3_vl_moe_text": (Qwen3VlMoeText, qwen3_moe),
            "hunyuan_v1_dense": (HunyuanDense, qwen3), "phi3": (Phi3, phi3), "smollm3": (SmolLM3, smollm3)}
MULTIMODAL = {"qwen3_vl": "qwen3_vl_text", "qwen3_vl_moe": "qwen3_vl_moe_text"}
# Wrappers whose text model transformers builds only inside the vision-language model: the wrapper's config is
# the model's config, so its `tie_word_embeddings` (its class default when absent) ties the head, whatever the
# text_config says (modeling_utils reads `self.config.tie_word_embeddings`).
WRAPPER_TIES = {"qwen3_vl": False, "qwen3_vl_moe": False}
INNER = {MULTIMODAL[wrapper] for wrapper in WRAPPER_TIES}  # read only inside their wrapper's config
