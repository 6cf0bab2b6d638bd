"""The SLO search (`archcost layouts SPEC --devices N×D --isl --osl --ttft --tpot`): of the layouts of N cards
and the batches each replica can run, those whose steady state (throughput.py) meets both the time to first
token and the time per output token, ranked by output tokens a second per card (goodput, as DistServe, Zhong
et al. 2024, defines it: the rate served within the targets).

A layout's cards serve alike whatever the number of its data-parallel replicas beyond the smallest group its
experts need, so each (TP, EP, PP) is costed once, on its smallest replica, and printed over all N cards. For
each, the largest batch that meets both targets is found by regula falsi (TTFT and TPOT grow with the batch,
the tokens a card yields too), after the batch the engine reaches bounds what the layout can give: a layout
whose bound falls below the ranking's last printed row is not searched further.

With `disaggregated`, prompts and decodes run on layouts of their own: the decode side's largest batch that
meets TPOT, the prefill side's most prompts a step that meet TTFT with the hand-off of their state, and a card of
the whole deployment yields 1 / (1/d + 1/p) requests a second (d, p each side's own per card)."""

from __future__ import annotations

import math
from collections.abc import Callable

from pydantic import BaseModel

from archcost.dsl.errors import ArchError

from ..cards.degrees import SERVER, Layout, server_cards
from ..cards.fleet import layouts
from ..cards.placement import splits_evenly
from ..cards.symbolic import degrees_of
from ..terms.scenario import Scenario
from .split import Disaggregated, Side, decode_side, disaggregated, prefill_side
from .steady import Point, Serving, batch_limit, point_at, refused, room_of


class Choice(BaseModel):
    """One layout and batch that meets both targets."""

    layout: str                # over all the cards
    replica: Layout            # the smallest group of cards that serves alike
    batch: int                 # requests a replica runs
    concurrency: int           # requests in flight on all the cards
    binds: str                 # what stops a larger batch: the TPOT or TTFT target, or the engine's limit
    ttft_seconds: float
    tpot_seconds: float
    output_tokens_per_second: float
    output_tokens_per_second_per_card: float


class SloSearch(BaseModel):
    model: str
    device: str
    link: str
    engine: str
    cards: int
    isl: int
    osl: int
    ttft_target: float
    tpot_target: float
    layouts_searched: int      # (TP, EP, PP) replicas costed
    points: int                # steady states evaluated
    choices: list[Choice]      # best first
    split: Disaggregated | None = None


def replicas(cards: int, experts: bool, node: int = SERVER) -> list[tuple[Layout, Layout]]:
    """(the layout over all cards, its smallest replica: the fewest data-parallel copies its EP group spans) for
    every (TP, EP, PP) of `cards` cards on servers of `node` cards, each once."""
    found: dict[tuple[int, int, int], tuple[Layout, Layout]] = {}
    for whole in layouts(cards, experts, node):
        smallest = whole.ep // math.gcd(whole.ep, whole.tp)
        key = (whole.tp, whole.ep, whole.pp)
        if key not in found:
            found[key] = (whole, Layout(tp=whole.tp, ep=whole.ep, pp=whole.pp, dp=smallest, node=node))
    return list(found.values())


def search(serving: Serving, cards: int, ttft: float, tpot: float, top: int = 10,
           split: bool = False) -> SloSearch:
    compiled = serving.compiled
    experts = any(data["op"].shard[0] == "ep" for _, data in compiled.graph.nodes(data=True))
    candidates = _servable(serving, replicas(cards, experts, server_cards(serving.device)))
    if not candidates:
        raise refused(f"no layout of {cards:,} × {serving.device.name} holds one request of "
                      f"{serving.isl + serving.osl:,} positions under {serving.engine.name}'s KV budget",
                      "give more cards, shorter --isl / --osl, or a smaller --weights / --kv format")
    counter = [0]

    def at(layout: Layout, batch: int, first_token: bool = True) -> Point:
        counter[0] += 1
        return point_at(serving, layout, batch, first_token)

    choices = _colocated(serving, candidates, ttft, tpot, top, at)
    best_split = _split(serving, candidates, ttft, tpot, at) if split else None
    if not choices and best_split is None:
        raise _unmet(serving, candidates, ttft, tpot, at, split)
    return SloSearch(model=compiled.name, device=serving.device.name, link=serving.link.name,
                     engine=serving.engine.name, cards=cards, isl=serving.isl, osl=serving.osl, ttft_target=ttft,
                     tpot_target=tpot, layouts_searched=len(candidates), points=counter[0], choices=choices,
                     split=best_split)


def _servable(serving: Serving, found: list[tuple[Layout, Layout]]) -> list[tuple[Layout, Layout, int, str]]:
    """(whole, replica, its largest batch, what binds it) of the layouts that split the model evenly and keep one
    request's KV cache."""
    kept = []
    for whole, replica in found:
        try:
            if not splits_evenly(serving.compiled, degrees_of(serving.compiled, replica)):
                continue  # heads or experts split unevenly (E405), found without writing its diagnostic
            room = room_of(serving, replica)
            batch, binds = batch_limit(serving, replica, room, None)
        except ArchError as error:
            if set(error.codes) <= {"E405", "E413"}:
                continue  # heads or experts split unevenly, or no KV room: no engine runs it
            raise
        kept.append((whole, replica, batch, binds))
    return kept


def _excess(point: Point, ttft: float, tpot: float) -> float:
    """How far a point is from both targets: at most 1 when it meets them."""
    return max(point.ttft / ttft, point.tpot / tpot)


def _meets(point: Point, ttft: float, tpot: float) -> bool:
    return _excess(point, ttft, tpot) <= 1


def _colocated(serving: Serving, candidates, ttft: float, tpot: float, top: int,
               at: Callable[[Layout, int], Point]) -> list[Choice]:
    """Each layout's largest batch within both targets, best per card first; a layout whose largest batch
    yields less a card than the ranking's last row is passed over."""
    bounded = sorted(((ceiling(serving, replica, most), whole, replica, most, binds)
                      for whole, replica, most, binds in candidates), key=lambda row: -row[0])
    ranked: list[Choice] = []
    for most_per_card, whole, replica, most, binds in bounded:
        if len(ranked) >= top and most_per_card <= ranked[-1].output_tokens_per_second_per_card:
            break
        point = at(replica, most)
        if not _meets(point, ttft, tpot):
            point, binds = _within(replica, most, point, ttft, tpot, at)
            if point is None:
                continue
        ranked.append(_choice(whole, replica, point, binds))
        ranked.sort(key=lambda c: (-c.output_tokens_per_second_per_card, c.layout))
        del ranked[top:]
    return ranked


def _within(replica: Layout, most: int, top: Point, ttft: float, tpot: float,
            at: Callable[..., Point]) -> tuple[Point | None, str]:
    """The largest batch of a layout within both targets and what stops a larger one (None when one request
    misses them): sized by TPOT on steps alone, then by both where the first token is late there."""
    first = at(replica, 1)
    if not _meets(first, ttft, tpot):
        return None, ""
    batch = most
    if top.tpot > tpot:
        def slow(size: int) -> float:
            return at(replica, size, first_token=False).tpot / tpot

        batch = _largest(slow, 1, most, first.tpot / tpot, top.tpot / tpot)
    point, binds = at(replica, batch), "TPOT target"
    if point.ttft > ttft:
        def late(size: int) -> float:
            return _excess(at(replica, size), ttft, tpot)

        point, binds = at(replica, _largest(late, 1, batch, _excess(first, ttft, tpot), _excess(point, ttft, tpot))), \
            "TTFT target"
    return point, binds


def ceiling(serving: Serving, replica: Layout, batch: int) -> float:
    """Output tokens a second a card that no batch up to `batch` exceeds: the batch over its decode call's bound
    (a step is at least its decode call, an expected time at least its bound)."""
    from ..cards.layout import layout_cards

    times = layout_cards(serving.compiled, replica, "decode",
                         Scenario(B=batch * replica.dp, S=serving.isl + serving.osl // 2), serving.device,
                         serving.link, serving.compute, serving.network).times
    return batch * replica.dp * serving.tokens_per_step / times.full_overlap / replica.cards


def _largest(excess: Callable[[int], float], low: int, high: int, at_low: float, at_high: float) -> int:
    """The largest integer in [low, high) where `excess` (rising with it) is at most 1, given it is at `low`
    and is not at `high`: the Illinois variant of regula falsi on the two ends (TTFT and TPOT rise about
    linearly with the batch, so its guesses land close), each guess kept strictly between them."""
    side = 0
    while high - low > 1:
        share = (1 - at_low) / (at_high - at_low) if at_high > at_low else 0.5
        guess = min(high - 1, max(low + 1, low + round(share * (high - low))))
        value = excess(guess)
        if value <= 1:
            low, at_low = guess, value
            if side == -1:  # the same end moved twice: halve the other's pull (Illinois)
                at_high = 1 + (at_high - 1) / 2
            side = -1
        else:
            high, at_high = guess, value
            if side == 1:
                at_low = 1 - (1 - at_low) / 2
            side = 1
    return low


def _top_within(excess: Callable[[int], float], most: int) -> int | None:
    """The largest of 1 … `most` where `excess` is at most 1 (None when 1 already exceeds it), each end asked once."""
    at_one, at_most = excess(1), excess(most)
    if at_one > 1:
        return None
    return most if at_most <= 1 else _largest(excess, 1, most, at_one, at_most)


def _choice(whole: Layout, replica: Layout, point: Point, binds: str) -> Choice:
    per_card = point.tokens_per_second / replica.cards
    return Choice(layout=whole.text(), replica=replica, batch=point.batch,
                  concurrency=point.batch * whole.dp, binds=binds, ttft_seconds=point.ttft, tpot_seconds=point.tpot,
                  output_tokens_per_second=per_card * whole.cards, output_tokens_per_second_per_card=per_card)


def _split(serving: Serving, candidates, ttft: float, tpot: float,
           at: Callable[[Layout, int], Point]) -> Disaggregated | None:
    """The best decode layout within TPOT and the best prefill layout within TTFT, joined."""
    best_decode: Side | None = None
    for _, replica, _, _ in candidates:
        most = min(room_of(serving, replica).kv_max, serving.engine.max_batch,
                   serving.engine.max_num_tokens // (1 + serving.mtp))

        def slow(batch: int, layout: Layout = replica) -> float:
            return decode_side(serving, layout, batch).step_seconds / serving.tokens_per_step / tpot

        batch = _top_within(slow, most) if most >= 1 else None
        if batch is None:
            continue
        side = decode_side(serving, replica, batch)
        if best_decode is None or side.requests_per_second_per_card > best_decode.requests_per_second_per_card:
            best_decode = side
    best_prefill: tuple[Side, float] | None = None
    packed = max(1, serving.engine.max_num_tokens // serving.isl)
    for _, replica, _, _ in candidates:
        def late(prompts: int, layout: Layout = replica) -> float:
            side, transfer = prefill_side(serving, layout, prompts)
            return (side.step_seconds + transfer) / ttft

        prompts = _top_within(late, packed)
        if prompts is None:
            continue
        side, transfer = prefill_side(serving, replica, prompts)
        if best_prefill is None or side.requests_per_second_per_card > best_prefill[0].requests_per_second_per_card:
            best_prefill = (side, transfer)
    if best_decode is None or best_prefill is None:
        return None
    return disaggregated(serving, best_prefill[0], best_prefill[1], best_decode)


def _unmet(serving: Serving, candidates, ttft: float, tpot: float, at, split: bool) -> ArchError:
    """E413 naming the nearest choice: the layout whose single request comes closest to both targets."""
    points = [(at(replica, 1), whole) for whole, replica, _, _ in candidates]
    point, whole = min(points, key=lambda p: max(p[0].ttft / ttft, p[0].tpot / tpot))
    side = " on either side of a disaggregated deployment" if split else ""
    return refused(f"no layout of {whole.cards:,} × {serving.device.name} meets TTFT ≤ {ttft * 1e3:,.1f} ms and "
                   f"TPOT ≤ {tpot * 1e3:,.2f} ms{side}: the nearest, {whole.text()} with one request a replica, "
                   f"gives TTFT {point.ttft * 1e3:,.1f} ms and TPOT {point.tpot * 1e3:,.2f} ms",
                   f"loosen the targets to --ttft {_ceil3(max(point.ttft, ttft))} --tpot "
                   f"{_ceil3(max(point.tpot, tpot), 5)}, or give faster cards")


def _ceil3(seconds: float, digits: int = 3) -> str:
    step = 10 ** -digits
    return f"{math.ceil(seconds / step) * step:.{digits}f}"
