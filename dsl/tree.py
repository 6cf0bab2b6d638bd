"""The lark parse tree to `dsl.ast` nodes, each with its source span."""

from __future__ import annotations

from lark import Token, Tree

from . import ast
from .errors import Span


def _span(file: str, meta) -> ast.Span | None:
    if getattr(meta, "empty", True):
        return None
    return Span(file=file, line=meta.line, column=meta.column, end_line=meta.end_line, end_column=meta.end_column)


def _token_span(file: str, tok: Token) -> Span:
    return Span(file=file, line=tok.line, column=tok.column, end_line=tok.end_line or tok.line,
                end_column=tok.end_column or tok.column + 1)


def _binop(op: str):
    def method(self, meta, children):
        return ast.BinOp(op=op, left=children[0], right=children[1], span=self._s(meta))
    return method


class ToAst:
    """Rule name = AST class: one method per grammar rule, called with the rule's meta (its span) and its
    children already converted, bottom up (lark's Transformer does the same walk with a wrapper per call,
    which cost a third of the parse)."""

    def __init__(self, file: str):
        self.file = file

    def transform(self, tree: Tree):
        children = [self.transform(child) if isinstance(child, Tree) else child for child in tree.children]
        return getattr(self, tree.data)(tree.meta, children)

    def _s(self, meta):
        return _span(self.file, meta)

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

    def repeat(self, meta, children):
        count, label, body = children
        return ast.Repeat(count=count, label=_opt(label), body=body, span=self._s(meta))

    def if_stmt(self, meta, children):
        condition, body, orelse = children
        return ast.If(condition=condition, body=body, orelse=orelse or [], span=self._s(meta))

    def block_call(self, meta, children):
        name, *args, label = children
        return ast.BlockCall(name=str(name), args=[a for a in args if a is not None],
                             label=_opt(label), span=self._s(meta))

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
