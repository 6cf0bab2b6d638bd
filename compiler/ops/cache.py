"""`cache`: context state that grows by one entry of `width` values per position (KV cache).

Seed 002 §2.2.1: c_KV = 2·L·n_KV·d_h·b_KV bytes per token, M_KV = c_KV·H; §2.2.3: a call writes
the entries of its P new positions, per request.
"""

from __future__ import annotations

from types import SimpleNamespace

from .. import symbols
from .base import Arg, Cost, CostContext, OpSpec

KINDS = ("kv", "latent", "window", "compressed", "index", "recurrent", "conv", "buffer")


def widths(a: SimpleNamespace):
    return a.width, None


def entry_bytes(a: SimpleNamespace):
    return a.width * a.dtype


def cost(a: SimpleNamespace, ctx: CostContext) -> Cost:
    per_token = entry_bytes(a)
    return Cost(
        state_per_token=per_token,
        state_bytes=symbols.B * symbols.H * per_token,   # every request keeps its own history
        write_state=symbols.m * per_token,               # the new positions' entries
    )


SPEC = OpSpec(
    kind="cache",
    doc=__doc__,
    positional=("growth",),
    produces=False,
    args=(
        Arg("growth", "enum", required=True, choices=("per_token",), doc="how entries accrue"),
        Arg("width", "dim", required=True, doc="values stored per position"),
        Arg("dtype", "dtype", "kv", doc="storage format of the entries"),
        Arg("kind", "enum", "kv", choices=KINDS, doc="class in state_by_kind"),
    ),
    widths=widths,
    cost=cost,
)
