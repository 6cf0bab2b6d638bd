"""Editor support cannot drift from the language: the Pygments lexer and the TextMate grammar are
checked against every keyword the lark grammar file spells out, and against every shipped source."""

from __future__ import annotations

import re

import pytest
from helpers import ROOT, load_tool
from pygments.lexers import get_lexer_by_name, get_lexer_for_filename
from pygments.token import Comment, Error, Keyword, Name, Number, String

from archcost.dsl.highlight import ArchLexer, textmate_grammar

GRAMMAR_WORDS = sorted(set(re.findall(r'"([a-z]+)"', (ROOT / "dsl" / "grammar.lark").read_text())))
SOURCES = sorted([*ROOT.glob("specs/*.arch"), *ROOT.glob("stdlib/**/*.arch")])


def test_the_grammar_has_keywords():
    assert {"use", "model", "block", "repeat", "select", "if", "else", "true", "false"} <= set(GRAMMAR_WORDS)


@pytest.mark.parametrize("word", GRAMMAR_WORDS)
def test_pygments_highlights_every_keyword(word):
    tokens = [(kind, text) for kind, text in ArchLexer().get_tokens(f"x = {word} + y\n{word}\n") if text.strip()]
    assert all(kind in Keyword for kind, text in tokens if text == word)
    assert sum(text == word for _, text in tokens) == 2


@pytest.mark.parametrize("word", GRAMMAR_WORDS)
def test_textmate_highlights_every_keyword(word):
    """Each keyword is matched by a keyword or language-constant pattern (Python's re reads these
    simple Oniguruma patterns the same way)."""
    scopes = [p["name"] for p in textmate_grammar()["patterns"]
              if "name" in p and re.fullmatch(p["match"], word)]
    assert scopes and scopes[0] in ("keyword.control.arch", "constant.language.arch")


def test_a_name_containing_a_keyword_is_not_one():
    tokens = dict((text, kind) for kind, text in ArchLexer().get_tokens("modelling = use_case\n"))
    assert tokens["modelling"] in Name and tokens["use_case"] in Name


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_every_source_lexes_without_errors(path):
    text = path.read_text()
    tokens = list(ArchLexer().get_tokens(text))
    assert not [t for t in tokens if t[0] in Error]
    assert "".join(value for _, value in tokens) == text


def test_token_classes_in_a_spec():
    tokens = {(kind, text) for kind, text in ArchLexer().get_tokens(
        '# head\nmodel "M" {\n  linear q: 4_096 -> 128\n  gqa(d) as attn\n}\n')}
    assert (Comment.Single, "# head") in tokens and (String.Double, '"M"') in tokens
    assert (Name.Builtin, "linear") in tokens and (Name.Label, "q") in tokens
    assert (Number, "4_096") in tokens and (Name.Function, "gqa") in tokens


def test_registered_with_pygments():
    assert isinstance(get_lexer_by_name("arch"), ArchLexer)
    assert isinstance(get_lexer_for_filename("qwen3-8b.arch"), ArchLexer)


def test_vscode_extension_is_current():
    editors = load_tool("editors")
    for name, text in editors.files().items():
        assert (editors.FOLDER / name).read_text() == text, f"run tools/editors.py ({name} is stale)"
