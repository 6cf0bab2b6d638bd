"""Expressions and argument lists as text in the canonical layout, long ones wrapped (the printer's pieces)."""

from __future__ import annotations

from . import ast

WIDTH = 110  # longer calls and ops wrap at commas
COMPARISONS = ("==", "!=", "<", "<=", ">", ">=")
_PRECEDENCE = {**{op: 0.5 for op in COMPARISONS}, "+": 1, "-": 1, "*": 2, "/": 2, "//": 2, "^": 4}


def format_expr(expr: ast.Expr, parent: int = 0) -> str:
    match expr:
        case ast.Num():
            return _group_digits(expr.text)
        case ast.Bool():
            return "true" if expr.value else "false"
        case ast.Name():
            return expr.id
        case ast.Neg():
            return _wrap(f"-{format_expr(expr.operand, 3)}", 3, parent)
        case ast.Call():
            return f"{expr.func}({', '.join(format_expr(a) for a in expr.args)})"
        case ast.Tuple():
            return f"({', '.join(format_expr(a) for a in expr.items)})"
        case ast.BinOp():
            level = _PRECEDENCE[expr.op]
            if expr.op == "^":  # right-associative, binds tighter than unary minus on its right
                text = f"{format_expr(expr.left, 5)}^{format_expr(expr.right, 3)}"
            elif expr.op in COMPARISONS:  # comparisons do not chain: both sides are sums
                text = f"{format_expr(expr.left, 1)} {expr.op} {format_expr(expr.right, 1)}"
            else:
                text = f"{format_expr(expr.left, level)} {expr.op} {format_expr(expr.right, level + 1)}"
            return _wrap(text, level, parent)
    raise AssertionError(expr)


def _wrap(text: str, level: int, parent: int) -> str:
    return f"({text})" if level < parent else text


def _group_digits(text: str) -> str:
    whole, _, fraction = text.partition(".")
    if len(whole) > 4:
        groups = []
        while whole:
            groups.insert(0, whole[-3:])
            whole = whole[:-3]
        whole = "_".join(groups)
    return f"{whole}.{fraction}" if fraction else whole


def format_arg(arg: ast.Arg) -> str:
    match arg:
        case ast.Positional():
            return format_expr(arg.value)
        case ast.Keyword():
            return f"{arg.name} = {format_expr(arg.value)}"
        case ast.Signature():
            return f"{format_expr(arg.source)} -> {format_expr(arg.target)}"
    raise AssertionError(arg)


def wrap_terms(head: str, expr: ast.Expr, note: str) -> list[str]:
    """`head` + a long sum, broken before its top-level `+` and `-` and lined up under its first term."""
    one = head + format_expr(expr)
    if len(one) <= WIDTH:
        return [one + note]
    terms: list[tuple[str, ast.Expr]] = []
    while isinstance(expr, ast.BinOp) and expr.op in ("+", "-"):
        terms.insert(0, (expr.op, expr.right))
        expr = expr.left
    pieces = [format_expr(expr, 1)] + [f"{op} {format_expr(term, 2)}" for op, term in terms]
    lines, current = [], head + pieces[0]
    for piece in pieces[1:]:
        if len(current) + 1 + len(piece) > WIDTH:
            lines.append(current)
            current = " " * len(head) + piece
        else:
            current += " " + piece
    return [*lines, current + note]


def wrap_args(head: str, args: list[str], tail: str, note: str, align: bool, pad: str = "") -> list[str]:
    """`head` + args joined by commas + `tail`, wrapped at WIDTH: continuation lines line up under the
    first argument (calls, parameters) or are indented four more (ops)."""
    one = head + ", ".join(args) + tail
    if len(one) <= WIDTH or len(args) < 2:
        return [one + note]
    indent = " " * len(head) if align else pad + "    "
    lines, current = [], head
    for index, arg in enumerate(args):
        piece = arg + ("," if index < len(args) - 1 else tail)
        start = current in (head, indent)
        if not start and len(current) + 1 + len(piece) > WIDTH:
            lines.append(current.rstrip())
            current = indent
            start = True
        current += piece if start else " " + piece
    lines.append(current)
    lines[-1] += note
    return lines
