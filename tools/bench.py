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


def process(*argv: str, env: dict | None = None) -> None:
    subprocess.run([sys.executable, "-m", "archcost.compiler.cli", *argv], check=True, capture_output=True,
                   env=env)


def main() -> None:
    import os
    import tempfile

    cache = tempfile.mkdtemp(prefix="archcost-bench-")
    os.environ["XDG_CACHE_HOME"] = cache
    whole_processes({**os.environ})
    in_process()
    sweeps()
    hostile_limits()


def floor() -> None:
    subprocess.run([sys.executable, "-c", "import sympy, networkx, lark, pydantic"], check=True)


def paired(action, repeats: int, against=floor) -> tuple[float, float]:
    """(median seconds, median ratio): each run of `action` timed right after a run of `against` (the import
    floor), so both see the same load on the machine."""
    seconds, ratios = [], []
    for _ in range(repeats):
        base = median_seconds(against, 1)
        seconds.append(median_seconds(action, 1))
        ratios.append(seconds[-1] / base)
    return statistics.median(seconds), statistics.median(ratios)


def whole_processes(env: dict) -> None:
    """Whole `archcost` processes as ratios of the import floor `python -c "import sympy, networkx, lark,
    pydantic"`, measured in pairs in the same run."""
    spec = ["eval", str(SPEC), "--phase", "prefill", "--P", "8192", "--json"]
    chapter = ["compare", "--table", "chapter", *(str(ROOT / "specs" / f"{name}.arch") for name in CHAPTER)]
    cold_eval = lambda: process(*spec, "--no-cache", env=env)  # noqa: E731
    print(f"import floor (sympy, networkx, lark, pydantic):       {median_seconds(floor, 5):.3f} s")
    rows = [("eval Qwen3-8B, cold (no formula cache)", cold_eval, floor),
            ("eval Qwen3-8B, cold, no grammar cache either",
             lambda: process(*spec, "--no-cache", env={**env, "ARCHCOST_NO_CACHE": "1"}), floor)]
    for label, action, against in rows:
        seconds, ratio = paired(action, 9, against)
        print(f"{label + ':':<53}{seconds:.3f} s = {ratio:.2f} × the floor")
    process(*spec, env=env)  # the formula cache now holds the spec
    seconds, ratio = paired(lambda: process(*spec, env=env), 9)
    print(f"{'eval Qwen3-8B, warm (formula cache hit):':<53}{seconds:.3f} s = {ratio:.2f} × the floor")
    seconds, ratio = paired(lambda: process(*chapter, "--no-cache", env=env), 3, cold_eval)
    print(f"{'compare --table chapter, five models, cold:':<53}{seconds:.3f} s = {ratio:.2f} × one cold eval")
    process(*chapter, env=env)
    seconds, ratio = paired(lambda: process(*chapter, env=env), 5, cold_eval)
    print(f"{'compare --table chapter, five models, warm:':<53}{seconds:.3f} s = {ratio:.2f} × one cold eval")


def in_process() -> None:
    from archcost.compiler.numbers.evaluate import evaluate
    from archcost.compiler.pipeline import compile_file
    from archcost.compiler.terms.scenario import Scenario
    from archcost.dsl.parser import _parser

    _parser()  # the grammar tables are built once per process, like an import
    for name in ("qwen3-8b", "deepseek-v4.1-flash"):
        compiled = compile_file(ROOT / "specs" / f"{name}.arch")
        evaluate(compiled, "prefill", Scenario(P=100))  # closed forms and evaluators built once
        shapes = iter(range(10**9))
        one_report = median_seconds(lambda compiled=compiled, shapes=shapes: evaluate(
            compiled, "prefill", Scenario(P=1000 + next(shapes))), 500)
        print(f"one exact scenario, every quantity, {name + ':':<20}{one_report * 1e6:9.0f} µs")
    flash = compile_file(ROOT / "specs" / "deepseek-v4-flash.arch")
    evaluate(flash, "request", Scenario(P=128, G=4))
    request = median_seconds(lambda: evaluate(flash, "request", Scenario(P=1000, G=1_000_000)), 7)
    print(f"DeepSeek V4-Flash request, G = 1,000,000 (compiled):  {request * 1e3:.1f} ms")
    print(f"compile + evaluate Qwen3-8B, prefill (in-process):   "
          f"{median_seconds(lambda: evaluate(compile_file(SPEC), 'prefill', Scenario(P=8192)), 20) * 1e3:.1f} ms")
    print(f"compile + evaluate DeepSeek V4.1 Flash, decode:      "
          f"{median_seconds(lambda: evaluate(compile_file(V41), 'decode', Scenario(S=8191)), 5) * 1e3:.0f} ms")


SWEEP = """
import resource, sys, time
from pathlib import Path
from archcost.compiler.pipeline import compile_file
from archcost.compiler.serving.sweep import write
model = compile_file(sys.argv[1])
start = time.perf_counter()
write(model, "decode", {"B": range(1, 101), "S": range(0, 1_000_000, 100), "P": [1], "G": [1]}, Path(sys.argv[2]))
print(time.perf_counter() - start, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
"""


def sweeps() -> None:
    """A 1,000,000-point sweep written to CSV and to JSON, each in a process of its own (peak memory)."""
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        for suffix in ("csv", "json"):
            runs = []
            for _ in range(3):
                done = subprocess.run([sys.executable, "-c", SWEEP, str(SPEC), f"{folder}/grid.{suffix}"],
                                      check=True, capture_output=True, text=True)
                seconds, peak_kib = done.stdout.split()
                runs.append((float(seconds), int(peak_kib)))
            seconds = statistics.median(r[0] for r in runs)
            peak = max(r[1] for r in runs) / 1024
            print(f"sweep of 1,000,000 points to {suffix.upper():<4}, file written:    {seconds:.2f} s, "
                  f"peak {peak:,.0f} MB (whole process)")


V41 = ROOT / "specs" / "deepseek-v4.1-flash.arch"
CHAPTER = ("deepseek-v4.1-flash", "qwen3-8b", "qwen3.6-35b-a3b", "deepseek-v4-flash", "kimi-k3")
SMALL = 'model "Small" {\n  lookup embed: 1000 -> 64\n}\n'


def hostile_limits() -> None:
    """How long each limit takes to refuse its hostile input (issue 8: each well under a second)."""
    import tempfile

    from archcost.compiler.numbers.evaluate import evaluate
    from archcost.compiler.pipeline import compile_file, compile_text
    from archcost.compiler.terms.scenario import Scenario
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
        tall = (
            'model "Tall" {\n  lookup embed: 1000 -> 64\n  repeat 10^12 as layers {\n    linear up: 64 -> 64\n  }\n}\n'
        )
        cases = [
            ("10.9 MB spec (E106)", refused(lambda: compile_file(huge), "E106")),
            ("expression nested 10,000 deep (E106)", refused(lambda: compile_text(deep), "E106")),
            ("1,000-file `use` chain (E106 at depth 64)", refused(lambda: compile_file(root / "chain.arch"), "E106")),
            ("`repeat 10^12`, compiled and evaluated", lambda: evaluate(compile_text(tall), "decode", Scenario())),
        ]
        for label, action in cases:
            print(f"limit: {label:<45} {median_seconds(action, 5) * 1e3:8.1f} ms")


if __name__ == "__main__":
    main()
