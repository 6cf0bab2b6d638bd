"""Residual short convolutions a decoder layer holds as children of its own, one on each sublayer's output
before its residual add (Inkling's attn_sconv and mlp_sconv: InklingDecoderLayer adds
`self.attn_sconv(self.self_attn(...))` to the stream), read as each sublayer block's `out_conv` (std.conv's
residual_conv)."""

from __future__ import annotations

from archcost.dsl import ast

from .reading.residual_conv import residual_conv
from .reading.spec import with_keyword


def output_convs(layer, d: int) -> dict[str, int]:
    """The layer's children that are residual convolutions of the stream's width, by name, in the sublayers'
    order, with their taps ({} for a layer without them)."""
    found = {name: residual_conv(child) for name, child in layer.named_children()}
    return {name: conv.kernel for name, conv in found.items() if conv is not None and conv.channels == d}


def with_output_convs(calls: tuple[ast.BlockCall, ...], convs: dict[str, int]) -> tuple[ast.BlockCall, ...] | None:
    """The sublayer calls with `out_conv = taps`; None unless there is one convolution a sublayer, all of the
    same taps (the keyword cannot pair them otherwise)."""
    if len(calls) != len(convs) or len(set(convs.values())) != 1:
        return None
    return with_keyword(calls, "out_conv", next(iter(convs.values())))
