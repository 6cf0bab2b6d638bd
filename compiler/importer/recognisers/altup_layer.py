"""Gemma 3n (transformers' Gemma3nTextDecoderLayer; std.altup's gemma3n_layer): each layer read as one
block, as its parts only work together: AltUp's predict before the layer and correct after it (altup), LAuReL
beside the attention (laurel), the sandwiched GeGLU with its Gaussian top-k in the first layers, the
per-layer input, and attention that either holds its keys and values or reads those an earlier layer of its
kind stored (is_kv_shared_layer); and the model's AltUp projections of the embedding in and out."""

from __future__ import annotations

from archcost.dsl import ast

from ..reading.modules import Linear, Norm, Where, activation, children, linear, norm, own
from ..reading.per_layer import LABEL, READ, input_width
from ..reading.spec import call
from . import Recogniser

NORMS = ("input_layernorm", "post_attention_layernorm", "pre_feedforward_layernorm", "post_feedforward_layernorm")
PARTS = {"self_attn", "mlp", "altup", "laurel", *NORMS, *READ}


def layer_call(layer, at: Where) -> ast.BlockCall | None:
    """`gemma3n_layer(d, …, from = (previous, per_layer.inputs))` for a Gemma 3n decoder layer, else None."""
    parts, d, layers = children(layer), at.d, at.config.num_hidden_layers
    if set(parts) != PARTS or own(layer) or any(norm(parts[name]) != Norm("rmsnorm", d) for name in NORMS):
        return None
    attention, streams = _attention(parts["self_attn"], at), _altup(parts["altup"], d)
    f, rank, width = _mlp(parts["mlp"], d), _laurel(parts["laurel"], d), input_width(parts, d)
    if None in (attention, streams, f, rank, width):
        return None
    sparse = (getattr(parts["mlp"], "activation_sparsity", 0) or 0) > 0
    flow = ast.Tuple(items=[ast.Name(id="previous"), ast.Name(id=f"{LABEL}.inputs")])
    q_heads, kv_heads, head_dim, share = attention
    return call("gemma3n_layer", "d", q_heads=q_heads, kv_heads=kv_heads, head_dim=head_dim, f=f, layers=layers,
                per_layer_width=width, laurel_rank=rank, window=at.window or None,
                kv_share=share, sparse=True if sparse else None, streams=streams if streams != 4 else None,
                label="layer", note=type(layer).__name__, **{"from": flow})


def _attention(module, at: Where) -> tuple | None:
    """(q_heads, kv_heads, head_dim, own | reuse)."""
    parts, head_dim = children(module), getattr(module, "head_dim", None)
    q_heads, kv_heads = at.config.num_attention_heads, at.config.num_key_value_heads
    reuse = bool(getattr(module, "is_kv_shared_layer", False))
    expected = {"q_proj", "q_norm", "o_proj"} | (set() if reuse else {"k_proj", "v_proj", "k_norm"})
    if set(parts) != expected or own(module) or not isinstance(head_dim, int) \
            or linear(parts["q_proj"]) != Linear(at.d, q_heads * head_dim, False) \
            or linear(parts["o_proj"]) != Linear(q_heads * head_dim, at.d, False) \
            or norm(parts["q_norm"]) != Norm("rmsnorm", head_dim):
        return None
    if not reuse and (any(linear(parts[n]) != Linear(at.d, kv_heads * head_dim, False) for n in ("k_proj", "v_proj"))
                      or norm(parts["k_norm"]) != Norm("rmsnorm", head_dim)):
        return None
    return q_heads, kv_heads, head_dim, "reuse" if reuse else None


def _altup(module, d: int) -> int | None:
    """The streams of an AltUp module: its router d → s, its s → s² prediction and s → s correction."""
    parts = children(module)
    router = linear(parts.get("modality_router")) if "modality_router" in parts else None
    streams = router.width_out if router is not None else 0
    expected = {"prediction_coefs": Linear(streams, streams * streams, False),
                "correction_coefs": Linear(streams, streams, False), "modality_router": Linear(d, streams, False)}
    if set(parts) != {*expected, "router_norm"} or own(module) != {"correct_output_scale": (d,)} \
            or any(linear(parts[name]) != shape for name, shape in expected.items()) \
            or norm(parts["router_norm"]) != Norm("rmsnorm", d):
        return None
    return streams


def _mlp(module, d: int) -> int | None:
    """f of the GeGLU: gate and up d → f, down f → d, a tanh GELU."""
    parts = children(module)
    gate = linear(parts["gate_proj"]) if set(parts) == {"gate_proj", "up_proj", "down_proj"} else None
    if gate is None or gate != Linear(d, gate.width_out, False) or linear(parts["up_proj"]) != gate \
            or linear(parts["down_proj"]) != Linear(gate.width_out, d, False) or activation(module) != "gelu":
        return None
    return gate.width_out


def _laurel(module, d: int) -> int | None:
    """The rank of LAuReL's d → rank → d branch and its RMS norm."""
    parts = children(module)
    left = linear(parts["linear_left"]) if set(parts) == {"linear_left", "linear_right", "post_laurel_norm"} else None
    if left is None or left != Linear(d, left.width_out, False) \
            or linear(parts["linear_right"]) != Linear(left.width_out, d, False) \
            or norm(parts["post_laurel_norm"]) != Norm("rmsnorm", d):
        return None
    return left.width_out


def _kind_words(found: ast.BlockCall) -> list[str]:
    """A run of layers is named by its attention's reach and what it shares: sliding or full, shared, sparse."""
    given = {a.name for a in found.args if isinstance(a, ast.Keyword)}
    return ["sliding" if "window" in given else "full",
            *(word for key, word in (("kv_share", "shared"), ("sparse", "sparse")) if key in given)]

RECOGNISER = Recogniser("altup_layer", "layer", layer_call, writes=("gemma3n_layer",), kind_words=_kind_words)
