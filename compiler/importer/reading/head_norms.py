"""Norms over attention heads, told from their modules: RMS or layer norms on Q and K, per head or over all
heads, with or without a learned scale (std.attention.gqa's qk_norm arguments), and a scale-free norm of each
value head (Gemma 4's v_norm)."""

from __future__ import annotations

from .modules import norm

QK_NORMS = (("q_norm", "k_norm"), ("q_layernorm", "k_layernorm"), ("query_layernorm", "key_layernorm"))


def qk_norm(module, parts: dict, head_dim: int, q_heads: int, kv_heads: int, keys: bool = True
            ) -> tuple[dict, set] | None:
    """The norms on Q and K: (the gqa arguments, the children they are), or None if they are another kind; a
    layer that projects no keys (`keys` false: it reads another's) has the query's alone."""
    names = next((pair for pair in QK_NORMS if pair[0] in parts or pair[1] in parts), None)
    if names is not None and not keys:
        if names[1] in parts:
            return None  # a key norm where no keys are projected
        names = (names[0], names[0])  # the query's norm, read as both: gqa writes no k_norm for such a layer
    weightless = [name for name, child in module.named_children() if "L2Norm" in type(child).__name__
                  or (norm(child) is not None and norm(child).width is None)]
    if names is None:
        return ({"qk_norm": True, "qk_norm_weights": False}, set()) if weightless else ({}, set())
    found = [norm(parts[name]) if name in parts else None for name in names]
    if any(f is None or f.block not in ("rmsnorm", "layernorm") for f in found) or found[0].block != found[1].block:
        return None
    widths = (found[0].width, found[1].width)
    if widths == (head_dim, head_dim):  # a LayerNorm per head (Persimmon) is gqa's qk_norm_kind
        return {"qk_norm": True, **({"qk_norm_kind": "layernorm"} if found[0].block == "layernorm" else {})}, set(names)
    if widths == (q_heads * head_dim, kv_heads * head_dim):
        return {"qk_norm": True, "qk_norm_heads": False}, set(names)
    return None


def weightless_v_norm(module) -> bool:
    """A scale-free RMS norm of each value head (Gemma 4's v_norm): a child without parameters, so only its name
    and class tell it."""
    found = dict(module.named_children()).get("v_norm")
    return found is not None and "rmsnorm" in type(found).__name__.lower() and not any(True for _ in found.parameters())
