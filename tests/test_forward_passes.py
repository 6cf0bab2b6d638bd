"""The passes a forward makes over its layers (compiler/importer/passes.py): the order of its calls written with
the fewest items, each run of equal parts as one loop."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from archcost.compiler.importer.passes import Loop, looped


def unrolled(nodes) -> tuple[str, ...]:
    return tuple(path for node in nodes for path in (
        unrolled(node.body) * node.count if isinstance(node, Loop) else (node,)))


def size(nodes) -> int:
    return sum(1 + size(node.body) if isinstance(node, Loop) else 1 for node in nodes)


@pytest.mark.parametrize("calls, written", [
    # a forward that calls each module once: as it is
    ("abcd", ("a", "b", "c", "d")),
    # HRM-Text: (low stack three times, then the high stack) twice
    ("eLLLHLLLH", ("e", Loop(2, (Loop(3, ("L",)), "H")))),
    # Dory: input layers, the norm, then (the norm and the recurrent layers) twice, the output layers
    ("abnnrsnrso", ("a", "b", "n", Loop(2, ("n", "r", "s")), "o")),
    # a weightless norm twice in a row stays two calls (a loop of it is no shorter)
    ("ann", ("a", "n", "n")),
])
def test_the_calls_are_written_as_loops(calls, written):
    assert looped(tuple(calls)) == written


@given(st.lists(st.sampled_from("abc"), max_size=14).map(tuple))
def test_the_loops_unroll_to_the_calls_and_are_never_longer(calls):
    nodes = looped(calls)
    assert unrolled(nodes) == calls
    assert size(nodes) <= len(calls)
