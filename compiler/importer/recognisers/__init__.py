"""The stdlib's blocks the import from the modeling code recognises: one module a mechanism, named after the block it
writes, or after its mechanism where the block bears a model's name or another module reads the same block
(rglru.py writes `griffin_recurrent`, query_gate.py a `gqa`), found by discovery as compiler/ops finds its ops.
Nothing outside this package names one of them.

Each module holds a `RECOGNISER`: the block it writes, where it looks (`sublayer`: one child of a decoder layer;
`layer`: a whole decoder layer read as one block), the function that recognises it (the block's call and what it
accounts for, or None), the recognisers it is tried before (`before`: the more specific structure first, each
pair's reason written beside it), the words a run of layers is named by from its call, and the options a spec
that writes it gains. A new mechanism's recogniser is one new module here.

The walk (layer.py, modeling.py) asks `sublayer`, `whole_layer`, `options` and `kind_words`; the order it tries
recognisers in follows from their `before` alone (ties by name). tests/test_modeling_code.py holds that no
module of any type transformers builds is claimed by two recognisers the registry leaves unordered.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from archcost.dsl import ast

from ..reading.modules import Found, Where, children, own


@dataclass(frozen=True)
class Recogniser:
    """One stdlib block as the walk recognises it."""

    name: str                                  # the module's name
    level: Literal["sublayer", "layer"]
    recognise: Callable                        # (module, at: Where) -> Found | None (sublayer) | BlockCall | None
    writes: tuple[str, ...]                    # the stdlib blocks its calls name
    before: tuple[str, ...] = ()               # recognisers this one is tried before
    # the words a run of layers takes from one of its calls (None: `dense` for a feed-forward, else `full`)
    kind_words: Callable[[ast.BlockCall], list[str]] | None = None
    # the options a spec gains from the calls it wrote (all of them, over the whole stack)
    options: Callable[[list[ast.BlockCall]], list[ast.Stmt]] | None = None
    attention: bool = False                    # its calls are labelled `attn` (a mixer of positions by scores)
    default_norm: str = "rmsnorm"              # the norm its block puts before itself unless told otherwise
    # what it makes of the other sublayers found in one layer beside its own (the MoE block's shared expert)
    absorbs: Callable[[list[tuple[str, Found]]], list[tuple[str, Found]]] | None = None


def word(text: str) -> Callable[[ast.BlockCall], list[str]]:
    """A kind word that does not depend on the call."""
    return lambda _call: [text]


# The order a spec's option lines print in: oldest first, so that every spec imported before a new option came
# keeps its bytes. A recogniser's options come in this order whatever order its blocks are met in.
OPTION_ORDER = ("mla_cache", "index_kernel", "linear_kernels", "diff_kernel", "experts", "hc_comb", "window_record")


def _discovered() -> dict[str, Recogniser]:
    found = {}
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda i: i.name):
        module = importlib.import_module(f"{__name__}.{info.name}")
        recogniser = getattr(module, "RECOGNISER", None)
        if recogniser is None:
            continue  # a helper several recognisers share
        assert recogniser.name == info.name, f"{info.name}.py's RECOGNISER is named {recogniser.name}"
        found[recogniser.name] = recogniser
    return found


REGISTRY: dict[str, Recogniser] = _discovered()


def ordered(level: str) -> tuple[Recogniser, ...]:
    """The recognisers of `level`, each before those its `before` names, ties by name (Kahn's order)."""
    chosen = {name: r for name, r in REGISTRY.items() if r.level == level}
    after = {name: {other for other, r in chosen.items() if name in r.before} for name in chosen}
    done: list[Recogniser] = []
    while len(done) < len(chosen):
        ready = sorted(name for name in chosen if chosen[name] not in done and after[name] <= {r.name for r in done})
        if not ready:
            raise ValueError(f"the recognisers' `before` form a cycle among {sorted(set(chosen) - set(done))}")
        done.append(chosen[ready[0]])
    return tuple(done)


def sublayer(module, at: Where) -> Found | None:
    """The block one child of a decoder layer is, by the first recogniser that claims it; a wrapper around one
    block (GPT-Neo's attn.attention) is read as that block."""
    for recogniser in ordered("sublayer"):
        found = recogniser.recognise(module, at)
        if found is not None:
            return found
    inner = children(module)
    if len(inner) == 1 and not own(module):
        return sublayer(next(iter(inner.values())), at)
    return None


def whole_layer(layer, at: Where) -> ast.BlockCall | tuple[ast.BlockCall, ...] | None:
    """A decoder layer read as one block (or a few), where a recogniser reads it whole (its parts only work
    together)."""
    for recogniser in ordered("layer"):
        found = recogniser.recognise(layer, at)
        if found is not None:
            return found
    return None


def _writer(block: str) -> Recogniser | None:
    return next((r for r in REGISTRY.values() if block in r.writes), None)


def label(found: Found) -> str:
    """The name a sublayer's call takes in its layer: `attn`, `mixer` or `ffn`."""
    recogniser = _writer(found.call.name)
    return "attn" if recogniser is not None and recogniser.attention else ("mixer" if found.mixer else "ffn")


def default_norm(block: str) -> str:
    """The norm a block puts before itself when the call names none."""
    recogniser = _writer(block)
    return recogniser.default_norm if recogniser is not None else "rmsnorm"


def absorbed(found: list[tuple[str, Found]]) -> list[tuple[str, Found]]:
    """The sublayers of one layer after each recogniser has taken in what it holds of the others."""
    for recogniser in REGISTRY.values():
        if recogniser.absorbs is not None:
            found = recogniser.absorbs(found)
    return found


def kind_words(call: ast.BlockCall) -> list[str] | None:
    """The words a run of layers is named by from one call, or None for a block no recogniser writes."""
    recogniser = _writer(call.name)
    if recogniser is None:
        return None
    if recogniser.kind_words is None:
        return ["dense" if call.label == "ffn" else "full"]
    return recogniser.kind_words(call)


def options(calls: list, connections: list[ast.Stmt] = ()) -> list[ast.Stmt]:
    """The options a spec gains from the calls it writes (and from the connections around them, which the walk
    reads apart), each once, in OPTION_ORDER."""
    found: dict[str, list[ast.Stmt]] = {}
    for stmts in _grouped(list(connections)):
        found.setdefault(stmts[0].name, stmts)
    for recogniser in REGISTRY.values():
        if recogniser.options is None:
            continue
        written = [c for c in calls if isinstance(c, ast.BlockCall) and c.name in recogniser.writes]
        if written:
            for stmts in _grouped(recogniser.options(written)):
                found.setdefault(stmts[0].name, stmts)
    return [stmt for name in OPTION_ORDER if name in found for stmt in found[name]] + [
        stmt for name, stmts in found.items() if name not in OPTION_ORDER for stmt in stmts]


def _grouped(stmts: list[ast.Stmt]) -> list[list[ast.Stmt]]:
    """Each option with the bindings that follow it (the `dense` that `experts` sets)."""
    groups: list[list[ast.Stmt]] = []
    for stmt in stmts:
        if isinstance(stmt, ast.Option) or not groups:
            groups.append([stmt])
        else:
            groups[-1].append(stmt)
    return groups
