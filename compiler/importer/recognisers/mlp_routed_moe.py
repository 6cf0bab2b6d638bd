"""ZAYA1's MoE routed by a small MLP with a skip class recognised (transformers' ZayaSparseMoeBlock;
std.ffn.mlp_routed_moe's mlp_routed_moe)."""

from __future__ import annotations

from ..reading.modules import Found, Linear, Norm, Where, activation, children, linear, norm, own
from ..reading.spec import call
from . import Recogniser, word

EXPERTS = "experts"  # ZayaSparseMoeBlock's child holding the expert tensors (a module name, not the op kind)


def mlp_routed_moe(module, at: Where) -> Found | None:
    parts = children(module)
    if set(parts) != {"gate", EXPERTS} or own(module) \
            or set(children(parts["gate"])) != {"down_proj", "router_mlp"}:
        return None
    gate, experts = children(parts["gate"]), own(parts[EXPERTS])
    down = linear(gate["down_proj"])
    width = down.width_out if down is not None else 0
    mlp, eda = children(gate["router_mlp"]), own(parts["gate"]) == {"router_states_scale": (width,)}
    count, f2, _ = experts.get("gate_up_proj", (0, 0, 0))
    if down != Linear(at.d, width, True) or (own(parts["gate"]) and not eda) \
            or set(mlp) != {"norm", "fc1", "fc2", "out_proj"} or norm(mlp["norm"]) != Norm("rmsnorm", width) \
            or any(linear(mlp[name]) != Linear(width, width, True) for name in ("fc1", "fc2")) \
            or linear(mlp["out_proj"]) != Linear(width, count + 1, False) or f2 % 2 \
            or experts != {"gate_up_proj": (count, f2, at.d), "down_proj": (count, at.d, f2 // 2)} \
            or activation(parts[EXPERTS]) != "silu" or not isinstance(getattr(parts["gate"], "top_k", None), int):
        return None
    return Found(call("mlp_routed_moe", "d", experts=count, top=parts["gate"].top_k, f=f2 // 2, router_width=width,
                      eda=None if eda else False), mixer=False, post_norm=False)


RECOGNISER = Recogniser("mlp_routed_moe", "sublayer", mlp_routed_moe, writes=("mlp_routed_moe",),
                        kind_words=word("moe"))
