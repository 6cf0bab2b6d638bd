"""Where archcost keeps what it can always rebuild: a folder under the user cache ($XDG_CACHE_HOME or ~/.cache)."""

from __future__ import annotations

import os
from pathlib import Path


def cache_folder(name: str) -> Path | None:
    """~/.cache/archcost/NAME, made when missing; None when caching is off (ARCHCOST_NO_CACHE) or the folder
    cannot be made or written (then everything is built again each run)."""
    if os.environ.get("ARCHCOST_NO_CACHE"):
        return None
    given = os.environ.get("XDG_CACHE_HOME", "")
    root = Path(given) if os.path.isabs(given) else Path.home() / ".cache"  # a relative one is ignored (XDG)
    base = root / "archcost" / name
    try:
        base.mkdir(parents=True, exist_ok=True)
    except (OSError, RuntimeError):  # no home folder, or one that cannot be written
        return None
    return base if os.access(base, os.W_OK) else None
