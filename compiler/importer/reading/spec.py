"""The imported spec as a syntax tree: block calls, layers as nested repeats, printed by `dsl.printer`."""

from __future__ import annotations

import functools
import textwrap
from dataclasses import dataclass, field

from archcost.dsl import ast
from archcost.dsl.loader import stdlib_root
from archcost.dsl.parser import parse
from archcost.dsl.printer import format_module


@dataclass(frozen=True)
class Library:
    """What the standard library says of its blocks: the module a spec `use`s for each, the component its
    matrices count under, and the modules each module brings in (a spec using std.embedding sees std.norm)."""

    modules: dict[str, str]          # block -> `std.ffn.swiglu`
    components: dict[str, str]       # block -> `dense_ffn` (its `component` statement)
    brings: dict[str, set[str]]      # module -> every module it uses, directly or not
    params: dict[str, frozenset[str]]  # block -> the names of its parameters


@functools.cache
def library() -> Library:
    root = stdlib_root()
    modules, components, uses, params = {}, {}, {}, {}
    for path in sorted(root.rglob("*.arch")):
        name = "std." + ".".join(path.relative_to(root).with_suffix("").parts)
        parsed = parse(path.read_text(), str(path))
        uses[name] = {use.target for use in parsed.uses if not use.is_path}
        for block in parsed.blocks:
            modules[block.name] = name
            params[block.name] = frozenset(param.name for param in block.params)
            found = [stmt.name for stmt in block.body if isinstance(stmt, ast.Component)]
            if found:
                components[block.name] = found[0]

    def reach(name: str, seen: frozenset[str] = frozenset()) -> set[str]:
        direct = uses.get(name, set()) - seen
        return direct.union(*(reach(other, seen | direct | {name}) for other in direct))
    return Library(modules, components, {name: reach(name) for name in uses}, params)


def with_keyword(calls: tuple[ast.BlockCall, ...], name: str, item, only_where_taken: bool = False
                 ) -> tuple[ast.BlockCall, ...] | None:
    """The calls with `name = item` added; a call whose block has no such parameter is left as it is when
    `only_where_taken`, else the whole answer is None (the calls cannot say it)."""
    taking = library().params
    if not only_where_taken and any(name not in taking.get(c.name, ()) for c in calls):
        return None
    keyword = ast.Keyword(name=name, value=value(item))
    return tuple(c.model_copy(update={"args": [*c.args, keyword]}) if name in taking.get(c.name, ()) else c
                 for c in calls)


def value(item) -> ast.Expr:
    """A Python value as a spec expression: ints exact, booleans as words, strings as names."""
    if isinstance(item, ast.Node):
        return item
    if isinstance(item, bool):
        return ast.Bool(value=item)
    if isinstance(item, int):
        return ast.Num(text=str(item))
    return ast.Name(id=item)


def number(item: float | int) -> ast.Num:
    """A config's float as the spec writes it: exact digits, no exponent."""
    return ast.Num(text=str(int(item)) if float(item).is_integer() else repr(float(item)))


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


@dataclass(frozen=True)
class Run:
    """Consecutive layers of one list, written as repeats; `note` says where they are."""

    layers: tuple[Layer, ...]
    note: str


@dataclass(frozen=True)
class Pass:
    """`loop count as label { body }`: the body's layers run `count` times over with one set of weights."""

    count: int
    label: str
    body: tuple  # of Run, Pass and statements, in the order the forward runs them


@dataclass
class Spec:
    """What an importer builds: the rest (uses, precision, layout) follows from it."""

    header: list[str]                  # what the reader should know about the source
    bindings: list[ast.Stmt]           # d, vocab, options
    before: list[ast.Stmt]             # embedding, positions
    layers: list[Layer]
    after: list[ast.Stmt]              # final norm, head
    note: str = ""                     # the fields the layer stack comes from
    defined: list[ast.BlockDef] = field(default_factory=list)  # blocks of the spec's own (side by side)
    passes: tuple | None = None        # the stack as its forward runs it, where it runs some layers again

    def blocks(self) -> list[str]:
        stmts = [*self.before, *(s for layer in self.layers for s in layer.stmts), *self.after,
                 *(s for block in self.defined for s in block.body)]
        return list(dict.fromkeys(s.name for s in stmts if isinstance(s, ast.BlockCall)))

    def components(self) -> set[str]:
        """The components whose matrices this spec holds (a moe with a shared expert has dense ones too)."""
        components = library().components
        found = {components[name] for name in self.blocks() if name in components}
        shared = any(isinstance(arg, ast.Keyword) and arg.name == "shared_f"
                     for layer in self.layers for s in layer.stmts for arg in s.args)
        return found | ({"dense_ffn"} if shared else set())


def render(spec: Spec, title: str, source: str, precision: ast.Precision, notes_after: list[str] = ()) -> str:
    notes = [f"{title}: imported from {source} by `archcost import`.", *spec.header, *notes_after]
    header = "\n".join(line for note in notes for line in textwrap.wrap(note, 100))
    uses = [ast.Use(target=target, is_path=False) for target in _modules(spec.blocks())]
    uses[0] = uses[0].model_copy(update={"note": header})
    stack = _stack(spec.layers, spec.note) if spec.passes is None else _ordered(spec.passes)
    body = [*spec.bindings, precision, *spec.before, *stack, *spec.after]
    model = ast.ModelDef(name=title, body=body)
    return format_module(ast.Module(path="<import>", uses=uses, blocks=spec.defined, models=[model]))


def _modules(blocks: list[str]) -> list[str]:
    """The modules to `use` for these blocks, in their order: those no other of them already brings in."""
    known = library()
    wanted = list(dict.fromkeys(known.modules[name] for name in blocks if name in known.modules))
    return [name for name in wanted if not any(name in known.brings[other] for other in wanted if other != name)]


def _ordered(nodes: tuple) -> list[ast.Stmt]:
    """Runs as repeats, passes as loops (the language's shared repeat), statements as they are."""
    out: list[ast.Stmt] = []
    for node in nodes:
        if isinstance(node, Run):
            out += _stack(list(node.layers), node.note)
        elif isinstance(node, Pass):
            out.append(ast.Repeat(count=value(node.count), label=node.label, body=_ordered(node.body), shared=True))
        else:
            out.append(node)
    return out


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
        return _with_inner_pattern(layers, note)
    groups = ast.Repeat(count=value(count // period), label="groups", body=_runs(layers[:period], "", None),
                        note=note)
    return [groups, *_runs(layers[count - count % period:], "tail_", None)]


def _with_inner_pattern(layers: list[Layer], note: str) -> list[ast.Stmt]:
    """A stack whose patterns start after a few layers of their own (Zamba2's first hybrid layer comes after six
    Mamba layers, every later one after five; LFM2's three groups of two convolutions and an attention, then four
    of one and one): the longest repeating pattern as `repeat n as groups`, the layers before and after it
    written alike (their own patterns as groups_2, …, the rest as runs); as consecutive runs where that is no
    shorter."""
    flat = _runs(layers, "", note)
    written = _segments(layers, {}, [0])
    if len(written) >= len(flat):
        return flat
    own_note = getattr(written[0], "note", None)
    written[0] = written[0].model_copy(update={"note": f"{note}\n{own_note}" if own_note else note})
    return written


def _segments(layers: list[Layer], seen: dict[str, int], groups: list[int]) -> list[ast.Stmt]:
    """The layers as runs around their longest repeating pattern, found again before and after it; `seen` counts
    the kinds named so far (a run's label is unique in the stack), `groups` the patterns."""
    start, period, count = _inner_pattern(layers)
    if period < 2:
        return _runs(layers, "", None, seen)
    head = _segments(layers[:start], seen, groups)
    groups[0] += 1
    label = "groups" if groups[0] == 1 else f"groups_{groups[0]}"
    pattern = ast.Repeat(count=value(count), label=label, body=_runs(layers[start:start + period], "", None))
    return [*head, pattern, *_segments(layers[start + period * count:], seen, groups)]


def _inner_pattern(layers: list[Layer]) -> tuple[int, int, int]:
    """(start, period, groups) of the repeating pattern that covers the most layers (at least two groups of at
    least two layers, not all equal); of equals, one that does not cut a run of equal layers at its ends
    (MiMo-V2-Flash's five sliding layers and a full one, not four, a full one and the next group's first), then
    the earliest and shortest; (0, 0, 0) where there is none."""
    best, found = (0, False, 0, 0), (0, 0, 0)
    for start in range(len(layers)):
        for period in range(2, (len(layers) - start) // 2 + 1):
            pattern = layers[start:start + period]
            if all(layer == pattern[0] for layer in pattern):
                continue  # equal layers are one run
            count = 1
            while layers[start + count * period:start + (count + 1) * period] == pattern:
                count += 1
            score = (count * period, pattern[0] != pattern[-1], -start, -period)
            if count >= 2 and score > best:
                best, found = score, (start, period, count)
    return found


def _runs(layers: list[Layer], prefix: str, note: str | None, seen: dict[str, int] | None = None) -> list[ast.Stmt]:
    runs: list[list] = []
    for layer in layers:
        if runs and runs[-1][0] == layer:
            runs[-1][1] += 1
        else:
            runs.append([layer, 1])
    seen = {} if seen is None else seen
    out = []
    for layer, size in runs:
        seen[layer.kind] = seen.get(layer.kind, 0) + 1
        kind = prefix + (layer.kind if seen[layer.kind] == 1 else f"{layer.kind}_{seen[layer.kind]}")
        out += _one(size, kind, layer.stmts)
    if out and note:  # the stack's note above the first statement, which keeps its own (the module it came from)
        own_note = getattr(out[0], "note", None)
        out[0] = out[0].model_copy(update={"note": f"{note}\n{own_note}" if own_note else note})
    return out


def _one(size: int, kind: str, stmts: tuple[ast.BlockCall, ...]) -> list[ast.Stmt]:
    if size > 1:
        return [_repeat(size, kind, stmts, None)]
    # a single layer beside other kinds: its labels carry its kind (full_attn, sliding_ffn)
    prefix = kind.removesuffix("_layers")
    return [s.model_copy(update={"label": f"{prefix}_{s.label}"}) for s in stmts]


def _repeat(size: int, kind: str, stmts, note: str | None) -> ast.Repeat:
    return ast.Repeat(count=value(size), label=kind, body=list(stmts), note=note)
