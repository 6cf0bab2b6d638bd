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

from archcost.dsl import ast
from archcost.dsl.errors import ArchError, Diagnostic

from ..compilation import compile_text
from ..numbers.evaluate import evaluate
from ..terms.scenario import Conventions, Scenario
from . import held, meta
from .config import Config, spec_title
from .modeling import configs, walk
from .quantization import precision
from .reading.spec import render
from .recognisers.mla import INDEX_RECORD, INDEX_RECORD_FORMAT

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
    from . import remote_code_note

    header += remote_code_note(config)
    formats = precision(text or top, top, walked.spec.components())
    kv = next(s.format for s in formats.settings if s.role == "kv")
    draft, values, indexed = _drafts(walked, title, source, formats, header, kv)
    lines = check(draft, walked, built, KV_BITS[kv], "" if indexed is formats else f" and {INDEX_RECORD} = {kv}",
                  values)
    formats = indexed
    cache = ("no cache to compare (the model keeps none)" if any(line.startswith("decode and cache") for line in lines)
             else "and the keys and values cached per token")
    summary = (f"Checked against that model {lines[0].removeprefix('checked ')}: {lines[1]}; matrix FLOPs equal at "
               f"{len(meta.CHECK_SHAPES)} shapes (FlopCounterMode, eager attention), {cache}.")
    if walked.paths:
        summary += (" The options' first words, the defaults, are the serving engines' paths, as the stdlib's "
                    "blocks and hand-written specs default to.")
    return Checked(render(walked.spec, title, source, formats, [*header, summary]), tuple(lines))


def _drafts(walked, title: str, source: str, formats, header: list[str], kv: str):
    """(the spec the check compiles, the same with every format role in fp32 for the fixed state in values, the
    precision the written spec keeps): the check runs as transformers holds the cache, every record in the
    model's dtype; the spec keeps what the serving engines keep (the indexer's keys in FP8)."""
    indexed = _passes_keyword(walked.spec, INDEX_RECORD)
    draft = render(walked.spec, title, source, _with_index_record(indexed, formats, kv), header)
    in_values = formats.model_copy(update={"settings": [ast.Setting(role=role, format="fp32") for role in
                                                        ("weights", "kv", "act", "state")]})
    values = render(walked.spec, title, source, _with_index_record(indexed, in_values, "fp32"), header)
    return draft, values, _with_index_record(indexed, formats, INDEX_RECORD_FORMAT)


def _passes_keyword(spec, name: str) -> bool:
    """Whether any call of the spec (its layers, the blocks it defines, before and after the stack) passes `name`."""
    def found(node) -> bool:
        if isinstance(node, ast.Keyword) and node.name == name:
            return True
        if isinstance(node, (list, tuple)):
            return any(found(item) for item in node)
        return isinstance(node, ast.Node) and any(found(getattr(node, f)) for f in type(node).model_fields)

    return found([*spec.before, *spec.after, *spec.defined, *(stmt for layer in spec.layers for stmt in layer.stmts)])


def _with_index_record(indexed: bool, formats, fmt: str):
    """The precision line with the indexer keys' role in `fmt`, where the spec's calls name that role."""
    if not indexed:
        return formats
    note = (f"{formats.note}; {INDEX_RECORD}: the indexer's keys in FP8 with a scale per 128 values, as DeepSeek's "
            "inference code and the serving engines keep them (transformers keeps them in its dtype)"
            if fmt == INDEX_RECORD_FORMAT else formats.note)
    return formats.model_copy(update={"settings": [*formats.settings, ast.Setting(role=INDEX_RECORD, format=fmt)],
                                      "note": note})


def checked_with(paths: tuple[tuple[str, str], ...], logits: str = "last") -> str:
    """The flags under which the check met transformers: its attention convention, the rows its head scores when
    not the last one's alone, and the options' words."""
    scored = [f"--logits {logits}"] if logits != "last" else []
    return "with " + " ".join(["--attention rectangle", *scored,
                               *(f"--option {name}={word}" for name, word in paths)])


def check(text: str, walked, built, kv_bits: int, records: str = "", values: str | None = None) -> list[str]:
    model = meta.runnable(built, walked.ran_on_meta)
    logits = "all" if meta.scores_every_position(model) else "last"
    compiled = compile_text(text, name="<imported spec>",
                            conventions=Conventions(attention="rectangle", logits=logits, paths=walked.paths))
    keeps_cache = meta.keeps_cache(model)
    shapes = meta.check_shapes(keeps_cache, model)
    counted = meta.run_shapes(model, shapes)
    prefills = held.Prefills(model)
    compared = [_parameters(compiled, walked.params),
                *(_flops(compiled, shape, counted[shape]) for shape in shapes),
                _cache(compiled, prefills, kv_bits) if keeps_cache else (NO_CACHE.format(walked.model_class), None)]
    if keeps_cache:
        compared.append(_fixed_state(values or text, prefills, walked.paths))
    if walked.model_class in meta.HANDED_CACHE:
        compared.append((meta.HANDED_CACHE[walked.model_class], None))
    if walked.model_class in meta.BATCHED_STEP_BROKEN:
        compared.append((f"decode checked at B = 1: {meta.BATCHED_STEP_BROKEN[walked.model_class]}", None))
    compared.insert(0, (f"checked {checked_with(walked.paths, logits)}{records}", None))
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


def _cache(compiled, prefills: held.Prefills, kv_bits: int) -> tuple[str, str | None]:
    prompts = _cache_prompts(compiled)
    if prompts is None:
        return ("keys and values per token: not compared, a window or chunk of fewer than 3 positions holds "
                "too few to measure growth", None)
    ours, theirs = _kv_per_token(compiled, prompts) * 8 / kv_bits, _kv_per_token_of(prefills, prompts)
    return (f"keys and values per token: {_shown(ours)} values = transformers' cache's {_shown(theirs)}",
            None if ours == theirs else
            f"keys and values per token: the spec {_shown(ours)} values, transformers' cache {_shown(theirs)}")


def _fixed_state(values_text: str, prefills: held.Prefills, paths) -> tuple[str, str | None]:
    """The state that does not grow, compared in values: the spec compiled with every format role in fp32, 4 bytes
    a value, against the tensors transformers' cache holds after a prefill (issue 45: RecurrentGemma's spec kept
    4 conv inputs a channel where transformers keeps 3)."""
    short, _ = meta.CACHE_PROMPTS
    values = compile_text(values_text, name="<imported spec>",
                          conventions=Conventions(attention="rectangle", paths=paths))
    by_kind = evaluate(values, "prefill", Scenario(P=short)).state_by_kind
    ours = (by_kind.get("recurrent", 0) + by_kind.get("conv", 0)) // 4
    theirs = held.fixed_values(prefills, short)
    if theirs is None:
        return (f"fixed state (conv slots, recurrent matrices): {ours:,} values; transformers keeps none where the "
                "check looks" if ours else "fixed state: none", None)
    return (f"fixed state (conv slots, recurrent matrices): {ours:,} values = transformers' {theirs:,}",
            None if ours == theirs else f"fixed state: the spec {ours:,} values, transformers' cache {theirs:,}")


def _cache_prompts(compiled) -> tuple[int, int] | None:
    """Two prompt lengths whose positions every window and chunk of the spec still keeps in full (transformers'
    sliding and chunked caches keep w − 1 positions between calls), so their difference is pure growth:
    meta.CACHE_PROMPTS, or shorter ones for a short window (issue 45: a window of 3 was refused as "-128
    values"); None when a window is too short to hold two."""
    spans = [int(args[0]) for node in compiled.ir.nodes if hasattr(node.args, "growth")  # the caches
             for growth, args in [node.args.growth[0]] if growth in ("window", "chunk") and args]
    kept = min(spans, default=None)
    short, long = meta.CACHE_PROMPTS
    if kept is None or kept - 1 >= long:
        return short, long
    return (1, 2) if kept - 1 >= 2 else None


def _shown(bytes_per_token: Fraction) -> str:
    return f"{int(bytes_per_token):,}" if bytes_per_token.denominator == 1 else str(bytes_per_token)


def _kv_per_token(compiled, prompts: tuple[int, int]) -> Fraction:
    short, long = prompts
    held = [evaluate(compiled, "prefill", Scenario(P=new)).state_bytes for new in (short, long)]
    return Fraction(held[1] - held[0], long - short)


def _kv_per_token_of(prefills: held.Prefills, prompts: tuple[int, int]) -> Fraction:
    short, long = prompts
    return Fraction(held.cache_values(prefills, long) - held.cache_values(prefills, short), long - short)


__all__ = ["Checked", "from_modeling_code"]
