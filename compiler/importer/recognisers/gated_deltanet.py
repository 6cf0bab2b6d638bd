"""Gated DeltaNet recognised (std.attention.gated_deltanet), with the `linear_kernels` option its
spec gains."""

from __future__ import annotations

from archcost.dsl import ast

from ..reading.modules import Found, Where, children, own
from ..reading.paths import option
from ..reading.spec import call
from . import Recogniser, word


def gated_deltanet(module, at: Where) -> Found | None:
    """Gated DeltaNet (Qwen3-Next, Qwen3.5): Q, K, V, the gate z and the controls a, b projected (fused or apart),
    a short conv, the delta-rule state, a gated norm, the output projection."""
    parts = children(module)
    fused = {"in_proj_qkvz", "in_proj_ba"}
    apart = {"in_proj_qkv", "in_proj_z", "in_proj_a", "in_proj_b"}
    separate = {"q_proj", "k_proj", "v_proj", "a_proj", "b_proj", "g_proj"}  # OLMo Hybrid: one matrix each
    rest = set(parts) - {"conv1d", "norm", "out_proj", "o_norm", "o_proj"}
    if rest not in (fused, apart, separate) or set(own(module)) != {"dt_bias", "A_log"} \
            or len({"out_proj", "o_proj"} & set(parts)) != 1 or len({"norm", "o_norm"} & set(parts)) != 1:
        return None
    qk_heads, v_heads, head_dim = module.num_k_heads, module.num_v_heads, module.head_k_dim
    v_dim = module.head_v_dim
    return Found(call("gated_deltanet", "d", qk_heads=qk_heads, v_heads=v_heads, head_dim=head_dim,
                      conv_kernel=module.conv_kernel_size, kernels="linear_kernels",
                      v_dim=v_dim if v_dim != head_dim else None), mixer=True, post_norm=False)


def linear_kernels_option() -> ast.Option:
    """The spec's `linear_kernels` option (Gated DeltaNet's and KDA's prefill and step as the fused kernels or the
    torch reference compute them)."""
    return option("linear_kernels", "fused", "torch", note="torch: transformers' torch reference of the linear "
                  "attention (chunks padded, the step as elementwise work); fused: the kernels' own work")

RECOGNISER = Recogniser("gated_deltanet", "sublayer", gated_deltanet, writes=("gated_deltanet",),
                        kind_words=word("linear"), options=lambda _calls: [linear_kernels_option()])
