"""What a command keeps in the formula cache for the next run on the same sources and flags."""

from __future__ import annotations

from ..numbers import cache
from .common import cache_key, caching


def remember(args, compiled, phase: str) -> None:
    """Keep the phase's forms for the next run on the same sources and flags."""
    if caching(args):
        cache.remember(cache_key(args.spec, args), compiled, [phase])


def remember_views(args, views: list) -> None:
    """Keep what `compare` read of each model."""
    for path, view in zip(args.specs, views, strict=True):
        remember_view(path, args, view)


def remember_view(path: str, args, view) -> None:
    """Keep what a command read of a compiled model: the phases it evaluated, its architecture facts, M(H)."""
    if not caching(args):
        return
    from ..serving.views import state_form

    extras = {"facts": view.facts}
    state = state_form(view.compiled)
    if state is not None:
        extras["state_at"] = state
    cache.remember(cache_key(path, args), view.compiled, sorted(view.phases), name=view.model_name, extras=extras,
                   reads=view.reads)
