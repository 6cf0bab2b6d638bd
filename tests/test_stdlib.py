"""Every stdlib block compiles on its own, with every required argument set to 64."""

from __future__ import annotations

import pytest
import sympy as sp
from helpers import STDLIB

from archcost.compiler.pipeline import compile_text
from archcost.dsl.parser import parse

# blocks that read a second tensor beside the stream (`from = (previous, side)`), and its width with every
# required argument 64: per_layer_input reads its slice of the layers·width per-layer inputs
SIDE_INPUT = {"per_layer_input": 64 * 64}
BLOCKS = [(path, block) for path in sorted(STDLIB.rglob("*.arch")) for block in parse(path.read_text()).blocks]


def _use_line(path) -> str:
    return "use std." + ".".join(path.relative_to(STDLIB).with_suffix("").parts)


@pytest.mark.parametrize("path,block", BLOCKS, ids=[b.name for _, b in BLOCKS])
def test_block_compiles_alone(path, block):
    required = ", ".join("64" for p in block.params if p.default is None)
    side = SIDE_INPUT.get(block.name)
    reads = f"\n  lookup side: 1000 -> {side}" if side else ""
    flow = ", from = (embed, side)" if side else ""
    text = (f'{_use_line(path)}\nmodel "Probe" {{\n  lookup embed: 1000 -> 64{reads}\n  {block.name}({required}{flow})\n'
            '}\n')
    model = compile_text(text, name=f"<probe of {block.name}>")
    for field in ("params", "flops_matrix", "flops_nonmatrix", "state_bytes", "read_weights"):
        value = model.total(field).xreplace({s: 7 for s in model.total(field).free_symbols})
        assert sp.sympify(value) >= 0, (block.name, field)
