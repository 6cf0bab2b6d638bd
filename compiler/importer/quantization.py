"""A checkpoint's `torch_dtype` and `quantization_config` as the precision statement of the imported spec.

A quantized checkpoint stores some components' matrices in a block format and keeps the rest (embedding,
head, norms, routers, and whatever `modules_to_not_convert` lists) in the model's dtype; the spec says so
with one precision role per component (`precision weights = bf16, routed_experts = mxfp4`).
"""

from __future__ import annotations

import re
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from archcost.dsl import ast

from .config import Config, shown

DTYPES = {"bfloat16": "bf16", "float16": "fp16", "float32": "fp32"}
QUANTIZED = ("attention", "dense_ffn", "routed_experts")  # components whose matrices a checkpoint quantizes


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
    # the 8-bit layout, by its short or its torch name (MiniMax-M2 writes float8_e4m3fn); 8 bits either way
    fmt: Literal["e4m3", "e5m2", "float8_e4m3fn", "float8_e5m2"] = "e4m3"
    activation_scheme: Literal["dynamic", "static"] = "dynamic"   # activations: computed, not stored
    weight_block_size: Annotated[list[Literal[128]], Field(min_length=2, max_length=2)] | None = None
    ignored_layers: list[str] | None = None
    # the block scales' storage: fp32, or one byte (transformers' FineGrainedFP8Config: "`ue8m0` (1-byte
    # `torch.float8_e8m0fnu`, V4-style)"; DeepSeek-V3.2's config names it)
    scale_fmt: Literal["float", "ue8m0"] = "float"

    def format(self) -> str:
        if not self.weight_block_size:
            return "fp8"
        return "fp8_b128x128_ue8m0" if self.scale_fmt == "ue8m0" else "fp8_b128x128"


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
        """AWQ without zero points stores only the scales; GPTQ packs zeros even when symmetric (qzeros)."""
        zeros = "_zp" if self.zero_point or self.quant_method == "gptq" else ""
        return f"int{self.bits}_g{self.group_size}{zeros}"


Method = Annotated[Mxfp4 | Fp8 | GroupInt, Field(discriminator="quant_method")]


class _Quantization(BaseModel):
    method: Method


def precision(config: Config, top: Config, components: set[str]) -> ast.Precision:
    """`precision weights = …, kv = …[, <component> = <format>…]`, with a note saying where each came from."""
    dtype, note = _dtype(config, top)
    settings = [ast.Setting(role="weights", format=dtype), ast.Setting(role="kv", format=dtype)]
    holder = config if "quantization_config" in config.values else top  # a multimodal checkpoint's text_config
    quantization = holder.values.get("quantization_config")
    if quantization not in (None, {}):
        method = _method(holder, quantization)
        kept = _kept(holder, method) | _unlisted(holder, method)
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


# The Linear modules of each component, named as transformers' decoders name them, in layers and experts that
# stand for all: a pattern of `modules_to_not_convert` keeps a component when it matches every name of one of
# its groups (and partly none). Groups: dense MLPs and shared experts; experts one by one, fused (gpt-oss's
# `mlp.experts`), or Mixtral's.
LAYERS, EXPERTS = (0, 1, 2, 11), (0, 1, 11)


def groups(indices: set[int] = frozenset()) -> dict[str, list[list[str]]]:
    """Each component's groups of Linear names, in the sample layers and experts and in every index a pattern
    names (so `model.layers.3.self_attn` is seen to keep one layer of four, not none)."""
    layers, experts = sorted({*LAYERS, *indices}), sorted({*EXPERTS, *indices})
    return {
        "attention": [[f"model.layers.{n}.self_attn.{p}_proj" for n in layers for p in "qkvo"]],
        "dense_ffn": [[f"model.layers.{n}.mlp.{part}{p}_proj" for n in layers for p in ("gate", "up", "down")]
                      for part in ("", "shared_expert.", "shared_experts.")],
        "routed_experts": [[f"model.layers.{n}.mlp.experts.{e}.{p}_proj" for n in layers for e in experts
                            for p in ("gate", "up", "down")],
                           [f"model.layers.{n}.mlp.experts" for n in layers],
                           [f"model.layers.{n}.block_sparse_moe.experts.{e}.w{w}" for n in layers for e in experts
                            for w in (1, 2, 3)]],
    }


def matcher(patterns: list[str]):
    """Whether any of the `modules_to_not_convert` patterns names a module, by the rule of transformers 5.24's
    quantizers (quantizers_utils.should_convert_module): a pattern as a regular expression from the start of
    the name, ending at a module boundary (a dot or the end), or the name ending with the pattern. One
    expression for all the patterns: a checkpoint lists hundreds (each layer's router), the sample names
    are thousands."""
    if not patterns:
        return lambda name: False
    expression = re.compile(rf"(?:{'|'.join(f'(?:{pattern})' for pattern in patterns)})(?:(?<=\.)|(?=\.|$))")
    endings = tuple(patterns)
    return lambda name: bool(expression.match(name)) or name.endswith(endings)


def _unlisted(top: Config, method) -> set[str]:
    """GPTQ's `modules_in_block_to_quantize`: only the modules it lists (named inside a layer) are quantized;
    a component none of whose modules it lists keeps the model's dtype, one it lists in part is refused."""
    listed = getattr(method, "modules_in_block_to_quantize", None)
    if not listed:
        return set()
    names = {name for step in listed for name in (step if isinstance(step, list) else [step])}
    unlisted = set()
    for component, found_groups in groups().items():
        inside = [[name.split(".", 3)[3] for name in group if name.count(".") >= 3] for group in found_groups]
        found = [[name in names for name in group] for group in inside if group]
        if any(any(f) and not all(f) for f in found):
            raise top.error("E503", f"`modules_in_block_to_quantize` lists part of {component}, which a format per "
                                    "component cannot say", "quantization_config")
        if not any(all(f) for f in found):
            unlisted.add(component)
    return unlisted


def _kept(top: Config, method) -> set[str]:
    """The components `modules_to_not_convert` (or fp8's `ignored_layers`) keeps in the model's dtype; a pattern
    that keeps part of a component (one layer, one matrix of the experts) is refused: a per-component format
    cannot say it."""
    patterns = (method.modules_to_not_convert or []) + (getattr(method, "ignored_layers", None) or [])
    for pattern in patterns:  # module names with `.` and `*`: no groups, so no regular expression that backtracks
        if not re.fullmatch(r"[A-Za-z0-9_.*-]{1,200}", pattern):
            raise top.error("E503", f"`modules_to_not_convert`: {shown(pattern)} is not a module name pattern the "
                                    "importer reads (letters, digits, `_`, `-`, `.` and `*`)", "quantization_config")
    named = {int(number) for pattern in patterns for number in re.findall(r"(?<=\.)[0-9]{1,6}(?=\.|$)", pattern)}
    kept = set()
    listed = matcher(patterns)
    for component, found in groups(named).items():
        hits = [[listed(name) for name in group] for group in found]
        if any(any(hit) and not all(hit) for hit in hits):
            partial = next(p for p in patterns for group in found if any(matcher([p])(n) for n in group))
            raise top.error("E503", f"`modules_to_not_convert`: {shown(partial)} keeps part of {component} "
                                    "unquantized, which a format per component cannot say", "quantization_config",
                            hint="import the config without its quantization_config and pass `--weights FORMAT`, "
                                 "or write the formats by hand")
        if any(all(hit) for hit in hits):
            kept.add(component)
    return kept
