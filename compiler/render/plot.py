"""Figures a person would rather look at than read, drawn with matplotlib (PNG or SVG)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ..pipeline import Compiled
from ..state import profile, state_curve
from ..symbols import H

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
        curve = state_curve(model)
        colour = f"C{index}"
        sizes = [int(curve.xreplace({H: int(n)})) / MiB for n in lengths]
        axes.plot(lengths, sizes, color=colour, linewidth=2, label=model.name)
        fixed = profile(model, []).fixed_bytes / MiB
        if fixed:
            axes.axhline(fixed, color=colour, linestyle="--", linewidth=1, alpha=0.7)
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


def _length(n: int) -> str:
    for unit, scale in (("M", 2**20), ("K", 2**10)):
        if n >= scale:
            return f"{n // scale}{unit}"
    return str(n)


def _save(figure, path: Path) -> None:
    import matplotlib

    suffix = path.suffix.lower().lstrip(".")
    with matplotlib.rc_context({"svg.hashsalt": "archcost"}):  # fixed ids: the same figure, the same bytes
        metadata = {"Date": None} if suffix == "svg" else {}
        figure.savefig(path, format=suffix, metadata=metadata)
