"""The steady state of continuous batching with chunked prefill (`archcost throughput`): how many requests an
engine runs at once on a layout, and the time to first token, the time per output token and the tokens per
second that follow, from the expected times of the layout's calls.

The batch B a replica runs is the smallest of: the concurrency asked for, the engine's cap, the requests whose
KV cache (ISL + OSL positions, in whole pages) fits the budget the engine gives it, and the requests the step's
token budget can keep fed. In the steady state each step decodes one token of every running request and
prefills, beside them, the prompts of the requests that replace those finishing: B·ISL/OSL tokens a step
(less the cached fraction). A step's time is the decode call of B requests at the mean context ISL + OSL/2 and
the prefill chunk beside it, their weights read once: max(decode, prefill) + min(decode, prefill) less what
the shorter one spends reading the weights the other already reads. Closed form; no queueing (requests arrive
as fast as they leave), no speculative decoding."""

from __future__ import annotations

import math

from pydantic import BaseModel

from ..terms.scenario import Scenario
from .engines import Engine


class Throughput(BaseModel):
    model: str
    layout: str
    cards: int
    device: str
    link: str
    engine: str
    engine_source: str
    isl: int
    osl: int
    cached_fraction: float
    concurrency: int | None
    batch: int                     # requests one replica runs at once
    batch_limit: str               # concurrency | engine cap | KV cache | step tokens
    kv_requests_max: int           # requests one replica's KV budget holds at ISL + OSL positions
    kv_budget_bytes: float         # per card
    prefill_tokens_per_step: float
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


def refused(message: str, hint: str | None = None):
    from archcost.dsl.errors import ArchError, Diagnostic

    return ArchError([Diagnostic(code="E413", message=message, hint=hint)])


def throughput(compiled, layout, device, link, network, engine: Engine, isl: int, osl: int,
               concurrency: int | None = None, cached_fraction: float = 0.0, price_per_hour: float | None = None,
               table=None, compute: str | None = None) -> Throughput:
    if table is None:
        raise refused(f"no kernel measurements for `{device.name}`: a throughput needs expected times",
                      "give --efficiency-table, or a device stdlib/efficiency covers (h100-sxm, h200, b200, a100)")
    weights, budget, kv_max = _kv_room(compiled, layout, device, engine, isl + osl)
    new_share = isl * (1 - cached_fraction) / osl      # prompt tokens a step prefills per running request
    batch, limit = _batch(layout, engine, kv_max, new_share, concurrency, isl, osl)
    prefill = batch * new_share
    step, bound = _step(compiled, layout, device, link, network, table, compute, batch, prefill, isl, osl, weights)
    ttft = math.ceil(isl * (1 - cached_fraction) / max(1, engine.max_num_tokens - batch)) * step
    tokens = batch * layout.dp / step
    cost = None if price_per_hour is None else price_per_hour * layout.cards / 3600 / tokens * 1e6
    return Throughput(model=compiled.name, layout=layout.text(), cards=layout.cards, device=device.name,
                      link=link.name, engine=engine.name, engine_source=engine.source, isl=isl, osl=osl,
                      cached_fraction=cached_fraction, concurrency=concurrency, batch=batch, batch_limit=limit,
                      kv_requests_max=min(kv_max, 10**9), kv_budget_bytes=budget, prefill_tokens_per_step=prefill,
                      step_seconds=step, step_bound_seconds=bound, ttft_seconds=ttft, tpot_seconds=step,
                      output_tokens_per_second=tokens, output_tokens_per_second_per_card=tokens / layout.cards,
                      requests_per_second=tokens / osl, price_per_hour=price_per_hour,
                      cost_per_million_output_tokens=cost, efficiency_table=table.file,
                      times={"bound": bound, "expected": step})


def _kv_room(compiled, layout, device, engine: Engine, positions: int) -> tuple[float, float, int]:
    """(the heaviest card's weight bytes, its KV budget as the engine sizes it, the requests of `positions` in
    whole pages one replica holds); E413 when not even one fits."""
    from ..numbers.evaluate import evaluate

    weights, state = _busiest_card(compiled, layout)
    peak = evaluate(compiled, "prefill", Scenario(P=engine.max_num_tokens)).temp_bytes_peak / (layout.tp * layout.cp)
    budget = engine.kv_budget(device.memory, weights, peak, layout.tp, layout.pp)
    per_request = state(1, -(-positions // engine.block) * engine.block)
    kv_max = int(budget // per_request) if budget > 0 and per_request > 0 else (10**9 if budget > 0 else 0)
    if kv_max < 1:
        raise refused(f"{engine.name} leaves no KV room for one request of {positions:,} positions on "
                      f"{layout.text()}: a card's budget is {budget / 2**30:,.2f} GiB (weights "
                      f"{weights / 2**30:,.2f} GiB, the peak step {peak / 2**30:,.2f} GiB) and one request needs "
                      f"{per_request / 2**30:,.3f} GiB",
                      _nearest(weights * layout.tp, per_request * layout.tp, device.memory))
    return weights, budget, kv_max


def _batch(layout, engine: Engine, kv_max: int, new_share: float, concurrency: int | None, isl: int,
           osl: int) -> tuple[int, str]:
    """The requests one replica runs and what binds them: the concurrency asked, the engine's cap, the KV cache,
    or the step's token budget (each running request takes one decode token and `new_share` prompt tokens)."""
    fed = int(engine.max_num_tokens // (1 + new_share))
    wanted = math.inf if concurrency is None else -(-concurrency // layout.dp)
    limits = {"concurrency": wanted, "engine cap": engine.max_batch, "KV cache": kv_max, "step tokens": fed}
    limit = min(limits, key=lambda k: limits[k])
    if limits[limit] < 1:
        raise refused(f"a step of {engine.max_num_tokens:,} tokens cannot prefill a prompt of {isl:,} beside one "
                      f"decode every {osl:,} steps: each running request needs {new_share:,.1f} prompt tokens a "
                      "step beside its decode", f"raise --max-num-tokens to {math.ceil(1 + new_share):,} or more, "
                      "or lower --isl")
    return int(limits[limit]), limit


def _step(compiled, layout, device, link, network, table, compute, batch: int, prefill: float, isl: int, osl: int,
          weights: float) -> tuple[float, float]:
    """(a mixed step's expected time, its bound): the decode call of the batch at the mean context and the
    prefill chunk beside it, the weights they both read counted once."""
    from ..cards.layout import layout_report

    decode = layout_report(compiled, layout, "decode", Scenario(B=batch * layout.dp, S=isl + osl // 2), device,
                           link, compute, network=network, table=table).times
    chunk = layout_report(compiled, layout, "call", Scenario(B=layout.dp, S=isl // 2, P=max(1, round(prefill))),
                          device, link, compute, network=network, table=table).times
    reading = weights / device.bandwidth
    step = (max(decode.expected, chunk.expected) + min(decode.expected, chunk.expected)
            - min(reading, decode.expected, chunk.expected))
    return step, max(decode.full_overlap, chunk.full_overlap)


def _nearest(weights: float, per_request: float, memory: float) -> str:
    """The fewest tensor-parallel cards (a power of two) whose shares of the weights and of one request leave a
    tenth of the card free, as the engines' budgets roughly do."""
    cards = 1
    while cards < 1024 and (weights + per_request) / cards > 0.9 * memory:
        cards *= 2
    return (f"try --layout tp={cards} (about {weights / cards / 2**30:,.1f} GiB of weights a card), or shorten --isl "
            "/ --osl")


def _busiest_card(compiled, layout):
    from ..cards.fleet import heaviest_card

    return heaviest_card(compiled, layout)
