"""The imported spec as a syntax tree: block calls, layers as nested repeats, printed by `dsl.printer`."""

from __future__ import annotations

import textwrap
from dataclasses import dataclass

from archcost.dsl import ast
from archcost.dsl.printer import format_module

# the library module of each block an importer calls (norms and positions come with these)
MODULES = {
    "embedding": "std.embedding", "lm_head": "std.embedding", "gqa": "std.attention.gqa", "swa": "std.attention.swa",
    "mla": "std.attention.mla", "gated_attention": "std.attention.gated_attention",
    "gated_deltanet": "std.attention.gated_deltanet", "mamba": "std.attention.mamba", "mamba2": "std.attention.mamba2",
    "lightning": "std.attention.lightning", "swiglu": "std.ffn.swiglu", "geglu": "std.ffn.swiglu",
    "gelu_mlp": "std.ffn.mlp", "moe": "std.ffn.moe",
}
# the cost class (`component`) of each block's matrices, for the formats a quantized checkpoint stores
COMPONENTS = {"swiglu": "dense_ffn", "geglu": "dense_ffn", "gelu_mlp": "dense_ffn", "moe": "routed_experts",
              **{block: "attention" for block in ("gqa", "swa", "mla", "gated_attention", "gated_deltanet",
                                                  "mamba", "mamba2", "lightning")}}


def value(item) -> ast.Expr:
    """A Python value as a spec expression: ints exact, booleans as words, strings as names."""
    if isinstance(item, ast.Node):
        return item
    if isinstance(item, bool):
        return ast.Bool(value=item)
    if isinstance(item, int):
        return ast.Num(text=str(item))
    return ast.Name(id=item)


def call(block: str, *positional, label: str | None = None, note: str | None = None, **named) -> ast.BlockCall:
    """`block(positional…, name = value…) as label`; a keyword given None is left to the block's default."""
    args = [ast.Positional(value=value(item)) for item in positional]
    args += [ast.Keyword(name=name, value=value(item)) for name, item in named.items() if item is not None]
    return ast.BlockCall(name=block, args=args, label=label, note=note)


def op(kind: str, label: str, note: str | None = None, **named) -> ast.Op:
    """`kind label: name = value, …` (a primitive op the library blocks do not hold)."""
    args = [item if isinstance(item, ast.Signature) else ast.Keyword(name=name, value=value(item))
            for name, item in named.items()]
    return ast.Op(op=kind, label=label, args=args, note=note)


def times(left, right) -> ast.Expr:
    return ast.BinOp(op="*", left=value(left), right=value(right))


def plus(left, right) -> ast.Expr:
    return ast.BinOp(op="+", left=value(left), right=value(right))


def binding(name: str, item, note: str | None = None) -> ast.Binding:
    return ast.Binding(name=name, value=value(item), note=note)


@dataclass(frozen=True)
class Layer:
    """One decoder layer; `kind` names a run of equal layers."""

    kind: str
    stmts: tuple[ast.BlockCall, ...]


@dataclass
class Spec:
    """What an importer builds: the rest (uses, precision, layout) follows from it."""

    header: list[str]                  # what the reader should know about the source
    bindings: list[ast.Stmt]           # d, vocab, options
    before: list[ast.Stmt]             # embedding, positions
    layers: list[Layer]
    after: list[ast.Stmt]              # final norm, head
    note: str = ""                     # the fields the layer stack comes from

    def blocks(self) -> list[str]:
        stmts = [*self.before, *(s for layer in self.layers for s in layer.stmts), *self.after]
        return list(dict.fromkeys(s.name for s in stmts if isinstance(s, ast.BlockCall)))

    def components(self) -> set[str]:
        """The components whose matrices this spec holds (a moe with a shared expert has dense ones too)."""
        found = {COMPONENTS[name] for name in self.blocks() if name in COMPONENTS}
        shared = any(isinstance(arg, ast.Keyword) and arg.name == "shared_f"
                     for layer in self.layers for s in layer.stmts for arg in s.args)
        return found | ({"dense_ffn"} if shared else set())


def render(spec: Spec, title: str, source: str, precision: ast.Precision) -> str:
    notes = [f"{title}: imported from {source} by `archcost import`.", *spec.header]
    header = "\n".join(line for note in notes for line in textwrap.wrap(note, 100))
    uses = [ast.Use(target=MODULES[name], is_path=False) for name in spec.blocks() if name in MODULES]
    uses = list({use.target: use for use in uses}.values())
    uses[0] = uses[0].model_copy(update={"note": header})
    body = [*spec.bindings, precision, *spec.before, *_stack(spec.layers, spec.note), *spec.after]
    model = ast.ModelDef(name=title, body=body)
    return format_module(ast.Module(path="<import>", uses=uses, models=[model]))


def _stack(layers: list[Layer], note: str) -> list[ast.Stmt]:
    """The layers as nested repeats: a repeating pattern becomes `repeat n as groups { pattern }` (what is
    left of the pattern after the last whole group follows as tail runs), equal layers in a row become one
    `repeat k`, and a stack with no pattern is written as consecutive runs."""
    count = len(layers)
    period = next(p for p in range(1, count + 1)
                  if p == count or (count // p >= 2 and all(layers[i] == layers[i % p] for i in range(count))))
    if period == 1:
        return [_repeat(count, layers[0].kind, layers[0].stmts, note)]
    if period == count:
        return _runs(layers, "", note)
    groups = ast.Repeat(count=value(count // period), label="groups", body=_runs(layers[:period], "", None),
                        note=note)
    return [groups, *_runs(layers[count - count % period:], "tail_", None)]


def _runs(layers: list[Layer], prefix: str, note: str | None) -> list[ast.Stmt]:
    runs: list[list] = []
    for layer in layers:
        if runs and runs[-1][0] == layer:
            runs[-1][1] += 1
        else:
            runs.append([layer, 1])
    seen: dict[str, int] = {}
    out = []
    for layer, size in runs:
        seen[layer.kind] = seen.get(layer.kind, 0) + 1
        kind = prefix + (layer.kind if seen[layer.kind] == 1 else f"{layer.kind}_{seen[layer.kind]}")
        out += _one(size, kind, layer.stmts)
    if out and note:
        out[0] = out[0].model_copy(update={"note": note})
    return out


def _one(size: int, kind: str, stmts: tuple[ast.BlockCall, ...]) -> list[ast.Stmt]:
    if size > 1:
        return [_repeat(size, kind, stmts, None)]
    # a single layer beside other kinds: its labels carry its kind (full_attn, sliding_ffn)
    prefix = kind.removesuffix("_layers")
    return [s.model_copy(update={"label": f"{prefix}_{s.label}"}) for s in stmts]


def _repeat(size: int, kind: str, stmts, note: str | None) -> ast.Repeat:
    return ast.Repeat(count=value(size), label=kind, body=list(stmts), note=note)
