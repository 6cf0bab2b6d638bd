"""A step's time bounds on its slowest stage's card and the utilisation they give (Chowdhery et al. 2022 §4.1,
App. B).

Compute is the card's FLOPs at the device's peak; communication every collective of the step one after the
other, each at NCCL's fastest algorithm and protocol (cards/nccl.py); the pipeline idles (p − 1)/(v·m) of the
ideal time. Without overlap the step is (compute + model-parallel traffic) × (1 + bubble) + the gradient sync;
with full overlap, the larger of the compute's pipeline time and all the traffic. MFU is the model FLOPs per
second of the step over every card's peak; HFU the same with the recomputed FLOPs. With `--step-time` they are
taken at a measured time; with `--efficiency` at the time the matrix products take at that fraction of the
peak (one figure per device: docs/training.md); otherwise at the full-overlap bound, so an upper bound.
"""

from __future__ import annotations

from typing import NamedTuple

from pydantic import BaseModel

from .schedule import bubble

SYNC = ("dp", "dp_experts")


class TrainTimes(BaseModel):
    """Bounds of one step (seconds) on its slowest stage's card, and what the FLOPs make of them."""

    device: str
    link: str
    compute_format: str
    compute: float                     # the step's FLOPs at the device's peak
    communication: float               # every collective of the step, one after another
    bubble: float                      # idle time over the ideal: (p − 1)/(v·m)
    no_overlap: float
    full_overlap: float
    step_time: float                   # the one MFU is taken at: given, predicted, or the full-overlap bound
    step_time_from: str                # given | predicted | bound
    mfu: float
    hfu: float
    fits: bool
    stage: str = "whole"               # the pipeline stage whose card paces the step (its slowest)
    # expected (compiler/timing): the compute at the kernel mix's measured ratio to its bound (the forward's
    # kernels at the micro-batch's shape; the backward's GEMMs have the same sizes), the model-parallel
    # collectives after it on the critical path, the pipeline's bubble; the data-parallel gradient sync
    # overlapped with the backward (Megatron's overlap_grad_reduce). Never below the full-overlap bound.
    expected: float | None = None
    expected_mfu: float | None = None
    efficiency_table: str | None = None


def step_times(report, sheets, step_time: float | None, efficiency: float | None, peak_format: str | None,
               kernels: float | None = None, table: str | None = None) -> TrainTimes:
    """The step's bounds and expected time: every stage runs every micro-batch, so the step waits for its
    slowest stage's card (the last stage's output head can outweigh the first stage's embedding and extra
    layers), while whether it fits is the most loaded card's (report.busiest)."""
    device, link, network = sheets

    fmt = peak_format or _default_format(device)
    peak = device.peak_for(fmt)
    idle = float(bubble(report.layout.pp, report.layout.vp, report.micro_batches))
    stages = [_stage_times(card, peak, idle, kernels) for card in report.cards]
    # the longest without overlap, then with it: the rule a layout's call follows (cards.layout._slowest)
    slowest = max(stages, key=lambda stage: (stage.no_overlap, stage.full_overlap))
    compute, traffic, full_overlap = slowest.compute, slowest.model_parallel + slowest.sync, slowest.full_overlap
    if step_time is not None:
        if step_time < full_overlap:
            raise _below_bound(step_time, full_overlap, compute * (1 + idle), traffic, device, fmt)
        used, source = step_time, "given"
    elif efficiency is not None:
        used = max(max(s.compute / efficiency * (1 + idle), s.model_parallel + s.sync) for s in stages)
        source = "predicted"
    else:
        used, source = full_overlap, "bound"
    all_peak = peak * report.layout.cards * used
    expected = None if kernels is None else max(max(s.expected for s in stages), full_overlap)
    busiest = next(card for card in report.cards if card.stage == report.busiest)
    return TrainTimes(device=device.name, link=link.name, compute_format=fmt, compute=compute,
                      communication=traffic, bubble=idle, no_overlap=slowest.no_overlap,
                      full_overlap=full_overlap, step_time=used, step_time_from=source,
                      mfu=report.model_flops / all_peak, hfu=report.flops_matrix / all_peak,
                      fits=busiest.memory_bytes <= device.memory, stage=slowest.stage, expected=expected,
                      expected_mfu=None if expected is None else report.model_flops / (
                          peak * report.layout.cards * expected), efficiency_table=table)


class _StageTimes(NamedTuple):
    stage: str
    compute: float
    model_parallel: float
    sync: float
    no_overlap: float
    full_overlap: float
    expected: float


def _stage_times(card, peak: float, idle: float, kernels: float | None) -> _StageTimes:
    """One stage's card: compute at the peak, its collectives, the bounds they give, and its expected time."""
    compute = (card.flops_matrix + card.flops_nonmatrix) / peak
    model_parallel = sum(t.seconds for t in card.traffic if t.group not in SYNC)
    sync = sum(t.seconds for t in card.traffic if t.group in SYNC)
    no_overlap = (compute + model_parallel) * (1 + idle) + sync
    full_overlap = max(compute * (1 + idle), model_parallel + sync)
    # the model-parallel collectives at their measured bus bandwidth where the table has them (Traffic)
    measured = sum(t.seconds if t.expected_seconds is None else t.expected_seconds
                   for t in card.traffic if t.group not in SYNC)
    expected = 0.0 if kernels is None else max((compute * kernels + measured) * (1 + idle), full_overlap)
    return _StageTimes(card.stage, compute, model_parallel, sync, no_overlap, full_overlap, expected)


def _below_bound(step_time: float, bound: float, compute: float, traffic: float, device, fmt: str):
    """A measured step shorter than the step's lower bound: no run on this layout and device took it (E410)."""
    from archcost.dsl.errors import ArchError, Diagnostic

    what = (f"the compute at the {fmt} peak of {device.name} with the pipeline's bubble, {compute:.4g} s"
            if compute >= traffic else f"the step's collectives at the link's bandwidth, {traffic:.4g} s")
    return ArchError([Diagnostic(
        code="E410", message=f"a measured step of {step_time:.4g} s is below the step's lower bound, {bound:.4g} s "
                             f"({what}); at it the cards would run at {bound / step_time:.0%} of their peak",
        hint="check --step-time, the layout (the bound is the slowest stage's card), --device and --compute")])


def _default_format(device) -> str:
    """The 16-bit peak mixed-precision training runs its products at, where the sheet gives one."""
    return next((f for f in ("bf16", "fp16") if f in device.peak), device.preferred_peak())


def kernel_mix(compiled, setup, device, peak_format: str | None, table, degrees=None) -> float:
    """A step's kernel mix over its bound (cards/expected.py), at one micro-batch's forward shapes as a card of
    the layout's `degrees` runs them, with the attention kernel and dropout the step runs (`setup`:
    step.TrainSetup)."""
    from ..cards.expected import kernel_ratio
    from ..terms.scenario import Scenario
    from .saved import step_conventions

    fmt = peak_format or _default_format(device)
    forward = Scenario(B=setup.micro_batch, S=0, P=setup.seq)
    eager = None if setup.attention_kernel == "flash" else step_conventions(setup.dropout, setup.attention_kernel)
    return kernel_ratio(compiled, device, "prefill", forward, fmt, table, training=True, eager=eager,
                        degrees=degrees)
