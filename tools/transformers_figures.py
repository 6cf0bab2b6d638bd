"""Record what transformers computes for every parity case: tests/reference/transformers.json.

Each case's model is built on PyTorch's meta device and its parameters and FlopCounterMode FLOPs counted
(tests/transformers_runs.py says how); the record names the transformers and torch versions that computed
them. The default test suite compares archcost against the record; `pytest -m long` recomputes every figure
with the installed transformers and fails when the record is not exactly what it computes.

Run: .venv/bin/python tools/transformers_figures.py [--workers N] [KEY ...]   (needs the test extra: torch,
transformers). With KEYs, only those figures are recomputed and the rest of the record kept.
"""

from __future__ import annotations

import argparse
import json
import sys
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

import transformers_runs as runs  # noqa: E402  (tests/ is a folder, not a package)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("keys", nargs="*", help="record keys to recompute (default: every case)")
    parser.add_argument("--workers", type=int, default=1)
    args = parser.parse_args(argv)
    keys = args.keys or runs.record_keys()
    unknown = sorted(set(keys) - set(runs.record_keys()))
    if unknown:
        parser.error(f"no such case: {', '.join(unknown)}")
    kept = runs.read_record()["figures"] if args.keys and runs.RECORD.exists() else {}
    with ProcessPoolExecutor(max_workers=args.workers) as pool:
        computed = dict(zip(keys, pool.map(runs.live_figures, keys), strict=True))
    figures = {key: {**kept, **computed}[key] for key in runs.record_keys() if key in {**kept, **computed}}
    record = {"about": "what transformers computes for the parity cases (tools/transformers_figures.py)",
              **runs.versions(), "figures": figures}
    runs.RECORD.parent.mkdir(parents=True, exist_ok=True)
    runs.RECORD.write_text(json.dumps(record, indent=1, sort_keys=False) + "\n")
    print(f"{runs.RECORD}: {len(figures)} figure sets ({len(computed)} computed now)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
