"""The lark parse tree to `dsl.ast` nodes, each with its source span."""

from __future__ import annotations

from lark import Token, Tree

from . import ast
from .errors import Span

# The terminals a rule's method reads; the parser keeps every token (keep_all_tokens) so that a node's span
# runs from its first token to its last, keywords and brackets included, and the walk drops the others.
READ_TERMINALS = frozenset({"NAME", "NUMBER", "STRING"})
READS_EVERY_TOKEN = frozenset({"argname"})  # `component = other`: the keyword is the argument's name


def _binop(op: str):
    def method(self, meta, children):
        return ast.BinOp(op=op, left=children[0], right=children[1], span=self._s(meta))
    return method


class ToAst:
    """Rule name = AST class: one method per grammar rule, called with the rule's extent (its first and last
    token) and its children already converted, bottom up.

    The walk finds extents itself, as lark's propagate_positions would (a node runs from the start of its first
    token to the end of its last, a bracketed expression's brackets counted by the node around it but not by
    the expression): lark's way wraps every reduction of the parse and cost a third of it."""

    def __init__(self, file: str):
        self.file = file

    def transform(self, tree: Tree):
        return self._walk(tree)[0]

    def _walk(self, tree: Tree) -> tuple:
        """(the rule's value, its first position, its last): positions are (line, column) pairs, None for a rule
        that matched no text."""
        children, first, last = [], None, None
        every = tree.data in READS_EVERY_TOKEN
        for child in tree.children:
            if child is None:  # an optional part left out (maybe_placeholders)
                children.append(None)
                continue
            if type(child) is Token:
                start, end = (child.line, child.column), (child.end_line, child.end_column)
                if every or child.type in READ_TERMINALS:
                    children.append(child)
            else:
                value, start, end = self._walk(child)
                children.append(value)
            if start is not None:
                first = first or start
                last = end
        return getattr(self, tree.data)((first, last), children), first, last

    def _s(self, extent):
        first, last = extent
        if first is None:
            return None
        return Span(file=self.file, line=first[0], column=first[1], end_line=last[0], end_column=last[1])

    def atom(self, extent, children):
        """`( expr )`: the expression, its span its own; the brackets count in the extent of what holds it."""
        return children[0]

    # expressions
    def number(self, meta, children):
        return ast.Num(text=str(children[0]).replace("_", ""), span=self._s(meta))

    def true(self, meta, _):
        return ast.Bool(value=True, span=self._s(meta))

    def false(self, meta, _):
        return ast.Bool(value=False, span=self._s(meta))

    def name(self, meta, children):
        return ast.Name(id=str(children[0]), span=self._s(meta))

    def tensor_path(self, meta, children):
        return ast.Name(id=".".join(str(c) for c in children), span=self._s(meta))

    def call(self, meta, children):
        func, *args = children
        return ast.Call(func=str(func), args=[a for a in args if a is not None], span=self._s(meta))

    def tuple(self, meta, children):
        return ast.Tuple(items=list(children), span=self._s(meta))

    def neg(self, meta, children):
        return ast.Neg(operand=children[0], span=self._s(meta))

    add, sub, mul, div, floordiv, pow, eq, ne, lt, le, gt, ge = (
        _binop(o) for o in ("+", "-", "*", "/", "//", "^", "==", "!=", "<", "<=", ">", ">="))

    # arguments
    def positional(self, meta, children):
        return ast.Positional(value=children[0], span=self._s(meta))

    def argname(self, meta, children):
        return str(children[0])

    def keyword(self, meta, children):
        return ast.Keyword(name=str(children[0]), value=children[1], span=self._s(meta))

    def signature(self, meta, children):
        return ast.Signature(source=children[0], target=children[1], span=self._s(meta))

    # statements
    def body(self, meta, children):
        return list(children)

    def binding(self, meta, children):
        return ast.Binding(name=str(children[0]), value=children[1], span=self._s(meta))

    def option(self, meta, children):
        name, value, *others = (str(c) for c in children)
        return ast.Option(name=name, value=value, alternatives=others, span=self._s(meta))

    def arm(self, meta, children):
        count, label, body = children
        return ast.Arm(count=count, label=str(label), body=body, span=self._s(meta))

    def select(self, meta, children):
        return ast.Select(arms=list(children), span=self._s(meta))

    def setting(self, meta, children):
        return ast.Setting(role=str(children[0]), format=str(children[1]), span=self._s(meta))

    def precision(self, meta, children):
        return ast.Precision(settings=list(children), span=self._s(meta))

    def component(self, meta, children):
        return ast.Component(name=str(children[0]), span=self._s(meta))

    def replay(self, meta, children):
        return ast.Replay(tail=children[0], span=self._s(meta))

    def require(self, meta, children):
        condition, message = children
        return ast.Require(condition=condition, message=str(message)[1:-1], span=self._s(meta))

    # an optional part left out leaves a placeholder for each of its tokens: `["as" NAME]` two, so the
    # methods below read the part from its end
    def repeat(self, meta, children):
        count, *label, body = children
        return ast.Repeat(count=count, label=_opt(label[-1]), body=body, span=self._s(meta))

    def loop(self, meta, children):
        return self.repeat(meta, children).model_copy(update={"shared": True})

    def if_stmt(self, meta, children):
        condition, body, *orelse = children
        return ast.If(condition=condition, body=body, orelse=orelse[-1] or [], span=self._s(meta))

    def block_call(self, meta, children):
        name, *rest = children
        rest, shares = _optional_name(rest)
        rest, label = _optional_name(rest)
        return ast.BlockCall(name=str(name), args=[a for a in rest if a is not None],
                             label=label, shares=shares, span=self._s(meta))

    def op(self, meta, children):
        kind, label, *args = children
        return ast.Op(op=str(kind), label=_opt(label), args=args, span=self._s(meta))

    # top level
    def param(self, meta, children):
        return ast.Param(name=str(children[0]), default=children[1], span=self._s(meta))

    def block_def(self, meta, children):
        name, *params, body = children
        return ast.BlockDef(name=str(name), params=[p for p in params if p is not None], body=body,
                            span=self._s(meta))

    def format_def(self, meta, children):
        name, *args = children
        return ast.FormatDef(name=str(name), args=list(args), span=self._s(meta))

    def device_def(self, meta, children):
        name, *args = children
        return ast.DeviceDef(name=str(name), args=list(args), span=self._s(meta))

    def link_def(self, meta, children):
        name, *args = children
        return ast.LinkDef(name=str(name), args=list(args), span=self._s(meta))

    def model_def(self, meta, children):
        return ast.ModelDef(name=str(children[0])[1:-1], body=children[1], span=self._s(meta))

    def dotted(self, meta, children):
        return ".".join(str(c) for c in children)

    def use(self, meta, children):
        target = children[0]
        if isinstance(target, Token):
            return ast.Use(target=str(target)[1:-1], is_path=True, span=self._s(meta))
        return ast.Use(target=target, is_path=False, span=self._s(meta))

    def start(self, meta, children):
        return (
            [c for c in children if isinstance(c, ast.Use)],
            [c for c in children if isinstance(c, ast.FormatDef)],
            [c for c in children if isinstance(c, ast.DeviceDef)],
            [c for c in children if isinstance(c, ast.LinkDef)],
            [c for c in children if isinstance(c, ast.BlockDef)],
            [c for c in children if isinstance(c, ast.ModelDef)],
        )


def _opt(token) -> str | None:
    return None if token is None else str(token)


def _optional_name(children: list) -> tuple[list, str | None]:
    """The children before an optional `"word" NAME` at their end, and the name: a part left out is two
    placeholders, a part given its name alone (the keyword is not read)."""
    if children and children[-1] is not None:
        return children[:-1], str(children[-1])
    return children[:-2], None
