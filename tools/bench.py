"""Benchmarks: compile + evaluate in-process, and the whole `archcost eval --json` process.

Run: .venv/bin/python tools/bench.py   (figures go in closing notes, never into test asserts)
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SPEC = ROOT / "specs" / "qwen3-8b.arch"


def median_seconds(action, repeats: int) -> float:
    samples = []
    for _ in range(repeats):
        start = time.perf_counter()
        action()
        samples.append(time.perf_counter() - start)
    return statistics.median(samples)


def main() -> None:
    from archcost.compiler.evaluate import evaluate
    from archcost.compiler.pipeline import compile_file
    from archcost.compiler.scenario import Scenario
    from archcost.dsl.parser import _parser

    _parser()  # the grammar tables are built once per process, like an import

    def compile_and_evaluate():
        evaluate(compile_file(SPEC), "prefill", Scenario(P=8192))

    def request():
        evaluate(compile_file(SPEC), "request", Scenario(P=8192, G=1025))

    def process():
        subprocess.run([sys.executable, "-m", "archcost.compiler.cli", "eval", str(SPEC), "--phase", "prefill",
                        "--P", "8192", "--json"], check=True, capture_output=True)

    print(f"compile + evaluate Qwen3-8B, prefill (in-process): {median_seconds(compile_and_evaluate, 20) * 1e3:.1f} ms")
    print(f"compile + evaluate Qwen3-8B, request G=1025:      {median_seconds(request, 10) * 1e3:.1f} ms")
    print(f"archcost eval --json (whole process):              {median_seconds(process, 7):.2f} s")


if __name__ == "__main__":
    main()
