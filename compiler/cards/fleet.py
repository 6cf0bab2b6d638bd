"""Layouts for a number of cards: which (TP, EP, PP, DP) hold a model at a context and batch, best first."""

from __future__ import annotations

import math
from collections.abc import Iterator

from pydantic import BaseModel

from archcost.dsl.errors import ArchError, Diagnostic

from ..front.hardware import Device, Link
from ..numbers.evaluate import state_bytes_at
from ..numbers.plain import PlainEvaluator
from ..terms.scenario import Scenario
from .card import stage_cost
from .degrees import SERVER, Layout, server_cards
from .figures import card_figures
from .layout import LayoutReport, Number, compute_format, layout_cards
from .pipeline import stage_keys
from .placement import placed, splits_evenly
from .state import state_on_card
from .symbolic import degrees_of
from .values import Symbolic


class LayoutCapacity(BaseModel):
    """What a layout's cards hold: B_max requests at a context, and the longest context a batch can reach."""

    layout: Layout
    device: str
    context: int
    batch: int
    batch_max: int             # requests of `context` positions, all replicas together
    context_max: int           # positions each of `batch` requests can reach (0: the weights alone do not fit)


def held_at(compiled, report, device: Device) -> LayoutCapacity:
    """What `archcost layout` reports under a layout on a device: its capacity at the call's own shape (the
    context its requests reach, S + P, and its batch B)."""
    shape = report.scenario
    return capacity_on(compiled, report.layout, device, shape.S + shape.P, shape.B)


def capacity_on(compiled, layout: Layout, device: Device, context: int, batch: int,
                workspace: int = 0) -> LayoutCapacity:
    """B_max and the longest context on a layout: every pipeline position's card must hold its weights, its
    replica's state and the workspace (the longest context searched on the exact state formula: windows and
    fixed state too)."""
    degrees = degrees_of(compiled, layout)
    return _capacity(compiled, layout, degrees, device, context, batch, workspace)


def _capacity(compiled, layout: Layout, degrees, device: Device, context: int, batch: int,
              workspace: int, weights: list | None = None) -> LayoutCapacity:
    """`weights`: each stage's card's weight bytes where a report of the layout already has them."""
    weights, states = _stage_memory(compiled, degrees, stage_keys(placed(compiled, degrees), layout.pp), weights)
    room = [device.memory - workspace - w for w in weights]
    per_request = [state(1, context) for state in states]
    fits_batch = [int(r // s) if s > 0 else (10**12 if r >= 0 else 0) for r, s in zip(room, per_request)]
    replica = -(-batch // layout.dp)
    fits = lambda h: all(state(replica, h) <= r for state, r in zip(states, room))  # noqa: E731
    guess = min((_linear_reach(state, replica, context, r) for state, r in zip(states, room)), default=LONGEST)
    return LayoutCapacity(layout=layout, device=device.name, context=context, batch=batch,
                          batch_max=max(0, min(fits_batch)) * layout.dp,
                          context_max=_longest(fits, guess) if min(room) >= 0 else 0)


LONGEST = 2**31  # the longest context a capacity reports


def _linear_reach(state, requests: int, context: int, room) -> int:
    """Where the state would reach `room` were it a straight line through its values at 1 and `context`
    positions: the first guess of _longest, exact for a model whose state grows by the same bytes a position."""
    first, last = state(requests, 1), state(requests, context)
    if context <= 1 or last <= first:
        return LONGEST
    return int(1 + (room - first) * (context - 1) // (last - first))


def _longest(fits, guess: int) -> int:
    """The largest h in [0, LONGEST] for which fits(h) (true up to some h, false beyond), 0 where none: from a
    guess, in steps doubling away from it until the answer is bracketed, then halving (a straight-line state's
    guess is the answer, found in two or three calls where a bisection of the whole range takes 31)."""
    guess = min(max(guess, 0), LONGEST)
    step = 1
    if fits(guess):
        low = guess
        while low < LONGEST:
            high = min(low + step, LONGEST)
            if not fits(high):
                break
            low, step = high, step * 2
        else:
            return LONGEST
    else:
        high = guess
        while True:
            low = max(high - step, 0)
            if low == 0 and not fits(0):
                return 0
            if fits(low):
                break
            high, step = low, step * 2
    while high - low > 1:
        middle = (low + high) // 2
        low, high = (middle, high) if fits(middle) else (low, middle)
    return low


def heaviest_card(compiled, layout: Layout):
    """(the weight bytes of the card that holds most, its state as a function of (requests, positions each))."""
    degrees = degrees_of(compiled, layout)
    weights, states = _stage_memory(compiled, degrees, stage_keys(placed(compiled, degrees), layout.pp))
    index = max(range(len(weights)), key=lambda i: weights[i])
    return weights[index], states[index]


def _stage_memory(compiled, degrees, stages, weights: list | None = None) -> tuple[list, list]:
    """Each stage's card: its weight bytes (`weights`, where given, as a report of the layout found them), and
    its state as a function of (requests, positions each); from each op's numbers (figures.py), or from the
    symbolic card where a share is not a number."""
    placement = placed(compiled, degrees)
    try:
        if weights is None:
            weights = [card_figures(compiled, placement, degrees, stage, "decode", Scenario(), ("weight_bytes",))
                       ["weight_bytes"] for stage in stages]
        return weights, [state_on_card(compiled, placement, degrees, stage) for stage in stages]
    except Symbolic:
        costs = [stage_cost(compiled, degrees, stage) for stage in stages]
        weights = [PlainEvaluator(compiled, "decode", Scenario())(c.weight_bytes, "weight_bytes") for c in costs]
        return weights, [lambda requests, positions, c=c: state_bytes_at(compiled, positions, requests, c.state_bytes)
                         for c in costs]


class Fit(BaseModel):
    """One layout of `cards` cards at a context and batch: per-card memory and the decode step's bounds."""

    layout: Layout
    weight_bytes: Number       # on the most loaded card (a float where a spec's sizes make a fraction)
    state_bytes: Number        # on the most loaded card, for its replica's requests at the context
    workspace: int
    free_bytes: int            # device memory left (negative: does not fit)
    fits: bool
    batch_max: int             # requests all replicas hold at the context (B_max)
    context_max: int           # positions each request of the batch can reach
    step_no_overlap: float     # one decode step's lower bound without overlap (seconds)
    step_full_overlap: float
    step_expected: float | None = None   # compiler/timing, where the device has kernel measurements


def layouts(cards: int, experts: bool, node: int = SERVER) -> Iterator[Layout]:
    """Every (TP, EP, PP, DP) with TP·PP·DP = cards, EP dividing TP·DP (EP = 1 for a model without experts), on
    servers of `node` cards (server_cards: the device's)."""
    for tp in _divisors(cards):
        for pp in _divisors(cards // tp):
            dp = cards // (tp * pp)
            for ep in (_divisors(tp * dp) if experts else (1,)):
                yield Layout(tp=tp, ep=ep, pp=pp, dp=dp, node=node)


def _divisors(n: int) -> list[int]:
    """The divisors of n in increasing order, found up to √n (a search of 4,096 cards asks 105 times)."""
    small = [d for d in range(1, math.isqrt(n) + 1) if n % d == 0]
    return small + [n // d for d in reversed(small) if d * d != n]


def fit(compiled, layout: Layout, device: Device, link: Link, context: int, batch: int, workspace: int = 0,
        compute: str | None = None, table=None) -> Fit:
    report = layout_cards(compiled, layout, "decode", Scenario(B=batch, S=context - 1, P=1), device, link, compute,
                          table=table)
    card = report.busiest
    free = int(device.memory - card.memory - workspace)
    held = _capacity(compiled, layout, report.degrees, device, context, batch, workspace,
                     [each.weight_bytes for each in report.cards])
    return Fit(layout=layout, weight_bytes=card.weight_bytes, state_bytes=card.state_bytes, workspace=workspace,
               free_bytes=free, fits=free >= 0, batch_max=held.batch_max, context_max=held.context_max,
               step_no_overlap=report.times.no_overlap, step_full_overlap=report.times.full_overlap,
               step_expected=report.times.expected)


def ranked(compiled, cards: int, device: Device, link: Link, context: int, batch: int,
           workspace: int = 0, compute: str | None = None, table=None, top: int | None = None) -> list[Fit]:
    """Every layout of `cards` cards, those that fit first, then by the decode step's bound; with `top`, the
    first `top` of them, the same rows, found by the screen (screen.py) and evaluated exactly."""
    experts = any(data["op"].shard[0] == "ep" for _, data in compiled.graph.nodes(data=True))
    candidates = list(layouts(cards, experts, server_cards(device)))
    if top is not None and top < len(candidates):
        found = _screened(compiled, candidates, device, link, context, batch, workspace, compute, table, top)
        if found is not None:
            return found
    return _every(compiled, candidates, cards, device, link, context, batch, workspace, compute, table)[:top]


def _key(fit: Fit) -> tuple:
    return (not fit.fits, fit.step_no_overlap, fit.layout.pp, -fit.layout.ep)


def _screened(compiled, candidates: list[Layout], device: Device, link: Link, context: int, batch: int,
              workspace: int, compute: str | None, table, top: int) -> list[Fit] | None:
    """The first `top` layouts: every layout's key from the screen, then exactly `fit` those at or near the
    `top`-th (within the screen's rounding) and those whose card fits by less than a byte's rounding; None
    (search exactly) where the screen cannot cost the model or an exact key differs from its screened one."""
    import numpy as np  # the search's own import: `layout` and the serving model never load numpy

    from ..numbers.arrays import NotAnArray
    from .screen import TOLERANCE, Unscreened, screen

    peak = device.peak_for(compute or compute_format(compiled, device))
    try:
        with np.errstate(all="ignore"):
            refused, free, step = screen(compiled, candidates, device, link, context, batch, workspace, peak)
    except (Unscreened, NotAnArray, Symbolic, TypeError, ValueError, ZeroDivisionError, OverflowError):
        return None  # a form the screen cannot evaluate (a letter left, a size not a number): the exact search
    kept = [i for i in range(len(candidates)) if not refused[i]]
    if not kept:
        return None  # the exact search says why no layout splits the model
    order = sorted(kept, key=lambda i: (free[i] < 0, step[i], candidates[i].pp, -candidates[i].ep))
    nth = order[min(top, len(order)) - 1]
    margin = 1 + 1e3 * TOLERANCE
    unsure = {i for i in kept if abs(free[i]) <= 1 + TOLERANCE * device.memory}
    near = {i for i in kept if (free[i] >= 0) > (free[nth] >= 0)
            or ((free[i] >= 0) == (free[nth] >= 0) and step[i] <= step[nth] * margin)}
    found = []
    for i in sorted(near | unsure):
        try:
            exact = fit(compiled, candidates[i], device, link, context, batch, workspace, compute, table)
        except ArchError:
            return None  # the screen let through a layout the placement refuses
        if (i not in unsure and exact.fits != (free[i] >= 0)) or \
                abs(exact.step_no_overlap - step[i]) > TOLERANCE * max(exact.step_no_overlap, 1e-30):
            return None
        found.append(exact)
    return sorted(found, key=_key)[:top]


def _every(compiled, candidates: list[Layout], cards: int, device: Device, link: Link, context: int, batch: int,
           workspace: int, compute: str | None, table) -> list[Fit]:
    """Every layout of the search, each evaluated exactly."""
    found = []
    for layout in candidates:
        try:
            if not splits_evenly(compiled, degrees_of(compiled, layout)):
                continue  # heads or experts split unevenly (E405), found without writing its diagnostic
            found.append(fit(compiled, layout, device, link, context, batch, workspace, compute, table))
        except ArchError as refused:
            if refused.codes != ["E405"] * len(refused.codes):
                raise
            continue  # a layout that splits heads or experts unevenly: no card layout makes it
    if not found:
        raise ArchError([Diagnostic(code="E414", message=f"no layout of {cards} cards splits this model's heads "
                                                         "and experts evenly")])
    return sorted(found, key=_key)


def fewest_cards(compiled, device: Device, link: Link, context: int, batch: int, workspace: int = 0,
                 most: int = 1024) -> tuple[int, Fit]:
    """The fewest cards (powers of two up to `most`) of which some layout holds the model at context and batch."""
    cards = 1
    while cards <= most:
        try:
            best = ranked(compiled, cards, device, link, context, batch, workspace, top=1)[0]
        except ArchError:
            best = None  # no even layout of this many cards
        if best is not None and best.fits:
            return cards, best
        cards *= 2
    raise ArchError([Diagnostic(code="E414", message=f"no layout of up to {most} × {device.name} holds this model "
                                                     f"at context {context:,} and batch {batch:,}",
                                hint="a shorter context, a smaller batch, fewer bytes a weight (`--weights`) or a "
                                     "device with more memory")])


def plot(fits: list[Fit], device: Device, path: str) -> None:
    """Per-card memory by class (weights, state, workspace) for each layout, the device's memory as a line."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = [f"TP{f.layout.tp} EP{f.layout.ep} PP{f.layout.pp} DP{f.layout.dp}" for f in fits]
    weights = [f.weight_bytes / 1e9 for f in fits]
    state = [f.state_bytes / 1e9 for f in fits]
    work = [f.workspace / 1e9 for f in fits]
    figure, axes = plt.subplots(figsize=(max(6, len(fits) * 0.6), 4))
    axes.bar(names, weights, label="weights")
    axes.bar(names, state, bottom=weights, label="state")
    axes.bar(names, work, bottom=[w + s for w, s in zip(weights, state)], label="workspace")
    axes.axhline(device.memory / 1e9, color="black", linewidth=1, label=f"{device.name} memory")
    axes.set_ylabel("GB per card")
    axes.tick_params(axis="x", rotation=60)
    axes.legend()
    figure.tight_layout()
    figure.savefig(path, metadata={"Software": None} if path.endswith(".png") else None)
    plt.close(figure)


__all__ = ["Fit", "LayoutCapacity", "LayoutReport", "capacity_on", "fewest_cards", "fit", "layouts", "plot", "ranked"]
