"""Residual adds whose stream is weighted by a learned vector the layer itself holds, one vector of d a sublayer,
read as a keyword on each sublayer's block (std.norm's residual): Doge's DogeDecoderLayer `input_residual` and
`post_attention_residual`, `scale * residual + sublayer` (`residual_scale`, the residual `scaled`), and Dory's
DoryDecoderLayer `lambda_1` and `lambda_2`, nGPT's interpolation towards the normalised update,
`h + |λ·c| * (sublayer - h)` (`residual_lerp`, the residual `lerp`)."""

from __future__ import annotations

from typing import NamedTuple

from archcost.dsl import ast

from .reading.modules import own
from .reading.spec import with_keyword


class LayerVectors(NamedTuple):
    keyword: str               # the sublayer blocks' argument that writes them
    names: tuple[str, ...]     # the layer's parameters, one a residual, in the sublayers' order


KINDS = (LayerVectors("residual_scale", ("input_residual", "post_attention_residual")),
         LayerVectors("residual_lerp", ("lambda_1", "lambda_2")))


def scales_residuals(layer, d: int) -> LayerVectors | None:
    """The kind of vectors the layer's own parameters are, exactly one d-wide vector per residual add; None for
    a layer without parameters of its own, or with others."""
    held = own(layer)
    return next((kind for kind in KINDS if held == {name: (d,) for name in kind.names}), None)


def scaled(calls: tuple[ast.BlockCall, ...], kind: LayerVectors) -> tuple[ast.BlockCall, ...] | None:
    """The sublayer calls with the kind's keyword; None unless they are one block per vector."""
    return with_keyword(calls, kind.keyword, True) if len(calls) == len(kind.names) else None
