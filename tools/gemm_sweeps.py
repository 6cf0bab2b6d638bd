"""Append AIConfigurator's measured GEMM sweeps to stdlib/efficiency: the shapes a tensor-parallel card runs.

A card of TP t runs its layer's products at 1/t of their widths (a column-parallel linear's n, a row-parallel
one's k), and a GEMM's achieved fraction depends strongly on n and k (an FP8 GEMM of 8,192 rows on the H100
reaches 0.24 of its peak at n = 1,024, k = 4,096 and 0.66 at n = 16,384). The shipped tables held six (n, k)
pairs; this tool adds the 5 × 5 grid n, k ∈ {1,024 … 16,384} (the pairs already there skipped), each (n, k) a
sweep along m, read from AIConfigurator's collected per-GPU tables at the commit the tables already cite
(kernel-level CUDA-graph timings of one TRT-LLM Linear: docs/research/kernel-measurements.md, source 1). It
also adds the MoE table's sweeps along the tokens for every expert shape measured there (the shipped tables
held two): a model's grouped GEMMs are read at the nearest measured (hidden, inter, experts). A point
measured faster than the card's memory can stream its weights (read back from L2: the L40S's 96 MB) is left
out of its sweep (_from_cache).

Run (needs pandas and pyarrow, and AIConfigurator fetched):
    python tools/gemm_sweeps.py /path/to/aiconfigurator [--check]
It rewrites the block between the sweep markers of each table; --check only compares.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
COMMIT = "095f58a51c4ca8e61b66ec108d86f223f8d559ce"
# table file → (AIConfigurator system, TRT-LLM version of its collected GEMM table, formats: ours → its dtype)
TABLES = {"h100_sxm": ("h100_sxm", "1.3.0rc20", {"bf16": "bfloat16", "fp8": "fp8"}),
          "h200": ("h200_sxm", "1.3.0rc20", {"bf16": "bfloat16", "fp8": "fp8"}),
          "b200": ("b200_sxm", "1.3.0rc20", {"bf16": "bfloat16", "fp8": "fp8", "fp4": "nvfp4"}),
          "gb200": ("gb200", "1.3.0rc20", {"bf16": "bfloat16", "fp8": "fp8", "fp4": "nvfp4"}),
          "gb300": ("gb300", "1.3.0rc20", {"bf16": "bfloat16", "fp8": "fp8", "fp4": "nvfp4"}),
          "b300": ("b300_sxm", "1.3.0rc20", {"bf16": "bfloat16", "fp8": "fp8", "fp4": "nvfp4"}),
          "a100": ("a100_sxm", "1.0.0", {"bf16": "bfloat16"}),
          "l40s": ("l40s", "1.3.0rc20", {"bf16": "bfloat16", "fp8": "fp8"})}
# table file → (AIConfigurator system, formats) of its MoE sweeps (TRT-LLM 1.3.0rc20's; the A100 has none)
MOE = {"h100_sxm": ("h100_sxm", {"bf16": "bfloat16", "fp8": "fp8"}),
       "h200": ("h200_sxm", {"bf16": "bfloat16", "fp8": "fp8"}),
       # Blackwell's FP4: NVFP4 (an FP8 scale per 16 values), the products in FP4 (fractions.BYTES)
       "b200": ("b200_sxm", {"bf16": "bfloat16", "fp8": "fp8", "fp4": "nvfp4"}),
       "gb200": ("gb200", {"bf16": "bfloat16", "fp8": "fp8", "fp4": "nvfp4"}),
       "gb300": ("gb300", {"bf16": "bfloat16", "fp8": "fp8", "fp4": "nvfp4"}),
       "b300": ("b300_sxm", {"bf16": "bfloat16", "fp8": "fp8", "fp4": "nvfp4"})}
WIDTHS = (1024, 2048, 4096, 8192, 16384)
ROWS = tuple(2**e for e in range(15))  # 1 … 16,384 rows, as the shipped points are spaced
BEGIN = "# --- GEMM sweeps (tools/gemm_sweeps.py): the (n, k) grid a tensor-parallel card's products run at ---"
END = "# --- end of GEMM sweeps ---"


def sweeps(repo: Path, table: str, existing: set) -> str:
    from archcost.compiler.front.hardware import device

    system, version, formats = TABLES[table]
    path = f"aic-core/src/aiconfigurator_core/systems/data/{system}/gemm/trtllm/{version}/gemm_perf.parquet"
    frame = _table(repo, path)
    sheet = device(table)
    out = [BEGIN]
    for fmt, dtype in formats.items():
        rows = frame[frame.gemm_dtype == dtype]
        for n in WIDTHS:
            for k in WIDTHS:
                if (fmt, n, k) in existing:
                    continue
                found = rows[(rows.n == n) & (rows.k == k) & rows.m.isin(ROWS)].sort_values("m")
                found = found[[not _from_cache(sheet, fmt, m, n, k, t) for m, t in zip(found.m, found.latency)]]
                if found.empty or found.m.duplicated().any():
                    continue
                ms = ", ".join(str(int(m)) for m in found.m)
                times = ", ".join(f"{float(t) * 1000:.2f}" for t in found.latency)
                out += ["", "[[gemm]]", f'format = "{fmt}"', f"m = [{ms}]", f"n = {n}", f"k = {k}",
                        f"latency_us = [{times}]",
                        f'source = "ai-dynamo/aiconfigurator@{COMMIT} {path} (rows gemm_dtype={dtype} n={n} k={k}, '
                        f'one a listed m; latency column in ms)"']
    out += grouped_sweeps(repo, table, existing)
    return "\n".join(out + ["", END, ""])


def _from_cache(sheet, fmt: str, m: int, n: int, k: int, latency_ms: float) -> bool:
    """Whether a measured GEMM ran faster than the card's memory can stream its weights: a benchmark repeating
    one small GEMM reads them from L2 (the L40S's 96 MB holds most of the grid at 16 bits), which a model's
    layers, read once a step, never do. Such points are left out; the rest of the sweep stays."""
    from archcost.compiler.timing.fractions import roofline_seconds

    return roofline_seconds("gemm", fmt, {"m": m, "n": n, "k": k}, sheet) > latency_ms * 1e-3


def grouped_sweeps(repo: Path, table: str, existing: set) -> list[str]:
    """The fused MoE op's measured sweeps along the tokens (AIConfigurator's moe_perf, source 1's MoE rows: one
    TRT-LLM MoE of EP 1 and TP 1, balanced routing, its CUTLASS kernels), every expert shape it measured."""
    if table not in MOE:
        return []
    system, formats = MOE[table]
    path = f"aic-core/src/aiconfigurator_core/systems/data/{system}/moe/trtllm/1.3.0rc20/moe_perf.parquet"
    frame = _table(repo, path)
    frame = frame[(frame.kernel_source == "moe_torch_flow_cutlass") & (frame.moe_ep_size == 1)
                  & (frame.moe_tp_size == 1) & (frame.distribution == "balanced")]
    out = []
    for fmt, dtype in formats.items():
        rows = frame[frame.moe_dtype == dtype]
        for (hidden, inter, topk, experts), found in sorted(rows.groupby(
                ["hidden_size", "inter_size", "topk", "num_experts"])):
            if (fmt, hidden, inter, topk, experts) in existing or found.num_tokens.duplicated().any():
                continue
            found = found.sort_values("num_tokens")
            tokens = ", ".join(str(int(t)) for t in found.num_tokens)
            times = ", ".join(f"{float(t) * 1000:.2f}" for t in found.latency)
            out += ["", "[[grouped_gemm]]", f'format = "{fmt}"', f"tokens = [{tokens}]", f"hidden = {hidden}",
                    f"inter = {inter}", f"topk = {topk}", f"experts = {experts}", f"latency_us = [{times}]",
                    f'source = "ai-dynamo/aiconfigurator@{COMMIT} {path} (rows kernel_source=moe_torch_flow_cutlass '
                    f'moe_dtype={dtype} hidden_size={hidden} inter_size={inter} topk={topk} num_experts={experts} '
                    f'moe_tp_size=1 moe_ep_size=1 distribution=balanced, one a listed num_tokens; latency ms)"']
    return out


def _table(repo: Path, path: str, missing_ok: bool = False):
    """One of AIConfigurator's parquet tables as the cited commit holds it (None where it holds none and
    `missing_ok`)."""
    import io

    import pandas as pd

    shown = subprocess.run(["git", "-C", str(repo), "show", f"{COMMIT}:{path}"], check=not missing_ok,
                           capture_output=True)
    return pd.read_parquet(io.BytesIO(shown.stdout)) if shown.returncode == 0 else None


def rewrite(texts: dict[Path, str], check: bool) -> int:
    """Write each table's new text where it differs (with `check`, only say which differ); the exit status."""
    stale = []
    for path, text in texts.items():
        if text != (path.read_text(encoding="utf-8") if path.exists() else ""):
            stale.append(path.name)
            if not check:
                path.write_text(text, encoding="utf-8")
    print(("stale: " if check else "wrote: ") + (", ".join(stale) or "nothing"))
    return 1 if check and stale else 0


def existing_pairs(text: str) -> set:
    import tomllib

    data = tomllib.loads(text)
    return {(p.get("format"), p["n"], p["k"]) for p in data.get("gemm", []) if not isinstance(p.get("m"), list)} | {
        (p.get("format"), p["hidden"], p["inter"], p["topk"], p["experts"]) for p in data.get("grouped_gemm", [])
        if not isinstance(p.get("tokens"), list)}


def main(argv: list[str]) -> int:
    repo, texts = Path(argv[0]), {}
    for table in TABLES:
        path = ROOT / "stdlib" / "efficiency" / f"{table}.toml"
        kept = path.read_text(encoding="utf-8").split(BEGIN)[0].rstrip("\n") + "\n\n"
        texts[path] = kept + sweeps(repo, table, existing_pairs(kept))
    return rewrite(texts, "--check" in argv)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
