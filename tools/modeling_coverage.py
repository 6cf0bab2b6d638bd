"""Record which decoder-only text model types of the installed transformers the import from the modeling code
reads: tests/reference/modeling_coverage.json (docs/importing.md lists it; `pytest -m long` recomputes it and
fails unless the record is exactly what the installed transformers gives).

Each type is imported from a small config (tests/modeling_types.py): read and checked against the model
transformers built, or refused with the code and message that stopped it.

When transformers moves, `--changes` prints what moved against the record before writing it: the types it
adds (each read, or the module that stops it and why), the types it drops, and the types whose outcome changed.

Run: .venv/bin/python tools/modeling_coverage.py [--workers N] [--changes]   (needs the hf or test extra)
"""

from __future__ import annotations

import argparse
import json
import sys
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
RECORD = ROOT / "tests" / "reference" / "modeling_coverage.json"
MESSAGE = 200  # characters of a refusal kept: the module, its class and why (its parameter shapes left out)


def outcome(model_type: str) -> dict:
    """How the import from the modeling code ends for `model_type`'s small config."""
    import modeling_types

    from archcost.compiler.importer import import_spec, parse_config
    from archcost.dsl.errors import ArchError

    try:
        import_spec(parse_config(modeling_types.small_config(model_type), f"{model_type}.json"),
                    from_modeling_code=True)
    except ArchError as error:
        first = error.diagnostics[0]
        return {"code": first.code, "message": first.message.split("; its parameters")[0][:MESSAGE]}
    return {"read": True}


def coverage(workers: int = 1) -> dict:
    import modeling_types
    import transformers

    types = modeling_types.decoder_types()
    with ProcessPoolExecutor(max_workers=workers) as pool:
        outcomes = dict(zip(types, pool.map(outcome, types), strict=True))
    return {"about": "the import from the modeling code, per decoder-only text model type "
                     "(tools/modeling_coverage.py)", "transformers": transformers.__version__, "types": outcomes}


def _said(outcome: dict) -> str:
    return "read and checked" if outcome.get("read") else f"{outcome['code']}: {outcome['message']}"


def changes(before: dict, after: dict) -> list[str]:
    """What moved from one record to the next, a line a type: added, dropped, or read otherwise."""
    old, new = before.get("types", {}), after["types"]
    lines = [f"transformers {before.get('transformers', '?')} -> {after['transformers']}: "
             f"{len(new)} decoder-only text types ({len(set(new) - set(old))} new, {len(set(old) - set(new))} gone)"]
    lines += [f"  new   {name}: {_said(new[name])}" for name in new if name not in old]
    lines += [f"  gone  {name}" for name in old if name not in new]
    lines += [f"  moved {name}: {_said(old[name])} -> {_said(new[name])}" for name in new
              if name in old and bool(old[name].get("read")) != bool(new[name].get("read"))]
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--changes", action="store_true", help="print what moved against the record first")
    args = parser.parse_args(argv)
    record = coverage(args.workers)
    if args.changes:
        before = json.loads(RECORD.read_text()) if RECORD.exists() else {}
        print("\n".join(changes(before, record)))
    RECORD.write_text(json.dumps(record, indent=1) + "\n")
    read = sum(1 for o in record["types"].values() if o.get("read"))
    print(f"{RECORD.relative_to(ROOT)}: {read} of {len(record['types'])} decoder-only text model types read")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
