"""Figures a person would rather look at than read, drawn with matplotlib (PNG or SVG)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ..compilation import Compiled
from ..serving.curves import capacity_curve, decode_flops_curve, roof_line, state_curve
from .units import human_bytes

MiB = 2**20


def state_vs_context(models: list[Compiled], path: Path, shortest: int = 1024, longest: int = 2**20) -> None:
    """State of one request against context length, log x (seed 002 Figure 2-30): each model's
    exact curve, and its fixed part as a dashed line of the same colour."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    lengths = np.unique(np.geomspace(shortest, longest, 200).astype(int))
    figure, axes = plt.subplots(figsize=(8, 5), dpi=120)
    for index, model in enumerate(models):
        colour = f"C{index}"
        sizes, fixed = state_curve(model, lengths)
        axes.plot(lengths, [int(size) / MiB for size in sizes], color=colour, linewidth=2, label=model.name)
        if fixed:
            axes.axhline(fixed / MiB, color=colour, linestyle="--", linewidth=1, alpha=0.7)
    axes.set_xscale("log", base=2)
    ticks = [n for n in (2**k for k in range(0, 41, 2)) if shortest <= n <= longest]
    axes.set_xticks(ticks, [_length(n) for n in ticks])
    axes.set_yscale("log")
    axes.set_xlabel("context length H (positions)")
    axes.set_ylabel("state of one request (MiB)")
    axes.set_title("Context state vs. context length (dashed: the part that does not grow)")
    axes.grid(True, which="major", alpha=0.3)
    axes.legend()
    figure.tight_layout()
    _save(figure, path)
    plt.close(figure)


def _figure(title: str, xlabel: str, ylabel: str):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(figsize=(8, 5), dpi=120)
    axes.set_title(title)
    axes.set_xlabel(xlabel)
    axes.set_ylabel(ylabel)
    axes.grid(True, which="major", alpha=0.3)
    return plt, figure, axes


def _finish(plt, figure, axes, path: Path) -> None:
    axes.legend()
    figure.tight_layout()
    _save(figure, path)
    plt.close(figure)


def flops_vs_context(models: list[Compiled], path: Path, shortest: int = 1024, longest: int = 2**20) -> None:
    """Matrix FLOPs of one decode step against the context it reads (seed 002 Figure 2-29's growth)."""
    plt, figure, axes = _figure("One decode step against context length", "context length S (positions)",
                                "matrix GFLOPs per step")
    lengths = np.unique(np.geomspace(shortest, longest, 60).astype(int))
    for model in models:
        axes.plot(lengths, [flops / 1e9 for flops in decode_flops_curve(model, lengths)], linewidth=2,
                  label=model.name)
    axes.set_xscale("log", base=2)
    axes.set_yscale("log")
    _finish(plt, figure, axes, path)


def step_vs_batch(models: list[Compiled], device, path: Path, context: int = 1024) -> list[str]:
    """The decode step's lower bound max(F/peak, R/bandwidth) against batch size (seed 000 §02), drawn only
    where the weights and the batch's state fit the device; the notes say which models stop short."""
    from ..numbers.evaluate import evaluate
    from ..serving.capacity import roofline
    from ..terms.scenario import Scenario

    plt, figure, axes = _figure(f"Decode step on {device.name} at {context:,} positions of context", "batch B",
                                "step lower bound (ms)")
    notes = []
    for model in models:
        held = {b: evaluate(model, "decode", Scenario(B=b, S=context)) for b in STEP_BATCHES}
        batches = [b for b, r in held.items() if r.weight_bytes + r.state_bytes <= device.memory]
        if len(batches) < len(STEP_BATCHES):
            first = next(b for b in STEP_BATCHES if b not in batches)
            notes.append(f"{model.name} does not fit one {device.name} from B = {first} "
                         f"({human_bytes(held[first].weight_bytes + held[first].state_bytes)} of "
                         f"{human_bytes(device.memory)}): those batches are not drawn")
        steps = [roofline(model, device, "decode", Scenario(B=b, S=context)).step_seconds * 1e3 for b in batches]
        axes.plot(batches, steps, marker="o", linewidth=2, label=model.name + ("" if batches else " (does not fit)"))
    axes.set_xscale("log", base=2)
    _finish(plt, figure, axes, path)
    return notes


STEP_BATCHES = [1, 2, 4, 8, 16, 32, 64, 128, 256]


def roofline_chart(models: list[Compiled], device, path: Path, batch: int = 1, context: int = 8192) -> None:
    """The device's roofline with each model's decode call placed on it by its intensity."""
    from ..serving.capacity import roofline
    from ..terms.scenario import Scenario

    plt, figure, axes = _figure(f"Roofline of {device.name}", "arithmetic intensity (FLOP/byte)",
                                "attainable TFLOPS")
    fmt = roofline(models[0], device, "decode", Scenario(B=batch, S=context)).peak_format
    x, roof = roof_line(device, fmt, 200)
    axes.plot(x, [flops / 1e12 for flops in roof], color="black", linewidth=2, label=f"roof ({fmt})")
    for model in models:
        for b in (batch, 64):
            r = roofline(model, device, "decode", Scenario(B=b, S=context))
            axes.scatter([r.intensity], [r.flops / r.step_seconds / 1e12], s=40,
                         label=f"{model.name}, decode B = {b}")
    axes.set_xscale("log")
    axes.set_yscale("log")
    _finish(plt, figure, axes, path)


def capacity_vs_context(models: list[Compiled], device, path: Path) -> None:
    """Requests that fit (B_max) against the context each holds (seed 002 §2.6.2)."""
    plt, figure, axes = _figure(f"Requests that fit on {device.name}", "context length H (positions)",
                                "max_batch")
    lengths = [2**k for k in range(10, 21)]
    for model in models:  # a model with no state per request has no memory bound: nothing to draw
        bounds = capacity_curve(model, device, lengths)
        if bounds is not None:
            axes.plot(lengths, bounds, marker="o", linewidth=2, label=model.name)
    axes.set_xscale("log", base=2)
    axes.set_xticks(lengths[::2], [_length(n) for n in lengths[::2]])
    _finish(plt, figure, axes, path)


def _length(n: int) -> str:
    for unit, scale in (("M", 2**20), ("K", 2**10)):
        if n >= scale:
            return f"{n // scale}{unit}"
    return str(n)


def _save(figure, path: Path) -> None:
    import matplotlib

    suffix = path.suffix.lower().lstrip(".")
    from ..outputs import atomic_write

    def save(target: Path) -> None:
        with matplotlib.rc_context({"svg.hashsalt": "archcost"}):  # fixed ids: the same figure, the same bytes
            metadata = {"Date": None} if suffix == "svg" else {}
            figure.savefig(target, format=suffix, metadata=metadata)

    atomic_write(path, save)
