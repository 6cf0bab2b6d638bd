"""Zamba's shared transformer (std.shared_transformer; Glorioso et al. 2024, arXiv:2405.16712, fig. 2;
transformers' ZambaHybridLayer and Zamba2HybridLayer): a layer holding, beside its own Mamba layer and a d → d
projection, an attention-and-MLP block whose weights other layers hold too (tied), which reads the stream and
the input embeddings side by side. Read whole, as two calls: the shared block with the layer's projection
(`shared_transformer_input`, its set of weights named by `tied_sets`), then the Mamba mixer with its norm."""

from __future__ import annotations

from archcost.dsl import ast

from ..reading.modules import Linear, Norm, Where, activation, children, linear, norm, own
from ..reading.spec import call
from . import Recogniser, word

ATTENTION = ("q_proj", "k_proj", "v_proj", "o_proj")
MIXERS = ("mamba", "mamba2")  # the layer's own mixer: Zamba's multi-head Mamba, Zamba2's Mamba-2


def shared_transformer_layer(layer, at: Where) -> tuple[ast.BlockCall, ast.BlockCall] | None:
    parts = children(layer)
    if own(layer) or len(parts) != 3 or not at.tied:
        return None
    shared = [name for name, child in parts.items() if _set_of(child, at) is not None]
    projected = [name for name, child in parts.items() if linear(child) == Linear(at.d, at.d, False)]
    if len(shared) != 1 or len(projected) != 1 or shared == projected:
        return None
    (mixer_layer,) = set(parts) - {*shared, *projected}
    transformer = _transformer(parts[shared[0]], at, _set_of(parts[shared[0]], at))
    mixer = _mixer(parts[mixer_layer], at)
    if transformer is None or mixer is None:
        return None
    # the shared block reads the stream beside the input embeddings (the embedding call's output)
    source = ast.Keyword(name="from", value=ast.Tuple(items=[ast.Name(id="previous"), ast.Name(id="embedding")]))
    mixer_name, mixer_call = mixer
    return (transformer.model_copy(update={"args": [*transformer.args, source], "label": "transformer",
                                           "note": f"{type(layer).__name__}.{shared[0]} and .{projected[0]}"}),
            mixer_call.model_copy(update={"label": "mixer",
                                          "note": f"{type(parts[mixer_layer]).__name__}.{mixer_name}"}))


def _set_of(module, at: Where) -> str | None:
    """The name of the set of weights the module holds, when every parameter of it is tied."""
    names = {at.tied.get(id(p)) for p in module.parameters()}
    return next(iter(names)) if len(names) == 1 and None not in names else None


def _transformer(module, at: Where, weights: str) -> ast.BlockCall | None:
    """The shared block: a norm of 2·d, attention from 2·d to d, a norm of d and a GeGLU with adapters."""
    parts = children(module)
    norms = {name: norm(child) for name, child in parts.items()}
    found = sorted((n.block, n.width) for n in norms.values() if n is not None)
    if own(module) or found != [("rmsnorm", at.d), ("rmsnorm", 2 * at.d)]:
        return None
    attention = next((c for c in parts.values() if set(children(c)) >= set(ATTENTION)), None)
    ffn = next((c for c in parts.values() if "down_proj" in children(c)), None)
    if attention is None or ffn is None or len(parts) != 4:
        return None
    heads = _heads(attention, at)
    mlp = _geglu(ffn, at)
    if heads is None or mlp is None:
        return None
    adapted = heads.pop("adapters")
    if adapted and (adapted != (mlp["adapter_rank"], mlp["adapters"] or 1)):
        return None  # Q, K and V adapters of another rank or count than the MLP's
    return call("shared_transformer_input", "d", **heads, **mlp, rope=at.rope or None,
                attention_adapters=True if adapted else None, weights=weights)


def _heads(module, at: Where) -> dict | None:
    """q_heads, kv_heads and head_dim of an attention whose Q, K and V read 2·d and whose output writes d, and
    the (rank, count) of the low-rank adapters on Q, K and V (None without: use_shared_attention_adapter)."""
    shapes = {name: linear(children(module)[name]) for name in ATTENTION}
    q_heads, kv_heads = at.config.num_attention_heads, at.config.num_key_value_heads
    q, k, v, o = (shapes[name] for name in ATTENTION)
    if None in (q, k, v, o) or own(module) or any(p.bias for p in (q, k, v, o)) or q.width_out % q_heads:
        return None
    head_dim = q.width_out // q_heads
    extra = {name: child for name, child in children(module).items() if name not in ATTENTION}
    adapters = [_adapters(child, 2 * at.d, 2 * at.d) for child in extra.values()]
    if None in adapters or len(set(adapters)) > 1 or len(adapters) not in (0, 3):
        return None
    if (q, k, v, o) != (Linear(2 * at.d, q_heads * head_dim, False), Linear(2 * at.d, kv_heads * head_dim, False),
                        Linear(2 * at.d, kv_heads * head_dim, False), Linear(q_heads * head_dim, at.d, False)):
        return None
    return {"q_heads": q_heads, "kv_heads": kv_heads, "head_dim": head_dim,
            "adapters": adapters[0] if adapters else None}


def _adapters(module, width_in: int, width_out: int) -> tuple[int, int] | None:
    """(rank, count) of a list of low-rank adapters, each a width_in → rank → width_out pair (the list's
    identities are the other calls' slots)."""
    pairs = [[linear(m) for m in children(a).values()] for a in children(module).values()]
    rank = pairs[0][0].width_out if pairs and pairs[0] and pairs[0][0] is not None else None
    if rank is None or any(pair != [Linear(width_in, rank, False), Linear(rank, width_out, False)] for pair in pairs):
        return None
    return rank, len(pairs)


def _geglu(module, at: Where) -> dict | None:
    """f, and the adapters on the gate and up projections (fused, Zamba2's, or apart, Zamba's): each a d → rank
    → 2·f pair, one a call."""
    parts = children(module)
    down = linear(parts["down_proj"]) if "down_proj" in parts else None
    if down is None or down.bias or activation(module) != "gelu":
        return None
    f = down.width_in
    projections = [name for name in ("gate_up_proj", "gate_proj", "up_proj") if name in parts]
    shapes = sorted((linear(parts[name]) for name in projections), key=lambda s: (s is None, str(s)))
    if down != Linear(f, at.d, False) or shapes not in ([Linear(at.d, 2 * f, False)],
                                                         [Linear(at.d, f, False)] * 2):
        return None
    lists = [child for name, child in parts.items() if name not in (*projections, "down_proj")
             and any(True for _ in child.parameters())]
    adapted = _adapters(lists[0], at.d, 2 * f) if len(lists) == 1 else (None, 1)
    if len(lists) > 1 or adapted is None:
        return None
    rank, count = adapted
    return {"f": f, "adapter_rank": rank, "adapters": count if count > 1 else None}


def _mixer(module, at: Where) -> tuple[str, ast.BlockCall] | None:
    """The layer's own Mamba layer: a mixer (Mamba-2's, or Zamba's multi-head Mamba) and the RMSNorm before
    it; (the mixer's name, its call)."""
    from . import sublayer  # the registry's: found when the walk asks, after every recogniser is known

    parts = children(module)
    norms = [name for name, child in parts.items() if norm(child) == Norm("rmsnorm", at.d)]
    if own(module) or len(parts) != 2 or len(norms) != 1:
        return None
    (name,) = set(parts) - set(norms)
    found = sublayer(parts[name], at)
    return (name, found.call) if found is not None and found.mixer and found.call.name in MIXERS else None


RECOGNISER = Recogniser("shared_transformer", "layer", shared_transformer_layer,
                        writes=("shared_transformer_input",), kind_words=word("shared_transformer"))
