"""RWKV-4's blocks recognised (transformers' RwkvSelfAttention and RwkvFeedForward; std.attention.rwkv): the
token-shift mixes and the decay vectors as the modules' own parameters, the K, V, R projections beside them."""

from __future__ import annotations

from .modules import Found, Linear, Where, children, linear, own
from .spec import call


def time_mix(module, at: Where) -> Found | None:
    parts, held = children(module), own(module)
    mixes = {f"time_mix_{name}": (1, 1, at.d) for name in ("key", "value", "receptance")}
    if set(parts) != {"key", "value", "receptance", "output"} or set(held) != {*mixes, "time_decay", "time_first"}:
        return None
    width = linear(parts["key"]).width_out if linear(parts["key"]) else 0
    if any(held[name] != shape for name, shape in mixes.items()) or held["time_decay"] != (width,) \
            or held["time_first"] != (width,) or linear(parts["output"]) != Linear(width, at.d, False) \
            or any(linear(parts[name]) != Linear(at.d, width, False) for name in ("key", "value", "receptance")):
        return None
    return Found(call("rwkv_time_mix", "d", width=width if width != at.d else None), mixer=True,
                 post_norm=False)


def channel_mix(module, at: Where) -> Found | None:
    parts, held = children(module), own(module)
    if set(parts) != {"key", "value", "receptance"} \
            or held != {"time_mix_key": (1, 1, at.d), "time_mix_receptance": (1, 1, at.d)}:
        return None
    key = linear(parts["key"])
    if key is None or key != Linear(at.d, key.width_out, False) or linear(parts["value"]) != Linear(
            key.width_out, at.d, False) or linear(parts["receptance"]) != Linear(at.d, at.d, False):
        return None
    return Found(call("rwkv_channel_mix", "d", f=key.width_out), mixer=False, post_norm=False)
