"""The mLSTM recognised (std.attention.mlstm): the xLSTM's matrix-memory mixer (Beck et al. 2024, arXiv:2405.04517
§2.3; transformers' xLSTMLayer)."""

from __future__ import annotations

from ..reading.modules import Found, Linear, Norm, Where, children, linear, norm, own
from ..reading.spec import call
from . import Recogniser, word

APART = ("q", "k", "v", "ogate_preact", "igate_preact", "fgate_preact")
FUSED = ("qkv_opreact", "ifgate_preact")  # Q, K, V and the output gate as one matrix; the two gates as another
OUT = ("multihead_norm", "out_proj")


def mlstm(module, at: Where) -> Found | None:
    """Q, K, V, the output gate and the two per-head gates projected (apart or in two fused matrices), a
    LayerNorm of each head's output, the output projection; the heads and the chunk the backend runs its
    prompts in are read from the module's config."""
    parts, config = children(module), getattr(module, "config", None)
    heads, chunk = getattr(config, "num_heads", None), getattr(config, "chunk_size", None)
    if own(module) or not isinstance(heads, int) or not isinstance(chunk, int) \
            or set(parts) not in ({*APART, *OUT}, {*FUSED, *OUT}):
        return None
    out = linear(parts["out_proj"])
    widths = None if out is None else _widths(parts, at.d, heads, out)
    if widths is None or out != Linear(widths[1], at.d, out.bias):
        return None
    qk_width, v_width = widths
    shift = "layernorm" if out.bias else "layernorm_unbiased"  # the per-head norm takes a shift with the biases
    if norm(parts["multihead_norm"]) != Norm(shift, v_width) or qk_width % heads or v_width % heads:
        return None
    return Found(call("mlstm", "d", heads=heads, qk_dim=qk_width // heads, v_dim=v_width // heads,
                      chunk=chunk if chunk != 64 else None, bias=True if out.bias else None),
                 mixer=True, post_norm=False)


def _widths(parts: dict, d: int, heads: int, out: Linear) -> tuple[int, int] | None:
    """(heads·qk_dim, heads·v_dim) of the projections, when they have the mLSTM's shapes (biased as the output
    projection is, the gates always); None otherwise."""
    bias = out.bias
    shapes = {name: linear(parts[name]) for name in parts if name not in OUT}
    if None in shapes.values():
        return None
    if "q" in shapes:
        qk_width, v_width = shapes["q"].width_out, shapes["v"].width_out
        fits = shapes == {"q": Linear(d, qk_width, bias), "k": Linear(d, qk_width, bias),
                          "v": Linear(d, v_width, bias), "ogate_preact": Linear(d, v_width, bias),
                          "igate_preact": Linear(d, heads, True), "fgate_preact": Linear(d, heads, True)}
    else:
        # the fused matrix is [q, k, v, o], 2·qk + 2·v wide: v's width is the output projection's input
        v_width = out.width_in
        qk_width = (shapes["qkv_opreact"].width_out - 2 * v_width) // 2
        fits = shapes == {"qkv_opreact": Linear(d, 2 * qk_width + 2 * v_width, bias),
                          "ifgate_preact": Linear(d, 2 * heads, True)}
    return (qk_width, v_width) if fits and qk_width > 0 else None


RECOGNISER = Recogniser("mlstm", "sublayer", mlstm, writes=("mlstm",), kind_words=word("mlstm"))
