"""Number formats and the precision roles (weights, kv, act) a spec assigns them."""

from __future__ import annotations

import sympy as sp

# bytes per stored value; block-scaled formats arrive with the DeepSeek V4 issue
FORMATS: dict[str, sp.Rational] = {
    "fp32": sp.Integer(4),
    "bf16": sp.Integer(2),
    "fp16": sp.Integer(2),
    "fp8": sp.Integer(1),
}

# roles every model has, and the format each takes when a spec says nothing
DEFAULT_ROLES: dict[str, str] = {"weights": "bf16", "kv": "bf16", "act": "bf16", "state": "fp32"}
