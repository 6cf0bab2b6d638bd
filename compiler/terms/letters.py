"""Plain names every output shares: the scenario letters' ranges, the phases, the named ledgers and the classes
of Table 2-B (no sympy, no pydantic, so the warm path of the CLI can read them)."""

from __future__ import annotations

PHASES: tuple[str, ...] = ("prefill", "decode", "call", "request")

# The range of a scenario letter, for the CLI's flags, the API's keywords and sweep grids alike: requests,
# positions and tokens far beyond any deployment, small enough to stay exact.
LOWEST = {"B": 1, "S": 0, "P": 1, "G": 1}
MAX_COUNT = 10**12
MAX_CARDS = 4096  # the layouts searched grow with the divisors of the count: enough for any deployment

# The six classes of the chapter's Table 2-B; every op belongs to one (`component`).
COMPONENTS = ("embedding_output", "attention", "dense_ffn", "routed_experts", "engram", "other")
# Classes of context state (`state_by_kind`): what a cache holds, and the recurrent, conv and buffer state.
STATE_KINDS = ("kv", "latent", "window", "compressed", "index", "recurrent", "conv", "buffer")

# Named ledgers: the conventions a source used, selectable as one word.
LEDGERS: dict[str, dict[str, str]] = {
    "chapter": {},                                                   # seed 002's calculator, the default
    "kipply": {"attention": "half_rectangle", "vector_params": "matrix"},  # seed 000 "Code mẫu 2"
}


# The counting conventions a run selects and their defaults (terms.conventions.Conventions holds them as a model).
CONVENTION_DEFAULTS = {"logits": "last", "attention": "as_written", "vector_params": "nonmatrix",
                       "routing": "uniform", "weights": None, "kv": None, "scales": "logical",
                       "paths": ()}


def conventions(ledger: str = "chapter", attention: str | None = None, vector_params: str | None = None,
                **rest) -> dict:
    """The conventions as data: a ledger's, overridden by any explicitly chosen attention or vector_params and
    by the rest given (the CLI's flags and the API's keywords both come through here; no pydantic)."""
    chosen = {**CONVENTION_DEFAULTS, **rest, **LEDGERS[ledger]}
    chosen.update({k: v for k, v in (("attention", attention), ("vector_params", vector_params)) if v})
    chosen["paths"] = tuple(sorted(dict(chosen["paths"]).items()))  # the last word for a name wins
    return chosen


def causal_pairs(batch, cached, new):
    """N_pair = B(PS + P(P+1)/2): each new query sees the cache and the new tokens up to itself."""
    return batch * (new * cached + new * (new + 1) / 2)


def rectangle_pairs(batch, cached, new):
    """B·P·(S+P): every query scored against every position, the mask applied after."""
    return batch * new * (cached + new)


def contradiction(message: str, hint: str | None = None):
    """Flags that ask for different answers to one question, or one without what it needs (E411)."""
    from archcost.dsl.errors import ArchError, Diagnostic

    return ArchError([Diagnostic(code="E411", message=message, hint=hint)])


def bad_value(message: str, hint: str | None = None):
    """A value given for a flag or keyword that the run cannot take (E401)."""
    from archcost.dsl.errors import ArchError, Diagnostic

    return ArchError([Diagnostic(code="E401", message=message, hint=hint)])
