"""Sublayers side by side in one decoder layer, reading one norm and adding into one residual: GPT-J, CodeGen,
Phi-1/2, Cohere and Falcon's parallel_attn (attention beside the MLP), Falcon-H1 (attention beside Mamba-2,
then its MLP). The layer holds fewer norms than sublayers; the ones that share a norm are written as a block
of the spec's own: the norm, each sublayer with `norm = none, residual_add = false` reading it, and one
residual of the stream and all of them (std.norm's `none` and `residual`'s `inputs`).
"""

from __future__ import annotations

from archcost.dsl import ast

from .reading.modules import Found
from .reading.spec import call, value

# the stdlib blocks that can leave their norm and residual to the caller
BESIDE = ("gqa", "mla", "mamba2", "swiglu", "geglu", "gelu_mlp", "moe")


def shared_norm(found: list[tuple[str, Found]], norms: list[str]) -> int:
    """How many sublayers, from the first, read the layer's first norm together: all of them when one norm
    serves two sublayers, the two mixers when two mixers and an MLP hold two norms; 0 when each has its own."""
    mixers = [block.mixer for _, block in found].count(True)
    if len(found) == 2 and len(norms) == 1:
        return 2
    if mixers == 2 and len(found) == len(norms) + 1:
        return 2
    return 0


def block(calls: list[tuple[ast.BlockCall, str]], kind: str, name: str, where: str) -> ast.BlockDef | None:
    """The block of `calls` side by side on one `kind` norm (each call with the label it takes), or None when
    a call's block cannot leave its norm and residual to the caller."""
    if any(c.name not in BESIDE for c, _ in calls):
        return None
    body: list[ast.Stmt] = [call(kind, "d", label="pre_norm")]
    for i, (inner, label) in enumerate(calls):
        kept = [a for a in inner.args if not (isinstance(a, ast.Keyword) and a.name in ("norm", "residual_add"))]
        extra = [ast.Keyword(name="norm", value=value("none")), ast.Keyword(name="residual_add", value=value(False))]
        if i:
            extra.append(ast.Keyword(name="from", value=value("pre_norm")))
        body.append(inner.model_copy(update={"args": [*kept, *extra], "label": label}))
    sources = ast.Tuple(items=[value("input"), *(value(label) for _, label in calls)])
    body.append(call("residual", "d", inputs=len(calls) + 1, **{"from": sources}))
    return ast.BlockDef(name=name, params=[ast.Param(name="d")], body=body,
                        note=f"{where}: {' and '.join(label for _, label in calls)} side by side on one norm and "
                             "one residual")


__all__ = ["BESIDE", "block", "shared_norm"]
