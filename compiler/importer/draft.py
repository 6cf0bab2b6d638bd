"""A draft model (transformers' Gemma4AssistantForCausalLM), its edges and how the check feeds it: it is fed its
target's embedding of the last token beside the target's last hidden state (2 × the target's width,
generation/candidate_generator.py), which a matrix projects into its own width before the layers
(pre_projection); after the final norm a second matrix projects its state back to the target's width
(post_projection) for the next draft step, beside the head."""

from __future__ import annotations

import inspect

from archcost.dsl import ast

from .reading.modules import Linear, linear, parameters_of
from .reading.spec import op, times, value


def edges(model, base, head, d: int) -> tuple[list[ast.Op], list[ast.Op], set[int]]:
    """(the projection in, the projection out, their parameters) of a CausalLM holding, beside its base model and
    head, a 2·b → d matrix and a d → b one; none of each for any other model. A module it holds beside them is
    not read here: the walk refuses it by name (E506), as Gemma 4's centroid-masked head (`masked_embedding`,
    use_ordered_embeddings: the E2B and E4B assistants) is not modelled."""
    matrices = {name: linear(child) for name, child in model.named_children() if child is not base
                and child is not head}
    outs = {name: shape for name, shape in matrices.items() if shape and shape.width_in == d and not shape.bias}
    for out_name, out in outs.items():
        ins = [name for name, shape in matrices.items() if shape == Linear(2 * out.width_out, d, False)]
        if len(ins) == 1:  # anything else it holds (a centroid-masked head) is left for the check to name
            width = out.width_out
            before = op("linear", ins[0], note="the target's embedding and last hidden state, side by side",
                        signature=ast.Signature(source=times(2, width), target=value("d")), **{"from": "tokens"})
            after = op("linear", out_name, note="the state handed to the next draft step, in the target's width",
                       signature=ast.Signature(source=value("d"), target=value(width)), **{"from": "final_norm"})
            held = parameters_of(model.get_submodule(ins[0])) | parameters_of(model.get_submodule(out_name))
            return [before], [after], held
    return [], [], set()


def drafts(model) -> bool:
    """Whether the model's forward reads the keys and values another model stored (`shared_kv_states`: Gemma 4's
    assistant reads its target's) rather than token ids and a cache of its own."""
    return "shared_kv_states" in inspect.signature(model.forward).parameters


def fed(model, batch: int, cached: int, new: int) -> dict:
    """A draft model's forward inputs for `new` positions of `batch` requests after `cached` ones, as transformers'
    candidate generator feeds it (generation/candidate_generator.py): its target's embedding beside its last
    hidden state (two target widths, backbone_hidden_size), no cache, and the keys and values of the target's
    last layer of each kind over the cached and new positions (a sliding kind's window − 1 kept and the new ones,
    as the target's cache returns them), in the heads and widths the draft model's attention reads them."""
    import torch

    device = next(model.parameters()).device
    text = model.config.get_text_config()
    kinds = {}
    for module in model.modules():
        kind = getattr(module, "layer_type", None)
        if kind is not None and getattr(module, "num_key_value_groups", None):
            window = getattr(module, "sliding_window", None)
            held = (min(cached, window - 1) if window else cached) + new
            kv_heads = text.num_attention_heads // module.num_key_value_groups
            kinds[kind] = tuple(torch.zeros(batch, kv_heads, held, module.head_dim, device=device) for _ in "kv")
    embeds = torch.zeros(batch, new, 2 * model.config.backbone_hidden_size, device=device)
    positions = torch.arange(cached, cached + new, device=device).unsqueeze(0).expand(batch, -1)
    return {"inputs_embeds": embeds, "position_ids": positions, "shared_kv_states": kinds, "use_cache": False}
