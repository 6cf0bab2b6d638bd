"""Residual adds that shift and scale both sides (ZAYA1's ZayaResidualScaling; std.norm's residual `affine`), and
the embeddings shifted and scaled before the layers: connections around the sublayers, read by the walk."""

from __future__ import annotations

from archcost.dsl import ast

from .reading.modules import children, own
from .reading.spec import op, times, with_keyword

AFFINE = ("post_attention_residual_scale", "post_mlp_residual_scale")  # a layer's residuals, in order
AFFINE_PARTS = ("hidden_states_scale", "hidden_states_bias", "residual_scale", "residual_bias")
INPUT_AFFINE = ("input_hidden_states_scale", "input_hidden_states_bias")  # the base model's own


def residual_affines(layer, d: int) -> tuple[str, ...]:
    """The layer's ZayaResidualScaling children (AFFINE), or () for a layer without them."""
    parts = dict(layer.named_children())
    found = all(name in parts and own(parts[name]) == {part: (d,) for part in AFFINE_PARTS}
                and not children(parts[name]) for name in AFFINE)
    return AFFINE if found else ()


def with_affine_residuals(calls: tuple[ast.BlockCall, ...]) -> tuple[ast.BlockCall, ...] | None:
    """The sublayer calls with `residual_affine = true`; None unless they are one affine block per residual."""
    return with_keyword(calls, "residual_affine", True) if len(calls) == len(AFFINE) else None


def input_affine(base, d: int) -> list[ast.Op]:
    """ZayaModel's (embeddings + bias) · scale before the layers, or nothing for another base model."""
    if own(base) != {name: (d,) for name in INPUT_AFFINE}:
        return []
    return [op("elementwise", "input_affine", "ZAYA shifts and scales the embeddings (input_hidden_states_*)",
               width="d", params=times(2, "d"), flops=times(2, "d"))]
