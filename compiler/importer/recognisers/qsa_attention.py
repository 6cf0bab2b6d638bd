"""Qwen4-Exp's indexed attention (transformers' Qwen4ExpTextAttention with its Qwen4ExpTextQSAIndexer;
std.attention.qsa's qsa_attention): gated attention (Q beside a gate of its width, QK RMS norms) whose queries
read the positions of the key blocks an indexer scores best."""

from __future__ import annotations

from archcost.dsl import ast

from ..reading.modules import Found, Linear, Norm, Where, children, linear, norm, own
from ..reading.spec import call, number
from . import Recogniser, word

PARTS = {"q_proj", "k_proj", "v_proj", "o_proj", "q_norm", "k_norm", "indexer"}
INDEXER = {"index_qk_proj", "q_layernorm", "k_layernorm"}


def qsa_attention(module, at: Where) -> Found | None:
    parts, config = children(module), at.config
    if set(parts) != PARTS or own(module) or set(children(parts["indexer"])) != INDEXER or own(parts["indexer"]):
        return None
    q_heads, kv_heads = config.num_attention_heads, config.num_key_value_heads
    head_dim, index = getattr(module, "head_dim", None), parts["indexer"]
    heads, width = getattr(index, "index_n_heads", None), getattr(index, "index_head_dim", None)
    ratio, budget = getattr(index, "compress_ratio", None), getattr(index, "token_budget", None)
    if not all(isinstance(v, int) for v in (head_dim, heads, width, ratio, budget)) \
            or getattr(index, "index_kv_heads", None) != 1:
        return None
    inner = children(index)
    shapes = {"q_proj": Linear(at.d, 2 * q_heads * head_dim, False), "k_proj": Linear(at.d, kv_heads * head_dim, False),
              "v_proj": Linear(at.d, kv_heads * head_dim, False), "o_proj": Linear(q_heads * head_dim, at.d, False)}
    if any(linear(parts[name]) != shape for name, shape in shapes.items()) \
            or any(norm(parts[name]) != Norm("rmsnorm", head_dim) for name in ("q_norm", "k_norm")) \
            or linear(inner["index_qk_proj"]) != Linear(at.d, (heads + 1) * width, False) \
            or any(norm(inner[name]) != Norm("rmsnorm", width) for name in ("q_layernorm", "k_layernorm")):
        return None
    return Found(call("qsa_attention", "d", q_heads=q_heads, kv_heads=kv_heads, head_dim=head_dim, index_heads=heads,
                      index_dim=width, ratio=ratio, rotary=at.rotary(head_dim),
                      over=ast.Call(func="top", args=[number(budget)])), mixer=True, post_norm=False)


RECOGNISER = Recogniser("qsa_attention", "sublayer", qsa_attention, writes=("qsa_attention",), attention=True,
                        kind_words=word("indexed"))
