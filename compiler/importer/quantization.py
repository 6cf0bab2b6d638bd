"""A checkpoint's `torch_dtype` and `quantization_config` as the precision statement of the imported spec.

A quantized checkpoint stores some components' matrices in a block format and keeps the rest (embedding,
head, norms, routers, and whatever `modules_to_not_convert` lists) in the model's dtype; the spec says so
with one precision role per component (`precision weights = bf16, routed_experts = mxfp4`).
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from archcost.dsl import ast

from .config import Config, shown

DTYPES = {"bfloat16": "bf16", "float16": "fp16", "float32": "fp32"}
QUANTIZED = ("attention", "dense_ffn", "routed_experts")  # components whose matrices a checkpoint quantizes
# the module names of `modules_to_not_convert` and the component each names (routers, embedding, head and
# norms are never quantized here)
MODULES = {"self_attn": "attention", "attn": "attention", "experts": "routed_experts", "shared_expert": "dense_ffn",
           "mlp": "dense_ffn"}
KEPT = ("router", "gate", "embed_tokens", "lm_head", "norm")


class _Method(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)
    modules_to_not_convert: list[str] | None = None


class Mxfp4(_Method):
    """gpt-oss: 4-bit values with an 8-bit shared exponent per block of 32 (OCP microscaling)."""

    quant_method: Literal["mxfp4"]

    def format(self) -> str:
        return "mxfp4"


class Fp8(_Method):
    """DeepSeek-V3, Qwen3-FP8: 8-bit values, one fp32 scale per 128 × 128 tile."""

    quant_method: Literal["fp8"]
    fmt: Literal["e4m3", "e5m2"] = "e4m3"
    activation_scheme: Literal["dynamic", "static"] = "dynamic"   # activations: computed, not stored
    weight_block_size: Annotated[list[Literal[128]], Field(min_length=2, max_length=2)] | None = None
    ignored_layers: list[str] | None = None

    def format(self) -> str:
        return "fp8_b128x128" if self.weight_block_size else "fp8"


class GroupInt(_Method):
    """GPTQ and AWQ: `bits`-bit integers with an fp16 scale and a packed zero point per group."""

    quant_method: Literal["gptq", "awq"]
    bits: Literal[4, 8]
    group_size: Literal[32, 64, 128]
    desc_act: Literal[False] = False        # true stores a permutation per input channel: not modelled
    sym: bool = True
    zero_point: bool = True
    version: str | None = None
    damp_percent: float | None = None
    static_groups: bool | None = None
    true_sequential: bool | None = None
    model_name_or_path: str | None = None
    model_file_base_name: str | None = None
    checkpoint_format: str | None = None
    modules_in_block_to_quantize: list | None = None
    meta: dict | None = None

    def format(self) -> str:
        return f"int{self.bits}_g{self.group_size}_zp"


Method = Annotated[Mxfp4 | Fp8 | GroupInt, Field(discriminator="quant_method")]


class _Quantization(BaseModel):
    method: Method


def precision(config: Config, top: Config, components: set[str]) -> ast.Precision:
    """`precision weights = …, kv = …[, <component> = <format>…]`, with a note saying where each came from."""
    dtype, note = _dtype(config, top)
    settings = [ast.Setting(role="weights", format=dtype), ast.Setting(role="kv", format=dtype)]
    quantization = top.values.get("quantization_config")
    if quantization not in (None, {}):
        method = _method(top, quantization)
        kept = _kept(top, method)
        quantized = [c for c in QUANTIZED if c in components and c not in kept]
        settings += [ast.Setting(role=component, format=method.format()) for component in quantized]
        note += (f"; quantization_config: {method.quant_method} ({method.format()}) for "
                 + (", ".join(quantized) or "no component") + (f", not {', '.join(sorted(kept))}" if kept else ""))
    return ast.Precision(settings=settings, note=note)


def _dtype(config: Config, top: Config) -> tuple[str, str]:
    for source in (config, top):
        for name in ("torch_dtype", "dtype"):
            if source.values.get(name) is not None:
                dtype = source.values[name]
                if not isinstance(dtype, str) or dtype not in DTYPES:
                    raise source.error("E503", f"`{name}` = {shown(dtype)} is not supported (supported: "
                                               + ", ".join(DTYPES) + ")", name)
                return DTYPES[dtype], f"{name}: {dtype}"
    return "bf16", "no torch_dtype: bf16 assumed"


def _method(top: Config, quantization) -> Mxfp4 | Fp8 | GroupInt:
    try:
        return _Quantization.model_validate({"method": quantization}).method
    except ValidationError as invalid:
        error = invalid.errors()[0]
        path = ".".join(str(part) for part in error["loc"][1:])
        raise top.error("E503", f"`quantization_config` is not supported: `{path}` = {shown(error.get('input'))}: "
                                f"{error['msg'][:1].lower()}{error['msg'][1:]}", "quantization_config",
                        hint="supported: mxfp4; fp8 with 128 × 128 blocks; gptq and awq with 4 or 8 bits in groups "
                             "of 32, 64 or 128 (desc_act false); or import the unquantized config and pass "
                             "`--weights FORMAT`") from None


def _kept(top: Config, method) -> set[str]:
    """The components `modules_to_not_convert` (or fp8's `ignored_layers`) keeps in the model's dtype."""
    kept = set()
    for module in (method.modules_to_not_convert or []) + (getattr(method, "ignored_layers", None) or []):
        parts = module.replace("*", "").split(".")
        if any(part in KEPT or part.endswith("norm") for part in parts):
            continue  # kept in the model's dtype here anyway
        named = [MODULES[part] for part in parts if part in MODULES]
        if not named or any(part.isdigit() for part in parts):
            raise top.error("E503", f"`modules_to_not_convert`: {shown(module)} is not a whole component the "
                                    "importer can keep unquantized", "quantization_config",
                            hint="components: self_attn, mlp, experts, shared_expert (in every layer)")
        kept.add(named[-1])
    return kept
