"""LFM2's gated short convolution recognised (std.attention.short_conv)."""

from __future__ import annotations

from ..reading.modules import Found, Linear, Where, children, linear, own
from ..reading.spec import call
from . import Recogniser, word


def short_conv(module, at: Where) -> Found | None:
    """LFM2's gated short convolution: in_proj to B, C and x, a depthwise Conv1d over B·x, out_proj."""
    parts = children(module)
    taps = [child for name, child in parts.items() if name not in ("in_proj", "out_proj")]
    if len(parts) != 3 or len(taps) != 1 or type(taps[0]).__name__ != "Conv1d" or own(module):
        return None
    projection, output, weights = linear(parts.get("in_proj")), linear(parts.get("out_proj")), own(taps[0])
    if projection is None or projection != Linear(at.d, 3 * at.d, projection.bias) \
            or output != Linear(at.d, at.d, projection.bias) or weights.get("weight", ())[:2] != (at.d, 1):
        return None
    if ("bias" in weights) != projection.bias:
        return None
    return Found(call("short_conv", "d", kernel=weights["weight"][-1], bias=projection.bias or None), mixer=True)


RECOGNISER = Recogniser("short_conv", "sublayer", short_conv, writes=("short_conv",), kind_words=word("conv"))
