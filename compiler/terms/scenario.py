"""Scenario algebra: the book's letters (m, m_out, N_pair, H) in terms of B, S, P, G per phase."""

from __future__ import annotations

from typing import Literal

import sympy as sp
from pydantic import BaseModel, ConfigDict

from .letters import LEDGERS
from .quantities import LEVELS  # noqa: F401  (fields held at the end of a phase; re-exported)
from .symbols import B, G, H, N_pair, N_rect, P, S, causal_pairs, m, m_out, rectangle_pairs

Phase = Literal["prefill", "decode", "call", "request"]


_j = sp.Symbol("j", nonnegative=True, integer=True)

class Options(BaseModel):
    """Counting conventions a run selects; every output names them."""

    model_config = ConfigDict(frozen=True)

    # m_out = B (the last token of each request, seed 002 §2.1.2) or m (every token)
    logits: Literal["last", "all"] = "last"
    # pairs an `attend` computes: as its spec says, causal-effective, the full rectangle, or half
    # the rectangle (seed 000 "Code mẫu 2": 2·L·n_ctx·d_attn per token with n_ctx = n)
    attention: Literal["as_written", "causal", "rectangle", "half_rectangle"] = "as_written"
    # vector parameters (norm scales, biases): non-matrix work, or 2 FLOPs per parameter per row
    # as matrix work (seed 000's "2N per token" counts every non-embedding parameter)
    vector_params: Literal["nonmatrix", "matrix"] = "nonmatrix"
    # which experts a batch's tokens touch (seed 002 Example 2-4): spread evenly, all on the same k,
    # or independently at random
    routing: Literal["uniform", "concentrated", "random"] = "uniform"
    # a format for the matrix weights outside embedding and head (seed 002 §2.6.2), e.g. int4_g128
    weights: str | None = None
    # choices for the spec's own `option` statements (execution paths), e.g. (("mla_cache", "expanded"),)
    paths: tuple[tuple[str, str], ...] = ()

    def cost_options(self) -> dict[str, str]:
        chosen = {} if self.attention == "as_written" else {"attention": self.attention}
        return {**chosen, "vector_params": self.vector_params, "routing": self.routing}


def counting(ledger: str = "chapter", attention: str | None = None, vector_params: str | None = None,
             **rest) -> Options:
    """Options from a ledger's conventions, overridden by any explicitly chosen attention or vector_params
    (the CLI's flags and the API's keywords both come through here)."""
    chosen = dict(LEDGERS[ledger])
    chosen.update({k: v for k, v in (("attention", attention), ("vector_params", vector_params)) if v})
    return Options(**rest, **chosen)


class Scenario(BaseModel):
    model_config = ConfigDict(frozen=True)

    B: int = 1
    S: int = 0
    P: int = 1
    G: int = 1

    def values(self) -> dict[sp.Symbol, int]:
        return {B: self.B, S: self.S, P: self.P, G: self.G}


def call_form(expr: sp.Expr, options: Options) -> sp.Expr:
    """One call of B requests, each with S cached positions and P new ones."""
    logits_rows = B if options.logits == "last" else B * P
    return expr.xreplace({m: B * P, m_out: logits_rows, N_pair: causal_pairs(B, S, P),
                          N_rect: rectangle_pairs(B, S, P), H: S + P})


def at_phase(expr: sp.Expr, phase: str, options: Options, level: bool = False) -> sp.Expr:
    """`expr` (per call, in m, m_out, N_pair, H) as a closed form in B, S, P, G for `phase`."""
    call = call_form(expr, options)
    if phase in ("call", "prefill"):
        return call
    if phase == "decode":
        return call.xreplace({P: 1})
    if level:  # what is held once the request's last decode has run: H = S + P + G - 1
        return call.xreplace({S: S + P + G - 2, P: 1})
    return call + decode_sum(call)


def decode_sum(call: sp.Expr) -> sp.Expr:
    """Σ over the G − 1 decodes of a request: decode j sees S + P + j cached positions. Only a step that is a
    polynomial in j has one closed form for every history; a step with floors, windows or minima (compressed
    blocks, sliding windows) changes form as the history grows: refused here, evaluated with numbers instead."""
    step = sp.expand(call.xreplace({S: S + P + _j, P: 1}))
    if not step.is_polynomial(_j):
        from archcost.dsl.errors import ArchError, Diagnostic

        raise ArchError([Diagnostic(code="E401", message="this model's decode steps change form as the history "
                                    "grows (windows, compressed blocks), so a request has no single closed form",
                                    hint="evaluate a request with numbers: `archcost eval SPEC --phase request "
                                    "--S ... --P ... --G ...`")])
    return sp.expand(sp.summation(step, (_j, 0, G - 2)))
