"""The decoder-only text model types of the installed transformers, each as a small config.json, for the
enumeration of the import from the modeling code (test_modeling_code.py, tools/modeling_coverage.py).

Decoder-only text types: every model type with a CausalLM class, less those transformers also maps as an
encoder (masked-LM), an encoder-decoder or a speech or audio model, and less the decoders that read another
model's encoder (EXCLUDED, each with its reason). A small config is the type's own class defaults with at most
MAX_LAYERS layers (the widths stay: the meta device holds no weights, and counting FLOPs costs time per op,
not per width), plus the fields a default config leaves unset where transformers cannot build it without them.
"""

from __future__ import annotations

import json
import warnings

MAX_LAYERS = 4
EXCLUDED = {
    "trocr": "the text decoder of a vision encoder-decoder (every layer cross-attends to the image encoder)",
    "bert-generation": "BERT's layers as the decoder of an encoder-decoder",
    "git": "an image-to-text model: its decoder reads the image encoder's features",
}
# Qwen4-Exp's QSA indexer: no published config to take it from, so values its validate_architecture accepts
QSA = {"indexer_n_heads": 16, "indexer_kv_heads": 1, "indexer_head_dim": 256, "indexer_budget": 2048,
       "indexer_compress_ratio": 4}
QWEN4_WIDTHS = {"hidden_size": 256, "vocab_size": 4096, "num_experts": 8, "num_experts_per_tok": 2,
                "moe_intermediate_size": 128, "shared_expert_intermediate_size": 128, "hc_lowrank": 32}
# fields a type's defaults leave unset (or set so that transformers cannot build or run it)
FILLED = {
    "hunyuan_v1_dense": {"rope_parameters": {"rope_type": "default", "rope_theta": 10_000.0}, "head_dim": 128},
    "hunyuan_v1_moe": {"rope_parameters": {"rope_type": "default", "rope_theta": 10_000.0}, "head_dim": 128},
    "ministral": {"rope_parameters": {"rope_type": "default", "rope_theta": 10_000.0}, "head_dim": 128},
    "deepseek_v2": {"num_experts_per_tok": 2},
    "nemotron": {"head_dim": 128, "num_key_value_heads": 8},
    "bamba": {"attn_layer_indices": [1]},
    "granitemoehybrid": {"num_hidden_layers": 4, "layer_types": ["mamba", "attention", "mamba", "attention"]},
    # their defaults' first four layers are all linear attention, and transformers cannot run a cache without an
    # attention layer (get_seq_length): the small configs take one of each kind, the pattern of the class's own
    "kimi_linear": {"num_hidden_layers": 4, "layer_types": ["linear_attention", "linear_attention",
                                                             "linear_attention", "full_attention"],
                    "mlp_layer_types": ["dense", "sparse", "sparse", "sparse"]},
    "bailing_hybrid": {"num_hidden_layers": 4, "layer_types": ["linear_attention", "linear_attention",
                                                                "linear_attention", "full_attention"],
                       "mlp_layer_types": ["dense", "dense", "sparse", "sparse"], "layer_group_size": 4},
    "lfm2": {"num_hidden_layers": 4, "layer_types": ["conv", "full_attention", "conv", "full_attention"]},
    "lfm2_moe": {"num_hidden_layers": 4, "layer_types": ["conv", "full_attention", "conv", "full_attention"]},
    # DBRX, Moshi and JetMoE run on the CPU with real weights (torch.nonzero in DBRX's router, .item() in Moshi and
    # JetMoE's expert sizes as a list have no meta-device form), so their widths are cut to keep the built model
    # under meta.MAX_CPU_PARAMS
    "dbrx": {"attn_config": {"rope_theta": 500_000.0, "clip_qkv": 8},  # DBRX-Instruct's: transformers clamps with it
             "d_model": 256, "n_heads": 8, "vocab_size": 4096, "ffn_config": {"ffn_hidden_size": 512}},
    "moshi": {"hidden_size": 256, "num_attention_heads": 8, "num_key_value_heads": 8, "head_dim": 32,
              "ffn_dim": 1024, "vocab_size": 4096},
    "jetmoe": {"hidden_size": 256, "kv_channels": 32, "num_key_value_heads": 4, "intermediate_size": 512,
               "vocab_size": 4096},
    "jamba": {"attn_layer_period": 2, "attn_layer_offset": 1},
    # its experts' counts default to None (rednote-hilab/dots.llm1.base's own values)
    "dots1": {"n_routed_experts": 128, "num_experts_per_tok": 6, "n_shared_experts": 2, "first_k_dense_replace": 1},
    # the assistant's text config must have no per-layer inputs; the class defaults (gemma4_text's) have them
    "gemma4_assistant": {"text_config": {"num_hidden_layers": 4, "hidden_size_per_layer_input": 0,
                                         "vocab_size_per_layer_input": 0}},
    # every fourth layer builds the QSA indexer, whose fields default to None (one key head, a head that holds
    # the RoPE dimensions, a budget the ratio divides: what validate_architecture asks)
    # and its indexer's Python loop calls torch.nonzero, which the meta device cannot run: the check runs the model
    # on the CPU, so its widths are cut (as dbrx's, moshi's and jetmoe's)
    "qwen4_exp_text": {**QSA, **QWEN4_WIDTHS},
    "qwen4_exp": {"text_config": {**QSA, **QWEN4_WIDTHS}},
    # its hybrid layers share one attention block, tied from the first to the others: four layers hold one
    # hybrid by default, which transformers cannot tie
    "zamba": {"num_hidden_layers": 4, "layer_types": ["linear_attention", "hybrid", "linear_attention", "hybrid"]},
    # its input and output sections default to 8 layers each: in 4 layers both take every layer, which then runs
    # twice on one cache slot. One layer each, and the two between them the recurrent section, which the
    # default n_recurrent_loops runs twice over with one set of weights (read as `loop 2`)
    "dory": {"num_hidden_layers": 4, "n_input_layers": 1, "n_output_layers": 1},
    # its rotary embedding reads RoPE parameters per layer type (None for a NoPE type), with no default
    "cohere_compass_text": {"rope_parameters": {"full_attention": {"rope_type": "default", "rope_theta": 10_000.0}}},
}
# types whose layer pattern fields are fixed to the default depth: built at full depth
FULL_DEPTH = ("zamba2", "gpt_neo", "gemma3n", "gemma3n_text")


def decoder_types() -> list[str]:
    from transformers.models.auto import modeling_auto as auto

    others = set()
    for mapping in ("MODEL_FOR_MASKED_LM_MAPPING_NAMES", "MODEL_FOR_SEQ_TO_SEQ_CAUSAL_LM_MAPPING_NAMES",
                    "MODEL_FOR_SPEECH_SEQ_2_SEQ_MAPPING_NAMES", "MODEL_FOR_TEXT_TO_WAVEFORM_MAPPING_NAMES",
                    "MODEL_FOR_TEXT_TO_SPECTROGRAM_MAPPING_NAMES"):
        others |= set(getattr(auto, mapping, {}))
    return sorted(set(auto.MODEL_FOR_CAUSAL_LM_MAPPING_NAMES) - others - set(EXCLUDED))


def small_config(model_type: str) -> str:
    """A config.json for `model_type`: the class defaults, at most MAX_LAYERS layers where the class allows it."""
    from transformers.models.auto.configuration_auto import CONFIG_MAPPING

    values = {"model_type": model_type, **FILLED.get(model_type, {})}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            default = CONFIG_MAPPING[model_type]()
            layers = default.get_text_config().num_hidden_layers
        except Exception:  # a type whose defaults transformers refuses: the import says why
            layers = None
    if isinstance(layers, int) and layers > MAX_LAYERS and "layer_types" not in values \
            and model_type not in FULL_DEPTH:
        inner = default.get_text_config()
        fields = {"num_hidden_layers": MAX_LAYERS}
        if inner is not default:
            values["text_config"] = {**values.get("text_config", {}), **fields}
        else:
            values.update(fields)
    return json.dumps(values, indent=2)
