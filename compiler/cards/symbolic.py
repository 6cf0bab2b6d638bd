"""A layout's degrees as the placement reads them: sympy terms, numbers or the letters a formula keeps."""

from __future__ import annotations

from dataclasses import dataclass, replace

import sympy as sp

from ..ops.sharding import ONE


@dataclass(frozen=True)
class SymbolicLayout:
    """A Layout as the placement reads it: its degrees as sympy terms (numbers, or symbols when a formula keeps
    them: `--keep tp`) and its formats resolved."""

    tp: sp.Expr = ONE
    ep: sp.Expr = ONE
    pp: sp.Expr = ONE
    dp: sp.Expr = ONE
    cp: sp.Expr = ONE                  # context parallel: the positions of a call split over cp cards
    sequence_parallel: bool = False
    node_cards: sp.Expr | None = None  # cards per server; an EP group wider than one crosses the network
    node_limit: sp.Expr | None = None  # the servers one token is sent to at most (DeepSeek-V3: 4)
    dispatch: object = None            # the format tokens travel in to their experts (default: activations')
    imbalance: sp.Expr = ONE           # tokens the busiest expert card gets, over the average
    # whether the layout splits experts over cards (ep > 1): a kept `ep` letter stands for that structure only
    # where the layout has it, so a formula at ep = 1 keeps the experts split over tp as the numbers do
    expert_parallel: bool = True
    redundant: sp.Expr = sp.Integer(0)  # expert copies beyond the model's, spread over the EP group
    etp: sp.Expr = ONE                  # cards each expert's matrices split over inside its EP rank
    first_layers: int | None = None    # layers the first pipeline stage holds (Megatron's first-stage count)
    last_layers: int | None = None     # and the last

    def __hash__(self) -> int:
        """The fields' hash, found once: a layout search looks its placement, plans and shares up by these
        degrees hundreds of times a layout, and hashing their sympy terms anew each time was a third of it."""
        found = self.__dict__.get("_hash")
        if found is None:
            found = hash(tuple(getattr(self, name) for name in self.__dataclass_fields__))
            object.__setattr__(self, "_hash", found)
        return found

    def within_a_stage(self) -> SymbolicLayout:
        """What the split over one stage's cards depends on: these degrees but pp, dp and the end stages' layers
        (found once: a search keys its plans by it several times a layout)."""
        found = self.__dict__.get("_inner")
        if found is None:
            found = replace(self, pp=ONE, dp=ONE, first_layers=None, last_layers=None)
            object.__setattr__(self, "_inner", found)
        return found


def degrees_of(compiled, layout) -> SymbolicLayout:
    """A Layout's degrees, one object per degrees for a compiled model: its memos are keyed by them, and a lookup
    by the very key object skips comparing ~15 sympy terms (a dozen lookups a card); its hash and
    within_a_stage() are found once on it."""
    known = compiled.memo.setdefault(("degrees of",), {})  # Layout (frozen: hashed by its fields) → its degrees
    if layout not in known:
        degrees = layout.degrees(formats=compiled.ir.formats)
        known[layout] = compiled.memo.setdefault(("degrees", degrees), degrees)
    return known[layout]
