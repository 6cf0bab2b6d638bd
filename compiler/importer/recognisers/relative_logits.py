"""GQA whose scores are biased by a learned function of distance, with residual short convolutions on its keys
and values (transformers' InklingAttention), recognised as std.attention.gqa's gqa with `rel_states`,
`rel_extent` and `kv_conv`: a bank of rel_states × rel_extent bias-vs-distance profiles held by a module of its
own (InklingRelativeLogits.proj), a d → heads·rel_states projection beside Q, K and V giving each token's heads
the states that weigh it, and, where it has them, one residual convolution of the keys' width on K and one on V
(InklingShortConvolution: std.conv's residual_conv). The rest is read as gqa reads any attention."""

from __future__ import annotations

from archcost.dsl import ast

from ..reading.modules import Found, Where, children, holding, linear, own
from ..reading.residual_conv import residual_conv
from ..reading.spec import value
from . import Recogniser
from .gqa import FUSED_QKV, KEY, OUTPUT, QUERY, VALUE, attention

HEADS = ("num_heads", "head_dim")  # the attention's attributes gqa reads its heads by
GQA_MATRICES = {*QUERY, *KEY, *VALUE, *OUTPUT, *FUSED_QKV}


def relative_logits(module, at: Where) -> Found | None:
    parts = children(module)
    banks = {name: own(child) for name, child in parts.items() if not children(child) and linear(child) is None
             and len(own(child)) == 1 and len(next(iter(own(child).values()))) == 2}
    if len(banks) != 1 or own(module):
        return None
    # the bank's attention holds its heads (InklingAttention.num_heads: its layer kind's); never the config's
    # global count, which a heterogeneous config refuses to give (Dots3Note's per-layer heads)
    heads = getattr(module, "num_heads", None)
    if not isinstance(heads, int):
        return None
    bank = next(iter(banks))
    states, extent = next(iter(banks[bank].values()))
    # the states' projection: a d → heads·states matrix beside the ones gqa reads by name (K's may be as wide)
    projections = [name for name, child in parts.items() if name not in GQA_MATRICES and linear(child) is not None
                   and linear(child).width_in == at.d and linear(child).width_out == heads * states]
    convs = {name: residual_conv(child) for name, child in parts.items() if residual_conv(child) is not None}
    if len(projections) != 1 or linear(parts[projections[0]]).bias or len(convs) not in (0, 2) \
            or len({conv.kernel for conv in convs.values()}) > 1:
        return None
    found = attention(_rest(module, parts, {bank, *projections, *convs}), at)
    if found is None or found.call.name != "gqa":
        return None
    kv_width = _keyword(found.call, "kv_heads") * _keyword(found.call, "head_dim")
    if any(conv.channels != kv_width for conv in convs.values()):
        return None
    extra = {"kv_conv": next(iter(convs.values())).kernel} if convs else {}
    extra |= {"rel_states": states, "rel_extent": extent}
    args = [*found.call.args, *(ast.Keyword(name=name, value=value(item)) for name, item in extra.items())]
    return Found(found.call.model_copy(update={"args": args}), mixer=True)


def _rest(module, parts: dict, taken: set):
    """The attention's other children held together, with the attributes gqa reads its heads by."""
    holder = holding({name: child for name, child in parts.items() if name not in taken})
    for name in HEADS:
        if isinstance(getattr(module, name, None), int):
            setattr(holder, name, getattr(module, name))
    return holder


def _keyword(call: ast.BlockCall, name: str) -> int:
    return int(next(a.value for a in call.args if isinstance(a, ast.Keyword) and a.name == name).text)


RECOGNISER = Recogniser("relative_logits", "sublayer", relative_logits, writes=("gqa",), attention=True)
