"""Each family's config fields as a pydantic schema: the fields that change a cost typed, the others listed."""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Annotated, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, ValidationError

from archcost.dsl.errors import ArchError

from .config import MAX_LAYERS, MAX_SIZE, Config, shown

Size = Annotated[int, Field(gt=0, le=MAX_SIZE)]
Count = Annotated[int, Field(ge=0, le=MAX_SIZE)]       # 0 allowed: no shared experts, no dense layers
Layers = Annotated[int, Field(gt=0, le=MAX_LAYERS)]     # the importer writes layer patterns out
Fraction = Annotated[float, Field(gt=0, le=1)]
Scale = Annotated[float, Field(gt=0, le=10**6)]        # a soft cap, a multiplier: a number the spec writes out
Silu = Literal["silu", "swish"]
Gelu = Literal["gelu_pytorch_tanh", "gelu", "gelu_new"]  # tanh or exact GeLU: the same count of FLOPs here

# Fields no cost depends on in any family, and why. A family adds its own in its schema's NEUTRAL.
COMMON_NEUTRAL: dict[str, str] = {
    **dict.fromkeys(("_name_or_path", "name_or_path"), "the checkpoint's name: names the spec"),
    **dict.fromkeys(("architectures", "transformers_version", "model_type", "auto_map", "tokenizer_class",
                     "prefix", "problem_type", "id2label", "label2id", "is_encoder_decoder",
                     "chunk_size_feed_forward", "return_dict", "output_attentions", "output_hidden_states",
                     "output_router_logits", "use_cache", "cache_implementation", "torchscript"),
                    "bookkeeping for the runtime: the class to build, what a call returns, which cache class"),
    **dict.fromkeys(("bos_token_id", "eos_token_id", "pad_token_id", "sep_token_id", "decoder_start_token_id",
                     "boi_token_index", "eoi_token_index", "image_token_index", "image_token_id", "video_token_id",
                     "vision_start_token_id", "vision_end_token_id"), "a token id"),
    **dict.fromkeys(("initializer_range", "init_std", "initializer_factor"), "initialisation"),
    **dict.fromkeys(("attention_dropout", "dropout", "activation_dropout", "hidden_dropout", "layerdrop",
                     "resid_pdrop", "embd_pdrop", "router_jitter_noise", "input_jitter_noise", "expert_dropout"),
                    "training-time noise"),
    **dict.fromkeys(("rms_norm_eps", "layer_norm_eps", "norm_eps", "layer_norm_epsilon"), "a norm's epsilon"),
    **dict.fromkeys(("rope_theta", "rope_scaling", "rope_parameters", "rope_interleave", "max_position_embeddings",
                     "original_max_position_embeddings"),
                    "RoPE frequencies and context limits: rotations of the same channels, no shape"),
    **dict.fromkeys(("router_aux_loss_coef", "aux_loss_alpha", "seq_aux", "norm_topk_prob", "routed_scaling_factor",
                     "topk_method", "scoring_func", "n_group", "topk_group"),
                    "how the router picks and weighs experts: the same experts run however they are chosen"),
    **dict.fromkeys(("_attn_implementation", "attn_implementation", "_experts_implementation"),
                    "which kernel computes the same attention or experts"),
    "pretraining_tp": "a tensor-parallel split of the same matrices",
    "quantization_config": "read for the weight formats (quantization.py)",
    **dict.fromkeys(("torch_dtype", "dtype"), "read for the weight format"),
    "use_bidirectional_attention": "which positions a score may see in training; decoding is causal",
    "use_mrope": "multimodal RoPE's position layout: rotations, not shapes",
}


class Schema(BaseModel):
    """A family's config: cost-changing fields typed (absent ones take transformers' defaults), NEUTRAL
    lists the fields that change no cost with the reason, and any other field is an error."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)
    NEUTRAL: ClassVar[dict[str, str]] = {}
    _config: Config = PrivateAttr()
    _passed_over: tuple[str, ...] = PrivateAttr(default=())

    @classmethod
    def fields(cls) -> set[str]:
        """The config's names of the fields this schema types (`_remove_final_layer_norm` under an alias)."""
        return {info.alias or name for name, info in cls.model_fields.items()}

    @classmethod
    def neutral(cls) -> dict[str, str]:
        return {name: why for name, why in {**COMMON_NEUTRAL, **cls.NEUTRAL}.items() if name not in cls.fields()}

    @classmethod
    def read(cls, config: Config) -> Schema:
        """The schema of `config`, or every field it cannot take, each located at its line. A field that no
        code of transformers reads for this model type is passed over (`passed_over`), not refused."""
        neutral = cls.neutral()
        passed_over = tuple(name for name in config.values
                            if name not in neutral and name not in cls.fields()
                            and not transformers_reads(config.values.get("model_type"), name))
        values = {name: value for name, value in config.values.items()
                  if name not in neutral and name not in passed_over}
        try:
            schema = cls.model_validate(values)
        except ValidationError as invalid:
            raise ArchError([_diagnostic(config, error, sorted(set(values) - cls.fields()))
                             for error in _ordered(invalid.errors())]) from None
        schema._config = config
        schema._passed_over = passed_over
        return schema

    @property
    def passed_over(self) -> tuple[str, ...]:
        """The config's fields that no transformers code reads for its model type, in the file's order."""
        return self._passed_over

    def given(self, name: str) -> bool:
        return name in self._config.values

    def refuse(self, name: str | None, message: str, hint: str | None = None) -> ArchError:
        return self._config.error("E503", message, name if name and self.given(name) else None, hint=hint)

    def cite(self, *names: str) -> str:
        """The fields a statement comes from, for its comment; a field the config leaves out says so."""
        return ", ".join(name if self.given(name) else f"{name} (absent: {shown(getattr(self, name))})"
                         for name in names)


@functools.cache
def _transformers_fields() -> dict:
    """transformers_fields.json: per model type, the config fields transformers' code can read."""
    return json.loads((Path(__file__).parent / "transformers_fields.json").read_text(encoding="utf-8"))


def transformers_reads(model_type, name: str) -> bool:
    """Whether some transformers code could read field `name` of a `model_type` config. For a type transformers
    does not implement (remote code only), every field could be read: nothing is passed over."""
    table = _transformers_fields()
    if not isinstance(model_type, str) or model_type not in table["types"]:
        return True
    return name in table["types"][model_type] or name in table["shared"]


def _ordered(errors: list) -> list:
    """Wrong values first, then missing fields, then fields not understood: the nearest fix first."""
    rank = {"missing": 1, "extra_forbidden": 2}
    return sorted(errors, key=lambda error: rank.get(error["type"], 0))


def _diagnostic(config: Config, error: dict, unknown: list[str]):
    name = str(error["loc"][0]) if error["loc"] else None
    model_type = config.values.get("model_type")
    if error["type"] == "extra_forbidden":
        message = f"`{name}` is not understood for model_type `{model_type}` and may change the cost"
        others = [other for other in unknown if other != name]
        hint = ("the importer stops rather than guess; write this part of the spec by hand"
                + (f" (also not understood: {_listed(others)})" if others else ""))
        return config.error("E502", message, name, hint=hint).diagnostics[0]
    if error["type"] == "missing":
        return config.error("E502", f"`{name}` is missing; the importer needs it for model_type `{model_type}`",
                            None).diagnostics[0]
    value = error.get("input")
    path = ".".join(str(part) for part in error["loc"])
    message = f"`{path}` = {shown(value)} is not supported: {_lowered(error['msg'])}"
    return config.error("E503", message, name).diagnostics[0]


def _lowered(text: str) -> str:
    return text[:1].lower() + text[1:]


def _listed(names: list[str], most: int = 10) -> str:
    return ", ".join(names[:most]) + (f" and {len(names) - most} more" if len(names) > most else "")


def quoted(values) -> str:
    return ", ".join(json.dumps(value) for value in values)
