"""`shift`: token shift. Each of `mixes` copies of the input mixes, channel by channel, the token with the one
before it: x'_t = μ⊙x_t + (1 − μ)⊙x_{t−1}, one learned μ per channel and copy (RWKV, Peng et al. 2023,
arXiv:2305.13048 §3: the time-mix and channel-mix interpolations; transformers' RwkvSelfAttention and
RwkvFeedForward). The last token a request has seen is kept as state for its next call, whatever its length.
"""

from __future__ import annotations

from types import SimpleNamespace

from ..terms.symbols import m
from .base import Arg, Cost, CostContext, OpSpec, Saved, fixed_state

# per channel and copy: μ·x, (1 − μ), its product with the previous token, the add
FLOPS_PER_MIX = 4


def widths(a: SimpleNamespace):
    return a.channels, a.channels


def diagram_shape(a: SimpleNamespace, show) -> str:
    return f"{show(a.channels)} channels · {show(a.mixes)} mixes"


def cost(a: SimpleNamespace, ctx: CostContext) -> Cost:
    params = a.mixes * a.channels
    return Cost(
        params=params,
        weight_bytes=params * a.dtype,
        flops_nonmatrix=m * FLOPS_PER_MIX * params,
        read_weights=params * a.dtype,
        **fixed_state(a.channels * a.state_dtype),
        read_activations=m * a.channels * ctx.act_bytes,
        write_activations=m * params * ctx.act_bytes,
    )


def saved(a: SimpleNamespace, ctx: CostContext) -> Saved:
    """Its input, for the mixes' gradient."""
    return Saved(inputs=True)


SPEC = OpSpec(
    kind="shift",
    doc=__doc__,
    state_kind=lambda a: "recurrent",
    args=(
        Arg("channels", "dim", required=True, doc="channels mixed with the previous token's"),
        Arg("mixes", "dim", 1, doc="copies mixed, each with its own μ (RWKV's time mix: key, value, receptance)"),
        Arg("dtype", "dtype", "weights", doc="storage format of the mixes"),
        Arg("state_dtype", "dtype", "act", doc="storage format of the kept token"),
    ),
    widths=widths,
    cost=cost,
    saved=saved,
    diagram_shape=diagram_shape,
    drawn_as="cylinder",
    formula="params = mixes·channels; F = 4·mixes·channels per row (non-matrix); M = B·channels·bytes",
)
