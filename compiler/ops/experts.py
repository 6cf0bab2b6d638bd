"""`experts`: E feed-forward experts of `matrices` d×f matrices each, k of them routed per token.

Seed 002 §2.4.1: params E·N_e; Σ t_e = m·k rows, so F = 2·N_e·m·k whatever the routing; §2.4.2 and
Example 2-4: the weight bytes a batch reads are U·N_e·b, U the distinct experts its tokens touch.
"""

from __future__ import annotations

from types import SimpleNamespace

import sympy as sp

from ..symbols import Min, m
from .base import Arg, Cost, CostContext, OpSpec

ACTIVATION_FLOPS = 5  # SiLU(gate)·up per hidden value, as in the stdlib's swiglu block


def widths(a: SimpleNamespace):
    return a.signature[0], a.signature[0]


def distinct_experts(a: SimpleNamespace, routing: str) -> sp.Expr:
    """U: experts a call's m·k routed rows touch, under the routing the scenario assumes."""
    E, k = a.count, a.top
    if routing == "concentrated":   # every token picks the same k experts
        return Min(E, k)
    if routing == "random":         # expected distinct experts for m independent tokens
        return E * (1 - (1 - k / E) ** m)
    return Min(E, m * k)         # uniform: rows spread evenly, one expert per row until all are used


def cost(a: SimpleNamespace, ctx: CostContext) -> Cost:
    width, hidden = a.signature
    per_expert = a.matrices * width * hidden
    routed_rows = m * a.top                                   # Σ t_e = m·k
    touched = distinct_experts(a, ctx.options.get("routing", "uniform"))
    return Cost(
        params=a.count * per_expert,
        weight_bytes=a.count * per_expert * a.dtype,
        flops_matrix=2 * routed_rows * per_expert,
        flops_nonmatrix=routed_rows * (ACTIVATION_FLOPS * hidden + 2 * width),  # activation, weighted sum
        read_weights=touched * per_expert * a.dtype,
        selected_expert_bytes=a.top * per_expert * a.dtype,   # Table 2-C: k experts per token
        read_activations=routed_rows * width * ctx.act_bytes,
        write_activations=routed_rows * width * ctx.act_bytes,
    )


SPEC = OpSpec(
    kind="experts",
    doc=__doc__,
    positional=("signature",),
    args=(
        Arg("signature", "signature", required=True, doc="model width -> expert hidden width"),
        Arg("count", "dim", required=True, doc="experts E"),
        Arg("top", "dim", required=True, doc="experts k each token is routed to"),
        Arg("matrices", "dim", 3, doc="matrices per expert: 3 for SwiGLU (gate, up, down)"),
        Arg("dtype", "dtype", "weights", doc="storage format of the expert weights"),
    ),
    widths=widths,
    cost=cost,
)
