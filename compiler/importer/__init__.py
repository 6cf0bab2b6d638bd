"""Hugging Face `config.json` → a readable `.arch` spec written with the standard-library blocks.

Each family (`model_type`) has a pydantic schema of its config: the fields that can change a cost are typed
and used, the fields that cannot are listed with the reason, and any other field stops the import (E502)
rather than giving a spec that silently costs a different model. The spec is built as a syntax tree and
printed by `dsl.printer`; each statement cites the config fields it came from. Numbers are never
evaluated: JSON gives ints, floats, strings and lists.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import ClassVar, NamedTuple

from archcost.dsl.errors import ArchError

from . import deepseek, dense, hybrid, llama4, moe, recent
from .config import Config, parse_config, read_config, spec_title
from .quantization import precision
from .reading.spec import Spec, render
from .schema import COMMON_NEUTRAL, Schema


class Family(NamedTuple):
    schema: type[Schema]
    build: Callable[[Schema], Spec]


class Multimodal(Schema):
    """A vision-language checkpoint: the text model is costed, the vision tower is not."""

    NEUTRAL: ClassVar[dict[str, str]] = {
        **dict.fromkeys(("vision_config", "multi_modal_projector_bias", "projector_hidden_act", "vision_feature_layer",
                         "vision_feature_select_strategy", "mm_tokens_per_image"),
                        "the vision tower and its projector: not counted (the text model only)"),
        "tie_word_embeddings": "passed to the text model when its own config leaves it out"}
    text_config: dict


FAMILIES: dict[str, Family] = {
    "llama": Family(dense.Llama, dense.llama), "granite": Family(dense.Granite, dense.granite),
    "mistral": Family(dense.Mistral, dense.mistral), "qwen2": Family(dense.Qwen2, dense.qwen2),
    "qwen3": Family(dense.Qwen3, dense.qwen3), "gemma": Family(dense.Gemma, dense.gemma),
    "opt": Family(dense.Opt, dense.opt), "olmo2": Family(dense.Olmo2, dense.olmo2),
    "mixtral": Family(moe.Mixtral, moe.mixtral), "qwen2_moe": Family(moe.Qwen2Moe, moe.qwen2_moe),
    "qwen3_moe": Family(moe.Qwen3Moe, moe.qwen3_moe), "phimoe": Family(moe.PhiMoe, moe.phimoe),
    "gpt_oss": Family(moe.GptOss, moe.gpt_oss), "deepseek_v2": Family(deepseek.DeepseekV2, deepseek.deepseek),
    "deepseek_v3": Family(deepseek.DeepseekV3, deepseek.deepseek), "glm4_moe": Family(moe.Glm4Moe, moe.glm4_moe),
    "llama4_text": Family(llama4.Llama4Text, llama4.llama4), "ernie4_5_moe": Family(moe.Ernie45Moe, moe.ernie4_5_moe),
    "gemma2": Family(hybrid.Gemma2, hybrid.gemma2), "gemma3_text": Family(hybrid.Gemma3Text, hybrid.gemma3_text),
    "qwen3_next": Family(hybrid.QwenNext, hybrid.qwen3_next), "jamba": Family(hybrid.Jamba, hybrid.jamba),
    "mamba2": Family(hybrid.Mamba2, hybrid.mamba2), "minimax": Family(hybrid.MiniMax, hybrid.minimax),
    **{model_type: Family(*family) for model_type, family in recent.FAMILIES.items()},
}
# remote-code families (only their checkpoints' own code implements them, transformers has no class): each read
# by the schema of the code its auto_map names, every field it does not know refused (E502)
REMOTE: dict[str, Family] = {"kimi_k2": Family(deepseek.KimiK2, deepseek.deepseek)}
# multimodal checkpoints: the model type of the wrapper, and the type its `text_config` has
MULTIMODAL = {"llama4": "llama4_text", "gemma3": "gemma3_text", **recent.MULTIMODAL}
SUPPORTED = sorted({*FAMILIES, *MULTIMODAL, *REMOTE} - recent.INNER)
IMPORTERS = SUPPORTED  # the model types `archcost import` reads


class Imported(NamedTuple):
    text: str
    passed_over: tuple[str, ...]  # the config's fields no transformers code reads for its model type ("a.b" nested)
    checked: tuple[str, ...] = ()  # the import from the modeling code: its check against the model, line by line


def import_config(config: Config, name: str | None = None) -> str:
    """The spec text for `config`, named `name` (default: the config's `_name_or_path`, else the file's stem)."""
    return import_spec(config, name).text


def import_spec(config: Config, name: str | None = None, from_modeling_code: bool = False) -> Imported:
    """The spec for `config` and the fields passed over on the way: by the family's schema where archcost has
    one, else (or when asked) read from transformers' own model of it and checked against that model."""
    model_type = config.values.get("model_type")
    if from_modeling_code or (isinstance(model_type, str) and model_type not in SUPPORTED
                              and model_type not in recent.INNER and _transformers_knows(config, model_type)):
        from .check import from_modeling_code as read

        checked = read(config, name, tuple(SUPPORTED))
        return Imported(checked.text, (), checked.lines)
    if isinstance(model_type, str) and model_type in recent.INNER:
        wrapper = next(outer for outer, inner in MULTIMODAL.items() if inner == model_type)
        raise config.error("E501", f"model_type {json.dumps(model_type)} is the text_config of a {wrapper} "
                                   "checkpoint: transformers builds it only inside that model", "model_type",
                           hint=f"import the checkpoint's own config.json (model_type {wrapper})")
    if not isinstance(model_type, str) or model_type not in SUPPORTED:
        raise config.error("E501", f"model_type {json.dumps(model_type)} is not supported",
                           "model_type" if "model_type" in config.values else None,
                           hint="supported: " + ", ".join(SUPPORTED))
    text, source, passed_over = config, f"{Path(config.file).name} (model_type {model_type})", ()
    if model_type in MULTIMODAL:
        passed_over = Multimodal.read(config).passed_over
        text = _text_config(config, MULTIMODAL[model_type])
        model_type = MULTIMODAL[model_type]
        source += ", its text_config; the vision tower is not counted"
    family = FAMILIES.get(model_type) or REMOTE[model_type]
    schema = family.schema.read(text)
    passed_over += tuple(f"text_config.{field}" if text is not config else field for field in schema.passed_over)
    spec = family.build(schema)
    title = spec_title(config, name, model_type)
    header = [f"Passed over, as no code of transformers reads them for this model type: {', '.join(passed_over)}."
              ] if passed_over else []
    header += [] if model_type in REMOTE else remote_code_note(config)
    return Imported(render(spec, title, source, precision(text, config, spec.components()), header), passed_over)


def remote_code_note(config: Config) -> list[str]:
    """The header line for a config whose `auto_map` names the checkpoint's own code while its model_type is one
    transformers implements: archcost never runs that code and costs transformers' class instead, which the
    reader must know (issue 45: a "llama" with an auto_map was costed as the stock class without a word)."""
    auto_map = config.values.get("auto_map")
    if not isinstance(auto_map, dict) or not auto_map:
        return []
    # a value is a class path, or a list of them (a tokenizer's pair); an empty one names nothing
    named = ", ".join(sorted({str(v[0] if isinstance(v, list) else v) for v in auto_map.values()
                              if v not in ([], None, "")}))[:200]
    if not named:
        return []
    model_type = config.values.get("model_type")
    return [f"The checkpoint's auto_map names its own code ({named}), which archcost never runs: this spec costs "
            f"transformers' own {model_type} model instead. Where that code computes something else, write it by hand."]


def _transformers_knows(config: Config, model_type: str) -> bool:
    """Whether the installed transformers builds `model_type` (the import then reads its modeling code); without
    the `hf` extra, E501 says how to get it."""
    from .meta import libraries, refuse_unknown

    try:
        libraries()
    except ArchError:
        raise config.error("E501", f"model_type {json.dumps(model_type)} has no schema in archcost", "model_type",
                           hint="read by a schema: " + ", ".join(SUPPORTED) + '; any type transformers builds, '
                                'from its modeling code: pip install "archcost[hf]"') from None
    refuse_unknown(config, model_type, SUPPORTED)
    return True


def _text_config(config: Config, model_type: str) -> Config:
    text = config.section("text_config")
    values = dict(text.values)
    if values.get("model_type", model_type) != model_type:
        raise text.error("E501", f"text_config model_type {json.dumps(values['model_type'])} is not "
                                 f"{model_type}", "model_type")
    values.setdefault("model_type", model_type)
    wrapper = config.values.get("model_type")
    if wrapper in recent.WRAPPER_TIES:
        values["tie_word_embeddings"] = config.values.get("tie_word_embeddings", recent.WRAPPER_TIES[wrapper])
    elif "tie_word_embeddings" in config.values:
        values.setdefault("tie_word_embeddings", config.values["tie_word_embeddings"])
    return Config(values=values, text=text.text, file=text.file, start=text.start)


__all__ = ["COMMON_NEUTRAL", "FAMILIES", "REMOTE", "IMPORTERS", "SUPPORTED", "Config", "Imported", "import_config",
           "import_spec", "parse_config", "read_config"]
