"""AST back to text in one canonical layout (for `fmt` and the print→parse round trip)."""

from __future__ import annotations

from . import ast

INDENT = "  "
_PRECEDENCE = {"==": 0.5, "!=": 0.5, "+": 1, "-": 1, "*": 2, "/": 2, "//": 2, "^": 4}


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
                text = f"{format_expr(expr.left, 5)} ^ {format_expr(expr.right, 3)}"
            elif expr.op in ("==", "!="):  # comparisons do not chain: both sides are sums
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


def format_stmt(stmt: ast.Stmt, depth: int) -> list[str]:
    pad = INDENT * depth
    match stmt:
        case ast.Binding():
            return [f"{pad}{stmt.name} = {format_expr(stmt.value)}"]
        case ast.Option():
            return [f"{pad}option {stmt.name} = {' | '.join([stmt.value, *stmt.alternatives])}"]
        case ast.Select():
            lines = [f"{pad}select {{"]
            for arm in stmt.arms:
                lines += [f"{pad}{INDENT}{format_expr(arm.count)} as {arm.label} {{", *_body(arm.body, depth + 1),
                          f"{pad}{INDENT}}}"]
            return [*lines, f"{pad}}}"]
        case ast.Precision():
            return [f"{pad}precision " + ", ".join(f"{s.role} = {s.format}" for s in stmt.settings)]
        case ast.Component():
            return [f"{pad}component {stmt.name}"]
        case ast.Replay():
            return [f"{pad}replay {format_expr(stmt.tail)}"]
        case ast.Repeat():
            label = f" as {stmt.label}" if stmt.label else ""
            return [f"{pad}repeat {format_expr(stmt.count)}{label} {{", *_body(stmt.body, depth), f"{pad}}}"]
        case ast.If():
            lines = [f"{pad}if {format_expr(stmt.condition)} {{", *_body(stmt.body, depth)]
            if stmt.orelse:
                lines += [f"{pad}}} else {{", *_body(stmt.orelse, depth)]
            return [*lines, f"{pad}}}"]
        case ast.BlockCall():
            label = f" as {stmt.label}" if stmt.label else ""
            return [f"{pad}{stmt.name}({', '.join(format_arg(a) for a in stmt.args)}){label}"]
        case ast.Op():
            head = f"{stmt.op} {stmt.label}" if stmt.label else stmt.op
            return [f"{pad}{head}: {', '.join(format_arg(a) for a in stmt.args)}"]
    raise AssertionError(stmt)


def _body(body: list[ast.Stmt], depth: int) -> list[str]:
    return [line for stmt in body for line in format_stmt(stmt, depth + 1)]


def format_module(module: ast.Module) -> str:
    """The canonical text of a module: uses, then blocks, then the model."""
    parts: list[str] = []
    if module.uses:
        parts.append("\n".join(f'use "{u.target}"' if u.is_path else f"use {u.target}" for u in module.uses))
    for fmt in module.formats:
        parts.append(f"format {fmt.name} {{ {', '.join(format_arg(a) for a in fmt.args)} }}")
    for device in module.devices:
        parts.append(f"device {device.name} {{ {', '.join(format_arg(a) for a in device.args)} }}")
    for block in module.blocks:
        params = ", ".join(p.name if p.default is None else f"{p.name} = {format_expr(p.default)}"
                           for p in block.params)
        parts.append("\n".join([f"block {block.name}({params}) {{", *_body(block.body, 0), "}"]))
    for model in module.models:
        parts.append("\n".join([f'model "{model.name}" {{', *_body(model.body, 0), "}"]))
    return "\n\n".join(parts) + "\n"
