"""`archcost fmt`: canonical layout that keeps every comment, changes no tree, and is a fixed point."""

from __future__ import annotations

import os
from collections import Counter

import pytest
from helpers import ROOT

from archcost.compiler.cli import main
from archcost.dsl.errors import ArchError
from archcost.dsl.parser import parse
from archcost.dsl.printer import canonical, comments

SOURCES = sorted([*ROOT.glob("specs/*.arch"), *ROOT.glob("stdlib/**/*.arch")])
CORPUS = sorted([*ROOT.glob("tests/errors/*.arch"), *ROOT.glob("tests/fuzz_corpus/*.arch")])


@pytest.mark.parametrize("path", SOURCES + CORPUS, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_round_trip(path):
    """Every spec, stdlib file and corpus file: what parses is printed canonically, keeping its tree and every
    comment; what does not parse is refused by the formatter with the parser's own codes, never printed."""
    text = path.read_text()
    try:
        parse(text, str(path))
    except ArchError as refused:
        with pytest.raises(ArchError) as caught:
            canonical(text, str(path))
        assert caught.value.codes == refused.codes
        return
    tidy = canonical(text, str(path))
    assert parse(tidy) == parse(text)                       # same tree
    assert canonical(tidy) == tidy                          # a fixed point
    assert Counter(c.text for c in comments(tidy)) == Counter(c.text for c in comments(text))  # every comment


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_shipped_sources_are_canonical(path):
    assert canonical(path.read_text(), str(path)) == path.read_text()


def test_layout():
    messy = (
        'use std.embedding   # the table\n\n\n\nmodel "M" {  # top\n d=4096\n'
        "  # a layer\n  repeat 2 as layers { lookup embed: 1000 -> d # inline\n  }\n\n\n  x = 2^10 + 1\n}\n# end\n"
    )
    assert canonical(messy) == ('use std.embedding  # the table\n\nmodel "M" {  # top\n  d = 4096\n  # a layer\n'
                                '  repeat 2 as layers {\n    lookup embed: 1000 -> d  # inline\n  }\n\n'
                                '  x = 2^10 + 1\n}\n# end\n')


def test_long_calls_wrap_under_the_first_argument():
    args = ", ".join(f"argument_{i} = {i}" for i in range(12))
    tidy = canonical(f'model "M" {{\n  gqa({args}) as attn\n}}\n')
    lines = tidy.splitlines()[1:-1]
    assert len(lines) > 1 and all(len(line) <= 110 for line in lines)
    assert all(line.startswith(" " * len("  gqa(")) for line in lines[1:])


def test_hash_inside_a_string_is_not_a_comment():
    assert comments('model "a # b" {\n}\n') == []


def test_cli(tmp_path, capsys):
    spec = tmp_path / "m.arch"
    spec.write_text('model "M" {\nd=1\n}\n')
    assert main(["fmt", str(spec)]) == 0
    assert capsys.readouterr().out == 'model "M" {\n  d = 1\n}\n'
    assert main(["fmt", "--check", str(spec)]) == 1
    assert "would reformat" in capsys.readouterr().err
    assert main(["fmt", "--write", str(spec)]) == 0
    assert spec.read_text() == 'model "M" {\n  d = 1\n}\n'
    assert main(["fmt", "--check", str(spec)]) == 0
    spec.write_text('model "M" {\n  d = \n}\n')
    assert main(["fmt", "--write", str(spec)]) == 2           # a syntax error: reported, file untouched
    assert spec.read_text() == 'model "M" {\n  d = \n}\n'
    assert "error[E100]" in capsys.readouterr().err


from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402


@settings(max_examples=int(os.environ.get("ARCHCOST_FMT_EXAMPLES", "150")), deadline=None)
@given(path=st.sampled_from(SOURCES), data=st.data())
def test_comments_anywhere_survive(path, data):
    """Comments dropped on random lines of a real source, alone or after code, blank lines between:
    formatting keeps every one, keeps the tree, and is a fixed point."""
    lines = path.read_text().splitlines()
    for index in sorted(data.draw(st.lists(st.integers(0, len(lines)), max_size=8)), reverse=True):
        note = f"# note {index}"
        kind = data.draw(st.sampled_from(["own", "after", "blank"]))
        if kind == "after" and index < len(lines) and lines[index].strip() and "#" not in lines[index]:
            lines[index] += "   " + note
        else:
            lines[index:index] = [""] * (kind == "blank") + [note]
    text = "\n".join(lines) + "\n"
    tidy = canonical(text)
    assert parse(tidy) == parse(text)
    assert canonical(tidy) == tidy
    assert Counter(c.text for c in comments(tidy)) == Counter(c.text for c in comments(text))


def test_a_comment_in_an_else_branch_stays_there():
    from archcost.dsl.printer import canonical

    text = 'model "M" {\n  if true {\n    d = 1\n  } else {\n    # about the else branch\n    d = 2\n  }\n}\n'
    assert canonical(text) == text


def test_notes_of_a_generated_tree_print_as_comments():
    """A tree built in code (the importer's) carries notes: short ones end their line, long ones go above it,
    and the text parses back to the same tree."""
    from archcost.dsl import ast
    from archcost.dsl.parser import parse
    from archcost.dsl.printer import format_module

    call = ast.BlockCall(name="swiglu", args=[ast.Positional(value=ast.Name(id="d"))], label="ffn",
                         note="intermediate_size")
    long = ast.Binding(name="d", value=ast.Num(text="4096"), note="hidden_size; " + "a long reason " * 10)
    model = ast.ModelDef(name="m", body=[long, call])
    module = ast.Module(path="<t>", uses=[ast.Use(target="std.ffn.swiglu", is_path=False, note="header")],
                        models=[model])
    text = format_module(module)
    assert text.startswith("# header\nuse std.ffn.swiglu\n")
    assert "  swiglu(d) as ffn  # intermediate_size\n" in text
    assert "  # hidden_size; a long reason" in text and "\n  d = 4096\n" in text
    assert parse(text, "t.arch").models == module.models
