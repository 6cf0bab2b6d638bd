"""Print how long the functions and files of compiler/ and dsl/ are: median, p90 and max, and any over the limits.

The limits (functions ≤ 40 lines, files ≤ 300) keep each piece readable on one screen; tests/test_design.py
holds the code to them.

    .venv/bin/python tools/code_size.py
"""

from __future__ import annotations

import ast
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("compiler", "dsl")
MAX_FUNCTION_LINES = 40
MAX_FILE_LINES = 300


def sources() -> list[Path]:
    return sorted(p for package in PACKAGES for p in (ROOT / package).rglob("*.py"))


def file_lines(path: Path) -> int:
    return path.read_text().count("\n")


def functions(path: Path) -> list[tuple[str, int]]:
    """(qualified place, lines) of every function and method in a file."""
    tree = ast.parse(path.read_text())
    return [(f"{path.relative_to(ROOT)}:{node.lineno} {node.name}", node.end_lineno - node.lineno + 1)
            for node in ast.walk(tree) if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))]


def distribution(values: list[int]) -> dict[str, float]:
    ordered = sorted(values)
    return {"count": len(ordered), "median": statistics.median(ordered),
            "p90": ordered[min(len(ordered) - 1, int(0.9 * len(ordered)))], "max": ordered[-1]}


def too_long() -> list[str]:
    """Every function and file over its limit."""
    over = [f"{place} ({n} lines)" for path in sources() for place, n in functions(path) if n > MAX_FUNCTION_LINES]
    return over + [
        f"{p.relative_to(ROOT)} ({file_lines(p)} lines)" for p in sources() if file_lines(p) > MAX_FILE_LINES
    ]


def report() -> str:
    function_sizes = [n for path in sources() for _, n in functions(path)]
    lines = []
    for what, values, limit in (("function", function_sizes, MAX_FUNCTION_LINES),
                                ("file", [file_lines(p) for p in sources()], MAX_FILE_LINES)):
        d = distribution(values)
        lines.append(f"{what} lines in {', '.join(PACKAGES)}: {d['count']} {what}s, median {d['median']:g}, "
                     f"p90 {d['p90']}, max {d['max']} (limit {limit})")
    return "\n".join(lines + [f"over the limit: {place}" for place in too_long()]) + "\n"


if __name__ == "__main__":
    print(report(), end="")
    sys.exit(1 if too_long() else 0)
