"""GQA and its variants recognised (std.attention.gqa's gqa, std.attention.gated_attention's gated_attention):
Q, K, V (apart or one fused matrix) and an output matrix, optional norms on Q and K (per head or over the whole
width), learned sinks, output gates; what shapes cannot say (windows, chunks, RoPE) is read from the attention
module's own attributes and the config's fields, per layer (semantics.py)."""

from __future__ import annotations

from dataclasses import dataclass

from archcost.dsl import ast

from ..reading.dynamic_mask import dynamic_mask
from ..reading.head_norms import qk_norm, weightless_v_norm
from ..reading.modules import Found, Linear, Where, children, linear, own, pick, shapes_of, sub_norm_of
from ..reading.spec import call, number
from . import Recogniser

QUERY = ("q_proj", "query", "q_lin", "Wq", "project_q", "wq")
KEY = ("k_proj", "key", "k_lin", "Wk", "project_k", "wk")
VALUE = ("v_proj", "value", "v_lin", "Wv", "project_v", "wv")
OUTPUT = ("o_proj", "out_proj", "dense", "c_proj", "Wo", "attention_out", "out_lin", "wo")
FUSED_QKV = ("qkv_proj", "query_key_value", "c_attn", "Wqkv")
Q_SCALE, GATE_SCALE = "sqk", "s_gate"  # the attention's own scales a channel (Dory's DoryAttention)


@dataclass(frozen=True)
class _Heads:
    q_heads: int
    kv_heads: int
    head_dim: int
    bias: bool          # on Q, K and V
    used: frozenset     # the children holding the projections
    v_dim: int = 0      # the values' width per head, where it is not head_dim (MiMo-V2-Flash)
    value_is_key: bool = False  # no V matrix: the values are the keys as projected (Gemma 4's full layers)
    reuse: bool = False         # no K or V matrix: the queries read keys and values another model holds


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
    if q and not (k or v or fused) and getattr(module, "is_kv_shared_layer", False) and shapes[q] is not None \
            and not shapes[q].width_out % head_dim and isinstance(getattr(module, "num_key_value_groups", None), int):
        # Gemma 4's assistant: every layer reads the keys and values of its kind its target stored; its K, V
        # heads are the query heads over the groups transformers repeats them by (eager_attention_forward)
        q_heads = shapes[q].width_out // head_dim
        if q_heads % module.num_key_value_groups:
            return None
        return _Heads(q_heads, q_heads // module.num_key_value_groups, head_dim, shapes[q].bias, frozenset({q}),
                      reuse=True)
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
    qk = qk_norm(module, parts, h.head_dim, h.q_heads, h.kv_heads, keys=not h.reuse) if h else None
    if h is None or qk is None:
        return None
    heads = getattr(module, "num_heads", None) or getattr(at.config, "num_attention_heads", None)
    gated = h.q_heads == 2 * heads and len(h.used) == 3 and "q_norm" in parts
    q_heads, head_dim = heads if gated else h.q_heads, h.head_dim
    sinks = own(module).get("sinks") == (q_heads,)
    o_norm = sub_norm_of(module, "attn_sub_norm", q_heads * (h.v_dim or head_dim))
    head_gate, out_gate = _gate(parts, at.d, q_heads), _gate(parts, at.d, q_heads * (h.v_dim or head_dim))
    gate_bias = bool(out_gate) and own(module).get("gate_bias") == (q_heads,)  # Beam: a bias a head on the gate
    scales = _scales(module, q_heads * head_dim, q_heads * (h.v_dim or head_dim) if out_gate else None)
    # the output projection's bias held by the attention module (GPT-NeoX-Japanese's dense_bias)
    held_bias = own(module).get("dense_bias") == (at.d,) and not shapes[out].bias
    masked = dynamic_mask(module, parts, h.kv_heads, head_dim)
    held = ({"sinks"} if sinks else set()) | ({"gate_bias"} if gate_bias else set()) | (
        {"dense_bias"} if held_bias else set()) | masked[1] | scales[1]
    if shapes[out] != Linear(q_heads * (h.v_dim or head_dim), at.d, shapes[out].bias) \
            or None in (o_norm, head_gate, out_gate) or set(own(module)) - held \
            or set(parts) - h.used - {out} - qk[1] - o_norm - head_gate - out_gate - masked[2]:
        return None
    if gated:
        return _gated(h, at, q_heads, not (shapes[out].bias or sinks or scales[1]) and qk[0] == {"qk_norm": True})
    return Found(call("gqa", "d", q_heads=q_heads, kv_heads=h.kv_heads, head_dim=head_dim, qkv_bias=h.bias or None,
                      o_bias=shapes[out].bias or held_bias or None, rope=None if at.rope else False,
                      window=at.window or None,
                      chunk=at.chunk or None, sinks=sinks or None, softcap=number(at.softcap) if at.softcap else None,
                      rotary=at.rotary(head_dim), v_dim=h.v_dim or None, o_norm=True if o_norm else None,
                      head_gate=True if head_gate else None, out_gate=True if out_gate else None,
                      gate_bias=gate_bias or None, temperature=True if at.temperature else None,
                      value="key" if h.value_is_key else None, v_norm=True if weightless_v_norm(module) else None,
                      kv_share="reuse" if h.reuse else None, **qk[0], **masked[0], **scales[0]),
                 mixer=True)


def _gated(h: _Heads, at: Where, q_heads: int, plain: bool) -> Found | None:
    """Q beside an output gate of its width (Qwen3-Next): std.attention.gated_attention, where the attention holds
    none of gqa's other mechanisms (`plain`: no output bias, sinks or scales of its own, a QK-norm)."""
    if not plain or h.bias or at.window or at.chunk or h.v_dim:
        return None
    return Found(call("gated_attention", "d", q_heads=q_heads, kv_heads=h.kv_heads, head_dim=h.head_dim,
                      rotary=at.rotary(h.head_dim)), mixer=True, post_norm=False)


def _scales(module, q_width: int, gate_width: int | None) -> tuple[dict, set]:
    """The attention's own learned scales a channel (Dory's DoryAttention, nGPT's s_qk): `sqk` on the queries
    after RoPE, `s_gate` on the output gate's logits (`gate_width`: None without a gate). Their keywords, and
    the names of those the module holds."""
    held = own(module)
    found = {name for name, width in ((Q_SCALE, q_width), (GATE_SCALE, gate_width))
             if width is not None and held.get(name) == (width,)}
    return {"q_scale": True if Q_SCALE in found else None,
            "gate_scale": True if GATE_SCALE in found else None}, found


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




def _kind_words(found) -> list[str]:
    """A run of layers is named by its attention's reach: sliding, chunked or full."""
    given = {a.name for a in found.args if isinstance(a, ast.Keyword)}
    return ["sliding" if "window" in given else "chunked" if "chunk" in given else "full"]


RECOGNISER = Recogniser("gqa", "sublayer", attention, writes=("gqa", "gated_attention"), attention=True,
                        kind_words=_kind_words)
