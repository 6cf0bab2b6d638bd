"""Hardware sheets (`device` definitions of stdlib/hardware.arch) as values."""

from __future__ import annotations


from pydantic import BaseModel

from archcost.dsl import ast
from archcost.dsl.errors import ArchError, Diagnostic, did_you_mean
from archcost.dsl.loader import load_text

from .expr import Env, Problem, to_sympy


class Device(BaseModel):
    name: str
    memory: float                 # bytes
    bandwidth: float              # bytes per second
    peak: dict[str, float]        # FLOPS per number format

    def ridge(self, fmt: str) -> float:
        """FLOPs per byte at which compute and memory take the same time (the roofline's knee)."""
        return self.peak_for(fmt) / self.bandwidth

    def peak_for(self, fmt: str) -> float:
        if fmt not in self.peak:
            raise ArchError([Diagnostic(code="E401", message=f"the `{self.name}` sheet gives no peak for `{fmt}`",
                                        hint=f"it gives: {', '.join(self.peak)}")])
        return self.peak[fmt]


def devices() -> dict[str, Device]:
    """Every device of the stdlib's hardware sheets, by name (`rtx_4090`)."""
    program = load_text("use std.hardware\n")
    found: dict[str, Device] = {}
    for module in program.modules.values():
        for definition in module.devices:
            found[definition.name] = _device(definition, program.sources)
    return found


def device(name: str) -> Device:
    """A device by its CLI name: `rtx-4090` or `rtx_4090`."""
    known = devices()
    key = name.replace("-", "_")
    if key not in known:
        shown = [k.replace("_", "-") for k in known]
        raise ArchError([Diagnostic(code="E401", message=f"unknown device `{name}`",
                                    hint=did_you_mean(name, shown) or f"one of {', '.join(shown)}")])
    return known[key]


def _device(definition: ast.DeviceDef, sources) -> Device:
    def problem(code, message, span, hint=None):
        return Problem(sources.diagnostic(code, message, span, hint))

    env = Env({}, problem, {})
    values = {a.name: float(to_sympy(a.value, env)) for a in definition.args if isinstance(a, ast.Keyword)}
    return Device(name=definition.name, memory=values.pop("memory"), bandwidth=values.pop("bandwidth"),
                  peak=values)



