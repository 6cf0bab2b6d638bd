"""`archcost import --from-modeling-code`: the spec read from transformers' own model (modeling.py), checked
against that model before it is written: its parameters exactly, the matrix FLOPs of two prefills and of
the decode steps after them, as PyTorch's FlopCounterMode counts them (eager attention: every score of the
rectangle; the spec's execution paths set to how transformers runs the model), and the keys and values its
cache holds per token (as values: the meta model's dtype is not the checkpoint's).

A disagreement stops the import (E507) with both figures: a spec that costs another model is never
written.
"""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path
from typing import NamedTuple

from archcost.dsl.errors import ArchError, Diagnostic

from ..numbers.evaluate import evaluate
from ..pipeline import compile_text
from ..terms.scenario import Conventions, Scenario
from . import meta
from .config import Config, spec_title
from .modeling import configs, walk
from .quantization import precision
from .spec import render

KV_BITS = {"fp32": 32, "bf16": 16, "fp16": 16}  # the formats a config's torch_dtype gives the keys and values


class Checked(NamedTuple):
    text: str
    lines: tuple[str, ...]   # what the check compared, one line per figure


def from_modeling_code(config: Config, name: str | None = None, schemas: tuple[str, ...] = ()) -> Checked:
    """The spec of `config` read from the model transformers builds for it, and its check; an error about the
    model as a whole is located at the config's `model_type`."""
    try:
        return _read(config, name, schemas)
    except ArchError as error:
        first = error.diagnostics[0]
        if first.span is None:
            raise config.error(first.code, first.message, "model_type", hint=first.hint) from None
        raise


def _read(config: Config, name: str | None, schemas: tuple[str, ...]) -> Checked:
    top, text = configs(config)
    if not isinstance(config.values.get("model_type"), str):
        raise config.error("E501", "the config names no model_type", None,
                           hint="a config.json says which transformers class reads it in `model_type`")
    meta.refuse_unknown(config, config.values["model_type"], list(schemas))
    built = meta.build(config)
    try:
        walked = walk(built)
    except (AttributeError, TypeError, ValueError, KeyError, IndexError) as unreadable:
        # a module tree of a shape the walk does not know: said, never a traceback
        raise ArchError([Diagnostic(code="E506", message=f"cannot read {type(built.model).__name__}'s module tree: "
                                                         f"{type(unreadable).__name__}: {unreadable}")]) from None
    model_type = config.values["model_type"]
    title = spec_title(config, name, model_type)
    source = f"{Path(config.file).name} (model_type {model_type})"
    header = [f"Read from the modeling code: {meta.versions()} built {walked.model_class} from the config on the "
              "meta device, and its modules were recognised as the blocks below."]
    if built.wrapper:
        header.append("The text model of a vision-language checkpoint; its vision tower is not counted.")
    formats = precision(text or top, top, walked.spec.components())
    draft = render(walked.spec, title, source, formats, header)
    kv = next(s.format for s in formats.settings if s.role == "kv")
    lines = check(draft, walked, built, KV_BITS[kv])
    cache = ("no cache to compare (the model keeps none)" if any(line.startswith("decode and cache") for line in lines)
             else "and the keys and values cached per token")
    summary = (f"Checked against that model: {lines[0]}; matrix FLOPs equal at {len(meta.CHECK_SHAPES)} shapes "
               f"(FlopCounterMode, eager attention), {cache}.")
    return Checked(render(walked.spec, title, source, formats, [*header, summary]), tuple(lines))


def check(text: str, walked, built, kv_bits: int) -> list[str]:
    compiled = compile_text(text, name="<imported spec>",
                            options=Conventions(attention="rectangle", paths=walked.paths))
    model = meta.runnable(built)
    keeps_cache = meta.keeps_cache(model)
    shapes = meta.check_shapes(keeps_cache, model)
    counted = meta.run_shapes(model, shapes)
    compared = [_parameters(compiled, walked.params),
                *(_flops(compiled, shape, counted[shape]) for shape in shapes),
                _cache(compiled, model, kv_bits) if keeps_cache else (NO_CACHE.format(walked.model_class), None)]
    if walked.model_class in meta.HANDED_CACHE:
        compared.append((meta.HANDED_CACHE[walked.model_class], None))
    if walked.model_class in meta.BATCHED_STEP_BROKEN:
        compared.append((f"decode checked at B = 1: {meta.BATCHED_STEP_BROKEN[walked.model_class]}", None))
    wrong = [difference for _, difference in compared if difference]
    if wrong:
        raise ArchError([Diagnostic(
            code="E507",
            message=f"the spec read from {walked.model_class} does not cost that model: " + "; ".join(wrong),
            hint="a mechanism the recognised blocks do not hold; write that part by hand (archcost import "
                 "without --from-modeling-code prints the schema's spec where one exists)")])
    return [line for line, _ in compared]


# transformers' GPT-1 recomputes the whole sequence at every step: there is no decode step or cache to compare
NO_CACHE = ("decode and cache: not compared, {} keeps no cache (each step recomputes the whole sequence), so "
            "prefills of S + P positions stand in for the decode shapes")


def _parameters(compiled, theirs: int) -> tuple[str, str | None]:
    ours = evaluate(compiled, "prefill", Scenario(P=1)).params
    return (f"parameters {ours:,} = transformers' {theirs:,}",
            None if ours == theirs else f"parameters: the spec {ours:,}, transformers {theirs:,}")


def _flops(compiled, shape: tuple[int, int, int], theirs: int) -> tuple[str, str | None]:
    batch, cached, new = shape
    phase = "decode" if cached else "prefill"
    mine = evaluate(compiled, phase, Scenario(B=batch, S=cached, P=new)).flops_matrix
    shown = f"{phase} B={batch} S={cached} P={new}"
    return (f"{shown}: matrix FLOPs {mine:,} = FlopCounterMode's {theirs:,}",
            None if mine == theirs else f"{shown}: the spec {mine:,} matrix FLOPs, FlopCounterMode {theirs:,}")


def _cache(compiled, model, kv_bits: int) -> tuple[str, str | None]:
    ours, theirs = _kv_per_token(compiled) * 8 / kv_bits, _kv_per_token_of(model)
    return (f"keys and values per token: {_shown(ours)} values = transformers' cache's {_shown(theirs)}",
            None if ours == theirs else
            f"keys and values per token: the spec {_shown(ours)} values, transformers' cache {_shown(theirs)}")


def _shown(bytes_per_token: Fraction) -> str:
    return f"{int(bytes_per_token):,}" if bytes_per_token.denominator == 1 else str(bytes_per_token)


def _kv_per_token(compiled) -> Fraction:
    short, long = meta.CACHE_PROMPTS
    held = [evaluate(compiled, "prefill", Scenario(P=new)).state_bytes for new in (short, long)]
    return Fraction(held[1] - held[0], long - short)


def _kv_per_token_of(model) -> Fraction:
    short, long = meta.CACHE_PROMPTS
    return Fraction(meta.cache_values(model, long) - meta.cache_values(model, short), long - short)


__all__ = ["Checked", "from_modeling_code"]
