"""Mixtures of experts recognised (std.ffn.moe's moe): a router over experts stored fused or one module each,
a shared expert (optionally gated; or stacked and scored by the router, Inkling's), experts of two matrices
(Nemotron-H), experts as one [E, out, in] tensor a matrix under a router `router.layer` with a bias of d after
their sum (JetMoE's), identity experts the router scores beside the weighted ones (LongCat-Flash's
`zero_experts`). A spec whose experts run densely in transformers gains the `experts` option."""

from __future__ import annotations

from dataclasses import dataclass

from archcost.dsl import ast

from ..reading.feedforward import MOE_POST_NORM, ROUTER, SHARED
from ..reading.modules import (
    Found,
    Linear,
    Norm,
    Where,
    activation,
    children,
    holding,
    linear,
    norm,
    own,
    pick,
    sub_norm,
)
from ..reading.paths import option
from ..reading.router import choices_of, extras, scoring_of
from ..reading.router import statics as router_statics
from ..reading.spec import call
from . import Recogniser, word
from .gelu_mlp import plain_ffn
from .moa import GATED_ACT_FLOPS, routed_experts
from .swiglu import gated_ffn

EXPERT_NORM = "post_expert_norm"  # Ergo's experts' child: an RMS norm scale [E, d] of each expert's own
SHARED_NORM = "norm"  # the shared expert's RMS norm of its output (Ergo)
ACT_FLOPS = {"silu": 4, "gelu": 8, "relu": 1, "relu2": 2}  # std.activation's counts, for an ungated expert


@dataclass(frozen=True)
class Experts:
    f: int
    biased: bool
    clamped: bool       # gpt-oss's clamped SwiGLU
    act: str | None     # an ungated expert's activation (two matrices); None: gated, three
    normed: bool = False  # an RMS norm of each expert's own on its output (Ergo's post_expert_norm)


def moe(module, at: Where) -> Found | None:
    """A router over experts (stored fused, as transformers 5 keeps them, or one module each), an optional
    shared expert with an optional sigmoid gate; experts of two matrices (Nemotron-H) with their shared expert."""
    parts = children(module)
    router_name, router = pick(parts, ROUTER)
    experts = parts.get("experts")
    if router is None or experts is None or set(own(module)) - {"expert_bias"}:
        return None
    scoring = scoring_of(router)
    scores = own(scoring)
    if "weight" not in scores or len(scores["weight"]) != 2 or scores["weight"][1] != at.d:
        return None
    shared_name, shared = pick(parts, SHARED)
    stacked = _stacked_shared(shared, at) if shared is not None else None
    # stacked shared experts are scored by the router's rows beyond the routed ones (Inkling's
    # shared_expert_sink): as many more rows as there are of them, or the block is not read
    scored = stacked[0] if stacked else 0
    choices, count = (n - scored for n in choices_of(module, scores))
    shape = _experts(experts, count, at)
    top = getattr(router, "top_k", None) or getattr(module, "top_k", None) or at.config.num_experts_per_tok
    statics = router_statics(router, choices) if scoring is router else False
    held = extras(module, scores, choices)  # (a score-correction bias, a scalar on the weights)
    if shape is None or held is None or statics is None:
        return None
    shared_f, shared_norm = (stacked[0] * stacked[1], False) if scored else \
        _shared_width(shared, shape, at) if shared is not None else (None, False)
    gate = parts.get("shared_expert_gate")
    post = _post_norm(parts, {router_name, "experts", shared_name, "shared_expert_gate"}, at)
    if (gate is not None and linear(gate) != Linear(at.d, 1, False)) or shared_f == 0 or post is None:
        return None
    act_flops = 9 if shape.clamped else (ACT_FLOPS[shape.act] if shape.act else None)
    return Found(call("moe", "d", experts=count, top=top, f=shape.f, shared_f=shared_f,
                      dense_experts="dense" if runs_every_expert(experts) else None,
                      shared_gate=gate is not None or None, zero_experts=(choices - count) or None,
                      router_bias="bias" in scores or held[0] or statics or None,
                      expert_bias=shape.biased or None, act_flops=act_flops, matrices=2 if shape.act else None,
                      post_norm=True if post else None, expert_norm=shape.normed or None,
                      shared_norm=shared_norm or None, shared_scored=scored or None, router_scale=held[1] or None),
                 mixer=False, post_norm=not post)  # moe takes post_norm (Kolibri's sandwich norms) once


def _stacked_shared(shared, at: Where) -> tuple[int, int] | None:
    """(how many, their width) for shared experts stored as SwiGLU tensors of every shared expert stacked,
    gate and up [S, f, d], down [S, d, f], each run on every token (InklingSharedExperts); None for any other
    module."""
    shapes = own(shared)
    gate, up, down = (shapes.get(name, ()) for name in ("gate_proj", "up_proj", "down_proj"))
    if set(shapes) != {"gate_proj", "up_proj", "down_proj"} or children(shared) or len(gate) != 3 \
            or gate[2] != at.d or up != gate or down != (gate[0], at.d, gate[1]) or activation(shared) != "silu":
        return None
    return gate[0], gate[1]


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


def _shared_width(shared, experts: Experts, at: Where) -> tuple[int, bool]:
    """(the shared expert's width, whether it norms its output like the experts): a SwiGLU beside gated experts,
    an ungated MLP of the experts' activation beside ungated ones (with an RMS norm of d after it where the
    experts norm theirs: Ergo's ErgoSharedExpert.norm); width 0 when it is neither."""
    if experts.act is None:
        inner = gated_ffn(shared, at)
        return (_width(inner) if inner is not None and inner.call.name == "swiglu" else 0), False
    normed = experts.normed and norm(children(shared).get(SHARED_NORM)) == Norm("rmsnorm", at.d)
    mlp = holding({n: c for n, c in shared.named_children() if n != SHARED_NORM}) if normed else shared
    inner = plain_ffn(mlp, at)
    acts = [a.value for a in inner.call.args if isinstance(a, ast.Keyword) and a.name == "act"] if inner else []
    biased = [a.value for a in inner.call.args if isinstance(a, ast.Keyword) and a.name == "bias"] if inner else []
    if inner is None or acts != [ast.Name(id=experts.act)] or biased != [ast.Bool(value=False)]:
        return 0, False
    return _width(inner), normed


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
    normed = set(children(experts)) == {EXPERT_NORM} and own(children(experts)[EXPERT_NORM]) == {
        "weight": (count, at.d)} and not children(children(experts)[EXPERT_NORM])
    if children(experts) and not normed:
        return None
    if getattr(experts, "has_gate", True) is False:  # two matrices around an activation (Nemotron-H, Ergo)
        found = _ungated(experts, shapes, count, at)
        return None if found is None else Experts(found.f, found.biased, found.clamped, found.act, normed)
    if normed:
        return None
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
    """Up [E, f, d] and down [E, d, f], or [E, d, f] and [E, f, d] stored transposed (Ergo)."""
    up, down = shapes.get("up_proj"), shapes.get("down_proj")
    act = activation(experts)
    if set(shapes) != {"up_proj", "down_proj"} or len(up) != 3 or up[0] != count or act not in ACT_FLOPS:
        return None
    transposed = getattr(experts, "is_transposed", False)
    f = up[2] if transposed else up[1]
    if (up[1] if transposed else up[2]) != at.d or down != ((count, f, at.d) if transposed else (count, at.d, f)):
        return None
    return Experts(f, False, False, act)


def parallel_experts(module, at: Where) -> Found | None:
    """Feed-forward experts: gate and up fused in `input_linear` [E, 2f, d], `output_linear` [E, d, f]."""
    parts = children(module)
    if set(parts) != {"input_linear", "output_linear", "router"}:
        return None
    up = own(parts["input_linear"]).get("weight", ())
    if len(up) != 3 or up[1] % 2:
        return None
    f = up[1] // 2
    count = routed_experts(module, at, 2 * f, f)
    act = activation(module)
    if count is None or act not in GATED_ACT_FLOPS:
        return None
    return Found(call("moe", "d", experts=count, top=parts["router"].top_k, f=f, act_flops=GATED_ACT_FLOPS[act],
                      output_bias=True), mixer=False, post_norm=True)


def dense_experts_option() -> list[ast.Stmt]:
    """The spec's `experts` option and the `dense` it sets: routed (each token through its top k, the serving
    cost) or dense (every expert on every token, as Llama 4's transformers code computes them)."""
    return [option("experts", "routed", "dense",
                   note="dense: every expert on every token, as Llama4TextExperts computes them in transformers"),
            ast.Binding(name="dense",
                        value=ast.BinOp(op="==", left=ast.Name(id="experts"), right=ast.Name(id="dense")))]


def _shared_beside(found: list[tuple[str, Found]]) -> list[tuple[str, Found]]:
    """A dense MLP named `shared…` beside the experts, reading the same norm (Granite's shared_mlp): the MoE
    block's shared expert, which costs the same."""
    names = [name for name, block in found if block.call.name == "moe"]
    shared = [name for name, block in found if "shared" in name and block.call.name == "swiglu"]
    if len(names) != 1 or len(shared) != 1:
        return found
    blocks = dict(found)
    width = next(a for a in blocks[shared[0]].call.args if isinstance(a, ast.Keyword) and a.name == "f")
    moe = blocks[names[0]]
    merged = moe.call.model_copy(update={"args": [*moe.call.args, width.model_copy(update={"name": "shared_f"})]})
    return [(name, Found(merged, False) if name == names[0] else block) for name, block in found
            if name != shared[0]]


def _either(module, at: Where) -> Found | None:
    return moe(module, at) or parallel_experts(module, at)


def _options(calls: list[ast.BlockCall]) -> list[ast.Stmt]:
    """`experts` and the `dense` it sets, where transformers runs every expert on every token (runs_every_expert)."""
    dense = any(isinstance(a, ast.Keyword) and a.name == "dense_experts" for c in calls for a in c.args)
    return dense_experts_option() if dense else []

RECOGNISER = Recogniser("moe", "sublayer", _either, writes=("moe",), kind_words=word("moe"), options=_options,
                        absorbs=_shared_beside)
