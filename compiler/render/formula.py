"""Closed forms of M, F, R as text or LaTeX, grouped the way the chapter writes them."""

from __future__ import annotations

import sympy as sp

from ..compilation import Compiled
from ..graph import costs
from ..terms.quantities import COMPONENTS, FIELDS, LEVELS
from ..terms.scenario import at_phase


def _fields_of(letter: str) -> tuple[tuple[str, str], ...]:
    return tuple((f.name, f.meaning) for f in FIELDS.values() if f.letter == letter)


QUANTITIES: dict[str, tuple[tuple[str, str], ...]] = {letter: _fields_of(letter) for letter in "MFR"}

LEGEND = {
    "call": "m = B·P rows, m_out = rows through the head, N_pair = B(P·S + P(P+1)/2), "
            "N_rect = B·P·(S+P), H = S + P",
    "prefill": "B requests, S cached positions, P new tokens each",
    "decode": "B requests, S cached positions, one new token each",
    "request": "prefill of P tokens after S cached, then G − 1 decodes",
}


def formulas(compiled: Compiled, quantity: str, phase: str = "call") -> list[tuple[str, str, sp.Expr]]:
    """(name, description, expression) for each field of M, F or R."""
    rows = []
    for field, description in QUANTITIES[quantity]:
        if phase == "call":
            expr = costs.grouped(compiled.graph, field)
        else:
            expr = sp.factor_terms(sp.expand(at_phase(compiled.total(field), phase, compiled.conventions,
                                                      field in LEVELS)))
        rows.append((field, description, expr))
    return rows


def by_component(compiled: Compiled, field: str) -> list[tuple[str, sp.Expr]]:
    groups = costs.by(compiled.graph, field, costs.component_of, COMPONENTS)
    return [(name, sp.expand(expr)) for name, expr in groups.items() if expr != 0]


def show(expr: sp.Expr, latex: bool = False) -> str:
    if latex:
        return sp.latex(expr, order="none", mul_symbol="dot")
    return sp.sstr(expr, order="none")


def render(compiled: Compiled, quantities: list[str], phase: str, latex: bool = False) -> str:
    lines = [f"{compiled.name}: closed forms, phase `{phase}` ({LEGEND[phase]})",
             f"options: {_options(compiled)}", ""]
    for quantity in quantities:
        lines.append(f"{quantity}:")
        for field, description, expr in formulas(compiled, quantity, phase):
            total = f" = {show(sp.Integer(expr.doit()) if expr.doit().is_Integer else expr.doit(), latex)}" \
                if expr.is_number and not expr.is_Atom else ""
            lines.append(f"  {field} = {show(expr, latex)}{total}")
            lines.append(f"      # {description}")
        if quantity == "M":
            lines += _state_line(compiled, latex)
        if phase == "call" and quantity in ("M", "F"):
            field = "params" if quantity == "M" else "flops_matrix"
            lines.append(f"  {field} by component:")
            for name, expr in by_component(compiled, field):
                lines.append(f"    {name:<17} {show(expr, latex)}")
        lines.append("")
    return "\n".join(lines).rstrip() + "\n"


def latex(compiled: Compiled, quantities: list[str], phase: str) -> str:
    """The closed forms as one LaTeX `align*` environment (a notebook renders it with MathJax)."""
    rows = [_latex_name(field) + " &= " + show(expr, latex=True)
            for quantity in quantities for field, _, expr in formulas(compiled, quantity, phase)]
    return "\\begin{align*}\n" + " \\\\\n".join(rows) + "\n\\end{align*}"


def _latex_name(field: str) -> str:
    return "\\mathrm{" + field.replace("_", "\\_") + "}"


def markdown(compiled: Compiled, quantities: list[str], phase: str) -> str:
    """The closed forms as Markdown: a heading per quantity, each formula in display math."""
    lines = [f"**{compiled.name}**: closed forms, phase `{phase}` ({LEGEND[phase]})", ""]
    for quantity in quantities:
        lines += [f"*{quantity}*", ""]
        for field, description, expr in formulas(compiled, quantity, phase):
            lines += [f"- `{field}`: {description}", "", f"  $$ {show(expr, latex=True)} $$", ""]
    return "\n".join(lines).rstrip() + "\n"


def _state_line(compiled: Compiled, latex: bool) -> list[str]:
    """§2.3.5's M_state(H) = M_fixed + c_state·H for one request, with both constants in units."""
    fixed, growth = compiled.total("state_fixed"), compiled.total("kv_bytes_per_token")
    H = sp.Symbol("H", positive=True, integer=True)
    linear = sp.Add(fixed, sp.Mul(growth, H, evaluate=False), evaluate=False) if fixed else growth * H
    numbers = _is_number(fixed) and _is_number(growth)  # a size the spec left as a letter stays one
    return [f"  state(H) = M_fixed + c_state·H = {show(linear, latex)}",
            f"      # one request: M_fixed = {_mib(fixed, latex)}, c_state = {show(growth, latex)} B per position"
            + (f", crossover H* = M_fixed / c_state = {float(fixed / growth):,.0f}"
               if numbers and fixed and growth else "")]


def _mib(value, latex: bool) -> str:
    return f"{float(value) / 2**20:,.3f} MiB" if _is_number(value) else f"{show(value, latex)} B"


def _is_number(value) -> bool:
    return isinstance(value, int | float) or bool(getattr(value, "is_number", False))


def _options(compiled: Compiled) -> str:
    return ", ".join(f"{k} = {v}" for k, v in compiled.options_named().items())
