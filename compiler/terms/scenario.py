"""Scenario algebra: the book's letters (m, m_out, N_pair, H) in terms of B, S, P, G per phase."""

from __future__ import annotations

import sympy as sp

from .conventions import Conventions, Scenario, counting  # noqa: F401  (re-exported: the scenario's data)
from .quantities import LEVELS  # noqa: F401  (fields held at the end of a phase; re-exported)
from .symbols import B, G, H, N_pair, N_rect, P, S, causal_pairs, m, m_out, rectangle_pairs

_j = sp.Symbol("j", nonnegative=True, integer=True)

def call_form(expr: sp.Expr, options: Conventions) -> sp.Expr:
    """One call of B requests, each with S cached positions and P new ones."""
    logits_rows = B if options.logits == "last" else B * P
    return expr.xreplace({m: B * P, m_out: logits_rows, N_pair: causal_pairs(B, S, P),
                          N_rect: rectangle_pairs(B, S, P), H: S + P})


def at_phase(expr: sp.Expr, phase: str, options: Conventions, level: bool = False) -> sp.Expr:
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

        raise ArchError([Diagnostic(code="E408", message="this model's decode steps change form as the history "
                                    "grows (windows, compressed blocks), so a request has no single closed form",
                                    hint="evaluate a request with numbers: `archcost eval SPEC --phase request "
                                    "--S ... --P ... --G ...`")])
    return sp.expand(sp.summation(step, (_j, 0, G - 2)))
