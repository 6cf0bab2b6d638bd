"""What a layer's attention sees, which shapes cannot say, read per layer from the config's own fields and the
attention module's attributes: sliding windows, local chunks, RoPE (skipped on some layers, or on part of
each head), soft caps on the scores, a temperature on the queries (Llama 4's, Inkling's log scaling).

The order of authority: the config's `layer_types` (what transformers' mask and cache code reads), then
the attention module's own `sliding_window` (set per layer by the modeling code), then the config's
`sliding_window` where the config class defines it and does not switch it off (`use_sliding_window`).
"""

from __future__ import annotations

import inspect

from .reading.modules import Where

# the layer kinds transformers' cache keeps a window for (cache_utils: a sliding layer, and Inkling's
# `hybrid_sliding`, whose sliding attention keeps convolution states beside its window)
SLIDING_KINDS = ("sliding_attention", "hybrid_sliding")


def defines(config, name: str) -> bool:
    """Whether the config's class has the field `name` (an unknown key a config.json holds becomes an attribute
    too, but no modeling code reads it)."""
    for cls in type(config).__mro__:
        if name in getattr(cls, "__annotations__", {}):
            return True
    init = type(config).__init__
    return name in inspect.signature(init).parameters if init is not object.__init__ else False


def where(config, d: int, index: int, attention, rotary_model: bool) -> Where:
    """The attention arguments of layer `index`: `attention` is its attention module (or None)."""
    kinds = getattr(config, "layer_types", None)
    kind = kinds[index] if isinstance(kinds, list | tuple) and len(kinds) > index else None
    window = chunk = 0
    if kind in SLIDING_KINDS:
        window = getattr(attention, "sliding_window", None) or getattr(config, "sliding_window", None) or 0
    elif kind == "chunked_attention":
        chunk = getattr(config, "attention_chunk_size", None) or 0
    elif kind is None and attention is not None and hasattr(attention, "sliding_window"):
        window = attention.sliding_window or 0
    elif kind is None and defines(config, "sliding_window") and getattr(config, "use_sliding_window", True):
        window = getattr(config, "sliding_window", None) or 0
    ropes = getattr(config, "no_rope_layers", None)
    rope = rotary_model and not (isinstance(ropes, list | tuple) and len(ropes) > index and not ropes[index])
    if attention is not None and isinstance(getattr(attention, "use_rope", None), bool | int):
        rope = rotary_model and bool(attention.use_rope)  # the layer's own switch (SmolLM3, Llama 4)
    # Llama4TextAttention scales its queries by a temperature of the position where it turns no RoPE
    temperature = bool(getattr(attention, "attn_temperature_tuning", False)) \
        and not getattr(attention, "use_rope", True)
    # InklingAttention's full layers scale their queries by 1 + α·log(max((position + 1) / n_floor, 1)) where the
    # config sets `log_scaling_n_floor`
    temperature = temperature or (not window and getattr(config, "log_scaling_n_floor", None) is not None
                                  and defines(config, "log_scaling_n_floor"))
    return Where(d=d, config=config, window=int(window), chunk=int(chunk), rope=rope,
                 rotary_factor=rotary_factor(config, kind),
                 softcap=getattr(config, "attn_logit_softcapping", None) or 0,
                 temperature=temperature)


def rotary_factor(config, kind: str | None = None) -> float:
    """The part of each head RoPE turns: `partial_rotary_factor`, at the top level, in `rope_parameters`, or in
    the layer kind's own entry of it (Gemma 4: `rope_parameters.full_attention.partial_rotary_factor`)."""
    factor = getattr(config, "partial_rotary_factor", None)
    parameters = getattr(config, "rope_parameters", None) or {}
    if factor is None and isinstance(parameters.get(kind), dict):
        factor = parameters[kind].get("partial_rotary_factor")
    if factor is None:
        factor = parameters.get("partial_rotary_factor", 1.0)
    return float(factor)
