"""Text to AST: the lark LALR parser and the transformer that builds `dsl.ast` nodes."""

from __future__ import annotations

import re
from functools import lru_cache
from importlib import resources

from lark import Lark, Token, Transformer, v_args
from lark.exceptions import UnexpectedCharacters, UnexpectedEOF, UnexpectedInput, UnexpectedToken, VisitError

from . import ast
from .errors import ArchError, Diagnostic, Span

# Terminal names as a person would type them, for "expected one of ..." messages.
_TERMINAL_TEXT = {
    "LPAR": "(", "RPAR": ")", "LBRACE": "{", "RBRACE": "}", "COMMA": ",", "COLON": ":",
    "EQUAL": "=", "PLUS": "+", "MINUS": "-", "STAR": "*", "SLASH": "/",
    "CIRCUMFLEX": "^", "DOT": ".", "NAME": "a name", "NUMBER": "a number", "STRING": "a string",
    "$END": "end of file",
}


def grammar() -> Lark:
    """The grammar as a whole, for tools that read its rules (hypothesis draws programs from it); parsing
    uses `_parser`, whose tables come from lark's cache."""
    text = resources.files("archcost.dsl").joinpath("grammar.lark").read_text()
    return Lark(text, parser="lalr", propagate_positions=True, maybe_placeholders=True)


@lru_cache(maxsize=1)
def _parser() -> Lark:
    """The LALR parser; its tables are built once and kept in lark's own cache in the user's cache folder
    (keyed by the grammar and lark's version), or built again when that folder cannot be written."""
    grammar = resources.files("archcost.dsl").joinpath("grammar.lark").read_text()
    options = dict(parser="lalr", propagate_positions=True, maybe_placeholders=True)
    return Lark(grammar, cache=_cache_file(grammar) or False, **options)


def _cache_file(grammar: str) -> str | None:
    import hashlib

    import lark

    from .cachedir import cache_folder

    base = cache_folder("grammar")
    key = hashlib.sha256(f"{lark.__version__}\n{grammar}".encode()).hexdigest()[:16]
    return str(base / f"grammar-{key}.lark") if base is not None else None


def keywords() -> list[str]:
    """The language's reserved words, read from the grammar so editors cannot drift from it."""
    return sorted(t.pattern.value for t in _parser().terminals if t.pattern.type == "str" and t.pattern.value.isalpha())


def _span(file: str, meta) -> ast.Span | None:
    if getattr(meta, "empty", True):
        return None
    return Span(file=file, line=meta.line, column=meta.column, end_line=meta.end_line, end_column=meta.end_column)


def _token_span(file: str, tok: Token) -> Span:
    return Span(file=file, line=tok.line, column=tok.column, end_line=tok.end_line or tok.line,
                end_column=tok.end_column or tok.column + 1)


def _binop(op: str):
    def method(self, meta, children):
        return ast.BinOp(op=op, left=children[0], right=children[1], span=self._s(meta))
    return method


@v_args(meta=True)
class _ToAst(Transformer):
    """Rule name = AST class: one method per grammar rule."""

    def __init__(self, file: str):
        super().__init__()
        self.file = file

    def _s(self, meta):
        return _span(self.file, meta)

    # expressions
    def number(self, meta, children):
        return ast.Num(text=str(children[0]).replace("_", ""), span=self._s(meta))

    def true(self, meta, _):
        return ast.Bool(value=True, span=self._s(meta))

    def false(self, meta, _):
        return ast.Bool(value=False, span=self._s(meta))

    def name(self, meta, children):
        return ast.Name(id=str(children[0]), span=self._s(meta))

    def call(self, meta, children):
        func, *args = children
        return ast.Call(func=str(func), args=[a for a in args if a is not None], span=self._s(meta))

    def tuple(self, meta, children):
        return ast.Tuple(items=list(children), span=self._s(meta))

    def neg(self, meta, children):
        return ast.Neg(operand=children[0], span=self._s(meta))

    add, sub, mul, div, floordiv, pow, eq, ne, lt, le, gt, ge = (
        _binop(o) for o in ("+", "-", "*", "/", "//", "^", "==", "!=", "<", "<=", ">", ">="))

    # arguments
    def positional(self, meta, children):
        return ast.Positional(value=children[0], span=self._s(meta))

    def argname(self, meta, children):
        return str(children[0])

    def keyword(self, meta, children):
        return ast.Keyword(name=str(children[0]), value=children[1], span=self._s(meta))

    def signature(self, meta, children):
        return ast.Signature(source=children[0], target=children[1], span=self._s(meta))

    # statements
    def body(self, meta, children):
        return list(children)

    def binding(self, meta, children):
        return ast.Binding(name=str(children[0]), value=children[1], span=self._s(meta))

    def option(self, meta, children):
        name, value, *others = (str(c) for c in children)
        return ast.Option(name=name, value=value, alternatives=others, span=self._s(meta))

    def arm(self, meta, children):
        count, label, body = children
        return ast.Arm(count=count, label=str(label), body=body, span=self._s(meta))

    def select(self, meta, children):
        return ast.Select(arms=list(children), span=self._s(meta))

    def setting(self, meta, children):
        return ast.Setting(role=str(children[0]), format=str(children[1]), span=self._s(meta))

    def precision(self, meta, children):
        return ast.Precision(settings=list(children), span=self._s(meta))

    def component(self, meta, children):
        return ast.Component(name=str(children[0]), span=self._s(meta))

    def replay(self, meta, children):
        return ast.Replay(tail=children[0], span=self._s(meta))

    def repeat(self, meta, children):
        count, label, body = children
        return ast.Repeat(count=count, label=_opt(label), body=body, span=self._s(meta))

    def if_stmt(self, meta, children):
        condition, body, orelse = children
        return ast.If(condition=condition, body=body, orelse=orelse or [], span=self._s(meta))

    def block_call(self, meta, children):
        name, *args, label = children
        return ast.BlockCall(name=str(name), args=[a for a in args if a is not None],
                             label=_opt(label), span=self._s(meta))

    def op(self, meta, children):
        kind, label, *args = children
        return ast.Op(op=str(kind), label=_opt(label), args=args, span=self._s(meta))

    # top level
    def param(self, meta, children):
        return ast.Param(name=str(children[0]), default=children[1], span=self._s(meta))

    def block_def(self, meta, children):
        name, *params, body = children
        return ast.BlockDef(name=str(name), params=[p for p in params if p is not None], body=body,
                            span=self._s(meta))

    def format_def(self, meta, children):
        name, *args = children
        return ast.FormatDef(name=str(name), args=list(args), span=self._s(meta))

    def device_def(self, meta, children):
        name, *args = children
        return ast.DeviceDef(name=str(name), args=list(args), span=self._s(meta))

    def link_def(self, meta, children):
        name, *args = children
        return ast.LinkDef(name=str(name), args=list(args), span=self._s(meta))

    def model_def(self, meta, children):
        return ast.ModelDef(name=str(children[0])[1:-1], body=children[1], span=self._s(meta))

    def dotted(self, meta, children):
        return ".".join(str(c) for c in children)

    def use(self, meta, children):
        target = children[0]
        if isinstance(target, Token):
            return ast.Use(target=str(target)[1:-1], is_path=True, span=self._s(meta))
        return ast.Use(target=target, is_path=False, span=self._s(meta))

    def start(self, meta, children):
        return (
            [c for c in children if isinstance(c, ast.Use)],
            [c for c in children if isinstance(c, ast.FormatDef)],
            [c for c in children if isinstance(c, ast.DeviceDef)],
            [c for c in children if isinstance(c, ast.LinkDef)],
            [c for c in children if isinstance(c, ast.BlockDef)],
            [c for c in children if isinstance(c, ast.ModelDef)],
        )


def _opt(token) -> str | None:
    return None if token is None else str(token)


MAX_NESTING = 200          # brackets open at once
MAX_STATEMENTS = 100_000   # lines, bindings, arguments: each `=`, `,`, `:` or line end counts once


def parse(text: str, file: str = "<text>") -> ast.Module:
    """Parse one file's text; raise ArchError (E100) at the first syntax error, E106 for hostile sizes.

    Trees are immutable, so the same text under the same name is parsed once per process: a spec's
    stdlib files and the prelude are not parsed again for every spec (`compare`, the API, the tests)."""
    return _parse(text, file)


@lru_cache(maxsize=128)
def _parse(text: str, file: str) -> ast.Module:
    _check_shape(text, file)
    try:
        tree = _parser().parse(text)
        uses, formats, devices, links, blocks, models = _ToAst(file).transform(tree)
    except UnexpectedInput as exc:
        raise ArchError([_syntax_diagnostic(exc, text, file)]) from None
    except VisitError as exc:  # lark wraps transformer errors; unwrap in this one place
        if isinstance(exc.orig_exc, RecursionError):
            raise _too_deep(text, file) from None
        raise exc.orig_exc from None
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
