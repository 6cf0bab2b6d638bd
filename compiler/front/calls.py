"""Block calls (bind arguments, expand the body in its own scope) and primitive ops (one graph node each)."""

from __future__ import annotations

from dataclasses import replace
from types import SimpleNamespace
from typing import TYPE_CHECKING

import sympy as sp

from archcost.dsl import ast
from archcost.dsl.errors import did_you_mean
from archcost.dsl.text import format_expr

from ..graph.ir import Cluster, OpNode, Tensor
from ..ops import REGISTRY, OpSpec
from ..terms import symbols
from . import replay
from .arguments import FLOW_ARGS, OP_WIDE_ARGS, bind_op_args, match_args, split_flow
from .expr import to_sympy
from .scope import Scope, bind_output, block_input, check_widths, sources

if TYPE_CHECKING:
    from .contract import Resolving


def block_call(res: Resolving, stmt: ast.BlockCall, scope: Scope) -> None:
    """`name(args) as label`: the block's body in a scope of its own, drawn as one cluster."""
    stmt = _with_weight_set(stmt, scope)
    block = _find_block(res, stmt, scope)
    if block.name in scope.call_chain:
        chain = " -> ".join([*scope.call_chain, block.name])
        raise res.problem("E213", f"block `{block.name}` calls itself ({chain})", stmt.span)
    flow, args = split_flow(stmt.args)
    values = _bind_block_args(res, block, args, scope, stmt)
    source = block_input(flow, scope)
    label = scope.unique(stmt.label or block.name)
    cluster_id = scope.qualify(label)
    title = label if label == block.name else f"{label}: {block.name}"
    title += f" · shares {stmt.shares}" if stmt.shares else ""  # drawn: one set of weights with other calls
    res.clusters[cluster_id] = Cluster(cluster_id, title, "block", scope.cluster, block=block.name,
                                       multiplicity=scope.multiplicity, span=stmt.span,
                                       library=bool(block.span and block.span.file.startswith("std/")))
    # a call sharing weights is made anew: its ops' weights are its own (the first) or none (the rest)
    alike = replay.key(block, values, source, scope) if stmt.shares is None else None
    recorded = res.recordings.get(alike) if alike is not None else None
    if recorded is not None and replay.replays(res, recorded):
        current, tensors, component = replay.replay(res, recorded, cluster_id, source, scope)
    else:
        opened = replay.open_recording(res, scope) if alike is not None else None
        try:
            current, tensors, component = _expanded(res, block, values, source, scope, label, cluster_id, stmt)
        except BaseException:
            if opened is not None:
                replay.discard(res, opened)
            raise
        if opened is not None:
            made = replay.close_recording(res, opened, scope, cluster_id, source, current, tensors, component)
            if made is not None:
                res.recordings.setdefault(alike, made)
    res.clusters[cluster_id] = replace(res.clusters[cluster_id], component=component)
    # the block's own tensors stay readable after the call as `label.name` (a shortcut-connected MoE reads
    # the first attention's output: LongCat-Flash)
    scope.tensors.update({f"{label}.{name}": tensor for name, tensor in tensors.items()})
    bind_output(flow, scope, label, current)


def _expanded(res: Resolving, block: ast.BlockDef, values: dict, source: Tensor, scope: Scope, label: str,
              cluster_id: str, stmt: ast.BlockCall) -> tuple[Tensor, dict[str, Tensor], str | None]:
    """The block's body resolved in a scope of its own: (its output, its tensors, its class)."""
    # a call's `from = (a, b)` is its `input`, all of them side by side, and each one apart as `input.1`, `input.2`
    # (a layer's stream beside a side input: Gemma 4's per-layer inputs)
    given = {"input": source, "tokens": scope.tensors["tokens"],
             **{f"input.{i}": part for i, part in enumerate(source.parts or (source,), 1)}}
    copies, held_by = _weight_set(res, block, values, scope, stmt, cluster_id)
    inner = scope.child(label, cluster_id, values=values, tensors=dict(given),
                        module=res.declarations.module_of(block), block=block.name, site=stmt.span, passes=copies)
    if stmt.shares is not None:
        inner.shares, inner.held_by = stmt.shares, held_by
    res.body(block.body, inner)
    tensors = {name: tensor for name, tensor in inner.tensors.items() if name not in given}
    return inner.current, tensors, inner.component


def _with_weight_set(stmt: ast.BlockCall, scope: Scope) -> ast.BlockCall:
    """`shares NAME` where NAME is a parameter of the block around the call holding a word: the set that word
    names (a block that wraps a shared call, its caller naming the set: std.shared_transformer)."""
    passed = scope.env.values.get(stmt.shares) if stmt.shares is not None else None
    return stmt.model_copy(update={"shares": passed.name}) if isinstance(passed, sp.Symbol) else stmt


def _weight_set(res: Resolving, block: ast.BlockDef, values: dict, scope: Scope, stmt: ast.BlockCall,
                cluster_id: str) -> tuple[sp.Expr, str | None]:
    """(the copies the call's weights are divided by, the set that holds them instead). `shares NAME`: the calls
    sharing NAME run one set of weights. The first holds it, once however many layers around it repeat the call
    (its ops' weights divide by those copies, as a `loop`'s passes do); every later call holds none (`held_by`)
    and must be the same block with the same arguments (E221)."""
    if stmt.shares is None:
        return sp.Integer(1), None
    # the first call of the set, known by its place in the model (an AST node is every call of its block's) and
    # shown at the spec's own call that led to it
    first = res.weight_sets.setdefault(stmt.shares, (block, values, scope.call_site or stmt.span, cluster_id))
    if first[3] == cluster_id:
        return scope.multiplicity / scope.reuse, None
    if first[0] is not block or first[1] != values:
        where = first[2]
        raise res.problem("E221", f"`shares {stmt.shares}` runs the weights of the call at line "
                          f"{where.line if where else '?'}, which {_differs(first[0], first[1], block, values)}",
                          stmt.span, hint="calls sharing weights call one block with the same arguments; give this "
                                          "call another name after `shares`, or none")
    return sp.Integer(1), stmt.shares


def _differs(block, values: dict, other, other_values: dict) -> str:
    if block is not other:
        return f"calls `{block.name}`, not `{other.name}`"
    names = [name for name in values if values[name] != other_values.get(name)]
    return "gives " + ", ".join(f"{name} = {values[name]} (here {other_values.get(name)})" for name in names[:3])


def _find_block(res: Resolving, stmt: ast.BlockCall, scope: Scope) -> ast.BlockDef:
    visible = res.declarations.blocks[scope.module]
    passed = scope.env.values.get(stmt.name)
    if isinstance(passed, sp.Symbol):
        handed_in = visible.get(passed.name) or res.declarations.any_block(passed.name)
        if handed_in is not None:
            return handed_in  # a block handed in as an argument, e.g. `norm = layernorm`
    if stmt.name in visible:
        return visible[stmt.name]
    if stmt.name in REGISTRY:
        raise res.problem("E200", f"`{stmt.name}` is a primitive op, not a block", stmt.span,
                          hint=f"write it as `{stmt.name} NAME: ...`")
    raise res.problem("E200", f"unknown block `{stmt.name}`", stmt.span,
                      hint=did_you_mean(stmt.name, visible) or "is a `use` line missing?")


def _bind_block_args(res: Resolving, block: ast.BlockDef, args: list[ast.Arg], scope: Scope,
                     stmt: ast.BlockCall) -> dict[str, sp.Basic]:
    names = [p.name for p in block.params]
    given = match_args(args, names, f"block `{block.name}`", res.problem)
    values: dict[str, sp.Basic] = {}
    for param in block.params:
        if isinstance(given.get(param.name), ast.Signature):
            raise res.problem("E211", f"`{param.name}` takes a value, not `in -> out`", given[param.name].span)
        if param.name in given:
            values[param.name] = to_sympy(given[param.name], scope.env)
        elif param.default is not None:
            values[param.name] = to_sympy(param.default, scope.env.child(values))
        else:
            raise res.problem("E202", f"missing argument `{param.name}` of block `{block.name}`", stmt.span,
                              hint=_call_form(block))
    return values


def _call_form(block) -> str:
    """`gqa(d, heads, kv_heads, head_dim, …)`: the arguments a call must give, then `…` for the defaulted."""
    required = [p.name for p in block.params if p.default is None]
    more = ", …" if len(required) < len(block.params) else ""
    return f"`{block.name}({', '.join(required)}{more})`"


def op(res: Resolving, stmt: ast.Op, scope: Scope) -> None:
    """`kind label: args`: one node of the graph, with its widths checked against what it reads."""
    spec = _op_spec(res, stmt, scope)
    flow, args = split_flow(stmt.args, FLOW_ARGS + OP_WIDE_ARGS)
    component = _component(res, flow.pop("component", None), scope)
    shard_given = flow.pop("shard", None)
    tail = scope.tail if _replays(res, flow.pop("replay", None), scope) else None
    steers = _steered(res, flow.pop("steers", None))
    values = bind_op_args(spec, args, scope, stmt, component)
    shard = _shard(res, shard_given, scope, spec)  # after the op's own arguments: their errors come first
    in_width, out_width = spec.widths(values)
    label = scope.unique(stmt.label or stmt.op)
    inputs = sources(flow, scope)
    check_widths(spec, in_width, inputs, stmt, label, scope)
    rows = getattr(values, "rows", symbols.m)
    node = OpNode(id=scope.qualify(label), kind=spec.kind, label=label, component=component,
                  multiplicity=scope.multiplicity, args=values, in_width=in_width, out_width=out_width,
                  rows=rows, inputs=tuple(dict.fromkeys(p for s in inputs for p in s.producers)),
                  states=_states(res, spec, values, scope, stmt), cluster=scope.cluster, span=stmt.span, tail=tail,
                  shard=shard, call_site=scope.call_site, steers=steers, reuse=scope.reuse, shares=scope.shares,
                  held_by=scope.held_by)
    res.add_node(node, stmt.span)
    if spec.stores_state:
        scope.last_cache = node.id
        scope.tensors[label] = Tensor(node.id, rows, in_width)
        if getattr(values, "shared", False):
            scope.shared[label] = node.id  # one dict for the whole model: later layers read it
    if spec.produces:
        bind_output(flow, scope, label, Tensor(node.id, rows, out_width))


def _steered(res: Resolving, given: ast.Keyword | None) -> tuple[str, ...]:
    """`steers = routed` or `steers = (read, write)`: labels of ops of the same block (checked once the model
    is resolved: at least one of them must be there)."""
    if given is None:
        return ()
    items = given.value.items if isinstance(given.value, ast.Tuple) else [given.value]
    if not all(isinstance(item, ast.Name) for item in items):
        raise res.problem("E207", "`steers` takes the label of an op of this block, or a tuple of labels",
                          given.value.span)
    return tuple(item.id for item in items)


def _op_spec(res: Resolving, stmt: ast.Op, scope: Scope) -> OpSpec:
    spec = REGISTRY.get(stmt.op)
    if spec is not None:
        return spec
    blocks = res.declarations.blocks[scope.module]
    hint = (f"`{stmt.op}` is a block: call it as `{stmt.op}(...)`" if stmt.op in blocks
            else did_you_mean(stmt.op, REGISTRY) or f"the primitive ops: {', '.join(REGISTRY)}")
    raise res.problem("E205", f"unknown op kind `{stmt.op}`", stmt.span, hint=hint)


def _component(res: Resolving, given: ast.Keyword | None, scope: Scope) -> str:
    if given is None:
        return scope.component
    name = given.value.id if isinstance(given.value, ast.Name) else ""
    return res.check_component(name, given.value.span)


def _shard(res: Resolving, given: ast.Keyword | None, scope: Scope, spec: OpSpec) -> tuple:
    """`shard = column`, `shard = heads(kv_heads)`: how the op splits over the cards of a layout."""
    if given is None:
        return ("replicated", None)
    value = given.value
    word = value.id if isinstance(value, ast.Name) else value.func if isinstance(value, ast.Call) else ""
    if word not in spec.shards:
        raise res.problem("E211", f"`{spec.kind}` does not shard as `{word or format_expr(value)}`", value.span,
                          hint=f"`{spec.kind}` shards as: {', '.join(spec.shards)}")
    arity = 1 if word == "heads" else 0
    args = value.args if isinstance(value, ast.Call) else []
    if len(args) != arity:
        raise res.problem("E211", f"`shard = {word}` takes {arity or 'no'} argument{'s' if arity != 1 else ''}"
                                  + (" (the head count)" if arity else ""), value.span)
    count = to_sympy(args[0], scope.env) if args else None
    # a layout splits whole heads over cards (or cards over a head): 1/3 of a head would hold 3 × the cache
    if count is not None and count.is_number and not (count.is_Integer and count >= 1):
        raise res.problem("E301", f"`shard = heads({format_expr(args[0])})` is {count}: the head count a layout "
                                  "splits is a whole number ≥ 1", args[0].span)
    return (word, count)


def _replays(res: Resolving, given: ast.Keyword | None, scope: Scope) -> bool:
    """`replay = false` keeps an op on every position inside a replay stage (a global KV source)."""
    if given is None:
        return True
    value = to_sympy(given.value, scope.env)
    if value not in (sp.true, sp.false):
        raise res.problem("E211", f"`replay` takes true or false, not `{value}`", given.value.span)
    return value == sp.true


def state_holder() -> str:
    """The op kind that holds context state others read (`cache`), for messages."""
    return next(kind for kind, spec in REGISTRY.items() if spec.stores_state)


def _states(res: Resolving, spec: OpSpec, values: SimpleNamespace, scope: Scope, stmt: ast.Op) -> tuple[str, ...]:
    if spec.arg("state") is None:
        return ()
    chosen = values.state or ((scope.last_cache,) if scope.last_cache else None)
    holder = state_holder()
    if chosen is None:
        raise res.problem("E207", f"`{spec.kind}` reads a {holder}, and none is declared before it", stmt.span,
                          hint=f"declare `{holder} NAME: per_token, width = ...` first, or pass `state = NAME`")
    given = next((arg for arg in stmt.args if isinstance(arg, ast.Keyword) and arg.name == "state"), None)
    written = _names(given.value) if given is not None else []
    for index, name in enumerate(chosen):
        if not REGISTRY[res.kinds[name]].stores_state:
            label, kind = res.labels[name], res.kinds[name]
            said = written[index] if index < len(written) else label
            why = f" (`{label}` took the name `{said}` over with `on = {said}`)" if said != label else ""
            raise res.problem("E207", f"`state = {said}` names `{label}`, {_article(kind)} `{kind}` op, not a "
                              f"{holder}{why}", given.span if given is not None else stmt.span,
                              hint=f"name the {holder} itself; an op that reads a tensor `on` it takes its name")
    return tuple(chosen)


def _names(expr) -> list[str]:
    items = expr.items if isinstance(expr, ast.Tuple) else [expr]
    return [item.id if isinstance(item, ast.Name) else "" for item in items]


def _article(word: str) -> str:
    return "an" if word[:1] in "aeiou" else "a"
