"""Reads a spec and every file it `use`s, with cycle detection; returns parsed modules."""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

from . import ast
from .errors import ArchError, Sources
from .parser import parse

MAX_FILE_BYTES = 4 * 1024 * 1024
MAX_USE_DEPTH = 64
PRELUDE = ("formats.arch",)  # hardware sheets are read by the commands that need a device


def stdlib_root() -> Path:
    return Path(str(resources.files("archcost.stdlib")))


@dataclass
class Program:
    """An entry module and the modules it uses, keyed by resolved path, in load order."""

    entry: ast.Module
    modules: dict[str, ast.Module]
    imports: dict[str, list[str]]  # module path -> paths it uses directly
    sources: Sources = field(repr=False)
    # each `use "PATH"` as written (absolute, links not followed) and the file it reached: a cache of this
    # program is stale once a link on the way points elsewhere, though every file read is unchanged
    links: list[tuple[str, str]] = field(default_factory=list)

    def visible_modules(self, path: str) -> list[str]:
        """The module itself and everything it uses, transitively, in a fixed order."""
        seen: list[str] = []
        stack = [path]
        while stack:
            current = stack.pop()
            if current in seen:
                continue
            seen.append(current)
            stack.extend(reversed(self.imports.get(current, [])))
        return seen


def load_file(path: str | Path, allow_outside: bool = False) -> Program:
    """Load a spec from disk; its `use` lines may reach its own folder and the stdlib only, unless
    `allow_outside`."""
    file = Path(path)
    return load_text(read_source(file), name=display_name(file), base=file.parent, allow_outside=allow_outside)


def read_source(file: Path) -> str:
    """A source file's text, refused before reading when it is too large."""
    try:
        return _read(Path(file))
    except _TooLarge as exc:
        raise ArchError([Sources().diagnostic("E106", str(exc), None)]) from None
    except (OSError, UnicodeDecodeError) as exc:
        reason = getattr(exc, "strerror", None) or str(exc)
        raise ArchError([Sources().diagnostic("E101", f"cannot read `{file}`: {reason}", None)]) from None


def load_text(text: str, name: str = "<text>", base: Path | None = None, allow_outside: bool = False) -> Program:
    """Load a spec given as text; relative `use` paths resolve against `base` and stay below it."""
    try:
        size = len(text.encode("utf-8"))
    except UnicodeEncodeError:
        raise ArchError([Sources().diagnostic("E101", f"`{name}` holds a character that is not Unicode text (a lone "
                                              "surrogate)", None)]) from None
    if size > MAX_FILE_BYTES:
        raise ArchError([Sources().diagnostic("E106", f"`{name}` is larger than {MAX_FILE_BYTES:,} bytes", None)])
    sources = Sources()
    loader = _Loader(sources, root=None if allow_outside else (base or Path.cwd()).resolve())
    entry = loader.load(source_text(text), name, base or Path.cwd(), chain=())
    loader.load_prelude()
    return Program(entry=entry, modules=loader.modules, imports=loader.imports, sources=sources, links=loader.links)


def display_name(path: Path) -> str:
    """How a file is named in messages, and the key its module is loaded under: `std/...` for the stdlib and
    only for it, else relative to the working folder (`./std/...` for a local folder named std), else absolute.
    One name per file, so a local `std/attention/gqa.arch` never stands in for the stdlib's."""
    path = path.resolve()
    stdlib = stdlib_root().resolve()
    if path.is_relative_to(stdlib):
        return f"std/{path.relative_to(stdlib).as_posix()}"
    if path.is_relative_to(Path.cwd().resolve()):
        relative = path.relative_to(Path.cwd().resolve()).as_posix()
        return f"./{relative}" if relative == "std" or relative.startswith("std/") else relative
    return str(path)


class _TooLarge(Exception):
    pass


def _read(file: Path) -> str:
    """A regular file's text (a device or FIFO could block or never end), at most MAX_FILE_BYTES of it."""
    if not stat.S_ISREG(file.stat().st_mode):
        raise OSError(0, "not a regular file")
    with open(file, "rb") as handle:
        data = handle.read(MAX_FILE_BYTES + 1)
    if len(data) > MAX_FILE_BYTES:
        raise _TooLarge(f"`{file}` is larger than {MAX_FILE_BYTES:,} bytes")
    return source_text(data.decode("utf-8"))


def source_text(text: str) -> str:
    """The text the parser reads, the same from a file or from a string: no byte-order mark, and CRLF line
    ends as LF. A line is what ends in LF, everywhere (lark, spans, carets, the printer): a lone CR, U+2028
    and other separators are characters of the line."""
    return text.removeprefix("\ufeff").replace("\r\n", "\n")


class _Loader:
    def __init__(self, sources: Sources, root: Path | None = None):
        self.sources = sources
        self.root = root  # `use` paths must stay below this folder (None: anywhere)
        self.modules: dict[str, ast.Module] = {}
        self.imports: dict[str, list[str]] = {}
        self.links: list[tuple[str, str]] = []

    def load(self, text: str, name: str, base: Path, chain: tuple[str, ...]) -> ast.Module:
        self.sources.add(name, text)
        module = parse(text, name)
        self.modules[name] = module
        self.imports[name] = []
        for use in module.uses:
            self.imports[name].append(self._follow(use, base, chain + (name,)))
        return module

    def load_prelude(self) -> None:
        """Every spec sees the number formats of the stdlib without a `use` line."""
        for name in PRELUDE:
            path = stdlib_root() / name
            key = display_name(path)
            if key not in self.modules:
                self.load(_read(path), key, path.parent, chain=())

    def _follow(self, use: ast.Use, base: Path, chain: tuple[str, ...]) -> str:
        target = self._locate(use, base)
        if use.is_path:
            self.links.append((os.path.abspath(base / use.target), str(target)))
        key = display_name(target)
        if key in chain:
            cycle = " -> ".join([*chain[chain.index(key):], key])
            raise ArchError([self.sources.diagnostic("E103", f"cyclic `use`: {cycle}", use.span)])
        if key in self.modules:
            return key
        if len(chain) > MAX_USE_DEPTH:
            raise ArchError([self.sources.diagnostic("E106", f"`use` nested deeper than {MAX_USE_DEPTH} files",
                                                     use.span)])
        try:
            text = _read(target)
        except _TooLarge as exc:
            raise ArchError([self.sources.diagnostic("E106", str(exc), use.span)]) from None
        except (OSError, UnicodeDecodeError) as exc:
            reason = getattr(exc, "strerror", None) or str(exc)
            raise ArchError([self.sources.diagnostic("E101", f"cannot read `{target}`: {reason}", use.span)]) from None
        self.load(text, key, target.parent, chain)
        return key

    def _locate(self, use: ast.Use, base: Path) -> Path:
        if use.is_path:
            target = (base / use.target).resolve()
            if self.root is not None and not target.is_relative_to(self.root):
                raise ArchError([self.sources.diagnostic(
                    "E107", f"`use {use.target}` reaches outside the spec's folder", use.span,
                    hint="move the file beside the spec, or pass --allow-use-outside")])
        else:
            parts = use.target.split(".")
            if parts[0] != "std" or len(parts) < 2:
                raise ArchError([self.sources.diagnostic(
                    "E102", f"`use {use.target}`: library paths start with `std.`", use.span,
                    hint="use a quoted relative path for your own files, e.g. `use \"./blocks.arch\"`")])
            target = stdlib_root().joinpath(*parts[1:]).with_suffix(".arch")
        if not target.is_file():
            raise ArchError([self.sources.diagnostic("E102", f"`use` of a missing file: `{use.target}`", use.span,
                                                     hint=self._near(use, target))])
        return target

    def _near(self, use: ast.Use, target: Path) -> str | None:
        from .errors import did_you_mean

        if use.is_path or not target.parent.is_dir():
            return None
        names = [p.stem for p in target.parent.glob("*.arch")]
        return did_you_mean(target.stem, names)
