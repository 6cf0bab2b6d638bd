"""A residual short convolution held as a module of its own (transformers' InklingShortConvolution): one
depthwise Conv1d child without a bias and nothing else, read as std.conv's residual_conv. The shapes show the
convolution; the add of its input back, x + conv(x), is the module's forward and only a non-matrix add a value,
so the parameters and matrix FLOPs the import checks are the same either way."""

from __future__ import annotations

from typing import NamedTuple

from .modules import children, own


class ResidualConv(NamedTuple):
    channels: int
    kernel: int


def residual_conv(module) -> ResidualConv | None:
    """The convolution's channels and taps, or None for any other module."""
    parts = children(module)
    if own(module) or len(parts) != 1:
        return None
    conv = next(iter(parts.values()))
    weights = own(conv)
    if type(conv).__name__ != "Conv1d" or children(conv) or set(weights) != {"weight"}:
        return None
    if len(weights["weight"]) != 3:
        return None
    channels, per_group, kernel = weights["weight"]
    return ResidualConv(channels, kernel) if per_group == 1 and getattr(conv, "groups", None) == channels else None
