"""Write the published-runs table of docs/training.md: each measured run of Korthikanti et al. 2022 (Table 5,
§6.3) predicted from its spec, layout and batch with one efficiency figure for its device.

The efficiency is the fraction of the peak the step's products reach: for each run it is the geometric mean
of the other runs' (leave one out), so no row is predicted from its own time. A run's implied efficiency is
its compute time at the peak, stretched by its pipeline bubble, over its measured time. Run after changing the
step's rules:

    .venv/bin/python tools/training_doc.py
"""

from __future__ import annotations

import math
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUTPUT = ROOT / "docs" / "training.md"
BEGIN, END = "<!-- runs: tools/training_doc.py -->", "<!-- end of runs -->"
EXAMPLE_BEGIN, EXAMPLE_END = "<!-- example: tools/training_doc.py -->", "<!-- end of example -->"
EXAMPLE = ["train", "specs/gpt-3-175b.arch", "--seq", "2048", "--global-batch", "64", "--layout", "tp=8,pp=8,sp,vp=3",
           "--recompute", "selective", "--dropout", "on", "--attention", "rectangle", "--device", "a100", "--link",
           "nvlink3", "--network", "ib_hdr", "--step-time", "13.75"]
# spec, layout, global batch, micro-batch, measured seconds per iteration, the paper's MFU (A100, s = 2,048,
# SP + selective recomputation, dropout on; interleaving m = 3 for 175B and 530B: §6; DP 1 but the last row)
RUNS = (
    ("megatron-22b", "tp=8", 4, 4, 1.10, 0.415),
    ("gpt-3-175b", "tp=8,pp=8,sp,vp=3", 64, 1, 13.75, 0.514),
    ("mt-nlg-530b", "tp=8,pp=35,sp,vp=3", 280, 1, 37.83, 0.560),
    ("megatron-1t", "tp=8,pp=64,sp", 512, 1, 71.49, 0.563),
    ("mt-nlg-530b", "tp=8,pp=35,dp=8,sp,vp=3", 2240, 1, 39.15, 0.542),
)


def reports():
    """Each run's step (bounds on A100s, NVLink 3 inside servers and HDR InfiniBand between them)."""
    sys.path.insert(0, str(ROOT))
    from archcost.compiler.cards.degrees import parse_layout
    from archcost.compiler.front.hardware import device, link
    from archcost.compiler.pipeline import compile_file
    from archcost.compiler.terms.scenario import Conventions
    from archcost.compiler.train.step import TrainSetup, train_report

    options = Conventions(logits="all", attention="rectangle")  # the papers count the full square of scores
    sheets = (device("a100"), link("nvlink3"), link("ib_hdr"))
    found = []
    for name, layout, batch, micro, seconds, _ in RUNS:
        setup = TrainSetup(seq=2048, global_batch=batch, micro_batch=micro, recompute="selective", dropout=True)
        found.append(train_report(compile_file(ROOT / "specs" / f"{name}.arch", options), parse_layout(layout),
                                  setup, sheets, step_time=seconds))
    return found


def predictions() -> list[dict]:
    """Per run: the efficiency the others imply, the step time and MFU it predicts, and the error."""
    found = reports()
    implied = [r.times.compute * (1 + r.times.bubble) / run[4] for r, run in zip(found, RUNS)]
    rows = []
    for index, (report, run) in enumerate(zip(found, RUNS)):
        others = implied[:index] + implied[index + 1:]
        efficiency = math.exp(sum(math.log(e) for e in others) / len(others))
        t = report.times
        predicted = max(t.compute / efficiency * (1 + t.bubble), t.communication)
        rows.append({"run": run, "report": report, "efficiency": efficiency, "predicted": predicted,
                     "mfu": report.times.mfu * run[4] / predicted, "error": predicted / run[4] - 1})
    return rows


def table() -> str:
    lines = ["| model | layout | batch | micro | measured s | MFU (paper) | MFU (archcost at measured s) | "
             "efficiency (others) | predicted s | predicted MFU | error |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    for row in predictions():
        name, layout, batch, micro, seconds, mfu = row["run"]
        report = row["report"]
        lines.append(f"| {report.model} | `{layout}` | {batch:,} | {micro} | {seconds} | {mfu:.1%} | "
                     f"{report.times.mfu:.1%} | {row['efficiency']:.3f} | {row['predicted']:.2f} | "
                     f"{row['mfu']:.1%} | {row['error']:+.1%} |")
    return "\n".join(lines) + "\n"


def example() -> str:
    """The worked example: the command and what it prints."""
    import contextlib
    import io
    import os

    sys.path.insert(0, str(ROOT))
    from archcost.compiler.cli import main

    out, here = io.StringIO(), os.getcwd()
    os.chdir(ROOT)
    try:
        with contextlib.redirect_stdout(out):
            main(EXAMPLE)
    finally:
        os.chdir(here)
    return f"```\n$ archcost {' '.join(EXAMPLE)}\n{out.getvalue()}```\n"


def _between(text: str, begin: str, end: str, body: str) -> str:
    head, rest = text.split(begin, 1)
    _, tail = rest.split(end, 1)
    return f"{head}{begin}\n{body}{end}{tail}"


def write() -> None:
    text = _between(OUTPUT.read_text(), BEGIN, END, table())
    OUTPUT.write_text(_between(text, EXAMPLE_BEGIN, EXAMPLE_END, example()))


if __name__ == "__main__":
    write()
    print(f"wrote {OUTPUT.relative_to(ROOT)}")
