"""MiniMax's lightning attention recognised (std.attention.lightning)."""

from __future__ import annotations

from ..reading.modules import Found, Linear, Norm, Where, children, linear, norm, own
from ..reading.spec import call
from . import Recogniser


def lightning(module, at: Where) -> Found | None:
    """MiniMax's lightning attention: one qkv matrix, an RMSNorm of the heads' output, a sigmoid gate from the
    layer's input, the output projection."""
    parts = children(module)
    heads, head_dim = getattr(module, "num_attention_heads", None), getattr(module, "head_dim", None)
    if set(parts) != {"norm", "qkv_proj", "out_proj", "output_gate"} or own(module) or not isinstance(heads, int) \
            or not isinstance(head_dim, int):
        return None
    width = heads * head_dim
    shapes = {name: linear(parts[name]) for name in ("qkv_proj", "out_proj", "output_gate")}
    if shapes != {"qkv_proj": Linear(at.d, 3 * width, False), "out_proj": Linear(width, at.d, False),
                  "output_gate": Linear(at.d, width, False)} or norm(parts["norm"]) != Norm("rmsnorm", width):
        return None
    return Found(call("lightning", "d", heads=heads, head_dim=head_dim, block_size=module.block_size),
                 mixer=True, post_norm=False)


RECOGNISER = Recogniser("lightning", "sublayer", lightning, writes=("lightning",))
