"""The resolved model: op instances with bound arguments, widths and multiplicities."""

from __future__ import annotations

from dataclasses import dataclass, field
from types import SimpleNamespace

import sympy as sp

from archcost.dsl.errors import Span


@dataclass(frozen=True)
class Tensor:
    """A named value flowing between ops: who produced it, its rows and its width."""

    producer: str | None  # op id; None for the token ids entering the model
    rows: sp.Expr
    width: sp.Expr | None
    also: tuple[str, ...] = ()  # further producers: the arms of a `select` all feed what follows
    parts: tuple = ()  # a block's input given as several tensors side by side (`from = (input, o)`): each of them

    @property
    def producers(self) -> tuple[str, ...]:
        return tuple(p for p in (self.producer, *self.also) if p)


@dataclass(frozen=True)
class Cluster:
    """A block instance or a repeated stack, drawn as one box; `times` multiplies what is inside."""

    id: str
    label: str
    kind: str  # block | repeat | loop | select
    parent: str | None
    times: sp.Expr = sp.Integer(1)
    block: str | None = None            # the block a `block` cluster instantiates
    component: str | None = None        # that block's component class
    multiplicity: sp.Expr = sp.Integer(1)  # how many copies of it the model holds
    span: Span | None = field(default=None, compare=False)  # the statement that made it: a call, a repeat, an arm
    library: bool = field(default=False, compare=False)  # a block archcost ships (its file is std/…)


@dataclass(frozen=True)
class OpNode:
    """One op instance: a node of the cost graph, standing for `multiplicity` identical copies."""

    id: str
    kind: str
    label: str
    component: str
    multiplicity: sp.Expr
    args: SimpleNamespace = field(compare=False)
    in_width: sp.Expr | None
    out_width: sp.Expr | None
    rows: sp.Expr
    inputs: tuple[str, ...]
    states: tuple[str, ...]
    cluster: str | None
    span: Span | None = field(default=None, compare=False)
    tail: sp.Expr | None = None  # a replay stage's window: the op runs on the last min(P, tail) positions
    shard: tuple = ("replicated", None)  # (word, head count): how it splits over the cards of a layout
    call_site: Span | None = field(default=None, compare=False)  # the spec's call that led to a library's op
    steers: tuple[str, ...] = field(default=(), compare=False)  # labels of its block's ops it steers (drawn)
    # the passes of the `loop`s around it: of its `multiplicity` copies, each set of weights runs this many times
    reuse: sp.Expr = sp.Integer(1)
    # `shares NAME`: the calls sharing NAME run one set of weights, which the first holds; a later one's ops
    # hold none (held_by)
    shares: str | None = None
    held_by: str | None = None


@dataclass
class ModelIR:
    name: str
    nodes: list[OpNode]
    clusters: dict[str, Cluster]
    first_use: dict[sp.Symbol, Span | None]
    sources: object = field(repr=False)
    nearby: dict[sp.Symbol, tuple[str, ...]] = field(default_factory=dict)  # names in scope at the first use
    paths: dict[str, str] = field(default_factory=dict)  # `option` choices this model was resolved with
    path_choices: dict[str, list[str]] = field(default_factory=dict)  # every word each option allows
    act_format: object = None  # the Format activations are stored in (the model's `act` role)
    formats: dict = field(default_factory=dict, repr=False)  # every number format it can name, by name


def steered_ids(node: OpNode) -> list[str]:
    """The ids the labels of an op's `steers` would have: its siblings in its block."""
    parent = node.id.rpartition(".")[0]
    return [f"{parent}.{label}" if parent else label for label in node.steers]


def ancestors(clusters: dict[str, Cluster], cluster_id: str | None) -> tuple[str, ...]:
    """The clusters around a place in the stack, innermost first (the place itself included)."""
    chain = []
    while cluster_id is not None:
        chain.append(cluster_id)
        cluster_id = clusters[cluster_id].parent
    return tuple(chain)


def outermost(clusters: dict[str, Cluster], cluster_id: str | None) -> Cluster | None:
    """The model-level cluster a place sits in (its stack, or a block called at model level)."""
    chain = ancestors(clusters, cluster_id)
    return clusters[chain[-1]] if chain else None
