"""Gemma 3n's AltUp projections of the embedding into its streams before the layers and out of them after
(std.altup's altup and altup_unembed): model-level blocks the walk reads beside the embedding and the final norm."""

from __future__ import annotations

from archcost.dsl import ast

from .reading.modules import Linear, linear
from .reading.spec import call

PROJECTIONS = ("altup_projections", "altup_unembed_projections")  # the base model's, in and out


def projections(child, name: str, d: int) -> ast.BlockCall | None:
    """`altup_embed(d, streams = s)` or `altup_unembed(…)` for the base model's lists of s − 1 d → d matrices."""
    found = [linear(part) for part in child.children()] if name in PROJECTIONS else []
    if not found or any(shape != Linear(d, d, False) for shape in found):
        return None
    block = "altup_embed" if name == PROJECTIONS[0] else "altup_unembed"
    streams = len(found) + 1
    return call(block, "d", streams=streams if streams != 4 else None, label="altup_in" if block == "altup_embed"
                else "altup_out")
