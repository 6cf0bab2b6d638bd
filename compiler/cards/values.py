"""An op's values at a call: one evaluator per model and phase of every distinct cost expression among its ops'
fields, each table remembered per shape (B, S, P, G) so that the layouts of a search at one shape share them.

`Symbolic` says a number cannot be had this way (a degree kept as a letter, a request's decodes, whose sum is not
a product of sums, a value the fast forms do not vouch for); the caller then evaluates the symbolic card.
"""

from __future__ import annotations

from fractions import Fraction

import sympy as sp

from ..numbers import forms
from ..numbers.assemble import Evaluator
from ..numbers.leaves import Leaf, forms_of
from ..ops.sharding import HELD
from ..terms.quantities import LEVELS
from ..terms.symbols import P

CARD_FIELDS = ("params", "weight_bytes", "state_bytes", "flops_matrix", "flops_nonmatrix")
READS = ("read_weights", "read_lookups", "read_state", "read_activations")
WRITES = ("write_state", "write_activations")
FIELDS = CARD_FIELDS + READS + WRITES
EDGE_READS = "edge reads"   # the activations an op reads over its input edges (the graph keeps them on edges)
COLUMN_NAMES = FIELDS + (EDGE_READS,)  # an op's values in a card's plan, in this order

REMEMBERED_SHAPES = 4096    # op values kept per model, shapes beyond this many forget the older ones


class Symbolic(Exception):
    """The figures need the symbolic card: a share or a value that is not a number at this call."""


def as_fraction(share, positions: int = 1) -> Fraction:
    """A share as an exact fraction: a number once the layout's degrees and the call's P are."""
    if not isinstance(share, sp.Basic):
        share = sp.nsimplify(share)
    if not share.is_Rational:
        share = share.xreplace({P: sp.Integer(positions)})
        if not share.is_Rational:
            raise Symbolic(str(share))
    return Fraction(int(share.p), int(share.q))


def table_of(compiled, phase: str, node_id: str, rows: dict) -> tuple[tuple, dict]:
    """The table holding an op's values (every op's at the phase; an expert layer's own at its EP group's
    rows) and where the op's are in it."""
    ratio = rows and next(iter(rows.values())) / next(iter(rows))
    key = ("card table", phase, FIELDS) + ((node_id, ratio) if rows else ())
    _, where = op_table(compiled, key, phase, [node_id] if rows else list(compiled.graph.nodes), rows, FIELDS)
    return key, where[node_id]


def values_at(compiled, key: tuple, shape: tuple[int, int, int, int]) -> tuple:
    """A table's values at a shape (B, S, P, G), remembered for the next layout at the same shape."""
    remembered = compiled.memo.setdefault(("values at", key), {})
    if shape not in remembered:
        if len(remembered) >= REMEMBERED_SHAPES:
            remembered.clear()
        try:
            remembered[shape] = compiled.memo[key][0].function(*shape)
        except (ZeroDivisionError, ValueError, TypeError, OverflowError) as error:
            raise Symbolic(str(error)) from None
    return remembered[shape]


def op_table(compiled, key: tuple, phase: str, node_ids: list, rows: dict, fields: tuple) -> tuple:
    """One evaluator of every distinct (expression, rule) among the ops' fields, and where each op's are."""
    def build():
        leaves, seen, where = {}, {}, {}
        for node_id in node_ids:
            cost = compiled.graph.nodes[node_id]["cost"]
            exprs = {name: getattr(cost, name) for name in fields}
            if rows:
                exprs = {name: e if name in HELD else e.xreplace(rows) for name, e in exprs.items()}
            if "read_activations" in fields:
                exprs[EDGE_READS] = sp.Add(*(edge["cost"]["read_activations"] for _, _, edge
                                             in compiled.graph.in_edges(node_id, data=True) if "cost" in edge))
            where[node_id] = []
            for name, expr in exprs.items():
                field = "read_activations" if name == EDGE_READS else name
                leaf = (expr, field in LEVELS)
                if leaf not in seen:
                    seen[leaf] = len(seen)
                    leaves[str(seen[leaf])] = Leaf(expr, phase, field)
                where[node_id].append(seen[leaf])
        return leaves, where
    return table(compiled, key, build)


def table(compiled, key: tuple, build) -> tuple:
    """(evaluator, extra) of the leaves `build()` gives with its extra, built once per model under `key` (what
    values_at evaluates); Symbolic when a leaf holds a name the scenario does not bind."""
    if key not in compiled.memo:
        leaves, extra = build()
        try:
            compiled.memo[key] = (Evaluator(forms_of(compiled, leaves)), extra)
        except forms.NotPlain:
            compiled.memo[key] = None
    if compiled.memo[key] is None:
        raise Symbolic("a name the scenario does not bind")
    return compiled.memo[key]
