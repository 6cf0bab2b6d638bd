"""The import from the modeling code: transformers builds the config's model on the meta device, the walk
below recognises the stdlib's blocks in its module tree (recognisers/), writes the spec with them, and
checks the spec against the model it came from (check.py) before anything is printed.

Every parameter of the text model must be accounted for by a recognised block; the first one that is not
stops the import with its module's path, class and parameter shapes, rather than a spec that costs a
different model.
"""

from __future__ import annotations

from dataclasses import dataclass

from archcost.dsl import ast

from . import altup, attn_residuals, draft, heads, hyper, meta, passes, recognisers, residual_modules
from .config import Config
from .hybrid import logit_softcap
from .layer import EMBEDDING_NORMS, read_layers, refuse, unmapped
from .reading import per_layer
from .reading.modules import norm, own, parameters_of
from .reading.paths import transformers_paths
from .reading.spec import Layer, Spec, binding, call


@dataclass(frozen=True)
class Walked:
    """The spec, and what it was read from (for the header and the check)."""

    spec: Spec
    model_class: str
    paths: tuple[tuple[str, str], ...]   # the spec's execution paths that match how transformers runs the model
    params: int                          # the text model's parameters, as transformers holds them
    ran_on_meta: bool = False            # its forward ran on the meta device (traced for its passes)


def walk(built: meta.Built) -> Walked:
    model, config = built.model, built.config
    embedding, head = model.get_input_embeddings(), model.get_output_embeddings()
    found = _layer_list(model, config)
    base = _base(model, found, embedding)
    d = embedding.weight.shape[1]
    calls = passes.traced(meta.every_position(model), base)
    looped = passes.read(base, calls)
    if found is None and looped is None:
        raise refuse(f"no list of {config.num_hidden_layers} layers (num_hidden_layers) in {type(model).__name__}")
    read = read_layers(model, config, base, found if looped is None else looped, d)
    stack, order, read_paths, skip, note, base_path = read
    stack, defined = _defined_apart(stack)
    kinds = _kind_names(stack)
    stack = _noted_once(stack)
    towers, (transform, transformed) = _towers(base), heads.transform(model, base, head, d)
    before, after = _edges(base, (base_path, skip), embedding, head, d, config, towers)
    scored = next(i for i, stmt in enumerate(after) if getattr(stmt, "name", None) == "lm_head")
    after[scored:scored] = transform
    fed, handed, projections = draft.edges(model, base, head, d)
    if fed:
        _fed_by_target(before, after, scored, fed, handed)
    text = parameters_of(base) | parameters_of(head) | transformed | projections
    if built.wrapper is None:
        _nothing_outside(model, text)
    text -= {p for tower in towers.values() for p in parameters_of(tower)}
    header = _header(model, towers, looped is not None)
    spec = Spec(header=header, bindings=[binding("d", d), binding("vocab", embedding.weight.shape[0]),
                                     *_options([*stack, *(tuple(b.body) for b in defined)])],
                before=before, layers=[Layer(kind, stmts) for kind, stmts in zip(kinds, stack)], after=after,
                note=note, defined=defined,
                passes=None if order is None else passes.written(order, dict(zip(read_paths, zip(kinds, stack)))))
    paths = transformers_paths(spec.bindings)
    count = sum(p.numel() for p in {id(p): p for p in model.parameters() if id(p) in text}.values())
    return Walked(spec, type(model).__name__, paths, count, calls is not None)


def _fed_by_target(before: list, after: list, scored: int, fed: list, handed: list) -> None:
    """A draft model scores every position it is fed (its forward keeps no logits_to_keep); its input is the
    target's embedding, scaled there: its own table is held for the tied head, never looked up or scaled."""
    before[:] = [before[0].model_copy(update={"args": [*before[0].args, ast.Keyword(
        name="idle", value=ast.Bool(value=True))]}), *fed,
        *(stmt for stmt in before[1:] if getattr(stmt, "label", None) != "embed_scale")]
    after[scored] = after[scored].model_copy(update={"args": [*after[scored].args, ast.Keyword(
        name="rows", value=ast.Name(id="m"))]})
    after.append(*handed)


def _header(model, towers: dict, looped: bool) -> list[str]:
    header = [f"The text model: its {', '.join(towers)} (the image and audio encoders, run only on those inputs) "
              "is not counted."] if towers else []
    header += _buffered_router_biases(model)
    if looped:
        header.append("Its forward runs some layers again with the same weights: each `loop` below is read from the "
                      "order in which one traced prefill called the modules, and counts its body's work and cache "
                      "once a pass and its weights once. The forward's own arithmetic between those calls (the adds "
                      "that join one pass's state to the next) is in no module and is not counted.")
    return header


def _buffered_router_biases(model) -> list[str]:
    """The header line for routers whose score-correction bias transformers registers as a buffer: not a
    parameter there, so not one of this spec's (the check meets transformers' count), though the checkpoint
    stores it and a spec written with `router_bias = true` counts it (issue 45: one model, one number, or the
    difference said)."""
    held = sum(b.numel() for name, b in model.named_buffers() if name.rsplit(".", 1)[-1] == "e_score_correction_bias")
    if not held:
        return []
    return [f"The routers' score-correction biases (e_score_correction_bias, {held:,} values) are buffers in "
            "transformers, not parameters: this spec leaves them out, as transformers counts; the checkpoint "
            "stores them, and a spec that writes `router_bias = true` counts them."]


def _nothing_outside(model, text: set[int]) -> None:
    """Every parameter of a CausalLM is in its base model or its head (a multi-token-prediction module, say,
    would not be)."""
    for name, parameter in model.named_parameters():
        if id(parameter) not in text:
            owner = model.get_submodule(name.rsplit(".", 1)[0]) if "." in name else model
            raise unmapped(owner, name.rsplit(".", 1)[0], "outside the layers, the embedding and the head")


def _defined_apart(stack: list[tuple]) -> tuple[list[tuple], list[ast.BlockDef]]:
    """The side-by-side blocks the layers hold, defined once each (named in order), and the layers calling
    them."""
    defined: dict[str, ast.BlockDef] = {}
    layers = []
    for layer in stack:
        calls = []
        for item in layer:
            if isinstance(item, ast.BlockDef):
                key = ast.Module(path="", blocks=[item]).model_dump_json()
                name = defined[key].name if key in defined else f"side_by_side{len(defined) + 1 if defined else ''}"
                defined.setdefault(key, item.model_copy(update={"name": name}))
                item = call(name, "d", label="layer")
            calls.append(item)
        layers.append(tuple(calls))
    return layers, list(defined.values())


# the config fields that count the decoder's layers, in the order they are looked for: num_layers where a config
# counts its layers apart from num_hidden_layers (LongCat-Flash's num_hidden_layers counts each layer's two
# attention sublayers, 2 × num_layers)
LAYER_COUNTS = ("num_hidden_layers", "num_layers")


def _layer_list(model, config) -> tuple[str, object] | None:
    """The decoder's layers: the list of num_hidden_layers modules beside the input embedding (a vision tower's
    list may be as long), else the first such list in the tree; a list of the config's other count is looked for
    where each would be, before anywhere else (a layer's own pair of sublayers is a list of two). None where
    there is no such list (HRM-Text's layers are two stacks' lists, each run several times: passes.py)."""
    counts = dict.fromkeys(getattr(config, field) for field in LAYER_COUNTS
                           if isinstance(getattr(config, field, None), int))
    embedding = model.get_input_embeddings()
    beside = [(f"{path}.{name}" if path else name, child) for path, module in model.named_modules()
              if any(part is embedding for part in module.children()) for name, child in module.named_children()
              if type(child).__name__ == "ModuleList"]
    anywhere = [(path, module) for path, module in model.named_modules()
                if type(module).__name__ == "ModuleList" and any(True for _ in module.parameters())]
    for candidates in (beside, anywhere):
        for count in counts:
            found = next(((path, module) for path, module in candidates if len(module) == count), None)
            if found is not None:
                return found
    return None


def _base(model, found, embedding):
    """The module holding the layers beside the embedding: the layer list's parent, or, where the layers are
    not one list, the module whose child the embedding is."""
    if found is not None:
        path = found[0]
        return model.get_submodule(path.rsplit(".", 1)[0]) if "." in path else model
    return next((module for module in model.modules() if any(part is embedding for part in module.children())), model)


def _kind_names(stack: list[tuple]) -> list[str]:
    """A name for each run of equal layers: `layers` when all are equal, else what tells them apart."""
    distinct = list(dict.fromkeys(stack))
    if len(distinct) == 1:
        return ["layers"] * len(stack)
    names = {layer: f"{_describe(layer)}_layers" for layer in distinct}
    if len(set(names.values())) < len(distinct):
        names = {layer: f"kind{i + 1}_layers" for i, layer in enumerate(distinct)}
    return [names[layer] for layer in stack]


# the blocks of the connections around and beside the sublayers (not recognisers' blocks): the words they give
CONNECTION_WORDS = {"dense_and_moe": ["moe"], "mhc": [], "gated_residual": [], attn_residuals.BLOCK: []}


def _describe(layer: tuple) -> str:
    words = []
    for block in layer:
        if block.label in EMBEDDING_NORMS:
            words.append("first")  # the layer that also normalises the embeddings (RWKV's pre_ln)
            continue
        found = recognisers.kind_words(block)
        words += found if found is not None else CONNECTION_WORDS.get(
            block.name, ["dense" if block.label == "ffn" else "full"])
    return "_".join(word for word in words if word)


def _noted_once(stack: list[tuple]) -> list[tuple]:
    """Each block's note (the module it came from) on its first appearance only: a long stack reads cleaner."""
    seen, out = set(), []
    for layer in stack:
        calls = []
        for block in layer:
            calls.append(block.model_copy(update={"note": None}) if block.note in seen else block)
            seen.add(block.note)
        out.append(tuple(calls))
    return out


def _towers(base) -> dict:
    """The encoders of other inputs a base model holds beside its text path (Phi-4-multimodal's
    embed_tokens_extend: a vision and an audio tower whose embeddings replace the placeholder tokens' ones):
    run only when images or audio come in, they are not the text model's."""
    return {name: child for name, child in base.named_children() if type(child).__name__.endswith("FeatureEmbedding")}


def _edges(base, layers: tuple[str, set[str]], embedding, head, d: int, config, towers: dict) -> tuple[list, list]:
    """The embedding (and a learned position table, the vectors the base model holds itself) before the layers;
    the final norm and the head after. `layers`: the base model's path, and its children that hold the layers."""
    base_path, skip = layers
    before, after = [call("embedding", "vocab", "d")], []
    before += [found] if (found := heads.inner_norm(embedding, d)) is not None else []
    before += heads.embedding_scale(embedding, base)
    inputs, made = per_layer.inputs_call(base, d, config.num_hidden_layers)
    affine = residual_modules.input_affine(base, d)  # the base model's own vectors, when they are ZAYA's pair
    before += ([inputs] if inputs else []) + (affine or heads.held_vectors(base, d))
    for name, child in base.named_children():
        if name in skip or child is embedding or name in towers or name in made:
            continue
        if heads.embedding_norm(child, embedding, d) is not None:
            before.insert(1, heads.embedding_norm(child, embedding, d))
            continue
        kind, merged, streams = norm(child), hyper.merge(child, d), altup.projections(child, name, d)
        if merged is not None or (streams is not None and streams.name == "altup_unembed"):
            after.insert(0, merged or streams)  # the streams merged before the final norm
        elif streams is not None:
            before.append(streams)
        elif kind is not None and kind.width in (None, d):
            after.append(call(kind.block, "d", label="final_norm"))
        elif (depth := attn_residuals.final(child, base, skip, d)) is not None:
            after.insert(0, depth)  # the block attention before the final norm (Inkling 2's final_input)
        elif type(child).__name__.endswith("Embedding") and own(child).get("weight", (0, 0))[1:] == (d,):
            before.append(call("learned_positions", own(child)["weight"][0], "d", label="positions"))
        elif any(True for _ in child.parameters()):
            raise unmapped(child, f"{base_path}.{name}", "not an embedding, a norm or the layers")
    return before, after + _head(embedding, head, config)


def _head(embedding, head, config) -> list[ast.Stmt]:
    """The head that scores the vocabulary, and the cap on its logits a config field sets."""
    if head is None:
        raise refuse("the model has no output head")
    tied = head.weight is embedding.weight
    bias = getattr(head, "bias", None) is not None
    # Moshi's embedding holds one row more (its padding token) than its head scores
    rows = "vocab" if tied or head.weight.shape[0] == embedding.weight.shape[0] else head.weight.shape[0]
    scored = [call("lm_head", "d", rows, tied=True if tied else None, bias=True if bias else None,
                   logit_scale=True if heads.logit_scale(head) else None,
                   note="the head reads the embedding table" if tied else "a head of its own")]
    # the config field that caps the logits, by either of the names transformers' configs give it
    capped = next((f for f in ("final_logit_softcapping", "output_logit_soft_cap") if getattr(config, f, None)), None)
    return scored + ([logit_softcap(capped, rows)] if capped is not None else [])


def _options(stack: list[tuple]) -> list[ast.Stmt]:
    blocks = [block for layer in stack for block in layer]
    return recognisers.options(blocks, [hyper.comb_option()] if any(_mixes_streams(b) for b in blocks) else [])


def _mixes_streams(block) -> bool:
    """An `mhc` call that mixes its streams by a matrix (DeepSeek-V4's hyper-connections)."""
    return isinstance(block, ast.BlockCall) and block.name == "mhc" and any(
        isinstance(a, ast.Keyword) and a.name == "comb_flops" for a in block.args)


def configs(config: Config) -> tuple[Config, Config | None]:
    """(the config, its text section when it is a vision-language checkpoint's wrapper)."""
    text = config.values.get("text_config")
    return config, (config.section("text_config") if isinstance(text, dict) else None)
