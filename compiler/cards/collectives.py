"""Collective operations among n cards: the bytes each card sends and the steps it waits, by the ring formulas.

A ring all-reduce of a buffer of `size` bytes is a reduce-scatter then an all-gather: each card sends
2(n−1)/n·size in 2(n−1) steps; an all-gather or a reduce-scatter of a `size`-byte whole sends (n−1)/n·size
in n−1 steps; an all-to-all of the `size` bytes one card holds sends the (n−1)/n of it that belongs
elsewhere; a send between pipeline stages moves the whole buffer once (Thakur, Rabenseifner & Gropp 2005).
"""

from __future__ import annotations

from dataclasses import dataclass

import sympy as sp

KINDS = ("all_reduce", "all_gather", "reduce_scatter", "all_to_all", "send")


@dataclass(frozen=True)
class Collective:
    """One collective on an edge of the graph: its kind, the group it spans, the buffer and how often."""

    kind: str
    edge: tuple[str, str]      # producer op id, consumer op id
    group: str                 # the layout degree it spans: tp, ep, pp, cp
    cards: sp.Expr             # n
    size: sp.Expr              # bytes of the buffer, per call (in the scenario's letters)
    times: sp.Expr             # copies of the edge in the model (its consumer's multiplicity)
    network: sp.Expr = sp.Integer(0)  # the part of its bytes and steps that goes between servers
    sampling: bool = False     # the logits gathered to sample a token: serving's, not a training step's

    @property
    def sent(self) -> sp.Expr:
        """Bytes one card sends for this collective, every copy of it, per call."""
        return self.times * sent_bytes(self.kind, self.size, self.cards)

    @property
    def steps(self) -> sp.Expr:
        """Latency-bound steps one card waits, every copy, per call."""
        return self.times * ring_steps(self.kind, self.cards)


def sent_bytes(kind: str, size: sp.Expr, cards: sp.Expr) -> sp.Expr:
    n = cards
    share = {"all_reduce": 2 * (n - 1) / n, "all_gather": (n - 1) / n, "reduce_scatter": (n - 1) / n,
             "all_to_all": (n - 1) / n, "send": 1}[kind]
    return share * size  # sizes and group sizes of numbers, sympy terms or numpy arrays alike (the screen's)


def ring_steps(kind: str, cards: sp.Expr) -> sp.Expr:
    n = cards
    return {"all_reduce": 2 * (n - 1), "all_gather": n - 1, "reduce_scatter": n - 1, "all_to_all": n - 1,
            "send": sp.Integer(1)}[kind]


def network_share(collective: Collective, degrees) -> sp.Expr:
    """The part of a collective's bytes and steps that leaves the server, with the cards numbered TP first,
    then CP, then DP (EP groups are runs of a stage's tp·dp cards), then PP (Megatron's order). A ring over a
    group wider than a server runs at the speed of its hops between servers: all of it counts there. An
    all-to-all over ep cards sends (ep − node)/(ep − 1) of what leaves a card to other servers; a node-limited
    dispatch's hop between servers (group `nodes`) is all network."""
    node, group = degrees.node_cards, collective.group
    if group == "nodes":
        return sp.Integer(1)
    extent = group_extent(collective, degrees)
    if node is None or extent is None or not all(isinstance(x, sp.Integer) for x in (node, extent)) \
            or int(extent) <= int(node):  # compared as integers: sympy's relational is the slower way to a bool
        return sp.Integer(0)
    if collective.kind == "all_to_all":
        return (extent - node) / (extent - 1)
    return sp.Integer(1)


def servers_spanned(collective: Collective, degrees) -> int:
    """The servers a collective's group spans (NCCL's nNodes): its cards, at most one a server when the group's
    stride fills one, else as many servers as its extent needs."""
    node, extent, cards = degrees.node_cards, group_extent(collective, degrees), collective.cards
    if collective.group == "nodes":
        return int(cards)
    if node is None or extent is None or not all(isinstance(x, sp.Integer) for x in (node, extent, cards)):
        return 1
    return servers_for(int(extent), int(cards), int(node))


def servers_for(extent: int, cards: int, node: int) -> int:
    """The servers a group of `cards` spread over `extent` consecutive card numbers spans, `node` a server."""
    return 1 if extent <= node else min(cards, -(-extent // node))


def group_extent(collective: Collective, degrees):
    """The span of card numbers a collective's group covers (Megatron's order: TP, CP, DP, PP)."""
    group = collective.group
    if group in ("tp", "sampling"):
        return degrees.tp
    if group in ("ep", "etp"):  # node-limited: a server
        return collective.cards
    if group == "cp":
        return degrees.tp * degrees.cp
    if group == "pp":
        return degrees.tp * degrees.cp * degrees.dp * degrees.pp
    return None
