"""The parser: every spec and stdlib file round-trips; random and grammar-made text never crashes."""

from __future__ import annotations

import pytest
from helpers import SPECS, STDLIB, load_tool
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra.lark import from_lark

from archcost.dsl.parser import grammar, keywords, parse
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


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
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
