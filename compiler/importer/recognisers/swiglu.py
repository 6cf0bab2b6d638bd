"""Gated feed-forwards recognised (std.ffn.swiglu's swiglu, geglu and relu2_glu): gate and up apart or fused,
the down projection, an optional norm of the gated product (with a scale, or without: Dory's), an optional
learned scalar on the output, optional learned scales a channel on gate and up (Dory's DoryMLP)."""

from __future__ import annotations

from ..reading.feedforward import (
    DOWN,
    FUSED_GATE_UP,
    GATE,
    GATE_UP_SCALES,
    GATED_BLOCKS,
    OUT_SCALE,
    SUB_NORM,
    UP,
    config_act,
    ffn_parts,
    forward_act,
)
from ..reading.modules import Found, Linear, Where, activation, own, pick, sub_norm_of
from ..reading.spec import call
from . import Recogniser


def gated_ffn(module, at: Where, width: int | None = None) -> Found | None:
    """SwiGLU or GeGLU: gate and up (separate or one fused matrix) d → f, down f → d."""
    found = ffn_parts(module, scaled=True)
    if found is None:
        return None
    parts, shapes = found
    gate, up, down = pick(parts, GATE)[0], pick(parts, UP)[0], pick(parts, DOWN)[0]
    d = width or at.d
    fused = pick(parts, FUSED_GATE_UP)[0]
    down = down or ("output_linear" if fused == "input_linear" else None)
    if fused and down and set(parts) == {fused, down}:
        f = shapes[down].width_in
        if shapes[fused] != Linear(d, 2 * f, shapes[down].bias):
            return None
    elif gate and up and down and set(parts) == {gate, up, down}:
        f = shapes[gate].width_out
        if shapes[gate] != shapes[up] or shapes[gate].width_in != d or shapes[down] != Linear(f, d, shapes[gate].bias):
            return None
    else:
        return None
    block = GATED_BLOCKS.get(activation(module) or config_act(at.config) or forward_act(module))
    down_norm = sub_norm_of(module, SUB_NORM, f)
    scaled, gate_up = OUT_SCALE in own(module), own(module) == {name: (f,) for name in GATE_UP_SCALES}
    if block is None or down_norm is None or (down_norm and block == "geglu") \
            or ((scaled or gate_up) and block != "swiglu") or (own(module) and not (scaled or gate_up)):
        return None
    return Found(call(block, "d", f=f, bias=shapes[down].bias or None, down_norm=True if down_norm else None,
                      out_scale=scaled or None, gate_up_scale=gate_up or None), mixer=False)


RECOGNISER = Recogniser("swiglu", "sublayer", gated_ffn, writes=tuple(GATED_BLOCKS.values()))
