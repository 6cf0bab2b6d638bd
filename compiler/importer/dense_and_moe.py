"""A dense feed-forward beside a MoE, each with its own norms (Gemma 4's MoE layers: transformers'
Gemma4TextDecoderLayer with enable_moe_block; std.ffn.dense_and_moe): the layer itself holds the MLP, a
router that normalises the stream and scales it (and each expert's weight), the experts as fused tensors, and
five norms around them."""

from __future__ import annotations

from archcost.dsl import ast

from .reading.modules import Linear, Norm, Where, activation, children, linear, norm, own
from .reading.spec import call
from .recognisers.swiglu import gated_ffn

NORMS = ("pre_feedforward_layernorm", "post_feedforward_layernorm_1", "pre_feedforward_layernorm_2",
         "post_feedforward_layernorm_2", "post_feedforward_layernorm")
EXPERTS = "experts"  # the layer's child holding the fused expert tensors (a module name, not the op kind)
PARTS = ("mlp", "router", EXPERTS, *NORMS)
EXPERT_ACTIVATION = "gelu"  # GELU(gate)·up: dense_and_moe's act_flops = 9


def layer_call(layer, at: Where) -> tuple[ast.BlockCall | None, tuple[str, ...]]:
    """`dense_and_moe(d, f, experts, top, expert_f)` and the layer's children it accounts for; (None, ()) for a
    layer without that structure."""
    parts = children(layer)
    if not all(name in parts for name in PARTS) or any(norm(parts[name]) != Norm("rmsnorm", at.d)
                                                       for name in NORMS):
        return None, ()
    dense, count = gated_ffn(parts["mlp"], at), _router(parts["router"], at)
    experts = own(parts[EXPERTS])
    up, down = experts.get("gate_up_proj", ()), experts.get("down_proj", ())
    act = activation(parts[EXPERTS])
    if dense is None or dense.call.name != "geglu" or count is None or act != EXPERT_ACTIVATION \
            or set(experts) != {"gate_up_proj", "down_proj"} or len(up) != 3 or up[0] != count or up[2] != at.d \
            or down != (count, at.d, up[1] // 2) or up[1] % 2:
        return None, ()
    f = linear(children(parts["mlp"])["gate_proj"]).width_out
    top = getattr(at.config, "top_k_experts", None)
    if not isinstance(top, int):
        return None, ()
    return call("dense_and_moe", "d", f=f, experts=count, top=top, expert_f=up[1] // 2, label="ffn",
                note=f"{type(layer).__name__}: mlp beside router and experts"), PARTS


def _router(router, at: Where) -> int | None:
    """E for a router of a weightless norm, a learned scale of d, a d → E projection and a scale per expert."""
    parts, held = children(router), own(router)
    projection = linear(parts.get("proj")) if set(parts) == {"proj"} else None
    if projection is None or projection != Linear(at.d, projection.width_out, False):
        return None
    count = projection.width_out
    return count if held == {"scale": (at.d,), "per_expert_scale": (count,)} else None
