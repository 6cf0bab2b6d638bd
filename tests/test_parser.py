"""The parser: every spec and stdlib file round-trips; random and grammar-made text never crashes."""

from __future__ import annotations

import json
import os

import pytest
from helpers import SPECS, STDLIB, load_tool
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra.lark import from_lark

from archcost.dsl.parser import OPTIONS, TABLES, _parser, grammar, keywords, parse, tables
from archcost.dsl.printer import format_module

fuzz = load_tool("fuzz")

FILES = sorted([*SPECS.glob("*.arch"), *STDLIB.rglob("*.arch")])
KEYWORDS = set(keywords())

names = st.from_regex(r"[a-z_][a-z0-9_]{0,5}", fullmatch=True).filter(lambda s: s not in KEYWORDS)
# from_lark joins tokens with nothing between them; spaces around words keep `use x` from becoming `usex`
TERMINALS = {
    "NAME": names.map(lambda s: f" {s} "),
    "NUMBER": st.one_of(st.integers(0, 10**6).map(str), st.from_regex(r"[1-9][0-9]{0,2}\.[0-9]{1,2}", fullmatch=True))
    .map(lambda s: f" {s} "),
    "STRING": st.from_regex(r'"[A-Za-z0-9 .\-]{0,8}"', fullmatch=True),
    "COMMENT": st.just("# note\n"),
    "WS": st.sampled_from([" ", "\n", "  "]),
    **{word.upper(): st.just(f" {word} ") for word in KEYWORDS},
}
programs = from_lark(grammar(), explicit=TERMINALS)


@pytest.mark.parametrize("path", FILES, ids=[p.name for p in FILES])
def test_files_round_trip(path):
    tree = parse(path.read_text(), str(path))
    assert parse(format_module(tree), str(path)) == tree


@pytest.mark.parametrize("path", FILES, ids=[p.name for p in FILES])
def test_canonical_layout_is_a_fixed_point(path):
    once = format_module(parse(path.read_text(), str(path)))
    assert format_module(parse(once)) == once


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.text(alphabet=st.sampled_from(list('model"X"{}()=,:->+*/^#\n 0123456789abdfqrtuv_.')), max_size=80))
def test_arbitrary_text_only_raises_arch_error(text):
    """Compiled, evaluated in every phase, split by op, drawn and printed: only ArchError escapes."""
    assert fuzz.run_one(text) in (None, fuzz.ACCEPTED)


def round_trip_and_run(text: str) -> None:
    tree = parse(text)
    assert parse(format_module(tree)) == tree
    assert fuzz.run_one(text) in (None, fuzz.ACCEPTED)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(programs)
def test_grammar_programs_round_trip_and_never_crash(text):
    round_trip_and_run(text)


@pytest.mark.long
@settings(max_examples=1_500, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(programs)
def test_grammar_programs_round_trip_and_never_crash_long(text):
    round_trip_and_run(text)


def test_keywords_come_from_the_grammar():
    assert {"use", "model", "block", "repeat", "precision", "component", "if", "else", "as"} <= KEYWORDS


def test_a_span_runs_from_its_first_token_to_its_last():
    """Keywords and brackets count in the span of the node that holds them (lark's propagate_positions
    convention, which the error carets were written against); a bracketed expression keeps its own span."""
    block = parse("block b(d) {\n  x = (d + 1) * 2\n  repeat 2 { y = d }\n}\n").blocks[0]
    binding, repeat = block.body

    def where(node):
        return node.span.line, node.span.column, node.span.end_line, node.span.end_column
    assert where(block) == (1, 1, 4, 2)            # `block` … `}`
    assert where(binding) == (2, 3, 2, 18)
    assert where(binding.value) == (2, 7, 2, 18)   # `(d + 1) * 2`: from its bracket
    assert where(binding.value.left) == (2, 8, 2, 13)  # `d + 1`, without its brackets
    assert where(repeat) == (3, 3, 3, 21)          # `repeat` … `}`


def test_the_shipped_parser_tables_are_those_of_this_grammar():
    """dsl/grammar_tables.json is what tools/grammar_tables.py writes from grammar.lark and the lark installed;
    run the tool after changing either. (lark numbers its states in hash order, so the tables are compared by
    what they were made from and by what they parse, below, not byte for byte.)"""
    import hashlib
    from importlib import resources

    import lark

    shipped = json.loads(resources.files("archcost.dsl").joinpath(TABLES).read_text(encoding="utf-8"))
    assert shipped["grammar"] == hashlib.sha256(grammar_text().encode()).hexdigest(), "run tools/grammar_tables.py"
    if shipped["lark"] == lark.__version__:  # another lark builds its own tables (a tenth of a second)
        assert shipped["key"] == tables()["key"]
        assert _parser().source_path == "<deserialized>", "the shipped tables were not loaded"


def test_the_shipped_stdlib_trees_are_what_the_parser_makes_of_each_file():
    """dsl/stdlib_trees.jsonl holds every stdlib file as the parser's tree of its current text, under the key of
    this grammar, builder and AST (run tools/stdlib_trees.py after changing any); a stdlib file is read from it."""
    import hashlib

    from archcost.dsl import ast
    from archcost.dsl.parser import _parse, parsed
    from archcost.dsl.shipped import _shipped_trees, tree_data, trees_key

    lines = load_tool("stdlib_trees").lines()
    assert lines[0] == trees_key() and len(_shipped_trees()) == len(lines) - 1 == len(list(STDLIB.rglob("*.arch")))
    for path in sorted(STDLIB.rglob("*.arch")):
        name, text = f"std/{path.relative_to(STDLIB).as_posix()}", path.read_text(encoding="utf-8")
        digest, tree = _shipped_trees()[name]
        assert digest == hashlib.sha256(text.encode()).hexdigest(), f"{name}: run tools/stdlib_trees.py"
        made = tree_data(parsed(text, name))  # spans and notes too (equality ignores them)
        assert tree_data(ast.Module.model_validate_json(tree)) == made == tree_data(_parse(text, name)), name
    edited = "# a comment the shipped tree was not made from\n" + (STDLIB / "norm.arch").read_text()
    assert tree_data(_parse(edited, "std/norm.arch")) == tree_data(parsed(edited, "std/norm.arch"))  # not stale


def test_the_shipped_tables_parse_every_file_as_the_grammar_does():
    from lark import Lark

    built = Lark(grammar_text(), **OPTIONS)
    for path in FILES:
        text = path.read_text()
        assert _parser().parse(text) == built.parse(text), path


def test_nothing_in_the_cache_folder_is_unpickled(tmp_path):
    """Issue 45: lark's grammar cache was a pickle in the user's cache folder, unpickled before any hash was
    checked; a file planted there ran code on the next command, even with --no-cache. A planted pickle under
    every name the old cache used, and in every cache folder, is never read."""
    import pickle
    import subprocess
    import sys

    marker = tmp_path / "ran"

    class Planted:
        def __reduce__(self):
            return (open, (str(marker), "w"))

    cache = tmp_path / "cache" / "archcost"
    for folder in ("grammar", "forms", "devices"):
        (cache / folder).mkdir(parents=True)
        for name in ("grammar-0123456789abcdef.lark", "x.json", "grammar.lark"):
            (cache / folder / name).write_bytes(pickle.dumps(Planted()))
    cache.chmod(0o700)
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache")}
    for flags in ([], ["--no-cache"]):
        done = subprocess.run([sys.executable, "-m", "archcost.compiler.cli", "eval", str(SPECS / "qwen3-8b.arch"),
                               "--phase", "decode", *flags], capture_output=True, text=True, env=env, timeout=300)
        assert done.returncode == 0, done.stderr
        assert not marker.exists()


def grammar_text() -> str:
    from importlib import resources

    return resources.files("archcost.dsl").joinpath("grammar.lark").read_text(encoding="utf-8")
