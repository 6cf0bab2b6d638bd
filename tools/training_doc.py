"""Write the published-runs table of docs/training.md: each measured run of Korthikanti et al. 2022 (Table 5,
§6.3, A100) and of Llama 3 (Table 4, H100) predicted from its spec, layout and batch with one efficiency
figure for its device; beside it, the expected step archcost derives from kernel-level measurements alone
(stdlib/efficiency), which no run of this table informs.

The efficiency is the fraction of the peak the step's products reach: for each run it is the geometric mean
of the other runs' on the same device (leave one out), so no row is predicted from its own time. A run's
implied efficiency is its compute time at the peak, stretched by its pipeline bubble, over its measured time.
Run after changing the step's rules:

    .venv/bin/python tools/training_doc.py
"""

from __future__ import annotations

import math
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUTPUT = ROOT / "docs" / "training.md"
BEGIN, END = "<!-- runs: tools/training_doc.py -->", "<!-- end of runs -->"
EXAMPLE_BEGIN, EXAMPLE_END = "<!-- example: tools/training_doc.py -->", "<!-- end of example -->"
EXAMPLE = ["train", "specs/gpt-3-175b.arch", "--seq", "2048", "--global-batch", "64", "--layout", "tp=8,pp=8,sp,vp=3",
           "--recompute", "selective", "--dropout", "on", "--attention", "rectangle", "--attention-kernel", "eager",
           "--device", "a100", "--link",
           "nvlink3", "--network", "ib_hdr", "--step-time", "13.75"]


@dataclass(frozen=True)
class Run:
    """One published run: spec, layout, batch, what it was measured at, and the device it ran on."""

    spec: str
    layout: str
    batch: int
    micro: int
    seq: int
    measured: tuple[str, float]   # ("s", seconds per iteration) or ("tflops", model TFLOP/s per card)
    mfu: float                     # the paper's
    device: tuple[str, str, str]   # device, link inside a server, network between servers
    recompute: str = "selective"
    zero: int = 0
    dropout: bool = True
    kernel: str = "eager"          # Megatron's fused softmax before FlashAttention; Llama 3's runs: flash


A100 = ("a100", "nvlink3", "ib_hdr")      # Selene: 8 × A100 80 GB a server, HDR InfiniBand
H100 = ("h100-sxm", "nvlink4", "roce_400g")  # Grand Teton: 8 × H100 a server, RoCE 400 Gb/s
RUNS = (
    # Korthikanti et al. 2022 Table 5 (and §6.3, DP 8): s = 2,048, SP + selective recomputation, dropout on;
    # interleaving m = 3 for 175B and 530B (§6)
    Run("megatron-22b", "tp=8", 4, 4, 2048, ("s", 1.10), 0.415, A100),
    Run("gpt-3-175b", "tp=8,pp=8,sp,vp=3", 64, 1, 2048, ("s", 13.75), 0.514, A100),
    Run("mt-nlg-530b", "tp=8,pp=35,sp,vp=3", 280, 1, 2048, ("s", 37.83), 0.560, A100),
    Run("megatron-1t", "tp=8,pp=64,sp", 512, 1, 2048, ("s", 71.49), 0.563, A100),
    Run("mt-nlg-530b", "tp=8,pp=35,dp=8,sp,vp=3", 2240, 1, 2048, ("s", 39.15), 0.542, A100),
    # Llama 3 Table 4 (arXiv 2407.21783 §3.3.2): 405B, TP 8, PP 16 with one layer fewer on the first and last
    # stage, no activation checkpointing, FSDP sharding gradients and optimizer states (ZeRO 2); the batch is
    # "Batch size/DP" sequences per replica; the micro-batch is not given (1 here); the third row's DP is 8
    # (16,384 / (8 · 16 · 16): the printed 4 does not multiply out)
    Run("llama-3.1-405b", "tp=8,pp=16,dp=64,first=7,last=7", 64 * 32, 1, 8192, ("tflops", 430), 0.43, H100,
        recompute="none", zero=2, dropout=False, kernel="flash"),
    Run("llama-3.1-405b", "tp=8,pp=16,dp=128,first=7,last=7", 128 * 16, 1, 8192, ("tflops", 400), 0.41, H100,
        recompute="none", zero=2, dropout=False, kernel="flash"),
    Run("llama-3.1-405b", "tp=8,cp=16,pp=16,dp=8,first=7,last=7", 8 * 16, 1, 131_072, ("tflops", 380), 0.38, H100,
        recompute="none", zero=2, dropout=False, kernel="flash"),
)


def reports():
    """Each run's step, with its bounds, at its measured step time."""
    sys.path.insert(0, str(ROOT))
    from archcost.compiler.cards.degrees import parse_layout
    from archcost.compiler.cards.expected import table_for
    from archcost.compiler.compilation import compile_file
    from archcost.compiler.front.hardware import device, link
    from archcost.compiler.terms.scenario import Conventions
    from archcost.compiler.train.step import TrainSetup, train_report

    options = Conventions(logits="all", attention="rectangle")  # PaLM's MFU counts the full square of scores
    found, models = [], {}
    for run in RUNS:
        if run.spec not in models:
            models[run.spec] = compile_file(ROOT / "specs" / f"{run.spec}.arch", options)
        layout = parse_layout(run.layout)
        setup = TrainSetup(seq=run.seq, global_batch=run.batch, micro_batch=run.micro, recompute=run.recompute,
                           zero=run.zero, dropout=run.dropout, attention_kernel=run.kernel)
        sheets = (device(run.device[0]), link(run.device[1]), link(run.device[2]))
        plain = train_report(models[run.spec], layout, setup)
        found.append(train_report(models[run.spec], layout, setup, sheets, step_time=seconds(run, plain),
                                  table=table_for(sheets[0])))
    return found


def seconds(run: Run, report) -> float:
    """The measured step time; from a throughput, the step's model FLOPs over every card's TFLOP/s."""
    kind, value = run.measured
    return value if kind == "s" else report.model_flops / (report.layout.cards * value * 1e12)


def predictions() -> list[dict]:
    """Per run: the efficiency its device's other runs imply, the step time and MFU it predicts, the error."""
    found = reports()
    implied = [r.times.compute * (1 + r.times.bubble) / r.times.step_time for r in found]
    rows = []
    for index, (report, run) in enumerate(zip(found, RUNS)):
        others = [e for j, e in enumerate(implied) if j != index and RUNS[j].device == run.device]
        efficiency = math.exp(sum(math.log(e) for e in others) / len(others))
        t = report.times
        predicted = max(t.compute / efficiency * (1 + t.bubble), t.communication)
        rows.append({"run": run, "report": report, "efficiency": efficiency, "predicted": predicted,
                     "mfu": t.mfu * t.step_time / predicted, "error": predicted / t.step_time - 1})
    return rows


def table() -> str:
    lines = ["| model | device | layout | batch × seq | measured | step s | MFU (paper) | MFU (archcost at the "
             "step) | efficiency (others) | predicted s | predicted MFU | error | expected s (kernel tables) | "
             "its error |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for row in predictions():
        run, report, t = row["run"], row["report"], row["report"].times
        measured = f"{run.measured[1]} s" if run.measured[0] == "s" else f"{run.measured[1]:g} TFLOP/s a card"
        lines.append(f"| {report.model} | {t.device} | `{run.layout}` | {run.batch:,} × {run.seq:,} | {measured} | "
                     f"{t.step_time:.2f} | {run.mfu:.1%} | {t.mfu:.1%} | {row['efficiency']:.3f} | "
                     f"{row['predicted']:.2f} | {row['mfu']:.1%} | {row['error']:+.1%} | {t.expected:.2f} | "
                     f"{t.expected / t.step_time - 1:+.1%} |")
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
