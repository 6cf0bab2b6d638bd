"""Attention whose queries and output gate come from one fused matrix (MiniCPM5-MoE's MiniCPM5MoeAttention:
`q_gate_proj`, d → 2·q_heads·head_dim, each head's query beside its gate), with keys, values and the output
projection apart: std.attention.gqa's gqa with `out_gate` (the heads' output times the sigmoid of a d →
q_heads·head_dim projection), which holds the same matrices split in two."""

from __future__ import annotations

from ..reading.head_norms import qk_norm
from ..reading.modules import Found, Linear, Where, children, own, shapes_of
from ..reading.spec import call, number
from . import Recogniser

FUSED = "q_gate_proj"
APART = {"k_proj", "v_proj", "o_proj"}


def query_gate(module, at: Where) -> Found | None:
    parts = children(module)
    if FUSED not in parts or not set(parts) >= APART or own(module):
        return None
    shapes = shapes_of({name: parts[name] for name in (FUSED, *APART)})
    heads = getattr(at.config, "num_attention_heads", None)
    head_dim = getattr(module, "head_dim", None)
    if None in shapes.values() or not isinstance(heads, int) or not isinstance(head_dim, int):
        return None
    fused, k, v, o = shapes[FUSED], shapes["k_proj"], shapes["v_proj"], shapes["o_proj"]
    width = heads * head_dim
    if fused != Linear(at.d, 2 * width, fused.bias) or k.width_in != at.d or k != v or k.width_out % head_dim \
            or o != Linear(width, at.d, o.bias) or len({fused.bias, k.bias}) > 1:
        return None
    norms = qk_norm(module, parts, head_dim, heads, k.width_out // head_dim)
    if norms is None or set(parts) - {FUSED, *APART} - norms[1]:
        return None
    return Found(call("gqa", "d", q_heads=heads, kv_heads=k.width_out // head_dim, head_dim=head_dim,
                      qkv_bias=fused.bias or None, o_bias=o.bias or None, rope=None if at.rope else False,
                      window=at.window or None, chunk=at.chunk or None,
                      softcap=number(at.softcap) if at.softcap else None, rotary=at.rotary(head_dim),
                      out_gate=True, **norms[0]), mixer=True)


RECOGNISER = Recogniser("query_gate", "sublayer", query_gate, writes=("gqa",), attention=True)
