"""Scenario algebra: the book's letters (m, m_out, N_pair, H) in terms of B, S, P, G per phase."""

from __future__ import annotations

import sympy as sp

from .conventions import Conventions, Scenario, counting  # noqa: F401  (re-exported: the scenario's data)
from .quantities import LEVELS  # noqa: F401  (fields held at the end of a phase; re-exported)
from .symbols import B, G, H, N_pair, N_rect, P, S, causal_pairs, m, m_out, rectangle_pairs

_j = sp.Symbol("j", nonnegative=True, integer=True)

def call_letters(conventions: Conventions) -> dict[sp.Symbol, sp.Expr]:
    """The per-call letters in B, S, P: one call of B requests, each with S cached positions and P new ones."""
    logits_rows = B if conventions.logits == "last" else B * P
    return {m: B * P, m_out: logits_rows, N_pair: causal_pairs(B, S, P), N_rect: rectangle_pairs(B, S, P),
            H: S + P}


def call_form(expr: sp.Expr, conventions: Conventions) -> sp.Expr:
    """One call of B requests, each with S cached positions and P new ones."""
    return expr.xreplace(call_letters(conventions))


def phase_letters(phase: str, level: bool = False) -> dict[sp.Symbol, sp.Expr]:
    """What `at_phase` puts for B, S, P, G once the per-call letters are in them: nothing in a call or a
    prefill, one new position in a decode, and for what a request holds once its last decode has run, that
    decode (H = S + P + G - 1)."""
    if phase in ("call", "prefill"):
        return {}
    if phase == "decode":
        return {P: sp.Integer(1)}
    if phase == "request" and level:
        return {S: S + P + G - 2, P: sp.Integer(1)}
    raise ValueError(f"a {phase} flow has no single substitution (its decodes are summed)")


def at_phase(expr: sp.Expr, phase: str, conventions: Conventions, level: bool = False) -> sp.Expr:
    """`expr` (per call, in m, m_out, N_pair, H) as a closed form in B, S, P, G for `phase`."""
    call = call_form(expr, conventions)
    if phase in ("call", "prefill"):
        return call
    if phase == "decode" or level:
        return call.xreplace(phase_letters(phase, level))
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
