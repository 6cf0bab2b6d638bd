"""Write the parser's LALR tables (dsl/grammar_tables.json) after grammar.lark or lark changes.

The package loads them as JSON instead of building them at each start or keeping a pickle in a writable cache
(issue 45). lark numbers the states in the order of sets of objects, so two runs write different files of the
same tables; tests/test_parser.py fails while the shipped tables are not those of the grammar and lark installed."""

from __future__ import annotations

import json
from pathlib import Path

from archcost.dsl.parser import TABLES, tables

if __name__ == "__main__":
    target = Path(__file__).resolve().parents[1] / "dsl" / TABLES
    target.write_text(json.dumps(tables(), separators=(",", ":"), sort_keys=True) + "\n", encoding="utf-8")
    print(f"wrote {target}")
