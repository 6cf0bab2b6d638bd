"""Model IR to the cost graph: a networkx DiGraph, node = op instance, edge = tensor or state."""

from __future__ import annotations

import networkx as nx

from .ir import ModelIR


def lower(ir: ModelIR) -> nx.DiGraph:
    """One node per op instance (a repeated op stays one node with its multiplicity), with its place in the
    stack (`cluster`) and its stage (`tail`: a replay window); one edge per tensor an op reads (rows, width,
    number format) and per cache it reads (`order`: the position in its `state = (...)`)."""
    graph = nx.DiGraph(model=ir.name, clusters=ir.clusters)
    for node in ir.nodes:
        graph.add_node(node.id, op=node, cluster=node.cluster, tail=node.tail)
    for node in ir.nodes:
        for source in node.inputs:
            producer = graph.nodes[source]["op"]
            # a consumer may read fewer rows than were produced: the head reads m_out of m
            graph.add_edge(source, node.id, kind="tensor", rows=node.rows, width=producer.out_width,
                           format=ir.act_format)
        for order, state in enumerate(node.states):
            cache = graph.nodes[state]["op"]
            graph.add_edge(state, node.id, kind="state", rows=None, width=cache.in_width, order=order)
    return graph
