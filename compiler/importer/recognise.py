"""The stdlib's blocks recognised in a transformers decoder layer's modules, by structure: which projections
a sublayer holds and their shapes, its norms, its experts and router. Each recogniser returns the block call
and the modules it accounts for, or None when the module is not that block; a parameter no recogniser
accounts for stops the import (layer.py names it).

What shapes cannot say is read from the attention module's own attributes and the config's fields, per
layer (semantics.py): windows, chunks, RoPE.
"""

from __future__ import annotations

from dataclasses import dataclass

from .differential import diff_attention
from .dsv4 import dsv4_attention
from .dynamic_mask import dynamic_mask
from .feedforward import gated_ffn, moe, plain_ffn
from .griffin import recurrent_block
from .head_norms import qk_norm, weightless_v_norm
from .jetmoe import moa as jet_attention
from .jetmoe import moe as jet_moe
from .kda import kda
from .mla import mla
from .modules import Found, Linear, Norm, Where, children, linear, norm, own, pick, shapes_of, sub_norm
from .qsa import qsa_attention
from .rwkv import channel_mix, time_mix
from .spec import call, number
from .zaya import cca_attention, mlp_routed_moe

QUERY = ("q_proj", "query", "q_lin", "Wq", "project_q", "wq")
KEY = ("k_proj", "key", "k_lin", "Wk", "project_k", "wk")
VALUE = ("v_proj", "value", "v_lin", "Wv", "project_v", "wv")
OUTPUT = ("o_proj", "out_proj", "dense", "c_proj", "Wo", "attention_out", "out_lin", "wo")
FUSED_QKV = ("qkv_proj", "query_key_value", "c_attn", "Wqkv")


def sublayer(module, at: Where) -> Found | None:
    for recogniser in (attention, mla, gated_ffn, plain_ffn, moe, mamba2, gated_deltanet, mamba, short_conv,
                       lightning, diff_attention, kda, time_mix, channel_mix, jet_attention, jet_moe,
                       recurrent_block, dsv4_attention, cca_attention, mlp_routed_moe, qsa_attention):
        found = recogniser(module, at)
        if found is not None:
            return found
    inner = children(module)
    if len(inner) == 1 and not own(module):  # a wrapper around one block (GPT-Neo's attn.attention)
        return sublayer(next(iter(inner.values())), at)
    return None


@dataclass(frozen=True)
class _Heads:
    q_heads: int
    kv_heads: int
    head_dim: int
    bias: bool          # on Q, K and V
    used: frozenset     # the children holding the projections
    v_dim: int = 0      # the values' width per head, where it is not head_dim (MiMo-V2-Flash)
    value_is_key: bool = False  # no V matrix: the values are the keys as projected (Gemma 4's full layers)


def _projections(module, parts: dict, shapes: dict, at: Where) -> _Heads | None:
    """Q, K and V, apart (each a whole number of heads, K and V alike) or one fused matrix of q + 2·kv heads."""
    (q, k, v), fused = (pick(parts, names)[0] for names in (QUERY, KEY, VALUE)), pick(parts, FUSED_QKV)[0]
    heads = getattr(module, "num_heads", None) or getattr(at.config, "num_attention_heads", None)
    if not isinstance(heads, int) or heads <= 0:
        return None
    head_dim = getattr(module, "head_dim", None) or getattr(at.config, "head_dim", None) or at.d // heads
    if fused and shapes[fused] is not None and not shapes[fused].width_out % head_dim:
        total = shapes[fused].width_out // head_dim
        if (total - heads) % 2 or total <= heads:
            return None
        return _Heads(heads, (total - heads) // 2, head_dim, shapes[fused].bias, frozenset({fused}))
    if q and k and not v and getattr(module, "use_alternative_attention", False) \
            and None not in (shapes[q], shapes[k]) and not shapes[k].width_out % head_dim:
        # Gemma 4's attention_k_eq_v on its full layers: the keys' projection gives the values too
        return _Heads(shapes[q].width_out // head_dim, shapes[k].width_out // head_dim, head_dim, shapes[q].bias,
                      frozenset({q, k}), value_is_key=True)
    if not (q and k and v) or any(shapes[name] is None for name in (q, k, v)):
        return None
    if len({shapes[n].bias for n in (q, k, v)}) > 1 or shapes[k].width_in != shapes[v].width_in:
        return None
    if shapes[q].width_out % head_dim or shapes[k].width_out % head_dim:
        return None
    kv_heads = shapes[k].width_out // head_dim
    if shapes[v].width_out % kv_heads:
        return None
    v_dim = shapes[v].width_out // kv_heads
    return _Heads(shapes[q].width_out // head_dim, kv_heads, head_dim, shapes[q].bias, frozenset({q, k, v}),
                  0 if v_dim == head_dim else v_dim)


def attention(module, at: Where) -> Found | None:
    """GQA and its variants: Q, K, V (separate or one fused matrix) and an output matrix, optional norms on Q and
    K (per head or over the whole width), learned sinks; Q beside an output gate of its width (Qwen3-Next)."""
    parts, shapes = children(module), shapes_of(children(module))
    out = pick(parts, OUTPUT)[0]
    h = _projections(module, parts, shapes, at) if out is not None and shapes[out] is not None else None
    qk = qk_norm(module, parts, h.head_dim, h.q_heads, h.kv_heads) if h else None
    if h is None or qk is None:
        return None
    heads = getattr(module, "num_heads", None) or getattr(at.config, "num_attention_heads", None)
    gated = h.q_heads == 2 * heads and len(h.used) == 3 and "q_norm" in parts
    q_heads, head_dim = heads if gated else h.q_heads, h.head_dim
    sinks = own(module).get("sinks") == (q_heads,)
    o_norm = sub_norm(parts, "attn_sub_norm", q_heads * (h.v_dim or head_dim))
    head_gate, out_gate = _gate(parts, at.d, q_heads), _gate(parts, at.d, q_heads * (h.v_dim or head_dim))
    gate_bias = bool(out_gate) and own(module).get("gate_bias") == (q_heads,)  # Beam: a bias a head on the gate
    # the output projection's bias held by the attention module (GPT-NeoX-Japanese's dense_bias)
    held_bias = own(module).get("dense_bias") == (at.d,) and not shapes[out].bias
    masked = dynamic_mask(module, parts, h.kv_heads, head_dim)
    held = ({"sinks"} if sinks else set()) | ({"gate_bias"} if gate_bias else set()) | (
        {"dense_bias"} if held_bias else set()) | masked[1]
    if shapes[out] != Linear(q_heads * (h.v_dim or head_dim), at.d, shapes[out].bias) \
            or None in (o_norm, head_gate, out_gate) or set(own(module)) - held \
            or set(parts) - h.used - {out} - qk[1] - o_norm - head_gate - out_gate - masked[2]:
        return None
    if gated:
        if h.bias or shapes[out].bias or qk[0] != {"qk_norm": True} or sinks or at.window or at.chunk or h.v_dim:
            return None
        return Found(call("gated_attention", "d", q_heads=q_heads, kv_heads=h.kv_heads, head_dim=head_dim,
                          rotary=at.rotary(head_dim)), mixer=True, post_norm=False)
    return Found(call("gqa", "d", q_heads=q_heads, kv_heads=h.kv_heads, head_dim=head_dim, qkv_bias=h.bias or None,
                      o_bias=shapes[out].bias or held_bias or None, rope=None if at.rope else False,
                      window=at.window or None,
                      chunk=at.chunk or None, sinks=sinks or None, softcap=number(at.softcap) if at.softcap else None,
                      rotary=at.rotary(head_dim), v_dim=h.v_dim or None, o_norm=True if o_norm else None,
                      head_gate=True if head_gate else None, out_gate=True if out_gate else None,
                      gate_bias=gate_bias or None, temperature=True if at.temperature else None,
                      value="key" if h.value_is_key else None, v_norm=True if weightless_v_norm(module) else None,
                      **qk[0], **masked[0]),
                 mixer=True)


GATES = ("g_proj", "gate_proj")


def _gate(parts: dict, d: int, width: int) -> set | None:
    """A gate on the heads' output from the layer's input, `width` logits a row: one per head (Laguna's and
    LFM3's g_proj) or one per value (AFMoE's gate_proj). {name} when it is a d → width matrix without bias,
    empty when there is none of that width, None when a gate has another shape."""
    found = [name for name in GATES if name in parts]
    if not found:
        return set()
    shapes = {name: linear(parts[name]) for name in found}
    if any(shape is None or shape.width_in != d or shape.bias for shape in shapes.values()):
        return None
    return {name for name, shape in shapes.items() if shape.width_out == width}


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


def short_conv(module, at: Where) -> Found | None:
    """LFM2's gated short convolution: in_proj to B, C and x, a depthwise Conv1d over B·x, out_proj."""
    parts = children(module)
    taps = [child for name, child in parts.items() if name not in ("in_proj", "out_proj")]
    if len(parts) != 3 or len(taps) != 1 or type(taps[0]).__name__ != "Conv1d" or own(module):
        return None
    projection, output, weights = linear(parts.get("in_proj")), linear(parts.get("out_proj")), own(taps[0])
    if projection is None or projection != Linear(at.d, 3 * at.d, projection.bias) \
            or output != Linear(at.d, at.d, projection.bias) or weights.get("weight", ())[:2] != (at.d, 1):
        return None
    if ("bias" in weights) != projection.bias:
        return None
    return Found(call("short_conv", "d", kernel=weights["weight"][-1], bias=projection.bias or None), mixer=True)


def lightning(module, at: Where) -> Found | None:
    """MiniMax's lightning attention: one qkv matrix, an RMSNorm of the heads' output, a sigmoid gate from the
    layer's input, the output projection."""
    parts = children(module)
    heads, head_dim = getattr(module, "num_attention_heads", None), getattr(module, "head_dim", None)
    if set(parts) != {"norm", "qkv_proj", "out_proj", "output_gate"} or own(module) or not isinstance(heads, int) \
            or not isinstance(head_dim, int):
        return None
    width = heads * head_dim
    shapes = {name: linear(parts[name]) for name in ("qkv_proj", "out_proj", "output_gate")}
    if shapes != {"qkv_proj": Linear(at.d, 3 * width, False), "out_proj": Linear(width, at.d, False),
                  "output_gate": Linear(at.d, width, False)} or norm(parts["norm"]) != Norm("rmsnorm", width):
        return None
    return Found(call("lightning", "d", heads=heads, head_dim=head_dim, block_size=module.block_size),
                 mixer=True, post_norm=False)


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


def mamba(module, at: Where) -> Found | None:
    """Mamba-1's mixer (Mamba, Falcon-Mamba, Jamba with its norms on dt, B and C): in_proj to x and z, a
    depthwise conv, x_proj to dt, B and C, dt_proj back to the inner width, A_log and D, out_proj."""
    parts = children(module)
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
    conv_bias = "bias" in own(parts["conv1d"])
    return Found(call("mamba", "d", state=state, expand=inner // at.d, conv_kernel=module.conv_kernel_size,
                      dt_rank=rank, conv_bias=None if conv_bias else False, proj_bias=projection.bias or None,
                      inner_norms=True if norms else None), mixer=True, post_norm=False)
