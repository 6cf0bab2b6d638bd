"""The stdlib's files as the parser's trees, shipped as JSON data (dsl/stdlib_trees.jsonl, written by
tools/stdlib_trees.py): a spec's stdlib files are read from it rather than parsed at every cold start (lark's
LALR parser in Python takes ten times what pydantic takes to read the same tree). A tree is used only for the
text it was made from, by the grammar, tree builder and AST it was made by; tests/test_parser.py fails while
one is not what the parser makes of its file."""

from __future__ import annotations

import hashlib
from functools import lru_cache
from importlib import resources

from pydantic import BaseModel

from . import ast

TREES = "stdlib_trees.jsonl"  # the stdlib's files as parsed trees (tools/stdlib_trees.py writes it), shipped


def trees_key() -> str:
    """What a shipped tree depends on beside its file's text: the grammar, the tree builder and the AST."""
    package = resources.files("archcost.dsl")
    return hashlib.sha256(b"\0".join(package.joinpath(name).read_bytes()
                                     for name in ("grammar.lark", "tree.py", "ast.py"))).hexdigest()


@lru_cache(maxsize=1)
def _shipped_trees() -> dict[str, tuple[str, str]]:
    """`std/...` file → (the SHA-256 of its text, its Module as JSON), when the trees were made by this grammar,
    builder and AST; else nothing (every file parsed). Read as JSON by pydantic: data, never code; a stdlib file
    whose text differs from the one its tree was made from is parsed."""
    try:
        lines = resources.files("archcost.dsl").joinpath(TREES).read_text(encoding="utf-8").split("\n")
    except OSError:
        return {}
    if lines[0] != trees_key():
        return {}
    return {file: (digest, tree) for file, digest, tree in (line.split("\t", 2) for line in lines[1:] if line)}


def tree_data(value):
    """A tree as JSON data with every node's span and note (a node's own dumps leave them out: equality ignores
    them), what tools/stdlib_trees.py ships and a shipped tree is read back from."""
    if isinstance(value, BaseModel):
        return {name: tree_data(getattr(value, name)) for name in type(value).model_fields}
    if isinstance(value, list | tuple):
        return [tree_data(item) for item in value]
    return value


def shipped_tree(text: str, file: str) -> ast.Module | None:
    """The shipped tree of a stdlib file (`std/...`) whose text is the one it was made from, else None."""
    found = _shipped_trees().get(file) if file.startswith("std/") else None
    if found is None or found[0] != hashlib.sha256(text.encode("utf-8")).hexdigest():
        return None
    return ast.Module.model_validate_json(found[1])
