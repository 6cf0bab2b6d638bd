"""The steady state of continuous batching with chunked prefill on one layout: what a replica holds under an
engine (its KV budget, as the engine computes it), the batch it runs, and one step's expected time.

In the steady state each step decodes one token of every running request and prefills, beside them, the
prompts of the requests that replace those finishing: B·ISL/OSL tokens a step (less the cached fraction). A
step's time is the decode call of B requests at the mean context ISL + OSL/2 and the prefill chunk beside it,
their weights read once: max(decode, prefill) + min(decode, prefill) less what the shorter one spends reading
the weights the other already reads. A prompt arrives, on average, half way through a step and rides in the
steps that follow. With drafts (multi-token prediction) each step verifies K + 1 positions of every request
and drafts K more with the spec's `mtp` stage: one pass rides in the verify call, K − 1 more are the stage's
own decode calls; a request gains (1 − A^(K+1)) / (1 − A) tokens a step (Leviathan et al. 2023; seed 002
§2.5.3). Under pipeline parallelism a micro-batch is in flight on every stage."""

from __future__ import annotations

import math
from dataclasses import dataclass

from ..terms.scenario import Scenario
from ..timing.fractions import identity
from .engines import Engine


def refused(message: str, hint: str | None = None):
    from archcost.dsl.errors import ArchError, Diagnostic

    return ArchError([Diagnostic(code="E413", message=message, hint=hint)])


@dataclass(frozen=True)
class Serving:
    """Everything a steady state is evaluated under but the layout and the batch: the model, the cards, the
    engine, the request shape and the drafts."""

    compiled: object
    device: object
    link: object
    network: object
    engine: Engine
    table: object
    compute: str | None
    isl: int
    osl: int
    cached_fraction: float = 0.0
    mtp: int = 0
    acceptance: float = 0.0

    @property
    def new_share(self) -> float:
        """Prompt tokens a step prefills per running request (one request of B finishes every OSL/ḡ steps)."""
        return self.isl * (1 - self.cached_fraction) / self.osl * self.tokens_per_step

    @property
    def tokens_per_step(self) -> float:
        if not self.mtp:
            return 1.0
        a = self.acceptance
        return float(self.mtp + 1) if a == 1 else (1 - a ** (self.mtp + 1)) / (1 - a)


# the requests a KV budget holds when a request keeps no state (a model without a cache): no bound at all
STATELESS = 10**9


@dataclass(frozen=True)
class Room:
    """What one replica of a layout holds under an engine: its heaviest card's weights, the KV budget the engine
    gives a card, and the requests of ISL + OSL positions that budget keeps."""

    weights: float
    budget: float
    kv_max: int


@dataclass(frozen=True)
class Point:
    """One batch on one layout: the step's expected time and bound, and the time to first token."""

    batch: int
    step: float
    bound: float
    ttft: float
    tpot: float
    tokens_per_second: float      # the whole layout's output tokens a second


def room_of(serving: Serving, layout, prefill_only: bool = False) -> Room:
    """The heaviest card's weights, its KV budget as the engine sizes it, and the requests of ISL + OSL positions
    (in whole pages) one replica holds; E413 when not even one fits."""
    compiled, engine, device = serving.compiled, serving.engine, serving.device
    positions = serving.isl + (0 if prefill_only else serving.osl)
    key = ("serving room", layout, engine, positions, identity(device))
    if key not in compiled.memo:
        compiled.memo[key] = _room(serving, layout, positions)
    if isinstance(compiled.memo[key], Exception):
        raise compiled.memo[key]
    return compiled.memo[key]


def _room(serving: Serving, layout, positions: int) -> Room | Exception:
    from archcost.dsl.errors import ArchError

    from ..cards.fleet import heaviest_card
    from ..numbers.evaluate import evaluate

    compiled, engine, device = serving.compiled, serving.engine, serving.device
    try:
        weights, state = heaviest_card(compiled, layout)
    except ArchError as error:  # heads or experts the layout splits unevenly: kept, a search asks again
        return error
    key = ("serving peak step", engine.max_num_tokens)
    if key not in compiled.memo:  # the engine profiles its largest step: a prefill of its token budget
        compiled.memo[key] = evaluate(compiled, "prefill", Scenario(P=engine.max_num_tokens)).temp_bytes_peak
    peak = compiled.memo[key] / (layout.tp * layout.cp)
    budget = engine.kv_budget(device.memory, weights, peak, layout.tp, layout.pp)
    per_request = state(1, -(-positions // engine.block) * engine.block)
    kv_max = int(budget // per_request) if budget > 0 and per_request > 0 else (STATELESS if budget > 0 else 0)
    if kv_max < 1:
        return refused(f"{engine.name} leaves no KV room for one request of {positions:,} positions on "
                       f"{layout.text()}: a card's budget is {budget / 2**30:,.2f} GiB (weights "
                       f"{weights / 2**30:,.2f} GiB, the peak step {peak / 2**30:,.2f} GiB) and one request needs "
                       f"{per_request / 2**30:,.3f} GiB",
                       nearest(weights * layout.tp, per_request * layout.tp, device.memory))
    return Room(weights, budget, kv_max)


def batch_limit(serving: Serving, layout, room: Room, concurrency: int | None) -> tuple[int, str]:
    """The requests one replica runs and what binds them: the concurrency asked, the engine's cap, the KV cache,
    or the step's token budget (each running request takes 1 + K decode positions and its prompt share)."""
    engine = serving.engine
    fed = int(engine.max_num_tokens // (1 + serving.mtp + serving.new_share))
    wanted = math.inf if concurrency is None else -(-concurrency // layout.dp)
    limits = {"concurrency": wanted, "engine cap": engine.max_batch, "KV cache": room.kv_max, "step tokens": fed}
    limit = min(limits, key=lambda k: limits[k])
    if limits[limit] < 1:
        need = math.ceil(1 + serving.mtp + serving.new_share)
        raise refused(f"a step of {engine.max_num_tokens:,} tokens cannot prefill a prompt of {serving.isl:,} beside "
                      f"one decode every {serving.osl:,} steps: each running request needs "
                      f"{serving.new_share:,.1f} prompt tokens a step beside its decode",
                      f"raise --max-num-tokens to {need:,} or more, or lower --isl")
    return int(limits[limit]), limit


def point_at(serving: Serving, layout, batch: int, first_token: bool = True) -> Point:
    """The steady state of `batch` requests a replica: a mixed step (decodes, their drafts and the prefill
    chunk beside them, the weights read once), TTFT the steps a prompt's chunks wait for, TPOT the step over
    the tokens it yields (without `first_token` the TTFT is left at 0: a search that sizes by TPOT first)."""
    average = serving.new_share * batch
    step, bound = _mixed(serving, layout, batch, average)
    if not first_token:
        tpot = step / serving.tokens_per_step
        return Point(batch, step, bound, 0.0, tpot, batch * layout.dp / tpot)
    # A prompt arrives, on average, half way through a step; its own tokens then ride in the steps that follow,
    # each carrying at least that prompt's chunk (more than the average step's share when prompts are long)
    prompt = serving.isl * (1 - serving.cached_fraction)
    room_per_step = max(1, serving.engine.max_num_tokens - batch * (1 + serving.mtp))
    own = min(prompt, room_per_step)
    carrying = step if own <= average else _mixed(serving, layout, batch, own, whole=True)[0]
    # an overlap scheduler has the next step scheduled and launched while this one runs: an arrival joins the
    # step after it (SGLang's event_loop_overlap, TensorRT-LLM's PyExecutor with the overlap scheduler)
    admitted = step if serving.engine.overlap else 0.0
    ttft = step / 2 + admitted + math.ceil(prompt / room_per_step) * carrying
    tpot = step / serving.tokens_per_step
    return Point(batch, step, bound, ttft, tpot, batch * layout.dp / tpot)


def _mixed(serving: Serving, layout, batch: int, prefill: float, whole: bool = False) -> tuple[float, float]:
    """(expected, bound) of a step of `batch` decodes with `prefill` prompt tokens beside them (`whole`: one
    prompt's, which rides in one micro-batch)."""
    decode, chunk = calls(serving, layout, batch, prefill, whole)
    reading = room_of(serving, layout).weights / serving.device.bandwidth
    step = (max(decode[0], chunk[0]) + min(decode[0], chunk[0]) - min(reading, decode[0], chunk[0]))
    return step, max(decode[1], chunk[1])


def calls(serving: Serving, layout, batch: int, prefill: float,
           whole: bool = False) -> tuple[tuple[float, float], tuple[float, float]]:
    """((expected, bound) of the decode call of the batch with its drafts, the same of the prefill chunk). Under
    pipeline parallelism the engine keeps a micro-batch in flight on every stage (vLLM's one scheduler per stage,
    `virtual_engine`; Narayanan et al. 2021 §2.2): the batch advances a token in pp stage times of 1/pp of it,
    and each micro-batch carries its share of the chunk."""
    context = serving.isl + serving.osl // 2
    stepping = layout
    if layout.pp > 1 and layout.micro_batches == 1:  # the chunk: its share a stage time, through pp stages
        micro = min(layout.pp, batch)
        stepping = layout.model_copy(update={"micro_batches": micro})
        prefill = prefill if whole else prefill / micro
    if serving.mtp:
        verify = call_times(serving, stepping, "call", Scenario(B=batch * layout.dp, S=context, P=serving.mtp + 1))
        plain = call_times(serving, stepping, "decode", Scenario(B=batch * layout.dp, S=context))
        share = drafter_share(serving, batch, context)
        decode = (verify[0] + (serving.mtp - 1) * share * plain[0], verify[1] + (serving.mtp - 1) * share * plain[1])
    else:
        decode = call_times(serving, stepping, "decode", Scenario(B=batch * layout.dp, S=context))
    if prefill <= 0:
        return decode, (0.0, 0.0)
    chunk = call_times(serving, layout, "call", Scenario(B=layout.dp, S=serving.isl // 2, P=max(1, round(prefill))))
    return decode, chunk


def call_times(serving: Serving, layout, phase: str, scenario: Scenario) -> tuple[float, float]:
    """(expected, bound) of one call on the layout; kept on the model, since a search asks the same decode of a
    batch for its average step and for the step that carries a whole prompt, and its neighbours again."""
    from ..cards.layout import layout_cards

    key = ("serving call", layout, phase, scenario, identity(serving.device), identity(serving.link),
           identity(serving.network), serving.compute, serving.table.file)
    if key not in serving.compiled.memo:
        times = layout_cards(serving.compiled, layout, phase, scenario, serving.device, serving.link,
                             serving.compute, serving.network, serving.table).times
        serving.compiled.memo[key] = (times.expected, times.full_overlap)
    return serving.compiled.memo[key]


def drafter_share(serving: Serving, batch: int, context: int) -> float:
    """The part of a decode step's expected time the `mtp` stage takes (on the unsplit model: its ops' share)."""
    from ..cards.expected import expected_call

    compiled = serving.compiled
    key = ("drafter share", identity(serving.device), serving.table.file, serving.compute, batch, context)
    if key not in compiled.memo:
        fmt = serving.compute or serving.device.preferred_peak()
        ops = expected_call(compiled, serving.device, "decode", Scenario(B=batch, S=context), fmt, serving.table,
                            0.0).ops
        drafts = _drafter_ops(compiled)
        whole = sum(o.expected_seconds for o in ops)
        compiled.memo[key] = sum(o.expected_seconds for o in ops if o.op in drafts) / whole if whole else 0.0
    return compiled.memo[key]


def _drafter_ops(compiled) -> set[str]:
    from ..graph.ir import ancestors

    clusters = compiled.graph.graph["clusters"]
    return {op for op, data in compiled.graph.nodes(data=True) if "mtp" in ancestors(clusters, data["cluster"])}


def drafter_ready(serving: Serving) -> None:
    if serving.mtp and not _drafter_ops(serving.compiled):
        raise refused(f"`{serving.compiled.name}` has no `mtp` stage to draft with",
                      "compile it with its drafter switched on (--option mtp=on), or leave out --mtp")


def nearest(weights: float, per_request: float, memory: float) -> str:
    """The fewest tensor-parallel cards (a power of two) whose shares of the weights and of one request leave a
    tenth of the card free, as the engines' budgets roughly do."""
    cards = 1
    while cards < 1024 and (weights + per_request) / cards > 0.9 * memory:
        cards *= 2
    return (f"try --layout tp={cards} (about {weights / cards / 2**30:,.1f} GiB of weights a card), or shorten --isl "
            "/ --osl")
