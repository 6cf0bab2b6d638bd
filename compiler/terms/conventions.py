"""A run's counting conventions and its request shape, as data (no sympy: the formula cache keys on these)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict

from .letters import conventions


class Conventions(BaseModel):
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
    # a format for the KV cache (the spec's `kv` precision role), e.g. fp8: what serving engines run
    kv: str | None = None
    # parameters as the model's values (logical), or as a checkpoint stores them, block scales counted too
    # (stored: a safetensors total, MiniMax-M2's 228,703,644,928)
    scales: Literal["logical", "stored"] = "logical"
    # choices for the spec's own `option` statements (execution paths), e.g. (("mla_cache", "expanded"),)
    paths: tuple[tuple[str, str], ...] = ()

    def cost_conventions(self) -> dict[str, str]:
        chosen = {} if self.attention == "as_written" else {"attention": self.attention}
        stored = {"scales": "stored"} if self.scales == "stored" else {}
        return {**chosen, "vector_params": self.vector_params, "routing": self.routing, **stored}


def counting(ledger: str = "chapter", attention: str | None = None, vector_params: str | None = None,
             **rest) -> Conventions:
    """The conventions of a ledger, overridden by any explicitly chosen attention or vector_params
    (letters.conventions, as data)."""
    return Conventions(**conventions(ledger, attention, vector_params, **rest))


class Scenario(BaseModel):
    model_config = ConfigDict(frozen=True)

    B: int = 1
    S: int = 0
    P: int = 1
    G: int = 1

    def values(self) -> dict:
        """{letter symbol: value}, to put the shape into a closed form (imports sympy's letters when used)."""
        from .symbols import B, G, P, S

        return {B: self.B, S: self.S, P: self.P, G: self.G}
