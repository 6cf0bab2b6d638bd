"""A mixture of experts' router read from its modules: the child holding its score matrix, the choices it
scores (weighted experts and LongCat-Flash's identity experts), and what it holds beside the matrix (a
score-correction bias, ERNIE 4.5's statics, Inkling's scalar on the routing weights)."""

from __future__ import annotations

from .modules import children, linear, own

ROUTER_SCALE = "global_scale"  # a router's learned scalar on its routing weights (InklingTopkRouter's)
# a router's one child holding its score matrix (module names; LongCat-Flash's router.classifier)
SCORERS = ("wg", "gate", "layer", "linear", "classifier")
ZERO_EXPERTS = "zero_expert_num"  # the MoE block's count of identity experts (LongcatFlashMoE), an attribute


def extras(module, scores: dict, count: int) -> tuple[bool, bool] | None:
    """(a score-correction bias, a learned scalar on the routing weights) held beside the score matrix; None
    when the router or the block holds anything else. A correction bias held as a parameter, the router's
    (Laguna) or the block's (AFMoE's expert_bias), counts as the router's bias: one value a choice either way;
    the scalar is InklingTopkRouter's global_scale."""
    held = own(module).get("expert_bias")
    if held is not None and (held != (count,) or "bias" in scores or "e_score_correction_bias" in scores):
        return None
    correction = (scores.get("e_score_correction_bias") == (count,) or held is not None) and "bias" not in scores
    scale = scores.get(ROUTER_SCALE) == (1,)
    known = {"weight", "bias", *(("e_score_correction_bias",) if correction else ()),
             *((ROUTER_SCALE,) if scale else ())}
    return None if set(scores) - known else (correction, scale)


def choices_of(module, scores: dict) -> tuple[int, int]:
    """(the router's choices, the weighted experts among them): the others are identity experts the block counts
    (LongcatFlashMoE's zero_expert_num), which a token picks as it picks the others and which give it its input
    back, scaled by its gate, through no matrix."""
    choices = scores["weight"][0]
    zero = getattr(module, ZERO_EXPERTS, 0) or 0
    return choices, choices - (zero if isinstance(zero, int) and 0 < zero < choices else 0)


def scoring_of(router):
    """The module holding the router's score matrix: the router itself, or its one linear child (HunYuan's
    gate.wg, AFMoE's router.gate, DBRX's router.layer, Ergo's gate.linear)."""
    inner = children(router)
    if not own(router) and len(inner) == 1 and set(inner) <= set(SCORERS):
        child = next(iter(inner.values()))
        return child if linear(child) is not None else router
    return router


def statics(router, count: int) -> bool | None:
    """Whether the router holds a learned score-correction bias as a parameter of a child (ERNIE 4.5's
    moe_statics, [1, E]); None when it holds any other child with parameters."""
    inner = children(router)
    if not inner:
        return False
    if set(inner) != {"moe_statics"} or set(own(inner["moe_statics"]).values()) != {(1, count)}:
        return None
    return True
