"""`wkv`: RWKV-4's weighted key-value recurrence (Peng et al. 2023, arXiv:2305.13048 §3.2, eq. 14-16), the
time-mix block's "attention": per channel, an exponentially decaying average of past values weighted by
exp(key), with a bonus `time_first` for the current token. Its state per channel is three fp32 numbers (the
weighted sum of values, the sum of weights and their shared exponent: transformers' aa, bb and pp), whatever
the history; its parameters are `time_decay` and `time_first`, one each a channel.

FLOPs per channel and token: the 25 scalar operations of transformers' rwkv_linear_attention_cpu step (two
maxima, four exponentials, eight multiplies, six adds, four subtracts, one divide), each counted once, as
non-matrix work; prefill runs the same step position by position.
"""

from __future__ import annotations

from types import SimpleNamespace

from ..terms.symbols import m
from .base import Arg, Cost, CostContext, OpSpec, Saved, fixed_state

STEP_FLOPS = 25       # per channel and token (the module docstring)
STATE_ENTRIES = 3     # per channel: the weighted sum, the weight sum, the exponent


def widths(a: SimpleNamespace):
    return 2 * a.channels, a.channels  # the keys and the values in, the weighted average out


def diagram_shape(a: SimpleNamespace, show) -> str:
    return f"{show(a.channels)} channels · {STATE_ENTRIES} state values each"


def cost(a: SimpleNamespace, ctx: CostContext) -> Cost:
    params = 2 * a.channels
    return Cost(
        params=params,
        weight_bytes=params * a.dtype,
        flops_nonmatrix=m * STEP_FLOPS * a.channels,
        read_weights=params * a.dtype,
        **fixed_state(STATE_ENTRIES * a.channels * a.state_dtype),
        read_activations=m * 2 * a.channels * ctx.act_bytes,
        write_activations=m * a.channels * ctx.act_bytes,
    )


def saved(a: SimpleNamespace, ctx: CostContext) -> Saved:
    """Its inputs: the backward pass runs the recurrence again from them (RWKV's CUDA kernel saves k, v and
    the output)."""
    return Saved(inputs=True)


SPEC = OpSpec(
    kind="wkv",
    doc=__doc__,
    state_kind=lambda a: "recurrent",
    args=(
        Arg("channels", "dim", required=True, doc="channels, each with its own decay"),
        Arg("dtype", "dtype", "weights", doc="storage format of time_decay and time_first"),
        Arg("state_dtype", "dtype", "state", doc="storage format of the three values kept a channel (fp32)"),
    ),
    widths=widths,
    cost=cost,
    saved=saved,
    diagram_shape=diagram_shape,
    drawn_as="cylinder",
    formula="params = 2·channels; F = 25·channels per row (non-matrix); M = B·3·channels·bytes",
)
