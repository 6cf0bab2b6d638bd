"""RWKV-4's channel mix recognised (transformers' RwkvFeedForward; std.attention.rwkv's rwkv_channel_mix):
the token-shift mixes as the module's own parameters, the K, V and R projections beside them."""

from __future__ import annotations

from ..reading.modules import Found, Linear, Where, children, linear, own
from ..reading.spec import call
from . import Recogniser


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


RECOGNISER = Recogniser("channel_mix", "sublayer", channel_mix, writes=("rwkv_channel_mix",), default_norm="layernorm")
