"""Residual adds whose stream is scaled by a learned vector (Doge: DogeDecoderLayer's `input_residual` and
`post_attention_residual`, `scale * residual + sublayer`): the layer's own parameters, one vector of d a
sublayer, read as each sublayer block's `residual_scale` (std.norm's residual `scaled`)."""

from __future__ import annotations

from archcost.dsl import ast

from .reading.modules import own
from .reading.spec import with_keyword

SCALES = ("input_residual", "post_attention_residual")  # the layer's parameters, in the sublayers' order


def scales_residuals(layer, d: int) -> bool:
    """Whether the layer's own parameters are exactly one d-wide scale per residual add."""
    return own(layer) == {name: (d,) for name in SCALES}


def scaled(calls: tuple[ast.BlockCall, ...]) -> tuple[ast.BlockCall, ...] | None:
    """The sublayer calls with `residual_scale = true`; None unless they are one scaled block per scale."""
    return with_keyword(calls, "residual_scale", True) if len(calls) == len(SCALES) else None
