"""Call arguments to parameters: arity checks, and typed values for an op's arguments."""

from __future__ import annotations

from types import SimpleNamespace

import sympy as sp

from archcost.dsl import ast
from archcost.dsl.errors import did_you_mean
from archcost.dsl.text import format_expr

from ..ops import Arg, OpSpec
from ..terms.symbols import SCENARIO
from .expr import to_sympy
from .scope import Scope

REQUEST_SYMBOLS = frozenset(SCENARIO.values())
# Costs are polynomials of low degree in the request (N_pair ~ P², a request's decodes add one): an
# argument growing faster is a typo, and summing it over decodes would take sympy minutes.
MAX_REQUEST_DEGREE = 4
MAX_VALUE = sp.Integer(10) ** 40  # as the literals' digit limit: a value built up past it is a typo or an attack

FLOW_ARGS = ("from", "on")  # accepted by every op and block call: where the input comes from
# accepted by every op: its class; replay = false runs on every position; how it splits over cards; the ops of
# its own block its output steers without flowing into them (a router's choice, a gate, sinks, an indexer's
# selection): drawn as edges, never costed
OP_WIDE_ARGS = ("component", "replay", "shard", "steers")


def split_flow(args: list[ast.Arg], reserved: tuple[str, ...] = FLOW_ARGS
               ) -> tuple[dict[str, ast.Keyword], list[ast.Arg]]:
    """Separate `from`/`on` (data flow) and other `reserved` keywords from the op's or block's own."""
    flow = {a.name: a for a in args if isinstance(a, ast.Keyword) and a.name in reserved}
    return flow, [a for a in args if not (isinstance(a, ast.Keyword) and a.name in reserved)]


def match_args(args: list[ast.Arg], names: list[str], what: str, problem, positional: tuple[str, ...] | None = None
               ) -> dict[str, ast.Expr | ast.Signature]:
    """Map positional and keyword arguments onto parameter names, checking arity."""
    order = list(positional) if positional is not None else names
    given: dict[str, ast.Expr | ast.Signature] = {}
    slots = iter(order)
    for arg in args:
        if isinstance(arg, ast.Keyword):
            if arg.name not in names:
                raise problem("E201", f"{what} has no argument `{arg.name}`", arg.span,
                              hint=did_you_mean(arg.name, [*names, *FLOW_ARGS]) or f"it takes: {', '.join(names)}")
            name, value = arg.name, arg.value
        else:
            name = next(slots, None)
            if name is None:
                raise problem("E203", f"too many positional arguments for {what}", arg.span,
                              hint=f"it takes: {', '.join(order) or 'keyword arguments only'}")
            value = arg if isinstance(arg, ast.Signature) else arg.value
        if name in given:
            raise problem("E204", f"argument `{name}` of {what} given twice", arg.span)
        given[name] = value
    return given


def bind_op_args(spec: OpSpec, args: list[ast.Arg], scope: Scope, stmt: ast.Op, component: str) -> SimpleNamespace:
    """Typed values for every argument of `spec`, defaults filled in (a weight format by the op's `component`)."""
    problem = scope.env.problem
    given = match_args(args, [a.name for a in spec.args], f"op `{spec.kind}`", problem, spec.positional)
    values = {}
    for arg in spec.args:
        if arg.name in given:
            values[arg.name] = _value(arg, given[arg.name], scope, spec)
        elif arg.required:
            raise problem("E202", f"missing argument `{arg.name}` of `{spec.kind}`", stmt.span, hint=arg.doc or None)
        else:
            values[arg.name] = _default(arg, scope, spec, component)
    bound = SimpleNamespace(**values)
    for name, message in spec.check(bound) if spec.check else ():
        raise problem("E301", message, getattr(given.get(name), "span", None) or stmt.span)
    return bound


def _default(arg: Arg, scope: Scope, spec: OpSpec, component: str):
    if arg.kind == "dtype":
        if arg.default == "weights" and spec.quantizable and component != "embedding_output":
            if component in scope.roles:  # `precision routed_experts = mxfp4`: as a checkpoint stores them
                scope.roles_read.add(component)
            if scope.weight_format:
                return scope.formats[scope.weight_format]  # a run's --weights: embedding, head and norms keep theirs
            if component in scope.roles:
                return scope.formats[scope.roles[component]]
        return scope.formats[scope.roles[arg.default]]
    if arg.kind == "bool":
        return bool(arg.default)
    if isinstance(arg.default, int):
        return sp.Integer(arg.default)
    return arg.default


def _value(arg: Arg, expr, scope: Scope, spec: OpSpec):
    problem = scope.env.problem
    if arg.kind == "signature":
        if not isinstance(expr, ast.Signature):
            raise problem("E211", f"`{spec.kind}` needs `in -> out` widths", expr.span)
        return (_dimension(to_sympy(expr.source, scope.env), expr.source, scope),
                _dimension(to_sympy(expr.target, scope.env), expr.target, scope))
    if isinstance(expr, ast.Signature):
        raise problem("E211", f"`{arg.name}` takes a value, not `in -> out`", expr.span)
    if arg.kind == "state":
        items = expr.items if isinstance(expr, ast.Tuple) else [expr]
        return tuple(_state_name(item, scope) for item in items)
    if arg.kind == "mode":
        return _mode(arg, expr, scope)
    if arg.kind == "enum" and isinstance(expr, ast.Name) and expr.id in arg.choices:
        return expr.id  # one of the argument's own words means that word, whatever else it names
    value = to_sympy(expr, scope.env)
    match arg.kind:
        case "dim":
            return _dimension(value, expr, scope)
        case "expr":
            return _not_negative(_number(value, expr, scope), expr, scope)
        case "bool":
            if value not in (sp.true, sp.false):
                raise problem("E211", f"`{arg.name}` takes true or false, not `{value}`", expr.span)
            return value == sp.true
        case "enum":
            return _enum(arg, _word(value, scope), expr, scope)
        case "dtype":
            return _dtype(_word(value, scope), expr, scope)
    raise AssertionError(arg.kind)


def _number(value, expr, scope: Scope) -> sp.Expr:
    if isinstance(value, sp.logic.boolalg.BooleanAtom):
        shown = "true" if value else "false"  # as the language writes them, not sympy's `True`
        raise scope.env.problem("E215", f"expected a number, got `{shown}`", expr.span)
    if value.is_number and abs(value) >= MAX_VALUE:
        raise scope.env.problem("E214", f"`{format_expr(expr)}` has more than 40 digits; no model size comes near",
                                expr.span)
    if request_degree(value) > MAX_REQUEST_DEGREE:
        raise scope.env.problem("E214", f"`{format_expr(expr)}` grows like a power above {MAX_REQUEST_DEGREE} of "
                                "the request sizes; costs here are low-degree polynomials in B, S, P, G", expr.span)
    return value


def _not_negative(value, expr, scope: Scope) -> sp.Expr:
    """Counts, rows, FLOPs, parameters and buffers are never negative; one that provably is, is refused here
    (one that is only for some requests is refused when evaluated there)."""
    if value.is_negative:
        raise scope.env.problem("E301", f"`{format_expr(expr)}` is negative; counts, rows, FLOPs and sizes are "
                                "zero or more", expr.span)
    return value


def request_degree(value: sp.Expr) -> int:
    """An upper bound on the degree of `value` in the request symbols, read off its tree in one walk."""
    if value in REQUEST_SYMBOLS:
        return 1
    if not value.free_symbols & REQUEST_SYMBOLS:
        return 0
    parts = [request_degree(arg) for arg in value.args]
    if isinstance(value, sp.Mul):
        return sum(parts)
    if isinstance(value, sp.Pow):
        exponent = value.exp
        return parts[0] * int(abs(exponent)) if exponent.is_number and exponent.is_finite else MAX_REQUEST_DEGREE + 1
    return max(parts, default=0)


def _dimension(value, expr, scope: Scope) -> sp.Expr:
    value = _number(value, expr, scope)
    if value.free_symbols & REQUEST_SYMBOLS:
        names = ", ".join(sorted(str(s) for s in value.free_symbols & REQUEST_SYMBOLS))
        raise scope.env.problem("E301", f"dimension `{format_expr(expr)}` depends on the request ({names}); "
                                "sizes of the architecture are fixed", expr.span)
    if value.is_number and not value > 0:
        raise scope.env.problem("E301", f"dimension `{format_expr(expr)}` is {value}; sizes must be positive",
                                expr.span)
    if value.is_number and not value.is_integer:
        raise scope.env.problem("E301", f"dimension `{format_expr(expr)}` is {value}; sizes and counts are "
                                "whole numbers", expr.span)
    return value


def _word(value, scope: Scope) -> str:
    """An enum word or format name: an unbound name, which is therefore not a dimension."""
    scope.env.first_use.pop(value, None)
    return value.name if isinstance(value, sp.Symbol) else str(value)


def _enum(arg: Arg, name: str, expr, scope: Scope) -> str:
    if name not in arg.choices:
        raise scope.env.problem("E211", f"`{arg.name}` is one of {', '.join(arg.choices)}, not `{name}`",
                                expr.span, hint=did_you_mean(name, arg.choices))
    return name


def _dtype(name: str, expr, scope: Scope):
    if name in scope.roles:
        scope.roles_read.add(name)
    fmt = scope.roles.get(name, name)
    if fmt not in scope.formats:
        raise scope.env.problem("E210", f"unknown number format or precision role `{name}`", expr.span,
                                hint=did_you_mean(name, [*scope.formats, *scope.roles]))
    return scope.formats[fmt]


def _mode(arg: Arg, expr, scope: Scope) -> tuple:
    """`causal`, `window(128)` or, where `sums` allows, `window(128) + top(512)`: a tuple of terms."""
    if isinstance(expr, ast.Name) and expr.id in arg.choices:
        return ((expr.id, ()),)
    value = to_sympy(expr, scope.env)
    parts = sp.Add.make_args(value) if arg.sums else (value,)
    return tuple(_term(arg, part, expr, scope) for part in parts)


def _term(arg: Arg, value, expr, scope: Scope) -> tuple:
    arities: dict[str, set[int]] = {}
    for choice in arg.choices:
        name, _, arity = choice.partition("/")
        arities.setdefault(name, set()).add(int(arity or 0))
    if isinstance(value, sp.Symbol):
        name, args = _word(value, scope), ()
    elif isinstance(value, sp.core.function.AppliedUndef):
        name, args = value.func.__name__, tuple(_dimension(a, expr, scope) for a in value.args)
    else:
        name, args = sp.sstr(value), ()
    if name not in arities or len(args) not in arities[name]:
        shown = ", ".join(c.replace("/1", "(n)").replace("/2", "(n, r)") for c in arg.choices)
        raise scope.env.problem("E211", f"`{arg.name}` is one of {shown}, not `{format_expr(expr)}`", expr.span,
                                hint=did_you_mean(name, arities))
    return (name, args)


def _state_name(expr, scope: Scope) -> str:
    if isinstance(expr, ast.Name) and expr.id in scope.tensors:
        return scope.tensors[expr.id].producer
    if isinstance(expr, ast.Name) and expr.id in scope.shared:
        return scope.shared[expr.id]
    raise scope.env.problem("E207", "`state` names a cache in this block, or a cache declared `shared`", expr.span,
                            hint=did_you_mean(getattr(expr, "id", ""), [*scope.tensors, *scope.shared]))
