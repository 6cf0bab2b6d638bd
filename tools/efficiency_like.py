"""Write a device's efficiency table from AIConfigurator's measurements of the kernels a shipped table holds.

The B200's table (stdlib/efficiency/b200.toml) holds single-kernel points read from AIConfigurator's per-GPU
tables: each point's source names the parquet file and the row (its column values) it was read from.
AIConfigurator measured the same kernels, at the same shapes, on other systems (GB200, GB300, B300: the same
TRT-LLM, NCCL and MoE tables under their own system folder, at the commit the B200 table cites). This tool
writes a table for such a system point by point: the same row of the same file in the system's folder, its
measured latency, its own source. A point whose row the system's file does not hold, or holds twice, is left
out and listed. The sweeps after the points (tools/gemm_sweeps.py) are written by that tool.

Nothing here is fitted: each latency is one measured row, and archcost derives the point's efficiency from
it as it does for every table (compiler/timing/fractions.py).

Run (needs pandas and pyarrow, and AIConfigurator fetched):
    python tools/efficiency_like.py /path/to/aiconfigurator [--check]
It writes (or with --check only compares) every table of TABLES; run tools/gemm_sweeps.py after it.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

from gemm_sweeps import COMMIT, _table, rewrite  # tools/: the AIConfigurator commit, its tables, the rewrite

ROOT = Path(__file__).resolve().parents[1]
EFFICIENCY = ROOT / "stdlib" / "efficiency"
REFERENCE = ("b200", "b200_sxm")  # the table whose points are read again, and its AIConfigurator system
# table file → (AIConfigurator system, the device as its table names it, how the header names the device)
TABLES = {"gb200": ("gb200", "gb200", "the GB200 (one GPU of a GB200 NVL72)"),
          "gb300": ("gb300", "gb300", "the GB300 (one GPU of a GB300 NVL72)"),
          "b300": ("b300_sxm", "b300", "the B300 (HGX)")}
BEGIN = "# --- GEMM sweeps (tools/gemm_sweeps.py)"
SOURCE = re.compile(r'^source = "(?P<repo>ai-dynamo/aiconfigurator)@(?P<commit>[0-9a-f]{40}) (?P<path>\S+) '
                    r'\(row (?P<row>.*); (?P<unit>latency[^;"]*)\)"$', re.M)
LATENCY = re.compile(r"^latency_us = (?P<value>[0-9.e+-]+)$", re.M)


def header(system_words: str, device: str) -> str:
    return (f"# Achieved throughput of single kernels on {system_words}, as published: each point is one\n"
            "# measured kernel (a GEMM, an expert GEMM, an attention call, a collective) with its shape and its\n"
            "# measured time, and the source it was read from. archcost derives each point's efficiency (the\n"
            "# kernel's own roofline time over its measured time, compiler/timing/fractions.py) and interpolates\n"
            "# between points by shape. No point comes from an end-to-end run: those only validate\n"
            "# (docs/validation.md). Written by tools/efficiency_like.py: the kernels and shapes of b200.toml,\n"
            f"# each read from AIConfigurator's measurements on this system; every source names its\n"
            f"# repository, commit, file and row.\n"
            f'device = "{device}"\n')


def filters(row: str) -> dict[str, str]:
    """The column values a source's row names (`a=1 b=bfloat16 c=7 (a note; more)`), its notes left out."""
    plain = re.sub(r"\([^()]*\)", "", row)
    return dict(part.split("=", 1) for part in plain.split() if "=" in part)


def matches(frame, wanted: dict[str, str]):
    """The rows of `frame` whose every named column holds the named value (numbers compared as numbers)."""
    import pandas as pd

    keep = pd.Series(True, index=frame.index)
    for column, value in wanted.items():
        if column not in frame.columns:
            return frame.iloc[0:0]
        if pd.api.types.is_numeric_dtype(frame[column]) and not pd.api.types.is_bool_dtype(frame[column]):
            keep &= frame[column].astype(float) == float(value)
        else:
            keep &= frame[column].astype(str) == value
    return frame[keep]


def latency_text(milliseconds: float) -> str:
    """A latency in µs to four significant digits, as the shipped tables print them."""
    return repr(float(f"{milliseconds * 1000:.4g}"))


def written(repo: Path, table: str) -> tuple[str, list[str]]:
    """The table's text (its points, before the sweeps) and the reference points it had to leave out."""
    system, device, words = TABLES[table]
    reference = (EFFICIENCY / f"{REFERENCE[0]}.toml").read_text(encoding="utf-8").split(BEGIN)[0]
    blocks = re.split(r"\n(?=\[\[)", reference)[1:]
    frames: dict[str, object] = {}
    out, missed = [header(words, device)], []
    for block in blocks:
        block = block.rstrip("\n")
        source = SOURCE.search(block)
        if source is None or source["commit"] != COMMIT:
            raise SystemExit(f"a point of {REFERENCE[0]}.toml without an AIConfigurator row:\n{block}")
        path = source["path"].replace(f"/data/{REFERENCE[1]}/", f"/data/{system}/")
        if path not in frames:
            frames[path] = _table(repo, path, missing_ok=True)
        wanted = filters(source["row"])
        found = None if frames[path] is None else matches(frames[path], wanted)
        row, text = source["row"], block
        if found is not None and found.empty and "num_gpus" in wanted:
            found, row, text = _fewer_gpus(frames[path], wanted, row, text)
        if found is None or len(found) != 1:
            missed.append(f"{path} ({source['row']}): {0 if found is None else len(found)} rows")
            continue
        text = LATENCY.sub(f"latency_us = {latency_text(float(found.latency.iloc[0]))}", text)
        out.append(text.replace(source["row"], row).replace(source["path"], path))
    return "\n\n".join(out) + "\n\n", missed


def _fewer_gpus(frame, wanted: dict[str, str], row: str, text: str):
    """A collective the system measured on fewer GPUs than the reference point's (a GB200 compute tray holds 4):
    the same collective and message at the most GPUs measured below, the point's `ranks` saying so."""
    counts = sorted({int(n) for n in frame.num_gpus if int(n) < int(wanted["num_gpus"])})
    if not counts:
        return frame.iloc[0:0], row, text
    fewer = str(counts[-1])
    found = matches(frame, {**wanted, "num_gpus": fewer})
    return (found, row.replace(f"num_gpus={wanted['num_gpus']}", f"num_gpus={fewer}"),
            re.sub(r"^ranks = \d+$", f"ranks = {fewer}", text, flags=re.M))


def main(argv: list[str]) -> int:
    repo, texts = Path(argv[0]), {}
    for table in TABLES:
        path = EFFICIENCY / f"{table}.toml"
        points, missed = written(repo, table)
        old = path.read_text(encoding="utf-8") if path.exists() else ""
        texts[path] = points + (BEGIN + old.split(BEGIN, 1)[1] if BEGIN in old else "")
        for line in missed:
            print(f"{table}: left out, {line}")
    return rewrite(texts, "--check" in argv)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
