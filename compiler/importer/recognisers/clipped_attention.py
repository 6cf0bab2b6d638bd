"""GQA whose projections are modules of their own, its queries and keys clipped to an L2 bound (transformers'
Inkling2SlidingAttention and Inkling2FullAttention), recognised as std.attention.gqa's gqa with `qk_clip`,
`token_sinks`, `rel_clip` and the convolutions' `kv_conv`:

- q_proj holds the query matrix and a clip with a learned scale a head and channel (Inkling2ScaledL2Clip, or
  Inkling2LogScaledL2Clip where the layer scales its queries by position: gqa's `temperature`);
- k_proj and v_proj each hold their matrix, a residual short convolution (std.conv's residual_conv, or its
  taps made per token: Inkling2DynamicShortConvolution, std.conv's dynamic_conv) and a weightless norm (a clip
  on the keys, an RMS norm on the values: gqa's `v_norm`);
- o_proj holds the output matrix beside a gate of its width from the layer's input (gqa's `out_gate`);
- sink_proj, a d → heads matrix, makes every head's sink logit per token (`token_sinks`);
- relative_position_bias holds the d → heads·states projection, their clip (`rel_clip`) and the bank of
  states × extent bias-vs-distance profiles (gqa's `rel_states` and `rel_extent`).

The matrices are handed to gqa's own reading (recognisers/gqa.py) under the names it reads them by; the rest
is read here. The full layers' K and V read inputs of their own (`kv_norms`): the layer's norms say so
(attn_residuals.py), not the attention. Not counted (non-matrix, a few operations a value): the residual
convolutions' scale by 1/√(kernel + 1) and the full layers' log scaling of the relative states."""

from __future__ import annotations

from archcost.dsl import ast

from ..reading.modules import Found, Linear, Where, children, holding, linear, norm, own
from ..reading.residual_conv import residual_conv
from ..reading.spec import value
from . import Recogniser, gqa
from .gqa import attention

MATRIX, CLIP = "linear", "norm"            # a projection module's matrix and what follows it
DYNAMIC_TAPS, STATIC_TAPS = "weight_proj", "static_weight"


def clipped_attention(module, at: Where) -> Found | None:
    parts = children(module)
    heads, head_dim = getattr(module, "num_heads", None), getattr(module, "head_dim", None)
    if set(parts) != {"q_proj", "k_proj", "v_proj", "o_proj", "sink_proj", "relative_position_bias"} \
            or own(module) or not isinstance(heads, int) or not isinstance(head_dim, int):
        return None
    query, (keys, k_conv), (values, v_conv) = (_query(parts["q_proj"], heads, head_dim),
                                               _key_value(parts["k_proj"], at.d), _key_value(parts["v_proj"], at.d))
    gate = children(parts["o_proj"])
    rel = _relative(parts["relative_position_bias"], at.d, heads)
    if None in (query, keys, values, k_conv, v_conv, rel) or k_conv != v_conv or set(gate) != {"gate_proj", MATRIX} \
            or own(parts["o_proj"]) or linear(parts["sink_proj"]) != Linear(at.d, heads, False) \
            or not _weightless(parts["k_proj"], "clip") or not _weightless(parts["v_proj"], "rms"):
        return None
    holder = holding({"q_proj": query, "k_proj": keys, "v_proj": values, "o_proj": gate[MATRIX],
                      "gate_proj": gate["gate_proj"]})
    holder.num_heads, holder.head_dim = heads, head_dim
    found = attention(holder, at)
    if found is None or found.call.name != "gqa":
        return None
    extra = {"v_norm": True, "qk_clip": True, "token_sinks": True, "kv_conv": k_conv[0],
             "kv_conv_dynamic": k_conv[1] or None, "rel_states": rel[0], "rel_extent": rel[1], "rel_clip": True}
    args = [*found.call.args, *(ast.Keyword(name=name, value=value(item)) for name, item in extra.items()
                                if item is not None)]
    return Found(found.call.model_copy(update={"args": args}), mixer=True)


def _query(module, heads: int, head_dim: int):
    """The query matrix, where the module holds it and a clip of a learned scale a head and channel."""
    parts = children(module)
    if set(parts) != {MATRIX, CLIP} or own(module) or linear(parts[MATRIX]) is None:
        return None
    return parts[MATRIX] if _scaled_clip(parts[CLIP], heads, head_dim) else None


def _scaled_clip(module, heads: int, width: int) -> bool:
    """A clip with a learned scale (heads, width) and nothing else learned (its parts hold no parameters)."""
    return own(module) == {"scale": (heads, width)} and not children(module)


def _key_value(module, d: int) -> tuple[object, tuple[int, bool] | None] | tuple[None, None]:
    """K's or V's matrix, and its convolution's (taps, made per token)."""
    parts = children(module)
    matrix = linear(parts[MATRIX]) if MATRIX in parts else None
    if own(module) or set(parts) != {MATRIX, "sconv"} or matrix is None or matrix.width_in != d:
        return None, None
    conv = residual_conv(parts["sconv"])
    if conv is not None:
        return parts[MATRIX], (conv.kernel, False) if conv.channels == matrix.width_out else None
    return parts[MATRIX], _dynamic(parts["sconv"], d, matrix.width_out)


def _dynamic(module, d: int, channels: int) -> tuple[int, bool] | None:
    """Inkling2DynamicShortConvolution: static taps (kernel, channels) and a d → heads·kernel projection."""
    held, parts = own(module), children(module)
    taps = held.get(STATIC_TAPS, ())
    projected = linear(parts[DYNAMIC_TAPS]) if set(parts) == {DYNAMIC_TAPS} else None
    if set(held) != {STATIC_TAPS} or len(taps) != 2 or taps[1] != channels or projected is None \
            or projected.bias or projected.width_in != d or projected.width_out % taps[0]:
        return None
    return (taps[0], True) if channels % (projected.width_out // taps[0]) == 0 else None


def _weightless(module, kind: str) -> bool:
    """The projection's last part, a norm that holds nothing: an L2 clip (`clip`) or an RMS norm (`rms`)."""
    found = dict(module.named_children()).get(CLIP)
    if found is None or any(True for _ in found.parameters()):
        return False
    read = norm(found)
    return "clip" in type(found).__name__.lower() if kind == "clip" else \
        read is not None and read.block == "rmsnorm_unscaled"


def _relative(module, d: int, heads: int) -> tuple[int, int] | None:
    """(states, extent): the d → heads·states projection, their scaled clip and the states × extent bank."""
    parts, bank = children(module), own(module)
    if set(parts) != {MATRIX, CLIP} or set(bank) != {"proj"} or len(bank["proj"]) != 2:
        return None
    states, extent = bank["proj"]
    if linear(parts[MATRIX]) != Linear(d, heads * states, False) or not _scaled_clip(parts[CLIP], heads, states):
        return None
    return states, extent


# its calls are gqa's: named as gqa names a run of layers (the writer of `gqa` the walk asks may be either)
RECOGNISER = Recogniser("clipped_attention", "sublayer", clipped_attention, writes=("gqa",), attention=True,
                        kind_words=gqa.RECOGNISER.kind_words)
