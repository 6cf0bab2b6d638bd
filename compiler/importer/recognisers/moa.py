"""JetMoE's mixture of attention heads recognised (transformers' JetMoeAttention around JetMoeMoA;
std.attention.moa): attention experts stored as one [E, out, in] tensor a matrix (JetMoeParallelExperts), a top-k
router `router.layer`, a bias of d added after the experts' weighted sum, one kv_proj every expert reads."""

from __future__ import annotations

from ..reading.modules import Found, Linear, Where, children, linear, own
from ..reading.spec import call
from . import Recogniser, word

MOA = "experts"  # JetMoeAttention's child holding the attention experts (a module name, not the op kind)
GATED_ACT_FLOPS = {"silu": None, "gelu": 9}  # act(gate)·up per hidden value: std.ffn.moe's default 5, GELU's 9


def moa(module, at: Where) -> Found | None:
    """Attention experts: each a query projection d → kv_heads·head_dim (`input_linear`) and an output
    projection back (`output_linear`); one `kv_proj` for the keys and values every expert reads."""
    parts = children(module)
    if set(parts) != {MOA, "kv_proj"} or own(module):
        return None
    kv_heads, head_dim = getattr(module, "num_key_value_heads", None), getattr(module, "head_dim", None)
    if not isinstance(kv_heads, int) or not isinstance(head_dim, int):
        return None
    width = kv_heads * head_dim
    count = routed_experts(parts[MOA], at, width, width)
    if count is None or linear(parts["kv_proj"]) != Linear(at.d, 2 * width, False):
        return None
    return Found(call("moa", "d", experts=count, top=parts[MOA].top_k, kv_heads=kv_heads,
                      head_dim=head_dim), mixer=True, post_norm=False)


def routed_experts(module, at: Where, in_width: int, out_width: int) -> int | None:
    """E when `module` holds E experts [E, in_width, d] and [E, d, out_width], a router d → E with no bias in its
    `layer`, and a bias of d of its own; None for anything else."""
    parts = children(module)
    if set(parts) != {"input_linear", "output_linear", "router"} or own(module) != {"bias": (at.d,)}:
        return None
    router = children(parts["router"])
    scorer = linear(router["layer"]) if set(router) == {"layer"} and not own(parts["router"]) else None
    if scorer is None or scorer.width_in != at.d or scorer.bias:
        return None
    count = scorer.width_out
    first, second = (own(parts[name]) for name in ("input_linear", "output_linear"))
    if first != {"weight": (count, in_width, at.d)} or second != {"weight": (count, at.d, out_width)} \
            or not isinstance(getattr(parts["router"], "top_k", None), int):
        return None
    return count


RECOGNISER = Recogniser("moa", "sublayer", moa, writes=("moa",), kind_words=word("moa"))
