"""Text to AST: the lark LALR parser, the input limits, and syntax errors as a person reads them (the parse tree
becomes `dsl.ast` nodes in tree.py)."""

from __future__ import annotations

import hashlib
import json
import re
from functools import lru_cache
from importlib import resources

from lark import Lark
from lark.exceptions import UnexpectedCharacters, UnexpectedEOF, UnexpectedInput, UnexpectedToken

from . import ast
from .errors import ArchError, Diagnostic, Span
from .shipped import shipped_tree
from .tree import ToAst

# Terminal names as a person would type them, for "expected one of ..." messages.
_TERMINAL_TEXT = {
    "LPAR": "(", "RPAR": ")", "LBRACE": "{", "RBRACE": "}", "COMMA": ",", "COLON": ":",
    "EQUAL": "=", "PLUS": "+", "MINUS": "-", "STAR": "*", "SLASH": "/",
    "CIRCUMFLEX": "^", "DOT": ".", "NAME": "a name", "NUMBER": "a number", "STRING": "a string",
    "$END": "end of file",
}


# every token stays in the tree: tree.ToAst finds each node's span from its first and last token. One lexer for
# every parser state: the grammar's terminals never overlap where it matters (every spec, stdlib block and test
# file tokenises alike), and lark's contextual lexer compiled a scanner regex for each of 32 states, a tenth of a
# cold `eval`'s own time.
OPTIONS = dict(parser="lalr", lexer="basic", keep_all_tokens=True, maybe_placeholders=True)


TABLES = "grammar_tables.json"  # the parser's LALR tables, generated from grammar.lark (write_tables) and shipped


def grammar() -> Lark:
    """The grammar as a whole, for tools that read its rules (hypothesis draws programs from it); parsing
    uses `_parser`, whose tables are shipped with the package."""
    return Lark(_grammar_text(), **OPTIONS)


def _grammar_text() -> str:
    return resources.files("archcost.dsl").joinpath("grammar.lark").read_text(encoding="utf-8")


@lru_cache(maxsize=1)
def _parser() -> Lark:
    """The LALR parser, from the tables shipped beside the grammar when they were made from this grammar by this
    lark, else built from the grammar, never with lark's `cache` (a file it would write to and load from the user's
    folder). The shipped tables are JSON data inside the package, and lark rebuilds its objects from that data
    (Lark._load_from_dict, what lark's own standalone parsers load): nothing read from a writable folder runs."""
    text = _grammar_text()
    try:
        shipped = json.loads(resources.files("archcost.dsl").joinpath(TABLES).read_text(encoding="utf-8"))
        if shipped.get("key") == tables_key(text):
            return Lark._load_from_dict(_decoded(shipped["data"]), _decoded(shipped["memo"]))
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        pass  # tables of another grammar or lark, or none: build them (a tenth of a second)
    return Lark(text, **OPTIONS)


def tables_key(text: str) -> str:
    import lark

    return hashlib.sha256(f"{lark.__version__}\n{OPTIONS}\n{text}".encode()).hexdigest()


def tables() -> dict:
    """The parser's tables as JSON data (tools/grammar_tables.py writes them to dsl/grammar_tables.json)."""
    from lark.grammar import Rule
    from lark.lexer import TerminalDef

    text = _grammar_text()
    data, memo = Lark(text, **OPTIONS).memo_serialize([TerminalDef, Rule])
    import lark

    return {"key": tables_key(text), "lark": lark.__version__, "grammar": hashlib.sha256(text.encode()).hexdigest(),
            "data": _encoded(data), "memo": _encoded(memo)}


INT_KEYS = "#int"  # a dict keyed by numbers (parser states, the memo), which JSON would key by strings


def _encoded(value):
    if isinstance(value, dict):
        if value and all(type(key) is int for key in value):
            return {INT_KEYS: [[key, _encoded(item)] for key, item in value.items()]}
        return {key: _encoded(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_encoded(item) for item in value]
    return value


def _decoded(value):
    if isinstance(value, dict):
        if len(value) == 1 and INT_KEYS in value:
            return {key: _decoded(item) for key, item in value[INT_KEYS]}
        return {key: _decoded(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_decoded(item) for item in value]
    return value


def keywords() -> list[str]:
    """The language's reserved words, read from the grammar so editors cannot drift from it."""
    return sorted(t.pattern.value for t in _parser().terminals if t.pattern.type == "str" and t.pattern.value.isalpha())


MAX_NESTING = 200          # brackets open at once
MAX_STATEMENTS = 100_000   # lines, bindings, arguments: each `=`, `,`, `:` or line end counts once


def parse(text: str, file: str = "<text>") -> ast.Module:
    """Parse one file's text; raise ArchError (E100) at the first syntax error, E106 for hostile sizes.

    Trees are immutable, so the same text under the same name is parsed once per process: a spec's
    stdlib files and the prelude are not parsed again for every spec (`compare`, the API, the tests)."""
    return _parse(text, file)


@lru_cache(maxsize=128)
def _parse(text: str, file: str) -> ast.Module:
    shipped = shipped_tree(text, file)  # a stdlib file as the package ships it parsed: a tenth of lark's time
    return shipped if shipped is not None else parsed(text, file)


def parsed(text: str, file: str) -> ast.Module:
    """The text parsed by lark (what a shipped tree must equal: tests/test_parser.py)."""
    _check_shape(text, file)
    try:
        tree = _parser().parse(text)
        uses, formats, devices, links, blocks, models = ToAst(file).transform(tree)
    except UnexpectedInput as exc:
        raise ArchError([_syntax_diagnostic(exc, text, file)]) from None
    except RecursionError:
        raise _too_deep(text, file) from None
    return ast.Module(path=file, uses=uses, formats=formats, devices=devices, links=links, blocks=blocks,
                      models=models)


def _check_shape(text: str, file: str) -> None:
    """Reject, before parsing, text whose brackets nest too deep or whose statements are too many. Brackets
    and separators inside comments and strings do not count: they are text, not structure."""
    code = _COMMENTS_AND_STRINGS.sub(lambda m: " " * len(m.group()), text)  # same offsets, no text
    items = sum(code.count(mark) for mark in "=,:\n")
    if items > MAX_STATEMENTS:
        raise ArchError([Diagnostic(code="E106", message=f"more than {MAX_STATEMENTS:,} statements, arguments or "
                                    "lines in one file", span=Span(file=file, line=1, column=1, end_line=1,
                                                                     end_column=1))])
    offset = _too_nested(code)
    if offset is None:
        return
    line, column = text.count("\n", 0, offset) + 1, offset - (text.rfind("\n", 0, offset) + 1) + 1
    raise ArchError([Diagnostic(code="E106", message=f"brackets nest more than {MAX_NESTING} deep",
                                span=Span(file=file, line=line, column=column, end_line=line, end_column=column + 1),
                                source_line=text.split("\n")[line - 1],
                                hint="split the expression with intermediate bindings")])


_COMMENTS_AND_STRINGS = re.compile(r'#[^\n]*|"[^"\n]*"')


def _too_nested(code: str) -> int | None:
    """The offset of the first bracket that opens one level too many, if any."""
    if code.count("(") + code.count("{") <= MAX_NESTING:
        return None
    depth = 0
    for match in re.finditer(r"[(){}]", code):
        depth += 1 if match.group() in "({" else -1
        if depth > MAX_NESTING:
            return match.start()
    return None


def _too_deep(text: str, file: str) -> ArchError:
    """Python's stack ran out building the tree: blame the line with the longest operator chain."""
    lines = text.split("\n") or [""]
    operators = [len(re.findall(r"[-+*/^]", line)) for line in lines]
    line = operators.index(max(operators)) + 1
    return ArchError([Diagnostic(code="E106", message="an expression is nested too deeply to read "
                                 "(a chain of a few hundred operators, or unary minus signs)",
                                 span=Span(file=file, line=line, column=1, end_line=line,
                                           end_column=len(lines[line - 1]) + 1),
                                 source_line=lines[line - 1],
                                 hint="split it with intermediate bindings")])


def _syntax_diagnostic(exc: UnexpectedInput, text: str, file: str) -> Diagnostic:
    lines = text.split("\n")
    line = max(1, getattr(exc, "line", 1) or 1)
    column = max(1, getattr(exc, "column", 1) or 1)
    end_column = column + 1
    if isinstance(exc, UnexpectedToken) and exc.token.type != "$END":
        message = f"unexpected `{exc.token}`"
        end_column = exc.token.end_column or end_column
    elif isinstance(exc, UnexpectedCharacters):
        message = f"unexpected character `{text[exc.pos_in_stream]}`"  # printed escaped if unprintable
    else:
        return _end_of_file(exc, text, file, lines)
    expected = _expected(exc)
    span = Span(file=file, line=line, column=column, end_line=line, end_column=end_column)
    source_line = lines[line - 1] if 0 < line <= len(lines) else ""
    hint = f"expected one of {expected}" if expected else None
    reserved = _reserved_as_name(exc, source_line[:column - 1])
    if reserved is not None:
        word, start = reserved
        message = f"`{word}` is a reserved word of the language; it cannot be a name"
        hint = f"call it something else, e.g. `{word}_`"
        span = Span(file=file, line=line, column=start + 1, end_line=line, end_column=start + 1 + len(word))
    return Diagnostic(code="E100", message=message, span=span, source_line=source_line, hint=hint)


def _reserved_as_name(exc: UnexpectedInput, before: str) -> tuple[str, int] | None:
    """The keyword written where a name belongs, and its offset in the line: `model = 3`, or `repeat = 4`
    (the `=` after a keyword)."""
    if not isinstance(exc, UnexpectedToken):
        return None
    word = str(exc.token)
    if word.isidentifier() and word in keywords() and "NAME" in (exc.expected or ()):
        return word, len(before)
    previous = re.search(r"(\w+)\s*$", before)
    if word == "=" and previous and previous.group(1) in keywords() and not before[:previous.start()].strip():
        return previous.group(1), previous.start()
    return None


def _end_of_file(exc: UnexpectedInput, text: str, file: str, lines: list[str]) -> Diagnostic:
    """The file ends inside something: point at the `{` or `(` never closed, if that is what is open."""
    opened = _unclosed(_COMMENTS_AND_STRINGS.sub(lambda m: " " * len(m.group()), text))
    if opened is not None:
        offset, bracket = opened
        line = text.count("\n", 0, offset) + 1
        column = offset - (text.rfind("\n", 0, offset) + 1) + 1
        closing = "}" if bracket == "{" else ")"
        return Diagnostic(code="E100", message=f"this `{bracket}` is never closed", source_line=lines[line - 1],
                          span=Span(file=file, line=line, column=column, end_line=line, end_column=column + 1),
                          hint=f"add `{closing}` where it ends")
    line = max(1, len(lines))
    column = len(lines[-1]) + 1 if lines else 1
    expected = _expected(exc)
    return Diagnostic(code="E100", message="unexpected end of file", source_line=lines[line - 1],
                      span=Span(file=file, line=line, column=column, end_line=line, end_column=column + 1),
                      hint=f"expected one of {expected}" if expected else None)


def _unclosed(code: str) -> tuple[int, str] | None:
    """The offset and character of the innermost bracket still open at the end, if any."""
    stack: list[tuple[int, str]] = []
    for match in re.finditer(r"[(){}]", code):
        if match.group() in "({":
            stack.append((match.start(), match.group()))
        elif stack:
            stack.pop()
    return stack[-1] if stack else None


def _expected(exc: UnexpectedInput) -> str:
    accepted = getattr(exc, "accepts", None) or getattr(exc, "expected", None) or set()
    if isinstance(exc, UnexpectedEOF):
        accepted = exc.expected
    texts = sorted({_terminal_text(t) for t in accepted}, key=lambda t: (t.isalpha() or " " in t, t))
    return " ".join(f"`{t}`" for t in texts[:10])


def _terminal_text(name: str) -> str:
    if name in _TERMINAL_TEXT:
        return _TERMINAL_TEXT[name]
    terminal = next((t for t in _parser().terminals if t.name == name), None)
    if terminal is not None and terminal.pattern.type == "str":
        return terminal.pattern.value
    return name.lower()
