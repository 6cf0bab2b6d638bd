"""AST to model IR: bind parameters, expand blocks, check arity, widths and dimensions.

This module holds one resolution's state and the model-level statements (bindings, options, precision,
components); `structure` resolves repeats, selects and ifs, `calls` block calls and ops.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import sympy as sp

from archcost.dsl import ast
from archcost.dsl.errors import ArchError, Diagnostic, Span, did_you_mean
from archcost.dsl.loader import Program

from ..graph.ir import Cluster, ModelIR, OpNode, Tensor, steered_ids
from ..ops import REGISTRY
from ..terms import symbols
from ..terms.quantities import COMPONENTS
from . import calls, precision, structure
from .arguments import MAX_VALUE
from .declarations import Declarations, declare, expanded_size
from .expr import Env, Problem, to_sympy
from .located import argument_span, named
from .replay import Noted
from .scope import Scope

MAX_NODES = 20_000  # the largest specs have a few hundred ops; repeats stay one node however deep
MAX_PROBLEMS = 100
FOLLOW_ON = frozenset({"E300", "E207"})  # width mismatch, unknown tensor: what a failed statement leaves behind


class _Abandoned(Exception):
    """A block whose body failed: its caller carries on without its output."""


def resolve(program: Program, keep: frozenset[str] = frozenset(),
            paths: tuple[tuple[str, str], ...] = (), weights: str | None = None, kv: str | None = None) -> ModelIR:
    """Resolve the entry module's model; raise ArchError with every problem found.

    `keep` leaves model-level dimensions symbolic; `paths` overrides the model's `option` choices;
    `weights` stores the matrix weights outside embedding and head in that format; `kv` the KV cache (the
    `kv` precision role, whatever the spec says).
    """
    resolution = Resolution(program, keep, dict(paths), weights, kv)
    resolution.declarations = declare(program, resolution.problem, resolution.problems)
    if resolution.problems:  # a definition that is wrong makes every call of it an echo: report it alone
        raise ArchError(resolution.problems)
    return resolution.run()


@dataclass
class Resolution:
    """One model being resolved: what it has produced so far and the problems found."""

    program: Program
    keep: frozenset[str]
    overrides: dict[str, str]   # `--option NAME=WORD`
    weights: str | None
    kv: str | None = None       # `--kv FORMAT`: the run's format of the `kv` role
    declarations: Declarations | None = None
    paths: dict[str, str] = field(default_factory=dict)            # the `option` words chosen
    path_choices: dict[str, list[str]] = field(default_factory=dict)
    nodes: list[OpNode] = field(default_factory=list)
    kinds: dict[str, str] = field(default_factory=dict)   # node id -> op kind, to check what `state = NAME` names
    labels: dict[str, str] = field(default_factory=dict)  # node id -> its label, for messages
    clusters: dict[str, Cluster] = field(default_factory=dict)
    problems: list[Diagnostic] = field(default_factory=list)
    first_use: dict[sp.Symbol, Span | None] = field(default_factory=Noted)
    nearby: dict[sp.Symbol, tuple[str, ...]] = field(default_factory=Noted)
    recordings: dict = field(default_factory=dict)  # block calls resolved once, made again for calls alike
    weight_sets: dict = field(default_factory=dict)  # `shares NAME` -> (block, its arguments, the first call)
    roles_set: dict[str, Span | None] = field(default_factory=dict)  # precision roles a spec sets, where first

    @property
    def sources(self):
        return self.program.sources

    @property
    def formats(self):
        return self.declarations.formats

    def problem(self, code: str, message: str, span: Span | None, hint: str | None = None) -> Problem:
        return Problem(self.sources.diagnostic(code, message, span, hint))

    def run(self) -> ModelIR:
        model = self._the_model()
        size = expanded_size(model.body, self.program.entry.path, self.declarations)
        if size > MAX_NODES:
            raise ArchError([self.sources.diagnostic("E114", f"this model expands to as many as {size:,} ops; the "
                                                     f"limit is {MAX_NODES:,}", model.span,
                                                     hint="a repeated layer is written once inside `repeat N`")])
        self._check_weights()
        scope = self._model_scope()
        self.body(model.body, scope, model_level=True)
        for name in sorted(set(self.overrides) - set(self.paths)):
            self.problems.append(self.sources.diagnostic(
                "E308", f"this model has no option `{name}`", None,
                hint=did_you_mean(name, self.paths) or f"its options: {', '.join(self.paths) or 'none'}"))
        self._check_tied()
        if not self.problems:  # a block abandoned by an earlier problem lacks the ops its `steers` name
            self._check_steering()
        self._check_roles(scope)
        if self.problems:
            raise ArchError(self.problems)
        return ModelIR(name=model.name, nodes=self.nodes, clusters=self.clusters, first_use=self.first_use,
                       nearby=self.nearby, sources=self.sources, paths=self.paths, path_choices=self.path_choices,
                       act_format=self.formats[scope.roles["act"]], formats=self.formats)

    def _check_roles(self, scope: Scope) -> None:
        """A precision role of the spec's own that no op's dtype names is a misspelling, not a setting."""
        for role, span in self.roles_set.items():
            if role not in precision.DEFAULT_ROLES and role not in scope.roles_read:
                known = sorted({*precision.DEFAULT_ROLES, *scope.roles_read})
                self.problems.append(self.sources.diagnostic(
                    "E210", f"precision role `{role}` is named by no op", span,
                    hint=did_you_mean(role, known) or f"the roles ops read here: {', '.join(known)}"))

    def _check_steering(self) -> None:
        """Each op's `steers` names an op of its own block (one of a tuple's labels at least: a block's
        branches may name either)."""
        ids = {node.id for node in self.nodes}
        for node in self.nodes:
            if node.steers and not any(target in ids for target in steered_ids(node)):
                self.problems.append(self._reached_from(self.sources.diagnostic(
                    "E207", f"`{node.label}` steers `{'`, `'.join(node.steers)}`: no op of its block has that label",
                    node.span, hint="`steers` names a later op of the same block, as `from` names an earlier one"),
                    None, node.call_site))

    def _check_tied(self) -> None:
        """A `tied` op reuses a table another op owns; when every table is tied, its parameters belong to no one
        (an embedding and a head both declared tied)."""
        tied = [node for node in self.nodes if getattr(node.args, "tied", False)]
        owners = [
            node for node in self.nodes if REGISTRY[node.kind].token_input and not getattr(node.args, "tied", False)
        ]
        if tied and not owners:
            self.problems.append(self._reached_from(self.sources.diagnostic(
                "E219", f"`{tied[0].label}` is tied to a table that no op owns: every table here is tied", tied[0].span,
                hint="declare the embedding without `tied = true`; the head reuses its table"), None,
                tied[0].call_site))

    def _the_model(self) -> ast.ModelDef:
        models = self.program.entry.models
        if not models:
            start = Span(file=self.program.entry.path, line=1, column=1, end_line=1, end_column=1)
            raise ArchError([self.sources.diagnostic("E104", "no `model` in this file", start,
                                                     hint="a spec holds one `model \"Name\" { ... }`")])
        if len(models) > 1:
            raise ArchError([self.sources.diagnostic("E105", "more than one `model` in one file", models[1].span)])
        return models[0]

    def _check_weights(self) -> None:
        if self.weights is not None and self.weights not in self.formats:
            raise ArchError([self.sources.diagnostic("E210", f"unknown weight format `{self.weights}`", None,
                                                     hint=did_you_mean(self.weights, self.formats)
                                                     or f"one of {', '.join(self.formats)}")])
        if self.kv is not None and self.kv not in self.formats:
            raise ArchError([self.sources.diagnostic("E210", f"unknown KV cache format `{self.kv}`", None,
                                                     hint=did_you_mean(self.kv, self.formats)
                                                     or f"one of {', '.join(self.formats)}")])

    def _model_scope(self) -> Scope:
        tokens = Tensor(None, symbols.m, None)
        return Scope(env=Env({}, self.problem, self.first_use, self.nearby), module=self.program.entry.path, path=(),
                     multiplicity=sp.Integer(1), component="other",
                     roles={**precision.DEFAULT_ROLES, **({"kv": self.kv} if self.kv else {})},
                     formats=self.formats, weight_format=self.weights, tensors={"tokens": tokens},
                     current=tokens, cluster=None)

    def body(self, body: list[ast.Stmt], scope: Scope, model_level: bool = False) -> None:
        """Resolve statements in order; a problem in one is collected and the next one still runs, up to
        MAX_PROBLEMS. A problem inside a block abandons the block (what follows in it would repeat the cause),
        and once a scope has failed, the width mismatches and unknown tensors that follow are its echoes."""
        failed = False
        for stmt in body:
            try:
                self._statement(stmt, scope, model_level)
            except _Abandoned:
                failed = True
                if scope.call_chain:
                    raise
            except Problem as problem:
                found = self._reached_from(problem.diagnostic, scope)
                if not (failed and problem.diagnostic.code in FOLLOW_ON) and found not in self.problems:
                    self.problems.append(found)
                failed = True
                if len(self.problems) >= MAX_PROBLEMS:
                    raise ArchError(self.problems) from None
                if scope.call_chain:
                    raise _Abandoned() from None

    def _reached_from(self, diagnostic: Diagnostic, scope: Scope | None, site: Span | None = None) -> Diagnostic:
        """A problem inside a library file is the user's call's: located there (under the argument the library
        line names, where the call gives one), the library's line a note."""
        site, entry = site or (scope.call_site if scope else None), self.program.entry.path
        if site is None or diagnostic.span is None or diagnostic.span.file == entry or diagnostic.note:
            return diagnostic
        if not diagnostic.span.file.startswith("std/") or site.file.startswith("<probe"):
            # a block file of the user's own (or one `check` probes) is the user's line already
            where = f"{site.file}:{site.line}:{site.column}"
            call = (self.sources.line(site) or "").strip()
            return diagnostic.model_copy(update={"note": f"reached from {where}" + (f": `{call}`" if call else "")})
        call = self.sources.line(site) or ""
        inside = diagnostic.span
        library = (diagnostic.source_line or "").strip()
        where = f"{inside.file}:{inside.line}:{inside.column}"
        span = argument_span(site, call, named(diagnostic.source_line, inside)) or site
        return diagnostic.model_copy(update={"span": span, "source_line": call,
                                             "note": f"in {where}" + (f": `{library}`" if library else "")})

    def _statement(self, stmt: ast.Stmt, scope: Scope, model_level: bool) -> None:
        match stmt:
            case ast.Binding():
                self._binding(stmt, scope, model_level)
            case ast.Option():
                self._option(stmt, scope, model_level)
            case ast.Precision():
                self._precision(stmt, scope)
            case ast.Component():
                scope.component = self.check_component(stmt.name, stmt.span)
            case ast.Replay():
                scope.tail = self.check_positive(to_sympy(stmt.tail, scope.env), stmt.tail)
            case ast.Require():
                structure.require(self, stmt, scope)
            case ast.Repeat() | ast.Select() | ast.If():
                structure.resolve_structure(self, stmt, scope)
            case ast.BlockCall():
                calls.block_call(self, stmt, scope)
            case ast.Op():
                calls.op(self, stmt, scope)

    def _binding(self, stmt: ast.Binding, scope: Scope, model_level: bool) -> None:
        if stmt.name in symbols.RESERVED:
            raise self.problem("E208", f"`{stmt.name}` is a scenario letter and cannot be bound", stmt.span,
                               hint="B, S, P, G, m, m_out, H, N_pair, N_rect describe the request")
        if model_level and stmt.name in self.keep:
            return  # --keep: leave this dimension symbolic
        value = to_sympy(stmt.value, scope.env)
        if isinstance(value, sp.Expr) and value.is_number and abs(value) >= MAX_VALUE:
            raise self.problem("E214", f"`{stmt.name}` has more than 40 digits; no model size comes near", stmt.span)
        scope.env.values[stmt.name] = value

    def _option(self, stmt: ast.Option, scope: Scope, model_level: bool) -> None:
        """`option NAME = word | word`: an execution path of the model, the first word unless overridden."""
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

    def _precision(self, stmt: ast.Precision, scope: Scope) -> None:
        for setting in stmt.settings:
            if setting.format not in self.formats:
                raise self.problem("E210", f"unknown number format `{setting.format}`", setting.span,
                                   hint=did_you_mean(setting.format, self.formats)
                                   or f"one of {', '.join(self.formats)}")
            scope.roles[setting.role] = self.kv if setting.role == "kv" and self.kv else setting.format
            self.roles_set.setdefault(setting.role, setting.span)

    def check_component(self, name: str, span) -> str:
        if name not in COMPONENTS:
            raise self.problem("E209", f"unknown component class `{name}`", span,
                               hint=did_you_mean(name, COMPONENTS) or f"one of {', '.join(COMPONENTS)}")
        return name

    def check_positive(self, value, expr, what: str = "count") -> sp.Expr:
        if isinstance(value, sp.logic.boolalg.BooleanAtom) or (value.is_number and not (value.is_integer
                                                                                        and value > 0)):
            raise self.problem("E302", f"{what} `{value}` is not a positive integer", expr.span)
        return value

    def add_node(self, node: OpNode, span) -> None:
        if len(self.nodes) >= MAX_NODES:
            raise self.problem("E114", f"more than {MAX_NODES} ops", span)
        self.nodes.append(node)
        self.kinds[node.id] = node.kind
        self.labels[node.id] = node.label
