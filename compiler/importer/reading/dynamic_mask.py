"""Doge's dynamic mask attention (transformers' DogeAttention): a learned A a key/value head and dt_proj, a
kv_heads·head_dim → kv_heads matrix over every held position's values, give each score a bias; beyond
keep_window_size keys each query keeps the keep_window_size of largest bias (std.attention.gqa's
`dynamic_mask`, with `over = top(keep_window_size)`)."""

from __future__ import annotations

from archcost.dsl import ast

from .modules import Linear, linear, own
from .spec import number

NONE: tuple[dict, set, set] = ({}, set(), set())


def dynamic_mask(module, parts: dict, kv_heads: int, head_dim: int) -> tuple[dict, set, set]:
    """(gqa's arguments for it, the module's own parameters it accounts for, its children), or nothing."""
    if own(module).get("A") != (kv_heads,) or "dt_proj" not in parts \
            or linear(parts["dt_proj"]) != Linear(kv_heads * head_dim, kv_heads, False):
        return NONE
    keep = getattr(module, "keep_window_size", None)
    over = {"over": ast.Call(func="top", args=[number(keep)])} if isinstance(keep, int) and keep > 0 else {}
    return {"dynamic_mask": True, **over}, {"A"}, {"dt_proj"}
