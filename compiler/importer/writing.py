"""Writing the imported spec: layers as nested repeats, block calls, the header, canonical layout."""

from __future__ import annotations

import json
import re
import textwrap
from dataclasses import dataclass
from pathlib import Path

from archcost.dsl.printer import canonical

from .config import Config

DTYPES = {"bfloat16": "bf16", "float16": "fp16", "float32": "fp32"}


@dataclass
class Layer:
    """One decoder layer as spec lines; `kind` names a run of equal layers."""

    kind: str
    lines: tuple[str, ...]


@dataclass
class Draft:
    """The parts of a spec an importer fills in."""

    uses: list[str]
    header: list[str]             # comment lines about the source
    bindings: list[str]           # `d = 4096` …
    before: list[str]             # embedding, positions
    layers: list[Layer]
    after: list[str]              # final norm, head



def number(value: int) -> str:
    """An integer as a spec writes it: 151_936, 4096."""
    return f"{value:_}" if value >= 10_000 else str(value)


def call(block: str, *positional: str, label: str | None = None, **named) -> str:
    args = list(positional) + [f"{key} = {_word(value)}" for key, value in named.items() if value is not None]
    return f"{block}({', '.join(args)})" + (f" as {label}" if label else "")


def _word(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return number(value)
    return str(value)


def render(draft: Draft, title: str, config: Config) -> str:
    dtype = _precision(config)
    title = "".join(c for c in title if c.isprintable() and c not in '"\\').strip() or "imported"  # a spec string
    source = f"imported from {Path(config.file).name} (model_type {config.values['model_type']})"
    notes = [f"{title}: {source} by `archcost import`.", *(line.removeprefix("# ") for line in draft.header)]
    out = [f"# {line}" for note in notes for line in textwrap.wrap(note, 100)]
    out += [f"use {use}" for use in draft.uses]
    out += ["", f'model "{title}" {{']
    out += [f"  {line}" for line in draft.bindings]
    out += [f"  precision weights = {dtype}, kv = {dtype}", ""]
    out += [f"  {line}" for line in draft.before]
    out += [f"  {line}" for line in _stack(draft.layers)]
    out += [f"  {line}" for line in draft.after]
    out += ["}", ""]
    return canonical("\n".join(out))  # wrapped and laid out as `archcost fmt` would


def _precision(config: Config) -> str:
    dtype = config.get("torch_dtype", None, "dtype") or "bfloat16"
    if not isinstance(dtype, str) or dtype not in DTYPES:
        raise config.error("E503", f"dtype {json.dumps(dtype)} is not supported (supported: "
                                   + ", ".join(DTYPES) + ")", "torch_dtype" if "torch_dtype" in config.values else "dtype")
    return DTYPES[dtype]


def _stack(layers: list[Layer]) -> list[str]:
    """The layers as nested repeats: a repeating pattern becomes `repeat n { pattern }`, runs of equal
    layers become `repeat k`, and a stack with no period is written as consecutive runs."""
    count = len(layers)
    period = next(p for p in range(1, count + 1)
                  if count % p == 0 and all(layers[i] == layers[i % p] for i in range(count)))
    if period == 1:
        return _repeat(count, "layers", layers[0].lines)
    body = [line for kind, run, size in _named(_runs(layers[:period])) for line in _repeat(size, kind, run.lines)]
    if period == count:
        return body
    return [f"repeat {count // period} as groups {{", *[f"  {line}" for line in body], "}"]


def _runs(layers: list[Layer]) -> list[tuple[Layer, int]]:
    runs: list[tuple[Layer, int]] = []
    for layer in layers:
        if runs and runs[-1][0] == layer:
            runs[-1] = (layer, runs[-1][1] + 1)
        else:
            runs.append((layer, 1))
    return runs


def _named(runs: list[tuple[Layer, int]]) -> list[tuple[str, Layer, int]]:
    seen: dict[str, int] = {}
    named = []
    for layer, size in runs:
        seen[layer.kind] = seen.get(layer.kind, 0) + 1
        kind = layer.kind if seen[layer.kind] == 1 else f"{layer.kind}_{seen[layer.kind]}"
        named.append((kind, layer, size))
    return named


def _repeat(size: int, kind: str, lines: tuple[str, ...]) -> list[str]:
    if size == 1:  # a single layer beside other kinds: its labels carry its kind (full_attn, sliding_ffn)
        prefix = kind.removesuffix("_layers")
        return [re.sub(r" as (\w+)$", rf" as {prefix}_\1", line) for line in lines]
    return [f"repeat {number(size)} as {kind} {{", *[f"  {line}" for line in lines], "}"]


# --- the model types --------------------------------------------------------------------------------
