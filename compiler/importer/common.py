"""What every decoder family states the same way: widths, heads, the embedding, the head, the final norm."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from archcost.dsl import ast

from .reading.spec import Layer, Spec, binding, call
from .schema import Layers, Schema, Size


class Stack(Schema):
    """A stack of layers between an embedding and an output head."""

    hidden_size: Size
    num_hidden_layers: Layers
    vocab_size: Size
    tie_word_embeddings: bool = False


class Decoder(Stack):
    """Attention heads over the stack. Each family gives every field its transformers default, since a
    published config leaves out the fields equal to it (save_pretrained writes only the differences)."""

    ROTARY: ClassVar[float] = 1.0  # the part of each head RoPE rotates when a config says nothing
    num_attention_heads: Size
    num_key_value_heads: Size | None = None   # None: one K, V head per query head (a family may default to fewer)
    head_dim: Size | None = None              # absent: hidden_size / num_attention_heads


@dataclass(frozen=True)
class Heads:
    """The attention dimensions, checked: whole heads, whole query groups."""

    heads: int
    kv_heads: int
    head_dim: int
    note: str


def heads(cfg: Decoder) -> Heads:
    d, count = cfg.hidden_size, cfg.num_attention_heads
    kv_heads = count if cfg.num_key_value_heads is None else cfg.num_key_value_heads
    if cfg.head_dim is None and d % count:
        raise cfg.refuse("num_attention_heads", f"hidden_size {d} is not a multiple of num_attention_heads {count} "
                                                "and `head_dim` is not given")
    head_dim = d // count if cfg.head_dim is None else cfg.head_dim
    if count % kv_heads:
        raise cfg.refuse("num_key_value_heads", f"num_attention_heads {count} is not a multiple of "
                                                f"num_key_value_heads {kv_heads}")
    note = cfg.cite("num_attention_heads", "num_key_value_heads", "head_dim")
    if cfg.num_key_value_heads is None:
        note += "; no num_key_value_heads: multi-head attention"
    if head_dim * count != d:
        note += f"; {head_dim} × {count} heads ≠ hidden_size {d}"
    return Heads(count, kv_heads, head_dim, note)


def on(flag: bool) -> bool | None:
    """A switch as a call writes it: `true`, or left to the block's default."""
    return True if flag else None


def gqa(h: Heads, label: str = "attn", cited: str = "", note: str | None = None, **extra) -> ast.BlockCall:
    """A GQA call; its note cites the head fields and `cited`, the fields its other arguments came from
    (or is `note`, when a family says more)."""
    return call("gqa", "d", q_heads=h.heads, kv_heads=h.kv_heads, head_dim=h.head_dim, label=label,
                note=note or h.note + (", " + cited if cited else ""), **extra)


def swiglu(cfg: Stack, bias: bool | None = None, width: str = "intermediate_size", *also: str) -> ast.BlockCall:
    """The SwiGLU MLP of `width` (a config field) most families state the same way; `also` are the other
    fields it cites."""
    return call("swiglu", "d", f=getattr(cfg, width), bias=bias, label="ffn", note=cfg.cite(width, *also))


def uniform(cfg: Stack, attention: ast.BlockCall, ffn: ast.BlockCall, **named) -> Spec:
    """A decoder whose layers are all the same."""
    return decoder(cfg, [Layer("layers", (attention, ffn))] * cfg.num_hidden_layers, **named)


def decoder(cfg: Stack, layers: list[Layer], *, header: list[str] = (), options: list[ast.Stmt] = (),
            before: list[ast.Stmt] = (), norm: str = "rmsnorm", head_bias: bool = False,
            stack_note: str | None = None) -> Spec:
    """A decoder-only spec: the embedding, the layers, a final norm and the output head."""
    tied = cfg.tie_word_embeddings
    head = call("lm_head", "d", "vocab", tied=on(tied), bias=on(head_bias),
                note=f"tie_word_embeddings{'' if cfg.given('tie_word_embeddings') else ' (absent)'}: "
                     + ("the head reads the embedding table" if tied else "a head of its own"))
    return Spec(header=list(header),
                bindings=[binding("d", cfg.hidden_size, "hidden_size"), binding("vocab", cfg.vocab_size, "vocab_size"),
                          *options],
                before=[call("embedding", "vocab", "d"), *before], layers=layers,
                after=[call(norm, "d", label="final_norm"), head],
                note=stack_note or cfg.cite("num_hidden_layers"))


def layer_kinds(cfg: Schema, name: str, allowed: tuple[str, ...], count: int, default: list[str]) -> list[str]:
    """`layer_types` (or the family's default pattern), one allowed kind per layer."""
    kinds = getattr(cfg, name)
    if kinds is None:
        return default
    if len(kinds) != count or any(kind not in allowed for kind in kinds):
        raise cfg.refuse(name, f"`{name}` must list one of {', '.join(allowed)} for each of the {count} layers")
    return list(kinds)
