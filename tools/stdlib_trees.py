"""Write the stdlib's files as parsed trees (dsl/stdlib_trees.jsonl) after the stdlib, grammar.lark, tree.py or
ast.py change.

A spec's stdlib files are parsed at every cold start: lark's LALR parser in Python takes ten times what pydantic
takes to read the same tree as JSON (the chapter's five specs read 17 stdlib files). The file's first line is
the key of the grammar, builder and AST the trees were made by (dsl.parser.trees_key), then one line a stdlib
file: its name, the SHA-256 of its text, its Module as JSON. The parser uses a tree only when both match;
tests/test_parser.py fails while a shipped tree is not what the parser makes of its file.

Run: .venv/bin/python tools/stdlib_trees.py
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from archcost.dsl.parser import parsed
from archcost.dsl.shipped import TREES, tree_data, trees_key

ROOT = Path(__file__).resolve().parents[1]


def lines() -> list[str]:
    """The file's lines, the key first, the stdlib's files in the order of their names."""
    found = [trees_key()]
    for path in sorted((ROOT / "stdlib").rglob("*.arch")):
        name, text = f"std/{path.relative_to(ROOT / 'stdlib').as_posix()}", path.read_text(encoding="utf-8")
        digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
        tree = json.dumps(tree_data(parsed(text, name)), separators=(",", ":"), ensure_ascii=False)
        found.append(f"{name}\t{digest}\t{tree}")
    return found


if __name__ == "__main__":
    target = ROOT / "dsl" / TREES
    target.write_text("\n".join(lines()) + "\n", encoding="utf-8")
    print(f"wrote {target.relative_to(ROOT)}")
