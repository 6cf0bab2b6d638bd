"""The feed-forward blocks recognised in a transformers layer: SwiGLU and GeGLU (gate and up apart or fused),
two-matrix MLPs, and mixtures of experts with their routers and shared experts (recognise.py dispatches)."""

from __future__ import annotations

from dataclasses import dataclass

from archcost.dsl import ast

from .modules import (
    Found,
    Linear,
    Where,
    activation,
    children,
    learned_activation,
    linear,
    own,
    pick,
    shapes_of,
    sub_norm,
)
from .spec import call

GATE = ("gate_proj", "w1")
UP = ("up_proj", "w3", "fc1", "c_fc", "dense_h_to_4h", "fc_in")
DOWN = ("down_proj", "w2", "fc2", "c_proj", "dense_4h_to_h", "fc_out", "Wo")
# fc1: Moshi's, 2f wide (a plain MLP's is f); Wi: ModernBERT's
FUSED_GATE_UP = ("gate_up_proj", "input_linear", "fc1", "Wi")
ROUTER = ("gate", "router")
SHARED = ("shared_expert", "shared_experts", "shared_mlp")
GATED_BLOCKS = {"silu": "swiglu", "gelu": "geglu", "relu2": "relu2_glu"}


SUB_NORM = "ffn_sub_norm"  # BitNet's RMSNorm of the gated product, before the down projection
MOE_POST_NORM = "post_mlp_layernorm"  # A.X-K1's RMSNorm of the MoE block's output, held by the block itself


def _ffn_parts(module) -> tuple[dict, dict] | None:
    """The MLP's matrices by name and shape (an activation with learned scalars is the activation's, a
    sub-norm the gated MLP's own)."""
    parts = {name: child for name, child in children(module).items()
             if not learned_activation(child) and name != SUB_NORM}
    if own(module) or not parts:
        return None
    shapes = shapes_of(parts)
    return (parts, shapes) if all(shape is not None for shape in shapes.values()) else None


def gated_ffn(module, at: Where, width: int | None = None) -> Found | None:
    """SwiGLU or GeGLU: gate and up (separate or one fused matrix) d → f, down f → d."""
    found = _ffn_parts(module)
    if found is None:
        return None
    parts, shapes = found
    gate, up, down = pick(parts, GATE)[0], pick(parts, UP)[0], pick(parts, DOWN)[0]
    d = width or at.d
    fused = pick(parts, FUSED_GATE_UP)[0]
    down = down or ("output_linear" if fused == "input_linear" else None)
    if fused and down and set(parts) == {fused, down}:
        f = shapes[down].width_in
        if shapes[fused] != Linear(d, 2 * f, shapes[down].bias):
            return None
    elif gate and up and down and set(parts) == {gate, up, down}:
        f = shapes[gate].width_out
        if shapes[gate] != shapes[up] or shapes[gate].width_in != d or shapes[down] != Linear(f, d, shapes[gate].bias):
            return None
    else:
        return None
    block = GATED_BLOCKS.get(activation(module) or _config_act(at.config) or _forward_act(module))
    down_norm = sub_norm(children(module), SUB_NORM, f)
    if block is None or down_norm is None or (down_norm and block == "geglu"):
        return None
    return Found(call(block, "d", f=f, bias=shapes[down].bias or None, down_norm=True if down_norm else None),
                 mixer=False)


def plain_ffn(module, at: Where) -> Found | None:
    """A two-matrix MLP: up d → f, an activation, down f → d (GPT-2, OPT, StarCoder2)."""
    found = _ffn_parts(module) if SUB_NORM not in children(module) else None
    if found is None:
        return None
    parts, shapes = found
    up, down = pick(parts, UP)[0], pick(parts, DOWN)[0]
    if type(module).__name__ == "Sequential" and list(parts) == ["0", "2"]:  # CTRL: Linear, activation, Linear
        up, down = "0", "2"
    if not (up and down) or set(parts) != {up, down} or shapes[up].width_in != at.d:
        return None
    f = shapes[up].width_out
    if shapes[down] != Linear(f, at.d, shapes[up].bias):
        return None
    act = activation(module) or _config_act(at.config)
    if act not in ("gelu", "relu", "silu", "relu2", "xielu"):
        return None
    return Found(call("gelu_mlp", "d", f=f, bias=shapes[up].bias, act=act), mixer=False, post_norm=False)


def _forward_act(module) -> str | None:
    """The activation a module's own forward calls by name (LFM2's MLP calls F.silu and holds no activation
    module, and its config names none): the modeling code read as text, never run."""
    import inspect

    try:
        source = inspect.getsource(type(module).forward)
    except (OSError, TypeError):
        return None
    found = {act for act, calls in (("silu", ("silu(",)), ("gelu", ("gelu(",))) if any(c in source for c in calls)}
    return found.pop() if len(found) == 1 else None


def _config_act(config) -> str | None:
    act = getattr(config, "hidden_act", None) or getattr(config, "hidden_activation", None)
    if act in ("silu", "swish"):
        return "silu"
    return "gelu" if isinstance(act, str) and act.startswith("gelu") else ("relu" if act == "relu" else None)


ACT_FLOPS = {"silu": 4, "gelu": 8, "relu": 1, "relu2": 2}  # std.activation's counts, for an ungated expert


@dataclass(frozen=True)
class Experts:
    f: int
    biased: bool
    clamped: bool       # gpt-oss's clamped SwiGLU
    act: str | None     # an ungated expert's activation (two matrices); None: gated, three


def moe(module, at: Where) -> Found | None:
    """A router over experts (stored fused, as transformers 5 keeps them, or one module each), an optional
    shared expert with an optional sigmoid gate; experts of two matrices (Nemotron-H) with their shared expert."""
    parts = children(module)
    router_name, router = pick(parts, ROUTER)
    experts = parts.get("experts")
    if router is None or experts is None or set(own(module)) - {"expert_bias"}:
        return None
    scoring = _scoring(router)
    scores = own(scoring)
    if "weight" not in scores or len(scores["weight"]) != 2 or scores["weight"][1] != at.d:
        return None
    count = scores["weight"][0]
    shape = _experts(experts, count, at)
    top = getattr(router, "top_k", None) or getattr(module, "top_k", None) or at.config.num_experts_per_tok
    statics = _router_statics(router, count) if scoring is router else False
    # a score-correction bias held as a parameter, the router's (Laguna) or the block's (AFMoE's expert_bias),
    # counts as the router's bias: E values either way
    held = own(module).get("expert_bias")
    if held is not None and (held != (count,) or "bias" in scores or "e_score_correction_bias" in scores):
        return None
    correction = (scores.get("e_score_correction_bias") == (count,) or held is not None) and "bias" not in scores
    if shape is None or set(scores) - {"weight", "bias"} - ({"e_score_correction_bias"} if correction else set()) \
            or statics is None:
        return None
    shared_name, shared = pick(parts, SHARED)
    shared_f = _shared_width(shared, shape, at) if shared is not None else None
    gate = parts.get("shared_expert_gate")
    post = _post_norm(parts, {router_name, "experts", shared_name, "shared_expert_gate"}, at)
    if (gate is not None and linear(gate) != Linear(at.d, 1, False)) or shared_f == 0 or post is None:
        return None
    act_flops = 9 if shape.clamped else (ACT_FLOPS[shape.act] if shape.act else None)
    return Found(call("moe", "d", experts=count, top=top, f=shape.f, shared_f=shared_f,
                      dense_experts="dense" if runs_every_expert(experts) else None,
                      shared_gate=gate is not None or None,
                      router_bias="bias" in scores or correction or statics or None,
                      expert_bias=shape.biased or None, act_flops=act_flops, matrices=2 if shape.act else None,
                      post_norm=True if post else None),
                 mixer=False, post_norm=not post)  # moe takes post_norm (Kolibri's sandwich norms) once


def _post_norm(parts: dict, known: set, at: Where) -> set | None:
    """{MOE_POST_NORM} when the MoE block holds the norm of its own output (A.X-K1), empty when it holds none;
    None when it holds another norm or any child besides the `known` ones."""
    post = sub_norm(parts, MOE_POST_NORM, at.d)
    return None if post is None or set(parts) - known - post else post


def runs_every_expert(experts) -> bool:
    """Whether the experts module computes every expert on every row it is given: its forward takes the
    hidden states alone, no expert indices (Llama4TextExperts, fed each token once per expert and weighted by
    the router's scores), where transformers 5's routed experts take the top-k indices and weights."""
    import inspect

    forward = getattr(type(experts), "forward", None)
    if forward is None or not children(experts) and not own(experts):
        return False
    try:
        taken = [p for p in inspect.signature(forward).parameters.values() if p.name != "self"]
    except (TypeError, ValueError):
        return False
    return len(taken) == 1 and taken[0].kind in (taken[0].POSITIONAL_ONLY, taken[0].POSITIONAL_OR_KEYWORD)


def _width(found: Found) -> int:
    return next(a.value for a in found.call.args if isinstance(a, ast.Keyword) and a.name == "f")


def _shared_width(shared, experts: Experts, at: Where) -> int:
    """The shared expert's width: a SwiGLU beside gated experts, an ungated MLP of the experts' activation beside
    ungated ones; 0 when it is neither."""
    if experts.act is None:
        inner = gated_ffn(shared, at)
        return _width(inner) if inner is not None and inner.call.name == "swiglu" else 0
    inner = plain_ffn(shared, at)
    acts = [a.value for a in inner.call.args if isinstance(a, ast.Keyword) and a.name == "act"] if inner else []
    biased = [a.value for a in inner.call.args if isinstance(a, ast.Keyword) and a.name == "bias"] if inner else []
    if inner is None or acts != [ast.Name(id=experts.act)] or biased != [ast.Bool(value=False)]:
        return 0
    return _width(inner)


def _scoring(router):
    """The module holding the router's score matrix: the router itself, or its one linear child (HunYuan's
    gate.wg, AFMoE's router.gate, DBRX's router.layer)."""
    inner = children(router)
    if not own(router) and len(inner) == 1 and set(inner) <= {"wg", "gate", "layer"}:
        child = next(iter(inner.values()))
        return child if linear(child) is not None else router
    return router


def _router_statics(router, count: int) -> bool | None:
    """Whether the router holds a learned score-correction bias as a parameter of a child (ERNIE 4.5's
    moe_statics, [1, E]); None when it holds any other child with parameters."""
    inner = children(router)
    if not inner:
        return False
    if set(inner) != {"moe_statics"} or set(own(inner["moe_statics"]).values()) != {(1, count)}:
        return None
    return True


def _experts(experts, count: int, at: Where) -> Experts | None:
    """`count` experts: transformers 5's fused tensors (gate and up as one [E, 2f, d] tensor, or [E, d, 2f] when
    transposed; down [E, d, f]; ungated: up [E, f, d]), or a list of gated MLPs."""
    shapes = own(experts)
    stacked = _stacked_glu(experts, count, at)
    if stacked is not None:
        return stacked
    if not shapes:
        inner = [gated_ffn(child, at) for child in experts.children()]
        if len(inner) != count or any(i is None or i.call != inner[0].call for i in inner):
            return None
        return Experts(_width(inner[0]), False, False, None)
    if children(experts):
        return None
    if getattr(experts, "has_gate", True) is False:  # two matrices around an activation (Nemotron-H)
        return _ungated(experts, shapes, count, at)
    up, down = shapes.get("gate_up_proj"), shapes.get("down_proj")
    if up is None or down is None or len(up) != 3 or up[0] != count or down[0] != count:
        return None
    transposed = getattr(experts, "is_transposed", up[1] == at.d and up[2] != at.d)
    f = up[2] // 2 if transposed else up[1] // 2
    if (up[2] if not transposed else up[1]) != at.d or down[1:] != ((f, at.d) if transposed else (at.d, f)):
        return None
    biases = {"gate_up_proj_bias": (count, 2 * f), "down_proj_bias": (count, at.d)}
    extra = set(shapes) - {"gate_up_proj", "down_proj"}
    if extra and (extra != set(biases) or any(shapes[name] != shape for name, shape in biases.items())):
        return None
    return Experts(f, bool(extra), hasattr(experts, "limit"), None)


def _stacked_glu(experts, count: int, at: Where) -> Experts | None:
    """DBRX's experts: one child holding the gate, up and down matrices of every expert stacked row-wise, each
    [E·f, d] (w1 the gate, v1 the up, w2 the down, read transposed), SiLU between gate and up."""
    inner = children(experts)
    if own(experts) or len(inner) != 1:
        return None
    glu = next(iter(inner.values()))
    shapes = own(glu)
    if set(shapes) != {"w1", "v1", "w2"} or len({shapes[n] for n in shapes}) != 1 or children(glu) and \
            activation(glu) != "silu":
        return None
    rows, width = shapes["w1"]
    if width != at.d or rows % count:
        return None
    return Experts(rows // count, False, False, None)


def _ungated(experts, shapes: dict, count: int, at: Where) -> Experts | None:
    up, down = shapes.get("up_proj"), shapes.get("down_proj")
    act = activation(experts)
    if set(shapes) != {"up_proj", "down_proj"} or len(up) != 3 or getattr(experts, "is_transposed", False) \
            or up[0] != count or up[2] != at.d or down != (count, at.d, up[1]) or act not in ACT_FLOPS:
        return None
    return Experts(up[1], False, False, act)
