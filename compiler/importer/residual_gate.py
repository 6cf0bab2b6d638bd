"""Residual adds that mix the sublayer's output and the stream by gates learned a channel (Ergo's
ErgoResidualGate: σ(w)·h + √(1 + σ(w))·e^(−softplus(w)/2)·r): one child of the layer a residual, holding one
vector of d and nothing else, read as each sublayer block's `residual_gate` (std.norm's residual `gated`)."""

from __future__ import annotations

from archcost.dsl import ast

from .reading.modules import children, own
from .reading.spec import with_keyword

GATES = ("attention_residual_gate", "feedforward_residual_gate")  # the layer's children, in the sublayers' order


def residual_gates(layer, d: int) -> tuple[str, ...]:
    """The layer's gate children (GATES), or () for a layer without them."""
    parts = dict(layer.named_children())
    found = all(name in parts and own(parts[name]) == {"weight": (d,)} and not children(parts[name])
                for name in GATES)
    return GATES if found else ()


def gated(calls: tuple[ast.BlockCall, ...]) -> tuple[ast.BlockCall, ...] | None:
    """The sublayer calls with `residual_gate = true`; None unless they are one gated block per gate."""
    return with_keyword(calls, "residual_gate", True) if len(calls) == len(GATES) else None
