"""Writing output files safely: atomically, never over an input, a device, a FIFO or a read-only file, keeping
the target's mode, owner and links, and never over a file that changed since it was read."""

from __future__ import annotations

import os
import stat
import tempfile
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from archcost.dsl.errors import ArchError


def refused(path: Path, why: str, hint: str | None = None) -> ArchError:
    from archcost.dsl.errors import ArchError, Diagnostic

    return ArchError([Diagnostic(code="E108", message=f"cannot write `{path}`: {why}", hint=hint)])


def unknown_format(path, allowed: tuple[str, ...], verb: str = "draw") -> ArchError:
    """A file whose suffix names no format this output writes (E109)."""
    from archcost.dsl.errors import ArchError, Diagnostic

    choices = f"{', '.join(allowed[:-1])} or {allowed[-1]}" if len(allowed) > 1 else allowed[0]
    return ArchError([Diagnostic(code="E109", message=f"cannot {verb} `{path}`: use {choices}")])


def check_output(path: Path, inputs: Iterable[str | Path] = ()) -> Path:
    """The file a write to `path` lands in (a symlink's target); refused before any work if it is an input,
    not a regular file, read-only, or in a folder that does not exist or cannot be written."""
    path = Path(path)
    target = Path(os.path.realpath(path))
    for source in inputs:
        if os.path.exists(source) and target.exists() and os.path.samefile(source, target):
            raise refused(path, "it is an input of this command", "choose another output file")
    if target.exists():
        mode = os.stat(target).st_mode
        if stat.S_ISDIR(mode):
            raise refused(path, "it is a folder", "name a file inside it")
        if not stat.S_ISREG(mode):
            raise refused(path, "it is not a regular file (a device, FIFO or socket)")
        if not os.access(target, os.W_OK) or not mode & stat.S_IWUSR:
            raise refused(path, "the file is read-only")
    folder = target.parent
    if not folder.is_dir():
        raise refused(path, f"the folder `{folder}` does not exist")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise refused(path, f"the folder `{folder}` cannot be written")
    return target


def atomic_write(path: Path, write: Callable[[Path], None], inputs: Iterable[str | Path] = (),
                 expected: bytes | None = None) -> None:
    """Let `write` fill a temporary file beside the target, then put it in place in one step. A symlink keeps
    pointing at its (rewritten) target; the target keeps its mode and owner, and a hard-linked file is
    rewritten in place so every name sees the new text. With `expected`, the target must still hold those
    bytes (it was read for this write), else nothing is written."""
    target = check_output(Path(path), inputs)
    handle, temporary = tempfile.mkstemp(prefix=f".{target.name}.", suffix=target.suffix, dir=target.parent)
    os.close(handle)
    try:
        write(Path(temporary))
        _unchanged(target, expected)
        try:
            _put_in_place(Path(temporary), target)
        except OSError as error:
            raise refused(Path(path), error.strerror or str(error)) from None
    finally:
        if os.path.exists(temporary):
            os.unlink(temporary)


def _unchanged(target: Path, expected: bytes | None) -> None:
    if expected is not None and (not target.exists() or target.read_bytes() != expected):
        raise refused(target, "it changed while archcost worked on it; nothing was written",
                      "run the command again on the new text")


def _put_in_place(temporary: Path, target: Path) -> None:
    if not target.exists():  # a new file: the mode any new file gets here (mkstemp's is 0600)
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(temporary, 0o666 & ~umask)
        os.replace(temporary, target)
        return
    before = os.stat(target)
    if before.st_nlink > 1:  # a rename would split the hard links: rewrite the shared file itself
        target.write_bytes(temporary.read_bytes())
        return
    os.chmod(temporary, stat.S_IMODE(before.st_mode))
    if hasattr(os, "chown") and (before.st_uid, before.st_gid) != (os.getuid(), os.getgid()):
        os.chown(temporary, before.st_uid, before.st_gid)
    os.replace(temporary, target)
