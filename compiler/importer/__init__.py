"""Hugging Face `config.json` → a readable `.arch` spec written with the standard-library blocks.

The importer reads only fields it understands. A field that can change a cost and is not understood
stops the import (E502) rather than giving a spec that silently costs a different model; fields
known to change no cost (token ids, initialisation, dropout, RoPE frequencies, runtime flags) are
listed in NEUTRAL. Numbers are never evaluated: JSON gives ints, floats, strings and lists.
"""

from __future__ import annotations

import json
from pathlib import Path

from .config import Config, parse_config, read_config
from .families import IMPORTERS
from .writing import render

# Fields no cost depends on, for every model type.
NEUTRAL = frozenset({
    "_name_or_path", "name_or_path", "architectures", "transformers_version", "model_type", "auto_map",
    "bos_token_id", "eos_token_id", "pad_token_id", "sep_token_id", "decoder_start_token_id",
    "id2label", "label2id", "problem_type", "return_dict", "output_attentions", "output_hidden_states",
    "chunk_size_feed_forward", "is_encoder_decoder", "use_cache", "tokenizer_class", "prefix",
    "initializer_range", "init_std", "initializer_factor",
    "attention_dropout", "dropout", "activation_dropout", "hidden_dropout", "layerdrop", "resid_pdrop",
    "rms_norm_eps", "layer_norm_eps", "norm_eps",
    # positions: RoPE frequencies and scaling change no shape (learned tables are read per type)
    "rope_theta", "rope_scaling", "rope_parameters", "rope_interleave", "max_position_embeddings",
    "pretraining_tp",            # a tensor-parallel split of the same matrices
    "quantization_config",       # checked separately: weights format
    # routing details that pick experts but change no shape: counted the same however they choose
    "norm_topk_prob", "routed_scaling_factor", "topk_method", "scoring_func", "n_group", "topk_group",
    "output_router_logits", "router_aux_loss_coef", "router_jitter_noise", "aux_loss_alpha", "seq_aux",
    "query_pre_attn_scalar",     # the score scale of Gemma 2
    "use_bidirectional_attention",
    "cache_implementation",      # which KV cache class the runtime builds (Gemma 2's `hybrid`): same entries
    "use_mrope",                 # multimodal RoPE's position layout: rotations, not shapes
    "torch_dtype", "dtype",      # read for the weight format
})


def import_config(config: Config, name: str | None = None) -> str:
    """The spec text for `config`, named `name` (default: the config's `_name_or_path`, else the file's stem)."""
    model_type = config.values.get("model_type")
    importer = IMPORTERS.get(model_type) if isinstance(model_type, str) else None
    if importer is None:
        raise config.error("E501", f"model_type {json.dumps(model_type)} is not supported",
                           "model_type" if "model_type" in config.values else None,
                           hint="supported: " + ", ".join(sorted(IMPORTERS)))
    config.used.add("model_type")
    draft = importer(config)
    _check_quantization(config)
    unknown = sorted(set(config.values) - config.used - NEUTRAL)
    if unknown:
        raise config.error("E502", f"`{unknown[0]}` is not understood for model_type `{model_type}` and may change "
                                   "the cost", unknown[0],
                           hint="the importer stops rather than guess; write this part of the spec by hand"
                                + (f" (also not understood: {_listed(unknown[1:])})" if unknown[1:] else ""))
    title = name or _default_name(config) or model_type
    return render(draft, title, config)


def _listed(names: list[str], most: int = 10) -> str:
    return ", ".join(names[:most]) + (f" and {len(names) - most} more" if len(names) > most else "")


def _default_name(config: Config) -> str | None:
    """The checkpoint's own name (`_name_or_path`, `name_or_path`: its last part), else the file's stem."""
    for field in ("_name_or_path", "name_or_path"):
        path = config.values.get(field)
        if isinstance(path, str) and path.strip("/ "):
            config.used.add(field)
            return path.rstrip("/").split("/")[-1]
    return None if config.file.startswith("<") else Path(config.file).stem


def _check_quantization(config: Config) -> None:
    if config.values.get("quantization_config") not in (None, {}):
        raise config.error("E503", "`quantization_config`: quantized checkpoints are not imported; the weight format changes every "
                                   "byte count", "quantization_config",
                           hint="import the unquantized config and pass `--weights FORMAT` to eval or capacity")




__all__ = ["IMPORTERS", "NEUTRAL", "Config", "import_config", "parse_config", "read_config"]
