"""`conv`: a short causal depthwise convolution over `channels`, keeping its last inputs as state.

Seed 002 §2.3.5: the slots hold recent inputs for the next update (Qwen3.6: 8192 channels × 4 slots
× 2 B = 64 KiB per layer); 2·channels·kernel FLOPs per token, 2·channels·kernel·(T + kernel − 1) when
the padded convolution of a prefill is counted slot by slot (shared/reference/conventions.md).
"""

from __future__ import annotations

from types import SimpleNamespace

import sympy as sp

from ..terms.symbols import B, Max, P, S, m
from .base import ZERO, Arg, Cost, CostContext, OpSpec, Saved, fixed_state


def widths(a: SimpleNamespace):
    return a.channels, a.channels


def diagram_shape(a: SimpleNamespace, show) -> str:
    return f"{show(a.channels)} channels × {show(a.kernel)} taps"


def convolved_rows(a: SimpleNamespace, slots) -> sp.Expr:
    """Output positions the call convolves, all requests: the new ones, the padded prefill's, or (window) the
    whole [kept slots, new inputs] sequence as transformers' torch source convolves it: a decode step gives
    slots − kernel + 2 outputs (2), a prompt after a history slots + P + kernel − 1, a fresh prompt
    max(kernel, P) + kernel − 1 (the book's calculator, qwen35_reference_steps.supplement)."""
    k = a.kernel
    if a.window:
        return B * sp.Piecewise((slots - k + 2, sp.And(sp.Eq(P, 1), S > 0)), (slots + P + k - 1, S > 0),
                                (Max(k, P) + k - 1, True))
    if not (a.padded or a.decode_outputs != 1):
        return m
    call_rows = B * (P + k - 1) if a.padded else m
    step_rows = m if a.decode_outputs == 1 else B * a.decode_outputs
    return sp.Piecewise((step_rows, sp.Eq(P, 1)), (call_rows, True))  # a decode step and a prefill differ


def cost(a: SimpleNamespace, ctx: CostContext) -> Cost:
    slots = a.kernel if a.slots is None else a.slots
    state = slots * a.channels * a.state_dtype
    per_row = 2 * a.channels * a.kernel                     # a multiply-add per tap
    flops = per_row * convolved_rows(a, slots)
    params = a.channels * a.kernel + (a.channels if a.bias else ZERO)
    matrix, nonmatrix = _classed(a, flops)
    return Cost(
        params=params,
        weight_bytes=params * a.dtype,
        flops_matrix=matrix,
        flops_nonmatrix=nonmatrix,
        read_weights=params * a.dtype,
        **fixed_state(state),
        read_activations=m * a.channels * ctx.act_bytes,
        write_activations=m * a.channels * ctx.act_bytes,
    )


def _classed(a: SimpleNamespace, flops: sp.Expr) -> tuple[sp.Expr, sp.Expr]:
    """(matrix, non-matrix) FLOPs: all in `flops_as`, or a one-token call's in `decode_as` where that differs
    (RecurrentGemma's torch code convolves a prompt but sums the taps' products elementwise for one token)."""
    step_as = a.flops_as if a.decode_as is None else a.decode_as
    if step_as == a.flops_as:
        return (flops, ZERO) if a.flops_as == "matrix" else (ZERO, flops)
    step, call = sp.Piecewise((flops, sp.Eq(P, 1)), (ZERO, True)), sp.Piecewise((ZERO, sp.Eq(P, 1)), (flops, True))
    return (call, step) if a.flops_as == "matrix" else (step, call)


def saved(a: SimpleNamespace, ctx: CostContext) -> Saved:
    """Its input, for the taps' gradient."""
    return Saved(inputs=True)


SPEC = OpSpec(
    kind="conv",
    shards=("replicated", "heads"),
    doc=__doc__,
    state_kind=lambda a: "conv",
    args=(
        Arg("channels", "dim", required=True, doc="channels convolved (depthwise)"),
        Arg("kernel", "dim", required=True, doc="taps per channel"),
        Arg("slots", "expr", None, doc="inputs kept per channel between calls (default: kernel)"),
        Arg("bias", "bool", False, doc="a bias per channel"),
        Arg("padded", "bool", False, doc="count the kernel − 1 padding positions of a prefill"),
        Arg("decode_outputs", "expr", 1, doc="outputs a decode step convolves per request: 1, or 2 when the kept "
            "`kernel` inputs and the new one are convolved whole (transformers' torch reference)"),
        Arg("window", "bool", False, doc="convolve the kept slots and the new inputs as one sequence, as "
            "transformers' torch source does (two outputs per decode step)"),
        Arg("flops_as", "enum", "nonmatrix", choices=("matrix", "nonmatrix"), doc="how its FLOPs are counted"),
        Arg("decode_as", "enum", None, choices=("matrix", "nonmatrix"), doc="how a one-token call's FLOPs are "
            "counted, where not as `flops_as` (a step that sums the taps' products elementwise)"),
        Arg("dtype", "dtype", "weights", doc="storage format of the weights"),
        Arg("state_dtype", "dtype", "act", doc="storage format of the slots"),
    ),
    widths=widths,
    cost=cost,
    saved=saved,
    diagram_shape=diagram_shape,
    drawn_as="cylinder",
    formula="params = channels·kernel; F = 2·channels·kernel per row; M = B·slots·channels·bytes",
)
