"""Residual adds a layer holds as one child module a residual, each a few vectors of d and nothing else, read as a
keyword on each sublayer's block (std.norm's residual): ZAYA1's ZayaResidualScaling, (h + b)·s + (r + b′)·s′
(`residual_affine`), and Ergo's ErgoResidualGate, σ(w)·h + √(1 + σ(w))·e^(−softplus(w)/2)·r (`residual_gate`);
and ZAYA1's embeddings shifted and scaled before the layers (the base model's own vectors)."""

from __future__ import annotations

from typing import NamedTuple

from archcost.dsl import ast

from .reading.modules import children, own
from .reading.spec import op, times, with_keyword


class ResidualModules(NamedTuple):
    keyword: str               # the sublayer blocks' argument that writes them
    names: tuple[str, ...]     # the layer's children, one a residual, in the sublayers' order
    parts: tuple[str, ...]     # the vectors of d each child holds


KINDS = (ResidualModules("residual_affine", ("post_attention_residual_scale", "post_mlp_residual_scale"),
                         ("hidden_states_scale", "hidden_states_bias", "residual_scale", "residual_bias")),
         ResidualModules("residual_gate", ("attention_residual_gate", "feedforward_residual_gate"), ("weight",)))
INPUT_AFFINE = ("input_hidden_states_scale", "input_hidden_states_bias")  # the base model's own


def residual_modules(layer, d: int) -> ResidualModules | None:
    """The kind of residual modules the layer holds, or None for a layer without them."""
    parts = dict(layer.named_children())
    return next((kind for kind in KINDS if all(
        name in parts and own(parts[name]) == {part: (d,) for part in kind.parts} and not children(parts[name])
        for name in kind.names)), None)


def with_residual_modules(calls: tuple[ast.BlockCall, ...], kind: ResidualModules) -> tuple[ast.BlockCall, ...] | None:
    """The sublayer calls with the kind's keyword; None unless they are one block per residual module."""
    return with_keyword(calls, kind.keyword, True) if len(calls) == len(kind.names) else None


def input_affine(base, d: int) -> list[ast.Op]:
    """ZayaModel's (embeddings + bias) · scale before the layers, or nothing for another base model."""
    if own(base) != {name: (d,) for name in INPUT_AFFINE}:
        return []
    return [op("elementwise", "input_affine", "ZAYA shifts and scales the embeddings (input_hidden_states_*)",
               width="d", params=times(2, "d"), flops=times(2, "d"))]
