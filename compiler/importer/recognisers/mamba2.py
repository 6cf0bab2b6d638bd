"""Mamba-2's mixer recognised (std.attention.mamba2)."""

from __future__ import annotations

from ..reading.modules import Found, Linear, Where, children, linear, own
from ..reading.spec import call
from . import Recogniser, word


def mamba2(module, at: Where) -> Found | None:
    """Mamba-2's mixer (Mamba-2, Codestral, Nemotron-H, Bamba, Zamba2, Falcon-H1): one input projection, a
    depthwise conv over x, B and C, per-head dt_bias, A_log and D, a gated RMS norm (or the gate alone), the
    output projection."""
    parts = children(module)
    if set(parts) - {"norm"} != {"in_proj", "conv1d", "out_proj"} or set(own(module)) != {"dt_bias", "A_log", "D"}:
        return None
    heads, head_dim = module.num_heads, module.head_dim
    state, groups = module.ssm_state_size, module.n_groups
    inner, conv = heads * head_dim, heads * head_dim + 2 * groups * state
    projection, output = linear(parts["in_proj"]), linear(parts["out_proj"])
    if projection is None or output is None or projection != Linear(at.d, inner + conv + heads, projection.bias) \
            or own(parts["conv1d"])["weight"][0] != conv or output != Linear(inner, at.d, output.bias):
        return None
    if "norm" in parts and own(parts["norm"]) != {"weight": (inner,)}:
        return None
    conv_bias = "bias" in own(parts["conv1d"])
    return Found(call("mamba2", "d", heads=heads, head_dim=head_dim, state=state, groups=groups,
                      conv_kernel=module.conv_kernel_size, chunk=module.chunk_size, bias=projection.bias or None,
                      conv_bias=None if conv_bias else False, gated_norm=None if "norm" in parts else False,
                      out_bias=output.bias if output.bias != projection.bias else None), mixer=True, post_norm=False)


RECOGNISER = Recogniser("mamba2", "sublayer", mamba2, writes=("mamba2",), kind_words=word("mamba"))
