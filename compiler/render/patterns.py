"""Runs of the same block calls written out one after another in a stack, so a diagram draws them once with ×N."""

from __future__ import annotations

from dataclasses import dataclass, field

import networkx as nx

from ..graph.ir import Cluster


@dataclass
class Runs:
    """What a diagram folds: the first pass of each run (its clusters, and how many passes), the clusters of the
    other passes, and for each op in those the op of the first pass it stands for."""

    first: dict[str, tuple[tuple[str, ...], int]] = field(default_factory=dict)  # parent -> (clusters, passes)
    hidden: set[str] = field(default_factory=set)
    stands_for: dict[str, str] = field(default_factory=dict)
    passes: dict[str, int] = field(default_factory=dict)  # op -> the pass it belongs to (0 for the first)


def runs(graph: nx.DiGraph, clusters: dict[str, Cluster], children: dict) -> Runs:
    """For each stack or block, the longest stretch of its block calls that repeats one pattern two or more
    times in a row (the pattern as short as it can be)."""
    found = Runs()
    ops_in, inner = _inside(graph, clusters)
    order = {node_id: index for index, node_id in enumerate(graph.nodes)}
    own: dict = {}
    for node_id, data in graph.nodes(data=True):
        own.setdefault(data["op"].cluster, []).append(order[node_id])
    for parent, kids in children.items():
        for calls in _adjacent(kids, clusters, own.get(parent, []), ops_in, order):
            _fold(found, calls, graph, clusters, ops_in, inner, parent)
    return found


def _adjacent(kids: list[str], clusters: dict[str, Cluster], own: list[int], ops_in, order) -> list[list[str]]:
    """The parent's block calls in statement order, split wherever an op of the parent's own (or a stack)
    stands between two of them: only calls written one right after another can fold."""
    spans = sorted((min(order[op] for op in ops_in[c]), max(order[op] for op in ops_in[c]), c)
                   for c in kids if ops_in[c])
    groups: list[list[str]] = [[]]
    last_end = None
    for start, end, cluster_id in spans:
        between = last_end is not None and any(last_end < index < start for index in own)
        if clusters[cluster_id].kind != "block" or between:
            groups.append([])
        if clusters[cluster_id].kind == "block":
            groups[-1].append(cluster_id)
        last_end = end
    return [group for group in groups if len(group) >= 2]


def _fold(found: Runs, calls: list[str], graph, clusters, ops_in, inner, parent) -> None:
    if parent in found.first:
        return  # one folded run per stack: the longest found first
    best = _longest_run([(clusters[c].block, _form(graph, c, ops_in)) for c in calls])
    if best is not None:
        start, period, count = best
        passes = [calls[start + p * period: start + (p + 1) * period] for p in range(count)]
        if not all(_feeds(graph, ops_in, a, b) for a, b in zip(passes, passes[1:])):
            return  # side by side (q and k each through a rope), not one after another
        found.first[parent] = (tuple(passes[0]), count)
        for number, stretch in enumerate(passes):
            for first, cluster_id in zip(passes[0], stretch, strict=True):
                for op in ops_in[cluster_id]:
                    found.passes[op] = number
                    if number:
                        found.stands_for[op] = first + op.removeprefix(cluster_id)
                if number:
                    found.hidden.update(inner[cluster_id])


def _feeds(graph: nx.DiGraph, ops_in: dict[str, list[str]], earlier: list[str], later: list[str]) -> bool:
    """Whether an op of one pass reads what an op of the pass before it wrote (a stack of layers does)."""
    before = {op for cluster_id in earlier for op in ops_in[cluster_id]}
    return any(source in before for cluster_id in later for op in ops_in[cluster_id]
               for source in graph.predecessors(op))


def _inside(graph: nx.DiGraph, clusters: dict[str, Cluster]) -> tuple[dict[str, list[str]], dict[str, set[str]]]:
    """The ops under each cluster, at any depth, and the clusters under each (itself included)."""
    ops_in: dict[str, list[str]] = {c: [] for c in clusters}
    inner: dict[str, set[str]] = {c: {c} for c in clusters}
    for cluster_id in clusters:
        parent = clusters[cluster_id].parent
        while parent is not None:
            inner[parent].add(cluster_id)
            parent = clusters[parent].parent
    for node_id, data in graph.nodes(data=True):
        cluster_id = data["op"].cluster
        while cluster_id is not None:
            ops_in[cluster_id].append(node_id)
            cluster_id = clusters[cluster_id].parent
    return ops_in, inner


def _form(graph: nx.DiGraph, cluster_id: str, ops_in: dict[str, list[str]]) -> tuple:
    """A block call's ops by their names inside it, with their kinds and shapes: calls of one form hold the same."""
    from ..ops import shape_text

    return tuple(sorted((op.removeprefix(cluster_id), graph.nodes[op]["op"].kind, shape_text(graph.nodes[op]["op"]),
                         str(graph.nodes[op]["cost"])) for op in ops_in[cluster_id]))


def _longest_run(forms: list[tuple]) -> tuple[int, int, int] | None:
    """(start, period, passes) of the stretch covering most calls with one pattern repeated, or None."""
    best, covered = None, 0
    for period in range(1, len(forms) // 2 + 1):
        for start in range(len(forms) - 2 * period + 1):
            count = 1
            while forms[start + count * period: start + (count + 1) * period] == forms[start: start + period]:
                count += 1
            if count >= 2 and count * period > covered:
                best, covered = (start, period, count), count * period
    return best
