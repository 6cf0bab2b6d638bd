"""Serving arithmetic on a compiled spec: capacity, the roofline, speculative decoding, requests."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from pydantic import BaseModel

from ..terms import quantities
from ..terms.letters import causal_pairs

if TYPE_CHECKING:
    from ..front.hardware import Device
    from ..graph.compiled import Compiled
    from ..terms.scenario import Scenario



class Capacity(BaseModel):
    """Seed 002 §2.6.2: B_max = ⌊(M_device − M_weights − M_workspace) / M_state⌋ and its inverse."""

    model: str
    device: str
    context: int
    device_bytes: float
    usable_bytes: float              # after the reserved fraction
    weight_bytes: float
    workspace_bytes: float
    state_bytes_per_request: int     # at `context` positions, fixed state included
    max_batch: int | None            # None: the model holds no state per request, memory bounds no batch
    max_params: float | None = None  # N_max for `batch` requests: (C − M_0 − B·K) / b_W
    batch: int | None = None
    crossover_batch: int             # B*: the smallest B whose context reads exceed the weight reads


def capacity(model, device: Device, context: int, workspace: float = 0, reserve: float = 0,
             batch: int | None = None) -> Capacity:
    """B_max and N_max of a model (compiled, or a view of one: see render.chapter.view_of) on a device."""
    from .views import view_of

    view = view_of(model)
    report = view.report("decode", S=context)
    state = view.state_at(context)
    usable = device.memory * (1 - reserve)
    free = usable - report["weight_bytes"] - workspace
    max_batch = max(0, math.floor(free / state)) if state else (None if free >= 0 else 0)
    bytes_per_param = report["weight_bytes"] / report["params"] if report["params"] else None
    context_reads = report["read_bytes"]["state"]  # one request's reads of its context in one decode step
    return Capacity(
        model=view.name, device=device.name, context=context, device_bytes=device.memory, usable_bytes=usable,
        weight_bytes=report["weight_bytes"], workspace_bytes=workspace, state_bytes_per_request=state,
        max_batch=max_batch, batch=batch,
        max_params=None if batch is None or not bytes_per_param else (usable - workspace - batch * state)
        / bytes_per_param,
        crossover_batch=math.floor(report["read_bytes"]["weights"] / context_reads) + 1 if context_reads else 0,
    )


class Roofline(BaseModel):
    """Seed 000 §02: t ≥ max(F / peak, R / bandwidth); intensity F / R against the ridge peak / bandwidth."""

    model: str
    device: str
    phase: str
    scenario: dict[str, int]
    peak_format: str
    flops: float
    bytes: float
    intensity: float | None      # None when the call moves no bytes at all
    ridge: float
    compute_seconds: float
    memory_seconds: float
    step_seconds: float
    bound: str
    # the expected time (compiler/timing): the ops' bounds over the fractions their kernels reach on this device;
    # None where no efficiency table covers the device
    expected_seconds: float | None = None
    efficiency_table: str | None = None
    times: dict[str, float | None] = {}


def roofline(compiled: Compiled, device: Device, phase: str, scenario: Scenario, peak_format: str | None = None,
             activations: bool = False, table=None) -> Roofline:
    """Matrix FLOPs against the bytes a call must move: weights, rows gathered, context read and written
    (activations only when asked: fused kernels keep most of them on chip)."""
    from ..numbers.evaluate import evaluate

    report = evaluate(compiled, phase, scenario)
    fmt = peak_format or device.preferred_peak()
    moved = quantities.moved_bytes(quantities.report_fields(report), activations)
    compute, memory = report.flops_matrix / device.peak_for(fmt), moved / device.bandwidth
    step = max(compute, memory)
    expected = None
    if table is not None:
        from ..cards.expected import expected_call

        # with --activations the bound counts bytes the ops' kernels keep on chip: the larger of the two stands
        expected = max(expected_call(compiled, device, phase, scenario, fmt, table, step).expected_seconds, step)
    return Roofline(model=compiled.name, device=device.name, phase=phase, scenario=report.scenario, peak_format=fmt,
                    flops=report.flops_matrix, bytes=moved, intensity=report.flops_matrix / moved if moved else None,
                    ridge=device.ridge(fmt), compute_seconds=compute, memory_seconds=memory,
                    step_seconds=step, bound="compute" if compute >= memory else "memory",
                    expected_seconds=expected, efficiency_table=None if table is None else table.file,
                    times={"bound": step, "expected": expected})


class RequestTimes(BaseModel):
    """One request's time on one device: its prefill (P new tokens after S cached) and its G − 1 decodes, each
    a roofline's bound and expected time; the decodes timed at their middle context (a decode's time grows
    linearly with the context it reads)."""

    device: str
    prefill: Roofline
    decode_middle: Roofline | None      # the decode at S + P + (G − 2) / 2 positions held
    decodes: int
    bound_seconds: float
    expected_seconds: float | None
    times: dict[str, float | None] = {}


def request_times(compiled: Compiled, device: Device, scenario: Scenario, peak_format: str | None = None,
                  table=None) -> RequestTimes:
    from ..terms.scenario import Scenario

    prefill = roofline(compiled, device, "call", Scenario(B=scenario.B, S=scenario.S, P=scenario.P), peak_format,
                       table=table)
    decodes = scenario.G - 1
    middle = None
    if decodes:
        held = scenario.S + scenario.P + (decodes - 1) // 2
        middle = roofline(compiled, device, "decode", Scenario(B=scenario.B, S=held), peak_format, table=table)
    bound = prefill.step_seconds + decodes * (middle.step_seconds if middle else 0.0)
    expected = None
    if prefill.expected_seconds is not None:
        expected = prefill.expected_seconds + decodes * (middle.expected_seconds if middle else 0.0)
    return RequestTimes(device=device.name, prefill=prefill, decode_middle=middle, decodes=decodes,
                        bound_seconds=bound, expected_seconds=expected, times={"bound": bound, "expected": expected})


class OpRoofline(BaseModel):
    op: str
    kind: str
    flops: float
    bytes: float
    intensity: float | None
    seconds: float
    bound: str
    expected_seconds: float | None = None
    efficiency: float | None = None


def roofline_by_op(compiled: Compiled, device: Device, phase: str, scenario: Scenario,
                   peak_format: str | None = None, table=None) -> list[OpRoofline]:
    """Each op's FLOPs against its own bytes: which ops are memory-bound and which compute-bound."""
    from ..numbers.evaluate import by_op

    fmt = peak_format or device.preferred_peak()
    rows = []
    for op in by_op(compiled, phase, scenario):
        flops, moved = op.flops_matrix_all_layers, op.bytes_moved_all_layers
        if not flops and not moved:
            continue
        compute, memory = flops / device.peak_for(fmt), moved / device.bandwidth
        rows.append(OpRoofline(op=op.op, kind=op.kind, flops=flops, bytes=moved,
                               intensity=flops / moved if moved else None, seconds=max(compute, memory),
                               bound="compute" if compute >= memory else "memory"))
    if table is not None:
        from ..cards.expected import expected_call

        timed = {t.op: t for t in expected_call(compiled, device, phase, scenario, fmt, table, 0.0).ops}
        for row in rows:
            if row.op in timed:
                row.expected_seconds, row.efficiency = timed[row.op].expected_seconds, timed[row.op].efficiency
    return rows


class Speculation(BaseModel):
    """Seed 000 §08 and seed 002 §2.5.3: k drafted tokens, each accepted with probability α."""

    k: int
    alpha: float
    tokens_per_round: float           # (1 − α^(k+1)) / (1 − α)
    round_seconds: float | None = None      # T_s + T_v
    decode_seconds: float | None = None     # T_d, a plain decode step
    seconds_per_output: float | None = None  # (T_s + T_v) / ḡ
    break_even_tokens: float | None = None   # ḡ must exceed (T_s + T_v) / T_d
    worth_it: bool | None = None


def speculate(k: int, alpha: float, round_seconds: float | None = None, decode_seconds: float | None = None,
              tokens_per_round: float | None = None) -> Speculation:
    expected = (k + 1) if alpha == 1 else (1 - alpha ** (k + 1)) / (1 - alpha)
    accepted = tokens_per_round if tokens_per_round is not None else expected
    result = Speculation(k=k, alpha=alpha, tokens_per_round=accepted, round_seconds=round_seconds,
                         decode_seconds=decode_seconds)
    if round_seconds is not None:
        result.seconds_per_output = round_seconds / accepted
    if round_seconds is not None and decode_seconds:
        result.break_even_tokens = round_seconds / decode_seconds
        result.worth_it = accepted > result.break_even_tokens
    return result


class PrefixReuse(BaseModel):
    """Seed 002 §2.2.1, Exercise 2-8: a cached prefix of S positions is not computed again."""

    cached: int
    rows_saved: int          # projection rows: B·S
    pairs_saved: int         # causal pairs: N_pair(0, S+P) − N_pair(S, P)
    flops_saved: float       # matrix FLOPs of the prefill with and without the prefix cached


def prefix_reuse(model, scenario) -> PrefixReuse:
    """What a cached prefix of S positions saves a prefill of P new tokens (a model or a view of one; the
    scenario anything with B, S and P)."""
    from .views import view_of

    view, B, S, P = view_of(model), scenario.B, scenario.S, scenario.P
    whole = view.report("prefill", B=B, S=0, P=S + P)
    reused = view.report("prefill", B=B, S=S, P=P)
    pairs = causal_pairs(B, 0, S + P) - causal_pairs(B, S, P)
    return PrefixReuse(cached=S, rows_saved=B * S, pairs_saved=int(pairs),
                       flops_saved=whole["flops_matrix"] - reused["flops_matrix"])


class Turn(BaseModel):
    turn: int
    cached: int        # S: positions kept from earlier turns
    prompt: int        # P
    returned: int      # G
    report: dict       # the request's report, as its JSON shows it


def conversation(model, turns: list[tuple[int, int]], batch: int = 1, cached: int = 0) -> list[Turn]:
    """Turns of (P, G): each turn's prompt follows everything kept so far; the last returned token is
    not fed back, so a turn keeps S + P + G − 1 positions for the next (seed 002 §2.2.3)."""
    from .views import view_of

    view = view_of(model)
    result = []
    for index, (prompt, returned) in enumerate(turns, start=1):
        result.append(Turn(turn=index, cached=cached, prompt=prompt, returned=returned,
                           report=view.report("request", B=batch, S=cached, P=prompt, G=returned)))
        cached += prompt + returned - 1
    return result


def draft_timing(compiled: Compiled, device: Device, k: int, scenario: Scenario, drafter: str = "mtp"
                 ) -> tuple[float, float, float]:
    """(T_s + T_v, T_d) from the roofline: the `drafter` stage (ops under it, e.g. V4-Flash's MTP
    block) drafts k tokens one step at a time, the model without it verifies k + 1 positions in one
    call, and a plain decode step is the model without it (seed 002 §2.5.3)."""
    from archcost.dsl.errors import ArchError, Diagnostic

    from ..graph.ir import ancestors
    from ..numbers.evaluate import by_op
    from ..terms.scenario import Scenario

    def bound(phase: str, shape: Scenario, keep) -> float:
        ops = [o for o in by_op(compiled, phase, shape) if keep(o.op)]
        fmt = device.preferred_peak()
        flops, moved = sum(o.flops_matrix_all_layers for o in ops), sum(o.bytes_moved_all_layers for o in ops)
        return max(flops / device.peak_for(fmt), moved / device.bandwidth)

    clusters = compiled.graph.graph["clusters"]
    in_drafter = lambda op: drafter in ancestors(clusters, compiled.graph.nodes[op]["cluster"])  # noqa: E731
    main = lambda op: not in_drafter(op)  # noqa: E731
    draft = k * bound("decode", scenario, in_drafter)
    if draft == 0:
        raise ArchError([Diagnostic(code="E407", message=f"`{compiled.name}` has no `{drafter}` stage to draft with",
                                    hint="compile it with its drafter switched on, e.g. --option mtp=on")])
    verify = bound("call", Scenario(B=scenario.B, S=scenario.S, P=k + 1), main)
    return draft + verify, bound("decode", scenario, main), draft
