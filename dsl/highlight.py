"""Syntax highlighting for `.arch`: a Pygments lexer and a TextMate grammar, both built from the lark
grammar's own keywords so that neither can drift from the language.

The Pygments lexer is registered as `arch` (`pygmentize -l arch specs/qwen3-8b.arch`); the TextMate
grammar is written by `tools/editors.py` into `dsl/editors/vscode/`, a VS Code extension folder.
"""

from __future__ import annotations

from functools import lru_cache

from .parser import keywords

CONSTANTS = ("true", "false")
NUMBER = r"\b[0-9][0-9_]*(\.[0-9]+)?\b"
STRING = r'"[^"\n]*"'
OPERATOR = r"->|//|==|!=|<=|>=|[+\-*/^=|<>]"


def statement_keywords() -> list[str]:
    return [word for word in keywords() if word not in CONSTANTS]


def textmate_grammar() -> dict:
    """The TextMate grammar (VS Code, Sublime, GitHub's Linguist) as JSON-ready data."""
    words = "|".join(statement_keywords())
    return {
        "$schema": "https://raw.githubusercontent.com/martinring/tmlanguage/master/tmlanguage.json",
        "name": "archcost",
        "scopeName": "source.arch",
        "fileTypes": ["arch"],
        "patterns": [
            {"name": "comment.line.number-sign.arch", "match": "#.*$"},
            {"name": "string.quoted.double.arch", "match": STRING},
            {"name": "keyword.control.arch", "match": rf"\b({words})\b"},
            {"name": "constant.language.arch", "match": rf"\b({'|'.join(CONSTANTS)})\b"},
            {"name": "constant.numeric.arch", "match": NUMBER},
            # an op statement: `linear q:` — the kind, then an optional label, then a colon
            {"match": r"\b([A-Za-z_][A-Za-z0-9_]*)([ \t]+[A-Za-z_][A-Za-z0-9_]*)?[ \t]*(:)",
             "captures": {"1": {"name": "support.function.op.arch"}, "2": {"name": "variable.other.label.arch"}}},
            {"match": r"\b([A-Za-z_][A-Za-z0-9_]*)\s*(?=\()", "captures": {"1": {"name": "entity.name.function.arch"}}},
            {"name": "keyword.operator.arch", "match": OPERATOR},
            {"name": "variable.other.arch", "match": r"\b[A-Za-z_][A-Za-z0-9_]*\b"},
        ],
    }


def codemirror_mode() -> list[dict[str, str]]:
    """The playground editor's highlighting (CodeMirror's simple mode: a regex and a token class each, tried
    in order at every position), from the same keywords and patterns as the TextMate grammar."""
    words = "|".join(statement_keywords())
    return [
        {"regex": "#.*", "token": "comment"},
        {"regex": STRING, "token": "string"},
        {"regex": rf"(?:{words})\b", "token": "keyword"},
        {"regex": rf"(?:{'|'.join(CONSTANTS)})\b", "token": "atom"},
        {"regex": NUMBER.removeprefix(r"\b"), "token": "number"},
        {"regex": r"[A-Za-z_][A-Za-z0-9_]*(?=[ \t]+[A-Za-z_][A-Za-z0-9_]*[ \t]*:)|[A-Za-z_][A-Za-z0-9_]*(?=[ \t]*:)",
         "token": "builtin"},
        {"regex": r"[A-Za-z_][A-Za-z0-9_]*(?=\s*\()", "token": "def"},
        {"regex": OPERATOR, "token": "operator"},
        {"regex": r"[A-Za-z_][A-Za-z0-9_.]*", "token": "variable"},
    ]


@lru_cache(maxsize=1)
def _lexer_class():
    from pygments.lexer import RegexLexer, bygroups, words
    from pygments.token import Comment, Keyword, Name, Number, Operator, Punctuation, String, Whitespace

    class ArchLexer(RegexLexer):
        """Pygments lexer for archcost's `.arch` specs."""

        name = "archcost"
        aliases = ["arch", "archcost"]
        filenames = ["*.arch"]
        mimetypes = ["text/x-archcost"]

        tokens = {
            "root": [
                (r"\s+", Whitespace),
                (r"#.*$", Comment.Single),
                (STRING, String.Double),
                (words(tuple(statement_keywords()), suffix=r"\b"), Keyword),
                (words(CONSTANTS, suffix=r"\b"), Keyword.Constant),
                (NUMBER, Number),
                (r"([A-Za-z_][A-Za-z0-9_]*)([ \t]+)([A-Za-z_][A-Za-z0-9_]*)([ \t]*)(:)",
                 bygroups(Name.Builtin, Whitespace, Name.Label, Whitespace, Punctuation)),
                (r"([A-Za-z_][A-Za-z0-9_]*)([ \t]*)(:)", bygroups(Name.Builtin, Whitespace, Punctuation)),
                (r"[A-Za-z_][A-Za-z0-9_]*(?=\s*\()", Name.Function),
                (OPERATOR, Operator),
                (r"[A-Za-z_][A-Za-z0-9_]*", Name),
                (r"[{}(),.:]", Punctuation),
            ],
        }

    return ArchLexer


def __getattr__(name: str):
    # the lexer class is built on first use, so importing this module does not need Pygments
    if name == "ArchLexer":
        return _lexer_class()
    raise AttributeError(name)
