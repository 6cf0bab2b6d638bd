"""Where archcost keeps what it can always rebuild: a folder under the user cache ($XDG_CACHE_HOME or ~/.cache),
and the one way its entries are written and read back.

Nothing read from this folder can run: entries are JSON data (tests/test_design.py holds that no module of the
package deserialises anything else), and each carries the SHA-256 of its own payload, so an entry edited or cut
short is ignored (and rebuilt), never served. The folder is made private (0700); one owned by another user, or
that a group or anyone may write, is not used at all (everything is then built again each run, and archcost says
why once): another user could otherwise plant what this one reads."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import stat
import sys
from functools import lru_cache
from pathlib import Path

CHECKSUM = "sha256"  # the key under which an entry keeps the hash of its payload


def cache_folder(name: str) -> Path | None:
    """~/.cache/archcost/NAME, made private when missing; None when caching is off (ARCHCOST_NO_CACHE), the
    folder cannot be made or written, or it is not safe to read (another owner, writable by others)."""
    if os.environ.get("ARCHCOST_NO_CACHE"):
        return None
    given = os.environ.get("XDG_CACHE_HOME", "")
    root = Path(given) if os.path.isabs(given) else Path.home() / ".cache"  # a relative one is ignored (XDG)
    return _safe_folder(str(root / "archcost"), name)


def _safe_folder(top: str, name: str) -> Path | None:
    base = Path(top) / name
    try:
        Path(top).mkdir(mode=0o700, parents=True, exist_ok=True)
        base.mkdir(mode=0o700, exist_ok=True)
    except (OSError, RuntimeError):  # no home folder, or one that cannot be written
        return None
    for folder in (Path(top), base):
        problem = unsafe(folder)
        if problem is not None:
            _say_once(f"archcost: not using the cache folder {folder}: {problem}; everything is built afresh "
                      f"(make it yours with mode 700, or set ARCHCOST_NO_CACHE=1)")
            return None
    return base if os.access(base, os.W_OK) else None


def unsafe(folder: Path) -> str | None:
    """Why `folder` must not be read from, or None: a symbolic link, another user's, or writable by others."""
    try:
        info = os.lstat(folder)
    except OSError as error:
        return f"it cannot be read ({error.strerror})"
    if stat.S_ISLNK(info.st_mode) or not stat.S_ISDIR(info.st_mode):
        return "it is not a plain folder"
    if hasattr(os, "getuid") and info.st_uid != os.getuid():
        return f"it belongs to another user (uid {info.st_uid})"
    if info.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        return f"others may write it (mode {stat.S_IMODE(info.st_mode):o})"
    return None


@lru_cache(maxsize=64)
def _say_once(message: str) -> None:
    print(message, file=sys.stderr)


def sealed(payload: dict) -> str:
    """An entry's text: a first line `sha256 HEX` over the bytes of the payload's JSON that follows it."""
    text = json.dumps(payload, separators=(",", ":"))
    return f"{CHECKSUM} {hashlib.sha256(text.encode()).hexdigest()}\n{text}"


def unsealed(text: str) -> dict | None:
    """The payload of an entry's text when its checksum holds, else None (edited, cut short, not ours)."""
    head, _, body = text.partition("\n")
    if head != f"{CHECKSUM} {hashlib.sha256(body.encode()).hexdigest()}":
        return None
    try:
        payload = json.loads(body)
    except (ValueError, RecursionError):
        return None
    return payload if type(payload) is dict else None


def read_entry(path: Path | None, limit: int) -> dict | None:
    """The checked payload of the entry at `path` (at most `limit` bytes), or None."""
    try:
        if path is None or path.stat().st_size > limit:
            return None
        return unsealed(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError):
        return None


def write_entry(path: Path | None, payload: dict) -> None:
    """Write an entry whole and atomically, private to its owner; a folder that says no is no error."""
    if path is None:
        return
    temporary = path.with_name(f".{path.name}.{os.getpid()}")
    try:
        descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_NOFOLLOW", 0), 0o600)
        with os.fdopen(descriptor, "w", encoding="utf-8") as out:
            out.write(sealed(payload))
        os.replace(temporary, path)
    except OSError:
        return
    finally:
        with contextlib.suppress(OSError):
            temporary.unlink(missing_ok=True)
