"""Benchmarks: compile + evaluate in-process, one scenario of a compiled model, the whole `archcost` process as
a ratio of the import floor (`python -c "import sympy, networkx, lark, pydantic"`) measured in the same run.

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

    from archcost.compiler.sweep import evaluator, sweep

    model = compile_file(SPEC)
    one = evaluator(model, "decode")

    def single_scenario():
        one(8, 8192, 1, 1)

    def million_points():
        sweep(model, "decode", {"B": list(range(1, 101)), "S": list(range(0, 1_000_000, 100)), "P": [1], "G": [1]})

    floor = median_seconds(lambda: subprocess.run([sys.executable, "-c", "import sympy, networkx, lark, pydantic"],
                                                  check=True), 7)
    cold = median_seconds(process, 7)
    chapter = median_seconds(lambda: subprocess.run(
        [sys.executable, "-m", "archcost.compiler.cli", "compare", "--table", "chapter",
         *(str(ROOT / "specs" / f"{name}.arch") for name in CHAPTER)], check=True, capture_output=True), 3)
    print(f"import floor (sympy, networkx, lark, pydantic):    {floor:.3f} s")
    print(f"archcost eval Qwen3-8B --json, whole process:      {cold:.3f} s = {cold / floor:.2f} × the floor")
    print(f"compare --table chapter, five models:              {chapter:.3f} s = {chapter / cold:.2f} × one eval")
    for name in ("qwen3-8b", "deepseek-v4.1-flash"):
        compiled = compile_file(ROOT / "specs" / f"{name}.arch")
        evaluate(compiled, "prefill", Scenario(P=100))  # closed forms and evaluators built once
        shapes = iter(range(10**9))
        one_report = median_seconds(lambda: evaluate(compiled, "prefill", Scenario(P=1000 + next(shapes))), 200)
        print(f"one exact scenario, every quantity, {name + ':':<20}{one_report * 1e6:9.0f} µs")
    print(f"compile + evaluate Qwen3-8B, prefill (in-process): {median_seconds(compile_and_evaluate, 20) * 1e3:.1f} ms")
    print(f"one scenario, compiled spec (6 quantities):        {median_seconds(single_scenario, 2000) * 1e6:.1f} µs")
    print(f"sweep of 1,000,000 (B, S) points:                  {median_seconds(million_points, 3):.2f} s")
    print(f"compile + evaluate Qwen3-8B, request G=1025:      {median_seconds(request, 10) * 1e3:.1f} ms")
    print(f"compile + evaluate DeepSeek V4.1 Flash, decode:    "
          f"{median_seconds(lambda: evaluate(compile_file(V41), 'decode', Scenario(S=8191)), 5) * 1e3:.0f} ms")
    hostile_limits()


V41 = ROOT / "specs" / "deepseek-v4.1-flash.arch"
CHAPTER = ("deepseek-v4.1-flash", "qwen3-8b", "qwen3.6-35b-a3b", "deepseek-v4-flash", "kimi-k3")
SMALL = 'model "Small" {\n  lookup embed: 1000 -> 64\n}\n'


def hostile_limits() -> None:
    """How long each limit takes to refuse its hostile input (issue 8: each well under a second)."""
    import tempfile

    from archcost.compiler.evaluate import evaluate
    from archcost.compiler.pipeline import compile_file, compile_text
    from archcost.compiler.scenario import Scenario
    from archcost.dsl.errors import ArchError

    def refused(action, code: str):
        def run():
            try:
                action()
            except ArchError as error:
                assert error.codes == [code], error.codes
                return
            raise AssertionError("accepted")
        return run

    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        huge = root / "huge.arch"
        huge.write_text(SMALL + "# padding\n" * 1_100_000)  # 10.9 MB
        for index in range(1_000):
            (root / f"f{index}.arch").write_text(f'use "f{index + 1}.arch"\n' if index < 999 else "")
        (root / "chain.arch").write_text('use "f0.arch"\n' + SMALL)
        deep = 'model "Deep" {\n  d = ' + "(" * 10_000 + "64" + ")" * 10_000 + "\n}\n"
        tall = 'model "Tall" {\n  lookup embed: 1000 -> 64\n  repeat 10^12 as layers {\n    linear up: 64 -> 64\n  }\n}\n'
        cases = [("10.9 MB spec (E106)", refused(lambda: compile_file(huge), "E106")),
                 ("expression nested 10,000 deep (E106)", refused(lambda: compile_text(deep), "E106")),
                 ("1,000-file `use` chain (E106 at depth 64)", refused(lambda: compile_file(root / "chain.arch"), "E106")),
                 ("`repeat 10^12`, compiled and evaluated", lambda: evaluate(compile_text(tall), "decode", Scenario()))]
        for label, action in cases:
            print(f"limit: {label:<45} {median_seconds(action, 5) * 1e3:8.1f} ms")


if __name__ == "__main__":
    main()
