"""Differential attention (DiffLlama; Ye et al. 2024, arXiv:2410.05258) recognised in a transformers layer:
GQA's four projections, the four λ vectors of head_dim as the module's own parameters, a weightless
RMSNorm over each head pair (std.attention.diff_attention)."""

from __future__ import annotations

from archcost.dsl import ast

from ..reading.modules import Found, Linear, Norm, Where, children, linear, norm, own
from ..reading.paths import option
from ..reading.spec import call
from . import Recogniser

LAMBDAS = ("lambda_q1", "lambda_k1", "lambda_q2", "lambda_k2")
KERNEL = "diff_kernel"  # the spec's option: the paper's kernel or transformers' two attention calls


def diff_attention(module, at: Where) -> Found | None:
    parts, held = children(module), own(module)
    head_dim, group_norm = getattr(module, "head_dim", None), getattr(module, "groupnorm", None)
    if set(parts) != {"q_proj", "k_proj", "v_proj", "o_proj"} or not isinstance(head_dim, int) \
            or held != {name: (head_dim,) for name in LAMBDAS} or group_norm is None \
            or norm(group_norm) != Norm("rmsnorm_unscaled", None):
        return None
    q, k, v, o = (linear(parts[name]) for name in ("q_proj", "k_proj", "v_proj", "o_proj"))
    if None in (q, k, v, o) or k != v or q.width_out % head_dim or k.width_out % head_dim \
            or o != Linear(q.width_out, at.d, q.bias) or len({q.bias, k.bias}) > 1 or at.window or at.chunk:
        return None
    return Found(call("diff_attention", "d", q_heads=q.width_out // head_dim, kv_heads=k.width_out // head_dim,
                      head_dim=head_dim, qkv_bias=q.bias or None, kernel=KERNEL), mixer=True, post_norm=False)


def diff_kernel_option() -> ast.Option:
    return option(KERNEL, "paper", "two_calls", note="two_calls: transformers' DiffLlamaAttention, two whole "
                  "attention calls (QKᵀ twice); paper: the score maps subtracted before one AV")


RECOGNISER = Recogniser("diff_attention", "sublayer", diff_attention, writes=("diff_attention",),
                        options=lambda _calls: [diff_kernel_option()])
