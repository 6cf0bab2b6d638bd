"""How an op instance sits on the cards of a layout: the words of the op-wide `shard` argument and their shares.

An op's `shard` word says how its work splits over a tensor-parallel group of `tp` cards (Shoeybi et al.
2019) or an expert-parallel group of `ep`; the op's definition lists the words it accepts. Each word gives
the part of the op's weights and state one card holds, the part of its work one card does, the layout of
its output (R: whole on every card, S: split, P: partial sums to be added) and the layout it needs.
"""

from __future__ import annotations

from dataclasses import dataclass

import sympy as sp

from ..terms.symbols import Min

ONE = sp.Integer(1)
# cost fields one card holds a part of (weights, state) and does a part of (FLOPs, traffic)
HELD = ("params", "params_active", "params_row_read", "weight_bytes", "state_bytes", "kv_bytes_per_token",
        "state_fixed", "state_buffer", "selected_expert_bytes")
WORDS = {
    "replicated": "every card holds the whole op and works on what reaches it (the default)",
    "column": "a linear split by output columns: each card holds in·out/tp and writes its slice (S)",
    "row": "a linear split by input rows: each card reads its slice and writes partial sums (P), added by an "
    "all-reduce where whole values are needed",
    "heads": "`heads(n)`: split by whole heads; with more cards than heads each head is held by tp/n cards",
    "vocab": "a table or head split by vocabulary rows: each card holds vocab/tp rows",
    "ep": "an expert layer split over the ep cards of an expert-parallel group: each holds experts/ep; tokens travel "
    "to their experts and back (all-to-all dispatch and combine)",
}


@dataclass(frozen=True)
class Share:
    """One op instance on one card of its group."""

    hold: sp.Expr          # the part of its weights and state one card holds
    work: sp.Expr          # the part of its FLOPs and traffic one card does
    output: str            # R, S or P
    needs: str             # R, S, or same (takes what it is given: an op acting on each feature alone)
    group: str = "tp"
    positions: sp.Expr = ONE  # the cards of a context-parallel group its work is split over (work is already /)


def share(word: str, heads: sp.Expr | None, tp: sp.Expr, ep: sp.Expr) -> Share:
    """The share a `shard` word gives (`heads` for `heads(n)`)."""
    if word == "column":
        return Share(1 / tp, 1 / tp, "S", "R")
    if word == "row":
        return Share(1 / tp, 1 / tp, "P", "S")
    if word == "heads":
        cards = Min(tp, heads)  # the cards that hold different heads; the rest hold copies
        return Share(1 / cards, 1 / cards, "S", "S")  # a whole input: each card takes its heads
    if word == "vocab":
        return Share(1 / tp, 1 / tp, "P", "R")
    if word == "ep":
        return Share(1 / ep, 1 / ep, "R", "R", group="ep")
    return Share(ONE, ONE, "same", "same")
