"""Multi-head latent attention recognised (std.attention.mla): DeepSeek-V2/V3's latent of kv_rank for keys and
values beside a shared positional key, queries through a q_rank latent (or one matrix), and what later models
add: DeepSeek Sparse Attention's lightning indexer (DeepSeek-V3.2, GLM-5; HY-V4's layers that reuse another's
picks), an output gate (HY-V4) or a gate a head (Ling), learned sinks (HY-V4), sliding layers and a normed
positional key (dots3), and queries with their gate from the latent and its norm side by side (AXK2)."""

from __future__ import annotations

from archcost.dsl import ast

from ..reading.modules import Found, Linear, Norm, Where, children, linear, norm, own
from ..reading.paths import option
from ..reading.spec import call, number
from . import Recogniser, word

K_ROPE_NORM = "k_rope_only_layernorm"


def mla(module, at: Where) -> Found | None:
    """Multi-head latent attention (DeepSeek-V2/V3): a latent of kv_rank for keys and values beside a shared
    positional key, queries through a q_rank latent (or one matrix); with DeepSeek Sparse Attention's indexer
    (DeepSeek-V3.2, GLM-5), each query reads the index_topk positions its indexer scores best."""
    parts = children(module)
    needed = {"kv_a_proj_with_mqa", "kv_a_layernorm", "kv_b_proj", "o_proj"}
    q_gate = "q_gate_proj" in parts  # AXK2: the queries and an output gate from [q_norm(q_a), q_a]
    query = {"q_a_proj", "q_a_layernorm", "q_gate_proj" if q_gate else "q_b_proj"} if "q_a_proj" in parts \
        else {"q_proj"}
    if set(parts) - {"indexer", "g_proj", "gate_proj", K_ROPE_NORM} != needed | query:
        return None
    sinks = own(module) == {"sinks": (module.num_heads,)}  # HY-V4's learned sink logits
    if own(module) and not sinks:
        return None
    gate = "g_proj" in parts and linear(parts["g_proj"]) == Linear(at.d, module.num_heads, False)
    # HY-V4's output gate: the sigmoid of a d → heads·v_dim projection on each value (mla's `gated`)
    gated = "gate_proj" in parts and linear(parts["gate_proj"]) == Linear(at.d, module.num_heads * module.v_head_dim,
                                                                         False)
    if ("g_proj" in parts and not gate) or ("gate_proj" in parts and not gated) or (q_gate and not _q_gate(module)):
        return None
    # dots3 RMS-normalises the shared positional key before its RoPE
    rope_norm = K_ROPE_NORM in parts
    if rope_norm and norm(parts[K_ROPE_NORM]) != Norm("rmsnorm", module.qk_rope_head_dim):
        return None
    window = getattr(module, "sliding_window", None)
    if any(linear(parts[name]) is None or linear(parts[name]).bias for name in needed | query if "norm" not in name):
        return None
    sparse = _indexer(parts["indexer"], at.d, module.q_lora_rank or at.d) if "indexer" in parts else {}
    if getattr(module, "skip_topk", False) and not sparse:  # HY-V4's shared layers: a previous indexer's picks
        sparse = {"over": ast.Call(func="top", args=[number(at.config.index_topk)])}
    if sparse is None:
        return None
    return Found(call("mla", "d", heads=module.num_heads, q_rank=module.q_lora_rank or 0,
                      kv_rank=module.kv_lora_rank, nope_dim=module.qk_nope_head_dim, rope_dim=module.qk_rope_head_dim,
                      v_dim=module.v_head_dim, cache="mla_cache", gated=gated or None, head_gate=gate or None,
                      window=window or None, k_rope_norm=rope_norm or None, sinks=sinks or None,
                      q_gate=q_gate or None, **sparse), mixer=True, post_norm=False)


def _q_gate(module) -> bool:
    """AXK2's q_gate_proj: 2·q_rank (the normed query latent and the latent) → the queries and a gate a value."""
    width = module.num_heads * (module.qk_nope_head_dim + module.qk_rope_head_dim + module.v_head_dim)
    return linear(module.get_submodule("q_gate_proj")) == Linear(2 * module.q_lora_rank, width, False)


def _indexer(module, d: int, q_width: int) -> dict | None:
    """The lightning indexer's arguments to `mla`: its query heads from the query latent, one LayerNorm'd key
    per position, a weight per head from the layer's input; None when the module holds anything else."""
    parts = children(module)
    heads, dim = module.n_heads, module.head_dim
    expected = {"wq_b": Linear(q_width, heads * dim, False), "wk": Linear(d, dim, False),
                "weights_proj": Linear(d, heads, False)}
    if set(parts) != {*expected, "k_norm"} or own(module) or norm(parts["k_norm"]) != Norm("layernorm", dim) \
            or any(linear(parts[name]) != shape for name, shape in expected.items()):
        return None
    return {"over": ast.Call(func="top", args=[number(module.index_topk)]), "index_heads": heads,
            "index_dim": dim, "index_record": INDEX_RECORD, "index_kernel": "index_kernel"}


# The format role of the indexer's cached keys: FP8 with an FP32 scale per 128 values, as DeepSeek's inference
# code keeps them (DeepSeek-V3.2-Exp inference/model.py: k_cache float8_e4m3fn, k_scale_cache float32 per 128)
# and the serving engines after it; transformers keeps them in the model's dtype, which the check compiles with.
INDEX_RECORD = "index_record"
INDEX_RECORD_FORMAT = "fp8_b128"



def mla_cache_option() -> ast.Option:
    """The spec's `mla_cache` option: the serving engines' absorbed path first, as std.attention.mla defaults to;
    the check runs transformers 5's reexpand."""
    return option("mla_cache", "compressed", "expanded", "reexpand",
                  note="compressed: the up-projections absorbed (the serving engines and the chapter); expanded: "
                       "per-head K and V cached; reexpand: transformers 5 (the latent cached, K and V rebuilt "
                       "each call)")


def index_kernel_option() -> ast.Option:
    """The spec's `index_kernel` option: DeepSeek's fused kernel first, as std.attention.mla defaults to;
    the check runs transformers' eager indexer."""
    return option("index_kernel", "fused", "eager",
                  note="fused: DeepSeek's kernel (the keys up to each query, the heads reduced in the kernel); "
                       "eager: transformers (every query scores every cached key, the heads summed by a matmul)")


def _options(calls: list[ast.BlockCall]) -> list[ast.Stmt]:
    """`mla_cache`, and `index_kernel` where a layer holds DeepSeek Sparse Attention's indexer."""
    indexed = any(isinstance(a, ast.Keyword) and a.name == "index_heads" for c in calls for a in c.args)
    return [mla_cache_option(), *([index_kernel_option()] if indexed else [])]

RECOGNISER = Recogniser("mla", "sublayer", mla, writes=("mla",), attention=True, kind_words=word("mla"),
                        options=_options)
