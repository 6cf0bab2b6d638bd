"""Block attention residuals (std.depth's block_attn_res): a layer child of one learned query of d, or of a few
(its own parameter `query`, (d,) or (queries, d)), beside a weightless norm, attending over the token's
representations stacked along depth before a sublayer (transformers' Inkling2BlockAttentionResidual:
attention_input before the attention, mlp_input before the MoE, and the base model's final_input before the
final norm). A layer's connections are read in the order it declares them, before its last sublayers (the first
layer's attention reads the embedding itself: it holds none before it).

How many states each one stacks follows from the forward (Inkling2TextModel.forward and the decoder layers'):
the stack starts empty; a layer whose `is_block_boundary` is set appends its input to the stack after it runs,
and within it the feed-forward's connection already sees that input stacked (its attention's output then starts
the new partial block: no residual add joins them); each connection also reads the partial block. So before
layer i, with B block states stacked: the attention's connection stacks B + 1, the feed-forward's B + 1 + 1 at a
boundary, else B + 1; the final one B + 1 after the last layer. A three-query connection feeds a full layer's
query, key and value each its own input, with a norm each (gqa's `kv_norms`: the layer's second and third norms).
"""

from __future__ import annotations

from archcost.dsl import ast

from .reading.modules import norm, own
from .reading.spec import call, value, with_keyword

BLOCK = "block_attn_res"
BOUNDARY = "is_block_boundary"          # the decoder layer's attribute: it closes a block
PLACEHOLDER = "stacked_states"           # a connection's count before the stack is counted (counted())
INPUTS = 3                               # a connection that gives the query, key and value an input each


def queries(module, d: int) -> int | None:
    """The connection's learned queries, or None for any other module."""
    held = own(module)
    shape = held.get("query", ())
    inner = list(module.named_children())
    if set(held) != {"query"} or shape[-1:] != (d,) or len(shape) not in (1, 2) or len(inner) != 1 \
            or any(True for _ in inner[0][1].parameters()) or norm(inner[0][1]) is None:
        return None
    return 1 if len(shape) == 1 else shape[0]


def around(layer, d: int) -> dict[str, int]:
    """The layer's connections by child name, with their queries, in its order ({} for a layer without them)."""
    found = {name: queries(child, d) for name, child in layer.named_children()}
    return {name: count for name, count in found.items() if count is not None}


def input_norms(layer, connections: dict[str, int]) -> tuple[str, ...]:
    """The key's and value's input norms, where a connection feeds them inputs of their own: the second and
    third of the layer's norms (Inkling2FullDecoderLayer: q_, k_ and v_input_layernorm, then the MLP's)."""
    if INPUTS not in connections.values():
        return ()
    norms = [name for name, child in layer.named_children() if norm(child) is not None]
    return tuple(norms[1:INPUTS])


def interleaved(calls: tuple[ast.BlockCall, ...], layer, connections: dict[str, int]) -> tuple | None:
    """Each connection before its sublayer, with its queries; the attention of a three-query connection with
    `kv_norms`, the first sublayer of a boundary layer without its residual add. None where they do not pair."""
    if not 0 < len(connections) <= len(calls) or any(count not in (1, INPUTS) for count in connections.values()):
        return None
    if getattr(layer, BOUNDARY, False):
        calls = (*with_keyword(calls[:1], "residual_add", False, only_where_taken=True), *calls[1:])
    first = len(calls) - len(connections)
    out = list(calls[:first])
    for (name, count), sublayer in zip(connections.items(), calls[first:]):
        if count == INPUTS:
            sublayer = (with_keyword((sublayer,), "kv_norms", True) or (None,))[0]
        if sublayer is None:
            return None
        out += [call(BLOCK, "d", states=PLACEHOLDER, queries=count if count > 1 else None, label=name), sublayer]
    return tuple(out)


def counted(stack: list[tuple], layers) -> list[tuple]:
    """The stack with each connection's count of stacked states (the module's docstring)."""
    stacked, out = 0, []
    for stmts, layer in zip(stack, layers):
        boundary = bool(getattr(layer, BOUNDARY, False))
        connections = [i for i, s in enumerate(stmts) if isinstance(s, ast.BlockCall) and s.name == BLOCK]
        states = {i: stacked + 1 + (boundary and i == connections[-1]) for i in connections}
        out.append(tuple(_with_states(s, states[i]) if i in states else s for i, s in enumerate(stmts)))
        stacked += boundary
    return out


def final(module, base, lists: set[str], d: int) -> ast.BlockCall | None:
    """The connection before the final norm, over every block stacked after the last layer (of the base model's
    `lists` of layers) and the last partial block; None for any other module."""
    if queries(module, d) != 1:
        return None
    layers = [layer for name in sorted(lists) for layer in base.get_submodule(name)]
    return call(BLOCK, "d", states=sum(bool(getattr(layer, BOUNDARY, False)) for layer in layers) + 1,
                label="final_input")


def _with_states(stmt: ast.BlockCall, states: int) -> ast.BlockCall:
    args = [ast.Keyword(name="states", value=value(states)) if isinstance(a, ast.Keyword) and a.name == "states"
            else a for a in stmt.args]
    return stmt.model_copy(update={"args": args})
