"""The closed set of primitive ops: every module of this package that defines a `SPEC` registers it."""

from __future__ import annotations

import contextlib
import importlib
import pkgutil
from collections.abc import Iterator

from .base import COST_FIELDS, Arg, Cost, CostContext, Figures, OpSpec

# The order the language reference lists them in; an op module not named here follows, by name.
ORDER = ("linear", "lookup", "attend", "index", "cache", "recurrent", "conv", "experts", "mix", "elementwise")


def discover() -> dict[str, OpSpec]:
    """Every op definition in this package, found by import: adding an op is adding a module."""
    found: dict[str, OpSpec] = {}
    for info in pkgutil.iter_modules(__path__):
        spec = getattr(importlib.import_module(f"{__name__}.{info.name}"), "SPEC", None)
        if isinstance(spec, OpSpec):
            found[spec.kind] = spec
    rank = {kind: i for i, kind in enumerate(ORDER)}
    return dict(sorted(found.items(), key=lambda item: (rank.get(item[0], len(rank)), item[0])))


REGISTRY: dict[str, OpSpec] = discover()


def shown(value) -> str:
    """A shape's size as printed: `—` for none, else sympy's text in the order written."""
    import sympy as sp

    return "—" if value is None else sp.sstr(value, order="none")


def shape_text(op) -> str:
    """An op's shape as the chapter's tables write it: `7168×1536`, `96 × 128×512`, `128 heads · qk 192 · v 128`."""
    shape = REGISTRY[op.kind].shape
    return shape(op.args, shown) if shape else f"{shown(op.in_width)} → {shown(op.out_width)}"


@contextlib.contextmanager
def registered(spec: OpSpec) -> Iterator[OpSpec]:
    """Register an op defined outside this package (a test's, a plugin's) for the duration of a block."""
    if spec.kind in REGISTRY:
        raise ValueError(f"op kind `{spec.kind}` is already defined")
    REGISTRY[spec.kind] = spec
    try:
        yield spec
    finally:
        del REGISTRY[spec.kind]


__all__ = [
    "REGISTRY",
    "COST_FIELDS",
    "Arg",
    "Cost",
    "CostContext",
    "Figures",
    "OpSpec",
    "discover",
    "registered",
    "shape_text",
    "shown",
]
