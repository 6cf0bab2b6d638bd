"""Griffin's recurrent block recognised (RecurrentGemma; transformers' RecurrentGemmaRecurrentBlock around its
RecurrentGemmaRglru; std.attention.griffin): the y and x branches, the depthwise conv, the RG-LRU's two
block-diagonal gates with their biases and its Λ, the output projection."""

from __future__ import annotations

from ..reading.modules import Found, Linear, Where, activation, children, linear, own
from ..reading.spec import call
from . import Recogniser, word


def recurrent_block(module, at: Where) -> Found | None:
    parts = children(module)
    if set(parts) != {"linear_y", "linear_x", "linear_out", "conv_1d", "rg_lru"} or own(module):
        return None
    branch = linear(parts["linear_x"])
    width = branch.width_out if branch else 0
    if branch != Linear(at.d, width, True) or linear(parts["linear_y"]) != branch \
            or linear(parts["linear_out"]) != Linear(width, at.d, True):
        return None
    conv = own(parts["conv_1d"])
    kernel = conv.get("weight", (0, 0, 0))[-1]
    if conv != {"weight": (width, 1, kernel), "bias": (width,)} or children(parts["conv_1d"]):
        return None
    heads = _heads(parts["rg_lru"], width)
    act = activation(module)
    if heads is None or act is None:
        return None
    return Found(call("griffin_recurrent", "d", heads=heads, width=width if width != at.d else None,
                      conv_kernel=kernel if kernel != 4 else None, activation=act if act != "gelu" else None),
                 mixer=True, post_norm=False)


def _heads(lru, width: int) -> int | None:
    """The RG-LRU's blocks: its gates [heads, width/heads, width/heads] each with a bias [heads, width/heads],
    and Λ of width; None for any other parameters."""
    held = own(lru)
    gate = held.get("input_gate_weight", ())
    if children(lru) or len(gate) != 3 or gate[0] * gate[1] != width or gate[1] != gate[2]:
        return None
    heads, block = gate[0], gate[1]
    expected = {"recurrent_param": (width,), "input_gate_weight": gate, "recurrent_gate_weight": gate,
                "input_gate_bias": (heads, block), "recurrent_gate_bias": (heads, block)}
    return heads if held == expected else None


RECOGNISER = Recogniser("rglru", "sublayer", recurrent_block, writes=("griffin_recurrent",),
                        kind_words=word("recurrent"))
