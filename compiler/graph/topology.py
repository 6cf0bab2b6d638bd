"""What a pass over the graph reads of its edges, in one place: the ops in order, each op's tensor inputs and
readers, and whether it reads a cache. networkx builds a view for each edge query; a layout search places
dozens of splits of one graph, and those views were a third of each."""

from __future__ import annotations

from dataclasses import dataclass

import networkx as nx


@dataclass(frozen=True)
class Topology:
    """What the placement reads of the graph's edges, read once per model (a search places dozens of splits)."""

    order: tuple[str, ...]                  # the ops in topological order
    inputs: dict[str, list[tuple[str, dict]]]  # an op's tensor inputs: (producer, the edge's data), in edge order
    readers: dict[str, list[str]]           # the ops reading an op's output tensor, in edge order
    caches: dict[str, str]                  # an op reading a state (a cache) -> the op holding it (its first
                                            # state edge's source)


def topology(graph: nx.DiGraph, memo: dict) -> Topology:
    """The graph's Topology, kept in a compiled model's memo."""
    if ("topology",) not in memo:
        memo["topology",] = Topology(
            order=tuple(nx.topological_sort(graph)),
            inputs={n: [(s, e) for s, _, e in graph.in_edges(n, data=True) if e["kind"] == "tensor"]
                    for n in graph.nodes},
            readers={n: [t for _, t, e in graph.out_edges(n, data=True) if e["kind"] == "tensor"] for n in graph.nodes},
            caches=_caches(graph))
    return memo["topology",]


def _caches(graph: nx.DiGraph) -> dict[str, str]:
    found: dict[str, str] = {}
    for source, target, edge in graph.edges(data=True):
        if edge["kind"] == "state":
            found.setdefault(target, source)
    return found
