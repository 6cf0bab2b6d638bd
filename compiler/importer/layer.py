"""One decoder layer read as the stdlib's blocks (modeling.py walks the layers): each sublayer recognised
(recognisers/) with the norms before it (and after it, for a sandwich), sublayers side by side on one norm
(parallel.py), a layer read whole where a recogniser reads it so, and the refusal that names a module no
block accounts for.
"""

from __future__ import annotations

from dataclasses import replace
from typing import NamedTuple

from archcost.dsl import ast
from archcost.dsl.errors import ArchError, Diagnostic

from . import (
    attn_residuals,
    dense_and_moe,
    hyper,
    output_convs,
    parallel,
    recognisers,
    residual_modules,
    scaled_residual,
)
from .reading import per_layer
from .reading.modules import Found, holding, norm, own, tied_sets
from .reading.spec import call
from .recognisers import sublayer, whole_layer
from .semantics import where

EMBEDDING_NORMS = ("pre_ln",)  # a norm the first layer applies to the embeddings before its own (RWKV's pre_ln)


def read_layer(layer, path: str, index: int, at) -> tuple[ast.BlockCall, ...]:
    """The blocks of one decoder layer, each with its norms: one norm before each sublayer, or one before and one
    after (Gemma's sandwich)."""
    whole = whole_layer(layer, at)
    if whole is None:
        return _sublayers(layer, path, at)
    return whole if isinstance(whole, tuple) else (whole,)


def _sublayers(layer, path: str, at) -> tuple[ast.BlockCall, ...]:
    scaled = scaled_residual.scales_residuals(layer, at.d)
    if own(layer) and not scaled:
        raise unmapped(layer, path, "parameters of the layer itself")
    connections = hyper.around(layer, at.d, at.config)  # DeepSeek-V4's and HY-V4's attn_hc and ffn_hc
    held = residual_modules.residual_modules(layer, at.d)
    convs = output_convs.output_convs(layer, at.d)  # Inkling's attn_sconv and mlp_sconv
    depth = attn_residuals.around(layer, at.d)  # Inkling 2's attention_input and mlp_input
    calls = _read_sublayers(layer, path, at, (*connections, *(held.names if held else ()), *convs, *depth,
                                              *attn_residuals.input_norms(layer, depth)),
                            hyper.holds_norms(connections))
    calls = scaled_residual.scaled(calls, scaled) if scaled else calls
    calls = output_convs.with_output_convs(calls, convs) if convs and calls else calls
    calls = residual_modules.with_residual_modules(calls, held) if held and calls else calls
    calls = hyper.interleaved(calls, connections) if connections and calls else calls
    calls = attn_residuals.interleaved(calls, layer, depth) if depth and calls else calls
    if calls is None:
        raise unmapped(layer, path, "sublayers the stdlib's residual blocks cannot write so")
    return calls


def _read_sublayers(layer, path: str, at, apart: tuple[str, ...], normed_apart: bool) -> tuple[ast.BlockCall, ...]:
    norms, found, first = [], [], []
    side, skipped = per_layer.layer_call(layer, at.d, at.config.num_hidden_layers)
    beside, held = dense_and_moe.layer_call(layer, at)  # Gemma 4's MLP beside its MoE, their norms its own
    loose = _loose_ffn(layer, at)
    if loose is not None:
        found.append(("mlp", loose))
    for name, child in _unwrapped(layer, at):
        if (loose is not None and name in ("fc1", "fc2")) or name in (*skipped, *held, *apart):
            continue
        kind = norm(child)
        if kind is not None and name in EMBEDDING_NORMS:
            first.append(call(kind.block, "d", label=name))
            continue
        if kind is not None and kind.width in (None, at.d):
            norms.append(kind.block)
            continue
        if name.endswith("norm") and type(child).__name__ == "Identity":
            norms.append("none")  # a layer without that norm (ModernBERT's first: attn_norm is an Identity)
            continue
        if not any(True for _ in child.parameters()):
            continue  # dropout, an activation, an identity
        block = sublayer(child, at)
        if block is None:
            raise unmapped(child, f"{path}.{name}", "no stdlib block has this structure")
        found.append((name, block))
    found = recognisers.absorbed(found)
    found.sort(key=lambda item: not item[1].mixer)   # the mixer first, as the residual stream runs
    norms = norms or (["none"] * len(found) if normed_apart else [])  # a gated residual norms their inputs
    if not found:
        raise unmapped(layer, path, "no sublayer")
    together = parallel.shared_norm(found, norms)
    if together:
        return (_side_by_side(found[:together], norms[0], layer, path),
                *(_with_norms(name, block, norms[1:], len(found) - together, layer, path)
                  for name, block in found[together:]))
    if [f.mixer for _, f in found].count(True) > 1:
        raise unmapped(layer, path, "more than one mixer side by side in one layer, each with its own norm")
    return (*first, *_normed(found, norms, layer, path), *((beside,) if beside else ()), *((side,) if side else ()))


def _normed(found: list[tuple[str, Found]], norms: list[str], layer, path: str) -> list[ast.BlockCall]:
    """Each sublayer with its norms; one norm a sublayer of different kinds: each its own, in order (ModernBERT's
    first layer: none, then a LayerNorm)."""
    if len(norms) == len(found) and len(set(norms)) > 1:
        return [_with_norms(name, block, [kind], 1, layer, path) for (name, block), kind in zip(found, norms)]
    return [_with_norms(name, block, norms, len(found), layer, path) for name, block in found]


def _unwrapped(layer, at) -> list[tuple[str, object]]:
    """The layer's children in order, a wrapper of norms around one sublayer read as its parts (DBRX's
    norm_attn_norm: the attention's norm, the attention, and the feed-forward's norm after it)."""
    found = []
    for name, child in layer.named_children():
        parts = list(child.named_children())
        norms = [part for _, part in parts if norm(part) is not None]
        if not own(child) and norms and len(parts) - len(norms) == 1 and norm(child) is None \
                and sublayer(child, at) is None:
            found += [(f"{name}.{inner}", part) for inner, part in parts]
        else:
            found.append((name, child))
    return found


def _side_by_side(found: list[tuple[str, Found]], kind: str, layer, path: str) -> ast.BlockDef:
    calls = [(block.call, _label(block)) for _, block in found]
    defined = parallel.block(calls, kind, "side_by_side", type(layer).__name__)
    if defined is None or len({label for _, label in calls}) < len(calls):
        raise unmapped(layer, path, "sublayers side by side that the stdlib's blocks cannot write so")
    return defined


def _label(block: Found) -> str:
    return recognisers.label(block)


def _loose_ffn(layer, at) -> Found | None:
    """An MLP whose two matrices are children of the layer itself (OPT, BioGPT, XGLM: fc1 and fc2 beside the
    attention), read as one: the two matrices and the layer's activation, held together."""
    parts = dict(layer.named_children())
    if "fc1" not in parts or "fc2" not in parts:
        return None
    return sublayer(holding({name: child for name, child in parts.items() if name in ("fc1", "fc2")
                             or ("act" in name and not any(True for _ in child.parameters()))}), at)


def _with_norms(name: str, block: Found, norms: list[str], count: int, layer, path: str) -> ast.BlockCall:
    if len(set(norms)) > 1 or len(norms) not in (count, 2 * count) or (len(norms) == 2 * count and not block.post_norm):
        raise unmapped(layer, path, f"{len(norms)} norms for {count} sublayers")
    kind = norms[0]
    args = list(block.call.args)
    if kind != recognisers.default_norm(block.call.name):
        args.append(ast.Keyword(name="norm", value=ast.Name(id=kind)))
    if len(norms) == 2 * count:
        args.append(ast.Keyword(name="post_norm", value=ast.Bool(value=True)))
    return block.call.model_copy(update={"args": args, "label": _label(block),
                                         "note": f"{type(layer).__name__}.{name}"})


def unmapped(module, path: str, why: str) -> ArchError:
    shapes = ", ".join(f"{name} {list(shape)}" for name, shape in
                       ((n, tuple(p.shape)) for n, p in module.named_parameters())) or "no parameters"
    if len(shapes) > 400:
        shapes = shapes[:399] + "…"
    return refuse(f"cannot map `{path}` ({type(module).__name__}): {why}; its parameters: {shapes}")


def refuse(message: str) -> ArchError:
    return ArchError([Diagnostic(code="E506", message=message,
                                 hint="write this part of the spec by hand from the stdlib blocks, or import with "
                                      "the schema where archcost has one")])


class Read(NamedTuple):
    stack: list             # each layer's statements, in the order read
    order: tuple | None     # the passes' nodes (passes.read), or None for a list run once
    paths: list[str]        # the layers' paths, for the passes
    skip: set[str]          # the base model's children that hold the layers
    note: str
    base_path: str


def read_layers(model, config, base, layers, d: int) -> Read:
    """Each layer's blocks: of the layer list (path, modules), or of the passes (nodes, paths) passes.read
    gave."""
    rotary = any("rotary" in type(m).__name__.lower() for m in model.modules())
    if isinstance(layers[0], str):
        path, modules = layers
        tied = tied_sets(modules)
        stack = [read_layer(layer, f"{path}.{i}", i,
                            replace(where(config, d, i, attention_of(layer), rotary), tied=tied))
                 for i, layer in enumerate(modules)]
        stack = attn_residuals.counted(stack, modules)  # the states each block attention residual stacks
        return Read(stack, None, [], {path.rsplit(".", 1)[-1]}, f"{len(modules)} layers: {path}",
                     path.rsplit(".", 1)[0])
    order, paths = layers
    numbered = [(path, base.get_submodule(path), int(path.rsplit(".", 1)[-1])) for path in paths]
    stack = [read_layer(layer, path, i, where(config, d, i, attention_of(layer), rotary))
             for path, layer, i in numbered]
    return Read(stack, order, paths, {path.split(".", 1)[0] for path in paths}, "",
                 next(name for name, module in model.named_modules() if module is base))


def attention_of(layer):
    return next((child for name, child in layer.named_children() if "attn" in name or "attention" in name), None)
