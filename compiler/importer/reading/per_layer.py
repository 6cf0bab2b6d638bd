"""Per-layer inputs recognised (Gemma 4's and Gemma 3n's Per-Layer Embeddings, std.per_layer): beside the
embedding, a vocab × layers·width table, a d → layers·width projection and an RMSNorm of width; in each layer,
after its feed-forward, a d → width gate, a width → d projection and an RMSNorm of d."""

from __future__ import annotations

from archcost.dsl import ast

from .modules import Linear, Norm, linear, norm, own
from .spec import call

MADE = ("embed_tokens_per_layer", "per_layer_model_projection", "per_layer_projection_norm")
READ = ("per_layer_input_gate", "per_layer_projection", "post_per_layer_input_norm")
LABEL = "per_layer"   # the spec's label of the inputs, read in every layer as `per_layer.inputs`


def inputs_call(base, d: int, layers: int) -> tuple[ast.BlockCall | None, tuple[str, ...]]:
    """`per_layer_inputs(vocab, layers, width, d) as per_layer` and the base model's children it accounts for."""
    parts = dict(base.named_children())
    if not all(name in parts for name in MADE):
        return None, ()
    vocab, packed = own(parts[MADE[0]]).get("weight", (0, 0))
    width = packed // layers
    if packed != layers * width or linear(parts[MADE[1]]) != Linear(d, packed, False) \
            or norm(parts[MADE[2]]) != Norm("rmsnorm", width):
        return None, ()
    return call("per_layer_inputs", vocab, layers, width, "d", label=LABEL, note="Per-Layer Embeddings"), MADE


def layer_call(layer, d: int, layers: int) -> tuple[ast.BlockCall | None, tuple[str, ...]]:
    """`per_layer_input(d, width, layers, from = (previous, per_layer.inputs))` and the layer's children it
    accounts for."""
    width = input_width(dict(layer.named_children()), d)
    if width is None:
        return None, ()
    flow = ast.Tuple(items=[ast.Name(id="previous"), ast.Name(id=f"{LABEL}.inputs")])
    return call("per_layer_input", "d", width, layers, label="per_layer_input", **{"from": flow}), READ


def input_width(parts: dict, d: int) -> int | None:
    """The width of a layer's slice of the per-layer inputs, from its READ children: a d → width gate, a
    width → d projection and an RMSNorm of d; None when the layer holds no such three."""
    if not all(name in parts for name in READ):
        return None
    gate = linear(parts[READ[0]])
    if gate is None or gate != Linear(d, gate.width_out, False) \
            or linear(parts[READ[1]]) != Linear(gate.width_out, d, False) or norm(parts[READ[2]]) != Norm("rmsnorm", d):
        return None
    return gate.width_out
