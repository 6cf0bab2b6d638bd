"""What a statement sees while resolving, and how tensors flow between ops (with width checks)."""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import sympy as sp

from archcost.dsl import ast
from archcost.dsl.ast import Span
from archcost.dsl.errors import did_you_mean

from ..graph.ir import Tensor
from ..ops import OpSpec
from .expr import Env


@dataclass
class Scope:
    """Everything a statement sees: names, tensors, and where its ops land in the graph."""

    env: Env
    module: str
    path: tuple[str, ...]
    multiplicity: sp.Expr
    component: str
    roles: dict[str, str]
    formats: dict  # format name -> Format, shared by every scope of a model
    tensors: dict[str, Tensor]
    current: Tensor
    cluster: str | None
    call_chain: tuple[str, ...] = ()
    call_site: Span | None = None  # the call in the spec's own file that led here (for a library's errors)
    labels: dict[str, int] = field(default_factory=dict)
    last_cache: str | None = None
    stack: sp.Expr | None = None  # layers of the innermost repeat, which a `select` divides among its arms
    tail: sp.Expr | None = None   # `replay N`: ops here see only the last min(P, N) new positions
    shared: dict = field(default_factory=dict)  # caches declared `shared`, readable from any scope
    weight_format: str | None = None  # a run's format for matrix weights outside embedding and head
    roles_read: set = field(default_factory=set)  # precision roles some op's dtype named, shared by every scope
    reuse: sp.Expr = sp.Integer(1)  # the passes of the `loop`s around it: each set of weights runs this often
    shares: str | None = None   # `shares NAME` of the call around it: the set of weights its ops run
    held_by: str | None = None  # the same, in a call after the first: its weights are that first call's

    def unique(self, label: str) -> str:
        count = self.labels.get(label, 0) + 1
        self.labels[label] = count
        return label if count == 1 else f"{label}_{count}"

    def qualify(self, label: str) -> str:
        return ".".join((*self.path, label))

    def child(self, label: str, cluster: str, *, times: sp.Expr = sp.Integer(1), stack: sp.Expr | None = None,
              values: dict | None = None, tensors: dict[str, Tensor] | None = None, module: str | None = None,
              block: str | None = None, site: Span | None = None, passes: sp.Expr = sp.Integer(1)) -> Scope:
        """The scope of a repeated body, a select arm (`times` layers of every one outside) or a block call
        (its own `values` and `tensors`, defined in `module`): new names, labels and caches, shared formats."""
        inherited = self.env.values if values is None else values
        return replace(self, env=self.env.child(inherited), path=(*self.path, label),
                       multiplicity=self.multiplicity * times, reuse=self.reuse * passes, roles=dict(self.roles),
                       tensors=dict(self.tensors) if tensors is None else tensors,
                       current=self.current if tensors is None else tensors["input"], cluster=cluster, labels={},
                       last_cache=None, stack=self.stack if stack is None else stack,
                       module=module or self.module,
                       call_chain=(*self.call_chain, block) if block else self.call_chain,
                       call_site=self.call_site or site)


def sources(flow: dict[str, ast.Keyword], scope: Scope) -> list[Tensor]:
    """The tensors an op or call reads: `on`/`from` names, or the previous statement's output."""
    chosen = flow.get("on") or flow.get("from")
    if chosen is None:
        return [scope.current]
    items = chosen.value.items if isinstance(chosen.value, ast.Tuple) else [chosen.value]
    return [_tensor(item, scope) for item in items]


def block_input(flow: dict[str, ast.Keyword], scope: Scope) -> Tensor:
    """One tensor for a block's `input`: several sources side by side."""
    inputs = sources(flow, scope)
    if len(inputs) == 1:
        return inputs[0]
    widths = [s.width for s in inputs]
    width = None if any(w is None for w in widths) else sp.Add(*widths)
    producers = tuple(p for t in inputs for p in t.producers)
    return Tensor(producers[0] if producers else None, inputs[-1].rows, width, producers[1:], parts=tuple(inputs))


def _tensor(item: ast.Expr, scope: Scope) -> Tensor:
    if not isinstance(item, ast.Name):
        raise scope.env.problem("E207", "`from`/`on` take a tensor name or a tuple of names", item.span)
    if item.id == "previous" and "previous" not in scope.tensors:
        return scope.current  # the output of the statement before, whichever branch produced it
    if item.id not in scope.tensors:
        raise scope.env.problem("E207", f"unknown tensor `{item.id}`", item.span,
                                hint=did_you_mean(item.id, scope.tensors)
                                or f"names in this block: {', '.join(sorted(n for n in scope.tensors if '.' not in n))}"
                                + (" (and `label.name` for a tensor of a block called as `label`)"
                                   if any("." in n for n in scope.tensors) else ""))
    return scope.tensors[item.id]


def bind_output(flow: dict[str, ast.Keyword], scope: Scope, label: str, tensor: Tensor) -> None:
    scope.tensors[label] = tensor
    scope.current = tensor
    target = flow.get("on")
    if target is None:
        return
    first = target.value.items[0] if isinstance(target.value, ast.Tuple) else target.value
    if isinstance(first, ast.Name):
        scope.tensors[first.id] = tensor  # an in-place transform takes over the (first) name it reads


def check_widths(spec: OpSpec, in_width, inputs: list[Tensor], stmt: ast.Op, label: str, scope: Scope) -> None:
    """An op must read the width its inputs have: side by side (concat) or each alike (each)."""
    if in_width is None or any(s.width is None for s in inputs):
        return
    if spec.input_rule == "each":  # a block input of several tensors is read as those tensors, each alike
        produced = [part.width for s in inputs for part in (s.parts or (s,))]
    else:
        produced = [sp.Add(*(s.width for s in inputs))]
    for width in produced:
        if differs(in_width, width):
            names = ", ".join(_producer_label(s) for s in inputs)
            raise scope.env.problem("E300", f"width mismatch: `{spec.kind} {label}` reads width {in_width} "
                                    f"but its input ({names}) has width {width}", stmt.span)


def differs(a: sp.Expr, b: sp.Expr) -> bool:
    """True only when the two widths are provably different (their difference is a nonzero number)."""
    difference = sp.expand(a - b)
    return bool(difference.is_number and difference != 0)


def _producer_label(tensor: Tensor) -> str:
    return tensor.producer.rsplit(".", 1)[-1] if tensor.producer else "tokens"
