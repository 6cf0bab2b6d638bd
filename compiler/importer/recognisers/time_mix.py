"""RWKV-4's time mix recognised (transformers' RwkvSelfAttention; std.attention.rwkv's rwkv_time_mix): the
token-shift mixes and the decay vectors as the module's own parameters, the K, V, R projections beside them."""

from __future__ import annotations

from ..reading.modules import Found, Linear, Where, children, linear, own
from ..reading.spec import call
from . import Recogniser, word


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


RECOGNISER = Recogniser("time_mix", "sublayer", time_mix, writes=("rwkv_time_mix",), default_norm="layernorm",
                        kind_words=word("rwkv"))
