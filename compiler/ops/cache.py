"""`cache`: context state that grows per position, per completed block of r positions, or in a window.

Seed 002 §2.2.1: c_KV bytes per token, M = c_KV·H; §2.3.3: ⌊H/r⌋ complete entries plus the incomplete
block's buffer; a window of w positions holds min(H, w) entries; §2.2.3: a call writes its new entries.
"""

from __future__ import annotations

from types import SimpleNamespace

import sympy as sp

from ..terms.quantities import STATE_KINDS
from ..terms.symbols import B, H, Min, S, m
from .base import ZERO, Arg, Cost, CostContext, OpSpec, Saved, describe_terms


def widths(a: SimpleNamespace):
    return a.width, None


def entry_bytes(a: SimpleNamespace):
    return a.width * a.dtype


def entries(a: SimpleNamespace, history) -> sp.Expr:
    """Entries one request holds after `history` positions."""
    growth, args = a.growth[0]
    if growth == "per_block":
        return sp.floor(history / args[0])
    if growth == "window":
        return Min(history, args[0])
    if growth == "chunk":  # the current block of c positions only: it restarts at every multiple of c
        return history - args[0] * sp.floor(history / args[0])
    return history


def diagram_shape(a: SimpleNamespace, show) -> str:
    return f"{describe_terms(a.growth)} · width {show(a.width)}"


def cost(a: SimpleNamespace, ctx: CostContext) -> Cost:
    if not a.held:
        # entries held elsewhere (an earlier layer's, a draft model's target's): the attends that name it count
        # their reads; holding and writing them is the producer's
        return Cost()
    entry = entry_bytes(a)
    growth, args = a.growth[0]
    per_token = {"per_token": entry, "per_block": entry / args[0] if args else ZERO}.get(growth, ZERO)
    buffer = a.buffer * a.buffer_dtype if growth == "per_block" else ZERO  # the incomplete block, raw
    fixed = {"window": args[0] * entry if args else ZERO, "chunk": args[0] * entry if args else ZERO,
             "per_block": buffer}.get(growth, ZERO)
    # entries completed by this call; a window's ring buffer is written for every new position
    written = m if growth != "per_block" else B * (entries(a, H) - entries(a, S))
    return Cost(
        state_bytes=B * (entries(a, H) * entry + buffer),
        state_buffer=B * buffer,
        kv_bytes_per_token=per_token,
        state_fixed=fixed,
        write_state=written * entry,
    )


def saved(a: SimpleNamespace, ctx: CostContext) -> Saved:
    """In a training step a cache is the keys and values of the sequence, kept in the activations' format for
    the attention's backward (Korthikanti et al. 2022 §4.1: "Q and K", "V"); it holds no state across calls."""
    return Saved(inputs=True)


SPEC = OpSpec(
    kind="cache",
    shards=("replicated", "heads"),
    doc=__doc__,
    positional=("growth",),
    produces=False,
    state_kind=lambda a: a.kind,
    args=(
        Arg("growth", "mode", required=True, choices=("per_token", "per_block/1", "window/1", "chunk/1"),
            doc="per_token, per_block(r), window(w) or chunk(c) (the current block of c positions)"),
        Arg("width", "dim", required=True, doc="values stored per entry"),
        Arg("dtype", "dtype", "kv", doc="storage format of the entries"),
        Arg("kind", "enum", "kv", choices=STATE_KINDS, doc="class in state_by_kind"),
        Arg("buffer", "expr", 0, doc="values kept per request for the incomplete block (per_block only)"),
        Arg("buffer_dtype", "dtype", "state", doc="storage format of that buffer (fp32 in the chapter)"),
        Arg("shared", "bool", False, doc="readable (`state = NAME`) by ops in any later scope: cross-layer KV"),
        Arg("held", "bool", True, doc="false: entries held and written elsewhere (an earlier layer's, a draft "
            "model's target's): read by the ops that name it, held and written by none of this call's"),
    ),
    widths=widths,
    cost=cost,
    saved=saved,
    stores_state=True,
    diagram_shape=diagram_shape,
    drawn_as="cylinder",
    formula="M = B·(entries(H)·width·bytes + buffer), entries: H, ⌊H/r⌋ or min(H, w); "
            "W = the entries this call completes",
)


