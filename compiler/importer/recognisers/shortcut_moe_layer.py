"""The shortcut-connected MoE layer (LongCat-Flash's ScMoE; transformers' LongcatFlashDecoderLayer;
std.shortcut_moe's shortcut_moe_layer): each layer read as one block, as its MoE reads the first of its two
attention-and-MLP pairs and adds its output after the second, which no run of sublayers says. The layer
holds its pairs as lists of two (self_attn, mlps and their norms) beside the one MoE (mlp)."""

from __future__ import annotations

from archcost.dsl import ast

from ..reading.modules import Norm, Where, children, norm, own
from ..reading.spec import call
from . import Recogniser, word
from .mla import mla, mla_cache_option
from .moe import moe
from .swiglu import gated_ffn

PAIRS = ("self_attn", "mlps", "input_layernorm", "post_attention_layernorm")  # each a list of two, one a pair
SHORTCUT = "mlp"
# what the block passes on to its calls: the plain MLA, a SwiGLU of width f, a MoE with identity experts
ATTENTION = {"heads", "q_rank", "kv_rank", "nope_dim", "rope_dim", "v_dim", "cache"}
EXPERTS = {"experts": "experts", "top": "top", "f": "expert_f", "zero_experts": "zero_experts"}


def shortcut_moe_layer(layer, at: Where) -> ast.BlockCall | None:
    """`shortcut_moe_layer(d, …)` for a layer of two MLA-and-SwiGLU pairs and one MoE, else None."""
    parts = children(layer)
    if set(parts) != {*PAIRS, SHORTCUT} or own(layer) \
            or any(set(children(parts[name])) != {"0", "1"} or own(parts[name]) for name in PAIRS):
        return None
    pair = {name: [children(parts[name])[i] for i in ("0", "1")] for name in PAIRS}
    if any(norm(child) != Norm("rmsnorm", at.d) for name in PAIRS[2:] for child in pair[name]):
        return None
    attention = [mla(child, at) for child in pair["self_attn"]]
    mlps = [gated_ffn(child, at) for child in pair["mlps"]]
    shortcut = moe(parts[SHORTCUT], at)
    if None in (*attention, *mlps, shortcut) or attention[0].call != attention[1].call \
            or mlps[0].call != mlps[1].call or mlps[0].call.name != "swiglu":
        return None
    given = {name: _keywords(found.call) for name, found in (("attention", attention[0]), ("mlp", mlps[0]),
                                                               ("moe", shortcut))}
    if set(given["attention"]) - ATTENTION or set(given["mlp"]) != {"f"} or set(given["moe"]) - set(EXPERTS):
        return None
    return call("shortcut_moe_layer", "d", **given["attention"], f=given["mlp"]["f"],
                **{EXPERTS[name]: value for name, value in given["moe"].items()},
                label="layer", note=type(layer).__name__)


def _keywords(found: ast.BlockCall) -> dict[str, ast.Expr]:
    return {a.name: a.value for a in found.args if isinstance(a, ast.Keyword)}


def _options(_calls: list[ast.BlockCall]) -> list[ast.Stmt]:
    """`mla_cache`: the block's attention is MLA (recognisers/mla.py's option)."""
    return [mla_cache_option()]


RECOGNISER = Recogniser("shortcut_moe_layer", "layer", shortcut_moe_layer, writes=("shortcut_moe_layer",),
                        kind_words=word("shortcut_moe"), options=_options)
