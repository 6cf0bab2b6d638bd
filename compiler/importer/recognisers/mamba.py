"""Mamba-1's mixer recognised (std.attention.mamba)."""

from __future__ import annotations

from ..reading.modules import Found, Linear, Where, children, linear, own
from ..reading.spec import call
from . import Recogniser


def mamba(module, at: Where) -> Found | None:
    """Mamba-1's mixer (Mamba, Falcon-Mamba, Jamba with its norms on dt, B and C): in_proj to x and z, a
    depthwise conv, x_proj to dt, B and C, dt_proj back to the inner width, A_log and D, out_proj."""
    parts = children(module)
    if "x_proj_weight" in own(module):
        return _multi_head(module, parts, at)
    norms = {"dt_layernorm", "b_layernorm", "c_layernorm"} & set(parts)
    if set(parts) - norms != {"in_proj", "conv1d", "x_proj", "dt_proj", "out_proj"} or norms not in (set(), {
            "dt_layernorm", "b_layernorm", "c_layernorm"}) or set(own(module)) != {"A_log", "D"}:
        return None
    inner, state, rank = module.intermediate_size, module.ssm_state_size, module.time_step_rank
    projection = linear(parts["in_proj"])
    if inner % at.d or projection is None or projection.width_out != 2 * inner \
            or own(module)["A_log"] != (inner, state):
        return None
    if linear(parts["x_proj"]) != Linear(inner, rank + 2 * state, False) or linear(parts["dt_proj"]) != Linear(
            rank, inner, True) or linear(parts["out_proj"]) != Linear(inner, at.d, projection.bias):
        return None
    return _found(module, parts, at, projection, inner_norms=True if norms else None)


def _multi_head(module, parts: dict, at: Where) -> Found | None:
    """Zamba's multi-head Mamba (ZambaMambaMixer): the inner channels in n_mamba_heads heads, each with an
    x_proj and a dt_proj of its own, held as (heads, …) parameters of the mixer itself."""
    heads, head_dim = module.n_mamba_heads, module.mamba_head_dim
    inner, state, rank = module.intermediate_size, module.ssm_state_size, module.time_step_rank
    projection = linear(parts.get("in_proj"))
    expected = {"x_proj_weight": (heads, rank + 2 * state, head_dim), "dt_proj_weight": (heads, head_dim, rank),
                "dt_proj_bias": (heads, head_dim), "A_log": (heads, head_dim, state), "D": (heads, head_dim)}
    if set(parts) != {"in_proj", "conv1d", "out_proj"} or own(module) != expected or heads * head_dim != inner \
            or inner % at.d or projection is None or projection.width_out != 2 * inner \
            or linear(parts["out_proj"]) != Linear(inner, at.d, projection.bias) \
            or own(parts["conv1d"])["weight"][0] != inner:
        return None
    return _found(module, parts, at, projection, ssm_heads=heads)


def _found(module, parts: dict, at: Where, projection: Linear, **extra) -> Found:
    """The mixer's `mamba` call, from its sizes and its matrices' biases, with what one kind adds (`extra`)."""
    conv_bias = "bias" in own(parts["conv1d"])
    return Found(call("mamba", "d", state=module.ssm_state_size, expand=module.intermediate_size // at.d,
                      conv_kernel=module.conv_kernel_size, dt_rank=module.time_step_rank,
                      conv_bias=None if conv_bias else False, proj_bias=projection.bias or None, **extra),
                 mixer=True, post_norm=False)


RECOGNISER = Recogniser("mamba", "sublayer", mamba, writes=("mamba",))
