"""Two-matrix MLPs recognised (std.ffn.mlp's gelu_mlp): up, an activation, down."""

from __future__ import annotations

from ..reading.feedforward import DOWN, SUB_NORM, UP, config_act, ffn_parts
from ..reading.modules import Found, Linear, Where, activation, children, pick
from ..reading.spec import call
from . import Recogniser


def plain_ffn(module, at: Where) -> Found | None:
    """A two-matrix MLP: up d → f, an activation, down f → d (GPT-2, OPT, StarCoder2)."""
    found = ffn_parts(module) if SUB_NORM not in children(module) else None
    if found is None:
        return None
    parts, shapes = found
    up, down = pick(parts, UP)[0], pick(parts, DOWN)[0]
    if type(module).__name__ == "Sequential" and list(parts) == ["0", "2"]:  # CTRL: Linear, activation, Linear
        up, down = "0", "2"
    if not (up and down) or set(parts) != {up, down} or shapes[up].width_in != at.d:
        return None
    f = shapes[up].width_out
    if shapes[down] != Linear(f, at.d, shapes[up].bias):
        return None
    act = activation(module) or config_act(at.config)
    if act not in ("gelu", "relu", "silu", "relu2", "xielu"):
        return None
    return Found(call("gelu_mlp", "d", f=f, bias=shapes[up].bias, act=act), mixer=False)


RECOGNISER = Recogniser("gelu_mlp", "sublayer", plain_ffn, writes=("gelu_mlp",), default_norm="layernorm")
