"""Every stdlib block compiles on its own, with every required argument set to 64."""

from __future__ import annotations

import pytest
import sympy as sp
from helpers import STDLIB

from archcost.compiler.compilation import compile_text, probe_that_compiles
from archcost.dsl.parser import parse

BLOCKS = [(path, block) for path in sorted(STDLIB.rglob("*.arch")) for block in parse(path.read_text()).blocks]


def _use_line(path) -> str:
    return "use std." + ".".join(path.relative_to(STDLIB).with_suffix("").parts)


@pytest.mark.parametrize("path,block", BLOCKS, ids=[b.name for _, b in BLOCKS])
def test_block_compiles_alone(path, block):
    """`archcost check`'s probe (side inputs, `input.2`, given a lookup each) compiles with finite, ≥ 0 totals."""
    compiled = []
    probe_that_compiles(block, lambda probe, name: compiled.append(
        compile_text(f"{_use_line(path)}\n{probe}", name=name)))
    model = compiled[-1]
    for field in ("params", "flops_matrix", "flops_nonmatrix", "state_bytes", "read_weights"):
        value = model.total(field).xreplace({s: 7 for s in model.total(field).free_symbols})
        assert sp.sympify(value) >= 0, (block.name, field)
