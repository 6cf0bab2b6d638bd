"""The closed set of primitive ops, looked up by kind."""

from __future__ import annotations

from . import attend, cache, conv, elementwise, experts, index, linear, lookup, mix, recurrent
from .base import COST_FIELDS, Arg, Cost, CostContext, OpSpec

REGISTRY: dict[str, OpSpec] = {m.SPEC.kind: m.SPEC for m in (linear, lookup, attend, index, cache, recurrent, conv, experts, mix, elementwise)}

__all__ = ["REGISTRY", "COST_FIELDS", "Arg", "Cost", "CostContext", "OpSpec"]
