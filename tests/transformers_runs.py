"""The parity cases and what transformers computes for them: each model built on PyTorch's meta device
(shapes only, no weights, no downloads), its parameters counted and the FLOPs PyTorch's FlopCounterMode
counts for a prefill (logits_to_keep = 1) and for one decode step with a cache.

The counter's conventions, which archcost's side states as options: every attention score of the eager
kernel's rectangle (`attention = rectangle`), MLA as transformers 5 runs it (latent cache, re-expanded each
call), experts run by the `batched_mm` implementation (k expert rows per token), and Qwen3-Next's linear
attention as its torch reference computes it (`linear_kernels = torch`).

Building full-size models and counting their FLOPs takes minutes, so the figures are recorded, with the
versions of transformers and torch that computed them, in tests/reference/transformers.json
(`tools/transformers_figures.py` writes it). The default suite compares archcost against the record; the
`long` run (.ci/run) recomputes every recorded figure with the installed transformers and asserts the
record holds exactly what it computes (test_parity.py). torch and transformers are imported only there.
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path

from helpers import published_configs

# what the counter counts, as the import from the modeling code counts it (one definition of the counted run)
from archcost.compiler.importer.meta import counted_flops

CONFIGS = Path(__file__).parent / "configs"
RECORD = Path(__file__).parent / "reference" / "transformers.json"

SMALL = dict(hidden_size=64, intermediate_size=96, num_hidden_layers=2, num_attention_heads=4,
             num_key_value_heads=2, vocab_size=500)
ROPE = {"rope_type": "default", "rope_theta": 10_000.0}
MROPE = {**ROPE, "mrope_section": [2, 3, 3]}

# Each case exercises what its type adds: biases, head_dim ≠ hidden/heads, MHA by absence, tied heads,
# windows shorter than the prompt, first dense layers, dense layers among MoE ones, hybrid stacks.
CASES = {
    "llama": ("llama", dict(SMALL, attention_bias=True, mlp_bias=True)),
    "llama-tied-mha": ("llama", dict(SMALL, num_key_value_heads=None, tie_word_embeddings=True)),
    "mistral": ("mistral", dict(SMALL, sliding_window=None)),
    "mistral-window": ("mistral", dict(SMALL, sliding_window=8)),
    "mixtral": ("mixtral", dict(SMALL, num_local_experts=4, num_experts_per_tok=2)),
    "qwen2": ("qwen2", dict(SMALL)),
    "qwen3": ("qwen3", dict(SMALL, head_dim=24)),
    "qwen3_moe": ("qwen3_moe", dict(SMALL, num_hidden_layers=3, num_experts=4, num_experts_per_tok=2,
                                    moe_intermediate_size=32, mlp_only_layers=[1])),
    "deepseek_v3": ("deepseek_v3", dict(hidden_size=64, intermediate_size=96, moe_intermediate_size=32,
                                        num_hidden_layers=3, first_k_dense_replace=1, num_attention_heads=4,
                                        num_key_value_heads=4, n_routed_experts=8, num_experts_per_tok=2,
                                        n_group=2, topk_group=1, n_shared_experts=1, q_lora_rank=48,
                                        kv_lora_rank=32, qk_nope_head_dim=16, qk_rope_head_dim=8, v_head_dim=16,
                                        vocab_size=500)),
    "gemma2": ("gemma2", dict(SMALL, head_dim=32, num_hidden_layers=4, sliding_window=8)),
    "opt": ("opt", dict(hidden_size=64, ffn_dim=96, num_hidden_layers=2, num_attention_heads=4, vocab_size=500,
                        word_embed_proj_dim=64, max_position_embeddings=128)),
    "qwen3_next": ("qwen3_next", dict(SMALL, head_dim=32, num_hidden_layers=4, linear_num_key_heads=2,
                                      linear_num_value_heads=4, linear_key_head_dim=16, linear_value_head_dim=16,
                                      num_experts=4, num_experts_per_tok=2, moe_intermediate_size=32,
                                      shared_expert_intermediate_size=48)),
    "granite": ("granite", dict(SMALL, attention_multiplier=0.5, residual_multiplier=0.2, logits_scaling=4.0)),
    "gemma": ("gemma", dict(SMALL, head_dim=32)),
    "olmo2": ("olmo2", dict(SMALL, attention_bias=True)),
    "qwen2_moe": ("qwen2_moe", dict(SMALL, num_hidden_layers=3, num_experts=4, num_experts_per_tok=2,
                                    moe_intermediate_size=32, shared_expert_intermediate_size=48, mlp_only_layers=[1])),
    "phimoe": ("phimoe", dict(SMALL, num_local_experts=4, num_experts_per_tok=2, attention_bias=True,
                              lm_head_bias=True)),
    "gpt_oss": ("gpt_oss", dict(SMALL, head_dim=16, num_local_experts=4, num_experts_per_tok=2, sliding_window=8)),
    "deepseek_v2": ("deepseek_v2", dict(hidden_size=64, intermediate_size=96, moe_intermediate_size=32,
                                        num_hidden_layers=3, first_k_dense_replace=1, num_attention_heads=4,
                                        n_routed_experts=8, num_experts_per_tok=2, n_shared_experts=2,
                                        q_lora_rank=None, kv_lora_rank=32, qk_nope_head_dim=16, qk_rope_head_dim=8,
                                        v_head_dim=16, vocab_size=500)),
    "glm4_moe": ("glm4_moe", dict(SMALL, head_dim=16, num_hidden_layers=3, first_k_dense_replace=1,
                                  n_routed_experts=8, num_experts_per_tok=2, n_shared_experts=1,
                                  moe_intermediate_size=32, attention_bias=True, use_qk_norm=True, n_group=1,
                                  topk_group=1)),
    "llama4": ("llama4", dict(SMALL, head_dim=16, num_hidden_layers=4, intermediate_size_mlp=128,
                              num_local_experts=4, num_experts_per_tok=1, interleave_moe_layer_step=2,
                              attention_chunk_size=8)),
    "gemma3": ("gemma3", dict(SMALL, head_dim=32, num_hidden_layers=7, sliding_window=8)),
    "gemma3_text": ("gemma3_text", dict(SMALL, head_dim=32, num_hidden_layers=7, sliding_window=8)),
    "llama4_text": ("llama4_text", dict(SMALL, head_dim=16, num_hidden_layers=4, num_local_experts=4,
                                        attention_chunk_size=8, no_rope_layer_interval=2)),
    "jamba": ("jamba", dict(SMALL, num_hidden_layers=4, num_experts=4, num_experts_per_tok=2, attn_layer_period=2,
                            attn_layer_offset=1, expert_layer_period=2, expert_layer_offset=1, mamba_dt_rank=8,
                            mamba_d_state=8)),
    "mamba2": ("mamba2", dict(hidden_size=64, num_hidden_layers=2, num_heads=8, head_dim=16, state_size=16,
                              n_groups=2, expand=2, chunk_size=8, vocab_size=500)),
    "ernie4_5_moe": ("ernie4_5_moe", dict(SMALL, num_hidden_layers=4, moe_num_experts=4, moe_k=2,
                                          moe_intermediate_size=32, moe_num_shared_experts=1, moe_layer_start_index=1,
                                          moe_layer_end_index=2)),
    "minimax": ("minimax", dict(SMALL, head_dim=16, num_hidden_layers=4, num_local_experts=4, num_experts_per_tok=2,
                                block_size=4, layer_types=["linear_attention"] * 3 + ["full_attention"])),
    # this year's families that reuse an older family's layers (compiler/importer/recent.py)
    "qwen3_vl": ("qwen3_vl", dict(SMALL, head_dim=16, rope_parameters=MROPE)),
    "qwen3_vl_moe": ("qwen3_vl_moe", dict(SMALL, head_dim=16, num_experts=4, num_experts_per_tok=2,
                                          moe_intermediate_size=32, rope_parameters=MROPE)),
    "qwen3_vl-tied": ("qwen3_vl", dict(SMALL, head_dim=24, rope_parameters=MROPE), dict(tie_word_embeddings=True)),
    "qwen3_vl_moe-dense-layer": ("qwen3_vl_moe", dict(SMALL, head_dim=16, num_hidden_layers=3, num_experts=4,
                                                      num_experts_per_tok=2, moe_intermediate_size=32,
                                                      mlp_only_layers=[1], rope_parameters=MROPE)),
    "hunyuan_v1_dense": ("hunyuan_v1_dense", dict(SMALL, head_dim=24, rope_parameters=ROPE)),
    "phi3": ("phi3", dict(SMALL, pad_token_id=None, sliding_window=8)),
    "phi3-partial": ("phi3", dict(SMALL, pad_token_id=None, partial_rotary_factor=0.75)),
    "smollm3": ("smollm3", dict(SMALL, pad_token_id=None, no_rope_layer_interval=2)),
}
MULTIMODAL = ("llama4", "gemma3")  # the config wraps a text_config; the text model is what is costed
# text models transformers builds only inside their vision-language wrapper (no CausalLM class of their own)
WRAPPED = ("qwen3_vl", "qwen3_vl_moe")
# (batch, cached positions, new positions): prompts shorter and longer than the windows of 8
SHAPES = [(1, 0, 6), (2, 0, 12), (1, 6, 1), (2, 12, 1)]


# Hand-written specs of models the importer does not read yet, against transformers built from their
# published configs (tests/configs/specs/, sources in its SOURCES.md), full size on the meta device.
GPT_OSS = json.loads((CONFIGS / "specs" / "gpt-oss-20b.json").read_text())
GEMMA_2 = json.loads((CONFIGS / "published" / "gemma-2-9b-it.json").read_text())
def published_fields(name: str) -> dict:
    """The fields of a published config.json of tests/configs/next that a config class reads."""
    values = json.loads((CONFIGS / "next" / f"{name}.json").read_text())
    values = values.get("text_config", values)  # a vision-language checkpoint: its text model's fields
    return {k: v for k, v in values.items() if k not in ("model_type", "architectures", "transformers_version",
                                                         "quantization_config", "auto_map")}


SPEC_MODELS = {  # spec: (model_type, config fields, the spec's execution paths the counter's run matches)
    "gpt-oss-20b": ("gpt_oss", GPT_OSS, ()),
    # gpt-oss-120b: the same but 36 layers and 128 experts (the GptOssConfig defaults, built for that shape)
    "gpt-oss-120b": ("gpt_oss", {**{k: v for k, v in GPT_OSS.items() if k != "layer_types"},
                                 "num_hidden_layers": 36, "num_local_experts": 128}, ()),
    "gemma-2-9b": ("gemma2", GEMMA_2, ()),
    # the text_config of google/gemma-3-27b-it as published (vocab_size left to the class's default)
    "gemma-3-27b": ("gemma3_text", dict(hidden_size=5376, intermediate_size=21504, num_hidden_layers=62,
                                        num_attention_heads=32, num_key_value_heads=16, head_dim=128,
                                        query_pre_attn_scalar=168, sliding_window=1024), ()),
    # the text_config of meta-llama/Llama-4-Scout-17B-16E as published (attn_temperature_tuning written as a
    # bool, the type transformers 5.24 accepts); its experts run densely, as Llama4TextExperts computes them
    "llama-4-scout-17b-16e": ("llama4_text", dict(hidden_size=5120, intermediate_size=8192,
                                                  intermediate_size_mlp=16384, num_hidden_layers=48,
                                                  num_attention_heads=40, num_key_value_heads=8, head_dim=128,
                                                  vocab_size=202048, num_local_experts=16, num_experts_per_tok=1,
                                                  interleave_moe_layer_step=1, attention_chunk_size=8192,
                                                  use_qk_norm=True, attn_temperature_tuning=True,
                                                  attention_bias=False, tie_word_embeddings=False),
                              (("experts", "dense"),)),
    # ai21labs/AI21-Jamba-1.5-Mini's config (the JambaConfig defaults, with mamba_dt_rank written out)
    "jamba-1.5-mini": ("jamba", dict(vocab_size=65536, hidden_size=4096, intermediate_size=14336,
                                     num_hidden_layers=32, num_attention_heads=32, num_key_value_heads=8,
                                     num_experts=16, num_experts_per_tok=2, expert_layer_period=2,
                                     expert_layer_offset=1, attn_layer_period=8, attn_layer_offset=4,
                                     mamba_d_state=16, mamba_d_conv=4, mamba_expand=2, mamba_dt_rank=256,
                                     mamba_conv_bias=True, mamba_proj_bias=False, tie_word_embeddings=False), ()),
    # mistralai/Mamba-Codestral-7B-v0.1's config (the Mamba2Config defaults)
    "mamba-codestral-7b": ("mamba2", dict(hidden_size=4096, num_hidden_layers=64, num_heads=128, head_dim=64,
                                          state_size=128, n_groups=8, conv_kernel=4, chunk_size=256, expand=2,
                                          vocab_size=32768, use_bias=False, use_conv_bias=True,
                                          tie_word_embeddings=False), ()),
    # MiniMaxAI/MiniMax-Text-01-hf's config: its attn_type_list as layer_types (softmax every eighth layer)
    "minimax-text-01": ("minimax", dict(vocab_size=200064, hidden_size=6144, intermediate_size=9216,
                                        num_hidden_layers=80, num_attention_heads=64, num_key_value_heads=8,
                                        head_dim=128, num_local_experts=32, num_experts_per_tok=2, block_size=256,
                                        tie_word_embeddings=False,
                                        layer_types=["full_attention" if i % 8 == 7 else "linear_attention"
                                                     for i in range(80)]), ()),
    # deepseek-ai/DeepSeek-V3.2's config.json as published (tests/configs/next): MLA and the indexer as
    # transformers runs them (latent re-expanded each call, every query against every index key)
    "deepseek-v3.2": ("deepseek_v32", published_fields("DeepSeek-V3.2"),
                      (("mla_cache", "reexpand"), ("index_kernel", "eager"))),
    # zai-org/GLM-5's config.json as published (tests/configs/next), run as DeepSeek-V3.2 is
    "glm-5": ("glm_moe_dsa", published_fields("GLM-5"), (("mla_cache", "reexpand"), ("index_kernel", "eager"))),
    # the text_config of Qwen/Qwen3.5-27B's config.json, its linear attention as the torch reference runs it
    "qwen3.5-27b": ("qwen3_5_text", published_fields("Qwen3.5-27B"), (("linear_kernels", "torch"),)),
    # LiquidAI/LFM2-1.2B's config.json as published (tests/configs/next): its gated short convolutions as
    # transformers' torch source runs them
    "lfm2-1.2b": ("lfm2", published_fields("LFM2-1.2B"), ()),
    # XiaomiMiMo/MiMo-V2-Flash's config values (tests/configs/next, a curated copy; its FP8 quantization_config
    # left out: the meta model is the logical one)
    "mimo-v2-flash": ("mimo_v2_flash", published_fields("MiMo-V2-Flash"), ()),
    # nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B-BF16's config.json as published
    "nemotron-3-nano-30b-a3b": ("nemotron_h", published_fields("NVIDIA-Nemotron-3-Nano-30B-A3B-BF16"), ()),
    # MiniMaxAI/MiniMax-M2's config.json as published (its FP8 quantization_config left out: the meta model is
    # the logical one)
    "minimax-m2": ("minimax_m2", published_fields("MiniMax-M2"), ()),
    # the text_config of google/gemma-4-26B-A4B's config.json (tie_word_embeddings is the wrapper's: true)
    "gemma-4-26b-a4b": ("gemma4_text", {**published_fields("gemma-4-26B-A4B"), "tie_word_embeddings": True}, ()),
    # meituan-longcat/LongCat-Flash-Chat: the LongcatFlashConfig defaults, which are that checkpoint's; MLA as
    # transformers 5 runs it, every call re-expanding the cached latent (transformers 5.25 allocates the 512
    # weighted experts only; 5.24 also allocated the 256 identity choices, which kept this spec out)
    "longcat-flash": ("longcat_flash", {}, (("mla_cache", "reexpand"),)),
    # NeMo's Nemotron-3 8B and 22B and Nemotron-4 340B (NVIDIA/NeMo@8cfedd7203 nemotron.py; the vocabulary of its
    # performance scripts' NullTokenizer): NemotronConfig's squared ReLU, LayerNorm1P, half-rotary heads, no biases
    **{name: ("nemotron", dict(hidden_size=d, intermediate_size=f, num_hidden_layers=layers, num_attention_heads=q,
                               num_key_value_heads=kv, vocab_size=256_000, partial_rotary_factor=0.5,
                               tie_word_embeddings=False), ())
       for name, (d, f, layers, q, kv) in {"nemotron-3-8b": (4096, 16384, 32, 32, 32),
                                           "nemotron-3-22b": (6144, 24576, 40, 48, 48),
                                           "nemotron-4-340b": (18432, 73728, 96, 96, 8)}.items()},
    # meta-llama/Llama-2-13b-hf's shape (NeMo's Llama2Config13B): the LlamaConfig defaults otherwise
    "llama-2-13b": ("llama", dict(hidden_size=5120, intermediate_size=13824, num_hidden_layers=40,
                                  num_attention_heads=40, num_key_value_heads=40, vocab_size=32000), ()),
    # microsoft/Phi-3.5-MoE-instruct's config: the PhimoeConfig defaults with attention and head biases
    "phi-3.5-moe": ("phimoe", dict(vocab_size=32064, hidden_size=4096, intermediate_size=6400, num_hidden_layers=32,
                                   num_attention_heads=32, num_key_value_heads=8, num_local_experts=16,
                                   num_experts_per_tok=2, attention_bias=True, lm_head_bias=True,
                                   tie_word_embeddings=False), ()),
}


# parameters a hand-written spec counts that transformers holds as buffers, which `parameters()` leaves out:
# MiniMax-M2's router correction biases (e_score_correction_bias, 256 in each of 62 layers), stored in its
# checkpoint (docs/conventions.md)
BUFFERED = {"minimax-m2": 62 * 256}

PUBLISHED = published_configs()
PUBLISHED_SHAPES = [(1, 0, 6), (1, 6, 1)]
NOT_CONFIG = ("model_type", "architectures", "transformers_version", "_name_or_path", "auto_map", "quantization_config")
# the execution paths of a published config's spec that match how transformers runs it
# hand-written specs' models whose default grouped_mm experts want bf16 (the meta run is fp32)
BATCHED_EXPERTS = ("gpt_oss", "jamba", "minimax", "phimoe", "deepseek_v32", "glm_moe_dsa", "nemotron_h",
                   "minimax_m2", "gemma4_text", "mimo_v2_flash", "longcat_flash")
V4_FLASH = CONFIGS / "next" / "DeepSeek-V4-Flash.json"


def shape_id(shape: tuple[int, int, int]) -> str:
    batch, cached, new = shape
    return f"B{batch}-S{cached}-P{new}"


def record_keys() -> list[str]:
    """Every figure set the record holds: the small configs, the published ones, the hand-written specs', and
    DeepSeek-V4-Flash's router biases."""
    return ([f"small/{case}" for case in CASES] + [f"published/{path.stem}" for path in PUBLISHED]
            + [f"spec/{name}" for name in SPEC_MODELS] + ["buffers/DeepSeek-V4-Flash"])


def read_record() -> dict:
    return json.loads(RECORD.read_text())


# ---------------------------------------------------------------------------------------------- live runs

def live_figures(key: str) -> dict:
    """What the installed transformers computes for one record key (minutes for the full-size models), as
    the record holds it (JSON's types: a config's tuples are lists there)."""
    return json.loads(json.dumps(_live(key)))


def _live(key: str) -> dict:
    kind, name = key.split("/", 1)
    if kind == "small":
        config, text = small_config(name)
        model = meta_model(config, text)
        return {"config": config.to_dict(), **_counted(model, SHAPES, text_params)}
    if kind == "published":
        path = next(p for p in PUBLISHED if p.stem == name)
        config = _config(json.loads(path.read_text()))
        return _counted(meta_model(config, config.get_text_config()), PUBLISHED_SHAPES, text_params)
    if kind == "spec":
        model_type, values, _ = SPEC_MODELS[name]
        config = _config({**values, "model_type": model_type})
        model = meta_model(config, config, batched=model_type in BATCHED_EXPERTS)
        return _counted(model, SHAPES, lambda m: sum(p.numel() for p in m.parameters()))
    config = _config(json.loads(V4_FLASH.read_text()))
    model = meta_model(config, config)
    buffers = sum(b.numel() for n, b in model.named_buffers() if n.endswith("e_score_correction_bias"))
    return {"params": text_params(model), "router_bias_buffers": buffers}


def versions() -> dict:
    import torch
    import transformers

    return {"transformers": transformers.__version__, "torch": torch.__version__.split("+")[0]}


# remote-code model types, built as the transformers type whose code their auto_map names
REMOTE_AS = {"kimi_k2": "deepseek_v3"}


def _config(values: dict):
    import transformers

    model_type = REMOTE_AS.get(values["model_type"], values["model_type"])
    return transformers.AutoConfig.for_model(model_type, **{k: v for k, v in values.items()
                                                           if k not in NOT_CONFIG})


def small_config(case: str):
    """(config, text config) of a small case, as transformers builds them from the case's fields."""
    import transformers

    model_type, fields, *wrapper = CASES[case]
    if model_type in WRAPPED:  # the wrapper's own fields (its tie_word_embeddings) beside the text_config
        config = transformers.AutoConfig.for_model(model_type, text_config=dict(fields), **(wrapper or [{}])[0])
        return config, config.text_config
    if model_type in MULTIMODAL:
        config = transformers.AutoConfig.for_model(model_type,
                                                   text_config=dict(fields, model_type=f"{model_type}_text"))
        return config, config.text_config
    config = transformers.AutoConfig.for_model(model_type, **fields)
    return config, config


def _counted(model, shapes, params) -> dict:
    counted = counted_flops(model, shapes)
    return {"params": params(model), "flops": {shape_id(shape): counted[shape] for shape in shapes}}


def text_params(model) -> int:
    """The parameters of the text model: a vision-language wrapper's vision tower is not counted."""
    return sum(p.numel() for name, p in model.named_parameters() if not name.startswith("model.visual."))


def meta_model(config, text, batched: bool | None = None):
    """transformers' model of `config` on the meta device: the CausalLM of its text config, or the whole
    vision-language model where the text model has no CausalLM class (its text path is what runs). Its
    experts run `batched_mm` where the model allows the choice, or where `batched` says."""
    import torch
    import transformers

    with warnings.catch_warnings(), torch.device("meta"):
        warnings.simplefilter("ignore")
        if config.model_type in WRAPPED:
            model = transformers.AutoModelForImageTextToText.from_config(config, attn_implementation="eager")
        else:
            model = transformers.AutoModelForCausalLM.from_config(text, attn_implementation="eager")
    if batched is None:
        batched = getattr(model, "_can_set_experts_implementation", lambda: False)()
    if batched:
        model.set_experts_implementation("batched_mm")
    return model
