"""AST to model IR: bind parameters, expand blocks, check arity, widths and dimensions."""

from __future__ import annotations

from dataclasses import replace
from types import SimpleNamespace

import sympy as sp

from archcost.dsl import ast
from archcost.dsl.errors import ArchError, Diagnostic, Span, did_you_mean
from archcost.dsl.loader import Program

from . import precision, symbols
from .arguments import FLOW_ARGS, OP_WIDE_ARGS, bind_op_args, match_args, split_flow
from .expr import Env, Problem, to_sympy
from .ir import Cluster, ModelIR, OpNode, Tensor
from .ops import REGISTRY, OpSpec
from .precision import Format
from .scope import Scope, bind_output, block_input, check_widths, differs, sources

PRELUDE_NAME = "std/formats.arch"
COMPONENTS = ("embedding_output", "attention", "dense_ffn", "routed_experts", "engram", "other")
MAX_NODES = 100_000


def resolve(program: Program, keep: frozenset[str] = frozenset(),
            paths: tuple[tuple[str, str], ...] = (), weights: str | None = None) -> ModelIR:
    """Resolve the entry module's model; raise ArchError with every problem found.

    `keep` leaves model-level dimensions symbolic; `paths` overrides the model's `option` choices;
    `weights` stores the matrix weights outside embedding and head in that format.
    """
    return _Resolver(program, keep, dict(paths), weights).run()


class _Resolver:
    def __init__(self, program: Program, keep: frozenset[str], overrides: dict[str, str], weights: str | None):
        self.weights = weights
        self.program = program
        self.sources = program.sources
        self.keep = keep
        self.overrides = overrides
        self.paths: dict[str, str] = {}
        self.path_choices: dict[str, list[str]] = {}
        self.nodes: list[OpNode] = []
        self.kinds: dict[str, str] = {}  # node id -> op kind, to check what `state = NAME` names
        self.clusters: dict[str, Cluster] = {}
        self.problems: list[Diagnostic] = []
        self.first_use: dict[sp.Symbol, Span | None] = {}
        self.blocks = self._index_blocks()
        self.formats = self._index_formats()

    # --- entry --------------------------------------------------------------------------

    def run(self) -> ModelIR:
        model = self._the_model()
        if self.weights is not None and self.weights not in self.formats:
            raise ArchError([self.sources.diagnostic("E210", f"unknown weight format `{self.weights}`", None,
                                                     hint=did_you_mean(self.weights, self.formats)
                                                     or f"one of {', '.join(self.formats)}")])
        roles = dict(precision.DEFAULT_ROLES)
        scope = Scope(env=Env({}, self.problem, self.first_use), module=self.program.entry.path, path=(),
                      multiplicity=sp.Integer(1), component="other", roles=roles, formats=self.formats,
                      weight_format=self.weights,
                      tensors={"tokens": Tensor(None, symbols.m, None)},
                      current=Tensor(None, symbols.m, None), cluster=None)
        self._body(model.body, scope, model_level=True)
        for name in sorted(set(self.overrides) - set(self.paths)):
            self.problems.append(self.sources.diagnostic(
                "E308", f"this model has no option `{name}`", None,
                hint=did_you_mean(name, self.paths) or f"its options: {', '.join(self.paths) or 'none'}"))
        if self.problems:
            raise ArchError(self.problems)
        return ModelIR(name=model.name, nodes=self.nodes, clusters=self.clusters,
                       first_use=self.first_use, sources=self.sources, paths=self.paths,
                       path_choices=self.path_choices,
                       act_format=self.formats[scope.roles["act"]])

    def problem(self, code: str, message: str, span: Span | None, hint: str | None = None) -> Problem:
        return Problem(self.sources.diagnostic(code, message, span, hint))

    def _the_model(self) -> ast.ModelDef:
        models = self.program.entry.models
        if not models:
            start = Span(file=self.program.entry.path, line=1, column=1, end_line=1, end_column=1)
            raise ArchError([self.sources.diagnostic("E104", "no `model` in this file", start,
                                                     hint="a spec holds one `model \"Name\" { ... }`")])
        if len(models) > 1:
            raise ArchError([self.sources.diagnostic("E105", "more than one `model` in one file", models[1].span)])
        return models[0]

    def _index_blocks(self) -> dict[str, dict[str, ast.BlockDef]]:
        """module path -> {block name -> definition} for every block that module can call."""
        defined: dict[str, dict[str, ast.BlockDef]] = {}
        for path, module in self.program.modules.items():
            own: dict[str, ast.BlockDef] = {}
            for block in module.blocks:
                if block.name in own:
                    self.problems.append(self.sources.diagnostic(
                        "E212", f"block `{block.name}` is defined twice in this file", block.span))
                own[block.name] = block
            defined[path] = own
        return {path: self._visible(path, defined) for path in self.program.modules}

    def _index_formats(self) -> dict[str, Format]:
        """Every `format` declared in any loaded file, the stdlib's prelude first."""
        formats: dict[str, Format] = {}
        modules = sorted(self.program.modules.values(), key=lambda mod: mod.path != PRELUDE_NAME)
        for module in modules:
            for definition in module.formats:
                try:
                    formats[definition.name] = self._format(definition, formats)
                except Problem as problem:
                    self.problems.append(problem.diagnostic)
        return formats

    def _format(self, definition: ast.FormatDef, known: dict[str, Format]) -> Format:
        names = ("bits", "scale_bits", "block", "align", "parts")
        given = match_args(definition.args, list(names), f"format `{definition.name}`", self.problem, ())
        env = Env({}, self.problem, {})
        values = {k: to_sympy(v, env) for k, v in given.items() if k != "parts"}
        if "parts" not in given:
            return Format(definition.name, **values)
        parts = []
        for symbol, count in to_sympy(given["parts"], env).as_coefficients_dict().items():
            if not isinstance(symbol, sp.Symbol) or symbol.name not in known:
                raise self.problem("E210", f"`parts` of format `{definition.name}` names an unknown format",
                                   given["parts"].span, hint=did_you_mean(str(symbol), known))
            parts.append((known[symbol.name], count))
        return Format(definition.name, parts=tuple(sorted(parts, key=lambda p: p[0].name)),
                      **{k: v for k, v in values.items() if k == "align"})

    def _visible(self, path: str, defined: dict[str, dict[str, ast.BlockDef]]) -> dict[str, ast.BlockDef]:
        visible: dict[str, ast.BlockDef] = {}
        for other in reversed(self.program.visible_modules(path)):
            visible.update(defined[other])  # a file's own blocks shadow the ones it uses
        return visible

    # --- statements ---------------------------------------------------------------------

    def _body(self, body: list[ast.Stmt], scope: Scope, model_level: bool = False) -> None:
        for stmt in body:
            try:
                self._stmt(stmt, scope, model_level)
            except Problem as problem:
                self.problems.append(problem.diagnostic)

    def _stmt(self, stmt: ast.Stmt, scope: Scope, model_level: bool) -> None:
        match stmt:
            case ast.Binding():
                self._binding(stmt, scope, model_level)
            case ast.Option():
                self._option(stmt, scope, model_level)
            case ast.Select():
                self._select(stmt, scope)
            case ast.Replay():
                scope.tail = self._check_positive(to_sympy(stmt.tail, scope.env), stmt.tail)
            case ast.Precision():
                self._precision(stmt, scope)
            case ast.Component():
                self._check_component(stmt.name, stmt.span)
                scope.component = stmt.name
            case ast.Repeat():
                self._repeat(stmt, scope)
            case ast.If():
                self._if(stmt, scope)
            case ast.BlockCall():
                self._block_call(stmt, scope)
            case ast.Op():
                self._op(stmt, scope)

    def _binding(self, stmt: ast.Binding, scope: Scope, model_level: bool) -> None:
        if stmt.name in symbols.RESERVED:
            raise self.problem("E208", f"`{stmt.name}` is a scenario letter and cannot be bound", stmt.span,
                               hint="B, S, P, G, m, m_out, H, N_pair, N_rect describe the request")
        if model_level and stmt.name in self.keep:
            return  # --keep: leave this dimension symbolic
        scope.env.values[stmt.name] = to_sympy(stmt.value, scope.env)

    def _option(self, stmt: ast.Option, scope: Scope, model_level: bool) -> None:
        if not model_level:
            raise self.problem("E307", f"`option {stmt.name}` belongs in the model, not in a block", stmt.span,
                               hint="give the block a parameter and pass the option to it")
        choices = [stmt.value, *stmt.alternatives]
        value = self.overrides.get(stmt.name, stmt.value)
        self.paths[stmt.name] = value
        self.path_choices[stmt.name] = choices
        if stmt.alternatives and value not in choices:
            raise self.problem("E308", f"option `{stmt.name}` is one of {', '.join(choices)}, not `{value}`",
                               stmt.span, hint=did_you_mean(value, choices))
        scope.env.values[stmt.name] = sp.Symbol(value)

    def _select(self, stmt: ast.Select, scope: Scope) -> None:
        if scope.stack is None:
            raise self.problem("E306", "`select` divides the layers of a `repeat`, and there is none around it",
                               stmt.span)
        counts = [self._arm_count(arm, scope) for arm in stmt.arms]
        total = sp.Add(*counts)
        if differs(total, scope.stack):
            raise self.problem("E305", f"the arms of `select` run in {total} layers, the stack has {scope.stack}",
                               stmt.span)
        outputs = [self._arm(arm, count, scope) for arm, count in zip(stmt.arms, counts, strict=True)]
        widths = {o.width for o in outputs if o.width is not None}
        if len(widths) > 1 and any(differs(a, b) for a in widths for b in widths):
            raise self.problem("E303", f"the arms of `select` end in different widths: "
                               f"{', '.join(sorted(map(str, widths)))}", stmt.span)
        producers = tuple(p for o in outputs for p in o.producers)
        scope.current = replace(outputs[0], producer=producers[0] if producers else None, also=producers[1:])

    def _arm_count(self, arm: ast.Arm, scope: Scope) -> sp.Expr:
        return self._check_positive(to_sympy(arm.count, scope.env), arm.count, "arm count")

    def _check_positive(self, value, expr, what: str = "count") -> sp.Expr:
        if isinstance(value, sp.logic.boolalg.BooleanAtom) or (value.is_number and not (value.is_integer
                                                                                        and value > 0)):
            raise self.problem("E302", f"{what} `{value}` is not a positive integer", expr.span)
        return value

    def _arm(self, arm: ast.Arm, count: sp.Expr, scope: Scope) -> Tensor:
        label = scope.unique(arm.label)
        cluster_id = scope.qualify(label)
        self.clusters[cluster_id] = Cluster(cluster_id, f"{label} ({count} of {scope.stack})", "select",
                                            scope.cluster, count)
        inner = replace(scope, env=scope.env.child(scope.env.values), path=(*scope.path, label),
                        multiplicity=scope.multiplicity * count / scope.stack, roles=dict(scope.roles),
                        tensors=dict(scope.tensors), cluster=cluster_id, labels={}, last_cache=None, stack=count)
        self._body(arm.body, inner)
        return inner.current

    def _replays(self, given: ast.Keyword | None, scope: Scope) -> bool:
        """`replay = false` keeps an op on every position inside a replay stage (a global KV source)."""
        if given is None:
            return True
        value = to_sympy(given.value, scope.env)
        if value not in (sp.true, sp.false):
            raise self.problem("E211", f"`replay` takes true or false, not `{value}`", given.value.span)
        return value == sp.true

    def _component_arg(self, given: ast.Keyword | None, scope: Scope) -> str:
        if given is None:
            return scope.component
        name = given.value.id if isinstance(given.value, ast.Name) else ""
        self._check_component(name, given.value.span)
        return name

    def _check_component(self, name: str, span) -> None:
        if name not in COMPONENTS:
            raise self.problem("E209", f"unknown component class `{name}`", span,
                               hint=did_you_mean(name, COMPONENTS) or f"one of {', '.join(COMPONENTS)}")

    def _precision(self, stmt: ast.Precision, scope: Scope) -> None:
        for setting in stmt.settings:
            if setting.format not in self.formats:
                raise self.problem("E210", f"unknown number format `{setting.format}`", setting.span,
                                   hint=did_you_mean(setting.format, self.formats)
                                   or f"one of {', '.join(self.formats)}")
            scope.roles[setting.role] = setting.format

    def _repeat(self, stmt: ast.Repeat, scope: Scope) -> None:
        count = to_sympy(stmt.count, scope.env)
        if isinstance(count, sp.logic.boolalg.BooleanAtom) or (count.is_number and not (count.is_integer and count > 0)):
            raise self.problem("E302", f"repeat count `{count}` is not a positive integer", stmt.count.span)
        label = scope.unique(stmt.label or "layers")
        cluster_id = scope.qualify(label)
        self.clusters[cluster_id] = Cluster(cluster_id, label, "repeat", scope.cluster, count)
        inner = replace(scope, env=scope.env.child(scope.env.values), path=(*scope.path, label),
                        multiplicity=scope.multiplicity * count, roles=dict(scope.roles),
                        tensors=dict(scope.tensors), cluster=cluster_id, labels={}, last_cache=None, stack=count)
        self._body(stmt.body, inner)
        before, after = scope.current.width, inner.current.width
        if before is not None and after is not None and differs(before, after):
            raise self.problem("E303", f"repeated body turns width {before} into {after}; "
                               "layer i+1 could not read layer i", stmt.span)
        scope.current = inner.current
        scope.tensors[label] = inner.current

    def _if(self, stmt: ast.If, scope: Scope) -> None:
        condition = to_sympy(stmt.condition, scope.env)
        if condition not in (sp.true, sp.false):
            raise self.problem("E304", f"condition `{condition}` is not true or false", stmt.condition.span)
        self._body(stmt.body if condition == sp.true else stmt.orelse, scope)

    # --- block calls --------------------------------------------------------------------

    def _block_call(self, stmt: ast.BlockCall, scope: Scope) -> None:
        block = self._find_block(stmt, scope)
        if block.name in scope.call_chain:
            chain = " -> ".join([*scope.call_chain, block.name])
            raise self.problem("E213", f"block `{block.name}` calls itself ({chain})", stmt.span)
        flow, args = split_flow(stmt.args)
        values = self._bind_block_args(block, args, scope, stmt)
        source = block_input(flow, scope)
        label = scope.unique(stmt.label or block.name)
        cluster_id = scope.qualify(label)
        title = label if label == block.name else f"{label}: {block.name}"
        self.clusters[cluster_id] = Cluster(cluster_id, title, "block", scope.cluster, block=block.name,
                                            multiplicity=scope.multiplicity)
        inner = Scope(env=scope.env.child(values), module=self._module_of(block), path=(*scope.path, label),
                      multiplicity=scope.multiplicity, component=scope.component, roles=dict(scope.roles),
                      formats=scope.formats, shared=scope.shared, tail=scope.tail, weight_format=scope.weight_format,
                      tensors={"input": source, "tokens": scope.tensors["tokens"]}, current=source, cluster=cluster_id,
                      call_chain=(*scope.call_chain, block.name), stack=scope.stack)
        self._body(block.body, inner)
        self.clusters[cluster_id] = replace(self.clusters[cluster_id], component=inner.component)
        bind_output(flow, scope, label, inner.current)

    def _find_block(self, stmt: ast.BlockCall, scope: Scope) -> ast.BlockDef:
        visible = self.blocks[scope.module]
        passed = scope.env.values.get(stmt.name)
        if isinstance(passed, sp.Symbol):
            handed_in = visible.get(passed.name) or self._any_block(passed.name)
            if handed_in is not None:
                return handed_in  # a block handed in as an argument, e.g. `norm = layernorm`
        if stmt.name in visible:
            return visible[stmt.name]
        if stmt.name in REGISTRY:
            raise self.problem("E200", f"`{stmt.name}` is a primitive op, not a block", stmt.span,
                               hint=f"write it as `{stmt.name} NAME: ...`")
        raise self.problem("E200", f"unknown block `{stmt.name}`", stmt.span,
                           hint=did_you_mean(stmt.name, visible) or "is a `use` line missing?")

    def _any_block(self, name: str) -> ast.BlockDef | None:
        for path in sorted(self.blocks):
            if name in self.blocks[path]:
                return self.blocks[path][name]
        return None

    def _module_of(self, block: ast.BlockDef) -> str:
        return next(path for path, module in self.program.modules.items() if any(b is block for b in module.blocks))

    def _bind_block_args(self, block: ast.BlockDef, args: list[ast.Arg], scope: Scope,
                         stmt: ast.BlockCall) -> dict[str, sp.Basic]:
        names = [p.name for p in block.params]
        given = match_args(args, names, f"block `{block.name}`", self.problem)
        values: dict[str, sp.Basic] = {}
        for param in block.params:
            if isinstance(given.get(param.name), ast.Signature):
                raise self.problem("E211", f"`{param.name}` takes a value, not `in -> out`", given[param.name].span)
            if param.name in given:
                values[param.name] = to_sympy(given[param.name], scope.env)
            elif param.default is not None:
                values[param.name] = to_sympy(param.default, scope.env.child(values))
            else:
                raise self.problem("E202", f"missing argument `{param.name}` of block `{block.name}`", stmt.span,
                                   hint=f"`{block.name}({', '.join(names)})`")
        return values

    # --- ops ----------------------------------------------------------------------------

    def _op(self, stmt: ast.Op, scope: Scope) -> None:
        spec = REGISTRY.get(stmt.op)
        if spec is None:
            blocks = self.blocks[scope.module]
            hint = (f"`{stmt.op}` is a block: call it as `{stmt.op}(...)`" if stmt.op in blocks
                    else did_you_mean(stmt.op, REGISTRY))
            raise self.problem("E205", f"unknown op kind `{stmt.op}`", stmt.span, hint=hint)
        flow, args = split_flow(stmt.args, FLOW_ARGS + OP_WIDE_ARGS)
        component = self._component_arg(flow.pop("component", None), scope)
        tail = scope.tail if self._replays(flow.pop("replay", None), scope) else None
        values = bind_op_args(spec, args, scope, stmt)
        in_width, out_width = spec.widths(values)
        label = scope.unique(stmt.label or stmt.op)
        node_id = scope.qualify(label)
        inputs = sources(flow, scope)
        check_widths(spec, in_width, inputs, stmt, label, scope)
        states = self._states(spec, values, scope, stmt)
        rows = getattr(values, "rows", symbols.m)
        node = OpNode(id=node_id, kind=spec.kind, label=label, component=component,
                      multiplicity=scope.multiplicity, args=values, in_width=in_width, out_width=out_width,
                      rows=rows, inputs=tuple(dict.fromkeys(p for s in inputs for p in s.producers)),
                      states=states, cluster=scope.cluster, span=stmt.span, tail=tail)
        if len(self.nodes) >= MAX_NODES:
            raise self.problem("E211", f"more than {MAX_NODES} ops", stmt.span)
        self.nodes.append(node)
        self.kinds[node_id] = spec.kind
        if spec.kind == "cache":
            scope.last_cache = node_id
            scope.tensors[label] = Tensor(node_id, rows, in_width)
            if values.shared:
                scope.shared[label] = node_id  # one dict for the whole model: later layers read it
        if spec.produces:
            bind_output(flow, scope, label, Tensor(node_id, rows, out_width))

    def _states(self, spec: OpSpec, values: SimpleNamespace, scope: Scope, stmt: ast.Op) -> tuple[str, ...]:
        if spec.arg("state") is None:
            return ()
        chosen = values.state or ((scope.last_cache,) if scope.last_cache else None)
        if chosen is None:
            raise self.problem("E207", f"`{spec.kind}` reads a cache, and none is declared before it", stmt.span,
                               hint="declare `cache NAME: per_token, width = ...` first, or pass `state = NAME`")
        for name in chosen:
            if self.kinds.get(name) != "cache":
                raise self.problem("E207", f"`state` names `{name.rsplit('.', 1)[-1]}`, a `{self.kinds.get(name)}` "
                                   "op, not a cache", stmt.span)
        return tuple(chosen)

