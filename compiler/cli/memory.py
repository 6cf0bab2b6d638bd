"""What a command keeps in the formula cache for the next run on the same sources and flags."""

from __future__ import annotations

from ..numbers import cache as warm


def remember(args, compiled, phase: str) -> None:
    """Keep the phase's forms for the next run on the same sources and flags."""
    if not warm.enabled(args):
        return
    from ..numbers.evaluate import head
    from ..numbers.leaves import phase_forms

    forms = phase_forms(compiled, phase)
    if forms is not None and compiled.program is not None:
        warm.store(args.spec, args, head(compiled), list(compiled.program.modules), {phase: forms})


def remember_views(args, views: list) -> None:
    """Keep what `compare` read of each model."""
    for path, view in zip(args.specs, views, strict=True):
        remember_view(path, args, view)


def remember_view(path: str, args, view) -> None:
    """Keep what a command read of a compiled model: the phases it evaluated, its architecture facts, M(H)."""
    if not warm.enabled(args):
        return
    from ..numbers.evaluate import head
    from ..numbers.leaves import phase_forms
    from ..serving.views import state_form

    compiled = view.compiled
    phases = {phase: phase_forms(compiled, phase) for phase in sorted(view.phases)}
    if compiled.program is None or any(forms is None for forms in phases.values()):
        return
    extras = {"facts": view.facts}
    state = state_form(compiled)
    if state is not None:
        extras["state_at"] = state
    warm.store(path, args, {**head(compiled), "model": view.model_name}, list(compiled.program.modules), phases,
               extras)
