"""The steady state of continuous batching with chunked prefill (`archcost throughput`): how many requests an
engine runs at once on a layout, and the time to first token, the time per output token and the tokens per
second that follow, from the expected times of the layout's calls.

The batch B a replica runs is the smallest of: the concurrency asked for, the engine's cap, the requests whose
KV cache (ISL + OSL positions, in whole pages) fits the budget the engine gives it, and the requests the step's
token budget can keep fed; steady.py times its step. Closed form, no queue. A request rate instead of a
concurrency keeps the concurrency Little's law gives (C = rate · (TTFT + (OSL − 1) · TPOT), Little 1961), found
by bisection since both times grow with C.

Disaggregated serving, the same steady state split over two layouts, is split.py's."""

from __future__ import annotations

from pydantic import BaseModel

from .engines import Engine
from .steady import STATELESS, Point, Serving, batch_limit, drafter_ready, point_at, refused, room_of


class Throughput(BaseModel):
    model: str
    layout: str
    cards: int
    device: str
    link: str
    engine: str
    engine_source: str
    overlap: bool = False          # the engine's overlap scheduler: its TTFT waits one step more to be admitted
    isl: int
    osl: int
    cached_fraction: float
    concurrency: int | None
    request_rate: float | None = None  # requests a second asked for (the concurrency is then what it keeps)
    batch: int                     # requests one replica runs at once
    batch_limit: str               # concurrency | request rate | engine cap | KV cache | step tokens
    kv_requests_max: int | None    # requests one replica's KV budget holds at ISL + OSL (None: it keeps no state)
    kv_budget_bytes: float         # per card
    prefill_tokens_per_step: float
    mtp: int = 0                   # drafted tokens a step (0: none)
    acceptance: float | None = None
    tokens_per_step: float = 1.0   # output tokens a request gains a step
    step_seconds: float            # expected
    step_bound_seconds: float
    ttft_seconds: float
    tpot_seconds: float
    output_tokens_per_second: float
    output_tokens_per_second_per_card: float
    requests_per_second: float
    price_per_hour: float | None = None
    cost_per_million_output_tokens: float | None = None
    efficiency_table: str | None = None
    times: dict[str, float] = {}

def no_table(device):
    return refused(f"no kernel measurements for `{device.name}`: a throughput needs expected times",
                   "give --efficiency-table, or a device stdlib/efficiency covers (h100-sxm, h200, b200, a100)")


def throughput(compiled, layout, device, link, network, engine: Engine, isl: int, osl: int,
               concurrency: int | None = None, cached_fraction: float = 0.0, price_per_hour: float | None = None,
               table=None, compute: str | None = None, request_rate: float | None = None, mtp: int = 0,
               acceptance: float = 0.0) -> Throughput:
    """The steady state of a layout under an engine, from its parts (served() takes them as one Serving)."""
    if table is None:
        raise no_table(device)
    return served(Serving(compiled, device, link, network, engine, table, compute, isl, osl, cached_fraction, mtp,
                          acceptance), layout, concurrency, price_per_hour, request_rate)


def served(serving: Serving, layout, concurrency: int | None = None, price_per_hour: float | None = None,
           request_rate: float | None = None) -> Throughput:
    """The steady state of `layout` under `serving`: at the concurrency asked, at what a request rate keeps in
    flight, or at the most the engine runs."""
    drafter_ready(serving)
    room = room_of(serving, layout)
    batch, limit = batch_limit(serving, layout, room, concurrency)
    point = at_rate(serving, layout, batch, request_rate) if request_rate is not None else \
        point_at(serving, layout, batch)
    if point.batch < batch:
        limit = "request rate"
    tokens = point.tokens_per_second
    cost = None if price_per_hour is None else price_per_hour * layout.cards / 3600 / tokens * 1e6
    engine, table = serving.engine, serving.table
    return Throughput(model=serving.compiled.name, layout=layout.text(), cards=layout.cards,
                      device=serving.device.name, link=serving.link.name, engine=engine.name,
                      engine_source=engine.source, overlap=engine.overlap, isl=serving.isl, osl=serving.osl,
                      cached_fraction=serving.cached_fraction, concurrency=concurrency, request_rate=request_rate,
                      batch=point.batch, batch_limit=limit,
                      kv_requests_max=None if room.kv_max >= STATELESS else room.kv_max, kv_budget_bytes=room.budget,
                      prefill_tokens_per_step=point.batch * serving.new_share,
                      mtp=serving.mtp, acceptance=serving.acceptance if serving.mtp else None,
                      tokens_per_step=serving.tokens_per_step, step_seconds=point.step,
                      step_bound_seconds=point.bound, ttft_seconds=point.ttft, tpot_seconds=point.tpot,
                      output_tokens_per_second=tokens, output_tokens_per_second_per_card=tokens / layout.cards,
                      requests_per_second=tokens / serving.osl, price_per_hour=price_per_hour,
                      cost_per_million_output_tokens=cost, efficiency_table=table.file,
                      times={"bound": point.bound, "expected": point.step})


def at_rate(serving: Serving, layout, most: int, rate: float) -> Point:
    """The point at the smallest batch, at most `most`, that holds what a request rate keeps in flight (Little's
    law: rate · the time a request stays); E413 when the rate is beyond what the layout serves."""
    def stays(point: Point) -> float:   # requests the rate keeps in flight at this point, all replicas together
        return rate * (point.ttft + (serving.osl - 1) * point.tpot)

    top = point_at(serving, layout, most)
    if stays(top) > most * layout.dp:
        served = top.tokens_per_second / serving.osl
        raise refused(f"{rate:,.3g} requests a second is more than {layout.text()} serves: at its largest batch "
                      f"({most:,} a replica) it finishes {served:,.3g} a second",
                      f"ask for --request-rate {served * 0.95:,.3g} or less, or give more cards")
    low, high = 1, most
    while low < high:
        middle = (low + high) // 2
        if stays(point_at(serving, layout, middle)) <= middle * layout.dp:
            high = middle
        else:
            low = middle + 1
    return point_at(serving, layout, low)
