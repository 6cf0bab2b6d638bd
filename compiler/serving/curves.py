"""The curves the plots draw, as numbers: one request's state, one decode step's FLOPs and the requests that
fit, each against context length, and a call's place on a device's roofline. `archcost plot` draws them
with matplotlib and the page (`archcost serve`) with uPlot: both from these functions, so a curve on the
page is the figure's curve."""

from __future__ import annotations

from ..numbers.evaluate import evaluate, state_bytes_at
from ..terms.scenario import Scenario
from .capacity import capacity, roofline
from .state import profile


def state_curve(compiled, lengths: list[int]) -> tuple[list[float], float]:
    """Bytes of one request's state at each context length, and the part that does not grow."""
    return [float(state_bytes_at(compiled, int(n))) for n in lengths], float(profile(compiled, []).state_fixed_bytes)


def decode_flops_curve(compiled, lengths: list[int], batch: int = 1) -> list[float]:
    """Matrix FLOPs of one decode step that reads each context length."""
    return [float(evaluate(compiled, "decode", Scenario(B=batch, S=int(n))).flops_matrix) for n in lengths]


def capacity_curve(compiled, device, lengths: list[int]) -> list[int] | None:
    """Requests that fit on the device at each context length (seed 002 §2.6.2); None for a model whose
    requests hold no state, which memory does not bound."""
    bounds = [capacity(compiled, device, n).max_batch for n in lengths]
    return None if any(b is None for b in bounds) else bounds


def roof_line(device, fmt: str, points: int) -> tuple[list[float], list[float]]:
    """The device's roof for `fmt`: attainable FLOPS min(peak, intensity · bandwidth) at `points` intensities
    from 0.1 FLOP/byte to a hundred times the ridge, spaced evenly on a log scale."""
    import numpy as np

    intensities = [float(x) for x in np.geomspace(0.1, device.ridge(fmt) * 100, points)]
    return intensities, [min(device.peak_for(fmt), x * device.bandwidth) for x in intensities]


def roofline_points(compiled, device, calls: list[tuple[str, Scenario]]) -> list[dict]:
    """Each call placed on the device's roofline: its intensity, attained FLOPS at the bound, and the bound."""
    points = []
    for phase, scenario in calls:
        r = roofline(compiled, device, phase, scenario)
        points.append({"phase": phase, "scenario": scenario.model_dump(), "intensity": r.intensity,
                       "flops_per_second": r.flops / r.step_seconds if r.step_seconds else 0.0, "bound": r.bound,
                       "step_seconds": r.step_seconds, "peak_format": r.peak_format})
    return points
