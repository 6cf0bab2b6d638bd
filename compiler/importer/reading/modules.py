"""What a torch module of a transformers model is, read from its parameters' shapes and its own attributes:
linear maps (nn.Linear, GPT-2's Conv1D), norms, activations. The recognisers of the stdlib's blocks
(recognisers/) are built from these."""

from __future__ import annotations

from dataclasses import dataclass, field

from archcost.dsl import ast


@dataclass(frozen=True)
class Linear:
    """A matrix in → out, and whether it adds a bias."""

    width_in: int
    width_out: int
    bias: bool


def own(module) -> dict[str, tuple[int, ...]]:
    """The module's own parameters (not its children's) and their shapes."""
    return {name: tuple(p.shape) for name, p in module.named_parameters(recurse=False)}


WRAPPED_MATRIX = "linear"  # the child name of a wrapper around one matrix (Moshi's MoshiLinear)


def linear(module) -> Linear | None:
    """`module` as a matrix: nn.Linear stores (out, in), GPT-2's Conv1D (in, out) with `nf` outputs; a wrapper
    holding one matrix and nothing of its own (Moshi's MoshiLinear around its `linear`) is that matrix."""
    inner = children(module)
    if not own(module) and len(inner) == 1 and WRAPPED_MATRIX in inner:
        return linear(inner[WRAPPED_MATRIX])
    shapes = own(module)
    if set(shapes) - {"weight", "bias"} or "weight" not in shapes or len(shapes["weight"]) != 2 or children(module):
        return None
    rows, cols = shapes["weight"]
    if type(module).__name__ == "Conv1D":
        return Linear(rows, cols, "bias" in shapes)
    if not hasattr(module, "in_features"):
        return None
    return Linear(cols, rows, "bias" in shapes)


def children(module) -> dict:
    """The child modules that hold parameters (dropouts and activations without weights left out)."""
    return {name: child for name, child in module.named_children() if any(True for _ in child.parameters())}


@dataclass(frozen=True)
class Norm:
    """A normalisation over `width` values: its stdlib block (rmsnorm, layernorm, or their weightless forms)."""

    block: str
    width: int | None   # None: a weightless norm says nothing of its width


def norm(module) -> Norm | None:
    """A norm module: an RMS norm holds one scale vector, a LayerNorm a scale and a shift; one whose class says
    it normalises but holds nothing is weightless (OLMo's LayerNorm, nanochat's RMS norm)."""
    gated = _gated_rms(module)
    if gated is not None:
        return gated
    name = type(module).__name__
    if "norm" not in name.lower() or any(True for _ in module.named_children()) or "Gated" in name:
        return None
    shapes = own(module)
    rms = "rms" in name.lower() or ("layernorm" not in name.lower() and "LayerNorm" not in name)
    if not shapes:
        return Norm("rmsnorm_unscaled" if rms else "layernorm_unscaled", None)
    if set(shapes) == {"weight"} and len(shapes["weight"]) == 1 and rms:
        return Norm("rmsnorm", shapes["weight"][0])
    if set(shapes) == {"weight", "bias"} and len(shapes["weight"]) == 1 and shapes["bias"] == shapes["weight"]:
        return Norm("layernorm", shapes["weight"][0])
    if set(shapes) == {"weight"} and len(shapes["weight"]) == 1:
        return Norm("layernorm_unbiased", shapes["weight"][0])
    return None


GATED_NORM_RANK = 16  # std.norm's gated_rmsnorm: the width of its gate's bottleneck


def _gated_rms(module) -> Norm | None:
    """AXK2's AXK2GatedRMSNorm: an RMS norm child, and an mlp child of fc1 width → 16 and fc2 16 → width
    (std.norm's gated_rmsnorm); None for anything else."""
    parts = children(module)
    if set(parts) != {"norm", "mlp"} or own(module) or own(parts["mlp"]) \
            or set(children(parts["mlp"])) != {"fc1", "fc2"}:
        return None
    inner, gate = norm(parts["norm"]), children(parts["mlp"])
    if inner is None or inner.block != "rmsnorm" or linear(gate["fc1"]) != Linear(inner.width, GATED_NORM_RANK, False) \
            or linear(gate["fc2"]) != Linear(GATED_NORM_RANK, inner.width, False) or activation(parts["mlp"]) != "silu":
        return None
    return Norm("gated_rmsnorm", inner.width)


def activation(module) -> str | None:
    """The activation a module applies, by its class: silu, gelu (exact or tanh form), relu or relu²; None when
    it is none of these (the block for it is not known)."""
    for name, child in module.named_children():
        if learned_activation(child):
            return "xielu"
        if any(True for _ in child.parameters()):
            continue
        kind = type(child).__name__.lower()
        if "silu" in kind or "swish" in kind:
            return "silu"
        if "gelu" in kind and "quick" not in kind:
            return "gelu"
        if kind in ("relu", "reluactivation"):
            return "relu"
        if kind in ("relusquaredactivation", "relu2"):
            return "relu2"
        if "act" in name or "activation" in kind:
            return None
    return None


def sub_norm(parts: dict, name: str, width: int) -> set | None:
    """BitNet's norm inside a sublayer (`attn_sub_norm` before the output projection, `ffn_sub_norm` before the
    down projection): {name} when it is an RMSNorm of `width`, empty when there is none, None for another."""
    if name not in parts:
        return set()
    found = norm(parts[name])
    return {name} if found is not None and found.block == "rmsnorm" and found.width == width else None


def sub_norm_of(module, name: str, width: int) -> set | None:
    """sub_norm of the module's children, or a sub-norm that holds no scale (Dory's DoryL2Norm as `attn_sub_norm`
    and `ffn_sub_norm`: x / ‖x‖): {name} when the module's child `name` is a norm without parameters. children()
    leaves such a child out (it holds nothing), so only its name and class tell it; the block writes it as its
    pre-norm's kind, and the check's parameter count refuses a layer whose pre-norm holds a scale."""
    found = sub_norm(children(module), name, width)
    if found != set():
        return found
    child = dict(module.named_children()).get(name)
    kind = norm(child) if child is not None else None
    return {name} if kind is not None and kind.width is None else set()


def learned_activation(module) -> bool:
    """xIELU (Apertus): an activation with two learned scalars, alpha_p and alpha_n."""
    return "xielu" in type(module).__name__.lower() and {n for n, _ in module.named_parameters()} == {
        "alpha_p", "alpha_n"}


def tied_sets(layers) -> dict[int, str]:
    """The parameters more than one layer holds (Zamba2 ties its shared transformer's weights across the layers
    that run it, _tied_weights_keys), each → its set's name: `holder_i`, the child holding it in the first layer
    `i` that holds it."""
    first: dict[int, str] = {}
    holders: dict[int, set[int]] = {}
    for index, layer in enumerate(layers):
        for name, child in layer.named_children():
            for parameter in child.parameters():
                first.setdefault(id(parameter), f"{name}_{index}")
                holders.setdefault(id(parameter), set()).add(index)
    return {key: name for key, name in first.items() if len(holders[key]) > 1}


def parameters_of(module) -> set[int]:
    """The identities of every parameter `module` holds (ties make one tensor appear under two names)."""
    return {id(p) for p in module.parameters()}


@dataclass(frozen=True)
class Found:
    """A recognised block: its call (label and norm set by the layer) and whether it mixes positions."""

    call: ast.BlockCall
    mixer: bool
    post_norm: bool = True   # the block takes `post_norm` (a norm after its output, before the residual add)


@dataclass(frozen=True)
class Where:
    """What a recogniser may read beside the module: the model's width, the config, the layer's attention."""

    d: int
    config: object
    window: int = 0
    chunk: int = 0
    rope: bool = True
    rotary_factor: float = 1.0  # the part of each head RoPE turns
    softcap: float = 0          # tanh(x / c) · c on every score
    temperature: bool = False   # the queries scaled by a position-dependent temperature (Llama 4's NoPE layers)
    # a parameter several layers hold (tied) → the name of its set of weights: the holder's name in the first
    # layer that holds it and that layer's index (tied_sets)
    tied: dict = field(default_factory=dict, compare=False)

    def rotary(self, head_dim: int) -> int | None:
        """The channels RoPE turns, as transformers computes them (`int(head_dim * partial_rotary_factor)` in
        _compute_default_rope_parameters): MiMo-V2-Flash's 0.334 of 192 turns 64."""
        turned = int(head_dim * self.rotary_factor)
        return None if turned == head_dim else turned


def holding(parts: dict):
    """One module holding `parts` as its children, to be read as a block: matrices a layer keeps loose (OPT's fc1
    and fc2 beside its attention), or an MLP without the norm a module keeps after it (Ergo's shared expert)."""
    import torch

    holder = torch.nn.Module()
    for name, child in parts.items():
        holder.add_module(name, child)
    return holder


def pick(parts: dict, names: tuple[str, ...]):
    return next(((name, parts[name]) for name in names if name in parts), (None, None))


def shapes_of(parts: dict) -> dict[str, Linear | None]:
    return {name: linear(child) for name, child in parts.items()}
